"""Chapter 12's controlled experiment: heads or width, on fresh data.

The graph tasks' models of :func:`bparallel.transformer.train.train` train on new sequences
every step, to convergence or a step budget, in three arms that separate head count from
head size (:data:`~bparallel.transformer.design.ARMS`): *fixed width* (head size ``64/H``,
the paper's design, the same parameter count), *fixed head size* (16 dimensions per head,
the attention's inner width ``16H``) and *fixed attention width* (an inner width of 256
split into ``H`` heads: the same parameters and attention width at every head count). Every
shipped run's manifest entry holds its learning curve and the proxies recorded through
training (:func:`~bparallel.transformer.learning.training_probe` at log-spaced steps), so
this module reads manifests only: no model is loaded or measured, and the chapter's part
that uses it takes a second.

What it computes, per task and arm:

- :func:`learning_rows`: did each configuration learn (the task's threshold within the
  budget), in how many steps (right-censored: a run that never reaches the threshold has no
  learning time, :func:`~bparallel.transformer.learning.steps_to_threshold`), and its area
  under the learning curve;
- :func:`speed_tests`: do more heads learn faster? Per seed, Spearman's rho between the head
  count and minus the steps to the threshold, censored runs ranked last (tied), tested
  against chance by the exact test of the mean rho over the seeds (Page's trend test,
  :func:`~.rank_tests.exact_rank_test`);
- :func:`final_rows` and :func:`bparallel.book.section4.graph_tasks.head_count_change`: the
  change of the proxies and of the accuracy from 1 to 16 heads, paired by seed;
- :func:`~.graph_early.prediction_tests` (:mod:`~.graph_early`, re-exported here with the
  design's names of :mod:`~.graph_design` for the chapter): do the proxies, recorded
  *before* any model of the task has learned it (:func:`~.graph_early.early_step`), rank
  the models by their later learning speed, across head counts with the arm held fixed
  (cells: seeds) and within a configuration across seeds (cells: configurations);
- :func:`claim_verdicts`: the chapter's verdicts, per arm and combined.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...transformer.arms import ARM_HEAD_SIZE, ARM_INNER_WIDTH
from ...transformer.design import ARMS, HEADS
from ...transformer.learning import LEARNED_IN_A_ROW, learning_time
from ..verdicts import HOLDING, Outcome, Verdict, only
from ..verdicts import cell as verdict_cell
from ..verdicts import condition as verdict_condition
from ..words import fmt_fixed, fmt_p, fmt_sig
from .graph_common import accuracy_at, common_step
from .graph_design import (
    DESIGN_SEEDS,
    configurations,
    design_configurations,
    design_models,
    grid_rows,
)
from .graph_early import (
    EARLY_MARGIN,
    PROXIES,
    PROXY_NAMES,
    early_step,
    prediction_table,
    prediction_tests,
    probe_at,
    proxy_curves,
)
from .graph_learning import learning_counts, learning_rows, outcome_counts
from .graph_tasks import (
    MIN_PAIRED_SEEDS,
    SUMMARY,
    change_evidence,
    head_count_change,
    no_attention_ceiling,
    tally,
)
from .models import ARM_NAMES, FreshRuns
from .rank_tests import exact_rank_test
from .statistics import (
    across_tasks,
    both_modes,
    family_verdicts,
    fmt_decided,
    over_tasks,
    rank_claim_verdict,
)

# --------------------------------------------------------------------------- learning speed


def _speed_key(t: int | None) -> float:
    """Minus the learning time, a run that never learned ranked below every one that did."""
    return -math.inf if t is None else -float(t)


def speed_tests(runs: FreshRuns, task: str) -> dict[str, dict[str, Any]]:
    """Do more heads learn ``task`` faster? Per arm: per complete seed, Spearman's rho
    between the head count and minus the steps to the threshold (runs that never learned
    tied last), their mean and its exact test (:func:`~.rank_tests.exact_rank_test`)
    and its verdict (:func:`bparallel.book.section4.statistics.rank_claim_verdict`: at least three
    seeds)."""
    out = {}
    for arm in ARMS:
        pairs = []
        for seed in runs.seeds(task, arm):
            by = {e["heads"]: e for e in runs.of(task, arm) if e["seed"] == seed}
            keys = [_speed_key(learning_time(by[h])) for h in HEADS]
            finite = [k if math.isfinite(k) else -1e300 for k in keys]
            pairs.append((np.array(HEADS, float), np.array(finite)))
        test = exact_rank_test(pairs)
        out[arm] = {**test, "seeds": len(pairs), "verdict": rank_claim_verdict(test)}
    return out


def final_rows(runs: FreshRuns, task: str, arm: str) -> list[dict[str, Any]]:
    """Per run of ``task`` in ``arm``: the last probe (:func:`probe_at`) with the held-out
    accuracy (on the fixed held-out set, ``accuracy``) at the task's common step
    (:func:`~.graph_common.common_step`, every run read at one step), keyed like chapter
    12's model rows (``task``, ``heads``, ``seed``), as
    :func:`bparallel.book.section4.graph_tasks.head_count_change` takes them."""
    step = common_step(runs, task)
    return [{**probe_at(e), "task": task, "heads": e["heads"], "seed": e["seed"],
             "accuracy": accuracy_at(e, step)} for e in runs.of(task, arm)]


#: The changes from 1 to 16 heads judged per arm, by claim: the quantities (published code,
#: as defined) or one quantity.
CHANGE_CLAIMS = {"mixing": ("mixing.paper", "mixing.definition"), "t_mix": ("t_mix",),
                 "fidelity": ("fidelity.paper", "fidelity.definition"),
                 "accuracy": ("accuracy",)}


def changes(runs: FreshRuns, level: float = 0.95) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per arm and quantity of :data:`CHANGE_CLAIMS`: the change from 1 to 16 heads per task,
    paired by seed (:func:`bparallel.book.section4.graph_tasks.head_count_change`)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for arm in ARMS:
        rows = [r for task in runs.profiles for r in final_rows(runs, task, arm)]
        out[arm] = {q: head_count_change(rows, q, level=level)
                    for qs in CHANGE_CLAIMS.values() for q in qs}
    return out


# --------------------------------------------------------------------------- verdicts

#: The chapter's claims, by slug (the results key ``verdict.<slug>``): one text per claim.
CLAIMS = {
    "mixing": "More heads mix faster (Algorithm 1, the paper's Tables 1-2)",
    "t_mix": "More heads mix faster (Definition 2.7)",
    "fidelity": "More heads keep more fidelity (the paper's Tables 3-4)",
    "accuracy": "More heads learn the task better",
    "speed": "More heads learn the task faster",
    "rank_speed": "Early proxies rank head counts by learning speed",
    "rank_within": "Early proxies rank seeds by learning speed",
}


#: How the evidence names the two modes of a quantity.
MODE_WORDS = {"paper": "published code", "definition": "as defined"}
#: How the family table names the quantities of :data:`CHANGE_CLAIMS`.
SUMMARY_WORDS = {"mixing.paper": "Algorithm 1, published code",
                 "mixing.definition": "Algorithm 1, as defined", "t_mix": "Definition 2.7",
                 "fidelity.paper": "fidelity, published code",
                 "fidelity.definition": "fidelity, as defined", "accuracy": "accuracy"}

#: The unit a change of each quantity of :data:`CHANGE_CLAIMS` is read in, and the factor
#: from its stored value: steps of the walk for Algorithm 1 (its mean walk length) and
#: Definition 2.7, percentage points for fidelity (stored in percent, Algorithm 2) and for
#: the held-out accuracy (stored as a fraction).
CHANGE_UNITS = {"mixing.paper": ("steps", 1.0), "mixing.definition": ("steps", 1.0),
                "t_mix": ("steps", 1.0), "fidelity.paper": ("points", 1.0),
                "fidelity.definition": ("points", 1.0), "accuracy": ("points", 100.0)}


def _change_verdict(ch: Mapping[str, Sequence[Mapping[str, Any]]], quantities: Sequence[str]
                    ) -> Verdict:
    if len(quantities) == 2:
        return both_modes(tally(ch[quantities[0]]), tally(ch[quantities[1]]))
    return tally(ch[quantities[0]])


#: The two modes of a rank claim's proxies: the published code's (Algorithm 1 and 2 as
#: published) and the definitions' (Algorithm 1 and 2 as defined, Definition 2.7).
RANK_MODES = (("mixing.paper", "fidelity.paper"),
              ("mixing.definition", "fidelity.definition", "t_mix"))


def _mode_decision(tests: Mapping[str, Mapping[str, Any]], prefix: str,
                   names: Sequence[str]) -> tuple[Verdict, list[str]]:
    """One mode's answer to a rank claim and the proxies that decide it: *fails* when any
    of its proxies ranks significantly the wrong way (those proxies: a reversal is never
    outvoted by a proxy that ranks the claimed way); else the best verdict of the proxies
    that rank the claimed way (those proxies); else the proxies' common verdict
    (:func:`~.statistics.across_tasks`) and no proxy."""
    order = list(Verdict)
    vs = {n: tests[f"{prefix}{n}"]["verdict"] for n in names}
    failing = [n for n, v in vs.items() if v is Verdict.FAILS]
    if failing:
        return Verdict.FAILS, failing
    good = [n for n, v in vs.items() if v in HOLDING]
    if good:
        return min((vs[n] for n in good), key=order.index), good
    return across_tasks(list(vs.values())), []


def _rank_verdict(tests: Mapping[str, Mapping[str, Any]], prefix: str) -> Verdict:
    """Both answers of a rank claim (:data:`RANK_MODES`, :func:`_mode_decision`),
    combined by :func:`~.statistics.both_modes`; the evidence names the proxies that
    decide each (:func:`_rank_evidence`)."""
    published, defined = (_mode_decision(tests, prefix, names)[0] for names in RANK_MODES)
    return both_modes(published, defined)


def _rank_evidence(tests: Mapping[str, Mapping[str, Any]], prefix: str) -> str:
    """The proxies that decide a rank claim's verdict in one task (:func:`_mode_decision`
    of each mode), each with its mean rho, its side and its Holm-corrected p-value; when no
    proxy resolves, that none does and the nearest (the smallest p-value)."""
    def p_words(t: Mapping[str, Any]) -> str:
        return f"Holm p {fmt_p(t['p_holm'])}" if t.get("p_holm") is not None else fmt_decided(t)

    deciding = [n for names in RANK_MODES for n in _mode_decision(tests, prefix, names)[1]]
    if deciding:
        return "; ".join(
            f"{PROXY_NAMES[n]}: mean ρ {fmt_fixed(tests[prefix + n]['mean'], 2)} "
            f"{'as claimed' if tests[prefix + n]['verdict'] in HOLDING else 'against the claim'}"
            f", {p_words(tests[prefix + n])}" for n in deciding)
    tested = [n for n in RANK_PROXIES
              if tests[prefix + n]["cells"] and not math.isnan(tests[prefix + n]["p"])]
    if not tested:
        return "no proxy could be tested"

    def nearness(n: str) -> tuple[float, float]:
        p_holm = tests[prefix + n].get("p_holm")
        return (1.0 if p_holm is None else p_holm), tests[prefix + n]["p"]

    n = min(tested, key=nearness)
    return (f"no proxy resolves; the nearest, {PROXY_NAMES[n]}: mean ρ "
            f"{tests[prefix + n]['mean']:.2f}, {p_words(tests[prefix + n])}")


#: The proxies whose early-step tests the rank claims read (published code, as defined).
RANK_PROXIES = tuple(n for names in RANK_MODES for n in names)


def chapter_family(ch: Mapping[str, Mapping[str, Sequence[dict[str, Any]]]],
                   speed: Mapping[str, Mapping[str, dict[str, Any]]],
                   pred: Mapping[str, Mapping[str, dict[str, Any]]]) -> int:
    """Holm's correction over the chapter's family, every test its verdict table reads
    (:func:`~.statistics.family_verdicts`): the changes from 1 to 16 heads of every claim,
    arm, task and mode with at least :data:`~.graph_tasks.MIN_PAIRED_SEEDS` paired seeds,
    the speed tests and the early-proxy rank tests of :data:`RANK_PROXIES`. Sets each
    change's ``outcome`` and each rank test's ``verdict`` at its corrected p-value; returns
    the family's size."""
    changes_in = [c for by_q in ch.values() for cs in by_q.values() for c in cs]
    rank_in = [s for by_arm in speed.values() for s in by_arm.values()]
    rank_in += [t[k] for t in pred.values() for k in t
                if k.split(".", 2)[-1] in RANK_PROXIES or k.split(".", 1)[-1] in RANK_PROXIES]
    return family_verdicts(changes_in, rank_in, lambda c: SUMMARY[c["quantity"]],
                           MIN_PAIRED_SEEDS)


