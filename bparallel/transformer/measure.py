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

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import proxies
from .._checks import finite_array, one_of, positive_int, unit_interval
from .data import (
    TASKS,
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
    paper_protocol_sequences,
)
from .model import Transformer
from .train import DEFAULT_SEED, HEADS, get_profile, load_model, run_name, weights_path

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


class _Parts(dict):
    """Per-batch results ``(L, B, ...)`` by key, joined along the sequence axis at the end."""

    def put(self, key: str, value: np.ndarray) -> None:
        self.setdefault(key, []).append(value)

    def joined(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate(v, axis=1) for k, v in self.items()}


def _batches(
    model: Transformer, inputs: torch.Tensor, batch_size: int
) -> Iterator[tuple[np.ndarray, proxies.Walk, np.ndarray]]:
    """Per batch of ``inputs`` ``(N, T)``: the patterns ``(L, B, H, T, T)``, their walk with
    the learned head weights (:class:`bparallel.proxies.Walk`: validated and combined once,
    every graph ``(L, B)``) and the weights ``(L, H)`` (Section 4.2)."""
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    w = model_head_weights(model)  # (L, H)
    for start in range(0, inputs.shape[0], batch_size):
        pattern = extract_patterns(model, inputs[start : start + batch_size])  # (L, B, H, T, T)
        yield pattern, proxies.Walk(pattern, w[:, None, :]), w


def _algorithm_1(walk: proxies.Walk, mode: str, max_steps: int) -> np.ndarray:
    """Algorithm 1 per graph, ``(L, B)``: the mean over starts of ``E[min(tau, M)]``."""
    return walk.shaped(walk.truncated_hitting_times(mode, max_steps).mean(-1))


def _node_fidelity(walk: proxies.Walk, horizon: int) -> np.ndarray:
    """Node fidelity ``phi_j`` in percent per graph, ``(L, B, T)`` (Algorithm 2)."""
    return 100.0 * walk.shaped(walk.node_fidelity(horizon, times=False)[0])


def sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
    best_head: bool = True,
) -> dict[str, np.ndarray]:
    """Per-layer, per-sequence proxies (Tables 1-6), each array ``(L, N)``.

    Keys ``"mixing_time.<mode>"`` (Algorithm 1), ``"fidelity.<mode>"`` (Algorithm 2,
    percent) and, with ``best_head``, ``"best_head.individual.<mode>"``,
    ``"best_head.combined.<mode>"``, ``"best_head.head.<mode>"`` for both modes. Node
    fidelities are computed once: for non-sink nodes the ``t = 0`` term is 0, so the two
    modes differ only in the node set.
    """
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    out = _Parts()
    put = out.put
    for pattern, walk, _ in _batches(model, inputs, batch_size):
        for mode in MODES:
            put(f"mixing_time.{mode}", _algorithm_1(walk, mode, max_steps))
        phi = _node_fidelity(walk, horizon)  # (L, B, T)
        put("fidelity.paper", phi.min(-1))  # (L, B)
        put("fidelity.definition", phi[..., :-1].min(-1))
        if best_head:
            if pattern.shape[2] == 1:  # one head: it is its own combination (weight 1)
                phi_h = phi[:, :, None]  # (L, B, 1, T)
            else:
                single = pattern[:, :, :, None]  # (L, B, H, 1, T, T): each head alone
                phi_h = _node_fidelity(proxies.Walk(single, np.ones(1)), horizon)
            per_head = {"paper": phi_h.min(-1), "definition": phi_h[..., :-1].min(-1)}
            for mode in MODES:
                ph = per_head[mode]  # (L, B, H)
                put(f"best_head.individual.{mode}", ph.max(-1))
                put(f"best_head.head.{mode}", ph.argmax(-1))
                put(f"best_head.combined.{mode}", out[f"fidelity.{mode}"][-1])
    return out.joined()


