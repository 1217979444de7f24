"""What chapter 10 ("Section 4 as defined") measures: the shipped models' measures through
the metrics cache, on the chapter's sequences (:data:`SIZES`): Definition 2.7 and the node
fidelities (:func:`defined_measures`), the ablation studies (:func:`ablation_studies`), and
the same for every other shipped seed (:func:`seed_head_studies`,
:func:`seed_defined_measures`). The tables and the recorded values are
:mod:`~bparallel.book.section4.as_defined_report`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._checks import positive_int
from ...transformer.design import DEFAULT_SEED, evaluation_inputs
from ...transformer.importance import RANDOM_ORDERS, ImportanceStudy
from ...transformer.measure import HeadStudy
from ...transformer.shipped import models_by_seed
from .measures import measure_models

# --------------------------------------------------------------------------- measuring the models


def defined_measures(bundle: Any, *, num_sequences: int, eps: float, max_steps: int,
                     cache_dir: Any = None) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """Per model of ``bundle`` (:func:`~bparallel.transformer.shipped.book_models`), keyed
    ``(task, heads)``: :func:`~bparallel.transformer.measure.defined_metrics` (Definition
    2.7, Algorithms 1-2 in both modes, hitting times, rollout) on its first
    ``num_sequences`` held-out sequences, through the metrics cache."""
    positive_int(num_sequences, "num_sequences")
    measured = measure_models(
        bundle.models, lambda key: evaluation_inputs(key[0], "heldout", bundle.profile,
                                                     num_sequences=num_sequences),
        "defined", eps=eps, max_steps=max_steps, cache_dir=cache_dir)
    return {k: m.graphs for k, m in measured.items()}


#: The chapter's sequences per model and profile: ``measured`` by the graph measures,
#: then, disjoint from them, ``ablation`` measured by the ablation studies and
#: ``reference`` for the means of mean ablation.
SIZES = {"paper": {"measured": 200, "ablation": 100, "reference": 100},
         "quick": {"measured": 50, "ablation": 20, "reference": 20}}


def ablation_studies(bundle: Any, *, skip: int, num_sequences: int, reference_sequences: int,
                     horizon: int, cache_dir: Any = None, recorded: Any = None,
                     ) -> dict[tuple[str, int], ImportanceStudy]:
    """Per model of ``bundle``, keyed ``(task, heads)``: the
    :func:`~bparallel.transformer.importance.importance_study` (knockouts, head impact by
    mean and zero ablation, gradient importance, pruning with
    :data:`~bparallel.transformer.importance.RANDOM_ORDERS` random orders from seed 0, pair
    interactions), an :class:`~bparallel.transformer.importance.ImportanceStudy`, on
    held-out sequences disjoint from the first ``skip``
    (those :func:`defined_measures` used): ``num_sequences`` measured, then
    ``reference_sequences`` for the means of mean ablation; through the metrics cache
    (``recorded``: the results recorded beside the shipped models, ``models/recorded/``,
    read before computing)."""
    for name, value in (("skip", skip), ("num_sequences", num_sequences),
                        ("reference_sequences", reference_sequences)):
        positive_int(value, name)
    measured = measure_models(
        bundle.models,
        lambda key: evaluation_inputs(key[0], "heldout", bundle.profile,
                                      num_sequences=skip + num_sequences
                                      + reference_sequences)[skip:],
        "ablation", options_of=lambda key: {"task": key[0]},
        reference_sequences=reference_sequences, horizon=horizon, num_random=RANDOM_ORDERS,
        seed=0, cache_dir=cache_dir, recorded=recorded)
    return {k: m.study for k, m in measured.items()}


def _other_seeds(bundle: Any, models_dir: Any, heads_min: int
                 ) -> dict[tuple[str, int, int], Any]:
    """The models of every other shipped seed than ``bundle``'s (the paper profile's seeds
    43-46; none for a quick bundle) with at least ``heads_min`` heads, keyed
    ``(task, heads, seed)``."""
    own = {int(m.get("seed", DEFAULT_SEED)) for m in bundle.metas.values()}
    return {(t, h, seed): m for seed, ms in models_by_seed(bundle, models_dir).items()
            if seed not in own
            for (t, h), m in ms.items() if h >= heads_min}


def seed_head_studies(bundle: Any, models_dir: Any, *, skip: int, num_sequences: int,
                      reference_sequences: int, horizon: int, cache_dir: Any = None,
                      recorded: Any = None, single_head: bool = False,
                      ) -> dict[tuple[str, int, int], HeadStudy]:
    """Per multi-head model of every other shipped seed than ``bundle``'s (the paper
    profile's seeds 43-46; none for a quick bundle), keyed ``(task, heads, seed)``: the
    metrics cache's ``"heads"`` part, a :class:`~bparallel.transformer.measure.HeadStudy`
    (knockouts; the per-sequence margin drop of removing each head alone by mean ablation,
    ``impact`` ``(L, H, N)``; each head's minimax fidelity in both modes,
    ``head_fidelity``) on that seed's held-out sequences, split as
    :func:`ablation_studies` splits seed 42's: ``num_sequences`` measured after the first
    ``skip``, then ``reference_sequences`` for the means of mean ablation. With
    ``single_head``, the 1-head models too, whose layer knockouts the per-layer tests need
    (:func:`~bparallel.book.section4.as_defined.seed_layer_rows`; their per-head part has
    nothing to rank)."""
    for name, value in (("skip", skip), ("num_sequences", num_sequences),
                        ("reference_sequences", reference_sequences)):
        positive_int(value, name)
    models = _other_seeds(bundle, models_dir, 1 if single_head else 2)
    if not models:
        return {}
    measured = measure_models(
        models,
        lambda key: evaluation_inputs(key[0], "heldout", bundle.profile, seed=key[2],
                                      num_sequences=skip + num_sequences
                                      + reference_sequences)[skip:],
        "heads", options_of=lambda key: {"task": key[0]},
        reference_sequences=reference_sequences, horizon=horizon, cache_dir=cache_dir,
        recorded=recorded)
    return {k: m.heads for k, m in measured.items()}


def seed_defined_measures(bundle: Any, models_dir: Any, *, num_sequences: int, eps: float,
                          max_steps: int, cache_dir: Any = None,
                          ) -> dict[tuple[str, int, int], dict[str, np.ndarray]]:
    """Per model of every other shipped seed than ``bundle``'s (the paper profile's seeds
    43-46; none for a quick bundle), keyed ``(task, heads, seed)``: what
    :func:`defined_measures` gives seed 42's (Definition 2.7, node fidelity, ...), on the
    first ``num_sequences`` of that seed's own held-out sequences, through the metrics
    cache (not recorded: like seed 42's, they take seconds per model)."""
    positive_int(num_sequences, "num_sequences")
    models = _other_seeds(bundle, models_dir, 1)
    if not models:
        return {}
    measured = measure_models(
        models, lambda key: evaluation_inputs(key[0], "heldout", bundle.profile, seed=key[2],
                                              num_sequences=num_sequences),
        "defined", eps=eps, max_steps=max_steps, cache_dir=cache_dir)
    return {k: m.graphs for k, m in measured.items()}
