"""Chapter 10, "Section 4 as defined": the measures of
:func:`bparallel.transformer.measure.defined_metrics` summarised per model and layer.

Rows are plain dicts keyed by snake_case names (:data:`LABELS` gives the display labels);
infinite mixing times stay ``inf`` here and read "∞" when shown
(:func:`~bparallel.book.words.fmt_steps`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ...transformer.ablation import rank_correlation
from ...transformer.importance import ALPHA, RELIABLE, ImportanceStudy, mean_interval
from ...transformer.measure import HeadStudy
from ..verdicts import HOLDING, Verdict
from .rank_tests import smallest_rho, two_sided_rank_test
from .statistics import (
    claim_over_units,
    holm_family,
    noise_floor,
    rank_claim_verdict,
    scored_cells,
)

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
    gap = metrics[f"fidelity.{mode}"] - metrics[f"best_head.individual.{mode}"]
    return int(np.argmax(gap.mean(-1)))


def knockout_rows(studies: Mapping[tuple[str, int], ImportanceStudy]) -> list[dict[str, Any]]:
    """One row per model of :func:`bparallel.transformer.importance.importance_study`
    results: accuracy and mean logit margin on the predictable positions, intact
    (``none``), with every layer's attention removed (``all``), without layer ``l``'s
    (``L<l>``) and with only layer ``l``'s (``only_L<l>``), flattened to
    ``"<knockout>.accuracy"`` / ``"<knockout>.margin"``."""
    rows = []
    for (task, heads), st in sorted(studies.items()):
        row: dict[str, Any] = {"task": task, "heads": heads}
        for name, values in st.knockout.items():
            row[f"{name}.accuracy"] = float(values["accuracy"])
            row[f"{name}.margin"] = float(values["margin"])
        rows.append(row)
    return rows


def uses_attention(row: Mapping[str, Any], tolerance: float = 0.01) -> bool:
    """Does the model of a :func:`knockout_rows` row need attention at all: does removing
    every layer's attention lower its accuracy by more than ``tolerance``?"""
    return not ranks.reaches(tolerance, row["none.accuracy"] - row["all.accuracy"])


def attention_carries_margin(row: Mapping[str, Any], impact: float | None = None) -> bool:
    """Does removing every layer's attention lower the mean logit margin of a
    :func:`knockout_rows` row by at least ``impact`` logits (default :data:`IMPACT_MIN`, a
    practical impact stated before the test)? Attention that the accuracy does not need
    (:func:`uses_attention` false) but the margin does is redundant, not unused."""
    impact = IMPACT_MIN if impact is None else impact
    return ranks.reaches(row["none.margin"] - row["all.margin"], impact)


def reliability_rows(studies: Mapping[tuple[str, int], ImportanceStudy],
                     threshold: float = RELIABLE) -> list[dict[str, Any]]:
    """One row per per-head measure: its :func:`noise_floor` over the multi-head
    (model, layer) cells (the median reliability, and the share of cells that are
    reliable) and the largest mean effect of removing one head. Measures:
    ``"<removal>.<measure>"`` and ``"gradient"``
    (:func:`bparallel.transformer.importance.importance_study`)."""
    multi = {k: st for k, st in studies.items() if k[1] > 1}
    if not multi:
        raise ValueError("studies: no multi-head model, so no ranking of heads to assess")
    measures = list(next(iter(multi.values())).effect)
    rows = []
    for measure in measures:
        floor = noise_floor({k: st.effect[measure] for k, st in multi.items()},
                            threshold=threshold)
        rho = np.array([r["reliability"] for r in floor])
        scores = np.concatenate([np.asarray(st.scores[measure], float).ravel()
                                 for st in multi.values()])
        finite = rho[np.isfinite(rho)]
        rows.append({"measure": measure,
                     "median_rho": ranks.median(finite) if finite.size else math.nan,
                     "reliable_share": float(np.mean([r["reliable"] for r in floor])),
                     "undefined": int(np.isnan(rho).sum()), "cells": int(rho.size),
                     "max_effect": float(np.nanmax(np.abs(scores)))})
    return rows


