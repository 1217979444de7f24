"""Chapter 12's verdicts read by the family stated before the controls trained.

:data:`~.graph_design.PRIMARY_FAMILY` names the chapter's primary hypotheses (learning speed
per task and arm, the change of each graph measure from 1 to 16 heads per task and arm);
Holm's correction runs over their tests alone (:func:`family_tests`). Every other test is
secondary, corrected in its own family of :data:`~.graph_design.SECONDARY_FAMILIES`, and
read as exploratory. A task carries verdict rows only with the design's seeds
(:data:`~.graph_design.DESIGN_SEEDS`) in every arm (:func:`verdict_tasks`); until then its
readings are exploratory. :func:`family_comparison` sets each verdict as the primary family
reads it beside the chapter's full family (:func:`full_family_tests`), and
:func:`recipe_comparison` a task's verdicts under two recipes (histogram's settling recipe
beside the paper's constant rate)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...transformer.design import ARMS, get_profile
from ..verdicts import Verdict
from ..verdicts import cell as verdict_cell
from . import graph_common, graph_design
from .graph_common import at_ceiling, ceiling_words
from .graph_design import DESIGN_SEEDS, PRIMARY_FAMILY, PRIMARY_TASKS
from .graph_early import prediction_tests
from .graph_experiment import (
    ALL_ARMS,
    CLAIMS,
    RANK_PROXIES,
    changes,
    chapter_family,
    claim_verdicts,
    speed_tests,
)
from .graph_experiment import family_table as fx_family_table
from .graph_experiment import results as fx_results
from .graph_learning import DROPOUT_DRAWS, DROPOUT_SEQUENCES, learning_counts
from .graph_tasks import MIN_PAIRED_SEEDS, SUMMARY
from .models import ARM_NAMES, FINITE_TASKS, PILOT_BASELINES, FreshRuns
from .seed_unit import within_tests
from .statistics import family_verdicts

#: The claims whose tests are primary (:data:`~.graph_design.PRIMARY_FAMILY`).
PRIMARY_CLAIMS = tuple(dict.fromkeys(h.slug for h in PRIMARY_FAMILY))
#: The claims read as exploratory, each from its own secondary family.
EXPLORATORY_CLAIMS = ("accuracy", "rank_within")
#: The claim dropped as a separate claim: the early proxies across head counts rank the head
#: counts as the design's head count does, so their tests restate the speed test.
DROPPED_CLAIMS = ("rank_speed",)


def verdict_tasks(runs: FreshRuns) -> tuple[str, ...]:
    """The tasks of :data:`~.graph_design.PRIMARY_TASKS` that carry verdict rows: those with
    every seed of :data:`~.graph_design.DESIGN_SEEDS` complete (every head count shipped) in
    every arm. Another task's tests stay in the family as stated, read as exploratory."""
    return tuple(t for t in PRIMARY_TASKS if t in runs.profiles
                 and all(set(DESIGN_SEEDS) <= set(runs.seeds(t, arm)) for arm in ARMS))


def raw_tests(runs: FreshRuns, level: float = 0.95) -> tuple[dict, dict, dict]:
    """The chapter's tests before any correction: the changes from 1 to 16 heads
    (:func:`~.graph_experiment.changes`), the speed tests and the early-proxy tests per task
    (:func:`~.graph_early.prediction_tests`), their within-configuration tests taken with
    the seed as the unit (:func:`~.seed_unit.within_tests`): runs of one seed share one data
    stream, so they are never counted as independent."""
    ch = changes(runs, level)
    speed = {t: speed_tests(runs, t) for t in runs.profiles}
    pred = {t: {**prediction_tests(runs, t), **within_tests(runs, t)} for t in runs.profiles}
    return ch, speed, pred


def full_family_tests(runs: FreshRuns, level: float = 0.95) -> dict[str, Any]:
    """:func:`raw_tests` corrected as one family, every test of every task together
    (:func:`~.graph_experiment.chapter_family`: the chapter's reading before its primary
    family was stated), in the shape of :func:`~.graph_experiment.chapter_tests`."""
    ch, speed, pred = raw_tests(runs, level)
    return {"changes": ch, "speed": speed, "prediction": pred,
            "family": chapter_family(ch, speed, pred)}


