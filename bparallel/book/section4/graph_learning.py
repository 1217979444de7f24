"""Chapter 12's learning times on fresh data, by one rule for every run.

A run's *learning time* is the first of
:data:`~bparallel.transformer.learning.LEARNED_IN_A_ROW` held-out evaluations in a row at
its task's threshold, read off the curve its manifest entry keeps
(:func:`~bparallel.transformer.learning.learning_time`); a run that never learns has none
(right-censored), and no run is extended past its budget. Per configuration,
:func:`learning_rows` and :func:`learning_table` give the runs that learned, their times,
the censored median, the curve area, the final accuracy, how many converged, and the
machines they trained on (:func:`trained_on`).

The pilots that chose histogram's recipe and budget are read in :mod:`.graph_pilots`.

What the learning times read: every held-out curve scores a model with its dropout off, the
optimiser trained it with its dropout on. :func:`dropout_rows` scores each shipped run both
ways at the end of training, :func:`dropout_table` and :func:`dropout_results` say where
they part; the pilot without dropout (:data:`~.models.DROPOUT_PILOTS`) is a recipe pilot,
read by :func:`~.graph_pilots.recipe_pairs`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ..._checks import positive_int
from ...transformer.design import ARMS, HEADS, fresh_heldout
from ...transformer.learning import OUTCOMES, learning_time
from ...transformer.runtime import hardware_kind
from ..render.results import key_name
from ..verdicts import Verdict
from ..words import agree, count_of, fmt_fixed, join_words
from .measures import measure_models
from .models import ARM_NAMES, FRESH_TASKS, FreshRuns, run_key


def censored_median(times: Sequence[int | None]) -> float | None:
    """The median of learning times where ``None`` (not learned) counts as later than every
    time: a number when at least half the runs learned in it, else ``None`` (the median run
    did not learn)."""
    if not times:
        raise ValueError("times is empty: no run to summarise")
    key = [math.inf if t is None else float(t) for t in times]
    med = ranks.median(key) if all(math.isfinite(v) for v in key) else float(np.median(key))
    return None if not math.isfinite(med) else med


def learning_rows(runs: FreshRuns, task: str) -> list[dict[str, Any]]:
    """Per arm and head count of ``task``: head size, parameters, the runs that learned
    (``learned``, ``runs``), the steps to the threshold per seed (``None``: not learned),
    their censored median, the mean learning-curve area and the mean final accuracy on the
    predictable positions."""
    rows = []
    for arm in ARMS:
        for h in HEADS:
            mine = [e for e in runs.of(task, arm) if e["heads"] == h]
            if not mine:
                continue
            times = [learning_time(e) for e in mine]
            rows.append({
                "task": task, "arm": arm, "heads": h, "head_size": mine[0]["head_size"],
                "parameters": int(mine[0]["num_parameters"]), "runs": len(mine),
                "seeds": [e["seed"] for e in mine],
                "learned": sum(t is not None for t in times), "times": times,
                "median_time": censored_median(times),
                "area": float(np.mean([e["curve_area"] for e in mine])),
                "accuracy": float(np.mean([e["heldout_accuracy_predictable"] for e in mine])),
                "budget": int(mine[0]["budget"]),
                "outcomes": [e["outcome"] for e in mine],
                "trained_on": [trained_on(e) for e in mine],
            })
    return rows


def learning_counts(runs: FreshRuns, prefix: str = "fresh") -> dict[str, int]:
    """Per task, arm and head count of ``runs``, how many runs learned of how many
    (:func:`learning_rows`), as recorded values ``<prefix>.<task>.<arm>.h<H>.{learned,runs}``:
    ``"fresh"`` for the chapter's runs, ``"fresh.baseline"`` for the constant-rate runs its
    pilots start from. ``ValueError`` for a ``prefix`` that is not a dotted key."""
    key_name(prefix, "prefix")
    return {f"{prefix}.{task}.{r['arm']}.h{r['heads']}.{k}": r[k]
            for task in runs.profiles for r in learning_rows(runs, task)
            for k in ("learned", "runs")}


def median_words(rows: Sequence[Mapping[str, Any]], arm: str) -> str:
    """How the censored median learning time of one arm (rows of :func:`learning_rows`)
    moves with the head count, as words that follow "the median learning time": ``"rises
    from 800 steps with 1 head to 2,200 with 16 heads"`` (never falling on the way),
    ``"falls from ..."``, ``"is shortest with 4 heads (7,000 steps) and longest with 1 head
    (9,200)"``, ``"is 3,000 steps with every head count"``; head counts whose median run
    never learned (:func:`censored_median`) come first, ``"is beyond the budget of 12,000
    steps with 16 heads (the median run never learned); among the others it is shortest
    ..."``; ``"is 1,200 steps with 4 heads, the one head count trained"``. An arm without
    rows is a ``ValueError``."""
    mine = sorted((r for r in rows if r["arm"] == arm), key=lambda r: r["heads"])
    if not mine:
        raise ValueError(f"arm={arm!r}: no row of rows is of this arm")
    timed = [r for r in mine if r["median_time"] is not None]
    never = [r for r in mine if r["median_time"] is None]
    t = [r["median_time"] for r in timed]
    if len(timed) < 2:
        words = f"is {_n(t[0])} steps with {_heads(timed[0]['heads'])}" if timed else ""
        if len(mine) == 1:
            words += ", the one head count trained"
    elif len(set(t)) == 1:
        words = f"is {_n(t[0])} steps with every head count"
    elif t == sorted(t) or t == sorted(t, reverse=True):
        words = (f"{'rises' if t[0] < t[-1] else 'falls'} from {_n(t[0])} steps with "
                 f"{_heads(timed[0]['heads'])} to {_n(t[-1])} with "
                 f"{_heads(timed[-1]['heads'])}")
    else:
        def at(v: float) -> str:
            return _heads_list([r["heads"] for r in timed if r["median_time"] == v])
        low, high = min(t), max(t)
        words = (f"is shortest with {at(low)} ({_n(low)} steps) and longest with {at(high)} "
                 f"({_n(high)})")
    if not never:
        return words
    budget = int(never[0]["budget"])
    if not timed:
        which = "every head count" if len(mine) > 1 else _heads(mine[0]["heads"])
        return (f"is beyond the budget of {budget:,} steps with {which} (the median run "
                "never learned)" + (", the one head count trained" if len(mine) == 1 else ""))
    return (f"is beyond the budget of {budget:,} steps with "
            f"{_heads_list([r['heads'] for r in never])} (the median run never learned); "
            f"among the others it {words}")


#: Where each arm puts a speed test, as :func:`speed_words` says it.
SPEED_PLACES = {"width": "at the paper's width", "head16": "with the head size fixed",
                "inner256": "at the fixed attention width"}

#: What a speed test's verdict after Holm's correction
#: (:func:`~.graph_experiment.chapter_family`) says, as (one test, several together): the
#: several-form's ``{n}`` is "both", "all 3", ...; ``{none}`` "neither", "none".
_SPEED_OUTCOMES = {
    "significant": ("significant after the correction",
                    "{n} significant after the correction"),
    "unresolved": ("not significant after the correction",
                   "{none} significant after the correction"),
    "undecidable": ("which its seeds cannot decide", "which their seeds cannot decide"),
}


def _speed_outcome_kind(test: Mapping[str, Any]) -> str:
    verdict = test.get("verdict")
    if not isinstance(verdict, Verdict):
        raise ValueError(f"test verdict={verdict!r}: expected the Verdict chapter_family "
                         "sets (run the chapter's family first)")
    if verdict is Verdict.NOT_TESTABLE:
        return "undecidable"
    return "unresolved" if verdict is Verdict.NOT_SUPPORTED else "significant"


def speed_outcome(test: Mapping[str, Any]) -> str:
    """What one speed test (:func:`~.graph_experiment.speed_tests`, corrected by
    :func:`~.graph_experiment.chapter_family`) found, as words that follow its mean ρ:
    ``"significant after the correction"`` (either way: its sign says which), ``"not
    significant after the correction"`` or ``"which its seeds cannot decide"``.
    ``ValueError`` for a test the family has not judged."""
    return _SPEED_OUTCOMES[_speed_outcome_kind(test)][0]


def speed_words(speed: Mapping[str, Mapping[str, Any]]) -> str:
    """Which way more heads move one task's learning speed in each arm (``speed``: a task's
    :func:`~.graph_experiment.speed_tests` by arm, corrected by
    :func:`~.graph_experiment.chapter_family`), as the chapter says it: the arms grouped by
    what their tests found after Holm's correction, significant first, each with the
    direction of its mean ρ as the page rounds it (two decimals) and the mean: ``"with the
    head size fixed, more heads learn it faster (mean ρ 0.92), significant after the
    correction; at the paper's width, slower (-0.59) and at the fixed attention width,
    faster (0.40), neither significant after the correction"``. Arms without a cell are left
    out; ``ValueError`` when none has one."""
    groups: dict[str, list[tuple[str, float]]] = {kind: [] for kind in _SPEED_OUTCOMES}
    for arm in ARMS:
        test = speed.get(arm)
        if test is not None and test["cells"]:
            groups[_speed_outcome_kind(test)].append((arm, float(test["mean"])))
    if not any(groups.values()):
        raise ValueError("speed: no arm has a cell to test")
    parts, first = [], True
    for kind, arms in groups.items():
        if not arms:
            continue
        items = []
        for arm, mean in arms:
            value = fmt_fixed(mean, 2)
            shown = float(value)
            way = "faster" if shown > 0 else "slower" if shown < 0 else (
                "neither faster nor slower")
            items.append(f"{SPEED_PLACES[arm]}, more heads learn it {way} (mean ρ {value})"
                         if first else f"{SPEED_PLACES[arm]}, {way} ({value})")
            first = False
        one, several = _SPEED_OUTCOMES[kind]
        n = len(arms)
        outcome = one if n == 1 else several.format(
            n="both" if n == 2 else f"all {n}", none="neither" if n == 2 else "none")
        parts.append(f"{join_words(items)}, {outcome}")
    return "; ".join(parts)


def _n(steps: float) -> str:
    return f"{int(round(steps)):,}"


def _heads(h: int) -> str:
    return _heads_list([h])


def _heads_list(hs: Sequence[int]) -> str:
    return f"{join_words(hs)} {agree(int(hs[0]) if len(hs) == 1 else len(hs), 'head', 'heads')}"


def _steps(v: float | int | None, budget: int) -> str:
    return f"not within {budget:,}" if v is None else _n(v)


def learning_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`learning_rows` as the page shows them."""
    return [{"arm": ARM_NAMES[r["arm"]], "heads": r["heads"], "head size": r["head_size"],
             "parameters": f"{r['parameters']:,}",
             "learned": f"{r['learned']} of {r['runs']}",
             "steps to threshold, per seed": " · ".join(_steps(t, r["budget"])
                                                         for t in r["times"]),
             "median": _steps(r["median_time"], r["budget"]),
             "curve area": f"{r['area']:.3f}",
             "final accuracy (%)": f"{100 * r['accuracy']:.1f}",
             "converged": f"{r['outcomes'].count('converged')} of {r['runs']}",
             "trained on": _tally(r["trained_on"])} for r in rows]


