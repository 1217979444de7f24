"""The model collections of chapter 12 ("Tasks where the graph matters"): the graph-task
models trained on a finite training set, keyed by ``(task, heads, seed)`` (:class:`GraphModels`,
:func:`graph_models`; the paper's tasks beside them, :func:`paper_models`; which profile
``"auto"`` means, :func:`resolve_profile`), and the controlled experiment's runs on fresh
data (:class:`FreshRuns`, :func:`fresh_runs`: manifest entries; :func:`load_models`: their
weights, keyed by ``(task, heads, head_size, seed)``).

The graph tasks (:data:`bparallel.transformer.data.GRAPH_TASKS`) each have a training
profile of their own, named after the task, and ship into ``models/<task>/`` (one manifest
per task, seeds as for the paper models). :func:`graph_models` loads every seed that has all
four head counts shipped, or, for ``profile="quick"``, the ``graph-quick`` profile's models
committed in ``models/graph-quick/`` (one seed; the same weights on every machine:
:func:`bparallel.transformer.shipped.fixed_quick`), trained into ``runs/graph-quick/``
where none are committed (minutes). The book's profiles are
:data:`bparallel.transformer.shipped.BOOK_PROFILES`; the 8 Section 4 models of chapters
07-11 are :func:`bparallel.transformer.shipped.book_models`, with their own ``"auto"``
(:func:`bparallel.transformer.shipped.resolve_profile`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._checks import one_of, positive_int
from ...transformer import shipped
from ...transformer.arms import arm_head_dim, arms_of
from ...transformer.checkpoints import load_checkpoint, load_weights
from ...transformer.data import FRESH_ONLY_TASKS, GRAPH_TASKS, PAPER_TASKS, TASKS, heldout_dataset
from ...transformer.design import ARMS, DEFAULT_SEED, HEADS, get_profile
from ...transformer.evaluation import evaluate_accuracy
from ...transformer.learning import LEARNED_IN_A_ROW, learning_time
from ...transformer.model import ModelConfig
from ...transformer.shipped import (
    MODELS_ROOT,
    RUNS_DIR,
    load_shipped,
    shipped_seeds,
    train_quick,
)

# --------------------------------------------------------------------------- the graph-task models


QUICK_PROFILE = "graph-quick"


@dataclass
class GraphModels:
    """Models keyed by ``(task, heads, seed)`` with their metadata (manifest entry and
    training history), the profile they stand for (``"paper"``: shipped; ``"quick"``) and a
    sentence on where they came from."""

    profile: str
    models: dict[tuple[str, int, int], Any]
    metas: dict[tuple[str, int, int], dict[str, Any]]
    source: str

    @property
    def seeds(self) -> dict[str, list[int]]:
        """The seeds per task."""
        out: dict[str, set[int]] = {}
        for task, _, seed in self.models:
            out.setdefault(task, set()).add(seed)
        return {t: sorted(s) for t, s in sorted(out.items(), key=lambda kv: TASKS.index(kv[0]))}

    @property
    def note(self) -> str:
        """A sentence for the page saying which models these are."""
        if self.profile == "paper":
            return f"These results use this project's shipped graph-task models ({self.source})."
        return ("QUICK PROFILE: these results use models trained for a few minutes "
                f"({self.source}), one seed, far from converged. They show the pipeline, "
                "not the findings; the graph-task models are not all shipped yet.")


def complete_seeds(models_dir: str | os.PathLike, task: str) -> list[int]:
    """The seeds of ``task`` with every head count of :data:`HEADS` shipped in
    ``models_dir``."""
    per_config = shipped_seeds(models_dir)
    sets = [set(per_config.get((task, h), [])) for h in HEADS]
    return sorted(set.intersection(*sets))


def resolve_profile(profile: str, models_root: str | os.PathLike = MODELS_ROOT,
                    tasks: Sequence[str] = GRAPH_TASKS) -> str:
    """``"auto"``: ``"paper"`` when every task has at least one seed with all head counts
    shipped, else ``"quick"`` (:func:`bparallel.transformer.shipped.resolve_profile`)."""
    return shipped.resolve_profile(profile, complete=lambda: all(
        complete_seeds(Path(models_root) / t, t) for t in tasks))


def graph_models(
    profile: str = "auto",
    *,
    models_root: str | os.PathLike = MODELS_ROOT,
    runs_dir: str | os.PathLike = RUNS_DIR,
    tasks: Sequence[str] = GRAPH_TASKS,
    threads: int | None = None,
    train_profile: str = QUICK_PROFILE,
) -> GraphModels:
    """The graph-task models (see the module docstring). ``"paper"`` never trains: without
    shipped models it raises ``FileNotFoundError``. ``train_profile`` is what ``"quick"``
    trains (the tests use the hidden ``"tiny"``)."""
    for task in tasks:
        if task not in TASKS:
            raise ValueError(f"tasks: {task!r} is not a task; valid tasks are {list(TASKS)}")
    resolved = resolve_profile(profile, models_root, tasks)
    models: dict[tuple[str, int, int], Any] = {}
    metas: dict[tuple[str, int, int], dict[str, Any]] = {}
    if resolved == "paper":
        counts = []
        for task in tasks:
            folder = Path(models_root) / task
            seeds = complete_seeds(folder, task)
            if not seeds:
                raise FileNotFoundError(f"{folder}: no seed of {task!r} has all head counts "
                                        f"{list(HEADS)} shipped")
            for seed in seeds:
                m, meta = load_shipped(folder, seed, tasks=(task,))
                for (t, h), model in m.items():
                    models[(t, h, seed)], metas[(t, h, seed)] = model, meta[(t, h)]
            counts.append(f"{task}: seeds {', '.join(map(str, seeds))}")
        return GraphModels("paper", models, metas, "; ".join(counts))
    fixed = shipped.fixed_quick(train_profile, tasks)
    if fixed is not None:
        for (task, heads), model in fixed[0].items():
            models[(task, heads, DEFAULT_SEED)] = model
            metas[(task, heads, DEFAULT_SEED)] = fixed[1][(task, heads)]
        return GraphModels("quick", models, metas,
                           f"committed in models/{train_profile}/: the same weights on every "
                           "machine")
    folder = Path(runs_dir) / train_profile
    for (task, heads), ck in train_quick(tasks, train_profile, folder, threads).items():
        key = (task, heads, int(ck.data["seed"]))
        models[key] = ck.model().eval()
        metas[key] = {"task": task, "heads": heads, "seed": ck.data["seed"],
                      "profile": train_profile, "epochs": ck.epoch,
                      "history": ck.history, "hardware": ck.data["hardware"]}
    return GraphModels("quick", models, metas, f"trained by this build into {folder.name}/")


def paper_models(models_dir: str | os.PathLike = MODELS_ROOT / "paper",
                 ) -> tuple[dict[tuple[str, int, int], Any], dict[tuple[str, int, int], Any]]:
    """The shipped paper-profile models of copy and cycle and their metadata, every seed
    with all 8 shipped, keyed like :class:`GraphModels`' (empty when none is shipped)."""
    models: dict[tuple[str, int, int], Any] = {}
    metas: dict[tuple[str, int, int], Any] = {}
    per_config = shipped_seeds(models_dir)
    if not per_config:
        return models, metas
    seeds = set.intersection(*(set(per_config.get((t, h), [])) for t in PAPER_TASKS
                               for h in HEADS))
    for seed in sorted(seeds):
        m, meta = load_shipped(models_dir, seed)
        for (task, heads), model in m.items():
            models[(task, heads, seed)], metas[(task, heads, seed)] = model, meta[(task, heads)]
    return models, metas


