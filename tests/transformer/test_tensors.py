"""The theory's proxies (bparallel.proxies) take the attention a torch model returns: a
float32 tensor gives the float32 array's numbers (the theory's own tests,
tests/theory/test_proxies.py, need numpy alone)."""

from __future__ import annotations

import numpy as np
import torch

from bparallel import proxies as px
from tests.theory.test_proxies import near_diagonal, softmax_attention


def test_the_proxies_read_a_float32_tensor_as_the_float32_array():
    rng = np.random.default_rng(9)
    pattern = softmax_attention(rng, (2, 3, 4), 7)
    w1 = rng.dirichlet(np.ones(4), size=(2, 3))[0, 0]
    np.testing.assert_allclose(
        px.minimax_fidelity_proxy(torch.tensor(pattern, dtype=torch.float32), w1),
        px.minimax_fidelity_proxy(pattern.astype(np.float32), w1))
    # bitwise: the float32 tensor and the float32 array are the same numbers, converted to
    # the same float64 chain, then the same operations
    rng = np.random.default_rng(25)
    p32 = np.concatenate([softmax_attention(rng, (1, 3, 4), 9),
                          near_diagonal(rng, (1, 3, 4), 9, 0.98)]).astype(np.float32)
    w = rng.dirichlet(np.ones(4), size=(2, 3))
    np.testing.assert_array_equal(
        px.worst_case_mixing_time(torch.tensor(p32), torch.tensor(w[0, 0])),
        px.worst_case_mixing_time(p32, w[0, 0]))
