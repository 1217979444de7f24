"""bparallel.book.section4.as_defined, .as_defined_report and .statistics: summaries of
Section 4 measured as defined, on hand-made data."""

import dataclasses
import math

import numpy as np
import pytest

from bparallel.book.render.markdown import pipe_table
from bparallel.book.section4.as_defined import definition_rows, heads_verdicts, layer_fidelity


def _metrics(wc, exact, roll, fid, proxy=1.0):
    L, N = np.shape(wc)
    return {"worst_case.definition": np.asarray(wc, float),
            "mixing_time.definition": np.full((L, N), proxy),
            "mixing_time.paper": np.full((L, N), 2 * proxy),
            "hitting.exact": np.asarray(exact, float), "rollout.weighted": np.asarray(roll, float),
            "fidelity.node": np.asarray(fid, float)}


def test_definition_rows_by_hand():
    # one layer, two sequences, T = 4 (position 3 is the sink)
    exact = [[[150, 5, 2, 0], [3, 200, 1, 0]]]
    roll = [[[0.1, 0.2, 0.3, 0.4], [0.3, 0.2, 0.1, 0.4]]]
    fid = [[[1.0, 2.0, 3.0, 50], [1.0, 2.0, 3.0, 50]]]  # rank order: seq 1 agrees, seq 2 reversed
    m = {("copy", 1): _metrics([[7, math.inf]], exact, roll, fid)}
    (row,) = definition_rows(m, max_steps=100)
    assert row["t_mix_median"] == math.inf and row["t_mix_p90"] == math.inf  # median of {7, inf}
    assert row["never_mixes"] == 0.5
    assert row["proxy_definition"] == 1.0 and row["proxy_paper"] == 2.0
    assert row["starts_beyond_cutoff"] == pytest.approx(2 / 6)  # 150 and 200 of 6 non-sink starts
    assert row["worst_start"] in (0, 1)  # one sequence each: the lower index wins the tie
    assert row["rollout_fidelity_rho"] == pytest.approx(0.0)  # +1 and -1
    assert row["lost_same"] == 0.5  # seq 1: both say 0; seq 2: rollout says 2, fidelity 0


def test_heads_verdicts_and_formatting():
    rows = [{"task": "copy", "layer": 1, "heads": h, "t_mix_median": v}
            for h, v in ((1, 100.0), (4, 20.0), (8, 30.0), (16, 10.0))]
    (v,) = heads_verdicts(rows)
    assert v["faster"] and not v["monotone"] and (v["lo"], v["hi"]) == (100.0, 10.0)
    assert heads_verdicts(rows[:1]) == []  # no 16-head row: no verdict


def _effects(reliable_layers, seed=0, n=40):
    """Per-sequence effects ``(2, 3, n)`` of a 2-layer, 3-head model: in a layer of
    ``reliable_layers`` the heads differ clearly (0.1, 0.5, 0.2 plus small noise), in the
    other they are equal up to noise."""
    rng = np.random.default_rng(seed)
    eff = rng.normal(0.0, 0.05, (2, 3, n))
    for layer in reliable_layers:
        eff[layer] += np.array([0.1, 0.5, 0.2])[:, None]
    return eff


def _typed(**fields):
    """An ImportanceStudy of the fields given, the others empty."""
    from bparallel.transformer.importance import ImportanceStudy

    empty = {f: {} for f in ImportanceStudy.FIELDS if f != "pair"}
    return ImportanceStudy(**{**empty, **fields})


def _study(reliable_layers, spearman_weight, knock, seed=0):
    """A hand-made importance study of a 2-layer, 3-head model."""
    margin = _effects(reliable_layers, seed)
    loss = np.random.default_rng(seed + 1).normal(0.0, 1e-9, (2, 3, 40))
    pair = np.array([[0.1, 0.3, 0.2, 0.2], [-0.1, -0.1, 0.1, 0.1], [0.0, 0.2, 0.0, 0.2]])
    return _typed(knockout=knock,
                  effect={"mean.margin": margin, "zero.loss": loss},
                  scores={"mean.margin": margin.mean(-1), "zero.loss": loss.mean(-1),
                          "fidelity.paper": np.array([[1.0, 3.0, 2.0], [1.0, 1.0, 1.0]]),
                          "fidelity.definition": np.array([[3.0, 1.0, 2.0],
                                                           [1.0, 2.0, 3.0]])},
                  spearman={"weight~mean": np.array(spearman_weight),
                            "gradient~mean": np.array([0.5, 0.5])},
                  pair={"redundancy": np.tile(pair, (1, 10)),
                        "complementarity": -np.tile(pair, (1, 10)), "layer": np.asarray(1)})


def _knock(none, all_, l1, l2):
    return {"none": {"accuracy": none, "margin": 10.0}, "all": {"accuracy": all_, "margin": 1.0},
            "L1": {"accuracy": l1, "margin": 4.0}, "L2": {"accuracy": l2, "margin": 8.0},
            "only_L1": {"accuracy": 0.5, "margin": 2.0},
            "only_L2": {"accuracy": 0.4, "margin": 1.5}}


def _studies():
    return {("copy", 3): _study([0], [0.6, np.nan], _knock(1.0, 1.0, 1.0, 1.0)),
            ("cycle", 3): _study([0, 1], [-0.4, 0.2], _knock(1.0, 0.004, 0.3, 0.9), seed=5),
            ("cycle", 1): _typed(knockout=_knock(1.0, 0.003, 0.5, 0.9))}


