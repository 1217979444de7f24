"""Head ablation and pruning: do the paper's per-head measures say which heads matter?

Section 5 of the paper suggests that mixing time and minimax fidelity could inform adaptive
weighting and pruning of heads (cf. Voita et al., 2019). This module removes heads from a
trained Section 4.1 model and measures what the removal costs on held-out data.

**Removing a head.** Head ``h`` of layer ``l`` is removed by zeroing its slice
``[h D, (h+1) D)`` of the concatenated head outputs, i.e. of the *input* of that layer's
output projection (Michel et al., 2019), with everything else unchanged. This equals zeroing
the head's ``D`` columns of the output-projection weight. The projection's bias belongs to no
head and stays: with every head of a layer removed, the attention sub-layer adds its bias
``b_out`` at every position instead of nothing (zero ``b_out`` as well to skip the sub-layer).
A mask ``(L, H)`` holds 1 to keep a head and 0 to remove it; values in between scale the
head's output. The weights are never modified: :func:`ablated` applies a mask through forward
pre-hooks, and an all-ones mask leaves the logits bitwise unchanged.

**Measures.** :func:`evaluate_ablation` gives the held-out loss and accuracies
(:class:`~bparallel.transformer.train.TokenScores`) of a batch of masks; on top of it:
:func:`single_head_ablation` (each head alone), :func:`pair_ablation` (each pair of heads of
one layer, and its synergy), :func:`pruning_curve` (heads removed one at a time in a given
order). :func:`head_fidelity` gives each head's minimax fidelity (Definitions 3.10-3.12,
Algorithm 2); with the learned head weights of Section 4.2
(:func:`~bparallel.transformer.measure.model_head_weights`) and the ablation impact, the
rankings are compared by :func:`rank_correlation` and :func:`top_head`.

Changes are ``ablated - baseline`` throughout: a positive loss change (a negative accuracy
change) means the removal hurts.

Speed: the masks are deduplicated, and a mask whose first removed head is in layer ``l``
reuses the baseline pass up to that layer's head outputs (which do not depend on the mask),
running only the output projection of layer ``l`` and the layers above it. The attention of
each layer above (``scaled_dot_product_attention``, about 0.1 s of one CPU core per layer
for 200 sequences of a 16-head model at ``T = 100``) is most of the cost: on the shipped
16-head models, 200 held-out sequences, one thread, the 64 single-head ablations take about
20 s, the 120 pairs of the last layer about 16 s, and a pruning curve of all layers at once
about 8 s per order.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from scipy import stats
from torch import Tensor

from .. import proxies
from .._checks import nonnegative_int, positive_int
from .data import SequenceDataset
from .measure import extract_patterns, model_head_weights
from .model import Transformer
from .train import TokenScores

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
    """``fill`` as float32 ``(L, T, C)`` (the replacement head outputs), or ``None``."""
    if fill is None:
        return None
    f = fill if isinstance(fill, Tensor) else torch.as_tensor(np.asarray(fill))
    cfg = model.config
    if f.ndim != 3 or f.shape[0] != cfg.n_layers or f.shape[2] != cfg.d_model:
        raise ValueError(f"fill has shape {tuple(f.shape)}: expected (L, T, C) with L = "
                         f"{cfg.n_layers}, C = {cfg.d_model} (head_means gives it)")
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
            _, ys, handles = _capture(model)
            try:
                model(inputs[start : start + batch_size])
            finally:
                for handle in handles:
                    handle.remove()
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


def _capture(model: Transformer) -> tuple[list[Tensor], list[Tensor], list[Any]]:
    """Hooks recording each block's input and each output projection's input."""
    xs: list[Tensor] = []
    ys: list[Tensor] = []
    handles = []
    for block in model.blocks:
        handles.append(block.register_forward_pre_hook(lambda mod, args: xs.append(args[0])))
        handles.append(block.attn.out.register_forward_pre_hook(
            lambda mod, args: ys.append(args[0])))
    return xs, ys, handles


class _PerSequence:
    """Per-sequence sums over the predictable positions of one mask: cross-entropy
    (float64), hits, logit margin and KL divergence from the baseline, and the count."""

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in SEQUENCE_SUMS}

    def add(self, logits: Tensor, base_logp: Tensor, targets: Tensor, mask: Tensor) -> None:
        """``logits`` ``(B, T, V)``; ``base_logp`` the baseline's float64 log-probabilities."""
        logp = torch.log_softmax(logits.to(torch.float64), dim=-1)  # (B, T, V)
        target_logp = logp.gather(-1, targets[..., None])[..., 0]  # (B, T)
        m = mask.to(torch.float64)
        self.parts["loss"].append((-target_logp * m).sum(-1).numpy())
        self.parts["hits"].append(((logits.argmax(-1) == targets) & mask).sum(-1).numpy())
        self.parts["margin"].append((logit_margin(logits, targets) * m).sum(-1).numpy())
        kl = (base_logp.exp() * (base_logp - logp)).sum(-1)  # (B, T): KL(baseline || ablated)
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
    are those of :func:`~bparallel.transformer.train.evaluate_accuracy`
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
            xs, ys, handles = _capture(model)
            try:
                logits = model(x)  # (B, T, V): the baseline pass
            finally:
                for handle in handles:
                    handle.remove()
            base_logp = torch.log_softmax(logits.to(torch.float64), dim=-1)  # (B, T, V)
            for u, (mask, layer) in enumerate(zip(unique, first, strict=True)):
                if layer == L:
                    out = logits
                else:
                    with ablated(model, mask, f):
                        out = _run_from(model, int(layer), xs[layer], ys[layer])
                scores[u].add(out, y, pred)
                sums[u].add(out, base_logp, y, pred)
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


