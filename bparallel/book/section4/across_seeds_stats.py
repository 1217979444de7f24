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
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from ... import ranks
from ..._checks import positive_int
from ..._io import atomic_write, file_lock
from ...transformer import metrics_cache
from ...transformer.design import evaluation_inputs
from ...transformer.importance import head_fidelity
from ...transformer.shipped import models_by_seed
from ..verdicts import Outcome, Verdict
from .measures import measure_models
from .published import verdict
from .statistics import (
    claim_over_units,
    effect_outcome,
    holm,
    paired_effect,
    seed_interval,
    share_interval,
    share_of_seeds,
    smallest_change,
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
    holm_outcomes(rows, level=level)
    return rows


def holm_outcomes(rows: Sequence[dict[str, Any]], *, level: float = 0.95) -> int:
    """Holm's correction over a family of rows of :func:`head_count_effects` (one table's,
    or the chapter's: both modes' tables together, :func:`chapter_family`): each row gets
    ``p_holm`` and ``outcome_holm`` (a change that survives its own interval but not the
    correction reads "as claimed, not after Holm", a reversal that does not survive it "not
    resolved": the correction applies to both directions) and ``smallest``, the smallest
    change its paired t-test finds with 80% power at the level of Holm's first step
    (:func:`~bparallel.book.section4.statistics.smallest_change`, ``(1 - level) / m``;
    ``None`` with one seed). Returns ``m``, the tests in the family."""
    alpha = 1 - level
    adjusted_all = holm([r["p_value"] for r in rows])
    m = sum(p is not None for p in adjusted_all)
    for r, adjusted in zip(rows, adjusted_all, strict=True):
        r["p_holm"] = adjusted
        survives = adjusted is not None and ranks.reaches(alpha, adjusted)  # p <= alpha
        r["outcome_holm"] = (r["outcome"] if survives or r["outcome"] not in (
                                 Outcome.AS_CLAIMED, Outcome.AGAINST)
                             else Outcome.NOT_AFTER_HOLM if r["outcome"] == Outcome.AS_CLAIMED
                             else Outcome.NOT_RESOLVED)
        r["smallest"] = smallest_change({"seeds": r["seeds"], "low": r["low"],
                                         "high": r["high"]}, alpha=alpha / max(m, 1))
    return m


def chapter_family(effects: Mapping[str, Sequence[dict[str, Any]]], *,
                   level: float = 0.95) -> int:
    """Holm's correction over chapter 11's family, as the REFORMS page states it: every
    paired 1 -> 16-head change of both modes' tables together (``effects``: rows of
    :func:`head_count_effects` per mode), :func:`holm_outcomes` over them all. Returns the
    family's size."""
    return holm_outcomes([r for rows in effects.values() for r in rows], level=level)


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


# --------------------------------------------------------------- Tables 5-6, sequence by sequence

#: Two minimax fidelities (percent) that differ by less than this are a tie: half the last
#: digit the paper publishes (two decimals). A tie is neither a win nor a loss and is left
#: out of a win share (the sink's cap makes many cells tie near 0.00%).
TIE = 0.005
#: The two readings of "the best head" (Definitions 3.10-3.12) against which the weighted
#: combination is compared: the head best on each sequence (Tables 5-6's ``individual``,
#: one sequence in the paper), or the one head best on average over the sequences
#: (:func:`bparallel.transformer.importance.head_fidelity`'s ``h_*``).
READINGS = {"per_sequence": "best head per sequence", "on_average": "best head on average"}


def head_fidelity_cached(model: Any, inputs: Any, *, horizon: int, cache_dir: Any = None,
                         recorded: Any = None) -> dict[str, np.ndarray]:
    """:func:`bparallel.transformer.importance.head_fidelity` of ``model`` on ``inputs``
    (each head's minimax fidelity per sequence, both modes), stored under ``cache_dir`` by
    the metrics cache's content key (:func:`~bparallel.transformer.metrics_cache.metrics_key`:
    weights, sequences, options and the measuring code, so never stale) and read, where
    ``cache_dir`` lacks it, from ``recorded`` (the results recorded beside the shipped
    models, ``models/recorded/``; read only); ``None`` for both computes without a cache.
    Like :func:`~bparallel.transformer.metrics_cache.cached_metrics_many`, it names its file
    to every open :func:`~bparallel.transformer.metrics_cache.tracked_files` block (so that
    ``python -m bparallel record`` keeps it) and, inside a lookup-only one, raises
    :class:`~bparallel.transformer.metrics_cache.NotCached` instead of computing it."""

    tracking = metrics_cache._TRACKED
    folders = [Path(d) for d in (cache_dir, recorded) if d is not None]
    if not folders and not tracking:
        return head_fidelity(model, inputs, horizon=horizon)
    key = metrics_cache.metrics_key(model, inputs, measure="head_fidelity", horizon=horizon)
    name = f"metrics-{key}.npz"
    for names, _ in tracking:
        names.add(name)

    def read(path: Path) -> dict[str, np.ndarray] | None:
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}

    for folder in folders:
        if (found := read(folder / name)) is not None:
            return found
    if any(lookup_only for _, lookup_only in tracking):
        raise metrics_cache.NotCached([name])
    if cache_dir is None:
        return head_fidelity(model, inputs, horizon=horizon)
    path = Path(cache_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_suffix(".lock")):
        if (found := read(path)) is not None:
            return found
        out = head_fidelity(model, inputs, horizon=horizon)
        atomic_write(path, lambda fh: np.savez(fh, **out))
        return out