def ranking_rows(studies: Mapping[tuple[str, int], ImportanceStudy], *,
                 impact: str = "mean.margin", threshold: float = RELIABLE
                 ) -> list[dict[str, Any]]:
    """One row per multi-head (model, layer): the :func:`noise_floor` of the ``impact``
    (the margin drop when a head alone is removed: its reliability, Holm-corrected
    permutation p-value, whether it is ``reliable``), the largest impact, and the rank
    correlation with it of each ranking (head weight ``w_h``, gradient importance, per-head
    minimax fidelity in both modes). A correlation with an impact below the noise floor is
    ``None``: there is nothing stable to correlate with. ``material``: the largest impact
    reaches :data:`IMPACT_MIN` logits; ``capped``: the fidelity rankings whose every head
    lies below :data:`SINK_CAP` (:func:`capped_at_sink`). ``scores`` keeps the layer's
    per-head values of the impact and of each ranking, for
    :func:`~bparallel.book.section4.statistics.head_claims`."""
    removal = impact.split(".")[0]
    multi = {k: st for k, st in sorted(studies.items()) if k[1] > 1}
    floor = noise_floor({k: st.effect[impact] for k, st in multi.items()},
                        threshold=threshold)
    rows = []
    for cell in floor:
        st = multi[(cell["task"], cell["heads"])]
        layer = cell["layer"] - 1
        ok = cell["reliable"]
        row: dict[str, Any] = {**cell, "max_impact": float(np.max(st.scores[impact][layer]))}
        row["material"] = bool(ranks.reaches(row["max_impact"], IMPACT_MIN))
        row["scores"] = {"impact": np.asarray(st.scores[impact][layer], float)}
        row["capped"] = []
        for ranking in RANKINGS:
            if ranking in st.scores:
                row["scores"][ranking] = np.asarray(st.scores[ranking][layer], float)
                if ranking.startswith("fidelity.") and capped_at_sink(row["scores"][ranking]):
                    row["capped"].append(ranking)
            rho = st.spearman.get(f"{ranking}~{removal}")
            value = None if rho is None else float(np.asarray(rho)[layer])
            row[ranking] = value if ok and value is not None and math.isfinite(value) \
                else None
        rows.append(row)
    return rows


#: The per-head minimax fidelity, in percent, below which every head of a cell lies when
#: the sink caps it: the published code's minimum runs over every node, the sink included,
#: and the sink's self-attention keeps its own signal below every other's (the book's
#: reading of Definition 3.5 takes the minimum over the non-sink nodes). Such a cell's
#: heads differ only in the sink's rounding: they are marked, not ranked.
SINK_CAP = 1e-3


def capped_at_sink(fidelity: np.ndarray, cap: float = SINK_CAP) -> bool:
    """Is every head's minimax fidelity of a cell (``fidelity`` ``(H,)``, percent) below
    ``cap`` (:data:`SINK_CAP`), i.e. capped at the sink, so that ranking its heads ranks
    rounding?"""
    f = np.asarray(fidelity, float)
    if f.ndim != 1 or f.size == 0:
        raise ValueError(f"fidelity has shape {f.shape}: expected one value per head")
    return bool(np.all(f < cap))


