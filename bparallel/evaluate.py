"""Section 4.2-4.3 evaluation: Tables 1-6 and Figure 4 from trained models.

Attention is extracted on the explicit path, in eval mode, under ``torch.no_grad``; the
proxies of :mod:`bparallel.proxies` run per sequence and layer in both modes.

Protocols for the sequences of Tables 1-4:

- ``"paper"``: as the published code, the first sequence of each of the first 50 batches of
  the shuffled training loader, in the epoch after training (:func:`evaluation_inputs`);
- ``"heldout"``: ``N`` sequences of the held-out stream.

Tables 5-6 (best individual head vs combined) come in two samples: ``"fresh"``, one freshly
drawn sequence (seeded; the published code drew one unseeded), and ``"mean"``, the mean over
the protocol's sequences. Standard deviations are population ones (``ddof=0``).

Results are tidy rows (lists of dicts; :func:`as_dataframe` for pandas), written by
:func:`write_csv` / :func:`write_json` atomically; :data:`PUBLISHED_TABLES` holds the paper's
numbers for side-by-side display.
"""

from __future__ import annotations

import csv
import fcntl
import functools
import hashlib
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import proxies
from .data import (
    TASKS,
    ShuffledLoader,
    fresh_sequences,
    heldout_dataset,
    make_dataset,
    paper_protocol_sequences,
)
from .model import Transformer
from .results import atomic_write, atomic_write_text
from .train import DEFAULT_SEED, HEADS, get_profile, load_model, run_name, weights_path

PROTOCOLS = ("paper", "heldout")
MODES = proxies.MODES
LAYERS = 4

# --------------------------------------------------------------------------- the paper's tables

_NAN = float("nan")

#: Tables 1-6 of the paper, copied from its text. Tables 1-4: ``mean`` and ``std`` per head
#: count, one value per layer L1-L4 (mixing time in steps; fidelity in percent). Tables 5-6:
#: ``individual`` (best single head) and ``combined`` per head count, in percent.
PUBLISHED_TABLES: dict[int, dict[str, Any]] = {
    1: {
        "quantity": "mixing_time", "task": "copy",
        "mean": {1: (3.8344, 77.9281, 78.6635, 73.5020), 4: (3.7370, 3.7155, 3.8895, 7.8050),
                 8: (3.6793, 3.6821, 3.7952, 3.7467), 16: (3.6328, 3.6513, 3.6391, 3.6594)},
        "std": {1: (0.1391, 2.8387, 3.2322, 3.6750), 4: (0.0259, 0.0365, 0.0704, 0.5391),
                8: (0.0171, 0.0329, 0.0661, 0.0731), 16: (0.0150, 0.0212, 0.0564, 0.0687)},
    },
    2: {
        "quantity": "mixing_time", "task": "cycle",
        "mean": {1: (27.0384, 47.8151, 47.2291, 43.0723), 4: (3.6369, 3.9092, 45.7709, 31.2925),
                 8: (3.6426, 3.7756, 4.6735, 47.5304), 16: (3.5859, 3.7820, 4.3759, 41.9292)},
        "std": {1: (2.4355, 0.6754, 1.3803, 2.8604), 4: (0.0161, 0.0374, 1.9865, 3.3583),
                8: (0.0098, 0.0290, 0.0795, 0.9180), 16: (0.0118, 0.0307, 0.0583, 1.9165)},
    },
    3: {
        "quantity": "fidelity", "task": "copy",
        "mean": {1: (0.3000, 0.0000, 0.0000, 0.0000), 4: (0.4500, 0.2800, 0.1800, 0.0100),
                 8: (0.5000, 0.3500, 0.1900, 0.1600), 16: (0.5800, 0.4900, 0.3400, 0.2500)},
        "std": {1: (0.1000, 0.0000, 0.0000, 0.0000), 4: (0.0700, 0.0800, 0.0500, 0.0100),
                8: (0.0800, 0.0800, 0.0800, 0.0600), 16: (0.0600, 0.0700, 0.0700, 0.0700)},
    },
    4: {
        "quantity": "fidelity", "task": "cycle",
        "mean": {1: (0.0000, 0.0000, 0.0000, 0.0000), 4: (0.5300, 0.4800, 0.0000, 0.0000),
                 8: (0.5400, 0.6300, 0.5300, 0.0000), 16: (0.6500, 0.6000, 0.5200, 0.0000)},
        "std": {1: (0.0000, 0.0000, 0.0000, 0.0000), 4: (0.0800, 0.0600, 0.0000, 0.0000),
                8: (0.0700, 0.0500, 0.0700, 0.0000), 16: (0.0600, 0.0500, 0.0500, 0.0000)},
    },
    5: {
        "quantity": "best_head", "task": "copy",
        "individual": {4: (0.30, 0.11, 0.21, 0.00), 8: (0.59, 0.29, 0.18, 0.18),
                       16: (0.59, 0.59, 0.52, 0.22)},
        "combined": {4: (0.56, 0.43, 0.19, 0.00), 8: (0.51, 0.37, 0.10, 0.17),
                     16: (0.59, 0.51, 0.46, 0.23)},
    },
    6: {
        "quantity": "best_head", "task": "cycle",
        "individual": {4: (0.39, 0.39, 0.00, 0.00), 8: (0.35, 0.49, 0.51, 0.00),
                       16: (0.65, 0.49, 0.68, 0.00)},
        "combined": {4: (0.59, 0.50, 0.00, 0.00), 8: (0.59, 0.72, 0.55, 0.00),
                     16: (0.67, 0.55, 0.48, 0.00)},
    },
}