def sequence_amplification_data(bundle: Any, models_dir: Any, *, max_steps: int,
                                horizon: int, cache_dir: Any = None, recorded: Any = None,
                                ) -> dict[int, dict[tuple, dict]]:
    """Per seed, multi-head model ``(task, heads)`` of the book's models on the published
    protocol (each seed's own sequences, as :func:`~bparallel.book.section4.tables.
    evaluate_seeds`) and mode (``"paper"``, ``"definition"``): the combination's minimax
    fidelity per sequence ``"combined"`` ``(L, N)`` (Algorithm 2; the metrics cache's
    ``"sequence"`` part, the one Tables 1-6 read) and each head's ``"per_head"``
    ``(L, N, H)`` (:func:`head_fidelity_cached`). The best head per sequence of the one must
    be Tables 5-6's ``individual`` (checked to 1e-6 percentage points, the two computations'
    float32 rounding, far below :data:`TIE`: a ``ValueError`` where they disagree)."""
    out: dict[int, dict[tuple, dict]] = {}
    for seed, models in models_by_seed(bundle, models_dir).items():
        multi = {k: m for k, m in models.items() if k[1] > 1}
        inputs = {k: evaluation_inputs(k[0], "paper", bundle.profile, seed=seed)
                  for k in multi}
        seq = measure_models(multi, inputs, "sequence", max_steps=max_steps, horizon=horizon,
                             cache_dir=cache_dir, recorded=recorded)
        out[seed] = {}
        for k, m in multi.items():
            heads = head_fidelity_cached(m, inputs[k], horizon=horizon, cache_dir=cache_dir,
                                         recorded=recorded)
            out[seed][k] = {}
            for mode in ("paper", "definition"):
                per_head = np.asarray(heads[f"{mode}.per_sequence"], float)  # (L, N, H)
                best = np.asarray(seq[k].graphs[f"best_head.individual.{mode}"], float)
                if not np.allclose(per_head.max(-1), best, rtol=1e-5, atol=1e-6):
                    raise ValueError(f"seed {seed}, {k}, {mode}: the heads' fidelities do not "
                                     "give Tables 5-6's best head; the two measures disagree")
                out[seed][k][mode] = {"combined": np.asarray(seq[k].graphs[f"fidelity.{mode}"],
                                                             float),
                                      "per_head": per_head}
    return out


def win_share(combined: np.ndarray, best: np.ndarray, tie: float = TIE
              ) -> tuple[float | None, float]:
    """Over sequences, the share the combination wins among those it does not tie
    (``|combined - best| < tie`` is a tie), ``None`` when every one ties; and the share of
    ties."""
    c, b = np.asarray(combined, float), np.asarray(best, float)
    if c.shape != b.shape or c.ndim != 1 or c.size == 0:
        raise ValueError(f"combined and best must be matching non-empty 1-d arrays, got "
                         f"{c.shape} and {b.shape}")
    d = c - b
    tied = np.abs(d) < tie
    decided = int((~tied).sum())
    return (float((d[~tied] > 0).mean()) if decided else None), float(tied.mean())


