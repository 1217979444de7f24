"""What a run of Section 4 is, before anything trains: its profile (how much data, how long,
the optimiser settings), its configuration (head count, head size, arm), its seed, its name
and files, and the sequences it is evaluated on.

Two kinds of profile, one per kind of training (:func:`~bparallel.transformer.train.train`
trains either):

- :class:`Profile`: a **finite training set**, in epochs (the paper's Section 4.1); the
  held-out set is drawn per seed.
- :class:`FreshProfile`: **fresh data**, a new batch every step (:func:`fresh_batch`), to a
  budget in steps or until the convergence rule holds (:mod:`~bparallel.transformer.learning`);
  the held-out set is fixed per task (:func:`fresh_heldout`). No sequence is seen twice, so a
  model cannot memorise its training set.

Both read their optimiser and model settings from :class:`Recipe` (Adam, lr 1e-3, batch 50,
dropout 0.1, sequences of 100 tokens over 256 symbols), and both live in one table,
:data:`PROFILES`, under distinct names; :func:`get_profile` returns either.

**Arms** of fresh-data training (:data:`~.arms.ARMS`, :mod:`~bparallel.transformer.arms`)
separate the number of heads from their size.

**Controls** of chapter 12's reversal on induction (fixed attention width, with the probes of
:mod:`~bparallel.transformer.head_probes`): ``induction-fresh-lr3e-4`` and
``induction-fresh-lr3e-3``, the paper's recipe at a third and three times its rate, and
``induction-nodropout-cosine``, histogram's settling recipe (no dropout, the rate decayed
along a cosine to 0 at the budget, as ``histogram-nodropout-cosine``). How the head size
enters the rate: a head's logits are ``q . k / sqrt(D)``, ``q = W_Q x`` and ``k = W_K x``
initialised at the scale of the width ``d = 64`` alone, so at initialisation their spread is
the same at every head size. An Adam step moves each of ``q``'s ``D`` coordinates by about
the rate, so the logit by ``sqrt(D)`` times it: a head of 256 can move its pattern up to 4
times as fast per step as a head of 16; the control asks whether the reversal survives each
configuration at its own best rate, over a factor of ten (3e-4 to 3e-3).
``induction-scale-lr3e-3`` (chapter 13's scale control) asks whether that speed is the
delay: each head's logits scaled by ``sqrt(W)/D`` (:data:`LOGIT_SCALES`,
:meth:`Recipe.query_gain`), so that a step moves every head's logits as far as one head of
the whole width ``W``'s.

**Names.** A run is ``<task>-hNN`` (:func:`run_name`), ``-hsNN`` for a head size other than
``64/H``, ``-L<n>``, ``-w<d>``, ``-m<d>`` for a depth, width or MLP width other than its
profile's, ``-xK`` for ``K`` times the budget, ``-d<D>`` for a data seed other than its
seed; a shipped model adds ``-s<S>`` for a seed other than the paper's 42
(:func:`model_name`). A run names every one of its files through
:class:`~bparallel.transformer.runs.Run`, the one value a run is. ``induction-tiny``: the
training page's model.

Imported by training, shipping and the book alike, never by the measures
(:mod:`~bparallel.transformer.measure` takes sequences, not profiles), so editing a profile
keeps every cached measure.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from .._checks import nonnegative_int, one_of, positive_int, unit_interval
from .arms import ARMS
from .data import (
    GRAPH_TASKS,
    PAPER_TASKS,
    TASKS,
    SequenceDataset,
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
    paper_protocol_sequences,
)
from .learning import LEARNING_THRESHOLD, PATIENCE, TOLERANCE
from .model import ModelConfig

DEFAULT_SEED = 42
HEADS = (1, 4, 8, 16)
# The training loss averages the cross-entropy over every position (Section 4.1), or over
# the predictable ones only: the graph tasks' unpredictable positions (induction's first half)
# carry no signal, and with them in the loss a model waits far longer to start learning.
LOSS_POSITIONS = ("all", "predictable")
#: How a fresh-data run's learning rate moves over its budget: ``"constant"`` (Section 4.1's
#: Adam at 1e-3 throughout) or ``"cosine"`` (from 1e-3 to 0 at the budget along a half
#: cosine, :meth:`FreshProfile.lr_at`; Loshchilov & Hutter 2017).
LR_SCHEDULES = ("constant", "cosine")
#: How a head's attention logits are scaled (``Recipe.logit_scale``): ``"1/sqrt(D)"``
#: (Vaswani et al. 2017, every shipped model's) or ``"sqrt(W)/D"`` (chapter 13's scale
#: control, :meth:`Recipe.query_gain`), with ``D`` the head size and ``W = H D`` the attention
#: width.
LOGIT_SCALES = ("1/sqrt(D)", "sqrt(W)/D")
HELDOUT_SEED = DEFAULT_SEED  # the fixed held-out set of every fresh-data run


# --------------------------------------------------------------------------- profiles


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """The optimiser and model settings of Section 4.1 that both kinds of profile share."""

    batch_size: int = 50
    lr: float = 1e-3
    dropout: float = 0.1
    seq_len: int = 100
    vocab_size: int = 256
    d_model: int = 64
    n_layers: int = 4
    d_mlp: int = 128
    loss_positions: str = "all"
    description: str = ""
    hidden: bool = False
    logit_scale: str = LOGIT_SCALES[0]

    #: What the run counts: ``"epoch"`` or ``"step"``.
    unit = "epoch"

    def __post_init__(self) -> None:
        positive_int(self.batch_size, "batch_size")
        one_of(self.loss_positions, "loss_positions", LOSS_POSITIONS, "values")
        one_of(self.logit_scale, "logit_scale", LOGIT_SCALES, "scales")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, ``logit_scale`` left out at its default (so that every
        profile and checkpoint written before the field existed is recorded as before)."""
        d = asdict(self)
        if d["logit_scale"] == LOGIT_SCALES[0]:
            del d["logit_scale"]
        return d

    def query_gain(self, config: ModelConfig) -> float:
        """The factor ``g`` by which a head's logits ``q . k / sqrt(D)`` are multiplied
        under ``logit_scale``: 1 at ``"1/sqrt(D)"``; ``sqrt(W / D) = sqrt(H)`` at
        ``"sqrt(W)/D"``, whose scale ``sqrt(W) / D`` makes ``scale * D``, how far an Adam step
        can move a logit (module docstring), ``sqrt(W)`` at every head count: a head of
        ``D = W / H`` then moves its pattern per step as one head of the whole width does.
        Training applies it to the queries (:func:`~.train.adam_for`)."""
        if not isinstance(config, ModelConfig):
            raise ValueError(f"config={type(config).__name__}: give a ModelConfig")
        if self.logit_scale == LOGIT_SCALES[0]:
            return 1.0
        return math.sqrt(config.attention_width / config.head_dim)

    def total(self, budget_factor: int = 1) -> int:
        """The last epoch, or the step budget (``budget_factor`` times the profile's)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Profile(Recipe):
    """A finite training set of ``num_train`` sequences, ``epochs`` passes over it, and a
    held-out set of ``num_heldout`` sequences per seed (Section 4.1)."""

    name: str
    num_train: int
    epochs: int
    num_heldout: int

    #: The arms a finite-data profile trains: the paper's head size only.
    arms = ("width",)

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks the profile is made for (:data:`PROFILE_TASKS`; a profile built by
        hand: every task)."""
        return PROFILE_TASKS.get(self.name, TASKS)

    def settings(self) -> dict[str, Any]:
        """What a run of this profile is trained with, less the epoch count (which may grow):
        the part a resumed checkpoint must match."""
        return {k: v for k, v in self.to_dict().items() if k not in ("epochs", "description")}

    def total(self, budget_factor: int = 1) -> int:
        if positive_int(budget_factor, "budget_factor") != 1:
            raise ValueError(f"budget_factor={budget_factor}: a finite-data profile trains "
                             "its epochs (give epochs=...); budget factors are for fresh data")
        return self.epochs


