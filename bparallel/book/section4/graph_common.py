"""Chapter 12's accuracy at a common step: every run of a task read at one step.

A run stops when it converges (:mod:`bparallel.transformer.learning`), so its final held-out
accuracy is read at its own stopping step, and runs that learn slower are read later. The
claim "more heads learn the task better" compares runs at one step instead: the
:func:`common_step` of a task, the last evaluation every one of its runs reached (the
earliest stopping step), where every run's accuracy is measured, none extrapolated
(:func:`accuracy_at`). A task whose every run ends within :data:`CEILING_MARGIN` of a perfect
score is *at ceiling* (:func:`at_ceiling`): its accuracy cannot say which head count learns
it better."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import FreshRuns

#: How close to a perfect score every run of a task must be at the common step for the task
#: to read *at ceiling*: one point of accuracy.
CEILING_MARGIN = 0.01


def common_step(runs: FreshRuns, task: str) -> int | None:
    """The last evaluation step every run of ``task`` reached: the smallest last step of
    their learning curves (``None`` with no run)."""
    ends = [int(e["curve"]["step"][-1]) for e in runs.of(task)]
    return min(ends) if ends else None


def accuracy_at(entry: Mapping[str, Any], step: int) -> float:
    """A run's held-out accuracy on the predictable positions at evaluation ``step`` of its
    curve; a ``ValueError`` where the run was not evaluated at that step."""
    steps = [int(s) for s in entry["curve"]["step"]]
    if step not in steps:
        raise ValueError(f"step={step!r}: not an evaluation step of the run "
                         f"(its curve runs from {steps[0]} to {steps[-1]})")
    return float(entry["curve"]["heldout_accuracy_predictable"][steps.index(step)])


def at_ceiling(runs: FreshRuns, task: str) -> bool:
    """Whether every run of ``task`` ends within :data:`CEILING_MARGIN` of a perfect score
    (its final held-out accuracy): then no head count can learn the task better, and its
    accuracy at the :func:`common_step` only restates how fast each run got there."""
    ends = [float(e["heldout_accuracy_predictable"]) for e in runs.of(task)]
    return bool(ends) and min(ends) >= 1.0 - CEILING_MARGIN


def ceiling_words(runs: FreshRuns, task: str) -> str:
    """How a task's accuracy reads, in a few words for a claim's evidence: at ceiling (the
    lowest run's final accuracy), or read at its common step; empty without runs."""
    step = common_step(runs, task)
    if step is None:
        return ""
    if at_ceiling(runs, task):
        low = min(float(e["heldout_accuracy_predictable"]) for e in runs.of(task))
        return (f"{task} at ceiling (every run ends at {100 * low:.2f}% or more), so its "
                f"accuracy at step {step:,}, the last every run reached, restates the speed "
                "test")
    return f"{task} read at step {step:,}, the last every run reached"


def results(runs: FreshRuns) -> dict[str, float]:
    """Per task with runs: its common step (``fresh.<task>.common_step``), the lowest run's
    accuracy there (``...common_step.min_accuracy``) and whether it is at ceiling
    (``...common_step.at_ceiling``, 1 or 0)."""
    out: dict[str, float] = {}
    for task in runs.profiles:
        step = common_step(runs, task)
        if step is None:
            continue
        out[f"fresh.{task}.common_step"] = step
        out[f"fresh.{task}.common_step.min_accuracy"] = min(accuracy_at(e, step)
                                                            for e in runs.of(task))
        out[f"fresh.{task}.common_step.at_ceiling"] = int(at_ceiling(runs, task))
    return out


__all__ = ["CEILING_MARGIN", "accuracy_at", "at_ceiling", "ceiling_words", "common_step",
           "results"]