def chapter_tests(runs: FreshRuns, level: float = 0.95) -> dict[str, Any]:
    """Every test the chapter's verdicts read, corrected together (:func:`chapter_family`):
    ``changes`` (:func:`changes`), ``speed`` and ``prediction`` per task, and ``family``,
    the family's size."""
    ch = changes(runs, level)
    speed = {t: speed_tests(runs, t) for t in runs.profiles}
    pred = {t: prediction_tests(runs, t) for t in runs.profiles}
    return {"changes": ch, "speed": speed, "prediction": pred,
            "family": chapter_family(ch, speed, pred)}


def family_table(tests: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The chapter's family of tests, one row each (the tests Holm's correction runs over,
    and those left out because they could not decide): what is tested, task, arm, seeds or
    cells, the effect found (a change in its unit, :data:`CHANGE_UNITS`; a mean ρ never
    "-0.00"), the smallest effect the test could find at the level of
    Holm's first step (a change at 80% power; a median ρ; *cannot decide* where even the
    best data would fall short), the two-sided p-value, the Holm-adjusted one and what it
    says."""
    rows = []
    for arm, by_q in tests["changes"].items():
        for q, cs in by_q.items():
            for c in cs:
                if c["seeds"] < MIN_PAIRED_SEEDS:
                    continue
                small = c.get("smallest")
                unit, factor = CHANGE_UNITS[q]
                rows.append({"test": f"1 → 16 heads: {SUMMARY_WORDS.get(q, q)}",
                             "task": c["task"], "arm": ARM_NAMES[arm],
                             "seeds or cells": c["seeds"],
                             "effect": f"{fmt_sig(c['change'] * factor, 3, sign=True)} {unit}",
                             "smallest it could find": (
                                 "—" if small is None else f"±{fmt_sig(small * factor)} {unit}"),
                             "p": fmt_p(c.get("p")), "Holm p": fmt_p(c.get("p_holm")),
                             "outcome": str(c["outcome"])})
    for task, by_arm in tests["speed"].items():
        for arm, t in by_arm.items():
            if t["cells"]:
                rows.append(_rank_row("learning speed vs head count", task, ARM_NAMES[arm], t))
    for task, by_key in tests["prediction"].items():
        for key, t in by_key.items():
            kind, _, name = key.rpartition(".")
            if name not in RANK_PROXIES or not t["cells"]:
                continue
            arm = ARM_NAMES[kind.split(".")[1]] if kind.startswith("across") else "all"
            where = "across head counts" if kind.startswith("across") else "within configurations"
            rows.append(_rank_row(f"early {PROXY_NAMES[name]}, {where}", task, arm, t))
    return rows


def _rank_row(test: str, task: str, arm: str, t: Mapping[str, Any]) -> dict[str, Any]:
    small = t.get("smallest")
    return {"test": test, "task": task, "arm": arm, "seeds or cells": t["cells"],
            "effect": f"mean ρ {fmt_fixed(t['mean'], 2, sign=True)}",
            "smallest it could find": ("cannot decide" if small is None
                                       else f"mean |ρ| ≥ {small:.2f}"),
            "p": fmt_p(t.get("p")), "Holm p": fmt_p(t.get("p_holm")),
            "outcome": t["verdict"].value if hasattr(t["verdict"], "value") else t["verdict"]}


#: The verdict rows' arm for the arms together.
ALL_ARMS = "all arms"


def arms_evidence(by_arm: Mapping[str, Verdict],
                  conditions: Mapping[str, str] | None = None) -> str:
    """The evidence of a claim's row for the arms together: each arm's verdict, in the
    order of ``by_arm`` (arm keys of :data:`~.models.ARM_NAMES`), with its condition from
    ``conditions`` where it holds with conditions, an arm that cannot test it yet named as
    set aside (:func:`~.statistics.over_tasks`)."""
    def one(arm: str, v: Verdict) -> str:
        condition = (conditions or {}).get(arm, "")
        return (f"{ARM_NAMES[arm]}: {v.value}"
                + (f" ({condition})" if condition and v is Verdict.HOLDS_WITH_CONDITIONS
                   else " (set aside)" if v is Verdict.NOT_TESTABLE else ""))
    return "; ".join(one(a, v) for a, v in by_arm.items())


def claim_verdicts(runs: FreshRuns, level: float = 0.95,
                   tests: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per claim of :data:`CLAIMS` and arm: the verdict and its evidence; per claim, one row
    with ``arm`` :data:`ALL_ARMS` whose verdict combines the arms
    (:func:`bparallel.book.section4.statistics.across_tasks`). Claims are judged per task: a
    task that cannot test a claim yet (fewer than three paired seeds, or models not all
    shipped in an arm) is named *not testable* in the evidence and set aside
    (:func:`~.graph_tasks.tally`, :func:`~.statistics.over_tasks`), so it never withholds
    the verdict of the tasks that did test it. ``tests``: :func:`chapter_tests` of ``runs``
    (computed when not given)."""
    tests = chapter_tests(runs, level) if tests is None else tests
    ch, speed, pred = tests["changes"], tests["speed"], tests["prediction"]
    family_size = tests["family"]
    out = []
    for slug, claim in CLAIMS.items():
        per_arm = {}
        modes = len(CHANGE_CLAIMS.get(slug, ())) > 1  # judged in both modes
        # rank_within is one test over every arm's configurations: measured once, ALL_ARMS
        for arm in (ARMS if slug != "rank_within" else ARMS[:1]):
            if slug in CHANGE_CLAIMS:
                qs = CHANGE_CLAIMS[slug]
                verdict = _change_verdict(ch[arm], qs)
                evidence = "; ".join(f"{_place(c, modes)}: {change_evidence(c)}"
                                     for q in qs for c in ch[arm][q]) \
                    or "no task with 1 and 16 heads shipped"
                where = _holding_places(ch[arm], qs)
            elif slug == "speed":
                per_task = {t: s[arm] for t, s in speed.items() if s[arm]["cells"]}
                verdict = over_tasks([s["verdict"] for s in per_task.values()])
                evidence = "; ".join(f"{t}: mean ρ {fmt_fixed(s['mean'], 2)} over {s['cells']} "
                                     f"seed{'s' * (s['cells'] > 1)} ({fmt_decided(s)})"
                                     for t, s in per_task.items()) or "no complete seed"
                where = [t for t, s in per_task.items() if s["verdict"] in HOLDING]
            else:
                prefix = f"across.{arm}." if slug == "rank_speed" else "within."
                per_task = {t: _rank_verdict(p, prefix) for t, p in pred.items()
                            if p[f"{prefix}fidelity.definition"]["cells"]}
                verdict = over_tasks(list(per_task.values()))
                evidence = "; ".join(f"{t}: {v.value} ({_rank_evidence(pred[t], prefix)})"
                                     for t, v in per_task.items()) or \
                    "fewer than three seeds per configuration"
                where = [t for t, v in per_task.items() if v in HOLDING]
            per_arm[arm] = (verdict, evidence, where)
        if slug == "rank_within":
            (verdict, evidence, where), = per_arm.values()
            out.append({"slug": slug, "claim": claim, "arm": ALL_ARMS, "verdict": verdict,
                        "evidence": evidence, "condition": condition_words(verdict, where)})
        else:
            for arm, (verdict, evidence, where) in per_arm.items():
                out.append({"slug": f"{slug}.{arm}", "claim": claim, "arm": ARM_NAMES[arm],
                            "verdict": verdict, "evidence": evidence,
                            "condition": condition_words(verdict, where)})
            by_arm = {a: v for a, (v, _, _) in per_arm.items()}
            said = {a: condition_words(v, where) for a, (v, _, where) in per_arm.items()}
            verdict = over_tasks(list(by_arm.values()))
            within = "tasks and modes" if modes else "tasks"
            out.append({"slug": slug, "claim": claim, "arm": ALL_ARMS, "verdict": verdict,
                        "evidence": arms_evidence(by_arm, said),
                        "condition": arms_condition(verdict, by_arm, said, within)})
    for row in out:
        row["family"] = family_size
    return out


