"""Tables 1-6 of Section 4 from trained models: tidy rows, and their flat results keys.

Tables 5-6 (best individual head vs combined) come in two samples: ``"fresh"``, one freshly
drawn sequence (seeded; the published code drew one unseeded), and ``"mean"``, the mean over
the protocol's sequences. Standard deviations are population ones (``ddof=0``).
Rows are lists of dicts (:func:`as_dataframe` for pandas; ``bparallel._io.write_csv``).

The chapters call it through :func:`evaluate_bundle` (one bundle of the book's models,
chapters 08 and 09) and :func:`evaluate_seeds` (every seed, chapter 11); :func:`table_rows`
checks that an argument is such a result.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._checks import one_of, positive_int
from ...transformer.data import fresh_sequences
from ...transformer.design import DEFAULT_SEED, PROTOCOLS, evaluation_inputs, get_profile
from ...transformer.measure import MODES, sequence_metrics
from ...transformer.model import Transformer
from ...transformer.shipped import models_by_seed
from .measures import measure_models

__all__ = ["evaluate_models", "as_dataframe", "flat_results", "table_rows", "evaluate_bundle",
           "evaluate_seeds"]


def _rows_tables_1_4(
    metrics: Mapping[tuple[str, int], Mapping[str, np.ndarray]], protocol: str
) -> list[dict[str, Any]]:
    rows = []
    for (task, heads), m in sorted(metrics.items()):
        for quantity in ("mixing_time", "fidelity"):
            table = {("mixing_time", "copy"): 1, ("mixing_time", "cycle"): 2,
                     ("fidelity", "copy"): 3, ("fidelity", "cycle"): 4}[(quantity, task)]
            for mode in MODES:
                values = m[f"{quantity}.{mode}"]  # (L, N)
                for layer in range(values.shape[0]):
                    rows.append({
                        "table": table, "protocol": protocol, "quantity": quantity,
                        "mode": mode, "task": task, "heads": heads, "layer": layer + 1,
                        "mean": float(values[layer].mean()), "std": float(values[layer].std()),
                        "n": int(values.shape[1]),
                    })
    return rows


def _rows_tables_5_6(
    metrics: Mapping[tuple[str, int], Mapping[str, np.ndarray]], protocol: str, sample: str
) -> list[dict[str, Any]]:
    rows = []
    for (task, heads), m in sorted(metrics.items()):
        if heads == 1 or "best_head.individual.paper" not in m:
            continue
        for mode in MODES:
            ind = m[f"best_head.individual.{mode}"]  # (L, N)
            comb = m[f"fidelity.{mode}"]  # the combined heads (Algorithm 2)
            head = m[f"best_head.head.{mode}"]
            for layer in range(ind.shape[0]):
                row = {
                    "table": 5 if task == "copy" else 6, "protocol": protocol,
                    "sample": sample, "mode": mode, "task": task, "heads": heads,
                    "layer": layer + 1, "individual": float(ind[layer].mean()),
                    "combined": float(comb[layer].mean()),
                    "combined_exceeds_fraction": float((comb[layer] > ind[layer]).mean()),
                    "n": int(ind.shape[1]),
                }
                if ind.shape[1] == 1:
                    row["best_head"] = int(head[layer, 0])
                rows.append(row)
    return rows


def evaluate_models(
    models: Mapping[tuple[str, int], Transformer],
    *,
    profile: str = "paper",
    protocols: Sequence[str] = ("paper",),
    seed: int = DEFAULT_SEED,
    epoch: int | None = None,
    num_sequences: int | None = None,
    fresh_seed: int | None = None,
    max_steps: int = 100,
    horizon: int = 100,
    progress: bool = False,
    cache_dir: str | os.PathLike | None = None,
    recorded: str | os.PathLike | None = None,
    workers: int | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Tables 1-6 for ``models`` keyed by ``(task, heads)``.

    Returns ``{"tables_1_4": rows, "tables_5_6": rows}``. Tables 1-4 rows: per protocol,
    quantity, mode, task, heads, layer: ``mean``, ``std``, ``n``. Tables 5-6 rows: per
    protocol, sample (``"fresh"``: one fresh sequence drawn with ``fresh_seed``, default
    ``seed``; ``"mean"``: mean over the protocol's sequences), mode, task, heads, layer.
    Per-model metrics go through :func:`~bparallel.book.section4.measures.measure_models`
    (the ``"sequence"`` part; ``cache_dir``, then ``recorded``, the results recorded beside
    the shipped models; ``workers`` processes for the ones not found).
    """
    for protocol in protocols:
        one_of(protocol, "protocol", PROTOCOLS, "protocols")
    fresh_seed = seed if fresh_seed is None else fresh_seed
    p = get_profile(profile)
    keys = sorted(models)
    results = measure_models(
        {(protocol, key): models[key] for protocol in protocols for key in keys},
        lambda pk: evaluation_inputs(pk[1][0], pk[0], profile, seed=seed, epoch=epoch,
                                     num_sequences=num_sequences),
        "sequence", max_steps=max_steps, horizon=horizon,
        cache_dir=cache_dir, recorded=recorded, workers=workers, progress=progress,
        desc="evaluate")
    t14: list[dict[str, Any]] = []
    t56: list[dict[str, Any]] = []
    for protocol in protocols:
        metrics = {key: r.graphs for (prot, key), r in results.items() if prot == protocol}
        t14 += _rows_tables_1_4(metrics, protocol)
        t56 += _rows_tables_5_6(metrics, protocol, "mean")
    fresh = {}
    for (task, heads), model in sorted(models.items()):
        x = fresh_sequences(task, 1, seed=fresh_seed, seq_len=p.seq_len,
                            vocab_size=p.vocab_size).inputs
        fresh[(task, heads)] = sequence_metrics(model, x, max_steps=max_steps, horizon=horizon)
    t56 += _rows_tables_5_6(fresh, "fresh", "fresh")
    return {"tables_1_4": t14, "tables_5_6": t56}


