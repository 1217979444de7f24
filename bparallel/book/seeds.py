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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .published import MODE_NAMES
from .verdicts import Outcome, Verdict


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


# --------------------------------------------------------------------------- Section 4 over seeds

#: The direction each Section 4 claim gives the change from fewer to more heads.
CLAIMED_DIRECTION = {"mixing_time": -1, "fidelity": +1}

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


def _cells(by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]], table: str,
           keep: Callable[[Mapping[str, Any]], bool], fields: Sequence[str],
           value: Callable[[Mapping[str, Any]], float]) -> dict[tuple, dict[int, float]]:
    cells: dict[tuple, dict[int, float]] = {}
    for seed, tables in by_seed.items():
        for row in tables[table]:
            if keep(row):
                cells.setdefault(tuple(row[f] for f in fields), {})[seed] = value(row)
    return dict(sorted(cells.items()))


def tables_1_4_across_seeds(
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
    *,
    protocol: str = "paper",
    level: float = 0.95,
) -> list[dict[str, Any]]:
    """Each cell of Tables 1-4 over seeds: ``by_seed`` maps a seed to
    :func:`~bparallel.book.tables.evaluate_models`' result for that seed's models. One row
    per (quantity, mode, task, heads, layer): ``seeds``, ``mean`` over seeds of the cell's
    mean, its t-interval ``low``/``high`` (``None`` with one seed) and ``seed_42``."""
    if not by_seed:
        raise ValueError("by_seed is empty: give the tables of at least one seed")
    fields = ("table", "quantity", "mode", "task", "heads", "layer")
    cells = _cells(by_seed, "tables_1_4", lambda r: r["protocol"] == protocol, fields,
                   lambda r: r["mean"])
    if not cells:
        raise ValueError(f"no Tables 1-4 rows for protocol={protocol!r}")
    rows = []
    for key, values in cells.items():
        iv = seed_interval([values[s] for s in sorted(values)], level)
        rows.append({**dict(zip(fields, key, strict=True)), "seeds": iv.n, "mean": iv.mean,
                     "low": iv.low, "high": iv.high, "seed_42": values.get(42)})
    return rows


def head_count_effects(
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
    *,
    protocol: str = "paper",
    mode: str = "paper",
    fewer: int = 1,
    more: int = 16,
    level: float = 0.95,
) -> list[dict[str, Any]]:
    """The change from ``fewer`` to ``more`` heads per quantity, task and layer, paired by
    seed (one seed trains both models): the mean change with its t-interval, the paired
    t-test's two-sided ``p_value``, its Holm-adjusted ``p_holm`` over the rows (the family of
    tests the chapter's claims rest on, :func:`holm`), and the :func:`effect_outcome`
    against the paper's claim (:data:`CLAIMED_DIRECTION`: fewer steps, more fidelity), also
    after Holm's correction (``outcome_holm``: a change that survives its own interval but
    not the correction reads "not after Holm")."""
    fields = ("quantity", "task", "layer", "heads")
    cells = _cells(by_seed, "tables_1_4",
                   lambda r: r["protocol"] == protocol and r["mode"] == mode, fields,
                   lambda r: r["mean"])
    rows = []
    for quantity, task, layer in sorted({k[:3] for k in cells}):
        lo, hi = cells.get((quantity, task, layer, fewer)), cells.get((quantity, task, layer, more))
        if lo is None or hi is None:
            continue
        seeds = sorted(set(lo) & set(hi))
        if not seeds:
            continue
        pe = paired_effect([lo[s] for s in seeds], [hi[s] for s in seeds], level)
        rows.append({
            "quantity": quantity, "task": task, "layer": layer, "seeds": len(seeds),
            "fewer": float(np.mean([lo[s] for s in seeds])),
            "more": float(np.mean([hi[s] for s in seeds])),
            "effect": pe.effect.mean, "low": pe.effect.low, "high": pe.effect.high,
            "p_value": pe.p_value,
            "outcome": effect_outcome(pe.effect, CLAIMED_DIRECTION[quantity]),
        })
    if not rows:
        raise ValueError(f"no seed has both {fewer} and {more} heads for protocol={protocol!r}, "
                         f"mode={mode!r}")
    for r, adjusted in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        r["p_holm"] = adjusted
        r["outcome_holm"] = (r["outcome"] if r["outcome"] != Outcome.AS_CLAIMED
                             else Outcome.AS_CLAIMED if adjusted is not None
                             and adjusted <= 1 - level else Outcome.NOT_AFTER_HOLM)
    return rows