def tested_cells(ranking: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The cells of :func:`ranking_rows` that a per-head ranking is tested on, as
    :func:`~bparallel.book.section4.statistics.head_claims` takes them: ``reliable`` now
    also asks that the cell's heads matter in practice (``material``: its largest head
    impact at least :data:`IMPACT_MIN` logits, a threshold stated before the test), and a
    ranking's scores are dropped where the cell is capped at the sink for it (``capped``,
    :func:`capped_at_sink`): marked, not ranked."""
    out = []
    for r in ranking:
        scores = {k: v for k, v in r["scores"].items() if k not in r.get("capped", ())}
        out.append({**r, "scores": scores, "reliable": bool(r["reliable"] and r["material"])})
    return out


def seed_ranking_rows(studies: Mapping[tuple[str, int, int], HeadStudy]
                      ) -> list[dict[str, Any]]:
    """The per-head cells of the other seeds' models (``studies``:
    :func:`~bparallel.book.section4.as_defined_studies.seed_head_studies`, keyed
    ``(task, heads, seed)``), as :func:`ranking_rows` gives seed 42's: per (model, layer)
    the noise floor of the head impact
    (:func:`~bparallel.book.section4.statistics.scored_cells`: Holm over these cells), the
    ``seed``, the largest impact, ``material`` and ``capped`` (:func:`capped_at_sink`),
    and ``scores`` for :func:`tested_cells`. A 1-head model (its knockouts are for
    :func:`seed_layer_rows`) has no heads to rank and is left out."""
    data = {k: {"impact": np.asarray(st.impact, float),
                "fidelity.paper": np.asarray(st.head_fidelity["paper"], float),
                "fidelity.definition": np.asarray(st.head_fidelity["definition"], float)}
            for k, st in studies.items() if k[1] > 1}
    rows = scored_cells(data) if data else []
    for r in rows:
        r["seed"] = int(r["model"][2])
        r["max_impact"] = float(np.max(r["scores"]["impact"]))
        r["material"] = bool(ranks.reaches(r["max_impact"], IMPACT_MIN))
        r["capped"] = [k for k in ("fidelity.paper", "fidelity.definition")
                       if capped_at_sink(r["scores"][k])]
    return rows


def seeds_verdict(tests: Sequence[Mapping[str, Any]]) -> Verdict:
    """One verdict of a per-head claim of one task and mode over its seeds' tests (each
    with its ``verdict`` after the chapter's Holm correction), by the book's one rule
    (:func:`~bparallel.book.section4.statistics.claim_over_units`): a seed holds when its
    test holds (with or without conditions), goes against the claim when it fails; the
    seeds that cannot test it (*not testable*) are set aside; where every seed holds but
    some only with conditions, the claim holds with conditions."""
    vs = [Verdict.parse(t["verdict"]) for t in tests]
    testable = [v for v in vs if v is not Verdict.NOT_TESTABLE]
    verdict = claim_over_units(sum(v in HOLDING for v in testable),
                               sum(v is Verdict.FAILS for v in testable), len(testable))
    if verdict is Verdict.HOLDS and Verdict.HOLDS_WITH_CONDITIONS in testable:
        return Verdict.HOLDS_WITH_CONDITIONS  # never kinder than a seed's own verdict
    if verdict is Verdict.NOT_SUPPORTED and len(testable) == 1:
        return testable[0]
    return verdict


#: The rankings of heads compared with the ablation impact, and their display names.
RANKINGS = {"weight": "w_h", "gradient": "gradient", "fidelity.definition": "φ, definition",
            "fidelity.paper": "φ, published code"}


#: The two pair interactions of :func:`bparallel.transformer.importance.pair_synergy`.
PAIR_EFFECTS = ("redundancy", "complementarity")


def pair_rows(studies: Mapping[tuple[str, int], ImportanceStudy],
              threshold: float = RELIABLE) -> list[dict[str, Any]]:
    """One row per (multi-head model, pair interaction of :data:`PAIR_EFFECTS`) on the
    margin of the model's pair layer: the mean over pairs and sequences with a 95%
    t-interval over sequences, the share of pairs with a positive mean, and the noise floor
    of the pairs' ranking (:func:`noise_floor` across the pairs, Holm over every row of one
    interaction): ``reliable`` when the pairs differ reliably. Redundancy: removing both
    heads hurts more than the two single removals (the heads back each other up);
    complementarity: the pair alone does what neither head alone does."""
    rows = []
    for effect in PAIR_EFFECTS:
        models = {k: st for k, st in sorted(studies.items()) if st.pair is not None}
        per = {k: np.asarray(st.pair[effect], float)[None] for k, st in models.items()}
        floor = {(r["task"], r["heads"]): r for r in noise_floor(per, threshold=threshold)}
        for key, st in models.items():
            values = per[key][0]  # (P, N)
            mean, half = mean_interval(values.mean(0))  # over sequences of the mean over pairs
            cell = floor[key]
            rows.append({"task": key[0], "heads": key[1], "effect": effect,
                         "layer": int(st.pair["layer"]) + 1, "mean": float(mean),
                         "half_width": float(half),
                         "share_positive": float((values.mean(1) > 0).mean()),
                         "reliability": cell["reliability"], "p_holm": cell["p_holm"],
                         "reliable": cell["reliable"]})
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
    time (positive: the layers that matter are the high-fidelity, fast-mixing ones), the
    layer whose removal hurts most, and the three vectors (``damage``, ``fidelity``,
    ``speed``) for :func:`layer_claims`."""
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
                     "rho_fidelity": _rho(damage, fid), "rho_mixing": _rho(damage, speed),
                     "damage": damage, "fidelity": fid, "speed": speed})
    return rows


