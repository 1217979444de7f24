"""What chapter 13 shows and records: the tables of the formation steps, the hypotheses'
tests and the knockouts, the figure's series, and the chapter's results keys (numbers only).

The chapter reads two sets of runs: the probed runs (:func:`~.circuit.probed_entries`, the
per-head probes every 20 steps through the phase change) for the formation steps and
hypotheses H1-H2, and chapter 12's induction runs on fresh data (every arm, five seeds) for
H3, the learning times, and the knockouts of their final weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ...transformer.learning import LEARNING_THRESHOLD, learning_time
from ..verdicts import Outcome, Verdict, cell
from ..words import fmt_p, join_words, unsigned_zero
from . import circuit as c
from .statistics import Interval, claim_over_units, fmt_interval

#: How the chapter's tests are named in its tables.
TEST_NAMES = {
    "H1": "H1: the loss falls after the previous-token head forms",
    "H2a": "H2a: more heads, the previous-token head forms later",
    "H2b": "H2b: more heads, the lag from it to the fall unchanged",
    "H3 count": "H3: at a fixed head size, more heads learn later",
    "H3 size": "H3: at a fixed head count, larger heads learn sooner",
    "S1": "S1: scaled by √W/D, the heads learn sooner",
    "S2": "S2: scaled by √W/D, they learn when one head of the width does",
    "G": "exploratory: the previous-token head's layer mixes faster after the fall "
         "(Algorithm 1 as defined, steps)",
}
#: The verdicts the chapter records (``verdict.<key>``: the index in :class:`Verdict`).
VERDICT_KEYS = {"H1": "waits", "H2": "delay", "H3 count": "count", "H3 size": "size",
                "S1": "scale", "S2": "scale_all", "knockout": "knockout"}
#: Accuracy at or below which a knockout has *collapsed* induction: a tenth, far below the
#: learning threshold of 0.9 (chance on the predictable positions is about 1/256).
COLLAPSE = 0.1


def config_name(heads: int, head_size: int) -> str:
    """``"16 × 16"``: heads × head size."""
    return f"{heads} × {head_size}"


def learning_times(entries: Sequence[Mapping[str, Any]]) -> dict[tuple[int, int, int],
                                                                   int | None]:
    """Chapter 12's learning time of every run, ``(heads, head_size, seed)`` -> step
    (``None``: not learned within the budget)."""
    return {(int(e["heads"]), int(e["head_size"]), int(e["seed"])): learning_time(e)
            for e in entries}


def formation_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per probed run: configuration, seed, and the step each part forms, with the
    layer and head (1-based, as a reader counts) that carries it."""
    def at(step: int | None, where: tuple[int, int] | None) -> str:
        if step is None:
            return "never"
        return f"{step:,} (layer {where[0] + 1}, head {where[1] + 1})"

    return [{"run": f"{config_name(r['heads'], r['head_size'])}, {r['profile']}",
             "seed": r["seed"], "previous-token head forms": at(r["prev"], r["prev_at"]),
             "induction head forms": at(r["ind"], r["ind_at"]),
             "loss falls": c.fmt_step(r["loss"])} for r in rows]


