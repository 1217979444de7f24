"""The chapter tables of Sections 2-3 (bparallel.book.claims: chapters 03 and 06) against the
theory's single-graph functions, inline loops and exact rationals."""

import math
from fractions import Fraction

import numpy as np
import pytest

from bparallel import cross_head as ch
from bparallel import ensembles as en
from bparallel import exact
from bparallel import fidelity as fi
from bparallel import graphs as g
from bparallel import markov as mk
from bparallel.book import claims
from tests._ulps import assert_frames_close_ulps

Q = Fraction(1, 4)


# ------------------------------------------------- claims chapters' tables (03, 06)
def test_head_mixing_frame_against_single_graph_functions():
    W = en.random_weighted_walk(6, 5, 0.4, seed=11)
    df = claims.head_mixing_frame(W, 0.25, kind="weighted", density=0.4)
    assert list(df.columns) == ["kind", "n", "density", "p", "p_times_n", "t_mix",
                                "bound_2n_over_p", "t_star"]
    assert len(df) == 6 and (df.n == 5).all() and (df.kind == "weighted").all()
    for k in range(6):
        p = mk.forward_probability(W[k])
        assert df.p[k] == p and df.bound_2n_over_p[k] == pytest.approx(8 / p)
        assert df.t_mix[k] == mk.mixing_time(W[k])
        assert df.t_star[k] == en.binomial_mixing_bound(4, p)
    # a single (n, n) graph gives one row; the unweighted path has p = 1/2 and T = t*
    path = claims.head_mixing_frame(g.walk_matrix(g.line_graph_edges(6), 6), kind="path")
    assert len(path) == 1 and path.p[0] == 0.5 and np.isnan(path.density[0])
    assert path.t_mix[0] == path.t_star[0] == en.binomial_mixing_bound(5, 0.5)
    with pytest.raises(ValueError,
                       match=r"W has shape \(3, 4\): expected square matrices \(\.\.\., n, n\)"):
        claims.head_mixing_frame(np.ones((3, 4)), kind="x")


def test_combination_mixing_frame_against_loop():
    W = en.random_weighted_walk(8, 5, 0.5, seed=12).reshape(4, 2, 5, 5)
    alpha = np.array([[0.5, 0.5], [0.2, 0.8], [1.0, 0.0], [0.7, 0.3]])
    df = claims.combination_mixing_frame(W, alpha, kind="weighted pair")
    assert list(df.columns) == ["kind", "n", "p", "p_times_n", "t_mix", "bound_2n_over_p",
                                "t_star", "p_chain", "bound_2n_over_max_p_h",
                                "bound_2n_over_min_p_h"]
    for k in range(4):
        ph = [mk.forward_probability(W[k, h]) for h in range(2)]
        bar = g.convex_combination(W[k], alpha[k])
        assert df.p[k] == pytest.approx(alpha[k] @ ph)  # Eq. 12
        assert df.t_mix[k] == mk.mixing_time(bar)
        assert df.p_chain[k] == pytest.approx(mk.forward_probability(bar))
        assert df.bound_2n_over_max_p_h[k] == pytest.approx(8 / max(ph))
        assert df.bound_2n_over_min_p_h[k] == pytest.approx(8 / min(ph))
    assert (df.p_chain >= df.p - 1e-12).all()
    # weights (1, 0): the combination is head 1
    assert df.t_mix[2] == mk.mixing_time(W[2, 0])
    with pytest.raises(ValueError, match=r"alpha must have shape \(4, 2\)"):
        claims.combination_mixing_frame(W, alpha[:3], kind="x")
    with pytest.raises(ValueError, match="alpha must sum to 1"):
        claims.combination_mixing_frame(W, alpha * 2, kind="x")


