"""The claims chapters' tables and recorded values (chapter 03: claims.mixing_report, chapter
06: claims.fidelity_report): the checks the chapters made with asserts,
on the chapters' own exhaustive searches (no draws: the same head sets as the chapter) and on
small seeded ensembles, and the recorded keys by hand."""

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest

from bparallel import cross_head as ch
from bparallel import ensembles as en
from bparallel import graphs, markov
from bparallel.book import claims
from bparallel.book.claims import fidelity_report as fr
from bparallel.book.claims import mixing_report as mr
from bparallel.book.claims.ensemble_design import EnsembleDesign, SectionStreams
from bparallel.book.render.markdown import frame_rows, frame_table, glue_frame, pipe_table
from bparallel.book.verdicts import Verdict

EPS = 0.25
DENSITIES = (0.1, 0.2, 0.35, 0.5, 0.7)  # the chapters' search densities
E2 = math.exp(-2)


# ---------------------------------------------------------------------------- frames
def test_frame_rows_are_the_table_frame_table_makes():
    frame = pd.DataFrame({"kind": ["a", "b"], "n": [3, 4], "x": [0.5, 0.25]}).set_index(
        ["kind", "n"])
    rows, align = frame_rows(frame, decimals=2)
    full = frame_table(frame, caption="A caption.", name="a-table", decimals=2)
    body = pipe_table(rows, align=align)
    assert full == f":::{{table}} A caption.\n:name: a-table\n\n{body}:::\n"
    assert body.splitlines()[0] == "| kind | n | x |" and "| a | 3 | 0.50 |" in body
    assert align == {"kind": "left", "n": "left", "x": "right"}
    with pytest.raises(ValueError, match="name"):
        glue_frame("bad name", frame)


# ------------------------------------------------------------- chapter 03: Theorem 2.8
@pytest.fixture(scope="module")
def bound():
    heads, pairs = claims.theorem_2_8_ensemble((5, 100), (0.2, 0.5), 4, EPS, 7)
    return heads, pairs, claims.bound_ratios(heads, pairs)


def test_theorem_2_8_holds_on_every_graph_by_the_exact_coupling(bound):
    heads, _, allm = bound
    assert (allm.t_mix <= allm.t_star).all()              # the coupling argument, exactly
    assert (allm.t_star <= allm.bound_2n_over_p).all()    # so the bound holds on every graph
    path = allm[allm.kind == "path"]
    assert len(path) == 2 and (path.t_mix == path.t_star).all()  # the lazy path is the worst
    assert (heads[heads.kind == "unweighted"].p == 0.5).all()  # p_h = 1/2 for Eq. 1's walks
    W = graphs.walk_matrix_from_adjacency(graphs.random_feedforward_adjacency(50, 9, 0.4, 1))
    assert np.all(markov.forward_probability(W) == 0.5)


def test_theorem_2_8_results_and_table(bound):
    _, _, allm = bound
    out = mr.theorem_2_8_results(allm, EPS)
    kinds = [k.replace(" ", "_") for k in mr.BOUND_KINDS]
    assert list(out) == [
        "thm28.graphs", "thm28.exceed", "thm28.max_ratio", "thm28.max_T_over_tstar",
        "thm28.min_pN", "thm28.small_pN.count", "thm28.small_pN.max_ratio",
        *[f"thm28.{k}.{s}" for k in kinds for s in ("max_ratio", "median_ratio")],
        "thm28.path.n100.ratio", "thm28.complete.n100.ratio", "thm28.complete.n100.t_mix",
        "thm28.complete.n100.bound"]
    assert out["thm28.graphs"] == len(allm) and out["thm28.exceed"] == 0
    assert out["thm28.max_ratio"] == allm.ratio.max() <= 1
    assert out["thm28.max_T_over_tstar"] <= 1
    assert out["thm28.small_pN.count"] == (allm.p_times_n <= math.log(4)).sum()
    path = graphs.walk_matrix(graphs.line_graph_edges(100), 100)
    assert out["thm28.path.n100.ratio"] == markov.mixing_time(path, EPS) / (4 * 99)  # p = 1/2
    # Eq. 5's equality 2N/max p_h = min_h T_mix on one head, the complete DAG: far apart
    complete = graphs.walk_matrix_from_adjacency(en.family_adjacency("complete", 100))
    assert out["thm28.complete.n100.t_mix"] == markov.mixing_time(complete, EPS) < 20
    assert out["thm28.complete.n100.bound"] == 4 * 99
    table = mr.bound_table(allm, EPS)
    assert table.index.names == ["kind", "n"] and list(table.columns) == list(mr.BOUND_FORMATS)
    assert table["graphs"].sum() == len(allm)
    with pytest.raises(ValueError, match="eps"):
        mr.theorem_2_8_results(allm, 0)
    with pytest.raises(ValueError, match="ratio"):
        mr.theorem_2_8_results(allm.drop(columns="ratio"), EPS)


