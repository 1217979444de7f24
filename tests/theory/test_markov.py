from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from bparallel import absorbing, exact
from bparallel import graphs as g
from bparallel import markov as mk


# ------------------------------------------------------------------ stationary (Lemma 2.5/2.6)
def test_lemma_2_5_point_mass_at_sink():
    W = g.walk_matrix([(0, 1), (0, 2), (1, 3), (2, 3)], 4)
    dists = mk.stationary_distributions(W)
    assert len(dists) == 1
    np.testing.assert_allclose(dists[0], [0, 0, 0, 1])
    np.testing.assert_allclose(W @ dists[0], dists[0])


def test_lemma_2_6_convex_combination_of_heads():
    W1 = g.walk_matrix(g.line_graph_edges(5), 5)
    W2 = g.walk_matrix([(0, 4), (1, 4), (2, 4), (3, 4)], 5)
    Wbar = g.convex_combination(np.stack([W1, W2]), [0.3, 0.7])
    np.testing.assert_allclose(mk.stationary_distribution(Wbar), [0, 0, 0, 0, 1])


def test_two_sinks_means_two_stationary_distributions():
    W = g.walk_matrix([(0, 2)], 3)  # node 1 never leaves
    dists = mk.stationary_distributions(W)
    assert len(dists) == 2
    with pytest.raises(ValueError, match="2 stationary distributions"):
        mk.stationary_distribution(W)


def test_non_feedforward_cycle_class_is_found():
    W = g.walk_matrix([(0, 1), (1, 0)], 3)  # {0, 1} closed, 2 isolated sink
    supports = sorted(tuple(np.flatnonzero(d > 1e-12)) for d in mk.stationary_distributions(W))
    assert supports == [(0, 1), (2,)]


# ------------------------------------------------------------------------ mixing time
def test_mixing_time_two_nodes_closed_form():
    # from node 0 the walk leaves with prob 1/2: TV(t) = 2^-t
    W = g.walk_matrix([(0, 1)], 2)
    assert mk.mixing_time(W, 0.25) == 2
    assert mk.mixing_time(W, 0.2) == 3
    assert mk.mixing_time(W, 0.5) == 1


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30])
@pytest.mark.parametrize("eps", [0.25, 0.1, 0.01])
def test_mixing_time_line_graph_is_binomial(n, eps):
    # On the path every step is forward w.p. 1/2 and the worst start (node 0) needs N = n-1
    # forward moves: TV(t) = Pr[Bin(t, 1/2) < N] (the X of Eq. 6 with p = 1/2).
    W = g.walk_matrix(g.line_graph_edges(n), n)
    t = 0
    while binom.cdf(n - 2, t, 0.5) > eps + 1e-12:
        t += 1
    assert mk.mixing_time(W, eps) == t


def test_mixing_time_matches_exact_rationals():
    edges = [(0, 1), (0, 3), (1, 2), (2, 4), (3, 4), (1, 4)]
    Wq = exact.walk(edges, 5)
    W = g.walk_matrix(edges, 5)
    for eps in (Fraction(1, 4), Fraction(1, 10), Fraction(1, 100)):
        assert mk.mixing_time(W, float(eps)) == exact.mixing_time(Wq, eps)


def test_mixing_time_batched_equals_loop():
    A = g.random_feedforward_adjacency(20, 9, 0.3, seed=3)
    W = g.walk_matrix_from_adjacency(A)
    batched = mk.mixing_time(W)
    assert batched.shape == (20,)
    assert list(batched) == [mk.mixing_time(w) for w in W]


def test_mixing_time_refuses_a_backward_edge_and_names_the_start_that_never_mixes():
    # the cyclic graph: 0 -> 1 -> 2 -> 3 with the backward edge 2 -> 0
    cyclic = g.walk_matrix([(0, 1), (1, 2), (2, 0), (2, 3)], 4)
    with pytest.raises(ValueError, match=r"^W\[0, 2\] = 0\.333333: a backward edge 2 -> 0 .*"
                                         r"Definition 2\.1.*allow_backward=True"):
        mk.mixing_time(cyclic)
    batch = np.stack([g.walk_matrix(g.line_graph_edges(4), 4), cyclic])
    with pytest.raises(ValueError, match=r"^W\[1, 0, 2\] = "):
        mk.mixing_time(batch)
    # allowed, it is Definition 2.7 on the walk: the same number by exact rationals
    assert mk.mixing_time(cyclic, allow_backward=True) == exact.mixing_time(
        exact.walk([(0, 1), (1, 2), (2, 0), (2, 3)], 4), Fraction(1, 4))
    # node 1 never leaves: the message names it and says never, with no 2^62 in digits
    with pytest.raises(ValueError, match=r"from start node 1 may never reach the sink 2") as err:
        mk.mixing_time(g.walk_matrix([(0, 2)], 3))
    assert str(absorbing.MIX_CAP) not in str(err.value)
    # a closed class {0, 1} (allowed backward edge 1 -> 0): both starts are named
    with pytest.raises(ValueError, match=r"start node 0 may never .*walks from \[1\]"):
        mk.mixing_time(g.walk_matrix([(0, 1), (1, 0), (2, 3)], 4), allow_backward=True)


