"""What one run of a sweep is (:class:`ModelRun`): its task, heads, seed and profile, and
the files it owns (run folder, checkpoint, lock, snapshot, shipped name), for both kinds of
training (a finite set in epochs, fresh data in steps). Read by the sweep
(:mod:`bparallel.book.tools.sweep`) and by its status and snapshots
(:mod:`bparallel.book.tools.sweep_status`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._checks import one_of
from ...transformer.design import (
    PROFILES,
    Profile,
    get_profile,
)
from ...transformer.fresh import load_fresh_checkpoint
from ...transformer.fresh_design import (
    FRESH_PROFILES,
    FreshProfile,
    fresh_model_name,
    fresh_run_name,
)
from ...transformer.shipped import (
    MODELS_ROOT,
    find_partial,
    shipped_name,
)
from ...transformer.train import load_checkpoint


def sweep_profile(profile: str | Profile | FreshProfile) -> Profile | FreshProfile:
    """The finite-data :class:`~bparallel.transformer.design.Profile` or the fresh-data
    :class:`~bparallel.transformer.fresh_design.FreshProfile` named ``profile``."""
    if isinstance(profile, (Profile, FreshProfile)):
        return profile
    one_of(profile, "profile", [*PROFILES, *FRESH_PROFILES], "profiles")
    if profile in FRESH_PROFILES:
        return FRESH_PROFILES[profile]
    return get_profile(profile)


def default_models_dir(profile: str | Profile | FreshProfile) -> Path:
    """``models/<profile>`` in the repository: where a profile's models are shipped."""
    return MODELS_ROOT / sweep_profile(profile).name


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
    def fresh(self) -> bool:
        return isinstance(self.profile, FreshProfile)

    @property
    def name(self) -> str:
        return fresh_run_name(self.task, self.heads, self.head_size, self.budget_factor)

    @property
    def shipped_as(self) -> str:
        if not self.fresh:
            return shipped_name(self.task, self.heads, self.seed)
        return fresh_model_name(self.task, self.heads, self.head_size, self.seed,
                                self.budget_factor)

    @property
    def run_dir(self) -> Path:
        return self.runs_dir / self.profile.name / f"seed-{self.seed}"

    @property
    def checkpoint(self) -> Path:
        """``<run_dir>/<name>.ckpt.pt`` (:func:`~bparallel.transformer.design.checkpoint_path`
        for a finite-data run)."""
        return self.run_dir / f"{self.name}.ckpt.pt"

    @property
    def lock(self) -> Path:
        """``<run_dir>/.<name>.lock`` (:func:`~bparallel.transformer.design.lock_path`)."""
        return self.run_dir / f".{self.name}.lock"

    @property
    def unit(self) -> str:
        """What the run counts: ``"epoch"`` (finite data) or ``"step"`` (fresh data)."""
        return "step" if self.fresh else "epoch"

    @property
    def total(self) -> int:
        """The last epoch, or the step budget."""
        return self.profile.steps * self.budget_factor if self.fresh else self.profile.epochs

    def partial_path(self) -> Path:
        """Where its unfinished checkpoint is snapshotted, ``<models>/partial/seed-<S>/<name>
        .ckpt.pt`` (:func:`~bparallel.transformer.shipped.partial_path`)."""
        return self.models_dir / "partial" / f"seed-{self.seed}" / f"{self.name}.ckpt.pt"

    def find_partial(self) -> Path | None:
        """The committed snapshot of this run, if there is one (for a finite-data run, seed
        42's older place too: :func:`~bparallel.transformer.shipped.find_partial`)."""
        if not self.fresh:
            return find_partial(self.models_dir, self.task, self.heads, self.seed)
        return self.partial_path() if self.partial_path().is_file() else None

    def load(self, path: Path) -> Any:
        """The checkpoint ``path``, checked to be this run's (``ValueError`` otherwise)."""
        if not self.fresh:
            return load_checkpoint(path, task=self.task, heads=self.heads,
                                   profile=self.profile, seed=self.seed)
        return load_fresh_checkpoint(path, task=self.task, heads=self.heads,
                                     head_size=self.head_size, profile=self.profile,
                                     seed=self.seed)

    def progress(self, ck: Any) -> int:
        """How far the checkpoint ``ck`` is: its epoch, or its step."""
        return ck.step if self.fresh else ck.epoch

    def __str__(self) -> str:
        return f"{self.name} seed {self.seed}"