def test_importance_summaries_by_hand():
    from bparallel.book.section4.as_defined import (
        knockout_rows,
        layer_rows,
        pair_rows,
        pruning_area,
        ranking_rows,
        reliability_rows,
        uses_attention,
    )

    studies = _studies()
    ko = knockout_rows(studies)
    assert [(r["task"], r["heads"]) for r in ko] == [("copy", 3), ("cycle", 1), ("cycle", 3)]
    assert ko[2]["L1.accuracy"] == 0.3 and ko[2]["only_L2.margin"] == 1.5
    assert not uses_attention(ko[0]) and uses_attention(ko[2])
    rel = {r["measure"]: r for r in reliability_rows(studies)}
    assert rel["mean.margin"]["reliable_share"] == 0.75 and rel["mean.margin"]["cells"] == 4
    assert rel["mean.margin"]["max_effect"] == pytest.approx(
        max(np.abs(st.scores["mean.margin"]).max() for k, st in studies.items() if k[1] > 1))
    assert rel["zero.loss"]["reliable_share"] == 0.0  # noise: never reliable
    rank = ranking_rows(studies)
    assert len(rank) == 4  # the one-head model has no ranking
    copy2 = next(r for r in rank if r["task"] == "copy" and r["layer"] == 2)
    assert not copy2["reliable"] and copy2["weight"] is None  # below the floor: no rho
    assert copy2["p_holm"] > 0.05
    cyc = [r for r in rank if r["task"] == "cycle"]
    assert [r["weight"] for r in cyc] == [-0.4, 0.2] and all(r["reliable"] for r in cyc)
    assert all(r["p_holm"] <= 0.05 and r["reliability"] >= 0.8 for r in cyc)
    pairs = pair_rows(studies)
    red = [r for r in pairs if r["effect"] == "redundancy"]
    assert [(r["task"], r["layer"]) for r in red] == [("copy", 2), ("cycle", 2)]
    per_seq = np.tile(np.array([0.0, 0.4 / 3, 0.3 / 3, 0.5 / 3]), 10)  # mean over the 3 pairs
    assert red[0]["mean"] == pytest.approx(per_seq.mean())
    assert red[0]["share_positive"] == pytest.approx(2 / 3)  # pair means .2, 0, .1
    comp = [r for r in pairs if r["effect"] == "complementarity"]
    assert comp[0]["mean"] == pytest.approx(-per_seq.mean())
    defined = [{"task": "cycle", "heads": h, "layer": la, "t_mix_median": t}
               for h in (1, 3) for la, t in ((1, 5.0), (2, 50.0))]
    rows = layer_rows(ko[1:], defined, {("cycle", 1): np.array([10.0, 1.0]),
                                        ("cycle", 3): np.array([1.0, 10.0])})
    assert rows[0]["most_needed_layer"] == 1  # the margin drops 6 without L1, 2 without L2
    assert rows[0]["rho_fidelity"] == pytest.approx(1.0)  # L1: most needed, highest fidelity
    assert rows[1]["rho_fidelity"] == pytest.approx(-1.0)
    assert rows[0]["rho_mixing"] == pytest.approx(1.0)  # L1 mixes faster (5 < 50 steps)
    assert pruning_area([[1.0, 0.5, 0.0]]) == 0.5
    with pytest.raises(ValueError, match="no multi-head model"):
        reliability_rows({("cycle", 1): studies[("cycle", 1)]})


def test_noise_floor_is_exact_at_its_thresholds():
    """A reliability of exactly 0.8 that float arithmetic puts at 0.7999999999999999 is
    reliable; perturbing every input by 1e-12 changes no flag."""
    from bparallel.book.section4 import statistics

    effects = {("cycle", 4): _effects([0, 1])}
    base = statistics.noise_floor(effects)
    for eps in (1e-12, -1e-12):
        moved = statistics.noise_floor({k: v + eps for k, v in effects.items()})
        assert [r["reliable"] for r in moved] == [r["reliable"] for r in base]
    # the rule at its threshold: decided by ranks.reaches, not by the last bit
    assert statistics.threshold_verdict(0.7999999999999999, 0.8, 0.5) is \
        statistics.Verdict.HOLDS
    assert statistics.threshold_verdict(0.49999999999999994, 0.8, 0.5) is \
        statistics.Verdict.HOLDS_WITH_CONDITIONS


def test_head_and_layer_claims_per_task():
    from bparallel.book.section4.as_defined import layer_claims, ranking_rows
    from bparallel.book.section4.statistics import head_claims
    from bparallel.book.verdicts import Verdict

    rank = ranking_rows(_studies())
    tests = {(t["task"], t["ranking"]): t for t in head_claims(rank)}
    assert set(tests) == {(t, m) for t in ("copy", "cycle")
                          for m in ("fidelity.paper", "fidelity.definition")}
    # copy has one reliable cell, cycle two: fewer than three, so not testable, per task
    assert tests[("copy", "fidelity.paper")]["reliable_cells"] == 1
    assert tests[("cycle", "fidelity.paper")]["reliable_cells"] == 2
    assert all(t["verdict"] is Verdict.NOT_TESTABLE for t in tests.values())
    # cycle layer 1: impact .1 .5 .2, published fidelity 1 3 2 -> rho 1
    assert tests[("copy", "fidelity.paper")]["median"] == 1.0
    assert tests[("copy", "fidelity.definition")]["median"] == -1.0
    layers = [{"task": "cycle", "heads": h, "damage": np.array([3.0, 2.0, 1.0, 0.0]),
               "fidelity": np.array([4.0, 3.0, 2.0, 1.0]) + h, "speed": np.array(
                   [1.0, 2.0, 3.0, 4.0])} for h in (1, 4, 8, 16)]
    (fid, speed) = layer_claims(layers)
    assert fid["median"] == 1.0 and fid["cells"] == 4 and fid["p"] < 0.01
    assert fid["verdict"] is Verdict.HOLDS
    # two-sided: a significantly negative median is a reversal
    assert speed["median"] == -1.0 and speed["verdict"] is Verdict.FAILS


