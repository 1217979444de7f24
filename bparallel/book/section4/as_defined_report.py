"""What chapter 10 ("Section 4 as defined") shows and records (its measures of the models
are :mod:`~bparallel.book.section4.as_defined_studies`'s): for each of the rows of
:mod:`bparallel.book.section4.as_defined`, the table the chapter shows (``*_table``, with its
``*_FORMATS``) and the values it records (``*_results``, flat dicts under the keys of its
regression references).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ...transformer.design import DEFAULT_SEED
from ...transformer.importance import (
    ALPHA,
    PERMUTATIONS,
    RELIABLE,
    SPLITS,
    ImportanceStudy,
)
from ..verdicts import HOLDING, Verdict
from ..verdicts import cell as verdict_cell
from ..words import agree, fmt_p, fmt_sig, fmt_steps, join_words
from .as_defined import (
    IMPACT_MIN,
    LABELS,
    PAIR_EFFECTS,
    RANKINGS,
    ROLLOUT_CONDITIONS,
    ROLLOUT_HOLDS,
    SINK_CAP,
    pruning_area,
    uses_attention,
)
from .statistics import RHO_CONDITIONS, RHO_HOLDS, rank_condition

#: Columns of :func:`definition_rows` in the chapter's Definition 2.7 table, and their formats.
DEFINITION_SHOWN = ("task", "heads", "layer", "t_mix_median", "never_mixes", "proxy_definition",
                    "starts_beyond_cutoff", "worst_start")
DEFINITION_FORMATS = {LABELS["t_mix_median"]: fmt_steps, LABELS["t_mix_p90"]: fmt_steps,
                      LABELS["never_mixes"]: ".0%", LABELS["proxy_definition"]: ".1f",
                      LABELS["proxy_paper"]: ".1f", LABELS["starts_beyond_cutoff"]: ".0%"}


def definition_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`definition_rows` as the chapter shows them: the columns of
    :data:`DEFINITION_SHOWN` under their :data:`LABELS` (format with
    :data:`DEFINITION_FORMATS`)."""
    return [{LABELS[k]: r[k] for k in DEFINITION_SHOWN} for r in rows]


def definition_results(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The values the chapter records from :func:`definition_rows`: per (task, heads, layer)
    the proxies, the share of starts beyond the cutoff, the share of sequences that never
    mix, the rollout agreement and the median mixing time where finite
    (``<task>.h<H>.L<l>.<column>``); the single-head copy model's deep layers (2-4): their
    smallest median mixing time and largest proxy; the 16-head copy model's largest median;
    the largest share of starts beyond the cutoff; the share of cells whose worst start is
    position 0."""
    out: dict[str, float] = {}
    by = {(r["task"], r["heads"], r["layer"]): r for r in rows}
    for (task, h, layer), r in by.items():
        for k in ("proxy_definition", "proxy_paper", "starts_beyond_cutoff", "never_mixes",
                  "rollout_fidelity_rho", "lost_same"):
            out[f"{task}.h{h}.L{layer}.{k}"] = r[k]
        if np.isfinite(r["t_mix_median"]):
            out[f"{task}.h{h}.L{layer}.t_mix_median"] = r["t_mix_median"]
    deep = [by[("copy", 1, layer)] for layer in (2, 3, 4)]
    out["copy.h1.deep.t_mix_min"] = min(r["t_mix_median"] for r in deep)
    out["copy.h1.deep.proxy_max"] = max(r["proxy_definition"] for r in deep)
    out["copy.h16.t_mix_max"] = max(by[("copy", 16, layer)]["t_mix_median"]
                                    for layer in (1, 2, 3, 4))
    out["starts_beyond_cutoff.max"] = max(r["starts_beyond_cutoff"] for r in rows)
    out["worst_start_is_0.share"] = float(np.mean([r["worst_start"] == 0 for r in rows]))
    return out



def seeds_prose(bundle: Any, other_seeds: Sequence[int]) -> str:
    """Which seeds' models the chapter's per-head and per-layer tests measure, in words:
    ``bundle``'s seed alone, or it and ``other_seeds`` (those
    :func:`~.as_defined_studies.seed_head_studies` and
    :func:`~.as_defined_studies.seed_defined_measures` measured)."""
    own = sorted({int(m.get("seed", DEFAULT_SEED)) for m in bundle.metas.values()})
    others = sorted(set(other_seeds) - set(own))
    tables = "the tables of knockouts, pruning and pair interactions"
    if not others:
        return (f"The per-head and per-layer tests on this page measure the models of one "
                f"seed, {join_words([str(s) for s in own])}, the one the paper trains, as do "
                f"{tables}; with the paper profile's other shipped seeds a build repeats "
                "the tests on each (the chapter's parameter `other_seeds`).\n")
    return (f"The per-head and per-layer tests are repeated on every other shipped seed's "
            f"models (seeds {join_words([str(s) for s in others])}), each on its own "
            "held-out sequences, split as seed " + ", ".join(str(s) for s in own) + "'s: "
            "its Definition 2.7 measures and its layer knockouts, its cells' own noise "
            "floor and the same impact threshold; every test is in the chapter's Holm "
            "family, and a claim's verdict over the seeds follows the book's one rule: a "
            f"seed whose test is significantly reversed fails it. {tables[0].upper()}"
            f"{tables[1:]} show seed " + ", ".join(str(s) for s in own) + "'s models, the "
            "one the paper trains.\n")


# --------------------------------------------------------------------------- the chapter's tables
# (a bool reads "yes" / "no" and None "—" in a table cell: render.markdown.cell)

def _fmt_rho(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def heads_table(heads: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The rows of :func:`heads_verdicts` as the chapter shows them."""
    return [{"task": v["task"], "layer": v["layer"], "1 head": fmt_steps(v["lo"]),
             "16 heads": fmt_steps(v["hi"]), "16 heads faster": bool(v["faster"]),
             "falls with every added head": bool(v["monotone"])} for v in heads]


