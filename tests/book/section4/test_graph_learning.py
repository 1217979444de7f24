"""Chapter 12's learning times, speed tests and the dropout check, read from manifests
(bparallel.book.section4.graph_learning)."""

from __future__ import annotations

import math

import pytest

from bparallel.book.section4 import graph_experiment as fx
from bparallel.book.section4 import graph_learning as gl
from bparallel.book.section4 import models as model_sets
from bparallel.book.verdicts import Verdict
from bparallel.transformer.design import HEADS
from bparallel.transformer.learning import learning_time
from tests.book.section4.fresh_manifests import entry, grid, write


def test_a_run_that_never_learns_has_no_learning_time():
    assert learning_time(entry("induction", 16, 42, None)) is None
    assert gl.censored_median([800, None, 1000]) == 1000
    assert gl.censored_median([None, None, 800]) is None  # the median run did not learn
    assert gl.censored_median([800, None]) is None
    assert gl.censored_median([800, 1000]) == 900
    with pytest.raises(ValueError, match="times is empty"):
        gl.censored_median([])


def test_learning_rows_and_table_censor_non_learners(tmp_path):
    write(tmp_path, grid(learn=lambda h, hs, s: None if (h, s) == (16, 43) else 1000))
    runs = model_sets.fresh_runs(tmp_path)
    rows = {(r["arm"], r["heads"]): r for r in gl.learning_rows(runs, "induction")}
    r = rows[("width", 16)]
    assert (r["learned"], r["runs"], r["times"], r["median_time"]) == (2, 3, [1000, None, 1000],
                                                                      1000)
    table = {(t["arm"], t["heads"]): t for t in gl.learning_table(list(rows.values()))}
    assert table[("fixed width", 16)]["steps to threshold, per seed"] == \
        "1,000 · not within 12,000 · 1,000"
    assert table[("fixed width", 16)]["learned"] == "2 of 3"
    # a non-learner is never given a number of steps anywhere
    out = fx.results(runs, [])
    assert out["fresh.induction.width.h16.learned"] == 2
    assert out["fresh.induction.width.h16.median_steps"] == 1000
    # one piece of code writes the counts, for the chapter's runs and under another prefix
    counts = gl.learning_counts(runs)
    assert counts and counts.items() <= out.items()
    assert counts["fresh.induction.width.h16.runs"] == 3
    assert gl.learning_counts(runs, "fresh.baseline") == {
        k.replace("fresh.", "fresh.baseline.", 1): v for k, v in counts.items()}
    with pytest.raises(ValueError, match="prefix"):
        gl.learning_counts(runs, "two words")


def test_the_learning_time_is_read_off_the_curve_by_the_in_a_row_rule(tmp_path):
    """learning_time reads the curve (three evaluations in a row at the threshold), not
    a number the manifest stored under an older rule; a touch and a fall is not learning."""
    e = entry("induction", 4, 42, 1000)
    assert learning_time(e) == 1000
    steps = list(range(0, 2001, 200))
    touch = [0.0, 0.2, 0.5, 0.91, 0.6, 0.92, 0.93, 0.95, 0.96, 0.96, 0.96]
    e = {**e, "steps_to_threshold": 600, "outcome": "budget reached",
         "curve": {"step": steps, "heldout_accuracy_predictable": touch}}
    assert learning_time(e) == 1000
    assert learning_time({**e, "curve": None, "steps_to_threshold": 600}) == 600


