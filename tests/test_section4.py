"""bparallel.book.section4: summaries of Section 4 measured as defined, on hand-made data."""

import math

import numpy as np
import pytest

from bparallel.book.section4 import definition_rows, fmt_steps, heads_verdicts


def _metrics(wc, exact, roll, fid, proxy=1.0):
    L, N = np.shape(wc)
    return {"worst_case.definition": np.asarray(wc, float),
            "proxy.definition": np.full((L, N), proxy), "proxy.paper": np.full((L, N), 2 * proxy),
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


def test_ablation_summaries_by_hand():
    from bparallel.book.section4 import (
        ablation_rows,
        amplifying_layer,
        pruning_area,
        synergy_summary,
    )

    m = {"best_head.combined.definition": np.array([[1.0, 1.0], [5.0, 3.0]]),
         "best_head.individual.definition": np.array([[2.0, 2.0], [1.0, 1.0]])}
    assert amplifying_layer(m) == 1
    st = {"scores": {"impact": np.array([[0.1, 0.5], [0.2, 0.2]])},
          "spearman": {"weight": np.array([1.0, np.nan]),
                       "fidelity.definition": np.array([-1.0, 0.0]),
                       "fidelity.paper": np.array([1.0, 1.0])},
          "top_head": {"impact": np.array([1, -1]), "fidelity.definition": np.array([1, 0]),
                       "fidelity.paper": np.array([0, 1])}}
    r1, r2 = ablation_rows({("copy", 2): st})
    assert r1["rho_weight"] == 1.0 and r2["rho_weight"] is None  # NaN reads as no value
    assert r1["h_star_hurts_most_definition"] is True and r1["h_star_hurts_most_paper"] is False
    assert r2["h_star_hurts_most_definition"] is None  # the impact is tied: no single head
    assert r1["max_impact"] == 0.5
    assert pruning_area([[1.0, 0.5, 0.0]]) == 0.5
    syn = {"synergy": {"loss_predictable": np.array([[np.nan, 0.2, -0.1],
                                                     [0.2, np.nan, 0.3],
                                                     [-0.1, 0.3, np.nan]])}}
    s = synergy_summary(syn)
    assert s["max"] == 0.3 and s["share_positive"] == pytest.approx(4 / 6)
    assert s["mean"] == pytest.approx((0.2 - 0.1 + 0.3) * 2 / 6)


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