@dataclass(frozen=True)
class FreshProfile(Recipe):
    """How a fresh-data run trains: its tasks, budget, evaluation and convergence rule.

    ``steps``: the budget ``B`` (a multiple of ``eval_every``); ``eval_every``: steps between
    held-out evaluations; ``patience``, ``tolerance``: the convergence rule
    (:func:`~.learning.converged_at`); ``threshold``: the learning threshold, ``None`` for
    the task's :data:`~.learning.LEARNING_THRESHOLD`; ``num_heldout``: the fixed held-out
    set; ``probe_sequences``: how many of its sequences the probes measure; ``probe_first``:
    the first step after 0 of the log-spaced probe schedule (:func:`~.learning.probe_steps`).
    The loss is taken over the predictable positions (``loss_positions``). ``lr_schedule``
    (:data:`LR_SCHEDULES`): the learning rate over the budget, :meth:`lr_at`.

    ``head_probe_every``, ``head_probe_until``: the per-head probes of
    :mod:`~bparallel.transformer.head_probes` (previous-token, induction and copying scores,
    logit rank, and the probe set's loss), on the probe sequences every ``head_probe_every``
    steps up to step ``head_probe_until``, then at every evaluation
    (:func:`~bparallel.transformer.head_probes.head_probe_steps`); ``None`` (the default): no
    head probes.
    """

    name: str
    tasks: tuple[str, ...]
    steps: int
    eval_every: int
    patience: int = PATIENCE
    tolerance: float = TOLERANCE
    threshold: float | None = None
    num_heldout: int = 1000
    probe_sequences: int = 20
    probe_first: int = 50
    loss_positions: str = field(default="predictable", kw_only=True)
    lr_schedule: str = field(default="constant", kw_only=True)
    head_probe_every: int | None = field(default=None, kw_only=True)
    head_probe_until: int = field(default=0, kw_only=True)

    unit = "step"
    arms = ARMS

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("steps", "eval_every", "patience", "num_heldout", "probe_sequences",
                     "probe_first"):
            positive_int(getattr(self, name), name)
        for task in self.tasks:
            one_of(task, "tasks", TASKS, "tasks")
        if self.steps % self.eval_every:
            raise ValueError(f"steps={self.steps}: must be a multiple of "
                             f"eval_every={self.eval_every}")
        if self.probe_sequences > self.num_heldout:
            raise ValueError(f"probe_sequences={self.probe_sequences}: at most "
                             f"num_heldout={self.num_heldout}")
        unit_interval(self.tolerance, "tolerance", closed=True)
        if self.threshold is not None:
            unit_interval(self.threshold, "threshold", closed=True)
        one_of(self.lr_schedule, "lr_schedule", LR_SCHEDULES, "schedules")
        if self.head_probe_every is not None:
            positive_int(self.head_probe_every, "head_probe_every")
        nonnegative_int(self.head_probe_until, "head_probe_until")

    def lr_at(self, step: int, total: int) -> float:
        """The learning rate of step ``step`` (0-based: the ``step + 1``-th update) of a run
        whose budget is ``total`` steps: ``lr`` throughout (``"constant"``), or
        ``lr (1 + cos(pi step / total)) / 2`` (``"cosine"``: ``lr`` at the first step, 0 at
        the budget)."""
        total = positive_int(total, "total")
        if not 0 <= step < total:
            raise ValueError(f"step={step}: must lie in [0, total={total})")
        if self.lr_schedule == "constant":
            return self.lr
        return self.lr * 0.5 * (1.0 + math.cos(math.pi * step / total))

    def half_rate_step(self, total: int) -> int:
        """The last step of a run of budget ``total`` whose update still has at least half
        the profile's rate: ``total`` at a constant rate, ``total // 2`` along the half
        cosine (``cos(pi step / total) >= 0`` exactly when ``step <= total / 2``; counted
        in integers, so no float decides it)."""
        total = positive_int(total, "total")
        return total if self.lr_schedule == "constant" else total // 2

    def threshold_of(self, task: str) -> float:
        """The learning threshold of ``task`` under this profile."""
        if self.threshold is not None:
            return self.threshold
        return LEARNING_THRESHOLD[one_of(task, "task", list(LEARNING_THRESHOLD),
                                         "tasks with a learning threshold (else give the "
                                         "profile one)")]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["tasks"] = list(self.tasks)
        return d

    def settings(self) -> dict[str, Any]:
        """What a run is trained with, less the budget (which may grow): what a resumed
        checkpoint must match."""
        return {k: v for k, v in self.to_dict().items()
                if k not in ("steps", "description", "hidden")}

    def total(self, budget_factor: int = 1) -> int:
        if positive_int(budget_factor, "budget_factor") != 1 and self.lr_schedule != "constant":
            raise ValueError(f"budget_factor={budget_factor}: profile {self.name!r} decays its "
                             f"learning rate over its budget ({self.lr_schedule}), so a longer "
                             "run is another schedule, not a continuation: give the profile "
                             "more steps")
        return self.steps * budget_factor


