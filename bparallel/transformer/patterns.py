"""Reading attention out of a trained model: its patterns, per layer and head, and the
learned head weights of Section 4.2 (the output projection's column blocks).

What the measures (:mod:`~bparallel.transformer.measure`) and the causal studies
(:mod:`~bparallel.transformer.importance`) both start from; it imports only the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._checks import finite_array, positive_int
from .model import Transformer

__all__ = [
    "extract_patterns", "head_weights", "model_head_weights",
]


@torch.no_grad()
def extract_patterns(model: Transformer, inputs: torch.Tensor) -> np.ndarray:
    """Attention patterns of every layer, ``(L, B, H, T, T)`` float32 (explicit path, eval)."""
    was_training = model.training
    model.eval()
    try:
        _, pattern = model(inputs, return_attention=True)  # (L, B, H, T, T)
    finally:
        model.train(was_training)
    return pattern.numpy()


def head_weights(out_proj_weight: Any, num_heads: int) -> np.ndarray:
    """Learned head importances of Section 4.2, ``(..., H)``, summing to 1.

    ``out_proj_weight`` is the output projection's weight ``(..., d_out, d_in)``; its
    columns are split into ``num_heads`` blocks of ``d_in / num_heads`` columns (one per
    head, in concatenation order); each head's raw score is the Frobenius norm of its block.
    """
    w = finite_array(out_proj_weight, "out_proj_weight")
    positive_int(num_heads, "num_heads")
    if w.ndim < 2:
        raise ValueError(f"out_proj_weight has shape {w.shape}: expected (..., d_out, d_in)")
    d_in = w.shape[-1]
    if d_in % num_heads:
        raise ValueError(f"num_heads={num_heads} does not divide d_in={d_in} of out_proj_weight")
    blocks = w.reshape(*w.shape[:-1], num_heads, d_in // num_heads)  # (..., d_out, H, D)
    norms = np.sqrt((blocks**2).sum(axis=(-3, -1)))  # (..., H)
    total = norms.sum(-1, keepdims=True)
    if np.any(total == 0):
        raise ValueError("out_proj_weight is all zero: head weights are undefined")
    return norms / total


def model_head_weights(model: Transformer) -> np.ndarray:
    """Learned head importances of every layer, ``(L, H)`` (Section 4.2, :func:`head_weights`
    of each layer's output projection)."""
    return head_weights(model.out_proj_weights(), model.config.n_heads)