def amplification_across_seeds(
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
    *,
    protocol: str = "paper",
    sample: str = "mean",
    mode: str = "paper",
) -> list[dict[str, Any]]:
    """Tables 5-6 over seeds: per (task, heads, layer), the ``share`` of seeds in which the
    weighted combination beats the best single head (at the published two decimals,
    :func:`~bparallel.book.published.verdict`), beside seed 42's verdict."""
    from .published import verdict

    fields = ("task", "heads", "layer")
    cells = _cells(
        by_seed, "tables_5_6",
        lambda r: (r["protocol"], r["sample"], r["mode"]) == (protocol, sample, mode), fields,
        lambda r: verdict(r["combined"], r["individual"]))
    if not cells:
        raise ValueError(f"no Tables 5-6 rows for protocol={protocol!r}, sample={sample!r}, "
                         f"mode={mode!r}")
    rows = []
    for key, values in cells.items():
        seeds = sorted(values)
        rows.append({**dict(zip(fields, key, strict=True)), "seeds": len(seeds),
                     "wins": sum(values[s] > 0 for s in seeds),
                     "share": share_of_seeds([values[s] > 0 for s in seeds]),
                     "seed_42": values.get(42)})
    return rows


def surviving_claims(effects: Sequence[Mapping[str, Any]],
                     amplification: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Which Section 4 claims survive seeds, per task: counts behind each verdict.

    For "more heads mix faster" and "more heads keep more fidelity" (rows of
    :func:`head_count_effects`): in how many layers (``units``) the change ``holds``
    (survives the seeds *and* Holm's correction over the table's tests, the chapter's one
    multiple-testing rule; ``holds_uncorrected`` counts those whose own interval survives,
    shown beside it, labelled), goes ``against`` the claim (reversed) or is ``undecided``. For "the
    combination beats its best head" (rows of :func:`amplification_across_seeds`): in how
    many (heads, layer) cells it wins in every seed (``holds``), in none (``against``), in
    some (``undecided``). ``verdict`` (:class:`~bparallel.book.verdicts.Verdict`): holds
    when every layer (cell) goes the claimed way in every seed, fails when none does, holds
    with conditions otherwise; with one seed, not testable (nothing can survive seeds that
    were not trained)."""
    claims = {"mixing_time": "more heads mix faster (Tables 1-2)",
              "fidelity": "more heads keep more fidelity (Tables 3-4)"}
    out = []
    for quantity, claim in claims.items():
        for task in sorted({r["task"] for r in effects}):
            rows = [r for r in effects if r["quantity"] == quantity and r["task"] == task]
            if not rows:
                continue
            n = min(r["seeds"] for r in rows)
            count = {v: sum(r.get("outcome_holm", r["outcome"]) == v for r in rows)
                     for v in Outcome}
            raw = sum(r["outcome"] == Outcome.AS_CLAIMED for r in rows)
            out.append({"claim": claim, "task": task, "seeds": n, "units": len(rows),
                        "holds": count[Outcome.AS_CLAIMED] + count[Outcome.AS_CLAIMED_ONE_SEED],
                        "holds_uncorrected": raw + count[Outcome.AS_CLAIMED_ONE_SEED],
                        "against": count[Outcome.AGAINST] + count[Outcome.AGAINST_ONE_SEED],
                        "undecided": (count[Outcome.NOT_RESOLVED] + count[Outcome.NO_CHANGE]
                                      + count[Outcome.NOT_AFTER_HOLM]),
                        "verdict": _claim_verdict(n, count[Outcome.AS_CLAIMED], len(rows))})
    for task in sorted({r["task"] for r in amplification}):
        rows = [r for r in amplification if r["task"] == task]
        n = min(r["seeds"] for r in rows)
        every = sum(r["share"] == 1 for r in rows)
        none = sum(r["share"] == 0 for r in rows)
        out.append({"claim": "the combination beats its best head (Tables 5-6)", "task": task,
                    "seeds": n, "units": len(rows), "holds": every, "against": none,
                    "undecided": len(rows) - every - none,
                    "verdict": _claim_verdict(n, every, len(rows))})
    return out


def _claim_verdict(seeds: int, holding: int, units: int) -> Verdict:
    """A claim over units (layers, cells): holds in all, fails in none, with conditions in
    between; not testable with fewer than two seeds."""
    if seeds < 2:
        return Verdict.NOT_TESTABLE
    if holding == units:
        return Verdict.HOLDS
    return Verdict.FAILS if holding == 0 else Verdict.HOLDS_WITH_CONDITIONS


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


# --------------------------------------------------------------------------- hardware

def hardware_kind(hardware: str) -> str:
    """``"GPU"`` for a machine string naming CUDA or an NVIDIA device
    (:func:`bparallel.transformer.train.hardware_string`), else ``"CPU"``."""
    return "GPU" if ("CUDA" in hardware or "NVIDIA" in hardware) else "CPU"


def changes_by_seed(
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
    *,
    protocol: str = "paper",
    mode: str = "paper",
    fewer: int = 1,
    more: int = 16,
) -> list[dict[str, Any]]:
    """The change from ``fewer`` to ``more`` heads in each seed separately, per (quantity,
    task, layer): rows with ``changes`` ``{seed: change}`` (the per-seed values that
    :func:`head_count_effects` averages)."""
    cells = _cells(by_seed, "tables_1_4",
                   lambda r: r["protocol"] == protocol and r["mode"] == mode,
                   ("quantity", "task", "layer", "heads"), lambda r: r["mean"])
    rows = []
    for quantity, task, layer in sorted({k[:3] for k in cells}):
        lo, hi = cells.get((quantity, task, layer, fewer)), cells.get((quantity, task, layer, more))
        if lo is None or hi is None:
            continue
        rows.append({"quantity": quantity, "task": task, "layer": layer,
                     "changes": {s: hi[s] - lo[s] for s in sorted(set(lo) & set(hi))}})
    return rows


def odd_seed_out(rows: Sequence[Mapping[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Does one seed (e.g. the only one trained on another machine) stand apart from the
    others? Per row of :func:`changes_by_seed`: that seed's ``change``, the other seeds'
    ``low`` and ``high``, its ``position`` among them (``"below"``, ``"between"``,
    ``"above"``: strictly outside their range, or within it) and whether every seed's change
    has the same sign (``same_sign``)."""
    out = []
    for r in rows:
        changes = r["changes"]
        if seed not in changes or len(changes) < 2:
            raise ValueError(f"seed {seed} needs at least one other seed to compare with in "
                             f"{r['quantity']}, {r['task']}, layer {r['layer']}")
        others = [v for s, v in changes.items() if s != seed]
        v = changes[seed]
        position = ("below" if v < min(others) else "above" if v > max(others) else "between")
        signs = {int(np.sign(x)) for x in changes.values()}
        out.append({"quantity": r["quantity"], "task": r["task"], "layer": r["layer"],
                    "change": v, "low": min(others), "high": max(others), "position": position,
                    "same_sign": len(signs) == 1})
    return out


def outside_tail(outside: int, cells: int, seeds: int) -> float:
    """How surprising is one seed outside the others' range in ``outside`` of ``cells``
    cells? With ``seeds`` exchangeable seeds (the machine makes no difference) a given seed
    is the lowest or the highest of a cell with probability ``2 / seeds``; this is
    ``Pr[X >= outside]`` for ``X ~ Bin(cells, 2 / seeds)``, cells taken as independent."""
    if seeds < 2 or not 0 <= outside <= cells:
        raise ValueError(f"need seeds >= 2 and 0 <= outside <= cells, got seeds={seeds}, "
                         f"outside={outside}, cells={cells}")
    return float(stats.binom.sf(outside - 1, cells, min(1.0, 2 / seeds)))


# --------------------------------------------------------------------------- display

_QUANTITY = {"mixing_time": "mixing time (steps)", "fidelity": "minimax fidelity (%)"}


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


def tables_1_4_seed_markdown(rows: Sequence[Mapping[str, Any]], *, mode: str = "paper",
                             level: float = 0.95, name_prefix: str = "tbl-seeds") -> str:
    """Tables 1-4 over seeds (rows of :func:`tables_1_4_across_seeds`) in tabs, one numbered
    captioned table per published table: per head count and layer, the mean over seeds with
    its interval, beside the published mean."""
    from .published import published_rows
    from .render.markdown import table, tabs

    published = {(r["table"], r["heads"], r["layer"]): r["mean"] for r in published_rows()
                 if r["table"] <= 4}
    titles = {1: "Table 1, copy", 2: "Table 2, cycle", 3: "Table 3, copy", 4: "Table 4, cycle"}
    items = {}
    for t in (1, 2, 3, 4):
        cells = [r for r in rows if r["table"] == t and r["mode"] == mode]
        if not cells:
            continue
        n = min(r["seeds"] for r in cells)
        quantity = _QUANTITY[cells[0]["quantity"]]
        out = []
        for heads in sorted({r["heads"] for r in cells}):
            row: dict[str, Any] = {"heads": heads}
            for r in sorted((r for r in cells if r["heads"] == heads), key=lambda r: r["layer"]):
                row[f"layer {r['layer']}"] = fmt_interval(r["mean"], r["low"], r["high"])
                row[f"layer {r['layer']}, paper"] = published.get((t, heads, r["layer"]))
            out.append(row)
        what = (f"the mean over {n} seeds with its {level:.0%} t-interval across seeds"
                if n > 1 else "one seed, so no interval")
        caption = (f"{titles[t]}: {quantity} per layer, {MODE_NAMES[mode]}, published protocol; "
                   f"{what}, beside the published mean.")
        items[titles[t]] = table(out, caption=caption, name=f"{name_prefix}-{mode}-{t}",
                                 formats={c: ".2f" for c in out[0] if c.endswith("paper")})
    return tabs(items)


#: Formats of :func:`effects_table`.
EFFECT_FORMATS = {"1 head": ".2f", "16 heads": ".2f"}


def effects_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`head_count_effects` rows as shown (format with :data:`EFFECT_FORMATS`): the
    means over seeds with 1 and 16 heads, the change with its interval across seeds, the
    paired p-value, Holm's adjusted one and the outcome after it."""
    return [{"quantity": _QUANTITY[r["quantity"]], "task": r["task"], "layer": r["layer"],
             "1 head": r["fewer"], "16 heads": r["more"],
             "change [interval]": fmt_interval(r["effect"], r["low"], r["high"]),
             "paired p": fmt_p(r["p_value"]), "Holm p": fmt_p(r["p_holm"]),
             "outcome": r["outcome_holm"]} for r in rows]
