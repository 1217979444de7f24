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


@contextlib.contextmanager
def ablated(model: Transformer, mask: Any) -> Iterator[Transformer]:
    """Within the block, ``model`` runs with its heads scaled by ``mask`` ``(L, H)``.

    ``mask[l, h] = 1`` keeps head ``h`` of layer ``l``, ``0`` removes it (values in between
    scale it). A forward pre-hook on each layer's output projection multiplies its input,
    the concatenated head outputs ``(B, T, H D)``, by the mask repeated over the ``D``
    columns of each head; the weights are untouched and the hooks are removed on exit.
    Nested blocks multiply their masks. Yields ``model``.
    """
    m = _check_mask(mask, model, "mask", batched=False)
    handles = []
    try:
        for block, row in zip(model.blocks, m, strict=True):
            out = block.attn.out
            scale = row.repeat_interleave(block.attn.head_dim).to(out.weight)  # (C,)
            handles.append(out.register_forward_pre_hook(_scale_input(scale)))
        yield model
    finally:
        for handle in handles:
            handle.remove()


def _scale_input(scale: Tensor):
    def hook(module: torch.nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return (args[0] * scale, *args[1:])  # (B, T, C) * (C,)

    return hook


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


@torch.no_grad()
def evaluate_ablation(
    model: Transformer,
    dataset: SequenceDataset,
    masks: Any,
    *,
    batch_size: int = 250,
    loss_dtype: torch.dtype = torch.float64,
) -> dict[str, np.ndarray]:
    """Held-out ``loss``, ``accuracy``, ``loss_predictable``, ``accuracy_predictable`` per mask.

    ``masks`` ``(..., L, H)`` (1 keeps a head, 0 removes it; see :func:`ablated`); each
    result has shape ``masks.shape[:-2]``. The metrics are those of
    :func:`~bparallel.transformer.train.evaluate_accuracy` (:class:`TokenScores`), computed
    in eval mode under ``torch.no_grad`` over ``batch_size`` sequences at a time; an all-ones
    mask gives exactly ``evaluate_accuracy(model, dataset, batch_size, loss_dtype=...)``.
    ``loss_dtype`` defaults to float64: the trained models' token losses lie far below what a
    float32 cross-entropy resolves (:class:`TokenScores`), and so do most removals' changes.
    """
    m = _check_mask(masks, model, "masks", batched=True)
    positive_int(batch_size, "batch_size")
    batch_shape, L, H = m.shape[:-2], m.shape[-2], m.shape[-1]
    flat = m.reshape(-1, L, H)  # (M, L, H)
    unique, inverse = torch.unique(flat, dim=0, return_inverse=True)  # (U, L, H), (M,)
    first = _first_removed_layer(unique)  # (U,)
    scores = [TokenScores(dataset.task, dataset.inputs.shape[1], loss_dtype=loss_dtype)
              for _ in range(len(unique))]
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(dataset), batch_size):
            x = dataset.inputs[start : start + batch_size]  # (B, T)
            y = dataset.targets[start : start + batch_size]  # (B, T)
            xs, ys, handles = _capture(model)
            try:
                logits = model(x)  # (B, T, V): the baseline pass
            finally:
                for handle in handles:
                    handle.remove()
            for u, (mask, layer) in enumerate(zip(unique, first, strict=True)):
                if layer == L:
                    scores[u].add(logits, y)
                    continue
                with ablated(model, mask):
                    scores[u].add(_run_from(model, int(layer), xs[layer], ys[layer]), y)
    finally:
        model.train(was_training)
    results = [s.result() for s in scores]
    idx = inverse.numpy()
    return {k: np.array([r[k] for r in results])[idx].reshape(batch_shape) for k in METRICS}


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
    for k in METRICS:
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
