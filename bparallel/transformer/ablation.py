"""Head ablation: remove heads of a trained Section 4.1 model and measure what it costs.

**Removing a head.** Head ``h`` of layer ``l`` is removed by replacing its slice
``[h D, (h+1) D)`` of the concatenated head outputs, i.e. of the *input* of that layer's
output projection (Michel et al., 2019), with everything else unchanged: by zero (*zero
ablation*, the same as zeroing the head's ``D`` columns of the output-projection weight) or
by the head's mean output over reference sequences at each position (*mean ablation*,
:func:`head_means`), which keeps the layers above on the inputs they were trained on. The
projection's bias belongs to no head and stays: with every head of a layer removed, the
attention sub-layer adds its bias ``b_out`` at every position. A mask ``(L, H)`` holds 1 to
keep a head and 0 to remove it; values in between interpolate. The weights are never
modified: :func:`ablated` applies a mask through forward pre-hooks, and an all-ones mask
leaves the logits bitwise unchanged.

**Measures** (:func:`evaluate_ablation`, for a batch of masks): the held-out loss and
accuracies of :class:`~bparallel.transformer.evaluation.TokenScores`, and on the predictable
positions the mean :func:`logit_margin` (the target's logit minus the largest other one)
and the KL divergence of the ablated next-token distribution from the intact one. The
trained models are saturated (token losses of ``1e-9`` nats), so a loss change is mostly
rounding; the margin and the KL are not saturated. Per-sequence sums give split halves and
intervals (:mod:`bparallel.transformer.importance`). :func:`pruning_curve` removes heads one
at a time in a given order.

Speed: the masks are deduplicated, and a mask whose first removed head is in layer ``l``
reuses the baseline pass up to that layer's head outputs (which do not depend on the mask),
running only the output projection of layer ``l`` and the layers above it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .. import ranks
from .._checks import nonnegative_int, positive_int
from .data import SequenceDataset
from .evaluation import TokenScores
from .model import Transformer

__all__ = [
    "METRICS", "PRUNING_METRICS", "ablated", "head_means", "captured_streams",
    "SEQUENCE_SUMS", "logit_margin", "evaluate_ablation", "pruning_curve", "random_orders",
    "removal_order", "rank_heads", "rank_correlation", "top_head",
]

METRICS = ("loss", "accuracy", "loss_predictable", "accuracy_predictable")
PRUNING_METRICS = ("accuracy_predictable", "margin", "kl")


# --------------------------------------------------------------------------- masks


def _check_mask(mask: Any, model: Transformer, name: str, batched: bool) -> Tensor:
    """``mask`` as float32 ``(..., L, H)`` (``(L, H)`` unless ``batched``), values in [0, 1]."""
    m = mask if isinstance(mask, Tensor) else torch.as_tensor(np.ascontiguousarray(mask))
    L, H = model.config.n_layers, model.config.n_heads
    if m.ndim < 2 or tuple(m.shape[-2:]) != (L, H) or (not batched and m.ndim != 2):
        want = "(..., L, H)" if batched else "(L, H)"
        raise ValueError(f"{name} has shape {tuple(m.shape)}: expected {want} with "
                         f"(L, H) = ({L}, {H}), one entry per layer and head")
    if m.is_complex():
        raise ValueError(f"{name} has dtype {m.dtype}: expected bool, integer or float")
    m = m.to(torch.float32)
    if m.numel() and not (torch.isfinite(m).all() and m.min() >= 0 and m.max() <= 1):
        raise ValueError(f"{name} has values outside [0, 1] (1 keeps a head, 0 removes it)")
    return m


def _check_fill(fill: Any, model: Transformer) -> Tensor | None:
    """``fill`` as float32 ``(L, T, A)`` (the replacement head outputs, ``A`` the attention's
    inner width ``H * head_size``), or ``None``."""
    if fill is None:
        return None
    f = fill if isinstance(fill, Tensor) else torch.as_tensor(np.asarray(fill))
    cfg = model.config
    if f.ndim != 3 or f.shape[0] != cfg.n_layers or f.shape[2] != cfg.attention_width:
        raise ValueError(f"fill has shape {tuple(f.shape)}: expected (L, T, A) with L = "
                         f"{cfg.n_layers}, A = {cfg.attention_width} (head_means gives it)")
    if not torch.isfinite(f).all():
        raise ValueError("fill has non-finite values")
    return f.to(torch.float32)


@contextlib.contextmanager
def ablated(model: Transformer, mask: Any, fill: Any = None) -> Iterator[Transformer]:
    """Within the block, ``model`` runs with its heads scaled by ``mask`` ``(L, H)``.

    ``mask[l, h] = 1`` keeps head ``h`` of layer ``l``, ``0`` removes it (values in between
    scale it). A forward pre-hook on each layer's output projection multiplies its input,
    the concatenated head outputs ``(B, T, H D)``, by the mask repeated over the ``D``
    columns of each head; the weights are untouched and the hooks are removed on exit.
    Nested blocks multiply their masks. Yields ``model``.

    ``fill`` ``(L, T, C)`` (default: zeros, *zero ablation*) is what a removed head's slice
    becomes: ``y -> m y + (1 - m) fill``. With :func:`head_means` it is *mean ablation*: a
    removed head outputs its mean over reference sequences at each position, so the layers
    above see a typical input instead of one the model never met in training.
    """
    m = _check_mask(mask, model, "mask", batched=False)
    f = _check_fill(fill, model)
    handles = []
    try:
        for layer, (block, row) in enumerate(zip(model.blocks, m, strict=True)):
            out = block.attn.out
            scale = row.repeat_interleave(block.attn.head_dim).to(out.weight)  # (C,)
            shift = None if f is None else (1 - scale) * f[layer].to(out.weight)  # (T, C)
            handles.append(out.register_forward_pre_hook(_scale_input(scale, shift)))
        yield model
    finally:
        for handle in handles:
            handle.remove()


def _scale_input(scale: Tensor, shift: Tensor | None = None):
    def hook(module: torch.nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        y = args[0] * scale  # (B, T, C) * (C,)
        if shift is not None:
            y = y + shift[: y.shape[-2]]  # (T, C): the removed heads' replacement
        return (y, *args[1:])

    return hook


@torch.no_grad()
def head_means(model: Transformer, inputs: Tensor, *, batch_size: int = 250) -> Tensor:
    """The mean head outputs of every layer over ``inputs`` ``(N, T)``, per position:
    ``(L, T, C)`` float32, the concatenated head outputs (the output projection's input)
    averaged over the sequences. The ``fill`` of mean ablation (:func:`ablated`)."""
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    positive_int(batch_size, "batch_size")
    was_training = model.training
    model.eval()
    total = None
    try:
        for start in range(0, inputs.shape[0], batch_size):
            with captured_streams(model) as (_, ys):
                model(inputs[start : start + batch_size])
            part = torch.stack([y.to(torch.float64).sum(0) for y in ys])  # (L, T, C)
            total = part if total is None else total + part
    finally:
        model.train(was_training)
    return (total / inputs.shape[0]).to(torch.float32)


# --------------------------------------------------------------------------- evaluation


def _first_removed_layer(masks: Tensor) -> np.ndarray:
    """Per mask ``(M, L, H)``: the first layer with a head not fully kept (``L`` if none)."""
    touched = (masks != 1).any(-1).numpy()  # (M, L)
    L = masks.shape[1]
    return np.where(touched.any(-1), touched.argmax(-1), L)


def _run_from(model: Transformer, layer: int, x: Tensor, y: Tensor) -> Tensor:
    """Logits ``(B, T, V)`` from layer ``layer`` on, given its input ``x`` and head outputs ``y``.

    ``x`` ``(B, T, C)`` is the residual stream entering block ``layer`` and ``y`` ``(B, T, C)``
    the concatenated head outputs of its attention (the output projection's input); the rest
    is ``Block.forward`` and ``Transformer.forward`` from there, through the model's own
    modules (the tests check it bitwise against the full forward).
    """
    block = model.blocks[layer]
    x = x + block.attn.out(y)  # (B, T, C): the output projection applies any ablation hook
    x = x + block.mlp(block.norm2(x))  # (B, T, C)
    for block in model.blocks[layer + 1 :]:
        x, _ = block(x, model.attention_path)  # (B, T, C)
    return model.head(x)  # (B, T, V)


@contextlib.contextmanager
def captured_streams(model: Transformer) -> Iterator[tuple[list[Tensor], list[Tensor]]]:
    """Within the block, each forward pass of ``model`` appends, per layer, the block's input
    (the residual stream, ``(B, T, d)``) to the first list and the output projection's input
    (the concatenated heads' outputs, ``(B, T, A)``) to the second; the hooks are removed on
    leaving. What mean ablation fills in (:func:`head_means`), what the ablation study
    starts from and what the conditioning reads
    (:func:`~bparallel.transformer.conditioning.head_outputs`)."""
    xs: list[Tensor] = []
    ys: list[Tensor] = []
    handles = []
    for block in model.blocks:
        handles.append(block.register_forward_pre_hook(lambda mod, args: xs.append(args[0])))
        handles.append(block.attn.out.register_forward_pre_hook(
            lambda mod, args: ys.append(args[0])))
    try:
        yield xs, ys
    finally:
        for handle in handles:
            handle.remove()


class _PerSequence:
    """Per-sequence sums over the predictable positions of one mask: cross-entropy
    (float64), hits, logit margin and KL divergence from the baseline, and the count."""

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in SEQUENCE_SUMS}

    def add(self, logits: Tensor, logp: Tensor, token_loss: Tensor, base: tuple[Tensor, Tensor],
            targets: Tensor, mask: Tensor) -> None:
        """``logits`` ``(B, T, V)``, their float64 ``log_softmax`` ``logp`` and per-token
        cross-entropy ``token_loss`` ``(B, T)``; ``base``: the intact model's float64
        probabilities and log-probabilities."""
        m = mask.to(torch.float64)
        self.parts["loss"].append((token_loss * m).sum(-1).numpy())
        self.parts["hits"].append(((logits.argmax(-1) == targets) & mask).sum(-1).numpy())
        self.parts["margin"].append((logit_margin(logits, targets) * m).sum(-1).numpy())
        p, base_logp = base
        kl = (p * (base_logp - logp)).sum(-1)  # (B, T): KL(intact || ablated)
        self.parts["kl"].append((kl * m).sum(-1).numpy())
        self.parts["count"].append(mask.sum(-1).numpy())

    def result(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate(v) for k, v in self.parts.items()}


#: Per-sequence sums kept by :func:`evaluate_ablation` with ``per_sequence=True``.
SEQUENCE_SUMS = ("loss", "hits", "margin", "kl", "count")


def logit_margin(logits: Tensor, targets: Tensor) -> Tensor:
    """The target's logit minus the largest other logit, ``(B, T)`` float64: positive where
    the argmax is the target, and unlike the loss of a saturated model not rounded away."""
    z = logits.to(torch.float64)
    target = z.gather(-1, targets[..., None])[..., 0]  # (B, T)
    others = z.scatter(-1, targets[..., None], float("-inf")).amax(-1)  # (B, T)
    return target - others


@torch.no_grad()
def evaluate_ablation(
    model: Transformer,
    dataset: SequenceDataset,
    masks: Any,
    *,
    fill: Any = None,
    batch_size: int = 250,
    loss_dtype: torch.dtype = torch.float64,
    per_sequence: bool = False,
) -> dict[str, np.ndarray]:
    """Held-out ``loss``, ``accuracy``, ``loss_predictable``, ``accuracy_predictable``,
    ``margin`` and ``kl`` per mask.

    ``masks`` ``(..., L, H)`` (1 keeps a head, 0 removes it; ``fill``: what a removed head
    outputs, see :func:`ablated`); each result has shape ``masks.shape[:-2]``. The first four
    are those of :func:`~bparallel.transformer.evaluation.evaluate_accuracy`
    (:class:`TokenScores`), computed in eval mode under ``torch.no_grad`` over
    ``batch_size`` sequences at a time; an all-ones mask gives exactly
    ``evaluate_accuracy(model, dataset, batch_size, loss_dtype=...)``. ``margin`` is the
    mean :func:`logit_margin` and ``kl`` the mean KL divergence ``KL(p_intact || p_ablated)``
    of the next-token distributions (float64 ``log_softmax``), both over the predictable
    positions. ``loss_dtype`` defaults to float64: the trained models' token losses lie far
    below what a float32 cross-entropy resolves (:class:`TokenScores`).

    ``per_sequence=True`` adds ``"per_sequence"``: for each of :data:`SEQUENCE_SUMS` an
    array ``masks.shape[:-2] + (N,)`` of sums over each sequence's predictable positions
    (divide by ``"count"`` for means), from which split halves and intervals are computed.
    """
    m = _check_mask(masks, model, "masks", batched=True)
    f = _check_fill(fill, model)
    positive_int(batch_size, "batch_size")
    batch_shape, L, H = m.shape[:-2], m.shape[-2], m.shape[-1]
    flat = m.reshape(-1, L, H)  # (M, L, H)
    unique, inverse = torch.unique(flat, dim=0, return_inverse=True)  # (U, L, H), (M,)
    first = _first_removed_layer(unique)  # (U,)
    scores = [TokenScores(dataset.task, dataset.inputs.shape[1], loss_dtype=loss_dtype)
              for _ in range(len(unique))]
    sums = [_PerSequence() for _ in range(len(unique))]
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(dataset), batch_size):
            x = dataset.inputs[start : start + batch_size]  # (B, T)
            y = dataset.targets[start : start + batch_size]  # (B, T)
            pred = dataset.mask[start : start + batch_size]  # (B, T): predictable
            with captured_streams(model) as (xs, ys):
                logits = model(x)  # (B, T, V): the baseline pass
            base_logp = torch.log_softmax(logits.to(torch.float64), dim=-1)  # (B, T, V)
            base = (base_logp.exp(), base_logp)
            for u, (mask, layer) in enumerate(zip(unique, first, strict=True)):
                if layer == L:
                    out = logits
                else:
                    with ablated(model, mask, f):
                        out = _run_from(model, int(layer), xs[layer], ys[layer])
                logp = base_logp if layer == L else torch.log_softmax(out.to(torch.float64), -1)
                token_loss = -logp.gather(-1, y[..., None])[..., 0]  # (B, T) float64
                shared = token_loss if loss_dtype == torch.float64 else None
                scores[u].add(out, y, pred, token_loss=shared)
                sums[u].add(out, logp, token_loss, base, y, pred)
    finally:
        model.train(was_training)
    idx = inverse.numpy()
    results = [s.result() for s in scores]
    out = {k: np.array([r[k] for r in results])[idx].reshape(batch_shape) for k in METRICS}
    seq = [s.result() for s in sums]
    total = {k: np.array([r[k].sum() for r in seq])[idx].reshape(batch_shape)
             for k in SEQUENCE_SUMS}
    count = np.where(total["count"] > 0, total["count"], np.nan)
    out["margin"], out["kl"] = total["margin"] / count, total["kl"] / count
    if per_sequence:
        out["per_sequence"] = {k: np.stack([r[k] for r in seq])[idx].reshape(
            *batch_shape, len(dataset)) for k in SEQUENCE_SUMS}
    return out


# --------------------------------------------------------------------------- pruning


def _check_order(order: Any, L: int, H: int) -> np.ndarray:
    o = np.asarray(order)
    if o.ndim < 2 or o.shape[-2:] != (L, H) or not np.issubdtype(o.dtype, np.integer):
        raise ValueError(f"order has shape {o.shape} and dtype {o.dtype}: expected integer "
                         f"(..., L, H) with (L, H) = ({L}, {H})")
    if not np.array_equal(np.sort(o, axis=-1), np.broadcast_to(np.arange(H), o.shape)):
        raise ValueError(f"order: each row must be a permutation of the heads 0..{H - 1}")
    return o


def pruning_curve(
    model: Transformer,
    dataset: SequenceDataset,
    order: Any,
    *,
    per_layer: bool = False,
    batch_size: int = 250,
) -> dict[str, np.ndarray]:
    """Held-out metrics as heads are removed one at a time in ``order``.

    ``order`` ``(..., L, H)``: ``order[..., l, k]`` is the ``k``-th head removed from layer
    ``l`` (so :func:`removal_order` of an importance score removes the least important
    first). Returns ``"heads_kept"`` = ``0..H`` and, per metric, the curve indexed by the
    number ``j`` of heads kept per layer (entry ``H`` is the intact model, entry 0 has every
    head of the pruned layers removed):

    - ``per_layer=False``: every layer is pruned at once, to ``j`` heads each (its first
      ``H - j`` heads in ``order`` removed); curves ``(..., H + 1)``;
    - ``per_layer=True``: each layer is pruned alone, the others intact; curves
      ``(..., L, H + 1)``, entry ``[..., l, j]`` with layer ``l`` pruned to ``j`` heads.
    """
    L, H = model.config.n_layers, model.config.n_heads
    o = _check_order(order, L, H)
    batch = o.shape[:-2]
    # removed[..., l, k, h]: head h of layer l is among the first k removed, k = 0..H
    rank = np.argsort(o, axis=-1)  # (..., L, H): position of each head in the order
    removed = rank[..., :, None, :] < np.arange(H + 1)[:, None]  # (..., L, H + 1, H)
    keep = torch.from_numpy(~removed).float()
    if per_layer:
        masks = torch.ones(*batch, L, H + 1, L, H)  # (..., pruned layer, k, L, H)
        for layer in range(L):
            masks[..., layer, :, layer, :] = keep[..., layer, :, :]
    else:
        masks = keep.movedim(-3, -2)  # (..., H + 1, L, H)
    values = evaluate_ablation(model, dataset, masks, batch_size=batch_size)
    out = {"heads_kept": np.arange(H + 1)}
    for k in (*METRICS, "margin", "kl"):
        out[k] = np.flip(values[k], axis=-1).copy()  # index by heads kept, not removed
    return out


def random_orders(n_layers: int, n_heads: int, num: int, seed: int) -> np.ndarray:
    """``num`` random removal orders ``(num, L, H)``, each row a uniform permutation.

    A pure function of ``seed`` (numpy ``default_rng``).
    """
    positive_int(n_layers, "n_layers")
    positive_int(n_heads, "n_heads")
    positive_int(num, "num")
    nonnegative_int(seed, "seed")
    rng = np.random.default_rng(seed)
    base = np.broadcast_to(np.arange(n_heads), (num, n_layers, n_heads))
    return rng.permuted(base, axis=-1)


# --------------------------------------------------------------------------- rankings


def removal_order(scores: Any) -> np.ndarray:
    """Heads ordered from the lowest score to the highest, ``(..., H)`` (ties: lower index first).

    With an importance score, the order in which :func:`pruning_curve` removes the least
    important heads first.
    """
    return np.argsort(np.asarray(scores), axis=-1, kind="stable")


def rank_heads(scores: Any) -> np.ndarray:
    """Rank of each head by ``scores`` ``(..., H)``: 0 for the highest (ties: lower index first)."""
    s = np.asarray(scores)
    order = np.argsort(-s, axis=-1, kind="stable")  # heads from highest to lowest
    return np.argsort(order, axis=-1, kind="stable")


def rank_correlation(a: Any, b: Any) -> np.ndarray:
    """Spearman's rank correlation of two head scores ``(..., H)`` per row, shape ``(...)``:
    :func:`bparallel.ranks.spearman`, the project's one rank correlation (exact, so that a
    threshold decision never hangs on the last bit of a float). Ties get average ranks, as
    in ``scipy.stats.spearmanr``; NaN where it is undefined: fewer than two heads, or a
    row whose scores are all equal.
    """
    return ranks.spearman(a, b)


def top_head(scores: Any) -> np.ndarray:
    """The head of highest score per row ``(..., H)``, shape ``(...)``; -1 where tied.

    With per-head minimax fidelities it is the best head ``h_*`` of Definition 3.12
    (Eq. 31), undefined (-1) when several heads share the maximum; with the ablation
    impact (loss change) it is the head whose removal hurts most.
    """
    s = np.asarray(scores)
    best = s.argmax(-1)
    tied = (s == s.max(-1, keepdims=True)).sum(-1) > 1
    return np.where(tied, -1, best)
