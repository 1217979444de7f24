"""Chapter 10's verdicts: each claim of :data:`~.as_defined.CLAIMS` judged per task and as
a whole by the book's one rule (:mod:`.statistics`, the functions chapter 12 uses: a
significant reversal in a tested task fails the claim), the table that shows them and the
recorded verdict indices. The measures and rows they read are :mod:`.as_defined`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ... import ranks
from ..verdicts import HOLDING, Verdict
from ..verdicts import cell as verdict_cell
from ..verdicts import condition as verdict_condition
from ..words import fmt_p
from .as_defined import (
    ALL_TASKS,
    CLAIMS,
    ROLLOUT_CONDITIONS,
    ROLLOUT_HOLDS,
    attention_carries_margin,
    chapter_family,
    proxy_order_rho,
    seeds_verdict,
    uses_attention,
)
from .statistics import (
    across_tasks,
    both_modes,
    claim_over_units,
    modes_condition,
    rank_condition,
    threshold_verdict,
)


def _fmt_seeds(tests: Sequence[Mapping[str, Any]], verdict: Verdict) -> str:
    """Seed 42's test in words and, with other seeds, how many of them hold and fail."""
    first = _fmt_test(tests[0])
    if len(tests) == 1:
        return first
    vs = [Verdict.parse(t["verdict"]) for t in tests]
    held, failed = sum(v in HOLDING for v in vs), sum(v is Verdict.FAILS for v in vs)
    return (f"seed 42: {first}; over {len(tests)} seeds, {held} "
            f"{'holds' if held == 1 else 'hold'}, {failed} {'fails' if failed == 1 else 'fail'}, "
            f"{sum(v is Verdict.NOT_TESTABLE for v in vs)} cannot test it")


def _seeds_condition(tests: Sequence[Mapping[str, Any]]) -> str:
    """The condition of a rank claim over seeds (:func:`seeds_verdict` of ``tests``) in a
    few words: empty unless it holds with conditions; then in how many of the seeds that
    test it it holds, "weakly" where some of those hold only weakly
    (:func:`~bparallel.book.section4.statistics.rank_condition`)."""
    if seeds_verdict(tests) is not Verdict.HOLDS_WITH_CONDITIONS:
        return ""
    vs = [Verdict.parse(t["verdict"]) for t in tests]
    testable = [v for v in vs if v is not Verdict.NOT_TESTABLE]
    held = sum(v in HOLDING for v in testable)
    weak = ", weakly" if Verdict.HOLDS_WITH_CONDITIONS in testable else ""
    return f"in {held} of {len(testable)} seeds tested{weak}"


def _fmt_test(test: Mapping[str, float]) -> str:
    if not test.get("cells"):
        return "no reliable cell"
    holm = test.get("p_holm")
    return (f"median ρ {test['median']:.2f} over {test['cells']} "
            f"cell{'s' * (test['cells'] != 1)} (permutation p {fmt_p(test['p'])}"
            + (f", Holm p {fmt_p(holm)})" if holm is not None else ")"))


