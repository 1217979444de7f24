"""The spectral gap of each layer's attention chain (Erel et al. 2025, "Attention (as
Discrete-Time Markov) Chains", arXiv 2507.17657), one more graph measure for chapter 12's
horse race.

A layer's attention, averaged over its heads, is a row-stochastic matrix ``A`` over the
``T`` positions: a Markov chain whose second-largest eigenvalue modulus ``lambda_2`` sets how
fast it forgets where it started, and whose spectral gap is ``1 - |lambda_2|``. Causal
attention is lower triangular, so its eigenvalues are its diagonal entries: ``A[0, 0] = 1``
(the first position attends to itself alone) and ``lambda_2 = max_{t >= 1} A[t, t]``, the
largest weight any later position keeps on itself (:func:`spectral_gap`; a test checks the
closed form against a general eigenvalue solver).

The fresh-data runs record their graph measures at the probe steps, not their attention
patterns, so the gap cannot be read at the early step from what is stored; it is read
before training, on the weights each run started from (:func:`initial_spectral_gap`), as
the condition number is where its probe is missing."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ...transformer.runs import Run
from ...transformer.train import initial_model


def spectral_gap(patterns: Any) -> np.ndarray:
    """``1 - |lambda_2|`` of each causal attention chain in ``patterns`` (``(..., T, T)``,
    row-stochastic, lower triangular, ``T >= 2``): one minus the largest diagonal entry
    after the first, shaped ``(...)``. A ``ValueError`` for a pattern that is not square,
    has fewer than two positions, or is not lower triangular."""
    a = np.asarray(patterns, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2:
        raise ValueError(f"patterns has shape {a.shape}: expected (..., T, T) with T >= 2")
    if np.abs(np.triu(a, 1)).max(initial=0.0) > 1e-6:
        raise ValueError("patterns: not lower triangular (causal attention is)")
    diag = np.diagonal(a, axis1=-2, axis2=-1)[..., 1:]
    return 1.0 - np.abs(diag).max(axis=-1)


def model_spectral_gap(model: torch.nn.Module, inputs: torch.Tensor) -> float:
    """The mean over layers and sequences of :func:`spectral_gap` of each layer's
    head-averaged attention on ``inputs`` (``(B, T)`` token ids), the model in evaluation
    mode."""
    model.eval()
    with torch.no_grad():
        _, patterns = model(inputs, return_attention=True)  # (L, B, H, T, T)
    layers = patterns.double().mean(dim=2).numpy()  # (L, B, T, T)
    return float(spectral_gap(layers).mean())


def initial_spectral_gap(entry: Mapping[str, Any], inputs: torch.Tensor) -> float:
    """:func:`model_spectral_gap` of the weights a run started from
    (:func:`~bparallel.transformer.train.initial_model` of its run,
    :meth:`~bparallel.transformer.runs.Run.from_record`) on ``inputs``, its probe sequences;
    NaN for an entry without a model configuration."""
    cfg = entry.get("model_config")
    if not cfg or "profile" not in entry:
        return math.nan
    model = initial_model(Run.from_record(entry))
    return model_spectral_gap(model, inputs)


__all__ = ["initial_spectral_gap", "model_spectral_gap", "spectral_gap"]
