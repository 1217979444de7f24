"""The design of training on fresh data (issue #33): what a run is before it trains -- its
profile (budget, evaluation, convergence rule), its arm (head size), its name and files, and
its data. The training loop, its checkpoint and the shipping of a finished run are
:mod:`bparallel.transformer.fresh`.

**Data.** The batch of step ``k`` (``k = 0, 1, ...``) is ``batch_size`` new sequences of the
task drawn from the stream ``(seed, "step", k)`` (:func:`fresh_batch`): a pure function of
the seed and the step, so a run is deterministic and, resumed from a checkpoint, continues
bitwise as if never interrupted. No sequence is seen twice, so a model cannot memorise its
training set. The held-out set is fixed per task, the same for every seed, arm and head
count: the first ``num_heldout`` sequences of the held-out stream of seed
:data:`HELDOUT_SEED` (:func:`fresh_heldout`); its first ``probe_sequences`` sequences are
the probe set of :func:`~.learning.training_probe`.

**Budget and convergence.** A :class:`FreshProfile` gives the budget ``steps``, the
evaluation every ``eval_every`` steps and the convergence rule (held-out accuracy on the
predictable positions at or above the task's learning threshold, and within 0.5 points of
its best for ``patience`` consecutive evaluations: :func:`~.learning.converged_at`).

**Arms** (:data:`ARMS`). ``"width"``: head size ``64/H``, the paper's, the same 172,800
parameters at every head count. ``"head16"``: 16 dimensions per head at every head count,
the attention's inner width ``16 H`` (Bhojanapalli et al. 2020's remedy for the low-rank
bottleneck); the parameters grow with ``H`` (:meth:`~.model.ModelConfig.num_parameters`).
``"inner256"``: the attention's inner width fixed at 256 (:data:`ARM_INNER_WIDTH`, above
``d = 64``), head size ``256/H`` (256, 64, 32, 16): the parameters and the attention width
are the same at every head count, so the head count is the only thing that varies; its one
head of 256 dimensions is the only configuration whose head size reaches the sequence length
(Bhojanapalli et al.'s criterion). A configuration in two arms is one run, shipped once,
listed under both: 4 heads of 16 (width and head16), 16 heads of 16 (head16 and inner256)
(:func:`arm_head_size` maps 4 x 16 to the default head size; :func:`arm_head_dim` is the
head size used; :func:`arm_of` is the arm a sweep trains a configuration under).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .._checks import one_of, positive_int, unit_interval
from .data import GRAPH_TASKS, TASKS, SequenceDataset, heldout_dataset, make_dataset
from .design import DEFAULT_SEED, LOSS_POSITIONS, run_name
from .learning import LEARNING_THRESHOLD, PATIENCE, TOLERANCE
from .model import ModelConfig

ARMS = ("width", "head16", "inner256")
ARM_HEAD_SIZE = 16  # the head16 arm's head size
ARM_INNER_WIDTH = 256  # the inner256 arm's attention width, n_heads * head_size
HELDOUT_SEED = DEFAULT_SEED  # the fixed held-out set of every fresh-data run


@dataclass(frozen=True)
class FreshProfile:
    """How a fresh-data run trains: its tasks, budget, evaluation and convergence rule.

    ``steps``: the budget ``B`` (a multiple of ``eval_every``); ``eval_every``: steps between
    held-out evaluations; ``patience``, ``tolerance``: the convergence rule
    (:func:`~.learning.converged_at`); ``threshold``: the learning threshold, ``None`` for
    the task's :data:`~.learning.LEARNING_THRESHOLD`; ``num_heldout``: the fixed held-out
    set; ``probe_sequences``: how many of its sequences the probes measure; ``probe_first``:
    the first step after 0 of the log-spaced probe schedule (:func:`~.learning.probe_steps`).
    The optimiser and model settings are Section 4.1's (Adam, lr 1e-3, batch 50, dropout
    0.1); the loss is taken over the predictable positions (``loss_positions``).
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
    batch_size: int = 50
    lr: float = 1e-3
    dropout: float = 0.1
    seq_len: int = 100
    vocab_size: int = 256
    loss_positions: str = "predictable"
    description: str = ""
    hidden: bool = False

    def __post_init__(self) -> None:
        for name in ("steps", "eval_every", "patience", "num_heldout", "probe_sequences",
                     "probe_first", "batch_size"):
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
        one_of(self.loss_positions, "loss_positions", LOSS_POSITIONS, "values")

    def threshold_of(self, task: str) -> float:
        """The learning threshold of ``task`` under this profile."""
        if self.threshold is not None:
            return self.threshold
        return LEARNING_THRESHOLD[one_of(task, "task", list(LEARNING_THRESHOLD),
                                         "tasks with a learning threshold (else give the "
                                         "profile one)")]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tasks"] = list(self.tasks)
        return d

    def settings(self) -> dict[str, Any]:
        """What a run is trained with, less the budget (which may grow): what a resumed
        checkpoint must match."""
        return {k: v for k, v in self.to_dict().items()
                if k not in ("steps", "description", "hidden")}