def layer_fidelity(metrics: Mapping[Any, Mapping[str, np.ndarray]]) -> dict[Any, np.ndarray]:
    """Per model, the layer means ``(L,)`` over sequences of the combined heads' minimax
    fidelity as defined (Algorithm 2 over the non-sink nodes; Tables 3-4's quantity), for
    :func:`layer_rows`."""
    return {key: np.nanmin(m["fidelity.node"][..., :-1], axis=-1).mean(-1)
            for key, m in metrics.items()}


def seed_layer_rows(defined: Mapping[tuple[str, int, int], Mapping[str, np.ndarray]],
                    studies: Mapping[tuple[str, int, int], HeadStudy], *,
                    max_steps: int = 100) -> list[dict[str, Any]]:
    """The per-layer rows of the other seeds' models, as :func:`layer_rows` gives seed 42's,
    each with its ``seed``: ``defined`` keyed ``(task, heads, seed)``
    (:func:`~bparallel.book.section4.as_defined_studies.seed_defined_measures`: Definition
    2.7 and the layers' fidelity) and ``studies`` with the same keys
    (:func:`~bparallel.book.section4.as_defined_studies.seed_head_studies` with its 1-head
    models: their layer knockouts). Each seed's models are measured on its own held-out
    sequences."""
    if set(defined) != set(studies):
        raise ValueError(f"defined and studies measure different models: "
                         f"{sorted(set(defined) ^ set(studies))} in only one of them")
    out = []
    for seed in sorted({k[2] for k in defined}):
        metrics = {k[:2]: m for k, m in defined.items() if k[2] == seed}
        knocked = knockout_rows({k[:2]: st for k, st in studies.items() if k[2] == seed})
        rows = layer_rows(knocked, definition_rows(metrics, max_steps=max_steps),
                          layer_fidelity(metrics))
        out.extend({**r, "seed": seed} for r in rows)
    return out


def layer_claims(layers: Sequence[Mapping[str, Any]], *, by: Sequence[str] = ("task",)
                 ) -> list[dict[str, Any]]:
    """Are the layers a task needs the good graphs? Per task (never pooled; or per value of
    the rows' keys ``by``, e.g. ``("task", "seed")``) and measure (``"fidelity"``,
    ``"speed"`` = minus Definition 2.7's mixing time), over the group's models of
    :func:`layer_rows`: the median across models of Spearman's rho across layers between
    the damage and the measure, its permutation test
    (:func:`bparallel.ranks.median_rho_test`) and the verdict (:func:`rank_claim_verdict`).
    Each test carries its keys ``by``."""
    if "task" not in by:
        raise ValueError(f"by={tuple(by)!r}: must include 'task' (tasks are never pooled)")

    def group(r: Mapping[str, Any]) -> tuple:
        return tuple(r[k] for k in by)

    out = []
    for g in sorted({group(r) for r in layers}):
        mine = [r for r in layers if group(r) == g]
        for measure in ("fidelity", "speed"):
            pairs = [(_finite(r[measure]), _finite(r["damage"])) for r in mine]
            test = two_sided_rank_test(pairs)
            out.append({**dict(zip(by, g, strict=True)), "measure": measure,
                        "models": len(mine), **test, "verdict": rank_claim_verdict(test)})
    return out


