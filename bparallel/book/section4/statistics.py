"""Statistics and verdict rules shared by Section 4's chapters (10, "Section 4 as defined"; 11,
"Across seeds"; 12, "Tasks where the graph matters"): is an effect of the head count larger
than the luck of one initialisation (:func:`seed_interval`, :func:`paired_effect`,
:func:`effect_outcome`; a share's interval, :func:`share_interval`), many tests at once
(:func:`holm`), the noise floor of a per-head measure and the per-head claims
(:func:`noise_floor`, :func:`head_claims`), and the fixed rules that turn numbers into
verdicts (:func:`threshold_verdict`, :func:`rho_verdict`, :func:`rank_claim_verdict`,
:func:`across_tasks`, :func:`both_modes`).

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
from ..._checks import nonnegative_int, positive_int
from ...transformer.importance import ALPHA, PERMUTATIONS, RELIABLE, head_test, reliability
from ..verdicts import HOLDING, Outcome, Verdict
from ..words import fmt_fixed, fmt_p
from .rank_tests import smallest_mean_rho, smallest_rho, two_sided_rank_test

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


def share_interval(shares: Sequence[float], level: float = 0.95) -> Interval:
    """Mean over seeds of a share (each seed's value in [0, 1]) with its t-interval at
    ``level`` (:func:`seed_interval`) cut to [0, 1]. The mean share lies in [0, 1], so the
    cut interval holds it exactly when the t-interval does: the coverage is the
    t-interval's, while with few seeds (two give ``t`` = 12.7 at 95%) the uncut one would
    reach past 1 or below 0. The interval always holds the mean, so the cut never empties
    it; a bound inside [0, 1] is the t-interval's own."""
    v = _values(shares, "shares")
    if np.any((v < 0) | (v > 1)):
        raise ValueError(f"shares must lie in [0, 1], got {v.tolist()}")
    iv = seed_interval(v, level)
    if iv.low is None:
        return iv
    return Interval(iv.mean, max(iv.low, 0.0), min(iv.high, 1.0), iv.n, iv.level)


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


def change_p_value(change: Mapping[str, Any]) -> float | None:
    """The two-sided p-value of a change across seeds (a row of
    :func:`~bparallel.book.section4.graph_tasks.head_count_change`): the paired t-test's;
    where every seed changed by the same amount (no spread, so no t), the exact sign-flip
    test's, ``2 / 2^n`` for ``n`` seeds all one way; ``None`` with one seed or no change."""
    p = change.get("p_value")
    if p is not None:
        return float(p)
    n = int(change["seeds"])
    if n < 2 or change["change"] == 0:
        return None
    return min(1.0, 2 * 0.5 ** n)


def outcome_at(change: Mapping[str, Any], p: float | None, direction: int,
               alpha: float = ALPHA) -> Outcome:
    """Where a change lies when its two-sided p-value (Holm-adjusted: ``p``) decides:
    ``AS_CLAIMED`` or ``AGAINST`` by the sign of the mean change when ``p <= alpha``,
    ``NOT_RESOLVED`` above it, ``NO_CHANGE`` when no seed changed, and with one seed only
    that seed's sign (:func:`effect_outcome`)."""
    if direction not in (-1, 1):
        raise ValueError(f"direction={direction!r}: must be -1 or +1")
    if change["seeds"] < 2 or change["change"] == 0 and p is None:
        return effect_outcome(Interval(float(change["change"]), None, None,
                                       int(change["seeds"]), 0.95), direction)
    if p is None or not ranks.reaches(alpha, p):
        return Outcome.NOT_RESOLVED
    return Outcome.AS_CLAIMED if np.sign(change["change"]) == direction else Outcome.AGAINST


def smallest_change(change: Mapping[str, Any], alpha: float = ALPHA,
                    power: float = 0.8) -> float | None:
    """The smallest change from 1 to 16 heads that a paired t-test at ``alpha`` (two-sided)
    finds with probability ``power`` at the row's number of seeds and spread:
    ``(t_{1-alpha/2, n-1} + t_{power, n-1}) s / sqrt(n)`` (``s`` from the row's interval);
    ``None`` with fewer than two seeds, and ``None`` where the seeds' changes have no spread
    (every seed changes by the same amount: the test's statistic is undefined, and a
    "smallest change" of 0 would claim a resolution the design does not have)."""
    n = int(change["seeds"])
    if n < 2 or change.get("low") is None:
        return None
    level_t = stats.t.ppf(0.975, n - 1)  # the row's 95% interval gives s / sqrt(n)
    se = (change["high"] - change["low"]) / 2 / level_t
    if not se > 0:
        return None
    return float((stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) * se)


def holm_family(tests: Sequence[dict[str, Any]], key: str = "p",
                alpha: float = ALPHA, pending: int = 0) -> int:
    """Holm's correction over a chapter's family ``tests`` (dicts with a p-value under
    ``key``, ``None`` or NaN for no test, and for a permutation test ``p_min``, the smallest
    p-value its cells could give). A test that could not reach significance even with the
    best possible data is left out of the count (Tarone 1990: the family is the smallest
    ``m`` tests whose ``p_min <= alpha / m``), so tests that cannot decide do not dilute the
    ones that can; it gets ``p_holm`` ``None`` and ``decidable`` ``False``. Every other test
    gets ``p_holm`` (Holm-adjusted over the ``m``) and ``decidable`` ``True``. Returns ``m``,
    the family's size (with no test that could decide, 1).

    ``pending``: tests of a family stated before its data that have no data yet; each counts
    as one that could decide with p = 1 (it cannot pass, and the family does not grow when
    its data arrive)."""
    ps = [None if t.get(key) is None or not math.isfinite(t[key]) else float(t[key])
          for t in tests]
    floors = [float(t.get("p_min") or 0.0) if p is not None else math.inf
              for t, p in zip(tests, ps, strict=True)]
    pending = nonnegative_int(pending, "pending")
    m = 1
    while sum(f <= alpha / m for f in floors) + pending > m:
        m += 1
    kept = [p if f <= alpha / m else None for p, f in zip(ps, floors, strict=True)]
    # Tarone's multiplier is m, at least the tests kept: the rest of the m (pending ones
    # among them) count as p = 1
    pad = m - sum(p is not None for p in kept)
    adjusted = holm(kept + [1.0] * pad)[:len(kept)]
    for t, p, a in zip(tests, kept, adjusted, strict=True):
        t["p_holm"] = a
        t["decidable"] = p is not None
    return m


def family_verdicts(changes: Sequence[dict[str, Any]], rank_tests: Sequence[dict[str, Any]],
                    direction_of: Any, min_seeds: int, stated: bool = False) -> int:
    """A chapter's verdicts at Holm-corrected p-values (:func:`holm_family` over one family):
    ``changes`` across seeds (rows of
    :func:`~bparallel.book.section4.graph_tasks.head_count_change`; those with fewer than
    ``min_seeds`` seeds stay out, set aside as not testable) get ``p`` (two-sided,
    :func:`change_p_value`) and ``outcome`` (:func:`outcome_at`, in the claimed direction
    ``direction_of(change)``), ``rank_tests`` (:func:`two_sided_rank_test`) their
    ``verdict`` (:func:`rank_claim_verdict`). Every test also gets ``smallest``, the
    smallest effect it could find at the level of Holm's first step (``ALPHA / size``): a
    change's :func:`smallest_change` (at 80% power), a rank test's :func:`smallest_rho`
    (``None``: it cannot decide). ``stated``: the family was stated before its data, so
    every change of ``changes`` counts, one without a p-value (too few seeds yet, or no
    change in any seed) as p = 1 (``pending`` of :func:`holm_family`). Returns the family's
    size."""
    changes_in = [c for c in changes if c["seeds"] >= positive_int(min_seeds, "min_seeds")]
    for c in changes_in:
        c["p"] = change_p_value(c)
    pending = len(changes) - sum(c["p"] is not None for c in changes_in) if stated else 0
    size = holm_family([*changes_in, *rank_tests], pending=pending)
    first = ALPHA / size  # the level of Holm's first step: what a test must pass at least
    for c in changes_in:
        c["outcome"] = outcome_at(c, c["p_holm"], direction_of(c))
        c["smallest"] = smallest_change(c, alpha=first)
    for t in rank_tests:
        t["verdict"] = rank_claim_verdict(t)
        if "null" in t:
            t["smallest"] = smallest_mean_rho(t, first)
        else:
            t["smallest"] = smallest_rho(tuple(t["items"]), first) if t.get("items") else None
    return size


def fmt_decided(test: Mapping[str, Any]) -> str:
    """A rank test's p-values in words: two-sided, and after Holm's correction over its
    family; or why it cannot decide (the best p-value its cells could give)."""
    if test.get("decidable") is False:
        return (f"p {fmt_p(test['p'])}; cannot decide: even ρ = 1 in every seed gives p "
                f"{fmt_p(test['p_min'])}, above the family's threshold")
    if test.get("p_holm") is None:
        return f"p {fmt_p(test['p'])}"
    return f"p {fmt_p(test['p'])}, Holm p {fmt_p(test['p_holm'])}"


def claim_over_units(holding: int, against: int, units: int) -> Verdict:
    """The book's one rule for a claim tested in several units (layers, cells, tasks), each
    resolved as claimed, against the claim (a significant reversal) or neither: *fails*
    when any unit reverses it, *holds* when every unit goes the claimed way, *holds with
    conditions* when some do and none reverses, *not supported* when none resolves either
    way; *not testable* with no unit that could test it (chapters 11 and 12)."""
    for name, v in (("holding", holding), ("against", against), ("units", units)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name}={v!r}: expected a count >= 0")
    if holding + against > units:
        raise ValueError(f"holding={holding} and against={against} exceed units={units}")
    if units == 0:
        return Verdict.NOT_TESTABLE
    if against:
        return Verdict.FAILS
    if holding == units:
        return Verdict.HOLDS
    return Verdict.HOLDS_WITH_CONDITIONS if holding else Verdict.NOT_SUPPORTED


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


def fmt_interval(mean: float, low: float | None, high: float | None, decimals: int = 2,
                 *, floor: float | None = None) -> str:
    """``"12.30 [10.10, 14.50]"``; with one seed (no interval) the mean alone. ``floor``: the
    smallest value the quantity can take (0 for a time or a share): the interval's ends are
    clipped to it (a t-interval of a skewed quantity can reach below)."""
    if low is None or high is None:
        return fmt_fixed(mean, decimals)
    if floor is not None:
        low, high = max(low, floor), max(high, floor)
    return f"{fmt_fixed(mean, decimals)} [{fmt_fixed(low, decimals)}, {fmt_fixed(high, decimals)}]"


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
    *fails* when it fails on any task (a reversal is never outvoted by the tasks where the
    claim holds; the evidence names where it fails); :attr:`~Verdict.HOLDS_WITH_CONDITIONS`
    when it holds (with or without conditions) on some task but not all (the condition:
    those tasks); otherwise not testable when no task could test it, else not supported."""
    vs = [Verdict.parse(v) for v in verdicts]
    if not vs:
        return Verdict.NOT_TESTABLE
    if len(set(vs)) == 1:
        return vs[0]
    if Verdict.FAILS in vs:
        return Verdict.FAILS
    if HOLDING & set(vs):
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
    *fails* when either reverses the claim, whatever the other gives (a reversal is never
    outvoted, and a verdict is never kinder than its evidence: the cell names the mode that
    reverses it, :func:`modes_condition`); :attr:`~Verdict.HOLDS_WITH_CONDITIONS` when
    only one of them holds (the condition: *published code only*, or *as defined only*) or
    both hold in part; else not supported when either could test it, not testable when
    neither could."""
    if published is defined:
        return published
    if Verdict.FAILS in (published, defined):
        return Verdict.FAILS
    if published in HOLDING or defined in HOLDING:
        return Verdict.HOLDS_WITH_CONDITIONS
    if Verdict.NOT_SUPPORTED in (published, defined):
        return Verdict.NOT_SUPPORTED
    return Verdict.NOT_TESTABLE


#: How a verdict cell names the two modes.
_MODES = ("published code", "as defined")


def modes_condition(published: Verdict, defined: Verdict) -> str:
    """The condition of :func:`both_modes` in a few words (the verdict cell's,
    :func:`bparallel.book.verdicts.cell`): when the two answers combine to *holds with
    conditions*, the modes in which the claim holds, each "weakly" where it holds with
    conditions itself: "published code only", "as defined only, weakly", "published code;
    as defined, weakly"; when only one of them reverses the claim (*fails*), that mode and
    what the other gives: "as defined; published code: holds"; else empty."""
    combined = both_modes(published, defined)
    if combined is Verdict.FAILS:
        if published is defined:
            return ""
        (where, _), (other, theirs) = sorted(zip(_MODES, (published, defined), strict=True),
                                             key=lambda mv: mv[1] is not Verdict.FAILS)
        return f"{where}; {other}: {theirs.value}"
    if combined is not Verdict.HOLDS_WITH_CONDITIONS:
        return ""
    held = [(name, ", weakly" if v is Verdict.HOLDS_WITH_CONDITIONS else "")
            for name, v in zip(_MODES, (published, defined), strict=True) if v in HOLDING]
    if len(held) == 1:
        return f"{held[0][0]} only{held[0][1]}"
    return "; ".join(name + weakly for name, weakly in held)


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
    heads. The permutation test runs at least
    :data:`~bparallel.transformer.importance.PERMUTATIONS` relabellings, more for a large
    family (``4 m / alpha``): its smallest p-value times the ``m`` cells stays below
    ``alpha``, so adding models never turns every cell undecidable."""
    rows = []
    multi = {k: e for k, e in effects.items() if k[1] >= 2}
    # a permutation p-value is never below 1 / (1 + permutations): enough permutations that
    # the smallest one, times the family's size, stays a quarter of alpha, so that the
    # correction over many cells never makes every cell undecidable by resolution alone
    m = sum(np.shape(e)[0] for e in multi.values())
    permutations = max(PERMUTATIONS, math.ceil(4 * m / alpha))
    for key, eff in sorted(multi.items()):
        task, heads = key[0], key[1]
        rel, p = reliability(eff), head_test(eff, permutations=permutations)
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
                *, by: Sequence[str] = ("task",)) -> list[dict[str, Any]]:
    """Does a per-head measure rank the heads as their impact does? Per task (or per value
    of the cells' keys ``by``, e.g. ``("task", "arm")``) and ranking, over its reliable cells
    of :func:`~bparallel.book.section4.as_defined.ranking_rows` (never pooled across
    tasks): the median of the cells' Spearman rho (``cells``: those where it is defined;
    ``reliable_cells`` of ``task_cells``), its two-sided permutation test
    (:func:`two_sided_rank_test`: p-value and the smallest attainable one), that p-value
    after Holm's correction over the family of every test returned (``p_holm``,
    :func:`holm_family`) and the verdict (:func:`rank_claim_verdict` at the corrected
    p-value: a significant reversal fails). Each test carries its keys ``by``."""
    if "task" not in by:
        raise ValueError(f"by={tuple(by)!r}: must include 'task' (tasks are never pooled)")

    def group(r: Mapping[str, Any]) -> tuple:
        return tuple(r[k] for k in by)

    out = []
    for g in sorted({group(r) for r in ranking}):
        cells = [r for r in ranking if group(r) == g and r["reliable"]]
        for key in rankings:
            pairs = [(r["scores"][key], r["scores"]["impact"]) for r in cells
                     if key in r["scores"]]
            test = two_sided_rank_test(pairs) if pairs else \
                {"median": math.nan, "p": math.nan, "p_min": math.nan, "cells": 0}
            out.append({**dict(zip(by, g, strict=True)), "ranking": key,
                        "reliable_cells": len(cells),
                        "task_cells": sum(group(r) == g for r in ranking), **test})
    holm_family(out)
    for t in out:
        t["verdict"] = rank_claim_verdict(t)
    return out


def rank_claim_verdict(test: Mapping[str, float], *, cells_needed: int = 3,
                       alpha: float = ALPHA) -> Verdict:
    """The verdict of "this ranking orders the items as that one does" from a two-sided
    :func:`two_sided_rank_test` (its Holm-corrected ``p_holm`` when the test belongs to a
    family, else ``p``): not testable with fewer than ``cells_needed`` cells or when even
    perfect agreement could not reach ``alpha`` (``p_min``; in a family, ``decidable``:
    :func:`holm_family`); not supported when the median
    is no farther from 0 than chance gives (``p > alpha``); *fails* when it is significantly
    below 0 (the rankings reversed); else by the median against :data:`RHO_HOLDS` and
    :data:`RHO_CONDITIONS`."""
    if test["cells"] < positive_int(cells_needed, "cells_needed") \
            or not ranks.reaches(alpha, test["p_min"]) or test.get("decidable") is False:
        return Verdict.NOT_TESTABLE
    p = test.get("p_holm")
    p = test["p"] if p is None else p
    if not ranks.reaches(alpha, p):
        return Verdict.NOT_SUPPORTED
    if test.get("mean", test["median"]) < 0:  # the direction of the test's own statistic
        return Verdict.FAILS
    return threshold_verdict(test["median"], RHO_HOLDS, RHO_CONDITIONS)


def rank_condition(test: Mapping[str, Any]) -> str:
    """The condition of a rank claim's verdict (the test's ``verdict``, else
    :func:`rank_claim_verdict` of it) in a few words: empty unless the claim holds with
    conditions, i.e. the rankings agree significantly but weakly (a median rho between
    :data:`RHO_CONDITIONS` and :data:`RHO_HOLDS`); then "weakly (median ρ below 0.5)"."""
    verdict = test.get("verdict") or rank_claim_verdict(test)
    if Verdict.parse(verdict) is not Verdict.HOLDS_WITH_CONDITIONS:
        return ""
    return f"weakly (median ρ below {RHO_HOLDS:g})"