def test_per_head_tests_use_cells_where_heads_matter_and_mark_the_sink_cap():
    """Issue #78: a practical impact threshold, stated before the test, selects the cells a
    per-head ranking is tested on; a fidelity ranking whose every head lies below the sink
    cap is marked, not ranked."""
    from bparallel.book.section4.as_defined import (
        IMPACT_MIN,
        SINK_CAP,
        capped_at_sink,
        ranking_rows,
        tested_cells,
    )
    from bparallel.book.section4.statistics import head_claims

    assert capped_at_sink(np.array([1e-5, 2e-4])) and not capped_at_sink(np.array([1e-5, 0.1]))
    assert not capped_at_sink(np.array([SINK_CAP, 0.0]))  # the cap itself is not below it
    with pytest.raises(ValueError, match="one value per head"):
        capped_at_sink(np.zeros((2, 2)))
    rank = ranking_rows(_studies())
    cyc = [r for r in rank if r["task"] == "cycle"]
    assert [r["material"] for r in cyc] == [r["max_impact"] >= IMPACT_MIN for r in cyc]
    assert all(r["capped"] == [] for r in rank)
    rows = [{"task": "cycle", "heads": 4, "layer": la, "reliable": True, "max_impact": m,
             "material": m >= IMPACT_MIN, "capped": capped,
             "scores": {"impact": np.array([0.1, 0.9, 0.3, 0.2]) * m,
                        "fidelity.paper": np.array([1e-5, 2e-5, 3e-6, 4e-6]) if capped
                        else np.array([1.0, 4.0, 3.0, 2.0]),
                        "fidelity.definition": np.array([1.0, 4.0, 3.0, 2.0])}}
            for la, m, capped in ((1, 2.0, []), (2, 0.04, []), (3, 1.5, ["fidelity.paper"]),
                                  (4, 0.9, []))]
    cells = tested_cells(rows)
    assert [c["reliable"] for c in cells] == [True, False, True, True]  # 0.04 logits: no
    assert "fidelity.paper" not in cells[2]["scores"] and rows[2]["scores"]["fidelity.paper"] \
        is not None  # the input is left alone
    tests = {t["ranking"]: t for t in head_claims(cells)}
    assert tests["fidelity.definition"]["cells"] == 3  # the three tested cells
    assert tests["fidelity.paper"]["cells"] == 2  # the capped one is not ranked


def test_seed_ranking_rows_from_the_heads_part():
    """The other seeds' per-head cells (the metrics cache's "heads" part) carry what seed
    42's do: the noise floor, the seed, the largest impact, material and capped."""
    from bparallel.book.section4.as_defined import seed_ranking_rows, tested_cells
    from bparallel.book.section4.statistics import head_claims
    from bparallel.transformer.measure import HeadStudy

    studies = {}
    for seed in (43, 44, 45):
        eff = _effects([0], seed=seed)  # layer 1: heads differ (0.1, 0.5, 0.2); layer 2 not
        eff[0] *= 4.0  # largest impact about 2 logits: material
        studies[("cycle", 3, seed)] = HeadStudy(
            knockout={}, impact=eff,
            head_fidelity={"paper": np.array([[1e-5, 2e-5, 3e-5], [1.0, 2.0, 3.0]]),
                           "definition": np.array([[1.0, 3.0, 2.0], [1.0, 2.0, 3.0]])})
    rows = seed_ranking_rows(studies)
    assert sorted({r["seed"] for r in rows}) == [43, 44, 45] and len(rows) == 6
    first = [r for r in rows if r["layer"] == 1]
    assert all(r["reliable"] and r["material"] for r in first)
    assert all(r["capped"] == ["fidelity.paper"] for r in first)  # every head below the cap
    tests = head_claims(tested_cells(rows), by=("task", "seed"))
    assert {(t["seed"], t["ranking"]) for t in tests} == {
        (s, m) for s in (43, 44, 45) for m in ("fidelity.paper", "fidelity.definition")}
    # one tested cell per seed: too few to test, and the capped ranking has none
    assert all(t["cells"] == (0 if t["ranking"] == "fidelity.paper" else 1) for t in tests)
    assert seed_ranking_rows({}) == []


def test_the_seeds_the_per_head_tests_measure_in_words():
    """seeds_prose names the bundle's own seed and the other seeds measured, taken from the
    data, and says when there is only the one."""
    from types import SimpleNamespace

    from bparallel.book.section4.as_defined_report import seeds_prose

    bundle = SimpleNamespace(metas={("copy", 4): {"seed": 42}, ("cycle", 4): {}})
    many = seeds_prose(bundle, [44, 43, 42, 46, 45])
    assert "(seeds 43, 44, 45 and 46)" in many and "show seed 42's models" in many
    assert "per-head and per-layer tests are repeated" in many
    assert "Holm family" in many and "significantly reversed fails it" in many
    one = seeds_prose(bundle, [])
    assert "measure the models of one seed, 42," in one and "`other_seeds`" in one
    assert seeds_prose(bundle, [42]) == one


