"""Algorithms 1-2 (bparallel.proxies): hand-computed values, exact vs Monte Carlo,
batched vs loop, the published sampler vs a walk-by-walk reference, the core fidelity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bparallel import absorbing
from bparallel import proxies as px

# --------------------------------------------------------------------------- fixtures
#
# Example A: two row-stochastic causal heads, w = (1/4, 3/4)
#   A1 = [[1,0,0],[1,0,0],[.5,.5,0]], A2 = I
#   C  = [[1,0,0],[.25,.75,0],[.125,.125,.75]]; column sums 1.375 (>1), 0.875, 0.75 (<1)
#   P = C^T: P0 = [1, .25, .125], P1 = [0, .75, .125]
EX_A = np.array([[[1, 0, 0], [1, 0, 0], [0.5, 0.5, 0]], np.eye(3)])
W_A = np.array([0.25, 0.75])

# Example B: two row-stochastic causal heads, w = (0.6, 0.4)
#   A1 = [[1,0,0],[1,0,0],[.5,.5,0]], A2 = [[1,0,0],[0,1,0],[.8,0,.2]]
#   C  = [[1,0,0],[.6,.4,0],[.62,.3,.08]]; column sums 2.22 (>1), 0.7 (<1), 0.08 (<1)
EX_B = np.array([[[1, 0, 0], [1, 0, 0], [0.5, 0.5, 0]], [[1, 0, 0], [0, 1, 0], [0.8, 0, 0.2]]])
W_B = np.array([0.6, 0.4])

# Example C: one head whose row 0 is not stochastic, so position 0 can move:
#   C = [[.5,0,0],[.7,.3,0],[.2,.5,.3]]; column sums 1.4 (>1), 0.8 (<1), 0.3 (<1)
#   P0 = [.5, .7, .2] (cumsum .5, 1.2, 1.4: crosses 1 in the middle), P1 = [0, .3, .5]
EX_C = np.array([[[0.5, 0, 0], [0.7, 0.3, 0], [0.2, 0.5, 0.3]]])


def walk_hitting(pattern, head_weights=None, *, mode="paper", max_steps=100):
    """Algorithm 1's ``E[min(tau, M)]`` per start, ``(..., T)``, on any non-negative
    pattern, by the walk every proxy reads (:class:`bparallel.proxies.Walk`): the arithmetic
    the hand examples check, where :func:`~bparallel.proxies.mixing_time_proxy` itself
    refuses a pattern whose rows do not sum to 1."""
    walk = px.Walk(pattern, head_weights)
    return walk.shaped(walk.truncated_hitting_times(mode, max_steps))


def stochastic(pattern):
    """``pattern`` ``(..., T, T)`` made causal post-softmax attention: its lower triangle,
    each row divided by its sum (a row without weight reads its own position)."""
    a = np.tril(pattern)
    empty = a.sum(-1) == 0
    a[empty, np.nonzero(empty)[-1]] = 1.0
    return a / a.sum(-1, keepdims=True)


def solved_hitting_times(Q):
    """``E[tau]`` of chains ``Q`` ``(..., T, T)`` (sink last) by a dense solve of
    ``(I - Q_transient) h = 1``: independent of the back-substitution under test."""
    T = Q.shape[-1]
    h = np.zeros(Q.shape[:-1])
    h[..., :-1] = np.linalg.solve(np.eye(T - 1) - Q[..., :-1, :-1],
                                  np.ones(Q.shape[:-2] + (T - 1, 1)))[..., 0]
    return h


def softmax_attention(rng, shape, T, scale=2.0):
    """Random causal softmax attention ``shape + (T, T)`` (rows sum to 1)."""
    s = rng.normal(size=shape + (T, T)) * scale
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    return a / a.sum(-1, keepdims=True)


def survival_curve(Q, start, steps):
    """P(tau > t), t = 0..steps-1, for the absorbing chain Q (sink T-1), by plain powers."""
    T = Q.shape[0]
    dist = np.zeros(T)
    dist[start] = 1.0
    out = []
    for _ in range(steps):
        out.append(1.0 - dist[T - 1])
        dist = dist @ Q
    return np.array(out)


# --------------------------------------------------------------------------- head weights


def _without_tail_cutoff(pattern, mode="paper"):
    """``mixing_time_proxy`` with the early stop on a negligible survival tail disabled."""
    old = absorbing._TAIL_TOL
    try:
        absorbing._TAIL_TOL = 0.0
        return px.mixing_time_proxy(pattern, mode=mode, max_steps=100, reduce="none")
    finally:
        absorbing._TAIL_TOL = old


# --------------------------------------------------------------------------- combination


def test_combine_heads_hand_and_uniform():
    np.testing.assert_allclose(
        px.combine_heads(EX_A, W_A), [[1, 0, 0], [0.25, 0.75, 0], [0.125, 0.125, 0.75]]
    )
    rng = np.random.default_rng(1)
    pattern = softmax_attention(rng, (5, 4), 6)
    np.testing.assert_allclose(px.combine_heads(pattern), pattern.mean(-3))  # None = uniform 1/H


def test_one_head_with_weight_one_is_single_head():
    rng = np.random.default_rng(2)
    pattern = softmax_attention(rng, (3, 4), 7)
    onehot = np.array([0.0, 0.0, 1.0, 0.0])
    single = pattern[:, 2:3]
    for mode in px.MODES:
        np.testing.assert_allclose(px.mixing_time_proxy(pattern, onehot, mode=mode),
                                   px.mixing_time_proxy(single, None, mode=mode))
        np.testing.assert_allclose(px.minimax_fidelity_proxy(pattern, onehot, mode=mode),
                                   px.minimax_fidelity_proxy(single, [1.0], mode=mode))


# --------------------------------------------------------------------------- Algorithm 1 by hand


def test_transition_matrix_paper_clips_unnormalised_rows():
    # Example C, paper sampler: row 0 cumsum (.5, 1.2, 1.4) -> Q0 = (.5, .5, 0): r never
    # exceeds 1, so position 0 never jumps to the sink directly; row 1 cumsum (0, .3, .8)
    # -> Q1 = (0, .3, .7): r in (.3, .8] hits the sink and r > .8 is clipped to it.
    Q = px.transition_matrix(EX_C, mode="paper")
    np.testing.assert_allclose(Q, [[0.5, 0.5, 0], [0, 0.3, 0.7], [0, 0, 1]])
    Qd = px.transition_matrix(EX_C, mode="definition")
    np.testing.assert_allclose(Qd, [[5 / 14, 1 / 2, 1 / 7], [0, 3 / 8, 5 / 8], [0, 0, 1]])


def test_mixing_hand_example_a():
    # Paper: P0 cumsum (1, 1.25, 1.375) -> Q0 = (1, 0, 0): position 0 never moves and
    # contributes M; Q1 = (0, .75, .25): E[min(tau, 3)] = 1 + .75 + .5625 = 2.3125.
    mean = px.mixing_time_proxy(EX_A, W_A, mode="paper", max_steps=3)
    assert mean == pytest.approx((3 + 2.3125 + 0) / 3)
    assert px.mixing_time_proxy(EX_A, W_A, mode="paper", max_steps=3,
                                reduce="max") == pytest.approx(3)
    # Definition: Q0 = P0/1.375 = (8/11, 2/11, 1/11), Q1 = P1/.875 = (0, 6/7, 1/7).
    # From 1: 1 + 6/7 + 36/49. From 0: 1 + 10/11 + (8/11)(10/11) + (2/11)(6/7).
    h1 = 1 + 6 / 7 + 36 / 49
    h0 = 1 + 10 / 11 + (8 / 11) * (10 / 11) + (2 / 11) * (6 / 7)
    got = px.mixing_time_proxy(EX_A, W_A, mode="definition", max_steps=3, reduce="none")
    np.testing.assert_allclose(got, [h0, h1, 0.0])
    assert px.mixing_time_proxy(EX_A, W_A, mode="definition", max_steps=3) == pytest.approx(
        (h0 + h1) / 3
    )


def test_mixing_hand_example_c():
    # Paper, M = 3: from 1: 1 + .3 + .09 = 1.39; from 0: 1 + 1 + (.5 + .5 * .3) = 2.65.
    got = walk_hitting(EX_C, max_steps=3)
    np.testing.assert_allclose(got, [2.65, 1.39, 0.0])
    # Definition, M = 3: from 1: 1 + 3/8 + 9/64; from 0: 1 + 6/7 + (5/14)(6/7) + (1/2)(3/8).
    got = walk_hitting(EX_C, mode="definition", max_steps=3)
    np.testing.assert_allclose(got, [1 + 6 / 7 + 15 / 49 + 3 / 16, 1 + 3 / 8 + 9 / 64, 0.0])
    # Paper, M large: h1 = 1/.7 = 10/7, h0 = 2 + h1 = 24/7 (geometric waits), mean 34/21.
    assert walk_hitting(EX_C, max_steps=200).mean() == pytest.approx(34 / 21, rel=1e-12)
    # Algorithm 1 itself refuses Example C: its row 0 is not a distribution
    with pytest.raises(ValueError, match=r"pattern\[0, 0, :\] sums to 0\.5: .* must sum to 1"):
        px.mixing_time_proxy(EX_C)


def test_mixing_max_steps_one_and_large_m_solve():
    rng = np.random.default_rng(3)
    pattern = softmax_attention(rng, (4, 3), 9)
    for mode in px.MODES:
        # M = 1: every non-sink start takes exactly one counted step -> (T-1)/T
        np.testing.assert_allclose(px.mixing_time_proxy(pattern, mode=mode, max_steps=1), 8 / 9)
    # Definition mode, M -> infinity: the expected hitting time solves (I - R) h = 1.
    Q = px.transition_matrix(pattern, mode="definition")
    R = Q[..., :-1, :-1]
    h = np.linalg.solve(np.eye(8) - R, np.ones((4, 8, 1)))[..., 0]
    expected = h.sum(-1) / 9
    got = px.mixing_time_proxy(pattern, mode="definition", max_steps=3000)
    np.testing.assert_allclose(got, expected, rtol=1e-9)


# --------------------------------------------------------------------------- Algorithm 2 by hand


def test_fidelity_hand_example_b_modes_differ():
    # (C^t)[2, :]: t=1 (.62, .3, .08), t=2 (.8496, .144, .0064), t=3 (.939968, .05952,
    # .000512). Node 1 peaks at t=1 (.3); the sink's own signal is .08^t (paper, t >= 1).
    nf = px.node_fidelity_proxy(EX_B, W_B, mode="paper", horizon=3)
    np.testing.assert_allclose(nf.phi, [93.9968, 30.0, 8.0])
    np.testing.assert_array_equal(nf.t_opt, [3, 1, 1])
    # definition mode: same node fidelities here (C is row-stochastic, and t >= 1 in both
    # modes, as in bparallel.fidelity); the modes differ in the min below
    nfd = px.node_fidelity_proxy(EX_B, W_B, mode="definition", horizon=3)
    np.testing.assert_allclose(nfd.phi, [93.9968, 30.0, 8.0])
    np.testing.assert_array_equal(nfd.t_opt, [3, 1, 1])
    # paper: min over all nodes (sink .08 included); definition: min over non-sink nodes
    for horizon in (1, 3, 100):
        assert px.minimax_fidelity_proxy(EX_B, W_B, mode="paper",
                                         horizon=horizon) == pytest.approx(8.0)
        assert px.minimax_fidelity_proxy(
            EX_B, W_B, mode="definition", horizon=horizon
        ) == pytest.approx(30.0)


def test_fidelity_hand_example_c():
    # (C^t)[2, 0] = .2, .51, .483, ... peaks at t=2; node 1: .5, .3, .135, ...; sink .3^t.
    # the walk's arithmetic (Algorithm 2 refuses Example C's row 0, which is not a
    # distribution)
    phi, t_opt = px.Walk(EX_C).node_fidelity(100)
    np.testing.assert_allclose(100 * phi[0], [51.0, 50.0, 30.0])
    np.testing.assert_array_equal(t_opt[0], [2, 1, 1])
    assert 100 * phi[0].min() == pytest.approx(30.0)  # paper: the sink too
    assert 100 * phi[0, :-1].min() == pytest.approx(50.0)  # Definition 3.5
    for proxy in (px.node_fidelity_proxy, px.minimax_fidelity_proxy):
        with pytest.raises(ValueError, match=r"pattern\[0, 0, :\] sums to 0\.5"):
            proxy(EX_C)


def test_best_head_vs_combined_hand_example_b():
    # Head 1 alone: (A1^t)[2,:] = (.5,.5,0), (1,0,0): phi = (1, .5, 0); paper min 0,
    # definition min .5. Head 2 alone: node 1 never reaches the sink: phi_1 = 0 -> 0, 0.
    out = px.best_head_vs_combined(EX_B, W_B, mode="paper")
    np.testing.assert_allclose(out["per_head"], [0.0, 0.0])
    assert out["individual"] == pytest.approx(0.0)
    assert out["combined"] == pytest.approx(8.0)  # the combination beats every head
    out = px.best_head_vs_combined(EX_B, W_B, mode="definition")
    np.testing.assert_allclose(out["per_head"], [50.0, 0.0])
    assert out["individual"] == pytest.approx(50.0) and out["best_head"] == 0
    assert out["combined"] == pytest.approx(30.0)


def test_definition_fidelity_equals_core_module():
    from bparallel.fidelity import minimax_fidelity

    rng = np.random.default_rng(4)
    pattern = softmax_attention(rng, (6, 4), 10, scale=3.0)
    w = rng.dirichlet(np.ones(4), size=6)
    C = px.combine_heads(pattern, w)
    for horizon in (5, 40):
        np.testing.assert_allclose(
            px.minimax_fidelity_proxy(pattern, w, mode="definition", horizon=horizon),
            100 * np.asarray(minimax_fidelity(C, horizon)), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            px.minimax_fidelity_proxy(pattern, w, mode="paper", horizon=horizon),
            100 * np.asarray(minimax_fidelity(C, horizon, exclude_sink=False)),
            rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- methods agree


@pytest.mark.parametrize("mode", px.MODES)
def test_exact_vs_monte_carlo_within_four_standard_errors(mode):
    rng = np.random.default_rng(5)
    pattern = softmax_attention(rng, (3, 2), 8, scale=1.5)
    w = np.array([0.7, 0.3])
    exact = px.mixing_time_proxy(pattern, w, mode=mode, max_steps=30)
    mc, se = px.mixing_time_proxy(pattern, w, mode=mode, method="monte-carlo", max_steps=30,
                                  num_simulations=1000, seed=11, return_stderr=True)
    assert np.all(se > 0)
    assert np.all(np.abs(mc - exact) < 4 * se), (mc, exact, se)
    # per start too, and the worst case
    ex_all = px.mixing_time_proxy(pattern, w, mode=mode, max_steps=30, reduce="none")
    mc_all, se_all = px.mixing_time_proxy(pattern, w, mode=mode, method="monte-carlo",
                                          max_steps=30, num_simulations=1000, seed=12,
                                          reduce="none", return_stderr=True)
    ok = np.abs(mc_all - ex_all) <= 4 * se_all + 1e-12
    assert ok.all()


def test_exact_vs_monte_carlo_hand_example_c():
    # on the walk the proxies read (Example C's row 0 is not a distribution: the proxies
    # refuse it, the walk's sampler and exact sums still agree on it)
    walk = px.Walk(EX_C)
    exact = walk.truncated_hitting_times("paper", 20).mean()
    times = walk.sampled_hitting_times("paper", 20, 4000, np.random.default_rng(3))[0]
    mc = times.mean(-1).mean()
    se = np.sqrt((times.var(-1, ddof=1) / 4000).sum()) / 3
    assert abs(mc - exact) < 4 * se


@pytest.mark.parametrize("mode", px.MODES)
def test_sampler_matches_walk_by_walk_reference_in_distribution(mode):
    # The vectorised sampler and the plain per-walk loop both follow the exact law of
    # min(tau, M) from every start: compare both histograms with the exact pmf.
    rng = np.random.default_rng(6)
    pattern = softmax_attention(rng, (2,), 5, scale=1.0)
    pattern[0, 2] *= 0.6  # an unnormalised row: column sums of C move both ways
    w = np.array([0.5, 0.5])
    M, S = 12, 3000
    Q = px.transition_matrix(pattern, w, mode=mode)
    P = np.swapaxes(px.combine_heads(pattern, w), -1, -2)[None]
    cs = np.cumsum(P, -1)
    if mode == "definition":
        cs = cs / cs[..., -1:]
    fast = absorbing.sample_walks(cs, M, S, np.random.default_rng(7))[0]  # (T, S)
    slow = absorbing.reference_walks(px.Walk(pattern, w).moves(mode)[0], M, S,
                                     normalise=mode == "definition", seed=8)
    for start in range(4):
        surv = survival_curve(Q, start, M)
        pmf = np.append(-np.diff(surv), surv[-1])  # P(min(tau, M) = t), t = 1..M
        for times in (fast[start], slow[start]):
            freq = np.bincount(times, minlength=M + 1)[1:] / S
            tol = 4.5 * np.sqrt(pmf * (1 - pmf) / S) + 1e-9
            assert np.all(np.abs(freq - pmf) <= tol), (start, freq, pmf)
    assert np.all(fast[4] == 0) and np.all(slow[4] == 0)  # the sink contributes 0


def test_batched_equals_per_graph_loop():
    rng = np.random.default_rng(9)
    pattern = softmax_attention(rng, (2, 3, 4), 7)
    w = rng.dirichlet(np.ones(4), size=(2, 3))
    for mode in px.MODES:
        mix = px.mixing_time_proxy(pattern, w, mode=mode, max_steps=50)
        fid = px.minimax_fidelity_proxy(pattern, w, mode=mode, horizon=30)
        best = px.best_head_vs_combined(pattern, w, mode=mode, horizon=30)
        assert mix.shape == fid.shape == (2, 3)
        for i in range(2):
            for j in range(3):
                assert mix[i, j] == pytest.approx(
                    px.mixing_time_proxy(pattern[i, j], w[i, j], mode=mode, max_steps=50))
                assert fid[i, j] == pytest.approx(
                    px.minimax_fidelity_proxy(pattern[i, j], w[i, j], mode=mode, horizon=30))
                one = px.best_head_vs_combined(pattern[i, j], w[i, j], mode=mode, horizon=30)
                assert best["individual"][i, j] == pytest.approx(one["individual"])
                assert best["best_head"][i, j] == one["best_head"]
    # (H,) weights broadcast to every graph (torch input: tests/transformer/test_tensors.py)
    w1 = w[0, 0]
    np.testing.assert_allclose(px.mixing_time_proxy(pattern, w1),
                               px.mixing_time_proxy(pattern, np.broadcast_to(w1, (2, 3, 4))))


def test_early_exit_is_exact_bitwise():
    # fast-mixing graphs leave the survival loop early; the sums must not change.
    # bitwise: same operations, same order up to the exit; each skipped term is below half
    # an ulp of its sum (>= 1), so adding it could not change the float64 result
    rng = np.random.default_rng(10)
    pattern = softmax_attention(rng, (40, 1), 30, scale=0.1)
    for mode in px.MODES:
        fast = px.mixing_time_proxy(pattern, mode=mode, max_steps=100, reduce="none")
        slow = _without_tail_cutoff(pattern, mode)
        np.testing.assert_array_equal(fast, slow)


def test_definition_mode_empty_column_waits():
    # C's column 0 is zero: position 0 has no outgoing weight; definition mode lets the
    # walk wait there (hitting time M), the paper sampler jumps to the sink (r > 0 = cs).
    # Position 1: P1 = (0, 1, .5) -> (0, 2/3, 1/3), geometric: sum_{t<10} (2/3)^t.
    C = np.array([[[0.0, 0, 0], [0, 1, 0], [0, 0.5, 0.5]]])
    np.testing.assert_allclose(walk_hitting(C, mode="definition", max_steps=10),
                               [10, 3 * (1 - (2 / 3)**10), 0])
    np.testing.assert_allclose(walk_hitting(C, mode="paper", max_steps=10)[0], 1.0)
    # in causal attention whose rows sum to 1, position 1's column can be empty too: no
    # query reads key 1, so a walk there waits; from 0, P0 = (1, 1, .5) / 2.5 stays (.4),
    # is trapped at 1 (.4) or leaves (.2): P(tau > t) = .4^t + (2/3)(1 - .4^t)
    A = np.array([[[1.0, 0, 0], [1, 0, 0], [0.5, 0, 0.5]]])
    np.testing.assert_allclose(
        px.mixing_time_proxy(A, mode="definition", max_steps=10, reduce="none"),
        [20 / 3 + (1 - 0.4**10) / 1.8, 10, 0], rtol=1e-12)


# --------------------------------------------------------------------------- properties


attn_arrays = st.integers(2, 6).flatmap(
    lambda T: arrays(np.float64, (2, T, T), elements=st.floats(0, 1, allow_subnormal=False))
)


@settings(max_examples=40, deadline=None)
@given(pattern=attn_arrays)
def test_paper_minimax_never_exceeds_definition(pattern):
    # same node fidelities off the sink; the paper's min also ranges over the sink
    pattern = stochastic(pattern)
    paper = px.minimax_fidelity_proxy(pattern, mode="paper", horizon=20)
    assert paper <= px.minimax_fidelity_proxy(pattern, mode="definition", horizon=20) + 1e-12


@settings(max_examples=40, deadline=None)
@given(pattern=attn_arrays, m=st.integers(1, 30))
def test_mixing_bounds_and_monotone_in_cutoff(pattern, m):
    pattern = stochastic(pattern)
    T = pattern.shape[-1]
    for mode in px.MODES:
        mean = px.mixing_time_proxy(pattern, mode=mode, max_steps=m)
        worst = px.mixing_time_proxy(pattern, mode=mode, max_steps=m, reduce="max")
        longer = px.mixing_time_proxy(pattern, mode=mode, max_steps=m + 5)
        assert (T - 1) / T - 1e-12 <= mean <= worst + 1e-12
        assert worst <= m + 1e-9
        assert longer >= mean - 1e-12


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: px.mixing_time_proxy(np.ones((3, 3))), "at least 3 dims"),
        (lambda: px.mixing_time_proxy(np.ones((1, 3, 4))), "last two dimensions"),
        (lambda: px.mixing_time_proxy(-np.ones((1, 3, 3))),
         r"pattern has negative entries \(pattern\[0, 0, 0\] = -1\)"),
        (lambda: px.mixing_time_proxy(np.full((1, 3, 3), np.nan)), "NaN"),
        (lambda: px.mixing_time_proxy(EX_A, [1.0, 0, 0]), "number of heads H=2"),
        (lambda: px.mixing_time_proxy(EX_A, [1.0, -0.5]), "negative"),
        (lambda: px.mixing_time_proxy(EX_A, [0.0, 0.0]), r"head_weights\[:\] sums to 0:"),
        (lambda: px.mixing_time_proxy(EX_A, [1.0, -0.5]), r"head_weights\[1\] = -0\.5: "),
        (lambda: px.minimax_fidelity_proxy(EX_A, [2, 2]),
         r"head_weights\[:\] sums to 4: the head weights .* must sum to 1 \(within 0\.0001\)"),
        (lambda: px.mixing_time_proxy(np.stack([EX_A] * 2), [[0.5, 0.5], [0.5, 0.6]]),
         r"head_weights\[1, :\] sums to 1\.1"),
        (lambda: px.mixing_time_proxy(np.full((1, 4, 4), 0.25)),
         r"pattern\[0, 0, 1\] = 0\.25: a backward edge 1 -> 0 .* must be causal"),
        (lambda: px.minimax_fidelity_proxy(np.full((1, 4, 4), 0.25)), "backward edge 1 -> 0"),
        (lambda: px.node_fidelity_proxy(EX_A + np.triu(np.ones(3), 2)), r"pattern\[0, 0, 2\]"),
        (lambda: px.mixing_time_proxy(EX_A * 0.9), r"pattern\[0, 0, :\] sums to 0\.9"),
        (lambda: px.minimax_fidelity_proxy(EX_A * 1.001), r"sums to 1\.001"),
        (lambda: px.mixing_time_proxy(np.stack([EX_A] * 3), np.ones((2, 2))), "broadcast"),
        (lambda: px.mixing_time_proxy(EX_A, mode="exact"), r"mode='exact'.*'paper'"),
        (lambda: px.mixing_time_proxy(EX_A, method="mc"), r"method='mc'.*'monte-carlo'"),
        (lambda: px.mixing_time_proxy(EX_A, reduce="min"), r"reduce='min'.*'max'"),
        (lambda: px.mixing_time_proxy(EX_A, max_steps=0), "max_steps=0"),
        (lambda: px.mixing_time_proxy(EX_A, num_simulations=0), "num_simulations=0"),
        (lambda: px.minimax_fidelity_proxy(EX_A, horizon=0), "horizon=0"),
        (lambda: px.minimax_fidelity_proxy(EX_A, mode="both"), "mode='both'"),
        (lambda: px.node_fidelity_proxy(EX_A, horizon=1.5), "horizon=1.5"),
    ],
)
def test_validation_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_algorithms_accept_rounding_within_sum_atol_and_refuse_beyond():
    # float32 softmax rows sum to 1 within ~T * 2^-24; SUM_ATOL (1e-4) takes them, and a
    # row 2e-4 off (or weights 2e-4 off) is refused, in float32 and float64 alike
    from bparallel._checks import SUM_ATOL

    rng = np.random.default_rng(40)
    pattern = softmax_attention(rng, (2, 3), 8)
    w = rng.dirichlet(np.ones(3), size=2)
    exact = px.mixing_time_proxy(pattern, w, reduce="none")
    as32 = pattern.astype(np.float32)
    assert np.abs(as32.astype(np.float64).sum(-1) - 1).max() > 0  # rounded
    np.testing.assert_allclose(px.mixing_time_proxy(as32, w, reduce="none"), exact, atol=1e-4)
    near = pattern.copy()
    near[..., 5, 0] += SUM_ATOL / 2
    px.minimax_fidelity_proxy(near, w + np.array([SUM_ATOL / 2, 0, 0]))
    near[..., 5, 0] += SUM_ATOL
    with pytest.raises(ValueError, match=r"pattern\[0, 0, 5, :\] sums to 1\.00015"):
        px.minimax_fidelity_proxy(near, w)
    with pytest.raises(ValueError, match=r"head_weights\[0, :\] sums to 1\.0002"):
        px.mixing_time_proxy(pattern, w + np.array([2 * SUM_ATOL, 0, 0]))


def test_binary_search_matches_the_published_rule_with_ties():
    # first k with cs[k] >= r, counting plateaus and exact equality (r equal to a cs value)
    rng = np.random.default_rng(13)
    T = 7
    cs = np.cumsum(rng.integers(0, 3, size=(200, T)) / 4, axis=-1)
    r = rng.integers(0, 6, size=200) / 4
    r[::3] = rng.random(len(r[::3]))
    got = absorbing._first_at_least(cs.reshape(-1), np.arange(200) * T, r, T)
    np.testing.assert_array_equal(got, (cs < r[:, None]).sum(1))


def test_early_exit_with_trapped_start_is_exact_bitwise():
    # paper mode: position 0 of causal attention never moves (C[0, 0] = 1 makes its
    # cumulative sums reach 1 at once), so its row is a trap contributing exactly M.
    # bitwise: same operations, same order up to the exit (see test_early_exit_is_exact_bitwise);
    # the trap's skipped terms are exactly 1 each, added at once as an exact integer
    rng = np.random.default_rng(14)
    pattern = softmax_attention(rng, (30, 2), 25, scale=0.1)
    fast = px.mixing_time_proxy(pattern, mode="paper", max_steps=100, reduce="none")
    assert np.all(fast[:, 0] == 100.0)
    slow = _without_tail_cutoff(pattern)
    np.testing.assert_array_equal(fast, slow)


# --------------------------------------------------------------------------- Definition 2.7


def markov_mixing_times(pattern, w, mode, eps):
    """``markov.mixing_time`` graph by graph on ``W = Q^T`` (inf where it finds no mixing;
    non-causal walks too, the cross-check being of the arithmetic)."""
    from bparallel import markov

    Q = px.transition_matrix(pattern, w, mode=mode)
    T = Q.shape[-1]
    out = []
    for Qg in Q.reshape(-1, T, T):
        try:
            out.append(float(markov.mixing_time(Qg.T, eps, allow_backward=True)))
        except ValueError:  # "does not mix to within eps"
            out.append(np.inf)
    return np.array(out).reshape(Q.shape[:-2])


def worst_survival(Q, t):
    """``max_i P(tau_i > t)`` of one walk ``Q`` ``(T, T)``: the largest row sum of ``Q^t``
    off the sink (the last column)."""
    return np.linalg.matrix_power(Q, int(t))[:, :-1].sum(-1).max()


def assert_mixing_times_agree(got, expected, Q, eps, tie=1e-9):
    """Mixing times of the walks ``Q`` ``(..., T, T)`` from two routes (different summation
    orders): the same step everywhere (``inf`` where ``inf``), except one step apart where
    the worst survival at the earlier step is within ``tie`` of ``eps``: a rounding tie that
    the two routes may settle either way (on one CPU or another). Survivals fall by far
    more than ``tie`` a step near ``eps`` in these tests, so a real off-by-one still fails.
    """
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    T = Q.shape[-1]
    walks = np.asarray(Q).reshape(-1, T, T)
    for i in np.flatnonzero(got.ravel() != expected.ravel()):
        a, b = sorted((got.ravel()[i], expected.ravel()[i]))
        s = worst_survival(walks[i], a)
        assert b == a + 1 and abs(s - eps) <= tie, (
            f"walk {i}: {got.ravel()[i]} vs {expected.ravel()[i]} steps, and the worst "
            f"survival at step {a} is {s!r}, not a tie with eps={eps}")


def brute_force_mixing_time(Q, eps, limit):
    """Plain powers ``Q^t``, ``t = 0, 1, ...``: the first ``t`` whose worst survival (the
    sum of a row's non-sink entries) is ``<= eps``; ``None`` if none up to ``limit``."""
    Qt = np.eye(Q.shape[0])
    for t in range(limit + 1):
        if Qt[:, :-1].sum(-1).max() <= eps:
            return t
        Qt = Qt @ Q
    return None


def near_diagonal(rng, shape, T, stay):
    """Causal patterns that mostly attend to their own position (slow walks)."""
    return stay * np.eye(T) + (1 - stay) * softmax_attention(rng, shape, T)


def leak_chain(c):
    """One head, T = 3: position 0 leaves for the sink with probability 1/3 a step, position
    1 with ``c / (1 + c)`` (definition mode): its survival is ``Q[1, 1]^t`` exactly."""
    return np.array([[[1.0, 0, 0], [0, 1, 0], [0.5, c, 0.5 - c]]])


@pytest.mark.parametrize("mode", px.MODES)
@pytest.mark.parametrize("eps", [0.05, 0.25, 0.6])
def test_worst_case_mixing_time_equals_markov_mixing_time(mode, eps):
    # random causal patterns (fast, phase 1) and near-diagonal ones (thousands of steps,
    # phase 2), weighted heads; paper mode traps position 0: inf on both sides
    rng = np.random.default_rng(20)
    T = 12
    pattern = np.concatenate([softmax_attention(rng, (6, 3), T, scale=3.0),
                              near_diagonal(rng, (6, 3), T, 0.97)])
    w = rng.dirichlet(np.ones(3), size=12)
    got = px.worst_case_mixing_time(pattern, w, mode=mode, eps=eps)
    expected = markov_mixing_times(pattern, w, mode, eps)
    assert_mixing_times_agree(got, expected, px.transition_matrix(pattern, w, mode=mode), eps)
    if mode == "definition":
        assert np.all(np.isfinite(got)) and got[6:].min() > 200  # phase 2 ran
    else:
        assert np.all(np.isinf(got))


@pytest.mark.parametrize("mode", px.MODES)
def test_worst_case_mixing_time_random_dags_equal_markov(mode):
    # sparse random causal supports with arbitrary non-negative weights (unnormalised rows,
    # so paper-mode rows cross 1 anywhere): every kind of chain the modes build
    rng = np.random.default_rng(21)
    T = 9
    support = np.tril(rng.random((40, 2, T, T)) < 0.35)
    support[..., np.arange(T), np.arange(T)] |= rng.random((40, 2, T)) < 0.5
    pattern = support * rng.random((40, 2, T, T)) * 1.5
    got = px.worst_case_mixing_time(pattern, mode=mode)
    assert_mixing_times_agree(got, markov_mixing_times(pattern, None, mode, 0.25),
                              px.transition_matrix(pattern, mode=mode), 0.25)
    assert 10 < np.isinf(got).sum() < 30  # traps (paper), waiting positions (definition)


@pytest.mark.parametrize("stay", [0.0, 0.9, 0.995])
def test_worst_case_mixing_time_brute_force(stay):
    # Q^t by plain repeated multiplication: mixing times from a few steps to thousands,
    # either side of the switch from stepping to galloping
    rng = np.random.default_rng(22)
    pattern = near_diagonal(rng, (5, 2), 6, stay)
    Q = px.transition_matrix(pattern, mode="definition")
    for eps in (0.01, 0.3):
        got = px.worst_case_mixing_time(pattern, eps=eps)
        expected = [brute_force_mixing_time(Qg, eps, 200_000) for Qg in Q]
        assert None not in expected
        assert_mixing_times_agree(got, expected, Q, eps)
    if stay == 0.995:
        assert got.min() > absorbing._DIRECT_STEPS


@pytest.mark.parametrize("c", [1e-2, 1e-4, 1e-6, 1e-7])
@pytest.mark.parametrize("eps", [0.25, 0.1, 1e-3])
def test_worst_case_mixing_time_leak_closed_form(c, eps):
    # position 1 leaks p = c / (1 + c) a step: P(tau_1 > t) = q^t, q = 1 - p, the slowest
    # start, so t = ceil(log(eps) / log(q)): up to ~1.6e8 steps, exact to the step
    q = px.transition_matrix(leak_chain(c), mode="definition")[1, 1]
    x = np.log(eps) / np.log(q)
    assert 1e-3 < x % 1 < 1 - 1e-3  # not a float64 tie: the closed form itself is exact
    assert px.worst_case_mixing_time(leak_chain(c), eps=eps) == np.ceil(x)


def test_worst_case_mixing_time_two_equal_leaks_closed_form():
    # 0 -> 1 -> sink, both staying with probability q: from 0, tau is a sum of two
    # geometrics, P(tau_0 > t) = q^t + t p q^(t-1) (p = Q[0, 1]): the worst start is 0
    c = 1e-5
    pattern = np.array([[[1 - c, 0, 0], [c, 1 - c, 0], [0, c, 1 - c]]])
    Q = px.transition_matrix(pattern, mode="definition")
    q, p = Q[0, 0], Q[0, 1]
    assert Q[1, 1] == q and Q[1, 2] == p

    def survival(t):
        return np.exp(t * np.log(q)) * (1 + t * p / q)

    got = px.worst_case_mixing_time(pattern, eps=0.25)
    assert survival(got) <= 0.25 < survival(got - 1)
    assert_mixing_times_agree(got, markov_mixing_times(pattern, None, "definition", 0.25),
                              Q, 0.25)


def test_worst_case_mixing_time_never_mixes():
    rng = np.random.default_rng(23)
    causal = softmax_attention(rng, (4, 2), 7)
    # paper mode: position 0 of causal attention never moves (Q[0, 0] = 1) ...
    assert np.all(np.isinf(px.worst_case_mixing_time(causal, mode="paper")))
    # ... also when the head weights' sum is 1 only up to rounding: C[0, 0] = 1 - 1e-16, so
    # Q[0, 1] = 1e-16 (leaving in ~1e16 steps is rounding, not a walk)
    w = np.array([0.6, 0.3, 0.1])
    three = softmax_attention(rng, (4, 3), 7)
    Q = px.transition_matrix(three, w, mode="paper")
    assert np.all(Q[:, 0, 0] < 1.0) and np.all(Q[:, 0, 1] > 0)
    assert np.all(np.isinf(px.worst_case_mixing_time(three, w, mode="paper")))
    np.testing.assert_array_equal(markov_mixing_times(three, w, "paper", 0.25), np.inf)
    assert np.all(np.isinf(px.hitting_time_profile(three, w, mode="paper").exact[:, 0]))
    # definition mode: a zero column of C (position 1 gets no attention) waits forever,
    # even if only position 0 can get there
    C = np.array([[[1.0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0, 1, 0], [0.2, 0, 0.3, 0.5]]])
    assert px.worst_case_mixing_time(C) == np.inf
    # a non-causal walk (P = C^T) with a closed class {0, 1} that never reaches the sink
    swap = np.array([[[0.0, 1, 0], [1, 0, 0], [0, 0, 1]]])
    assert px.worst_case_mixing_time(swap) == np.inf
    # ... and one that leaves it, from 0 with probability 0.3 / 1.3: finite, as in markov
    leaky = np.array([[[0.0, 1, 0], [1, 0, 0], [0.3, 0, 0.7]]])
    got = px.worst_case_mixing_time(leaky)
    assert np.isfinite(got)
    assert_mixing_times_agree(got, markov_mixing_times(leaky, None, "definition", 0.25),
                              px.transition_matrix(leaky, mode="definition"), 0.25)


def test_worst_case_mixing_time_single_position_and_eps_monotone():
    assert px.worst_case_mixing_time(np.ones((3, 1, 1, 1))).tolist() == [0.0, 0.0, 0.0]
    rng = np.random.default_rng(24)
    pattern = near_diagonal(rng, (6, 2), 10, 0.95)
    times = [px.worst_case_mixing_time(pattern, eps=e) for e in (0.5, 0.25, 0.1, 0.01)]
    assert all(np.all(a <= b) for a, b in zip(times, times[1:], strict=False))


def test_worst_case_mixing_time_batched_equals_loop(monkeypatch):
    rng = np.random.default_rng(25)
    pattern = np.concatenate([softmax_attention(rng, (1, 3, 4), 9),
                              near_diagonal(rng, (1, 3, 4), 9, 0.98)])  # (2, 3, 4, 9, 9)
    w = rng.dirichlet(np.ones(4), size=(2, 3))
    for mode in px.MODES:
        # a walk's phase-1 length depends on its chunk's other walks, so batched and one by
        # one are different routes: the same steps up to rounding ties
        Q = px.transition_matrix(pattern, w, mode=mode)
        batched = px.worst_case_mixing_time(pattern, w, mode=mode, eps=0.2)
        assert batched.shape == (2, 3)
        loop = [[px.worst_case_mixing_time(pattern[i, j], w[i, j], mode=mode, eps=0.2)
                 for j in range(3)] for i in range(2)]
        assert_mixing_times_agree(batched, loop, Q, 0.2)
        hit = px.hitting_time_profile(pattern, w, mode=mode)
        # smaller chunks (phase 2 one graph at a time, hitting times two at a time)
        monkeypatch.setattr(absorbing, "_POWER_BYTES", 1)
        monkeypatch.setattr(absorbing, "_SOLVE_CHUNK", 2)
        assert_mixing_times_agree(px.worst_case_mixing_time(pattern, w, mode=mode, eps=0.2),
                                  batched, Q, 0.2)
        # bitwise: the back-substitution does the same per-graph operations in the same
        # order whatever the chunk (only which graphs share it changes)
        np.testing.assert_array_equal(px.hitting_time_profile(pattern, w, mode=mode).exact,
                                      hit.exact)
        monkeypatch.undo()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: px.worst_case_mixing_time(EX_A, eps=0), r"eps=0: must be a real .* \(0, 1\)"),
        (lambda: px.worst_case_mixing_time(EX_A, eps=1), "eps=1:"),
        (lambda: px.worst_case_mixing_time(EX_A, eps=-0.1), r"eps=-0\.1:"),
        (lambda: px.worst_case_mixing_time(EX_A, eps=2.0), r"eps=2\.0:"),
        (lambda: px.worst_case_mixing_time(EX_A, eps=float("nan")), "eps=nan:"),
        (lambda: px.worst_case_mixing_time(EX_A, eps="0.25"), "eps='0.25':"),
        (lambda: px.worst_case_mixing_time(EX_A, eps=True), "eps=True:"),
        (lambda: px.worst_case_mixing_time(np.ones((3, 3))), "pattern has shape .* 3 dims"),
        (lambda: px.worst_case_mixing_time(np.ones((1, 3, 4))), "last two dimensions"),
        (lambda: px.worst_case_mixing_time(-EX_A), "pattern has negative entries"),
        (lambda: px.worst_case_mixing_time(EX_A, [1.0, 0, 0]), "number of heads H=2"),
        (lambda: px.worst_case_mixing_time(EX_A, mode="exact"), r"mode='exact'"),
        (lambda: px.hitting_time_profile(EX_A, max_steps=0), "max_steps=0"),
        (lambda: px.hitting_time_profile(EX_A, mode="both"), "mode='both'"),
        (lambda: px.hitting_time_profile(np.ones(3)), "pattern has shape"),
        (lambda: px.attention_rollout(EX_A), r"patterns has shape \(2, 3, 3\).* 4 dims"),
        (lambda: px.attention_rollout(-EX_A[None]), "patterns has negative entries"),
        (lambda: px.attention_rollout(EX_A[None], residual=1.5), r"residual=1\.5: .*\[0, 1\]"),
        (lambda: px.attention_rollout(EX_A[None], residual=-0.1), "residual=-0.1"),
        (lambda: px.attention_rollout(EX_A[None], np.ones((3, 2))), "broadcast"),
    ],
)
def test_definition_27_hitting_rollout_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------- hitting times