def _theorem_2_8_by_loop(sizes, densities, num, eps, rng):
    """The chapter's original inline loop: the reference for draws and values."""
    import pandas as pd

    def rows(kind, n, density, W):
        W = W.reshape((-1, n, n))
        p = np.atleast_1d(mk.forward_probability(W))
        return pd.DataFrame({
            "kind": kind, "n": n, "density": density, "p": p, "p_times_n": p * (n - 1),
            "t_mix": mk.mixing_time(W, eps), "bound_2n_over_p": 2 * (n - 1) / p,
            "t_star": en.binomial_mixing_bound(n - 1, p, eps)})

    frames, pair_frames = [], []
    for n in sizes:
        for d in densities:
            A = g.random_feedforward_adjacency(num, n, d, rng)
            frames.append(rows("unweighted", n, d, g.walk_matrix_from_adjacency(A)))
        frames.append(rows("weighted", n, 0.3, en.random_weighted_walk(num, n, 0.3, 1.0, rng)))
        for fam in ("path", "complete"):
            frames.append(rows(fam, n, np.nan,
                               g.walk_matrix_from_adjacency(en.family_adjacency(fam, n))))
        for kind in ("unweighted", "weighted"):
            if kind == "weighted":
                Wh = en.random_weighted_walk(2 * num, n, 0.3, 1.0, rng)
            else:
                Wh = g.walk_matrix_from_adjacency(
                    g.random_feedforward_adjacency(2 * num, n, 0.3, rng))
            Wh = Wh.reshape(num, 2, n, n)
            alpha = rng.dirichlet([1.0, 1.0], num)
            Wbar = np.einsum("kh,khij->kij", alpha, Wh)
            ph = mk.forward_probability(Wh)
            p12 = (alpha * ph).sum(axis=1)
            p_chain = mk.forward_probability(Wbar)
            N = n - 1
            pair_frames.append(pd.DataFrame({
                "kind": f"{kind} pair", "n": n, "p": p12, "p_times_n": p12 * N,
                "t_mix": mk.mixing_time(Wbar, eps), "bound_2n_over_p": 2 * N / p12,
                "t_star": en.binomial_mixing_bound(N, p_chain, eps), "p_chain": p_chain,
                "bound_2n_over_max_p_h": 2 * N / ph.max(1),
                "bound_2n_over_min_p_h": 2 * N / ph.min(1)}))
    return pd.concat(frames, ignore_index=True), pd.concat(pair_frames, ignore_index=True)


def test_theorem_2_8_ensemble_matches_the_inline_loop_draw_for_draw():
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    heads, pairs = claims.theorem_2_8_ensemble([4, 7], [0.1, 0.6], 5, 0.25, rng_a)
    ref_heads, ref_pairs = _theorem_2_8_by_loop([4, 7], [0.1, 0.6], 5, 0.25, rng_b)
    # the same draws; the batched and the loop arithmetic may round differently (the CPU's
    # vector width decides), so floats agree within a few ulps, the rest exactly
    assert_frames_close_ulps(heads, ref_heads)
    assert_frames_close_ulps(pairs, ref_pairs)
    assert rng_a.random() == rng_b.random()  # the shared stream is left in the same state
    assert len(heads) == 2 * (2 * 5 + 5 + 2) and len(pairs) == 2 * 2 * 5
    assert set(pairs.kind) == {"unweighted pair", "weighted pair"}
    table = claims.bound_ratios(heads, pairs)
    assert (table.t_mix <= table.t_star).all() and (table.t_star <= table.bound_2n_over_p).all()


def test_bound_ratios_and_summary_on_a_hand_table():
    import pandas as pd

    a = pd.DataFrame({"kind": "a", "n": 3, "p_times_n": [0.5, 2.0, 3.0], "t_mix": [4, 2, 9],
                      "bound_2n_over_p": [8.0, 4.0, 6.0], "t_star": [4, 4, 9]})
    b = pd.DataFrame({"kind": "b", "n": 3, "p_times_n": [1.0], "t_mix": [1],
                      "bound_2n_over_p": [4.0], "t_star": [2]})
    t = claims.bound_ratios(a, b)
    np.testing.assert_allclose(t.ratio, [0.5, 0.5, 1.5, 0.25])
    np.testing.assert_allclose(t.t_mix_over_t_star, [1, 0.5, 1, 0.5])
    s = claims.bound_summary(t, eps=0.25)  # ln 4 = 1.386: pN 0.5 and 1.0 are "small"
    assert s.loc[("a", 3)].tolist() == [3, 0.5, 1.5, 1.0, 1, 1]
    assert list(s.columns) == ["graphs", "median_ratio", "max_ratio", "max_t_mix_over_t_star",
                               "small_p_times_n", "exceed"]
    assert s.loc[("b", 3), "small_p_times_n"] == 1 and s.loc[("b", 3), "exceed"] == 0
    with pytest.raises(ValueError, match=r"eps=.*\(0, 1\)"):
        claims.bound_summary(t, eps=0)
    with pytest.raises(ValueError, match="at least one frame"):
        claims.bound_ratios()