def test_where_a_run_trained_and_how_runs_ended_are_on_the_page(tmp_path):
    gpu, cpu = "Linux x86_64, 16 cores, NVIDIA H200 (CUDA 13.0)", "Linux x86_64, 2 cores"
    e = entry("induction", 16, 43, None)
    assert gl.trained_on(e) == "not recorded"
    assert gl.trained_on({**e, "hardware": gpu}) == "GPU"
    moved = {**e, "hardware": f"{gpu}; {cpu}",
             "segments": [{"steps": [0, 20000], "hardware": gpu},
                          {"steps": [20000, 40000], "hardware": cpu}]}
    assert gl.trained_on(moved) == "GPU then CPU"
    back = {**moved, "segments": [*moved["segments"],
                                  {"steps": [40000, 42000], "hardware": gpu}]}
    assert gl.trained_on(back) == "GPU then CPU"  # the kinds it used, each once
    entries = [{**x, "hardware": gpu if x["seed"] == 43 else cpu} for x in grid()]
    first = next(i for i, x in enumerate(entries) if x["heads"] == 1 and x["head_size"] == 64)
    entries[first] = {**entries[first], "outcome": "budget reached"}
    write(tmp_path, entries)
    runs = model_sets.fresh_runs(tmp_path)
    out = fx.results(runs, [])
    assert (out["fresh.induction.outcome.converged"], out["fresh.induction.outcome.budget_reached"],
            out["fresh.induction.outcome.not_learned"]) == (20, 1, 0)
    assert out["fresh.in_a_row"] == 3
    row = gl.learning_table(gl.learning_rows(runs, "induction"))[0]
    assert row["trained on"] == "CPU 2, GPU 1" and row["converged"] == "2 of 3"
    assert gl.machines_words(runs) == ("7 of the 21 runs of induction trained on a GPU, the "
                                       "rest on the CPU")
    hist = [{**x, "task": "histogram", "hardware": cpu} for x in grid(seeds=(42,))]
    write(tmp_path, hist, profile=model_sets.FRESH_PROFILES["histogram"])
    both = model_sets.fresh_runs(tmp_path)
    assert gl.machines_words(both) == ("7 of the 21 runs of induction and none of the 7 "
                                       "runs of histogram trained on a GPU, the rest on the CPU")
    cpu_only = model_sets.FreshRuns([{**x, "hardware": cpu} for x in both.of("histogram")])
    assert gl.machines_words(cpu_only) == "every run trained on the CPU"
    with pytest.raises(ValueError, match="no fresh-data run"):
        gl.machines_words(model_sets.FreshRuns([]))


@pytest.mark.usefixtures("one_torch_thread")
def test_the_dropout_check_scores_each_run_as_evaluated_and_as_trained(tmp_path, monkeypatch):
    """dropout_rows scores every shipped run on the first held-out sequences of its task, as
    evaluate_as_trained does; the table's medians and ranges and the recorded values (the
    floor, the runs above it, those at the threshold as trained only, those that did not
    converge) follow the rows; bad input is refused."""
    from bparallel.transformer.as_trained import evaluate_as_trained
    from bparallel.transformer.design import fresh_heldout
    from bparallel.transformer.model import ModelConfig, Transformer

    runs = model_sets.FreshRuns([entry("induction", 1, 42, 3000, head_size=16),
                                 entry("induction", 4, 42, None, head_size=16)],
                                profiles={"induction": {"profile": "fresh-tiny",
                                                        "threshold": 0.9}})
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    loaded = {("induction", h, 16, 42): Transformer(ModelConfig(n_heads=h, head_size=16,
                                                                seq_len=16)).eval()
              for h in (1, 4)}
    rows = gl.dropout_rows(runs, loaded, sequences=6, draws=2, workers=1)
    held = fresh_heldout("induction", "fresh-tiny").subset(slice(0, 6))
    want = evaluate_as_trained(loaded[("induction", 4, 16, 42)], held, draws=2)
    assert (rows[1]["evaluated"], rows[1]["as_trained"], rows[1]["spread"]) == (
        want["evaluated"], want["accuracy_predictable"], want["spread"])
    # through the metrics cache (as the chapter and the recorded measures read it): the same
    # rows, and a second call reads them instead of scoring the models again
    assert gl.dropout_rows(runs, loaded, sequences=6, draws=2, cache_dir=tmp_path,
                           workers=1) == rows
    assert len(list(tmp_path.glob("metrics-*.npz"))) == 2
    from bparallel.transformer import measure

    def no_scoring(*a, **k):
        raise AssertionError("scored again")

    monkeypatch.setattr(measure, "evaluate_as_trained", no_scoring)
    assert gl.dropout_rows(runs, loaded, sequences=6, draws=2, recorded=tmp_path,
                           workers=1) == rows
    monkeypatch.undo()
    assert [(r["learned"], r["outcome"]) for r in rows] == [(True, "converged"),
                                                            (False, "not learned")]
    with pytest.raises(ValueError, match="no weights"):
        gl.dropout_rows(runs, {}, sequences=6)
    with pytest.raises(ValueError, match="sequences"):
        gl.dropout_rows(runs, loaded, sequences=0)

    def row(h, seed, evaluated, as_trained, spread=0.004, outcome="budget reached"):
        return {"task": "histogram", "heads": h, "head_size": 64 // h, "seed": seed,
                "evaluated": evaluated, "as_trained": as_trained, "spread": spread,
                "threshold": 0.9, "outcome": outcome}

    rows = [row(1, 42, 0.40, 0.95), row(1, 43, 0.93, 0.90, spread=0.01),
            row(4, 42, 0.99, 0.97, outcome="converged"), row(4, 43, 0.95, 0.96)]
    out = gl.dropout_results(rows)
    assert out["fresh.dropout.floor"] == pytest.approx(1.0)  # the largest spread, in points
    k = "fresh.dropout.histogram"
    assert out[f"{k}.runs"] == 4 and out[f"{k}.gap_max"] == pytest.approx(55.0)
    assert out[f"{k}.gap_min"] == pytest.approx(-3.0)
    assert out[f"{k}.higher"] == 1  # +1 point is not above a floor of 1 point
    assert (out[f"{k}.trained_only"], out[f"{k}.trained_only_configs"]) == (1, 1)
    assert (out[f"{k}.unconverged"], out[f"{k}.unconverged_higher"]) == (3, 1)
    assert "fresh.budget.dropout.floor" in gl.dropout_results(rows, "budget.dropout")
    with pytest.raises(ValueError, match="name"):
        gl.dropout_results(rows, "two words")
    assert gl.dropout_results([]) == {}
    table = gl.dropout_table(rows)
    assert [t["heads x head size"] for t in table] == ["1 x 64", "4 x 16"]
    assert table[0]["gap, range (% points)"] == "-3.0 to +55.0"
    assert table[0]["gap, median (% points)"] == "+26.0"
    assert table[0]["at the threshold as trained only"] == 1
    assert table[1]["evaluated (%)"] == "97.0" and table[1]["as trained (%)"] == "96.5"
    one = gl.dropout_table([row(8, 42, 0.95, 0.94)])[0]
    assert one["gap, range (% points)"] == "-1.0"  # one run: one value, never "x to x"
    # a gap that rounds to zero has no sign ("-0.0" said a loss the runs did not show)
    tiny = gl.dropout_table([row(8, 42, 0.95, 0.9499), row(8, 43, 0.95, 0.9501),
                             row(8, 44, 0.95, 0.949)])[0]
    assert tiny["gap, median (% points)"] == "0.0"
    assert tiny["gap, range (% points)"] == "-0.1 to 0.0"


