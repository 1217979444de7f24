"""Rank tests over cells, two-sided, with the smallest effect each can find.

- :func:`two_sided_rank_test`: the median of Spearman's rho over cells against chance by
  permutation (:func:`bparallel.ranks.median_rho_test` both ways), for many cells of many
  items (chapters 10 and 11); :func:`smallest_rho`, the least median it finds at a level.
- :func:`exact_rank_test`: the mean rho over cells against its exact null (Page's trend
  test when one ranking is a fixed order), for few cells of few items, where the median's
  coarse null could not decide (chapter 12's seeds); :func:`smallest_mean_rho`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from ... import ranks
from ..._checks import positive_int


@functools.lru_cache(maxsize=256)
def smallest_rho(items: tuple[int, ...], level: float, samples: int = 20_000,
                 seed: int = 0) -> float | None:
    """The smallest median Spearman rho over cells of ``items`` items each (no ties) that
    :func:`two_sided_rank_test` finds at ``level``: the least achievable median ``r`` whose
    two-sided permutation p-value, ``2 (1 + #{null median >= r}) / (1 + samples)``, is at
    most ``level`` (the null relabels each cell at random, ``samples`` times, seeded);
    ``None`` when even rho = 1 in every cell falls short (the test cannot decide)."""
    if not items or any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2
                        for n in items):
        raise ValueError(f"items={items!r}: expected a non-empty tuple of cell sizes >= 2")
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level={level!r}: expected a number in (0, 1)")
    positive_int(samples, "samples")
    rng = np.random.default_rng(seed)
    null = np.empty((samples, len(items)))
    for c, n in enumerate(items):
        r = np.arange(n, dtype=np.float64) - (n - 1) / 2
        perm = np.argsort(rng.random((samples, n)), axis=1)
        null[:, c] = (r[perm] * r).sum(1) / float((r * r).sum())
    med = np.median(null, axis=1)
    for r in np.unique(np.round(np.append(med, 1.0), 9)):
        if r < 0:
            continue
        p = 2 * (1 + (med >= r - ranks.DECISION_TOL).sum()) / (1 + samples)
        if p <= level:
            return float(r)
    return None


def two_sided_rank_test(pairs: Sequence[tuple[Any, Any]], **kw: Any) -> dict[str, float]:
    """:func:`bparallel.ranks.median_rho_test` in both directions: is the median rho over
    cells larger than chance (``p_up``) or smaller (``p_down``, the test of the reversed
    first ranking)? ``p`` is the two-sided p-value, ``min(1, 2 min(p_up, p_down))``;
    ``p_min`` the smallest two-sided p-value the cells could give (every rho 1)."""
    up = ranks.median_rho_test(pairs, **kw)
    if not up["cells"]:
        return {**up, "p_up": math.nan, "p_down": math.nan}
    down = ranks.median_rho_test([(-np.asarray(x, float), y) for x, y in pairs], **kw)
    items = tuple(len(x) for x, y in pairs if np.isfinite(ranks.spearman(x, y)))
    return {**up, "p": min(1.0, 2 * min(up["p"], down["p"])), "p_up": up["p"],
            "p_down": down["p"], "p_min": min(1.0, 2 * up["p_min"]), "items": items}


#: Cells of at most this many items get an exact null (every permutation: 7! = 5,040).
EXACT_ITEMS = 7


def _cell_null(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray] | None:
    """Spearman's rho of one cell and its exact null (every relabelling of ``y``, equally
    likely), as the rho values of the ``len(y)!`` permutations; ``None`` when rho is
    undefined (a constant ranking)."""
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    norm = math.sqrt(float((rx * rx).sum() * (ry * ry).sum()))
    if norm == 0:
        return None
    perms = np.array(list(itertools.permutations(range(len(y)))))
    return float(rx @ ry) / norm, (ry[perms] @ rx) / norm


def _convolve(a: tuple[np.ndarray, np.ndarray], values: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of ``S + V`` for ``S`` distributed as ``a`` (values, probabilities)
    and ``V`` uniform over ``values``, independent; values rounded to 1e-9 to merge."""
    v, q = np.unique(np.round(values, 9), return_counts=True)
    sums = np.round((a[0][:, None] + v[None, :]).ravel(), 9)
    probs = (a[1][:, None] * (q / q.sum())[None, :]).ravel()
    out, inverse = np.unique(sums, return_inverse=True)
    return out, np.bincount(inverse, weights=probs)


