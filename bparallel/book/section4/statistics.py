"""Statistics and verdict rules shared by Section 4's chapters (10, "Section 4 as defined";
11, "Across seeds"; 12, "Tasks where the graph matters"): is an effect of the head count
larger than the luck of one initialisation (:func:`seed_interval`, :func:`paired_effect`,
:func:`effect_outcome`), many tests at once (:func:`holm`), the noise floor of a per-head
measure and the per-head claims (:func:`noise_floor`, :func:`head_claims`), and the fixed
rules that turn numbers into verdicts (:func:`threshold_verdict`, :func:`rho_verdict`,
:func:`rank_claim_verdict`, :func:`across_tasks`, :func:`both_modes`).

Every Section 4 number comes from one training run per configuration and seed. With ``n``
seeds per configuration, a cell's mean gets a two-sided Student-t interval across seeds
(``mean ± t_{n-1} s / sqrt(n)``, ``s`` the sample standard deviation), and the change from
1 to 16 heads a paired comparison: the same seed trains both models, so the differences
per seed are paired and tested with a paired t-test. With one seed there is no interval:
the functions say so (``None``) instead of returning NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ... import ranks
from ..._checks import positive_int
from ...transformer.importance import ALPHA, RELIABLE, head_test, reliability
from ..verdicts import Outcome, Verdict

# --------------------------------------------------------------------------- across seeds


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


def effect_outcome(effect: Interval, direction: int) -> Outcome:
    """Does a change across seeds go the ``direction`` a claim says (``-1``: down, ``+1``:
    up)? :class:`~bparallel.book.verdicts.Outcome`: ``AS_CLAIMED`` when the whole interval
    lies on the claimed side of 0, ``AGAINST`` when it lies on the other side,
    ``NOT_RESOLVED`` when it holds 0, and with one seed (no interval) only the sign of that
    seed's change."""
    if direction not in (-1, 1):
        raise ValueError(f"direction={direction!r}: must be -1 or +1")
    if effect.low is None:
        if effect.mean == 0:
            return Outcome.NO_CHANGE
        return (Outcome.AS_CLAIMED_ONE_SEED if np.sign(effect.mean) == direction
                else Outcome.AGAINST_ONE_SEED)
    if effect.low == effect.high == 0:
        return Outcome.NO_CHANGE
    low, high = direction * effect.low, direction * effect.high
    lo, hi = min(low, high), max(low, high)
    if lo > 0:
        return Outcome.AS_CLAIMED
    if hi < 0:
        return Outcome.AGAINST
    return Outcome.NOT_RESOLVED


