"""A content-addressed cache of per-model proxy metrics, shared by the Section 4 chapters.

The key (:func:`metrics_key`) hashes the weights, the input sequences, the options, the
numpy and torch versions and the package's source, so a cached result is never stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._io import atomic_write, file_lock
from ..transformer.measure import defined_metrics, sequence_metrics
from ..transformer.model import Transformer

#: Bumped when the layout of a cached metrics file changes.
_CACHE_FORMAT = 1


@functools.lru_cache(maxsize=1)
def _package_fingerprint() -> str:
    """SHA-256 of every source file of the package: any code change invalidates the cache.

    Read once per process, when the code that computes the metrics is the code loaded."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]  # bparallel/
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def metrics_key(model: Transformer, inputs: torch.Tensor, **options: Any) -> str:
    """Content key of :func:`sequence_metrics`: weights, config, inputs, options and code.

    Two calls with the same key compute the same arrays, so a cached result may stand in.
    """
    h = hashlib.sha256()
    head = {"format": _CACHE_FORMAT, "config": model.config.to_dict(), "options": options,
            "code": _package_fingerprint(), "numpy": np.__version__,
            "torch": str(torch.__version__)}
    h.update(json.dumps(head, sort_keys=True).encode())
    for name, value in sorted(model.state_dict().items()):
        t = value.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    x = inputs.detach().cpu().contiguous()
    h.update(f"inputs:{x.dtype}:{tuple(x.shape)}".encode())
    h.update(x.numpy().tobytes())
    return h.hexdigest()


#: The per-model measures that can be cached: ``"sequence"`` is
#: :func:`~bparallel.transformer.measure.sequence_metrics` (Tables 1-6), ``"defined"``
#: :func:`~bparallel.transformer.measure.defined_metrics` (Section 4 as defined),
#: ``"ablation"`` :func:`ablation_measure` (head ablation and pruning).
MEASURES = ("sequence", "defined", "ablation")


def ablation_measure(model: Transformer, inputs: torch.Tensor, *, task: str,
                     horizon: int = 100, **options: Any) -> dict[str, np.ndarray]:
    """:func:`~bparallel.transformer.ablation.ablation_study` of ``model`` on ``inputs`` (the
    targets of ``task``) with the per-head fidelities, flattened to ``"a/b/c"`` arrays for
    the cache (:func:`unflatten` restores the nesting)."""
    from ..transformer.ablation import ablation_study, head_fidelity
    from ..transformer.data import SequenceDataset, make_targets

    dataset = SequenceDataset(task, inputs, make_targets(inputs, task))
    fidelity = head_fidelity(model, inputs, horizon=horizon)
    study = ablation_study(model, dataset, fidelity=fidelity, **options)
    return _flatten(study)


def _flatten(tree: Any, prefix: str = "") -> dict[str, np.ndarray]:
    if isinstance(tree, dict):
        out: dict[str, np.ndarray] = {}
        for k, v in tree.items():
            if "/" in str(k):
                raise ValueError(f"key {k!r} contains '/': cannot be flattened")
            out.update(_flatten(v, f"{prefix}/{k}" if prefix else str(k)))
        return out
    return {prefix: np.asarray(tree)}


def unflatten(flat: dict[str, np.ndarray]) -> dict[str, Any]:
    """Nested dicts back from ``"a/b/c"`` keys; 0-d arrays become Python numbers."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *path, last = key.split("/")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value.item() if np.ndim(value) == 0 else value
    return out


def cached_metrics(
    measure: str,
    model: Transformer,
    inputs: torch.Tensor,
    *,
    cache_dir: str | os.PathLike | None,
    **options: Any,
) -> dict[str, np.ndarray]:
    """``MEASURES[measure](model, inputs, **options)``, stored under ``cache_dir`` by
    :func:`metrics_key` (which hashes the measure's name too).

    The cache is content-addressed (weights, inputs, options and the package's source), so
    it never serves a stale result; a file that cannot be read is computed again and
    replaced. Written atomically, under a per-key file lock, so concurrent callers compute
    a key once. ``cache_dir=None`` computes without a cache.
    """
    if measure not in MEASURES:
        raise ValueError(f"measure={measure!r}: valid measures are {list(MEASURES)}")
    compute = {"sequence": sequence_metrics, "defined": defined_metrics,
               "ablation": ablation_measure}[measure]
    if cache_dir is None:
        return compute(model, inputs, **options)
    key = metrics_key(model, inputs, measure=measure, **options)
    path = Path(cache_dir) / f"metrics-{key}.npz"
    # One computation per key: a second process (say chapter 08 run beside 07) waits for the
    # first and then reads its result.
    with file_lock(path.with_suffix(".lock")):
        if path.is_file():
            try:
                with np.load(path, allow_pickle=False) as f:
                    return {k: f[k] for k in f.files}
            except Exception as exc:  # a truncated or corrupted file: compute again
                warnings.warn(f"ignoring unreadable metrics cache {path}: {exc}", stacklevel=2)
        out = compute(model, inputs, **options)
        atomic_write(path, lambda fh: np.savez(fh, **out))
        return out


def cached_sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    cache_dir: str | os.PathLike | None,
    max_steps: int = 100,
    horizon: int = 100,
) -> dict[str, np.ndarray]:
    """:func:`sequence_metrics` through :func:`cached_metrics` (Tables 1-6)."""
    return cached_metrics("sequence", model, inputs, cache_dir=cache_dir, max_steps=max_steps,
                          horizon=horizon)