def _tally(words: Sequence[str]) -> str:
    """``["CPU", "GPU", "CPU"]`` as ``"CPU 2, GPU 1"``."""
    return ", ".join(f"{w} {words.count(w)}" for w in sorted(set(words)))


def trained_on(entry: Mapping[str, Any]) -> str:
    """Where a run trained, in a word or three for a table's tally: ``"GPU"`` or ``"CPU"``
    (:func:`bparallel.transformer.runtime.hardware_kind`), and for a run that moved between machines
    their kinds in the order it used them (``"GPU then CPU"``; its manifest's ``segments``
    keep the steps of each); ``"not recorded"`` without a ``hardware``."""
    segments = entry.get("segments")
    if segments and len(segments) > 1:
        kinds = list(dict.fromkeys(hardware_kind(s["hardware"]) for s in segments))
        return " then ".join(kinds)
    hardware = entry.get("hardware")
    return hardware_kind(hardware) if hardware else "not recorded"


def machines_words(runs: FreshRuns) -> str:
    """Where the chapter's runs trained, per task, as a sentence of the page: ``"8 of the
    50 runs of induction and none of the 30 runs of histogram trained on a GPU, the rest on
    the CPU"``; ``"every run trained on the CPU"`` when none did. A run counts as a GPU run
    when any of its segments trained on one (:func:`trained_on`); a task without runs is a
    ``ValueError``."""
    parts, any_gpu = [], False
    for task in sorted({e["task"] for e in runs.entries}, key=_task_order):
        mine = runs.of(task)
        gpu = sum("GPU" in trained_on(e) for e in mine)
        any_gpu |= gpu > 0
        parts.append(f"{count_of(gpu, len(mine), 'run', 'runs')} of {task}")
    if not parts:
        raise ValueError("runs: no fresh-data run is shipped")
    if not any_gpu:
        return "every run trained on the CPU"
    return f"{join_words(parts)} trained on a GPU, the rest on the CPU"


