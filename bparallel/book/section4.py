"""Chapter support for "Section 4 as defined": the measures of
:func:`bparallel.transformer.measure.defined_metrics` summarised per model and layer.

Rows are plain dicts keyed by snake_case names (:data:`LABELS` gives the display labels);
infinite mixing times stay ``inf`` here and read "∞" when shown
(:func:`~bparallel.book.render.markdown.fmt_steps`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import positive_int
from ..transformer.ablation import rank_correlation
from ..transformer.importance import RELIABLE
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
                "proxy_definition": float(m["mixing_time.definition"][layer].mean()),
                "proxy_paper": float(m["mixing_time.paper"][layer].mean()),
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


def knockout_rows(studies: Mapping[tuple[str, int], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per model of :func:`bparallel.transformer.importance.importance_study`
    results: accuracy and mean logit margin on the predictable positions, intact
    (``none``), with every layer's attention removed (``all``), without layer ``l``'s
    (``L<l>``) and with only layer ``l``'s (``only_L<l>``), flattened to
    ``"<knockout>.accuracy"`` / ``"<knockout>.margin"``."""
    rows = []
    for (task, heads), st in sorted(studies.items()):
        row: dict[str, Any] = {"task": task, "heads": heads}
        for name, values in st["knockout"].items():
            row[f"{name}.accuracy"] = float(values["accuracy"])
            row[f"{name}.margin"] = float(values["margin"])
        rows.append(row)
    return rows


def uses_attention(row: Mapping[str, Any], tolerance: float = 0.01) -> bool:
    """Does the model of a :func:`knockout_rows` row need attention at all: does removing
    every layer's attention lower its accuracy by more than ``tolerance``?"""
    return row["none.accuracy"] - row["all.accuracy"] > tolerance


def reliability_rows(studies: Mapping[tuple[str, int], Mapping[str, Any]],
                     threshold: float = RELIABLE) -> list[dict[str, Any]]:
    """One row per per-head measure: the split-half reliability over the multi-head
    (model, layer) cells (median, and the share of cells at or above ``threshold``) and the
    largest mean effect of removing one head. Measures: ``"<removal>.<measure>"`` and
    ``"gradient"`` (:func:`bparallel.transformer.importance.importance_study`)."""
    multi = {k: st for k, st in studies.items() if k[1] > 1}
    if not multi:
        raise ValueError("studies: no multi-head model, so no ranking of heads to assess")
    measures = list(next(iter(multi.values()))["reliability"])
    rows = []
    for measure in measures:
        rho = np.concatenate([np.asarray(st["reliability"][measure], float)
                              for st in multi.values()])
        scores = np.concatenate([np.asarray(st["scores"][measure], float).ravel()
                                 for st in multi.values()])
        finite = rho[np.isfinite(rho)]
        rows.append({"measure": measure,
                     "median_rho": float(np.median(finite)) if finite.size else math.nan,
                     "reliable_share": float((finite >= threshold).mean()) if finite.size
                     else 0.0,
                     "undefined": int(np.isnan(rho).sum()), "cells": int(rho.size),
                     "max_effect": float(np.nanmax(np.abs(scores)))})
    return rows


def ranking_rows(studies: Mapping[tuple[str, int], Mapping[str, Any]], *,
                 impact: str = "mean.margin", threshold: float = RELIABLE
                 ) -> list[dict[str, Any]]:
    """One row per multi-head (model, layer): the split-half reliability of the ``impact``
    (the margin drop when a head alone is removed), whether it reaches ``threshold``, the
    largest impact, and the rank correlation with it of each ranking (head weight ``w_h``,
    gradient importance, per-head minimax fidelity in both modes). A correlation with an
    impact below the noise floor is ``None``: there is nothing stable to correlate with."""
    removal = impact.split(".")[0]
    rows = []
    for (task, heads), st in sorted(studies.items()):
        if heads < 2:
            continue
        rel = np.asarray(st["reliability"][impact], float)
        for layer in range(rel.shape[0]):
            ok = bool(np.isfinite(rel[layer]) and rel[layer] >= threshold)
            row: dict[str, Any] = {"task": task, "heads": heads, "layer": layer + 1,
                                   "reliability": float(rel[layer]), "reliable": ok,
                                   "max_impact": float(np.max(st["scores"][impact][layer]))}
            for ranking in RANKINGS:
                rho = st["spearman"].get(f"{ranking}~{removal}")
                value = None if rho is None else float(np.asarray(rho)[layer])
                row[ranking] = value if ok and value is not None and math.isfinite(value) \
                    else None
            rows.append(row)
    return rows


