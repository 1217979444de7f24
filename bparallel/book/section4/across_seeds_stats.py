"""What chapter 11 ("Across seeds") computes over the training seeds, from the tables of
each seed's models: Tables 1-4 cell by cell over seeds (:func:`tables_1_4_across_seeds`),
Tables 5-6 (:func:`amplification_across_seeds`), the change from 1 to 16 heads with its
interval across seeds, paired test and Holm's correction (:func:`head_count_effects`; the
statistics are :mod:`bparallel.book.section4.statistics`), the claims that survive
(:func:`surviving_claims`), and whether one seed stands apart from the others
(:func:`changes_by_seed`, :func:`odd_seed_out`, :func:`outside_tail`). The tables the
chapter shows and the values it records are :mod:`bparallel.book.section4.across_seeds`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from ..verdicts import Outcome, Verdict
from .statistics import (
    claim_over_units,
    effect_outcome,
    holm,
    paired_effect,
    seed_interval,
    share_of_seeds,
)

# --------------------------------------------------------------------------- Section 4 over seeds


#: The direction each Section 4 claim gives the change from fewer to more heads.
CLAIMED_DIRECTION = {"mixing_time": -1, "fidelity": +1}


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
    :func:`~bparallel.book.section4.tables.evaluate_models`' result for that seed's models. One row
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
    not the correction reads "not after Holm"; a reversal that does not survive it is "not
    resolved": the correction applies to both directions)."""
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
        survives = adjusted is not None and adjusted <= 1 - level
        r["outcome_holm"] = (r["outcome"] if survives or r["outcome"] not in (
                                 Outcome.AS_CLAIMED, Outcome.AGAINST)
                             else Outcome.NOT_AFTER_HOLM if r["outcome"] == Outcome.AS_CLAIMED
                             else Outcome.NOT_RESOLVED)
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
    :func:`~bparallel.book.section4.published.verdict`), beside seed 42's verdict."""
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
    some (``undecided``). ``verdict`` (:class:`~bparallel.book.verdicts.Verdict`) and its
    ``condition`` (the verdict cell's, "in 3 of 4 layers"; empty unless it holds with
    conditions): holds
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
                        "verdict": _claim_verdict(
                            n, count[Outcome.AS_CLAIMED],
                            count[Outcome.AGAINST] + count[Outcome.AGAINST_ONE_SEED],
                            len(rows))})
            out[-1]["condition"] = _condition(out[-1]["verdict"], count[Outcome.AS_CLAIMED],
                                              len(rows), "layers")
    for task in sorted({r["task"] for r in amplification}):
        rows = [r for r in amplification if r["task"] == task]
        n = min(r["seeds"] for r in rows)
        every = sum(r["share"] == 1 for r in rows)
        none = sum(r["share"] == 0 for r in rows)
        out.append({"claim": "the combination beats its best head (Tables 5-6)", "task": task,
                    "seeds": n, "units": len(rows), "holds": every, "against": none,
                    "undecided": len(rows) - every - none,
                    "verdict": _claim_verdict(n, every, none, len(rows))})
        out[-1]["condition"] = _condition(out[-1]["verdict"], every, len(rows), "cells")
    return out


def _condition(verdict: Verdict, holding: int, units: int, unit: str) -> str:
    """The verdict cell's condition of a claim over units: "in 3 of 4 layers" where it holds
    with conditions, else empty."""
    return (f"in {holding} of {units} {unit}" if verdict is Verdict.HOLDS_WITH_CONDITIONS
            else "")


def _claim_verdict(seeds: int, holding: int, against: int, units: int) -> Verdict:
    """A claim over units (layers, cells) by the book's one rule
    (:func:`~bparallel.book.section4.statistics.claim_over_units`, chapter 12's too): fails
    where any unit goes against it, holds in all, with conditions in some, not supported
    where none resolves; not testable with fewer than two seeds."""
    if seeds < 2:
        return Verdict.NOT_TESTABLE
    return claim_over_units(holding, against, units)


# --------------------------------------------------------------------------- hardware


def hardware_kind(hardware: str) -> str:
    """``"GPU"`` for a machine string naming CUDA or an NVIDIA device
    (:func:`bparallel.transformer.runtime.hardware_string`), else ``"CPU"``."""
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