def _delta(values: dict[str, np.ndarray], baseline: dict[str, float]) -> dict[str, np.ndarray]:
    return {k: values[k] - baseline[k] for k in METRICS}


def _baseline(values: dict[str, np.ndarray]) -> dict[str, float]:
    """The metrics of mask 0 of ``values`` (the all-ones mask by convention here)."""
    return {k: float(values[k].reshape(-1)[0]) for k in METRICS}


def single_head_ablation(
    model: Transformer, dataset: SequenceDataset, *, batch_size: int = 250
) -> dict[str, Any]:
    """The cost of removing each head alone.

    Returns ``"baseline"`` (the intact model's metrics, a dict of floats) and ``"delta"``:
    for each metric an ``(L, H)`` array, entry ``[l, h]`` = metric with head ``h`` of layer
    ``l`` removed (every other head kept) minus the baseline.
    """
    L, H = model.config.n_layers, model.config.n_heads
    masks = torch.ones(1 + L * H, L * H)
    masks[1:] -= torch.eye(L * H)  # mask 0 keeps everything; mask 1 + l H + h removes (l, h)
    values = evaluate_ablation(model, dataset, masks.view(-1, L, H), batch_size=batch_size)
    base = _baseline(values)
    return {"baseline": base,
            "delta": {k: v[1:].reshape(L, H) for k, v in _delta(values, base).items()}}


def pair_ablation(
    model: Transformer, dataset: SequenceDataset, layer: int, *, batch_size: int = 250
) -> dict[str, Any]:
    """The cost of removing each pair of heads of ``layer``, and the pair's synergy.

    Returns ``"baseline"`` (dict of floats), ``"single"`` (per metric ``(H,)``: the change
    when one head of ``layer`` is removed), ``"pair"`` (per metric ``(H, H)``, symmetric:
    the change when heads ``a`` and ``b`` are both removed; the diagonal is the single
    change) and ``"synergy"`` (per metric ``(H, H)``:
    ``delta(a, b) - delta(a) - delta(b)``; the diagonal, where there is no pair, is NaN).
    A positive loss synergy means that removing both heads hurts more than the two single
    removals add up to: the heads work together (for instance each covers for the other
    when it alone is removed); a negative one, that the second removal costs less once the
    first is done. For the accuracies, whose changes are negative when a removal hurts, the
    signs flip.
    """
    L, H = model.config.n_layers, model.config.n_heads
    nonnegative_int(layer, "layer")
    if layer >= L:
        raise ValueError(f"layer={layer}: the model has layers 0..{L - 1}")
    pairs = list(itertools.combinations(range(H), 2))
    masks = torch.ones(1 + H + len(pairs), L, H)
    for h in range(H):
        masks[1 + h, layer, h] = 0
    for i, (a, b) in enumerate(pairs):
        masks[1 + H + i, layer, [a, b]] = 0
    values = evaluate_ablation(model, dataset, masks, batch_size=batch_size)
    base = _baseline(values)
    delta = _delta(values, base)
    single = {k: v[1 : 1 + H] for k, v in delta.items()}
    pair: dict[str, np.ndarray] = {}
    synergy: dict[str, np.ndarray] = {}
    for k in METRICS:
        pk = np.diag(single[k]).astype(np.float64)  # (H, H)
        sk = np.full((H, H), np.nan)
        for i, (a, b) in enumerate(pairs):
            pk[a, b] = pk[b, a] = delta[k][1 + H + i]
            sk[a, b] = sk[b, a] = delta[k][1 + H + i] - single[k][a] - single[k][b]
        pair[k], synergy[k] = pk, sk
    return {"baseline": base, "single": single, "pair": pair, "synergy": synergy}