FRESH_PROFILES: dict[str, FreshProfile] = {
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
    # majority's replacement (issue #33, item 4): no head count learned majority within
    # 12,000 steps (73-75% of the predictable positions, threshold 90%).
    "histogram-fresh": FreshProfile(
        "histogram-fresh", ("histogram",), steps=12000, eval_every=200,
        description="counting the current token (histogram) on fresh data: up to 12,000 steps",
    ),
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


def get_fresh_profile(profile: str | FreshProfile) -> FreshProfile:
    """The :class:`FreshProfile` named ``profile`` (or ``profile`` itself)."""
    if isinstance(profile, FreshProfile):
        return profile
    one_of(profile, "profile", FRESH_PROFILES, "fresh profiles")
    return FRESH_PROFILES[profile]


def arm_head_size(arm: str, heads: int, d_model: int = 64) -> int | None:
    """The head size of ``heads`` heads in ``arm``, as ``ModelConfig.head_size``: ``None``
    (``d_model / heads``) for ``"width"`` and wherever the arm's head size is
    ``d_model / heads`` (4 heads of 16: the width arm's model too); else 16 (``"head16"``)
    or ``256 / heads`` (``"inner256"``, which refuses a head count that does not divide
    256)."""
    one_of(arm, "arm", ARMS, "arms")
    positive_int(heads, "heads")
    if arm == "width":
        return None
    if arm == "head16":
        size = ARM_HEAD_SIZE
    else:
        if ARM_INNER_WIDTH % heads:
            raise ValueError(f"heads={heads}: the inner256 arm splits an attention width of "
                             f"{ARM_INNER_WIDTH} into equal heads; {heads} does not divide it")
        size = ARM_INNER_WIDTH // heads
    return None if size * heads == d_model else size


def arm_of(heads: int, head_size: int | None, d_model: int = 64) -> str:
    """The arm a sweep trains ``heads`` heads of ``head_size`` under: the first of
    :data:`ARMS` whose configuration it is (a shared model is one run). Raises
    ``ValueError`` for a configuration of no arm."""
    for arm in ARMS:
        try:
            if arm_head_size(arm, heads, d_model) == head_size:
                return arm
        except ValueError:
            continue
    raise ValueError(f"head_size={head_size}: {heads} heads of {head_size} dimensions belong "
                     f"to no arm of {list(ARMS)}")


def arm_head_dim(arm: str, heads: int, d_model: int = 64) -> int:
    """The dimensions per head of ``heads`` heads in ``arm``, the head size actually used:
    :func:`arm_head_size`, else ``d_model / heads`` (``ModelConfig.head_dim``)."""
    return arm_head_size(arm, heads, d_model) or d_model // heads


def arms_of(config: ModelConfig) -> list[str]:
    """The arms whose model ``config`` is, in the order of :data:`ARMS`: one, two (4 heads
    of 16: width and head16; 16 heads of 16: head16 and inner256) or none."""
    default = config.d_model % config.n_heads == 0 and (
        config.head_dim == config.d_model // config.n_heads)
    return [arm for arm, ok in (("width", default), ("head16", config.head_dim == ARM_HEAD_SIZE),
                                ("inner256", config.n_heads * config.head_dim == ARM_INNER_WIDTH))
            if ok]


def fresh_run_name(task: str, heads: int, head_size: int | None = None,
                   budget_factor: int = 1) -> str:
    """File stem of a fresh-data run: :func:`~.design.run_name` (``"induction-h08-hs16"``),
    and ``-x5`` for a run of 5 times the budget."""
    name = run_name(task, heads, head_size)
    return name if positive_int(budget_factor, "budget_factor") == 1 else \
        f"{name}-x{budget_factor}"


def fresh_model_name(task: str, heads: int, head_size: int | None = None, seed: int = DEFAULT_SEED,
                     budget_factor: int = 1) -> str:
    """Manifest key and file stem of a shipped fresh-data model: :func:`fresh_run_name`, and
    ``-s<S>`` for a seed other than 42 (as :func:`~.shipped.shipped_name`)."""
    name = fresh_run_name(task, heads, head_size, budget_factor)
    return name if seed == DEFAULT_SEED else f"{name}-s{seed}"


def fresh_checkpoint_path(out_dir: str | os.PathLike, task: str, heads: int,
                          head_size: int | None = None, budget_factor: int = 1) -> Path:
    return Path(out_dir) / f"{fresh_run_name(task, heads, head_size, budget_factor)}.ckpt.pt"


def fresh_batch(task: str, step: int, *, seed: int, batch_size: int = 50, seq_len: int = 100,
                vocab_size: int = 256) -> SequenceDataset:
    """The training batch of step ``step``: ``batch_size`` new sequences of ``task`` from the
    stream ``(seed, "step", step)``."""
    return make_dataset(task, batch_size, seed=seed, stream="step", step=step,
                        seq_len=seq_len, vocab_size=vocab_size)


def fresh_heldout(task: str, profile: str | FreshProfile) -> SequenceDataset:
    """The fixed held-out set of ``task`` under ``profile`` (module docstring); its first
    ``probe_sequences`` sequences are the probe set."""
    p = get_fresh_profile(profile)
    return heldout_dataset(task, p.num_heldout, seed=HELDOUT_SEED, seq_len=p.seq_len,
                           vocab_size=p.vocab_size)