def test_mixing_time_errors():
    W = g.walk_matrix([(0, 1)], 2)
    for eps in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"eps=.*\(0, 1\)"):
            mk.mixing_time(W, eps)
    with pytest.raises(ValueError, match="not stochastic"):
        mk.mixing_time(np.ones((2, 2)))
    with pytest.raises(ValueError, match="square"):
        mk.mixing_time(np.ones((2, 3)))
    with pytest.raises(ValueError, match="does not mix"):
        mk.mixing_time(g.walk_matrix([(0, 2)], 3))  # node 1 never leaves
    W3 = g.walk_matrix([(0, 1), (1, 2)], 3)
    W3[:, 2] = [0.0, 0.5, 0.5]  # the sink sends half its mass back
    with pytest.raises(ValueError, match="sink 2 must be absorbing"):
        mk.mixing_time(W3)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 10),
    density=st.floats(0, 1),
    seed=st.integers(0, 2**31 - 1),
    eps=st.sampled_from([0.5, 0.25, 0.1, 0.05]),
)
def test_mixing_time_respects_definition(n, density, seed, eps):
    W = g.walk_matrix_from_adjacency(g.random_feedforward_adjacency(1, n, density, seed)[0])
    t = mk.mixing_time(W, eps)
    assert mk.tv_distance_to_stationary(W, t) <= eps + mk.TV_ATOL  # reached at t
    if t > 0:
        assert mk.tv_distance_to_stationary(W, t - 1) > eps + mk.TV_ATOL  # not at t - 1
    np.testing.assert_allclose(mk.stationary_distribution(W), np.eye(n)[-1], atol=1e-9)


# ------------------------------------------------------------------------ hitting times
def test_expected_hitting_times_closed_forms():
    # path: each forward move takes a Geometric(1/2) number of steps: E = 2 * distance
    P = g.walk_matrix(g.line_graph_edges(6), 6).T
    np.testing.assert_allclose(mk.expected_hitting_times(P, 5), [10, 8, 6, 4, 2, 0])
    # complete DAG with self-loops, m = n-1-j later nodes: h(m) = (m+1)/m + sum_{k<m} h(k)/m,
    # solved by h(m) = 1 + H_m (harmonic number) for m >= 1, h(0) = 0
    n = 7
    P = g.walk_matrix(g.complete_dag_edges(n), n).T
    harmonic = [1 + sum(1 / k for k in range(1, n - j)) for j in range(n - 1)] + [0]
    np.testing.assert_allclose(mk.expected_hitting_times(P, n - 1), harmonic)


def test_truncated_hitting_times():
    P = g.walk_matrix([(0, 1)], 2).T  # tau ~ Geometric(1/2) from node 0
    for M in (1, 2, 5, 40):
        # E[min(tau, M)] = sum_{t<M} 2^-t
        expected = sum(0.5**t for t in range(M))
        np.testing.assert_allclose(mk.truncated_hitting_times(P, 1, M), [expected, 0])
    Pl = g.walk_matrix(g.line_graph_edges(8), 8).T
    np.testing.assert_allclose(
        mk.truncated_hitting_times(Pl, 7, 2000), mk.expected_hitting_times(Pl, 7)
    )


def test_hitting_times_with_the_sink_inside_and_batched():
    # a sink in the middle (the kernels take it last): the chain 0 -> 2 <- 1 with a
    # self-loop of 1/2 at 0 and 2/3 at 1, and 2 absorbing; 3 moves to 2 directly
    P = np.array([[0.5, 0, 0.5, 0], [0, 2 / 3, 1 / 3, 0], [0, 0, 1, 0], [0, 0, 1, 0]])
    np.testing.assert_allclose(mk.expected_hitting_times(P, 2), [2, 3, 0, 1], rtol=1e-14)
    expected = [sum(0.5**t for t in range(4)), sum((2 / 3) ** t for t in range(4)), 0, 1]
    np.testing.assert_allclose(mk.truncated_hitting_times(P, 2, 4), expected, rtol=1e-14)
    mean, se = mk.sample_hitting_times(P, 2, 4000, seed=3)
    assert mean[2] == 0 and mean[3] == 1 and se[3] == 0
    assert abs(mean[0] - 2) < 4 * se[0] and abs(mean[1] - 3) < 4 * se[1]
    # batched: each graph as it would be alone
    batch = np.stack([P, np.eye(4)[[2, 2, 2, 2]]])
    np.testing.assert_allclose(mk.expected_hitting_times(batch, 2),
                               [[2, 3, 0, 1], [1, 1, 0, 1]], rtol=1e-14)


