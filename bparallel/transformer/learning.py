"""How fast a model learns, counting the models that do not.

A learning curve is the held-out accuracy on the predictable positions after ``steps``
optimiser steps (``curve_steps[0] = 0``: the untrained model). Its measures:

- :func:`steps_to_threshold`: the learning time, the first evaluated step that starts
  :data:`LEARNED_IN_A_ROW` evaluations in a row at or above the task's learning threshold
  (:data:`LEARNING_THRESHOLD`), or ``None``: *not learned within the budget*
  (right-censored). One noisy evaluation can neither make a run learned nor break its
  time: a curve that touches the threshold once and falls back has not learned there. A
  model below the threshold never gets a number, so a model that
  never learns can neither look fast nor be averaged with those that did (what "epochs to
  99% of the final accuracy" did: 99% of 1.3% is reached early).
- :func:`learning_time`: a shipped run's learning time by that rule, read off the curve its
  manifest entry keeps.
- :func:`learning_curve_area`: the area under the curve on ``[0, budget]`` divided by the
  budget, in ``[0, 1]``: 1 for a model at 100% from the first step, the mean accuracy over
  the budget otherwise. A run stopped by the convergence rule keeps its last value to the
  budget (it had converged).
- :func:`converged_at`: the convergence rule. A run has converged at an evaluation when it
  has reached the learning threshold and its last ``patience`` evaluations (none before the
  threshold was first reached) all lie within ``tolerance`` (0.5 points) of the best
  accuracy so far: it no longer improves by more than ``tolerance``, and does not fall
  back.
- :func:`learning_summary`: all three and the run's outcome, ``"converged"``,
  ``"budget reached"`` (learned, not converged within the budget), ``"not learned"``
  (never :data:`LEARNED_IN_A_ROW` evaluations in a row at the threshold within the budget)
  or ``"running"``. No run is extended past its budget: a run that has not converged there
  is censored, and its outcome names the rule that censored it.

Learning thresholds (:data:`LEARNING_THRESHOLD`), on the held-out accuracy of the
predictable positions: 0.9 for every graph task and for histogram. A model without
attention is near chance on first and induction, near 45% on majority (the current token is
often the mode) and at 30% on histogram (the most likely count at each position,
:func:`~.data.histogram_no_attention_ceiling`; all in ``tests/transformer/test_data.py``), so
0.9 needs the attention graph to carry the answer for all four.

The probe schedule through training: :func:`probe_steps` is the log-spaced schedule
``0, 50, 100, 200, 400, ...`` (and the budget); what is measured at those steps is
:func:`~bparallel.transformer.measure.training_probe`.

These are rules on curves of numbers: the module imports no model and no measure, so a run's
design (:mod:`~bparallel.transformer.design`) can name its thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import nonnegative_int, positive_int, unit_interval
from .data import FRESH_ONLY_TASKS, GRAPH_TASKS

__all__ = ["LEARNING_THRESHOLD", "LEARNED_IN_A_ROW", "TOLERANCE", "PATIENCE", "OUTCOMES",
           "steps_to_threshold", "learning_time", "learning_curve_area", "converged_at",
           "learning_summary", "probe_steps"]

#: The held-out accuracy on the predictable positions at which a model has learned its task.
LEARNING_THRESHOLD = dict.fromkeys((*GRAPH_TASKS, *FRESH_ONLY_TASKS), 0.9)
#: A run has learned its task at the first of this many held-out evaluations in a row at or
#: above its threshold (every 200 steps on fresh data: 400 steps at the threshold).
LEARNED_IN_A_ROW = 3
#: Convergence rule: within this many accuracy points (fractions: 0.005 = 0.5 points) ...
TOLERANCE = 0.005
#: ... of the best, for this many consecutive evaluations.
PATIENCE = 5
#: What a fresh-data run can end as (:func:`learning_summary`), ``"running"`` while it trains.
OUTCOMES = ("converged", "budget reached", "not learned", "running")
_SLACK = 1e-12  # comparisons of accuracies with a tolerance: exact to this


def _curve(curve_steps: Any, accuracy: Any) -> tuple[np.ndarray, np.ndarray]:
    """``curve_steps`` (non-negative, strictly increasing integers) and ``accuracy`` (finite,
    in [0, 1], one per step) as arrays, checked."""
    steps = np.asarray(curve_steps)
    acc = np.asarray(accuracy, dtype=np.float64)
    if steps.ndim != 1 or acc.shape != steps.shape:
        raise ValueError(f"curve_steps has shape {steps.shape} and accuracy {acc.shape}: "
                         "expected two 1-D sequences of the same length")
    if steps.size and (not np.issubdtype(steps.dtype, np.integer) or steps.min() < 0):
        raise ValueError(f"curve_steps={steps.tolist()}: must be non-negative integers")
    if np.any(np.diff(steps) <= 0):
        raise ValueError(f"curve_steps={steps.tolist()}: must be strictly increasing")
    if acc.size and not (np.isfinite(acc).all() and acc.min() >= 0 and acc.max() <= 1):
        raise ValueError("accuracy must be finite and lie in [0, 1] (fractions, not percent)")
    return steps.astype(np.int64), acc


def steps_to_threshold(
    curve_steps: Sequence[int], accuracy: Sequence[float], threshold: float, *,
    budget: int | None = None, in_a_row: int = LEARNED_IN_A_ROW, held: bool = False,
) -> int | None:
    """The learning time: the first step of ``curve_steps`` that starts ``in_a_row``
    evaluations in a row whose ``accuracy`` reaches ``threshold`` (``>=``), or ``None`` when
    none does: *not learned within the budget*, a right-censored time.

    ``budget``: evaluations after it are ignored (a run trained longer, judged at the
    budget). ``held``: the curve ends because the convergence rule stopped the run, whose
    last accuracy then holds to the budget (as in :func:`learning_curve_area`), so a run of
    evaluations cut short by the end of the curve counts when all of it is at the threshold;
    otherwise (a run at its budget, or still running) the last ``in_a_row - 1`` evaluations
    cannot start a learning time. Never a number for a curve that stays below the threshold.
    """
    steps, acc = _curve(curve_steps, accuracy)
    threshold = unit_interval(threshold, "threshold", closed=True)
    k = positive_int(in_a_row, "in_a_row")
    if budget is not None:
        keep = steps <= nonnegative_int(budget, "budget")
        steps, acc = steps[keep], acc[keep]
    at = acc >= threshold
    for i in np.nonzero(at)[0]:
        window = at[i : i + k]
        if window.all() and (window.size == k or held):
            return int(steps[i])
    return None


def learning_time(entry: Mapping[str, Any]) -> int | None:
    """The run's learning time: the first of
    :data:`LEARNED_IN_A_ROW` evaluations in a row at its
    task's threshold, read off the entry's curve by
    :func:`steps_to_threshold` (the entry's own
    ``steps_to_threshold`` where it has no curve); ``None`` when it never learned within its
    budget (a right-censored time, never a number)."""
    c = entry.get("curve")
    if c is None:
        v = entry.get("steps_to_threshold")
        return None if v is None else int(v)
    return steps_to_threshold(c["step"], c["heldout_accuracy_predictable"], entry["threshold"],
                              budget=int(entry["budget"]),
                              held=entry["outcome"] == "converged")


def learning_curve_area(curve_steps: Sequence[int], accuracy: Sequence[float], budget: int
                        ) -> float:
    """Area under the learning curve on ``[0, budget]``, divided by ``budget``: the mean
    accuracy over the budget, in [0, 1] (trapezoids between evaluations).

    The curve must start at step 0 (the untrained model). After its last evaluation the last
    value is kept to the budget (a run stopped by the convergence rule); evaluations after
    the budget are cut at it (linear interpolation).
    """
    steps, acc = _curve(curve_steps, accuracy)
    positive_int(budget, "budget")
    if not steps.size or steps[0] != 0:
        raise ValueError(f"curve_steps starts at {steps[:1].tolist()}: the curve must start "
                         "at step 0, the untrained model")
    x = np.append(steps, budget).astype(np.float64)
    y = np.append(acc, acc[-1])
    if steps[-1] > budget:  # cut at the budget
        y_end = float(np.interp(budget, steps, acc))
        keep = x < budget
        x, y = np.append(x[keep], budget), np.append(y[keep], y_end)
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0) / budget)


def converged_at(
    accuracy: Sequence[float], threshold: float, *, patience: int = PATIENCE,
    tolerance: float = TOLERANCE,
) -> int | None:
    """Index of the first evaluation at which the run has converged (the rule: module
    docstring), or ``None``.

    At evaluation ``i``: the accuracy reached ``threshold`` at some evaluation ``r``, the
    window ``i - patience + 1 .. i`` starts at ``r`` or later, and every accuracy in it is
    at least ``max(accuracy[:i + 1]) - tolerance`` (to 1e-12).
    """
    acc = np.asarray(accuracy, dtype=np.float64)
    _curve(np.arange(acc.size), acc)
    threshold = unit_interval(threshold, "threshold", closed=True)
    positive_int(patience, "patience")
    tolerance = unit_interval(tolerance, "tolerance", closed=True)
    reached = np.nonzero(acc >= threshold)[0]
    if not reached.size:
        return None
    best = np.maximum.accumulate(acc)
    for i in range(int(reached[0]) + patience - 1, acc.size):
        if np.all(acc[i - patience + 1 : i + 1] >= best[i] - tolerance - _SLACK):
            return i
    return None


def learning_summary(
    curve_steps: Sequence[int], accuracy: Sequence[float], *, threshold: float, budget: int,
    patience: int = PATIENCE, tolerance: float = TOLERANCE, in_a_row: int = LEARNED_IN_A_ROW,
) -> dict[str, Any]:
    """The learning measures of one run's curve: ``outcome`` (:data:`OUTCOMES`),
    ``steps_to_threshold`` (:func:`steps_to_threshold` with ``in_a_row``; ``None``: not
    learned), ``converged_at`` (the step at which the convergence rule stopped it, or
    ``None``), ``curve_area`` (:func:`learning_curve_area`; ``None`` while running),
    ``budget`` and ``in_a_row``.

    ``"running"``: the curve ends before the budget and has not converged.
    """
    steps, acc = _curve(curve_steps, accuracy)
    positive_int(budget, "budget")
    keep = steps <= budget
    steps, acc = steps[keep], acc[keep]
    at = converged_at(acc, threshold, patience=patience, tolerance=tolerance)
    done_at = None if at is None else int(steps[at])
    if done_at is not None:  # the curve as the rule left it
        steps, acc = steps[: at + 1], acc[: at + 1]
    to_threshold = steps_to_threshold(steps, acc, threshold, in_a_row=in_a_row,
                                      held=done_at is not None)
    if done_at is not None:
        outcome = "converged"
    elif steps.size and steps[-1] >= budget:
        outcome = "budget reached" if to_threshold is not None else "not learned"
    else:
        outcome = "running"
    area = None if outcome == "running" else learning_curve_area(steps, acc, budget)
    return {"outcome": outcome, "steps_to_threshold": to_threshold, "converged_at": done_at,
            "curve_area": area, "budget": int(budget), "in_a_row": int(in_a_row)}


def probe_steps(budget: int, first: int = 50) -> list[int]:
    """The log-spaced steps at which the proxies are recorded: ``0``, ``first``, then doubling
    (``50, 100, 200, 400, 800, ...``) while below ``budget``, and ``budget`` itself. A run
    that stops earlier (converged) is also probed at its last step."""
    positive_int(budget, "budget")
    positive_int(first, "first")
    steps, s = [0], first
    while s < budget:
        steps.append(s)
        s *= 2
    return [*steps, budget]
