"""Section 4.2: the proxies of Algorithms 1-2 measured on a trained Transformer.

Attention patterns are extracted on the explicit path, in eval mode, under ``torch.no_grad``
(:func:`extract_patterns`, ``(L, B, H, T, T)``); the proxies of :mod:`bparallel.proxies` run
per sequence and layer in both modes (:func:`sequence_metrics`).

Protocols for the sequences of Tables 1-4 (:func:`evaluation_inputs`):

- ``"paper"``: as the published code, the first sequence of each of the first 50 batches of
  the shuffled training loader, in the epoch after training;
- ``"heldout"``: ``N`` sequences of the held-out stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from .. import proxies
from .._checks import one_of, positive_int, unit_interval
from .._io import flatten
from .ablation import head_means
from .data import (
    TASKS,
    SequenceDataset,
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
    paper_protocol_sequences,
)
from .design import DEFAULT_SEED, get_profile
from .importance import head_effects, importance_study, knockouts, split_half_rho
from .model import Transformer
from .patterns import extract_patterns, model_head_weights

PROTOCOLS = ("paper", "heldout")
MODES = proxies.MODES


def evaluation_inputs(
    task: str,
    protocol: str,
    profile: str = "paper",
    *,
    seed: int = DEFAULT_SEED,
    epoch: int | None = None,
    num_sequences: int | None = None,
) -> torch.Tensor:
    """The input sequences ``(N, T)`` of Tables 1-4 under ``protocol``.

    ``"paper"``: rebuild the training set and loader of ``profile`` and ``seed``, and take
    the first sequence of each of the first 50 batches (``num_sequences`` overrides 50) of
    epoch ``epoch`` (default: the profile's epoch count, i.e. the pass after training).
    ``"heldout"``: the first ``num_sequences`` (default: the profile's ``num_heldout``)
    held-out sequences.
    """
    one_of(task, "task", TASKS, "tasks")
    one_of(protocol, "protocol", PROTOCOLS, "protocols")
    p = get_profile(profile)
    if protocol == "heldout":
        n = p.num_heldout if num_sequences is None else num_sequences
        return heldout_dataset(task, n, seed=seed, seq_len=p.seq_len,
                               vocab_size=p.vocab_size).inputs
    train_set = make_dataset(task, p.num_train, seed=seed, seq_len=p.seq_len,
                             vocab_size=p.vocab_size)
    loader = ShuffledLoader(train_set, p.batch_size, seed=seed)
    epoch = p.epochs if epoch is None else epoch
    return paper_protocol_sequences(loader, epoch, 50 if num_sequences is None
                                    else num_sequences).inputs


class _Parts(dict):
    """Per-batch results ``(L, B, ...)`` by key, joined along the sequence axis at the end."""

    def put(self, key: str, value: np.ndarray) -> None:
        self.setdefault(key, []).append(value)

    def joined(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate(v, axis=1) for k, v in self.items()}


def _algorithm_1(walk: proxies.Walk, mode: str, max_steps: int) -> np.ndarray:
    """Algorithm 1 per graph, ``(L, B)``: the mean over starts of ``E[min(tau, M)]``."""
    return walk.shaped(walk.truncated_hitting_times(mode, max_steps).mean(-1))


def _node_fidelity(walk: proxies.Walk, horizon: int) -> np.ndarray:
    """Node fidelity ``phi_j`` in percent per graph, ``(L, B, T)`` (Algorithm 2)."""
    return 100.0 * walk.shaped(walk.node_fidelity(horizon, times=False)[0])


#: What :func:`measure_model` measures, in one pass over the sequences (any combination, but
#: ``"heads"`` and ``"ablation"`` not together: the first is the second's light version):
#:
#: - ``"sequence"``: the proxies of Tables 1-6 per layer and sequence;
#: - ``"defined"``: Section 4 as defined (Definition 2.7, hitting times, node fidelity,
#:   rollout);
#: - ``"heads"``: knockouts and, with ``impact``, each head's margin drop by mean ablation,
#:   its split-half reliability and each head's minimax fidelity;
#: - ``"ablation"``: the whole :func:`~bparallel.transformer.importance.importance_study`.
PARTS = ("sequence", "defined", "heads", "ablation")


def _split_reference(inputs: torch.Tensor, reference_sequences: int,
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """``inputs`` ``(N, T)`` split into the sequences measured and the last
    ``reference_sequences``, whose mean head outputs mean ablation uses."""
    positive_int(reference_sequences, "reference_sequences")
    if reference_sequences >= inputs.shape[0]:
        raise ValueError(f"reference_sequences={reference_sequences}: inputs hold only "
                         f"{inputs.shape[0]} sequences, and some must be measured")
    return inputs[:-reference_sequences], inputs[-reference_sequences:]


def check_parts(parts: Any) -> tuple[str, ...]:
    """``parts`` (one name of :data:`PARTS` or several) as a tuple in :data:`PARTS` order;
    a ``ValueError`` for an unknown or empty request or for ``"heads"`` with ``"ablation"``."""
    if isinstance(parts, str):
        parts = (parts,)
    parts = tuple(parts)
    if not parts:
        raise ValueError("parts is empty: name at least one of " + ", ".join(PARTS))
    for part in parts:
        one_of(part, "parts", PARTS, "parts")
    if "heads" in parts and "ablation" in parts:
        raise ValueError("parts: 'heads' is the light version of 'ablation'; ask for one")
    return tuple(p for p in PARTS if p in parts)  # one order: one cache key per set


def measure_model(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    parts: str | Iterable[str],
    task: str | None = None,
    reference_sequences: int | None = None,
    eps: float = 0.25,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
    best_head: bool = True,
    impact: bool = True,
    **study: Any,
) -> dict[str, np.ndarray]:
    """Every graph and causal quantity of ``model`` on ``inputs`` ``(N, T)`` that ``parts``
    (:data:`PARTS`) ask for, under one name each, from one pass over the sequences.

    The model runs once per batch of ``batch_size`` sequences; each batch's attention
    pattern ``(L, B, H, T, T)`` is validated once and its heads combined once with the
    learned weights ``w_h`` of Section 4.2 (:class:`bparallel.proxies.Walk`); the walk's
    chain is built once per mode and every measure reads it; each head alone
    (:meth:`~bparallel.proxies.Walk.each_head`) is measured once, for the best head of
    Tables 5-6 and the per-head fidelity of the head studies alike.

    Graph keys, arrays ``(L, N, ...)``:

    - ``"mixing_time.<mode>"`` (``"sequence"``, ``"defined"``): Algorithm 1, the mean over
      starts of ``E[min(tau, max_steps)]``;
    - ``"fidelity.<mode>"`` (``"sequence"``): Algorithm 2, minimax fidelity in percent of
      the combined heads (over all nodes in paper mode, non-sink nodes in definition mode);
    - ``"best_head.individual.<mode>"``, ``"best_head.head.<mode>"`` (``"sequence"`` with
      ``best_head``): the best single head's minimax fidelity and its index (Definitions
      3.10-3.12); the combination it is compared with is ``"fidelity.<mode>"``;
    - ``"worst_case.<mode>"`` (``"defined"``): Definition 2.7's mixing time (``eps``;
      ``inf``: never mixes);
    - ``"hitting.exact"``, ``"hitting.truncated"`` ``(L, N, T)`` (``"defined"``): per
      start, ``E[tau]`` and ``E[min(tau, max_steps)]`` (definition mode);
    - ``"fidelity.node"`` ``(L, N, T)`` (``"defined"``): node fidelity ``phi_j`` in percent;
    - ``"rollout.weighted"``, ``"rollout.uniform"`` ``(L, N, T)`` (``"defined"``): the
      sink's row of attention rollout after each layer, heads weighted by ``w_h`` or
      averaged (Abnar & Zuidema 2020).

    ``"heads"`` and ``"ablation"`` need the ``task`` whose targets score the model and
    ``reference_sequences``: the last ones of ``inputs``, whose mean head outputs mean
    ablation uses; the others are measured (the graph parts too). ``"heads"`` adds
    ``"knockout/..."`` (:func:`~bparallel.transformer.importance.knockouts`) and, with
    ``impact``, ``"impact"`` ``(L, H, N)`` (the margin drop of removing each head alone by
    mean ablation), ``"reliability"`` ``(L,)`` (its split-half rho, NaN for one head) and
    ``"fidelity/<mode>"`` ``(L, H)`` (each head's minimax fidelity, mean over sequences).
    ``"ablation"`` adds :func:`~bparallel.transformer.importance.importance_study`
    flattened to ``"a/b/c"`` keys (``study``: its other options), with these per-head
    fidelities as a ranking.
    :func:`~bparallel._io.unflatten` restores the nesting.
    """
    parts = check_parts(parts)
    eps = unit_interval(eps, "eps", closed=False)
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    positive_int(batch_size, "batch_size")
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    causal = "heads" in parts or "ablation" in parts
    if causal:
        if task is None or reference_sequences is None:
            raise ValueError(f"parts {parts}: the head studies need task= and "
                             "reference_sequences=")
        measured, reference = _split_reference(inputs, reference_sequences)
    elif study or reference_sequences is not None:
        raise ValueError(f"parts {parts}: reference_sequences= and study options belong to "
                         "the 'heads' and 'ablation' parts")
    else:
        measured, reference = inputs, None
    if study and "ablation" not in parts:
        raise ValueError(f"parts {parts}: {sorted(study)} are options of the 'ablation' part")
    per_head = (("sequence" in parts and best_head) or ("heads" in parts and impact)
                or "ablation" in parts)
    graphs = "sequence" in parts or "defined" in parts
    out = _Parts()
    put = out.put
    w = model_head_weights(model)  # (L, H)
    for start in range(0, measured.shape[0] if graphs or per_head else 0, batch_size):
        pattern = extract_patterns(model, measured[start : start + batch_size])
        walk = proxies.Walk(pattern, w[:, None, :])  # (L, B): validated and combined once
        if graphs:
            for mode in MODES:
                put(f"mixing_time.{mode}", _algorithm_1(walk, mode, max_steps))
            phi = _node_fidelity(walk, horizon)  # (L, B, T)
        if "sequence" in parts:
            put("fidelity.paper", phi.min(-1))  # (L, B)
            put("fidelity.definition", phi[..., :-1].min(-1))
        if "defined" in parts:
            for mode in MODES:
                put(f"worst_case.{mode}", walk.shaped(walk.mixing_time(mode, eps)))
            put("hitting.exact", walk.shaped(walk.hitting_times("definition")))  # (L, B, T)
            put("hitting.truncated", walk.shaped(walk.truncated_hitting_times("definition",
                                                                              max_steps)))
            put("fidelity.node", phi)
            put("rollout.weighted", walk.rollout()[..., -1, :])  # (L, B, T)
            put("rollout.uniform", walk.rollout(uniform=True)[..., -1, :])
        if per_head:
            if pattern.shape[2] == 1 and graphs:  # one head: its own combination (weight 1)
                phi_h = phi[:, :, None]  # (L, B, 1, T)
            else:
                phi_h = _node_fidelity(walk.each_head(), horizon)  # (L, B, H, T)
            put("head.paper", phi_h.min(-1))  # (L, B, H)
            put("head.definition", phi_h[..., :-1].min(-1))
    joined = out.joined()
    heads = {mode: joined.pop(f"head.{mode}") for mode in MODES} if per_head else {}
    if "sequence" in parts and best_head:
        for mode in MODES:
            joined[f"best_head.individual.{mode}"] = heads[mode].max(-1)
            joined[f"best_head.head.{mode}"] = heads[mode].argmax(-1)
    if not causal:
        return joined
    dataset = SequenceDataset.of(task, measured)
    if "ablation" in parts:
        fidelity = {**{f"{mode}.per_sequence": heads[mode] for mode in MODES},  # (L, N, H)
                    **{mode: heads[mode].mean(1) for mode in MODES}}  # (L, H)
        tree = importance_study(model, dataset, reference=reference, fidelity=fidelity, **study)
    else:
        tree = {"knockout": knockouts(model, dataset)}
        if impact:
            drop = head_effects(model, dataset, removal="mean",
                                fill=head_means(model, reference))["effect"]["margin"]
            L, H = drop.shape[:2]
            tree.update(impact=drop,
                        reliability=split_half_rho(drop) if H > 1 else np.full(L, np.nan),
                        fidelity={mode: heads[mode].mean(1) for mode in MODES})
    return {**joined, **flatten(tree)}


def sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
    best_head: bool = True,
) -> dict[str, np.ndarray]:
    """Per-layer, per-sequence proxies of Tables 1-6, each array ``(L, N)``:
    :func:`measure_model`'s ``"sequence"`` part (``"mixing_time.<mode>"``,
    ``"fidelity.<mode>"`` and, with ``best_head``, ``"best_head.individual.<mode>"`` and
    ``"best_head.head.<mode>"``)."""
    return measure_model(model, inputs, parts="sequence", max_steps=max_steps,
                         horizon=horizon, batch_size=batch_size, best_head=best_head)


def defined_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    eps: float = 0.25,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
) -> dict[str, np.ndarray]:
    """Section 4 measured as defined, per layer and sequence: :func:`measure_model`'s
    ``"defined"`` part (``"worst_case.<mode>"``, ``"mixing_time.<mode>"``,
    ``"hitting.exact"``, ``"hitting.truncated"``, ``"fidelity.node"``,
    ``"rollout.weighted"``, ``"rollout.uniform"``)."""
    return measure_model(model, inputs, parts="defined", eps=eps, max_steps=max_steps,
                         horizon=horizon, batch_size=batch_size)
