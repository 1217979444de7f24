"""What chapter 11 ("Across seeds") shows and records: Tables 1-6 over every training seed
and the change from 1 to 16 heads as tables (:func:`tables_1_4_seed_markdown`,
:func:`effects_table`), the claims that survive (:func:`seed_claims_table`), the seeds and
their machines (:func:`seed_model_rows`, :func:`machines_note`), and the seed trained alone
on its machine (:func:`odd_seed_comparison`, :func:`hardware_markdown`). What it computes
over the seeds is :mod:`bparallel.book.section4.across_seeds_stats`.

Table rows are plain dicts keyed by the column a reader sees (numbers formatted with
:data:`FORMATS` and :data:`EFFECT_FORMATS`); ``*_results`` return flat dicts under the keys
of the chapter's regression references, computed exactly as the chapter did before, so the
references hold bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scipy import stats

from ... import ranks
from ..._checks import positive_int, unit_interval
from ...transformer.data import predictable_mask
from ...transformer.design import HEADS, get_profile
from ...transformer.runtime import hardware_kind
from ..render.markdown import table, tabs
from ..verdicts import Outcome, Verdict
from ..verdicts import cell as verdict_cell
from ..words import agree, fmt_fixed, fmt_p, join_words
from .across_seeds_stats import (
    READINGS,
    TIE,
    changes_by_seed,
    odd_seed_out,
    outside_tail,
    smallest_outside,
)
from .published import MODE_NAMES, published_rows
from .statistics import across_tasks, both_modes, fmt_interval

#: Number formats of the chapter's tables, by column.
FORMATS = {
    "lowest held-out accuracy": ".4f", "1 head": ".2f", "16 heads": ".2f",
}


# --------------------------------------------------------------------------- display


_QUANTITY = {"mixing_time": "mixing time (steps)", "fidelity": "minimax fidelity (%)"}


def tables_1_4_seed_markdown(rows: Sequence[Mapping[str, Any]], *, mode: str = "paper",
                             level: float = 0.95, name_prefix: str = "tbl-seeds") -> str:
    """Tables 1-4 over seeds (rows of :func:`tables_1_4_across_seeds`) in tabs, one numbered
    captioned table per published table: per head count and layer, the mean over seeds with
    its interval, beside the published mean."""
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
    smallest change the test finds (80% power, at Holm's first step over the chapter's
    family: :func:`~.across_seeds_stats.holm_outcomes`), the paired p-value, Holm's
    adjusted one and the outcome after it."""
    return [{"quantity": _QUANTITY[r["quantity"]], "task": r["task"], "layer": r["layer"],
             "1 head": r["fewer"], "16 heads": r["more"],
             "change [interval]": fmt_interval(r["effect"], r["low"], r["high"]),
             "smallest detectable": ("—" if r.get("smallest") is None
                                     else fmt_fixed(r["smallest"], 2)),
             "paired p": fmt_p(r["p_value"]), "Holm p": fmt_p(r["p_holm"]),
             "outcome": r["outcome_holm"]} for r in rows]


# --------------------------------------------------------------- the chapter's tables and values


