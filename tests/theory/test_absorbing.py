"""The absorbing-walk kernels (bparallel.absorbing), on chains with closed forms."""

from __future__ import annotations

import math

import numpy as np

from bparallel import absorbing


def _lazy(q: float, T: int = 2) -> np.ndarray:
    """One chain ``(1, T, T)``: every non-sink state stays with probability ``q`` and else
    moves one step forward; the sink ``T - 1`` absorbs."""
    Q = np.zeros((1, T, T))
    for j in range(T - 1):
        Q[0, j, j], Q[0, j, j + 1] = q, 1.0 - q
    Q[0, -1, -1] = 1.0
    return Q


def test_survival_sums_geometric_closed_form():
    for q, M in ((0.5, 1), (0.5, 7), (0.9, 40), (0.0, 5)):
        expected = sum(q**t for t in range(M))  # E[min(tau, M)], tau ~ Geometric(1 - q)
        np.testing.assert_allclose(absorbing.survival_sums(_lazy(q), M), [[expected, 0.0]],
                                   rtol=1e-14)


def test_mixing_times_geometric_and_traps():
    # P(tau > t) = q^t: the least t with q^t <= eps
    for q, eps in ((0.5, 0.25), (0.9, 0.25), (0.99, 0.01), (0.3, 0.5)):
        expected = math.ceil(math.log(eps) / math.log(q) - 1e-12)
        assert absorbing.mixing_times(_lazy(q), eps).tolist() == [expected]
    assert absorbing.mixing_times(_lazy(0.0), 0.25).tolist() == [1]
    assert absorbing.mixing_times(_lazy(1.0), 0.25).tolist() == [math.inf]  # a trap


def test_hitting_times_lazy_path_and_lost_starts():
    # T - 1 forward moves, each Geometric(1 - q): E[tau_j] = (T - 1 - j) / (1 - q)
    np.testing.assert_allclose(absorbing.hitting_times(_lazy(0.75, 5)),
                               [[16.0, 12.0, 8.0, 4.0, 0.0]], rtol=1e-14)
    # state 1 is a trap; state 0 reaches it w.p. 1/2: both are lost, state 2 is not
    Q = np.array([[[0.0, 0.5, 0.0, 0.5], [0, 1, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0, 1]]])
    assert absorbing.traps(Q).tolist() == [[False, True, False, False]]
    assert absorbing.lost_starts(Q).tolist() == [[True, True, False, False]]
    np.testing.assert_allclose(absorbing.hitting_times(Q), [[np.inf, np.inf, 2.0, 0.0]])
    # moving back (not triangular): 0 <-> 1 closed, without the sink
    swap = np.array([[[0.0, 1, 0], [1, 0, 0], [0, 0, 1]]])
    assert absorbing.lost_starts(swap).tolist() == [[True, True, False]]
    np.testing.assert_array_equal(absorbing.hitting_times(swap), [[np.inf, np.inf, 0.0]])
    assert absorbing.mixing_times(swap, 0.25).tolist() == [math.inf]


def test_sample_walks_are_truncated_geometric():
    q, M, S = 0.5, 6, 20_000
    times = absorbing.sample_walks(np.cumsum(_lazy(q), -1), M, S, np.random.default_rng(5))
    assert times.shape == (1, 2, S) and times.dtype == np.int64
    assert (times[0, 1] == 0).all() and times[0, 0].min() >= 1 and times[0, 0].max() <= M
    expected = sum(q**t for t in range(M))
    se = times[0, 0].std() / math.sqrt(S)
    assert abs(times[0, 0].mean() - expected) < 4 * se
