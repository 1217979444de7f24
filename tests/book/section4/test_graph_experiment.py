"""Chapter 12's controlled experiment read from manifests: its results, tests and tables
(bparallel.book.section4.graph_experiment)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bparallel.book.section4 import graph_experiment as fx
from bparallel.book.section4 import models as model_sets
from bparallel.book.section4.statistics import over_tasks
from bparallel.book.verdicts import HOLDING, Outcome, Verdict
from tests.book.section4.chapter_pages import chapter_12_text
from tests.book.section4.fresh_manifests import entry, grid, write

ROOT = Path(__file__).resolve().parents[3]


def test_fresh_runs_reads_manifests_and_knows_the_grid(tmp_path):
    write(tmp_path, [*grid(seeds=(42,)), entry("induction", 16, 42, None, factor=5)])
    runs = model_sets.fresh_runs(tmp_path)
    assert len(runs.entries) == 7 and len(runs.extended) == 1  # the 5x run apart
    assert runs.seeds("induction", "width") == [42] == runs.seeds("induction", "head16")
    assert runs.seeds("majority", "width") == [] and runs.of("majority") == []
    (ind, maj, hist) = fx.grid_rows(runs)
    # the design: 10 configurations (three arms, 4 x 16 and 16 x 16 shared) x 5 seeds
    assert ind["models shipped"] == "7 of 50" and maj["models shipped"] == "0 of 50"
    assert maj["complete seeds, fixed width"] == "none yet"
    assert ind["complete seeds, fixed attention width"] == "none yet"
    assert hist["task"] == "histogram" and hist["models shipped"] == "0 of 50"
    assert fx.design_models() == 50 and fx.results(runs, [])["fresh.design.models"] == 50
    assert fx.design_configurations() == 10  # 4 x 3 arms, 4 x 16 and 16 x 16 shared
    with pytest.raises(ValueError, match="tasks='first'"):
        model_sets.fresh_runs(tmp_path, tasks=("first",))


def test_configurations_state_head_size_and_parameters():
    rows = {r["heads"]: r for r in fx.configurations()}
    assert rows[16]["fixed width: head size"] == 4 and rows[16]["fixed head size: head size"] == 16
    assert rows[4]["fixed width: parameters"] == rows[4]["fixed head size: parameters"] == 172800
    assert rows[1]["fixed width: parameters"] == 172800  # the paper's: one parameter count
    assert rows[16]["fixed head size: parameters"] > rows[8]["fixed head size: parameters"]


def test_speed_tests_rank_heads_with_censored_runs_last(tmp_path):
    # fixed width: more heads slower, 16 heads never learn; fixed head size: more heads faster
    def learn(h, hs, s):
        if hs == 16 and h != 4:
            return {1: 2000, 8: 1000, 16: 600}[h]
        return None if h == 16 else 800 + 100 * h
    write(tmp_path, grid(learn=learn))
    tests = fx.speed_tests(model_sets.fresh_runs(tmp_path), "induction")
    assert tests["width"]["median"] == -1.0 and tests["width"]["cells"] == 3
    # two-sided: more heads significantly slower is a reversal, so the claim fails
    assert tests["width"]["verdict"] is Verdict.FAILS
    assert tests["head16"]["median"] == 1.0 and tests["head16"]["verdict"] is Verdict.HOLDS
    write(tmp_path, grid(seeds=(42,), learn=learn))
    one = fx.speed_tests(model_sets.fresh_runs(tmp_path), "induction")
    assert one["head16"]["verdict"] is Verdict.NOT_TESTABLE  # one seed: one cell


def test_early_step_is_before_every_run_learned(tmp_path):
    write(tmp_path, grid(learn=lambda h, hs, s: 900 + 100 * h))
    runs = model_sets.fresh_runs(tmp_path)
    assert fx.early_step(runs, "induction") == 800  # first crossing at 1,000
    assert fx.early_step(runs, "majority") is None
    write(tmp_path, grid(learn=lambda h, hs, s: 0))
    assert fx.early_step(model_sets.fresh_runs(tmp_path), "induction") is None


def test_prediction_across_and_within_configurations(tmp_path):
    # the proxies say which run learns first: better graphs (quality) learn earlier
    def quality(h, hs, s):
        return 10.0 - 0.1 * h - 0.01 * (s - 42)

    write(tmp_path, grid(learn=lambda h, hs, s: 1000 + 100 * h + 10 * (s - 42),
                         quality=quality))
    runs = model_sets.fresh_runs(tmp_path)
    tests = fx.prediction_tests(runs, "induction")
    for name in ("fidelity.definition", "mixing.definition", "t_mix", "rollout_min"):
        assert tests[f"across.width.{name}"]["median"] == 1.0, name
        assert tests[f"across.width.{name}"]["verdict"] is Verdict.HOLDS
        assert tests[f"within.{name}"]["median"] == 1.0 and tests[f"within.{name}"]["cells"] == 7
    # three seeds: the exact test of the mean rho decides perfect orderings even after Holm
    # over the chapter's family (the median test's null could not)
    verdicts = {v["slug"]: v for v in fx.claim_verdicts(runs)}
    assert verdicts["rank_speed.width"]["verdict"] is Verdict.HOLDS
    assert verdicts["speed.width"]["verdict"] is Verdict.FAILS
    assert "cannot decide" not in verdicts["speed.width"]["evidence"]
    # six seeds can: the proxies rank the runs, and more heads learn significantly later
    write(tmp_path, grid(seeds=range(42, 48), learn=lambda h, hs, s: 1000 + 100 * h + 10 * (s - 42),
                         quality=quality))
    verdicts = {v["slug"]: v for v in fx.claim_verdicts(model_sets.fresh_runs(tmp_path))}
    assert verdicts["rank_speed.width"]["verdict"] is Verdict.HOLDS
    assert verdicts["rank_within"]["verdict"] is Verdict.HOLDS
    assert verdicts["speed.width"]["verdict"] is Verdict.FAILS  # more heads: later
    assert verdicts["speed"]["verdict"] is Verdict.FAILS  # a failing arm fails the claim
    assert "Holm p" in verdicts["speed.width"]["evidence"]


def test_claim_verdicts_one_row_per_arm_and_one_for_both(tmp_path):
    write(tmp_path, grid(seeds=(42,)))
    verdicts = fx.claim_verdicts(model_sets.fresh_runs(tmp_path))
    slugs = [v["slug"] for v in verdicts]
    for slug in fx.CLAIMS:
        assert slug in slugs
        if slug != "rank_within":
            assert {f"{slug}.width", f"{slug}.head16", f"{slug}.inner256"} <= set(slugs)
    together = [v for v in verdicts if v["arm"] == fx.ALL_ARMS == "all arms"]
    assert [v["slug"] for v in together] == list(fx.CLAIMS)
    assert all(v["verdict"] is Verdict.NOT_TESTABLE for v in verdicts)  # one seed
    rows = fx.verdict_rows(verdicts)
    assert set(rows[0]) == {"claim", "arm", "verdict", "evidence"}
    assert all(v["condition"] == "" for v in verdicts)  # no verdict holds with conditions
    out = fx.results(model_sets.fresh_runs(tmp_path), verdicts)
    assert out["verdict.speed"] == list(Verdict).index(Verdict.NOT_TESTABLE)
    assert out["fresh.induction.early_step"] == 800 and out["fresh.induction.models"] == 7
    # the proxies are all equal here: no cell has a defined rho, nothing is recorded
    assert not any(k.startswith("fresh.induction.across.") for k in out)
    # proxies that differ: the across test has a cell (one seed), within none
    write(tmp_path, grid(seeds=(42,), quality=lambda h, hs, s: 10.0 - 0.1 * h))
    runs = model_sets.fresh_runs(tmp_path)
    out = fx.results(runs, fx.claim_verdicts(runs))
    assert out["fresh.induction.across.width.fidelity.definition.cells"] == 1
    assert out["fresh.induction.across.width.fidelity.definition.mean"] == 1.0  # both fall
    assert "fresh.induction.within.fidelity.definition.mean" not in out


def test_probe_at_reads_layer_means_and_an_infinite_mixing_time():
    e = entry("induction", 4, 42, 1000, quality=2.0)
    first = fx.probe_at(e, 0)
    assert first["step"] == 0 and first["fidelity.definition"] == 2.5 and first["t_mix"] == 18.0
    e["probes"]["worst_case.definition"][0] = [5.0, None, None, 7.0]
    assert fx.probe_at(e, 0)["t_mix"] == math.inf  # median of 5, 7, inf, inf
    assert fx.probe_at(e)["step"] == e["probes"]["step"][-1]


def test_condition_rows_and_finite_accuracy(tmp_path):
    write(tmp_path, grid(seeds=(42,)))
    finite = fx.finite_accuracy({("induction", 16, 42): [0.01, 0.012],
                                 ("induction", 16, 43): [0.01, 0.014],
                                 ("induction", 1, 42): [0.5, 1.0]})
    assert finite == {"induction": {1: 1.0, 16: pytest.approx(0.013)}}
    rows = {r["heads"]: r for r in fx.condition_rows(model_sets.fresh_runs(tmp_path), finite)}
    assert rows[16]["5,000 sequences: final accuracy (%)"] == "1.3"
    assert rows[16]["fresh data: learned"] == "1 of 1"
    assert rows[4]["5,000 sequences: final accuracy (%)"] == "—"


def test_prediction_table_and_evidence_words(tmp_path):
    write(tmp_path, grid(seeds=(42,), learn=lambda h, hs, s: 1000 + 100 * h,
                         quality=lambda h, hs, s: 10.0 - 0.1 * h))
    runs = model_sets.fresh_runs(tmp_path)
    rows = fx.prediction_table(runs)
    assert len(rows) == len(fx.PROXIES)  # induction only: majority has no runs
    # the chapter's tests already run give the same table
    assert fx.prediction_table(runs, fx.chapter_tests(runs)["prediction"]) == rows
    fid = next(r for r in rows if r["proxy at the early step"] == "minimax fidelity, as defined")
    assert fid["across heads, fixed width"].startswith("mean ρ 1.00 (p ")
    assert fid["across heads, fixed width"].endswith(", 1 cell)")
    assert fid["within configurations"] == "—"  # one seed per configuration
    ev = {v["slug"]: v["evidence"] for v in fx.claim_verdicts(runs)}
    # quality falls with the heads here, so their mixing slows: against the claim
    assert ev["mixing.width"] == (
        "induction, published code: against the claim (one seed), not testable with 1 paired "
        "seed of 3; induction, as defined: against the claim (one seed), not testable with 1 "
        "paired seed of 3")


def test_a_task_short_of_three_seeds_never_changes_another_tasks_verdicts(tmp_path):
    """Claims are judged per task: histogram with one seed is named not testable in the
    evidence and set aside, so every verdict is induction's alone (the rule that replaced
    "not testable while any task has one seed", session 18)."""
    quality = lambda h, hs, s: 10.0 - 0.1 * h - 0.01 * (s - 42)  # noqa: E731
    write(tmp_path, grid(learn=lambda h, hs, s: 1000 + 100 * h + 10 * (s - 42),
                         quality=quality))
    alone = {v["slug"]: v["verdict"] for v in fx.claim_verdicts(model_sets.fresh_runs(tmp_path))}
    hist = [{**e, "task": "histogram"} for e in grid(seeds=(42,), quality=quality)]
    write(tmp_path, hist, profile=model_sets.FRESH_PROFILES["histogram"])
    runs = model_sets.fresh_runs(tmp_path)
    assert runs.of("histogram") and runs.seeds("histogram", "width") == [42]
    verdicts = fx.claim_verdicts(runs)
    assert {v["slug"]: v["verdict"] for v in verdicts} == alone
    ev = {v["slug"]: v["evidence"] for v in verdicts}
    assert "histogram, as defined: " in ev["fidelity.width"]
    assert "not testable with 1 paired seed of 3" in ev["fidelity.width"]
    assert over_tasks([Verdict.HOLDS, Verdict.NOT_TESTABLE]) is Verdict.HOLDS
    assert over_tasks([Verdict.NOT_TESTABLE]) is Verdict.NOT_TESTABLE
    assert over_tasks([]) is Verdict.NOT_TESTABLE

def test_results_read_the_chapters_tests_as_computing_them_again_would(tmp_path):
    write(tmp_path, grid(quality=lambda h, hs, s: 10.0 - 0.1 * h - 0.01 * (s - 42)))
    runs = model_sets.fresh_runs(tmp_path)
    tests = fx.chapter_tests(runs)
    verdicts = fx.claim_verdicts(runs, 0.95, tests)
    assert fx.results(runs, verdicts, tests) == fx.results(runs, verdicts)


def test_the_family_table_writes_every_test_for_a_reader(tmp_path):
    """The chapter's family table: a row per test Holm runs over, its effect and the
    smallest effect it could find in significant digits (fmt_sig: no ``e`` notation, the
    effect signed), p-values through fmt_p; the paired changes' effects are the tests'."""
    from bparallel.book.words import fmt_p, fmt_sig

    write(tmp_path, grid(quality=lambda h, hs, s: 10.0 - 0.1 * h - 0.01 * (s - 42)))
    runs = model_sets.fresh_runs(tmp_path)
    tests = fx.chapter_tests(runs)
    rows = fx.family_table(tests)
    changes = [(q, c) for by_q in tests["changes"].values() for q, cs in by_q.items()
               for c in cs if c["seeds"] >= fx.MIN_PAIRED_SEEDS]
    assert changes and len(rows) >= len(changes)
    for row, (q, c) in zip(rows[:len(changes)], changes, strict=True):  # changes first
        unit, factor = fx.CHANGE_UNITS[q]
        # in the quantity's unit (a browser test: no bare "N.0" under a header without one)
        assert row["effect"] == f"{fmt_sig(c['change'] * factor, 3, sign=True)} {unit}"
        assert row["smallest it could find"] == "—" or \
            row["smallest it could find"].endswith(f" {unit}")
        assert row["p"] == fmt_p(c.get("p")) and row["Holm p"] == fmt_p(c.get("p_holm"))
    assert {u for u, _ in fx.CHANGE_UNITS.values()} == {"steps", "points"}
    assert fx.CHANGE_UNITS["accuracy"] == ("points", 100.0)  # stored as a fraction
    for row in rows:
        for column in ("effect", "smallest it could find", "p", "Holm p"):
            assert "e+" not in row[column] and "e-" not in row[column], (column, row)
        assert "-0.00" not in row["effect"] and "+0.00" not in row["effect"], row
    rank = fx._rank_row("t", "induction", "all", {"cells": 3, "mean": -0.001, "p": 1.0,
                                                  "p_holm": 1.0, "verdict": "not supported"})
    assert rank["effect"] == "mean ρ 0.00"


def test_a_verdict_holding_with_conditions_names_its_condition_in_the_verdict_cell(
        tmp_path, monkeypatch):
    """Issue #45, item 4: where *holds with conditions* stays, the verdict cell says where
    the claim holds, in a few words; other verdicts carry no condition."""
    assert fx.condition_words(Verdict.HOLDS, ["induction"]) == ""
    assert fx.condition_words(Verdict.HOLDS_WITH_CONDITIONS,
                              ["induction, published code"]) == "only induction, published code"
    row = {"claim": "c", "arm": "fixed width", "verdict": Verdict.HOLDS_WITH_CONDITIONS,
           "evidence": "e", "condition": "only induction"}
    cell = fx.verdict_rows([row])[0]["verdict"]
    assert cell == "{verdict}`holds with conditions`: only induction"
    # every verdict cell is written by the one cell function, with or without a condition
    assert fx.verdict_rows([{**row, "verdict": Verdict.FAILS, "condition": ""}])[0][
        "verdict"] == "{verdict}`fails`"
    with pytest.raises(ValueError, match="names its condition"):
        fx.verdict_rows([{**row, "condition": ""}])
    # the arms together: where an arm holds, or each arm's own conditions
    HWC, H, F = Verdict.HOLDS_WITH_CONDITIONS, Verdict.HOLDS, Verdict.FAILS
    assert fx.arms_condition(HWC, {"width": HWC, "head16": H, "inner256": HWC}) == \
        "in every arm; with conditions in fixed width and fixed attention width"
    assert fx.arms_condition(HWC, {"width": HWC, "head16": HWC, "inner256": HWC}) == \
        "in every arm, with that arm's conditions"
    assert fx.arms_condition(HWC, {"width": Verdict.NOT_SUPPORTED, "head16": H,
                                   "inner256": HWC}) == \
        "only fixed head size; fixed attention width"
    assert fx.arms_condition(F, {"width": F, "head16": H, "inner256": HWC}) == ""
    every = {"width": HWC, "head16": HWC, "inner256": HWC}
    assert fx.arms_condition(HWC, every, dict.fromkeys(every, "only induction")) == \
        "only induction, in every arm"
    assert fx.arms_condition(HWC, every, {"width": "only histogram, as defined",
                                          "head16": "only induction, published code",
                                          "inner256": "only induction"},
                             "tasks and modes") == "in every arm, for some tasks and modes"
    assert fx.arms_condition(HWC, {"width": HWC, "head16": H, "inner256": HWC},
                             {"width": "only induction", "inner256": "only histogram"}) == (
        "in every arm; with conditions in fixed width (only induction) and fixed attention "
        "width (only histogram)")
    # from runs: the arms combined hold with conditions exactly where an arm holds
    quality = lambda h, hs, s: 10.0 - 0.1 * h - 0.01 * (s - 42)  # noqa: E731
    write(tmp_path, grid(learn=lambda h, hs, s: 1000 + 100 * h + 10 * (s - 42),
                         quality=quality))
    monkeypatch.setattr(fx, "_rank_verdict", lambda tests, prefix: (
        Verdict.HOLDS if prefix == "across.width." else Verdict.NOT_SUPPORTED))
    v = {v["slug"]: v for v in fx.claim_verdicts(model_sets.fresh_runs(tmp_path))}
    assert v["rank_speed.width"]["verdict"] is Verdict.HOLDS
    assert v["rank_speed"]["verdict"] is Verdict.HOLDS_WITH_CONDITIONS
    assert v["rank_speed"]["condition"] == "only fixed width"
    assert v["rank_speed.head16"]["condition"] == ""
    # the arms' row names each arm's verdict, so a reader sees where it holds and fails
    assert v["rank_speed"]["evidence"] == ("fixed width: holds; fixed head size: not "
                                           "supported; fixed attention width: not testable "
                                           "(set aside)")  # the grid has no inner256 models
    assert fx.arms_evidence({"width": F, "head16": H, "inner256": Verdict.NOT_TESTABLE}) == (
        "fixed width: fails; fixed head size: holds; fixed attention width: not testable "
        "(set aside)")
    assert fx.arms_evidence({"width": HWC, "head16": F}, {"width": "only induction",
                                                          "head16": "ignored: it fails"}) == (
        "fixed width: holds with conditions (only induction); fixed head size: fails")


def _rank_tests(verdicts, prefix="across.width."):
    """Hand-made rank tests of the five proxies: a verdict each, its mean and p-values."""
    signs = {Verdict.HOLDS: 0.9, Verdict.HOLDS_WITH_CONDITIONS: 0.3, Verdict.FAILS: -0.9,
             Verdict.NOT_SUPPORTED: 0.1, Verdict.NOT_TESTABLE: float("nan")}
    out = {}
    for i, name in enumerate(fx.RANK_PROXIES):
        v = verdicts.get(name, Verdict.NOT_SUPPORTED)
        testable = v is not Verdict.NOT_TESTABLE
        out[prefix + name] = {"verdict": v, "mean": signs[v], "cells": 5 if testable else 0,
                              "p": 0.001 * (i + 1) if v not in (Verdict.NOT_SUPPORTED,
                                                                 Verdict.NOT_TESTABLE)
                              else (0.2 + 0.1 * i if testable else float("nan")),
                              "p_holm": (0.01 * (i + 1) if v is not Verdict.NOT_SUPPORTED
                                         else 1.0) if testable else None}
    return out


def test_a_rank_claim_names_the_proxies_that_decide_it_and_a_reversal_is_never_outvoted():
    F, H, HWC, NS = (Verdict.FAILS, Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS,
                     Verdict.NOT_SUPPORTED)
    # a proxy that ranks the claimed way does not outvote one that ranks the wrong way
    mixed = _rank_tests({"mixing.paper": H, "fidelity.paper": F})
    assert fx._mode_decision(mixed, "across.width.", fx.RANK_MODES[0]) == \
        (F, ["fidelity.paper"])
    assert fx._rank_verdict(mixed, "across.width.") is F
    words = fx._rank_evidence(mixed, "across.width.")
    assert words == "minimax fidelity, published code: mean ρ -0.90 against the claim, " \
        "Holm p 0.020"
    # the best of the holding proxies decides a mode; both modes are named
    good = _rank_tests({"mixing.paper": HWC, "fidelity.paper": H, "t_mix": H})
    assert fx._mode_decision(good, "across.width.", fx.RANK_MODES[0]) == \
        (H, ["mixing.paper", "fidelity.paper"])
    assert fx._rank_verdict(good, "across.width.") is H
    words = fx._rank_evidence(good, "across.width.")
    assert "Algorithm 1, published code: mean ρ 0.30 as claimed, Holm p 0.010" in words
    assert words.endswith("Definition 2.7: mean ρ 0.90 as claimed, Holm p 0.050")
    # none resolves: the nearest is named, and that none resolves
    none = _rank_tests({})
    assert fx._rank_verdict(none, "across.width.") is NS
    assert fx._rank_evidence(none, "across.width.") == (
        "no proxy resolves; the nearest, Algorithm 1, published code: mean ρ 0.10, "
        "Holm p 1.000")
    untested = _rank_tests(dict.fromkeys(fx.RANK_PROXIES, Verdict.NOT_TESTABLE))
    assert fx._rank_verdict(untested, "across.width.") is Verdict.NOT_TESTABLE
    assert fx._rank_evidence(untested, "across.width.") == "no proxy could be tested"


def test_before_learning_means_no_run_above_its_no_attention_ceiling(tmp_path):
    """Issue #45, item 5: the early step is before any run reached its threshold *and*
    where no run is more than EARLY_MARGIN above what a model without attention gets (0 for
    induction): one run already at 30% at step 400 moves the early step back to 200."""
    runs_grid = grid()
    write(tmp_path, runs_grid)
    before = fx.early_step(model_sets.fresh_runs(tmp_path), "induction")
    # the first run learns at step 1,000 (one head): the last probe before it
    assert before == max(s for s in runs_grid[0]["probes"]["step"] if s < 1000)
    e = runs_grid[5]
    k = e["probes"]["step"].index(before)
    e["probes"]["accuracy_predictable"][k] = fx.EARLY_MARGIN + 0.25  # above the ceiling
    write(tmp_path, runs_grid)
    after = fx.early_step(model_sets.fresh_runs(tmp_path), "induction")
    assert after == max(s for s in e["probes"]["step"] if s < before)
    e["probes"]["accuracy_predictable"][k] = fx.EARLY_MARGIN  # at the limit: still before
    write(tmp_path, runs_grid)
    assert fx.early_step(model_sets.fresh_runs(tmp_path), "induction") == before


def test_where_a_change_claim_holds_names_a_task_once_when_every_mode_holds():
    """A claim judged in both modes that holds on induction in both reads "only induction",
    not "induction, published code; induction, as defined"."""
    A, N = Outcome.AS_CLAIMED, Outcome.NOT_RESOLVED
    qs = ("fidelity.paper", "fidelity.definition")
    changes = {q: [{"task": "induction", "quantity": q, "outcome": A},
                   {"task": "histogram", "quantity": q,
                    "outcome": A if q.endswith("paper") else N}] for q in qs}
    assert fx._holding_places(changes, qs) == ["induction", "histogram, published code"]
    assert fx._holding_places({"t_mix": changes["fidelity.paper"]}, ("t_mix",)) == \
        ["induction", "histogram"]
    assert fx._holding_places({q: [] for q in qs}, qs) == []


def test_the_page_reads_induction_slower_at_a_fixed_width_only_while_its_tests_find_it():
    """Chapter 12 reads induction's speed tests by hand ("more heads learn induction
    slower", "a reversal of the claim" at a fixed width and attention width, faster with the
    head size fixed; what each test found after the correction is glued): true exactly
    while those tests, corrected over the chapter's family of the shipped runs, reverse the
    claim in the two width arms and support it in the third. New induction runs that
    change that fail this test until the reading is rewritten."""
    text = chapter_12_text()
    assert "more heads learn induction *slower*" in text and "a reversal of the claim" in text
    speed = fx.chapter_tests(model_sets.fresh_runs())["speed"]["induction"]
    assert speed["width"]["verdict"] is Verdict.FAILS
    assert speed["inner256"]["verdict"] is Verdict.FAILS
    assert speed["head16"]["verdict"] in HOLDING
