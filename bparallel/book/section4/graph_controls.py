"""Chapter 12's controls of the reversal on induction, read once their runs are shipped.

Two controls of "more heads learn induction slower at a fixed attention width" train apart
from the chapter's runs: the **learning-rate control** (the fixed-attention-width arm at a
third and three times the paper's rate, :data:`LR_CONTROL`) and **one recipe** (the same arm
under histogram's settling recipe, no dropout and the rate decayed to zero,
:data:`RECIPE_CONTROL`). Each control is read only when every configuration of the arm has
:data:`CONTROL_SEEDS` seeds at every rate (or under the recipe): until then it says which
runs are pending (:func:`control_status`), never a partial result. Once complete, the
learning-rate control gives each configuration's best rate (the lowest median learning step,
a run that never learned counted later than every other, :func:`best_rates`) and tests the
head count against the speed at those rates (:func:`speed_at_best`); the one-recipe control
tests it under each recipe (:func:`speed_by_recipe`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...transformer.arms import arm_head_dim
from ...transformer.design import HEADS
from ...transformer.learning import learning_time
from ..verdicts import Verdict
from ..words import fmt_p
from .graph_learning import speed_outcome
from .models import FRESH_PROFILES, MODELS_ROOT, FreshRuns, fresh_runs
from .rank_tests import exact_rank_test
from .statistics import holm, rank_claim_verdict

#: The learning-rate control: per learning rate, the profile of induction's runs at it.
LR_CONTROL = {3e-4: "induction-fresh-lr3e-4", 1e-3: FRESH_PROFILES["induction"],
              3e-3: "induction-fresh-lr3e-3"}
#: One recipe: induction under histogram's settling recipe, beside the chapter's.
RECIPE_CONTROL = {"constant rate, dropout": FRESH_PROFILES["induction"],
                  "settling (no dropout, cosine)": "induction-nodropout-cosine"}
#: How the results keys name the recipes of :data:`RECIPE_CONTROL`.
RECIPE_KEYS = {"constant rate, dropout": "paper", "settling (no dropout, cosine)": "settling"}
#: The arm the controls train, and the seeds each configuration needs at every setting.
CONTROL_ARM = "inner256"
CONTROL_SEEDS = 3


def control_runs(settings: Mapping[Any, str], models_root: str | os.PathLike = MODELS_ROOT
                 ) -> dict[Any, FreshRuns]:
    """Per setting of a control (``settings``: :data:`LR_CONTROL` or :data:`RECIPE_CONTROL`),
    the shipped induction runs of its profile."""
    return {k: fresh_runs(models_root, ("induction",), {"induction": p})
            for k, p in settings.items()}


def _runs_of(runs: FreshRuns, heads: int, arm: str) -> list[dict[str, Any]]:
    hs = arm_head_dim(arm, heads)
    return [e for e in runs.of("induction") if e["heads"] == heads and e["head_size"] == hs]


def control_status(by_setting: Mapping[Any, FreshRuns], arm: str = CONTROL_ARM,
                   seeds: int = CONTROL_SEEDS) -> dict[str, Any]:
    """How much of a control is shipped: ``shipped`` and ``needed`` (runs, counting at most
    ``seeds`` per configuration and setting), ``complete`` (every configuration of ``arm``
    at every setting with ``seeds`` seeds) and ``words``, for the page: ``"runs pending: 2
    of 36 runs shipped"`` or ``"complete: 36 runs"``."""
    needed = len(HEADS) * len(by_setting) * seeds
    shipped = sum(min(seeds, len({e["seed"] for e in _runs_of(r, h, arm)}))
                  for r in by_setting.values() for h in HEADS)
    complete = shipped == needed
    return {"shipped": shipped, "needed": needed, "complete": complete,
            "words": (f"complete: {needed} runs" if complete else
                      f"runs pending: {shipped} of {needed} runs shipped")}


def _median_time(entries: list[dict[str, Any]]) -> float:
    """The median learning step of ``entries``, a run that never learned counted as
    infinitely late (so the median is infinite when half or more never learned)."""
    return float(np.median([math.inf if (t := learning_time(e)) is None else t
                            for e in entries]))


def best_rates(by_rate: Mapping[float, FreshRuns], arm: str = CONTROL_ARM) -> dict[int, float]:
    """Per head count of ``arm``: the learning rate of :data:`LR_CONTROL` whose runs have the
    lowest median learning step (:func:`_median_time`; a tie goes to the lower rate). Only
    for a complete control (:func:`control_status`); otherwise a ``ValueError``."""
    if not control_status(by_rate, arm)["complete"]:
        raise ValueError("by_rate: the learning-rate control is not complete")
    return {h: min(sorted(by_rate), key=lambda r: _median_time(_runs_of(by_rate[r], h, arm)))
            for h in HEADS}