def published_rows() -> list[dict[str, Any]]:
    """:data:`PUBLISHED_TABLES` as tidy rows (one per table, head count and layer)."""
    rows = []
    for table, t in PUBLISHED_TABLES.items():
        keys = ("mean", "std") if t["quantity"] != "best_head" else ("individual", "combined")
        for heads in t[keys[0]]:
            for layer in range(LAYERS):
                row = {"table": table, "quantity": t["quantity"], "task": t["task"],
                       "heads": heads, "layer": layer + 1}
                row.update({k: t[k][heads][layer] for k in keys})
                rows.append(row)
    return rows


# --------------------------------------------------------------------------- sequences


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
    if task not in TASKS:
        raise ValueError(f"task={task!r}: valid tasks are {list(TASKS)}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol={protocol!r}: valid protocols are {list(PROTOCOLS)}")
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


# --------------------------------------------------------------------------- extraction


@torch.no_grad()
def extract_attention(model: Transformer, inputs: torch.Tensor) -> np.ndarray:
    """Attention patterns of every layer, ``(L, B, H, T, T)`` float32 (explicit path, eval)."""
    was_training = model.training
    model.eval()
    try:
        _, attn = model(inputs, return_attention=True)  # (L, B, H, T, T)
    finally:
        model.train(was_training)
    return attn.numpy()


def model_head_weights(model: Transformer) -> np.ndarray:
    """Learned head importances of every layer, ``(L, H)`` (Section 4.2)."""
    return proxies.head_weights(model.out_proj_weights(), model.config.n_heads)


def sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    max_steps: int = 100,
    horizon: int = 100,
    batch_size: int = 25,
    best_head: bool = True,
) -> dict[str, np.ndarray]:
    """Per-layer, per-sequence proxies, each array ``(L, N)``.

    Keys ``"mixing_time.<mode>"``, ``"fidelity.<mode>"`` (percent) and, with ``best_head``,
    ``"best_head.individual.<mode>"``, ``"best_head.combined.<mode>"``,
    ``"best_head.head.<mode>"`` for both modes. Node fidelities are computed once: for
    non-sink nodes the ``t = 0`` term is 0, so the two modes differ only in the node set.
    """
    if inputs.ndim != 2:
        raise ValueError(f"inputs has shape {tuple(inputs.shape)}: expected (N, T)")
    w = model_head_weights(model)  # (L, H)
    out: dict[str, list[np.ndarray]] = {}

    def put(key: str, value: np.ndarray) -> None:
        out.setdefault(key, []).append(value)

    one = np.ones(1)
    for start in range(0, inputs.shape[0], batch_size):
        attn = extract_attention(model, inputs[start : start + batch_size])  # (L, B, H, T, T)
        C = proxies.combine_heads(attn, w[:, None, :])  # (L, B, T, T), combined once
        combined = C[:, :, None]  # (L, B, 1, T, T): C as a one-head graph of weight 1
        for mode in MODES:
            put(f"mixing_time.{mode}",
                proxies.mixing_time_proxy(combined, one, mode=mode, max_steps=max_steps))
        phi = proxies.node_fidelity_proxy(combined, one, horizon=horizon, times=False).phi
        put("fidelity.paper", phi.min(-1))  # (L, B)
        put("fidelity.definition", phi[..., :-1].min(-1))
        if best_head:
            single = attn[:, :, :, None]  # (L, B, H, 1, T, T): each head alone
            phi_h = proxies.node_fidelity_proxy(single, one, horizon=horizon, times=False).phi
            per_head = {"paper": phi_h.min(-1), "definition": phi_h[..., :-1].min(-1)}
            for mode in MODES:
                ph = per_head[mode]  # (L, B, H)
                put(f"best_head.individual.{mode}", ph.max(-1))
                put(f"best_head.head.{mode}", ph.argmax(-1))
                put(f"best_head.combined.{mode}", out[f"fidelity.{mode}"][-1])
    return {k: np.concatenate(v, axis=1) for k, v in out.items()}


# --------------------------------------------------------------------------- metrics cache

#: Bumped when the layout of a cached metrics file changes.
_CACHE_FORMAT = 1