def as_dataframe(rows: Sequence[Mapping[str, Any]]) -> Any:
    """Tidy rows as a pandas DataFrame (pandas imported lazily)."""
    return pd.DataFrame(list(rows))


def flat_results(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, float]:
    """Flat dotted keys for :func:`bparallel.book.render.results.save_results`.

    ``table1.paper.paper.copy.h1.L1.mean`` = ``table<k>.<protocol>.<mode>.<task>.h<H>.L<l>
    .<stat>``; Tables 5-6 insert the sample: ``table5.fresh.fresh.paper.copy.h4.L1.combined``.
    """
    flat: dict[str, float] = {}
    for row in tables.get("tables_1_4", []):
        base = (f"table{row['table']}.{row['protocol']}.{row['mode']}.{row['task']}"
                f".h{row['heads']}.L{row['layer']}")
        flat[f"{base}.mean"], flat[f"{base}.std"] = row["mean"], row["std"]
    for row in tables.get("tables_5_6", []):
        base = (f"table{row['table']}.{row['protocol']}.{row['sample']}.{row['mode']}"
                f".{row['task']}.h{row['heads']}.L{row['layer']}")
        flat[f"{base}.individual"], flat[f"{base}.combined"] = row["individual"], row["combined"]
    return flat


# --------------------------------------------------------------------------- the chapters' calls


def _bundle(bundle: Any) -> None:
    if not hasattr(bundle, "models") or not hasattr(bundle, "profile"):
        raise ValueError(f"bundle is a {type(bundle).__name__}: expected the ModelSet of "
                         "bparallel.transformer.shipped.book_models")


def table_rows(tables: Mapping[str, Any], key: str) -> Sequence[Mapping[str, Any]]:
    if not isinstance(tables, Mapping) or key not in tables:
        raise ValueError(f"tables has no {key!r}: expected the result of evaluate_models "
                         "(or evaluate_bundle)")
    return tables[key]


def evaluate_bundle(
    bundle: Any,
    *,
    protocols: Sequence[str] = ("paper",),
    max_steps: int = 100,
    horizon: int = 100,
    cache_dir: str | os.PathLike | None = None,
    recorded: str | os.PathLike | None = None,
    workers: int | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Tables 1-6 (Section 4.2-4.3: Algorithm 1's mixing time, Algorithm 2's minimax
    fidelity, the best head against the combination of Definitions 3.10-3.12) of the models
    a chapter shows (``bundle``: :func:`~bparallel.transformer.shipped.book_models`), on the
    evaluation sets ``protocols`` (``"paper"``: the published protocol's 50 training
    sequences; ``"heldout"``: fresh ones), through the metrics cache ``cache_dir`` (models
    not cached are measured by ``workers`` processes):
    :func:`~bparallel.book.section4.tables.evaluate_models` with the bundle's profile."""
    _bundle(bundle)
    if not protocols:
        raise ValueError("protocols is empty: name at least one evaluation set")
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    return evaluate_models(bundle.models, profile=bundle.profile, protocols=tuple(protocols),
                           max_steps=max_steps, horizon=horizon, cache_dir=cache_dir,
                           recorded=recorded, workers=workers)


def evaluate_seeds(
    bundle: Any,
    models_dir: str | os.PathLike,
    *,
    max_steps: int = 100,
    horizon: int = 100,
    cache_dir: str | os.PathLike | None = None,
    recorded: str | os.PathLike | None = None,
    workers: int | None = None,
) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Tables 1-6 on the published protocol for every seed of the book's models
    (:func:`~bparallel.transformer.shipped.models_by_seed`: the shipped paper-profile seeds,
    or a quick bundle's one seed), keyed by seed; each seed's evaluation sequences are its
    own training data's, as in the published protocol."""
    _bundle(bundle)
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    return {seed: evaluate_models(m, profile=bundle.profile, protocols=("paper",), seed=seed,
                                  max_steps=max_steps, horizon=horizon, cache_dir=cache_dir,
                                  recorded=recorded, workers=workers)
            for seed, m in models_by_seed(bundle, models_dir).items()}