def test_binomial_tail_at_bound_is_the_lazy_paths_distance():
    for N in (1, 3, 6):
        for p in (0.05, 0.3, 0.9):
            t = int(np.floor(2 * N / p))
            tv = en.tv_curves(en.lazy_path_walk(N + 1, p), t)[t, 0]
            assert claims.binomial_tail_at_bound(N, p) == pytest.approx(tv, abs=1e-12)
    # N = 1: (1 - p)^floor(2/p) rises towards e^-2 as p -> 0 and stays below it
    p = np.array([0.5, 0.1, 0.01, 0.001])
    tail = claims.binomial_tail_at_bound(1, p)
    np.testing.assert_allclose(tail, (1 - p) ** np.floor(2 / p))
    assert np.all(np.diff(tail) > 0) and tail.max() < math.exp(-2)
    with pytest.raises(ValueError, match="N must be"):
        claims.binomial_tail_at_bound(0, 0.5)
    with pytest.raises(ValueError, match="p must lie"):
        claims.binomial_tail_at_bound(2, 1.5)


def test_worst_case_bound_ratio_and_lazy_path_eps_table():
    for N, p in [(1, 0.01), (4, 0.5), (10, 0.2)]:
        T = mk.mixing_time(en.lazy_path_walk(N + 1, p))
        assert claims.worst_case_bound_ratio(N, p) == pytest.approx(T / (2 * N / p))
    assert claims.worst_case_bound_ratio(1, np.geomspace(1e-3, 1, 50)).max() < 1
    assert claims.worst_case_bound_ratio(1, 0.001, eps=0.05) > 1  # eps < e^-2 breaks the 2
    table = claims.lazy_path_eps_table([0.25, 0.2, 0.1, 0.05], n=2, p=0.001)
    assert list(table.columns) == ["eps", "t_mix", "bound_2n_over_p", "bound_holds"]
    # two nodes: TV at t is (1 - p)^t, so T = ceil(ln eps / ln(1 - p))
    expect = [math.ceil(math.log(e) / math.log(1 - 0.001)) for e in [0.25, 0.2, 0.1, 0.05]]
    assert table.t_mix.tolist() == expect
    assert table.bound_holds.tolist() == [True, True, False, False]
    assert table.bound_2n_over_p.tolist() == pytest.approx([2000] * 4)


def test_eq20_checks():
    import pandas as pd

    pairs = pd.DataFrame({"kind": ["u pair", "u pair"], "p": [0.5, 0.4], "t_mix": [5, 12],
                          "bound_2n_over_p": [8.0, 10.0], "p_chain": [0.5, 0.3],
                          "bound_2n_over_max_p_h": [6.0, 7.0],
                          "bound_2n_over_min_p_h": [9.0, 11.0]})
    c = claims.eq20_checks(pairs)
    assert list(c.columns) == ["eq20_left_holds", "eq3_holds", "eq20_right_holds",
                               "p_chain_at_least_eq12", "kind"]
    assert c.eq20_left_holds.tolist() == [False, True]  # 2N/max p_h <= T_mix
    assert c.eq3_holds.tolist() == [True, False]  # T_mix <= 2N/p
    assert c.eq20_right_holds.tolist() == [True, False]  # T_mix <= 2N/min p_h
    assert c.p_chain_at_least_eq12.tolist() == [True, False]
    assert c.kind.tolist() == ["u pair", "u pair"]
    with pytest.raises(ValueError, match=r"missing the columns \['p_chain'\]"):
        claims.eq20_checks(pairs.drop(columns="p_chain"))


def test_head_sets():
    A = claims.head_sets("exhaustive", 4, 2)
    assert A.shape == (210, 2, 4, 4)  # C(21, 2)
    full = en.enumerate_feedforward_adjacency(4)
    np.testing.assert_array_equal(A[0], full[[0, 1]])
    np.testing.assert_array_equal(A[-1], full[[19, 20]])
    R = claims.head_sets("random", 6, 3, num=7, densities=[0.2, 0.5], seed=5)
    np.testing.assert_array_equal(R, en.random_head_stacks(7, 3, 6, [0.2, 0.5], 5)[0])
    with pytest.raises(ValueError, match="search must be"):
        claims.head_sets("greedy", 4, 2)
    with pytest.raises(ValueError, match="needs num and densities"):
        claims.head_sets("random", 4, 2)