def test_hitting_time_profile_path_closed_form():
    # query i attends to i - 1 only (query 0 to itself): P = C^T moves j -> j + 1, except
    # position 0, whose column (1, 1, 0, ...) makes it wait with probability 1/2 first
    T = 6
    A = np.eye(T, k=-1)
    A[0, 0] = 1.0
    ht = px.hitting_time_profile(A[None], mode="definition")
    path = T - 1 - np.arange(T, dtype=float)
    path[0] = 2 + (T - 2)  # a geometric wait (mean 2), then T - 2 steps
    np.testing.assert_allclose(ht.exact, path, rtol=1e-15)
    # paper mode: position 0's cumulative sums reach 1 at once, a trap; the rest is the path
    ht = px.hitting_time_profile(A[None], mode="paper", max_steps=50)
    assert ht.exact[0] == np.inf and ht.truncated[0] == 50
    np.testing.assert_allclose(ht.exact[1:], path[1:], rtol=1e-15)
    np.testing.assert_allclose(ht.truncated[1:], path[1:], rtol=1e-15)


@pytest.mark.parametrize("p", [0.5, 1e-2, 1e-6])
def test_hitting_time_profile_geometric_leak(p):
    # two positions: C[1, 0] = p / (1 - p) makes position 0 leave with probability p a
    # step, so E[tau] = 1 / p; truncated at M: (1 - (1 - p)^M) / p
    pattern = np.array([[[1.0, 0], [p / (1 - p), 1 - p / (1 - p)]]])
    ht = px.hitting_time_profile(pattern, max_steps=1000)
    np.testing.assert_allclose(ht.exact, [1 / p, 0.0], rtol=1e-9)
    np.testing.assert_allclose(ht.truncated, [-np.expm1(1000 * np.log1p(-p)) / p, 0.0],
                               rtol=1e-9)