# --------------------------------------------------------------------------- many tests at once


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (Holm, 1979): with the ``m``
    p-values sorted, the ``k``-th smallest becomes ``max_{j <= k} min(1, (m - j + 1) p_(j))``.
    A test survives the correction at level ``alpha`` when its adjusted p-value is at most
    ``alpha``; the chance that any true null in the family is rejected then stays below
    ``alpha``. ``None`` (no test, e.g. one seed) is left out of the family and stays ``None``."""
    idx = [k for k, p in enumerate(p_values) if p is not None]
    for k in idx:
        if not 0 <= p_values[k] <= 1:
            raise ValueError(f"p_values[{k}]={p_values[k]!r}: a p-value lies in [0, 1]")
    m = len(idx)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, k in enumerate(sorted(idx, key=lambda k: p_values[k])):
        running = max(running, min(1.0, (m - rank) * p_values[k]))
        out[k] = running
    return out


# --------------------------------------------------------------------------- display


def _fixed(x: float, decimals: int) -> str:
    """``x`` with ``decimals`` decimals; 1e5 and beyond in three significant digits
    (``"9.84e+08"``); never ``"-0.00"``."""
    if abs(x) >= 1e5:
        return f"{x:.3g}"
    text = f"{x:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt_interval(mean: float, low: float | None, high: float | None, decimals: int = 2,
                 *, floor: float | None = None) -> str:
    """``"12.30 [10.10, 14.50]"``; with one seed (no interval) the mean alone. ``floor``: the
    smallest value the quantity can take (0 for a time or a share): the interval's ends are
    clipped to it (a t-interval of a skewed quantity can reach below)."""
    if low is None or high is None:
        return _fixed(mean, decimals)
    if floor is not None:
        low, high = max(low, floor), max(high, floor)
    return f"{_fixed(mean, decimals)} [{_fixed(low, decimals)}, {_fixed(high, decimals)}]"


def fmt_p(p: float | None) -> str:
    """A p-value for a table: ``"0.003"``, ``"< 0.001"``; ``"—"`` when there is none."""
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


# --------------------------------------------------------------------------- verdict rules


def threshold_verdict(value: float, holds: float, conditions: float) -> Verdict:
    """:attr:`~Verdict.HOLDS` when ``value >= holds``, :attr:`~Verdict.HOLDS_WITH_CONDITIONS`
    when ``value >= conditions``, else :attr:`~Verdict.NOT_SUPPORTED`: the fixed rule behind
    the chapter's verdict table (a table cell shows it as a verdict badge). Each comparison
    is :func:`bparallel.ranks.reaches`: a value that only rounding put below a threshold
    reaches it."""
    if not conditions <= holds:
        raise ValueError(f"conditions={conditions!r} must not exceed holds={holds!r}")
    if ranks.reaches(value, holds):
        return Verdict.HOLDS
    return (Verdict.HOLDS_WITH_CONDITIONS if ranks.reaches(value, conditions)
            else Verdict.NOT_SUPPORTED)


#: Rank agreement (the median of Spearman's rho over cells) at which a "this measure ranks
#: what matters" claim holds, and at which it holds with conditions; below, not supported.
RHO_HOLDS, RHO_CONDITIONS = 0.5, 0.2


def rho_verdict(rhos: Sequence[float], cells_needed: int = 1) -> Verdict:
    """The verdict of a rank-agreement claim from its per-cell correlations: by their median
    against :data:`RHO_HOLDS` and :data:`RHO_CONDITIONS`; not testable with fewer than
    ``cells_needed`` cells (chapters 10 and 12)."""
    if len(rhos) < positive_int(cells_needed, "cells_needed"):
        return Verdict.NOT_TESTABLE
    return threshold_verdict(ranks.median(rhos), RHO_HOLDS, RHO_CONDITIONS)


def across_tasks(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict for a claim from its per-task verdicts: the common one when they agree;
    :attr:`~Verdict.HOLDS_WITH_CONDITIONS` when it holds (with or without conditions) on
    some task but not all (the condition: those tasks); otherwise not testable when no task
    could test it, else not supported."""
    vs = [Verdict.parse(v) for v in verdicts]
    if not vs:
        return Verdict.NOT_TESTABLE
    if len(set(vs)) == 1:
        return vs[0]
    if {Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS} & set(vs):
        return Verdict.HOLDS_WITH_CONDITIONS
    if set(vs) == {Verdict.NOT_TESTABLE}:
        return Verdict.NOT_TESTABLE
    return Verdict.NOT_SUPPORTED