def test_bound_kinds_are_the_figures():
    from bparallel.book.render.plotting import BOUND_KINDS

    assert mr.BOUND_KINDS == BOUND_KINDS


def test_the_proof_made_exact_on_the_grid():
    grid = mr.binomial_bound_grid(EPS)
    assert grid.tails.shape == grid.ratios.shape == (7, 1200)
    assert grid.tails.max() < E2 + 1e-6 and grid.ratios.max() < 1  # Theorem 2.8 at eps >= e^-2
    assert grid.results() == {"sup_tail_at_bound": grid.tails.max(),
                              "sup_worst_case_ratio": grid.ratios.max()}
    assert mr.binomial_bound_grid(0.05, N=(1,), num_p=50).ratios.max() > 1  # eps < e^-2 breaks it
    with pytest.raises(ValueError, match="eps"):
        mr.binomial_bound_grid(1.5)
    with pytest.raises(ValueError, match="num_p"):
        mr.binomial_bound_grid(EPS, num_p=0)


def test_theorem_2_8_holds_under_its_hypothesis_at_every_eps():
    """Theorem 2.8 judged where the paper assumes exp(-pN) <= eps: no worst chain breaks
    T_mix <= floor(2N/p) for eps from 0.25 to 0.001 (N <= 200); without the hypothesis it
    breaks below e^-2. The smallest effect it could find: one violation in ~180,000 cases."""
    table = claims.theorem_2_8_under_hypothesis()
    assert table.eps.tolist() == [0.25, 0.1, 0.05, 0.01, 0.001]
    assert table.violations.sum() == 0 and (table.cases > 20000).all()
    assert 0.05 < table.max_tail_over_eps.max() < 0.14   # the exact tail at most ~0.13 eps
    assert table.violations_without.iloc[0] == 0             # eps = 1/4 >= e^-2: none anyway
    assert (table.violations_without.iloc[1:] > 0).all()     # below e^-2 the hypothesis matters
    # independently: the lazy path's exact mixing time (Definition 2.7) on a few grid points
    for N, p, eps in ((1, 0.5, 0.25), (3, 0.001, 0.25), (30, 0.4, 0.01), (200, 0.04, 0.001),
                      (1, 0.001, 0.01)):
        t_mix = markov.mixing_time(en.lazy_path_walk(N + 1, p), eps)
        tail = claims.binomial_tail_at_bound(N, p)
        assert (t_mix <= math.floor(2 * N / p)) == (tail <= eps), (N, p, eps)
        if math.exp(-p * N) <= eps:
            assert t_mix <= math.floor(2 * N / p)
    assert markov.mixing_time(en.lazy_path_walk(2, 0.001), 0.01) > 2000  # pN = 0.001
    shown, values = mr.hypothesis_check(N_max=20)
    assert values["thm28.hypothesis.N_max"] == 20 and values["thm28.hypothesis.violations"] == 0
    assert values["thm28.hypothesis.cases"] == shown["(N, p) under the hypothesis"].sum()
    with pytest.raises(ValueError, match="eps_values"):
        claims.theorem_2_8_under_hypothesis([0.25, 2.0])
    with pytest.raises(ValueError, match="N_max"):
        claims.theorem_2_8_under_hypothesis(N_max=0)


