"""Chapter 12's horse race: which single quantity best ranks the fresh-data
runs of a task by how fast they learn?

Every shipped run of a task, all arms and seeds together, is one item. Each candidate of
:data:`CANDIDATES` is either part of the design (head count, head size, the attention's
width, with the parameters, which follow it), a graph measure recorded at the task's early
step, before any run learned (:func:`~.graph_early.early_step`; Algorithm 1 and minimax
fidelity in both modes, Definition 2.7, attention rollout), or the conditioning of the
concatenated heads' outputs (the quantity Saratchandran et al. relate to the head count):
at the early step when every run of the task recorded it there (runs trained since the
probe was added), else at initialization for every run (:func:`initial_conditioning`: a
seed fixes the initial weights; :func:`conditioning_source` says which), signed so that
larger is better by the paper's claims (smaller for the condition number). Its score is
Spearman's rho with each outcome of :data:`OUTCOMES`: the speed (minus the learning time,
a run that never learned ranked last, tied) and the curve area. The interval resamples
seeds (every run of a drawn seed enters together, so the runs that share a seed's data
stream move as one), :data:`SAMPLES` times, seeded: a percentile interval.

A graph measure that ranks the runs no better than the design quantities does not add to
them; one whose interval excludes 0 on the wrong side ranks them backwards. Whether it adds
to the design at all is its *partial* rank correlation with the configuration held
(:func:`partial_rank_correlation`: the ranks of measure and outcome, each less its
configuration's mean rank, correlated), with an interval from the same resampled seeds: only
the differences between runs of one configuration (seeds) are left to explain.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..._checks import one_of, positive_int
from ...ranks import doubled_ranks, reaches, spearman
from ...transformer.conditioning import PROBE_KEY, attention_conditioning
from ...transformer.design import fresh_heldout
from ...transformer.learning import learning_time
from ...transformer.runs import Run
from ...transformer.train import initial_model
from ..words import agree, fmt_fixed, fmt_p, join_words
from .graph_early import early_step, probe_at
from .graph_spectral import initial_spectral_gap
from .models import FreshRuns
from .seed_unit import seed_permutation_test
from .statistics import ALPHA, holm_family

#: Candidate -> (how the page names it, its sign: +1 larger is better/faster by the claims
#: or the design's hypothesis "more is better", -1 smaller is).
CANDIDATES = {
    "heads": ("head count", +1),
    "head_size": ("head size", +1),
    "width": ("attention width (and so the parameters)", +1),
    "loss": ("held-out loss at the early step", -1),
    "accuracy": ("held-out accuracy at the early step", +1),
    **{name: (label, sign) for name, label, sign in (
        ("mixing.paper", "Algorithm 1, published code", -1),
        ("mixing.definition", "Algorithm 1, as defined", -1),
        ("t_mix", "Definition 2.7", -1),
        ("fidelity.paper", "fidelity, published code", +1),
        ("fidelity.definition", "fidelity, as defined", +1),
        ("rollout_min", "rollout minimum", +1),
        ("spectral_gap", "spectral gap before training", +1))},
    "conditioning": ("condition number before training", -1),
}
#: The design's candidates (the rest are graph measures at the early step and the baselines).
#: The parameters are one candidate with the attention width: at the book's sizes they are a
#: strictly increasing function of it (:meth:`~bparallel.transformer.model.ModelConfig.
#: num_parameters` is linear in the width, :func:`parameters_follow_width`), so they rank the
#: runs as it does, tie for tie.
DESIGN = ("heads", "head_size", "width")
#: The trivial baselines: what the run's own held-out loss and accuracy at the early step
#: (on its probe sequences, the predictable positions) say of its later speed, beside which a
#: graph measure must rank the runs to add anything.
BASELINES = ("loss", "accuracy")
#: The outcomes each candidate is scored against.
OUTCOMES = {"speed": "speed (minus the learning time)", "area": "curve area"}
SAMPLES = 2000


@functools.cache
def _heldout_inputs(task: str, profile: str) -> torch.Tensor:
    """The fixed held-out inputs of ``task`` under a fresh-data ``profile``, built once."""
    return fresh_heldout(task, profile).inputs


def _probe_inputs(entry: Mapping[str, Any]) -> torch.Tensor:
    """A run's probe sequences: the first of its task's fixed held-out inputs."""
    return _heldout_inputs(entry["task"], entry["profile"])[
        : int(entry.get("probe_sequences", 20))]


def initial_conditioning(entry: Mapping[str, Any]) -> float:
    """How well conditioned a run's attention is before training: the mean over layers of
    the base-10 logarithm of the concatenated heads' condition number
    (:func:`~bparallel.transformer.conditioning.attention_conditioning`) on the run's probe
    sequences, for the weights the run started from
    (:func:`~bparallel.transformer.train.initial_model` of its run,
    :meth:`~bparallel.transformer.runs.Run.from_record`). NaN for an entry without a model
    configuration (a manifest written by hand)."""
    cfg = entry.get("model_config")
    if not cfg or "profile" not in entry:
        return math.nan
    inputs = _heldout_inputs(entry["task"], entry["profile"])[
        : int(entry.get("probe_sequences", 20))]
    model = initial_model(Run.from_record(entry))
    return attention_conditioning(model, inputs)


def probe_conditioning(entry: Mapping[str, Any], step: int) -> float:
    """The conditioning of a run's concatenated heads at probe step ``step``, as its
    training recorded it (probe key :data:`~bparallel.transformer.conditioning.PROBE_KEY`);
    NaN for a run trained before the probe recorded it, or where it was not finite."""
    probes = entry["probes"]
    if PROBE_KEY not in probes:
        return math.nan
    value = probes[PROBE_KEY][list(probes["step"]).index(step)]
    return math.nan if value is None else float(value)


def conditioning_source(runs: FreshRuns, task: str) -> str:
    """Where the horse race reads each run's conditioning of ``task``: ``"early step"``,
    at the early step like the graph measures (:func:`probe_conditioning`), when every run
    of the task recorded it there; else ``"before training"``, for every run
    (:func:`initial_conditioning`): never a mix of the two."""
    return _source(runs.of(task), early_step(runs, task))


def _source(entries: list[dict[str, Any]], step: int | None) -> str:
    """:func:`conditioning_source` of the runs ``entries`` with the early step ``step``."""
    if step is not None and entries and all(
            PROBE_KEY in e["probes"] and step in e["probes"]["step"] for e in entries):
        return "early step"
    return "before training"


def conditioning_words(runs: FreshRuns, tasks: Sequence[str]) -> str:
    """Where the horse race reads the conditioning of each of ``tasks``
    (:func:`conditioning_source`), as words that follow "it is": ``"read at the early
    step: every run recorded it at each probe step"``, ``"read before training, on the
    weights each run started from: the runs trained before their probes recorded it"``, or,
    where the tasks differ, ``"read at the early step on histogram, whose runs recorded it at
    each probe step, and before training on induction, whose runs trained before their
    probes recorded it"``. No task, or a task without runs, is a ``ValueError``."""
    if not tasks:
        raise ValueError("tasks is empty: no task to say anything of")
    for task in tasks:
        if not runs.of(task):
            raise ValueError(f"tasks: {task!r} has no shipped run")
    early = [t for t in tasks if conditioning_source(runs, t) == "early step"]
    before = [t for t in tasks if t not in early]
    if not before:
        return "read at the early step: every run recorded it at each probe step"
    if not early:
        return ("read before training, on the weights each run started from: the runs "
                "trained before their probes recorded it")
    return (f"read at the early step on {join_words(early)}, whose runs recorded it at each "
            f"probe step, and before training on {join_words(before)}, whose runs trained "
            "before their probes recorded it")