def test_seed_layer_rows_per_seed_from_the_knockouts_and_definition():
    """The other seeds' per-layer rows: each seed's models as layer_rows gives seed 42's
    (its knockouts, its Definition 2.7 medians and its layers' fidelity), with the seed;
    tested per (task, seed) and in the chapter's Holm family with a smallest effect."""
    from bparallel.book.section4.as_defined import (
        chapter_family,
        layer_claims,
        seed_layer_rows,
    )
    from bparallel.book.section4.rank_tests import smallest_rho

    def defined(t_mix, fid):  # one sequence, 2 layers, 3 positions (the last the sink)
        L = len(t_mix)
        node = np.array([[[f, f + 1.0, 100.0]] for f in fid])  # (L, 1, 3)
        return {"worst_case.definition": np.array(t_mix, float)[:, None],
                "hitting.exact": np.ones((L, 1, 3)), "fidelity.node": node,
                "rollout.weighted": np.ones((L, 1, 3)),
                "mixing_time.definition": np.ones((L, 1)),
                "mixing_time.paper": np.ones((L, 1))}

    knock = {"none": {"accuracy": 1.0, "margin": 10.0}, "all": {"accuracy": 0.0, "margin": 0.0},
             "L1": {"accuracy": 0.5, "margin": 4.0}, "L2": {"accuracy": 0.9, "margin": 9.0},
             "only_L1": {"accuracy": 0.9, "margin": 8.0},
             "only_L2": {"accuracy": 0.1, "margin": 1.0}}
    d = {("cycle", 1, 43): defined([5.0, 50.0], [3.0, 1.0]),  # L1: needed, fast, faithful
         ("cycle", 4, 43): defined([50.0, 5.0], [3.0, 1.0]),
         ("cycle", 1, 44): defined([5.0, 50.0], [1.0, 3.0])}
    from bparallel.transformer.measure import HeadStudy

    studies = {k: HeadStudy(knockout=knock) for k in d}
    rows = seed_layer_rows(d, studies)
    assert [(r["seed"], r["heads"]) for r in rows] == [(43, 1), (43, 4), (44, 1)]
    assert [r["rho_fidelity"] for r in rows] == pytest.approx([1.0, 1.0, -1.0])
    assert [r["rho_mixing"] for r in rows] == pytest.approx([1.0, -1.0, 1.0])
    np.testing.assert_allclose(rows[0]["fidelity"], [3.0, 1.0])  # non-sink minimum
    # seed 43's rows are layer_rows of seed 43's models alone
    alone = seed_layer_rows({k: v for k, v in d.items() if k[2] == 43},
                            {k: v for k, v in studies.items() if k[2] == 43})
    assert [r["rho_fidelity"] for r in alone] == [r["rho_fidelity"] for r in rows[:2]]
    with pytest.raises(ValueError, match="different models"):
        seed_layer_rows(d, {k: v for k, v in studies.items() if k[2] == 43})
    tests = layer_claims(rows, by=("task", "seed"))
    assert [(t["seed"], t["measure"], t["cells"]) for t in tests] == [
        (43, "fidelity", 2), (43, "speed", 2), (44, "fidelity", 1), (44, "speed", 1)]
    with pytest.raises(ValueError, match="must include 'task'"):
        layer_claims(rows, by=("seed",))
    four = [{"task": "cycle", "heads": h, "damage": np.array([3.0, 2.0, 1.0, 0.0]),
             "fidelity": np.array([4.0, 3.0, 2.0, 1.0]), "speed": np.array([4.0, 3.0, 2.0, 1.0])}
            for h in (1, 4, 8, 16)]
    _, family, size = chapter_family([], [*layer_claims(four), *tests])
    assert size >= 2 and all("smallest" in t for t in family)
    assert family[0]["smallest"] == smallest_rho((4, 4, 4, 4), 0.05 / size)
    assert family[2]["smallest"] == smallest_rho((2, 2), 0.05 / size)  # None: cannot decide


def test_seeds_verdict_by_the_one_rule():
    from bparallel.book.section4.as_defined import seeds_verdict
    from bparallel.book.verdicts import Verdict as V

    def of(*vs):
        return seeds_verdict([{"verdict": v} for v in vs])

    assert of(V.HOLDS) is V.HOLDS and of(V.HOLDS_WITH_CONDITIONS) is V.HOLDS_WITH_CONDITIONS
    assert of(V.HOLDS, V.HOLDS_WITH_CONDITIONS) is V.HOLDS_WITH_CONDITIONS
    assert of(V.HOLDS, V.NOT_SUPPORTED, V.NOT_TESTABLE) is V.HOLDS_WITH_CONDITIONS
    assert of(V.HOLDS, V.FAILS) is V.FAILS  # a seed's reversal is never outvoted
    assert of(V.NOT_TESTABLE, V.NOT_TESTABLE) is V.NOT_TESTABLE
    assert of(V.NOT_SUPPORTED, V.NOT_TESTABLE) is V.NOT_SUPPORTED


def test_across_tasks_and_both_modes():
    from bparallel.book.section4.statistics import across_tasks, both_modes
    from bparallel.book.verdicts import Verdict as V

    assert across_tasks([V.FAILS, V.HOLDS]) is V.FAILS  # never outvoted
    assert across_tasks([V.NOT_SUPPORTED, V.HOLDS]) is V.HOLDS_WITH_CONDITIONS
    assert across_tasks([V.HOLDS, V.HOLDS]) is V.HOLDS
    assert across_tasks([V.NOT_TESTABLE, V.NOT_SUPPORTED]) is V.NOT_SUPPORTED
    assert across_tasks([]) is V.NOT_TESTABLE
    assert both_modes(V.NOT_SUPPORTED, V.HOLDS) is V.HOLDS_WITH_CONDITIONS
    # published code only: a condition; reversed as defined: fails, whatever the code gives
    assert both_modes(V.HOLDS, V.NOT_SUPPORTED) is V.HOLDS_WITH_CONDITIONS
    assert both_modes(V.HOLDS_WITH_CONDITIONS, V.NOT_TESTABLE) is V.HOLDS_WITH_CONDITIONS
    assert both_modes(V.HOLDS, V.FAILS) is V.FAILS
    assert both_modes(V.NOT_TESTABLE, V.NOT_SUPPORTED) is V.NOT_SUPPORTED
    assert both_modes(V.FAILS, V.FAILS) is V.FAILS
    # a reversal in either mode fails, whatever the other gives, and the cell names it
    assert both_modes(V.FAILS, V.NOT_SUPPORTED) is V.FAILS
    assert both_modes(V.NOT_SUPPORTED, V.FAILS) is V.FAILS
    assert both_modes(V.FAILS, V.HOLDS) is V.FAILS
    assert both_modes(V.NOT_TESTABLE, V.NOT_TESTABLE) is V.NOT_TESTABLE
    for a in V:  # every pair: never kinder than its evidence, never harsher
        for b in V:
            both = both_modes(a, b)
            assert (both is V.FAILS) == (V.FAILS in (a, b)), (a, b)
            assert (both is V.HOLDS) == (a is b is V.HOLDS), (a, b)
            assert both_modes(b, a) is both  # neither mode outranks the other