def family_tests(runs: FreshRuns, level: float = 0.95) -> dict[str, Any]:
    """Every test of the chapter, as :func:`~.graph_experiment.chapter_tests` gives them, with
    Holm's correction run per family: the primary family (the changes of the quantities of
    :data:`~.graph_design.PRIMARY_FAMILY` and the speed tests, for every task of
    :data:`~.graph_design.PRIMARY_TASKS`), and each secondary family alone: ``accuracy``
    (the accuracy's changes), ``rank_speed`` and ``rank_within`` (the early-proxy tests
    across head counts and within configurations) and ``other_tasks`` (the changes and speed
    tests of the tasks outside the primary family: majority). ``family``: the primary
    family's size; ``families``: every family's size."""
    ch, speed, pred = raw_tests(runs, level)
    quantities = {h.quantity for h in PRIMARY_FAMILY if h.quantity != "speed"}
    every = [c for by_q in ch.values() for cs in by_q.values() for c in cs]
    primary = [c for c in every if c["task"] in PRIMARY_TASKS and c["quantity"] in quantities]
    accuracy = [c for c in every if c["task"] in PRIMARY_TASKS and c["quantity"] == "accuracy"]
    other = [c for c in every if c["task"] not in PRIMARY_TASKS]

    def speeds(primary_task: bool) -> list[dict[str, Any]]:
        return [s for t, by_arm in speed.items() if (t in PRIMARY_TASKS) == primary_task
                for s in by_arm.values()]

    def ranks(kind: str) -> list[dict[str, Any]]:
        # "within.<proxy>" and "across.<arm>.<proxy>", a proxy's name itself dotted
        parts = 1 if kind == "within." else 2
        return [t for p in pred.values() for k, t in p.items()
                if k.startswith(kind) and k.split(".", parts)[-1] in RANK_PROXIES]

    def direction(c: Mapping[str, Any]) -> int:
        return SUMMARY[c["quantity"]]

    families = {
        "primary": family_verdicts(primary, speeds(True), direction, MIN_PAIRED_SEEDS),
        "accuracy": family_verdicts(accuracy, [], direction, MIN_PAIRED_SEEDS),
        "rank_speed": family_verdicts([], ranks("across."), direction, MIN_PAIRED_SEEDS),
        "rank_within": family_verdicts([], ranks("within."), direction, MIN_PAIRED_SEEDS),
        "other_tasks": family_verdicts(other, speeds(False), direction, MIN_PAIRED_SEEDS),
    }
    return {"changes": ch, "speed": speed, "prediction": pred,
            "family": families["primary"], "families": families}


def for_tasks(tests: Mapping[str, Any], tasks: Sequence[str]) -> dict[str, Any]:
    """``tests`` (:func:`family_tests` or :func:`~.graph_experiment.chapter_tests`) with only
    the tests of ``tasks``, their Holm-corrected p-values kept: what the verdicts of those
    tasks read."""
    return {**tests,
            "changes": {arm: {q: [c for c in cs if c["task"] in tasks] for q, cs in by_q.items()}
                        for arm, by_q in tests["changes"].items()},
            "speed": {t: s for t, s in tests["speed"].items() if t in tasks},
            "prediction": {t: p for t, p in tests["prediction"].items() if t in tasks}}