@pytest.mark.parametrize("mode", px.MODES)
def test_hitting_time_profile_equals_solve_and_long_truncation(mode):

    rng = np.random.default_rng(26)
    pattern = np.concatenate([softmax_attention(rng, (4, 3), 10, scale=2.5),
                              near_diagonal(rng, (2, 3), 10, 0.6)])
    pattern[:, :, 2:, 1] *= 1.7  # an unnormalised column: paper-mode row 1 crosses 1 mid-way
    w = rng.dirichlet(np.ones(3), size=6)
    ht = px.hitting_time_profile(pattern, w, mode=mode)
    # bitwise: both are absorbing.survival_sums of the same chain (same operations, same order)
    np.testing.assert_array_equal(ht.truncated, walk_hitting(pattern, w, mode=mode))
    finite = np.isfinite(ht.exact)
    if mode == "definition":
        assert finite.all()
        np.testing.assert_allclose(
            ht.exact, solved_hitting_times(px.transition_matrix(pattern, w, mode=mode)),
            rtol=1e-10)
    else:
        assert not finite[:, 0].any() and finite[:, 1:].all()  # the trap, and only it
    long = px.hitting_time_profile(pattern, w, mode=mode, max_steps=20_000).truncated
    np.testing.assert_allclose(long[finite], ht.exact[finite], rtol=1e-10)
    assert np.all(ht.truncated <= ht.exact + 1e-12)
    # a trap survives every step (up to a rounding-level leak when the weights' sum rounds)
    np.testing.assert_allclose(long[~finite], 20_000.0, rtol=1e-10)