def exact_rank_test(pairs: Sequence[tuple[Any, Any]]) -> dict[str, Any]:
    """Is the mean over cells of Spearman's rho between two rankings farther from 0 than
    chance? The exact permutation test (Page's trend test when one ranking is a fixed order,
    such as the head counts, :cite:`page1963ordered`): under the null each cell's second
    ranking is relabelled at random, independently per cell, and the null distribution of
    the mean rho is the convolution of the cells' exact nulls (ties kept as midranks).

    Returns ``mean`` (the statistic), ``median`` (of the cells' rho), ``p`` (two-sided,
    ``min(1, 2 min(p_up, p_down))``), ``p_up``, ``p_down``, ``p_min`` (the two-sided
    p-value of the best data, rho = 1 in every cell without ties), ``cells``, ``items``
    and ``null`` (the null's mean-rho values and probabilities, for
    :func:`smallest_mean_rho`). Cells of more than :data:`EXACT_ITEMS` items are refused;
    cells whose rho is undefined are left out, and with none every value is NaN."""
    cells, rhos = [], []
    for k, (x, y) in enumerate(pairs):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError(f"pairs[{k}] has shapes {x.shape} and {y.shape}: expected two "
                             "vectors of the same length")
        if len(x) > EXACT_ITEMS:
            raise ValueError(f"pairs[{k}] has {len(x)} items: the exact null is built for "
                             f"at most {EXACT_ITEMS}")
        cell = _cell_null(x, y) if len(x) > 1 else None
        if cell is not None:
            rhos.append(cell[0])
            cells.append((len(x), cell[1]))
    if not cells:
        return {"mean": math.nan, "median": math.nan, "p": math.nan, "p_up": math.nan,
                "p_down": math.nan, "p_min": math.nan, "cells": 0, "items": ()}
    null = best = (np.zeros(1), np.ones(1))
    for n, values in cells:
        null = _convolve(null, values)
        r = np.arange(n, dtype=np.float64) - (n - 1) / 2
        perms = np.array(list(itertools.permutations(range(n))))
        best = _convolve(best, (r[perms] @ r) / float(r @ r))
    k, total = len(cells), float(np.round(sum(rhos), 9))
    tol = ranks.DECISION_TOL * k
    p_up = float(null[1][null[0] >= total - tol].sum())
    p_down = float(null[1][null[0] <= total + tol].sum())
    p_best = float(best[1][best[0] >= k - tol].sum())
    return {"mean": total / k, "median": ranks.median(rhos), "p": min(1.0, 2 * min(p_up, p_down)),
            "p_up": p_up, "p_down": p_down, "p_min": min(1.0, 2 * p_best), "cells": k,
            "items": tuple(n for n, _ in cells), "null": (null[0] / k, null[1])}


def smallest_mean_rho(test: Mapping[str, Any], level: float) -> float | None:
    """The smallest mean rho >= 0 that :func:`exact_rank_test` finds at ``level`` with the
    test's own cells (their sizes and ties): the least null value ``r`` with
    ``2 P(mean >= r) <= level``; ``None`` when no value reaches it."""
    values, probs = test["null"]
    order = np.argsort(values)
    values, tail = values[order], np.cumsum(probs[order][::-1])[::-1]  # P(mean >= value)
    ok = (values >= 0) & (2 * tail <= level + 1e-15)
    return float(values[ok][0]) if ok.any() else None


__all__ = ["EXACT_ITEMS", "exact_rank_test", "smallest_mean_rho", "smallest_rho",
           "two_sided_rank_test"]