#: How the page names the conditioning of each source (:func:`conditioning_source`).
CONDITIONING_LABELS = {"early step": "condition number at the early step",
                       "before training": "condition number before training"}


def parameters_follow_width(runs: FreshRuns) -> bool:
    """Whether the runs' parameter counts rank them as their attention widths do, tie for
    tie (equal widths, equal counts; a wider model, more parameters): why :data:`DESIGN`
    keeps the width alone."""
    pairs = sorted({(e["heads"] * e["head_size"], e["num_parameters"]) for e in runs.entries})
    widths = [w for w, _ in pairs]
    return len(set(widths)) == len(pairs) and all(
        a[1] < b[1] for a, b in zip(pairs, pairs[1:], strict=False))


def _items(runs: FreshRuns, task: str
           ) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    """Per candidate and outcome, one value per run of ``task`` (signed, finite: an
    infinite mixing time is a huge number), the runs' seeds, and where the conditioning was
    read (:func:`conditioning_source`)."""
    step = early_step(runs, task)
    entries = runs.of(task)
    source = _source(entries, step)
    early = source == "early step"
    cols: dict[str, list[float]] = {k: [] for k in (*CANDIDATES, *OUTCOMES)}
    for e in entries:
        cols["heads"].append(e["heads"])
        cols["head_size"].append(e["head_size"])
        cols["width"].append(e["heads"] * e["head_size"])
        probe = probe_at(e, step) if step is not None else {}
        for name in CANDIDATES:
            if name == "conditioning":
                cols[name].append(probe_conditioning(e, step) if early
                                  else initial_conditioning(e))
            elif name == "spectral_gap":  # not stored at the early step: before training
                cols[name].append(initial_spectral_gap(e, _probe_inputs(e))
                                  if e.get("model_config") and "profile" in e else math.nan)
            elif name == "loss":
                cols[name].append(_probe_loss(e, step))
            elif name not in DESIGN:
                cols[name].append(probe.get(name, math.nan))
        t = learning_time(e)
        cols["speed"].append(-1e300 if t is None else -float(t))
        cols["area"].append(float(e["curve_area"]))
    out = {}
    for k, v in cols.items():
        sign = CANDIDATES[k][1] if k in CANDIDATES else 1
        out[k] = np.clip(sign * np.asarray(v, dtype=np.float64), -1e300, 1e300)
    return out, np.array([e["seed"] for e in entries]), source


