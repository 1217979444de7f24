"""What a run of Section 4.1 is, before anything trains: the profiles (how much data,
how many epochs, the optimiser settings), the head counts and the default seed, the model
a profile builds, and the names and paths of a run's files.

Read by the training loop (:mod:`~bparallel.transformer.train`), the measures
(:mod:`~bparallel.transformer.measure`) and the shipping code alike; it imports only the
data's task names and the model's configuration, so editing how runs train or ship never
touches it. Training on fresh data has its own profiles in
:mod:`~bparallel.transformer.fresh_design`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .._checks import one_of
from .data import GRAPH_TASKS, PAPER_TASKS, TASKS
from .model import ModelConfig

DEFAULT_SEED = 42
HEADS = (1, 4, 8, 16)
# The training loss averages the cross-entropy over every position (Section 4.1), or over
# the predictable ones only: the graph tasks' unpredictable positions (induction's first half)
# carry no signal, and with them in the loss a model waits far longer to start learning.
LOSS_POSITIONS = ("all", "predictable")


@dataclass(frozen=True)
class Profile:
    """How much to train: data sizes, epochs and the optimiser settings of Section 4.1."""

    name: str
    num_train: int
    epochs: int
    num_heldout: int
    batch_size: int = 50
    lr: float = 1e-3
    dropout: float = 0.1
    seq_len: int = 100
    vocab_size: int = 256
    description: str = ""
    hidden: bool = False
    loss_positions: str = "all"

    def __post_init__(self) -> None:
        if self.loss_positions not in LOSS_POSITIONS:
            raise ValueError(f"loss_positions={self.loss_positions!r}: valid values are "
                             f"{list(LOSS_POSITIONS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def settings(self) -> dict[str, Any]:
        """What a run of this profile is trained with, less the epoch count (which may grow):
        the part a resumed checkpoint must match."""
        return {k: v for k, v in self.to_dict().items() if k not in ("epochs", "description")}


PROFILES: dict[str, Profile] = {
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
}

#: The tasks each profile trains: the paper's for its profiles, the graph tasks for theirs.
PROFILE_TASKS = {"paper": PAPER_TASKS, "quick": PAPER_TASKS, "tiny": TASKS,
                 **{task: (task,) for task in GRAPH_TASKS}, "graph-quick": GRAPH_TASKS}


def get_profile(profile: str | Profile) -> Profile:
    """The :class:`Profile` named ``profile`` (or ``profile`` itself)."""
    if isinstance(profile, Profile):
        return profile
    one_of(profile, "profile", PROFILES, "profiles")
    return PROFILES[profile]


def profile_tasks(profile: str | Profile) -> tuple[str, ...]:
    """The tasks ``profile`` is made for (:data:`PROFILE_TASKS`; a profile built by hand:
    every task)."""
    return PROFILE_TASKS.get(get_profile(profile).name, TASKS)


def model_config(profile: str | Profile, heads: int, head_size: int | None = None
                 ) -> ModelConfig:
    """The Section 4.1 model for ``heads`` heads under ``profile`` (any object with the
    fields ``vocab_size``, ``seq_len``, ``dropout``), of head size ``head_size`` (``None``:
    ``d_model / heads``, the paper's)."""
    p = get_profile(profile) if isinstance(profile, str) else profile
    return ModelConfig(n_heads=heads, vocab_size=p.vocab_size, seq_len=p.seq_len,
                       dropout=p.dropout, head_size=head_size)


def run_name(task: str, heads: int, head_size: int | None = None) -> str:
    """File stem of one model's run, e.g. ``"copy-h04"``; a model of a fixed head size
    (``ModelConfig.head_size``) adds it: ``"induction-h08-hs16"``."""
    name = f"{task}-h{heads:02d}"
    return name if head_size is None else f"{name}-hs{head_size:02d}"


def checkpoint_path(out_dir: str | os.PathLike, task: str, heads: int,
                    head_size: int | None = None) -> Path:
    return Path(out_dir) / f"{run_name(task, heads, head_size)}.ckpt.pt"


def weights_path(out_dir: str | os.PathLike, task: str, heads: int,
                 head_size: int | None = None) -> Path:
    return Path(out_dir) / f"{run_name(task, heads, head_size)}.weights.pt"


def lock_path(out_dir: str | os.PathLike, task: str, heads: int,
              head_size: int | None = None) -> Path:
    """The lock file held by the process that trains this model into ``out_dir`` (the
    ``train`` command and ``sweep`` jobs), so that two never train it at once."""
    return Path(out_dir) / f".{run_name(task, heads, head_size)}.lock"
