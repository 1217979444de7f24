"""Measuring the book's trained models: the one call every Section 4 chapter makes.

:func:`measure_models` takes a collection of models (any keys: ``(task, heads)``,
``(task, heads, seed)``, ``(task, heads, head size, seed)``), the sequences each is measured
on, and the parts of :func:`~bparallel.transformer.measure.measure_model` the chapter needs;
it runs each model once per set of sequences (one pass: the model's attention extracted,
validated and combined once per batch, every graph and causal quantity read from it) through
the content-addressed metrics cache (:mod:`bparallel.transformer.metrics_cache`), the
missing results in parallel worker processes. It computes nothing itself: what it returns is
what the cache holds, nested back (``"knockout/none/accuracy"`` ->
``["knockout"]["none"]["accuracy"]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import torch

from ...transformer.measure import ModelMeasures
from ...transformer.metrics_cache import cached_metrics_many
from ...transformer.model import Transformer

K = TypeVar("K", bound=Hashable)

#: Algorithm 1's step cap (``max_steps``) and Algorithm 2's horizon with which chapters
#: 08-13 measure their models, the paper's Section 4 settings: the one source of the
#: chapters' parameter cells (tests/book/tools/test_record.py ties them) and of what
#: ``python -m bparallel record`` records for them.
MAX_STEPS = 100
HORIZON = 100


def measure_models(
    models: Mapping[K, Transformer],
    inputs: Mapping[K, torch.Tensor] | Callable[[K], torch.Tensor],
    parts: str | tuple[str, ...],
    *,
    cache_dir: str | os.PathLike | None,
    recorded: str | os.PathLike | None = None,
    workers: int | None = None,
    progress: bool = False,
    desc: str | None = None,
    options_of: Callable[[K], Mapping[str, Any]] | None = None,
    **options: Any,
) -> dict[K, ModelMeasures]:
    """``{key: measures}`` for every model of ``models``, in sorted key order:
    :func:`~bparallel.transformer.measure.measure_model` of ``parts`` on ``inputs[key]``
    (a mapping, or a function of the key) with ``options`` and, per model,
    ``options_of(key)`` (e.g. the ``task`` whose targets score it), through the metrics cache
    (``cache_dir``; ``None`` computes without one; ``recorded``: results recorded beside
    the shipped models, read only; ``workers`` processes for the missing results, default
    one per core): a :class:`~bparallel.transformer.measure.ModelMeasures` per key (its
    ``graphs``, ``heads``, ``study`` and ``as_trained`` hold the parts asked for)."""
    if not models:
        raise ValueError("models is empty: nothing to measure")
    keys = sorted(models)
    get = inputs if callable(inputs) else inputs.__getitem__
    missing = [k for k in keys if not callable(inputs) and k not in inputs]
    if missing:
        raise ValueError(f"inputs has no sequences for {missing}")
    jobs = [(models[k], get(k), {**options, **(options_of(k) if options_of else {})})
            for k in keys]
    results = cached_metrics_many(parts, jobs, cache_dir=cache_dir, recorded=recorded,
                                  workers=workers, progress=progress, desc=desc)
    return dict(zip(keys, results, strict=True))


__all__ = ["measure_models"]
