"""``python -m bparallel train | evaluate`` on the hidden tiny profile (bparallel.book.tools.cli);
``sweep`` has its own tests (tests/book/tools/test_sweep.py)."""

from __future__ import annotations

import csv
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bparallel.book.render.results import load_results
from bparallel.book.tools.cli import COMMANDS, _check_profile, build_parser, main
from bparallel.transformer.checkpoints import load_weights, sha256_file

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_train_then_evaluate(tmp_path, capsys):
    run, out = tmp_path / "run", tmp_path / "out"
    argv = ["train", "--profile", "tiny", "--heads", "1", "4", "--tasks", "copy", "cycle",
            "--out-dir", str(run), "--no-progress", "--threads", "1"]
    assert main(argv) == 0
    manifest = json.loads((run / "weights.json").read_text())
    assert sorted(manifest) == ["copy-h01", "copy-h04", "cycle-h01", "cycle-h04"]
    for name, entry in manifest.items():
        assert entry["sha256"] == sha256_file(run / entry["file"])
        assert entry["epoch"] == 2 and entry["profile"] == "tiny"
        model, meta = load_weights(run / entry["file"], sha256=entry["sha256"])
        assert meta["heads"] == model.config.n_heads == int(name[-2:])
    # running again resumes: nothing left to train, same weights
    stamp = (run / "copy-h04.ckpt.pt").stat().st_mtime_ns
    assert main(argv) == 0
    assert (run / "copy-h04.ckpt.pt").stat().st_mtime_ns == stamp
    assert json.loads((run / "weights.json").read_text())["copy-h04"]["sha256"] == manifest[
        "copy-h04"]["sha256"]
    # one more epoch extends the run from its checkpoint
    assert main(argv[:-2] + ["--epochs", "3", "--tasks", "copy", "--heads", "1"]) == 0
    assert json.loads((run / "weights.json").read_text())["copy-h01"]["epoch"] == 3

    capsys.readouterr()
    assert main(["evaluate", "--profile", "tiny", "--heads", "1", "4", "--run-dir", str(run),
                 "--out-dir", str(out), "--protocol", "paper", "heldout",
                 "--num-sequences", "2", "--max-steps", "10", "--horizon", "10",
                 "--no-progress", "--threads", "1"]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"tables_1_4.csv", "tables_5_6.csv", "tables.json", "evaluation.json",
            "published_tables.csv", "figure4_paper_paper.png", "figure4_heldout_definition.png",
            "figure4_published.png"} <= names
    with open(out / "tables_1_4.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 2 * 2 * 4 * 4
    mixing = [float(r["mean"]) for r in rows if r["quantity"] == "mixing_time"]
    assert all(0 < m <= 10 for m in mixing)  # truncated at max_steps = 10
    flat = load_results(out / "evaluation.json")
    assert flat["table1.paper.paper.copy.h1.L1.mean"] == pytest.approx(
        next(float(r["mean"]) for r in rows if r["table"] == "1" and r["protocol"] == "paper"
             and r["mode"] == "paper" and r["heads"] == "1" and r["layer"] == "1"))


def test_unknown_profile_lists_valid_ones(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--profile", "huge", "--out-dir", str(tmp_path)])
    assert exc.value.code == 2
    assert "unknown profile 'huge'; valid profiles: paper, quick" in capsys.readouterr().err


def test_evaluate_refuses_other_profile(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--profile", "tiny", "--heads", "1", "--tasks", "copy",
                 "--out-dir", str(run), "--no-progress", "--epochs", "1"]) == 0
    assert main(["evaluate", "--profile", "quick", "--heads", "1", "--tasks", "copy",
                 "--run-dir", str(run), "--out-dir", str(tmp_path / "o")]) == 2
    assert "trained with profile(s) ['tiny'], not 'quick'" in capsys.readouterr().err
    assert main(["evaluate", "--profile", "tiny", "--heads", "8", "--tasks", "copy",
                 "--run-dir", str(run), "--out-dir", str(tmp_path / "o")]) == 2
    assert "copy-h08" in capsys.readouterr().err


def test_train_refuses_a_model_that_another_process_is_training(tmp_path, capsys):
    from bparallel._io import file_lock
    from bparallel.transformer.runs import Run

    argv = ["train", "--profile", "tiny", "--heads", "1", "--tasks", "copy",
            "--out-dir", str(tmp_path), "--no-progress", "--epochs", "1"]
    with file_lock(Run("copy", 1, "tiny").lock_path(tmp_path)):  # e.g. a sweep job
        assert main(argv) == 2
    assert "copy-h01: another process is training it" in capsys.readouterr().err
    assert not (tmp_path / "copy-h01.ckpt.pt").exists()
    assert main(argv) == 0 and (tmp_path / "copy-h01.ckpt.pt").exists()


def test_train_trains_a_fresh_data_profile_of_any_size_without_probes(tmp_path):
    """``train --profile <fresh-data profile>`` trains on fresh data; ``--layers 2`` builds a
    2-layer model, named for it (``-L2``), exported and loaded like any other; ``--arm``
    picks the head size; ``--no-probes`` records no probes."""
    argv = ["train", "--profile", "fresh-tiny", "--tasks", "induction", "--heads", "4",
            "--layers", "2", "--arm", "inner256", "--no-probes", "--out-dir", str(tmp_path),
            "--no-progress", "--threads", "1"]
    assert main(argv) == 0
    manifest = json.loads((tmp_path / "weights.json").read_text())
    entry = manifest["induction-h04-hs64-L2"]
    assert entry["step"] == 12 and entry["profile"] == "fresh-tiny" and entry["arms"] == []
    assert entry["sizes"] == {"n_layers": 2} and entry["head_size"] == 64
    model, meta = load_weights(tmp_path / entry["file"], sha256=entry["sha256"])
    assert len(model.blocks) == 2 and model.config.head_dim == 64
    assert meta["history"]["probe"]["step"] == []
    # epochs are for finite training sets; a fresh-data run counts steps
    assert main(["train", "--profile", "fresh-tiny", "--tasks", "induction", "--heads", "4",
                 "--epochs", "3", "--out-dir", str(tmp_path), "--no-progress"]) == 2


def test_the_sweep_help_says_all_three_arms():
    sweep = subprocess.run([sys.executable, "-m", "bparallel", "sweep", "--help"],
                           capture_output=True, text=True, check=True).stdout
    assert "both arms" not in sweep and "all three arms by default" in sweep
    for option in ("--layers", "--d-model", "--d-mlp", "--no-probes"):
        assert option in sweep


def test_subcommands_registered_smoke():
    assert set(COMMANDS) == {"train", "evaluate", "regress", "sweep", "findings", "record",
                             "pilot"}
    help_text = subprocess.run([sys.executable, "-m", "bparallel", "--help"],
                               capture_output=True, text=True, check=True).stdout
    for name in COMMANDS:
        assert name in help_text


def test_record_check_says_what_is_missing(tmp_path, monkeypatch, capsys):
    """`record --check` computes nothing and fails, naming the command, when a chapter needs
    a result that is not recorded (here: an empty folder)."""
    from bparallel.book.section4 import authors_columns as authors
    from bparallel.book.tools import record

    monkeypatch.setattr(record, "RECORDED", tmp_path)
    monkeypatch.setattr(authors, "recorded_is_current", lambda path: True)  # not this test's
    monkeypatch.setattr(record, "missing", lambda: {"a chapter": ["metrics-x.npz"]})
    monkeypatch.setattr(record, "stale", lambda: ["metrics-old.npz"])
    assert main(["record", "--check"]) == 1
    out = capsys.readouterr().out
    assert "a chapter: 1 not recorded" in out and "1 stale file(s)" in out
    assert "python -m bparallel record" in out
    monkeypatch.setattr(record, "missing", lambda: {"a chapter": []})
    monkeypatch.setattr(record, "stale", lambda: [])
    assert main(["record", "--check"]) == 0
    assert "a chapter: all recorded" in capsys.readouterr().out


def test_pilot_prints_the_runs_and_the_rules_reading(tmp_path, capsys, monkeypatch):
    """`pilot budget` reads the shipped budget pilot as chapter 12 does: its twelve runs,
    each beside its constant-rate twin, and the rule's reading (no Markdown), and how many
    of its design's runs have not started; a pilot with no run yet says how to commit one;
    an unknown pilot is refused."""
    from bparallel.book.section4 import graph_pilots as gpl
    from bparallel.book.section4 import models
    from bparallel.book.tools.pilot import text_table

    assert main(["pilot", "budget"]) == 0
    out = capsys.readouterr().out
    rows = gpl.budget_pilot_rows(models.fresh_runs(profiles=models.PILOT_BASELINES),
                                models.budget_pilot_runs())
    assert f"{len(rows)} runs" in out and len(rows) == 12
    reading = gpl.budget_pilot_words(gpl.budget_pilot_reading(
        rows, models.BUDGET_PILOT_DESIGNS)["histogram"])["reading"]
    assert reading.replace("**", "") in out and "**" not in out
    assert text_table(gpl.budget_pilot_table(rows)) in out
    assert "not started" not in out  # every run of its design is there
    more = models.PilotDesign(seeds=(42,), more={(16, 4): (43, 44, 45)})
    monkeypatch.setattr(models, "BUDGET_PILOT_DESIGNS", {"histogram": more})
    assert main(["pilot", "budget"]) == 0
    out = capsys.readouterr().out
    assert ("Of the 13 runs, 12 have finished and 1 has not started: 11 of the 13 piloted "
            "runs learned and 9 converged so far.") in out
    assert "Not started (no shipped run and no committed snapshot): 16 x 4 (seed 45)." in out
    assert "does not settle" in out  # decided already: a run that waits cannot undo it
    assert main(["pilot", "settling", "--models-dir", str(tmp_path)]) == 0
    assert "no run shipped or snapshotted" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["pilot", "fastest"])
    assert text_table([{"a": 1, "bb": "x"}, {"a": 22, "bb": ""}]).splitlines() == [
        "a   bb", "--  --", "1   x", "22"]
    with pytest.raises(ValueError, match="rows is empty"):
        text_table([])


