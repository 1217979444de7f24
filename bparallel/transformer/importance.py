"""Which heads and layers does a trained model use? Head importance with its noise floor.

Built on the ablations of :mod:`bparallel.transformer.ablation`, on the predictable positions
of held-out sequences:

- **knockouts** (:func:`knockouts`): every head of every layer removed, each layer's removed
  alone, every layer's but one removed: what a task needs of the attention at all;
- **head effects** (:func:`head_effects`): each head removed alone, by zero or by its mean
  output, per sequence: the drop of the logit margin, the KL divergence from the intact
  model, the rise of the loss, the fall of the accuracy;
- **gradient importance** (:func:`gradient_importance`, Michel et al. 2019): the mean
  absolute gradient of the loss with respect to a gate on each head;
- **the noise floor** of every per-head measure: its split-half reliability
  (:func:`split_half_rho`, Spearman across heads between the two halves of the sequences)
  and t-intervals (:func:`mean_interval`). A ranking of heads is a finding only when its
  reliability reaches :data:`RELIABLE`; below it, it is "below the noise floor" and a verdict
  that rests on it is "not testable";
- **pair synergy** on the margin (:func:`pair_synergy`) and the paper's per-head minimax
  fidelity (:func:`head_fidelity`) as one more ranking;
- :func:`importance_study` runs all of it on one model.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from scipy import stats
from torch import Tensor

from .. import proxies, ranks
from .._checks import nonnegative_int, one_of, positive_int
from .ablation import (
    PRUNING_METRICS,
    _check_fill,
    evaluate_ablation,
    head_means,
    pruning_curve,
    random_orders,
    rank_correlation,
    removal_order,
)
from .data import SequenceDataset
from .model import Transformer
from .patterns import extract_patterns, model_head_weights

__all__ = [
    "ALPHA", "PERMUTATIONS", "PRUNING_ORDERS", "RANDOM_ORDERS", "RELIABLE", "REMOVALS",
    "SPLITS", "ImportanceStudy", "gradient_importance", "head_effects", "head_fidelity",
    "head_test", "importance_study", "knockout_masks", "knockouts", "mean_interval",
    "pair_synergy", "reliability", "sequence_means", "split_half_rho",
]

#: Split-half reliability above which a per-head ranking is reported as a finding; below
#: it the ranking is "below the noise floor" and a verdict on it is "not testable".
RELIABLE = 0.8
REMOVALS = ("zero", "mean")
#: The orders :func:`importance_study` prunes by (each lowest first), besides random ones:
#: the measured impact under zero ablation, the removal the pruning curves use (the oracle),
#: and the rankings a reader would prune by.
PRUNING_ORDERS = ("zero.margin", "weight", "gradient", "fidelity.definition")
#: Random pruning orders per model: enough for a 5-95% band.
RANDOM_ORDERS = 20


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
    fill: Tensor | None = None,
    batch_size: int = 250,
) -> dict[str, Any]:
    """What removing each head alone does, per sequence, on the predictable positions.

    ``removal``: ``"zero"`` (the head's output set to 0) or ``"mean"`` (set to its mean over
    the ``reference`` sequences ``(N_ref, T)``, per position: :func:`head_means`; take them
    disjoint from ``dataset``; or pass those means as ``fill`` when they are at hand).
    Returns ``"baseline"`` (per-sequence means of the intact
    model, ``(N,)`` per measure) and ``"effect"``, per measure ``(L, H, N)``:

    - ``"margin"``: the drop of the mean logit margin (:func:`logit_margin`), intact minus
      ablated: positive when the removal hurts, in logits;
    - ``"kl"``: the mean ``KL(p_intact || p_ablated)`` in nats (never negative);
    - ``"loss"``: the rise of the mean cross-entropy (float64), in nats;
    - ``"accuracy"``: the fall of the accuracy.
    """
    one_of(removal, "removal", REMOVALS, "removals")
    if removal == "zero":
        fill = None
    elif fill is None:
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


#: The noise floor's random half-splits (:func:`reliability`) and permutations (:func:`head_test`).
SPLITS = 200
PERMUTATIONS = 4999
#: The level of the noise floor's permutation test, after Holm's correction over a table's cells.
ALPHA = 0.05


def _complete(per_sequence: Any) -> np.ndarray:
    """``(..., H, N)`` as float64 without the sequences that are NaN anywhere (a sequence
    with no predictable position); a ``ValueError`` when fewer than two remain."""
    a = np.asarray(per_sequence, dtype=np.float64)
    if a.ndim < 2:
        raise ValueError(f"per_sequence has shape {a.shape}: expected (..., H, N)")
    keep = np.isfinite(a).reshape(-1, a.shape[-1]).all(0)
    if keep.sum() < 2:
        raise ValueError(f"per_sequence has {int(keep.sum())} sequences with a finite effect: "
                         "need at least 2")
    return a[..., keep]


def reliability(per_sequence: Any, *, splits: int = SPLITS, seed: int = 0) -> np.ndarray:
    """The reliability of a per-head ranking over all its sequences, ``(...)`` for
    ``per_sequence`` ``(..., H, N)``: over ``splits`` random halvings of the sequences
    (seeded; the same halvings for every row), Spearman's rho across the heads between the
    two halves' mean effects (:func:`bparallel.ranks.spearman`); their median, Spearman-Brown
    corrected to the full number of sequences, ``2 rho / (1 + rho)``.

    One fixed split (:func:`split_half_rho`) is a draw of this: a single split of 4 heads
    reaches rho >= 0.8 for 4 of their 24 orderings by chance alone. (The correction is applied
    to the median over halvings, and only to a positive one: a negative agreement is shown as
    it is.) Near 1: the ranking is a
    property of the model; the permutation test :func:`head_test` says whether it differs
    from chance at all. NaN where the heads' effects are all equal in a half.
    """
    a = _complete(per_sequence)
    positive_int(splits, "splits")
    n = a.shape[-1]
    rng = np.random.default_rng(seed)
    halves = np.argsort(rng.random((splits, n)), axis=1)[:, : n // 2]  # (S, n/2)
    first = np.zeros((splits, n), dtype=bool)
    np.put_along_axis(first, halves, True, axis=1)
    w1 = first / first.sum(1, keepdims=True)
    w2 = ~first / (~first).sum(1, keepdims=True)
    m1 = np.einsum("...hn,sn->s...h", a, w1)
    m2 = np.einsum("...hn,sn->s...h", a, w2)
    rho = ranks.spearman(m1, m2)  # (S, ...)
    out = np.full(rho.shape[1:], np.nan)
    flat = rho.reshape(splits, -1)
    for i in range(flat.shape[1]):
        finite = flat[:, i][np.isfinite(flat[:, i])]
        if finite.size:
            m = ranks.median(finite)
            out.flat[i] = 2 * m / (1 + m) if m > 0 else m
    return out


def head_test(per_sequence: Any, *, permutations: int = PERMUTATIONS, seed: int = 0,
              chunk: int = 500) -> np.ndarray:
    """Permutation p-value, ``(...)`` for ``per_sequence`` ``(..., H, N)``, of the null
    hypothesis that the heads of a row do not differ: that their effects are exchangeable
    within each sequence. Statistic: the variance across heads of the mean effects over
    sequences; null distribution: ``permutations`` relabellings of the heads, independent
    per sequence (seeded; the same relabellings for every row);
    ``p = (1 + #{T_perm >= T}) / (1 + permutations)``, so never below
    ``1 / (1 + permutations)``. A row of one head has no test (NaN)."""
    a = _complete(per_sequence)
    positive_int(permutations, "permutations")
    H, n = a.shape[-2:]
    rows = a.reshape(-1, H, n)
    if H < 2:
        return np.full(a.shape[:-2], np.nan)
    observed = rows.mean(-1).var(-1)  # (R,)
    rng = np.random.default_rng(seed)
    exceed = np.zeros(len(rows))
    x = np.swapaxes(rows, 1, 2)  # (R, n, H)
    done = 0
    while done < permutations:
        k = min(chunk, permutations - done)
        idx = np.argsort(rng.random((k, n, H)), axis=-1)  # (k, n, H)
        for r in range(len(rows)):
            perm = np.take_along_axis(x[r][None], idx, axis=-1)  # (k, n, H)
            t = perm.mean(1).var(-1)  # (k,)
            exceed[r] += (t >= observed[r] * (1 - 1e-12)).sum()
        done += k
    return ((1 + exceed) / (1 + permutations)).reshape(a.shape[:-2])


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



def head_fidelity(
    model: Transformer,
    inputs: Tensor,
    *,
    horizon: int = 100,
    batch_size: int = 25,
) -> dict[str, np.ndarray]:
    """Each head's minimax fidelity ``phi_min^(h)`` (Definitions 3.10-3.11), in percent.

    The attention patterns of ``inputs`` ``(N, T)`` (:func:`~.patterns.extract_patterns`)
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


def pair_synergy(
    model: Transformer,
    dataset: SequenceDataset,
    layer: int,
    *,
    fill: Any = None,
    batch_size: int = 250,
) -> dict[str, np.ndarray]:
    """The two interactions of every pair of heads of ``layer`` on the logit margin, per
    sequence: redundancy and complementarity, measured from the two ends of the layer.

    With ``m(S)`` a sequence's mean margin on its predictable positions when only the heads
    ``S`` of the layer are kept (the others removed; ``fill``: see :func:`ablated`) and
    ``d(S)`` its drop when the heads ``S`` are removed from the intact model:

    - ``"redundancy"`` = ``d(a, b) - d(a) - d(b)``: positive when removing both hurts more
      than the two single removals add up to: each head backs the other up (what this
      function returned as "synergy" before; redundancy is not the paper's synergy);
    - ``"complementarity"`` = ``m(a, b) - m(a) - m(b) + m()``: positive when the pair,
      alone in the layer, does what neither head alone does: the interaction Remark 3.7's
      cross-head pathways would produce.

    Returns ``"pairs"`` ``(P, 2)`` in ``itertools.combinations`` order (lexicographic) and both
    interactions ``(P, N)``.
    """
    L, H = model.config.n_layers, model.config.n_heads
    nonnegative_int(layer, "layer")
    if layer >= L:
        raise ValueError(f"layer={layer}: the model has layers 0..{L - 1}")
    pairs = list(itertools.combinations(range(H), 2))
    P = len(pairs)
    # removal masks: intact, each head, each pair; keep-only masks: none, each head, each pair
    masks = torch.ones(2 * (1 + H + P), L, H)
    keep = masks[1 + H + P :]
    keep[:, layer] = 0
    for h in range(H):
        masks[1 + h, layer, h] = 0
        keep[1 + h, layer, h] = 1
    for i, (a, b) in enumerate(pairs):
        masks[1 + H + i, layer, [a, b]] = 0
        keep[1 + H + i, layer, [a, b]] = 1
    values = evaluate_ablation(model, dataset, masks, fill=_check_fill(fill, model),
                               batch_size=batch_size, per_sequence=True)
    margin = sequence_means(values["per_sequence"])["margin"]  # (M, N)
    idx = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    removed, kept = margin[: 1 + H + P], margin[1 + H + P :]
    drop = removed[0] - removed  # how much each removal lowers the margin
    single, both = drop[1 : 1 + H], drop[1 + H :]
    alone, pair = kept[1 : 1 + H], kept[1 + H :]
    return {"pairs": idx,
            "redundancy": both - single[idx[:, 0]] - single[idx[:, 1]],
            "complementarity": pair - alone[idx[:, 0]] - alone[idx[:, 1]] + kept[0]}


@dataclass(frozen=True)
class ImportanceStudy:
    """What :func:`importance_study` finds of one model, one field per study.

    - ``knockout``: :func:`knockouts` (per knockout of :func:`knockout_masks` and
      ``"none"``, the intact model: ``{"accuracy", "margin"}``);
    - ``effect``: per sequence ``(L, H, N)``, :func:`head_effects` under ``"zero"`` and
      ``"mean"`` removal (``"<removal>.<measure>"``, measures margin, kl, loss, accuracy)
      and ``"gradient"`` (:func:`gradient_importance`);
    - ``scores``: per ranking ``(L, H)``, the mean over sequences of each effect,
      ``"weight"`` (``w_h`` of Section 4.2) and ``"fidelity.<mode>"`` (each head's minimax
      fidelity in percent, where given);
    - ``reliability``: per effect ``(L,)``, its :func:`split_half_rho`;
    - ``spearman``: per ranking and removal ``(L,)``, the rank correlation of the ranking
      with the margin drop (``"<ranking>~<removal>"``);
    - ``pruning``: per order, the curves of :func:`pruning_curve` (``"heads_kept"`` and
      ``{order: {metric: curve}}``);
    - ``pair``: multi-head models only (else ``None``), :func:`pair_synergy` of one layer
      with that layer under ``"layer"``.

    :meth:`as_tree` is the nested-dict layout the metrics cache flattens, and
    :meth:`from_tree` reads it back.
    """

    knockout: dict[str, Any]
    effect: dict[str, np.ndarray]
    scores: dict[str, np.ndarray]
    reliability: dict[str, np.ndarray]
    spearman: dict[str, np.ndarray]
    pruning: dict[str, Any]
    pair: dict[str, np.ndarray] | None = None

    #: The fields, in the order of the nested layout.
    FIELDS: ClassVar[tuple[str, ...]] = ("knockout", "effect", "scores", "reliability",
                                         "spearman", "pair", "pruning")

    def as_tree(self) -> dict[str, Any]:
        """The study as nested dicts (``pair`` left out when ``None``), the layout that
        :func:`bparallel._io.flatten` turns into the cache's ``"a/b/c"`` keys."""
        return {f: getattr(self, f) for f in self.FIELDS if getattr(self, f) is not None}

    @classmethod
    def from_tree(cls, tree: dict[str, Any]) -> ImportanceStudy:
        """The study of :meth:`as_tree`'s layout (e.g. a cached result unflattened)."""
        missing = [f for f in cls.FIELDS if f != "pair" and f not in tree]
        extra = sorted(set(tree) - set(cls.FIELDS))
        if missing or extra:
            raise ValueError(f"tree: not an importance study (missing {missing}, "
                             f"unknown {extra})")
        return cls(**{f: tree[f] for f in cls.FIELDS if f in tree})


def importance_study(
    model: Transformer,
    dataset: SequenceDataset,
    *,
    reference: Tensor,
    fidelity: dict[str, np.ndarray] | None = None,
    pair_layer: int | None = None,
    num_random: int = RANDOM_ORDERS,
    seed: int = 0,
    batch_size: int = 250,
) -> ImportanceStudy:
    """Which heads and layers does ``model`` use? Knockouts, head importance with its noise
    floor, pair synergy and pruning curves, all on the predictable positions of ``dataset``.

    ``reference`` ``(N_ref, T)``: sequences disjoint from ``dataset`` whose mean head outputs
    mean ablation puts in place of a removed head. ``fidelity`` (:func:`head_fidelity`) adds
    each head's minimax fidelity as a ranking. Returns an :class:`ImportanceStudy`, whose
    fields are

    - ``"knockout"``: :func:`knockouts`;
    - ``"effect"``: per sequence ``(L, H, N)``, :func:`head_effects` under ``"zero"`` and
      ``"mean"`` removal (``"<removal>.<measure>"``, measures margin, kl, loss, accuracy)
      and ``"gradient"`` (:func:`gradient_importance`);
    - ``"scores"``: per ranking ``(L, H)``, the mean over sequences of each effect and
      ``"weight"`` (``w_h`` of Section 4.2), ``"fidelity.<mode>"``;
    - ``"reliability"``: per effect ``(L,)``, its :func:`split_half_rho`;
    - ``"spearman"``: per ranking and removal ``(L,)``, the rank correlation of the ranking
      with the margin drop (``"<ranking>~<removal>"``);
    - ``"pair"`` (multi-head models): the redundancy and complementarity on the margin of
      every pair of heads of ``pair_layer`` (default: the last), under mean removal, per
      sequence ``(P, N)`` (:func:`pair_synergy`), and the pairs ``(P, 2)``;
    - ``"pruning"``: :func:`pruning_curve` (zero removal, every layer at once) by each of
      :data:`PRUNING_ORDERS`, lowest first, and by ``num_random`` random orders from
      ``seed``; per order the curves of ``accuracy_predictable``, ``margin`` and ``kl``. The
      oracle order is the impact under the removal the curve uses (zero ablation), so that
      it is ranked and pruned alike.
    """
    L, H = model.config.n_layers, model.config.n_heads
    out: dict[str, Any] = {"knockout": knockouts(model, dataset, batch_size=batch_size)}
    fill = head_means(model, reference, batch_size=batch_size)
    effect: dict[str, np.ndarray] = {}
    for removal in REMOVALS:
        eff = head_effects(model, dataset, removal=removal, fill=fill,
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
        pair = pair_synergy(model, dataset, layer, fill=fill, batch_size=batch_size)
        pair["layer"] = np.asarray(layer)
        out["pair"] = pair
    # pruning: the oracle, the rankings a reader would prune by, and random orders
    orders = {k: removal_order(scores[k]) for k in PRUNING_ORDERS if k in scores}
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
    return ImportanceStudy.from_tree(out)