def amplification_per_sequence(data: Mapping[int, Mapping[tuple, Mapping[str, Any]]],
                               *, mode: str = "paper", level: float = 0.95, tie: float = TIE
                               ) -> list[dict[str, Any]]:
    """Tables 5-6 sequence by sequence over seeds (``data``:
    :func:`sequence_amplification_data`, its ``mode``), per (task, heads, layer) and reading of
    :data:`READINGS`: per seed, the share of sequences the combination wins among those it
    does not tie (:func:`win_share`), its mean over seeds with a t-interval cut to [0, 1]
    (``share``, ``low``, ``high``: :func:`~bparallel.book.section4.statistics.
    share_interval`; seeds whose every sequence ties are left out, and a cell
    where all do has no share), the mean share of ties, and in how many seeds the
    combination beats that best head on the means at the published two decimals (``wins``
    of ``seeds``). ``outcome``: as claimed when the whole interval lies above one half (the
    combination wins more sequences than it loses, beyond the seeds), against the claim
    when below, not resolved when it holds one half, no change when every sequence ties."""
    cells: dict[tuple, dict[str, list]] = {}
    for _seed, models in sorted(data.items()):
        for (task, heads), d in sorted(models.items()):
            comb, per_head = d[mode]["combined"], d[mode]["per_head"]  # (L, N), (L, N, H)
            on_average = per_head.mean(1).argmax(-1)  # (L,): h_* of the mean fidelities
            for layer in range(comb.shape[0]):
                best = {"per_sequence": per_head[layer].max(-1),
                        "on_average": per_head[layer][:, on_average[layer]]}
                for reading, b in best.items():
                    c = cells.setdefault((task, heads, layer + 1, reading),
                                         {"shares": [], "ties": [], "wins": []})
                    share, ties = win_share(comb[layer], b, tie)
                    c["ties"].append(ties)
                    if share is not None:
                        c["shares"].append(share)
                    c["wins"].append(verdict(float(comb[layer].mean()), float(b.mean())) > 0)
    rows = []
    for (task, heads, layer, reading), c in sorted(cells.items()):
        row: dict[str, Any] = {"task": task, "heads": heads, "layer": layer,
                               "reading": reading, "seeds": len(c["wins"]),
                               "wins": int(sum(c["wins"])), "ties": float(np.mean(c["ties"])),
                               "decided_seeds": len(c["shares"])}
        if c["shares"]:
            iv = share_interval(c["shares"], level)
            row.update(share=iv.mean, low=iv.low, high=iv.high)
            outcome = effect_outcome(seed_interval(np.asarray(c["shares"]) - 0.5, level), +1)
            # every seed exactly at one half: decided sequences, balanced
            row["outcome"] = Outcome.NOT_RESOLVED if outcome is Outcome.NO_CHANGE else outcome
        else:
            row.update(share=None, low=None, high=None, outcome=Outcome.NO_CHANGE)
        rows.append(row)
    return rows


