"""Section 4.2: the proxies of Algorithms 1-2 measured on a trained Transformer.

Attention patterns are extracted on the explicit path, in eval mode, under ``torch.no_grad``
(:func:`extract_patterns`, ``(L, B, H, T, T)``); the proxies of :mod:`bparallel.proxies` run
per sequence and layer in both modes (:func:`sequence_metrics`).

The measures take sequences, never a profile: which sequences Tables 1-4 use (the published
code's protocol or held-out ones) is :func:`~bparallel.transformer.design.evaluation_inputs`.
:func:`training_probe` is what fresh-data training records at its probe steps.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import proxies
from .._checks import one_of, positive_int, unit_interval
from .._io import flatten, unflatten
from .ablation import head_means
from .as_trained import evaluate_as_trained
from .data import SequenceDataset
from .evaluation import evaluate_accuracy
from .importance import (
    ImportanceStudy,
    head_effects,
    importance_study,
    knockouts,
    split_half_rho,
)
from .model import Transformer
from .patterns import extract_patterns, model_head_weights

__all__ = [
    "MODES", "PARTS", "PROBE_LAYER_KEYS", "PROBE_SCALAR_KEYS", "HeadStudy", "ModelMeasures",
    "check_parts", "defined_metrics", "measure_model", "sequence_metrics", "training_probe",
]

MODES = proxies.MODES


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
#: - ``"ablation"``: the whole :func:`~bparallel.transformer.importance.importance_study`;
#: - ``"as_trained"``: the model scored as the optimiser saw it, dropout on
#:   (:func:`~bparallel.transformer.as_trained.evaluate_as_trained`), beside evaluation mode.
PARTS = ("sequence", "defined", "heads", "ablation", "as_trained")


@dataclass(frozen=True)
class HeadStudy:
    """:func:`measure_model`'s ``"heads"`` part, the light head study of one model.

    - ``knockout``: :func:`~bparallel.transformer.importance.knockouts`;
    - ``impact`` ``(L, H, N)``: the margin drop of removing each head alone by mean
      ablation, per sequence (``None`` without ``impact``);
    - ``reliability`` ``(L,)``: its split-half rho (NaN for one head; ``None`` without
      ``impact``);
    - ``head_fidelity``: per mode, each head's minimax fidelity in percent, mean over the
      sequences, ``(L, H)`` (``None`` without ``impact``).
    """

    knockout: dict[str, Any]
    impact: np.ndarray | None = None
    reliability: np.ndarray | None = None
    head_fidelity: dict[str, np.ndarray] | None = None

    def as_tree(self) -> dict[str, Any]:
        """The study as nested dicts, the fields that are not ``None``."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True)
