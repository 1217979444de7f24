"""A run of Section 4 as one value (:class:`Run`): what it trains (task, head count, head
size, the model's size), from which seeds (the initialisation's and the training batches'),
under which profile and to what budget. Training
(:func:`~bparallel.transformer.train.train`), checkpoints
(:func:`~bparallel.transformer.checkpoints.load_checkpoint`), shipping
(:func:`~bparallel.transformer.shipped.ship`), partial snapshots and the sweep all take it,
and it names every file of the run by one rule (:func:`~.design.run_name`): checkpoint, lock,
weights, partial snapshot and shipped name.

A run is built from its fields, from an arm (:meth:`Run.in_arm`: the arm's head size, the
one place an arm becomes a head size) or from a record (:meth:`Run.from_record`: a
checkpoint's data, a weights file's meta or a manifest entry, which store the head size).
Its arms are *derived* from its model (:attr:`Run.arms`, :func:`~.arms.arms_of`), never
stored apart from it.

**Sizes.** The model's width ``d_model``, depth ``n_layers`` and MLP width ``d_mlp`` are its
profile's (:class:`~.design.Recipe`: 64, 4, 128, Section 4.1's) unless the run gives others;
a size other than the profile's is part of the run's name (:func:`size_tag`: ``-L2`` for 2
layers, ``-w32`` for a width of 32, ``-m64`` for an MLP of 64), so every run of the
profile's sizes keeps the name it always had.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._checks import nonnegative_int, one_of, positive_int
from .arms import arm_head_size, arms_of
from .data import TASKS
from .design import (
    DEFAULT_SEED,
    FreshProfile,
    Profile,
    data_seed_or,
    get_profile,
    model_config,
    model_name,
    run_name,
)
from .model import ModelConfig

#: The model sizes a run may set, each with the letter that names it (:func:`size_tag`).
SIZE_TAGS = {"n_layers": "L", "d_model": "w", "d_mlp": "m"}


def size_tag(sizes: Mapping[str, int]) -> str:
    """The part of a run's name that says its model's size where it is not its profile's:
    ``""`` for none, else ``-L<layers>``, ``-w<width>``, ``-m<MLP width>`` in that order
    (``sizes``: the sizes that differ, keys of :data:`SIZE_TAGS`)."""
    for key in sizes:
        one_of(key, "sizes", SIZE_TAGS, "sizes")
    return "".join(f"-{tag}{positive_int(sizes[key], key)}" for key, tag in SIZE_TAGS.items()
                   if key in sizes)


@dataclass(frozen=True)
class Run:
    """One run: ``task``, ``heads`` heads of ``head_size`` dimensions (``None``:
    ``d_model / heads``, the paper's), ``profile`` (a name or a profile of either kind),
    initialisation ``seed``, ``data_seed`` (the training batches' seed, fresh data only;
    ``None``: the seed), ``budget_factor`` (fresh data: ``K`` times the step budget) and the
    model's ``d_model``, ``n_layers``, ``d_mlp`` (``None``: the profile's).

    Immutable and normalised, so that equal runs are equal values: a head size of
    ``d_model / heads``, a data seed equal to the seed and a size equal to the profile's
    are stored as ``None``. Bad input is a ``ValueError`` naming the field."""

    task: str
    heads: int
    profile: Profile | FreshProfile
    seed: int = DEFAULT_SEED
    head_size: int | None = None
    data_seed: int | None = None
    budget_factor: int = 1
    d_model: int | None = None
    n_layers: int | None = None
    d_mlp: int | None = None

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("profile", get_profile(self.profile))
        p = self.profile
        one_of(self.task, "task", TASKS, "tasks")
        positive_int(self.heads, "heads")
        nonnegative_int(self.seed, "seed")
        positive_int(self.budget_factor, "budget_factor")
        for key in SIZE_TAGS:
            value = getattr(self, key)
            if value is not None and positive_int(value, key) == getattr(p, key):
                put(key, None)
        d_model = self.recipe.d_model
        if self.head_size is not None and positive_int(self.head_size, "head_size") * \
                self.heads == d_model:
            put("head_size", None)
        if self.data_seed is not None and nonnegative_int(self.data_seed, "data_seed") == \
                self.seed:
            put("data_seed", None)
        if isinstance(p, Profile):
            if self.data_seed is not None:
                raise ValueError(f"data_seed={self.data_seed}: a finite-data profile "
                                 f"({p.name!r}) draws its training set from the seed; data "
                                 "seeds are for fresh data")
            if self.head_size is not None:
                raise ValueError(f"head_size={self.head_size}: head sizes (arms) are for "
                                 f"fresh-data profiles; {p.name!r} trains the paper's head "
                                 "size")
        p.total(self.budget_factor)  # a finite profile, or a decaying rate, refuses K > 1
        self.config  # noqa: B018 - ModelConfig's checks (e.g. heads that divide the width)

    # ------------------------------------------------------------------ built other ways

    @classmethod
    def in_arm(cls, task: str, heads: int, profile: str | Profile | FreshProfile,
               arm: str = "width", **fields: Any) -> Run:
        """The run of ``heads`` heads in ``arm`` (:data:`~.arms.ARMS`): its head size is the
        arm's (:func:`~.arms.arm_head_size`, at the run's model width). ``fields``: the
        other fields of :class:`Run`. Arms other than ``"width"`` are for fresh-data
        profiles."""
        p = get_profile(profile)
        if isinstance(p, Profile) and arm != "width":
            raise ValueError(f"arm={arm!r}: arms are for fresh-data profiles; {p.name!r} "
                             "trains the paper's head size")
        d_model = fields.get("d_model") or p.d_model
        return cls(task, heads, p, head_size=arm_head_size(arm, positive_int(heads, "heads"),
                                                           d_model), **fields)

    @classmethod
    def from_record(cls, record: Mapping[str, Any],
                    profile: str | Profile | FreshProfile | None = None) -> Run:
        """The run a record describes: a checkpoint's data, a weights file's meta or a
        manifest entry (their ``task``, ``heads``, ``seed``, ``profile``, head size, data
        seed, budget and ``sizes``; a record written before a field existed has its
        default). ``profile``: the profile to read it under (default: the record's, by
        name)."""
        if not isinstance(record, Mapping) or not {"task", "heads", "seed"} <= set(record):
            raise ValueError(f"record={type(record).__name__}: expected a run's record with "
                             "'task', 'heads' and 'seed'")
        p = get_profile(record.get("profile") if profile is None else profile)
        cfg = record.get("model_config")
        head_size = cfg.get("head_size") if isinstance(cfg, Mapping) else record.get("head_size")
        factor = record.get("budget_factor")
        if factor is None and "budget" in record and "profile_config" in record:
            factor = int(record["budget"]) // int(record["profile_config"]["steps"])
        data_seed = record.get("data_seed")
        return cls(record["task"], int(record["heads"]), p, seed=int(record["seed"]),
                   head_size=head_size, data_seed=None if data_seed is None else int(data_seed),
                   budget_factor=int(factor or 1), **dict(record.get("sizes") or {}))

    # ------------------------------------------------------------------ what it trains

    @property
    def sizes(self) -> dict[str, int]:
        """The model sizes this run sets apart from its profile's (``{}`` for none)."""
        return {k: getattr(self, k) for k in SIZE_TAGS if getattr(self, k) is not None}

    @property
    def recipe(self) -> Profile | FreshProfile:
        """The profile with this run's sizes: what it trains under (and what its checkpoint
        records as ``profile_config``)."""
        return dataclasses.replace(self.profile, **self.sizes) if self.sizes else self.profile

    @property
    def config(self) -> ModelConfig:
        """The model (:func:`~.design.model_config` of :attr:`recipe`)."""
        return model_config(self.recipe, self.heads, self.head_size)

    @property
    def arms(self) -> list[str]:
        """The arms whose model this run trains (:func:`~.arms.arms_of`, the one rule)."""
        return arms_of(self.config)

    @property
    def batch_seed(self) -> int:
        """The seed of the training batches: ``data_seed``, else ``seed``."""
        return data_seed_or(self.data_seed, self.seed)

    @property
    def unit(self) -> str:
        """What the run counts: ``"epoch"`` (finite data) or ``"step"`` (fresh data)."""
        return self.profile.unit

    @property
    def total(self) -> int:
        """The last epoch, or the step budget (``budget_factor`` times the profile's)."""
        return self.profile.total(self.budget_factor)

    def plain(self) -> Run:
        """The same run at the profile's budget (a longer run starts from its checkpoint)."""
        return dataclasses.replace(self, budget_factor=1)

    # ------------------------------------------------------------------ names and files

    @property
    def name(self) -> str:
        """The stem of its files in a run folder (:func:`~.design.run_name`)."""
        return run_name(self.task, self.heads, self.head_size, self.budget_factor,
                        self.data_seed, size=size_tag(self.sizes))

    @property
    def shipped_name(self) -> str:
        """Its manifest key and weights file stem (:func:`~.design.model_name`: ``-s<S>``
        for a seed other than 42)."""
        return model_name(self.task, self.heads, self.head_size, self.seed,
                          self.budget_factor, self.data_seed, size=size_tag(self.sizes))

    def checkpoint_path(self, folder: str | os.PathLike) -> Path:
        """``<folder>/<name>.ckpt.pt``."""
        return Path(folder) / f"{self.name}.ckpt.pt"

    def lock_path(self, folder: str | os.PathLike) -> Path:
        """``<folder>/.<name>.lock``: held by the process that trains it into ``folder``
        (the ``train`` command, ``sweep`` jobs), so that two never train it at once."""
        return Path(folder) / f".{self.name}.lock"

    def weights_path(self, folder: str | os.PathLike) -> Path:
        """``<folder>/<name>.weights.pt`` (the ``train`` command's export)."""
        return Path(folder) / f"{self.name}.weights.pt"

    def partial_path(self, models_dir: str | os.PathLike) -> Path:
        """Where its unfinished checkpoint is snapshotted (committed, so that another
        session resumes it): ``<models_dir>/partial/seed-<S>/<name>.ckpt.pt``."""
        return Path(models_dir) / "partial" / f"seed-{self.seed}" / f"{self.name}.ckpt.pt"

    def find_partial(self, models_dir: str | os.PathLike) -> Path | None:
        """Its committed snapshot, if there is one (seed 42's place of before seeds were
        swept, ``partial/<name>.ckpt.pt``, counts too)."""
        places = [self.partial_path(models_dir)]
        if self.seed == DEFAULT_SEED:
            places.append(Path(models_dir) / "partial" / f"{self.name}.ckpt.pt")
        return next((path for path in places if path.is_file()), None)

    def expect(self) -> dict[str, Any]:
        """What a checkpoint of this run must hold:
        :func:`~bparallel.transformer.checkpoints.load_checkpoint`'s keywords."""
        return {"task": self.task, "heads": self.heads, "head_size": self.head_size,
                "profile": self.recipe, "seed": self.seed}

    def record(self) -> dict[str, Any]:
        """What a checkpoint records of the run beside its profile and model (JSON data):
        ``sizes`` only where the run sets any, so that earlier records read the same."""
        return {"sizes": self.sizes} if self.sizes else {}

    def __str__(self) -> str:
        return f"{self.name} seed {self.seed}"


def _of_run(name: str) -> property:
    return property(lambda self: getattr(self.run, name),
                    doc=f"The run's ``{name}`` (:class:`Run`).")


class OfRun:
    """What holds one :class:`Run` as ``run`` (a sweep's ``ModelRun``, training's
    ``TrainResult``) reads its identity as its own: ``task``, ``heads``, ``head_size``,
    ``seed``, ``profile``, ``budget_factor``, each the run's, never a copy."""

    run: Run
    task = _of_run("task")
    heads = _of_run("heads")
    head_size = _of_run("head_size")
    seed = _of_run("seed")
    profile = _of_run("profile")
    budget_factor = _of_run("budget_factor")

__all__ = ["OfRun", "Run", "SIZE_TAGS", "size_tag"]