def _speed_test(by_heads: Mapping[int, FreshRuns], arm: str) -> dict[str, Any]:
    """Per seed that every head count of ``arm`` has (head count ``h``'s runs read from
    ``by_heads[h]``), Spearman's rho between the head count and minus the learning step (a
    run that never learned last): the exact test of their mean
    (:func:`~.rank_tests.exact_rank_test`), the seed being the unit (all head counts of a
    seed share its data stream), with ``seeds``."""
    runs = {h: {e["seed"]: e for e in _runs_of(by_heads[h], h, arm)} for h in HEADS}
    common = sorted(set.intersection(*(set(r) for r in runs.values())))
    pairs = []
    for s in common:
        times = [learning_time(runs[h][s]) for h in HEADS]
        pairs.append((np.array(HEADS, float),
                      np.array([-1e300 if t is None else -float(t) for t in times])))
    return {**exact_rank_test(pairs), "seeds": len(common)}


def speed_at_best(by_rate: Mapping[float, FreshRuns], arm: str = CONTROL_ARM
                  ) -> dict[str, Any]:
    """The speed test of the head count at each configuration's best rate
    (:func:`best_rates`; :func:`_speed_test`) and its verdict."""
    best = best_rates(by_rate, arm)
    test = _speed_test({h: by_rate[best[h]] for h in HEADS}, arm)
    return {**test, "best": best,
            "verdict": rank_claim_verdict(test) if test["cells"] else None}


def speed_by_recipe(by_recipe: Mapping[str, FreshRuns], arm: str = CONTROL_ARM
                    ) -> dict[str, dict[str, Any]]:
    """The one-recipe control, complete (else a ``ValueError``): per recipe, the speed test
    of the head count (:func:`_speed_test`, "more heads learn faster", so that the reversal
    is a significant negative mean rho), with Holm's correction over the recipes (the
    control's own family, stated with the control: :data:`RECIPE_CONTROL`) and its
    verdict. Whether the reversal holds under each recipe."""
    if not control_status(by_recipe, arm)["complete"]:
        raise ValueError("by_recipe: the one-recipe control is not complete")
    tests = {k: _speed_test(dict.fromkeys(HEADS, runs), arm) for k, runs in by_recipe.items()}
    adjusted = holm([t["p"] if t["cells"] else None for t in tests.values()])
    for t, p in zip(tests.values(), adjusted, strict=True):
        t["p_holm"] = p
        t["verdict"] = rank_claim_verdict(t) if t["cells"] else Verdict.NOT_TESTABLE
    return tests


def recipe_words(tests: Mapping[str, Mapping[str, Any]]) -> str:
    """What :func:`speed_by_recipe` found, for the page: per recipe its mean rho over seeds,
    the outcome after Holm's correction (:func:`~.graph_learning.speed_outcome`) and whether
    the reversal (more heads learn later) is there."""
    def reversal(t: Mapping[str, Any]) -> str:
        v = t["verdict"]
        if v is Verdict.NOT_TESTABLE:
            return "its seeds cannot say whether the reversal is there"
        if v is Verdict.NOT_SUPPORTED:
            return "no order of the head counts is resolved"
        return ("more heads learn later: the reversal is there" if v is Verdict.FAILS
                else "more heads learn sooner: no reversal")

    return "; ".join(
        f"under the {k} recipe, mean ρ {t['mean']:+.2f} over {t['cells']} seeds, "
        f"{speed_outcome(t)} (Holm p {fmt_p(t['p_holm'])}): {reversal(t)}"
        if t["cells"] else f"under the {k} recipe, no seed has a ranking"
        for k, t in tests.items())


def control_rows(by_setting: Mapping[Any, FreshRuns], arm: str = CONTROL_ARM,
                 label: Any = str) -> list[dict[str, Any]]:
    """Per head count of ``arm``: its head size and, per setting (named by ``label``), the
    seeds shipped and, once the control is complete (:func:`control_status`), the median
    learning step (*not within the budget* when the median run never learned): no partial
    result is shown."""
    complete = control_status(by_setting, arm)["complete"]
    rows = []
    for h in HEADS:
        row: dict[str, Any] = {"heads": h, "head size": arm_head_dim(arm, h)}
        for k, runs in by_setting.items():
            mine = _runs_of(runs, h, arm)
            med = _median_time(mine) if mine else None
            row[f"{label(k)}: seeds"] = len({e["seed"] for e in mine})
            if not complete:
                continue
            row[f"{label(k)}: median step"] = ("—" if med is None else "not within the budget"
                                               if math.isinf(med) else f"{med:,.0f}")
        rows.append(row)
    return rows


__all__ = ["CONTROL_ARM", "CONTROL_SEEDS", "LR_CONTROL", "RECIPE_CONTROL", "best_rates",
           "control_rows", "control_runs", "control_status", "speed_at_best",
           "RECIPE_KEYS", "recipe_words", "speed_by_recipe"]