PROFILES: dict[str, Profile | FreshProfile] = {
    "paper": Profile(
        "paper", num_train=5000, epochs=200, num_heldout=2000,
        description="Section 4.1: 5,000 sequences, 200 epochs (about half a day on 2 CPU cores)",
    ),
    "quick": Profile(
        "quick", num_train=1000, epochs=4, num_heldout=500,
        description="CI and book builds: all 8 models in a few minutes on 2 CPU cores",
    ),
    "tiny": Profile(
        "tiny", num_train=40, epochs=2, num_heldout=20, batch_size=10, seq_len=16,
        description="tests only: seconds", hidden=True,
    ),
    # The graph tasks, one profile per task family, each sized so that its models reach
    # their plateau; the loss on the predictable positions (LOSS_POSITIONS).
    "first": Profile(
        "first", num_train=5000, epochs=15, num_heldout=1000, loss_positions="predictable",
        description="long-range retrieval (task first): 5,000 sequences, 15 epochs",
    ),
    "induction": Profile(
        "induction", num_train=5000, epochs=60, num_heldout=1000,
        loss_positions="predictable",
        description="two-hop composition (task induction): 5,000 sequences, 60 epochs",
    ),
    "majority": Profile(
        "majority", num_train=5000, epochs=40, num_heldout=1000, loss_positions="predictable",
        description="aggregation over the prefix (task majority): 5,000 sequences, 40 epochs",
    ),
    "graph-quick": Profile(
        "graph-quick", num_train=1000, epochs=4, num_heldout=200, loss_positions="predictable",
        description="the graph tasks in CI and book builds: all 12 models in a few minutes",
    ),
    # Fresh data: a new batch every step, to convergence or the budget.
    "first-fresh": FreshProfile(
        "first-fresh", ("first",), steps=4000, eval_every=100,
        description="long-range retrieval on fresh data: up to 4,000 steps of 50 new sequences",
    ),
    "induction-fresh": FreshProfile(
        "induction-fresh", ("induction",), steps=12000, eval_every=200,
        description="two-hop composition on fresh data: up to 12,000 steps",
    ),
    "majority-fresh": FreshProfile(
        "majority-fresh", ("majority",), steps=12000, eval_every=200,
        description="aggregation over the prefix on fresh data: up to 12,000 steps",
    ),
    # majority's replacement: no head count learned majority within 12,000 steps (73-75%
    # of the predictable positions, threshold 90%).
    "histogram-fresh": FreshProfile(
        "histogram-fresh", ("histogram",), steps=12000, eval_every=200,
        description="counting the current token (histogram) on fresh data: up to 12,000 steps",
    ),
    # The pilot of a settling recipe: histogram's runs at a constant rate keep oscillating
    # around the threshold and none converges within 12,000 steps; the same runs (seed,
    # batches, starting weights) with the rate decayed to 0 at the budget.
    "histogram-cosine": FreshProfile(
        "histogram-cosine", ("histogram",), steps=12000, eval_every=200, lr_schedule="cosine",
        description="histogram on fresh data, the learning rate decayed along a cosine to 0 "
                    "at 12,000 steps (pilot)",
    ),
    # Sizing the settling recipe's budget: at 12,000 steps the decayed rate settles the
    # runs below the threshold (4 x 16, 1 x 16); the slowest learners at a constant rate
    # (16 x 4 first reaches 90% at 13,600-16,200 steps and converges at 28,800-30,200)
    # repeated with the rate decayed over three times the budget.
    "histogram-cosine-36k": FreshProfile(
        "histogram-cosine-36k", ("histogram",), steps=36000, eval_every=200,
        lr_schedule="cosine",
        description="histogram on fresh data, the learning rate decayed along a cosine to 0 "
                    "at 36,000 steps (pilot of the budget)",
    ),
    # The pilot of a recipe without dropout: some histogram models score far higher with
    # their dropout on, as trained, than in evaluation without it (chapter 12's table of
    # what the held-out curve evaluates), so their held-out curve reads a model the training
    # did not optimise; the same runs (seed, batches, starting weights, constant rate) with
    # dropout 0, where the trained and the evaluated model are one.
    "histogram-nodropout": FreshProfile(
        "histogram-nodropout", ("histogram",), steps=12000, eval_every=200, dropout=0.0,
        description="histogram on fresh data without dropout, up to 12,000 steps (pilot)",
    ),
    # Both changes together, the recipe the pilots point to: without dropout the piloted runs
    # learn two to three times sooner and the held-out curve scores the trained model, and
    # a rate decayed to 0 at the budget settles a run where it stands. The budget: the
    # budget pilot's rule asks every learner to learn by the step where the rate is half its
    # start (the middle); the slowest learner with dropout (16 x 4, first at 90% at steps
    # 13,600-16,200) at the two to three times sooner of the runs without dropout would
    # learn at about 5,500-6,500, too near the middle of 12,000 steps: 18,000.
    "histogram-nodropout-cosine": FreshProfile(
        "histogram-nodropout-cosine", ("histogram",), steps=18000, eval_every=200,
        dropout=0.0, lr_schedule="cosine",
        description="histogram on fresh data without dropout, the learning rate decayed along "
                    "a cosine to 0 at 18,000 steps (the settling pilot, then chapter 12's "
                    "runs)",
    ),
    # The controls (module docstring): head probes every 20 steps through the phase change,
    # which at 1e-3 ends by step 1,800 (so to 2,000; at a third of the rate, to 6,000).
    "induction-fresh-lr3e-4": FreshProfile(
        "induction-fresh-lr3e-4", ("induction",), steps=12000, eval_every=200, lr=3e-4,
        head_probe_every=20, head_probe_until=6000,
        description="two-hop composition on fresh data at a learning rate of 3e-4 (the "
                    "learning-rate control), up to 12,000 steps, per-head probes",
    ),
    "induction-fresh-lr3e-3": FreshProfile(
        "induction-fresh-lr3e-3", ("induction",), steps=12000, eval_every=200, lr=3e-3,
        head_probe_every=20, head_probe_until=2000,
        description="two-hop composition on fresh data at a learning rate of 3e-3 (the "
                    "learning-rate control), up to 12,000 steps, per-head probes",
    ),
    "induction-nodropout-cosine": FreshProfile(
        "induction-nodropout-cosine", ("induction",), steps=12000, eval_every=200,
        dropout=0.0, lr_schedule="cosine", head_probe_every=20, head_probe_until=2000,
        description="two-hop composition on fresh data under histogram's settling recipe: no "
                    "dropout, the learning rate decayed along a cosine to 0 at 12,000 steps, "
                    "per-head probes",
    ),
    # The scale control of chapter 13 (stated before its runs: circuit.SCALE_CONFIGS): the
    # control at 3e-3 with every head's logits scaled by sqrt(W)/D instead of 1/sqrt(D), so
    # that a step moves each head's pattern as far as one head of the whole width's
    # (Recipe.query_gain; at one head the same run as induction-fresh-lr3e-3).
    "induction-scale-lr3e-3": FreshProfile(
        "induction-scale-lr3e-3", ("induction",), steps=12000, eval_every=200, lr=3e-3,
        head_probe_every=20, head_probe_until=2000, logit_scale="sqrt(W)/D",
        description="two-hop composition on fresh data at 3e-3 with each head's logits "
                    "scaled by sqrt(W)/D (the scale control), up to 12,000 steps, per-head "
                    "probes",
    ),
    "induction-tiny": FreshProfile(
        "induction-tiny", ("induction",), steps=2000, eval_every=25, seq_len=32, vocab_size=32,
        d_model=32, n_layers=2, d_mlp=64, batch_size=32, lr=3e-3, dropout=0.0, num_heldout=128,
        description="the training page's model: 2 layers of width 32 on 32 tokens, 2,000 steps"),
    "fresh-quick": FreshProfile(
        "fresh-quick", GRAPH_TASKS, steps=300, eval_every=50, patience=3, num_heldout=200,
        description="the graph tasks on fresh data in CI and book builds: 300 steps a model",
    ),
    "fresh-tiny": FreshProfile(
        "fresh-tiny", GRAPH_TASKS, steps=12, eval_every=4, patience=2, num_heldout=20,
        probe_sequences=4, probe_first=2, batch_size=10, seq_len=16,
        description="tests only: seconds", hidden=True,
    ),
}