def primary_verdicts(runs: FreshRuns, level: float = 0.95,
                     tests: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The chapter's verdicts (:func:`~.graph_experiment.claim_verdicts`) on the tasks of
    :func:`verdict_tasks` at the corrections of :func:`family_tests` (``tests``, computed when
    not given); every row has ``reading``: ``"primary"``, ``"exploratory"`` (a claim of
    :data:`EXPLORATORY_CLAIMS`, from its secondary family) or ``"dropped"``
    (:data:`DROPPED_CLAIMS`, kept for the record, never a row of the verdict table). The
    accuracy claim's evidence says at which step each task was read and whether it is at
    ceiling (:func:`~.graph_common.ceiling_words`); with every task at ceiling the claim is
    *not testable*: no head count can learn a task better than perfectly."""
    tests = family_tests(runs, level) if tests is None else tests
    rows = claim_verdicts(runs, level, for_tasks(tests, verdict_tasks(runs)))
    tasks = verdict_tasks(runs)
    ceiling = "; ".join(w for t in tasks if (w := ceiling_words(runs, t)))
    every_at_ceiling = bool(tasks) and all(at_ceiling(runs, t) for t in tasks)
    for r in rows:
        claim = r["slug"].split(".")[0]
        r["reading"] = ("primary" if claim in PRIMARY_CLAIMS else
                        "dropped" if claim in DROPPED_CLAIMS else "exploratory")
        if claim == "accuracy" and ceiling:  # read at one step per task: say where
            r["evidence"] = f"{r['evidence']}; {ceiling}"
            if every_at_ceiling:  # no head count can learn a task at ceiling better
                r["verdict"], r["condition"] = Verdict.NOT_TESTABLE, ""
                if r["arm"] == ALL_ARMS:
                    r["evidence"] = f"not testable in any arm: {ceiling}"
    return rows


def verdict_rows(verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verdict table's rows of :func:`primary_verdicts`: claim (an exploratory claim
    marked so), arm, verdict, evidence; a dropped claim left out."""
    return [{"claim": v["claim"] + (" (exploratory)" if v["reading"] == "exploratory" else ""),
             "arm": v["arm"], "verdict": verdict_cell(v["verdict"], v.get("condition", "")),
             "evidence": v["evidence"]} for v in verdicts if v["reading"] != "dropped"]



def verdict_grid(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The verdicts in short, for the chapter's main page: one row per claim, in the order
    the claims first come in ``rows``, one column per arm and one for the arms together,
    each cell the claim's verdict there (its condition in a few words where it holds with
    conditions, as the full table's cell; ``—`` where the claim has no reading in that
    column). ``rows``: verdict-table rows (``claim``, ``arm``, ``verdict`` as
    :func:`verdict_rows` writes them, the arm its name, ``"all arms"`` (or ``"all arms
    (...)"``, the arms together of a named condition) or ``"—"`` for a claim read on no
    arm). ``ValueError`` for no rows, a row without those keys, or two rows of
    one claim and arm."""
    if not rows:
        raise ValueError("rows is empty: no verdict to show")
    arms = [*(ARM_NAMES[a] for a in ARMS), ALL_ARMS]
    grid: dict[str, dict[str, str]] = {}
    for r in rows:
        missing = [k for k in ("claim", "arm", "verdict") if k not in r]
        if missing:
            raise ValueError(f"rows: a row lacks {missing}")
        # "—": a claim read on no arm; "all arms (fresh data)": the arms together, named
        arm = ALL_ARMS if r["arm"] == "—" or r["arm"].startswith(ALL_ARMS) else r["arm"]
        if arm not in arms:
            raise ValueError(f"rows: unknown arm {r['arm']!r}; valid: {arms + ['—']}")
        cells = grid.setdefault(r["claim"], {})
        if arm in cells:
            raise ValueError(f"rows: two verdicts of {r['claim']!r} in {arm!r}")
        cells[arm] = r["verdict"]
    return [{"claim": claim, **{a: cells.get(a, "—") for a in arms}}
            for claim, cells in grid.items()]


def _cell(v: Mapping[str, Any]) -> str:
    return verdict_cell(v["verdict"], v.get("condition", ""))


def family_comparison(runs: FreshRuns, level: float = 0.95,
                      primary: Mapping[str, Any] | None = None,
                      full: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per claim and arm: its verdict under the primary family (:func:`primary_verdicts`),
    under the chapter's full family on the same tasks, and under the full family on every
    task (the chapter's reading before the primary family: histogram included). ``primary``:
    :func:`family_tests` of ``runs``; ``full``: :func:`full_family_tests` (each computed
    when not given). The rows say whether the verdicts differ."""
    primary = family_tests(runs, level) if primary is None else primary
    full = full_family_tests(runs, level) if full is None else full
    tasks = verdict_tasks(runs)
    a = primary_verdicts(runs, level, primary)
    b = claim_verdicts(runs, level, for_tasks(full, tasks))
    c = claim_verdicts(runs, level, full)
    rows = []
    for pv, fv, allv in zip(a, b, c, strict=True):
        if pv["reading"] == "dropped":
            continue
        rows.append({"claim": CLAIMS[pv["slug"].split(".")[0]], "arm": pv["arm"],
                     "family": "primary" if pv["reading"] == "primary" else "secondary",
                     f"primary family ({', '.join(tasks) or 'no task'})": _cell(pv),
                     f"full family ({', '.join(tasks) or 'no task'})": _cell(fv),
                     "full family, every task": _cell(allv),
                     "same": "yes" if pv["verdict"] is fv["verdict"] is allv["verdict"]
                     else "no"})
    return rows


def family_of(row: Mapping[str, Any]) -> str:
    """The family of a row of :func:`~.graph_experiment.family_table`, as
    :func:`family_tests` corrects it: ``primary``, or a secondary family's name."""
    test = row["test"]
    if row["task"] not in PRIMARY_TASKS:
        return "other_tasks"
    if test.endswith(": accuracy"):
        return "accuracy"
    if test.endswith("across head counts"):
        return "rank_speed"
    if test.endswith("within configurations"):
        return "rank_within"
    return "primary"


def family_table(tests: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`~.graph_experiment.family_table` of :func:`family_tests`, each row with the
    family whose Holm correction its Holm p-value is over (:func:`family_of`; a secondary
    family marked exploratory), primary tests first."""
    rows = [{**r, "family": (lambda f: "primary" if f == "primary"
                             else f"{f.replace('_', ' ')} (exploratory)")(family_of(r))}
            for r in fx_family_table(tests)]
    return sorted(rows, key=lambda r: r["family"] != "primary")


def with_task(runs: FreshRuns, other: FreshRuns, task: str) -> FreshRuns:
    """``runs`` with ``task``'s runs and profile taken from ``other`` (another recipe)."""
    if task not in other.profiles:
        raise ValueError(f"task={task!r}: not among the other recipe's tasks "
                         f"{sorted(other.profiles)}")
    return FreshRuns([*(e for e in runs.entries if e["task"] != task), *other.of(task)],
                     profiles={**runs.profiles, task: other.profiles[task]})


def recipe_comparison(runs: FreshRuns, other: FreshRuns, task: str,
                      level: float = 0.95) -> list[dict[str, Any]]:
    """Per claim of the primary family and arm: ``task``'s verdict (on its runs alone, its
    tests corrected over the primary family of the chapter's tasks) under the recipe of
    ``runs`` and under that of ``other`` (:func:`with_task`), with each recipe's complete
    seeds; exploratory readings of a task that carries no verdict row."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for name, rs in (("chapter", runs), ("other", with_task(runs, other, task))):
        tests = family_tests(rs, level)
        seeds = min(len(rs.seeds(task, arm)) for arm in ARMS)
        label = f"{rs.profiles[task]['profile']} ({seeds} seeds)"
        for v in claim_verdicts(rs, level, for_tasks(tests, (task,))):
            claim = v["slug"].split(".")[0]
            if claim not in PRIMARY_CLAIMS or v["arm"] == ALL_ARMS:
                continue
            row = out.setdefault((claim, v["arm"]), {"claim": CLAIMS[claim], "arm": v["arm"]})
            row[label] = _cell(v)
            row[f"_{name}"] = v["verdict"]
    return [{**{k: x for k, x in r.items() if not k.startswith("_")},
             "same": "yes" if r["_chapter"] is r["_other"] else "no"} for r in out.values()]


def results(verdicts: Sequence[Mapping[str, Any]], tests: Mapping[str, Any],
            runs: FreshRuns) -> dict[str, float]:
    """The recorded values of the primary reading: ``verdict.<slug>`` (the verdict's index in
    :class:`~bparallel.book.verdicts.Verdict`, as :func:`~.graph_experiment.results` keys
    them), ``fresh.family.<name>`` (every family's size) and ``fresh.verdict_tasks`` (how
    many tasks carry verdict rows)."""
    order = list(Verdict)
    return {**{f"verdict.{v['slug']}": order.index(v["verdict"]) for v in verdicts},
            **{f"fresh.family.{k}": n for k, n in tests["families"].items()},
            "fresh.verdict_tasks": len(verdict_tasks(runs))}



def chapter_results(runs: FreshRuns, level: float = 0.95,
                    tests: Mapping[str, Any] | None = None,
                    verdicts: Sequence[Mapping[str, Any]] | None = None) -> dict[str, float]:
    """What chapter 12's main page records of the fresh-data runs, computed by one call so
    that its appendix pages show the same numbers (``ChapterResults.show``) without recording
    them twice: :func:`~.graph_experiment.results` (the design, the learning times, the
    changes and the speed and early-proxy tests), :func:`results` (the verdicts and families
    of the primary reading), :func:`~.graph_common.results` (accuracy at a common step), the
    primary family's size (``fresh.primary_family``) and the largest rank a head's logits
    reach (``fresh.logit_rank.max``). ``tests`` and ``verdicts``: :func:`family_tests` and
    :func:`primary_verdicts` of ``runs``, computed when not given."""
    tests = family_tests(runs, level) if tests is None else tests
    verdicts = primary_verdicts(runs, level, tests) if verdicts is None else verdicts
    return {**fx_results(runs, verdicts, tests), **results(verdicts, tests, runs),
            **graph_common.results(runs),
            "fresh.primary_family": len(graph_design.primary_tests()),
            "fresh.logit_rank.max": graph_design.max_logit_rank()}


def finite_results() -> dict[str, int]:
    """The finite-data condition of chapter 12: per task trained on a finite set, its
    training sequences and epochs (``finite.<task>.{num_train,epochs}``)."""
    return {f"finite.{t}.{k}": getattr(get_profile(t), k)
            for t in FINITE_TASKS for k in ("num_train", "epochs")}


def dropout_check_constants() -> dict[str, float]:
    """The settings of chapter 12's dropout check: the held-out sequences it scores
    (``fresh.dropout.sequences``), the draws of the masks it averages
    (``fresh.dropout.draws``) and the dropout rate of the runs it checks
    (``fresh.dropout.rate``, that of the pilots' baseline)."""
    return {"fresh.dropout.sequences": DROPOUT_SEQUENCES, "fresh.dropout.draws": DROPOUT_DRAWS,
            "fresh.dropout.rate": get_profile(PILOT_BASELINES["histogram"]).dropout}


def baseline_results(baseline: FreshRuns) -> dict[str, float]:
    """The pilots' baseline of chapter 12 (the constant-rate runs with dropout the pilots
    start from): per task its budget (``fresh.baseline.<task>.budget``), the runs that learned
    per configuration (:func:`~.graph_learning.learning_counts`) and histogram's complete
    seeds, in its arm with fewest (``fresh.baseline.histogram.seeds_min``)."""
    return {**{f"fresh.baseline.{t}.budget": p["budget"] for t, p in baseline.profiles.items()},
            **learning_counts(baseline, "fresh.baseline"),
            "fresh.baseline.histogram.seeds_min":
                min(len(baseline.seeds("histogram", a)) for a in ARMS)}


__all__ = ["DROPPED_CLAIMS", "EXPLORATORY_CLAIMS", "PRIMARY_CLAIMS", "baseline_results",
           "chapter_results", "dropout_check_constants", "family_comparison", "finite_results",
           "family_of", "family_table", "family_tests", "for_tasks", "full_family_tests",
           "primary_verdicts", "raw_tests", "recipe_comparison", "results", "verdict_grid",
           "verdict_rows", "verdict_tasks", "with_task"]
