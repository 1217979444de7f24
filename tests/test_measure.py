"""bparallel.transformer.measure: Section 4's measures on a (small, random-init) model."""

import numpy as np
import pytest
import torch

from bparallel import proxies
from bparallel.transformer.measure import (
    defined_metrics,
    extract_patterns,
    head_weights,
    model_head_weights,
)
from bparallel.transformer.model import ModelConfig, Transformer


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(3)
    model = Transformer(ModelConfig(n_heads=4, seq_len=12)).eval()
    x = torch.randint(0, 256, (5, 12))
    return model, x


def test_defined_metrics_equal_the_proxies_on_the_extracted_patterns(small):
    model, x = small
    m = defined_metrics(model, x, batch_size=2)  # batches of 2, 2, 1: concatenated in order
    pattern = extract_patterns(model, x)  # (L, N, H, T, T)
    w = model_head_weights(model)[:, None, :]  # (L, 1, H)
    L, N, T = 4, 5, 12
    assert m["worst_case.definition"].shape == (L, N) and m["hitting.exact"].shape == (L, N, T)
    for mode in ("paper", "definition"):
        np.testing.assert_allclose(m[f"worst_case.{mode}"],
                                   proxies.worst_case_mixing_time(pattern, w, mode=mode))
        np.testing.assert_allclose(m[f"mixing_time.{mode}"],
                                   proxies.mixing_time_proxy(pattern, w, mode=mode), rtol=1e-12)
    np.testing.assert_allclose(m["hitting.truncated"], proxies.mixing_time_proxy(
        pattern, w, mode="definition", reduce="none"), rtol=1e-12)
    np.testing.assert_allclose(m["fidelity.node"], proxies.node_fidelity_proxy(
        pattern, w, mode="definition").phi, rtol=1e-12)
    # Definition 2.7 is a worst case; the proxy a mean truncated at 100: never above it
    assert np.all(m["worst_case.definition"] >= np.floor(m["mixing_time.definition"]))


def test_defined_metrics_rollout_is_the_sinks_row(small):
    model, x = small
    m = defined_metrics(model, x)
    pattern = extract_patterns(model, x)  # (L, N, H, T, T)
    full = proxies.attention_rollout(pattern, model_head_weights(model))  # (L, N, T, T)
    np.testing.assert_allclose(m["rollout.weighted"], full[..., -1, :])
    np.testing.assert_allclose(m["rollout.weighted"].sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(m["rollout.uniform"].sum(-1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="inputs has shape"):
        defined_metrics(model, x[0])


# ---------------------------------------------------------------- head weights (Section 4.2)


def test_head_weights_split_columns_closed_form():
    # d_out = 2, d_in = 4, two heads of 2 columns: blocks [[3,0],[4,0]] (norm 5), [[1,0],[0,0]]
    # (norm 1) -> (5/6, 1/6). Splitting rows instead would give sqrt(10) and 4.
    W = np.array([[3.0, 0, 1, 0], [4.0, 0, 0, 0]])
    np.testing.assert_allclose(head_weights(W, 2), [5 / 6, 1 / 6])
    np.testing.assert_allclose(head_weights(W, 1), [1.0])
    # four heads of one column: norms 5, 0, 1, 0
    np.testing.assert_allclose(head_weights(W, 4), [5 / 6, 0, 1 / 6, 0])


def test_head_weights_batched_and_torch():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(4, 64, 64))
    w = head_weights(torch.tensor(W, dtype=torch.float32), 8)
    assert w.shape == (4, 8)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    blocks = W[1][:, 24:32]  # layer 1, head 3
    expected = np.linalg.norm(blocks) / sum(np.linalg.norm(W[1][:, 8 * h : 8 * h + 8])
                                            for h in range(8))
    np.testing.assert_allclose(w[1, 3], expected, rtol=1e-6)


def test_head_weights_validation():
    with pytest.raises(ValueError, match="num_heads=3 does not divide d_in=4"):
        head_weights(np.ones((2, 4)), 3)
    with pytest.raises(ValueError, match="all zero"):
        head_weights(np.zeros((2, 4)), 2)
    with pytest.raises(ValueError, match="num_heads=0"):
        head_weights(np.ones((2, 4)), 0)


def test_workers_return_freed_memory_to_the_system():
    """metrics_cache's workers (and an in-process computation) set glibc's mmap threshold so
    that an ablation study's freed tensors do not pile up (12 GB per worker otherwise)."""
    from bparallel.transformer import metrics_cache as mc

    mc.return_freed_memory()  # idempotent; a no-op where the C library is not glibc
    import inspect

    assert "return_freed_memory()" in inspect.getsource(mc._one_thread)