def _holding_places(changes: Mapping[str, Sequence[Mapping[str, Any]]],
                    quantities: Sequence[str]) -> list[str]:
    """Where the changes of ``quantities`` go the claimed way, in a few words: a task, with
    the mode when the claim is judged in several and it holds in only some of them
    ("induction, published code"); a task where it holds in every mode reads once
    ("induction")."""
    held: dict[str, list[Mapping[str, Any]]] = {}
    for q in quantities:
        for c in changes[q]:
            if c["outcome"] == Outcome.AS_CLAIMED:
                held.setdefault(c["task"], []).append(c)
    return [task if len(cs) == len(quantities) else
            "; ".join(_place(c, len(quantities) > 1) for c in cs)
            for task, cs in held.items()]


def _place(change: Mapping[str, Any], modes: bool) -> str:
    """A change's task, and its mode when the claim is judged in both (``modes``)."""
    return change["task"] + (f", {MODE_WORDS[change['quantity'].split('.')[-1]]}"
                             if modes else "")


def condition_words(verdict: Verdict, where: Sequence[str]) -> str:
    """The condition of a *holds with conditions* verdict in a few words: where the claim
    holds (tasks, modes or arms, ``where``); empty for any other verdict."""
    return only(where) if verdict is Verdict.HOLDS_WITH_CONDITIONS else ""


