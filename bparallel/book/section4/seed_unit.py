"""The seed as the unit of chapter 12's within-configuration rankings.

Every fresh-data run draws its batches from its seed and step alone, so the runs of one seed
share one data stream across every configuration. A ranking of the seeds within each
configuration therefore has as many independent units as there are seeds, not as many as
there are configurations: a seed whose stream makes every configuration learn early enters
every cell. The permutation test here keeps that dependence in its null: one relabelling of
the seeds, the same in every configuration, moves the outcome of every run of seed ``s`` to
the run of seed ``pi(s)`` of the same configuration, and all ``S!`` relabellings of the
``S`` seeds are equally likely under the null that the proxy says nothing of the outcome
beyond the configuration (:func:`seed_permutation_test`). With three seeds there are six
relabellings and no test can reach a two-sided 5% level; with five, 120.

Two statistics use it: the mean over configurations of Spearman's rho between a proxy and
the outcome across the seeds of each (:func:`within_rho`, the within-configuration rank
test) and the partial rank correlation with the configuration held
(:func:`~.graph_predictors.partial_rank_correlation`, the horse race's).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ...ranks import spearman
from ..verdicts import Verdict
from .graph_early import PROXIES, early_step, probe_at
from .models import FreshRuns
from .rank_tests import EXACT_ITEMS
from .statistics import rank_claim_verdict


def common_seeds(configs: np.ndarray, seeds: np.ndarray) -> list[int]:
    """The seeds every configuration of ``configs`` has a run of, sorted."""
    have = [set(seeds[configs == c].tolist()) for c in np.unique(configs)]
    return sorted(set.intersection(*have)) if have else []


def within_rho(x: np.ndarray, y: np.ndarray, configs: np.ndarray) -> float:
    """The mean over configurations of Spearman's rho between ``x`` and ``y`` across the runs
    of each (a configuration whose rho is undefined left out; NaN with none)."""
    rhos = [float(spearman(x[configs == c], y[configs == c])) for c in np.unique(configs)]
    rhos = [r for r in rhos if math.isfinite(r)]
    return float(np.mean(rhos)) if rhos else math.nan


def seed_permutation_test(x: Sequence[float], y: Sequence[float], configs: Sequence[Any],
                          seeds: Sequence[int],
                          statistic: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
                          = within_rho) -> dict[str, Any]:
    """Is ``statistic(x, y, configs)`` farther from 0 than the relabellings of the seeds
    give? One item per run (``x`` a proxy, ``y`` an outcome, its configuration and seed);
    only the seeds every configuration has (:func:`common_seeds`) enter. The exact null:
    every permutation ``pi`` of the ``S`` seeds, applied in every configuration at once
    (the run of seed ``s`` takes the outcome of the run of seed ``pi(s)`` of its
    configuration), equally likely.

    Returns ``mean`` (the statistic), ``median`` (the same: one statistic), ``p``
    (two-sided, ``min(1, 2 min(p_up, p_down))``), ``p_up``, ``p_down``, ``p_min`` (the
    two-sided p-value of the best data, ``2 / S!``), ``cells`` (configurations), ``seeds``
    (``S``, the units), ``items`` and ``null`` (values and probabilities, as
    :func:`~.rank_tests.exact_rank_test` gives them, for
    :func:`~.rank_tests.smallest_mean_rho`). With fewer than two common seeds or an
    undefined statistic every value is NaN. More than :data:`~.rank_tests.EXACT_ITEMS`
    seeds, or items of different lengths, are a ``ValueError``."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    configs, seeds = np.asarray(configs), np.asarray(seeds)
    if not x.shape == y.shape == configs.shape == seeds.shape or x.ndim != 1:
        raise ValueError(f"x, y, configs and seeds must be 1-D of one length, not {x.shape}, "
                         f"{y.shape}, {configs.shape}, {seeds.shape}")
    units = common_seeds(configs, seeds)
    if len(units) > EXACT_ITEMS:
        raise ValueError(f"seeds: {len(units)} common seeds; the exact null is built for at "
                         f"most {EXACT_ITEMS}")
    keep = np.isin(seeds, units)
    # one run per (configuration, seed): the first, in the order given
    index = {}
    for i in np.nonzero(keep)[0]:
        index.setdefault((configs[i], int(seeds[i])), i)
    rows = sorted(index.values())
    x, y, configs, seeds = x[rows], y[rows], configs[rows], seeds[rows]
    nan = {"mean": math.nan, "median": math.nan, "p": math.nan, "p_up": math.nan,
           "p_down": math.nan, "p_min": math.nan, "cells": 0, "seeds": len(units),
           "items": ()}
    observed = statistic(x, y, configs) if len(units) >= 2 else math.nan
    if not math.isfinite(observed):
        return nan
    where = {(c, int(s)): i for i, (c, s) in enumerate(zip(configs, seeds, strict=True))}
    null = []
    for perm in itertools.permutations(units):
        moved = dict(zip(units, perm, strict=True))
        take = [where[(c, moved[int(s)])] for c, s in zip(configs, seeds, strict=True)]
        null.append(statistic(x, y[take], configs))
    values = np.round(np.array(null, dtype=np.float64), 9)
    values = values[np.isfinite(values)]
    tol = ranks.DECISION_TOL
    p_up = float((values >= observed - tol).mean())
    p_down = float((values <= observed + tol).mean())
    uniq, counts = np.unique(values, return_counts=True)
    cells = len(np.unique(configs))
    return {"mean": float(observed), "median": float(observed),
            "p": min(1.0, 2 * min(p_up, p_down)), "p_up": p_up, "p_down": p_down,
            "p_min": min(1.0, 2 / math.factorial(len(units))), "cells": cells,
            "seeds": len(units), "items": (len(units),) * cells,
            "null": (uniq, counts / counts.sum())}


def within_tests(runs: FreshRuns, task: str) -> dict[str, dict[str, Any]]:
    """The within-configuration rank tests of ``task`` with the seed as the unit: per proxy
    of :data:`~.graph_early.PROXIES` (signed so that larger is better), ``within.<proxy>``,
    the :func:`seed_permutation_test` of the proxy at the early step
    (:func:`~.graph_early.early_step`) against the curve area, over every configuration
    with the common seeds, with its verdict (:func:`~.statistics.rank_claim_verdict`). The
    keys of :func:`~.graph_early.prediction_tests`' ``within`` tests, which they replace."""
    step = early_step(runs, task)
    entries = runs.of(task) if step is not None else []
    configs = np.array([f"{e['heads']}x{e['head_size']}" for e in entries])
    seeds = np.array([e["seed"] for e in entries], dtype=np.int64)
    area = np.array([float(e["curve_area"]) for e in entries])
    out = {}
    for name, sign in PROXIES.values():
        x = np.clip([sign * probe_at(e, step)[name] for e in entries], -1e300, 1e300)
        test = seed_permutation_test(x, area, configs, seeds)
        out[f"within.{name}"] = {**test, "verdict": rank_claim_verdict(test)
                                 if test["cells"] else Verdict.NOT_TESTABLE}
    return out


__all__ = ["common_seeds", "seed_permutation_test", "within_rho", "within_tests"]