# --------------------------------------------------------------------------- the fresh-data runs


#: How the pages name chapter 12's arms (:data:`~bparallel.transformer.design.ARMS`).
ARM_NAMES = {"width": "fixed width", "head16": "fixed head size",
             "inner256": "fixed attention width"}
#: The fresh-data profile of each task that trains on fresh data (``models/<profile>/``):
#: histogram's is the settling recipe its pilots point to (no dropout, the rate decayed to 0
#: at a budget sized for the slowest learner); its constant-rate runs with dropout stay as
#: the pilots' baseline (:data:`PILOT_BASELINES`).
FRESH_PROFILES = {"induction": "induction-fresh", "majority": "majority-fresh",
                  "histogram": "histogram-nodropout-cosine"}


#: Pilots of another training recipe (chapter 12): per task, the fresh-data profile whose
#: runs repeat some of the task's runs (the same configurations, seeds, batches and starting
#: weights) with only the recipe changed: histogram's learning rate decayed to 0 at the
#: budget (:data:`~bparallel.transformer.design.LR_SCHEDULES`).
RECIPE_PILOTS = {"histogram": "histogram-cosine"}

#: The pilot of training without dropout (chapter 12): histogram's runs repeated with
#: dropout 0 and nothing else changed (the paper's constant rate and the chapter's budget),
#: so that the model the held-out curve evaluates is the model the optimiser trained.
DROPOUT_PILOTS = {"histogram": "histogram-nodropout"}