def test_head_set_helpers_per_H_and_over_head_sets():
    from bparallel.book.claims.head_sets import over_head_sets, per_H

    assert per_H(7, 3, "num") == 7 and per_H(None, 3, "num") is None
    assert per_H({2: 5, 3: 9}, 3, "num") == 9
    with pytest.raises(ValueError, match="num has no entry for H = 4"):
        per_H({2: 5}, 4, "num")
    keys = [("exhaustive", 4, 2), ("random", 5, 3)]
    out = over_head_sets(keys, {2: 1, 3: 6}, [0.3], 11, lambda A, H: (A.shape, H))
    assert list(out) == keys
    assert out[("exhaustive", 4, 2)][1] == ((210, 2, 4, 4), 2)
    A, (shape, H) = out[("random", 5, 3)]
    assert shape == (6, 3, 5, 5) and H == 3
    # the random key draws from the one generator made from the seed, after no other draw
    np.testing.assert_array_equal(A, claims.head_sets("random", 5, 3, num=6, densities=[0.3],
                                                       seed=np.random.default_rng(11)))


def test_mixing_search_and_table():
    keys = [("exhaustive", 3, 2), ("random", 5, 2), ("random", 4, 3)]
    store = claims.mixing_search(keys, grid_steps={2: 4, 3: 3}, num={2: 6, 3: 4},
                             densities=[0.3, 0.6], seed=np.random.default_rng(2))
    assert list(store) == keys
    rng = np.random.default_rng(2)  # random keys draw in order from the one stream
    for key, num, steps in [(keys[1], 6, 4), (keys[2], 4, 3)]:
        A, _ = en.random_head_stacks(num, key[2], key[1], [0.3, 0.6], rng)
        np.testing.assert_array_equal(store[key][0], A)
        ref = en.compare_mixing(g.walk_matrix_from_adjacency(A), grid_steps=steps)
        np.testing.assert_array_equal(store[key][1].grid, ref.grid)
    A3, mc3 = store[keys[0]]
    assert A3.shape == (3, 2, 3, 3) and mc3.grid.shape == (3, 5)
    table = claims.mixing_search_table(store)
    assert table[["search", "n", "num_heads"]].values.tolist() == [list(k) for k in keys]
    for row, (_, mc) in zip(table.itertuples(), store.values(), strict=True):
        assert row.head_sets == len(mc.heads)
        assert row.uniform_faster == mc.uniform_beats_fastest.sum()
        assert row.best_faster == mc.best_beats_fastest.sum()
        assert row.uniform_slower == mc.uniform_slower_than_slowest.sum()
        assert row.max_speedup_steps == (mc.fastest - mc.best).max()
    assert table.uniform_faster_pct.tolist() == pytest.approx(
        (100 * table.uniform_faster / table.head_sets).round(2).tolist())
    with pytest.raises(ValueError, match="grid_steps has no entry for H = 3"):
        claims.mixing_search([("exhaustive", 4, 3)], grid_steps={2: 4})


def test_fewest_edges_index_and_exact_counterexample():
    a = g.adjacency_matrix([(0, 1), (1, 2), (0, 2)], 3)
    b = g.adjacency_matrix([(0, 2), (1, 2)], 3)
    sets = np.stack([np.stack([a, a]), np.stack([a, b]), np.stack([b, b]), np.stack([b, b])])
    assert claims.fewest_edges_index(sets, [True, True, True, True]) == 2  # ties: lowest index
    assert claims.fewest_edges_index(sets, [True, True, False, True]) == 3
    assert claims.fewest_edges_index(sets, [True, False, False, False]) == 0
    with pytest.raises(ValueError, match="selects no head set"):
        claims.fewest_edges_index(sets, [False] * 4)
    # the smallest counterexample of Section 2.2, on exact rationals
    e1, e2 = [(1, 2), (0, 3), (2, 3)], [(0, 2), (1, 3), (2, 3)]
    mats, T = claims.exact_combination_mixing([e1, e2], 4, [0.5, 0.5], 0.25)
    assert T == [5, 5, 4]
    assert mats[2] == exact.combine([exact.walk(e1, 4), exact.walk(e2, 4)], [Fraction(1, 2)] * 2)
    assert claims.exact_combination_mixing([e1, e2], 4, [1.0, 0.0])[1] == [5, 5, 5]
    with pytest.raises(ValueError, match="one entry per head"):
        claims.exact_combination_mixing([e1, e2], 4, [1.0])