def test_hitting_time_errors():
    P = g.walk_matrix([(0, 2)], 3).T
    with pytest.raises(ValueError, match="node 1 cannot reach the sink 2"):
        mk.expected_hitting_times(P, 2)
    with pytest.raises(ValueError, match="out of range"):
        mk.expected_hitting_times(P, 5)
    with pytest.raises(ValueError, match="max_steps"):
        mk.truncated_hitting_times(P, 2, 0)
    with pytest.raises(ValueError, match="rows must sum to 1"):
        mk.expected_hitting_times(np.array([[0.5, 0.5], [0.2, 0.2]]), 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_monte_carlo_agrees_with_exact_within_4_se(seed):
    A = g.random_feedforward_adjacency(6, 12, 0.25, seed=seed)
    P = np.swapaxes(g.walk_matrix_from_adjacency(A), -1, -2)
    exact_h = mk.expected_hitting_times(P, 11)
    mean, se = mk.sample_hitting_times(P, 11, 2000, seed=seed)
    assert mean.shape == (6, 12)
    z = np.abs(mean[..., :-1] - exact_h[..., :-1]) / se[..., :-1]
    assert z.max() < 4.5, z.max()  # 66 comparisons: allow the max a little over 4
    assert np.mean(z < 4) > 0.98
    # truncated version
    exact_t = mk.truncated_hitting_times(P, 11, 5)
    mean_t, se_t = mk.sample_hitting_times(P, 11, 2000, max_steps=5, seed=seed)
    assert np.all(np.abs(mean_t - exact_t) <= 4.5 * se_t + 1e-12)


def test_monte_carlo_seeded_and_vectorised_shape():
    P = g.walk_matrix(g.line_graph_edges(5), 5).T
    a = mk.sample_hitting_times(P, 4, 100, seed=7)
    b = mk.sample_hitting_times(P, 4, 100, seed=7)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[0][-1] == 0 and a[1][-1] == 0


# ------------------------------------------------------------------- Theorem 2.8 pieces
def test_forward_probability():
    W = g.walk_matrix(g.line_graph_edges(5), 5)
    assert mk.forward_probability(W) == pytest.approx(0.5)
    n = 6
    Wc = g.walk_matrix(g.complete_dag_edges(n), n)
    assert mk.forward_probability(Wc) == pytest.approx(1 / 2)  # node n-2 has outdeg 2
    with pytest.raises(ValueError, match=r"^W\[0, 1\] = 0\.333333: a backward edge 1 -> 0 .* "
                                         r"needs a feedforward graph"):
        mk.forward_probability(g.walk_matrix([(1, 0), (0, 2), (1, 2)], 3))


def test_combination_forward_probability_at_least_eq12():
    rng = np.random.default_rng(0)
    A = g.random_feedforward_adjacency(3, 10, 0.3, seed=rng)
    W = g.walk_matrix_from_adjacency(A)
    alpha = np.array([0.2, 0.5, 0.3])
    p = mk.forward_probability(W)
    p_eq12 = mk.effective_forward_probability(p, alpha)
    assert p_eq12 == pytest.approx(float(alpha @ p))
    p_bar = mk.forward_probability(g.convex_combination(W, alpha))
    assert p_bar >= p_eq12 - 1e-12
    assert min(p) - 1e-12 <= p_eq12 <= max(p) + 1e-12  # Eq. 13


def test_bound_and_hoeffding():
    assert mk.mixing_time_bound(11, 0.5) == pytest.approx(40.0)
    assert mk.hoeffding_tail(0.5, 10) == pytest.approx(np.exp(-5.0))
    assert mk.hoeffding_tail(0.5, 10, t=60) == pytest.approx(np.exp(-2 * 20**2 / 60))
    # the exact binomial tail never exceeds Hoeffding's bound
    for p in (0.1, 0.5, 0.9):
        for N in (1, 5, 30):
            t = int(np.ceil(2 * N / p))
            assert mk.forward_moves_shortfall(p, N, t) <= mk.hoeffding_tail(p, N, t) + 1e-15
    with pytest.raises(ValueError, match="p must lie"):
        mk.mixing_time_bound(5, 0)
    with pytest.raises(ValueError, match="t \\* p >= N"):
        mk.hoeffding_tail(0.5, 10, t=4)


def test_eqs_16_19_against_simulation():
    assert mk.prob_best_head_at_least(0.5, 1) == 0.5
    assert mk.prob_best_head_at_least(0.5, 3) == pytest.approx(0.875)
    rng = np.random.default_rng(1)
    H, pbar, trials = 4, 0.7, 200_000
    p = rng.random((trials, H))  # F = Uniform(0, 1): F(pbar) = pbar
    sim = np.mean(p.max(axis=1) >= pbar)
    theory = mk.prob_best_head_at_least(pbar, H)
    assert abs(sim - theory) < 4 * np.sqrt(theory * (1 - theory) / trials)
    np.testing.assert_allclose(mk.prob_best_head_at_least(0.9, [1, 10, 1000])[-1], 1, atol=1e-40)
    with pytest.raises(ValueError, match="H must be"):
        mk.prob_best_head_at_least(0.5, 0)


def test_mixing_time_batched_equals_loop_and_exact():
    A = g.random_feedforward_adjacency(12, 6, 0.3, seed=5)
    W = g.walk_matrix_from_adjacency(A).reshape(3, 4, 6, 6)
    T = mk.mixing_time(W)
    assert T.shape == (3, 4)
    for a in range(3):
        for b in range(4):
            assert T[a, b] == mk.mixing_time(W[a, b])
            edges = g.edges_from_adjacency(A[4 * a + b])
            assert T[a, b] == exact.mixing_time(exact.walk(edges, 6), Fraction(1, 4))


def test_mixing_time_chunks_give_the_same_numbers_and_name_the_bad_graph(monkeypatch):
    W = g.walk_matrix_from_adjacency(g.random_feedforward_adjacency(12, 4, 0.5, seed=1))
    whole = mk.mixing_time(W)
    monkeypatch.setattr(absorbing, "CHUNK", 2)  # 2 graphs per chunk
    np.testing.assert_array_equal(mk.mixing_time(W), whole)
    # a graph that never mixes (an isolated start: the walk stays put) is named by its index
    bad = np.broadcast_to(np.eye(4), (3, 2, 4, 4)).copy()
    bad[..., :, -1] = np.eye(4)[-1]
    for b in [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]:
        bad[b] = W[5]
    with pytest.raises(ValueError, match=r"batch index \(1, 1\)"):
        mk.mixing_time(bad)


# ------------------------------------------------------- one Definition 2.7, one 2N/p
def test_mixing_time_goes_through_absorbing(mixing_time_calls):
    """(The playground's: tests/book/test_playground.py.)"""
    W = g.walk_matrix(g.line_graph_edges(4), 4)
    assert mk.mixing_time(W, 0.25) == exact.mixing_time(exact.walk(g.line_graph_edges(4), 4),
                                                        Fraction(1, 4))
    assert mixing_time_calls == [(1, 4, 4)]


def test_bound_steps_is_the_floor_of_2n_over_p_and_broadcasts():
    assert mk.mixing_time_bound(11, 0.5) == 40.0
    assert mk.mixing_time_bound_steps(11, 0.3) == 66  # 2 * 10 / 0.3 = 66.67
    np.testing.assert_array_equal(mk.mixing_time_bound_steps(np.array([2, 3, 4]), 0.75),
                                  [2, 5, 8])  # 2.67, 5.33, 8
    np.testing.assert_array_equal(mk.mixing_time_bound(np.array([[1], [3]]), [0.5, 1.0]),
                                  [[0.0, 0.0], [8.0, 4.0]])
    for bad in (0, 2.5, -1, np.array([2, 0])):
        with pytest.raises(ValueError, match="n must be integers >= 1"):
            mk.mixing_time_bound(bad, 0.5)


def test_forward_moves_shortfall_is_the_binomial_tail_broadcast():
    N, t, p = np.array([1, 3, 5]), np.array([[0], [4], [10]]), 0.4
    got = mk.forward_moves_shortfall(p, N, t)
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, binom.cdf(N - 1, t, p), rtol=1e-15)
    assert mk.forward_moves_shortfall(0.5, 2, 0) == 1.0  # no step taken: never at the sink
    with pytest.raises(ValueError, match="t must be integers >= 0"):
        mk.forward_moves_shortfall(0.5, 2, 1.5)
    with pytest.raises(ValueError, match="N must be integers >= 1"):
        mk.forward_moves_shortfall(0.5, 0, 3)
