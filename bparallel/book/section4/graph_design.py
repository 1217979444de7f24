"""Chapter 12's design: its arms (:data:`~bparallel.transformer.design.ARMS`, named as
:data:`~.models.ARM_NAMES`), the configurations of every arm with their head sizes and
parameters, the seeds the design asks for, and how much of it is shipped
(:func:`grid_rows`). The analysis of the runs is
:mod:`bparallel.book.section4.graph_experiment`."""

from __future__ import annotations

from typing import Any

from ...transformer.design import ARMS, HEADS, arm_head_dim
from ...transformer.model import ModelConfig
from .models import ARM_NAMES, FreshRuns

#: The seeds the design asks for per (task, arm, heads): five (with three, a rank test over
#: the four head counts passes only at a median rho of 1).
DESIGN_SEEDS = (42, 43, 44, 45, 46)


def configurations(d_model: int = 64) -> list[dict[str, Any]]:
    """The design's configurations: per head count, the head size of each arm (4 x 16 is
    shared by both) and the parameters of each."""
    rows = []
    for h in HEADS:
        row: dict[str, Any] = {"heads": h}
        for arm in ARMS:
            hs = arm_head_dim(arm, h, d_model)
            cfg = ModelConfig(n_heads=h, head_size=hs)
            row[f"{ARM_NAMES[arm]}: head size"] = hs
            row[f"{ARM_NAMES[arm]}: parameters"] = cfg.num_parameters()
        rows.append(row)
    return rows


def design_configurations() -> int:
    """The distinct configurations of the design: every arm at every head count, a
    configuration of two arms (4 x 16, 16 x 16) once."""
    return len({(h, arm_head_dim(arm, h)) for arm in ARMS for h in HEADS})


def design_models() -> int:
    """The models the design asks of a task: :func:`design_configurations` x
    :data:`DESIGN_SEEDS`."""
    return design_configurations() * len(DESIGN_SEEDS)


def grid_rows(runs: FreshRuns) -> list[dict[str, Any]]:
    """Per task: its budget and threshold, and how much of the design is shipped: models of
    :func:`design_configurations` x :data:`DESIGN_SEEDS`, and per arm the seeds with all four head
    counts."""
    rows = []
    for task in runs.profiles:
        p = runs.profiles[task]
        row = {"task": task, "budget (steps)": p["budget"],
               "threshold": p["threshold"],
               "models shipped": f"{len(runs.of(task))} of {design_models()}"}
        for arm in ARMS:
            seeds = runs.seeds(task, arm)
            row[f"complete seeds, {ARM_NAMES[arm]}"] = \
                ", ".join(map(str, seeds)) if seeds else "none yet"
        rows.append(row)
    return rows



__all__ = ["ARM_NAMES", "DESIGN_SEEDS", "configurations", "design_configurations",
           "design_models", "grid_rows"]