#: The outcomes a finished run can have (:data:`~bparallel.transformer.learning.OUTCOMES`
#: less ``"running"``).
FINISHED = tuple(o for o in OUTCOMES if o != "running")


def outcome_counts(runs: FreshRuns, task: str) -> dict[str, int]:
    """How many runs of ``task`` ended with each outcome of :data:`FINISHED` (each
    manifest's ``outcome``, by the chapter's rule)."""
    mine = runs.of(task)
    return {o: sum(e["outcome"] == o for e in mine) for o in FINISHED}


def outcome_words(runs: FreshRuns, task: str) -> str:
    """How the runs of ``task`` ended by the chapter's rule (each manifest's ``outcome``,
    :func:`~bparallel.transformer.learning.learning_summary`), as words of the page: ``"all
    30 runs converged"``; ``"none of the 21 runs converged: 18 learned the task and were
    censored at the budget, 3 never learned it"``; ``"7 of the 12 runs converged: 5 never
    learned the task"``. A task without runs is a ``ValueError``."""
    mine = runs.of(task)
    if not mine:
        raise ValueError(f"task={task!r}: no shipped run of it")
    n = outcome_counts(runs, task)
    parts, the_task = [], "the task"
    if n["budget reached"]:
        k = n["budget reached"]
        parts.append(f"{k} learned {the_task} and {agree(k, 'was', 'were')} censored at the "
                     "budget")
        the_task = "it"
    if n["not learned"]:
        parts.append(f"{n['not learned']} never learned {the_task}")
    head = f"{count_of(n['converged'], len(mine), 'run', 'runs')} converged"
    return head + (f": {', '.join(parts)}" if parts else "")