class ModelMeasures:
    """What :func:`measure_model` measures of one model, by part (:data:`PARTS`); a part not
    asked for is empty (``graphs``) or ``None``.

    - ``graphs``: the graph measures of the ``"sequence"`` and ``"defined"`` parts, arrays
      ``(L, N, ...)`` under the names :func:`measure_model` lists (``"mixing_time.<mode>"``,
      ``"fidelity.<mode>"``, ...);
    - ``heads``: the ``"heads"`` part, a :class:`HeadStudy`;
    - ``study``: the ``"ablation"`` part, an
      :class:`~bparallel.transformer.importance.ImportanceStudy`;
    - ``as_trained``: the ``"as_trained"`` part, 0-d arrays ``"accuracy"``, ``"spread"``,
      ``"loss"`` and ``"evaluated"``.

    :meth:`flat` is the one flat layout (``{name: array}``, what the metrics cache stores),
    with a prefix per part so that no two names collide (``"fidelity.paper"``, a graph
    measure, and ``"heads/head_fidelity/paper"``, each head's); :meth:`from_flat` reads it
    back.
    """

    graphs: dict[str, np.ndarray]
    heads: HeadStudy | None = None
    study: ImportanceStudy | None = None
    as_trained: dict[str, np.ndarray] | None = None

    #: The prefixes of :meth:`flat`'s names, per part that is not a graph measure.
    PREFIXES = ("heads", "study", "as_trained")

    def flat(self) -> dict[str, np.ndarray]:
        """Every array under one name: the graph measures as named in :attr:`graphs` (no
        ``"/"``), the other parts under ``"heads/..."``, ``"study/..."`` and
        ``"as_trained/..."`` (:func:`bparallel._io.flatten` of their nested layout)."""
        tree: dict[str, Any] = {}
        if self.heads is not None:
            tree["heads"] = self.heads.as_tree()
        if self.study is not None:
            tree["study"] = self.study.as_tree()
        if self.as_trained is not None:
            tree["as_trained"] = self.as_trained
        return {**{k: np.asarray(v) for k, v in self.graphs.items()}, **flatten(tree)}

    @classmethod
    def from_flat(cls, flat: Mapping[str, np.ndarray]) -> ModelMeasures:
        """The measures of :meth:`flat`'s layout (0-d arrays of the nested parts become
        Python numbers, as :func:`bparallel._io.unflatten` gives them)."""
        graphs = {k: v for k, v in flat.items() if "/" not in k}
        tree = unflatten({k: v for k, v in flat.items() if "/" in k})
        unknown = sorted(set(tree) - set(cls.PREFIXES))
        if unknown:
            raise ValueError(f"flat: unknown parts {unknown}; expected graph measures and "
                             f"{', '.join(cls.PREFIXES)}")
        return cls(graphs=graphs,
                   heads=HeadStudy(**tree["heads"]) if "heads" in tree else None,
                   study=(ImportanceStudy.from_tree(tree["study"]) if "study" in tree
                          else None),
                   as_trained=({k: np.asarray(flat[f"as_trained/{k}"])
                                for k in tree["as_trained"]} if "as_trained" in tree
                               else None))


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
    draws: int | None = None,
    **study: Any,
) -> ModelMeasures:
    """Every graph and causal quantity of ``model`` on ``inputs`` ``(N, T)`` that ``parts``
    (:data:`PARTS`) ask for, from one pass over the sequences, as a :class:`ModelMeasures`
    (:meth:`ModelMeasures.flat`: under one name each).

    The model runs once per batch of ``batch_size`` sequences; each batch's attention
    pattern ``(L, B, H, T, T)`` is validated once and its heads combined once with the
    learned weights ``w_h`` of Section 4.2 (:class:`bparallel.proxies.Walk`); the walk's
    chain is built once per mode and every measure reads it; each head alone
    (:meth:`~bparallel.proxies.Walk.each_head`) is measured once, for the best head of
    Tables 5-6 and the per-head fidelity of the head studies alike.

    Graph measures (``ModelMeasures.graphs``), arrays ``(L, N, ...)``:

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
    ablation uses; the others are measured (the graph parts too). ``"heads"`` gives
    ``ModelMeasures.heads``, a :class:`HeadStudy`: the knockouts
    (:func:`~bparallel.transformer.importance.knockouts`) and, with ``impact``, the margin
    drop of removing each head alone by mean ablation, its split-half rho and each head's
    minimax fidelity. ``"ablation"`` gives ``ModelMeasures.study``, the
    :func:`~bparallel.transformer.importance.importance_study` (``study``: its other
    options), with these per-head fidelities as a ranking. ``"as_trained"`` needs the
    ``task`` too and scores the model on the sequences measured with its dropout on,
    ``draws`` sets of masks (:func:`~bparallel.transformer.as_trained.evaluate_as_trained`,
    its own batches): ``ModelMeasures.as_trained``, ``"accuracy"``, ``"spread"``,
    ``"loss"`` and ``"evaluated"`` (evaluation mode), 0-d arrays.
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
    if "as_trained" in parts:
        if task is None or draws is None:
            raise ValueError(f"parts {parts}: the as-trained score needs task= and draws=")
        positive_int(draws, "draws")
    elif draws is not None:
        raise ValueError(f"parts {parts}: draws= belongs to the 'as_trained' part")
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
    dataset = (SequenceDataset.of(task, measured) if causal or "as_trained" in parts
               else None)
    scored = None
    if "as_trained" in parts:
        r = evaluate_as_trained(model, dataset, draws=draws)
        scored = {name: np.asarray(r[key], dtype=np.float64)
                  for name, key in (("accuracy", "accuracy_predictable"), ("spread", "spread"),
                                    ("loss", "loss_predictable"), ("evaluated", "evaluated"))}
    if not causal:
        return ModelMeasures(graphs=joined, as_trained=scored)
    if "ablation" in parts:
        fidelity = {**{f"{mode}.per_sequence": heads[mode] for mode in MODES},  # (L, N, H)
                    **{mode: heads[mode].mean(1) for mode in MODES}}  # (L, H)
        found = importance_study(model, dataset, reference=reference, fidelity=fidelity,
                                 **study)
        return ModelMeasures(graphs=joined, study=found, as_trained=scored)
    head_study = HeadStudy(knockout=knockouts(model, dataset))
    if impact:
        drop = head_effects(model, dataset, removal="mean",
                            fill=head_means(model, reference))["effect"]["margin"]
        L, H = drop.shape[:2]
        head_study = HeadStudy(knockout=head_study.knockout, impact=drop,
                               reliability=split_half_rho(drop) if H > 1 else np.full(L, np.nan),
                               head_fidelity={mode: heads[mode].mean(1) for mode in MODES})
    return ModelMeasures(graphs=joined, heads=head_study, as_trained=scored)


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
    :func:`measure_model`'s ``"sequence"`` part, its graph measures (``"mixing_time.<mode>"``,
    ``"fidelity.<mode>"`` and, with ``best_head``, ``"best_head.individual.<mode>"`` and
    ``"best_head.head.<mode>"``)."""
    return measure_model(model, inputs, parts="sequence", max_steps=max_steps,
                         horizon=horizon, batch_size=batch_size, best_head=best_head).graphs


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
                         horizon=horizon, batch_size=batch_size).graphs