def load_run_models(
    run_dir: str | os.PathLike,
    *,
    tasks: Iterable[str] = TASKS,
    heads: Iterable[int] = HEADS,
) -> tuple[dict[tuple[str, int], Transformer], dict[tuple[str, int], dict[str, Any]]]:
    """Models of a run directory: ``<task>-hNN.weights.pt``, else the ``.ckpt.pt`` checkpoint.

    Returns ``(models, metas)`` keyed by ``(task, heads)``; a missing model is an error.
    """
    run_dir = Path(run_dir)
    models, metas = {}, {}
    for task in tasks:
        for h in heads:
            path = weights_path(run_dir, task, h)
            if not path.is_file():
                path = run_dir / f"{run_name(task, h)}.ckpt.pt"
            if not path.is_file():
                raise FileNotFoundError(
                    f"no weights or checkpoint for {run_name(task, h)} in {run_dir}"
                )
            model, meta = load_model(path)
            if meta.get("task") != task or meta.get("heads") != h:
                raise ValueError(f"{path} holds task={meta.get('task')!r}, "
                                 f"heads={meta.get('heads')!r}, not {task!r}, {h}")
            models[(task, h)], metas[(task, h)] = model, meta
    return models, metas


def defined_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    eps: float = 0.25,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
) -> dict[str, np.ndarray]:
    """Section 4 measured as defined, per layer and sequence (``L`` layers, ``N`` sequences,
    ``T`` positions), the heads combined with the learned weights ``w_h`` as in Algorithms 1-2.

    - ``"worst_case.<mode>"`` ``(L, N)``: Definition 2.7's mixing time of the walk
      (:func:`bparallel.proxies.worst_case_mixing_time`; ``inf`` where a start never mixes);
    - ``"mixing_time.<mode>"`` ``(L, N)``: Algorithm 1's mean truncated hitting time (cutoff
      ``max_steps``), for both modes: the same key and values as :func:`sequence_metrics`;
    - ``"hitting.exact"``, ``"hitting.truncated"`` ``(L, N, T)``: per start, the untruncated
      and the truncated expected hitting time of the sink (definition mode);
    - ``"fidelity.node"`` ``(L, N, T)``: node fidelity ``phi_j`` in percent of the combined
      heads (Definitions 3.3 and 3.9); its minimum over all nodes and over the non-sink
      nodes are :func:`sequence_metrics`' ``"fidelity.paper"`` and ``"fidelity.definition"``;
    - ``"rollout.weighted"``, ``"rollout.uniform"`` ``(L, N, T)``: the sink's row of attention
      rollout after each layer (Abnar & Zuidema 2020; heads weighted by ``w_h``, or averaged):
      the share of the last position's representation traceable to input token ``j``.

    Per batch the patterns are validated and their heads combined once
    (:class:`bparallel.proxies.Walk`), and the walk's chain is built once per mode: Algorithm
    1, Definition 2.7 and the hitting times read the same chain, and the truncated hitting
    times of definition mode are computed once for Algorithm 1 and ``"hitting.truncated"``.
    """
    eps = unit_interval(eps, "eps", closed=False)
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    out = _Parts()
    put = out.put
    for pattern, walk, w in _batches(model, inputs, batch_size):
        for mode in MODES:
            put(f"worst_case.{mode}", walk.shaped(walk.mixing_time(mode, eps)))
            put(f"mixing_time.{mode}", _algorithm_1(walk, mode, max_steps))
        put("hitting.exact", walk.shaped(walk.hitting_times("definition")))  # (L, B, T)
        put("hitting.truncated", walk.shaped(walk.truncated_hitting_times("definition",
                                                                          max_steps)))
        put("fidelity.node", _node_fidelity(walk, horizon))
        put("rollout.weighted", proxies.attention_rollout(pattern, w)[..., -1, :])  # (L, B, T)
        put("rollout.uniform", proxies.attention_rollout(pattern)[..., -1, :])
    return out.joined()