def _task_order(task: str) -> tuple[int, str]:
    return (FRESH_TASKS.index(task) if task in FRESH_TASKS else len(FRESH_TASKS), task)


# --------------------------------------------------------------------------- what is evaluated

#: The dropout check (:func:`dropout_rows`): the first this many sequences of each task's
#: held-out set, and this many draws of the dropout masks for the model as trained.
DROPOUT_SEQUENCES, DROPOUT_DRAWS = 100, 2


def dropout_rows(runs: FreshRuns, loaded: Mapping[tuple[str, int, int, int], Any], *,
                 sequences: int = DROPOUT_SEQUENCES, draws: int = DROPOUT_DRAWS,
                 cache_dir: str | os.PathLike | None = None,
                 recorded: str | os.PathLike | None = None, workers: int | None = None,
                 ) -> list[dict[str, Any]]:
    """Every shipped run of ``runs`` (its weights in ``loaded``, :func:`~.models.load_models`)
    scored at the end of training on the first ``sequences`` of its task's held-out set
    twice (:func:`~bparallel.transformer.as_trained.evaluate_as_trained`): as the held-out
    curve evaluates it (``evaluated``, dropout off) and as the optimiser saw it
    (``as_trained``, dropout on, mean over ``draws`` mask draws; ``spread``: how far the
    draws differ), with its ``threshold``, whether it ``learned`` by the chapter's rule, and
    its ``outcome``. Measured as the proxies are (the ``"as_trained"`` part of
    :func:`~bparallel.transformer.measure.measure_model`, :func:`~.measures.measure_models`):
    through the metrics cache ``cache_dir`` and the results ``recorded`` beside the shipped
    models, the missing ones in ``workers`` processes (default one per core)."""
    positive_int(sequences, "sequences")
    positive_int(draws, "draws")
    held: dict[str, Any] = {}
    mine = {}
    for e in runs.entries:
        task = e["task"]
        if task not in held:
            held[task] = fresh_heldout(task, runs.profiles[task]["profile"]).inputs[:sequences]
        key = run_key(e)
        if key not in loaded:
            raise ValueError(f"loaded: no weights for {task} {e['heads']} x {e['head_size']} "
                             f"seed {e['seed']}")
        mine[key] = loaded[key]
    scored = measure_models(mine, lambda k: held[k[0]], "as_trained", cache_dir=cache_dir,
                            recorded=recorded, options_of=lambda k: {"task": k[0]},
                            workers=workers, draws=draws, desc="dropout check")
    out = []
    for e in runs.entries:
        r = scored[run_key(e)].as_trained
        out.append({"task": e["task"], "heads": e["heads"], "head_size": e["head_size"],
                    "seed": e["seed"], "arms": e["arms"], "evaluated": float(r["evaluated"]),
                    "as_trained": float(r["accuracy"]), "spread": float(r["spread"]),
                    "threshold": float(runs.profiles[e["task"]]["threshold"]),
                    "learned": learning_time(e) is not None, "outcome": e["outcome"]})
    return out