def arms_condition(verdict: Verdict, by_arm: Mapping[str, Verdict],
                   conditions: Mapping[str, str] | None = None, within: str = "") -> str:
    """The condition of the arms' common verdict (:func:`bparallel.book.verdicts.condition`
    over the arms, with each arm's own condition from ``conditions``): the arms where the
    claim holds (with or without conditions), or, when it holds with conditions in every
    arm, their one condition if they share it, "for some tasks and modes" (``within``) when
    each arm holds only in some of them, else that each arm's row says which."""
    return verdict_condition(verdict, {ARM_NAMES[a]: v for a, v in by_arm.items()}, "arm",
                             {ARM_NAMES[a]: c for a, c in (conditions or {}).items()},
                             within)


def verdict_rows(verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verdict table's rows: claim, arm, verdict (with its condition in a few words
    where it holds with conditions, :func:`condition_words`), evidence."""
    return [{"claim": v["claim"], "arm": v["arm"],
             "verdict": verdict_cell(v["verdict"], v.get("condition", "")),
             "evidence": v["evidence"]} for v in verdicts]


def results(runs: FreshRuns, verdicts: Sequence[Mapping[str, Any]],
            tests: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The chapter's recorded values: ``verdict.<slug>[.<arm>]`` (the verdict's index in
    :class:`Verdict`), the models the design asks of a task (``fresh.design.models``: its
    ``configurations`` x ``seeds``), per
    task the complete seeds of its arm with fewest (``fresh.<task>.seeds_min``), per
    task, arm and head count the runs that learned and the censored
    median steps (``fresh.<task>.<arm>.h<H>.{learned,runs,median_steps}``, the median
    absent when the median run did not learn), per task the early step, the budget and the
    threshold, the change from 1 to 16 heads of every quantity of :data:`CHANGE_CLAIMS`
    with at least three paired seeds and its interval
    (``fresh.<task>.change.<arm>.<quantity>.{mean,low,high}``), how many runs converged,
    reached the budget learned, or did not learn
    (``fresh.<task>.outcome.{converged,budget_reached,not_learned}``), the speed
    tests' mean ρ and p-values, and the early-proxy tests' mean ρ, p-value and
    cells (:func:`prediction_tests`). ``tests``: :func:`chapter_tests` of ``runs``, whose speed and
    early-proxy tests are read rather than run again (run here when not given)."""
    order = list(Verdict)
    out: dict[str, float] = {f"verdict.{v['slug']}": order.index(v["verdict"])
                             for v in verdicts}
    out["fresh.arm_head_size"] = ARM_HEAD_SIZE
    out["fresh.arm_inner_width"] = ARM_INNER_WIDTH
    if verdicts:  # the tests Holm's correction runs over (chapter_family)
        out["fresh.holm_family"] = verdicts[0]["family"]
    out["fresh.design.models"] = design_models()
    out["fresh.design.configurations"] = design_configurations()
    out["fresh.design.seeds"] = len(DESIGN_SEEDS)
    out["fresh.in_a_row"] = LEARNED_IN_A_ROW
    out["fresh.early_margin"] = EARLY_MARGIN
    by_arm = tests["changes"] if tests else changes(runs)
    for arm, by_q in by_arm.items():  # fresh.<task>.change.<arm>.<quantity>.{mean,low,high}
        for q, cs in by_q.items():
            for c in cs:
                if c["seeds"] >= MIN_PAIRED_SEEDS:
                    base = f"fresh.{c['task']}.change.{arm}.{q}"
                    out.update({f"{base}.mean": c["change"], f"{base}.low": c["low"],
                                f"{base}.high": c["high"]})
    out.update(learning_counts(runs))  # fresh.<task>.<arm>.h<H>.{learned,runs}
    for task, p in runs.profiles.items():
        for k in ("budget", "threshold", "eval_every", "patience", "tolerance", "batch_size",
                  "num_heldout", "probe_sequences", "probe_first"):
            out[f"fresh.{task}.{k}"] = p[k]
        out[f"fresh.{task}.models"] = len(runs.of(task))
        # the complete seeds of the arm that has fewest (every head count shipped)
        out[f"fresh.{task}.seeds_min"] = min(len(runs.seeds(task, arm)) for arm in ARMS)
        step = early_step(runs, task)
        if step is not None:
            out[f"fresh.{task}.early_step"] = step
            out[f"fresh.{task}.early_ceiling"] = no_attention_ceiling(task)
        for r in learning_rows(runs, task):
            if r["median_time"] is not None:
                out[f"fresh.{task}.{r['arm']}.h{r['heads']}.median_steps"] = r["median_time"]
        for outcome, n in outcome_counts(runs, task).items():
            out[f"fresh.{task}.outcome.{outcome.replace(' ', '_')}"] = n
        speed = tests["speed"][task] if tests else speed_tests(runs, task)
        for arm, s in speed.items():
            if s["cells"]:
                out[f"fresh.{task}.speed.{arm}.mean"] = s["mean"]
                out[f"fresh.{task}.speed.{arm}.p"] = s["p"]
        if step is not None:
            pred = tests["prediction"][task] if tests else prediction_tests(runs, task)
            for key, t in pred.items():
                if t["cells"]:  # fresh.<task>.{across.<arm>,within}.<proxy>.{mean,p,cells}
                    for k in ("mean", "p", "cells"):
                        out[f"fresh.{task}.{key}.{k}"] = t[k]
    return out


