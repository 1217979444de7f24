"""How well conditioned a model's attention is: the condition number of the concatenated
heads' outputs, the quantity Saratchandran et al. (2025) relate to the head count at a fixed
head size.

Per layer, the output projection reads the heads' outputs side by side, a matrix of
``N T`` rows (every position of the ``N`` sequences) and ``A`` columns (the attention's
width, heads times head size); its condition number is the largest over the smallest
singular value. :func:`attention_conditioning` gives the mean over layers of its base-10
logarithm, for a model in evaluation mode, on fixed inputs. Training records it at every
probe step of a fresh-data run (:mod:`~bparallel.transformer.train`, probe key
:data:`PROBE_KEY`), chapter 12's horse race reads it before training
(:func:`~bparallel.book.section4.graph_predictors.initial_conditioning`).

Singular values below float32's resolution of the largest (``sigma_max * max(N T, A) *
eps``, as ``numpy.linalg.matrix_rank`` counts rank) are rounding and left out: one head
wider than the model has rank ``d_model`` at most, and no ranking may hang on the last bits
of a float.

This module is apart from :mod:`~bparallel.transformer.measure` on purpose: the recorded
measures are keyed by that module's code (:mod:`~bparallel.transformer.metrics_cache`), and
the conditioning is not one of them.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from .ablation import captured_streams
from .model import Transformer

#: The key of the conditioning in a fresh-data run's probe history (``history["probe"]``).
PROBE_KEY = "conditioning"


def head_outputs(model: Transformer, inputs: Tensor) -> list[Tensor]:
    """Per layer, the concatenated heads' outputs ``(N, T, A)`` that the output projection
    reads, for ``inputs`` ``(N, T)`` (token ids), the model in evaluation mode and without
    gradients; the model's mode is restored."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model: expected a bparallel Transformer, got {type(model).__name__}")
    if not isinstance(inputs, Tensor) or inputs.dim() != 2 or inputs.dtype != torch.long:
        raise ValueError("inputs: expected a (N, T) tensor of token ids (torch.long), got "
                         + (f"{tuple(inputs.shape)} {inputs.dtype}" if isinstance(inputs, Tensor)
                            else type(inputs).__name__))
    if inputs.numel() == 0:
        raise ValueError("inputs: no sequences")
    was_training = model.training
    model.eval()
    try:
        with captured_streams(model) as (_, outs), torch.no_grad():
            model(inputs.to(next(model.parameters()).device))
    finally:
        model.train(was_training)
    return outs


def log_condition(outputs: Tensor) -> float:
    """The base-10 logarithm of the condition number of one layer's heads' outputs
    ``(..., A)`` read as a matrix of ``A`` columns, its numerically nonzero spectrum (module
    docstring), in float64; NaN for outputs that are not all finite (a diverged model:
    training's probe records it as missing and goes on)."""
    x = outputs.detach().reshape(-1, outputs.shape[-1]).cpu().to(torch.float64)
    if not bool(torch.isfinite(x).all()):
        return math.nan
    sv = torch.linalg.svdvals(x)
    tol = float(sv[0]) * max(x.shape) * float(torch.finfo(torch.float32).eps)
    kept = sv[sv > tol]
    if kept.numel() == 0:
        raise ValueError("outputs: every singular value is zero (the heads output nothing)")
    return math.log10(float(kept[0] / kept[-1]))


def attention_conditioning(model: Transformer, inputs: Tensor) -> float:
    """The mean over layers of :func:`log_condition` of the heads' outputs on ``inputs``
    (:func:`head_outputs`)."""
    logs = [log_condition(y) for y in head_outputs(model, inputs)]
    return float(np.mean(logs))


__all__ = ["PROBE_KEY", "attention_conditioning", "head_outputs", "log_condition"]