def sensitivity_table(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per probed run and part: the formation step at the chapter's threshold and at
    the lower and the higher one of :data:`~.circuit.THRESHOLDS`, each with its threshold."""
    out = []
    for e in entries:
        for part, steps in c.sensitivity(e).items():
            (tau, step), *others = steps.items()
            low, high = sorted(others)
            out.append({"run": f"{config_name(e['heads'], e['head_size'])}, seed {e['seed']}",
                        "score": part.replace("_", "-"),
                        "chapter's threshold": f"{c.fmt_step(step)} (at {tau:g})",
                        "lower": f"{c.fmt_step(low[1])} (at {low[0]:g})",
                        "higher": f"{c.fmt_step(high[1])} (at {high[0]:g})"})
    return out


def _steps(mean: float, low: float | None, high: float | None, digits: int = 0) -> str:
    """A change in steps with its interval: ``"-1,160 [-1,271, -1,049]"`` (``digits``
    decimals: a mixing time's change is a fraction of a step); never ``"-0.00"``."""
    def one(x: float) -> str:
        return unsigned_zero(f"{x:,.{digits}f}")

    if low is None:
        return one(mean)
    return f"{one(mean)} [{one(low)}, {one(high)}]"


def _unit(t: Mapping[str, Any]) -> str:
    if "fewer" in t:
        return f"{config_name(*t['fewer'])} → {config_name(t['heads'], t['head_size'])}"
    if t["test"] in ("H1", "G"):
        return f"{config_name(t['heads'], t['head_size'])}, {t['profile']}"
    if t["test"] == "S1":
        return f"{config_name(t['heads'], t['head_size'])}: 1/√D → √W/D"
    if t["test"] == "S2":
        return (f"{config_name(1, t['heads'] * t['head_size'])} → "
                f"{config_name(t['heads'], t['head_size'])} at √W/D")
    return f"1 head → {config_name(t['heads'], t['head_size'])}, {t['profile']}"


def _untested(t: Mapping[str, Any]) -> str:
    """Why a test has no outcome: fewer seeds with both steps than it needs (runs not
    shipped yet; a planned test counts as p = 1 until they are)."""
    have = f"{t['seeds']} of the {c.MIN_SEEDS} seeds it needs"
    return (f"pending: {have}, counted as p = 1" if t["family"] in c.STATED
            else f"not testable: {have}")


def _outcome(t: Mapping[str, Any]) -> str:
    """A decided test's outcome as a reader should take it: for a claim of no change
    (:data:`~.circuit.CLAIMS_NONE`, the side a test row states is the one that would fail
    it), a resolved change either way is against it."""
    if t["test"] not in c.CLAIMS_NONE:
        return str(t["outcome"])
    if t["outcome"] in c.RESOLVED:
        return "a change: against the claim of none"
    return f"{t['outcome']} (as claimed: none)"


def tests_table(tests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The chapter's families, one row per test, the primary family first: the change in
    steps (mean over seeds, 95% interval), seeds, p, Holm p (over its family), the outcome,
    and the smallest change each could find (at 80% power at the level of Holm's first
    step)."""
    out = []
    for t in sorted(tests, key=lambda t: c.FAMILIES.index(t["family"])):
        testable = t.get("outcome") is not None
        digits = 2 if t["test"] == "G" else 0  # a mixing time, not a training step
        out.append({
            "family": t["family"],
            "test": TEST_NAMES[t["test"]], "change": _unit(t), "seeds": t["seeds"],
            "steps (95% interval)": ("—" if t["change"] is None
                                     else _steps(t["change"], t["low"], t["high"], digits)),
            "p": fmt_p(t["p"]) if testable and t.get("p") is not None else "—",
            "Holm p": fmt_p(t["p_holm"]) if testable and t.get("p_holm") is not None else "—",
            "outcome": _outcome(t) if testable else _untested(t),
            "smallest it finds": ("—" if t.get("smallest") is None
                                  else f"{t['smallest']:,.{digits}f} steps")})
    return out


def _acc(iv: Interval | None) -> str:
    if iv is None:
        return "—"
    return fmt_interval(100 * iv.mean, None if iv.low is None else 100 * iv.low,
                        None if iv.high is None else 100 * iv.high, 1, floor=0.0)


def knockout_table(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration: heads of each part, and the accuracy (%, mean over seeds
    with its 95% interval) intact, without every previous-token head, without every
    induction head, with the control, and with one head of a part left (the best one)."""
    return [{"model": config_name(s["heads"], s["head_size"]), "seeds": s["seeds"],
             "previous-token heads": f"{s['n_previous_token']:.3g}",
             "induction heads": f"{s['n_induction']:.3g}", "intact": _acc(s["none"]),
             "no previous-token head": _acc(s["previous_token"]),
             "no induction head": _acc(s["induction"]), "control": _acc(s["control"]),
             "one previous-token head left": _acc(s["keep_one_previous_token"]),
             "one induction head left": _acc(s["keep_one_induction"])}
            for s in summary]


def knockout_verdict(summary: Sequence[Mapping[str, Any]]) -> tuple[Verdict, int, int]:
    """The causal check's verdict over configurations (:func:`~.statistics.
    claim_over_units`): a configuration holds when both knockouts collapse induction (the
    upper end of each interval, or the mean with one seed, at most :data:`COLLAPSE`) and
    the control keeps it (its lower end at least the learning threshold); it goes against
    when a knockout keeps the learning threshold. Returns the verdict, the configurations
    that hold and those tested."""
    learned = LEARNING_THRESHOLD["induction"]
    holding = against = 0
    for s in summary:
        ko = [s["previous_token"], s["induction"]]
        top = [iv.mean if iv.high is None else iv.high for iv in ko]
        low = s["control"].mean if s["control"].low is None else s["control"].low
        if all(ranks.reaches(COLLAPSE, t) for t in top) and ranks.reaches(low, learned):
            holding += 1
        elif any(ranks.reaches(iv.mean, learned) for iv in ko):
            against += 1
    return claim_over_units(holding, against, len(summary)), holding, len(summary)


#: The tests each hypothesis of :func:`~bparallel.book.section4.circuit.hypotheses` reads:
#: a configuration bears it out where its first test goes the claimed way and its second
#: (H2b, claimed "no change") resolves no change either way.
PARTS = {"H1": ("H1",), "H2": ("H2a", "H2b"), "H3 count": ("H3 count",),
         "H3 size": ("H3 size",), "S1": ("S1",), "S2": ("S2",)}


def conditions(verdicts: Mapping[str, Verdict], tests: Sequence[Mapping[str, Any]]
               ) -> dict[str, str]:
    """Each hypothesis's condition for its verdict cell (:func:`~bparallel.book.verdicts.cell`):
    for *holds with conditions*, the configurations where it holds, "at 8 × 32" (its tests
    decided by :func:`~bparallel.book.section4.circuit.decide`); empty otherwise."""
    out = {}
    for name, v in verdicts.items():
        out[name] = ""
        if v is not Verdict.HOLDS_WITH_CONDITIONS or name not in PARTS:
            continue
        first, *rest = PARTS[name]
        configs = []
        primary = [t for t in tests if t["family"] == c.stated_family(first)]
        for t in primary:
            if t["test"] != first or t.get("outcome") is None:
                continue
            if (t["outcome"] in c.RESOLVED if first in c.CLAIMS_NONE
                    else t["outcome"] is not Outcome.AS_CLAIMED):
                continue
            twins = [u for u in primary if u["test"] in rest
                     and (u["heads"], u["head_size"]) == (t["heads"], t["head_size"])]
            if all(u.get("outcome") not in c.RESOLVED for u in twins):
                configs.append(config_name(t["heads"], t["head_size"]))
        if not configs:
            raise ValueError(f"verdicts[{name!r}]={v.value!r} but no configuration of tests "
                             "bears it out")
        out[name] = "at " + join_words(configs)
    return out


def _signed(steps: float) -> str:
    """A change in whole steps with its sign, ``"+47"``; one that rounds to 0 reads ``"0"``."""
    return unsigned_zero(f"{steps:+,.0f}")


def _scale_rows(tests: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    return [t for t in tests if t["test"] == name and t["family"] == "scale"]


def scale_words(tests: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The evidence cells of S1 and S2 (:func:`~.circuit.scale_tests`, decided): per
    configuration the change in steps and its Holm p, or how many seeds it waits for."""
    def one(t: Mapping[str, Any]) -> str:
        where = config_name(t["heads"], t["head_size"])
        if t.get("outcome") is None:
            return f"{where}: {t['seeds']} of {c.MIN_SEEDS} seeds"
        return f"{where}: {_signed(t['change'])} steps (Holm p {fmt_p(t['p_holm'])})"

    return {name: "; ".join(one(t) for t in _scale_rows(tests, name)) or "—"
            for name in ("S1", "S2")}


def scale_reading(verdicts: Mapping[str, Verdict], tests: Sequence[Mapping[str, Any]]
                  ) -> str:
    """What the scale control says, in words, from its verdicts (S1, S2) and decided tests:
    pending, the scale is the delay, part of it, or not it."""
    s1, s2 = _scale_rows(tests, "S1"), _scale_rows(tests, "S2")
    if any(t.get("outcome") is None for t in s1 + s2):
        waiting = sum(t.get("outcome") is None for t in s1 + s2)
        return (f"its runs are not all shipped yet: {waiting} of its {len(s1 + s2)} tests "
                "wait for their seeds (each counted as p = 1), so it cannot say yet.")
    changes = join_words([f"{_signed(t['change'])} steps at "
                          f"{config_name(t['heads'], t['head_size'])}" for t in s1])
    behind = join_words([f"{_signed(t['change'])} steps at "
                         f"{config_name(t['heads'], t['head_size'])}" for t in s2])
    smallest = max((t["smallest"] for t in s2 if t.get("smallest") is not None), default=None)
    bound = "" if smallest is None else f" (the tests find a delay of {smallest:,.0f} steps)"
    if verdicts["S1"] in (Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS):
        if verdicts["S2"] is Verdict.HOLDS:
            return (f"scaled by $\\sqrt{{W}}/D$, sixteen heads learn sooner ({changes}), and "
                    f"no delay behind one head of the same width is resolved ({behind}"
                    f"{bound}). The delay is the logits' scale: under Adam, a small head's "
                    "logits move less per step, not its fewer dimensions.")
        return (f"scaled by $\\sqrt{{W}}/D$, sixteen heads learn sooner ({changes}), yet "
                f"they still differ from one head of the same width ({behind}): the logits' "
                "scale is part of the delay, and the rest lies elsewhere (the heads' "
                "capacity, or how the heads share the work).")
    if verdicts["S1"] is Verdict.FAILS:
        return (f"scaled by $\\sqrt{{W}}/D$, sixteen heads learn *later*, not sooner "
                f"({changes}): a step that moves a small head's logits as far as a wide "
                "head's does not make it learn as soon, so a too-small step on the logits is "
                "not what delays small heads. (The gain also raises the queries' effective "
                "rate, to four times the run's at sixteen heads, which may overshoot: the "
                "control rules out the small step, not every effect of the scale.) What the "
                "size leaves them is fewer dimensions per head, the candidate left, which "
                "this chapter does not test.")
    return (f"scaled by $\\sqrt{{W}}/D$, sixteen heads do not learn resolvably sooner "
            f"({changes}): the logits' scale is not what delays small heads; their fewer "
            "dimensions per head are the candidate left, which this chapter does not test.")


def verdicts_table(verdicts: Mapping[str, Verdict], words: Mapping[str, str],
                   where: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The chapter's verdicts, the book's own tests: hypothesis, verdict cell (with its
    condition from ``where``, :func:`conditions`), and the evidence in ``words`` (keyed as
    ``verdicts``)."""
    names = {"H1": "The phase change waits for the previous-token head",
             "H2": "The delay between head counts is that head's formation",
             "H3 count": "The delay follows head count (at a fixed head size)",
             "H3 size": "The delay follows head size (at a fixed head count)",
             "S1": "The logits' scale delays many small heads (scale control)",
             "S2": "The logits' scale is the whole delay (scale control)",
             "knockout": "The heads the scores name carry induction (knockouts)"}
    where = where or {}
    return [{"book's test": names[k], "verdict": cell(v, where.get(k, "")), "evidence": words[k]}
            for k, v in verdicts.items()]


def figure_panels(entries: Sequence[Mapping[str, Any]], seed: int,
                  configs: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    """The figure's panels: for each configuration of ``configs`` with a probed run of
    ``seed`` (the first profile's), the best previous-token and induction scores over the
    layers that can carry each, the probe accuracy, and the formation steps."""
    panels = []
    for h, d in configs:
        mine = [e for e in entries if (e["heads"], e["head_size"], e["seed"]) == (h, d, seed)]
        if not mine:
            continue
        e = mine[0]
        panel: dict[str, Any] = {"title": f"{config_name(h, d)}, seed {seed}", "marks": {}}
        for part in c.THRESHOLDS:
            steps, scores = c.score_series(e, part)
            layers = list(c._layers(part, scores.shape[1]))
            panel[part] = scores[:, layers].reshape(len(steps), -1).max(1)
            panel["step"] = steps
            panel["marks"][part] = c.part_formed(e, part)["step"]
        panel["accuracy"] = np.asarray(e["head_probes"]["accuracy_predictable"])
        panel["marks"]["accuracy"] = c.loss_falls(e)
        panels.append(panel)
    return panels


def record_formation(chapter: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """The formation steps per configuration of the probed runs: ``formation.<profile>.
    h<H>_hs<D>.<part>.mean`` (over the seeds where it formed) and ``.seeds``."""
    for profile, h, d in c.configurations(rows):
        mine = [r for r in rows if (r["profile"], r["heads"], r["head_size"]) == (profile, h, d)]
        key = f"formation.{profile}.h{h}_hs{d}"
        chapter(f"{key}.seeds", len(mine))
        for part in ("prev", "ind", "loss"):
            vals = [r[part] for r in mine if r[part] is not None]
            if vals:
                chapter(f"{key}.{part}.mean", float(np.mean(vals)))


def record_tests(chapter: Any, tests: Sequence[Mapping[str, Any]]) -> None:
    """Each decided test's mean change, Holm p and smallest effect: ``test.<name>.<unit>.<...>``
    (a p that is undefined, the seeds' changes all equal, is left out)."""
    for t in tests:
        if t.get("outcome") is None:
            continue
        name = t["test"].replace(" ", "_").lower()
        unit = (f"h{t['fewer'][0]}_hs{t['fewer'][1]}.h{t['heads']}_hs{t['head_size']}"
                if "fewer" in t else f"{t.get('profile', '')}.h{t['heads']}_hs{t['head_size']}")
        key = f"test.{name}.{unit}"
        for field in ("change", "p_holm", "smallest"):  # None: undefined (no spread)
            if t.get(field) is not None:
                chapter(f"{key}.{field}", float(t[field]))


def record_knockouts(chapter: Any, summary: Sequence[Mapping[str, Any]]) -> None:
    """Each configuration's mean accuracy per knockout: ``knockout.h<H>_hs<D>.<knockout>``."""
    for s in summary:
        for k in ("none", "previous_token", "induction", "control",
                  "keep_one_previous_token", "keep_one_induction"):
            if s[k] is not None:
                chapter(f"knockout.h{s['heads']}_hs{s['head_size']}.{k}", s[k].mean)