def test_the_median_learning_times_course_over_head_counts_in_words():
    """median_words: a course that never turns back rises or falls from the fewest heads to
    the most (ties on the way allowed), one that turns names its shortest and longest (all
    head counts at a tie), equal medians are one number; head counts whose median run never
    learned come first, at the budget, and the rest are read among themselves; one head
    count is said to be the only one; an arm without rows is refused."""
    def rows(medians, arm="width", budget=12000):
        return [{"arm": arm, "heads": h, "median_time": m, "budget": budget}
                for h, m in zip(HEADS[:len(medians)], medians, strict=True)]

    words = gl.median_words
    assert words(rows([800, 1200, 1200, 2200]), "width") == (
        "rises from 800 steps with 1 head to 2,200 with 16 heads")
    assert words(rows([1400, 1200, 1200, 1000]), "width") == (
        "falls from 1,400 steps with 1 head to 1,000 with 16 heads")
    assert words(rows([9200, 7000, 7000, 9200]), "width") == (
        "is shortest with 4 and 8 heads (7,000 steps) and longest with 1 and 16 heads (9,200)")
    assert words(rows([3000] * 4), "width") == "is 3,000 steps with every head count"
    assert words(rows([9200, 7000, 9000, None]), "width") == (
        "is beyond the budget of 12,000 steps with 16 heads (the median run never learned); "
        "among the others it is shortest with 4 heads (7,000 steps) and longest with 1 head "
        "(9,200)")
    assert words(rows([None, None, 4200, None], budget=6000), "width") == (
        "is beyond the budget of 6,000 steps with 1, 4 and 16 heads (the median run never "
        "learned); among the others it is 4,200 steps with 8 heads")
    assert words(rows([None] * 4), "width") == (
        "is beyond the budget of 12,000 steps with every head count (the median run never "
        "learned)")
    assert words(rows([None, 4200, 4600, 4800]) + rows([1] * 4, arm="head16"), "width") == (
        "is beyond the budget of 12,000 steps with 1 head (the median run never learned); "
        "among the others it rises from 4,200 steps with 4 heads to 4,800 with 16 heads")
    assert words(rows([800]), "width") == "is 800 steps with 1 head, the one head count trained"
    assert words(rows([None]), "width") == (
        "is beyond the budget of 12,000 steps with 1 head (the median run never learned), the "
        "one head count trained")
    with pytest.raises(ValueError, match="arm='width'"):
        words(rows([800, 900], arm="head16"), "width")