def test_lazy_path_table_the_constant_2_needs_eps_at_least_e_minus_2():
    lazy = mr.lazy_path_table()
    assert list(lazy.columns) == ["ε", "T_mix", "2N/p", "bound holds"]
    assert lazy["bound holds"].tolist() == [e >= E2 for e in mr.LAZY_EPS]
    assert lazy["ε"].tolist() == list(mr.LAZY_EPS)
    rows, _ = frame_rows(lazy, formats=mr.LAZY_FORMATS)
    assert rows[0]["2N/p"] == "2000" and rows[0]["T_mix"] == 1386  # a whole bound, no ".0"


def test_eq20_the_right_side_holds_the_left_does_not(bound):
    _, pairs, _ = bound
    checks = claims.eq20_checks(pairs)
    assert checks.eq20_right_holds.all() and checks.eq3_holds.all()
    assert checks.p_chain_at_least_eq12.all()
    out = mr.eq20_results(checks)
    assert list(out) == ["eq20.left.frac_holds.unweighted", "eq20.left.frac_holds.weighted",
                         "eq20.right.frac_holds"]
    assert out["eq20.left.frac_holds.unweighted"] < 1 and out["eq20.left.frac_holds.weighted"] < 1
    assert out["eq20.right.frac_holds"] == 1
    table = mr.eq20_table(checks)
    assert list(table.columns) == ["unweighted pair", "weighted pair"]
    assert table.loc["2N/max p_h ≤ T_mix (Eq. 20, left)", "weighted pair"] == (
        out["eq20.left.frac_holds.weighted"])
    with pytest.raises(ValueError, match="kind"):
        mr.eq20_results(checks.drop(columns="kind"))


# ------------------------------------------------- chapter 03: Section 2.2 and Eq. 5
MIXING_KEYS = [("exhaustive", 3, 2), ("exhaustive", 3, 3), ("exhaustive", 4, 2),
               ("exhaustive", 4, 3), ("exhaustive", 5, 2), ("random", 6, 2)]


@pytest.fixture(scope="module")
def mixing():
    # the exhaustive searches are the chapter's (no draws; the quick grid of 10 steps)
    store = claims.mixing_search(MIXING_KEYS, EPS, grid_steps={2: 10, 3: 10}, num=300,
                                 densities=DENSITIES, seed=1)
    return store, claims.mixing_search_table(store)


def test_eq5_and_the_counts_the_chapter_states(mixing):
    store, _ = mixing
    for _, mc in store.values():
        assert np.all(mc.best <= mc.fastest)  # Eq. 5: the grid holds every head
    m3, m4, m5 = (store[("exhaustive", n, 2)][1] for n in (3, 4, 5))
    t4, r6 = store[("exhaustive", 4, 3)][1], store[("random", 6, 2)][1]
    assert m3.uniform_beats_fastest.sum() == 0  # "for n = 3 no pair mixes faster combined"
    assert (m4.uniform_beats_fastest.sum(), m4.best_beats_fastest.sum()) == (9, 13)
    assert m4.uniform_slower_than_slowest.sum() == 1  # "the only n = 4 pair"
    assert m5.uniform_slower_than_slowest.sum() == 259 > 0  # the other direction fails too
    assert (m5.uniform_beats_fastest.sum(), len(m5.heads)) == (3019, 49455)
    assert t4.uniform_beats_fastest.sum() > 0 and r6.uniform_beats_fastest.sum() > 0


def test_the_mixing_orders_fail_at_every_eps_shown():
    """Section 2.2's orderings at eps 0.25, 0.1, 0.01: on 4 nodes every pair is checked
    on exact rationals (bparallel.exact, no floating point); on 5 nodes the counts at 0.25
    are the chapter's headline (3,019 faster, 259 slower of 49,455 pairs). The smallest
    effect it could find: one pair miscounted."""
    four = claims.mixing_order_by_eps(4)
    assert four.eps.tolist() == [0.25, 0.1, 0.01] and (four.sets == 210).all()
    A = claims.head_sets("exhaustive", 4, 2)
    want = []
    for eps in (0.25, 0.1, 0.01):
        faster = slower = 0
        for pair in A:
            edges = [graphs.edges_from_adjacency(a) for a in pair]
            _, (t1, t2, tbar) = claims.exact_combination_mixing(edges, 4, [0.5, 0.5], eps)
            faster += tbar < min(t1, t2)
            slower += tbar > max(t1, t2)
        want.append((faster, slower))
    assert list(zip(four.uniform_faster, four.uniform_slower, strict=True)) == want
    assert want[0] == (9, 1)
    table, out = mr.order_by_eps(5)
    assert table.index.tolist() == [0.25, 0.1, 0.01]
    assert (out["mixing.by_eps.e0.uniform_faster"], out["mixing.by_eps.e0.uniform_slower"]) == (
        3019, 259)
    assert all(out[f"mixing.by_eps.e{i}.uniform_faster"] > 0
               and out[f"mixing.by_eps.e{i}.uniform_slower"] > 0 for i in range(3))
    with pytest.raises(ValueError, match="eps_values"):
        claims.mixing_order_by_eps(4, [0.0])


