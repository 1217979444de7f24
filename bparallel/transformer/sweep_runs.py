"""What one job of a sweep is (:class:`ModelRun`): a :class:`~bparallel.transformer.runs.Run`
(task, heads, head size, seeds, profile, budget) with where its files live (the sweep's run
folder and the models folder it ships into) and how it runs (threads, device, probes), for
both kinds of training (a finite set in epochs, fresh data in steps). Every file name is
the run's (:class:`~bparallel.transformer.runs.Run`: one naming rule). Read by the sweep
(:mod:`bparallel.transformer.sweep`) and by its status and snapshots
(:mod:`bparallel.transformer.sweep_status`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .checkpoints import RunCheckpoint, load_checkpoint
from .design import FreshProfile, Profile, get_profile
from .runs import OfRun, Run
from .shipped import MODELS_ROOT

__all__ = ["default_models_dir", "ModelRun"]


def default_models_dir(profile: str | Profile | FreshProfile) -> Path:
    """``models/<profile>`` in the repository: where a profile's models are shipped."""
    return MODELS_ROOT / get_profile(profile).name


@dataclass(frozen=True)
class ModelRun(OfRun):
    """One model of a sweep: the :class:`~bparallel.transformer.runs.Run` a job trains,
    where its files live and how it runs (``probes=False``: without the probes through
    training, :func:`~bparallel.transformer.train.train`)."""

    run: Run
    runs_dir: Path  # the sweep's root, e.g. runs/sweep
    models_dir: Path  # where it is shipped, e.g. models/paper
    threads: int | None = None
    device: str = "cpu"
    probes: bool = True

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def shipped_as(self) -> str:
        return self.run.shipped_name

    @property
    def run_dir(self) -> Path:
        return self.runs_dir / self.profile.name / f"seed-{self.seed}"

    @property
    def checkpoint(self) -> Path:
        """``<run_dir>/<name>.ckpt.pt``
        (:meth:`~bparallel.transformer.runs.Run.checkpoint_path`)."""
        return self.run.checkpoint_path(self.run_dir)

    @property
    def lock(self) -> Path:
        """``<run_dir>/.<name>.lock`` (:meth:`~bparallel.transformer.runs.Run.lock_path`)."""
        return self.run.lock_path(self.run_dir)

    @property
    def unit(self) -> str:
        """What the run counts: ``"epoch"`` (finite data) or ``"step"`` (fresh data)."""
        return self.run.unit

    @property
    def total(self) -> int:
        """The last epoch, or the step budget."""
        return self.run.total

    def partial_path(self) -> Path:
        """Where its unfinished checkpoint is snapshotted
        (:meth:`~bparallel.transformer.runs.Run.partial_path`)."""
        return self.run.partial_path(self.models_dir)

    def find_partial(self) -> Path | None:
        """The committed snapshot of this run, if there is one
        (:meth:`~bparallel.transformer.runs.Run.find_partial`)."""
        return self.run.find_partial(self.models_dir)

    def load(self, path: Path) -> RunCheckpoint:
        """The checkpoint ``path``, checked to be this run's (``ValueError`` otherwise)."""
        return load_checkpoint(path, **self.run.expect())

    def __str__(self) -> str:
        return str(self.run)