def _speed(mean, verdict, cells=5):
    return {"mean": mean, "cells": cells, "verdict": verdict}


def test_what_each_speed_test_found_is_said_by_its_corrected_verdict():
    """speed_outcome reads a speed test's verdict after Holm's correction (a significant
    reversal is as significant as support: the mean's sign says which way); speed_words
    groups a task's arms by it, significant first, each with its direction and mean, and
    leaves out an arm without a cell; a test the family has not judged, or a task without a
    cell anywhere, is refused."""
    V = Verdict
    assert gl.speed_outcome(_speed(-1.0, V.FAILS)) == "significant after the correction"
    assert gl.speed_outcome(_speed(0.9, V.HOLDS)) == "significant after the correction"
    assert gl.speed_outcome(_speed(0.3, V.HOLDS_WITH_CONDITIONS)) == (
        "significant after the correction")
    assert gl.speed_outcome(_speed(-0.6, V.NOT_SUPPORTED)) == (
        "not significant after the correction")
    assert gl.speed_outcome(_speed(1.0, V.NOT_TESTABLE, 2)) == "which its seeds cannot decide"
    with pytest.raises(ValueError, match="verdict"):
        gl.speed_outcome({"mean": 0.5, "cells": 5})
    words = gl.speed_words({"width": _speed(-0.59, V.NOT_SUPPORTED),
                            "head16": _speed(0.92, V.HOLDS),
                            "inner256": _speed(0.4, V.NOT_SUPPORTED)})
    assert words == ("with the head size fixed, more heads learn it faster (mean ρ 0.92), "
                     "significant after the correction; at the paper's width, slower (-0.59) "
                     "and at the fixed attention width, faster (0.40), neither significant "
                     "after the correction")
    words = gl.speed_words({"width": _speed(-1.0, V.FAILS), "head16": _speed(0.87, V.HOLDS),
                            "inner256": _speed(-0.95, V.FAILS)})
    assert words == ("at the paper's width, more heads learn it slower (mean ρ -1.00), with "
                     "the head size fixed, faster (0.87) and at the fixed attention width, "
                     "slower (-0.95), all 3 significant after the correction")
    words = gl.speed_words({"width": _speed(0.0, V.NOT_SUPPORTED),
                            "head16": _speed(math.nan, V.NOT_TESTABLE, 0),
                            "inner256": _speed(1.0, V.NOT_TESTABLE, 2)})
    assert words == ("at the paper's width, more heads learn it neither faster nor slower "
                     "(mean ρ 0.00), not significant after the correction; at the fixed "
                     "attention width, faster (1.00), which its seeds cannot decide")
    with pytest.raises(ValueError, match="no arm"):
        gl.speed_words({"width": _speed(math.nan, V.NOT_TESTABLE, 0)})


def test_how_a_tasks_runs_ended_is_said_from_their_manifests(tmp_path):
    """outcome_words (and outcome_counts under it) counts each outcome of the chapter's rule
    among a task's runs: every run converged, none did (the learned ones censored at the
    budget named apart from those that never learned), some did; a task without runs is
    refused."""
    def ended(outcomes):
        entries = [{**entry("histogram", 1, s, 800), "outcome": o}
                   for s, o in enumerate(outcomes, start=42)]
        write(tmp_path, entries, model_sets.FRESH_PROFILES["histogram"])
        return gl.outcome_words(model_sets.fresh_runs(tmp_path), "histogram")

    assert ended(["converged"] * 3) == "all 3 runs converged"
    assert ended(["budget reached"] * 2 + ["not learned"]) == (
        "none of the 3 runs converged: 2 learned the task and were censored at the budget, "
        "1 never learned it")
    assert ended(["converged", "budget reached"]) == (
        "1 of the 2 runs converged: 1 learned the task and was censored at the budget")
    assert ended(["converged", "not learned", "not learned"]) == (
        "1 of the 3 runs converged: 2 never learned the task")
    assert gl.outcome_counts(model_sets.fresh_runs(tmp_path), "histogram") == {
        "converged": 1, "budget reached": 0, "not learned": 2}
    with pytest.raises(ValueError, match="no shipped run"):
        gl.outcome_words(model_sets.fresh_runs(tmp_path), "induction")