def test_threshold_verdict():
    from bparallel.book.section4.statistics import threshold_verdict
    from bparallel.book.verdicts import Verdict

    assert threshold_verdict(0.8, 0.7, 0.3) is Verdict.HOLDS
    assert threshold_verdict(0.7, 0.7, 0.3) is Verdict.HOLDS  # the threshold itself holds
    assert threshold_verdict(0.5, 0.7, 0.3) is Verdict.HOLDS_WITH_CONDITIONS
    assert threshold_verdict(0.3, 0.7, 0.3) is Verdict.HOLDS_WITH_CONDITIONS
    assert threshold_verdict(0.1, 0.7, 0.3) is Verdict.NOT_SUPPORTED
    assert str(threshold_verdict(0.1, 0.7, 0.3)) == "not supported"  # the word, as before
    with pytest.raises(ValueError, match="must not exceed"):
        threshold_verdict(0.5, 0.3, 0.7)


def test_claim_verdicts_by_hand():
    from bparallel.book.section4.as_defined import proxy_order_rho
    from bparallel.book.section4.as_defined_verdicts import claim_verdicts, verdict_results
    from bparallel.book.verdicts import Verdict

    rows = [{"task": task, "t_mix_median": t, "proxy_definition": p, "starts_beyond_cutoff": b,
             "rollout_fidelity_rho": r}
            for task, t, p, b, r in (("copy", 10, 5, 0.0, 0.8), ("copy", 20, 6, 0.1, 0.9),
                                     ("cycle", math.inf, 9, 0.3, 0.2),
                                     ("cycle", 30, 7, 0.0, 0.75))]
    assert proxy_order_rho(rows) == pytest.approx(1.0)  # the finite cells in the same order
    heads = [{"task": "copy", "faster": True}, {"task": "copy", "faster": True},
             {"task": "cycle", "faster": False}, {"task": "cycle", "faster": True}]
    ko = [{"task": t, "none.accuracy": 1.0, "all.accuracy": a, "none.margin": 20.0,
           "all.margin": m} for t, a, m in (("copy", 1.0, 10.0), ("copy", 1.0, 12.0),
                                            ("cycle", 0.01, -3.0))]
    test = {"cells": 3, "median": 0.6, "p": 0.01, "p_min": 0.001, "reliable_cells": 3}
    none = {"cells": 0, "median": math.nan, "p": math.nan, "p_min": math.nan}
    head_tests = [{"task": "copy", "ranking": m, **none, "verdict": Verdict.NOT_TESTABLE}
                  for m in ("fidelity.paper", "fidelity.definition")] + [
        {"task": "cycle", "ranking": "fidelity.paper", **test, "median": -0.2, "p": 0.8,
         "verdict": Verdict.NOT_SUPPORTED},
        {"task": "cycle", "ranking": "fidelity.definition", **test, "verdict": Verdict.HOLDS}]
    layers = [{"task": "cycle", "measure": m, **test, "verdict": Verdict.HOLDS}
              for m in ("fidelity", "speed")]
    pairs = [{"task": t, "effect": e, "mean": m, "half_width": 0.1, "reliable": True}
             for t, e, m in (("copy", "complementarity", 0.5), ("copy", "redundancy", -0.2),
                             ("cycle", "complementarity", -2.0), ("cycle", "redundancy", 1.0))]
    out = claim_verdicts(rows, heads, ko, layers, head_tests, pairs)
    v = {(r["slug"], r["task"]): r["verdict"] for r in out}
    assert v[("mixing", "copy")] is Verdict.HOLDS and v[("mixing", "cycle")] is \
        Verdict.HOLDS_WITH_CONDITIONS and v[("mixing", "all")] is Verdict.HOLDS_WITH_CONDITIONS
    assert v[("proxy", "all")] is Verdict.HOLDS_WITH_CONDITIONS
    assert v[("rollout", "copy")] is Verdict.HOLDS  # median .85
    # issue #78: copy's accuracy needs no attention but its margin does (20 -> 10 logits):
    # redundant, not unused, so neither holding nor reversed; judged per task, the claim
    # holds for cycle
    assert v[("uses_attention", "copy")] is Verdict.NOT_SUPPORTED
    assert v[("uses_attention", "cycle")] is Verdict.HOLDS
    assert v[("uses_attention", "all")] is Verdict.HOLDS_WITH_CONDITIONS
    cond = {(r["slug"], r["task"]): r["condition"] for r in out}
    assert cond[("uses_attention", "all")] == "only cycle"
    assert v[("heads", "cycle")] is Verdict.HOLDS_WITH_CONDITIONS  # as defined only
    assert v[("heads", "copy")] is Verdict.NOT_TESTABLE
    # the book's tests of heads and layers are judged over the tasks that need attention
    assert v[("heads", "all")] is Verdict.HOLDS_WITH_CONDITIONS
    assert cond[("heads", "all")] == ("only cycle (as defined only); copy set aside: needs "
                                      "no attention")
    claims = {r["slug"]: r["claim"] for r in out}
    assert all(claims[s].startswith("Book's test: ")
               for s in ("uses_attention", "heads", "layers"))
    assert not claims["pairs"].startswith("Book's test")  # Remark 3.7 is the paper's
    # a model whose attention moves neither accuracy nor margin reverses the claim
    unused = [dict(k, **{"all.margin": 19.9}) if k["task"] == "copy" else k for k in ko]
    v3 = {(r["slug"], r["task"]): r["verdict"]
          for r in claim_verdicts(rows, heads, unused, layers, head_tests, pairs)}
    assert v3[("uses_attention", "copy")] is Verdict.FAILS
    assert v3[("uses_attention", "all")] is Verdict.FAILS
    assert v[("layers", "cycle")] is Verdict.HOLDS and ("layers", "all") not in v
    # issue #78: cycle's complementarity lies below 0 beyond its interval, a significant
    # reversal in a tested task, so the claim fails (chapter 12's rule), and says where
    assert v[("pairs", "copy")] is Verdict.HOLDS and v[("pairs", "cycle")] is Verdict.FAILS \
        and v[("pairs", "all")] is Verdict.FAILS
    note = {(r["slug"], r["task"]): r["condition"] for r in out}
    assert note[("pairs", "all")] == "reversed in cycle"
    assert "negative (reversed) in 1" in {(r["slug"], r["task"]): r["defined"]
                                          for r in out}[("pairs", "cycle")]
    # an interval that holds 0 reverses nothing: not supported, as before
    flat = [dict(p, mean=0.05) if p["task"] == "cycle" else p for p in pairs]
    v2 = {(r["slug"], r["task"]): r["verdict"]
          for r in claim_verdicts(rows, heads, ko, layers, head_tests, flat)}
    assert v2[("pairs", "cycle")] is Verdict.NOT_SUPPORTED
    assert v2[("pairs", "all")] is Verdict.HOLDS_WITH_CONDITIONS
    text = {(r["slug"], r["task"]): r["defined"] for r in out}
    assert "margin 20.0 → 10.0 to 12.0 logits" in text[("uses_attention", "copy")]
    assert "accuracy 100.0%," in text[("uses_attention", "copy")]  # one bound, not "between"
    assert "30% of starts beyond $M$" in text[("proxy", "all")]
    res = verdict_results(out)
    assert res["verdict.heads.cycle"] == list(Verdict).index(Verdict.HOLDS_WITH_CONDITIONS)
    # issue #78: the per-layer tests of seeds 43-46 beside seed 42's, by the one rule: a
    # seed's significant reversal fails the claim; some seeds holding, none reversed, holds
    # with conditions and says in how many
    weak = {**test, "verdict": Verdict.NOT_SUPPORTED, "p": 0.3}
    strong = [dict(t, p=0.0005, p_min=0.0001) for t in layers]  # holds after Holm
    seeded = strong + [{"task": "cycle", "measure": m, "seed": s, **weak}
                       for s in (43, 44) for m in ("fidelity", "speed")]
    byseed = {(r["slug"], r["task"]): r for r in
              claim_verdicts(rows, heads, ko, seeded, head_tests, pairs)}
    assert byseed[("layers", "cycle")]["verdict"] is Verdict.HOLDS_WITH_CONDITIONS
    assert byseed[("layers", "cycle")]["condition"] == "in 1 of 3 seeds tested"
    assert "seed 42: median ρ 0.60 over 3 cells" in byseed[("layers", "cycle")]["defined"]
    assert "over 3 seeds, 1 holds, 0 fail" in byseed[("layers", "cycle")]["defined"]
    reversed_ = [dict(t, p=0.0005, p_min=0.0001, median=-0.9) if t.get("seed") == 44 else t
                 for t in seeded]
    assert {(r["slug"], r["task"]): r["verdict"] for r in claim_verdicts(
        rows, heads, ko, reversed_, head_tests, pairs)}[("layers", "cycle")] is Verdict.FAILS
    with pytest.raises(ValueError, match="rows has 1 cells"):
        proxy_order_rho(rows[2:3] + rows[:1])