@functools.lru_cache(maxsize=1)
def _package_fingerprint() -> str:
    """SHA-256 of every source file of the package: any code change invalidates the cache.

    Read once per process, when the code that computes the metrics is the code loaded."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def metrics_key(model: Transformer, inputs: torch.Tensor, **options: Any) -> str:
    """Content key of :func:`sequence_metrics`: weights, config, inputs, options and code.

    Two calls with the same key compute the same arrays, so a cached result may stand in.
    """
    h = hashlib.sha256()
    head = {"format": _CACHE_FORMAT, "config": model.config.to_dict(), "options": options,
            "code": _package_fingerprint(), "numpy": np.__version__,
            "torch": str(torch.__version__)}
    h.update(json.dumps(head, sort_keys=True).encode())
    for name, value in sorted(model.state_dict().items()):
        t = value.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    x = inputs.detach().cpu().contiguous()
    h.update(f"inputs:{x.dtype}:{tuple(x.shape)}".encode())
    h.update(x.numpy().tobytes())
    return h.hexdigest()


def cached_sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    cache_dir: str | os.PathLike | None,
    max_steps: int = 100,
    horizon: int = 100,
) -> dict[str, np.ndarray]:
    """:func:`sequence_metrics`, stored under ``cache_dir`` by :func:`metrics_key`.

    The cache is content-addressed (weights, inputs, options and the package's source), so
    it never serves a stale result; a file that cannot be read is computed again and
    replaced. Written atomically, under a per-key file lock, so concurrent callers compute
    a key once. ``cache_dir=None`` computes without a cache.
    """
    if cache_dir is None:
        return sequence_metrics(model, inputs, max_steps=max_steps, horizon=horizon)
    key = metrics_key(model, inputs, max_steps=max_steps, horizon=horizon)
    path = Path(cache_dir) / f"metrics-{key}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    # One computation per key: a second process (say chapter 08 run beside 07) waits for the
    # first and then reads its result.
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            try:
                with np.load(path, allow_pickle=False) as f:
                    return {k: f[k] for k in f.files}
            except Exception as exc:  # a truncated or corrupted file: compute again
                warnings.warn(f"ignoring unreadable metrics cache {path}: {exc}", stacklevel=2)
        out = sequence_metrics(model, inputs, max_steps=max_steps, horizon=horizon)
        atomic_write(path, lambda fh: np.savez(fh, **out))
        return out


# --------------------------------------------------------------------------- tables


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
            comb = m[f"best_head.combined.{mode}"]
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
) -> dict[str, list[dict[str, Any]]]:
    """Tables 1-6 for ``models`` keyed by ``(task, heads)``.

    Returns ``{"tables_1_4": rows, "tables_5_6": rows}``. Tables 1-4 rows: per protocol,
    quantity, mode, task, heads, layer: ``mean``, ``std``, ``n``. Tables 5-6 rows: per
    protocol, sample (``"fresh"``: one fresh sequence drawn with ``fresh_seed``, default
    ``seed``; ``"mean"``: mean over the protocol's sequences), mode, task, heads, layer.
    With ``cache_dir``, per-model metrics go through :func:`cached_sequence_metrics`.
    """
    for protocol in protocols:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol={protocol!r}: valid protocols are {list(PROTOCOLS)}")
    from tqdm.auto import tqdm

    t14: list[dict[str, Any]] = []
    t56: list[dict[str, Any]] = []
    fresh_seed = seed if fresh_seed is None else fresh_seed
    p = get_profile(profile)
    for protocol in protocols:
        metrics = {}
        for (task, heads), model in tqdm(sorted(models.items()), disable=not progress,
                                         desc=f"evaluate ({protocol})"):
            inputs = evaluation_inputs(task, protocol, profile, seed=seed, epoch=epoch,
                                       num_sequences=num_sequences)
            metrics[(task, heads)] = cached_sequence_metrics(
                model, inputs, cache_dir=cache_dir, max_steps=max_steps, horizon=horizon)
        t14 += _rows_tables_1_4(metrics, protocol)
        t56 += _rows_tables_5_6(metrics, protocol, "mean")
    fresh = {}
    for (task, heads), model in sorted(models.items()):
        x = fresh_sequences(task, 1, seed=fresh_seed, seq_len=p.seq_len,
                            vocab_size=p.vocab_size).inputs
        fresh[(task, heads)] = sequence_metrics(model, x, max_steps=max_steps, horizon=horizon)
    t56 += _rows_tables_5_6(fresh, "fresh", "fresh")
    return {"tables_1_4": t14, "tables_5_6": t56}


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


# --------------------------------------------------------------------------- output


def as_dataframe(rows: Sequence[Mapping[str, Any]]) -> Any:
    """Tidy rows as a pandas DataFrame (pandas imported lazily)."""
    import pandas as pd

    return pd.DataFrame(list(rows))


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Write tidy rows as CSV (columns in first-seen order), atomically."""
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return atomic_write_text(path, buf.getvalue())


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON (numpy scalars converted), atomically."""
    def default(x: Any) -> Any:
        if isinstance(x, (np.integer, np.floating)):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
        raise TypeError(f"cannot write {type(x).__name__} as JSON")

    return atomic_write_text(path, json.dumps(obj, indent=1, default=default) + "\n")


def flat_results(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, float]:
    """Flat dotted keys for :func:`bparallel.results.save_results`.

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


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, ties given their average rank (as in Spearman's rho)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tie = x == value
        ranks[tie] = ranks[tie].mean()
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (NaN if one is constant)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(f"spearman needs two 1-d sequences of one length >= 2, got "
                         f"{a.shape} and {b.shape}")
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def published_agreement(
    rows: Sequence[Mapping[str, Any]], *, protocol: str = "paper", mode: str = "paper"
) -> dict[str, dict[str, float]]:
    """How Tables 1-4 from ``rows`` (:func:`evaluate_models`' ``tables_1_4``) compare with
    the published ones, per quantity (``mixing_time``, ``fidelity``), over the cells
    (task, heads, layer) present in both:

    - ``cells``: how many cells were compared;
    - ``spearman``: rank correlation of the means (same ordering of cells = 1);
    - ``median_abs_difference``: median of ``|ours - published|`` (several published
      fidelities are 0, so no ratio);
    - ``trend_agreement``: share of (task, layer) where ours and the published table agree on
      the sign of the change from 1 head to 16 heads (the paper's claim is about this trend).
    """
    pub = {(r["quantity"], r["task"], r["heads"], r["layer"]): r["mean"]
           for r in published_rows() if r["quantity"] in ("mixing_time", "fidelity")}
    ours = {(r["quantity"], r["task"], r["heads"], r["layer"]): r["mean"] for r in rows
            if r["protocol"] == protocol and r["mode"] == mode}
    if not ours:
        raise ValueError(f"no Tables 1-4 rows for protocol={protocol!r}, mode={mode!r}")
    out = {}
    for quantity in ("mixing_time", "fidelity"):
        keys = sorted(k for k in pub if k[0] == quantity and k in ours)
        if not keys:
            raise ValueError(f"no {quantity} cells in common with the published tables")
        a = np.array([ours[k] for k in keys])
        b = np.array([pub[k] for k in keys])
        trends = []
        for task, layer in sorted({(k[1], k[3]) for k in keys}):
            lo, hi = (quantity, task, 1, layer), (quantity, task, 16, layer)
            if all(k in ours and k in pub for k in (lo, hi)):
                trends.append(np.sign(ours[hi] - ours[lo]) == np.sign(pub[hi] - pub[lo]))
        out[quantity] = {
            "cells": float(len(keys)), "spearman": spearman(a, b),
            "median_abs_difference": float(np.median(np.abs(a - b))),
            "trend_agreement": float(np.mean(trends)) if trends else float("nan"),
        }
    return out


def largest_differences(
    rows: Sequence[Mapping[str, Any]],
    *,
    quantity: str,
    protocol: str = "paper",
    mode: str = "paper",
    n: int = 5,
) -> list[dict[str, Any]]:
    """The ``n`` cells (task, heads, layer) of Tables 1-4 where ``rows`` differ most from the
    published means of ``quantity``, largest ``|ours - published|`` first.

    Each row: ``task``, ``heads``, ``layer``, ``published``, ``ours``, ``difference``
    (ours minus published) and the published ``std``.
    """
    if quantity not in ("mixing_time", "fidelity"):
        raise ValueError(f"quantity={quantity!r}: valid quantities are "
                         "['mixing_time', 'fidelity']")
    if n < 1:
        raise ValueError(f"n={n}: must be at least 1")
    pub = {(r["task"], r["heads"], r["layer"]): r for r in published_rows()
           if r["quantity"] == quantity}
    out = []
    for r in rows:
        key = (r["task"], r["heads"], r["layer"])
        if (r["quantity"] == quantity and r["protocol"] == protocol and r["mode"] == mode
                and key in pub):
            p = pub[key]
            out.append({"task": key[0], "heads": key[1], "layer": key[2],
                        "published": p["mean"], "published_std": p["std"], "ours": r["mean"],
                        "difference": r["mean"] - p["mean"]})
    if not out:
        raise ValueError(f"no {quantity} rows for protocol={protocol!r}, mode={mode!r}")
    out.sort(key=lambda d: (-abs(d["difference"]), d["task"], d["heads"], d["layer"]))
    return out[:n]


#: Tables 5-6 are published to two decimals; differences below half a unit are ties.
PUBLISHED_DECIMALS = 2


def _verdict(combined: float, individual: float) -> int:
    """+1 when the combination beats the best head, -1 when it loses, 0 for a tie, all at
    the published precision (both rounded to :data:`PUBLISHED_DECIMALS` decimals)."""
    c, i = round(combined, PUBLISHED_DECIMALS), round(individual, PUBLISHED_DECIMALS)
    return int(np.sign(round(c - i, PUBLISHED_DECIMALS)))


def amplification_agreement(
    rows: Sequence[Mapping[str, Any]],
    *,
    sample: str = "fresh",
    protocol: str = "fresh",
    mode: str = "paper",
) -> dict[str, float]:
    """How Tables 5-6 from ``rows`` (:func:`evaluate_models`' ``tables_5_6``) compare with
    the published ones, over the cells (task, heads, layer) present in both:

    - ``cells``;
    - ``published_wins`` / ``ours_wins``: cells where the combination beats the best head
      (at the published two decimals; equal values are ties);
    - ``verdict_agreement``: share of cells with the same verdict (wins, ties or loses);
    - ``spearman_combined`` / ``spearman_individual``: rank correlation of the values.
    """
    pub = {(r["task"], r["heads"], r["layer"]): r for r in published_rows()
           if r["quantity"] == "best_head"}
    ours = {(r["task"], r["heads"], r["layer"]): r for r in rows
            if r["sample"] == sample and r["protocol"] == protocol and r["mode"] == mode}
    keys = sorted(k for k in pub if k in ours)
    if not keys:
        raise ValueError(f"no Tables 5-6 rows for sample={sample!r}, protocol={protocol!r}, "
                         f"mode={mode!r}")
    v_pub = [_verdict(pub[k]["combined"], pub[k]["individual"]) for k in keys]
    v_ours = [_verdict(ours[k]["combined"], ours[k]["individual"]) for k in keys]
    return {
        "cells": float(len(keys)),
        "published_wins": float(sum(v > 0 for v in v_pub)),
        "ours_wins": float(sum(v > 0 for v in v_ours)),
        "verdict_agreement": float(np.mean([a == b for a, b in zip(v_pub, v_ours, strict=True)])),
        "spearman_combined": spearman([ours[k]["combined"] for k in keys],
                                      [pub[k]["combined"] for k in keys]),
        "spearman_individual": spearman([ours[k]["individual"] for k in keys],
                                        [pub[k]["individual"] for k in keys]),
    }


def plot_figure4(
    rows: Sequence[Mapping[str, Any]],
    path: str | os.PathLike | None = None,
    *,
    mode: str = "paper",
    protocol: str = "paper",
    title: str | None = None,
) -> Any:
    """Figure 4: mixing time (a, b) and fidelity (c, d) per layer, one line per head count.

    ``rows`` are Tables 1-4 rows (:func:`evaluate_models` or :func:`published_rows`); error
    bars are the standard deviations. Saved as PNG (atomically) when ``path`` is given.
    Returns the matplotlib figure.
    """
    from matplotlib.figure import Figure  # no pyplot: no global state, works headless

    sel = [r for r in rows if r.get("mode", mode) == mode
           and r.get("protocol", protocol) == protocol and "mean" in r]
    if not sel:
        raise ValueError(f"no Tables 1-4 rows for mode={mode!r}, protocol={protocol!r}")
    fig = Figure(figsize=(10, 7.5))
    axes = fig.subplots(2, 2)
    panels = [("mixing_time", "copy", "(a) Mixing time for Sequence Copying"),
              ("mixing_time", "cycle", "(b) Mixing time for Sequence Cycling"),
              ("fidelity", "copy", "(c) Fidelity for Sequence Copying"),
              ("fidelity", "cycle", "(d) Fidelity for Sequence Cycling")]
    for ax, (quantity, task, label) in zip(axes.flat, panels, strict=True):
        heads = sorted({r["heads"] for r in sel if r["quantity"] == quantity
                        and r["task"] == task})
        for i, h in enumerate(heads):
            pts = sorted((r["layer"], r["mean"], r.get("std", 0.0)) for r in sel
                         if r["quantity"] == quantity and r["task"] == task
                         and r["heads"] == h)
            x, y, e = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
            ax.errorbar(x, y, yerr=e, marker="o", capsize=3, color=f"C{i}",
                        label=f"{h} head{'s' if h > 1 else ''}")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("layer")
        ax.set_ylabel("steps" if quantity == "mixing_time" else "fidelity (%)")
        ax.set_xticks(range(1, LAYERS + 1))
        if heads:
            ax.legend(fontsize=8)
    fig.suptitle(title or f"Figure 4 ({mode} mode, {protocol} protocol)")
    fig.tight_layout()
    if path is not None:
        atomic_write(path, lambda fh: fig.savefig(fh, dpi=120, format="png"))
    return fig