def _probe_loss(entry: Mapping[str, Any], step: int | None) -> float:
    """A run's held-out loss on the predictable positions at probe ``step``, as its training
    recorded it; NaN without an early step."""
    if step is None:
        return math.nan
    probes = entry["probes"]
    return float(probes["loss_predictable"][list(probes["step"]).index(step)])


def partial_rank_correlation(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    """Spearman's rho of ``x`` and ``y`` with ``groups`` held (a partial rank correlation
    with group fixed effects): the average ranks of each, less the mean rank of its group,
    correlated (Pearson). Computed as :func:`~bparallel.ranks.spearman` is, in integers:
    with ``R`` the doubled ranks, ``k_g`` and ``S_g`` a group's size and rank sum and ``L``
    the least common multiple of the group sizes, ``u_i = (L / k_g) (k_g R_i - S_g)`` is
    ``2 L`` times the centred rank, an integer, and the rho is ``sum u^x u^y / sqrt(sum
    (u^x)^2 sum (u^y)^2)``: the same value whatever the order of the items, the one
    rounding at the end. NaN when nothing varies within the groups."""
    x, y, groups = np.asarray(x, float), np.asarray(y, float), np.asarray(groups)
    if not x.shape == y.shape == groups.shape or x.ndim != 1:
        raise ValueError(f"x, y and groups must be 1-D of one length, not {x.shape}, "
                         f"{y.shape}, {groups.shape}")
    members = [np.nonzero(groups == g)[0].tolist() for g in np.unique(groups)]
    scale = math.lcm(*map(len, members)) if members else 1

    def centred(values: np.ndarray) -> list[int]:
        r = doubled_ranks(values)
        out = [0] * len(r)
        for at in members:
            total, k = sum(r[i] for i in at), len(at)
            for i in at:
                out[i] = scale // k * (k * r[i] - total)
        return out

    ux, uy = centred(x), centred(y)
    vx, vy = sum(u * u for u in ux), sum(u * u for u in uy)
    if vx == 0 or vy == 0:
        return math.nan
    cov, var = sum(a * b for a, b in zip(ux, uy, strict=True)), vx * vy
    root = math.isqrt(var)
    return cov / root if root * root == var else cov / math.sqrt(var)


def _interval(boot: np.ndarray, level: float) -> tuple[float | None, float | None]:
    boot = boot[np.isfinite(boot)]
    if not boot.size:
        return None, None
    low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def horse_race(runs: FreshRuns, task: str, *, samples: int = SAMPLES, seed: int = 0,
               level: float = 0.95) -> list[dict[str, Any]]:
    """Per candidate of :data:`CANDIDATES` and outcome of :data:`OUTCOMES`: Spearman's rho
    over every run of ``task`` (``rho``), and its ``level`` percentile interval over
    ``samples`` resamplings of the seeds (``low``, ``high``); for a graph measure also its
    partial rank correlation with the configuration held (``partial``, ``partial_low``,
    ``partial_high``, :func:`partial_rank_correlation`; ``None`` for the design's own
    quantities, which the configuration fixes). ``None`` values where the candidate is
    undefined (no early step yet, or a constant column). Rows ordered by candidate, then
    outcome; ``kind`` is ``"design"``, ``"baseline"`` (:data:`BASELINES`) or ``"graph"``.
    A partial correlation is also tested with the seed as the unit
    (``partial_p``, ``partial_p_min``: :func:`~.seed_unit.seed_permutation_test`), and
    Holm's correction runs over the race's partial tests (``partial_p_holm``)."""
    positive_int(samples, "samples")
    if not 0 < level < 1:
        raise ValueError(f"level={level!r}: expected a number in (0, 1)")
    cols, seeds, source = _items(runs, task)
    if seeds.size < 3:
        return []
    configs = np.array([f"{e['heads']}x{e['head_size']}" for e in runs.of(task)])
    distinct = np.unique(seeds)
    rng = np.random.default_rng(seed)
    # A draw is a multiset of seeds, and both rhos are exact, so the same value whatever the
    # order of its runs: each distinct multiset (at most 126 for 5 seeds) is scored
    # once, on its runs in a fixed order, and every draw of it reads that score.
    drawn = [tuple(sorted(rng.choice(distinct, distinct.size).tolist()))
             for _ in range(samples)]
    multisets = sorted(set(drawn))
    draws = [np.concatenate([np.nonzero(seeds == s)[0] for s in m]) for m in multisets]
    of_draw = np.array([multisets.index(m) for m in drawn])
    rows = []
    for name, (label, _) in CANDIDATES.items():
        if name == "conditioning":
            label = CONDITIONING_LABELS[source]
        x = cols[name]
        for outcome in OUTCOMES:
            y = cols[outcome]
            ok = np.isfinite(x) & np.isfinite(y)
            rho = float(spearman(x[ok], y[ok])) if ok.sum() > 2 else math.nan
            boot = np.array([float(spearman(x[d], y[d])) for d in draws])[of_draw] \
                if math.isfinite(rho) else np.array([math.nan])
            low, high = _interval(boot, level)
            partial = p_low = p_high = None
            held_test: dict[str, Any] = {}
            if name not in DESIGN and math.isfinite(rho):
                held = partial_rank_correlation(x[ok], y[ok], configs[ok])
                if math.isfinite(held):
                    partial = held
                    p_low, p_high = _interval(np.array(
                        [partial_rank_correlation(x[d], y[d], configs[d])
                         for d in draws])[of_draw], level)
                    held_test = seed_permutation_test(x[ok], y[ok], configs[ok], seeds[ok],
                                                      partial_rank_correlation)
            rows.append({"task": task, "candidate": name, "label": label,
                         "kind": ("design" if name in DESIGN else
                                  "baseline" if name in BASELINES else "graph"),
                         "outcome": outcome,
                         "rho": rho if math.isfinite(rho) else None,
                         "low": low, "high": high, "partial": partial,
                         "partial_low": p_low, "partial_high": p_high,
                         "partial_p": held_test.get("p"), "partial_p_min": held_test.get("p_min"),
                         "runs": int(ok.sum())})
    # the partial tests of the graph measures: one family per task, Holm's correction over it
    held_tests = [{"p": r["partial_p"], "p_min": r["partial_p_min"]} for r in rows]
    holm_family(held_tests)
    for r, t in zip(rows, held_tests, strict=True):
        r["partial_p_holm"] = t["p_holm"] if r["partial_p"] is not None else None
    return rows


def best(rows: list[Mapping[str, Any]], outcome: str, kind: str | None = None
         ) -> Mapping[str, Any] | None:
    """The row of the candidate with the largest rho for ``outcome`` (of ``kind`` when
    given), or ``None``."""
    mine = [r for r in rows if r["outcome"] == outcome and r["rho"] is not None
            and (kind is None or r["kind"] == kind)]
    return max(mine, key=lambda r: r["rho"]) if mine else None


#: How :func:`race_words` names an outcome.
_OUTCOME_WORDS = {"speed": "the speed", "area": "the curve area"}


def race_words(rows: Sequence[Mapping[str, Any]], outcome: str, *, held: bool = False) -> str:
    """What one task's horse race (``rows`` of :func:`horse_race`) says for ``outcome``, as
    words of the page. By default: the design's quantities that rank the runs best (ties at
    two decimals named together) with their ρ, then how the graph measures at the early step
    rank the runs, each by its interval over resampled seeds: *backwards* (the interval
    below zero), *the claimed way* (above zero) or *neither* (it holds zero), each group
    named unless it is every measure: ``"the head size ranks the runs best of the design's
    quantities (ρ 0.95 with the speed); of the 6 graph measures, 5 rank them backwards (...)
    and 1 neither (Algorithm 1, as defined)"``. ``held``: the graph measures alone, by their
    partial rank correlations with the configuration held (what each adds to the design):
    ``"every one of the 6 graph measures ranks them neither way"``. The condition number is
    not a graph measure and is left out. ``ValueError`` for an unknown outcome or a race
    without a defined row of it."""
    one_of(outcome, "outcome", list(_OUTCOME_WORDS), "outcomes")
    mine = [r for r in rows if r["outcome"] == outcome and r["rho"] is not None]
    design = [r for r in mine if r["kind"] == "design"]
    if not design:
        raise ValueError(f"rows: no design quantity has a rank correlation with {outcome}")
    graphs = [r for r in mine if r["kind"] == "graph" and r["candidate"] != "conditioning"]
    if held:
        graphs = [r for r in graphs if r["partial"] is not None]
        if not graphs:
            raise ValueError("rows: no graph measure has a partial rank correlation")
        if all(r.get("partial_p_holm") is None and r.get("partial_p_min") is not None
               for r in graphs):  # the seeds are too few for any test to decide
            return (f"no graph measure's partial test can decide with the seed as the unit: "
                    f"its best possible two-sided p-value, {fmt_p(graphs[0]['partial_p_min'])}, "
                    "is above what Holm's correction over the race's tests needs")
        return _graph_sides(graphs, held)
    top = max(round(r["rho"], 2) for r in design)
    leaders = [r["label"] for r in design if round(r["rho"], 2) == top]
    lead = (f"the {join_words(leaders)} {agree(len(leaders), 'ranks', 'rank')} the runs best "
            f"of the design's quantities (ρ {top:.2f} with {_OUTCOME_WORDS[outcome]})")
    return f"{lead}; {_graph_sides(graphs, held)}" if graphs else lead


def _graph_sides(graphs: Sequence[Mapping[str, Any]], held: bool) -> str:
    """How ``graphs`` (race rows of graph measures, at least one) rank the runs, grouped by
    :func:`_side`, as :func:`race_words` says it."""
    groups: dict[str, list[str]] = {side: [] for side in _SIDES}
    for r in graphs:
        groups[_side(r, held)].append(r["label"])
    said = [(side, labels) for side, labels in groups.items() if labels]
    if len(graphs) == 1:
        return f"the one graph measure, {graphs[0]['label']}, ranks them {_SIDES[said[0][0]]}"
    if len(said) == 1:
        return f"every one of the {len(graphs)} graph measures ranks them {_SIDES[said[0][0]]}"
    parts = []
    for i, (side, labels) in enumerate(said):
        verb = f"{agree(len(labels), 'ranks', 'rank')} them {_SIDES[side]}" if i == 0 else side
        parts.append(f"{len(labels)} {verb} ({'; '.join(labels)})")
    return f"of the {len(graphs)} graph measures, {join_words(parts)}"


#: The sides of zero a race row's interval can leave (:func:`_side`), and how a sentence
#: that ranks the runs says each.
_SIDES = {"backwards": "backwards", "the claimed way": "the claimed way",
          "neither": "neither way"}


#: How far from zero an interval's end must be to leave it: a bound within float rounding
#: of zero holds zero, so no reading hangs on the last bits of a percentile.
_ZERO = 1e-9


def _side(row: Mapping[str, Any], held: bool = False) -> str:
    """Which way a race row ranks the runs: by its interval, ``"backwards"`` below zero,
    ``"the claimed way"`` above, else ``"neither"`` (an end within :data:`_ZERO` of zero
    holds it); ``held``: by its partial rank correlation's seed-level permutation test
    after Holm's correction over the race's partial tests (``partial_p_holm``; the seed is
    the unit, never a bootstrap over few seeds), on the side of its sign where it reaches
    :data:`~.statistics.ALPHA`, else ``"neither"``."""
    if held:
        p = row.get("partial_p_holm")
        if p is None or not reaches(ALPHA, p):
            return "neither"
        return "backwards" if row["partial"] < 0 else "the claimed way"
    low, high = row["low"], row["high"]
    if high is not None and high < -_ZERO:
        return "backwards"
    return "the claimed way" if low is not None and low > _ZERO else "neither"


#: What a side of the condition number's ranking says of the runs: the number is signed so
#: that a better-conditioned run ranks higher (:data:`CANDIDATES`), the claimed way faster.
_CONDITIONED = {"backwards": "the better-conditioned runs learning slower",
                "the claimed way": "the better-conditioned runs learning faster"}


def conditioning_reading(race: Mapping[str, Sequence[Mapping[str, Any]]], outcome: str) -> str:
    """What the horse race says of the condition number for ``outcome`` (``race``:
    :func:`horse_race` rows by task, in the page's order), as a clause of the page: which way
    it ranks each task's runs by its interval (:func:`_side`), with its ρ and what that says
    of the better-conditioned runs; then, with the configuration held, which way its partial
    intervals lie, with the partial ρ and interval (a task without a partial interval is
    left out there). A side every task shares is said once: ``"backwards on both tasks, the
    better-conditioned runs learning slower (ρ with the curve area -0.63 on induction and
    -0.68 on histogram); with the configuration held, neither way on both tasks (partial ρ
    0.00, interval -0.26 to +0.22, on induction; ...)"``; else per task, ``"backwards on
    induction (ρ with the speed -0.60, the better-conditioned runs learning slower) and
    neither way on histogram (ρ -0.10)"``. A ρ that rounds to zero reads "0.00", without a
    sign. ``ValueError`` for an unknown outcome or when no
    task has the condition number's row."""
    one_of(outcome, "outcome", list(_OUTCOME_WORDS), "outcomes")
    rows = {task: r for task, task_rows in race.items() for r in task_rows
            if r["candidate"] == "conditioning" and r["outcome"] == outcome
            and r["rho"] is not None}
    if not rows:
        raise ValueError(f"race: no task ranks its runs by the condition number ({outcome})")

    def read(by_task: Mapping[str, Mapping[str, Any]], held: bool) -> str:
        sides = {t: _side(r, held) for t, r in by_task.items()}
        what = {t: "" if held else _CONDITIONED.get(side, "") for t, side in sides.items()}
        if held:
            numbers = {t: f"{fmt_fixed(r['partial'], 2, sign=True)}, interval "
                          f"{fmt_fixed(r['partial_low'], 2, sign=True)} to "
                          f"{fmt_fixed(r['partial_high'], 2, sign=True)}"
                       for t, r in by_task.items()}
            first = later = "partial ρ"
        else:
            numbers = {t: fmt_fixed(r["rho"], 2, sign=True) for t, r in by_task.items()}
            first, later = f"ρ with {_OUTCOME_WORDS[outcome]}", "ρ"
        if len(set(sides.values())) == 1 and len(sides) > 1:  # one side, said once
            t0 = next(iter(sides))
            every = "both tasks" if len(sides) == 2 else "every task"
            listed = ("; ".join(f"{n}, on {t}" for t, n in numbers.items()) if held else
                      join_words([f"{n} on {t}" for t, n in numbers.items()]))
            return (f"{_SIDES[sides[t0]]} on {every}" + (f", {what[t0]}" if what[t0] else "")
                    + f" ({first} {listed})")
        return join_words([f"{_SIDES[side]} on {t} ({later if i else first} {numbers[t]}"
                           + (f", {what[t]}" if what[t] else "") + ")"
                           for i, (t, side) in enumerate(sides.items())])

    held = {t: r for t, r in rows.items() if r.get("partial_low") is not None}
    return read(rows, False) + (f"; with the configuration held, {read(held, True)}"
                                if held else "")


def results(rows_by_task: Mapping[str, list[Mapping[str, Any]]]) -> dict[str, float]:
    """``race.<task>.<candidate>.<outcome>.{rho,low,high}`` for every defined row, and
    ``race.<task>.<candidate>.<outcome>.partial.{rho,low,high,p}`` for a graph measure's
    partial rank correlation with the configuration held (``p``: its seed-level permutation
    test, :func:`~.seed_unit.seed_permutation_test`)."""
    out: dict[str, float] = {}
    for task, rows in rows_by_task.items():
        for r in rows:
            if r["rho"] is None:
                continue
            base = f"race.{task}.{r['candidate']}.{r['outcome']}"
            out[f"{base}.rho"] = r["rho"]
            if r["low"] is not None:
                out[f"{base}.low"], out[f"{base}.high"] = r["low"], r["high"]
            if r.get("partial") is not None:
                out[f"{base}.partial.rho"] = r["partial"]
                if r["partial_low"] is not None:
                    out[f"{base}.partial.low"] = r["partial_low"]
                    out[f"{base}.partial.high"] = r["partial_high"]
                if r.get("partial_p") is not None:  # the seed-level permutation test
                    out[f"{base}.partial.p"] = r["partial_p"]
    return out


def baseline_words(rows: Sequence[Mapping[str, Any]], outcome: str) -> str:
    """What the trivial baselines of :data:`BASELINES` say in one task's race (``rows`` of
    :func:`horse_race`) for ``outcome``, as words of the page: each with its ρ and, with the
    configuration held, its partial ρ and seed-level permutation p-value (two-sided, before
    Holm's correction): ``"held-out loss at the early step: ρ +0.40, partial ρ +0.50
    (seed-level p 0.017); ..."``. ``ValueError`` for an unknown outcome or a race without
    a defined baseline row."""
    one_of(outcome, "outcome", list(_OUTCOME_WORDS), "outcomes")
    mine = [r for r in rows if r["outcome"] == outcome and r["kind"] == "baseline"
            and r["rho"] is not None]
    if not mine:
        raise ValueError(f"rows: no baseline has a rank correlation with {outcome}")

    def one(r: Mapping[str, Any]) -> str:
        held = "" if r["partial"] is None else (
            f", partial ρ {fmt_fixed(r['partial'], 2, sign=True)} (seed-level p "
            f"{fmt_p(r.get('partial_p'))})")
        return f"{r['label']}: ρ {fmt_fixed(r['rho'], 2, sign=True)}{held}"
    return "; ".join(one(r) for r in mine)


__all__ = ["BASELINES", "CANDIDATES", "CONDITIONING_LABELS", "DESIGN", "OUTCOMES", "SAMPLES",
           "baseline_words", "best", "conditioning_reading", "conditioning_source",
           "conditioning_words", "horse_race", "initial_conditioning", "parameters_follow_width",
           "partial_rank_correlation", "probe_conditioning", "race_words", "results"]
