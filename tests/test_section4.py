"""bparallel.book.section4: summaries of Section 4 measured as defined, on hand-made data."""

import math

import numpy as np
import pytest

from bparallel.book.render.markdown import fmt_steps, pipe_table
from bparallel.book.section4 import definition_rows, heads_verdicts


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
    assert fmt_steps(math.inf) == "∞" and fmt_steps(12.0) == "12" and fmt_steps(3.25) == "3.2"
    assert fmt_steps(2.37e6) == "2.37e+06"


def _study(rel_margin, rel_loss, spearman_weight, knock):
    """A hand-made importance study of a 2-layer, 3-head model."""
    return {"knockout": knock,
            "reliability": {"mean.margin": np.array(rel_margin), "zero.loss": np.array(rel_loss)},
            "scores": {"mean.margin": np.array([[0.1, 0.5, 0.2], [0.3, 0.3, 0.0]]),
                       "zero.loss": np.array([[1e-9, -2e-9, 0.0], [0.0, 0.0, 0.0]])},
            "spearman": {"weight~mean": np.array(spearman_weight),
                         "gradient~mean": np.array([0.5, 0.5])},
            "pair": {"synergy": np.array([[0.1, 0.3, 0.2, 0.2], [-0.1, -0.1, 0.1, 0.1],
                                          [0.0, 0.2, 0.0, 0.2]]),
                     "split_half_rho": np.asarray(0.9), "layer": np.asarray(1)}}


def _knock(none, all_, l1, l2):
    return {"none": {"accuracy": none, "margin": 10.0}, "all": {"accuracy": all_, "margin": 1.0},
            "L1": {"accuracy": l1, "margin": 4.0}, "L2": {"accuracy": l2, "margin": 8.0},
            "only_L1": {"accuracy": 0.5, "margin": 2.0},
            "only_L2": {"accuracy": 0.4, "margin": 1.5}}


def test_importance_summaries_by_hand():
    from bparallel.book.section4 import (
        knockout_rows,
        layer_rows,
        pruning_area,
        ranking_rows,
        reliability_rows,
        synergy_rows,
        uses_attention,
    )

    studies = {("copy", 3): _study([0.9, 0.5], [0.1, -0.2], [0.6, np.nan],
                                   _knock(1.0, 1.0, 1.0, 1.0)),
               ("cycle", 3): _study([0.95, 0.85], [0.3, 0.0], [-0.4, 0.2],
                                    _knock(1.0, 0.004, 0.3, 0.9)),
               ("cycle", 1): {"knockout": _knock(1.0, 0.003, 0.5, 0.9)}}
    ko = knockout_rows(studies)
    assert [(r["task"], r["heads"]) for r in ko] == [("copy", 3), ("cycle", 1), ("cycle", 3)]
    assert ko[2]["L1.accuracy"] == 0.3 and ko[2]["only_L2.margin"] == 1.5
    assert not uses_attention(ko[0]) and uses_attention(ko[2])
    rel = {r["measure"]: r for r in reliability_rows(studies)}
    assert rel["mean.margin"]["median_rho"] == pytest.approx(0.875)  # of .9 .5 .95 .85
    assert rel["mean.margin"]["reliable_share"] == 0.75 and rel["mean.margin"]["cells"] == 4
    assert rel["mean.margin"]["max_effect"] == 0.5 and rel["zero.loss"]["max_effect"] == 2e-9
    rank = ranking_rows(studies)
    assert len(rank) == 4  # the one-head model has no ranking
    copy2 = next(r for r in rank if r["task"] == "copy" and r["layer"] == 2)
    assert not copy2["reliable"] and copy2["weight"] is None  # below the floor: no rho
    cyc = [r for r in rank if r["task"] == "cycle"]
    assert [r["weight"] for r in cyc] == [-0.4, 0.2] and cyc[0]["max_impact"] == 0.5
    (s1, s2) = synergy_rows(studies)
    assert s1["task"] == "copy" and s1["layer"] == 2 and s1["reliable"]
    per_seq = np.array([0.0, 0.4 / 3, 0.3 / 3, 0.5 / 3])  # mean over the 3 pairs
    assert s1["mean"] == pytest.approx(per_seq.mean())
    assert s1["share_positive"] == pytest.approx(2 / 3)  # pair means .2, 0, .1
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