def test_attention_carries_margin_at_the_stated_impact():
    from bparallel.book.section4.as_defined import IMPACT_MIN, attention_carries_margin

    row = {"none.margin": 20.0, "all.margin": 20.0 - IMPACT_MIN}
    assert attention_carries_margin(row)  # the threshold itself counts
    assert not attention_carries_margin({**row, "all.margin": 19.9})
    assert attention_carries_margin({**row, "all.margin": 19.9}, impact=0.1)


def test_a_number_never_reads_as_the_threshold_it_misses():
    from bparallel.book.section4.as_defined_verdicts import fmt_beside, reversal_note
    from bparallel.book.verdicts import Verdict

    assert fmt_beside(0.6996, 0.7) == "0.6996"  # not "0.70" beside "below 0.7"
    assert fmt_beside(0.55, 0.7) == "0.55" and fmt_beside(0.7, 0.7) == "0.70"
    assert reversal_note(Verdict.FAILS, {"copy": Verdict.HOLDS, "cycle": Verdict.FAILS}) == \
        "reversed in cycle"
    assert reversal_note(Verdict.FAILS, {"copy": Verdict.FAILS}) == ""
    assert reversal_note(Verdict.HOLDS, {"copy": Verdict.HOLDS}) == ""


def test_definition_table_and_results_by_hand():
    from bparallel.book.section4.as_defined import LABELS
    from bparallel.book.section4.as_defined_report import definition_results, definition_table

    rows = []
    for h in (1, 16):
        for layer in (1, 2, 3, 4):
            rows.append({"task": "copy", "heads": h, "layer": layer,
                         "t_mix_median": (math.inf if (h, layer) == (1, 3) else 10.0 * layer / h),
                         "t_mix_p90": 1.0, "never_mixes": 0.0, "proxy_definition": 5.0 + layer,
                         "proxy_paper": 6.0, "starts_beyond_cutoff": 0.1 * layer / h,
                         "worst_start": 0 if layer < 4 else 7, "rollout_fidelity_rho": 0.5,
                         "lost_same": 1.0})
    shown = definition_table(rows)
    assert list(shown[0]) == [LABELS[k] for k in ("task", "heads", "layer", "t_mix_median",
                                                  "never_mixes", "proxy_definition",
                                                  "starts_beyond_cutoff", "worst_start")]
    out = definition_results(rows)
    assert "copy.h1.L3.t_mix_median" not in out  # infinite: not recorded
    assert out["copy.h1.deep.t_mix_min"] == 20.0 and out["copy.h1.deep.proxy_max"] == 9.0
    assert out["copy.h16.t_mix_max"] == 2.5
    assert out["starts_beyond_cutoff.max"] == pytest.approx(0.4)
    assert out["worst_start_is_0.share"] == 0.75