def test_mixing_search_results(mixing):
    store, table = mixing
    out = mr.mixing_search_results(store, table)
    per_key = [f"mixing.{s}.n{n}.H{H}.{c}" for s, n, H in MIXING_KEYS
               for c in ("sets", "uniform_faster", "best_faster", "uniform_slower")]
    n5 = "mixing.exhaustive.n5.H2"
    assert list(out) == [*per_key, f"{n5}.uniform_faster_frac", f"{n5}.best_faster_frac",
                         f"{n5}.uniform_slower_frac", "mixing.random.H2.sets",
                         "mixing.random.H2.uniform_faster", f"{n5}.max_gain_best",
                         f"{n5}.max_gain_uniform", f"{n5}.max_loss_uniform"]
    assert out[f"{n5}.uniform_faster_frac"] == 3019 / 49455
    assert out[f"{n5}.uniform_slower_frac"] == 259 / 49455
    assert out["mixing.random.H2.sets"] == 300
    assert out["mixing.random.H2.uniform_faster"] == out["mixing.random.n6.H2.uniform_faster"]
    assert out[f"{n5}.max_gain_best"] >= out[f"{n5}.max_gain_uniform"] > 0
    assert out[f"{n5}.max_loss_uniform"] > 0
    shown = mr.search_table(table)
    assert shown.index.names == ["search", "n", "H"] and len(shown) == len(MIXING_KEYS)
    # one precision per column: every share at two decimals (9 of 210 is "4.29", 0 "0.00")
    rows, _ = frame_rows(shown, formats=mr.SEARCH_FORMATS)
    for col in mr.SEARCH_FORMATS:
        assert all(re.fullmatch(r"\d+\.\d\d", r[col]) for r in rows), col
    n4 = next(r for r in rows if (r["search"], r["n"], r["H"]) == ("exhaustive", 4, 2))
    assert n4["uniform < fastest (%)"] == "4.29" and rows[0]["uniform > slowest (%)"] == "0.00"
    with pytest.raises(ValueError, match="no head sets"):
        mr.mixing_search_results({k: v for k, v in store.items() if k[1] != 5}, table)


def test_the_smallest_speed_up_exactly_and_by_the_search(mixing):
    store, _ = mixing
    _, mc = store[("exhaustive", 4, 2)]
    ce = mr.pair_example(store, "faster", EPS)
    assert ce.edges == [[(1, 2), (0, 3), (2, 3)], [(0, 2), (1, 3), (2, 3)]]  # the prose's
    assert ce.t_mix[2] < min(ce.t_mix[:2])
    # two routes: exact rationals (the chapter) and the floating-point search agree exactly
    assert ce.t_mix == [*mc.heads[ce.index].tolist(), int(mc.uniform[ce.index])]
    assert ce.results() == {"T_head1": ce.t_mix[0], "T_head2": ce.t_mix[1],
                            "T_uniform": ce.t_mix[2], "T_best": int(mc.best[ce.index])}
    table = mr.matrices_table(ce)
    assert table.shape == (4, 12) and table.index.tolist() == ["0", "1", "2", "τ"]
    assert table[("W-bar", "from 0")].tolist() == ["1/2", "0", "1/4", "1/4"]


