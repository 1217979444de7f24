"""Tiny random-init Transformers for the tests of the Transformer floor: ``L`` layers of
``H`` heads over sequences of ``T`` tokens (head size ``D``); seconds on one thread."""

from __future__ import annotations

import torch

from bparallel.transformer.model import ModelConfig, Transformer

L, H, T = 4, 4, 12
D = 64 // H


def tiny_model(seed: int = 0, heads: int = H) -> Transformer:
    """A random-init model of ``heads`` heads (eval mode), its weights fixed by ``seed``."""
    torch.manual_seed(seed)
    return Transformer(ModelConfig(n_heads=heads, seq_len=T)).eval()
