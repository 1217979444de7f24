"""Per-head probes through training: what each head of each layer does, read on
the probe sequences at every head-probe step of a fresh-data run
(``FreshProfile.head_probe_every``, :func:`head_probe_steps`).

For a head ``h`` of a layer, ``A[n, i, j]`` is its attention of query ``i`` on key ``j`` in
sequence ``n`` (rows sum to 1, causal), ``x`` the input tokens. Four scores per head:

- **previous-token score**: the attention mass on the previous position, the mean over
  sequences and query positions ``i >= 1`` of ``A[n, i, i - 1]``
  (:func:`previous_token_score`): 1 for a head that always looks one back, ``1/(i+1)``
  averaged for a uniform causal head.
- **induction score** (Olsson et al. 2022): at a query whose token occurred before, the
  attention mass on the positions right after its earlier occurrences,
  ``sum_{j: 1 <= j <= i, x_{j-1} = x_i} A[n, i, j]``, averaged over the queries
  that have an earlier occurrence (:func:`induction_score`; on induction's sequences each
  token of the second half occurred once before, and its successor there is the target): 1
  for a perfect induction head.
- **copying score**: how much the head's output raises the logit of the tokens it attends
  to, on the direct path. The head's output at ``i`` enters the logits linearly through the
  output projection's block of the head ``W_O^h`` (``C x D``) and the unembedding ``W_U``
  (``V x C``; the model has no final norm), ``z_i = W_U W_O^h sum_j A[i, j] v_j`` (``V``
  logits); the score is the attention-weighted raise of the attended tokens above the mean
  logit, ``c_i = sum_j A[i, j] z_i[x_j] - mean_v z_i[v]``, averaged over sequences and query
  positions ``i >= 1`` (:func:`copying_score`), in logits (nats). A head whose values add
  ``alpha`` to the logit of their own token and which attends to one position scores
  ``alpha (1 - 1/V)``; one that raises nothing scores 0, one that lowers what it attends to
  scores below 0. Later layers' processing of the head's output is not counted.
- **effective rank of the logit matrix** (Roy & Vetterli 2007): for a sequence, the head's
  ``T x T`` attention logits before the causal mask, ``S = Q K^T / sqrt(D)`` (``Q``, ``K``:
  its queries and keys, ``T x D``), and ``exp(H(p))`` of the entropy of its normalised
  singular values ``p_k = sigma_k / sum sigma``; the mean over sequences
  (:func:`effective_rank`). At most ``min(D, T)`` (the biases included, since ``Q`` and ``K``
  have ``D`` columns), 1 for a rank-one matrix; the scale ``1/sqrt(D)`` does not change it.
  Computed from the ``D x D`` triangular factors of ``Q`` and ``K`` where ``D < T``
  (``Q = U R_Q``, ``K = U' R_K``: ``S`` has the singular values of ``R_Q R_K^T / sqrt(D)``).

:func:`head_probe` measures all four for every layer and head (lists ``L x H``) in one
forward pass, with the probe set's loss and accuracy on the predictable positions, so that
the loss's fall is located at the same steps.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from .._checks import nonnegative_int, positive_int
from .data import SequenceDataset, check_tokens
from .model import Transformer

__all__ = ["HEAD_SCORE_KEYS", "HEAD_SCALAR_KEYS", "previous_token_score", "induction_targets",
           "induction_score", "copying_score", "effective_rank", "logit_singular_values",
           "head_probe", "head_probe_steps"]

#: The per-head scores, lists of one list of ``H`` floats per layer.
HEAD_SCORE_KEYS = ("previous_token", "induction", "copying", "logit_rank")
#: The probe set's loss and accuracy on the predictable positions at each head probe.
HEAD_SCALAR_KEYS = ("loss_predictable", "accuracy_predictable")


def _check_pattern(patterns: Tensor) -> int:
    if not isinstance(patterns, Tensor) or patterns.ndim < 2 or \
            patterns.shape[-1] != patterns.shape[-2]:
        shape = tuple(patterns.shape) if isinstance(patterns, Tensor) else type(patterns)
        raise ValueError(f"patterns has shape {shape}: expected (..., T, T) attention rows")
    return int(patterns.shape[-1])


def previous_token_score(patterns: Tensor) -> Tensor:
    """The attention mass on the previous position, ``mean_{i >= 1} A[..., i, i - 1]``, for
    ``patterns`` ``(N, H, T, T)``: one value per head ``(H,)`` (mean over the ``N``
    sequences too); needs ``T >= 2``."""
    T = _check_pattern(patterns)
    if patterns.ndim != 4 or T < 2:
        raise ValueError(f"patterns has shape {tuple(patterns.shape)}: expected (N, H, T, T) "
                         "with T >= 2")
    return torch.diagonal(patterns, offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))


def induction_targets(inputs: Tensor) -> Tensor:
    """``M[n, i, j]``: key ``j`` follows an earlier occurrence of query ``i``'s token
    (``1 <= j <= i`` and ``x_{j-1} = x_i``), boolean ``(N, T, T)``, for token ids ``inputs``
    ``(N, T)``."""
    if not isinstance(inputs, Tensor) or inputs.ndim != 2 or inputs.is_floating_point():
        raise ValueError("inputs: expected integer token ids (N, T)")
    N, T = inputs.shape
    start = torch.full((N, 1), -1, dtype=inputs.dtype, device=inputs.device)
    prev = torch.cat([start, inputs[:, :-1]], 1)  # x_{j-1}
    same = inputs[:, :, None] == prev[:, None, :]  # (N, i, j): x_i == x_{j-1}
    i = torch.arange(T, device=inputs.device)
    return same & (i[None, :] <= i[:, None])


def induction_score(patterns: Tensor, inputs: Tensor) -> Tensor:
    """The attention mass on the positions after the current token's earlier occurrences,
    averaged over the queries whose token occurred before (module docstring), for
    ``patterns`` ``(N, H, T, T)`` and ``inputs`` ``(N, T)``: ``(H,)``. ``ValueError`` when no
    query's token occurred before."""
    T = _check_pattern(patterns)
    if patterns.ndim != 4 or tuple(inputs.shape) != (patterns.shape[0], T):
        raise ValueError(f"patterns {tuple(patterns.shape)} and inputs "
                         f"{tuple(inputs.shape)}: expected (N, H, T, T) and (N, T)")
    m = induction_targets(inputs)  # (N, T, T)
    rows = m.any(-1)  # (N, T): queries with an earlier occurrence
    if not rows.any():
        raise ValueError("inputs: no query's token occurred before; the induction score "
                         "needs repeated tokens")
    mass = (patterns * m[:, None].to(patterns.dtype)).sum(-1)  # (N, H, T)
    return (mass * rows[:, None]).sum(dim=(0, 2)) / rows.sum()