#: The tasks each finite-data profile trains: the paper's for its profiles, the graph tasks
#: for theirs (a fresh-data profile names its own, ``FreshProfile.tasks``).
PROFILE_TASKS = {"paper": PAPER_TASKS, "quick": PAPER_TASKS, "tiny": TASKS,
                 **{task: (task,) for task in GRAPH_TASKS}, "graph-quick": GRAPH_TASKS}


def recipe_record(settings: dict[str, Any]) -> dict[str, Any]:
    """The choices of a recorded recipe (a checkpoint's ``profile_config``) that a manifest
    entry names because they are not the default: an ``lr_schedule`` other than
    ``"constant"``, a ``logit_scale`` other than ``"1/sqrt(D)"``."""
    plain = {"lr_schedule": LR_SCHEDULES[0], "logit_scale": LOGIT_SCALES[0]}
    return {k: settings[k] for k, v in plain.items() if settings.get(k, v) != v}


def get_profile(profile: str | Recipe) -> Profile | FreshProfile:
    """The profile named ``profile`` in :data:`PROFILES` (or ``profile`` itself), of
    either kind."""
    if isinstance(profile, Recipe):
        return profile
    one_of(profile, "profile", PROFILES, "profiles")
    return PROFILES[profile]


def profiles(unit: str | None = None, *, hidden: bool = False) -> list[str]:
    """The names of the profiles that count ``unit`` (``"epoch"``, ``"step"``, ``None``:
    both), the hidden ones (tests only) with ``hidden=True``."""
    if unit is not None:
        one_of(unit, "unit", ("epoch", "step"), "units")
    return [name for name, p in PROFILES.items()
            if (unit is None or p.unit == unit) and (hidden or not p.hidden)]