def test_fidelity_search_horizon_sweep_and_amplification_table():
    keys = [("exhaustive", 3, 2), ("random", 5, 2)]
    store = claims.fidelity_search(keys, 8, grid_steps=4, num=10, densities=[0.3, 0.6], seed=4)
    A, _ = en.random_head_stacks(10, 2, 5, [0.3, 0.6], 4)
    np.testing.assert_array_equal(store[keys[1]][0], A)
    fc = store[keys[1]][1]
    ref = en.compare_fidelity(g.diffusion_matrix_from_adjacency(A), 8, grid_steps=4)
    np.testing.assert_array_equal(fc.grid, ref.grid)
    table = claims.amplification_table(store, ("search", "n", "num_heads"))
    assert table.index.names == ["search", "n", "num_heads"]
    assert list(table.columns) == list(claims.SEARCH_COLUMNS)
    row = table.loc[("random", 5, 2)]
    assert row.head_sets == 10
    assert row.amplified_uniform_pct == pytest.approx(100 * np.mean(fc.amp_uniform > 1e-9))
    assert row.max_amp_best == fc.amp_best.max()
    worst = fc.node[..., :-1].argmin(-1)
    assert row.worst_nodes_differ_pct == pytest.approx(100 * np.mean(worst[:, 0] != worst[:, 1]))
    sweep = claims.horizon_sweep(g.diffusion_matrix_from_adjacency(A), [2, 8], grid_steps=4)
    assert list(sweep) == [2, 8]
    np.testing.assert_array_equal(sweep[8].grid, fc.grid)
    hz = claims.amplification_table(sweep, ("horizon",), claims.HORIZON_COLUMNS)
    assert hz.index.name == "horizon" and hz.index.tolist() == [2, 8]
    assert hz.loc[2, "mean_best_head_phi_min"] == pytest.approx(sweep[2].best_head.mean())
    with pytest.raises(ValueError, match="unknown columns"):
        claims.amplification_table(sweep, ("horizon",), ("median_amp",))
    with pytest.raises(ValueError, match="does not match names"):
        claims.amplification_table(store, ("search", "n"))


def test_amplification_features_correlations_and_top_pairs():
    import pandas as pd

    store = claims.fidelity_search([("exhaustive", 4, 2)], 10, grid_steps=4)
    A, fc = store[("exhaustive", 4, 2)]
    feat = claims.amplification_features(A, fc, 10)
    assert list(feat.columns) == ["amplification", "amplified", *claims.FEATURES, "t_star"]
    np.testing.assert_array_equal(feat.jaccard, en.edge_jaccard(A[:, 0], A[:, 1]))
    D = g.diffusion_matrix_from_adjacency(A)
    np.testing.assert_array_equal(feat.new_walk_share, ch.new_walk_share(D, [0.5, 0.5], 10)[0])
    assert feat.amplified.tolist() == (fc.amp_uniform > 1e-9).tolist()
    rho = claims.feature_correlations(feat)
    assert list(rho) == list(claims.FEATURES) and all(-1 <= r <= 1 for r in rho.values())
    rho_amp = claims.feature_correlations(feat, ("amplification",))["amplification"]
    assert rho_amp == pytest.approx(1)
    with pytest.raises(ValueError, match="missing the columns"):
        claims.feature_correlations(feat, ("overlap",))
    with pytest.raises(ValueError, match=r"\(sets, 2, n, n\)"):
        claims.amplification_features(A[:, :1], fc, 10)
    top = claims.top_amplifying(store, [("exhaustive", 4, 2)])
    k = int(np.argmax(fc.amp_uniform))
    assert top.pair[0] == k and top.amplification[0] == fc.amp_uniform.max()
    assert top.phi_min_uniform[0] == fc.uniform[k]
    # by-Jaccard shares on a hand frame
    hand = pd.DataFrame({"jaccard": [0.0, 0.05, 0.5, 0.55, 1.0],
                         "amplified": [True, False, True, True, False]})
    shares = claims.amplified_by_jaccard(hand, bins=2)
    assert shares.tolist() == [2 / 3, 0.5]


