"""Chapter support for the graph tasks (bparallel.book.section4.graph_tasks)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bparallel.book.section4 import graph_tasks as gt
from bparallel.book.section4 import models
from bparallel.book.section4.statistics import seed_interval
from bparallel.book.verdicts import Outcome, Verdict
from bparallel.transformer.data import (
    FRESH_ONLY_TASKS,
    GRAPH_TASKS,
    histogram_no_attention_ceiling,
)
from bparallel.transformer.design import HEADS
from bparallel.transformer.shipped import ship_run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _row(task, heads, seed, **values):
    return {"task": task, "heads": heads, "seed": seed, **values}


def test_across_seeds_intervals_and_infinite_values():
    rows = [_row("first", 1, s, accuracy=a, t_mix=t) for s, a, t in
            ((42, 0.9, 5.0), (43, 0.8, math.inf), (44, 0.85, 7.0))]
    (out,) = gt.across_seeds(rows)
    iv = seed_interval([0.9, 0.8, 0.85])
    assert (out["accuracy"], out["accuracy.low"], out["accuracy.high"]) == (iv.mean, iv.low,
                                                                           iv.high)
    assert out["t_mix"] == 7.0 and out["t_mix.low"] is None  # a median, no interval
    assert out["seeds"] == 3 and "fidelity.paper" not in out


def test_head_count_change_outcomes():
    rows = []
    for s, d in zip((42, 43, 44), (0.10, 0.12, 0.11), strict=True):
        rows += [_row("first", 1, s, accuracy=0.5, t_mix=10),
                 _row("first", 16, s, accuracy=0.5 + d, t_mix=10 + 100 * d)]
        rows += [_row("majority", 1, s, accuracy=0.5 + d * (s - 43)),
                 _row("majority", 16, s, accuracy=0.5)]
    acc = {c["task"]: c for c in gt.head_count_change(rows, "accuracy")}
    assert acc["first"]["outcome"] is Outcome.AS_CLAIMED
    assert acc["first"]["change"] == pytest.approx(0.11)
    assert acc["majority"]["outcome"] is Outcome.NOT_RESOLVED
    (slow,) = gt.head_count_change(rows, "t_mix")
    assert slow["outcome"] is Outcome.AGAINST  # a longer mixing time: slower
    one = gt.head_count_change([r for r in rows if r["seed"] == 42], "accuracy")
    assert one[0]["outcome"] is Outcome.AS_CLAIMED_ONE_SEED and one[0]["low"] is None
    with pytest.raises(ValueError, match="knockout_all.*no claimed direction"):
        gt.head_count_change(rows, "knockout_all")


def _change(task, outcome, seeds=3):
    return {"task": task, "outcome": outcome, "seeds": seeds}


def test_tally_judges_each_task_and_sets_aside_a_task_short_of_three_seeds():
    from bparallel.book.verdicts import Verdict

    better, worse, open_ = Outcome.AS_CLAIMED, Outcome.AGAINST, Outcome.NOT_RESOLVED
    assert gt.tally([_change("first", better), _change("cycle", better)]) is Verdict.HOLDS
    assert gt.tally([_change("first", worse), _change("cycle", worse)]) is Verdict.FAILS
    # a significant reversal on any task fails the claim: never outvoted by another task
    assert gt.tally([_change("first", better), _change("cycle", worse)]) is Verdict.FAILS
    assert gt.tally([_change("first", open_), _change("cycle", worse)]) is Verdict.FAILS
    assert gt.tally([_change("first", better), _change("cycle", open_)]) \
        is Verdict.HOLDS_WITH_CONDITIONS
    # none resolves: not supported (the test could have found it), as in chapter 11
    assert gt.tally([_change("first", open_)]) is Verdict.NOT_SUPPORTED
    assert gt.tally([]) is Verdict.NOT_TESTABLE
    # a task short of three paired seeds is not testable and set aside, never a veto
    assert gt.tally([_change("first", better), _change("induction", better, seeds=1)]) \
        is Verdict.HOLDS
    assert gt.tally([_change("first", worse), _change("induction", better, seeds=2)]) \
        is Verdict.FAILS
    assert gt.tally([_change("induction", better, seeds=2)]) is Verdict.NOT_TESTABLE
    assert gt.tally([_change("induction", better, seeds=2)], min_seeds=2) is Verdict.HOLDS
    assert gt.change_evidence(_change("induction", better, seeds=1)) == \
        "as claimed, not testable with 1 paired seed of 3"
    assert gt.change_evidence(_change("induction", better)) == str(better)
    with pytest.raises(ValueError, match="min_seeds"):
        gt.tally([_change("first", better)], min_seeds=0)
    with pytest.raises(ValueError, match="min_seeds"):
        gt.tally([], min_seeds=0)  # checked even with no task to judge
    with pytest.raises(ValueError, match="min_seeds"):
        gt.change_evidence(_change("first", better), min_seeds=0)


def _head_data(rng, agree):
    """A 4-layer, 4-head model's head study: heads that differ clearly in impact (40
    sequences), and fidelity that ranks them as the impact does (``agree``) or reversed."""
    impact = np.array([0.1, 0.9, 0.4, 0.6])[None, :, None] + rng.normal(0, 0.02, (4, 4, 40))
    fid = np.tile(impact.mean(-1) * (1 if agree else -1), 1)
    return {"impact": impact, "fidelity.paper": -fid, "fidelity.definition": fid}


def test_head_tests_results_and_the_verdict_row():
    rows = []
    rng = np.random.default_rng(1)
    for s in (42, 43, 44):
        for h in HEADS:
            extra = {"head_data": _head_data(rng, False)} if h == 4 else {}
            rows.append(_row("first", h, s, **extra))
    head_tests = gt.head_tests(rows)
    assert len(head_tests) == 2
    out = gt.head_results(head_tests)
    assert out["heads.first.reliable_cells"] == 12 and out["heads.first.cells"] == 12
    assert out["heads.first.definition.median"] == -1.0  # reversed here
    # the published code's fidelity ranks the heads as claimed, the defined one reverses
    # them significantly: the claim fails (never "published code only" over a reversal)
    assert out["verdict.heads.first"] == gt.verdict_index(Verdict.FAILS)
    assert gt.head_results([]) == {}
    row = gt.heads_verdict(head_tests)
    assert row["claim"] == gt.HEADS_CLAIM and row["arm"] == "—"
    assert row["verdict"] is Verdict.FAILS
    assert row["evidence"] == f"finite-data models; first: {Verdict.FAILS.value}"


def test_layer_knockouts_per_task_and_head_count():
    rows = [_row("first", 4, s, accuracy_intact=1.0, knockout_L1=0.5 + 0.1 * k,
                 knockout_L2=0.9) for k, s in enumerate((42, 43))]
    (out,) = gt.layer_knockouts(rows)
    assert out == {"task": "first", "heads": 4, "seeds": 2, "intact (%)": "100.0",
                   "layer 1 removed (%)": "55.0", "layer 2 removed (%)": "90.0"}


def test_model_row_from_measures():
    from bparallel.transformer.measure import HeadStudy

    L, N, T, H = 2, 3, 5, 2
    phi = np.full((L, N, T), 25.0)
    phi[..., 2] = 20.0  # the least non-sink node
    phi[..., -1] = 10.0  # the sink: only published-code mode's minimum counts it
    rollout = np.full((L, N, T), 1.0 / T)
    rollout[-1, :, 0], rollout[-1, :, 1] = 0.0, 2.0 / T  # after the last layer token 0 is lost
    defined = {"worst_case.definition": np.array([[3.0, 5.0, 4.0], [math.inf] * 3]),
               "rollout.weighted": rollout, "fidelity.node": phi,
               "mixing_time.paper": np.full((L, N), 4.0),
               "mixing_time.definition": np.full((L, N), 6.0)}
    impact = np.zeros((L, H, N))
    impact[0, 1] = 1.0
    fidelity = {"paper": np.array([[0.0, 0.4], [0.0, 0.3]]),
                "definition": np.array([[0.1, 0.4], [0.2, 0.3]])}
    knockout = {"none": {"accuracy": 0.9, "margin": 3.0},
                "all": {"accuracy": 0.01, "margin": -1.0},
                "L1": {"accuracy": 0.5, "margin": 1.0}, "L2": {"accuracy": 0.8, "margin": 2.0}}
    heads = HeadStudy(knockout=knockout, impact=impact, reliability=np.array([0.9, 0.1]),
                      head_fidelity=fidelity)
    meta = {"curve": {"heldout_accuracy_predictable": [0.2, 0.895, 0.9]}}  # 0.895 >= 0.891
    row = gt.model_row(("first", H, 43), defined, heads, meta)
    assert row["accuracy"] == 0.9 and "epochs_to_99" not in row
    assert row["mixing.definition"] == 6.0
    assert (row["fidelity.paper"], row["fidelity.definition"]) == (10.0, 20.0)
    assert row["t_mix"] == math.inf  # median of the layer medians 4 and inf
    assert row["rollout_min"] == pytest.approx(0.0)
    assert (row["knockout_all"], row["knockout_L1"]) == (0.01, 0.5)
    np.testing.assert_array_equal(row["head_data"]["impact"], impact)
    np.testing.assert_array_equal(row["head_data"]["fidelity.paper"], fidelity["paper"])
    assert "accuracy" not in gt.model_row(("first", H, 43), defined, heads)
    assert "head_data" not in gt.model_row(("first", H, 43), defined,
                                           HeadStudy(knockout=knockout))  # knockouts only


def test_graph_models_quick_trains_and_shipped_loads(tmp_path):
    runs = tmp_path / "runs"
    bundle = models.graph_models("quick", runs_dir=runs, models_root=tmp_path / "models",
                             train_profile="tiny", threads=1)
    assert bundle.profile == "quick" and "QUICK PROFILE" in bundle.note
    assert sorted(bundle.models) == sorted((t, h, 42) for t in GRAPH_TASKS for h in HEADS)
    assert models.resolve_profile("auto", tmp_path / "models") == "quick"
    for task in GRAPH_TASKS:
        ship_run(runs / "tiny", tmp_path / "models" / task, profile="tiny")
        assert models.complete_seeds(tmp_path / "models" / task, task) == [42]
    assert models.resolve_profile("auto", tmp_path / "models") == "paper"
    shipped = models.graph_models("auto", models_root=tmp_path / "models")
    assert shipped.profile == "paper" and sorted(shipped.models) == sorted(bundle.models)
    assert shipped.seeds == {t: [42] for t in GRAPH_TASKS}
    for key, model in shipped.models.items():
        assert all((a == b).all() for a, b in zip(model.state_dict().values(),
                                                  bundle.models[key].state_dict().values(),
                                                  strict=True))
        assert "curve" in shipped.metas[key]
    with pytest.raises(ValueError, match="profile='best'"):
        models.graph_models("best")
    with pytest.raises(FileNotFoundError, match="no seed of 'first'"):
        models.graph_models("paper", models_root=tmp_path / "nothing")


def test_summary_results_names_every_task_and_head_count():
    summary = [_row("first", h, None, accuracy=0.9, knockout_all=k)
               for h, k in ((1, 0.01), (16, 0.03))]
    paper = [_row("copy", 1, None, knockout_all=1.0)]
    out = gt.summary_results(summary, paper)
    assert out["knockout.first.h16.all.accuracy"] == 0.03
    assert out["first.h1.accuracy"] == 0.9 and out["knockout.copy.h1.all.accuracy"] == 1.0
    assert (out["knockout.all.min"], out["knockout.all.max"]) == (0.01, 0.03)  # graph tasks only


def test_mean_interval_formats_one_seed_several_and_infinity():
    row = {"a": 0.5, "a.low": 0.25, "a.high": 0.75, "b": 12.0, "c": math.inf}
    assert gt.mean_interval(row, "a", scale=100) == "50.0 [25.0, 75.0]"
    assert gt.mean_interval(row, "a", 2) == "0.50 [0.25, 0.75]"
    assert gt.mean_interval(row, "b") == "12.0"  # one seed: no interval, same decimals
    assert gt.mean_interval(row, "c") == "∞"


def test_the_graph_tasks_need_attention_and_their_table_says_so():
    rows = {r["task"]: r for r in gt.task_rows(num=50)}
    assert list(rows) == ["copy", "cycle", *GRAPH_TASKS, *FRESH_ONLY_TASKS]
    assert rows["copy"][gt.CEILING] == 1.0  # copy: no attention needed
    assert rows["cycle"][gt.CEILING] < 0.02
    for task in GRAPH_TASKS:
        assert rows[task][gt.CEILING] < 0.5, task
        assert rows[task]["training"] == f"{gt.training_epochs(task)} epochs"
    assert rows["induction"]["predictable positions"] == pytest.approx(0.49, abs=0.02)
    # majority: above one in four (a token just seen is more often the mode), below half
    assert 0.25 < gt.no_attention_ceiling("majority", 200) < 0.5
    # histogram: the most likely count at each position (closed form), fresh data only
    assert rows["histogram"][gt.CEILING] == histogram_no_attention_ceiling()
    assert rows["histogram"]["training"] == "fresh data only"
    assert rows["histogram"]["predictable positions"] == 1.0
    with pytest.raises(ValueError, match="task='sort'"):
        gt.no_attention_ceiling("sort")


def test_mean_interval_clips_at_zero_and_reads_large_values():
    row = {"t": 9.84e8, "t.low": -2.4e9, "t.high": 4.4e9, "f": 0.001, "f.low": -0.002,
           "f.high": 0.003}
    assert gt.mean_interval(row, "t") == "9.84 × 10⁸ [0.0, 4.40 × 10⁹]"
    assert gt.mean_interval(row, "f", 2) == "0.00 [0.00, 0.00]"  # never "-0.00"


def test_summary_table_columns_per_table_and_bad_name():
    row = {"task": "first", "heads": 4, "seeds": 3, "accuracy": 0.5, "accuracy.low": 0.25,
           "accuracy.high": 0.75, "knockout_all": 0.01}
    knock = gt.summary_table([row], "tbl-graph-knockouts")
    assert knock == [{"task": "first", "heads": 4, "seeds": 3,
                      "accuracy, intact (%)": "50.0 [25.0, 75.0]",
                      "accuracy, no attention (%)": "1.0"}]
    for name, (columns, _) in gt.TABLES.items():
        assert {q for _, q, _, _ in columns} <= set(gt.SUMMARY), name
    with pytest.raises(ValueError, match="name='tbl-x'"):
        gt.summary_table([row], "tbl-x")


def test_paper_beside_checks_the_profile_and_reads_no_models_from_an_empty_folder(tmp_path):
    with pytest.raises(ValueError, match="profile='auto'"):
        gt.paper_beside("auto", models_root=tmp_path)
    assert gt.paper_beside("paper", models_root=tmp_path) == ({}, {})


def test_measure_reads_the_graphs_and_the_heads_on_the_same_sequences(monkeypatch):
    """The "defined" part and the head study are two cached results per model, drawn once:
    the graphs are measured on the first sequences of the head study's draw (a smaller
    draw of induction's held-out stream is not its prefix), and a model of another length
    gets sequences of its own length."""
    import torch

    from bparallel.transformer.data import heldout_dataset
    from bparallel.transformer.measure import ModelMeasures
    from bparallel.transformer.model import ModelConfig, Transformer

    seen = {}

    def fake(models, inputs, parts, **options):
        seen[parts] = {k: inputs[k] for k in models}
        return {k: ModelMeasures(graphs={}) for k in models}

    monkeypatch.setattr(gt, "measure_models", fake)
    models = {("induction", 1, 42): Transformer(ModelConfig(n_heads=1)),
              ("induction", 4, 42): Transformer(ModelConfig(n_heads=4, seq_len=40))}
    out = gt.measure(models, num_sequences=3, reference_sequences=2, max_steps=5,
                     cache_dir=None)
    assert sorted(out) == sorted(models) and out[("induction", 1, 42)] == ({}, None)
    drawn = heldout_dataset("induction", 5, seed=gt.DEFAULT_SEED).inputs
    assert not torch.equal(heldout_dataset("induction", 3, seed=gt.DEFAULT_SEED).inputs,
                           drawn[:3])
    assert torch.equal(seen["heads"][("induction", 1, 42)], drawn)
    assert torch.equal(seen["defined"][("induction", 1, 42)], drawn[:3])
    assert seen["heads"][("induction", 4, 42)].shape == (5, 40)
    assert torch.equal(seen["defined"][("induction", 4, 42)],
                       seen["heads"][("induction", 4, 42)][:3])


def test_one_rule_for_claims_over_units_in_chapters_11_and_12():
    """Chapters 11 and 12 share one rule (statistics.claim_over_units), and a change is
    decided at its Holm-corrected two-sided p-value on the side of its mean."""
    from bparallel.book.section4 import across_seeds_stats as ass
    from bparallel.book.section4 import statistics as st
    from bparallel.book.verdicts import Verdict

    rule = st.claim_over_units
    assert rule(4, 0, 4) is Verdict.HOLDS and rule(2, 0, 4) is Verdict.HOLDS_WITH_CONDITIONS
    assert rule(3, 1, 4) is Verdict.FAILS and rule(0, 0, 4) is Verdict.NOT_SUPPORTED
    assert rule(0, 0, 0) is Verdict.NOT_TESTABLE
    for args in ((5, 0, 4), (-1, 0, 2), (True, 0, 2)):
        with pytest.raises(ValueError):
            rule(*args)
    # chapter 11: none holding and none against is "not supported", no longer "fails"
    assert ass._claim_verdict(3, 0, 0, 4) is Verdict.NOT_SUPPORTED
    assert ass._claim_verdict(3, 3, 1, 4) is Verdict.FAILS
    assert ass._claim_verdict(1, 4, 0, 4) is Verdict.NOT_TESTABLE
    up = {"seeds": 3, "change": 2.0}
    assert st.outcome_at(up, 0.01, +1) is Outcome.AS_CLAIMED
    assert st.outcome_at(up, 0.01, -1) is Outcome.AGAINST
    assert st.outcome_at(up, 0.2, +1) is Outcome.NOT_RESOLVED
    assert st.outcome_at({"seeds": 1, "change": -1.0}, None, +1) is Outcome.AGAINST_ONE_SEED
    # every seed the same change: the exact sign-flip test (2 / 2^n), no t-test possible
    assert st.change_p_value({"seeds": 5, "change": 3.0, "p_value": None}) == 2 / 32
    assert st.change_p_value({"seeds": 3, "change": 0.0, "p_value": None}) is None


def test_holm_family_leaves_out_tests_that_cannot_decide():
    """Tarone: a permutation test whose best possible p-value cannot pass the family's
    threshold is left out of the count (not testable); the others are Holm-corrected with
    the multiplier m."""
    from bparallel.book.section4 import statistics as st

    tests = [{"p": 0.001}, {"p": 0.02}, {"p": 0.01, "p_min": 0.01},
             {"p": 0.5, "p_min": 0.2}, {"p": None}]
    m = st.holm_family(tests)
    assert m == 3
    assert [t["decidable"] for t in tests] == [True, True, True, False, False]
    assert tests[0]["p_holm"] == pytest.approx(0.003)
    assert tests[2]["p_holm"] == pytest.approx(0.02) and tests[1]["p_holm"] == pytest.approx(0.02)
    assert tests[3]["p_holm"] is None
    undecidable = {"median": 1.0, "cells": 3, "p": 0.01, "p_min": 0.01, "decidable": False}
    assert st.rank_claim_verdict(undecidable) is st.Verdict.NOT_TESTABLE
    reversed_ = {"median": -0.8, "cells": 5, "p": 0.004, "p_min": 0.002, "p_holm": 0.01}
    assert st.rank_claim_verdict(reversed_) is st.Verdict.FAILS


def test_two_sided_rank_test_sees_a_reversal():
    from bparallel.book.section4 import statistics as st

    x = np.arange(5.0)
    agree = st.two_sided_rank_test([(x, x)] * 5, permutations=999)
    against = st.two_sided_rank_test([(x, -x)] * 5, permutations=999)
    assert agree["median"] == 1 and against["median"] == -1
    assert agree["p"] == pytest.approx(against["p"]) and against["p"] < 0.01
    assert against["p_down"] < 0.01 < against["p_up"]
