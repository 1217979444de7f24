"""Statistics across training seeds: is an effect of the head count larger than the luck of
one initialisation?

Every Section 4 number comes from one training run per configuration and seed. With ``n``
seeds per configuration, a cell's mean gets a two-sided Student-t interval across seeds
(``mean ± t_{n-1} s / sqrt(n)``, ``s`` the sample standard deviation), and the change from
1 to 16 heads a paired comparison: the same seed trains both models, so the differences
per seed are paired and tested with a paired t-test. With one seed there is no interval:
the functions say so (``None``) instead of returning NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """A mean over seeds and its two-sided t-interval (``None`` with fewer than 2 seeds)."""

    mean: float
    low: float | None
    high: float | None
    n: int
    level: float

    @property
    def half_width(self) -> float | None:
        return None if self.low is None else (self.high - self.low) / 2


def _values(values: Sequence[float], name: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or len(v) == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} has non-finite entries: {v.tolist()}")
    return v


def seed_interval(values: Sequence[float], level: float = 0.95) -> Interval:
    """Mean of one cell over seeds with its t-interval at ``level``."""
    if not 0 < level < 1:
        raise ValueError(f"level={level!r}: must lie in (0, 1)")
    v = _values(values, "values")
    n = len(v)
    if n < 2:
        return Interval(float(v.mean()), None, None, n, level)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * v.std(ddof=1) / math.sqrt(n)
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half), n, level)


@dataclass(frozen=True)
class PairedEffect:
    """``after - before`` per seed: its mean with a t-interval, and the paired t-test."""

    effect: Interval
    p_value: float | None  # two-sided; None with fewer than 2 seeds or no spread


def paired_effect(before: Sequence[float], after: Sequence[float],
                  level: float = 0.95) -> PairedEffect:
    """The change ``after - before`` over seeds (e.g. 1 head -> 16 heads, one seed training
    both), with its t-interval and a two-sided paired t-test (``scipy.stats.ttest_rel``)."""
    a, b = _values(before, "before"), _values(after, "after")
    if a.shape != b.shape:
        raise ValueError(f"before and after must pair up seed by seed, got {len(a)} and {len(b)}")
    diff = b - a
    interval = seed_interval(diff, level)
    if len(diff) < 2 or np.ptp(diff) == 0:
        return PairedEffect(interval, None)
    return PairedEffect(interval, float(stats.ttest_rel(b, a).pvalue))


def share_of_seeds(wins: Sequence[bool]) -> float:
    """Share of seeds in which an event happens (e.g. the combination beats the best head)."""
    w = np.asarray(wins, dtype=bool)
    if w.ndim != 1 or len(w) == 0:
        raise ValueError(f"wins must be a non-empty 1-d sequence, got shape {w.shape}")
    return float(w.mean())