def test_threshold_verdict():
    from bparallel.book.section4 import threshold_verdict
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
    from bparallel.book.section4 import claim_verdicts, proxy_order_rho
    from bparallel.book.verdicts import Verdict

    rows = [{"t_mix_median": t, "proxy_definition": p, "starts_beyond_cutoff": b,
             "rollout_fidelity_rho": r}
            for t, p, b, r in ((10, 5, 0.0, 0.8), (20, 6, 0.1, 0.9), (math.inf, 9, 0.3, 0.2),
                               (30, 7, 0.0, 0.75))]
    assert proxy_order_rho(rows) == pytest.approx(1.0)  # the finite cells in the same order
    heads = [{"faster": True}, {"faster": True}, {"faster": False}]
    ko = [{"task": "copy", "none.accuracy": 1.0, "all.accuracy": 1.0},
          {"task": "copy", "none.accuracy": 1.0, "all.accuracy": 0.5},
          {"task": "cycle", "none.accuracy": 1.0, "all.accuracy": 0.01}]
    layers = [{"rho_fidelity": 0.6}, {"rho_fidelity": None}]
    out = claim_verdicts(rows, heads, ko, layers, [0.1, 0.3, 0.25])
    verdict = {r["claim (Section 4)"]: r["verdict under the definition"] for r in out}
    assert verdict["More heads mix faster (Tables 1-2)"] is Verdict.HOLDS_WITH_CONDITIONS  # 2/3
    assert verdict["Algorithm 1 stands in for Definition 2.7"] is Verdict.HOLDS_WITH_CONDITIONS
    assert verdict["Fidelity says which positions reach the last one"] is Verdict.HOLDS  # 0.775
    assert verdict["The tasks exercise the attention graph"] is Verdict.FAILS  # 1 copy model
    assert verdict["Per-head fidelity says which heads matter (pruning)"] \
        is Verdict.HOLDS_WITH_CONDITIONS  # median 0.25
    assert verdict["The layers a task needs are the good graphs"] is Verdict.NOT_TESTABLE
    keys = {r["claim (Section 4)"]: r["key number"] for r in out}
    assert keys["The tasks exercise the attention graph"].startswith("copy: 1 of 2 models")
    assert "30% of starts beyond M" in keys["Algorithm 1 stands in for Definition 2.7"]
    with pytest.raises(ValueError, match="rows has 1 cells"):
        proxy_order_rho(rows[2:3] + rows[:1])


def test_definition_table_and_results_by_hand():
    from bparallel.book.section4 import LABELS
    from bparallel.book.section4_report import definition_results, definition_table

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
    from bparallel.book.section4 import rho_verdict
    from bparallel.book.verdicts import Verdict

    assert rho_verdict([0.9, 0.5, 0.1]) is Verdict.HOLDS  # median 0.5
    assert rho_verdict([0.9, 0.5], cells_needed=3) is Verdict.NOT_TESTABLE
    assert rho_verdict([0.3, 0.2, -0.9], cells_needed=3) is Verdict.HOLDS_WITH_CONDITIONS
    with pytest.raises(ValueError, match="cells_needed=0"):
        rho_verdict([0.5], cells_needed=0)