def test_the_only_slow_down_on_4_nodes(mixing):
    store, _ = mixing
    _, mc = store[("exhaustive", 4, 2)]
    slow = mr.pair_example(store, "slower", EPS)
    assert slow.edges == [[(0, 2), (1, 2), (2, 3)], [(0, 1), (1, 3), (2, 3)]]  # the prose's
    assert slow.t_mix[2] > max(slow.t_mix[:2])
    assert slow.t_mix == [*mc.heads[slow.index].tolist(), int(mc.uniform[slow.index])]
    assert list(slow.results()) == ["T_head1", "T_head2", "T_uniform"]
    with pytest.raises(ValueError, match="which"):
        mr.pair_example(store, "equal", EPS)
    with pytest.raises(ValueError, match="no head sets"):
        mr.pair_example(store, "faster", EPS, n=6)


# ------------------------------------------------------------- chapter 03: Eqs. 16-19
@pytest.fixture(scope="module")
def best():
    return mr.best_head_study(2000, np.random.default_rng(5))


def test_eq18_simulation_agrees_and_atoms_need_the_left_limit(best):
    zs = best.table.z.dropna()
    assert len(zs) == 3 * len(mr.HS) and (zs.abs() < 4.5).all()  # simulation agrees with Eq. 18
    atom = best.table[best.table.law.str.startswith(mr.ATOM_LABEL)]
    assert (atom.simulated == 1).all()  # every head reaches p̄ = 0.5 ...
    le, lt = atom[atom.law.str.contains("≤")], atom[atom.law.str.contains("<")]
    assert (lt.theory == 1).all()  # ... which only F(p̄-) = Pr(p < p̄) = 0 predicts
    F = float(np.mean(best.atom_draws <= 0.5))
    assert 0.45 < F < 0.55  # inside the paper's hypothesis F(p̄) < 1
    assert le.theory.tolist() == pytest.approx([1 - F ** H for H in mr.HS])  # Eq. 18 with the CDF
    assert le.theory.iloc[0] < 0.6
    assert best.laws == ["Uniform(0, 1)", "Beta(2, 5)", "weighted DAGs (empirical)"]


def test_best_head_results_and_table(best):
    out = best.results()
    laws = ("uniform(0,", "beta(2,", "weighted")
    assert list(out) == [*[f"eq18.{law}.H{H}.{q}" for law in laws for H in mr.HS
                           for q in ("theory", "simulated")],
                         "eq18.max_abs_z", "eq18.weighted_dags.pbar",
                         "eq18.atom.p_low", "eq18.atom.p_high", "eq18.atom.pbar", "eq18.atom.F",
                         *[f"eq18.atom.H{H}.{q}" for H in mr.HS
                           for q in ("simulated", "theory", "theory_left_limit")]]
    assert out["eq18.atom.H1.theory"] == pytest.approx(1 - out["eq18.atom.F"])
    assert out["eq18.atom.H16.simulated"] == out["eq18.atom.H1.theory_left_limit"] == 1
    assert out["eq18.uniform(0,.H1.theory"] == pytest.approx(0.3)
    assert out["eq18.max_abs_z"] == best.table.z.abs().max() < 4.5
    assert 0 < out["eq18.weighted_dags.pbar"] == best.pbar_dag < 1
    shown = best.shown()
    assert list(shown.columns) == list(mr.HS) and len(shown) == 3 * 3 + 2 * 2  # no z for atoms
    again = mr.best_head_study(2000, np.random.default_rng(5))
    pd.testing.assert_frame_equal(again.table, best.table)  # one seed fixes every draw
    with pytest.raises(ValueError, match="num_trials"):
        mr.best_head_study(0, np.random.default_rng(5))


# ---------------------------------------------------- chapter 06: amplification
FIDELITY_KEYS = [("exhaustive", 4, 2), ("exhaustive", 5, 2), ("random", 6, 2),
                 ("random", 8, 2), ("random", 10, 2), ("random", 20, 2)]


@pytest.fixture(scope="module")
def fidelity():
    # the exhaustive searches are the chapter's (horizon 20, the quick grid of 10 steps)
    return claims.fidelity_search(FIDELITY_KEYS, 20, grid_steps=10, num=200,
                                  densities=DENSITIES, seed=3)