def copying_score(patterns: Tensor, head_logits: Tensor, inputs: Tensor) -> Tensor:
    """``mean_{n, i >= 1} [sum_j A[i, j] z_i[x_j] - mean_v z_i[v]]`` (module docstring) for
    ``patterns`` ``(N, H, T, T)``, the head's direct logits ``head_logits`` ``(N, H, T, V)``
    (``z_i = W_U W_O^h y_i``) and ``inputs`` ``(N, T)``: ``(H,)``, in logits."""
    T = _check_pattern(patterns)
    N, H = patterns.shape[:2]
    if patterns.ndim != 4 or head_logits.shape[:3] != (N, H, T) or \
            tuple(inputs.shape) != (N, T):
        raise ValueError(f"patterns {tuple(patterns.shape)}, head_logits "
                         f"{tuple(head_logits.shape)}, inputs {tuple(inputs.shape)}: expected "
                         "(N, H, T, T), (N, H, T, V), (N, T)")
    check_tokens(inputs, "inputs", head_logits.shape[-1])
    keys = inputs[:, None, None, :].expand(N, H, T, T)  # x_j at every (n, h, i, j)
    attended = (patterns * head_logits.gather(-1, keys)).sum(-1)  # (N, H, T)
    raise_ = attended - head_logits.mean(-1)  # (N, H, T)
    return raise_[..., 1:].mean(dim=(0, 2))


def effective_rank(matrices: Tensor | None = None, *, singular_values: Tensor | None = None
                   ) -> Tensor:
    """``exp(-sum_k p_k log p_k)``, ``p_k = sigma_k / sum sigma`` (Roy & Vetterli 2007), of
    each matrix of ``matrices`` ``(..., m, n)`` or from its ``singular_values``
    ``(..., k)``: ``(...)``. A zero matrix has effective rank 0."""
    if (matrices is None) == (singular_values is None):
        raise ValueError("give matrices or singular_values, one of them")
    s = torch.linalg.svdvals(matrices) if singular_values is None else singular_values
    if (s < 0).any():
        raise ValueError("singular_values: must be non-negative")
    total = s.sum(-1, keepdim=True)
    p = torch.where(total > 0, s / total.clamp_min(torch.finfo(s.dtype).tiny), 0.0)
    entropy = -(torch.where(p > 0, p * p.clamp_min(1e-300).log(), 0.0)).sum(-1)
    return torch.where(total[..., 0] > 0, entropy.exp(), 0.0)


