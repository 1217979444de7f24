"""Chapter 12's pilots: one change of recipe, or a longer budget, read by one rule.

A recipe's pilot (:data:`~.models.RECIPE_PILOTS`, the pilot without dropout
:data:`~.models.DROPOUT_PILOTS` among them) repeats some runs with one change of recipe;
:func:`recipe_pairs` sets each pilot run beside the run it repeats, with what says whether
a run settled: its outcome, and the spread of its last :data:`SETTLE_WINDOW` evaluations
(:func:`settle_spread`); :func:`recipe_table` and :func:`recipe_results` show and record
them.

A budget's pilot (:data:`~.models.BUDGET_PILOTS`, and the settling pilot,
:data:`~.models.SETTLING_PILOTS`) trains the piloted recipe over a longer budget;
:func:`budget_pilot_rows` sets each of its runs, finished or still training, beside the run
it repeats at the task's recipe, and :func:`budget_pilot_reading` says by one rule, fixed
before the runs trained, whether the budget is long enough (:data:`BUDGET_STATES`);
:func:`budget_pilot_words` says it in the page's words and :func:`settling_next` what
follows from it. Learning times are :func:`~bparallel.transformer.learning.learning_time`'s,
as in :mod:`.graph_learning`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._checks import one_of, positive_int
from ...transformer.design import get_profile
from ...transformer.learning import learning_time
from ..render.results import key_name
from ..words import agree, count_of, join_words
from .models import FreshRuns, PilotDesign, run_key

# --------------------------------------------------------------------------- a recipe's pilot


#: The last evaluations whose spread says whether a run has settled: ten, the last 2,000
#: steps of a run evaluated every 200.
SETTLE_WINDOW = 10


def settle_spread(entry: Mapping[str, Any], window: int = SETTLE_WINDOW) -> float:
    """The largest less the smallest held-out accuracy (predictable positions) over the
    run's last ``window`` evaluations: how much it still moves. A run stopped by the
    convergence rule keeps its last accuracy to the budget (as its curve area does), so its
    window is its last ``window`` evaluations as recorded."""
    window = positive_int(window, "window")
    acc = list(entry["curve"]["heldout_accuracy_predictable"])
    if len(acc) < window:
        raise ValueError(f"window={window}: the run has {len(acc)} evaluations")
    tail = acc[-window:]
    return float(max(tail) - min(tail))


#: How the page names a recipe: its learning-rate schedule, and ``", no dropout"`` after
#: it for a run trained without dropout (Section 4.1's is 0.1).
RECIPE_WORDS = {"constant": "constant rate", "cosine": "rate decayed (cosine)"}


def _recipe(entry: Mapping[str, Any]) -> dict[str, Any]:
    name = entry.get("lr_schedule", "constant")  # an entry names a decaying schedule only
    label = RECIPE_WORDS[name]
    if float(entry.get("model_config", {}).get("dropout", 0.1)) == 0.0:  # 0.1: Section 4.1
        name, label = f"{name}-nodropout", f"{label}, no dropout"
    return {"recipe": name, "label": label, "outcome": entry["outcome"],
            "learned_at": learning_time(entry),
            "converged_at": entry.get("converged_at"),
            "accuracy": float(entry["heldout_accuracy_predictable"]),
            "area": float(entry["curve_area"]), "spread": settle_spread(entry),
            "curve": {"step": list(entry["curve"]["step"]),
                      "accuracy": list(entry["curve"]["heldout_accuracy_predictable"])}}


def _twin(runs: FreshRuns, p: Mapping[str, Any]) -> dict[str, Any]:
    """The run of ``runs`` that pilot run ``p`` repeats (same task, head count, head size and
    seed); ``ValueError`` when none was shipped."""
    key = run_key(p)
    for e in runs.of(p["task"]):
        if run_key(e) == key:
            return e
    raise ValueError(f"pilot run {key} repeats no shipped run of the task's recipe")


def _step(v: int | None) -> str:
    """A step of training for a table ("12,200"), or "—" where there is none."""
    return "—" if v is None else f"{int(v):,}"


def recipe_pairs(runs: FreshRuns, pilot: FreshRuns) -> list[dict[str, Any]]:
    """Each run of ``pilot`` (:func:`~.models.fresh_runs` of :data:`~.models.RECIPE_PILOTS`)
    beside the run of ``runs`` it repeats (same task, head count, head size and seed):
    ``task``, ``heads``, ``head_size``, ``seed``, ``arms`` and ``recipes``, the task's
    recipe first and the pilot's second, each with its name (``"constant"`` or the pilot's
    ``lr_schedule``) and words (``label``, :data:`RECIPE_WORDS`), outcome, learning time,
    step of convergence, final accuracy, curve area, :func:`settle_spread` and curve.
    ``ValueError`` for a pilot run that repeats no shipped run, or that trained to another
    budget."""
    out = []
    for p in pilot.entries:
        twin = _twin(runs, p)
        if twin["budget"] != p["budget"]:
            key = run_key(p)
            raise ValueError(f"pilot run {key} trained {p['budget']:,} steps, the run it "
                             f"repeats {twin['budget']:,}: not one change of recipe")
        out.append({"task": p["task"], "heads": p["heads"], "head_size": p["head_size"],
                    "seed": p["seed"], "arms": p["arms"],
                    "recipes": [_recipe(twin), _recipe(p)]})
    return out


def recipe_table(pairs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`recipe_pairs` as the page shows them: a row per run and recipe."""
    rows = []
    for p in pairs:
        for r in p["recipes"]:
            rows.append({
                "task": p["task"], "heads x head size": f"{p['heads']} x {p['head_size']}",
                "seed": p["seed"], "recipe": r["label"], "outcome": r["outcome"],
                "learned at (step)": _step(r["learned_at"]),
                "converged at (step)": _step(r["converged_at"]),
                "final accuracy (%)": f"{100 * r['accuracy']:.1f}",
                f"spread, last {SETTLE_WINDOW} evaluations (% points)":
                    f"{100 * r['spread']:.1f}",
                "curve area": f"{r['area']:.3f}"})
    return rows


