"""What one run of a sweep is (:class:`ModelRun`): its task, heads, seed and profile, and
the files it owns (run folder, checkpoint, lock, snapshot, shipped name), for both kinds of
training (a finite set in epochs, fresh data in steps). Read by the sweep
(:mod:`bparallel.book.tools.sweep`) and by its status and snapshots
(:mod:`bparallel.book.tools.sweep_status`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...transformer.checkpoints import RunCheckpoint, load_checkpoint
from ...transformer.design import (
    DEFAULT_SEED,
    FreshProfile,
    Profile,
    get_profile,
    model_name,
    run_name,
)
from ...transformer.shipped import MODELS_ROOT

__all__ = ["default_models_dir", "ModelRun"]


def default_models_dir(profile: str | Profile | FreshProfile) -> Path:
    """``models/<profile>`` in the repository: where a profile's models are shipped."""
    return MODELS_ROOT / get_profile(profile).name


@dataclass(frozen=True)
class ModelRun:
    """One model of a sweep: what a job trains, and where its files live. ``head_size`` and
    ``budget_factor``: fresh-data runs only (``None``: ``d_model / heads``)."""

    task: str
    heads: int
    seed: int
    profile: Profile | FreshProfile
    runs_dir: Path  # the sweep's root, e.g. runs/sweep
    models_dir: Path  # where it is shipped, e.g. models/paper
    threads: int | None = None
    device: str = "cpu"
    head_size: int | None = None
    budget_factor: int = 1

    @property
    def name(self) -> str:
        return run_name(self.task, self.heads, self.head_size, self.budget_factor)

    @property
    def shipped_as(self) -> str:
        return model_name(self.task, self.heads, self.head_size, self.seed, self.budget_factor)

    @property
    def run_dir(self) -> Path:
        return self.runs_dir / self.profile.name / f"seed-{self.seed}"

    @property
    def checkpoint(self) -> Path:
        """``<run_dir>/<name>.ckpt.pt`` (:func:`~bparallel.transformer.design.checkpoint_path`)."""
        return self.run_dir / f"{self.name}.ckpt.pt"

    @property
    def lock(self) -> Path:
        """``<run_dir>/.<name>.lock`` (:func:`~bparallel.transformer.design.lock_path`)."""
        return self.run_dir / f".{self.name}.lock"

    @property
    def unit(self) -> str:
        """What the run counts: ``"epoch"`` (finite data) or ``"step"`` (fresh data)."""
        return self.profile.unit

    @property
    def total(self) -> int:
        """The last epoch, or the step budget."""
        return self.profile.total(self.budget_factor)

    def partial_path(self) -> Path:
        """Where its unfinished checkpoint is snapshotted, ``<models>/partial/seed-<S>/<name>
        .ckpt.pt`` (:func:`~bparallel.transformer.shipped.partial_path`)."""
        return self.models_dir / "partial" / f"seed-{self.seed}" / f"{self.name}.ckpt.pt"

    def find_partial(self) -> Path | None:
        """The committed snapshot of this run, if there is one (seed 42's place of before
        seeds were swept, ``partial/<name>.ckpt.pt``, counts too)."""
        places = [self.partial_path()]
        if self.seed == DEFAULT_SEED:
            places.append(self.models_dir / "partial" / f"{self.name}.ckpt.pt")
        return next((p for p in places if p.is_file()), None)

    def load(self, path: Path) -> RunCheckpoint:
        """The checkpoint ``path``, checked to be this run's (``ValueError`` otherwise)."""
        return load_checkpoint(path, task=self.task, heads=self.heads, head_size=self.head_size,
                               profile=self.profile, seed=self.seed)

    def __str__(self) -> str:
        return f"{self.name} seed {self.seed}"