def test_amplification_as_the_chapter_states(fidelity):
    for _, fc in fidelity.values():
        assert np.all(fc.amp_best >= -1e-12)  # the grid holds the best head
    f5, f20 = fidelity[("exhaustive", 5, 2)][1], fidelity[("random", 20, 2)][1]
    assert f5.amp_uniform.mean() < 0 < f5.amp_uniform.max()  # the typical 5-node pair loses
    assert (f20.amp_uniform > claims.AMP_TOL).mean() > 0.5   # on 20 nodes most pairs amplify


def test_search_results_and_histogram_sets(fidelity):
    out = fr.search_results(fidelity)
    stats = ("frac_amplified_uniform", "frac_amplified_best", "max_amp_uniform",
             "max_amp_best", "mean_amp_uniform", "min_amp_uniform")
    assert list(out) == [f"fidelity.{s}.n{n}.H{H}.{q}" for s, n, H in FIDELITY_KEYS
                         for q in stats]
    f5 = fidelity[("exhaustive", 5, 2)][1]
    assert out["fidelity.exhaustive.n5.H2.mean_amp_uniform"] == f5.amp_uniform.mean()
    sets = fr.histogram_sets(fidelity)
    assert list(sets) == ["exhaustive, n = 5", "random, n = 10", "random, n = 20"]
    assert sets["exhaustive, n = 5"] is f5
    with pytest.raises(ValueError, match="no head sets"):
        fr.histogram_sets(fidelity, (("random", 7),))


def test_column_formats():
    shown = claims.labelled(pd.DataFrame({"amplified_uniform_pct": [1.0], "max_amp_best": [0.1]}))
    assert fr.column_formats(shown) == {"amplified, uniform β (%)": ".1f"}
    table = pd.DataFrame([[3, 0.5]], columns=pd.MultiIndex.from_tuples(
        [("T_mix", 8), ("φ_min", 8)]))
    assert fr.column_formats(table) == {"T_mix · 8": ".0f"}


def test_horizon_study_draws_one_stack_and_compares_it_at_each_horizon():
    design = dataclasses.replace(EnsembleDesign.for_profile("quick"), num_pairs=40,
                                 horizons=(5, 20), grid_steps=4)
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    hz = fr.horizon_study(design, a)
    claims.head_sets("random", 8, 2, num=40, densities=DENSITIES, seed=b)
    assert a.bit_generator.state == b.bit_generator.state  # as EnsembleDesign.draw replays
    assert list(hz.comparisons) == [5, 20] and hz.table.index.tolist() == [5, 20]
    assert list(hz.table.columns) == list(claims.HORIZON_COLUMNS)
    out = hz.results()
    assert list(out) == [f"fidelity.horizon.T{T}.{q}" for T in (5, 20)
                         for q in ("frac_amplified_uniform", "max_amp_best")]
    assert out["fidelity.horizon.T5.frac_amplified_uniform"] * 100 == pytest.approx(
        hz.table.loc[5, "amplified_uniform_pct"])


@pytest.fixture(scope="module")
def features(fidelity):
    return fr.feature_study(*fidelity[("exhaustive", 5, 2)], 20)


def test_which_pairs_amplify_as_the_chapter_states(features):
    rho = features.rho
    assert max(rho, key=rho.get) == "complementarity" and rho["mixed_sequence_share"] < 0
    peak = features.by_jaccard.idxmax()
    assert 0 < features.by_jaccard.index.get_loc(peak) < len(features.by_jaccard) - 1