def test_report_tables_and_results_by_hand():
    """Chapter 10's tables and recorded values (section4_report) of the hand-made studies."""
    from bparallel.book import section4_report as report
    from bparallel.book.section4 import (
        knockout_rows,
        layer_rows,
        ranking_rows,
        reliability_rows,
        synergy_rows,
    )

    studies = {("copy", 3): _study([0.9, 0.5], [0.1, -0.2], [0.6, np.nan],
                                   _knock(1.0, 1.0, 1.0, 1.0)),
               ("cycle", 3): _study([0.95, 0.85], [0.3, 0.0], [-0.4, 0.2],
                                    _knock(1.0, 0.004, 0.3, 0.9))}
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
    # ranking: copy layer 2 is below the floor; its correlations read so
    rank = ranking_rows(studies)
    shown = report.ranking_table(rank)
    assert shown[1]["ρ(w_h)"] == report.BELOW and shown[0]["ρ(w_h)"] == "0.60"
    assert shown[0]["ρ(φ, definition)"] == "—"  # reliable, but no such correlation
    res = report.ranking_results(rank)
    assert res["ablation.reliable.cells"] == 3 and res["ablation.cells"] == 4
    assert res["ablation.rho_weight.median"] == pytest.approx(0.2)  # of .6, -.4, .2
    assert res["ablation.rho_weight.positive_share"] == pytest.approx(2 / 3)
    assert res["ablation.rho_fidelity_definition.cells"] == 0
    assert "ablation.rho_fidelity_definition.median" not in res
    assert res["ablation.cycle.reliable.cells"] == 2
    assert report.fidelity_rhos(rank) == []
    syn = report.synergy_results(synergy_rows(studies))
    assert syn["pairs.models"] == 2 and syn["pairs.reliable.models"] == 2
    assert report.synergy_table(synergy_rows(studies))[0]["above the noise floor"] is True
    rel = reliability_rows({k: {**st, "reliability": {m: np.array([0.9, 0.5])
                                                      for m in report.MEASURES},
                                "scores": {m: np.array([[0.1, -0.5]]) for m in report.MEASURES}}
                            for k, st in studies.items()})
    floor = report.noise_floor_table(rel)
    assert [r["measure"] for r in floor] == list(report.MEASURES.values())
    assert report.noise_floor_results(rel)["head_impact.margin.max"] == 0.5
    # layers: only the model that needs attention is judged
    defined = [{"task": t, "heads": 3, "layer": la, "t_mix_median": tm}
               for t in ("copy", "cycle") for la, tm in ((1, 5.0), (2, 50.0))]
    fid = {("copy", 3): np.array([1.0, 2.0]), ("cycle", 3): np.array([10.0, 1.0])}
    lr = layer_rows(ko, defined, fid)
    assert [r["task"] for r in report.attention_layers(lr, ko)] == ["cycle"]
    assert report.layers_table(lr, ko)[1]["needs attention"] is True
    assert "| cycle | 3 | yes |" in pipe_table(report.layers_table(lr, ko))  # as shown
    lres = report.layers_results(lr, ko)
    assert lres["layers.rho_fidelity.models"] == 1 and lres["layers.cycle.h3.most_needed"] == 1
    assert lres["layers.rho_fidelity.median"] == pytest.approx(1.0)


def test_report_heads_rollout_and_pruning_by_hand():
    from bparallel.book import section4_report as report

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
    studies = {("copy", 1): {}, ("copy", 4): {"pruning": {k: curve for k in
                                                          report.PRUNING_ORDERS}}}
    pr = report.pruning_results(studies)
    assert len(pr) == 2 * len(report.PRUNING_ORDERS)  # the one-head model is not pruned
    assert pr["pruning.copy.h4.fidelity_definition.margin.area"] == 0.5
    metrics = {("copy", 1): {"fidelity.node": np.array([[[0.5, 0.2, 1.0], [0.3, 0.4, 1.0]]])}}
    np.testing.assert_allclose(report.layer_fidelity(metrics)[("copy", 1)], [0.25])


def test_report_measures_check_their_counts():
    from bparallel.book import section4_report as report

    with pytest.raises(ValueError, match="num_sequences"):
        report.defined_measures(None, num_sequences=0, eps=0.25, max_steps=100)
    with pytest.raises(ValueError, match="skip"):
        report.ablation_studies(None, skip=-1, num_sequences=5, reference_sequences=5,
                                horizon=100)