def recipe_results(pairs: Sequence[Mapping[str, Any]], name: str = "pilot"
                   ) -> dict[str, float]:
    """A recipe pilot's recorded values under ``fresh.<name>`` (``"pilot"``, the decayed
    rate's; ``"nodropout"``, the pilot without dropout), per task: its runs
    (``fresh.<name>.<task>.runs``), and per recipe (``constant``, the task's, and ``pilot``)
    the runs that converged and learned, the smallest and largest :func:`settle_spread`, and
    the earliest and latest learning time of those that learned (``fresh.<name>.<task>.
    <recipe>.{converged,learned,spread_min,spread_max,fastest,slowest}``; the last two only
    where a run learned); ``fresh.<name>.settle_window``."""
    key_name(name, "name")
    out: dict[str, float] = {f"fresh.{name}.settle_window": SETTLE_WINDOW}
    for task in dict.fromkeys(p["task"] for p in pairs):
        mine = [p for p in pairs if p["task"] == task]
        out[f"fresh.{name}.{task}.runs"] = len(mine)
        for i in (0, 1):
            rs = [p["recipes"][i] for p in mine]
            key = f"fresh.{name}.{task}.{'constant' if i == 0 else 'pilot'}"
            out[f"{key}.converged"] = sum(r["outcome"] == "converged" for r in rs)
            out[f"{key}.learned"] = sum(r["learned_at"] is not None for r in rs)
            out[f"{key}.spread_min"] = min(r["spread"] for r in rs)
            out[f"{key}.spread_max"] = max(r["spread"] for r in rs)
            times = [r["learned_at"] for r in rs if r["learned_at"] is not None]
            if times:
                out[f"{key}.fastest"], out[f"{key}.slowest"] = min(times), max(times)
    return out


# --------------------------------------------------------------------------- a budget's pilot


def budget_pilot_rows(runs: FreshRuns, pilot: Sequence[Mapping[str, Any]]
                      ) -> list[dict[str, Any]]:
    """Each run of a budget pilot (:func:`~.models.budget_pilot_runs`, finished or not) beside
    the run of ``runs`` it repeats at the task's recipe and budget: its configuration,
    ``finished``, ``step``, ``budget``, ``outcome`` (so far), ``learned_at`` (``None``: not
    yet or never), ``converged_at``, ``accuracy`` (last evaluation), ``peak`` (best),
    ``half_rate_step`` (:meth:`~bparallel.transformer.design.FreshProfile.half_rate_step`)
    and the twin's ``twin_budget``, ``twin_outcome``, ``twin_learned_at``. ``ValueError``
    for a pilot run that repeats no shipped run."""
    rows = []
    for p in pilot:
        twin = _twin(runs, p)
        acc = p["curve"]["heldout_accuracy_predictable"]
        budget = int(p["budget"])
        rows.append({"task": p["task"], "heads": p["heads"], "head_size": p["head_size"],
                     "seed": p["seed"], "arms": p["arms"], "finished": bool(p["finished"]),
                     "step": int(p["step"]), "budget": budget,
                     "half_rate_step": get_profile(p["profile"]).half_rate_step(budget),
                     "outcome": p["outcome"], "learned_at": learning_time(p),
                     "converged_at": p.get("converged_at"),
                     "accuracy": float(acc[-1]), "peak": float(max(acc)),
                     "threshold": float(p["threshold"]),
                     "twin_budget": int(twin["budget"]), "twin_outcome": twin["outcome"],
                     "twin_learned_at": learning_time(twin)})
    return rows