def test_rho_verdict_by_median_and_cells_needed():
    from bparallel.book.section4.statistics import rho_verdict
    from bparallel.book.verdicts import Verdict

    assert rho_verdict([0.9, 0.5, 0.1]) is Verdict.HOLDS  # median 0.5
    assert rho_verdict([0.9, 0.5], cells_needed=3) is Verdict.NOT_TESTABLE
    assert rho_verdict([0.3, 0.2, -0.9], cells_needed=3) is Verdict.HOLDS_WITH_CONDITIONS
    with pytest.raises(ValueError, match="cells_needed=0"):
        rho_verdict([0.5], cells_needed=0)


def test_report_tables_and_results_by_hand():
    """Chapter 10's tables and recorded values (section4_report) of the hand-made studies."""
    from bparallel.book.section4 import as_defined_report as report
    from bparallel.book.section4.as_defined import (
        knockout_rows,
        layer_rows,
        pair_rows,
        ranking_rows,
        reliability_rows,
    )
    from bparallel.book.section4.statistics import head_claims

    studies = {k: v for k, v in _studies().items() if k[1] > 1}
    ko = knockout_rows(studies)
    table = report.knockout_table(ko)
    assert table[1] == {"task": "cycle", "heads": 3, "intact": "100% (10.0)",
                        "no attention": "0% (1.0)", "without L1": "30% (4.0)",
                        "without L2": "90% (8.0)"}
    assert report.knockout_table(ko, only=True)[0] == {"task": "copy", "heads": 3,
                                                       "only L1": "50% (2.0)",
                                                       "only L2": "40% (1.5)"}
    out = report.knockout_results(ko)
    assert out["knockout.cycle.h3.L1.accuracy"] == 0.3
    assert out["knockout.copy.h3.only_L2.margin"] == 1.5
    assert out["knockout.cycle.uses_attention.models"] == 1
    assert out["knockout.copy.uses_attention.models"] == 0 and out["knockout.models"] == 2
    assert "knockout.copy.h3.none.accuracy" not in out  # intact: the table shows it
    margins = report.copy_margin_results(ko)
    assert margins["margin.copy.intact.min"] == 10.0 and margins["margin.copy.none.max"] == 1.0
    # ranking: copy layer 2 is below the floor; its correlations read so
    rank = ranking_rows(studies)
    shown = report.ranking_table(rank)
    assert shown[1]["ρ(w_h)"] == report.BELOW and shown[0]["ρ(w_h)"] == "0.60"
    res = report.ranking_results(rank)
    assert res["ablation.reliable.cells"] == 3 and res["ablation.cells"] == 4
    assert res["ablation.cycle.rho_weight.median"] == pytest.approx(-0.1)  # of -.4, .2
    assert res["ablation.copy.rho_weight.median"] == pytest.approx(0.6)
    assert "ablation.rho_weight.median" not in res  # never pooled across tasks
    assert res["ablation.cycle.reliable.cells"] == 2
    claims = report.claims_table(head_claims(rank), "ranking")
    assert {r["task"] for r in claims} == {"copy", "cycle"}
    pairs = pair_rows(studies)
    pres = report.pair_results(pairs)
    assert pres["pairs.models"] == 2 and pres["pairs.redundancy.positive.models"] == 2
    assert pres["pairs.complementarity.positive.models"] == 0
    assert {r["interaction"] for r in report.pair_table(pairs)} == {"redundancy",
                                                                    "complementarity"}
    rel = reliability_rows({k: dataclasses.replace(
        st, effect={m: st.effect["mean.margin"] for m in report.MEASURES},
        scores={m: np.array([[0.1, -0.5]]) for m in report.MEASURES})
        for k, st in studies.items()})
    floor = report.noise_floor_table(rel)
    assert [r["measure"] for r in floor] == list(report.MEASURES.values())
    nres = report.noise_floor_results(rel)
    assert nres["head_impact.margin.max"] == 0.5
    assert nres["chance.single_split.h4"] == pytest.approx(1 / 6)  # 4 of 24 orderings
    chance = report.chance_table()
    assert [r["heads"] for r in chance] == [4, 8, 16]
    # layers: per model; the per-task tests are layer_claims
    defined = [{"task": t, "heads": 3, "layer": la, "t_mix_median": tm}
               for t in ("copy", "cycle") for la, tm in ((1, 5.0), (2, 50.0))]
    fid = {("copy", 3): np.array([1.0, 2.0]), ("cycle", 3): np.array([10.0, 1.0])}
    lr = layer_rows(ko, defined, fid)
    assert report.layers_table(lr, ko)[1]["needs attention"] is True
    assert "| cycle | 3 | yes |" in pipe_table(report.layers_table(lr, ko))  # as shown
    assert report.layers_results(lr) == {"layers.copy.h3.most_needed": 1,
                                         "layers.cycle.h3.most_needed": 1}


