"""The model sets chapter 12 reads: its fresh runs' profiles, pilots and designs
(bparallel.book.section4.models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bparallel.book.section4 import models as model_sets
from bparallel.transformer.design import PROFILES
from bparallel.transformer.runs import Run
from tests.book.section4.chapter_pages import chapter_12_text

ROOT = Path(__file__).resolve().parents[3]


#: Chapter 12's sentences (and the REFORMS checklist's) that say its histogram tests read
#: runs at the paper's constant rate with dropout, each normalised to single spaces.
OLD_RECIPE_SENTENCES = (
    "histogram's runs are being trained again under that recipe, and until they are, its "
    "numbers here are the constant-rate ones",
    "until it is, these are the constant-rate ones",
    "The chapter's histogram tests still read constant-rate runs that never settled",
    "the tests still read the runs trained with it",
    "Every run the tests read uses the paper's Adam settings at a constant rate and its "
    "dropout",
    # the REFORMS checklist's row on modeling
    "histogram's runs, at the same budget and the paper's constant rate, never settle",
)


@pytest.mark.parametrize("sentence", OLD_RECIPE_SENTENCES)
def test_the_page_says_which_recipe_histograms_tests_read(sentence):
    """Chapter 12 says its histogram tests read constant-rate runs trained with dropout
    exactly while ``models.FRESH_PROFILES["histogram"]`` is such a profile: when the chapter
    moves histogram to a settled recipe (issue #45, item 3), each of these fails until its
    sentence is rewritten. (What follows from the settling pilot is written by
    ``graph_pilots.settling_next``, which reads the chapter's profile itself.)"""
    profile = PROFILES[model_sets.FRESH_PROFILES["histogram"]]
    old_recipe = profile.lr_schedule == "constant" and profile.dropout > 0
    text = chapter_12_text() + " " + " ".join((ROOT / "book" / "reforms.md").read_text().split())
    assert (sentence in text) == old_recipe, (sentence, profile.name)


def test_the_dropout_check_reads_runs_trained_with_dropout():
    """DROPOUT_CHECKED names, for every fresh-data task, a profile that trains with dropout
    (the check compares a model with its dropout on and off: without dropout there is
    nothing to check), the pilots' baseline where a task has one."""
    assert set(model_sets.DROPOUT_CHECKED) == set(model_sets.FRESH_PROFILES)
    for task, name in model_sets.DROPOUT_CHECKED.items():
        assert PROFILES[name].dropout > 0, (task, name)
        assert task in PROFILES[name].tasks
    for task, name in model_sets.PILOT_BASELINES.items():
        assert model_sets.DROPOUT_CHECKED[task] == name


def test_the_initial_model_is_the_one_a_shipped_run_started_from():
    """``initial_model`` draws the weights ``train`` starts from: the step-0 probe a
    shipped fresh-data run recorded while training (every arm's kind of configuration) is
    what the probe measures on ``initial_model`` of the run its entry records
    (``Run.from_record``); so the condition number at step 0 is the run's own."""
    from bparallel.transformer.design import fresh_heldout
    from bparallel.transformer.measure import training_probe
    from bparallel.transformer.train import initial_model

    runs = model_sets.fresh_runs()
    picked = {}
    for e in runs.of("induction"):
        picked.setdefault((e["heads"], e["head_size"]), e)
    for key in ((1, 256), (16, 4), (8, 16)):
        e = picked[key]
        probes = fresh_heldout("induction", e["profile"]).subset(
            slice(0, e["probe_sequences"]))  # the probe set, as train takes it
        model = initial_model(Run.from_record(e))
        got = training_probe(model.eval(), probes)
        k = e["probes"]["step"].index(0)
        assert got["loss"] == pytest.approx(e["probes"]["loss"][k], rel=1e-4), key
        assert got["fidelity.definition"] == pytest.approx(
            e["probes"]["fidelity.definition"][k], rel=1e-4), key
    with pytest.raises(ValueError, match="seed"):
        initial_model(Run("induction", 4, "induction-fresh", seed=-1))
    with pytest.raises(ValueError, match="give a Run"):
        initial_model("induction-fresh")


def test_every_pilot_reads_against_its_tasks_constant_rate_runs():
    """A recipe or budget pilot is set beside the task's runs at the paper's constant rate
    (models.PILOT_BASELINES), named apart from the chapter's runs, so that moving a task to
    its piloted recipe leaves its pilots' reference where it was."""
    from bparallel.transformer.design import PROFILES as ALL

    for pilots in (model_sets.RECIPE_PILOTS, model_sets.BUDGET_PILOTS):
        for task, name in pilots.items():
            base = ALL[model_sets.PILOT_BASELINES[task]]
            assert task in base.tasks and base.lr_schedule == "constant"
            assert ALL[name].lr_schedule != "constant" and task in ALL[name].tasks
    # the pilot without dropout changes the dropout and nothing else of its baseline's recipe
    for task, name in model_sets.DROPOUT_PILOTS.items():
        base, pilot = ALL[model_sets.PILOT_BASELINES[task]], ALL[name]
        assert base.dropout > 0 and pilot.dropout == 0.0
        drop = ("name", "description", "dropout")
        assert ({k: v for k, v in pilot.to_dict().items() if k not in drop}
                == {k: v for k, v in base.to_dict().items() if k not in drop})
    # the settling pilot is both: the dropout pilot's recipe with the budget pilot's schedule
    for task, name in model_sets.SETTLING_PILOTS.items():
        base, pilot = ALL[model_sets.PILOT_BASELINES[task]], ALL[name]
        assert pilot.dropout == 0.0 and pilot.lr_schedule == ALL[
            model_sets.BUDGET_PILOTS[task]].lr_schedule != "constant"
        drop = ("name", "description", "dropout", "lr_schedule", "steps")
        assert ({k: v for k, v in pilot.to_dict().items() if k not in drop}
                == {k: v for k, v in base.to_dict().items() if k not in drop})
        assert model_sets.SETTLING_PILOT_DESIGNS[task] == model_sets.BUDGET_PILOT_DESIGNS[task]


def test_a_pilot_design_names_its_runs_and_only_they_are_read(tmp_path):
    """A budget pilot's design (seed 42 of every configuration, more seeds of some) is fixed
    before its runs finish: a run of another seed shipped or snapshotted under the same
    profile is not the pilot's, and a snapshot of a run shipped since is superseded."""
    from bparallel.transformer.design import PROFILES as ALL
    from bparallel.transformer.shipped import ship
    from bparallel.transformer.train import train

    design = model_sets.PilotDesign(seeds=(42,), more={(16, 4): (43,)})
    assert {"heads": 1, "head_size": 64, "seed": 42} in design
    assert {"heads": 16, "head_size": 4, "seed": 43} in design
    assert {"heads": 1, "head_size": 64, "seed": 43} not in design
    assert "not a run" not in design
    histogram = model_sets.BUDGET_PILOT_DESIGNS["histogram"]
    assert {"heads": 16, "head_size": 4, "seed": 44} in histogram
    # ten configurations at seed 42, two more seeds of sixteen heads of four dimensions
    assert len(histogram.runs()) == 12 and (1, 256, 42) in histogram.runs()
    assert all({"heads": h, "head_size": hs, "seed": s} in histogram
               for h, hs, s in histogram.runs())
    assert design.runs() == {(h, hs, 42) for h, hs, _ in histogram.runs()} | {(16, 4, 43)}
    assert {"heads": 4, "head_size": 64, "seed": 43} not in histogram

    tiny = ALL["fresh-tiny"]
    done = train(Run.in_arm("induction", 8, tiny, "head16"),
                 out_dir=tmp_path / "runs", progress=False)
    ship(done.checkpoint, tmp_path / "fresh-tiny", profile=tiny)
    for seed in (42, 43):  # a stale snapshot of the shipped run, and one of another seed
        train(Run.in_arm("induction", 8, tiny, "head16", seed=seed), stop_after=5,
              progress=False, out_dir=tmp_path / "fresh-tiny" / "partial" / f"seed-{seed}")
    read = model_sets.budget_pilot_runs
    pilot = read(tmp_path, profiles={"induction": "fresh-tiny"},
                 designs={"induction": model_sets.PilotDesign(seeds=(42,))})
    assert [(p["seed"], p["finished"]) for p in pilot] == [(42, True)]
    every = read(tmp_path, profiles={"induction": "fresh-tiny"}, designs={})
    assert [(p["seed"], p["finished"]) for p in every] == [(42, True), (43, False)]
    # the shipped runs alone, design applied: a run of seed 44 shipped later is not the pilot's
    later = train(Run.in_arm("induction", 8, tiny, "head16", seed=44),
                  out_dir=tmp_path / "runs44", progress=False)
    ship(later.checkpoint, tmp_path / "fresh-tiny", profile=tiny)
    shipped = model_sets.budget_pilot_shipped(
        tmp_path, profiles={"induction": "fresh-tiny"},
        designs={"induction": model_sets.PilotDesign(seeds=(42,))})
    assert [e["seed"] for e in shipped.entries] == [42] and "induction" in shipped.profiles
    assert [e["seed"] for e in model_sets.budget_pilot_shipped(
        tmp_path, profiles={"induction": "fresh-tiny"}, designs={}).entries] == [42, 44]
    # read once, passed on: the same runs
    design = {"induction": model_sets.PilotDesign(seeds=(42,))}
    assert read(tmp_path, profiles={"induction": "fresh-tiny"}, designs=design,
                shipped=shipped) == read(tmp_path, profiles={"induction": "fresh-tiny"},
                                         designs=design)
