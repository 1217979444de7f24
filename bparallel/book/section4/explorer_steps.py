"""The explorer through training (chapters 13 and 14): the two runs of chapter 13's figure
at the steps replayed through their phase change, as models of the explorer with a slider.

Seed 42 of the learning-rate control at 3e-3 (:data:`STEP_PROFILE`), one head of 256 and
sixteen of 16 at the attention width of 256 (:data:`STEP_RUNS`), at each step that
:mod:`bparallel.transformer.replay` wrote from before the plateau to after the fall of the
loss. Each step is one model of the catalogue (:func:`step_explorer_models`) and one data
file, named ``induction-circuit-h01-hs256-t00280`` (the run's name and the step); the page
shows the steps of one run on a slider and keeps the view (sequence, layer, removed heads)
as it moves. Beside the model, a step's data file holds each head's scores at that step
(:func:`step_scores`): :func:`~bparallel.transformer.head_probes.head_probe` of the
float32 weights on the run's probe set, the measurement chapter 13 reads (equal, at the
steps the run probed, to its manifest's ``head_probes``, as stored).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._checks import one_of
from ...transformer.arms import arms_of
from ...transformer.data import SequenceDataset
from ...transformer.design import DEFAULT_SEED, fresh_heldout, get_profile
from ...transformer.head_probes import HEAD_SCALAR_KEYS, HEAD_SCORE_KEYS, head_probe
from ...transformer.model import Transformer
from ...transformer.replay import read_steps_index
from ...transformer.runs import Run
from ...transformer.shipped import MODELS_ROOT, shipped_manifest
from .models import ARM_NAMES, run_outcome

__all__ = ["STEP_PROFILE", "STEP_RUNS", "STEP_TASK", "replayed_run", "series_name",
           "step_explorer_models", "step_probe_set", "step_scores", "step_table"]

#: The profile, task and runs (heads, head size; seed 42) the explorer offers through
#: training: chapter 13's figure.
STEP_PROFILE = "induction-fresh-lr3e-3"
STEP_TASK = "induction"
STEP_RUNS = ((1, 256), (16, 16))


def series_name(run: Run) -> str:
    """The explorer's name of a run through training: ``induction-circuit-h01-hs256``."""
    return f"{run.task}-circuit{run.name[len(run.task):]}"


def replayed_run(pair: Sequence[int], models_root: str | os.PathLike = MODELS_ROOT
                 ) -> tuple[Run, dict[str, Any], dict[str, Any], Path]:
    """The run ``(heads, head_size)`` (seed 42 of :data:`STEP_PROFILE`) with its manifest
    entry, its replayed steps (the replay's index entry) and its models folder.
    ``FileNotFoundError`` when the run or its steps are not shipped."""
    if len(pair) != 2:
        raise ValueError(f"runs: {pair!r} is not (heads, head_size)")
    folder = Path(models_root) / STEP_PROFILE
    manifest = shipped_manifest(folder)
    run = Run(STEP_TASK, int(pair[0]), STEP_PROFILE, seed=DEFAULT_SEED, head_size=int(pair[1]))
    entry = None if manifest is None else manifest["models"].get(run.shipped_name)
    steps = read_steps_index(folder).get(run.shipped_name)
    if entry is None or steps is None:
        raise FileNotFoundError(f"the explorer offers {run.shipped_name} of {STEP_PROFILE} "
                                f"through training, but {folder.name}/ ships "
                                f"{'no such model' if entry is None else 'no steps of it'}"
                                " (python -m bparallel.transformer.replay)")
    return run, entry, steps, folder


def step_probe_set() -> SequenceDataset:
    """The sequences :data:`STEP_PROFILE`'s runs were probed on through training: the first
    ``probe_sequences`` of its fixed held-out set."""
    n = get_profile(STEP_PROFILE).probe_sequences
    return fresh_heldout(STEP_TASK, STEP_PROFILE).subset(slice(0, n))


def step_explorer_models(runs: Sequence[Sequence[int]] = STEP_RUNS, *,
                         models_root: str | os.PathLike = MODELS_ROOT) -> list[dict[str, Any]]:
    """One catalogue entry per replayed step of each run ``(heads, head_size)`` of ``runs``
    (seed 42 of :data:`STEP_PROFILE`), in the order of ``runs`` and of the steps: as
    :func:`~.explorer_catalogue.fresh_explorer_models`'s (the shipped run's ``outcome``),
    with ``name`` ``<series>-t<step>``, ``series`` (:func:`series_name`), ``step``, the
    series' ``steps``, and the step's weights file and SHA-256 (the replay's index).
    ``FileNotFoundError`` when a run or its steps are not shipped."""
    out: list[dict[str, Any]] = []
    for pair in runs:
        run, entry, steps, folder = replayed_run(pair, models_root)
        series = series_name(run)
        for step in steps["steps"]:
            file = steps["files"][str(step)]
            out.append({
                "name": f"{series}-t{step:05d}", "data": "fresh", "task": STEP_TASK,
                "heads": run.heads, "head_size": run.config.head_dim, "seed": run.seed,
                "profile": STEP_PROFILE, "arms": [ARM_NAMES[a] for a in arms_of(run.config)],
                "series": series, "step": step, "steps": list(steps["steps"]),
                "outcome": run_outcome(entry),
                "folder": folder.name, "weights": file["file"], "sha256": file["sha256"],
            })
    return out


def step_scores(model: Transformer, profile: str = STEP_PROFILE) -> dict[str, Any]:
    """Each head's scores at a step (:func:`~bparallel.transformer.head_probes.head_probe` of
    ``model`` as given, float32, on the probe set of ``profile``'s held-out stream, as its
    training probed them): :data:`~bparallel.transformer.head_probes.HEAD_SCORE_KEYS` ``(L,
    H)`` nested lists, the probe set's loss and accuracy on the predictable positions, and
    its size ``probe_sequences``."""
    one_of(profile, "profile", (STEP_PROFILE,), "profiles offered through training")
    probes = step_probe_set()
    values = head_probe(model, probes)
    return {**{k: values[k] for k in HEAD_SCORE_KEYS},
            **{k: float(values[k]) for k in HEAD_SCALAR_KEYS}, "probe_sequences": len(probes)}


def step_table(catalogue: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chapter 14's table of the runs offered through training, one row per run of the
    ``catalogue``'s steps: heads x head size, seed, profile, the steps offered and the
    run's learning and convergence steps (chapter 12's rule)."""
    rows: dict[str, dict[str, Any]] = {}
    for m in catalogue:
        if "series" not in m:
            continue
        o = m["outcome"]
        row = rows.setdefault(m["series"], {
            "run": f"{m['heads']} × {m['head_size']}, seed {m['seed']}",
            "profile": m["profile"], "steps offered": [],
            "learned at": "never" if o["learned_at"] is None else f"{o['learned_at']:,}",
            "converged at": ("—" if o.get("converged_at") is None
                             else f"{o['converged_at']:,}")})
        row["steps offered"].append(f"{m['step']:,}")
    return [{**r, "steps offered": ", ".join(r["steps offered"])} for r in rows.values()]
