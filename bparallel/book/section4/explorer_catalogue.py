"""Which models the model explorer offers (chapter 14): the catalogue, read from the
shipped manifests. Every task and head count of the finite-data models of the first seed
(:data:`EXPLORER_TASKS`), and chapter 12's fresh-data models of :data:`EXPLORER_FRESH_TASKS`,
one per configuration of its three arms; what the page and the chapter's table say of each
(:func:`explorer_table`). The data files themselves are :mod:`.explorer`'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._checks import nonnegative_int, one_of
from ...transformer.data import GRAPH_TASKS, PAPER_TASKS
from ...transformer.design import ARMS, DEFAULT_SEED, HEADS, model_name, run_name
from ...transformer.model import ModelConfig
from ...transformer.runs import Run
from ...transformer.shipped import MODELS_ROOT, shipped_manifest
from .explorer_steps import STEP_RUNS, step_explorer_models
from .models import ARM_NAMES, FRESH_PROFILES, run_outcome

__all__ = ["EXPLORER_FRESH_TASKS", "EXPLORER_TASKS", "explorer_models", "explorer_table",
           "fresh_explorer_models", "model_folder"]

#: The tasks the explorer offers: those with shipped finite-data models (``models/paper/``,
#: ``models/<task>/``); the tasks trained on fresh data only have no such folder.
EXPLORER_TASKS = PAPER_TASKS + GRAPH_TASKS
#: The tasks whose fresh-data models (chapter 12, ``models/<task>-fresh/``) the explorer
#: offers too: every arm and head count of the first seed.
EXPLORER_FRESH_TASKS = ("induction", "histogram")

# --------------------------------------------------------------------------- the models


def model_folder(task: str, models_root: Path) -> Path:
    """Where a task's models are shipped: ``models/paper/`` for copy and cycle, else
    ``models/<task>/``."""
    return models_root / ("paper" if task in PAPER_TASKS else task)


def _check_choice(values: Sequence[Any], name: str, valid: Sequence[Any]) -> list[Any]:
    values = list(values)
    if not values:
        raise ValueError(f"{name} is empty: choose at least one of {list(valid)}")
    for v in values:
        if v not in valid:
            raise ValueError(f"{name}: {v!r} is not one of {list(valid)}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name}: {values} repeats a value")
    return values


def explorer_models(
    *, tasks: Sequence[str] = EXPLORER_TASKS, heads: Sequence[int] = HEADS,
    seed: int = DEFAULT_SEED, fresh_tasks: Sequence[str] = EXPLORER_FRESH_TASKS,
    step_runs: Sequence[Sequence[int]] = STEP_RUNS,
    models_root: str | os.PathLike = MODELS_ROOT,
) -> list[dict[str, Any]]:
    """The models the explorer offers: one dict per (task, heads) of the finite-data models
    in that order, then per task of ``fresh_tasks`` (possibly empty) its fresh-data models
    (:func:`fresh_explorer_models`), then each step of the runs through training of
    ``step_runs`` (possibly empty; :func:`~.explorer_steps.step_explorer_models`). Each has
    ``name`` (``"cycle-h16"``, also the data file's stem), ``data`` (``"finite"``),
    ``task``, ``heads``, ``head_size``, ``seed``,
    ``profile`` (the training profile, whose held-out stream the page shows), ``folder``
    (the folder of ``models_root`` that ships it, :func:`model_folder`) and the manifest's
    held-out accuracies. Read from the manifests; raises ``FileNotFoundError``
    naming the model when one is not shipped."""
    tasks = _check_choice(tasks, "tasks", EXPLORER_TASKS)
    heads = _check_choice(heads, "heads", HEADS)
    nonnegative_int(seed, "seed")
    fresh_tasks = list(fresh_tasks)
    if fresh_tasks:
        _check_choice(fresh_tasks, "fresh_tasks", EXPLORER_FRESH_TASKS)
    root = Path(models_root)
    out = []
    for task in tasks:
        folder = model_folder(task, root)
        manifest = shipped_manifest(folder)
        for h in heads:
            name = model_name(task, h, seed=seed)
            entry = None if manifest is None else manifest["models"].get(name)
            if entry is None:
                raise FileNotFoundError(f"the explorer offers {task} with {h} heads, seed "
                                        f"{seed}, but {folder.name}/manifest.json lists no "
                                        f"model {name}")
            out.append({
                "name": run_name(task, h), "data": "finite", "task": task, "heads": h,
                "head_size": ModelConfig(**entry.get("model_config", {"n_heads": h})).head_dim,
                "seed": seed,
                "profile": entry.get("profile", manifest.get("profile", "paper")),
                "folder": folder.name,
                "heldout_accuracy": entry["heldout_accuracy"],
                "heldout_accuracy_predictable": entry["heldout_accuracy_predictable"],
            })
    for task in fresh_tasks:
        out += fresh_explorer_models(task, seed=seed, models_root=root)
    return out + step_explorer_models(step_runs, models_root=root)


def fresh_explorer_models(task: str, *, seed: int = DEFAULT_SEED,
                          models_root: str | os.PathLike = MODELS_ROOT
                          ) -> list[dict[str, Any]]:
    """The fresh-data models of ``task`` the explorer offers (chapter 12): one per
    configuration of every arm (:data:`~bparallel.transformer.design.ARMS`) and head count,
    of ``seed``, ordered by arm and head count, a configuration two arms share once. Each
    dict as :func:`explorer_models`'s with ``data`` ``"fresh"``, ``name``
    ``"<task>-fresh-hNN[-hsS]"``, the ``arms`` it belongs to (their names) and the
    manifest's ``outcome``: ``learned_at`` (the learning time of chapter 12's rule, ``None``
    when it never learned), ``converged_at``, ``budget``. ``FileNotFoundError`` when a
    configuration is not shipped."""
    one_of(task, "task", EXPLORER_FRESH_TASKS, "tasks with fresh-data models")
    folder = Path(models_root) / FRESH_PROFILES[task]
    manifest = shipped_manifest(folder)
    out: list[dict[str, Any]] = []
    for arm in ARMS:
        for h in HEADS:
            run = Run.in_arm(task, h, FRESH_PROFILES[task], arm, seed=seed)
            name = run.shipped_name
            entry = None if manifest is None else manifest["models"].get(name)
            if entry is None:
                raise FileNotFoundError(f"the explorer offers {task} on fresh data with {h} "
                                        f"heads in the {ARM_NAMES[arm]} arm, seed {seed}, but "
                                        f"{folder.name}/manifest.json lists no model {name}")
            key = f"{task}-fresh{run.name[len(task):]}"
            if any(m["name"] == key for m in out):
                continue  # shared with an arm before
            cfg = run.config
            out.append({
                "name": key, "data": "fresh", "task": task, "heads": h,
                "head_size": cfg.head_dim, "seed": seed, "profile": entry["profile"],
                "arms": [ARM_NAMES[a] for a in run.arms],
                "heldout_accuracy": entry["heldout_accuracy"],
                "heldout_accuracy_predictable": entry["heldout_accuracy_predictable"],
                "outcome": run_outcome(entry),
                "folder": folder.name, "weights": entry["file"], "sha256": entry["sha256"],
            })
    return out


def explorer_table(catalogue: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chapter's table of the models offered: training data, task, heads x head size,
    arms, held-out accuracies (fractions) and a fresh-data model's outcome in words. The
    steps of the runs through training are :func:`~.explorer_steps.step_table`'s."""
    rows = []
    for m in catalogue:
        if "series" in m:
            continue
        o = m.get("outcome")
        outcome = "—"
        if o:
            learned = ("not learned" if o["learned_at"] is None
                       else f"learned at step {o['learned_at']:,}")
            outcome = learned + (f", converged at {o['converged_at']:,}"
                                 if o["outcome"] == "converged" else
                                 f", censored at {o['budget']:,}")
        rows.append({"data": "fresh" if m["data"] == "fresh" else "finite set",
                     "task": m["task"], "heads × head size": f"{m['heads']} × {m['head_size']}",
                     "arms": ", ".join(m.get("arms", [])) or "fixed width",
                     "held-out accuracy": m["heldout_accuracy"],
                     "on predictable positions": m["heldout_accuracy_predictable"],
                     "outcome": outcome})
    return rows