def over_tasks(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict of a claim from its per-task verdicts, judged per task: the tasks that
    could not test it (*not testable*, e.g. too few seeds yet; their evidence says so) are set
    aside, and the others are combined by
    :func:`across_tasks`; not testable when none could."""
    testable = [v for v in map(Verdict.parse, verdicts) if v is not Verdict.NOT_TESTABLE]
    return across_tasks(testable)


def both_modes(published: Verdict, defined: Verdict) -> Verdict:
    """One verdict from the published code's answer and the definitions': the common one;
    :attr:`~Verdict.REPRODUCED_PUBLISHED_ONLY` when only the published code's holds;
    :attr:`~Verdict.HOLDS_WITH_CONDITIONS` when only the definitions' does (the condition:
    as defined) or both hold in part; else the weaker of the two negatives (not supported
    before fails, testable before not)."""
    good = {Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS}
    if published is defined:
        return published
    if published in good and defined in good:
        return Verdict.HOLDS_WITH_CONDITIONS
    if published in good:
        return Verdict.REPRODUCED_PUBLISHED_ONLY
    if defined in good:
        return Verdict.HOLDS_WITH_CONDITIONS
    if Verdict.NOT_SUPPORTED in (published, defined):
        return Verdict.NOT_SUPPORTED
    return Verdict.FAILS if Verdict.FAILS in (published, defined) else Verdict.NOT_TESTABLE


# ------------------------------------------------------------- noise floor and per-head claims


def noise_floor(effects: Mapping[str, Any], *, threshold: float = RELIABLE,
                alpha: float = ALPHA) -> list[dict[str, Any]]:
    """The noise floor of one per-head measure, per cell: ``effects`` maps a model
    ``(task, heads, ...)`` to its per-sequence effects ``(L, H, N)``; one row per multi-head
    (model, layer) with the ranking's :func:`~bparallel.transformer.importance.reliability`
    (random half-splits, Spearman-Brown corrected), the permutation p-value that the heads
    differ at all (:func:`~bparallel.transformer.importance.head_test`), that p-value after
    Holm's correction over every row (the chapter's one multiple-testing rule,
    :func:`bparallel.book.section4.statistics.holm`) and ``reliable``: reliability at least
    ``threshold`` and Holm p at most ``alpha`` (both decided by
    :func:`bparallel.ranks.reaches`). Under the null hypothesis that no head differs, the
    chance that any cell of the family is reliable is at most ``alpha``, whatever the number of
    heads."""
    rows = []
    for key, eff in sorted(effects.items()):
        task, heads = key[0], key[1]
        if heads < 2:
            continue
        rel, p = reliability(eff), head_test(eff)
        for layer in range(len(rel)):
            rows.append({"task": task, "heads": heads, "layer": layer + 1, "model": key,
                         "reliability": float(rel[layer]), "p": float(p[layer])})
    for r, adjusted in zip(rows, holm([r["p"] for r in rows]), strict=True):
        r["p_holm"] = adjusted
        r["reliable"] = bool(ranks.reaches(r["reliability"], threshold)
                             and ranks.reaches(alpha, adjusted))
    return rows


def scored_cells(data: Mapping[Any, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-head cells of a chapter's models: ``data`` maps a model ``(task, heads,
    ...)`` to its head study, ``"impact"`` ``(L, H, N)`` (the per-sequence margin drop of
    removing each head alone) and ``"fidelity.paper"``, ``"fidelity.definition"`` ``(L, H)``
    (each head's minimax fidelity). Returns :func:`noise_floor` of the impacts with, per
    cell, ``scores``: the heads' mean impact and their fidelities in both modes, as
    :func:`head_claims` takes them."""
    cells = noise_floor({k: d["impact"] for k, d in data.items()})
    for c in cells:
        d, la = data[c["model"]], c["layer"] - 1
        c["scores"] = {"impact": np.nanmean(d["impact"][la], axis=-1),
                       **{k: d[k][la] for k in ("fidelity.paper", "fidelity.definition")}}
    return cells


def head_claims(ranking: Sequence[Mapping[str, Any]],
                rankings: Sequence[str] = ("fidelity.paper", "fidelity.definition"),
                ) -> list[dict[str, Any]]:
    """Does a per-head measure rank the heads as their impact does? Per task and ranking,
    over the task's reliable cells of :func:`~bparallel.book.section4.as_defined.ranking_rows`
    (never pooled across tasks): the median of the cells' Spearman rho (``cells``: those where
    it is defined; ``reliable_cells`` of ``task_cells``), its permutation test
    (:func:`bparallel.ranks.median_rho_test`: p-value and the smallest attainable one) and
    the verdict (:func:`rank_claim_verdict`)."""
    out = []
    for task in sorted({r["task"] for r in ranking}):
        cells = [r for r in ranking if r["task"] == task and r["reliable"]]
        for key in rankings:
            pairs = [(r["scores"][key], r["scores"]["impact"]) for r in cells
                     if key in r["scores"]]
            test = ranks.median_rho_test(pairs) if pairs else \
                {"median": math.nan, "p": math.nan, "p_min": math.nan, "cells": 0}
            out.append({"task": task, "ranking": key, "reliable_cells": len(cells),
                        "task_cells": sum(r["task"] == task for r in ranking), **test,
                        "verdict": rank_claim_verdict(test)})
    return out


def rank_claim_verdict(test: Mapping[str, float], *, cells_needed: int = 3,
                       alpha: float = ALPHA) -> Verdict:
    """The verdict of "this ranking orders the items as that one does" from a
    :func:`bparallel.ranks.median_rho_test`: not testable with fewer than ``cells_needed``
    cells or when even perfect agreement could not reach ``alpha`` (``p_min``); not
    supported when the median is no larger than chance gives (``p > alpha``); else by the
    median against :data:`RHO_HOLDS` and :data:`RHO_CONDITIONS`."""
    if test["cells"] < positive_int(cells_needed, "cells_needed") \
            or not ranks.reaches(alpha, test["p_min"]):
        return Verdict.NOT_TESTABLE
    if not ranks.reaches(alpha, test["p"]):
        return Verdict.NOT_SUPPORTED
    return threshold_verdict(test["median"], RHO_HOLDS, RHO_CONDITIONS)
