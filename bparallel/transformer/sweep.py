"""``python -m bparallel sweep``: the Section 4.1 models over a grid of tasks x heads x seeds,
trained as submitit jobs on this machine or on a Slurm cluster, each shipped when it ends.

Files (``<runs>`` is ``runs/sweep`` and ``<models>`` is ``models/<profile>`` by default)::

    <runs>/<profile>/seed-<S>/<task>-hNN.ckpt.pt   checkpoint after every epoch (train's own)
    <runs>/<profile>/seed-<S>/.<task>-hNN.lock     locked while a job trains that model
    <runs>/<profile>/logs/<job id>_0_log.out       each job's stdout (and _log.err: stderr)
    <models>/manifest.json                         shipped: copy-h04 (seed 42), copy-h04-s43, ...
    <models>/<task>-hNN[-s<S>].weights.pt          shipped weights (no suffix for seed 42)
    <models>/partial/seed-<S>/<task>-hNN.ckpt.pt   committed snapshot of an unfinished run

A job (:func:`train_and_ship`) is idempotent: it skips a shipped model; otherwise it takes
the model's lock (a model locked by another job is left to that job), restores the committed
snapshot when the run folder has no checkpoint, resumes the checkpoint (bitwise, as
:func:`~bparallel.transformer.train.train` does), trains to the profile's last epoch and
ships the model (:func:`~bparallel.transformer.shipped.ship`, which rewrites the manifest
under a lock of its own). So a killed sweep, run again, picks up where it stopped, and a
checkpoint that ``train --seed S --out-dir <runs>/<profile>/seed-S`` wrote is adopted.

Fresh-data profiles (:class:`~bparallel.transformer.design.FreshProfile`, e.g.
``induction-fresh``) train and ship the same way (a budget in steps, stopped when converged),
into ``models/<profile>/``; the profile's kind answers what differs (what a run counts, its
last epoch or budget, its arms). Their grid has arms too (``--arms width head16``): a
model of the head16 arm is named with its head size, ``induction-h08-hs16[-s<S>]``; 4 heads
of 16 is both arms' model, trained once.
``--budget-factor 5`` trains 5 times the budget (the runs that say "never" or "later" for a
model that did not learn), as ``<name>-x5``, starting from the plain run's checkpoint.

The command's options and help are :func:`bparallel.book.tools.cli.add_sweep_arguments`;
where a sweep stands (``--status``, ``--snapshot``) is :mod:`bparallel.transformer.sweep_status`;
one job's run and files, :class:`~bparallel.transformer.sweep_runs.ModelRun`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._checks import one_of, positive_int
from .._io import atomic_copy, file_lock, is_locked
from .data import TASKS
from .design import (
    ARMS,
    DEFAULT_SEED,
    HEADS,
    FreshProfile,
    Profile,
    get_profile,
)
from .runs import SIZE_TAGS, Run
from .runtime import device_name
from .shipped import RUNS_DIR, is_shipped, ship
from .sweep_runs import ModelRun, default_models_dir
from .sweep_status import format_status, shown_path, snapshot, sweep_status
from .train import train

EXECUTORS = ("local", "slurm", "debug")
SWEEP_DIR = RUNS_DIR / "sweep"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # what a job puts on its PYTHONPATH
LOCAL_TIMEOUT_MIN = 60 * 24 * 365  # submitit's local jobs time out (default: 2 minutes)
SLURM_TIME_MIN = 240
SLURM_MAX_REQUEUES = 20  # a job at its time limit is requeued and resumes its checkpoint


def plan(
    tasks: Iterable[str] | None = None,
    heads: Iterable[int] = HEADS,
    seeds: Iterable[int] = (DEFAULT_SEED,),
    profile: str | Profile | FreshProfile = "quick",
    *,
    runs_dir: str | os.PathLike = SWEEP_DIR,
    models_dir: str | os.PathLike | None = None,
    threads: int | None = None,
    device: str = "cpu",
    arms: Iterable[str] | None = None,
    budget_factor: int = 1,
    sizes: Mapping[str, int] | None = None,
    probes: bool = True,
) -> list[ModelRun]:
    """The grid ``tasks x heads x seeds`` (x ``arms`` for a fresh-data profile) at
    ``profile``, cheapest first: fewest heads first, then head size, task, seed, so that the
    seeds of one configuration train side by side and a configuration is complete (all its
    seeds shipped) as early as possible.

    ``arms`` (fresh-data profiles; default all, :data:`~bparallel.transformer.design.ARMS`):
    a configuration in both arms (4 heads of 16) is planned once. ``budget_factor``:
    fresh-data runs of that many times the budget. ``sizes``: model sizes other than the
    profile's (``d_model``, ``n_layers``, ``d_mlp``; :class:`~bparallel.transformer.runs.Run`,
    which names them). ``probes=False``: train without the probes through training.

    Bad input (unknown profile, task or arm, heads that do not divide the model width,
    negative or repeated seeds, a device other than cpu/cuda, arms or a budget factor for a
    finite-data profile) raises ``ValueError`` naming the argument, before anything runs.
    ``device="cuda"`` is checked by the jobs, which may run on another machine (a Slurm GPU
    node).
    """
    p = get_profile(profile)
    sizes = dict(sizes or {})
    tasks = list(p.tasks if tasks is None else tasks)
    heads, seeds = list(heads), list(seeds)
    arms = list(p.arms if arms is None else arms)
    p.total(budget_factor)  # a finite-data profile refuses a budget factor
    for name, values in (("tasks", tasks), ("heads", heads), ("seeds", seeds), ("arms", arms)):
        if not values:
            raise ValueError(f"{name}: give at least one")
        repeated = sorted({str(v) for v in values if values.count(v) > 1})
        if repeated:
            raise ValueError(f"{name}={values}: {', '.join(repeated)} given more than once")
    for task in tasks:
        if task not in TASKS:
            raise ValueError(f"tasks: {task!r} is not a task; valid tasks are {list(TASKS)}")
    for arm in arms:
        if arm not in ARMS:
            raise ValueError(f"arms: {arm!r} is not an arm; valid arms are {list(ARMS)}")
    if not set(arms) <= set(p.arms):
        raise ValueError(f"arms={arms}: profile {p.name!r} trains the arms {list(p.arms)} "
                         "(the other arms are for fresh-data profiles)")
    configs: list[tuple[int, int | None]] = []  # (heads, head size), each once
    for h in heads:
        try:
            for arm in arms:
                head_size = Run.in_arm(tasks[0], h, p, arm, budget_factor=budget_factor,
                                       **sizes).head_size  # checks that the model fits
                if (h, head_size) not in configs:
                    configs.append((h, head_size))
        except ValueError as err:
            raise ValueError(f"heads: {h!r} does not fit the model: {err}") from None
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seeds: {seed!r} is not an integer >= 0")
    if threads is not None:
        positive_int(threads, "threads")
    device_name(device)  # the name only: the jobs may run on another machine (a GPU node)
    models = default_models_dir(p) if models_dir is None else Path(models_dir)
    configs.sort(key=lambda c: (c[0], c[1] or 0))
    return [ModelRun(Run(t, h, p, seed=s, head_size=hs, budget_factor=budget_factor, **sizes),
                     Path(runs_dir), models, threads, device, probes)
            for h, hs in configs for t in tasks for s in seeds]


# --------------------------------------------------------------------------- one job


def _say(run: ModelRun, message: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"[{stamp}] {run}: {message}", flush=True)


def _restore(run: ModelRun) -> bool:
    """Copy the committed snapshot into an empty run folder; ``True`` if it did."""
    if run.checkpoint.exists():
        return False
    snapshot = run.find_partial()
    if snapshot is None:
        return False
    ck = run.load(snapshot)  # refuse another run's file before copying it
    atomic_copy(snapshot, run.checkpoint)
    _say(run, f"restored {run.unit} {ck.position} from the snapshot {shown_path(snapshot)}")
    return True


def train_and_ship(run: ModelRun) -> dict[str, Any]:
    """One job of a sweep: train ``run`` to its profile's last epoch, then ship it.

    Idempotent (see the module docstring). Returns what happened; ``status`` is
    ``"shipped"``, ``"already shipped"`` or ``"busy"`` (another job holds the model's lock
    and trains it; this one leaves it alone).
    """
    out: dict[str, Any] = {"model": run.name, "seed": run.seed, "shipped_as": run.shipped_as}
    if is_shipped(run.name, run.models_dir, seed=run.seed):
        _say(run, "already shipped")
        return {**out, "status": "already shipped"}
    with file_lock(run.lock, wait=False) as held:
        if not held:
            _say(run, f"another job holds {shown_path(run.lock)}: leaving the model to it")
            return {**out, "status": "busy"}
        if is_shipped(run.name, run.models_dir, seed=run.seed):  # shipped meanwhile
            return {**out, "status": "already shipped"}
        restored = _restore(run)
        t0 = time.perf_counter()
        start = run.load(run.checkpoint).position if run.checkpoint.exists() else 0
        _say(run, f"training {run.unit}s {start} -> {run.total} in {shown_path(run.run_dir)}, "
                  f"torch threads {run.threads or 'default'}, device {run.device}")
        result = train(run.run, out_dir=run.run_dir, threads=run.threads, progress=False,
                       device=run.device, probes=run.probes)
        entry = ship(run.checkpoint, run.models_dir, run=run.run)
        outcome = run.load(run.checkpoint).outcome()
        seconds = time.perf_counter() - t0
        while (snapshot := run.find_partial()):
            snapshot.unlink()  # shipped: the snapshot has done its work
        _say(run, f"{run.unit}s {result.resumed_from} -> {result.position} in {seconds:.0f} s; "
                  f"shipped as {shown_path(run.models_dir / entry['file'])}, held-out accuracy "
                  f"{entry['heldout_accuracy']:.4f}, {outcome}, sha256 {entry['sha256']}")
        return {**out, "status": "shipped", "resumed_from": result.resumed_from,
                "restored": restored, f"{run.unit}s": result.position, "outcome": outcome,
                "seconds": seconds,
                "sha256": entry["sha256"], "heldout_accuracy": entry["heldout_accuracy"]}


class TrainAndShip:
    """The callable that submitit runs: :func:`train_and_ship` on one :class:`ModelRun`.

    ``checkpoint`` is submitit's hook for a job that reaches its time limit (Slurm) or is
    preempted: the job is requeued with the same argument and resumes from the checkpoint of
    its last finished epoch.
    """

    def __call__(self, run: ModelRun) -> dict[str, Any]:
        return train_and_ship(run)

    def checkpoint(self, run: ModelRun) -> Any:
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, run)


TRAIN_AND_SHIP = TrainAndShip()


# --------------------------------------------------------------------------- the jobs


def default_threads(executor: str, jobs: int, slurm_cpus_per_task: int | None = None
                    ) -> int | None:
    """Torch threads per job: this machine's cores shared among ``jobs`` local jobs, a
    Slurm job's CPUs, or torch's own choice in the debug executor."""
    if executor == "local":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, (cores or 1) // jobs)
    if executor == "slurm":
        return slurm_cpus_per_task or 1
    return None


def make_executor(
    executor: str,
    folder: str | os.PathLike,
    *,
    jobs: int = 1,
    slurm_partition: str | None = None,
    slurm_time: int = SLURM_TIME_MIN,
    slurm_cpus_per_task: int | None = None,
    slurm_extra: dict[str, str] | None = None,
    device: str = "cpu",
) -> Any:
    """A submitit ``AutoExecutor`` for ``executor`` writing its files into ``folder``.

    With a CUDA ``device`` every job asks for one GPU (``gpus_per_node=1``): a Slurm job
    gets a GPU of its node, and submitit's local jobs see GPU 0 (all share it) instead of
    none (submitit hides the GPUs from a local job that asks for none).

    ``local``: jobs are processes of this machine, never timed out. ``slurm``: one job array
    of at most ``jobs`` jobs at once (``--array=...%jobs``), ``slurm_time`` minutes each
    (a job at the limit is requeued and resumes), ``slurm_extra`` as ``#SBATCH --key=value``
    lines. ``debug``: jobs run in this process, one after another.
    """
    import submitit

    one_of(executor, "executor", EXECUTORS, "executors")
    ex = submitit.AutoExecutor(folder=folder, cluster=executor,
                               slurm_max_num_timeout=SLURM_MAX_REQUEUES)
    # Jobs import this package however the sweep was started (an uninstalled checkout too).
    setup = [f"export PYTHONPATH={shlex.quote(str(PACKAGE_ROOT))}${{PYTHONPATH:+:$PYTHONPATH}}"]
    gpus = 1 if device.startswith("cuda") else 0
    if executor == "local":
        ex.update_parameters(name="bparallel-sweep", timeout_min=LOCAL_TIMEOUT_MIN,
                             local_setup=setup, gpus_per_node=gpus)
    elif executor == "slurm":
        ex.update_parameters(name="bparallel-sweep", timeout_min=slurm_time, gpus_per_node=gpus,
                             cpus_per_task=slurm_cpus_per_task, slurm_partition=slurm_partition,
                             slurm_array_parallelism=jobs, slurm_setup=setup,
                             slurm_additional_parameters=slurm_extra or None)
    return ex


def _outcome(run: ModelRun, job: Any, echo: Callable[[str], object]) -> dict[str, Any]:
    try:
        result = job.result()
    except Exception as err:  # the job's traceback is in its log
        message = (str(err).strip().splitlines() or [type(err).__name__])[-1]
        result = {"model": run.name, "seed": run.seed, "shipped_as": run.shipped_as,
                  "status": "failed", "error": message, "log": str(job.paths.stderr)}
        echo(f"[sweep] {run}: FAILED ({message}); log {shown_path(job.paths.stderr)}")
        return result
    echo(f"[sweep] {run}: {result['status']}")
    return result


def run_sweep(
    runs: Sequence[ModelRun],
    executor: str = "local",
    *,
    jobs: int = 1,
    poll_s: float = 0.5,
    echo: Callable[[str], object] = print,
    **slurm: Any,
) -> list[dict[str, Any]]:
    """Run :func:`train_and_ship` on every model of ``runs`` with ``executor``.

    Shipped models and models another job holds are skipped before anything starts.
    ``local``: at most ``jobs`` jobs at once, returns when all have ended; ``debug``: one
    after another in this process; ``slurm``: submits one job array (``jobs`` at once) and
    returns at once (status ``"submitted"``; follow it with :func:`sweep_status`).
    ``slurm`` keywords go to :func:`make_executor`. Returns one dict per model, in the
    order of ``runs``.
    """
    one_of(executor, "executor", EXECUTORS, "executors")
    positive_int(jobs, "jobs")
    results: dict[ModelRun, dict[str, Any]] = {}
    for run in runs:
        base = {"model": run.name, "seed": run.seed, "shipped_as": run.shipped_as}
        if is_shipped(run.name, run.models_dir, seed=run.seed):
            results[run] = {**base, "status": "already shipped"}
        elif is_locked(run.lock):
            echo(f"[sweep] {run}: another job is training it; skipped")
            results[run] = {**base, "status": "busy"}
    todo = [run for run in runs if run not in results]
    echo(f"[sweep] {len(todo)} of {len(runs)} models to train ({len(runs) - len(todo)} "
         f"shipped or running elsewhere), executor {executor}")
    if todo:
        # submitit's files, flat: a local job's "%j" folder would also leave a stray "%j/"
        folder = todo[0].runs_dir / todo[0].profile.name / "logs"
        ex = make_executor(executor, folder, jobs=jobs, device=todo[0].device, **slurm)
        if executor == "slurm":
            for run, job in zip(todo, ex.map_array(TRAIN_AND_SHIP, todo), strict=True):
                echo(f"[sweep] {run}: submitted as Slurm job {job.job_id}")
                results[run] = {"model": run.name, "seed": run.seed, "status": "submitted",
                                "shipped_as": run.shipped_as, "job_id": job.job_id}
            echo(f"[sweep] logs: {shown_path(folder)}/<job id>_0_log.out")
        elif executor == "debug":
            for run, job in zip(todo, ex.map_array(TRAIN_AND_SHIP, todo), strict=True):
                results[run] = _outcome(run, job, echo)
        else:
            _run_local(ex, todo, jobs, poll_s, results, echo)
    return [results[run] for run in runs]


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it, deepest first, from Linux's ``/proc`` (elsewhere
    ``pid`` alone)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        out.append(todo.pop())
        todo += children.get(out[-1], [])
    return out[::-1]


def _kill_job(job: Any) -> None:
    """End a local job at once: its shell, submitit's controller and the training process
    (which ignores SIGTERM and, started in the background, SIGINT). The run keeps the
    checkpoint of its last evaluation, written atomically."""
    job.cancel(check=False)
    pid = int(job.job_id)
    for p in _process_tree(pid) if pid > 1 else []:
        if p > 1 and p != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)


def _run_local(ex: Any, todo: list[ModelRun], jobs: int, poll_s: float,
               results: dict[ModelRun, dict[str, Any]], echo: Callable[[str], object]) -> None:
    """At most ``jobs`` local jobs at once; returns when all have ended. A sweep that is
    stopped (Ctrl-C, or ``kill``: SIGTERM, which submitit's jobs themselves ignore) ends its
    running jobs before it exits (:func:`_kill_job`), so none trains on unseen: each keeps
    the checkpoint of its last evaluation, and the next sweep resumes it."""
    waiting, running = list(todo), []
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _stop) if main else None
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                run = waiting.pop(0)
                job = ex.submit(TRAIN_AND_SHIP, run)
                echo(f"[sweep] {run}: started, job {job.job_id}, log "
                     f"{shown_path(job.paths.stdout)}")
                running.append((run, job))
            finished = [item for item in running if item[1].done()]
            for run, job in finished:
                running.remove((run, job))
                results[run] = _outcome(run, job, echo)
            if not finished:
                time.sleep(poll_s)
    except BaseException:
        for run, job in running:
            echo(f"[sweep] {run}: stopped, job {job.job_id} cancelled (it resumes from its "
                 "last checkpoint)")
            _kill_job(job)
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)


# --------------------------------------------------------------------------- command line


def _slurm_extra(items: Sequence[str]) -> dict[str, str]:
    extra = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--slurm-extra {item!r}: expected KEY=VALUE, e.g. account=proj")
        extra[key.strip().lstrip("-").replace("-", "_")] = value
    return extra


def run(args: argparse.Namespace) -> int:
    """``python -m bparallel sweep``: check everything, then status, snapshot or the jobs
    (the options: :func:`bparallel.book.tools.cli.add_sweep_arguments`)."""
    positive_int(args.jobs, "jobs")
    for name in ("slurm_time", "slurm_cpus_per_task"):
        if getattr(args, name) is not None:
            positive_int(getattr(args, name), f"--{name.replace('_', '-')}")
    extra = _slurm_extra(args.slurm_extra)
    threads = args.threads
    if threads is None:
        threads = default_threads(args.executor, args.jobs, args.slurm_cpus_per_task)
    runs = plan(args.tasks, args.heads, args.seeds, args.profile, runs_dir=args.runs_dir,
                models_dir=args.models_dir, threads=threads, device=args.device,
                arms=args.arms, budget_factor=args.budget_factor,
                sizes={k: getattr(args, k) for k in SIZE_TAGS
                       if getattr(args, k, None) is not None},
                probes=not getattr(args, "no_probes", False))
    if args.status:
        p = runs[0].profile
        print(f"profile {p.name} ({runs[0].total} {runs[0].unit}s): runs in "
              f"{shown_path(runs[0].runs_dir / p.name)}, shipped in "
              f"{shown_path(runs[0].models_dir)}")
        print(format_status(sweep_status(runs)))
        return 0
    if args.snapshot:
        if not snapshot(runs):
            print("[snapshot] nothing to copy: no unfinished checkpoints")
        return 0
    results = run_sweep(runs, args.executor, jobs=args.jobs,
                        slurm_partition=args.slurm_partition, slurm_time=args.slurm_time,
                        slurm_cpus_per_task=args.slurm_cpus_per_task, slurm_extra=extra)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("[sweep] " + ", ".join(f"{n} {status}" for status, n in counts.items()))
    return 1 if counts.get("failed") else 0

__all__ = ["EXECUTORS", "LOCAL_TIMEOUT_MIN", "PACKAGE_ROOT", "SLURM_MAX_REQUEUES", "SLURM_TIME_MIN",
           "SWEEP_DIR", "TRAIN_AND_SHIP", "TrainAndShip", "default_threads", "make_executor",
           "plan", "run", "run_sweep", "train_and_ship"]