def test_tradeoff_table_correlation_and_domination():
    import pandas as pd

    trade = claims.tradeoff_table([5, 7], [0.2, 0.7], 4, 0.25, 12, seed=6)
    assert list(trade.columns) == ["n", "kind", "density", "t_mix", "phi_min"]
    assert len(trade) == 2 * (len(en.FAMILIES) + 2 * 4 + 2 * 4)
    path = trade[(trade.n == 7) & (trade.kind == "path")].iloc[0]
    assert path.t_mix == en.binomial_mixing_bound(6, 0.5)
    assert path.phi_min == pytest.approx(fi.minimax_fidelity(g.diffusion_matrix(
        g.line_graph_edges(7), 7), 12))
    # the same seed replays the same draws: densities first, then the pairs
    rng = np.random.default_rng(6)
    A = g.random_feedforward_adjacency(4, 5, 0.2, rng)
    rand = trade[(trade.n == 5) & (trade.kind == "random")]
    np.testing.assert_array_equal(rand.t_mix[:4], mk.mixing_time(g.walk_matrix_from_adjacency(A)))
    hand = pd.DataFrame({"n": 3, "kind": ["path", "random", "random", "random"],
                         "t_mix": [5, 6, 4, 5], "phi_min": [0.5, 0.4, 0.3, 0.5]})
    # (6, 0.4) and the tie (5, 0.5) are dominated by the path; (4, 0.3) mixes faster
    assert claims.dominated_fraction(hand, families=("path",)) == {3: pytest.approx(2 / 3)}
    assert claims.tradeoff_correlation(hand) == {3: pytest.approx(0.5)}  # ranks (3,1,2), (2,1,3)
    with pytest.raises(ValueError, match="no graphs of kind 'pair'"):
        claims.dominated_fraction(hand, kind="pair")


def test_best_head_tables():
    p = claims.weighted_forward_probabilities((3, 4), 6, 0.3, seed=1)
    np.testing.assert_array_equal(
        p.ravel(), mk.forward_probability(en.random_weighted_walk(12, 6, 0.3, seed=1)))
    rng = np.random.default_rng(0)
    draws = []

    def draw(shape):
        draws.append(shape)
        return rng.random(shape)

    t = claims.best_head_simulation(draw, 0.7, 0.7, [1, 3], 2000, label="U")
    assert draws == [(2000, 1), (2000, 3)]
    assert list(t.columns) == ["law", "pbar", "num_heads", "simulated", "theory", "z"]
    assert t.law.tolist() == ["U", "U"] and t.num_heads.tolist() == [1, 3]
    assert t.theory.tolist() == pytest.approx([0.3, 1 - 0.7**3])
    rng2 = np.random.default_rng(0)
    sim = [(rng2.random((2000, H)).max(1) >= 0.7).mean() for H in (1, 3)]
    assert t.simulated.tolist() == sim
    theory = t.theory.tolist()
    assert t.z.tolist() == pytest.approx(
        [(s - th) / math.sqrt(th * (1 - th) / 2000) for s, th in zip(sim, theory, strict=True)])
    # an estimated F adds the delta-method variance: |z| shrinks
    t2 = claims.best_head_simulation(lambda s: np.full(s, 0.9), 0.7, 0.7, [2], 100, pool_size=50)
    t3 = claims.best_head_simulation(lambda s: np.full(s, 0.9), 0.7, 0.7, [2], 100)
    assert 0 < t2.z[0] < t3.z[0]
    with pytest.raises(ValueError, match="F must lie"):
        claims.best_head_simulation(draw, 0.7, 1.7, [1], 10)
    # an atom at pbar: Pr(p <= pbar) says "never", Pr(p < pbar) says "always"
    atom = claims.atom_best_head_table(np.full(10, 0.5), [1, 4], 0.5, "flat")
    assert len(atom) == 4 and (atom.simulated == 1).all()
    assert atom.theory.tolist() == [0.0, 1.0, 0.0, 1.0]
    assert atom.law.tolist()[:2] == ["flat, F(p̄) = Pr(p ≤ p̄)", "flat, F(p̄-) = Pr(p < p̄)"]
    with pytest.raises(ValueError, match="exceeds the 10 draws"):
        claims.atom_best_head_table(np.full(10, 0.5), [11], 0.5)