def _documented_commands() -> list[tuple[str, list[str]]]:
    """Every ``python -m bparallel`` command in the README's and the book pages' shell
    blocks, and every sweep of a ``scripts/device_sweep.sh`` wave there, as (page, argv)."""
    root = Path(__file__).resolve().parents[3]
    found = []
    for page in (root / "README.md", *sorted((root / "book").glob("*.md"))):
        for block in re.findall(r"```(?:bash|console|sh)\n(.*?)```", page.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if "bparallel" in words and "-m" in words:
                    found.append((page.name, words[words.index("bparallel") + 1:]))
                elif "scripts/device_sweep.sh" in words:
                    for wave in words[words.index("scripts/device_sweep.sh") + 2:]:
                        for sweep in wave.split(";"):
                            found.append((page.name, ["sweep", *shlex.split(
                                sweep.removeprefix("nice:"))]))
    return found


def test_every_documented_command_parses_with_a_known_profile():
    """The commands a reader copies from the README and the book (and the sweeps of a
    device wave) are accepted by the CLI as written: every flag exists, every profile is
    one the command trains, every notebook named exists; a command that went stale fails
    here rather than in a reader's shell."""
    commands = _documented_commands()
    assert len(commands) >= 10 and {c[1][0] for c in commands} >= {"train", "sweep",
                                                                     "regress"}
    root = Path(__file__).resolve().parents[3]
    for page, argv in commands:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
            if args.command in ("train", "evaluate", "sweep"):
                _check_profile(parser, args.profile, fresh=args.command in ("train", "sweep"))
        except SystemExit:
            pytest.fail(f"{page}: python -m bparallel {shlex.join(argv)} is refused")
        if getattr(args, "root", None):  # a reader's own chapters, in a folder of theirs
            continue
        for name in getattr(args, "notebooks", None) or []:
            assert (root / "notebooks" / f"{name}.md").exists(), (page, name)