#: Pilots of a budget for a recipe (chapter 12): per task, the fresh-data profile whose runs
#: train the piloted recipe over a longer budget (histogram's cosine decay over 36,000
#: steps), read with the unfinished runs as their committed snapshots stand
#: (:func:`budget_pilot_runs`).
BUDGET_PILOTS = {"histogram": "histogram-cosine-36k"}


@dataclass(frozen=True)
class PilotDesign:
    """Which runs of a pilot's profile make the pilot, fixed before its runs finish: seeds
    ``seeds`` of every configuration and, per configuration ``(heads, head_size)``, the
    seeds in ``more``. Runs trained later under the same profile (a retrain begun before the
    pilot's reading) are not the pilot's and never change what it reads."""

    seeds: tuple[int, ...]
    more: Mapping[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)

    def __contains__(self, run: object) -> bool:
        if not isinstance(run, Mapping):
            return False
        key = (int(run["heads"]), int(run["head_size"]))
        return int(run["seed"]) in (*self.seeds, *self.more.get(key, ()))

    def runs(self) -> set[tuple[int, int, int]]:
        """``(heads, head_size, seed)`` of every run of the design: its seeds at every
        configuration of the three arms (:data:`~bparallel.transformer.design.ARMS` at
        every head count of :data:`~bparallel.transformer.design.HEADS`) and the more seeds
        of its configurations."""
        configs = {(h, arm_head_dim(arm, h)) for arm in ARMS for h in HEADS}
        return ({(h, hs, s) for h, hs in configs for s in self.seeds}
                | {(h, hs, s) for (h, hs), seeds in self.more.items() for s in seeds})


#: The runs each budget pilot is (:class:`PilotDesign`): histogram's, seed 42 of every
#: configuration of the three arms and sixteen heads of four dimensions (the slowest learner
#: at the constant rate) at seeds 43 and 44 too.
BUDGET_PILOT_DESIGNS = {"histogram": PilotDesign(seeds=(42,), more={(16, 4): (43, 44)})}

#: The pilot of both changes together (chapter 12): histogram's runs without dropout and
#: with the learning rate decayed to 0 at 18,000 steps (the profile says why), the recipe
#: the three pilots above point to; read, when its runs finish, by the budget pilot's rule
#: (:func:`~bparallel.book.section4.graph_pilots.budget_pilot_reading`).
SETTLING_PILOTS = {"histogram": "histogram-nodropout-cosine"}

#: The runs of each settling pilot, fixed before they train: the budget pilot's design.
SETTLING_PILOT_DESIGNS = {"histogram": BUDGET_PILOT_DESIGNS["histogram"]}

#: The runs every pilot of a task is set beside (the recipe's and the budget's): the task's
#: runs at the paper's constant rate and the chapter's first budget, with dropout. Histogram's
#: chapter runs have moved to the settling recipe (:data:`FRESH_PROFILES`); its pilots still
#: read against the runs they were piloted on.
PILOT_BASELINES = {"histogram": "histogram-fresh"}