def _trained_only(r: Mapping[str, Any]) -> bool:
    """At the threshold as trained, below it as evaluated (:func:`~bparallel.ranks.reaches`,
    so no last bit of a float decides it)."""
    return (ranks.reaches(r["as_trained"], r["threshold"])
            and not ranks.reaches(r["evaluated"], r["threshold"]))


def _above(gap: float, floor: float) -> bool:
    """A gap beyond the floor (both in points), decided up to the book's tolerance."""
    return not ranks.reaches(floor, gap)


def dropout_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`dropout_rows` per task and configuration: the median accuracy as evaluated and
    as trained over the seeds, the gap (as trained less evaluated) at its median and range,
    and how many runs are at the threshold as trained only."""
    out = []
    for (task, h, hs), mine in _groups(rows).items():
        gap = [100 * (r["as_trained"] - r["evaluated"]) for r in mine]
        evaluated, trained = (100 * ranks.median([r[k] for r in mine])
                              for k in ("evaluated", "as_trained"))
        out.append({"task": task, "heads x head size": f"{h} x {hs}", "runs": len(mine),
                    "evaluated (%)": f"{evaluated:.1f}", "as trained (%)": f"{trained:.1f}",
                    "gap, median (% points)": fmt_fixed(ranks.median(gap), 1, sign=True),
                    "gap, range (% points)": _range(min(gap), max(gap)),
                    "at the threshold as trained only": sum(map(_trained_only, mine))})
    return out


def _range(low: float, high: float) -> str:
    """``"-3.0 to +55.0"``, or the one value where both print alike (a single run); an end
    that rounds to zero reads "0.0" (:func:`~bparallel.book.words.fmt_fixed`)."""
    lo, hi = fmt_fixed(low, 1, sign=True), fmt_fixed(high, 1, sign=True)
    return lo if lo == hi else f"{lo} to {hi}"


def _groups(rows: Sequence[Mapping[str, Any]]
            ) -> dict[tuple[str, int, int], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, int, int], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["task"], r["heads"], r["head_size"]), []).append(r)
    return groups


def dropout_results(rows: Sequence[Mapping[str, Any]], name: str = "dropout"
                    ) -> dict[str, float]:
    """The dropout check's recorded values under ``fresh.<name>`` (``"dropout"``: the
    chapter's runs; ``"budget.dropout"``: the budget pilot's): ``.floor`` (the largest
    spread between two draws of the masks over every run: what a gap must exceed to
    count), and per task (``fresh.<name>.<task>.*``) its ``runs``, the
    largest gap ``gap_max`` and smallest ``gap_min`` (points), how many runs score more than
    the floor higher as trained (``higher``) and how many are at the threshold as trained
    only (``trained_only``), how many configurations have such a run
    (``trained_only_configs``), how many runs did not converge (``unconverged``) and how many
    of those score more than the floor higher as trained (``unconverged_higher``)."""
    key_name(name, "name")
    if not rows:
        return {}
    floor = max(100 * r["spread"] for r in rows)
    out: dict[str, float] = {f"fresh.{name}.floor": floor}
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        gap = [100 * (r["as_trained"] - r["evaluated"]) for r in mine]
        k = f"fresh.{name}.{task}"
        out.update({f"{k}.runs": len(mine), f"{k}.gap_max": max(gap), f"{k}.gap_min": min(gap),
                    f"{k}.higher": sum(_above(g, floor) for g in gap),
                    f"{k}.unconverged": sum(r["outcome"] != "converged" for r in mine),
                    f"{k}.unconverged_higher": sum(
                        _above(g, floor) for g, r in zip(gap, mine, strict=True)
                        if r["outcome"] != "converged"),
                    f"{k}.trained_only": sum(map(_trained_only, mine)),
                    f"{k}.trained_only_configs": sum(
                        any(map(_trained_only, g)) for g in _groups(mine).values())})
    return out


__all__ = ["DROPOUT_DRAWS", "DROPOUT_SEQUENCES", "censored_median", "dropout_results",
           "dropout_rows", "dropout_table", "learning_counts", "learning_rows", "learning_table",
           "learning_time", "machines_words", "median_words", "trained_on"]
