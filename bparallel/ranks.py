"""Rank statistics with exact decisions: Spearman's rho, its chance rates, and thresholds.

A rank correlation of a few items is a rational number (or, with ties, the ratio of an
integer to the square root of an integer), so a decision "rho >= 0.8" must never hang on the
last bit of a float: scipy's ``spearmanr`` of four items with one swapped pair returns
0.7999999999999999, which a float comparison puts below 0.8. This module is the project's
one rank correlation:

- :func:`spearman` computes Spearman's rho (Pearson's correlation of the average ranks, as
  ``scipy.stats.spearmanr`` defines it) from integer arithmetic on doubled ranks: with
  ``c_i = 2 r_i - (n + 1)`` the centred doubled ranks, ``rho = sum c^x c^y / sqrt(sum (c^x)^2
  sum (c^y)^2)``. Without ties both sums of squares equal ``n (n^2 - 1) / 3``, so rho is the
  exact rational ``1 - 6 sum d^2 / (n (n^2 - 1))`` and the float returned is that rational
  correctly rounded (0.8, not 0.7999999999999999);
- :func:`reaches` is the one threshold decision of the book's verdicts: ``value >= threshold``
  up to :data:`DECISION_TOL`. Rank correlations of up to 16 items lie on a grid whose points
  are far more than ``DECISION_TOL`` apart (without ties, multiples of ``6 / (n (n^2 - 1))``,
  at least 1/680), so a value within the tolerance of a threshold *is* the threshold, and
  only rounding put it below; medians of such values (midpoints of two grid points) likewise;
- :func:`chance_at_least` is the probability that two independent random orderings of ``n``
  items reach a given rho: the false-positive rate of a rule "rho >= t" (exact for up to
  :data:`EXACT_UP_TO` items by enumerating the ``n!`` orderings, Monte Carlo beyond).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

__all__ = ["DECISION_TOL", "EXACT_UP_TO", "chance_at_least", "doubled_ranks", "median",
           "median_rho_test",
           "reaches", "spearman", "spearman_exact"]

#: Tolerance of every threshold decision (:func:`reaches`): far below the spacing of the values
#: decided on (rank correlations of a few items, shares of a few cells), far above rounding.
DECISION_TOL = 1e-9
#: Up to this many items :func:`chance_at_least` enumerates every ordering (8! = 40,320).
EXACT_UP_TO = 8


def doubled_ranks(values: Sequence[float]) -> list[int]:
    """Twice the average rank (1-based) of each value: integers, ties sharing the mean of
    their positions (``[3.0, 1.0, 3.0]`` -> ``[5, 2, 5]``). Equal floats tie; NaN is refused."""
    x = [float(v) for v in values]
    if any(math.isnan(v) for v in x):
        raise ValueError(f"values={values!r}: a rank needs numbers, not NaN")
    order = sorted(range(len(x)), key=x.__getitem__)
    out = [0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in order[i : j + 1]:
            out[k] = i + j + 2  # 2 * mean of the 1-based positions i+1 .. j+1
        i = j + 1
    return out


def spearman_exact(a: Sequence[float], b: Sequence[float]) -> tuple[int, int] | None:
    """Spearman's rho of ``a`` and ``b`` as integers ``(cov, var)`` with
    ``rho = cov / sqrt(var)``: ``cov = sum c^a c^b`` and ``var = sum (c^a)^2 sum (c^b)^2`` over the
    centred doubled ranks (module docstring). ``None`` where rho is undefined: fewer than two
    items, or all of one side equal."""
    if len(a) != len(b):
        raise ValueError(f"a and b have {len(a)} and {len(b)} items: expected as many")
    n = len(a)
    if n < 2:
        return None
    ca = [r - (n + 1) for r in doubled_ranks(a)]
    cb = [r - (n + 1) for r in doubled_ranks(b)]
    va, vb = sum(c * c for c in ca), sum(c * c for c in cb)
    if va == 0 or vb == 0:
        return None
    return sum(x * y for x, y in zip(ca, cb, strict=True)), va * vb


def _rho_float(cov: int, var: int) -> float:
    """``cov / sqrt(var)`` as a float: exact (correctly rounded) when ``var`` is a perfect
    square, as it is without ties; else to within an ulp of the irrational value."""
    root = math.isqrt(var)
    if root * root == var:
        return float(Fraction(cov, root))
    return float(Fraction(cov) / Fraction(math.sqrt(var)))


def spearman(a: Any, b: Any) -> np.ndarray:
    """Spearman's rank correlation of ``a`` and ``b`` ``(..., n)`` per row, shape ``(...)``.

    The value ``scipy.stats.spearmanr`` defines (ties get average ranks), computed
    exactly (module docstring); NaN where it is undefined: fewer than two items, a row whose
    values are all equal, or a NaN in the row.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim < 1:
        raise ValueError(f"a and b have shapes {x.shape} and {y.shape}: expected the same "
                         "shape (..., n)")
    xs, ys = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    out = np.full(len(xs), np.nan)
    for i, (u, v) in enumerate(zip(xs, ys, strict=True)):
        if np.isnan(u).any() or np.isnan(v).any():
            continue
        exact = spearman_exact(u.tolist(), v.tolist())
        if exact is not None:
            out[i] = _rho_float(*exact)
    return out.reshape(x.shape[:-1])