#: The runs chapter 12's dropout check reads (:func:`~.graph_learning.dropout_rows`): every
#: task's runs at Section 4.1's recipe, trained with dropout: the pilots' baselines where a
#: task has one, else the chapter's runs. Histogram's chapter runs train without dropout
#: (:data:`FRESH_PROFILES`), so the check reads its constant-rate runs, whose dropout it is
#: about.
DROPOUT_CHECKED = {**FRESH_PROFILES, **PILOT_BASELINES}

#: The tasks of the experiment, in the book's order.
FRESH_TASKS = tuple(t for t in (*GRAPH_TASKS, *FRESH_ONLY_TASKS) if t in FRESH_PROFILES)

#: The fresh-data tasks that also have finite-data models (``models/<task>/``), the third
#: condition; histogram, majority's replacement, is trained on fresh data only.
FINITE_TASKS = tuple(t for t in FRESH_TASKS if t in GRAPH_TASKS)


@dataclass
class FreshRuns:
    """The shipped fresh-data runs: ``entries`` (manifest entries of the plain budget, each
    with its ``task``, ``heads``, ``head_size``, ``seed``, ``arms``), ``extended`` (shipped
    runs of a multiple of the budget, ``sweep --budget-factor``: kept apart, never in the
    chapter's tests, whose extension rule is *none*: a run that has not converged at the
    budget is censored there), and per task its profile's
    ``budget``, ``threshold`` and ``eval_every`` (``profiles``; a task whose models are not
    shipped yet has none)."""

    entries: list[dict[str, Any]]
    extended: list[dict[str, Any]] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)

    def of(self, task: str, arm: str | None = None) -> list[dict[str, Any]]:
        """The plain-budget entries of ``task`` (of ``arm`` when given)."""
        return [e for e in self.entries
                if e["task"] == task and (arm is None or arm in e["arms"])]

    def seeds(self, task: str, arm: str) -> list[int]:
        """The seeds of ``task`` and ``arm`` with every head count of :data:`HEADS` shipped."""
        have: dict[int, set[int]] = {}
        for e in self.of(task, arm):
            have.setdefault(e["seed"], set()).add(e["heads"])
        return sorted(s for s, h in have.items() if h >= set(HEADS))


def fresh_runs(models_root: str | os.PathLike = MODELS_ROOT,
               tasks: Sequence[str] | None = None,
               profiles: Mapping[str, str] = FRESH_PROFILES) -> FreshRuns:
    """Every shipped fresh-data run of ``tasks`` (default: every task of ``profiles``), read
    from ``models/<profile>/manifest.json``, the profile of each task from ``profiles``
    (:data:`FRESH_PROFILES`, or :data:`RECIPE_PILOTS` for the pilots' runs); a task without
    a manifest has no entries."""
    mine = [t for t in FRESH_TASKS if t in profiles]  # in the book's order
    tasks = tuple(mine) if tasks is None else tasks
    for task in tasks:
        one_of(task, "tasks", mine, "tasks trained on fresh data under these profiles")
    runs = FreshRuns([])
    for task in tasks:
        profile = get_profile(profiles[task])
        runs.profiles[task] = {"profile": profile.name, "budget": profile.steps,
                               "threshold": profile.threshold_of(task),
                               "eval_every": profile.eval_every,
                               "patience": profile.patience, "tolerance": profile.tolerance,
                               "batch_size": profile.batch_size,
                               "num_heldout": profile.num_heldout,
                               "probe_sequences": profile.probe_sequences,
                               "probe_first": profile.probe_first}
        path = Path(models_root) / profile.name / "manifest.json"
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as f:
            models = json.load(f)["models"]
        for entry in models.values():
            if entry["task"] != task:
                continue
            # the arms of the design as it is now (an arm added since a run was shipped
            # counts the runs it shares: 16 heads of 16 are the inner256 arm's too)
            heads, head_size = int(entry["heads"]), int(entry["head_size"])
            cfg = (ModelConfig(**entry["model_config"]) if "model_config" in entry
                   else ModelConfig(n_heads=heads, head_size=head_size))
            e = {**entry, "heads": heads, "seed": int(entry["seed"]), "head_size": head_size,
                 "arms": arms_of(cfg)}
            (runs.entries if int(e.get("budget_factor", 1)) == 1 else runs.extended).append(e)
    runs.entries.sort(key=lambda e: (FRESH_TASKS.index(e["task"]), e["heads"], e["head_size"],
                                     e["seed"]))
    return runs