def chapter_family(head_tests: Sequence[Mapping[str, Any]],
                   layers: Sequence[Mapping[str, Any]]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Holm's correction over the chapter's rank tests, the per-head claim's
    (:func:`~bparallel.book.section4.statistics.head_claims`) and the layer claim's
    (:func:`layer_claims`) together, of every seed measured
    (:func:`~bparallel.book.section4.statistics.holm_family`): copies of both with
    ``p_holm``, the verdict at the corrected p-value and ``smallest``, the smallest median
    rho the test could find at the level of Holm's first step (``ALPHA / size``;
    :func:`~bparallel.book.section4.rank_tests.smallest_rho`; ``None``: even rho = 1 in
    every cell could not reach it), and the family's size."""
    family = [dict(t) for t in head_tests] + [dict(t) for t in layers]
    size = holm_family(family)
    first = ALPHA / size  # the level of Holm's first step: what a test must pass at least
    for t in family:
        t["verdict"] = rank_claim_verdict(t)
        t["smallest"] = smallest_rho(tuple(t["items"]), first) if t.get("items") else None
    return family[:len(head_tests)], family[len(head_tests):], size


def _finite(a: np.ndarray) -> np.ndarray:
    """Infinite values (a layer that never mixes) as the largest finite ones of their sign,
    so that they rank beyond every finite value."""
    return np.nan_to_num(np.asarray(a, float), posinf=1e300, neginf=-1e300)


def _rho(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rho of two short vectors; ``None`` when one is constant."""
    a, b = _finite(a), _finite(b)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(rank_correlation(a, b))


def pruning_area(curve: np.ndarray) -> float:
    """Mean of a pruning curve over the numbers of heads kept (higher: the order removes the
    heads that matter last). ``curve`` ``(..., H + 1)``; extra leading axes are averaged."""
    return float(np.asarray(curve, dtype=float).mean())


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


#: How a claim the paper does not make, the book's test of what the paper implies, is
#: labelled where it is written (the chapter's verdict table, the introduction, whose
#: glance lists it beyond the paper: :data:`bparallel.book.tools.findings.BOOK_TEST`).
BOOK_TEST = "Book's test: "
#: The claims of the chapter's verdict table: slug -> the claim as the table and the
#: introduction write it (one text per claim, so one verdict per claim in the whole book).
CLAIMS = {
    "mixing": "More heads mix faster (the paper's Tables 1-2, Definition 2.7)",
    "proxy": "Algorithm 1 stands in for Definition 2.7",
    "rollout": "Fidelity says which positions reach the last one",
    "uses_attention": BOOK_TEST + "the paper's Tables 1-6 measure attention that the tasks use",
    "heads": BOOK_TEST + "per-head fidelity says which heads matter (pruning)",
    "layers": BOOK_TEST + "the layers a task needs are the good graphs",
    "pairs": "Heads work as complementary pairs (Remark 3.7)",
}
#: The practical impact, in logits of the mean margin, at which removing attention counts
#: as used (stated before the test; chapter 10's per-head cells use it too).
IMPACT_MIN = 0.5
ALL_TASKS = "all"
#: The rollout claim's rule: the median over a task's (model, layer) cells of Spearman's rho
#: between the per-node fidelity and attention rollout at which it holds, and at which it
#: holds with conditions; below, not supported.
ROLLOUT_HOLDS, ROLLOUT_CONDITIONS = 0.7, 0.3