def budget_pilot_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`budget_pilot_rows` as the page shows them: a row per run."""
    return [{"task": r["task"], "heads x head size": f"{r['heads']} x {r['head_size']}",
             "seed": r["seed"],
             "trained (steps)": (f"{r['step']:,} of {r['budget']:,}"),
             "outcome": r["outcome"] if r["finished"] else "still training",
             "learned at (step)": _step(r["learned_at"]),
             "converged at (step)": _step(r["converged_at"]),
             "accuracy, last evaluation (%)": f"{100 * r['accuracy']:.1f}",
             "best (%)": f"{100 * r['peak']:.1f}",
             "constant rate: learned at (step)":
                 (f"{_step(r['twin_learned_at'])} (of {r['twin_budget']:,})"
                  if r["twin_learned_at"] is not None
                  else f"not within {r['twin_budget']:,}")} for r in rows]


def _reached(r: Mapping[str, Any]) -> bool:
    """A pilot run at the threshold at its best evaluation (``>=``, as the rule compares)."""
    return r["peak"] >= r["threshold"]


def _fell_back(r: Mapping[str, Any]) -> bool:
    """A pilot run that reached the threshold and stands below it at its last evaluation."""
    return _reached(r) and r["threshold"] > r["accuracy"]


def budget_pilot_results(rows: Sequence[Mapping[str, Any]], name: str = "budget"
                         ) -> dict[str, float]:
    """A budget pilot's recorded values, per task (``fresh.<name>.<task>.*``: ``"budget"``
    for the budget pilot, ``"settling"`` for the settling pilot read by the same rule): its
    ``runs``, ``budget`` and ``factor`` (over the twins' budget), how many have
    ``finished``, are ``training``, ``learned`` (so far), ``converged``, and ``fell_back``
    (reached the threshold once and stand below it at their last evaluation), the
    ``slowest`` learning time among those that learned, and how many of their twins learned
    at the task's recipe and budget (``twin_learned``)."""
    key_name(name, "name")
    out: dict[str, float] = {}
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        budget, twin_budget = ({r[k] for r in mine} for k in ("budget", "twin_budget"))
        if len(budget) != 1 or len(twin_budget) != 1:
            raise ValueError(f"the {task} budget pilot mixes budgets "
                             f"{sorted(budget | twin_budget)}")
        times = [r["learned_at"] for r in mine if r["learned_at"] is not None]
        k = f"fresh.{name}.{task}"
        out.update({
            f"{k}.runs": len(mine), f"{k}.budget": mine[0]["budget"],
            f"{k}.factor": mine[0]["budget"] / mine[0]["twin_budget"],
            f"{k}.finished": sum(r["finished"] for r in mine),
            f"{k}.training": sum(not r["finished"] for r in mine),
            f"{k}.learned": len(times),
            f"{k}.converged": sum(r["converged_at"] is not None for r in mine),
            f"{k}.fell_back": sum(map(_fell_back, mine)),
            f"{k}.twin_learned": sum(r["twin_learned_at"] is not None for r in mine)})
        if times:
            out[f"{k}.slowest"] = max(times)
    return out


#: The seeds of every configuration a task's runs retrained under a settling recipe need
#: before the chapter's tests read them (:func:`settling_next`; #45: histogram at least
#: three, the same seeds as the runs they replace).
SETTLED_SEEDS = 3

#: What a budget pilot says of its budget (:func:`budget_pilot_reading`).
BUDGET_STATES = ("long enough", "too short", "does not settle", "training")


def _label(r: Mapping[str, Any]) -> str:
    return f"{r['heads']} x {r['head_size']} (seed {r['seed']})"


def budget_pilot_reading(rows: Sequence[Mapping[str, Any]],
                         designs: Mapping[str, PilotDesign] | None = None
                         ) -> dict[str, dict[str, Any]]:
    """Per task, what its budget pilot (:func:`budget_pilot_rows`) says of its budget, by
    one rule. *Long enough*: every run of the design has learned by its ``half_rate_step``
    (the rate still at least half its start) and converged within the budget. *Too short*
    as soon as one run has learned later (others may still train), or finished without
    reaching the threshold (``unreached``). The recipe *does not settle* when a run that
    learned in time finished unconverged (``unsettled``), or reached the threshold and never
    held it long enough to count as learned (``unheld``). A run that never learns is never
    excused. Until every run has finished and none of these has happened, the reading waits
    (*training*). Per task: ``state`` (:data:`BUDGET_STATES`), ``runs``, how many have
    ``learned`` and ``converged`` (so far), ``half_rate_step``,
    ``slowest`` (the latest learning time), ``last_converged`` (``None`` for none), and the
    labels of the runs ``late``, ``unreached``, ``unsettled``, ``unheld``, ``training``,
    ``never`` (``unreached`` and ``unheld``) and ``fell_back`` (reached the threshold, below
    it at the last evaluation). With ``designs`` (per task a :class:`~.models.PilotDesign`),
    the design's runs neither shipped nor snapshotted are ``not_started`` and wait like those
    training: no reading on part of a design. Steps are compared in integers; a
    never-learner's best is compared with the threshold as the learning rule compares.
    ``ValueError`` for a task whose runs mix budgets."""
    out: dict[str, dict[str, Any]] = {}
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        halves = {int(r["half_rate_step"]) for r in mine}
        if len(halves) != 1:
            raise ValueError(f"the {task} budget pilot mixes budgets or schedules: the rate "
                             f"halves at steps {sorted(halves)}")
        half = halves.pop()
        times = [r["learned_at"] for r in mine if r["learned_at"] is not None]
        conv = [r["converged_at"] for r in mine if r["converged_at"] is not None]
        late = [_label(r) for r in mine if r["learned_at"] is not None and r["learned_at"] > half]
        unsettled = [_label(r) for r in mine if r["finished"] and r["learned_at"] is not None
                     and r["converged_at"] is None]
        never = [r for r in mine if r["finished"] and r["learned_at"] is None]
        unreached = [_label(r) for r in never if not _reached(r)]
        unheld = [_label(r) for r in never if _reached(r)]
        training = [_label(r) for r in mine if not r["finished"]]
        have = {(int(r["heads"]), int(r["head_size"]), int(r["seed"])) for r in mine}
        not_started = ([_label({"heads": h, "head_size": hs, "seed": seed})
                        for h, hs, seed in sorted(designs[task].runs() - have)]
                       if designs and task in designs else [])
        state = ("too short" if late or unreached
                 else "does not settle" if unsettled or unheld
                 else "training" if training or not_started else "long enough")
        out[task] = {"state": state, "runs": len(mine), "half_rate_step": half,
                     "not_started": not_started, "learned": len(times),
                     "converged": len(conv),
                     "slowest": max(times) if times else None,
                     "last_converged": max(conv) if conv else None,
                     "late": late, "unreached": unreached, "unsettled": unsettled,
                     "unheld": unheld, "training": training,
                     "never": [_label(r) for r in never],
                     "fell_back": [_label(r) for r in mine if _fell_back(r)]}
    return out


def budget_pilot_words(reading: Mapping[str, Any]) -> dict[str, str]:
    """One task's :func:`budget_pilot_reading` in the page's words: ``"status"``, how far
    the pilot has come (a clause), ``"tally"``, how many of its runs learned and converged
    (a clause: "all 12 piloted runs learned and converged", "9 of the 12 piloted runs
    learned and 4 converged so far"), and ``"reading"``, what its rule says of the budget
    (a sentence, Markdown)."""
    one_of(reading["state"], "reading['state']", BUDGET_STATES, "states")
    n, half = reading["runs"], reading["half_rate_step"]
    training, unstarted = len(reading["training"]), len(reading["not_started"])
    learned, converged, total = reading["learned"], reading["converged"], n + unstarted
    tally = (f"{count_of(total, total, 'piloted run', 'piloted runs')} learned and converged"
             if learned == converged == total else
             f"{count_of(learned, total, 'piloted run', 'piloted runs')} learned and "
             f"{converged} converged")
    if training or unstarted:
        tally += " so far"
    if not (training or unstarted):
        status = {1: "its one run has finished", 2: "both runs have finished"}.get(
            n, f"all {n} runs have finished")
    else:
        done = n - training
        parts = [f"{done} {agree(done, 'has', 'have')} finished" if done else "",
                 f"{training} {agree(training, 'is', 'are')} still training (read here as "
                 + agree(training, "its committed snapshot stands",
                         "their committed snapshots stand") + ")" if training else "",
                 f"{unstarted} {agree(unstarted, 'has', 'have')} not started"
                 if unstarted else ""]
        status = f"of the {n + unstarted} runs, {join_words([x for x in parts if x])}"

    slowest = reading["slowest"]
    so_far = ("no run has learned yet" if slowest is None else
              f"every run that learned did so by step {half:,} (the slowest at step "
              f"{slowest:,})")
    state = reading["state"]
    if state == "training":
        words = (f"By this rule the pilot has not decided yet: {so_far}, and "
                 f"{training + unstarted} of its runs are still training"
                 f"{' or have not started' if unstarted else ''}.")
    elif state == "long enough":
        words = (f"By this rule the budget is **long enough**: {so_far} and converged within "
                 f"the budget, the last at step {reading['last_converged']:,}.")
    elif state == "too short":
        late, unreached = reading["late"], reading["unreached"]
        parts = [f"{join_words(late)} learned after step {half:,}, when the decayed rate "
                 "had fallen below half its starting value" if late else "",
                 ("no run reached the threshold within it"
                  if len(unreached) == n and not unstarted else
                  f"{join_words(unreached)} never reached the threshold within it")
                 if unreached else ""]
        words = "By this rule the budget is **too short**: " + \
            "; ".join(x for x in parts if x) + "."
    else:
        unsettled, unheld = reading["unsettled"], reading["unheld"]
        parts = [f"{join_words(unsettled)} learned by step {half:,} but had not converged "
                 "at the budget" if unsettled else "",
                 f"{join_words(unheld)} reached the threshold but never held it long enough "
                 "to count as learned" if unheld else ""]
        words = ("By this rule the recipe **does not settle** every run within this budget: "
                 + "; ".join(x for x in parts if x) + ".")
    return {"status": status, "tally": tally, "reading": words}


def settling_next(task: str, reading: Mapping[str, Any], baseline: FreshRuns,
                  settled: FreshRuns, chapter_profile: str) -> str:
    """What follows from a settling pilot's :func:`budget_pilot_reading`, a sentence: if *long
    enough*, how many ``baseline`` runs are trained again under it (``settled``), in all and
    of the first :data:`SETTLED_SEEDS` seeds the chapter's tests wait for, or, once
    ``chapter_profile`` (:data:`~.models.FRESH_PROFILES`) is its profile, that it is read."""
    one_of(reading["state"], "reading['state']", BUDGET_STATES, "states")
    profile = settled.profiles.get(task, {}).get("profile")
    if profile is not None and chapter_profile == profile:
        return (f"Every {task} run this chapter tests is trained under it; the constant-rate "
                "runs with dropout are kept as the pilots' baseline.")
    old = "every test of this chapter reads the constant-rate runs trained with dropout"
    if reading["state"] == "training":
        return (f"Until it is read and, if it settles, {task}'s runs are trained again under "
                f"it, {old}.")
    if reading["state"] != "long enough":
        return f"So {task}'s runs are not trained again under it: {old}."
    wanted = {run_key(e) for e in baseline.of(task)}
    done = {run_key(e) for e in settled.of(task)} & wanted
    first = set(sorted({key[-1] for key in wanted})[:SETTLED_SEEDS])  # key: (..., seed)
    needed = {key for key in wanted if key[-1] in first}
    seeds = agree(len(first), "seed", "seeds") + " " + join_words([str(s) for s in sorted(first)])
    return (f"So {task}'s runs are trained again under it, the same configurations and seeds: "
            f"{len(done)} of the {len(wanted)} have finished so far, the pilot's among them, "
            f"{len(done & needed)} of the {len(needed)} of {seeds}. The chapter's tests move "
            f"to them once every configuration has those {len(first)} seeds; until then, "
            f"{old}.")


__all__ = ["BUDGET_STATES", "RECIPE_WORDS", "SETTLED_SEEDS", "SETTLE_WINDOW",
           "budget_pilot_reading", "budget_pilot_results", "budget_pilot_rows",
           "budget_pilot_table", "budget_pilot_words", "recipe_pairs", "recipe_results",
           "recipe_table", "settle_spread", "settling_next"]