def reaches(value: float, threshold: float, tol: float = DECISION_TOL) -> bool:
    """The book's threshold decision: ``value >= threshold`` up to ``tol`` (module
    docstring). NaN reaches nothing. (Not the reachability of a graph's nodes: that is
    :func:`bparallel.graphs.reachability`.)"""
    value = float(value)
    return bool(not math.isnan(value) and value >= float(threshold) - tol)


def median(values: Sequence[float]) -> float:
    """The median of ``values`` computed in exact arithmetic from the floats given, then
    rounded once (``numpy.median`` of two values rounds their sum first); NaN for none."""
    vals = sorted(Fraction(float(v)) for v in values)
    if not vals:
        return math.nan
    mid = len(vals) // 2
    return float(vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2)


@cache
def _null_rhos(n: int) -> tuple[Fraction, ...]:
    """Spearman's rho of the identity with every permutation of ``n`` items, exact."""
    scale = Fraction(6, n * (n * n - 1))
    return tuple(1 - scale * sum((i - p) ** 2 for i, p in enumerate(perm))
                 for perm in itertools.permutations(range(n)))


def chance_at_least(n: int, threshold: float, *, samples: int = 200_000, seed: int = 0
                    ) -> float:
    """The probability that Spearman's rho of two independent random orderings of ``n``
    distinct items reaches ``threshold`` (:func:`reaches`): the chance rate of a rule
    "rho >= threshold". Exact for ``n <=`` :data:`EXACT_UP_TO` (every ordering); beyond, the
    share of ``samples`` random orderings (seeded), whose standard error is at most
    ``0.5 / sqrt(samples)``."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n={n!r}: expected an integer number of items >= 2")
    if n <= EXACT_UP_TO:
        t = Fraction(threshold).limit_denominator(10**9)
        rhos = _null_rhos(int(n))
        return sum(r >= t for r in rhos) / len(rhos)
    rng = np.random.default_rng(seed)
    perm = np.argsort(rng.random((samples, n)), axis=1)
    d2 = ((perm - np.arange(n)) ** 2).sum(1)
    # rho >= t  <=>  sum d^2 <= (1 - t) n (n^2 - 1) / 6, decided on integers
    bound = (1 - Fraction(threshold).limit_denominator(10**9)) * Fraction(n * (n * n - 1), 6)
    return float((d2 <= math.floor(bound + Fraction(1, 10**9))).mean())


def median_rho_test(pairs: Sequence[tuple[Any, Any]], *, permutations: int = 9999,
                    seed: int = 0) -> dict[str, float]:
    """Is the median over cells of Spearman's rho between two rankings larger than chance?

    ``pairs``: per cell, two score vectors over the same items (e.g. a layer's heads). The
    null hypothesis: within each cell the two rankings are unrelated, so the items of the
    second are relabelled at random, independently per cell (``permutations`` times,
    seeded). Returns ``"median"`` (:func:`median` of the cells' :func:`spearman`),
    ``"p"`` (one-sided: ``(1 + #{null median >= median}) / (1 + permutations)``, the
    comparison up to :data:`DECISION_TOL`) and ``"p_min"``, the p-value the best possible
    data would get (every cell's rho = 1): a test whose ``p_min`` exceeds the level cannot
    decide anything, so it is "not testable". Cells whose rho is undefined are left out;
    with none, every value is NaN."""
    if not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise ValueError(f"permutations={permutations!r}: expected a positive integer")
    cells = []
    for k, (x, y) in enumerate(pairs):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError(f"pairs[{k}] has shapes {x.shape} and {y.shape}: expected two "
                             "vectors of the same length")
        if np.isfinite(spearman(x, y)):
            cells.append((x, y))
    if not cells:
        return {"median": math.nan, "p": math.nan, "p_min": math.nan, "cells": 0}
    observed = median([float(spearman(x, y)) for x, y in cells])
    rng = np.random.default_rng(seed)
    null = np.empty((permutations, len(cells)))
    best = np.empty((permutations, len(cells)))
    for c, (x, y) in enumerate(cells):
        rx = np.array(doubled_ranks(x), float) - (len(x) + 1)
        ry = np.array(doubled_ranks(y), float) - (len(y) + 1)
        norm = math.sqrt(float((rx * rx).sum() * (ry * ry).sum()))
        perm = np.argsort(rng.random((permutations, len(y))), axis=1)
        null[:, c] = (ry[perm] * rx).sum(1) / norm
        # the best data: y ranked as x; its null is that of x against itself
        best[:, c] = (rx[perm] * rx).sum(1) / float((rx * rx).sum())
    null_median = np.median(null, axis=1)
    p = (1 + (null_median >= observed - DECISION_TOL).sum()) / (1 + permutations)
    p_min = (1 + (np.median(best, axis=1) >= 1 - DECISION_TOL).sum()) / (1 + permutations)
    return {"median": observed, "p": float(p), "p_min": float(p_min), "cells": len(cells)}