def amplification_claims(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts on Tables 5-6 over seeds, per task and reading of :data:`READINGS`
    (rows of :func:`amplification_per_sequence`), by the book's one rule
    (:func:`~bparallel.book.section4.statistics.claim_over_units`):

    - ``"occurs"``, the paper's claim ("instances across both tasks and various head
      counts where the combined ... exceeded the best individual"): the units are head
      counts; one holds when some cell of it wins more sequences than it loses beyond the
      seeds (outcome as claimed), goes against the claim when every cell of it that does
      not tie throughout goes against it;
    - ``"every_seed"``, the stricter reading: the units are the cells that do not tie
      throughout; one holds when the combination wins in every seed (on the means, at the
      published two decimals), goes against the claim only when its win share lies below
      one half beyond the seeds (no seed winning is no reversal: 0 of 5 is compatible
      with a win rate near one half).

    Each row: ``claim``, ``task``, ``reading``, ``units``, ``holds``, ``against``,
    ``verdict`` and ``condition`` (the verdict cell's: "in 2 of 3 head counts")."""
    out = []
    for task in sorted({r["task"] for r in rows}):
        for reading in READINGS:
            mine = [r for r in rows if r["task"] == task and r["reading"] == reading]
            if not mine:
                continue
            counts = sorted({r["heads"] for r in mine})
            decided = {h: [r for r in mine if r["heads"] == h and r["outcome"] is not
                           Outcome.NO_CHANGE] for h in counts}
            held = sum(any(r["outcome"] is Outcome.AS_CLAIMED for r in decided[h])
                       for h in counts)
            against = sum(bool(decided[h]) and all(r["outcome"] is Outcome.AGAINST
                                                   for r in decided[h]) for h in counts)
            cells = [r for h in counts for r in decided[h]]
            every = sum(r["wins"] == r["seeds"] for r in cells)
            reversed_ = sum(r["outcome"] is Outcome.AGAINST for r in cells)
            n = min(r["seeds"] for r in mine)
            for claim, holds, against_, units, unit in (
                    ("occurs", held, against, len(counts), "head counts"),
                    ("every_seed", every, reversed_, len(cells), "cells")):
                verdict = _claim_verdict(n, holds, against_, units)
                out.append({"claim": claim, "task": task, "reading": reading, "seeds": n,
                            "units": units, "holds": holds, "against": against_,
                            "verdict": verdict,
                            "condition": _condition(verdict, holds, units, unit)})
    return out


def surviving_claims(effects: Sequence[Mapping[str, Any]],
                     amplification: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Which Section 4 claims survive seeds, per task: counts behind each verdict.

    For "more heads mix faster" and "more heads keep more fidelity" (rows of
    :func:`head_count_effects`): in how many layers (``units``) the change ``holds``
    (survives the seeds *and* Holm's correction over the table's tests, the chapter's one
    multiple-testing rule; ``holds_uncorrected`` counts those whose own interval survives,
    shown beside it, labelled), goes ``against`` the claim (reversed) or is ``undecided``. For "the
    combination beats its best head" (rows of :func:`amplification_per_sequence`, the best
    head per sequence as Tables 5-6 read it): :func:`amplification_claims`' stricter claim,
    in how many (heads, layer) cells that do not tie throughout it wins in every seed
    (``holds``), loses more sequences than it wins beyond the seeds (``against``), or
    neither (``undecided``). ``verdict`` (:class:`~bparallel.book.verdicts.Verdict`) and its
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
    for c in amplification_claims(amplification):
        if (c["claim"], c["reading"]) != ("every_seed", "per_sequence"):
            continue
        out.append({"claim": "the combination beats its best head (Tables 5-6)",
                    "task": c["task"], "seeds": c["seeds"], "units": c["units"],
                    "holds": c["holds"], "against": c["against"],
                    "undecided": c["units"] - c["holds"] - c["against"],
                    "verdict": c["verdict"], "condition": c["condition"]})
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


def odd_seed_out(rows: Sequence[Mapping[str, Any]], seed: int, tie: float = TIE
                 ) -> list[dict[str, Any]]:
    """Does one seed (e.g. the only one trained on another machine) stand apart from the
    others? Per row of :func:`changes_by_seed`: that seed's ``change``, the other seeds'
    ``low`` and ``high``, its ``position`` among them (``"below"``, ``"between"``,
    ``"above"``: outside their range by at least ``tie``, the published resolution
    (:data:`TIE`; a change of -1.8e-6 beside others from +1.6e-7 ties with them), or not)
    and whether every seed's change has the same sign (``same_sign``)."""
    out = []
    for r in rows:
        changes = r["changes"]
        if seed not in changes or len(changes) < 2:
            raise ValueError(f"seed {seed} needs at least one other seed to compare with in "
                             f"{r['quantity']}, {r['task']}, layer {r['layer']}")
        others = [v for s, v in changes.items() if s != seed]
        v = changes[seed]
        # within the tie's resolution of the others' range, it is not outside it
        position = ("below" if v <= min(others) - tie else "above" if v >= max(others) + tie
                    else "between")
        signs = {int(np.sign(x)) for x in changes.values()}
        out.append({"quantity": r["quantity"], "task": r["task"], "layer": r["layer"],
                    "change": v, "low": min(others), "high": max(others), "position": position,
                    "same_sign": len(signs) == 1})
    return out


def outside_tail(outside: int, cells: int, seeds: int) -> float:
    """How surprising is one seed outside the others' range in ``outside`` of ``cells``
    cells? With ``seeds`` exchangeable seeds (the machine makes no difference) a given seed
    is the lowest or the highest of a cell with probability ``2 / seeds``; this is the
    one-sided (upper) binomial tail ``Pr[X >= outside]`` for ``X ~ Bin(cells, 2 / seeds)``,
    cells taken as independent: the question is only whether it stands apart too often."""
    if seeds < 2 or not 0 <= outside <= cells:
        raise ValueError(f"need seeds >= 2 and 0 <= outside <= cells, got seeds={seeds}, "
                         f"outside={outside}, cells={cells}")
    return float(stats.binom.sf(outside - 1, cells, min(1.0, 2 / seeds)))


def smallest_outside(cells: int, seeds: int, alpha: float) -> int | None:
    """The smallest effect the machine check could find: the fewest of ``cells`` cells in
    which one seed lies outside the others' range whose :func:`outside_tail` reaches
    ``alpha`` (decided by :func:`bparallel.ranks.reaches`); ``None`` when not even every
    cell would."""
    positive_int(cells, "cells")
    for k in range(cells + 1):
        if ranks.reaches(alpha, outside_tail(k, cells, seeds)):
            return k
    return None