def test_feature_results_and_table(features):
    out = features.results()
    f = "fidelity.features"
    assert list(out) == [
        *[f"{f}.spearman.{k}" for k in ("jaccard", "complementarity", "mixed-sequence_share",
                                         "new-walk_share", "new-walk_share_limiting")],
        f"{f}.jaccard_peak.left", f"{f}.jaccard_peak.right", f"{f}.jaccard_peak.frac_amplified",
        f"{f}.new_walk_share_zero_among_amplified", f"{f}.new_walk_share_mean_among_amplified",
        f"{f}.amp_above_complementarity", f"{f}.complementary.frac_amplified",
        f"{f}.complementary.count", f"{f}.amplified.frac_zero_complementarity",
        f"{f}.amplified.frac_above_complementarity", f"{f}.mixed_sequence_share_mean"]
    # complementarity neither sufficient nor necessary, counted by hand
    feat = features.features
    comp = feat.complementarity > claims.AMP_TOL
    assert out[f"{f}.complementary.count"] == comp.sum()
    assert 0.2 < out[f"{f}.complementary.frac_amplified"] == feat.amplified[comp].mean() < 0.8
    amp = feat[feat.amplified]
    assert 0 < out[f"{f}.amplified.frac_zero_complementarity"] == (
        amp.complementarity <= claims.AMP_TOL).mean() < 0.5
    # a share of the amplifying pairs, above the same count's share of all pairs
    above = (amp.amplification > amp.complementarity + 1e-9).sum()
    assert out[f"{f}.amplified.frac_above_complementarity"] == above / len(amp)
    assert out[f"{f}.amp_above_complementarity"] == above / len(feat)
    assert out[f"{f}.jaccard_peak.left"] < out[f"{f}.jaccard_peak.right"]
    assert 0.5 < out[f"{f}.new_walk_share_zero_among_amplified"] <= 1  # new walks: rarely
    table = features.table()
    assert table.index.tolist() == [False, True, "Spearman ρ with amplification"]
    assert table.loc["Spearman ρ with amplification", "complementarity"] == (
        out[f"{f}.spearman.complementarity"])


def test_remark_3_7_by_size_and_its_verdicts(fidelity):
    """Remark 3.7 at the nodes that limit the best head, n = 5 (all pairs), 10, 20 (random
    pairs of the fixture): counts by hand, intervals around their estimates, and the
    verdicts the numbers decide. The smallest difference of means it could resolve is about
    twice the intervals' half-width (~0.01 at n = 5, ~0.03 at n = 10 and 20)."""
    study = fr.remark_3_7_study(fidelity, 20)
    t = study.table
    assert t.index.tolist() == [5, 10, 20] and list(t.columns) == list(claims.REMARK_3_7_COLUMNS)
    A, fc = fidelity[("random", 10, 2)]
    limiting = ch.new_walk_share_at_limiting(graphs.diffusion_matrix_from_adjacency(A),
                                             [0.5, 0.5], 20)
    amp = fc.amp_uniform > claims.AMP_TOL
    row = t.loc[10]
    assert row.pairs == len(A) and row.amplified == amp.sum()
    assert row.zero_limiting_amplified == (limiting[amp] < 1e-9).mean()
    assert row.mean_limiting_amplified == pytest.approx(limiting[amp].mean())
    for q in ("zero_limiting_amplified", "mean_limiting_amplified", "mean_limiting_not_amplified"):
        assert (t[f"{q}_low"] <= t[q]).all() and (t[q] <= t[f"{q}_high"]).all()
    # the worst node is blind where the limiting nodes are not (Example 3.8's point)
    assert t.loc[5, "zero_worst_amplified"] > t.loc[5, "zero_limiting_amplified"]
    assert study.verdicts() == {"paper": Verdict.HOLDS, "every_pair": Verdict.FAILS}
    out = study.results()
    assert out["fidelity.remark37.n10.amplified"] == amp.sum()
    assert [out[f"fidelity.remark37.size{i}"] for i in range(3)] == [5, 10, 20]
    assert out["verdict.remark_3_7.paper"] == list(Verdict).index(Verdict.HOLDS)
    assert out["verdict.remark_3_7.every_pair"] == list(Verdict).index(Verdict.FAILS)
    # the decision rule on its other branches
    none_apart = t.assign(mean_limiting_amplified_low=t.mean_limiting_not_amplified_high - 1)
    assert fr.Remark37Study(none_apart).verdicts()["paper"] is Verdict.NOT_SUPPORTED
    all_cross = t.assign(zero_limiting_amplified_low=0.0)
    assert fr.Remark37Study(all_cross).verdicts()["every_pair"] is Verdict.HOLDS
    with pytest.raises(ValueError, match="level"):
        claims.remark_3_7_by_size(fidelity, [("random", 10, 2)], 20, level=1.5)