def claim_verdicts(rows: Sequence[Mapping[str, Any]], heads: Sequence[Mapping[str, Any]],
                   knockouts: Sequence[Mapping[str, Any]], layers: Sequence[Mapping[str, Any]],
                   head_tests: Sequence[Mapping[str, Any]],
                   pairs: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The chapter's verdict rows: per claim of :data:`CLAIMS`, one row per task and, where
    several tasks were measured, one row for the claim as a whole (:func:`across_tasks`; task
    :data:`ALL_TASKS`). Each row: ``slug``, ``claim``, ``task``, ``verdict``
    (:class:`Verdict`), the published code's answer and the definitions' (``published``,
    ``defined``; "—" where the published code computes nothing of the kind) and the
    ``evidence``.

    ``rows``: :func:`definition_rows`; ``heads``: :func:`heads_verdicts`; ``knockouts``:
    :func:`knockout_rows`; ``layers``: :func:`layer_claims`; ``head_tests``:
    :func:`~bparallel.book.section4.statistics.head_claims`; ``pairs``: :func:`pair_rows`
    (Remark 3.7 is judged on complementarity: in how many of a task's models it is positive
    beyond its interval and above its noise floor). Every threshold is decided by
    :func:`bparallel.ranks.reaches`.
    """
    out: list[dict[str, Any]] = []
    tasks = sorted({r["task"] for r in rows})
    head_tests, layers, _ = chapter_family(head_tests, layers)

    def add(slug: str, per_task: Mapping[str, tuple[Verdict, str, str, str]], evidence: str,
            overall: tuple[str, str] | None = None, pooled: Sequence[str] | None = None
            ) -> None:
        for task, (verdict, published, defined, condition) in per_task.items():
            out.append({"slug": slug, "claim": CLAIMS[slug], "task": task, "verdict": verdict,
                        "condition": (condition if verdict is Verdict.HOLDS_WITH_CONDITIONS
                                      else ""),
                        "published": published, "defined": defined, "evidence": evidence})
        if overall is not None and len(per_task) > 1:
            judged = {t: v for t, v in per_task.items() if pooled is None or t in pooled}
            by_task = {t: v[0] for t, v in judged.items()}
            verdict = across_tasks(list(by_task.values()))
            if len(judged) > 1:
                condition = verdict_condition(verdict, by_task, "task",
                                              {t: v[3] for t, v in judged.items()})
            elif judged:  # one task judged: its own condition, named
                (task, v), = judged.items()
                condition = (f"only {task} ({v[3]})" if verdict is
                             Verdict.HOLDS_WITH_CONDITIONS else f"on {task}")
            else:
                condition = ""
            set_aside = [t for t in per_task if t not in judged]
            note = reversal_note(verdict, by_task)
            if set_aside:
                note = "; ".join(w for w in (note, f"{', '.join(set_aside)} set aside: needs "
                                             "no attention") if w)
            out.append({"slug": slug, "claim": CLAIMS[slug], "task": ALL_TASKS,
                        "verdict": verdict,
                        "condition": "; ".join(w for w in (condition, note) if w),
                        "published": overall[0], "defined": overall[1],
                        "evidence": evidence})

    mixing = {}
    for task in tasks:
        mine = [v for v in heads if v["task"] == task]
        faster = sum(v["faster"] for v in mine)
        # one model per head count (seed 42): a slower layer is no tested reversal, so no
        # unit counts against the claim here (chapter 11 tests the change across seeds)
        mixing[task] = (claim_over_units(faster, 0, len(mine)), "see chapter 08",
                        f"16 heads faster in {faster} of {len(mine)} layers (one seed: "
                        "no reversal tested)",
                        f"in {faster} of {len(mine)} layers")
    add("mixing", mixing, "{numref}`tbl-heads-verdicts`", ("per task", "per task"))

    order_rho = proxy_order_rho(rows)
    add("proxy", {ALL_TASKS: (
        threshold_verdict(order_rho, 2.0, 0.7), "— (never computes Definition 2.7)",
        f"same order (Spearman {order_rho:.2f} over (model, layer) cells); up to "
        f"{max(r['starts_beyond_cutoff'] for r in rows):.0%} of starts beyond $M$",
        "in order, truncated at $M$")},
        "{numref}`tbl-definition-vs-proxy`")

    rollout = {}
    for task in tasks:
        rho = ranks.median([r["rollout_fidelity_rho"] for r in rows if r["task"] == task])
        rollout[task] = (threshold_verdict(rho, ROLLOUT_HOLDS, ROLLOUT_CONDITIONS), "—",
                         f"median Spearman {fmt_beside(rho, ROLLOUT_HOLDS)} with attention "
                         "rollout",
                         f"loosely (median ρ below {ROLLOUT_HOLDS:g})")
    add("rollout", rollout, "{numref}`tbl-rollout-fidelity`", ("—", "per task"))

    used = {}
    for task in tasks:
        mine = [r for r in knockouts if r["task"] == task]
        needs = sum(uses_attention(r) for r in mine)
        # a model whose accuracy and margin both ignore its attention contradicts the claim;
        # one whose margin alone needs it (redundant, not unused) neither holds nor reverses
        unused = sum(not uses_attention(r) and not attention_carries_margin(r) for r in mine)
        acc = (min(r["all.accuracy"] for r in mine), max(r["all.accuracy"] for r in mine))
        margin = (min(r["none.margin"] for r in mine), max(r["none.margin"] for r in mine))
        cut = (min(r["all.margin"] for r in mine), max(r["all.margin"] for r in mine))
        verdict = claim_over_units(needs, unused, len(mine))
        text = (f"{needs} of {len(mine)} models need attention, {unused} use none; with "
                f"none, accuracy {_span(acc, '.1%')}, margin {_span(margin, '.1f')} → "
                f"{_span(cut, '.1f')} logits")
        used[task] = (verdict, "the same knockouts", text,
                      f"in {needs} of {len(mine)} models")
    add("uses_attention", used, "{numref}`tbl-knockouts`",
        ("the same knockouts", "per task"))
    # the tasks whose accuracy needs attention: the book's tests of heads and layers are
    # judged over these only (a task whose accuracy needs none says nothing of which heads
    # or layers it needs; its own row is shown, never pooled)
    attending = [t for t, v in used.items() if v[0] in HOLDING]

    per_head = {}
    for task in tasks:
        # seed 42's test (no "seed") first, then the other seeds' (seeds_verdict over all)
        tests = {r: sorted((t for t in head_tests if t["task"] == task and t["ranking"] == r),
                           key=lambda t: t.get("seed", 0))
                 for r in ("fidelity.paper", "fidelity.definition")}
        if not all(tests.values()):
            continue
        paper, defined = (seeds_verdict(tests[r]) for r in ("fidelity.paper",
                                                             "fidelity.definition"))
        per_head[task] = (both_modes(paper, defined),
                          _fmt_seeds(tests["fidelity.paper"], paper),
                          _fmt_seeds(tests["fidelity.definition"], defined),
                          modes_condition(paper, defined))
    add("heads", per_head, "{numref}`tbl-ablation`", ("per task", "per task"), attending)

    per_layer = {}
    for task in tasks:
        # seed 42's test (no "seed") first, then the other seeds' (seeds_verdict over all)
        tests = {m: sorted((t for t in layers if t["task"] == task and t["measure"] == m),
                           key=lambda t: t.get("seed", 0)) for m in ("fidelity", "speed")}
        if not tests["fidelity"]:
            continue
        verdict = seeds_verdict(tests["fidelity"])
        condition = (rank_condition(tests["fidelity"][0]) if len(tests["fidelity"]) == 1
                     else _seeds_condition(tests["fidelity"]))
        per_layer[task] = (verdict, "—",
                           f"fidelity: {_fmt_seeds(tests['fidelity'], verdict)}; −T_mix: "
                           f"{_fmt_seeds(tests['speed'], seeds_verdict(tests['speed']))}",
                           condition)
    add("layers", per_layer, "{numref}`tbl-layers`", ("—", "per task"), attending)

    per_pair = {}
    for task in tasks:
        comp = [r for r in pairs if r["task"] == task and r["effect"] == "complementarity"]
        red = [r for r in pairs if r["task"] == task and r["effect"] == "redundancy"]
        if not comp:
            continue
        up = sum(r["reliable"] and r["mean"] - r["half_width"] > 0 for r in comp)
        # a model whose complementarity lies below 0 beyond its interval reverses the claim
        down = sum(r["mean"] + r["half_width"] < 0 for r in comp)
        verdict = claim_over_units(up, down, len(comp))
        span = _span((min(r["mean"] for r in comp), max(r["mean"] for r in comp)), "+.3f")
        rspan = _span((min(r["mean"] for r in red), max(r["mean"] for r in red)), "+.3f")
        per_pair[task] = (verdict, "the same ablations",
                          f"complementarity positive in {up} of {len(comp)} models, "
                          f"negative (reversed) in {down} ({span} logits); redundancy "
                          f"{rspan} logits",
                          f"in {up} of {len(comp)} models")
    add("pairs", per_pair, "{numref}`tbl-synergy`", ("the same ablations", "per task"))
    return out


def reversal_note(verdict: Verdict, by_task: Mapping[str, Verdict]) -> str:
    """The note of a claim's verdict over tasks that *fails* while some task does not: the
    tasks that reverse it, "reversed in cycle" (a reversal is never outvoted,
    :func:`~bparallel.book.section4.statistics.across_tasks`, and its cell names where);
    else empty."""
    if Verdict.parse(verdict) is not Verdict.FAILS:
        return ""
    failing = [t for t, v in by_task.items() if Verdict.parse(v) is Verdict.FAILS]
    return "" if len(failing) == len(by_task) else "reversed in " + ", ".join(failing)


def fmt_beside(value: float, other: float, decimals: int = 2) -> str:
    """``value`` with ``decimals`` decimals, more where it would otherwise read as ``other``
    (a median of 0.6996 beside a threshold of 0.7 reads "0.6996", never "0.70": a verdict's
    words never contradict its number); at most 6 decimals."""
    for d in range(decimals, 7):
        if value == other or f"{value:.{d}f}" != f"{other:.{d}f}":
            return f"{value:.{d}f}"
    return f"{value:.6f}"


def _span(bounds: tuple[float, float], fmt: str) -> str:
    """``"a"`` when both bounds read the same, else ``"a to b"`` (never "between 100% and
    100%")."""
    lo, hi = (format(b, fmt) for b in bounds)
    return lo if lo == hi else f"{lo} to {hi}"


def verdict_results(verdicts: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The recorded verdicts of :func:`claim_verdicts`: ``verdict.<slug>.<task>``, the index
    of the verdict in :class:`Verdict` (what the introduction's findings are checked
    against)."""
    order = list(Verdict)
    return {f"verdict.{v['slug']}.{v['task']}": order.index(Verdict.parse(v["verdict"]))
            for v in verdicts}


def verdict_table(verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`claim_verdicts` as the chapter shows them."""
    return [{"claim (Section 4)": v["claim"], "task": v["task"],
             "verdict": verdict_cell(v["verdict"], v.get("condition", "")),
             "published code": v["published"], "as defined": v["defined"],
             "evidence": v["evidence"]} for v in verdicts]
