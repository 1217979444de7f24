"""Chapter 12, "Tasks where the graph matters": the graph-task models' measures summarised
per model, and the across-seed statistics and verdicts. The models themselves (graph tasks,
and the paper's tasks beside them) are :mod:`bparallel.book.section4.models`; the chapter's
controlled experiment on fresh data is :mod:`bparallel.book.section4.graph_experiment`.

A model's row (:func:`model_row`) holds what the chapter compares across head counts: final
accuracy and epochs to 99% of it (the learning curve), the Tables 1-4 proxies in both modes,
Definition 2.7, attention rollout, the knockouts and the head measures of
:func:`bparallel.transformer.metrics_cache.heads_measure`; all per-layer quantities as layer means.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..._checks import one_of, positive_int
from ...transformer.data import (
    FRESH_ONLY_TASKS,
    GRAPH_TASKS,
    HISTOGRAM_SYMBOLS,
    HOPS,
    MAJORITY_SYMBOLS,
    PAPER_TASKS,
    TASKS,
    heldout_dataset,
    histogram_no_attention_ceiling,
    induction_split,
)
from ...transformer.design import DEFAULT_SEED, get_profile
from ...transformer.measure import HeadStudy
from ...transformer.shipped import (
    MODELS_ROOT,
    RUNS_DIR,
    book_models,
)
from ..render.results import PROFILES
from ..verdicts import Outcome, Verdict
from ..verdicts import cell as verdict_cell
from ..verdicts import condition as verdict_condition
from ..words import fmt_p
from .measures import measure_models
from .models import GraphModels, paper_models
from .statistics import (
    across_tasks,
    both_modes,
    claim_over_units,
    effect_outcome,
    fmt_interval,
    head_claims,
    modes_condition,
    paired_effect,
    scored_cells,
    seed_interval,
)

# --------------------------------------------------------------------------- one model


def _curve(meta: Mapping[str, Any]) -> list[float]:
    """The held-out accuracy on the predictable positions after every epoch."""
    if "curve" in meta:
        return list(meta["curve"]["heldout_accuracy_predictable"])
    return list(meta["history"]["heldout_accuracy_predictable"])


def model_row(
    key: tuple[str, int, int],
    defined: Mapping[str, np.ndarray],
    heads: HeadStudy,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One model's summary: ``defined`` (:func:`~bparallel.transformer.measure.defined_metrics`:
    Algorithms 1-2 in both modes, Definition 2.7, rollout) and ``heads``
    (:func:`~bparallel.transformer.metrics_cache.heads_measure`, a
    :class:`~bparallel.transformer.measure.HeadStudy`) of the same
    sequences, and ``meta`` (the learning curve; ``None`` for a model whose curve is not
    at hand). Layer quantities are means over layers of means over sequences; Definition
    2.7 is the median over layers of the median over sequences (it may be infinite);
    ``rollout_min`` is ``T`` times the smallest share of the last position traced to any
    input token after the last layer (1: every token counts equally, 0: some token is
    lost), heads weighted by ``w_h``."""
    task, n_heads, seed = key
    row: dict[str, Any] = {"task": task, "heads": n_heads, "seed": seed}
    if meta is not None:
        row["accuracy"] = float(_curve(meta)[-1])
    ko = heads.knockout
    row["accuracy_intact"] = float(ko["none"]["accuracy"])
    row["knockout_all"] = float(ko["all"]["accuracy"])
    layers = sorted(int(k[1:]) for k in ko if k.startswith("L"))
    for la in layers:
        row[f"knockout_L{la}"] = float(ko[f"L{la}"]["accuracy"])
    phi = defined["fidelity.node"]  # (L, N, T)
    minimax = {"paper": phi.min(-1), "definition": phi[..., :-1].min(-1)}  # Algorithm 2
    for mode in ("paper", "definition"):
        row[f"mixing.{mode}"] = float(np.mean(defined[f"mixing_time.{mode}"]))
        row[f"fidelity.{mode}"] = float(np.mean(minimax[mode]))
    t_mix = np.median(defined["worst_case.definition"], axis=-1)  # (L,)
    row["t_mix"] = float(np.median(t_mix))
    rollout = defined["rollout.weighted"][-1]  # (N, T): after the last layer
    row["rollout_min"] = float(rollout.shape[-1] * rollout.min(-1).mean())
    if heads.impact is None:  # knockouts only (heads_measure with impact=False)
        return row
    row["head_data"] = {"impact": np.asarray(heads.impact, dtype=np.float64),
                        **{f"fidelity.{m}": np.asarray(heads.head_fidelity[m],
                                                       dtype=np.float64)
                           for m in ("paper", "definition")}}
    return row


