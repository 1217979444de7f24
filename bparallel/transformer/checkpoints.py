"""The files of a training run, of both kinds of training (:mod:`~bparallel.transformer.train`:
a finite training set in epochs, fresh data in steps):

- torch files written atomically (:func:`atomic_torch_save`) and read with
  ``torch.load(..., weights_only=True)`` only (:func:`read_torch_file`);
- the RNG states a checkpoint keeps, so that a resumed run is bitwise an uninterrupted one
  (:func:`seed_everything`, :func:`rng_state`, :func:`set_rng_state`);
- two checkpoint kinds, one protocol (:class:`RunCheckpoint`: reading, the checks against the
  run asked for, the model, its machines, its weights file's and manifest entry's record):
  :class:`EpochCheckpoint` (``bparallel-checkpoint-v1``), :class:`StepCheckpoint`
  (``bparallel-fresh-checkpoint-v1``); :func:`load_checkpoint` reads either by ``format``;
- weights files, the shipped form of a model: config and weights beside JSON metadata, no
  optimiser or RNG state (:func:`write_weights`, :func:`load_weights`, :func:`export_weights`);
- manifests, a folder's shipped models (:func:`read_manifest`, :func:`updating_manifest`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import torch

from .._io import atomic_write, atomic_write_text, file_lock
from .arms import arms_of
from .data import heldout_dataset
from .design import FreshProfile, Profile, get_profile, recipe_record
from .evaluation import evaluate_accuracy
from .learning import LEARNING_THRESHOLD, learning_summary
from .model import ModelConfig, Transformer
from .runs import Run
from .runtime import hardware_string

__all__ = ["WEIGHTS_FORMAT", "LEGACY_ATTENTION_PATH", "atomic_torch_save", "on_cpu",
           "read_torch_file", "sha256_file", "seed_everything", "rng_state", "set_rng_state",
           "data_seed_of", "RunCheckpoint", "EpochCheckpoint", "StepCheckpoint",
           "CHECKPOINT_KINDS", "load_checkpoint", "write_weights", "load_weights",
           "export_weights", "MANIFEST", "MANIFEST_LOCK", "read_manifest", "updating_manifest"]

WEIGHTS_FORMAT = "bparallel-weights-v1"
# Checkpoints written before they recorded their attention path were all trained with SDPA.
LEGACY_ATTENTION_PATH = "sdpa"


# ---------------------------------------------------------------- torch files


def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save(obj)`` into ``path``, atomically (:func:`bparallel._io.atomic_write`)."""
    atomic_write(path, lambda fh: torch.save(obj, fh))


def on_cpu(obj: Any) -> Any:
    """``obj`` (nested dicts and lists of tensors) with every tensor copied to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: on_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(on_cpu(v) for v in obj)
    return obj


def read_torch_file(path: Path, kind: str) -> Any:
    """``torch.load(path, weights_only=True)``; any failure is a ``ValueError`` of ours.

    Torch's own message is not passed on: it suggests loading with ``weights_only=False``,
    which executes arbitrary code from the file and must never be done with these files.
    """
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle, zip and EOF errors all mean: unreadable
        raise ValueError(
            f"{kind} {path} is corrupted or not a bparallel torch file "
            f"({type(err).__name__}); re-export or re-download it"
        ) from None


def _safe_load(path: str | os.PathLike, kind: str, fmt: str) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{kind} {path} does not exist")
    obj = read_torch_file(path, kind)
    if not isinstance(obj, dict) or obj.get("format") != fmt:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(f"{kind} {path} is not a {fmt} file (found {found!r})")
    return obj


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _build_model(config: dict[str, Any], state: dict[str, torch.Tensor], where: str) -> Transformer:
    try:
        model = Transformer(ModelConfig(**config))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: invalid model config {config}: {err}") from err
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise ValueError(f"{where}: weights do not fit the model {config}: {err}") from err
    return model


# --------------------------------------------------------------------------- RNG states


def seed_everything(seed: int) -> None:
    """Seed torch, numpy's global generator and python ``random`` with ``seed``."""
    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the paper seeds numpy's global state
    random.seed(seed)