def learning_curves(runs: FreshRuns, task: str) -> dict[tuple[str, int, int], dict[str, list]]:
    """Per run of ``task`` keyed ``(arm, heads, seed)``: its held-out learning curve
    (``step``, ``accuracy`` on the predictable positions)."""
    return {(arm, e["heads"], e["seed"]):
            {"step": list(e["curve"]["step"]),
             "accuracy": list(e["curve"]["heldout_accuracy_predictable"])}
            for arm in ARMS for e in runs.of(task, arm)}


def finite_accuracy(curves: Mapping[tuple[str, int, int], Sequence[float]]
                    ) -> dict[str, dict[int, float]]:
    """Per task and head count, the mean over seeds of the final held-out accuracy of the
    models trained on a finite training set (``curves``: per ``(task, heads, seed)`` the
    accuracy after every epoch, :func:`bparallel.book.section4.graph_tasks.learning_curves`)."""
    out: dict[str, dict[int, list[float]]] = {}
    for (task, heads, _), curve in curves.items():
        out.setdefault(task, {}).setdefault(heads, []).append(float(curve[-1]))
    return {t: {h: float(np.mean(v)) for h, v in sorted(hs.items())} for t, hs in out.items()}


def condition_rows(runs: FreshRuns, finite: Mapping[str, Mapping[int, float]]
                   ) -> list[dict[str, Any]]:
    """Per task of the experiment and head count (the fixed-width arm, the paper's models):
    the final accuracy after 5,000 training sequences (``finite``, :func:`finite_accuracy`)
    beside the fresh-data runs' (mean) and how many of them learned."""
    rows = []
    for task in runs.profiles:
        fresh = {r["heads"]: r for r in learning_rows(runs, task) if r["arm"] == "width"}
        for h in HEADS:
            if h not in finite.get(task, {}) and h not in fresh:
                continue
            f = fresh.get(h)
            rows.append({"task": task, "heads": h,
                         "5,000 sequences: final accuracy (%)":
                             f"{100 * finite[task][h]:.1f}" if h in finite.get(task, {}) else "—",
                         "fresh data: final accuracy (%)":
                             "not trained yet" if f is None else f"{100 * f['accuracy']:.1f}",
                         "fresh data: learned": "—" if f is None else
                             f"{f['learned']} of {f['runs']}"})
    return rows


__all__ = ["ALL_ARMS", "ARM_NAMES", "CHANGE_CLAIMS", "CLAIMS", "DESIGN_SEEDS",
           "EARLY_MARGIN", "MODE_WORDS", "PROXIES", "PROXY_NAMES", "RANK_PROXIES", "SUMMARY_WORDS",
           "arms_condition", "arms_evidence", "changes", "chapter_tests", "claim_verdicts",
           "condition_rows", "configurations", "design_configurations", "design_models",
           "early_step", "family_table", "final_rows", "finite_accuracy", "grid_rows",
           "learning_curves", "prediction_table", "prediction_tests", "probe_at",
           "proxy_curves", "results", "speed_tests", "verdict_rows"]