def run_outcome(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A fresh-data run's outcome by chapter 12's rule, from its manifest ``entry``: the
    manifest's ``outcome``, ``learned_at`` (the learning time,
    :func:`~bparallel.transformer.learning.learning_time`; ``None``: never learned),
    ``in_a_row`` (default :data:`~bparallel.transformer.learning.LEARNED_IN_A_ROW`),
    ``converged_at``, ``budget``, ``steps`` and ``threshold`` (what the explorer states)."""
    return {"outcome": entry["outcome"], "learned_at": learning_time(entry),
            "in_a_row": entry.get("in_a_row", LEARNED_IN_A_ROW),
            "converged_at": entry.get("converged_at"), "budget": entry["budget"],
            "steps": entry["steps"], "threshold": entry["threshold"]}


def run_key(run: Mapping[str, Any]) -> tuple[str, int, int, int]:
    """A run's identity across profiles, manifests and snapshots: ``(task, heads, head_size,
    seed)``, the key of :func:`load_models` and of a pilot run's twin."""
    return run["task"], int(run["heads"]), int(run["head_size"]), int(run["seed"])


def _in_design(run: Mapping[str, Any], designs: Mapping[str, PilotDesign]) -> bool:
    """Whether ``run`` is one of its pilot's runs: every run of a task without a design."""
    return run["task"] not in designs or run in designs[run["task"]]


def budget_pilot_runs(models_root: str | os.PathLike = MODELS_ROOT,
                      profiles: Mapping[str, str] = BUDGET_PILOTS,
                      designs: Mapping[str, PilotDesign] = BUDGET_PILOT_DESIGNS,
                      shipped: FreshRuns | None = None) -> list[dict[str, Any]]:
    """Every run of the budget pilots (:data:`BUDGET_PILOTS`; or of the settling pilots,
    :data:`SETTLING_PILOTS` and their designs), finished or not: the shipped ones
    (:func:`budget_pilot_shipped`, ``"finished": True``; ``shipped`` when the caller has
    read them already) and each unfinished run's committed snapshot
    (``models/<profile>/partial/seed-<S>/*.ckpt.pt``) read as it stands (``"finished":
    False``: its outcome so far, ``"running"`` until its budget, and its curve to the last
    evaluation; a snapshot of a run shipped since is superseded by it); of a task with a
    design in ``designs`` (:data:`BUDGET_PILOT_DESIGNS`), only the design's runs. Each run
    has ``task``, ``heads``, ``head_size``, ``seed``, ``arms``, ``profile``, ``budget``,
    ``threshold``, ``step`` (trained so far), ``outcome``, ``converged_at``,
    ``heldout_accuracy_predictable`` (the last evaluation's) and ``curve``; sorted by task,
    configuration and seed."""
    runs = budget_pilot_shipped(models_root, profiles, designs) if shipped is None else shipped
    out = [{**e, "finished": True, "step": int(e["steps"])} for e in runs.entries]
    shipped_keys = {run_key(e) for e in out}
    for task, name in profiles.items():
        if task not in runs.profiles:
            continue
        for path in sorted((Path(models_root) / name / "partial").glob("seed-*/*.ckpt.pt")):
            ck = load_checkpoint(path, task=task, profile=name)
            meta, h = ck.meta(), ck.history
            if not _in_design(meta, designs) or run_key(meta) in shipped_keys:
                continue  # not the pilot's, or superseded by the run shipped since
            out.append({**{k: meta[k] for k in ("task", "heads", "head_size", "seed", "arms",
                                                "budget", "step", "outcome", "converged_at")},
                        "profile": name, "threshold": ck.threshold, "finished": False,
                        "heldout_accuracy_predictable": float(
                            h["heldout_accuracy_predictable"][-1]),
                        "curve": {k: list(h[k]) for k in ("step",
                                                          "heldout_accuracy_predictable")}})
    return sorted(out, key=lambda e: (FRESH_TASKS.index(e["task"]), e["heads"],
                                      e["head_size"], e["seed"]))