def rng_state(device: str | torch.device = "cpu") -> dict[str, Any]:
    """All global RNG states as tensors and plain types (``weights_only``-loadable); with a
    CUDA ``device``, that device's generator too (dropout masks there come from it)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()  # noqa: NPY002
    version, internal, gauss = random.getstate()
    extra = {}
    if torch.device(device).type == "cuda":
        extra["torch_cuda"] = torch.cuda.get_rng_state(device)
    return {
        **extra,
        "torch": torch.get_rng_state(),
        "numpy": {
            "name": str(name), "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(cached),
        },
        "python": {
            "version": int(version), "state": torch.tensor(internal, dtype=torch.int64),
            "gauss": gauss,
        },
    }


def set_rng_state(state: dict[str, Any], device: str | torch.device = "cpu") -> None:
    """Restore the states saved by :func:`rng_state` (the CUDA one on a CUDA ``device``)."""
    torch.set_rng_state(state["torch"])
    if torch.device(device).type == "cuda" and "torch_cuda" in state:
        torch.cuda.set_rng_state(state["torch_cuda"], device)
    s = state["numpy"]
    np.random.set_state((s["name"], s["keys"].numpy().astype(np.uint32), s["pos"],  # noqa: NPY002
                         s["has_gauss"], s["cached_gaussian"]))
    p = state["python"]
    random.setstate((p["version"], tuple(int(v) for v in p["state"].tolist()), p["gauss"]))


# --------------------------------------------------------------------------- checkpoints

_ANY = object()


def data_seed_of(record: Mapping[str, Any]) -> int:
    """The data seed of a run from its record (a checkpoint's data, a weights file's meta or
    a manifest entry): its ``data_seed``, or its ``seed`` where the record has none (every
    run recorded before the data seed was kept drew its batches from its seed,
    :func:`~.design.fresh_batch`). ``ValueError`` for a record with neither."""
    if not isinstance(record, Mapping) or "seed" not in record:
        raise ValueError(f"record={type(record).__name__}: expected a run's record (a "
                         "checkpoint's data, weights meta or manifest entry) with a 'seed'")
    value = record.get("data_seed")
    return int(record["seed"]) if value is None else int(value)


def _sizes(record: Mapping[str, Any]) -> dict[str, Any]:
    """A run's own model sizes (:attr:`~.runs.Run.sizes`), or nothing for its profile's."""
    return {"sizes": dict(record["sizes"])} if record.get("sizes") else {}


def _clean(v: Any) -> Any:
    """``v`` (nested lists of floats) to 6 significant digits; ``None`` for NaN and inf."""
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if v is None or isinstance(v, (bool, int)):
        return v
    return float(f"{v:.6g}") if math.isfinite(v) else None


@dataclass
class RunCheckpoint:
    """A loaded checkpoint of either training: the protocol both kinds follow.

    A kind names its file ``FORMAT``, the ``KEYS`` every file of it holds, the ``UNIT`` it
    counts (``position``: how far it is), the profile kind it belongs to (``PROFILE``), the
    per-evaluation values its manifest entry keeps as the learning curve (``CURVE_KEYS``),
    and what its weights file (:meth:`meta`) and its manifest entry (:meth:`entry`) record.
    """

    path: Path
    data: dict[str, Any]

    FORMAT: ClassVar[str]
    KEYS: ClassVar[tuple[str, ...]]
    UNIT: ClassVar[str]
    PROFILE: ClassVar[type]
    CURVE_KEYS: ClassVar[tuple[str, ...]]

    @property
    def position(self) -> int:
        """How far the run is: its epoch, or its step."""
        return int(self.data[self.UNIT])

    @property
    def history(self) -> dict[str, Any]:
        return self.data["history"]

    @property
    def attention_path(self) -> str:
        """The attention path that trained this run (checkpoints before the field: SDPA)."""
        return self.data.get("attention_path", LEGACY_ATTENTION_PATH)

    def config(self) -> ModelConfig:
        return ModelConfig(**self.data["model_config"])

    def model(self) -> Transformer:
        """The model at this checkpoint, in eval mode."""
        where = f"checkpoint {self.path}"
        return _build_model(self.data["model_config"], self.data["model"], where).eval()

    def segments(self) -> list[dict[str, Any]]:
        """Which epochs or steps the run trained on which machine and torch: ``{"steps":
        [from, to], "hardware", "torch_version"}`` in order (one segment for a run that never
        moved; a checkpoint written before segments were kept: one, on its recorded
        machine)."""
        start = f"from_{self.UNIT}"
        segs = self.data.get("segments") or [{start: 0, "hardware": self.data["hardware"],
                                              "torch_version": self.data["torch_version"]}]
        ends = [s[start] for s in segs[1:]] + [self.position]
        return [{"steps": [s[start], end], "hardware": s["hardware"],
                 "torch_version": s["torch_version"]} for s, end in zip(segs, ends)]  # noqa: B905 (ends has one per segment)

    def run(self, profile: Any = None) -> Run:
        """Its run (:meth:`~.runs.Run.from_record`, under ``profile``, default its own)."""
        return Run.from_record(self.data, profile)

    def name(self, profile: Any = None) -> str:
        """The shipped model's name (:attr:`~.runs.Run.shipped_name`)."""
        return self.run(profile).shipped_name

    def budget_factor(self) -> int:
        return 1

    def finished(self, profile: Any) -> bool:
        """Has the run done what ``profile`` asks (only finished runs are shipped)?"""
        raise NotImplementedError

    def outcome(self) -> str:
        """Where the run stands, in a word (``"running"`` until it is finished)."""
        raise NotImplementedError

    def meta(self) -> dict[str, Any]:
        """What a weights file records beside the weights (JSON data)."""
        raise NotImplementedError

    def entry(self, reuse: dict[str, Any] | None = None) -> dict[str, Any]:
        """The manifest entry of the finished run (less ``file`` and ``sha256``); ``reuse``:
        the entry already shipped for the same bytes, kept where recomputing is costly."""
        raise NotImplementedError

    @classmethod
    def _profile(cls, profile: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """``profile`` (a name or a profile) as its name, the settings a checkpoint must
        match, and the value of each setting in a checkpoint written before it existed."""
        p = get_profile(profile)
        if not isinstance(p, cls.PROFILE):
            raise ValueError(f"profile={p.name!r} counts {p.unit}s; this checkpoint counts "
                             f"{cls.UNIT}s")
        return p.name, p.settings(), cls._defaults()

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def check(cls, path: str | os.PathLike, data: dict[str, Any], *,
              expect: Mapping[str, Any], profile: Any = None) -> Self:
        """Check a checkpoint of this kind read from ``path``: every key of ``KEYS`` there,
        ``data[key] == value`` for each item of ``expect`` (in order), and, with
        ``profile``, the profile's name and settings. ``ValueError`` naming the problem."""
        missing = [k for k in cls.KEYS if k not in data]
        if missing:
            raise ValueError(f"checkpoint {path} is incomplete: missing {missing}")
        for key, want in expect.items():
            if data.get(key) != want:
                raise ValueError(f"checkpoint {path} has {key}={data.get(key)!r}, not "
                                 f"{key}={want!r}")
        if profile is not None:
            name, wanted, defaults = cls._profile(profile)
            if data["profile"] != name:
                raise ValueError(f"checkpoint {path} has profile={data['profile']!r}, not {name!r}")
            stored = data["profile_config"]
            diff = sorted(k for k, v in wanted.items() if stored.get(k, defaults.get(k)) != v)
            if diff:
                raise ValueError(f"checkpoint {path} was made with other settings of profile "
                                 f"{name!r}: {diff}")
        return cls(Path(path), data)


class EpochCheckpoint(RunCheckpoint):
    """A checkpoint of training on a finite set, in epochs."""

    FORMAT = "bparallel-checkpoint-v1"
    UNIT = "epoch"
    PROFILE = Profile
    KEYS = ("task", "heads", "seed", "profile", "profile_config", "model_config", "epoch",
            "model", "optimizer", "rng", "loader", "history", "torch_version", "hardware")
    #: The per-epoch held-out measures a manifest entry keeps as the model's learning curve.
    CURVE_KEYS = ("epoch", "heldout_loss", "heldout_loss_predictable",
                  "heldout_accuracy_predictable")

    @property
    def epoch(self) -> int:
        return self.position

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        # a field added to Profile after a checkpoint was written has its default there
        return Profile("", 1, 1, 1).settings()

    def finished(self, profile: Any) -> bool:
        return self.epoch >= get_profile(profile).epochs

    def outcome(self) -> str:
        """``"finished"`` at the profile's epoch count it was trained for, else
        ``"running"``."""
        return "finished" if self.epoch >= int(self.data["profile_config"]["epochs"]) \
            else "running"

    def meta(self) -> dict[str, Any]:
        d = self.data
        return {**{k: d[k] for k in ("task", "heads", "seed", "profile", "epoch",
                                     "torch_version", "hardware")},
                "attention_path": self.attention_path, "history": d["history"]}

    def entry(self, reuse: dict[str, Any] | None = None) -> dict[str, Any]:
        """Profile, seed, epochs, final training loss, the held-out accuracy on the
        profile's ``num_heldout`` sequences of the seed, machines, learning curve. ``reuse``
        (the same bytes already shipped) keeps the recorded evaluation."""
        if reuse is not None:
            return reuse
        d = self.data
        pc = {**self._defaults(), **d["profile_config"]}
        held = heldout_dataset(d["task"], pc["num_heldout"], seed=d["seed"],
                               seq_len=pc["seq_len"], vocab_size=pc["vocab_size"])
        acc = evaluate_accuracy(self.model(), held)
        n = len(self.history["epoch"])
        return {
            "task": d["task"], "heads": d["heads"], "seed": d["seed"], "profile": d["profile"],
            "epochs": self.epoch, "final_train_loss": self.history["train_loss"][-1],
            "heldout_accuracy": acc["accuracy"],
            "heldout_accuracy_predictable": acc["accuracy_predictable"],
            "torch_version": d["torch_version"], "hardware": d["hardware"],
            "attention_path": self.attention_path,
            "curve": {k: [int(e) for e in self.history["epoch"]] if k == "epoch" else
                      [_clean(v) for v in self.history.get(k, [None] * n)]
                      for k in self.CURVE_KEYS},
        }


class StepCheckpoint(RunCheckpoint):
    """A checkpoint of training on fresh data, in steps, with its budget, its learning rule
    and the proxies recorded at its probe steps."""

    FORMAT = "bparallel-fresh-checkpoint-v1"
    UNIT = "step"
    PROFILE = FreshProfile
    KEYS = ("task", "heads", "head_size", "seed", "profile", "profile_config", "model_config",
            "step", "budget", "model", "optimizer", "rng", "interval", "history",
            "torch_version", "hardware", "attention_path")
    #: The per-evaluation values a manifest entry keeps as the model's learning curve.
    CURVE_KEYS = ("step", "train_loss", "heldout_loss", "heldout_loss_predictable",
                  "heldout_accuracy_predictable")

    @property
    def step(self) -> int:
        return self.position

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        # a field added to FreshProfile after a checkpoint was written has its default there
        return FreshProfile("", ("first",), 1, 1).settings()

    @property
    def budget(self) -> int:
        return int(self.data["budget"])

    def budget_factor(self) -> int:
        return self.budget // int(self.data["profile_config"]["steps"])

    @property
    def threshold(self) -> float:
        """The learning threshold the run was trained with."""
        stored = self.data["profile_config"]["threshold"]
        return LEARNING_THRESHOLD[self.data["task"]] if stored is None else float(stored)

    def summary(self) -> dict[str, Any]:
        """:func:`~.learning.learning_summary` of the run so far (its stored rule)."""
        pc, h = self.data["profile_config"], self.history
        return learning_summary(h["step"], h["heldout_accuracy_predictable"],
                                threshold=self.threshold, budget=self.budget,
                                patience=pc["patience"], tolerance=pc["tolerance"])

    def finished(self, profile: Any) -> bool:
        return self.outcome() != "running"

    def outcome(self) -> str:
        """The run's outcome so far (:data:`~.learning.OUTCOMES`)."""
        return self.summary()["outcome"]

    def meta(self) -> dict[str, Any]:
        d, cfg = self.data, self.config()
        return {**{k: d[k] for k in ("task", "heads", "seed", "profile", "step", "budget",
                                     "torch_version", "hardware", "attention_path")},
                "head_size": cfg.head_dim, "arms": arms_of(cfg), "data_seed": data_seed_of(d),
                **_sizes(d), **self.summary(), "history": d["history"]}

    def entry(self, reuse: dict[str, Any] | None = None) -> dict[str, Any]:
        """``head_size`` (the dimensions per head, 64/H in the width arm, also in
        ``model_config``); ``arms``: the arms whose model it is; ``num_parameters``; the
        budget, the steps trained, the rule (``eval_every``, ``threshold``, ``patience``,
        ``tolerance``) and :func:`~.learning.learning_summary` (``outcome``,
        ``steps_to_threshold``, ``converged_at``, ``curve_area``); the last held-out
        evaluation; ``data_seed``, the seed of its training batches (:func:`data_seed_of`);
        ``curve`` (:data:`CURVE_KEYS` at every evaluation, step 0 included) and
        ``probes`` (:func:`~.measure.training_probe` at every probed step: scalars, and lists
        of one value per layer); a run of a profile with head probes, ``head_probes``
        (:func:`~.head_probes.head_probe` at every head-probe step, with the seconds each
        took: lists of one list of ``H`` values per layer) and its schedule; ``sizes``, a
        model of its own size. Floats to 6 significant digits, ``None`` for NaN and inf.
        ``hardware`` and ``torch_version`` name every machine and torch the run trained on; a
        run that moved (resumed elsewhere) also has ``segments``, which steps each trained; a
        run whose learning rate decays, its ``lr_schedule``; whose logits are not scaled by
        ``1/sqrt(D)``, its ``logit_scale``. Cheap to compute: ``reuse`` is
        ignored."""
        d, cfg, h = self.data, self.config(), self.history
        pc = d["profile_config"]
        moved = len(d.get("segments") or ()) > 1
        return {
            "task": d["task"], "heads": d["heads"], "head_size": cfg.head_dim,
            "arms": arms_of(cfg), "seed": d["seed"], "data_seed": data_seed_of(d),
            "profile": d["profile"], "model_config": {**cfg.to_dict(), "head_size": cfg.head_dim},
            "num_parameters": cfg.num_parameters(), "steps": self.step,
            "eval_every": pc["eval_every"], "threshold": self.threshold,
            "patience": pc["patience"], "tolerance": pc["tolerance"], **self.summary(),
            "final_train_loss": _clean(h["train_loss"][-1]),
            "heldout_accuracy": h["heldout_accuracy"][-1],
            "heldout_accuracy_predictable": h["heldout_accuracy_predictable"][-1],
            "heldout_loss_predictable": h["heldout_loss_predictable"][-1],
            "num_heldout": pc["num_heldout"], "probe_sequences": pc["probe_sequences"],
            "train_seconds": round(sum(h["seconds"]), 1), "torch_version": d["torch_version"],
            "hardware": d["hardware"], "attention_path": self.attention_path,
            "curve": {k: _clean(list(h[k])) for k in self.CURVE_KEYS},
            "probes": {k: _clean(list(v)) for k, v in h["probe"].items()},
            **({"head_probes": {k: _clean(list(v)) for k, v in h["heads"].items()},
                "head_probe_every": pc["head_probe_every"],
                "head_probe_until": pc["head_probe_until"]} if "heads" in h else {}),
            **({"segments": self.segments()} if moved else {}),
            **recipe_record(pc),
            "budget_factor": self.budget_factor(), **_sizes(d),
        }


#: The checkpoint kinds by file format.
CHECKPOINT_KINDS: dict[str, type[RunCheckpoint]] = {
    kind.FORMAT: kind for kind in (EpochCheckpoint, StepCheckpoint)}


def load_checkpoint(
    path: str | os.PathLike, *, task: str | None = None, heads: int | None = None,
    head_size: Any = _ANY, profile: Any = None, seed: int | None = None,
) -> EpochCheckpoint | StepCheckpoint:
    """Read and check a checkpoint of either kind (its ``format`` decides); refuse one of
    another task, head count, head size (``None``: the default), profile or seed (a run's:
    :meth:`~.runs.Run.expect`). ``FileNotFoundError`` when missing, ``ValueError`` naming
    the problem when the file is corrupted, incomplete or not the run asked for."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    data = read_torch_file(path, "checkpoint")
    fmt = data.get("format") if isinstance(data, dict) else type(data).__name__
    if fmt not in CHECKPOINT_KINDS:
        raise ValueError(f"checkpoint {path} is not a {' or '.join(CHECKPOINT_KINDS)} file "
                         f"(found {fmt!r})")
    kind = CHECKPOINT_KINDS[fmt]
    expect = {k: v for k, v in (("task", task), ("heads", heads), ("seed", seed))
              if v is not None}
    if head_size is not _ANY:
        expect = {"head_size": head_size, **expect}
    ck = kind.check(path, data, expect=expect, profile=profile)
    n_heads = data["model_config"].get("n_heads")
    if heads is not None and n_heads != heads:
        raise ValueError(f"checkpoint {path} holds a model with {n_heads} heads")
    return ck


# --------------------------------------------------------------------------- weights files


def write_weights(path: str | os.PathLike, config: dict[str, Any],
                  state: dict[str, torch.Tensor], meta: dict[str, Any]) -> str:
    """Write a weights file (the model's config and weights, ``meta`` beside them: no
    optimiser or RNG state), atomically; return its SHA-256. ``meta`` must be JSON data."""
    path = Path(path)
    # A JSON round trip makes the pickled bytes a function of the values only (pickle output
    # depends on which strings are shared objects), so equal weights get equal SHA-256s.
    header = json.loads(json.dumps({"model_config": config, "meta": meta}))
    state = {k: v.detach().cpu().clone() for k, v in state.items()}
    atomic_torch_save({"format": WEIGHTS_FORMAT, **header, "model": state}, path)
    return sha256_file(path)


def load_weights(
    path: str | os.PathLike, *, sha256: str | None = None
) -> tuple[Transformer, dict[str, Any]]:
    """Load shipped weights as an eval-mode model and their metadata.

    With ``sha256``, the file's hash is checked first and a mismatch is refused.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights file {path} does not exist")
    if sha256 is not None:
        actual = sha256_file(path)
        if actual.lower() != sha256.lower():
            raise ValueError(
                f"weights file {path} has SHA-256 {actual}, expected {sha256}: the file is "
                "corrupted or not the published one"
            )
    data = _safe_load(path, "weights file", WEIGHTS_FORMAT)
    model = _build_model(data.get("model_config", {}), data.get("model", {}),
                         f"weights file {path}")
    return model.eval(), dict(data.get("meta", {}))


def export_weights(source: RunCheckpoint | str | os.PathLike, path: str | os.PathLike) -> str:
    """Write a run's final weights (no optimiser or RNG state) and what its checkpoint
    records (:meth:`RunCheckpoint.meta`: every machine and torch it trained on),
    atomically; return the SHA-256. ``source``: a checkpoint of either kind, or its file
    (a run trained without ``out_dir`` has none: it is not shipped)."""
    if isinstance(source, (str, os.PathLike)):
        source = load_checkpoint(source)
    if not isinstance(source, RunCheckpoint):
        raise ValueError(f"source={type(source).__name__}: give a checkpoint or its file "
                         "(train with out_dir to have one)")
    return write_weights(path, source.data["model_config"], source.data["model"],
                         source.meta())


# --------------------------------------------------------------------------- manifests

MANIFEST = "manifest.json"
MANIFEST_LOCK = ".manifest.lock"  # held while the manifest is rewritten (git-ignored)


def read_manifest(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of the models shipped in ``folder``, or ``None`` if there is none."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(manifest.get("models"), dict):
        raise ValueError(f"{path} has no 'models' table")
    return manifest


@contextlib.contextmanager
def updating_manifest(dest: str | os.PathLike, profile: str) -> Iterator[dict[str, Any]]:
    """The manifest of ``dest`` (new if there is none) to change in the ``with`` block,
    under the manifest's lock (concurrent shippers take turns), written atomically when the
    block ends (not when it raises). ``profile``: the name of the profile shipped; a folder
    of another profile's models is refused."""
    dest = Path(dest)
    with file_lock(dest / MANIFEST_LOCK):
        manifest = read_manifest(dest) or {"profile": profile, "models": {}}
        if manifest.get("profile", profile) != profile:
            raise ValueError(f"{dest / MANIFEST} lists {manifest['profile']!r}-profile models; "
                             f"profile={profile!r} models are shipped into another folder")
        yield manifest
        manifest.pop("hardware", None)
        manifest["shipped_on"] = hardware_string()
        atomic_write_text(dest / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