def profile_tasks(profile: str | Recipe) -> tuple[str, ...]:
    """The tasks ``profile`` is made for (``tasks`` of either kind)."""
    return get_profile(profile).tasks


# --------------------------------------------------------------------------- configurations


def model_config(profile: str | Recipe, heads: int, head_size: int | None = None
                 ) -> ModelConfig:
    """The Section 4.1 model for ``heads`` heads under ``profile``, of head size
    ``head_size`` (``None``: ``d_model / heads``, the paper's)."""
    p = get_profile(profile)
    return ModelConfig(n_heads=heads, vocab_size=p.vocab_size, seq_len=p.seq_len,
                       d_model=p.d_model, n_layers=p.n_layers, d_mlp=p.d_mlp,
                       dropout=p.dropout, head_size=head_size)


# --------------------------------------------------------------------------- names and files


def run_name(task: str, heads: int, head_size: int | None = None, budget_factor: int = 1,
             data_seed: int | None = None, *, size: str = "") -> str:
    """File stem of one model's run, e.g. ``"copy-h04"``; a model of a fixed head size
    (``ModelConfig.head_size``) adds it, ``"induction-h08-hs16"``, a model of another size
    than its profile's its ``size`` (:func:`~bparallel.transformer.runs.size_tag`, e.g.
    ``"-L2"``), a run of ``K`` times the budget ``-xK``, and a run whose data seed is not
    its seed ``-d<D>`` (``data_seed``: ``None`` for a run whose data seed is its seed; the
    seed itself is the run folder's). :class:`~bparallel.transformer.runs.Run` names every
    file of a run through it."""
    name = f"{task}-h{heads:02d}"
    if head_size is not None:
        name = f"{name}-hs{head_size:02d}"
    name += size
    if positive_int(budget_factor, "budget_factor") != 1:
        name = f"{name}-x{budget_factor}"
    return name if data_seed is None else f"{name}-d{nonnegative_int(data_seed, 'data_seed')}"


