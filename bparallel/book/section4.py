"""Chapter support for "Section 4 as defined": the measures of
:func:`bparallel.transformer.measure.defined_metrics` summarised per model and layer.

Rows are plain dicts keyed by snake_case names (:data:`LABELS` gives the display labels);
infinite mixing times stay ``inf`` here and read "∞" when shown (:func:`fmt_steps`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..transformer.ablation import rank_correlation
from .verdicts import Verdict

#: Display labels of the columns of :func:`definition_rows`.
LABELS = {
    "task": "task", "heads": "heads", "layer": "layer",
    "t_mix_median": "Def. 2.7 T_mix (median)",
    "t_mix_p90": "Def. 2.7 T_mix (90th pct.)",
    "never_mixes": "never mixes",
    "proxy_definition": "Alg. 1, definition mode",
    "proxy_paper": "Alg. 1, published-code mode",
    "starts_beyond_cutoff": "starts with E[τ] > M",
    "worst_start": "worst start (mode)",
    "rollout_fidelity_rho": "ρ(rollout, fidelity)",
    "lost_same": "same lost position",
}


def fmt_steps(value: float) -> str:
    """A number of steps for a table: ``inf`` reads "∞", large values in scientific form."""
    if math.isinf(value):
        return "∞"
    return f"{value:.3g}" if value >= 1e4 else f"{value:.1f}".removesuffix(".0")


def definition_rows(
    metrics: Mapping[tuple[str, int], Mapping[str, np.ndarray]], *, max_steps: int = 100
) -> list[dict[str, Any]]:
    """One row per (task, heads, layer) from per-model :func:`defined_metrics` results.

    ``t_mix_*``: Definition 2.7 over the sequences (definition mode's walk); ``never_mixes``:
    share of sequences where some start never reaches the sink; ``proxy_*``: Algorithm 1's
    mean; ``starts_beyond_cutoff``: share of (sequence, start) whose exact expected hitting
    time exceeds the cutoff ``max_steps``; ``worst_start``: the most frequent start position
    of the largest exact hitting time; ``rollout_fidelity_rho``: mean over sequences of the
    rank correlation across non-sink positions of the sink's rollout row (heads weighted)
    and the node fidelity; ``lost_same``: share of sequences where both name the same
    position as the least-reaching ("lost") one.
    """
    rows = []
    for (task, heads), m in sorted(metrics.items()):
        wc = m["worst_case.definition"]  # (L, N)
        for layer in range(wc.shape[0]):
            exact = m["hitting.exact"][layer]  # (N, T)
            worst = np.argmax(np.where(np.isnan(exact), -np.inf, exact), axis=-1)  # (N,)
            roll = m["rollout.weighted"][layer][:, :-1]  # (N, T-1): non-sink positions
            fid = m["fidelity.node"][layer][:, :-1]
            rows.append({
                "task": task, "heads": heads, "layer": layer + 1,
                "t_mix_median": float(np.median(wc[layer])),
                "t_mix_p90": float(np.quantile(wc[layer], 0.9, method="higher")),
                "never_mixes": float(np.isinf(wc[layer]).mean()),
                "proxy_definition": float(m["proxy.definition"][layer].mean()),
                "proxy_paper": float(m["proxy.paper"][layer].mean()),
                "starts_beyond_cutoff": float((exact[:, :-1] > max_steps).mean()),
                "worst_start": int(np.bincount(worst).argmax()),
                # a constant row has no rank order to agree with: it counts as 0, not NaN
                "rollout_fidelity_rho": float(np.nan_to_num(rank_correlation(roll, fid)).mean()),
                "lost_same": float((roll.argmin(-1) == fid.argmin(-1)).mean()),
            })
    return rows


def heads_verdicts(rows: Sequence[Mapping[str, Any]], key: str = "t_mix_median",
                   lo: int = 1, hi: int = 16) -> list[dict[str, Any]]:
    """Per (task, layer): does ``key`` fall from ``lo`` heads to ``hi`` heads ("more heads
    mix faster"), and is it non-increasing over every head count in between?"""
    by = {(r["task"], r["layer"], r["heads"]): r[key] for r in rows}
    out = []
    for task, layer in sorted({(r["task"], r["layer"]) for r in rows}):
        hs = sorted(h for (t, la, h) in by if t == task and la == layer)
        if lo not in hs or hi not in hs:
            continue
        values = [by[(task, layer, h)] for h in hs]
        out.append({"task": task, "layer": layer, "lo": by[(task, layer, lo)],
                    "hi": by[(task, layer, hi)],
                    "faster": bool(by[(task, layer, hi)] < by[(task, layer, lo)]),
                    "monotone": bool(np.all(np.diff(values) <= 0))})
    return out


def amplifying_layer(metrics: Mapping[str, np.ndarray], mode: str = "definition") -> int:
    """The layer (0-based) where the weighted combination beats its best single head by the
    most, on average over sequences (Tables 5-6's quantity; ``metrics`` from
    :func:`bparallel.transformer.measure.sequence_metrics`)."""
    gap = metrics[f"best_head.combined.{mode}"] - metrics[f"best_head.individual.{mode}"]
    return int(np.argmax(gap.mean(-1)))


def ablation_rows(studies: Mapping[tuple[str, int], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (task, heads, layer) of :func:`bparallel.transformer.ablation.ablation_study`
    results: the rank correlation of each score (head weight, per-head fidelity in both
    modes) with the ablation impact, whether the best head ``h_*`` (Definition 3.12, by
    fidelity) is the head whose removal hurts most, and the largest single-head impact
    (change of the held-out loss on predictable positions)."""
    rows = []
    for (task, heads), st in sorted(studies.items()):
        impact = st["scores"]["impact"]  # (L, H)
        top = st["top_head"]
        for layer in range(impact.shape[0]):
            row: dict[str, Any] = {"task": task, "heads": heads, "layer": layer + 1}
            for score in ("weight", "fidelity.definition", "fidelity.paper"):
                rho = st["spearman"][score][layer]
                row[f"rho_{score.replace('.', '_')}"] = None if np.isnan(rho) else float(rho)
            for mode in ("definition", "paper"):
                h_star = top[f"fidelity.{mode}"][layer]
                row[f"h_star_hurts_most_{mode}"] = (
                    None if h_star < 0 or top["impact"][layer] < 0
                    else bool(h_star == top["impact"][layer]))
            row["max_impact"] = float(impact[layer].max())
            rows.append(row)
    return rows


def pruning_area(curve: np.ndarray) -> float:
    """Mean of a pruning curve over the numbers of heads kept (higher: the order removes the
    heads that matter last). ``curve`` ``(..., H + 1)``; extra leading axes are averaged."""
    return float(np.asarray(curve, dtype=float).mean())


def synergy_summary(pair: Mapping[str, Any], metric: str = "loss_predictable") -> dict[str, float]:
    """Pair synergies of one layer (:func:`bparallel.transformer.ablation.pair_ablation`):
    the mean, the largest, and the share of pairs whose removal hurts more than the two single
    removals add up to (synergy > 0 for a loss)."""
    syn = np.asarray(pair["synergy"][metric], dtype=float)
    off = syn[~np.eye(syn.shape[0], dtype=bool)]
    return {"mean": float(off.mean()), "max": float(off.max()),
            "share_positive": float((off > 0).mean())}


def threshold_verdict(value: float, holds: float, conditions: float) -> Verdict:
    """:attr:`~Verdict.HOLDS` when ``value >= holds``, :attr:`~Verdict.HOLDS_WITH_CONDITIONS`
    when ``value >= conditions``, else :attr:`~Verdict.NOT_SUPPORTED`: the fixed rule behind
    the chapter's verdict table (a table cell shows it as a verdict badge)."""
    if not conditions <= holds:
        raise ValueError(f"conditions={conditions!r} must not exceed holds={holds!r}")
    if value >= holds:
        return Verdict.HOLDS
    return Verdict.HOLDS_WITH_CONDITIONS if value >= conditions else Verdict.NOT_SUPPORTED
