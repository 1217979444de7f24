"""Where a sweep stands, from its files alone: :func:`sweep_status` (``python -m bparallel
sweep --status``) and :func:`snapshot` (``--snapshot``: unfinished checkpoints copied where
git can commit them, so that the next session resumes them). The runs are
:class:`~bparallel.transformer.sweep_runs.ModelRun`; :mod:`bparallel.transformer.sweep` trains them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._io import atomic_copy, is_locked
from .design import DEFAULT_SEED
from .shipped import is_shipped, shipped_manifest
from .sweep_runs import ModelRun

__all__ = ["shown_path", "sweep_status", "format_status", "snapshot"]


def shown_path(path: str | os.PathLike) -> str:
    """``path`` relative to the working directory when it lies inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def sweep_status(runs: Sequence[ModelRun]) -> list[dict[str, Any]]:
    """Where each model of the grid stands, from the files alone (no job engine needed).

    ``status``: ``"shipped"`` (in the manifest), ``"running"`` (a job holds its lock),
    ``"partial"`` (a checkpoint in the run folder, else a committed snapshot, at ``epoch``),
    ``"pending"`` (nothing yet) or ``"invalid"`` (a checkpoint that is corrupted or of
    another run; ``error`` says which). A fresh-data run counts ``step`` instead of
    ``epoch``; ``outcome`` is the checkpoint kind's word (a fresh-data run's converged,
    budget reached, not learned or running; a finite-data run's finished or running).
    """
    manifests: dict[Path, dict[str, Any]] = {}
    rows = []
    for run in runs:
        if run.models_dir not in manifests:
            manifests[run.models_dir] = (shipped_manifest(run.models_dir) or {"models": {}})[
                "models"]
        unit = run.unit
        row: dict[str, Any] = {"seed": run.seed, "model": run.name, "status": "pending",
                               "unit": unit, unit: 0, "of": run.total,
                               "heldout_accuracy": None, "file": None, "outcome": None}
        entry = manifests[run.models_dir].get(run.shipped_as)
        if entry is not None and entry.get("seed", DEFAULT_SEED) == run.seed:
            row.update(status="shipped", file=run.models_dir / entry["file"],
                       heldout_accuracy=entry["heldout_accuracy"])
            row[unit] = entry[f"{unit}s"]
            row["outcome"] = entry.get("outcome", "finished")
            rows.append(row)
            continue
        source = run.checkpoint if run.checkpoint.is_file() else run.find_partial()
        if source is not None:
            try:
                ck = run.load(source)
            except ValueError as err:
                row.update(status="invalid", file=source, error=str(err))
            else:
                acc = ck.history["heldout_accuracy"]
                row.update(status="partial", file=source,
                           heldout_accuracy=acc[-1] if acc else None)
                row[unit], row["outcome"] = ck.position, ck.outcome()
        if is_locked(run.lock):
            row["status"] = "running"
        rows.append(row)
    return rows


def format_status(rows: Sequence[dict[str, Any]]) -> str:
    """:func:`sweep_status` as a table, with a count per status."""
    unit = rows[0]["unit"] if rows else "epoch"  # one profile: one unit
    width = max([10, *(len(r["model"]) for r in rows)])
    digits = max([4, *(len(str(r["of"])) for r in rows)])
    lines = [f"{'seed':>5}  {'model':<{width}} {'status':<10} {unit:>{2 * digits + 1}}  "
             f"{'held-out':>8}  {'outcome':<16}file"]
    for r in rows:
        acc = "" if r["heldout_accuracy"] is None else f"{r['heldout_accuracy']:.4f}"
        file = "" if r["file"] is None else shown_path(r["file"])
        outcome = f"{r.get('outcome') or '':<16}"
        lines.append(f"{r['seed']:>5}  {r['model']:<{width}} {r['status']:<10} "
                     f"{r[unit]:>{digits}}/{r['of']:<{digits}}  {acc:>8}  {outcome}{file}")
        if "error" in r:
            lines.append(f"{'':>17}{r['error']}")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines.append(", ".join(f"{n} {status}" for status, n in counts.items()))
    return "\n".join(line.rstrip() for line in lines)


def snapshot(runs: Sequence[ModelRun], echo: Callable[[str], object] = print) -> list[Path]:
    """Copy the checkpoint of every model of the grid that is not shipped yet into the
    committed ``<models>/partial/seed-<S>/`` (atomically); return the copies.

    A job restores a snapshot when its run folder has no checkpoint, so a sweep can go on
    in another session or on another machine once the snapshots are committed.
    """
    copies = []
    for run in runs:
        if not run.checkpoint.is_file() or is_shipped(run.name, run.models_dir, seed=run.seed):
            continue
        try:
            ck = run.load(run.checkpoint)
        except ValueError as err:
            echo(f"[snapshot] {run}: not copied: {err}")
            continue
        dest = atomic_copy(run.checkpoint, run.partial_path())
        echo(f"[snapshot] {run}: {run.unit} {ck.position}/{run.total} -> {shown_path(dest)}")
        copies.append(dest)
    return copies