# --------------------------------------------------------------------------- through training


#: The per-layer measures of :func:`training_probe`, each a list of ``L`` values.
PROBE_LAYER_KEYS = tuple(
    f"{name}.{mode}" for name in ("mixing_time", "fidelity", "worst_case") for mode in MODES
) + ("rollout_min.weighted", "rollout_min.uniform")
#: Its scalar measures, on the probe sequences.
PROBE_SCALAR_KEYS = ("accuracy", "loss", "accuracy_predictable", "loss_predictable")


def _finite_or_none(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def _on_cpu(model: Transformer) -> Transformer:
    """``model`` when it is on the CPU, else a copy of it there."""
    if all(q.device.type == "cpu" for q in model.parameters()):
        return model
    return copy.deepcopy(model).cpu()


def training_probe(
    model: Transformer, probes: SequenceDataset, *, eps: float = 0.25, max_steps: int = 100,
    horizon: int = 100,
) -> dict[str, Any]:
    """One model at one step of training, on the probe sequences (``N`` sequences of the
    fixed held-out set): what the model does and what its attention graphs are.

    Scalars (:data:`PROBE_SCALAR_KEYS`): held-out loss and accuracy on these sequences
    (:func:`~bparallel.transformer.evaluation.evaluate_accuracy`). Per layer, lists of ``L``
    floats (:data:`PROBE_LAYER_KEYS`), from one call of
    :func:`~bparallel.transformer.measure.defined_metrics` (heads combined with the learned
    weights ``w_h``):

    - ``mixing_time.<mode>``: Algorithm 1, mean over the sequences (cutoff ``max_steps``);
    - ``fidelity.<mode>``: Algorithm 2, the minimax fidelity in percent (paper mode: minimum
      over all nodes; definition mode: over the non-sink nodes, Definition 3.5), mean over
      the sequences, as :func:`~bparallel.transformer.measure.sequence_metrics` gives it;
    - ``worst_case.<mode>``: Definition 2.7's mixing time at ``eps``, the median over the
      sequences (it is heavy-tailed); ``None`` where that median is infinite (at least half
      the sequences have a start that never mixes);
    - ``rollout_min.weighted``, ``rollout_min.uniform``: ``T`` times the smallest share of
      the last position traced to any input token by attention rollout after the layer
      (1: every token counts equally; 0: a token is lost), heads weighted by ``w_h`` or
      averaged, mean over the sequences (as the chapter's ``rollout_min``).

    A few tenths of a second for 20 sequences of 100 tokens on one CPU thread. A model on a
    GPU is measured as a CPU copy (the graph proxies are numpy arrays; the model is untouched).
    """
    model = _on_cpu(model)
    ev = evaluate_accuracy(model, probes)
    d = defined_metrics(model, probes.inputs, eps=eps, max_steps=max_steps, horizon=horizon)
    out: dict[str, Any] = {k: float(ev[k]) for k in PROBE_SCALAR_KEYS}
    phi = d["fidelity.node"]  # (L, N, T) percent
    minimax = {"paper": phi.min(-1), "definition": phi[..., :-1].min(-1)}  # (L, N)
    T = phi.shape[-1]
    for mode in MODES:
        out[f"mixing_time.{mode}"] = [float(v) for v in d[f"mixing_time.{mode}"].mean(-1)]
        out[f"fidelity.{mode}"] = [float(v) for v in minimax[mode].mean(-1)]
        out[f"worst_case.{mode}"] = [_finite_or_none(v)
                                     for v in np.median(d[f"worst_case.{mode}"], axis=-1)]
    for kind in ("weighted", "uniform"):
        share = d[f"rollout.{kind}"]  # (L, N, T): the sink's rollout row after each layer
        out[f"rollout_min.{kind}"] = [float(v) for v in T * share.min(-1).mean(-1)]
    return out