def model_name(task: str, heads: int, head_size: int | None = None, seed: int = DEFAULT_SEED,
               budget_factor: int = 1, data_seed: int | None = None, *, size: str = "") -> str:
    """Manifest key and file stem of a shipped model: :func:`run_name`, and ``-s<S>`` for a
    seed other than 42, the paper's (``"copy-h04"``, ``"copy-h04-s43"``); a data seed other
    than the seed adds ``-d<D>`` (``"induction-h04-hs64-d44-s43"``), one equal to it
    nothing, so every run of data seed = seed keeps its name."""
    own = None if data_seed_or(data_seed, seed) == seed else data_seed
    return seeded_name(run_name(task, heads, head_size, budget_factor, own, size=size), seed)


def seeded_name(run: str, seed: int) -> str:
    """The shipped name of run ``run`` of ``seed``: ``run`` itself for seed 42, the paper's
    (named as before seeds were swept), else ``<run>-s<S>``."""
    return run if seed == DEFAULT_SEED else f"{run}-s{seed}"


def weights_path(out_dir: str | os.PathLike, task: str, heads: int,
                 head_size: int | None = None) -> Path:
    """The weights file a finite-data run folder holds of ``task`` at ``heads`` heads
    (without a profile to name its run; a run's own: :meth:`~.runs.Run.weights_path`)."""
    return Path(out_dir) / f"{run_name(task, heads, head_size)}.weights.pt"