def test_every_table_is_keyed_in_snake_case_and_labelled_for_display():
    import re

    import pandas as pd

    store = claims.fidelity_search([("exhaustive", 4, 2)], 6, grid_steps=2)
    A, fc = store[("exhaustive", 4, 2)]
    mix = claims.mixing_search([("exhaustive", 3, 2)], grid_steps=2)
    heads, pairs = claims.theorem_2_8_ensemble([4], [0.5], 2, 0.25, seed=0)
    ratios = claims.bound_ratios(heads, pairs)
    frames = {
        "heads": heads, "pairs": pairs, "ratios": ratios,
        "summary": claims.bound_summary(ratios),
        "lazy": claims.lazy_path_eps_table([0.25]),
        "eq20": claims.eq20_checks(pairs),
        "mixing": claims.mixing_search_table(mix),
        "amplification": claims.amplification_table(store, ("search", "n", "num_heads")),
        "horizon": claims.amplification_table({6: fc}, ("horizon",), claims.HORIZON_COLUMNS),
        "features": claims.amplification_features(A, fc, 6),
        "top": claims.top_amplifying(store, [("exhaustive", 4, 2)]),
        "tradeoff": claims.tradeoff_table([4], [0.5], 2, seed=0),
        "best": claims.best_head_simulation(lambda s: np.full(s, 0.9), 0.7, 0.7, [1], 10),
        "atom": claims.atom_best_head_table(np.full(4, 0.5), [1], 0.5),
    }
    for name, frame in frames.items():
        for col in [*frame.columns, *(x for x in frame.index.names if x is not None)]:
            assert re.fullmatch(r"[a-z][a-z0-9_]*", col), (name, col)
            assert col in claims.LABELS, (name, col)
    shown = claims.labelled(frames["amplification"])
    assert shown.index.names == ["search", "n", "H"]
    assert shown.columns[1] == "amplified, uniform β (%)"
    np.testing.assert_array_equal(shown.to_numpy(), frames["amplification"].to_numpy())
    # identifiers are renamed wherever they label an axis, at every level; others are kept
    wide = frames["summary"][["median_ratio", "exceed"]].unstack("n").T
    assert claims.labelled(wide).index.tolist() == [("median T_mix / (2N/p)", 4),
                                                    ("over the bound", 4)]
    odd = pd.DataFrame({"t_mix": [1], "not a key": [2]}).rename_axis("num_heads")
    assert list(claims.labelled(odd).columns) == ["T_mix", "not a key"]
    assert claims.labelled(odd).index.name == "H"


def test_exact_matrices_table():
    e1, e2 = [(1, 2), (0, 3), (2, 3)], [(0, 2), (1, 3), (2, 3)]
    mats, _ = claims.exact_combination_mixing([e1, e2], 4, [0.5, 0.5], 0.25)
    table = claims.exact_matrices_table(mats)
    assert table.columns.get_level_values(0).unique().tolist() == ["W head 1", "W head 2", "W-bar"]
    assert table.index.tolist() == ["0", "1", "2", "τ"] and table.index.name == "to"
    # head 1: node 1 sends to node 2 only, so column "from 1" of W holds 1/2 at rows 1 and 2
    assert table["W head 1"]["from 1"].tolist() == ["0", "1/2", "1/2", "0"]
    assert table["W-bar"]["from 1"].tolist() == [str(x) for x in (
        Fraction(0), Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))]
    for name in ("W head 1", "W head 2", "W-bar"):  # a walker leaves every node somewhere:
        for col in table[name]:                      # each "from" column sums to 1
            assert sum(Fraction(x) for x in table[name][col]) == 1, (name, col)
    assert (table["W head 1"].loc["0"] == ["1/2", "0", "0", "0"]).all()  # only 0 moves to 0
    with pytest.raises(ValueError, match="one entry per matrix"):
        claims.exact_matrices_table(mats, names=("a", "b"))
    with pytest.raises(ValueError, match="labels must have 4"):
        claims.exact_matrices_table(mats, labels=["a"])