def budget_pilot_shipped(models_root: str | os.PathLike = MODELS_ROOT,
                         profiles: Mapping[str, str] = BUDGET_PILOTS,
                         designs: Mapping[str, PilotDesign] = BUDGET_PILOT_DESIGNS
                         ) -> FreshRuns:
    """The finished runs of the budget pilots (:data:`BUDGET_PILOTS`, or other pilots'
    ``profiles``), of a task with a design in ``designs`` (:data:`BUDGET_PILOT_DESIGNS`)
    only the design's, as :class:`FreshRuns` (for :func:`load_models` and the chapter's
    measures of shipped runs)."""
    runs = fresh_runs(models_root, profiles=profiles)
    runs.entries = [e for e in runs.entries if _in_design(e, designs)]
    return runs


#: The seed of the re-score's sequences: a held-out stream that no run trained on or was
#: evaluated on (training streams are the runs' seeds, the held-out set seed 42's).
RESCORE_SEED = 2026


def rescore(runs: FreshRuns, models_root: str | os.PathLike = MODELS_ROOT,
            sequences: int = 300) -> list[dict[str, Any]]:
    """Every shipped fresh-data run scored again, independently of its manifest: its weights
    loaded and hash-checked (:func:`load_models`), evaluated on ``sequences`` new sequences
    of its task (the held-out stream of :data:`RESCORE_SEED`,
    :func:`~bparallel.transformer.evaluation.evaluate_accuracy`); per run the manifest's
    held-out accuracy on the predictable positions (``manifest``) beside the new one
    (``rescored``)."""
    positive_int(sequences, "sequences")
    out = []
    loaded = load_models(runs, models_root)
    for e in runs.entries:
        model = loaded[run_key(e)]
        cfg = model.config
        data = heldout_dataset(e["task"], sequences, seed=RESCORE_SEED, seq_len=cfg.seq_len,
                               vocab_size=cfg.vocab_size)
        out.append({"task": e["task"], "heads": e["heads"], "head_size": e["head_size"],
                    "seed": e["seed"], "manifest": float(e["heldout_accuracy_predictable"]),
                    "rescored": float(evaluate_accuracy(model, data)["accuracy_predictable"])})
    return out


def load_models(runs: FreshRuns, models_root: str | os.PathLike = MODELS_ROOT, *,
                have: tuple[FreshRuns, Mapping[tuple[str, int, int, int], Any]] | None = None,
                ) -> dict[tuple[str, int, int, int], Any]:
    """The shipped weights of every plain-budget run (from its task's profile in ``runs``),
    keyed ``(task, heads, head_size, seed)``, each checked against the SHA-256 of its
    manifest entry (``weights_only`` loading,
    :func:`~bparallel.transformer.checkpoints.load_weights`). ``have``: models already
    loaded for other runs, ``(their runs, their models)``: a run whose weights have the SHA-256
    of one of theirs is taken from them rather than read again (chapter 12's dropout check
    shares induction's runs with the chapter's)."""
    if have is not None and not (isinstance(have, tuple) and len(have) == 2
                                 and isinstance(have[0], FreshRuns)
                                 and isinstance(have[1], Mapping)):
        raise ValueError(f"have: expected (FreshRuns, models by run key), got "
                         f"{type(have).__name__}")
    have_runs, have_models = have if have is not None else (FreshRuns([]), {})
    # the same bytes are the same model: what is loaded already, by its weights' SHA-256
    by_sha = {e["sha256"]: have_models[run_key(e)] for e in have_runs.entries
              if run_key(e) in have_models}
    out = {}
    for e in runs.entries:
        model = by_sha.get(e["sha256"])
        if model is None:
            folder = Path(models_root) / runs.profiles[e["task"]]["profile"]
            model, _ = load_weights(folder / e["file"], sha256=e["sha256"])
        out[run_key(e)] = model
    return out
