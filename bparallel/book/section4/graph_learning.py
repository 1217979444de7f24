"""Chapter 12's learning times on fresh data one rule for every run.

A run's *learning time* is the first of
:data:`~bparallel.transformer.learning.LEARNED_IN_A_ROW` held-out evaluations in a row at
its task's threshold, read off the curve its manifest entry keeps
(:func:`~bparallel.transformer.learning.learning_time`); a run that never learns has none
(right-censored), and no run is extended past its budget. Per configuration,
:func:`learning_rows` and :func:`learning_table` give the runs that learned, their times,
the censored median, the curve area, the final accuracy, how many converged, and the
machines they trained on (:func:`trained_on`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ...transformer.design import ARMS, HEADS
from ...transformer.learning import learning_time
from .across_seeds_stats import hardware_kind
from .models import ARM_NAMES, FreshRuns


def censored_median(times: Sequence[int | None]) -> float | None:
    """The median of learning times where ``None`` (not learned) counts as later than every
    time: a number when at least half the runs learned in it, else ``None`` (the median run
    did not learn)."""
    if not times:
        raise ValueError("times is empty: no run to summarise")
    key = [math.inf if t is None else float(t) for t in times]
    med = ranks.median(key) if all(math.isfinite(v) for v in key) else float(np.median(key))
    return None if not math.isfinite(med) else med


def learning_rows(runs: FreshRuns, task: str) -> list[dict[str, Any]]:
    """Per arm and head count of ``task``: head size, parameters, the runs that learned
    (``learned``, ``runs``), the steps to the threshold per seed (``None``: not learned),
    their censored median, the mean learning-curve area and the mean final accuracy on the
    predictable positions."""
    rows = []
    for arm in ARMS:
        for h in HEADS:
            mine = [e for e in runs.of(task, arm) if e["heads"] == h]
            if not mine:
                continue
            times = [learning_time(e) for e in mine]
            rows.append({
                "task": task, "arm": arm, "heads": h, "head_size": mine[0]["head_size"],
                "parameters": int(mine[0]["num_parameters"]), "runs": len(mine),
                "seeds": [e["seed"] for e in mine],
                "learned": sum(t is not None for t in times), "times": times,
                "median_time": censored_median(times),
                "area": float(np.mean([e["curve_area"] for e in mine])),
                "accuracy": float(np.mean([e["heldout_accuracy_predictable"] for e in mine])),
                "budget": int(mine[0]["budget"]),
                "outcomes": [e["outcome"] for e in mine],
                "trained_on": [trained_on(e) for e in mine],
            })
    return rows


def _steps(v: float | int | None, budget: int) -> str:
    return f"not within {budget:,}" if v is None else f"{int(round(v)):,}"


def learning_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`learning_rows` as the page shows them."""
    return [{"arm": ARM_NAMES[r["arm"]], "heads": r["heads"], "head size": r["head_size"],
             "parameters": f"{r['parameters']:,}",
             "learned": f"{r['learned']} of {r['runs']}",
             "steps to threshold, per seed": " · ".join(_steps(t, r["budget"])
                                                         for t in r["times"]),
             "median": _steps(r["median_time"], r["budget"]),
             "curve area": f"{r['area']:.3f}",
             "final accuracy (%)": f"{100 * r['accuracy']:.1f}",
             "converged": f"{r['outcomes'].count('converged')} of {r['runs']}",
             "trained on": _tally(r["trained_on"])} for r in rows]


def _tally(words: Sequence[str]) -> str:
    """``["CPU", "GPU", "CPU"]`` as ``"CPU 2, GPU 1"``."""
    return ", ".join(f"{w} {words.count(w)}" for w in sorted(set(words)))


def trained_on(entry: Mapping[str, Any]) -> str:
    """Where a run trained, in words: ``"GPU"`` or ``"CPU"``
    (:func:`~.across_seeds_stats.hardware_kind`), and for a run that moved, each machine with
    its steps (``"GPU (steps 0-20,000), CPU (steps 20,000-60,000)"``, the entry's
    ``segments``); ``"not recorded"`` without a ``hardware``."""
    segments = entry.get("segments")
    if segments and len(segments) > 1:
        return ", ".join(f"{hardware_kind(s['hardware'])} (steps {s['steps'][0]:,}-"
                         f"{s['steps'][1]:,})" for s in segments)
    hardware = entry.get("hardware")
    return hardware_kind(hardware) if hardware else "not recorded"


__all__ = ["censored_median", "learning_rows", "learning_table", "learning_time",
           "trained_on"]