# --------------------------------------------------------------------------- head importance

#: Split-half reliability above which a per-head ranking is reported as a finding; below
#: it the ranking is "below the noise floor" and a verdict on it is "not testable".
RELIABLE = 0.8
REMOVALS = ("zero", "mean")


def _single_masks(L: int, H: int) -> Tensor:
    """``(1 + L H, L, H)``: mask 0 keeps everything, mask ``1 + l H + h`` removes (l, h)."""
    masks = torch.ones(1 + L * H, L * H)
    masks[1:] -= torch.eye(L * H)
    return masks.view(-1, L, H)


def sequence_means(per_sequence: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-sequence means over the predictable positions from the sums of
    :func:`evaluate_ablation` (``per_sequence=True``): ``loss``, ``accuracy``, ``margin``
    and ``kl``, each ``(..., N)``; NaN for a sequence without a predictable position."""
    count = per_sequence["count"].astype(np.float64)
    count = np.where(count > 0, count, np.nan)
    return {"loss": per_sequence["loss"] / count, "accuracy": per_sequence["hits"] / count,
            "margin": per_sequence["margin"] / count, "kl": per_sequence["kl"] / count}


def head_effects(
    model: Transformer,
    dataset: SequenceDataset,
    *,
    removal: str = "zero",
    reference: Tensor | None = None,
    batch_size: int = 250,
) -> dict[str, Any]:
    """What removing each head alone does, per sequence, on the predictable positions.

    ``removal``: ``"zero"`` (the head's output set to 0) or ``"mean"`` (set to its mean over
    the ``reference`` sequences ``(N_ref, T)``, per position: :func:`head_means`; take them
    disjoint from ``dataset``). Returns ``"baseline"`` (per-sequence means of the intact
    model, ``(N,)`` per measure) and ``"effect"``, per measure ``(L, H, N)``:

    - ``"margin"``: the drop of the mean logit margin (:func:`logit_margin`), intact minus
      ablated: positive when the removal hurts, in logits;
    - ``"kl"``: the mean ``KL(p_intact || p_ablated)`` in nats (never negative);
    - ``"loss"``: the rise of the mean cross-entropy (float64), in nats;
    - ``"accuracy"``: the fall of the accuracy.
    """
    if removal not in REMOVALS:
        raise ValueError(f"removal={removal!r}: valid removals are {list(REMOVALS)}")
    fill = None
    if removal == "mean":
        if reference is None:
            raise ValueError("removal='mean' needs reference sequences (N_ref, T) to average "
                             "the head outputs over")
        fill = head_means(model, reference, batch_size=batch_size)
    L, H = model.config.n_layers, model.config.n_heads
    values = evaluate_ablation(model, dataset, _single_masks(L, H), fill=fill,
                               batch_size=batch_size, per_sequence=True)
    means = sequence_means(values["per_sequence"])  # (1 + L H, N) each
    base = {k: v[0] for k, v in means.items()}
    after = {k: v[1:].reshape(L, H, -1) for k, v in means.items()}
    effect = {"margin": base["margin"] - after["margin"], "kl": after["kl"],
              "loss": after["loss"] - base["loss"],
              "accuracy": base["accuracy"] - after["accuracy"]}
    return {"baseline": base, "effect": effect}


def _loss_per_sequence(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Mean float64 cross-entropy over each sequence's predictable positions, ``(B,)``."""
    logp = torch.log_softmax(logits.to(torch.float64), dim=-1)
    nll = -logp.gather(-1, targets[..., None])[..., 0]  # (B, T)
    m = mask.to(torch.float64)
    return (nll * m).sum(-1) / m.sum(-1).clamp(min=1)


def gradient_importance(
    model: Transformer, dataset: SequenceDataset, *, batch_size: int = 50
) -> np.ndarray:
    """Gradient head importance (Michel et al. 2019), per sequence: ``(L, H, N)``.

    A gate ``xi_h = 1`` multiplies each head's output; the importance of head ``h`` on a
    sequence is ``|d loss / d xi_h|``, the loss being that sequence's mean cross-entropy on
    the predictable positions (float64 from the logits). Michel et al.'s score is its mean
    over sequences. One gate per (sequence, layer, head), so a single backward pass gives
    every sequence's gradients. The weights are not changed and get no gradient.
    """
    positive_int(batch_size, "batch_size")
    L, H = model.config.n_layers, model.config.n_heads
    was_training = model.training
    model.eval()
    params = [p for p in model.parameters()]
    needs = [p.requires_grad for p in params]
    parts = []
    try:
        for p in params:
            p.requires_grad_(False)
        for start in range(0, len(dataset), batch_size):
            x = dataset.inputs[start : start + batch_size]  # (B, T)
            gate = torch.ones(x.shape[0], L, H, requires_grad=True)  # (B, L, H)
            handles = []
            for layer, block in enumerate(model.blocks):
                D = block.attn.head_dim
                handles.append(block.attn.out.register_forward_pre_hook(
                    _gate_input(gate, layer, D)))
            try:
                loss = _loss_per_sequence(model(x), dataset.targets[start : start + batch_size],
                                          dataset.mask[start : start + batch_size])
                (grad,) = torch.autograd.grad(loss.sum(), gate)  # (B, L, H)
            finally:
                for handle in handles:
                    handle.remove()
            parts.append(grad.abs().to(torch.float64).numpy())
    finally:
        for p, need in zip(params, needs, strict=True):
            p.requires_grad_(need)
        model.train(was_training)
    return np.moveaxis(np.concatenate(parts), 0, -1)  # (L, H, N)


def _gate_input(gate: Tensor, layer: int, head_dim: int):
    def hook(module: torch.nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        g = gate[:, layer].repeat_interleave(head_dim, dim=-1)  # (B, C)
        return (args[0] * g[:, None, :].to(args[0].dtype), *args[1:])  # (B, T, C)

    return hook


def split_half_rho(per_sequence: Any) -> np.ndarray:
    """Split-half reliability of a per-head ranking: Spearman's rho, across the heads of each
    layer, between the mean effects on the even- and on the odd-numbered sequences.

    ``per_sequence`` ``(..., H, N)`` (e.g. ``(L, H, N)``); returns ``(...)``. Near 1: the two
    halves rank the heads alike, the ranking is a property of the model; near 0 or negative:
    it is noise. NaN where a half's effects are all equal (:func:`rank_correlation`).
    """
    a = np.asarray(per_sequence, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] < 2:
        raise ValueError(f"per_sequence has shape {a.shape}: expected (..., H, N) with N >= 2 "
                         "sequences")
    even, odd = np.nanmean(a[..., 0::2], axis=-1), np.nanmean(a[..., 1::2], axis=-1)
    return rank_correlation(even, odd)


def mean_interval(per_sequence: Any, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Mean over sequences and the half-width of its ``level`` t-interval, each ``(...)``
    for ``per_sequence`` ``(..., N)`` (NaN sequences left out)."""
    a = np.asarray(per_sequence, dtype=np.float64)
    n = np.isfinite(a).sum(-1)
    mean = np.nanmean(a, axis=-1)
    sd = np.nanstd(a, axis=-1, ddof=1)
    t = stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1))
    return mean, t * sd / np.sqrt(np.maximum(n, 1))


def knockout_masks(n_layers: int, n_heads: int) -> dict[str, Tensor]:
    """The masks ``(L, H)`` of the attention knockouts: ``"all"`` (every head of every layer
    removed), ``"L<l>"`` (every head of layer ``l`` removed, ``l`` = 1..L) and ``"only_L<l>"``
    (every layer's heads removed but layer ``l``'s)."""
    positive_int(n_layers, "n_layers")
    positive_int(n_heads, "n_heads")
    masks = {"all": torch.zeros(n_layers, n_heads)}
    for layer in range(n_layers):
        alone = torch.ones(n_layers, n_heads)
        alone[layer] = 0
        masks[f"L{layer + 1}"] = alone
        only = torch.zeros(n_layers, n_heads)
        only[layer] = 1
        masks[f"only_L{layer + 1}"] = only
    return masks


def knockouts(
    model: Transformer, dataset: SequenceDataset, *, batch_size: int = 250
) -> dict[str, dict[str, float]]:
    """Accuracy and mean logit margin on the predictable positions with whole layers'
    attention removed (zero ablation, :func:`knockout_masks`), and of the intact model
    (``"none"``).

    What stays when a layer's attention is removed: the residual stream, the layer's MLP,
    and the output projection's bias ``b_out``, which the sub-layer still adds at every
    position (it belongs to no head). With ``"all"`` the model sees each position's own
    token and position only: a task solved there needs no attention.
    """
    L, H = model.config.n_layers, model.config.n_heads
    named = {"none": torch.ones(L, H), **knockout_masks(L, H)}
    values = evaluate_ablation(model, dataset, torch.stack(list(named.values())),
                               batch_size=batch_size)
    return {name: {"accuracy": float(values["accuracy_predictable"][i]),
                   "margin": float(values["margin"][i])} for i, name in enumerate(named)}


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
    """Spearman's rank correlation of two head scores ``(..., H)`` per row, shape ``(...)``.

    :func:`scipy.stats.spearmanr` on each row (ties get average ranks). NaN where it is
    undefined: fewer than two heads, or a row whose scores are all equal.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim < 1:
        raise ValueError(f"a and b have shapes {x.shape} and {y.shape}: expected the same "
                         "shape (..., H)")
    xs, ys = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    out = np.full(len(xs), np.nan)
    for i, (u, v) in enumerate(zip(xs, ys, strict=True)):
        if len(u) >= 2 and np.ptp(u) > 0 and np.ptp(v) > 0:
            out[i] = stats.spearmanr(u, v).statistic
    return out.reshape(x.shape[:-1])


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


def head_fidelity(
    model: Transformer,
    inputs: Tensor,
    *,
    horizon: int = 100,
    batch_size: int = 25,
) -> dict[str, np.ndarray]:
    """Each head's minimax fidelity ``phi_min^(h)`` (Definitions 3.10-3.11), in percent.

    The attention patterns of ``inputs`` ``(N, T)`` (:func:`~.measure.extract_patterns`)
    go through :func:`bparallel.proxies.best_head_vs_combined` (Algorithm 2, each head alone
    with weight 1) in both modes. Returns, per mode (``"paper"``, ``"definition"``), the
    per-sequence values under ``"<mode>.per_sequence"`` ``(L, N, H)`` and their mean over
    sequences under ``"<mode>"`` ``(L, H)``; :func:`top_head` of a mean is the layer's best
    head ``h_*`` (Definition 3.12 on the sequence-averaged fidelities).
    """
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    positive_int(batch_size, "batch_size")
    w = model_head_weights(model)[:, None, :]  # (L, 1, H), Section 4.2
    per_mode: dict[str, list[np.ndarray]] = {mode: [] for mode in proxies.MODES}
    for start in range(0, inputs.shape[0], batch_size):
        pattern = extract_patterns(model, inputs[start : start + batch_size])  # (L, B, H, T, T)
        for mode in proxies.MODES:
            best = proxies.best_head_vs_combined(pattern, w, mode=mode, horizon=horizon)
            per_mode[mode].append(best["per_head"])  # (L, B, H)
    out = {}
    for mode, parts in per_mode.items():
        values = np.concatenate(parts, axis=1)  # (L, N, H)
        out[f"{mode}.per_sequence"] = values
        out[mode] = values.mean(1)
    return out


# --------------------------------------------------------------------------- the study


def _pair_synergy(model: Transformer, dataset: SequenceDataset, layer: int, fill: Tensor | None,
                  batch_size: int) -> dict[str, np.ndarray]:
    """Margin synergy of every pair of heads of ``layer``, per sequence: ``(P, N)`` for the
    ``P`` pairs (:func:`itertools.combinations` order), with ``"pairs"`` ``(P, 2)``."""
    L, H = model.config.n_layers, model.config.n_heads
    pairs = list(itertools.combinations(range(H), 2))
    masks = torch.ones(1 + H + len(pairs), L, H)
    for h in range(H):
        masks[1 + h, layer, h] = 0
    for i, (a, b) in enumerate(pairs):
        masks[1 + H + i, layer, [a, b]] = 0
    values = evaluate_ablation(model, dataset, masks, fill=fill, batch_size=batch_size,
                               per_sequence=True)
    margin = sequence_means(values["per_sequence"])["margin"]  # (M, N)
    drop = margin[0] - margin  # (M, N): how much each removal lowers the margin
    single = drop[1 : 1 + H]
    both = drop[1 + H :]
    idx = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return {"pairs": idx, "synergy": both - single[idx[:, 0]] - single[idx[:, 1]]}


def importance_study(
    model: Transformer,
    dataset: SequenceDataset,
    *,
    reference: Tensor,
    fidelity: dict[str, np.ndarray] | None = None,
    pair_layer: int | None = None,
    num_random: int = 5,
    seed: int = 0,
    batch_size: int = 250,
) -> dict[str, Any]:
    """Which heads and layers does ``model`` use? Knockouts, head importance with its noise
    floor, pair synergy and pruning curves, all on the predictable positions of ``dataset``.

    ``reference`` ``(N_ref, T)``: sequences disjoint from ``dataset`` whose mean head outputs
    mean ablation puts in place of a removed head. ``fidelity`` (:func:`head_fidelity`) adds
    each head's minimax fidelity as a ranking. Returns

    - ``"knockout"``: :func:`knockouts`;
    - ``"effect"``: per sequence ``(L, H, N)``, :func:`head_effects` under ``"zero"`` and
      ``"mean"`` removal (``"<removal>.<measure>"``, measures margin, kl, loss, accuracy)
      and ``"gradient"`` (:func:`gradient_importance`);
    - ``"scores"``: per ranking ``(L, H)``, the mean over sequences of each effect and
      ``"weight"`` (``w_h`` of Section 4.2), ``"fidelity.<mode>"``;
    - ``"reliability"``: per effect ``(L,)``, its :func:`split_half_rho`;
    - ``"spearman"``: per ranking and removal ``(L,)``, the rank correlation of the ranking
      with the margin drop (``"<ranking>~<removal>"``);
    - ``"pair"`` (multi-head models): the margin synergy of every pair of heads of
      ``pair_layer`` (default: the last), under mean removal, per sequence ``(P, N)``, its
      split-half reliability across pairs and the pairs ``(P, 2)``;
    - ``"pruning"``: :func:`pruning_curve` (zero removal, every layer at once) by each
      ranking, lowest first, and by ``num_random`` random orders from ``seed``; per order
      the curves of ``accuracy_predictable``, ``margin`` and ``kl``.
    """
    L, H = model.config.n_layers, model.config.n_heads
    out: dict[str, Any] = {"knockout": knockouts(model, dataset, batch_size=batch_size)}
    effect: dict[str, np.ndarray] = {}
    for removal in REMOVALS:
        eff = head_effects(model, dataset, removal=removal, reference=reference,
                           batch_size=batch_size)["effect"]
        effect.update({f"{removal}.{k}": v for k, v in eff.items()})
    effect["gradient"] = gradient_importance(model, dataset, batch_size=min(batch_size, 50))
    out["effect"] = effect
    scores = {k: np.nanmean(v, axis=-1) for k, v in effect.items()}  # (L, H)
    scores["weight"] = model_head_weights(model)
    if fidelity is not None:
        for mode in proxies.MODES:
            scores[f"fidelity.{mode}"] = fidelity[mode]
    out["scores"] = scores
    out["reliability"] = {k: split_half_rho(v) if H > 1 else np.full(L, np.nan)
                          for k, v in effect.items()}
    rankings = ["weight", "gradient", *[f"fidelity.{m}" for m in proxies.MODES
                                        if f"fidelity.{m}" in scores]]
    out["spearman"] = {f"{r}~{removal}": rank_correlation(scores[r], scores[f"{removal}.margin"])
                       for r in rankings for removal in REMOVALS}
    if H > 1:
        layer = L - 1 if pair_layer is None else nonnegative_int(pair_layer, "pair_layer")
        fill = head_means(model, reference, batch_size=batch_size)
        pair = _pair_synergy(model, dataset, layer, fill, batch_size)
        pair["split_half_rho"] = np.asarray(split_half_rho(pair["synergy"][None])[0])
        pair["layer"] = np.asarray(layer)
        out["pair"] = pair
    orders = {k: removal_order(scores[k]) for k in
              ["zero.margin", "mean.margin", *rankings]}
    orders["random"] = random_orders(L, H, num_random, seed)
    names = list(orders)
    stacked = np.concatenate([orders[k].reshape(-1, L, H) for k in names])  # (n, L, H)
    curves = pruning_curve(model, dataset, stacked, batch_size=batch_size)
    pruning: dict[str, Any] = {"heads_kept": curves["heads_kept"]}
    begin = 0
    for k in names:
        n = math.prod(orders[k].shape[:-2])
        pruning[k] = {m: curves[m][begin : begin + n].reshape(*orders[k].shape[:-2], H + 1)
                      for m in PRUNING_METRICS}
        begin += n
    out["pruning"] = pruning
    return out


def ablation_study(
    model: Transformer,
    dataset: SequenceDataset,
    *,
    pair_layer: int | None = None,
    fidelity: dict[str, np.ndarray] | None = None,
    num_random: int = 3,
    seed: int = 0,
    batch_size: int = 250,
) -> dict[str, Any]:
    """Single-head and pair ablations, pruning curves, and the rankings compared.

    ``pair_layer`` (default: the last layer) is the layer of :func:`pair_ablation`.
    Importance scores ``(L, H)``: ``"weight"`` (head weights ``w_h`` of Section 4.2),
    ``"impact"`` (the change of ``loss_predictable`` when the head alone is removed,
    :func:`single_head_ablation`: for cycle the loss at the unpredictable position 0 would
    otherwise dominate it) and,
    given ``fidelity`` (:func:`head_fidelity`), ``"fidelity.<mode>"`` (mean ``phi_min^(h)``).
    Returns ``"single"``, ``"pair"``, ``"scores"``, ``"spearman"`` (per layer ``(L,)``, the
    rank correlation of each score with the impact), ``"top_head"`` (per score ``(L,)``, by
    :func:`top_head`: ``h_*`` for the fidelities, the most harmful removal for the impact),
    and ``"pruning"``: for each score and ``"random"`` (``num_random`` orders from ``seed``),
    the :func:`pruning_curve` of all layers at once removing the lowest-scored heads first.
    """
    L, H = model.config.n_layers, model.config.n_heads
    single = single_head_ablation(model, dataset, batch_size=batch_size)
    scores = {"weight": model_head_weights(model), "impact": single["delta"]["loss_predictable"]}
    for mode in proxies.MODES:
        if fidelity is not None:
            scores[f"fidelity.{mode}"] = fidelity[mode]
    out: dict[str, Any] = {"single": single, "scores": scores}
    if H > 1:
        layer = L - 1 if pair_layer is None else pair_layer
        out["pair"] = pair_ablation(model, dataset, layer, batch_size=batch_size)
    out["spearman"] = {k: rank_correlation(v, scores["impact"]) for k, v in scores.items()
                       if k != "impact"}
    out["top_head"] = {k: top_head(v) for k, v in scores.items()}
    orders = {k: removal_order(v) for k, v in scores.items()}
    orders["random"] = random_orders(L, H, num_random, seed)
    names = list(orders)
    stacked = np.concatenate([orders[k].reshape(-1, L, H) for k in names])  # (n, L, H)
    curves = pruning_curve(model, dataset, stacked, batch_size=batch_size)
    pruning: dict[str, Any] = {"heads_kept": curves["heads_kept"]}
    start = 0
    for k in names:
        n = math.prod(orders[k].shape[:-2])
        pruning[k] = {m: curves[m][start : start + n].reshape(*orders[k].shape[:-2], H + 1)
                      for m in METRICS}
        start += n
    out["pruning"] = pruning
    return out