def heads_results(heads: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many (task, layer) cells of :func:`heads_verdicts` mix faster with 16 heads than
    with 1, how many fall with every added head, and how many there are."""
    return {"heads.faster.cells": sum(v["faster"] for v in heads),
            "heads.monotone.cells": sum(v["monotone"] for v in heads),
            "heads.cells": len(heads)}


#: Formats of :func:`rollout_table`.
ROLLOUT_FORMATS = {LABELS["rollout_fidelity_rho"]: ".2f", LABELS["lost_same"]: ".0%"}


def rollout_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (model, layer) of :func:`definition_rows`: the rank agreement of rollout with
    fidelity and whether both lose the same position (format with :data:`ROLLOUT_FORMATS`)."""
    return [{"task": r["task"], "heads": r["heads"], "layer": r["layer"],
             LABELS["rollout_fidelity_rho"]: r["rollout_fidelity_rho"],
             LABELS["lost_same"]: r["lost_same"]} for r in rows]


def rollout_results(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The median, smallest and largest rank agreement of rollout with fidelity over the
    (model, layer) cells, and the mean share where both lose the same position."""
    rho = np.array([r["rollout_fidelity_rho"] for r in rows])
    return {"rollout.rho.median": np.median(rho), "rollout.rho.min": rho.min(),
            "rollout.rho.max": rho.max(),
            "rollout.lost_same.mean": np.mean([r["lost_same"] for r in rows])}


def _knockout_cell(row: Mapping[str, Any], name: str) -> str:
    return f"{row[name + '.accuracy']:.0%} ({row[name + '.margin']:.1f})"


def knockout_table(knockouts: Sequence[Mapping[str, Any]], *, only: bool = False,
                   ) -> list[dict[str, str]]:
    """The rows of :func:`knockout_rows` as the chapter shows them, each cell "accuracy
    (mean margin)": intact, with no attention and without each layer's; with ``only``, with
    each layer's attention alone."""
    out = []
    for r in knockouts:
        layers = _layers(r)
        row: dict[str, Any] = {"task": r["task"], "heads": r["heads"]}
        if only:
            row.update({f"only L{la}": _knockout_cell(r, f"only_L{la}") for la in layers})
        else:
            row.update({"intact": _knockout_cell(r, "none"),
                        "no attention": _knockout_cell(r, "all"),
                        **{f"without L{la}": _knockout_cell(r, f"L{la}") for la in layers}})
        out.append(row)
    return out


def _layers(row: Mapping[str, Any]) -> list[int]:
    """The layers (1-based) of a :func:`knockout_rows` row."""
    return sorted(int(k[1:].split(".")[0]) for k in row
                  if k.startswith("L") and k.endswith(".accuracy"))


def knockout_results(knockouts: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Every knockout's accuracy and margin (``knockout.<task>.h<H>.<knockout>.<m>``), per
    task the range of the no-attention accuracy and how many models need attention
    (:func:`uses_attention`), and the number of models."""
    out: dict[str, float] = {}
    for r in knockouts:
        layers = _layers(r)
        for name in ("all", *[f"{p}L{la}" for la in layers for p in ("", "only_")]):
            for m in ("accuracy", "margin"):
                out[f"knockout.{r['task']}.h{r['heads']}.{name}.{m}"] = r[f"{name}.{m}"]
    for task in sorted({r["task"] for r in knockouts}):
        mine = [r for r in knockouts if r["task"] == task]
        out[f"knockout.{task}.all.accuracy_min"] = min(r["all.accuracy"] for r in mine)
        out[f"knockout.{task}.all.accuracy_max"] = max(r["all.accuracy"] for r in mine)
        out[f"knockout.{task}.uses_attention.models"] = sum(uses_attention(r) for r in mine)
    out["knockout.models"] = len(knockouts)
    return out


#: The per-head measures of the noise-floor table, and their display names.
MEASURES = {"mean.margin": "margin drop, mean ablation",
            "zero.margin": "margin drop, zero ablation",
            "mean.kl": "KL, mean ablation", "zero.kl": "KL, zero ablation",
            "mean.loss": "loss rise, mean ablation", "zero.loss": "loss rise, zero ablation",
            "gradient": "gradient importance"}
_SHARE = "share of layers reliable"
#: Formats of :func:`noise_floor_table`.
NOISE_FORMATS = {"median reliability": ".2f", _SHARE: ".0%",
                 "largest mean effect": lambda v: fmt_sig(v, 3)}


def noise_floor_table(reliability: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`reliability_rows` of the measures of :data:`MEASURES`, in its
    order, as the chapter shows them (format with :data:`NOISE_FORMATS`)."""
    rel = {r["measure"]: r for r in reliability}
    return [{"measure": name, "median reliability": rel[k]["median_rho"],
             _SHARE: rel[k]["reliable_share"], "largest mean effect": rel[k]["max_effect"]}
            for k, name in MEASURES.items()]


#: Head counts at which the chapter states the chance rate of a split-half rule.
CHANCE_HEADS = (4, 8, 16)


def chance_table(threshold: float = RELIABLE) -> list[dict[str, Any]]:
    """Per head count of :data:`CHANCE_HEADS`, how often a rule passes a layer whose heads
    do not differ: one split-half rho at least ``threshold`` (the book's earlier rule; exact
    or Monte Carlo, :func:`bparallel.ranks.chance_at_least`) and this chapter's rule (at
    most the test's level after Holm, whatever the number of heads)."""
    return [{"heads": h, f"one split, ρ ≥ {threshold:g}": ranks.chance_at_least(h, threshold),
             "reliability and permutation test (Holm)": f"≤ {ALPHA:.0%} per table"}
            for h in CHANCE_HEADS]


#: Formats of :func:`chance_table`.
CHANCE_FORMATS = {f"one split, ρ ≥ {RELIABLE:g}": ".2%"}


def noise_floor_results(reliability: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The recorded reliabilities (median) and largest effects of the head measures
    (:func:`reliability_rows`), the rule's parameters and the chance rate of one split-half
    rho at the threshold per head count of :data:`CHANCE_HEADS`."""
    rel = {r["measure"]: r for r in reliability}
    out = {"reliable": RELIABLE, "alpha": ALPHA, "splits": SPLITS,
           "permutations": PERMUTATIONS,
           "head_impact.split_half_rho.median": rel["mean.margin"]["median_rho"],
           "head_impact.zero.split_half_rho.median": rel["zero.margin"]["median_rho"],
           "head_impact.loss.split_half_rho.median": rel["zero.loss"]["median_rho"],
           "head_impact.kl.split_half_rho.median": rel["mean.kl"]["median_rho"],
           "head_impact.gradient.split_half_rho.median": rel["gradient"]["median_rho"],
           "head_impact.reliable_share": rel["mean.margin"]["reliable_share"],
           "head_impact.margin.max": rel["mean.margin"]["max_effect"],
           "head_impact.zero.margin.max": rel["zero.margin"]["max_effect"],
           "head_impact.loss.max": rel["zero.loss"]["max_effect"]}
    for h in CHANCE_HEADS:
        out[f"chance.single_split.h{h}"] = ranks.chance_at_least(h, RELIABLE)
    out["chance.exact_up_to"] = ranks.EXACT_UP_TO  # beyond: Monte Carlo
    return out


#: Formats of :func:`ranking_table`.
RANKING_FORMATS = {"reliability": ".2f", "largest impact": ".2f"}
BELOW = "below noise floor"
#: A ranking's cell in :func:`ranking_table` where every head is capped at the sink.
CAPPED = "capped at the sink"


def ranking_table(ranking: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`ranking_rows` as the chapter shows them: the reliability and
    Holm-corrected permutation p of the impact; a correlation with an impact below the
    noise floor reads :data:`BELOW`, a fidelity ranking capped at the sink :data:`CAPPED`;
    whether the per-head tests use the cell (reliable, and its largest impact at least
    :data:`~bparallel.book.section4.as_defined.IMPACT_MIN`; format with
    :data:`RANKING_FORMATS`)."""
    return [{"task": r["task"], "heads": r["heads"], "layer": r["layer"],
             "reliability": r["reliability"], "Holm p": fmt_p(r["p_holm"]),
             **{f"ρ({label})": (BELOW if not r["reliable"] else
                                CAPPED if k in r.get("capped", ()) else _fmt_rho(r[k]))
                for k, label in RANKINGS.items()},
             "largest impact": r["max_impact"],
             f"tested (impact ≥ {IMPACT_MIN:g})": bool(r["reliable"] and r["material"])}
            for r in ranking]


#: Display names of the rankings of :func:`head_claims` and the measures of
#: :func:`layer_claims`.
CLAIM_NAMES = {"fidelity.paper": "φ, published code", "fidelity.definition": "φ, definition",
               "fidelity": "fidelity", "speed": "−T_mix"}


def claims_table(tests: Sequence[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    """Per task and ranking (``key="ranking"``, :func:`head_claims`) or measure
    (``key="measure"``, :func:`layer_claims`): the cells, the median rho, its two-sided
    permutation p-value and that p-value after Holm's correction over the chapter's family
    (:func:`~bparallel.book.section4.as_defined.chapter_family`), the smallest p-value the
    cells allow, the smallest median rho the test could find at the level of Holm's first
    step (``smallest``; "none" where even rho = 1 in every cell falls short), and the
    verdict; with tests of several seeds, a ``seed`` column (seed 42's tests carry none)."""
    seeded = any("seed" in t for t in tests)
    if seeded:  # seed by seed (a stable sort keeps each seed's tasks and measures in order)
        tests = sorted(tests, key=lambda t: (t.get("seed", 42), t["task"]))
    return [{**({"seed": t.get("seed", 42)} if seeded else {}),
             "task": t["task"], "measure": CLAIM_NAMES[t[key]], "cells": t["cells"],
             "median ρ": "—" if not t["cells"] else f"{t['median']:.2f}",
             "p": "—" if not t["cells"] else fmt_p(t["p"]),
             "p after Holm": "—" if t.get("p_holm") is None else fmt_p(t["p_holm"]),
             "smallest possible p": "—" if not t["cells"] else fmt_p(t["p_min"]),
             "smallest detectable ρ": _fmt_smallest(t),
             "verdict": verdict_cell(t["verdict"], rank_condition(t))} for t in tests]


def _fmt_smallest(test: Mapping[str, Any]) -> str:
    """A test's smallest detectable median rho (``smallest``,
    :func:`~bparallel.book.section4.as_defined.chapter_family`) in a table cell: "—"
    without cells, "none" where even rho = 1 in every cell could not reach Holm's first
    step."""
    if not test["cells"] or "smallest" not in test:
        return "—"
    return "none" if test["smallest"] is None else f"{test['smallest']:.2f}"


def verdict_rules() -> dict[str, float]:
    """The thresholds of the chapter's verdict rules (``rules.*``): the median rho at which a
    rank claim holds and holds with conditions
    (:data:`~bparallel.book.section4.statistics.RHO_HOLDS`, ``RHO_CONDITIONS``), and the
    rollout claim's (:data:`~bparallel.book.section4.as_defined.ROLLOUT_HOLDS`,
    ``ROLLOUT_CONDITIONS``), and the practical impact in logits at which attention or a head
    counts as used (:data:`~bparallel.book.section4.as_defined.IMPACT_MIN`); the level of
    their tests is ``alpha`` (:func:`noise_floor_results`)."""
    return {"rules.rho_holds": RHO_HOLDS, "rules.rho_conditions": RHO_CONDITIONS,
            "rules.rollout_holds": ROLLOUT_HOLDS, "rules.rollout_conditions": ROLLOUT_CONDITIONS,
            "rules.impact_min": IMPACT_MIN, "rules.sink_cap": SINK_CAP}


def claims_results(tests: Sequence[Mapping[str, Any]], key: str, prefix: str
                   ) -> dict[str, float]:
    """The recorded numbers of :func:`claims_table`'s rows:
    ``<prefix>.<task>.<name>.{cells,median,p,p_holm,smallest}`` (the last two where
    defined)."""
    out: dict[str, float] = {}
    for t in tests:
        base = f"{prefix}.{t['task']}.{t[key].replace('.', '_')}"
        out[f"{base}.cells"] = t["cells"]
        if t["cells"]:
            out.update({f"{base}.median": t["median"], f"{base}.p": t["p"]})
        if t.get("p_holm") is not None:
            out[f"{base}.p_holm"] = t["p_holm"]
        if t["cells"] and t.get("smallest") is not None:
            out[f"{base}.smallest"] = t["smallest"]
    return out


def seeds_claims_results(tests: Sequence[Mapping[str, Any]], key: str, prefix: str
                         ) -> dict[str, float]:
    """:func:`claims_results` of tests of several seeds: seed 42's (no ``seed``) under
    ``<prefix>.``, every other seed's under ``<prefix>.s<seed>.``."""
    out = claims_results([t for t in tests if "seed" not in t], key, prefix)
    for seed in sorted({t["seed"] for t in tests if "seed" in t}):
        out.update(claims_results([t for t in tests if t.get("seed") == seed], key,
                                  f"{prefix}.s{seed}"))
    return out


def seeds_summary(tests: Sequence[Mapping[str, Any]], key: str, name: str
                  ) -> dict[str, float]:
    """Per task and ranking or measure (``key``) of tests over several seeds (seed 42's
    and the others', with the verdicts of
    :func:`~bparallel.book.section4.as_defined.chapter_family`): how many seeds test it, and in how
    many it holds (with or without conditions) and fails
    (``<name>.<task>.<measure>.seeds.{tested,holding,failing}``)."""
    out: dict[str, float] = {}
    for task, measure in sorted({(t["task"], t[key]) for t in tests}):
        vs = [Verdict.parse(t["verdict"]) for t in tests
              if t["task"] == task and t[key] == measure]
        base = f"{name}.{task}.{measure.replace('.', '_')}.seeds"
        out[f"{base}.tested"] = sum(v is not Verdict.NOT_TESTABLE for v in vs)
        out[f"{base}.holding"] = sum(v in HOLDING for v in vs)
        out[f"{base}.failing"] = sum(v is Verdict.FAILS for v in vs)
    return out


def ranking_results(ranking: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """How many (model, layer) cells have a reliable head impact (in all, per task), how
    many of those the per-head tests use (``tested``: largest impact at least
    :data:`~bparallel.book.section4.as_defined.IMPACT_MIN`) and how many of these are capped
    at the sink per fidelity ranking, and per task and ranking of :data:`RANKINGS` the
    median and positive share of its correlations there (never pooled across tasks)."""
    reliable = [r for r in ranking if r["reliable"]]
    out: dict[str, float] = {"ablation.reliable.cells": len(reliable),
                             "ablation.cells": len(ranking)}
    for task in sorted({r["task"] for r in ranking}):
        mine = [r for r in reliable if r["task"] == task]
        out[f"ablation.{task}.reliable.cells"] = len(mine)
        out[f"ablation.{task}.cells"] = sum(r["task"] == task for r in ranking)
        out[f"ablation.{task}.tested.cells"] = sum(r["material"] for r in mine)
        for k in ("fidelity.paper", "fidelity.definition"):
            out[f"ablation.{task}.capped_{k.replace('.', '_')}.cells"] = sum(
                k in r.get("capped", ()) for r in mine if r["material"])
        for k in RANKINGS:
            vals = [r[k] for r in mine if r[k] is not None]
            name = f"ablation.{task}.rho_{k.replace('.', '_')}"
            if vals:
                out[f"{name}.median"] = ranks.median(vals)
                out[f"{name}.positive_share"] = float(np.mean(np.array(vals) > 0))
            out[f"{name}.cells"] = len(vals)
    return out


#: The orders of the pruning curves whose areas the chapter records.
PRUNING_ORDERS = ("zero.margin", "weight", "gradient", "fidelity.definition", "random")
#: Display names of :data:`PRUNING_ORDERS`.
PRUNING_NAMES = {"zero.margin": "oracle (zero-ablation impact)", "weight": "head weight w_h",
                 "gradient": "gradient importance", "fidelity.definition": "fidelity, definition",
                 "random": "random orders"}


def pruning_results(studies: Mapping[tuple[str, int], ImportanceStudy]) -> dict[str, float]:
    """Per multi-head model and order of :data:`PRUNING_ORDERS`, the :func:`pruning_area`
    of its accuracy and margin curves (for the random orders, the median area and its 5%
    and 95% quantiles over the orders)."""
    out: dict[str, float] = {}
    for (task, heads), st in studies.items():
        if heads < 2:
            continue
        for key in PRUNING_ORDERS:
            for m in ("accuracy_predictable", "margin"):
                base = f"pruning.{task}.h{heads}.{key.replace('.', '_')}.{m}.area"
                curves = np.asarray(st.pruning[key][m], float)
                out[base] = pruning_area(curves)
                if key == "random":
                    areas = curves.reshape(-1, curves.shape[-1]).mean(-1)
                    out[f"{base}.p05"], out[f"{base}.p50"], out[f"{base}.p95"] = \
                        (float(q) for q in np.percentile(areas, [5, 50, 95]))
    return out


def pruning_summary(studies: Mapping[tuple[str, int], ImportanceStudy],
                    metric: str = "margin") -> list[dict[str, Any]]:
    """Per multi-head model: each ranking's pruning area (``metric``) against the random
    orders' 5-95% band: ``"above"`` the band (it keeps what matters longer than chance),
    ``"within"`` or ``"below"`` (worse than a random order), and which order is best."""
    rows = []
    for (task, heads), st in sorted(studies.items()):
        if heads < 2:
            continue
        areas = np.asarray(st.pruning["random"][metric], float)
        areas = areas.reshape(-1, areas.shape[-1]).mean(-1)
        low, high = np.percentile(areas, [5, 95])
        row: dict[str, Any] = {"task": task, "heads": heads,
                               "random (5-95%)": f"{low:.2f} to {high:.2f}"}
        best, best_area = None, -np.inf
        for key in PRUNING_ORDERS[:-1]:
            if key not in st.pruning:
                continue
            a = pruning_area(st.pruning[key][metric])
            where = "above" if a > high else "below" if a < low else "within"
            row[PRUNING_NAMES[key]] = f"{a:.2f} ({where})"
            if a > best_area:
                best, best_area = key, a
        row["best order"] = PRUNING_NAMES[best] if best_area > high else "none beats random"
        rows.append(row)
    return rows


def pruning_prose(summary: Sequence[Mapping[str, Any]]) -> str:
    """One sentence per task of :func:`pruning_summary`'s rows, generated from the areas:
    per model, which order is best (or that none beats the random band) and which orders
    are worse than random."""
    out = []
    for task in sorted({r["task"] for r in summary}):
        parts = []
        for r in (r for r in summary if r["task"] == task):
            below = [name for name in PRUNING_NAMES.values()
                     if str(r.get(name, "")).endswith("(below)")]
            best = r["best order"]
            text = (f"with {r['heads']} heads, " +
                    (f"the {best} order keeps the margin longest" if best != "none beats random"
                     else "no ranking keeps the margin longer than random orders do"))
            if below:
                text += f", and {_join(below)} {agree(len(below), 'is', 'are')} worse " \
                        "than random"
            parts.append(text)
        out.append(f"**{task.capitalize()}**: " + "; ".join(parts) + ".")
    return "\n\n".join(out) + "\n"


def _join(names: Sequence[str]) -> str:
    return join_words([f"the {n} order" for n in names])


#: Formats of :func:`pair_table`.
PAIR_FORMATS = {"pairs positive": ".0%", "reliability": ".2f"}


def pair_table(pairs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`~bparallel.book.section4.as_defined.pair_rows` as the chapter shows them
    (format with :data:`PAIR_FORMATS`)."""
    return [{"task": r["task"], "heads": r["heads"], "layer": r["layer"],
             "interaction": r["effect"],
             "mean (logits)": f"{r['mean']:.3f} ± {r['half_width']:.3f}",
             "pairs positive": r["share_positive"], "reliability": r["reliability"],
             "Holm p": fmt_p(r["p_holm"]), "above the noise floor": bool(r["reliable"])}
            for r in pairs]


def pair_results(pairs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per multi-head model and interaction (redundancy, complementarity) its mean,
    half-width, positive share and reliability; per task and interaction the smallest and
    largest mean over its models; per interaction how many models have a
    reliable one and how many are positive beyond their interval; and how many models."""
    out: dict[str, float] = {}
    for r in pairs:
        base = f"pairs.{r['task']}.h{r['heads']}.{r['effect']}"
        out.update({f"{base}.mean": r["mean"], f"{base}.half_width": r["half_width"],
                    f"{base}.share_positive": r["share_positive"],
                    f"{base}.reliability": r["reliability"]})
    for effect in PAIR_EFFECTS:
        mine = [r for r in pairs if r["effect"] == effect]
        for task in sorted({r["task"] for r in mine}):
            means = [r["mean"] for r in mine if r["task"] == task]
            out[f"pairs.{task}.{effect}.min"] = min(means)
            out[f"pairs.{task}.{effect}.max"] = max(means)
        out[f"pairs.{effect}.reliable.models"] = sum(r["reliable"] for r in mine)
        out[f"pairs.{effect}.positive.models"] = sum(r["mean"] - r["half_width"] > 0
                                                     for r in mine)
    out["pairs.models"] = len({(r["task"], r["heads"]) for r in pairs})
    return out


def layers_table(layers: Sequence[Mapping[str, Any]], knockouts: Sequence[Mapping[str, Any]],
                 ) -> list[dict[str, str]]:
    """The rows of :func:`layer_rows` beside whether their model needs attention
    (:func:`uses_attention` of the matching :func:`knockout_rows` row)."""
    return [{"task": r["task"], "heads": r["heads"], "needs attention": bool(uses_attention(k)),
             "layer most needed": r["most_needed_layer"],
             "ρ(damage, fidelity)": _fmt_rho(r["rho_fidelity"]),
             "ρ(damage, −T_mix)": _fmt_rho(r["rho_mixing"])}
            for r, k in zip(layers, knockouts, strict=True)]


def layers_results(layers: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per model its most needed layer (the per-task tests are :func:`claims_results` of
    :func:`~bparallel.book.section4.as_defined.layer_claims`)."""
    return {f"layers.{r['task']}.h{r['heads']}.most_needed": r["most_needed_layer"]
            for r in layers}


def copy_margin_results(knockouts: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per task, the range over its models of the intact mean margin and of the margin with
    every head of every layer removed (``margin.<task>.{intact,none}.{min,max}``): attention
    a task's accuracy does not need may still carry margin."""
    out: dict[str, float] = {}
    for task in sorted({r["task"] for r in knockouts}):
        mine = [r for r in knockouts if r["task"] == task]
        for name, key in (("intact", "none.margin"), ("none", "all.margin")):
            out[f"margin.{task}.{name}.min"] = min(r[key] for r in mine)
            out[f"margin.{task}.{name}.max"] = max(r[key] for r in mine)
    return out