def seed_kinds(overview: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Per seed of :func:`~bparallel.transformer.shipped.seed_overview`, the kind of machine
    that trained it (:func:`hardware_kind`: "CPU", "GPU",
    or several joined by "; ")."""
    return {r["seed"]: "; ".join(hardware_kind(m) for m in r["trained on"].split("; "))
            for r in overview}


def seed_model_rows(overview: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of :func:`~bparallel.transformer.shipped.seed_overview` as shown: per seed the
    models, the kind of machine, the machine, torch and the lowest held-out accuracy."""
    kinds = seed_kinds(overview)
    return [{"seed": r["seed"], "models": r["models"], "kind": kinds[r["seed"]],
             **{k: v for k, v in r.items() if k not in ("seed", "models")}} for r in overview]


def machines_note(overview: Sequence[Mapping[str, Any]]) -> str:
    """One paragraph for the top of chapter 11: which seeds each machine (and torch
    version) trained, and, when the machines are not all of one kind, that a difference
    between seeds may come from the seed or the hardware."""
    if not overview:
        raise ValueError("overview is empty: no seed to describe")
    machines: dict[tuple[str, str], list[int]] = {}  # (machine, torch) -> seeds trained there
    for r in overview:
        machines.setdefault((r["trained on"], r["torch"]), []).append(r["seed"])
    text = "**Which models this page shows, and where they were trained.** " + " ".join(
        f"Seed{'s' * (len(seeds) > 1)} {join_words(seeds)}: "
        f"{'; '.join(hardware_kind(m) for m in machine.split('; '))} "
        f"({machine}; torch {torch})." for (machine, torch), seeds in machines.items())
    if len({hardware_kind(m) for (m, _) in machines}) > 1:
        text += (" The seeds were not all trained on one kind of machine: a difference between "
                 "them may come from the seed or from the hardware (see *Seed or machine?* "
                 "below).")
    return text


def effects_results(effects: Mapping[str, Sequence[Mapping[str, Any]]], *, n_seeds: int
                    ) -> dict[str, float]:
    """The values chapter 11 records from
    :func:`head_count_effects` per mode (``effects``:
    ``{"paper": rows, "definition": rows}``): per (quantity, task, layer) the change and
    whether it survives the seeds
    (``effects.<mode>.<quantity>.<task>.L<l>.<change|survives>``); the survivors per mode, the
    cells, the changes against the claim in definition mode after Holm's correction over the
    chapter's family (``reversed``; before it, ``reversed_uncorrected``); each change's
    smallest detectable size (``.smallest``); with ``n_seeds`` >= 2 the tests and the
    survivors after Holm's correction (``effects.<mode>.holm.*``), the family's size
    (``effects.holm.family``, both modes) and the smallest change a paired t-test over the
    seeds finds with 80% power, in standard deviations of the per-seed changes, at the
    0.05 level and at Holm's first step (``effects.smallest_sd.<alpha|holm_first>``)."""
    positive_int(n_seeds, "n_seeds")
    if set(effects) != {"paper", "definition"}:
        raise ValueError(f"effects has modes {sorted(effects)}: expected 'paper' and "
                         "'definition'")
    out: dict[str, float] = {}
    for mode, rows in effects.items():
        for r in rows:
            base = f"effects.{mode}.{r['quantity']}.{r['task']}.L{r['layer']}"
            out[f"{base}.change"] = r["effect"]
            out[f"{base}.survives"] = int(r["outcome"] == Outcome.AS_CLAIMED)
            if r.get("smallest") is not None:
                out[f"{base}.smallest"] = r["smallest"]
    survive = {mode: sum(r["outcome"] == Outcome.AS_CLAIMED for r in rows)
               for mode, rows in effects.items()}
    out["effects.paper.survive"] = survive["paper"]
    out["effects.paper.cells"] = len(effects["paper"])
    out["effects.definition.survive"] = survive["definition"]
    # a reversal counts once it survives Holm's correction, as a survivor does
    out["effects.definition.reversed"] = sum(r.get("outcome_holm", r["outcome"]) ==
                                             Outcome.AGAINST for r in effects["definition"])
    out["effects.definition.reversed_uncorrected"] = sum(r["outcome"] == Outcome.AGAINST
                                                         for r in effects["definition"])
    if n_seeds >= 2:  # with one seed there are no tests to correct
        for mode, rows in effects.items():
            out[f"effects.{mode}.holm.tests"] = sum(r["p_value"] is not None for r in rows)
            out[f"effects.{mode}.holm.survive"] = sum(r["outcome_holm"] == Outcome.AS_CLAIMED
                                                      for r in rows)
        out["effects.holm.family"] = sum(r["p_value"] is not None
                                         for rows in effects.values() for r in rows)
        smallest = [r["smallest"] for rows in effects.values() for r in rows
                    if r.get("smallest") is not None]
        if smallest:
            # the same test's power in units of the per-seed differences' spread

            n, m = n_seeds, out["effects.holm.family"]
            for name, alpha in (("alpha", 0.05), ("holm_first", 0.05 / m)):
                out[f"effects.smallest_sd.{name}"] = float(
                    (stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(0.8, n - 1)) / n ** 0.5)
    return out


def odd_seed_comparison(
    overview: Sequence[Mapping[str, Any]],
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
) -> tuple[int, list[dict[str, Any]]]:
    """The seed to set against the others, and how it compares
    (:func:`odd_seed_out` of the 1 -> 16-head changes per
    seed): the one seed trained alone on its kind of machine when there are 3 seeds or more,
    else seed 42; no rows with a single seed (nothing to compare with)."""
    kinds = seed_kinds(overview)
    alone = [seed for seed in kinds if list(kinds.values()).count(kinds[seed]) == 1]
    n_seeds = len(by_seed)
    odd_seed = alone[0] if len(alone) == 1 and n_seeds >= 3 else 42
    return odd_seed, odd_seed_out(changes_by_seed(by_seed), odd_seed) if n_seeds >= 2 else []


def hardware_results(odd: Sequence[Mapping[str, Any]], *, seed: int, n_seeds: int
                     ) -> dict[str, float]:
    """The values chapter 11 records from :func:`odd_seed_comparison` (``hardware.*``): the
    seed, the cells, how many put it outside the others' range (above, below) or between,
    in how many every seed's change has one sign, and the binomial tail of the outside
    count (:func:`outside_tail`). Empty without rows."""
    if not odd:
        return {}
    outside = sum(r["position"] != "between" for r in odd)
    return {"hardware.seed": seed, "hardware.cells": len(odd), "hardware.outside": outside,
            "hardware.between": len(odd) - outside,
            "hardware.above": sum(r["position"] == "above" for r in odd),
            "hardware.below": sum(r["position"] == "below" for r in odd),
            "hardware.same_sign": sum(r["same_sign"] for r in odd),
            "hardware.outside_tail": outside_tail(outside, len(odd), n_seeds)}


def hardware_reading(results: Mapping[str, float], *, alpha: float) -> dict[str, str]:
    """What chapter 11 concludes from its machine check, in words that follow the numbers
    (:func:`hardware_results` and :func:`interval_results`' ``hardware.outside_chance``):
    ``"summary"``, the clause of the chapter's summary box, and ``"conclusion"``, the
    sentences after the check's table. The odd seed stands apart when the binomial tail of
    its outside count does not reach ``alpha`` (:func:`~bparallel.ranks.reaches`; cells
    taken as independent, which the layers of one model are not, so the tail is a guide,
    not a test of the family). With one seed (no check) both say there is nothing to
    compare. The conclusion ends with the smallest effect the check could find
    (:func:`~.across_seeds_stats.smallest_outside`)."""
    alpha = unit_interval(alpha, "alpha")
    if "hardware.cells" not in results:
        return {"summary": "with one seed there is nothing to compare it with",
                "conclusion": "With one seed there is nothing to compare it with."}
    seed, cells = int(results["hardware.seed"]), int(results["hardware.cells"])
    outside, tail = int(results["hardware.outside"]), float(results["hardware.outside_tail"])
    same, chance = int(results["hardware.same_sign"]), float(results["hardware.outside_chance"])
    agree = (f"all seeds agree on the direction of the change in {same} of {cells} cells")
    need = smallest_outside(cells, round(2 / chance), alpha)
    smallest = (f" The smallest effect the check could find: one seed outside the others' "
                f"range in {need} of the {cells} cells ({need / cells:.0%}, where chance "
                f"gives {chance:.0%})." if need is not None else
                f" With {cells} cells the check could find no effect at {alpha:.0%}.")
    if ranks.reaches(tail, alpha):  # the book's threshold decision, not the last bit
        return {
            "summary": f"they show no sign that the seed trained alone on its kind of "
                       f"machine drives the results: {agree}, and seed {seed} falls outside "
                       f"the other seeds' range no more often than chance allows "
                       f"(p = {tail:.2f})",
            "conclusion": "So the data show no sign that the seed trained on the other "
                          "machine drives the survivors; with few seeds they could only "
                          "have shown a large, systematic difference." + smallest}
    return {
        "summary": f"seed {seed}, the only seed trained on its kind of machine, **stands "
                   f"apart**: "
                   f"it falls outside the other seeds' range in {outside} of {cells} cells, "
                   f"where chance gives {chance:.0%} (p = {tail:.2f}), though {agree}",
        "conclusion": f"So seed {seed} stands apart from the other seeds more often than "
                      f"exchangeable seeds would, in no one direction, while every seed's "
                      f"change has one sign in {same} of {cells} cells: the machine (or seed "
                      f"{seed} itself) moves the size of the changes more than their "
                      f"direction. The intervals and tests above pool every seed, so they "
                      f"carry this spread; a single run's numbers, such as the paper's "
                      f"(seed {seed}), carry it unmeasured." + smallest}


def hardware_split(overview: Sequence[Mapping[str, Any]]) -> str:
    """Which seeds were trained on which kind of machine, as a clause: "seed 42 was trained
    on a CPU, seeds 43 and 44 on a GPU" (from :func:`seed_kinds`)."""
    kinds = seed_kinds(overview)
    groups: dict[str, list[int]] = {}
    for seed, kind in kinds.items():
        groups.setdefault(kind, []).append(seed)
    parts = []
    for i, (kind, seeds) in enumerate(sorted(groups.items(), key=lambda kv: min(kv[1]))):
        names = f"{agree(len(seeds), 'seed', 'seeds')} {join_words(seeds)}"
        verb = f" {agree(len(seeds), 'was', 'were')} trained" if i == 0 else ""
        parts.append(f"{names}{verb} on a {kind}")
    return ", ".join(parts)


def interval_results(n_seeds: int, level: float) -> dict[str, float]:
    """The constants behind chapter 11's intervals and its machine check: the Student-t
    quantile of a ``level`` interval over ``n_seeds`` seeds (``t_crit``, its degrees of
    freedom ``t_dof``), and the chance that one given seed lies outside the range of the
    others in a cell when seeds are exchangeable (``hardware.outside_chance``: 2 / n), and
    the family-wise level of Holm's correction (``alpha``: ``1 - level``, as
    :func:`head_count_effects` applies it)."""
    positive_int(n_seeds, "n_seeds")
    dof = max(n_seeds - 1, 1)
    return {"t_dof": dof, "t_crit": float(stats.t.ppf(0.5 + level / 2, dof)),
            "alpha": 1 - level, "hardware.outside_chance": 2 / n_seeds}


def protocol_results(by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
                     profile: str) -> dict[str, float]:
    """The evaluation behind chapter 11's tables: the number of sequences each cell's mean
    is over (``protocol.sequences``: the published protocol's, one number for every row of
    Tables 1-4 and every mean row of Tables 5-6 of every seed, checked), and the held-out
    token accuracy a cycle model can reach at most (``cycle.accuracy_ceiling``: the share of
    its positions whose target is predictable, :func:`~bparallel.transformer.data.predictable_mask`,
    at ``profile``'s sequence length)."""
    counts = {r["n"] for tables in by_seed.values() for r in tables["tables_1_4"]
              if r["protocol"] == "paper"}
    counts |= {r["n"] for tables in by_seed.values() for r in tables["tables_5_6"]
               if r["protocol"] == "paper" and r["sample"] == "mean"}
    if len(counts) != 1:
        raise ValueError(f"by_seed's cells are means over {sorted(counts)} sequences: "
                         "expected one number for every cell")
    mask = predictable_mask("cycle", get_profile(profile).seq_len)
    return {"protocol.sequences": counts.pop(),
            "cycle.accuracy_ceiling": int(mask.sum()) / mask.numel()}


def hardware_markdown(odd: Sequence[Mapping[str, Any]], *, seed: int,
                      overview: Sequence[Mapping[str, Any]], name: str = "tbl-seeds-hardware",
                      ) -> str:
    """:func:`odd_seed_comparison`'s rows as a numbered, captioned MyST table (its columns
    and caption name the seeds), or a note when there is no other seed to compare with."""
    if not odd:
        return "```{note}\nWith one seed there is nothing to compare it with.\n```\n"
    others = ", ".join(str(r["seed"]) for r in overview if r["seed"] != seed)
    rows = [{"quantity": r["quantity"].replace("_", " "), "task": r["task"], "layer": r["layer"],
             f"seed {seed}": r["change"], f"seeds {others}: lowest": r["low"],
             f"seeds {others}: highest": r["high"], f"seed {seed} is": r["position"],
             "one sign in all seeds": r["same_sign"]} for r in odd]
    return table(rows, name=name,
                 formats={f"seed {seed}": ".2f", f"seeds {others}: lowest": ".2f",
                          f"seeds {others}: highest": ".2f"},
                 caption=f"Does seed {seed} ({seed_kinds(overview)[seed]}) stand apart? The "
                         "change from 1 to 16 heads per quantity, task and layer "
                         "(published-code mode; steps for mixing time, percentage points for "
                         "fidelity) in that seed, beside the lowest and highest change among "
                         "the other seeds, where it lies among them, and whether every seed's "
                         "change has the same sign.")


def seed_amplification_results(amplification: Sequence[Mapping[str, Any]],
                               claims: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Tables 5-6 over seeds (rows of :func:`~.across_seeds_stats.amplification_per_sequence`
    and their :func:`~.across_seeds_stats.amplification_claims`): with the best head per
    sequence (Tables 5-6's reading), the cells and those where the combination wins in
    every seed and in none (``amplification.*``); per reading, cell and statistic the win
    shares (``amplification.<reading>.<task>.h<H>.L<l>.<share|low|high|ties|wins>``), per
    reading the cells whose share lies above one half beyond the seeds, below it, or that
    tie throughout; the tie's resolution (``amplification.tie``); and the verdicts, "wins
    occur" and "in every seed" (``verdict.amplification_<claim>.<task>.<reading>``), "wins
    occur" per task over both readings (:func:`~.statistics.both_modes`: holds with
    conditions where only one reading holds) and across tasks
    (``verdict.amplification_occurs[.<task>]``)."""
    mine = [r for r in amplification if r["reading"] == "per_sequence"]
    out: dict[str, float] = {
        "amplification.cells": len(mine), "amplification.tie": TIE,
        "amplification.every_seed": sum(r["wins"] == r["seeds"] for r in mine),
        "amplification.no_seed": sum(r["wins"] == 0 for r in mine)}
    for r in amplification:
        base = f"amplification.{r['reading']}.{r['task']}.h{r['heads']}.L{r['layer']}"
        out[f"{base}.wins"] = r["wins"]
        out[f"{base}.ties"] = r["ties"]
        for k in ("share", "low", "high"):
            if r[k] is not None:
                out[f"{base}.{k}"] = r[k]
    for reading in {r["reading"] for r in amplification}:
        rows = [r for r in amplification if r["reading"] == reading]
        for name, outcome in (("above_half", Outcome.AS_CLAIMED),
                              ("below_half", Outcome.AGAINST),
                              ("all_ties", Outcome.NO_CHANGE)):
            out[f"amplification.{reading}.{name}"] = sum(r["outcome"] is outcome for r in rows)
    order = list(Verdict)
    occurs: dict[str, dict[str, Verdict]] = {}
    for c in claims:
        out[f"verdict.amplification_{c['claim']}.{c['task']}.{c['reading']}"] = \
            order.index(c["verdict"])
        if c["claim"] == "occurs":
            occurs.setdefault(c["task"], {})[c["reading"]] = c["verdict"]
    for task, by in occurs.items():
        out[f"verdict.amplification_occurs.{task}"] = order.index(
            both_modes(by["per_sequence"], by["on_average"]))
    if occurs:
        out["verdict.amplification_occurs"] = order.index(across_tasks(
            [both_modes(by["per_sequence"], by["on_average"]) for by in occurs.values()]))
    return out


def seed_amplification_table(amplification: Sequence[Mapping[str, Any]]
                             ) -> list[dict[str, Any]]:
    """Per task, multi-head count and layer, under each reading of the best head
    (:data:`~.across_seeds_stats.READINGS`): the share of sequences the combination wins
    among those it does not tie, mean over seeds with its interval ("—" where every
    sequence ties), and in how many seeds it wins on the means at two decimals ("2 of 5");
    and the share of tied sequences."""
    by = {(r["task"], r["heads"], r["layer"], r["reading"]): r for r in amplification}
    rows = []
    for task in ("copy", "cycle"):
        for heads in HEADS[1:]:
            for layer in sorted({k[2] for k in by if k[:2] == (task, heads)}):
                row: dict[str, Any] = {"task": task, "heads": heads, "layer": layer}
                for reading, name in READINGS.items():
                    r = by[(task, heads, layer, reading)]
                    row[f"{name}: win share"] = ("—" if r["share"] is None else fmt_interval(
                        r["share"], r["low"], r["high"], floor=0.0))
                    row[f"{name}: seeds won"] = f"{r['wins']} of {r['seeds']}"
                row["ties"] = by[(task, heads, layer, "per_sequence")]["ties"]
                rows.append(row)
    return rows


def amplification_claims_table(claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`~.across_seeds_stats.amplification_claims` as shown: per claim,
    task and reading of the best head, the units that hold and go against it, and the
    verdict."""
    names = {"occurs": "wins occur (the paper's claim)",
             "every_seed": "the combination wins in every seed"}
    return [{"claim": names[c["claim"]], "task": c["task"], "best head": READINGS[c["reading"]],
             "holds in": f"{c['holds']} of {c['units']}", "against it": c["against"],
             "verdict": verdict_cell(c["verdict"], c["condition"])} for c in claims]


_CLAIM_KEYS = {"more heads mix faster (Tables 1-2)": "mixing",
               "more heads keep more fidelity (Tables 3-4)": "fidelity",
               "the combination beats its best head (Tables 5-6)": "amplification"}


def seed_claims_results(claims: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The values chapter 11 records from
    :func:`surviving_claims`: the (claim, task) units,
    how many hold, hold with conditions, fail or are not supported (under the keys' first
    names, ``claims.survives``, ``claims.partly``, ``claims.fails``,
    ``claims.not_supported``), and per claim and task the units
    that hold and of how many (``claims.<claim>.<task>.<holds|units>``; ``holds`` after Holm's
    correction, ``holds_uncorrected`` before it), and the verdicts: ``verdict.<claim>.<task>``
    and, across tasks, ``verdict.<claim>`` (the index in :class:`Verdict`; what the
    introduction's findings are checked against)."""
    out: dict[str, float] = {"claims.units": len(claims)}
    for key, verdict in (("survives", Verdict.HOLDS), ("partly", Verdict.HOLDS_WITH_CONDITIONS),
                         ("fails", Verdict.FAILS), ("not_supported", Verdict.NOT_SUPPORTED)):
        out[f"claims.{key}"] = sum(c["verdict"] is verdict for c in claims)
    for c in claims:
        if c["claim"] not in _CLAIM_KEYS:
            raise ValueError(f"claims holds an unknown claim {c['claim']!r}")
        key = _CLAIM_KEYS[c["claim"]]
        out[f"claims.{key}.{c['task']}.holds"] = c["holds"]
        out[f"claims.{key}.{c['task']}.units"] = c["units"]
        if "holds_uncorrected" in c:
            out[f"claims.{key}.{c['task']}.holds_uncorrected"] = c["holds_uncorrected"]
        out[f"verdict.{key}.{c['task']}"] = list(Verdict).index(c["verdict"])

    for key in sorted(set(_CLAIM_KEYS.values())):
        mine = [c["verdict"] for c in claims if _CLAIM_KEYS[c["claim"]] == key]
        if mine:
            out[f"verdict.{key}"] = list(Verdict).index(across_tasks(mine))
    return out


def _holds(c: Mapping[str, Any]) -> str:
    """"2 of 4 (3 uncorrected)": the units that hold after Holm's correction, and before it
    where that differs."""
    text = f"{c['holds']} of {c['units']}"
    raw = c.get("holds_uncorrected", c["holds"])
    return text if raw == c["holds"] else f"{text} ({raw} uncorrected)"


def seed_claims_table(claims: Sequence[Mapping[str, Any]],
                      claims_definition: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The claims over seeds with the published code's walk and fidelity (``claims``) beside
    the definitions' (``claims_definition``), one row per (claim, task): the units that hold
    after Holm's correction (and, in brackets, by their own intervals, uncorrected) and the
    verdict in each mode."""
    if len(claims) != len(claims_definition):
        raise ValueError(f"claims ({len(claims)}) and claims_definition "
                         f"({len(claims_definition)}) must pair up row by row")
    return [{"claim": c["claim"], "task": c["task"], "seeds": c["seeds"],
             "published code: holds in": _holds(c),
             "verdict: published code": verdict_cell(c["verdict"], c.get("condition", "")),
             "definitions: holds in": _holds(d),
             "verdict: definitions": verdict_cell(d["verdict"], d.get("condition", ""))}
            for c, d in zip(claims, claims_definition, strict=True)]