def test_claims_of_several_seeds_recorded_and_shown():
    """Chapter 10's rank tests over seeds 42-46: seed 42's under the chapter's old keys,
    the others' under ``s<seed>``, how many seeds hold and fail per claim, and the smallest
    effect each test could find, in its table too."""
    from bparallel.book.section4 import as_defined_report as report
    from bparallel.book.verdicts import Verdict

    base = {"task": "cycle", "measure": "fidelity", "cells": 4, "median": 0.5, "p": 0.01,
            "p_min": 0.001, "p_holm": 0.04, "smallest": 1.0}
    tests = [{**base, "verdict": Verdict.HOLDS_WITH_CONDITIONS},
             {**base, "seed": 43, "verdict": Verdict.FAILS, "median": -0.8},
             {**base, "seed": 44, "verdict": Verdict.NOT_TESTABLE, "cells": 0, "smallest": None},
             {**base, "measure": "speed", "verdict": Verdict.NOT_SUPPORTED, "smallest": None}]
    res = report.seeds_claims_results(tests, "measure", "layers_claim")
    assert res["layers_claim.cycle.fidelity.median"] == 0.5
    assert res["layers_claim.cycle.fidelity.smallest"] == 1.0
    assert res["layers_claim.s43.cycle.fidelity.median"] == -0.8
    assert res["layers_claim.s44.cycle.fidelity.cells"] == 0
    assert "layers_claim.s44.cycle.fidelity.median" not in res  # no cells: no median
    assert "layers_claim.cycle.speed.smallest" not in res  # cannot decide: none recorded
    summary = report.seeds_summary(tests, "measure", "layers_claim")
    assert summary == {"layers_claim.cycle.fidelity.seeds.tested": 2,
                       "layers_claim.cycle.fidelity.seeds.holding": 1,
                       "layers_claim.cycle.fidelity.seeds.failing": 1,
                       "layers_claim.cycle.speed.seeds.tested": 1,
                       "layers_claim.cycle.speed.seeds.holding": 0,
                       "layers_claim.cycle.speed.seeds.failing": 0}
    table = report.claims_table(tests, "measure")
    assert [r["seed"] for r in table] == [42, 42, 43, 44]  # seed by seed
    assert [r["smallest detectable ρ"] for r in table] == ["1.00", "none", "1.00", "—"]


def test_pruning_summary_against_the_random_band():
    from bparallel.book.section4 import as_defined_report as report

    kept = np.arange(5)
    random = {m: np.linspace(0.0, 1.0, 5)[None] + np.linspace(-0.1, 0.1, 20)[:, None]
              for m in ("accuracy_predictable", "margin")}
    curve = {"random": random,
             "zero.margin": {m: np.ones(5) for m in random},       # keeps everything: above
             "weight": {m: np.zeros(5) for m in random},           # loses at once: below
             "gradient": {m: np.linspace(0.0, 1.0, 5) for m in random}}  # like random
    studies = {("cycle", 4): _typed(pruning={"heads_kept": kept, **curve})}
    (row,) = report.pruning_summary(studies)
    assert row["oracle (zero-ablation impact)"].endswith("(above)")
    assert row["head weight w_h"].endswith("(below)")
    assert row["gradient importance"].endswith("(within)")
    assert row["best order"] == "oracle (zero-ablation impact)"
    text = report.pruning_prose([row])
    assert text.startswith("**Cycle**: with 4 heads, the oracle (zero-ablation impact) order")
    assert "the head weight w_h order is worse than random" in text


def test_report_heads_rollout_and_pruning_by_hand():
    from bparallel.book.section4 import as_defined_report as report

    heads = [{"task": "copy", "layer": 1, "lo": math.inf, "hi": 12.0, "faster": True,
              "monotone": False}]
    assert report.heads_table(heads) == [{"task": "copy", "layer": 1, "1 head": "∞",
                                          "16 heads": "12", "16 heads faster": True,
                                          "falls with every added head": False}]
    assert "| copy | 1 | ∞ | 12 | yes | no |" in pipe_table(report.heads_table(heads))
    assert report.heads_results(heads) == {"heads.faster.cells": 1, "heads.monotone.cells": 0,
                                           "heads.cells": 1}
    rows = [{"task": "copy", "heads": 1, "layer": la, "rollout_fidelity_rho": rho,
             "lost_same": same} for la, rho, same in ((1, 0.2, 1.0), (2, 0.8, 0.0), (3, 0.5, 0.5))]
    out = report.rollout_results(rows)
    assert (out["rollout.rho.median"], out["rollout.rho.min"], out["rollout.rho.max"]) == (
        0.5, 0.2, 0.8)
    assert out["rollout.lost_same.mean"] == 0.5
    curve = {m: np.array([[1.0, 0.5, 0.0]]) for m in ("accuracy_predictable", "margin")}
    studies = {("copy", 1): _typed(), ("copy", 4): _typed(pruning={k: curve for k in
                                                                 report.PRUNING_ORDERS})}
    pr = report.pruning_results(studies)
    # the one-head model is not pruned; the random orders add their 5/50/95% areas
    assert len(pr) == 2 * len(report.PRUNING_ORDERS) + 2 * 3
    assert pr["pruning.copy.h4.random.margin.area.p50"] == 0.5
    assert pr["pruning.copy.h4.fidelity_definition.margin.area"] == 0.5
    metrics = {("copy", 1): {"fidelity.node": np.array([[[0.5, 0.2, 1.0], [0.3, 0.4, 1.0]]])}}
    np.testing.assert_allclose(layer_fidelity(metrics)[("copy", 1)], [0.25])


def test_report_measures_check_their_counts():
    from bparallel.book.section4 import as_defined_studies as studies

    with pytest.raises(ValueError, match="num_sequences"):
        studies.defined_measures(None, num_sequences=0, eps=0.25, max_steps=100)
    with pytest.raises(ValueError, match="skip"):
        studies.ablation_studies(None, skip=-1, num_sequences=5, reference_sequences=5,
                                 horizon=100)
