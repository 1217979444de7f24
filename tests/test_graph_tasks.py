"""Chapter support for the graph tasks (bparallel.book.graph_tasks)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bparallel.book import graph_tasks as gt
from bparallel.book.seeds import seed_interval
from bparallel.book.verdicts import Outcome, Verdict
from bparallel.transformer.data import GRAPH_TASKS
from bparallel.transformer.shipped import ship_run
from bparallel.transformer.train import HEADS

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_epochs_to_fraction():
    assert gt.epochs_to_fraction([0.1, 0.5, 0.995, 1.0, 1.0]) == 3
    assert gt.epochs_to_fraction([0.2, 0.3, 0.25]) == 2  # 99% of the final 0.25
    assert gt.epochs_to_fraction([1.0]) == 1
    with pytest.raises(ValueError, match="accuracy must be"):
        gt.epochs_to_fraction([])
    with pytest.raises(ValueError, match="fraction=0"):
        gt.epochs_to_fraction([0.5], fraction=0)


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
        rows += [_row("first", 1, s, accuracy=0.5, epochs_to_99=10),
                 _row("first", 16, s, accuracy=0.5 + d, epochs_to_99=10 + 100 * d)]
        rows += [_row("majority", 1, s, accuracy=0.5 + d * (s - 43)),
                 _row("majority", 16, s, accuracy=0.5)]
    acc = {c["task"]: c for c in gt.head_count_change(rows, "accuracy")}
    assert acc["first"]["outcome"] is Outcome.AS_CLAIMED
    assert acc["first"]["change"] == pytest.approx(0.11)
    assert acc["majority"]["outcome"] is Outcome.NOT_RESOLVED
    (slow,) = gt.head_count_change(rows, "epochs_to_99")
    assert slow["outcome"] is Outcome.AGAINST  # more epochs: slower
    one = gt.head_count_change([r for r in rows if r["seed"] == 42], "accuracy")
    assert one[0]["outcome"] is Outcome.AS_CLAIMED_ONE_SEED and one[0]["low"] is None
    with pytest.raises(ValueError, match="knockout_all.*no claimed direction"):
        gt.head_count_change(rows, "knockout_all")


def _change(task, outcome, seeds=3):
    return {"task": task, "outcome": outcome, "seeds": seeds}


def test_tally_reads_every_task_and_needs_two_seeds():
    from bparallel.book.verdicts import Verdict

    better, worse, open_ = Outcome.AS_CLAIMED, Outcome.AGAINST, Outcome.NOT_RESOLVED
    assert gt.tally([_change("first", better), _change("cycle", better)]) is Verdict.HOLDS
    assert gt.tally([_change("first", worse), _change("cycle", worse)]) is Verdict.FAILS
    assert gt.tally([_change("first", better), _change("cycle", worse)]) \
        is Verdict.HOLDS_WITH_CONDITIONS
    assert gt.tally([_change("first", open_), _change("cycle", worse)]) \
        is Verdict.NOT_SUPPORTED
    assert gt.tally([_change("first", open_)]) is Verdict.NOT_TESTABLE
    assert gt.tally([]) is Verdict.NOT_TESTABLE
    # one task with one seed has no interval: the whole claim waits for it
    assert gt.tally([_change("first", better), _change("induction", better, seeds=1)]) \
        is Verdict.NOT_TESTABLE


def test_rho_verdict_thresholds():
    from bparallel.book.verdicts import Verdict

    assert gt.rho_verdict([0.9, 0.5, 0.1]) is Verdict.HOLDS  # median 0.5
    assert gt.rho_verdict([0.2, 0.3]) is Verdict.HOLDS_WITH_CONDITIONS
    assert gt.rho_verdict([-0.56]) is Verdict.NOT_SUPPORTED
    assert gt.rho_verdict([]) is Verdict.NOT_TESTABLE


def _evidence(rows):
    """What the chapter computes before its verdicts: changes, agreement and rhos."""
    changes = {what: gt.head_count_change(rows, what)
               for what in (w for _, w in gt.CLAIMS.values() if isinstance(w, str))}
    agreement = {pair: gt.proxy_rank_agreement(rows, *pair)
                 for _, w in gt.CLAIMS.values() if isinstance(w, tuple) for pair in w}
    return changes, agreement, gt.head_claims(gt.head_cells(rows))


def _head_data(rng, agree):
    """A 4-layer, 4-head model's head study: heads that differ clearly in impact (40
    sequences), and fidelity that ranks them as the impact does (``agree``) or reversed."""
    impact = np.array([0.1, 0.9, 0.4, 0.6])[None, :, None] + rng.normal(0, 0.02, (4, 4, 40))
    fid = np.tile(impact.mean(-1) * (1 if agree else -1), 1)
    return {"impact": impact, "fidelity.paper": -fid, "fidelity.definition": fid}


def test_claim_verdicts_from_rows():
    from bparallel.book.verdicts import Verdict

    rows = []
    rng = np.random.default_rng(0)
    for s, d in zip((42, 43, 44), (0.10, 0.12, 0.11), strict=True):
        for h, acc, mix in ((1, 0.5, 9.0), (4, 0.55, 8.0), (8, 0.58, 7.5), (16, 0.5 + d, 7.0)):
            extra = {"head_data": _head_data(rng, True)} if h == 4 else {}
            rows.append(_row("first", h, s, accuracy=acc, epochs_to_99=10 + h * (1 + d),
                             **{"mixing.definition": mix * (1 + d),
                                "fidelity.definition": 20.0 - h * (1 + d)}, **extra))
    out = {v["slug"]: v for v in gt.claim_verdicts(*_evidence(rows))}
    assert list(out) == list(gt.CLAIMS)
    assert out["mixing"]["verdict"] is Verdict.HOLDS  # 9 -> 7 steps (x 1.1) in every seed
    assert out["mixing"]["evidence"] == "first: as claimed"
    assert out["fidelity"]["verdict"] is Verdict.FAILS  # 19 -> 4 (about)
    assert out["accuracy"]["verdict"] is Verdict.HOLDS
    assert out["speed"]["verdict"] is Verdict.FAILS  # 11 -> 28 epochs (about)
    # faster mixing goes with higher accuracy, less fidelity with it: median of +1 and -1
    assert out["rank_accuracy"]["verdict"] is Verdict.NOT_SUPPORTED
    assert out["rank_accuracy"]["evidence"].startswith("fidelity: median ρ")
    # as defined, fidelity ranks the heads as their impact: 12 reliable cells, rho 1; the
    # published code's reversed ranking is not supported: holds with conditions (as defined)
    assert out["heads"]["verdict"] is Verdict.HOLDS_WITH_CONDITIONS
    assert out["heads"]["evidence"] == "first: holds with conditions"
    tests = {t["ranking"]: t for t in _evidence(rows)[2]}
    assert tests["fidelity.definition"]["median"] == 1.0
    assert tests["fidelity.definition"]["verdict"] is Verdict.HOLDS
    assert tests["fidelity.paper"]["verdict"] is Verdict.NOT_SUPPORTED
    assert tests["fidelity.paper"]["reliable_cells"] == 12
    few = gt.claim_verdicts(*_evidence(rows[:4]))  # one seed
    assert {v["slug"]: v["verdict"] for v in few}["mixing"] is Verdict.NOT_TESTABLE
    changes, agreement, rhos = _evidence(rows)
    del changes["accuracy"]
    with pytest.raises(KeyError, match="accuracy"):
        gt.claim_verdicts(changes, agreement, rhos)


def test_proxy_rank_agreement():
    rows = [_row("first", h, 42, **{"mixing.definition": 10.0 / h, "accuracy": h / 20.0,
                                     "fidelity.definition": 1.0})
            for h in HEADS]
    rows += [_row("majority", h, 42, **{"mixing.definition": float(h), "accuracy": h / 20.0,
                                        "fidelity.definition": float(h)}) for h in HEADS]
    out = gt.proxy_rank_agreement(rows, "mixing.definition", "accuracy")
    assert out["first"] == pytest.approx(1.0)  # faster mixing, higher accuracy
    assert out["majority"] == pytest.approx(-1.0)
    assert out["median"] == pytest.approx(0.0) and out["tasks"] == 2
    fid = gt.proxy_rank_agreement(rows, "fidelity.definition", "accuracy")
    assert fid["first"] is None and fid["tasks"] == 1  # a constant proxy ranks nothing


def test_model_row_from_measures():
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
    heads = {"knockout": {"none": {"accuracy": 0.9, "margin": 3.0},
                          "all": {"accuracy": 0.01, "margin": -1.0},
                          "L1": {"accuracy": 0.5, "margin": 1.0},
                          "L2": {"accuracy": 0.8, "margin": 2.0}},
             "impact": impact, "reliability": np.array([0.9, 0.1]),
             "fidelity": fidelity}
    meta = {"curve": {"heldout_accuracy_predictable": [0.2, 0.895, 0.9]}}  # 0.895 >= 0.891
    row = gt.model_row(("first", H, 43), defined, heads, meta)
    assert row["accuracy"] == 0.9 and row["epochs_to_99"] == 2
    assert row["mixing.definition"] == 6.0
    assert (row["fidelity.paper"], row["fidelity.definition"]) == (10.0, 20.0)
    assert row["t_mix"] == math.inf  # median of the layer medians 4 and inf
    assert row["rollout_min"] == pytest.approx(0.0)
    assert (row["knockout_all"], row["knockout_L1"]) == (0.01, 0.5)
    np.testing.assert_array_equal(row["head_data"]["impact"], impact)
    np.testing.assert_array_equal(row["head_data"]["fidelity.paper"], fidelity["paper"])
    assert "accuracy" not in gt.model_row(("first", H, 43), defined, heads)


def test_graph_models_quick_trains_and_shipped_loads(tmp_path):
    runs = tmp_path / "runs"
    bundle = gt.graph_models("quick", runs_dir=runs, models_root=tmp_path / "models",
                             train_profile="tiny", threads=1)
    assert bundle.profile == "quick" and "QUICK PROFILE" in bundle.note
    assert sorted(bundle.models) == sorted((t, h, 42) for t in GRAPH_TASKS for h in HEADS)
    assert gt.resolve_profile("auto", tmp_path / "models") == "quick"
    for task in GRAPH_TASKS:
        ship_run(runs / "tiny", tmp_path / "models" / task, profile="tiny")
        assert gt.complete_seeds(tmp_path / "models" / task, task) == [42]
    assert gt.resolve_profile("auto", tmp_path / "models") == "paper"
    shipped = gt.graph_models("auto", models_root=tmp_path / "models")
    assert shipped.profile == "paper" and sorted(shipped.models) == sorted(bundle.models)
    assert shipped.seeds == {t: [42] for t in GRAPH_TASKS}
    for key, model in shipped.models.items():
        assert all((a == b).all() for a, b in zip(model.state_dict().values(),
                                                  bundle.models[key].state_dict().values(),
                                                  strict=True))
        assert "curve" in shipped.metas[key]
    with pytest.raises(ValueError, match="profile='best'"):
        gt.graph_models("best")
    with pytest.raises(FileNotFoundError, match="no seed of 'first'"):
        gt.graph_models("paper", models_root=tmp_path / "nothing")


def test_evidence_covers_every_claim_and_its_results_are_the_numbers():
    rows = []
    rng = np.random.default_rng(1)
    for s, d in zip((42, 43, 44), (0.10, 0.12, 0.11), strict=True):
        for h in HEADS:
            extra = {"head_data": _head_data(rng, False)} if h == 4 else {}
            rows.append(_row("first", h, s, accuracy=0.5 + d * h / 16, epochs_to_99=10 + h,
                             **{q: 1.0 + h * d for q in gt.CHANGED if q not in
                                ("accuracy", "epochs_to_99")}, **extra))
    changes, agreement, head_tests = gt.evidence(rows)
    assert set(changes) == set(gt.CHANGED) and len(agreement) == 8 and len(head_tests) == 2
    # the verdicts find every piece of evidence they judge
    assert [v["slug"] for v in gt.claim_verdicts(changes, agreement, head_tests)] == \
        list(gt.CLAIMS)
    out = gt.evidence_results(changes, agreement, head_tests)
    assert out["change.accuracy.first"] == changes["accuracy"][0]["change"]
    assert out["change.accuracy.first"] == pytest.approx(0.11 * 15 / 16)
    assert out["agreement.mixing.paper.accuracy.median"] == agreement[
        ("mixing.paper", "accuracy")]["median"]
    assert out["heads.first.reliable_cells"] == 12 and out["heads.first.cells"] == 12
    assert out["heads.first.definition.median"] == -1.0  # reversed here
    assert out["verdict.heads.first"] == list(Verdict).index(Verdict.REPRODUCED_PUBLISHED_ONLY)
    assert "heads.first.definition.median" not in gt.evidence_results(changes, agreement, [])


def test_summary_results_names_every_task_and_head_count():
    summary = [_row("first", h, None, accuracy=0.9, epochs_to_99=3.0, knockout_all=k)
               for h, k in ((1, 0.01), (16, 0.03))]
    paper = [_row("copy", 1, None, knockout_all=1.0)]
    out = gt.summary_results(summary, paper)
    assert out["knockout.first.h16.all.accuracy"] == 0.03
    assert out["first.h1.epochs_to_99"] == 3.0 and out["knockout.copy.h1.all.accuracy"] == 1.0
    assert (out["knockout.all.min"], out["knockout.all.max"]) == (0.01, 0.03)  # graph tasks only


def test_mean_interval_formats_one_seed_several_and_infinity():
    row = {"a": 0.5, "a.low": 0.25, "a.high": 0.75, "b": 12.0, "c": math.inf}
    assert gt.mean_interval(row, "a", scale=100) == "50.0 [25.0, 75.0]"
    assert gt.mean_interval(row, "a", 2) == "0.50 [0.25, 0.75]"
    assert gt.mean_interval(row, "b") == "12.0"  # one seed: no interval, same decimals
    assert gt.mean_interval(row, "c") == "∞"


def test_the_graph_tasks_need_attention_and_their_table_says_so():
    rows = {r["task"]: r for r in gt.task_rows(num=50)}
    assert list(rows) == ["copy", "cycle", *GRAPH_TASKS]
    assert rows["copy"]["target = current token"] == 1.0  # copy: no attention needed
    assert rows["cycle"]["target = current token"] < 0.02
    for task in GRAPH_TASKS:
        assert rows[task]["target = current token"] < 0.5, task
        assert rows[task]["training"] == f"{gt.training_epochs(task)} epochs"
    assert rows["induction"]["predictable positions"] == pytest.approx(0.49, abs=0.02)
    # majority: above one in four (a token just seen is more often the mode), below half
    assert 0.25 < gt.no_attention_ceiling("majority", 200) < 0.5


def test_mean_interval_clips_at_zero_and_reads_large_values():
    row = {"t": 9.84e8, "t.low": -2.4e9, "t.high": 4.4e9, "f": 0.001, "f.low": -0.002,
           "f.high": 0.003}
    assert gt.mean_interval(row, "t") == "9.84e+08 [0.0, 4.4e+09]"
    assert gt.mean_interval(row, "f", 2) == "0.00 [0.00, 0.00]"  # never "-0.00"


def test_mean_interval_shows_a_whole_count_without_decimals():
    row = {"epochs_to_99": 1.0, "epochs_to_99.low": 1.0, "epochs_to_99.high": 1.0,
           "accuracy": 1.0, "accuracy.low": 1.0, "accuracy.high": 1.0}
    assert gt.mean_interval(row, "epochs_to_99") == "1 [1, 1]"
    assert gt.mean_interval(row, "accuracy") == "1.0 [1.0, 1.0]"  # a share keeps its decimals
    row.update({"epochs_to_99": 4 / 3, "epochs_to_99.high": 2.1})
    assert gt.mean_interval(row, "epochs_to_99") == "1.3 [1.0, 2.1]"  # a mean of counts


def test_summary_table_columns_per_table_and_bad_name():
    row = {"task": "first", "heads": 4, "seeds": 3, "accuracy": 0.5, "accuracy.low": 0.25,
           "accuracy.high": 0.75, "knockout_all": 0.01, "epochs_to_99": 7.0}
    knock = gt.summary_table([row], "tbl-graph-knockouts")
    assert knock == [{"task": "first", "heads": 4, "seeds": 3,
                      "accuracy, intact (%)": "50.0 [25.0, 75.0]",
                      "accuracy, no attention (%)": "1.0"}]
    learn = gt.summary_table([row], "tbl-graph-learning")[0]
    assert "seeds" not in learn and learn["epochs to 99% of it"] == "7"  # one seed, whole
    for name, (columns, _) in gt.TABLES.items():
        assert {q for _, q, _, _ in columns} <= set(gt.SUMMARY), name
    with pytest.raises(ValueError, match="name='tbl-x'"):
        gt.summary_table([row], "tbl-x")


def test_verdict_rows_and_results():
    from bparallel.book.verdicts import Verdict

    verdicts = [{"slug": "mixing", "claim": "c", "verdict": Verdict.HOLDS, "evidence": "e"}]
    assert gt.verdict_rows(verdicts) == [{"claim": "c", "verdict": Verdict.HOLDS,
                                          "evidence": "e"}]
    assert gt.verdict_results(verdicts) == {"verdict.mixing": list(Verdict).index(Verdict.HOLDS)}


def test_paper_beside_checks_the_profile_and_reads_no_models_from_an_empty_folder(tmp_path):
    with pytest.raises(ValueError, match="profile='auto'"):
        gt.paper_beside("auto", models_root=tmp_path)
    assert gt.paper_beside("paper", models_root=tmp_path) == ({}, {})
