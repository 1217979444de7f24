"""Chapter 12's causal tests on the fresh-data models of its controlled experiment: the one
part of the experiment that loads and runs models (:mod:`.graph_experiment`
reads manifests only).

- :func:`measure_heads`: one measuring pass per model (:func:`~.measures.measure_models`, the
  ``"heads"`` part, through the metrics cache): knockouts, and per head the margin drop of
  removing it alone by mean ablation, its split-half reliability and its minimax fidelity;
- :func:`layer_knockouts`: which layers each task needs, per arm and head count;
- :func:`head_tests`: does per-head fidelity rank the heads as their impact does, per task
  and mode, never pooled across tasks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...transformer.design import ARMS, HEADS, arm_head_dim
from .graph_tasks import head_study
from .models import ARM_NAMES, FreshRuns
from .statistics import head_claims, scored_cells


def measure_heads(models: Mapping[tuple[str, int, int, int], Any], *, num_sequences: int,
                  reference_sequences: int, cache_dir: str | os.PathLike | None,
                  recorded: str | os.PathLike | None = None, horizon: int = 100,
                  ) -> dict[tuple[str, int, int, int], dict[str, Any]]:
    """The causal tests of the fresh-data models (keyed ``(task, heads, head size, seed)``),
    :func:`~.graph_tasks.head_study` with the impact (the ``"heads"`` part): on the
    first ``num_sequences`` held-out sequences of each task, the knockouts (every head,
    each layer's heads) and, per head, the margin drop of removing it alone by mean ablation
    (the means over the next ``reference_sequences``) with its split-half reliability and
    the head's minimax fidelity in both modes. The sequences are those of the finite-data
    models of the same task. ``recorded``: the results recorded beside the shipped models
    (``models/recorded/``, ``python -m bparallel record``), read before computing."""
    return head_study(models, num_sequences=num_sequences,
                      reference_sequences=reference_sequences, horizon=horizon,
                      cache_dir=cache_dir, recorded=recorded, impact=True)


def layer_knockouts(runs: FreshRuns, measured: Mapping[tuple[str, int, int, int], Any]
                    ) -> list[dict[str, Any]]:
    """Which layers each task needs, on the fresh-data models: per task, arm and head count,
    the held-out accuracy on the predictable positions (percent, mean over seeds) of the
    intact model, with every head removed, and with one layer's heads removed (zero
    ablation), from :func:`measure_heads`."""
    keys = sorted(measured)
    ko = {k: measured[k]["knockout"] for k in keys}
    rows = []
    for task in runs.profiles:
        for arm in ARMS:
            for h in HEADS:
                mine = [ko[k] for k in keys if k[:3] == (task, h, arm_head_dim(arm, h))]
                if not mine:
                    continue
                layers = sorted(int(n[1:]) for n in mine[0] if n.startswith("L"))
                row: dict[str, Any] = {"task": task, "arm": ARM_NAMES[arm], "heads": h,
                                       "seeds": len(mine)}
                for name, label in (("none", "intact (%)"), ("all", "no attention (%)")):
                    row[label] = f"{100 * np.mean([m[name]['accuracy'] for m in mine]):.1f}"
                for la in layers:
                    row[f"layer {la} removed (%)"] = \
                        f"{100 * np.mean([m[f'L{la}']['accuracy'] for m in mine]):.1f}"
                rows.append(row)
    return rows


def head_tests(measured: Mapping[tuple[str, int, int, int], Mapping[str, Any]]
               ) -> list[dict[str, Any]]:
    """Per task and mode, does per-head fidelity rank the fresh-data models' heads as their
    impact does? :func:`~.statistics.head_claims` of the cells above the noise floor
    (:func:`~.statistics.scored_cells`, Holm over every (model, layer) cell of the fresh-data
    models) of :func:`measure_heads`; never pooled across tasks."""
    return head_claims(scored_cells({
        k: {"impact": m["impact"], "fidelity.paper": m["fidelity"]["paper"],
            "fidelity.definition": m["fidelity"]["definition"]}
        for k, m in measured.items() if "impact" in m}))


__all__ = ["head_tests", "layer_knockouts", "measure_heads"]
