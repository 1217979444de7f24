"""``python -m bparallel sweep`` (bparallel.transformer.sweep): jobs on submitit's debug and local
executors (and a Slurm job array against a stand-in ``sbatch``), on the hidden tiny profile.

The reference for every model is an uninterrupted ``train(...)`` in this process: a sweep,
however often it is interrupted, must end with bitwise the same weights. (A weights file's
SHA-256 also covers its training history, wall-clock seconds included, so the weights are
compared tensor by tensor.)
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import types
from pathlib import Path

import psutil
import pytest

from bparallel._io import file_lock, is_locked
from bparallel.book.tools.cli import main
from bparallel.transformer import sweep as sw
from bparallel.transformer.checkpoints import load_weights, sha256_file
from bparallel.transformer.design import Profile
from bparallel.transformer.runs import Run
from bparallel.transformer.shipped import (
    MANIFEST,
    MODELS_ROOT,
    is_shipped,
    shipped_manifest,
    shipped_seeds,
)
from bparallel.transformer.train import load_checkpoint, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# Slow enough (about half a second an epoch) to kill a job between two checkpoints.
SLOW = Profile("tiny-slow", num_train=150, epochs=3, num_heldout=20, batch_size=10,
               seq_len=16, hidden=True)
ENTRY_FIELDS = {"file", "sha256", "task", "heads", "seed", "profile", "epochs",
                "final_train_loss", "heldout_accuracy", "heldout_accuracy_predictable",
                "torch_version", "hardware", "attention_path", "curve"}


@pytest.fixture(scope="module")
def reference():
    """Uninterrupted runs: ``reference(seed, profile)`` -> the final state dict."""
    cache = {}

    def get(seed: int, profile: str | Profile = "tiny"):
        key = (seed, getattr(profile, "name", profile))
        if key not in cache:
            cache[key] = train(Run("copy", 1, profile, seed=seed),
                               threads=1, progress=False).model.state_dict()
        return cache[key]

    return get


def _grid(tmp_path, seeds, profile: str | Profile = "tiny", name: str = ""):
    return sw.plan(["copy"], [1], seeds, profile, runs_dir=tmp_path / f"runs{name}",
                   models_dir=tmp_path / f"models{name}", threads=1)


def _same_weights(path, expected) -> bool:
    model, _ = load_weights(path)
    state = model.state_dict()
    return state.keys() == expected.keys() and all(
        (state[k] == expected[k]).all() for k in expected)


def _check_shipped(models_dir, seeds, reference, profile: str | Profile = "tiny", epochs=2):
    manifest = shipped_manifest(models_dir)
    name_of_profile = getattr(profile, "name", profile)
    names = {s: "copy-h01" if s == 42 else f"copy-h01-s{s}" for s in seeds}
    assert manifest["profile"] == name_of_profile and sorted(manifest["models"]) == sorted(
        names.values())
    for seed, name in names.items():
        entry = manifest["models"][name]
        assert set(entry) == ENTRY_FIELDS
        assert (entry["file"], entry["task"], entry["heads"], entry["seed"],
                entry["profile"], entry["epochs"]) == (f"{name}.weights.pt", "copy", 1, seed,
                                                       name_of_profile, epochs)
        assert entry["sha256"] == sha256_file(models_dir / entry["file"])
        assert 0 <= entry["heldout_accuracy"] <= 1 and entry["attention_path"] == "fused"
        curve = entry["curve"]  # the learning curve: every epoch's held-out values
        assert curve["epoch"] == list(range(1, epochs + 1))
        assert curve["heldout_accuracy_predictable"][-1] == pytest.approx(
            entry["heldout_accuracy_predictable"], abs=1e-5)  # the same held-out set
        assert all(len(v) == epochs for v in curve.values())
        assert _same_weights(models_dir / entry["file"], reference(seed, profile))
    assert shipped_seeds(models_dir) == {("copy", 1): sorted(seeds)}


def test_debug_executor_ships_two_seeds_and_a_rerun_does_nothing(tmp_path, reference):
    runs = _grid(tmp_path, [42, 43])
    results = sw.run_sweep(runs, "debug", echo=lambda _: None)
    assert [(r["shipped_as"], r["status"], r["resumed_from"]) for r in results] == [
        ("copy-h01", "shipped", 0), ("copy-h01-s43", "shipped", 0)]
    _check_shipped(tmp_path / "models", [42, 43], reference)
    assert is_shipped("copy-h01", tmp_path / "models", seed=43)
    assert not is_shipped("copy-h01", tmp_path / "models", seed=44)
    manifest = (tmp_path / "models" / MANIFEST).read_bytes()
    again = sw.run_sweep(runs, "debug", echo=lambda _: None)
    assert {r["status"] for r in again} == {"already shipped"}
    assert (tmp_path / "models" / MANIFEST).read_bytes() == manifest


def _worker_holding(lock) -> psutil.Process | None:
    """The job process that holds ``lock`` open (it trains that model)."""
    for proc in psutil.Process().children(recursive=True):
        try:
            if any(f.path == str(lock) for f in proc.open_files()):
                return proc
        except psutil.NoSuchProcess:
            pass
    return None


def test_local_executor_ships_two_seeds_and_resumes_a_killed_job_bitwise(tmp_path, reference):
    runs = _grid(tmp_path, [42, 43], SLOW)
    killed = runs[1]
    results = []
    sweep = threading.Thread(target=lambda: results.extend(
        sw.run_sweep(runs, "local", jobs=2, poll_s=0.1, echo=lambda _: None)))
    sweep.start()
    deadline = time.monotonic() + 180
    while not killed.checkpoint.is_file():  # seed 43's first epoch is checkpointed
        assert sweep.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    worker = _worker_holding(killed.lock)
    assert worker is not None and "submitit.core._submit" in " ".join(worker.cmdline())
    os.kill(worker.pid, signal.SIGKILL)  # no clean-up at all, as on a lost machine
    sweep.join()
    assert [(r["seed"], r["status"]) for r in results] == [(42, "shipped"), (43, "failed")]
    assert results[1]["log"].endswith("_log.err")
    status = sw.sweep_status(runs)
    killed_at = load_checkpoint(killed.checkpoint).epoch
    assert [(r["status"], r["epoch"]) for r in status] == [("shipped", 3), ("partial", killed_at)]
    assert 1 <= killed_at < SLOW.epochs and not is_locked(killed.lock)  # the kernel freed it

    again = sw.run_sweep(runs, "local", jobs=2, poll_s=0.1, echo=lambda _: None)
    assert [(r["status"], r.get("resumed_from")) for r in again] == [
        ("already shipped", None), ("shipped", killed_at)]
    _check_shipped(tmp_path / "models", [42, 43], reference, profile=SLOW, epochs=3)
    logs = sorted((tmp_path / "runs" / SLOW.name / "logs").glob("*_log.out"))
    assert len(logs) == 3  # one per job: seed 42, seed 43 killed, seed 43 resumed
    assert sum("shipped as" in p.read_text() for p in logs) == 2


def test_a_checkpoint_written_by_train_is_adopted(tmp_path, reference):
    (run,) = _grid(tmp_path, [43])
    # what `train --profile tiny --seed 43 --out-dir <runs>/tiny/seed-43` leaves after 1 epoch
    first = train(Run("copy", 1, "tiny", seed=43), out_dir=tmp_path / "runs" / "tiny" / "seed-43",
                  stop_after=1, threads=1, progress=False)
    assert first.checkpoint == run.checkpoint
    (result,) = sw.run_sweep([run], "debug", echo=lambda _: None)
    assert result["status"] == "shipped" and result["resumed_from"] == 1
    _check_shipped(tmp_path / "models", [43], reference)
    _, meta = load_weights(tmp_path / "models" / "copy-h01-s43.weights.pt")
    assert meta["history"]["train_loss"][0] == first.history["train_loss"][0]


def test_snapshot_is_committed_and_restored_into_an_empty_run_folder(tmp_path, reference):
    (run,) = _grid(tmp_path, [43])
    train(Run("copy", 1, "tiny", seed=43),
          out_dir=run.run_dir, stop_after=1, threads=1, progress=False)
    argv = ["sweep", "--profile", "tiny", "--tasks", "copy", "--heads", "1", "--seeds", "43",
            "--runs-dir", str(tmp_path / "runs"), "--models-dir", str(tmp_path / "models")]
    assert main(argv + ["--snapshot"]) == 0
    snap = tmp_path / "models" / "partial" / "seed-43" / "copy-h01.ckpt.pt"
    assert snap.read_bytes() == run.checkpoint.read_bytes()
    run.checkpoint.unlink()  # another machine: only the committed files
    (row,) = sw.sweep_status([run])
    assert (row["status"], row["epoch"], row["file"]) == ("partial", 1, snap)
    (result,) = sw.run_sweep([run], "debug", echo=lambda _: None)
    assert (result["status"], result["restored"], result["resumed_from"]) == (
        "shipped", True, 1)
    assert not snap.exists()  # shipped: the snapshot is removed
    _check_shipped(tmp_path / "models", [43], reference)


def test_status_shows_shipped_running_partial_and_pending(tmp_path, capsys):
    runs = _grid(tmp_path, [42, 43, 44, 45])
    sw.run_sweep(runs[:1], "debug", echo=lambda _: None)
    train(Run("copy", 1, "tiny", seed=43),
          out_dir=runs[1].run_dir, stop_after=1, threads=1, progress=False)
    argv = ["sweep", "--profile", "tiny", "--tasks", "copy", "--heads", "1",
            "--seeds", "42", "43", "44", "45", "--runs-dir", str(tmp_path / "runs"),
            "--models-dir", str(tmp_path / "models"), "--status"]
    with file_lock(runs[3].lock):  # a job trains seed 45
        files = sorted(tmp_path.rglob("*"))
        rows = sw.sweep_status(runs)
        capsys.readouterr()
        assert main(argv) == 0
        assert sorted(tmp_path.rglob("*")) == files  # status writes nothing, starts no job
    out = capsys.readouterr().out
    assert [(r["seed"], r["status"], r["epoch"]) for r in rows] == [
        (42, "shipped", 2), (43, "partial", 1), (44, "pending", 0), (45, "running", 0)]
    assert rows[0]["file"] == tmp_path / "models" / "copy-h01.weights.pt"
    assert rows[1]["file"] == runs[1].checkpoint and 0 <= rows[1]["heldout_accuracy"] <= 1
    lines = out.splitlines()
    assert lines[0].startswith("profile tiny (2 epochs)")
    statuses = [line.split()[:4] for line in lines[2:6]]
    assert statuses == [["42", "copy-h01", "shipped", "2/2"], ["43", "copy-h01", "partial", "1/2"],
                        ["44", "copy-h01", "pending", "0/2"], ["45", "copy-h01", "running", "0/2"]]
    assert lines[-1] == "1 shipped, 1 partial, 1 pending, 1 running"


@pytest.mark.parametrize(("args", "message"), [
    (["--executor", "pbs"], "argument --executor: invalid choice: 'pbs'"),
    (["--seeds", "-1"], "seeds: -1 is not an integer >= 0"),
    (["--seeds", "43", "44", "43"], "seeds=[43, 44, 43]: 43 given more than once"),
    (["--profile", "huge"], "unknown profile 'huge'; valid profiles: paper, quick"),
    (["--heads", "1", "3"], "heads: 3 does not fit the model: n_heads=3 does not divide "
                            "d_model=64"),
    (["--tasks", "sort"], "argument --tasks: invalid choice: 'sort'"),
    (["--jobs", "0"], "jobs=0: must be a positive integer"),
    (["--slurm-extra", "account"], "--slurm-extra 'account': expected KEY=VALUE"),
])
def test_bad_input_is_refused_before_any_job_starts(tmp_path, capsys, args, message):
    argv = ["sweep", "--profile", "tiny", "--tasks", "copy", "--heads", "1",
            "--runs-dir", str(tmp_path / "runs"), "--models-dir", str(tmp_path / "models")]
    try:
        code = main(argv + args)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "models").exists()


def test_bad_input_to_the_python_api_names_the_argument(tmp_path):
    with pytest.raises(ValueError, match=r"tasks: 'sort' is not a task"):
        sw.plan(["sort"], [1], [42], "tiny")
    with pytest.raises(ValueError, match=r"heads: 0 does not fit the model: heads=0: must be"):
        sw.plan(["copy"], [0], [42], "tiny")
    with pytest.raises(ValueError, match=r"profile='huge': valid profiles"):
        sw.plan(["copy"], [1], [42], "huge")
    runs = _grid(tmp_path, [42])
    with pytest.raises(ValueError, match=r"executor='pbs': valid executors"):
        sw.run_sweep(runs, "pbs")
    assert not (tmp_path / "runs").exists()


def test_two_jobs_for_one_model_only_one_trains(tmp_path):
    (run,) = _grid(tmp_path, [43], SLOW)
    # Deterministic: while another job holds the model, a job leaves it alone.
    with file_lock(run.lock):
        assert sw.train_and_ship(run)["status"] == "busy"
        assert sw.run_sweep([run], "local", echo=lambda _: None)[0]["status"] == "busy"
    assert not run.checkpoint.exists() and not (tmp_path / "runs" / SLOW.name / "logs").exists()
    # Two jobs started together (threads here; the lock is per open file, so the same as
    # processes): one trains and ships, the other leaves the model alone.
    start = threading.Barrier(2)
    outcomes = []

    def job():
        start.wait()
        outcomes.append(sw.train_and_ship(run)["status"])

    threads = [threading.Thread(target=job) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes)[1] == "shipped" and sorted(outcomes)[0] in (
        "already shipped", "busy"), outcomes
    assert load_checkpoint(run.checkpoint).history["epoch"] == [1, 2, 3]  # trained once
    assert list(shipped_manifest(tmp_path / "models")["models"]) == ["copy-h01-s43"]


def test_slurm_submits_one_job_array(tmp_path, monkeypatch, capsys):
    """Against a stand-in ``sbatch`` that only records the script: the options reach it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\ncp "$1" {tmp_path}/submitted.sh\necho "Submitted batch job 4242"\n')
    for tool in ("srun", "sbatch"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    argv = ["sweep", "--profile", "tiny", "--tasks", "copy", "cycle", "--heads", "1", "4",
            "--seeds", "42", "43", "--executor", "slurm", "--jobs", "3",
            "--slurm-partition", "cpu", "--slurm-time", "90", "--slurm-cpus-per-task", "2",
            "--slurm-extra", "account=proj", "--runs-dir", str(tmp_path / "runs"),
            "--models-dir", str(tmp_path / "models")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "copy-h01 seed 42: submitted as Slurm job 4242_0" in out
    assert "cycle-h04 seed 43: submitted as Slurm job 4242_7" in out
    script = (tmp_path / "submitted.sh").read_text()
    for line in ("#SBATCH --array=0-7%3", "#SBATCH --partition=cpu", "#SBATCH --time=90",
                 "#SBATCH --cpus-per-task=2", "#SBATCH --account=proj",
                 f"#SBATCH --output={tmp_path}/runs/tiny/logs/%A_%a_0_log.out"):
        assert line in script
    assert f"export PYTHONPATH={sw.PACKAGE_ROOT}" in script
    from submitit.core.utils import DelayedSubmission

    pickles = sorted((tmp_path / "runs" / "tiny" / "logs").glob("4242_*_submitted.pkl"))
    submitted = [DelayedSubmission.load(p).args[0] for p in pickles]
    assert sorted((r.task, r.heads, r.seed, r.threads) for r in submitted) == sorted(
        (t, h, s, 2) for t in ("copy", "cycle") for h in (1, 4) for s in (42, 43))
    assert not (tmp_path / "runs" / "tiny" / "seed-42").exists()  # nothing ran here


def test_sweep_help_shows_examples_for_one_machine_and_slurm_smoke(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--seeds 43 44 --jobs 2 --threads 1" in text and "--executor slurm" in text
    assert "--status" in text and "--snapshot" in text



def test_plan_runs_the_seeds_of_the_cheapest_configuration_first(tmp_path):
    runs = sw.plan(["copy", "cycle"], [16, 1], [44, 43], "tiny", runs_dir=tmp_path)
    order = [(r.heads, r.task, r.seed) for r in runs]
    assert order[:4] == [(1, "copy", 44), (1, "copy", 43), (1, "cycle", 44), (1, "cycle", 43)]
    assert order[4:] == [(16, "copy", 44), (16, "copy", 43), (16, "cycle", 44), (16, "cycle", 43)]


def test_cuda_jobs_ask_for_a_gpu(tmp_path):
    """submitit hides the GPUs from a local job that asks for none: a CUDA sweep's jobs ask
    for one (local jobs all see GPU 0; a Slurm job gets one of its node)."""
    from bparallel.transformer.sweep import make_executor, plan

    cpu = make_executor("local", tmp_path / "a")
    gpu = make_executor("local", tmp_path / "b", device="cuda")
    assert cpu._executor.parameters.get("gpus_per_node", 0) == 0
    assert gpu._executor.parameters["gpus_per_node"] == 1
    with pytest.raises(ValueError, match="device='tpu'"):
        plan(profile="tiny", device="tpu")


# --------------------------------------------------------------------------- fresh data


def test_a_fresh_grid_has_every_arm_and_plans_the_shared_models_once(tmp_path):
    runs = sw.plan(["induction"], [16, 8, 4, 1], [42], "induction-fresh", runs_dir=tmp_path)
    assert [r.name for r in runs] == [
        "induction-h01", "induction-h01-hs16", "induction-h01-hs256", "induction-h04",
        "induction-h04-hs64", "induction-h08", "induction-h08-hs16", "induction-h08-hs32",
        "induction-h16", "induction-h16-hs16"]  # 4 x 16 and 16 x 16: once each
    assert runs[0].models_dir == MODELS_ROOT / "induction-fresh"
    assert (runs[0].unit, runs[0].total) == ("step", 12000)
    head16 = sw.plan(None, [1, 4], [43], "induction-fresh", arms=["head16"], budget_factor=5,
                     runs_dir=tmp_path)
    assert [(r.task, r.shipped_as, r.total) for r in head16] == [
        ("induction", "induction-h01-hs16-x5-s43", 60000),
        ("induction", "induction-h04-x5-s43", 60000)]
    with pytest.raises(ValueError, match=r"arms=\['head16'\]: profile 'tiny' trains the arms"):
        sw.plan(["copy"], [1], [42], "tiny", arms=["head16"])
    with pytest.raises(ValueError, match=r"budget_factor=5: a finite-data profile trains"):
        sw.plan(["copy"], [1], [42], "tiny", budget_factor=5)
    with pytest.raises(ValueError, match="arms: 'narrow' is not an arm"):
        sw.plan(["first"], [1], [42], "fresh-tiny", arms=["narrow"])
    with pytest.raises(ValueError, match=r"profile='huge': valid profiles are \[.*'fresh-tiny'"):
        sw.plan(["first"], [1], [42], "huge")


def test_a_fresh_sweep_resumes_and_ships_both_arms(tmp_path, capsys):
    from bparallel.transformer.train import train

    runs = sw.plan(["first"], [1], [43], "fresh-tiny", runs_dir=tmp_path / "runs",
                   models_dir=tmp_path / "models", threads=1, arms=["width", "head16"])
    width, head16 = runs
    assert (width.name, head16.name) == ("first-h01", "first-h01-hs16")
    # head16 was started and killed by `train` into the sweep's run folder
    train(Run.in_arm("first", 1, "fresh-tiny", "head16", seed=43),
          out_dir=head16.run_dir, stop_after=5, threads=1, progress=False)
    argv = ["sweep", "--profile", "fresh-tiny", "--tasks", "first", "--heads", "1",
            "--arms", "width", "head16", "--seeds", "43", "--runs-dir", str(tmp_path / "runs"),
            "--models-dir", str(tmp_path / "models")]
    assert main(argv + ["--snapshot"]) == 0
    assert "first-h01-hs16 seed 43: step 5/12 ->" in capsys.readouterr().out
    assert (tmp_path / "models" / "partial" / "seed-43" / "first-h01-hs16.ckpt.pt").is_file()
    assert main(argv + ["--status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("profile fresh-tiny (12 steps)")
    assert out[2].split()[:4] == ["43", "first-h01", "pending", "0/12"]
    assert out[3].split()[:4] == ["43", "first-h01-hs16", "partial", "5/12"]
    assert out[3].split()[5] == "running"  # after the held-out accuracy: the outcome so far
    head16.checkpoint.unlink()  # another machine: only the committed snapshot
    results = sw.run_sweep(runs, "debug", echo=lambda _: None)
    assert [(r["shipped_as"], r["status"], r["resumed_from"], r["steps"]) for r in results] == [
        ("first-h01-s43", "shipped", 0, 12), ("first-h01-hs16-s43", "shipped", 5, 12)]
    assert results[1]["restored"] and not (tmp_path / "models" / "partial" / "seed-43" /
                                           "first-h01-hs16.ckpt.pt").exists()
    manifest = shipped_manifest(tmp_path / "models")
    assert manifest["profile"] == "fresh-tiny"
    for run, arm, head_size in ((width, "width", 64), (head16, "head16", 16)):
        entry = manifest["models"][run.shipped_as]
        assert (entry["arms"], entry["head_size"], entry["seed"]) == ([arm], head_size, 43)
        assert entry["outcome"] == "not learned" and entry["budget"] == 12
        assert entry["sha256"] == sha256_file(tmp_path / "models" / entry["file"])
        straight = train(Run.in_arm("first", 1, "fresh-tiny", arm, seed=43),
                         threads=1, progress=False)
        assert _same_weights(tmp_path / "models" / entry["file"],
                             straight.model.state_dict())
    capsys.readouterr()  # the jobs' own lines (the debug executor runs them here)
    assert main(argv + ["--status"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:4]
    assert [r.split()[2:4] for r in rows] == [["shipped", "12/12"]] * 2
    assert all(r.split()[5:7] == ["not", "learned"] for r in rows)
    again = sw.run_sweep(runs, "debug", echo=lambda _: None)
    assert {r["status"] for r in again} == {"already shipped"}


def test_arms_for_a_finite_profile_are_refused_on_the_command_line(tmp_path, capsys):
    argv = ["sweep", "--profile", "tiny", "--tasks", "copy", "--heads", "1", "--arms",
            "head16", "--runs-dir", str(tmp_path / "runs"), "--models-dir",
            str(tmp_path / "models")]
    assert main(argv) == 2
    assert "the other arms are for fresh-data profiles" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_the_inner256_arm_is_trained_under_its_own_arm():
    from bparallel.transformer.arms import arm_head_size, arm_of

    assert [arm_head_size("inner256", h) for h in (1, 4, 8, 16)] == [256, 64, 32, 16]
    assert [arm_of(h, arm_head_size("inner256", h)) for h in (1, 4, 8)] == ["inner256"] * 3
    assert arm_of(16, 16) == "head16" and arm_of(4, None) == "width"  # shared: trained once
    with pytest.raises(ValueError, match="heads=3: the inner256 arm splits .* 256"):
        arm_head_size("inner256", 3)
    with pytest.raises(ValueError, match="head_size=12: 4 heads of 12 dimensions belong to no"):
        arm_of(4, 12)
    with pytest.raises(ValueError, match="arm='narrow'"):
        arm_head_size("narrow", 4)


def test_a_stopped_local_sweep_cancels_its_running_jobs(monkeypatch):
    """Ctrl-C or SIGTERM on a local sweep (submitit's jobs ignore SIGTERM themselves)
    cancels the jobs it started before it exits, so none trains on unseen; the sweep's
    SIGTERM handler is put back afterwards."""

    class Job:
        def __init__(self, n):
            self.job_id, self.cancelled = n, False
            self.paths = types.SimpleNamespace(stdout=Path(f"{n}_0_log.out"))

        def done(self):
            return False

        def cancel(self, check=True):
            self.cancelled = True

    started = []

    class Executor:
        def submit(self, fn, run):
            started.append(Job(len(started)))
            return started[-1]

    said = []
    runs = ["run a", "run b", "run c"]
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sw.time, "sleep", lambda s: os.kill(os.getpid(), signal.SIGTERM))
    with pytest.raises(SystemExit) as stop:
        sw._run_local(Executor(), runs, 2, 0.1, {}, said.append)
    assert stop.value.code == 128 + signal.SIGTERM
    assert [j.cancelled for j in started] == [True, True]  # two ran, the third never started
    assert sum("cancelled" in s for s in said) == 2
    assert signal.getsignal(signal.SIGTERM) is before

    started.clear()

    def interrupt(s):
        raise KeyboardInterrupt

    monkeypatch.setattr(sw.time, "sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        sw._run_local(Executor(), runs[:1], 2, 0.1, {}, said.append)
    assert [j.cancelled for j in started] == [True]


def test_kill_job_ends_the_whole_process_tree_of_a_local_job():
    """A local job is a shell, submitit's controller and the training process, which ignores
    SIGTERM (and SIGINT when started in the background): the sweep ends all of them."""
    import subprocess

    shell = subprocess.Popen(["sh", "-c", "trap '' TERM INT; sleep 60 & sleep 60; wait"])
    deadline = time.monotonic() + 10
    while len(sw._process_tree(shell.pid)) < 3:  # the shell and its two sleeps
        assert time.monotonic() < deadline
        time.sleep(0.05)
    tree = sw._process_tree(shell.pid)
    assert tree[-1] == shell.pid and len(tree) == 3  # deepest first, the job last

    class Job:
        job_id = str(shell.pid)

        def cancel(self, check=True):
            os.kill(shell.pid, signal.SIGINT)  # what submitit does: ignored here

    sw._kill_job(Job())
    # killed; or, its children killed first (deepest first), ended by itself before its
    # own SIGKILL arrived: either way within the timeout, which SIGINT alone never meets
    assert shell.wait(timeout=10) in (-signal.SIGKILL, 0)
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
              for p in tree):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_sweep_of_another_model_size_without_probes_ships_under_its_own_name(tmp_path):
    """``sizes`` and ``probes=False`` travel in each job's run: the job trains the 2-layer
    model without probes and ships it as ``<name>-L2-s<S>``, its entry recording the size."""
    (run,) = sw.plan(["induction"], [4], [43], "fresh-tiny", arms=["width"],
                     runs_dir=tmp_path / "runs", models_dir=tmp_path / "models",
                     sizes={"n_layers": 2}, probes=False, threads=1)
    assert (run.name, run.shipped_as, run.probes) == ("induction-h04-L2", "induction-h04-L2-s43",
                                                      False)
    assert run.checkpoint.name == "induction-h04-L2.ckpt.pt"
    assert run.lock.name == ".induction-h04-L2.lock"
    (result,) = sw.run_sweep([run], "debug", echo=lambda _: None)
    assert result["status"] == "shipped"
    entry = json.loads((tmp_path / "models" / "manifest.json").read_text())["models"][
        "induction-h04-L2-s43"]
    assert entry["sizes"] == {"n_layers": 2} and entry["probes"]["step"] == []
    assert entry["model_config"]["n_layers"] == 2


def test_every_arm_of_the_tiny_profile_is_planned_at_its_width(tmp_path):
    """The arms are rules on the profile's width (``d = 32`` for ``induction-tiny``): a head
    size of ``d/4 = 8`` (head16) and an attention width of ``4d = 128`` (inner256), as the
    training page's arms; shared models are planned once and listed under both arms. Smallest
    effect: one head size off, or one arm missing from a run's ``arms``."""
    import dataclasses

    from bparallel.transformer.arms import arm_head_size, arm_head_size_of, arm_inner_width_of
    from bparallel.transformer.design import get_profile

    tiny = get_profile("induction-tiny")
    assert (arm_head_size_of(tiny.d_model), arm_inner_width_of(tiny.d_model)) == (8, 128)
    assert (arm_head_size_of(), arm_inner_width_of()) == (16, 256)  # the paper's width
    runs = sw.plan(["induction"], [1, 4, 16], [1], "induction-tiny",
                   arms=["width", "head16", "inner256"], runs_dir=tmp_path)
    got = [(r.run.heads, r.run.config.head_dim, r.run.arms) for r in runs]
    assert got == [(1, 32, ["width"]), (1, 8, ["head16"]), (1, 128, ["inner256"]),
                   (4, 8, ["width", "head16"]), (4, 32, ["inner256"]),
                   (16, 2, ["width"]), (16, 8, ["head16", "inner256"])]
    with pytest.raises(ValueError, match=r"heads=3: the inner256 arm splits an attention "
                                         r"width of 128 \(4 x d_model=32\)"):
        arm_head_size("inner256", 3, tiny.d_model)
    with pytest.raises(ValueError, match="d_model=30: the head16 arm .* 4 does not divide 30"):
        arm_head_size("head16", 2, 30)
    # a size control is in no arm; a model of the tiny arms trains (two steps)
    assert Run("induction", 4, "induction-fresh", d_model=128).arms == []
    short = dataclasses.replace(tiny, steps=2, eval_every=1)
    res = train(Run.in_arm("induction", 2, short, "inner256"), progress=False)
    assert res.step == 2 and res.model.config.head_dim == 64