#: The rankings of heads compared with the ablation impact, and their display names.
RANKINGS = {"weight": "w_h", "gradient": "gradient", "fidelity.definition": "φ, definition",
            "fidelity.paper": "φ, published code"}


def synergy_rows(studies: Mapping[tuple[str, int], Mapping[str, Any]],
                 threshold: float = RELIABLE) -> list[dict[str, Any]]:
    """One row per multi-head model: the pair synergy on the margin of its pair layer
    (:func:`bparallel.transformer.importance.pair_synergy`): mean over pairs and sequences
    with a 95% t-interval over sequences, the share of pairs with a positive mean, the
    split-half reliability across pairs, and whether it reaches ``threshold``."""
    from ..transformer.importance import mean_interval

    rows = []
    for (task, heads), st in sorted(studies.items()):
        if "pair" not in st:
            continue
        syn = np.asarray(st["pair"]["synergy"], float)  # (P, N)
        mean, half = mean_interval(syn.mean(0))  # over sequences of the mean over pairs
        rho = float(st["pair"]["split_half_rho"])
        rows.append({"task": task, "heads": heads, "layer": int(st["pair"]["layer"]) + 1,
                     "mean": float(mean), "half_width": float(half),
                     "share_positive": float((syn.mean(1) > 0).mean()),
                     "reliability": rho, "reliable": bool(math.isfinite(rho) and rho >= threshold)})
    return rows


def layer_rows(knockouts: Sequence[Mapping[str, Any]],
               defined: Sequence[Mapping[str, Any]],
               fidelity: Mapping[tuple[str, int], np.ndarray]) -> list[dict[str, Any]]:
    """One row per model: does a layer the task depends on look like a good graph?

    ``knockouts``: :func:`knockout_rows`; ``defined``: :func:`definition_rows` (Definition
    2.7's median mixing time per layer); ``fidelity``: per model the layer means ``(L,)``
    of the combined heads' minimax fidelity (Tables 3-4's quantity). The damage of layer
    ``l`` is the margin drop when its attention alone is removed; the row holds the rank
    correlation across layers of the damage with the fidelity and with minus the mixing
    time (positive: the layers that matter are the high-fidelity, fast-mixing ones), and
    the layer whose removal hurts most."""
    t_mix = {(r["task"], r["heads"], r["layer"]): r["t_mix_median"] for r in defined}
    rows = []
    for ko in knockouts:
        key = (ko["task"], ko["heads"])
        layers = sorted(int(k[1:].split(".")[0]) for k in ko
                        if k.startswith("L") and k.endswith(".margin"))
        damage = np.array([ko["none.margin"] - ko[f"L{la}.margin"] for la in layers])
        fid = np.asarray(fidelity[key], float)
        speed = -np.array([t_mix[(*key, la)] for la in layers], float)
        rows.append({"task": key[0], "heads": key[1],
                     "most_needed_layer": int(layers[int(np.argmax(damage))]),
                     "rho_fidelity": _rho(damage, fid), "rho_mixing": _rho(damage, speed)})
    return rows


