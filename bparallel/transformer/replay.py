"""A shipped run's weights at chosen steps of its training, by replaying it.

Training keeps one checkpoint per run (the latest) and ships the final weights; the steps
through a phase change are kept only as the probes the manifest records. Because a run
resumed from its checkpoint ends bitwise where an uninterrupted run would
(:mod:`~bparallel.transformer.train`), the run can be trained again from its seed and
stopped at each chosen step: the weights found there are the shipped run's own at that
step, on a machine whose kernels give the same bits (the machine it trained on, one
torch thread). :func:`replay_steps` does so and checks it: the replay's per-head probes up to
its last step (:mod:`~bparallel.transformer.head_probes`) must equal the manifest's, value by
value; the largest difference is written with the snapshots.

Files, beside the run's shipped weights (``models/<profile>/``)::

    steps/<shipped name>/step-00280.weights.pt   # a weights file (checkpoints.write_weights)
    steps/index.json                             # per run: steps, SHA-256s, the check

Command line (one torch thread, as the runs trained)::

    python -m bparallel.transformer.replay --profile induction-fresh-lr3e-3 --heads 16 \\
        --head-size 16 --steps 0 200 440 460 470 480 500 600

A weights file here is the shipped format (``load_weights``, ``weights_only=True``) with the
step in its ``meta``. Step 0 is the initial model (:func:`~.train.initial_model`, the same
weights on any machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .._checks import nonnegative_int
from .._io import atomic_write_text, file_lock
from .checkpoints import (
    _clean,
    load_checkpoint,
    load_weights,
    read_manifest,
    sha256_file,
    write_weights,
)
from .design import FreshProfile
from .model import Transformer
from .runs import Run
from .shipped import MODELS_ROOT
from .train import initial_model, train

__all__ = ["STEPS_FOLDER", "STEPS_INDEX", "step_path", "replay_steps", "read_steps_index",
           "load_step", "probe_difference", "main"]

#: The folder under a shipped profile's folder that holds the replayed steps.
STEPS_FOLDER = "steps"
#: Its index: per shipped name, the steps, their files' SHA-256 and the replay's check.
STEPS_INDEX = "index.json"


def step_path(run: Run, models_dir: str | os.PathLike, step: int) -> Path:
    """``<models_dir>/steps/<shipped name>/step-<step, 5 digits>.weights.pt``."""
    nonnegative_int(step, "step")
    return Path(models_dir) / STEPS_FOLDER / run.shipped_name / f"step-{step:05d}.weights.pt"


def read_steps_index(models_dir: str | os.PathLike) -> dict[str, Any]:
    """The index of the replayed steps under ``models_dir`` (``{}``: none)."""
    path = Path(models_dir) / STEPS_FOLDER / STEPS_INDEX
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err


def probe_difference(replayed: dict[str, list[Any]], shipped: dict[str, list[Any]]) -> float:
    """The largest absolute difference between the per-head probes of a replay's history
    (``history["heads"]``), written as a manifest writes them (6 significant digits), and a
    manifest's ``head_probes``, over every score the replay reached (its steps must be the
    first steps of the manifest's; ``seconds`` is wall time, not compared). ``0.0``: every
    value equal as stored (a bitwise replay gives it); ``inf``: a value is missing or not
    finite on one side only."""
    steps = list(replayed.get("step", []))
    if not steps or list(shipped.get("step", []))[: len(steps)] != steps:
        raise ValueError(f"the replay's probe steps {steps[:3]}... are not the first of the "
                         f"manifest's {list(shipped.get('step', []))[:3]}...")
    worst = 0.0
    for key, values in replayed.items():
        if key in ("step", "seconds"):
            continue
        if key not in shipped:
            raise ValueError(f"the manifest's head probes have no {key!r}")
        a = torch.tensor(_numbers(_clean(list(values))), dtype=torch.float64)
        b = torch.tensor(_numbers(shipped[key][: len(steps)]), dtype=torch.float64)
        if a.shape != b.shape:
            raise ValueError(f"head probe {key!r}: shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)} differ")
        both_nan = torch.isnan(a) & torch.isnan(b)
        diff = (a - b).abs().masked_fill(both_nan, 0.0)
        worst = max(worst, math.inf if torch.isnan(diff).any() else float(diff.max()))
    return worst


def _numbers(values: Any) -> Any:
    """Nested lists with ``None`` (a manifest's NaN) as NaN."""
    if isinstance(values, list):
        return [_numbers(v) for v in values]
    return math.nan if values is None else float(values)


def _meta(run: Run, step: int) -> dict[str, Any]:
    return {"task": run.task, "heads": run.heads, "head_size": run.head_size,
            "seed": run.seed, "data_seed": run.batch_seed, "profile": run.recipe.name,
            "step": step, "replayed_from": run.shipped_name, **run.record()}


def replay_steps(
    run: Run,
    steps: Sequence[int],
    models_dir: str | os.PathLike,
    work_dir: str | os.PathLike,
    *,
    threads: int | None = 1,
    progress: bool = True,
) -> dict[str, Any]:
    """Train ``run`` (shipped in ``models_dir``, a fresh-data profile's folder) again from its
    seed in ``work_dir`` and write its weights at each of ``steps`` (ascending, distinct,
    within the shipped run's steps) into ``models_dir/steps/`` (:func:`step_path`); then
    compare the replay's per-head probes with the manifest's (:func:`probe_difference`) and
    enter the run in the index. Returns its index entry. A step whose file exists is not
    written again, and ``work_dir``'s checkpoint resumes, so a killed replay loses nothing.
    Bitwise only where the kernels are the run's: the check says whether they were."""
    if not isinstance(run.recipe, FreshProfile):
        raise ValueError(f"run: {run} is a finite-data run; steps are replayed for fresh-data "
                         "runs")
    steps = [nonnegative_int(s, "steps") for s in steps]
    if not steps or steps != sorted(set(steps)):
        raise ValueError(f"steps={steps}: give distinct steps in ascending order")
    models_dir, work_dir = Path(models_dir), Path(work_dir)
    manifest = read_manifest(models_dir)
    if manifest is None:
        raise ValueError(f"models_dir: {models_dir} ships no manifest.json")
    entry = manifest["models"].get(run.shipped_name)
    if entry is None:
        raise ValueError(f"run: {run.shipped_name} is not shipped in {models_dir}")
    if steps[-1] > entry["steps"]:
        raise ValueError(f"steps: {steps[-1]} is beyond the shipped run's {entry['steps']}")
    if "head_probes" not in entry:
        raise ValueError(f"run: {run.shipped_name} records no head probes to check a replay "
                         "against")
    work_dir.mkdir(parents=True, exist_ok=True)
    ckpt_file = run.checkpoint_path(work_dir)
    # the replay's checkpoint as last read (None: none yet), read again only after training
    ck = load_checkpoint(ckpt_file, **run.expect()) if ckpt_file.is_file() else None
    files = {}
    for step in steps:
        path = step_path(run, models_dir, step)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            if step == 0:
                model = initial_model(run)
                write_weights(path, run.config.to_dict(), model.state_dict(), _meta(run, 0))
            else:
                at = 0 if ck is None else ck.position
                if at > step:
                    raise ValueError(f"work_dir: its checkpoint of {run.name} is at step {at}, "
                                     f"past step {step}: give a fresh work_dir")
                if at < step:
                    train(run, out_dir=work_dir, stop_after=step - at, threads=threads,
                          progress=progress)
                    ck = load_checkpoint(ckpt_file, **run.expect())
                if ck.position != step:
                    raise ValueError(f"the replay of {run.name} stopped at step "
                                     f"{ck.position}, not {step}")
                write_weights(path, ck.data["model_config"], ck.data["model"],
                              {**_meta(run, step), "hardware": ck.data.get("hardware")})
        files[str(step)] = {"file": path.relative_to(models_dir).as_posix(),
                            "sha256": sha256_file(path)}
    difference = None
    if steps[-1] > 0:
        if ck is None:
            ck = load_checkpoint(ckpt_file, **run.expect())
        if ck.position != steps[-1]:
            raise ValueError(f"work_dir: its checkpoint of {run.name} is at step "
                             f"{ck.position}, not at the last step {steps[-1]}")
        difference = probe_difference(ck.data["history"]["heads"], entry["head_probes"])
    folder = models_dir / STEPS_FOLDER
    with file_lock(folder / ".index.lock"):  # replays of several runs take turns
        index = read_steps_index(models_dir)
        index[run.shipped_name] = {
            "steps": steps, "files": files, "shipped_sha256": entry["sha256"],
            "probe_difference": difference,
            "probes_equal": difference == 0.0,
            "note": "the replay's per-head probes up to its last step against the manifest's",
        }
        atomic_write_text(folder / STEPS_INDEX, json.dumps(index, indent=1, sort_keys=True)
                          + "\n")
    return index[run.shipped_name]


def load_step(run: Run, models_dir: str | os.PathLike, step: int) -> Transformer:
    """The replayed weights of ``run`` at ``step`` (eval mode), checked against the index's
    SHA-256."""
    index = read_steps_index(models_dir).get(run.shipped_name)
    if index is None or str(step) not in index["files"]:
        raise ValueError(f"step: {run.shipped_name} has no replayed step {step} in "
                         f"{Path(models_dir) / STEPS_FOLDER}")
    model, _ = load_weights(step_path(run, models_dir, step),
                            sha256=index["files"][str(step)]["sha256"])
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bparallel.transformer.replay``: :func:`replay_steps` of one shipped run."""
    p = argparse.ArgumentParser(prog="python -m bparallel.transformer.replay",
                                description=main.__doc__)
    p.add_argument("--profile", required=True, help="a fresh-data profile with head probes")
    p.add_argument("--task", default="induction")
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--head-size", type=int, default=None)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--steps", type=int, nargs="+", required=True)
    p.add_argument("--work-dir", default="runs/replay", help="where the replay trains")
    args = p.parse_args(argv)
    try:
        run = Run(args.task, args.heads, args.profile, seed=args.seed, head_size=args.head_size)
        entry = replay_steps(run, args.steps, MODELS_ROOT / run.recipe.name,
                             Path(args.work_dir) / run.name)
    except (ValueError, FileNotFoundError) as err:
        p.error(str(err))
    print(f"{run.shipped_name}: steps {entry['steps']}; probes equal to the manifest's as "
          f"stored: {entry['probes_equal']} (largest difference {entry['probe_difference']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