def test_hitting_time_profile_traps_and_non_causal():

    # position 1 gets no attention (waits forever in definition mode); position 0 gets there
    # with probability 1/2 (P[0] = (1, .5, 0, .5) / 2), so E[tau_0] = inf too; position 2
    # stays with probability 2/3 (P[2] = (0, 0, 1, .5) / 1.5): E[tau_2] = 3
    C = np.array([[[1.0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0, 1, 0], [0.5, 0, 0.5, 0.5]]])
    ht = px.hitting_time_profile(C, max_steps=10)
    np.testing.assert_allclose(ht.exact, [np.inf, np.inf, 3.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(ht.truncated[1], 10.0)
    # non-causal: a general solve; a closed class {0, 1} without the sink is inf
    rng = np.random.default_rng(27)
    full = rng.random((3, 2, 5, 5))
    ht = px.hitting_time_profile(full)
    Q = px.transition_matrix(full, mode="definition")
    np.testing.assert_allclose(ht.exact, solved_hitting_times(Q), rtol=1e-10)
    swap = np.array([[[0.0, 1, 0], [1, 0, 0], [0, 0, 1]]])
    np.testing.assert_array_equal(px.hitting_time_profile(swap).exact, [np.inf, np.inf, 0])
    # leaving it from 0 w.p. p = 0.3 / 1.3: h_0 = 1 + (1 - p) h_1, h_1 = 1 + h_0
    leaky = np.array([[[0.0, 1, 0], [1, 0, 0], [0.3, 0, 0.7]]])
    p = 0.3 / 1.3
    np.testing.assert_allclose(px.hitting_time_profile(leaky).exact,
                               [(2 - p) / p, (2 - p) / p + 1, 0], rtol=1e-13)


# --------------------------------------------------------------------------- rollout


def test_rollout_hand_example_two_layers():
    # A = [[1, 0], [a, 1 - a]], residual 1/2: A^ = [[1, 0], [a/2, 1 - a/2]] per layer, and
    # two layers give A^2 = [[1, 0], [a/2 + (1 - a/2) a/2, (1 - a/2)^2]]
    a = 0.6
    A = np.array([[1.0, 0], [a, 1 - a]])
    out = px.attention_rollout(np.stack([A[None], A[None]]))  # (L=2, H=1, 2, 2)
    np.testing.assert_allclose(out[0], [[1, 0], [a / 2, 1 - a / 2]])
    np.testing.assert_allclose(out[1], [[1, 0], [a / 2 + (1 - a / 2) * a / 2,
                                                 (1 - a / 2) ** 2]])


def test_rollout_one_layer_no_residual_is_the_combination_and_identity():
    rng = np.random.default_rng(28)
    pattern = softmax_attention(rng, (1, 5, 3), 7)  # (L=1, B, H, T, T)
    w = rng.dirichlet(np.ones(3), size=(1, 5))
    np.testing.assert_allclose(px.attention_rollout(pattern, w, residual=0.0)[0],
                               px.combine_heads(pattern[0], w[0]), rtol=1e-14)
    eye = np.broadcast_to(np.eye(7), (2, 4, 3, 7, 7))
    for residual in (0.0, 0.5, 1.0):
        np.testing.assert_allclose(px.attention_rollout(eye, residual=residual),
                                   np.broadcast_to(np.eye(7), (2, 4, 7, 7)))
    np.testing.assert_allclose(px.attention_rollout(pattern, residual=1.0)[0],
                               np.broadcast_to(np.eye(7), (5, 7, 7)))


def test_rollout_equals_plain_loop_rows_sum_to_one_causal():
    rng = np.random.default_rng(29)
    B, L, H, T = 3, 4, 2, 6
    pattern = softmax_attention(rng, (L, B, H), T)  # layers first, as the model returns them
    w = rng.dirichlet(np.ones(H), size=(L,))  # (L, H): one weight vector per layer
    out = px.attention_rollout(pattern, w, residual=0.3)
    assert out.shape == (L, B, T, T)
    for b in range(B):
        roll = np.eye(T)
        for layer in range(L):
            A = sum(w[layer, h] * pattern[layer, b, h] for h in range(H))
            A = 0.3 * np.eye(T) + 0.7 * A
            A = A / A.sum(1, keepdims=True)
            roll = np.linalg.multi_dot([A, roll])
            np.testing.assert_allclose(out[layer, b], roll, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.sum(-1), 1.0, rtol=1e-13)
    assert np.all(np.triu(out, 1) == 0)
    # (L, H) weights hold for every graph of their layer; None is the head average
    np.testing.assert_allclose(out, px.attention_rollout(
        pattern, np.broadcast_to(w[:, None], (L, B, H)), residual=0.3))
    np.testing.assert_allclose(px.attention_rollout(pattern),
                               px.attention_rollout(pattern, np.full(H, 1 / H)))
    assert not np.allclose(px.attention_rollout(pattern), out)


def test_rollout_row_without_weight_keeps_its_position():
    # residual 0 and a query that attends nowhere: its row of A^ is e_i, not 0/0
    A = np.array([[[[1.0, 0, 0], [0, 0, 0], [0.5, 0.5, 0]]]])  # (L=1, H=1, 3, 3)
    out = px.attention_rollout(A, residual=0.0)
    np.testing.assert_allclose(out[0], [[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]])


# --------------------------------------------------------------------------- defaults


def test_defaults_on_a_clean_feedforward_dag_are_finite():
    # issue 77's done-when: a clean 5-node DAG (the path 0 -> 1 -> 2 -> 3 -> 4, self-loops
    # added) read as one attention head, Delta of Eq. 21. The defaults follow the
    # definitions: P = C^T moves from j >= 1 to j + 1 w.p. 1/2 and waits w.p. 1/2; row 0,
    # P0 = (1, 1/2), normalised to (2/3, 1/3). So E[tau] = (3 + 6, 6, 4, 2, 0) exactly.
    from bparallel import graphs

    n = 5
    pattern = graphs.diffusion_matrix([(0, 1), (1, 2), (2, 3), (3, 4)], n)[None]  # (1, T, T)
    hitting = px.hitting_time_profile(pattern)
    np.testing.assert_allclose(hitting.exact, [9.0, 6.0, 4.0, 2.0, 0.0], rtol=1e-12)
    worst = px.mixing_time_proxy(pattern, reduce="max")  # Algorithm 1's worst start, M = 100
    mean = px.mixing_time_proxy(pattern)
    assert worst == pytest.approx(9.0, rel=1e-12)  # the tail past 100 steps is ~ 2^-90
    assert mean == pytest.approx(21.0 / 5, rel=1e-9)
    # Definition 2.7 by brute force: least t with max_i P(tau_i > t) <= 1/4
    Q = px.transition_matrix(pattern)
    survival, t = np.ones(n - 1), 0
    while survival.max() > 0.25:
        t += 1
        survival = np.linalg.matrix_power(Q, t)[:-1, :-1].sum(-1)
    assert px.worst_case_mixing_time(pattern) == t and np.isfinite(t)
    phi = px.minimax_fidelity_proxy(pattern)  # Definition 3.5: min over the non-sink nodes
    assert np.isfinite(phi) and 0.0 < phi <= 100.0
    assert px.minimax_fidelity_proxy(pattern, unit="fraction") == pytest.approx(phi / 100.0)
    # every default is the definitions' mode, named or not
    for f in (px.mixing_time_proxy, px.minimax_fidelity_proxy, px.transition_matrix,
              px.worst_case_mixing_time):
        np.testing.assert_array_equal(f(pattern), f(pattern, mode="definition"))
    # the published code's mode, one argument away: position 0 traps its walk
    assert px.mixing_time_proxy(pattern, mode="paper", reduce="max") == pytest.approx(100.0)
    assert px.worst_case_mixing_time(pattern, mode="paper") == np.inf


def test_fidelity_units_fraction_is_percent_over_100():
    rng = np.random.default_rng(77)
    pattern = softmax_attention(rng, (2, 3), 7)
    w = rng.dirichlet(np.ones(3), size=2)
    for mode in px.MODES:
        pct = px.node_fidelity_proxy(pattern, w, mode=mode)
        frac = px.node_fidelity_proxy(pattern, w, mode=mode, unit="fraction")
        np.testing.assert_allclose(frac.phi * 100.0, pct.phi, rtol=1e-14)
        np.testing.assert_array_equal(frac.t_opt, pct.t_opt)
        best = px.best_head_vs_combined(pattern, w, mode=mode, unit="fraction")
        best_pct = px.best_head_vs_combined(pattern, w, mode=mode)
        for key in ("individual", "combined", "per_head"):
            np.testing.assert_allclose(best[key] * 100.0, best_pct[key], rtol=1e-14)
    with pytest.raises(ValueError, match="unit='percentage'"):
        px.minimax_fidelity_proxy(pattern, w, unit="percentage")