def test_remark_3_7_on_the_examples_as_chapter_06_records_them():
    out = fr.remark_3_7_examples(20)
    assert out["fidelity.remark37.example_3_8.limiting"] == 0.5
    assert out["fidelity.remark37.example_3_8.worst"] == 0.0
    assert out["fidelity.remark37.example_3_8.u"] == 1.0
    assert out["fidelity.remark37.example_3_13.limiting"] == (
        out["fidelity.remark37.example_3_13.worst"]) == pytest.approx(0.92811394, abs=1e-8)
    assert out["fidelity.remark37.example_3_13_code.limiting"] == 0.0


def test_top_pairs(fidelity):
    top = claims.top_amplifying(fidelity, list(fr.TOP_KEYS))
    out = fr.top_results(top)
    assert list(out) == [f"fidelity.top.n{n}.amp_uniform" for n in (4, 5, 6, 8)]
    assert out["fidelity.top.n5.amp_uniform"] == fidelity[("exhaustive", 5, 2)][1].amp_uniform.max()
    assert "pair" not in fr.top_table(top).columns
    for i, (_, n, _) in enumerate(fr.TOP_KEYS):
        A, phi = fr.top_pair(fidelity, top, i)
        assert A.shape == (2, n, n)
        assert phi.tolist() == [top.phi_min_head_1.iloc[i], top.phi_min_head_2.iloc[i]]
    with pytest.raises(ValueError, match="i=4"):
        fr.top_pair(fidelity, top, 4)


# --------------------------------------------------------- chapter 06: the trade-off
@pytest.fixture(scope="module")
def trade():
    design = EnsembleDesign.for_profile("quick")  # the chapter's ensemble, from its stream
    return claims.tradeoff_table(design.tradeoff_sizes, design.tradeoff_densities,
                                 design.tradeoff_num, EPS, design.tradeoff_horizon,
                                 SectionStreams(design, 0)["tradeoff"])


def test_the_trade_off_is_a_frontier_not_a_correlation(trade):
    at_32 = trade[trade.n == 32].set_index("kind")
    fast = at_32.loc[["star", "path+star", "complete"]]
    assert at_32.t_mix["path"] > at_32.t_mix["skip-2"] > fast.t_mix.max()  # the frontier:
    assert at_32.phi_min["path"] > at_32.phi_min["skip-2"] > fast.phi_min.max()  # slower, sharper
    rho = claims.tradeoff_correlation(trade)
    assert max(rho.values()) < 0 and min(rho, key=rho.get) == 32  # negative, most at n = 32


def test_tradeoff_results_and_family_table(trade):
    from bparallel.ensembles import FAMILIES

    out = fr.tradeoff_results(trade)
    assert list(out)[:4] == ["tradeoff.n8.spearman_random",
                             "tradeoff.n8.frac_random_dominated_by_families",
                             f"tradeoff.n8.{FAMILIES[0]}.T_mix",
                             f"tradeoff.n8.{FAMILIES[0]}.phi_min"]
    assert len(out) == 3 * (2 + 2 * len(FAMILIES))
    assert out["tradeoff.n32.spearman_random"] == claims.tradeoff_correlation(trade)[32]
    assert 0 < out["tradeoff.n32.frac_random_dominated_by_families"] <= 1
    fam = fr.family_table(trade)
    assert sorted(fam.index) == sorted(FAMILIES)
    assert fam.loc["path", ("T_mix", 32)] == out["tradeoff.n32.path.T_mix"]
    assert fr.column_formats(fam) == {f"T_mix · {n}": ".0f" for n in (8, 16, 32)}


def test_store_entry_reads_a_key_or_says_which_keys_there_are():
    from bparallel.book.claims.head_sets import store_entry

    store = {("exhaustive", 4, 2): ("sets", "comparison")}
    assert store_entry(store, ("exhaustive", 4, 2)) == ("sets", "comparison")
    with pytest.raises(ValueError, match=r"no head sets \('random', 6, 2\).*exhaustive"):
        store_entry(store, ("random", 6, 2))


def test_column_label_joins_levels_as_tables_show_them():
    from bparallel.book.render.markdown import column_label

    assert column_label(("T_mix", 5)) == "T_mix · 5" and column_label("n") == "n"
    frame = pd.DataFrame({("T_mix", 4): [3.0], (4, "share (%)"): [12.0], ("φ_min", 4): [0.5]})
    assert fr.column_formats(frame) == {"T_mix · 4": ".0f", "4 · share (%)": ".1f"}