def _rho(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rho of two short vectors; ``None`` when one is constant."""
    a, b = np.nan_to_num(a, posinf=1e300, neginf=-1e300), np.nan_to_num(b, posinf=1e300,
                                                                       neginf=-1e300)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(rank_correlation(a, b))


def pruning_area(curve: np.ndarray) -> float:
    """Mean of a pruning curve over the numbers of heads kept (higher: the order removes the
    heads that matter last). ``curve`` ``(..., H + 1)``; extra leading axes are averaged."""
    return float(np.asarray(curve, dtype=float).mean())


def threshold_verdict(value: float, holds: float, conditions: float) -> Verdict:
    """:attr:`~Verdict.HOLDS` when ``value >= holds``, :attr:`~Verdict.HOLDS_WITH_CONDITIONS`
    when ``value >= conditions``, else :attr:`~Verdict.NOT_SUPPORTED`: the fixed rule behind
    the chapter's verdict table (a table cell shows it as a verdict badge)."""
    if not conditions <= holds:
        raise ValueError(f"conditions={conditions!r} must not exceed holds={holds!r}")
    if value >= holds:
        return Verdict.HOLDS
    return Verdict.HOLDS_WITH_CONDITIONS if value >= conditions else Verdict.NOT_SUPPORTED


def proxy_order_rho(rows: Sequence[Mapping[str, Any]]) -> float:
    """Does Algorithm 1 order the (model, layer) cells as Definition 2.7 does? Spearman's
    rho between the median mixing time and definition mode's proxy over the cells of
    :func:`definition_rows` whose median is finite."""
    finite = [(r["t_mix_median"], r["proxy_definition"]) for r in rows
              if math.isfinite(r["t_mix_median"])]
    if len(finite) < 2:
        raise ValueError(f"rows has {len(finite)} cells with a finite median mixing time: "
                         "need at least 2 for a rank correlation")
    x, y = (np.array(v, dtype=np.float64) for v in zip(*finite, strict=True))
    return float(rank_correlation(x, y))


#: Rank agreement (the median of Spearman's rho over cells) at which a "this measure ranks
#: what matters" claim holds, and at which it holds with conditions; below, not supported.
RHO_HOLDS, RHO_CONDITIONS = 0.5, 0.2


def rho_verdict(rhos: Sequence[float], cells_needed: int = 1) -> Verdict:
    """The verdict of a rank-agreement claim from its per-cell correlations: by their median
    against :data:`RHO_HOLDS` and :data:`RHO_CONDITIONS`; not testable with fewer than
    ``cells_needed`` cells (chapters 10 and 12)."""
    if len(rhos) < positive_int(cells_needed, "cells_needed"):
        return Verdict.NOT_TESTABLE
    return threshold_verdict(float(np.median(rhos)), RHO_HOLDS, RHO_CONDITIONS)


def claim_verdicts(rows: Sequence[Mapping[str, Any]], heads: Sequence[Mapping[str, Any]],
                   knockouts: Sequence[Mapping[str, Any]], layers: Sequence[Mapping[str, Any]],
                   head_rhos: Sequence[float]) -> list[dict[str, Any]]:
    """The chapter's verdict table: one row per Section 4 claim measured as defined, with
    its :class:`Verdict` by a fixed threshold on its key number, the key number and where
    the evidence is.

    ``rows``: :func:`definition_rows`; ``heads``: :func:`heads_verdicts`; ``knockouts``:
    :func:`knockout_rows`; ``layers``: :func:`layer_rows` of the models that need attention
    (:func:`uses_attention`); ``head_rhos``: per reliable (model, layer) cell, the rank
    correlation of per-head fidelity with the head impact.
    """
    faster = sum(v["faster"] for v in heads)
    order_rho = proxy_order_rho(rows)
    rho_roll = float(np.median([r["rollout_fidelity_rho"] for r in rows]))
    rho_layers = [r["rho_fidelity"] for r in layers if r["rho_fidelity"] is not None]
    copy = [r for r in knockouts if r["task"] == "copy"]
    copy_free = [r for r in copy if not uses_attention(r)]
    verdict = "verdict under the definition"
    return [
        {"claim (Section 4)": "More heads mix faster (Tables 1-2)",
         verdict: threshold_verdict(faster / len(heads), 1.0, 0.5),
         "key number": f"16 heads faster in {faster} of {len(heads)} (task, layer) cells",
         "evidence": "{numref}`tbl-heads-verdicts`"},
        {"claim (Section 4)": "Algorithm 1 stands in for Definition 2.7",
         verdict: threshold_verdict(order_rho, 2.0, 0.7),
         "key number": f"same order (Spearman {order_rho:.2f} over (model, layer) cells, "
                       "results key verdict.order_rho); up to "
                       f"{max(r['starts_beyond_cutoff'] for r in rows):.0%} of starts beyond M",
         "evidence": "{numref}`tbl-definition-vs-proxy`"},
        {"claim (Section 4)": "Fidelity says which positions reach the last one",
         verdict: threshold_verdict(rho_roll, 0.7, 0.3),
         "key number": f"median Spearman {rho_roll:.2f} with attention rollout",
         "evidence": "{numref}`tbl-rollout-fidelity`"},
        {"claim (Section 4)": "The tasks exercise the attention graph",
         verdict: Verdict.FAILS if copy_free else Verdict.HOLDS,
         "key number": f"copy: {len(copy_free)} of {len(copy)} models keep ≥ "
                       f"{min(r['all.accuracy'] for r in copy):.0%} accuracy with no attention",
         "evidence": "{numref}`tbl-knockouts`"},
        {"claim (Section 4)": "Per-head fidelity says which heads matter (pruning)",
         verdict: rho_verdict(head_rhos, cells_needed=3),
         "key number": (f"median Spearman {np.median(head_rhos):.2f} with the head impact, in "
                        f"{len(head_rhos)} reliable (model, layer) cells" if head_rhos else
                        "no layer with a reliable head impact"),
         "evidence": "{numref}`tbl-ablation`"},
        {"claim (Section 4)": "The layers a task needs are the good graphs",
         verdict: rho_verdict(rho_layers, cells_needed=3),
         "key number": (f"median Spearman {np.median(rho_layers):.2f} over {len(rho_layers)} "
                        "models that need attention" if rho_layers else "no model to test"),
         "evidence": "{numref}`tbl-layers`"},
    ]