def head_cells(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-head cells of every multi-head model of ``rows`` (:func:`model_row` with the
    head study): the noise floor of the margin impact of removing each head
    (:func:`bparallel.book.section4.statistics.noise_floor`: reliability and permutation test, Holm
    over every cell of the chapter) and, per cell, the heads' mean impact and minimax
    fidelity in both modes (``scores``), as :func:`bparallel.book.section4.statistics.head_claims`
    takes them."""
    return scored_cells({(r["task"], r["heads"], r["seed"]): r["head_data"] for r in rows
                         if "head_data" in r})


# --------------------------------------------------------------------------- across seeds

#: The quantities of a model row summarised across seeds, and the direction in which the
#: paper's claims (or common sense) say more heads should move them.
SUMMARY = {"accuracy": +1, "mixing.paper": -1, "mixing.definition": -1,
           "fidelity.paper": +1, "fidelity.definition": +1, "t_mix": -1, "rollout_min": +1,
           "knockout_all": 0}


def across_seeds(rows: Sequence[Mapping[str, Any]], level: float = 0.95
                 ) -> list[dict[str, Any]]:
    """Per (task, heads): for each quantity of :data:`SUMMARY` present, the mean over seeds
    with its t-interval (``<q>``, ``<q>.low``, ``<q>.high``; no interval with one seed or
    where a value is infinite), and the number of seeds."""
    out = []
    for task, heads in sorted({(r["task"], r["heads"]) for r in rows},
                              key=lambda k: (TASKS.index(k[0]), k[1])):
        mine = [r for r in rows if (r["task"], r["heads"]) == (task, heads)]
        row: dict[str, Any] = {"task": task, "heads": heads, "seeds": len(mine)}
        for q in SUMMARY:
            values = [r[q] for r in mine if r.get(q) is not None]
            if len(values) != len(mine):
                continue
            if not all(math.isfinite(v) for v in values):
                row[q], row[f"{q}.low"], row[f"{q}.high"] = float(np.median(values)), None, None
                continue
            iv = seed_interval(values, level)
            row[q], row[f"{q}.low"], row[f"{q}.high"] = iv.mean, iv.low, iv.high
        out.append(row)
    return out


def head_count_change(rows: Sequence[Mapping[str, Any]], quantity: str, *, fewer: int = 1,
                      more: int = 16, level: float = 0.95) -> list[dict[str, Any]]:
    """Per task: the change of ``quantity`` from ``fewer`` to ``more`` heads, paired by seed,
    with its t-interval and paired p-value, and whether it goes the claimed way
    (:data:`SUMMARY`'s direction, more heads better): its ``outcome``
    (:class:`~bparallel.book.verdicts.Outcome`, by
    :func:`~bparallel.book.section4.statistics.effect_outcome`, the words of chapter 11)."""
    direction = SUMMARY[quantity]
    if not direction:
        raise ValueError(f"quantity={quantity!r} has no claimed direction: use one of "
                         f"{[q for q, d in SUMMARY.items() if d]}")
    out = []
    for task in sorted({r["task"] for r in rows}, key=TASKS.index):
        lo = {r["seed"]: r[quantity] for r in rows if r["task"] == task and r["heads"] == fewer
              and r.get(quantity) is not None}
        hi = {r["seed"]: r[quantity] for r in rows if r["task"] == task and r["heads"] == more
              and r.get(quantity) is not None}
        seeds = sorted(set(lo) & set(hi))
        if not seeds or not all(math.isfinite(v) for s in seeds for v in (lo[s], hi[s])):
            continue
        pe = paired_effect([lo[s] for s in seeds], [hi[s] for s in seeds], level)
        e = pe.effect
        out.append({"task": task, "quantity": quantity, "seeds": len(seeds),
                    "fewer": float(np.mean([lo[s] for s in seeds])),
                    "more": float(np.mean([hi[s] for s in seeds])), "change": e.mean,
                    "low": e.low, "high": e.high, "p_value": pe.p_value,
                    "outcome": effect_outcome(e, direction)})
    return out


#: The paired seeds (1 and 16 heads) a task needs before its change can test a claim: the
#: design's three. A task with fewer is *not testable* on its own line and set
#: aside, never a reason to withhold the verdict of the tasks that did test the claim.
MIN_PAIRED_SEEDS = 3


def _testable(change: Mapping[str, Any], min_seeds: int) -> bool:
    """Has the task's change enough paired seeds to test a claim (:func:`tally`)?"""
    return change["seeds"] >= min_seeds


def tally(changes: Sequence[Mapping[str, Any]], min_seeds: int = MIN_PAIRED_SEEDS) -> Verdict:
    """The verdict of a "more heads do better" claim from its per-task changes
    (:func:`head_count_change`; their ``outcome``, Holm-corrected where the chapter sets it),
    judged per task: a task with fewer than ``min_seeds`` paired seeds is not testable and
    set aside; over the others, the book's one rule
    (:func:`~bparallel.book.section4.statistics.claim_over_units`): fails when any task goes
    significantly the other way, holds when every task goes the claimed way, holds with
    conditions when some do, not supported when none resolves; not testable when no task is
    left."""
    positive_int(min_seeds, "min_seeds")
    testable = [c for c in changes if _testable(c, min_seeds)]
    better = sum(c["outcome"] == Outcome.AS_CLAIMED for c in testable)
    worse = sum(c["outcome"] == Outcome.AGAINST for c in testable)
    return claim_over_units(better, worse, len(testable))


def change_evidence(change: Mapping[str, Any], min_seeds: int = MIN_PAIRED_SEEDS) -> str:
    """A task's change in words, as a verdict's evidence: its outcome, and *not testable*
    with its paired seeds when it has fewer than ``min_seeds`` (set aside by :func:`tally`)."""
    positive_int(min_seeds, "min_seeds")
    n = change["seeds"]
    if not _testable(change, min_seeds):
        return (f"{change['outcome']}, not testable with {n} paired seed{'s' * (n != 1)} "
                f"of {min_seeds}")
    if change.get("p_holm") is not None:
        return f"{change['outcome']} (Holm p {fmt_p(change['p_holm'])})"
    return str(change["outcome"])


def head_verdicts(head_tests: Sequence[Mapping[str, Any]]) -> dict[str, Verdict]:
    """Per task, the verdict of "per-head fidelity says which heads do the work" from its
    two tests (published code, definitions;
    :func:`bparallel.book.section4.statistics.both_modes`)."""
    out = {}
    for task in sorted({t["task"] for t in head_tests}, key=TASKS.index):
        by = {t["ranking"]: t["verdict"] for t in head_tests if t["task"] == task}
        out[task] = both_modes(by["fidelity.paper"], by["fidelity.definition"])
    return out


# --------------------------------------------------------------------------- the chapter's steps

@functools.cache  # a pure function of its arguments, asked again by every early step
def no_attention_ceiling(task: str, num: int = 500, seed: int = DEFAULT_SEED) -> float:
    """The most a model without attention gets right on ``task``'s predictable held-out
    positions. It knows the current token and its position only: for histogram the most
    likely count at each position
    (:func:`~bparallel.transformer.data.histogram_no_attention_ceiling`, exact); for the
    tasks whose target is a token of the sequence, the share of positions whose target is
    the current token itself (on ``num`` held-out sequences of ``seed``)."""
    one_of(task, "task", TASKS, "tasks")
    if task == "histogram":
        return histogram_no_attention_ceiling()
    ds = heldout_dataset(task, num, seed=seed)
    own = (ds.inputs == ds.targets) & ds.mask
    return float(own.sum() / ds.mask.sum())


#: The column of :func:`task_rows` with :func:`no_attention_ceiling`.
CEILING = "without attention"


def task_rows(num: int = 200, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """One row per task (the paper's, the graph tasks, then those trained on fresh data
    only): what its target needs (:data:`~bparallel.transformer.data.HOPS`), the share of
    predictable positions, the no-attention ceiling (:func:`no_attention_ceiling`, column
    :data:`CEILING`) and the finite-data training profile's length ("fresh data only" for a
    task without one)."""
    rows = []
    for task in (*PAPER_TASKS, *GRAPH_TASKS, *FRESH_ONLY_TASKS):
        ds = heldout_dataset(task, num, seed=seed)
        rows.append({"task": task, "what the target needs": HOPS[task],
                     "predictable positions": float(ds.mask.float().mean()),
                     CEILING: no_attention_ceiling(task, seed=seed),
                     "training": ("fresh data only" if task in FRESH_ONLY_TASKS
                                  else f"{training_epochs(task)} epochs")})
    return rows


def task_constants(models: Mapping[tuple[str, int, int], Any]) -> dict[str, int]:
    """The format the chapter's tasks share, read from its models (``models``: keyed
    ``(task, heads, seed)``; every model must agree): the sequence length and the vocabulary
    (``task.seq_len``, ``task.vocab_size``), the model's layers, width and parameter count
    (``task.layers``, ``task.d_model``, ``task.parameters``: one count for every head count),
    the layout of an induction sequence (:func:`~bparallel.transformer.data.induction_split`:
    positions ``0..split-1`` hold ``split`` distinct tokens, the ``repeated`` positions
    ``split..last`` an arrangement of that many of the first ``pool`` of them) and the
    alphabet of a majority sequence (``task.majority.symbols``), and of a histogram sequence
    with histogram's no-attention ceiling at that length (``task.histogram.symbols``,
    ``task.histogram.ceiling``)."""
    if not models:
        raise ValueError("models is empty: no model to read the tasks' format from")

    def one(name: str, values: Sequence[int]) -> int:
        found = sorted(set(values))
        if len(found) != 1:
            raise ValueError(f"the models differ in {name}: {found}")
        return int(found[0])

    configs = [m.config for m in models.values()]
    seq_len = one("seq_len", [c.seq_len for c in configs])
    split = induction_split(seq_len)
    return {"task.seq_len": seq_len,
            "task.vocab_size": one("vocab_size", [c.vocab_size for c in configs]),
            "task.layers": one("n_layers", [c.n_layers for c in configs]),
            "task.d_model": one("d_model", [c.d_model for c in configs]),
            "task.parameters": one("parameters", [sum(p.numel() for p in m.parameters())
                                                  for m in models.values()]),
            "task.induction.split": split, "task.induction.first_part_last": split - 1,
            "task.induction.last": seq_len - 1, "task.induction.repeated": seq_len - split,
            "task.induction.pool": split - 1, "task.majority.symbols": MAJORITY_SYMBOLS,
            "task.histogram.symbols": HISTOGRAM_SYMBOLS,
            "task.histogram.ceiling": histogram_no_attention_ceiling(seq_len)}


def training_epochs(task: str) -> int:
    """Epochs of the profile that trains ``task``'s models: its own for a graph task, the
    paper profile for copy and cycle."""
    return get_profile(task if task in GRAPH_TASKS else "paper").epochs


def _heldout(models: Mapping[Any, Any], n: int) -> dict[Any, Any]:
    """Per key of ``models`` (the task first), the ``n`` held-out sequences of its task at
    its model's length and vocabulary, drawn once per task and shape. A draw of ``n`` is not
    the first ``n`` of a larger draw for every task: callers slice one draw."""
    shape = {k: (k[0], m.config.seq_len, m.config.vocab_size) for k, m in models.items()}
    x = {s: heldout_dataset(s[0], n, seed=DEFAULT_SEED, seq_len=s[1], vocab_size=s[2]).inputs
         for s in set(shape.values())}
    return {k: x[s] for k, s in shape.items()}


def head_study(models: Mapping[Any, Any], *, num_sequences: int, reference_sequences: int,
               horizon: int, cache_dir: str | os.PathLike | None,
               recorded: str | os.PathLike | None = None, impact: bool = True,
               ) -> dict[Any, HeadStudy]:
    """The ``"heads"`` part of :func:`measure` for every model of ``models`` (keyed with the
    task first: ``(task, heads, seed)``, or ``(task, heads, head size, seed)`` for the
    fresh-data models): knockouts and, with ``impact``, the per-head margin impact by mean
    ablation (the means over the ``reference_sequences`` after the first ``num_sequences``
    held-out sequences), its reliability and per-head fidelity: a
    :class:`~bparallel.transformer.measure.HeadStudy` per model. It runs each model once per
    removed head, most of the chapter's time, so it is also looked up in ``recorded`` (the
    results recorded beside the shipped models, ``models/recorded/``)."""
    x = _heldout(models, num_sequences + reference_sequences)
    return _heads_on(models, x, reference_sequences=reference_sequences, horizon=horizon,
                     cache_dir=cache_dir, recorded=recorded, impact=impact)


def _heads_on(models: Mapping[Any, Any], x: Mapping[Any, Any], *, reference_sequences: int,
              horizon: int, cache_dir: str | os.PathLike | None,
              recorded: str | os.PathLike | None, impact: bool) -> dict[Any, HeadStudy]:
    """:func:`head_study` on the draw ``x`` (:func:`_heldout`) its caller already holds."""
    measured = measure_models(models, x, "heads",
                              options_of=lambda k: {"task": k[0]},
                              reference_sequences=reference_sequences, horizon=horizon,
                              impact=impact, cache_dir=cache_dir, recorded=recorded)
    return {k: m.heads for k, m in measured.items()}


def measure(models: Mapping[tuple[str, int, int], Any], *, num_sequences: int,
            reference_sequences: int, max_steps: int, cache_dir: str | os.PathLike | None,
            recorded: str | os.PathLike | None = None, impact: bool = True,
            ) -> dict[tuple[str, int, int], tuple[dict[str, np.ndarray], HeadStudy]]:
    """``{key: (defined, heads)}`` for every model of ``models`` (keyed ``(task, heads,
    seed)``), through the metrics cache (:func:`~.measures.measure_models`): the
    ``"defined"`` part on the first ``num_sequences`` held-out sequences of its task, and
    :func:`head_study` of the same sequences (``recorded`` and ``impact``): the graph
    measures and the :class:`~bparallel.transformer.measure.HeadStudy`."""
    x = _heldout(models, num_sequences + reference_sequences)  # the head study's draw
    defined = measure_models(models, {k: v[:num_sequences] for k, v in x.items()}, "defined",
                             max_steps=max_steps, horizon=max_steps, cache_dir=cache_dir)
    heads = _heads_on(models, x, reference_sequences=reference_sequences, horizon=max_steps,
                      cache_dir=cache_dir, recorded=recorded, impact=impact)
    return {k: (defined[k].graphs, heads[k]) for k in sorted(models)}


def paper_beside(profile: str, *, models_root: str | os.PathLike = MODELS_ROOT,
                 runs_dir: str | os.PathLike = RUNS_DIR,
                 ) -> tuple[dict[tuple[str, int, int], Any], dict[tuple[str, int, int], Any]]:
    """The paper tasks' models that join the graph tasks' tables, keyed like
    :class:`GraphModels`' with their metadata: for a resolved ``profile`` of ``"paper"``
    the shipped paper-profile models (:func:`paper_models`), for ``"quick"`` the book's
    quick-profile models (seed 42, trained by the build when absent)."""
    one_of(profile, "profile", PROFILES, "resolved profiles")
    if profile == "paper":
        return paper_models(Path(models_root) / "paper")

    quick = book_models("quick", runs_dir=runs_dir)
    return ({(t, h, DEFAULT_SEED): m for (t, h), m in quick.models.items()},
            {(t, h, DEFAULT_SEED): m for (t, h), m in quick.metas.items()})


def model_rows(models: Mapping[tuple[str, int, int], Any],
               metas: Mapping[tuple[str, int, int], Mapping[str, Any]], **measuring: Any,
               ) -> list[dict[str, Any]]:
    """:func:`model_row` of every model of ``models``, measured by :func:`measure` with the
    keyword arguments ``measuring``, in the order of the keys."""
    measured = measure(models, **measuring)
    return [model_row(k, *measured[k], metas[k]) for k in measured]


def learning_curves(bundle: GraphModels) -> dict[tuple[str, int, int], list[float]]:
    """Every model's learning curve (held-out accuracy on the predictable positions after
    every epoch), keyed like the models, as
    :func:`~bparallel.book.render.plotting.plot_learning_curves` takes them."""
    return {k: _curve(bundle.metas[k]) for k in bundle.models}


#: The chapter's three tables of summaries across seeds: per table, its columns as
#: (header, quantity of :data:`SUMMARY`, decimals, scale), and whether it shows the seeds.
TABLES: dict[str, tuple[tuple[tuple[str, str, int, float], ...], bool]] = {
    "tbl-graph-knockouts": ((("accuracy, intact (%)", "accuracy", 1, 100.0),
                             ("accuracy, no attention (%)", "knockout_all", 1, 100.0)), True),
    "tbl-graph-proxies": ((("Alg. 1, published code", "mixing.paper", 1, 1.0),
                           ("Alg. 1, definition", "mixing.definition", 1, 1.0),
                           ("Def. 2.7 T_mix", "t_mix", 1, 1.0),
                           ("φ_min, published code (%)", "fidelity.paper", 2, 1.0),
                           ("φ_min, definition (%)", "fidelity.definition", 2, 1.0),
                           ("rollout min", "rollout_min", 2, 1.0)), False),
}


def summary_table(summary: Sequence[Mapping[str, Any]], name: str) -> list[dict[str, str]]:
    """The rows of the chapter's table ``name`` (a key of :data:`TABLES`): per (task,
    heads) of ``summary`` (:func:`across_seeds`), each column's :func:`mean_interval`."""
    one_of(name, "name", tuple(TABLES), "tables")
    columns, with_seeds = TABLES[name]
    rows = []
    for r in summary:
        row: dict[str, Any] = {"task": r["task"], "heads": r["heads"]}
        if with_seeds:
            row["seeds"] = r["seeds"]
        row.update({header: mean_interval(r, q, decimals, scale)
                    for header, q, decimals, scale in columns})
        rows.append(row)
    return rows


def layer_knockouts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per task and head count: the held-out accuracy on the predictable positions (percent,
    mean over seeds) of the intact model and with every head of one layer removed (zero
    ablation), one column per layer: which layers each task needs."""
    out = []
    for task, heads in sorted({(r["task"], r["heads"]) for r in rows},
                              key=lambda k: (TASKS.index(k[0]), k[1])):
        mine = [r for r in rows if (r["task"], r["heads"]) == (task, heads)]
        layers = sorted(int(k.split("_L")[1]) for k in mine[0] if k.startswith("knockout_L"))
        intact = 100 * np.mean([r["accuracy_intact"] for r in mine])
        row: dict[str, Any] = {"task": task, "heads": heads, "seeds": len(mine),
                               "intact (%)": f"{intact:.1f}"}
        for la in layers:
            row[f"layer {la} removed (%)"] = \
                f"{100 * np.mean([r[f'knockout_L{la}'] for r in mine]):.1f}"
        out.append(row)
    return out


def summary_results(summary: Sequence[Mapping[str, Any]],
                    paper_summary: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The chapter's recorded values of :func:`across_seeds` summaries: per graph task and
    head count, the accuracy, epochs to 99% and the all-attention knockout; per paper task
    the knockout; and the knockouts' range over the graph tasks."""
    out: dict[str, float] = {}
    for r in summary:
        name = f"{r['task']}.h{r['heads']}"
        out[f"knockout.{name}.all.accuracy"] = r["knockout_all"]
        out[f"{name}.accuracy"] = r["accuracy"]
    for r in paper_summary:
        out[f"knockout.{r['task']}.h{r['heads']}.all.accuracy"] = r["knockout_all"]
    out["knockout.all.max"] = max(r["knockout_all"] for r in summary)
    out["knockout.all.min"] = min(r["knockout_all"] for r in summary)
    return out


def mean_interval(row: Mapping[str, Any], quantity: str, decimals: int = 1,
                  scale: float = 1.0) -> str:
    """``row[quantity]`` (a mean over seeds, times ``scale``) with its interval when
    :func:`across_seeds` gave one, as ``"12.3 [10.1, 14.5]"``, the interval clipped at 0
    (every quantity of :data:`SUMMARY` is a nonnegative time, share or count); ``"∞"`` for
    an infinite value (a graph that never mixes)."""
    value = row[quantity]
    if not math.isfinite(value):
        return "∞"
    low, high = row.get(f"{quantity}.low"), row.get(f"{quantity}.high")
    return fmt_interval(scale * value, None if low is None else scale * low,
                        None if high is None else scale * high, decimals, floor=0.0)


def head_tests(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per task and mode, does per-head fidelity rank the heads as their impact does?
    :func:`bparallel.book.section4.statistics.head_claims` of :func:`head_cells` (never pooled
    across tasks)."""
    return head_claims(head_cells(rows))


def head_results(head_tests: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The recorded values of the per-head tests
    (:func:`bparallel.book.section4.statistics.head_claims` of :func:`head_cells`): per task
    ``verdict.heads.<task>`` (the verdict's index in :class:`Verdict`),
    ``heads.<task>.{reliable_cells,cells}`` and per mode
    ``heads.<task>.<mode>.{cells,median,p}``."""
    out: dict[str, float] = {}
    for task, verdict in head_verdicts(head_tests).items():
        out[f"verdict.heads.{task}"] = verdict_index(verdict)
    for t in head_tests:
        base = f"heads.{t['task']}"
        out[f"{base}.reliable_cells"] = t["reliable_cells"]
        out[f"{base}.cells"] = t["task_cells"]
        mode = t["ranking"].split(".")[1]
        out[f"{base}.{mode}.cells"] = t["cells"]
        if t["cells"] and math.isfinite(t["median"]):
            out[f"{base}.{mode}.median"] = t["median"]
            out[f"{base}.{mode}.p"] = t["p"]
    return out


#: The per-head claim, as the verdict tables and the introduction write it.
HEADS_CLAIM = "Per-head fidelity says which heads do the work"


def verdict_index(verdict: Verdict) -> int:
    """A verdict as the regression references record it: its index in :class:`Verdict`."""
    return list(Verdict).index(Verdict.parse(verdict))


def heads_verdict(head_tests: Sequence[Mapping[str, Any]], *,
                  models: str = "finite-data models", arm: str = "—") -> dict[str, Any]:
    """The verdict-table row of the per-head claim (:data:`HEADS_CLAIM`): its verdict across
    tasks (:func:`bparallel.book.section4.statistics.across_tasks` of :func:`head_verdicts`) and the
    per-task verdicts as evidence, on the ``models`` the tests measured (in the row's
    ``arm`` column)."""
    per_task = head_verdicts(head_tests)
    verdict = across_tasks(list(per_task.values()))
    return {"claim": HEADS_CLAIM, "arm": arm, "verdict": verdict,
            "condition": verdict_condition(verdict, per_task, "task"),
            "evidence": f"{models}; " + ("; ".join(
                f"{task}: {v.value}" for task, v in per_task.items()) or "no reliable cell")}


def head_table(head_tests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per task: the reliable cells and each mode's median rho with its permutation p, that
    p after Holm's correction over the tests' family (the one the verdict reads), and the
    task's verdict (:func:`head_verdicts`)."""
    verdicts = head_verdicts(head_tests)
    rows = []
    for task, verdict in verdicts.items():
        by = {t["ranking"]: t for t in head_tests if t["task"] == task}
        row: dict[str, Any] = {"task": task,
                               "reliable cells": f"{by['fidelity.paper']['reliable_cells']} of "
                                                 f"{by['fidelity.paper']['task_cells']}"}
        for key, name in (("fidelity.paper", "published code"),
                          ("fidelity.definition", "as defined")):
            t = by[key]
            row[name] = ("—" if not t["cells"] else
                         f"ρ {t['median']:.2f} (p {fmt_p(t['p'])}, Holm {fmt_p(t['p_holm'])})")
        row["verdict"] = verdict_cell(verdict, modes_condition(
            by["fidelity.paper"]["verdict"], by["fidelity.definition"]["verdict"]))
        rows.append(row)
    return rows


def defaults(profile: str) -> dict[str, int]:
    """Sequences per model: measured and reference (for mean ablation)."""
    return {"paper": {"measured": 50, "reference": 25},
            "quick": {"measured": 20, "reference": 10}}[profile]


__all__ = ["DEFAULT_SEED", "HEADS_CLAIM", "SUMMARY", "TABLES", "across_seeds",
           "defaults", "head_cells", "head_count_change", "head_study",
           "head_results", "head_table", "head_tests", "head_verdicts", "heads_verdict",
           "layer_knockouts",
           "learning_curves", "mean_interval", "measure", "model_row", "model_rows",
           "no_attention_ceiling", "paper_beside",
           "summary_results", "summary_table", "tally", "task_constants", "task_rows",
           "training_epochs",
           "verdict_index"]