# --------------------------------------------------------------------------- sequences


def fresh_batch(task: str, step: int, *, seed: int, data_seed: int | None = None,
                batch_size: int = 50, seq_len: int = 100, vocab_size: int = 256
                ) -> SequenceDataset:
    """The training batch of step ``step`` on fresh data: ``batch_size`` new sequences of
    ``task`` from the stream ``(data_seed, "step", step)`` (a resumed run continues bitwise);
    ``data_seed`` (:func:`data_seed_or`) defaults to the initialisation ``seed``."""
    return make_dataset(task, batch_size, seed=data_seed_or(data_seed, seed), stream="step",
                        step=step, seq_len=seq_len, vocab_size=vocab_size)


def data_seed_or(data_seed: int | None, seed: int) -> int:
    """The data seed of a run of initialisation seed ``seed``: ``data_seed``, or ``seed`` when
    it is ``None`` (:func:`~bparallel.transformer.checkpoints.data_seed_of` reads a record's)."""
    nonnegative_int(seed, "seed")
    return seed if data_seed is None else nonnegative_int(data_seed, "data_seed")


def fresh_heldout(task: str, profile: str | FreshProfile) -> SequenceDataset:
    """The fixed held-out set of ``task`` under a fresh-data ``profile``: the first
    ``num_heldout`` sequences of the held-out stream of seed :data:`HELDOUT_SEED`, the same
    for every seed, arm and head count; its first ``probe_sequences`` are the probe set."""
    p = get_profile(profile)
    return heldout_dataset(task, p.num_heldout, seed=HELDOUT_SEED, seq_len=p.seq_len,
                           vocab_size=p.vocab_size)


PROTOCOLS = ("paper", "heldout")


def evaluation_inputs(
    task: str,
    protocol: str,
    profile: str = "paper",
    *,
    seed: int = DEFAULT_SEED,
    epoch: int | None = None,
    num_sequences: int | None = None,
) -> torch.Tensor:
    """The input sequences ``(N, T)`` of Tables 1-4 under ``protocol``.

    ``"paper"``: rebuild the training set and loader of ``profile`` and ``seed``, and take
    the first sequence of each of the first 50 batches (``num_sequences`` overrides 50) of
    epoch ``epoch`` (default: the profile's epoch count, i.e. the pass after training).
    ``"heldout"``: the first ``num_sequences`` (default: the profile's ``num_heldout``)
    held-out sequences.
    """
    one_of(task, "task", TASKS, "tasks")
    one_of(protocol, "protocol", PROTOCOLS, "protocols")
    p = get_profile(profile)
    if protocol == "heldout":
        n = p.num_heldout if num_sequences is None else num_sequences
        return heldout_dataset(task, n, seed=seed, seq_len=p.seq_len,
                               vocab_size=p.vocab_size).inputs
    if not isinstance(p, Profile):
        raise ValueError(f"protocol='paper' rebuilds a finite training set; profile "
                         f"{p.name!r} trains on fresh data")
    train_set = make_dataset(task, p.num_train, seed=seed, seq_len=p.seq_len,
                             vocab_size=p.vocab_size)
    loader = ShuffledLoader(train_set, p.batch_size, seed=seed)
    epoch = p.epochs if epoch is None else epoch
    return paper_protocol_sequences(loader, epoch, 50 if num_sequences is None
                                    else num_sequences).inputs

__all__ = ["DEFAULT_SEED", "FreshProfile", "HEADS", "HELDOUT_SEED", "LOGIT_SCALES",
           "LOSS_POSITIONS", "LR_SCHEDULES", "PROFILES", "PROFILE_TASKS", "PROTOCOLS", "Profile",
           "Recipe",
           "data_seed_or", "evaluation_inputs", "fresh_batch", "fresh_heldout", "get_profile",
           "model_config", "model_name", "profile_tasks", "profiles", "recipe_record", "run_name",
           "seeded_name", "weights_path"]