def logit_singular_values(q: Tensor, k: Tensor) -> Tensor:
    """The singular values of every head's logit matrix ``S = q k^T / sqrt(D)`` for ``q``,
    ``k`` ``(N, H, T, D)``: ``(N, H, min(T, D))``, from the ``D x D`` factors of the QR
    decompositions where ``D < T`` (the same values, far cheaper than ``T x T``)."""
    D, T = q.shape[-1], q.shape[-2]
    if D < T:
        rq, rk = torch.linalg.qr(q, mode="r").R, torch.linalg.qr(k, mode="r").R  # (.., D, D)
        return torch.linalg.svdvals(rq @ rk.transpose(-2, -1) / math.sqrt(D))
    return torch.linalg.svdvals(q @ k.transpose(-2, -1) / math.sqrt(D))


@torch.no_grad()
def head_probe(model: Transformer, probes: SequenceDataset) -> dict[str, Any]:
    """Every head's four scores (module docstring, :data:`HEAD_SCORE_KEYS`: one list of ``H``
    floats per layer) on the sequences of ``probes``, and the probe set's loss and accuracy
    on its predictable positions (:data:`HEAD_SCALAR_KEYS`), from one forward pass of the
    model in eval mode (restored to its mode after). The queries, keys and values are
    recomputed from each attention layer's input, so the patterns are the explicit path's.
    A model on a GPU is measured where it is."""
    if not isinstance(probes, SequenceDataset) or not len(probes):
        raise ValueError("probes: expected a non-empty SequenceDataset")
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device
    x_in: list[Tensor] = []
    hooks = [b.attn.register_forward_pre_hook(lambda _m, args: x_in.append(args[0]))
             for b in model.blocks]
    try:
        inputs = probes.inputs.to(dev)
        logits = model(inputs, attention_path="sdpa")  # (N, T, V)
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)
    targets, mask = probes.targets.to(dev), probes.mask.to(dev)
    loss = F.cross_entropy(logits[mask], targets[mask]).item() if mask.any() else math.nan
    acc = (logits.argmax(-1)[mask] == targets[mask]).float().mean().item() if mask.any() \
        else math.nan
    out: dict[str, Any] = {"loss_predictable": loss, "accuracy_predictable": acc,
                           **{k: [] for k in HEAD_SCORE_KEYS}}
    W_U = model.head.weight  # (V, C)
    for block, x in zip(model.blocks, x_in, strict=True):
        attn = block.attn
        N, T, _ = x.shape
        H, D = attn.n_heads, attn.head_dim
        q, k, v = (lin(x).view(N, T, H, D).transpose(1, 2) for lin in (attn.q, attn.k, attn.v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (N, H, T, T)
        A = torch.softmax(scores.masked_fill(~attn.causal_mask[:T, :T], float("-inf")), -1)
        y = A @ v  # (N, H, T, D)
        W_O = attn.out.weight.view(-1, H, D)  # (C, H, D): head h's block of columns
        M = torch.einsum("vc,chd->hvd", W_U, W_O)  # (H, V, D): W_U W_O^h
        z = torch.einsum("nhtd,hvd->nhtv", y, M)  # (N, H, T, V): the head's direct logits
        values = {"previous_token": previous_token_score(A),
                  "induction": induction_score(A, inputs),
                  "copying": copying_score(A, z, inputs),
                  "logit_rank": effective_rank(
                      singular_values=logit_singular_values(q, k)).mean(0)}
        for key, value in values.items():
            out[key].append([float(t) for t in value.cpu()])
    return out


def head_probe_steps(every: int, until: int, eval_every: int, budget: int) -> list[int]:
    """The steps at which a run's heads are probed: ``0``, every ``every`` steps up to
    ``until``, then every ``eval_every`` (the held-out evaluations) up to ``budget``, and
    ``budget`` (a run that stops earlier, converged, is also probed at its last step)."""
    for name, value in (("every", every), ("eval_every", eval_every), ("budget", budget)):
        positive_int(value, name)
    nonnegative_int(until, "until")
    dense = range(0, min(until, budget) + 1, every)
    sparse = range(0, budget + 1, eval_every)
    return sorted({*dense, *(s for s in sparse if s > until), budget})
