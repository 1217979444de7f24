"""The files of a training run, shared by both trainings (:mod:`~bparallel.transformer.train`,
on a fixed training set, and :mod:`~bparallel.transformer.fresh`, on fresh data):

- torch files written atomically (:func:`atomic_torch_save`) and read with
  ``torch.load(..., weights_only=True)`` only (:func:`read_torch_file`);
- the RNG states a checkpoint keeps, so that a resumed run is bitwise an uninterrupted one
  (:func:`seed_everything`, :func:`rng_state`, :func:`set_rng_state`);
- what the two checkpoint kinds share (:class:`RunCheckpoint`: reading, the checks against
  the run asked for, the model), each kind with its own format and keys;
- weights files, the shipped form of a model: config and weights beside JSON metadata, no
  optimiser or RNG state (:func:`write_weights`, :func:`load_weights`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import torch

from .._io import atomic_write, atomic_write_text, file_lock
from .model import ModelConfig, Transformer
from .runtime import hardware_string

WEIGHTS_FORMAT = "bparallel-weights-v1"
# Checkpoints written before they recorded their attention path were all trained with SDPA.
LEGACY_ATTENTION_PATH = "sdpa"


# --------------------------------------------------------------------------- torch files


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
    np.random.set_state(  # noqa: NPY002
        (s["name"], s["keys"].numpy().astype(np.uint32), s["pos"], s["has_gauss"],
         s["cached_gaussian"])
    )
    p = state["python"]
    random.setstate((p["version"], tuple(int(v) for v in p["state"].tolist()), p["gauss"]))


# --------------------------------------------------------------------------- checkpoints


@dataclass
class RunCheckpoint:
    """A loaded checkpoint of either training: what the two kinds share.

    A kind (:class:`~bparallel.transformer.train.Checkpoint`,
    :class:`~bparallel.transformer.fresh.FreshCheckpoint`) names its file ``FORMAT``, the
    ``KEYS`` every file of it holds, and how a profile is named and compared
    (:meth:`_profile`); :meth:`read` loads and checks a file of that kind.
    """

    path: Path
    data: dict[str, Any]

    FORMAT: ClassVar[str]
    KEYS: ClassVar[tuple[str, ...]]

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

    @classmethod
    def _profile(cls, profile: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """``profile`` (a name or a profile) as its name, the settings a checkpoint must
        match, and the value of each setting in a checkpoint written before it existed."""
        raise NotImplementedError

    @classmethod
    def read(cls, path: str | os.PathLike, *, expect: Mapping[str, Any],
             profile: Any = None) -> Self:
        """Read and check a checkpoint of this kind: every key of ``KEYS`` there,
        ``data[key] == value`` for each item of ``expect`` (in order), and, with
        ``profile``, the profile's name and settings. ``FileNotFoundError`` when missing,
        ``ValueError`` naming the problem otherwise."""
        data = _safe_load(path, "checkpoint", cls.FORMAT)
        missing = [k for k in cls.KEYS if k not in data]
        if missing:
            raise ValueError(f"checkpoint {path} is incomplete: missing {missing}")
        for key, want in expect.items():
            if data[key] != want:
                raise ValueError(f"checkpoint {path} has {key}={data[key]!r}, not {key}={want!r}")
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
