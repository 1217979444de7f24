"""The causal check of the induction circuit (chapter 13): knock out the heads the scores
name at the end of training and measure what induction keeps.

For a trained model (:func:`knockouts`): every head's previous-token and induction scores
(:func:`~bparallel.transformer.head_probes.head_probe`) on the probe set, the first
``probe_sequences`` held-out sequences (the ones the probes through training read), name
the circuit's heads (:func:`circuit_heads`): the *previous-token heads*, every head of a
layer below the last whose previous-token score is at least ``tau_prev``, and the
*induction heads*, every head of a layer above the first whose induction score is at least
``tau_ind`` (the thresholds of :data:`~.circuit.THRESHOLDS`). Then, on ``num_sequences``
other held-out sequences, the accuracy on the predictable positions
(:func:`~bparallel.transformer.ablation.evaluate_ablation`, mean ablation: a removed head
outputs its mean over ``reference_sequences`` further sequences, Michel et al. 2019) of:

- the intact model (``"none"``);
- the model without every previous-token head (``"previous_token"``), and without every
  induction head (``"induction"``);
- a control without as many heads *outside* the circuit as there are previous-token heads
  (at most all of them), drawn at random with the run's seed (``"control"``);
- the redundancy of each part (Singh et al. 2024): for each of its heads, the model with
  every other head of that part removed; ``keep_one_<part>`` is the best such accuracy
  (the one head that alone carries most), ``keep_one_<part>_mean`` their mean (``None``
  with one head: nothing to remove).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..._checks import one_of
from ...transformer.ablation import evaluate_ablation, head_means
from ...transformer.data import SequenceDataset
from ...transformer.head_probes import head_probe
from ...transformer.model import Transformer
from .circuit import THRESHOLDS, _layers
from .statistics import seed_interval

#: The knockouts of :func:`knockouts`, in the order of the chapter's table.
KNOCKOUTS = ("none", "previous_token", "induction", "control", "keep_one_previous_token",
             "keep_one_induction")


def circuit_heads(scores: Mapping[str, Sequence[Sequence[float]]],
                  thresholds: Mapping[str, float] | None = None
                  ) -> dict[str, list[tuple[int, int]]]:
    """The heads ``(layer, head)`` of each part of the circuit from one probe's ``scores``
    (``"previous_token"`` and ``"induction"``: one list of ``H`` scores per layer), at
    ``thresholds`` (default: the chapter's, :data:`~.circuit.THRESHOLDS`), each in the
    layers that can carry it (previous-token: below the last; induction: above the first).
    A head in both lists stays in both."""
    out = {}
    for part, taus in THRESHOLDS.items():
        s = np.asarray(scores[part], dtype=np.float64)  # (L, H)
        if s.ndim != 2 or s.shape[0] < 2:
            raise ValueError(f"scores[{part!r}] has shape {s.shape}: expected (L, H), L >= 2")
        tau = taus[0] if thresholds is None else float(thresholds[part])
        out[part] = [(int(layer), int(h)) for layer in _layers(part, s.shape[0])
                     for h in range(s.shape[1]) if s[layer, h] >= tau]
    return out


def _mask(shape: tuple[int, int], removed: Sequence[tuple[int, int]]) -> torch.Tensor:
    m = torch.ones(shape)
    for layer, h in removed:
        m[layer, h] = 0.0
    return m


def knockout_masks(shape: tuple[int, int], heads: Mapping[str, Sequence[tuple[int, int]]],
                   seed: int) -> tuple[torch.Tensor, list[tuple[str, Any]]]:
    """The masks ``(M, L, H)`` of :func:`knockouts` for a model of ``shape`` ``(L, H)`` and
    its circuit ``heads`` (:func:`circuit_heads`), with one label per mask: ``("none",
    None)``, ``("previous_token", None)``, ``("induction", None)``, ``("control", k)`` (``k``
    heads outside the circuit removed, drawn with ``seed``) and ``("keep_one_<part>",
    head)`` per head of a part with two or more."""
    L, H = shape
    prev, ind = list(heads["previous_token"]), list(heads["induction"])
    inside = set(prev) | set(ind)
    outside = [(layer, h) for layer in range(L) for h in range(H) if (layer, h) not in inside]
    k = min(len(prev), len(outside))
    rng = np.random.default_rng(seed)
    control = [outside[i] for i in sorted(rng.choice(len(outside), size=k, replace=False))]
    masks = [_mask(shape, []), _mask(shape, prev), _mask(shape, ind), _mask(shape, control)]
    labels: list[tuple[str, Any]] = [("none", None), ("previous_token", None),
                                     ("induction", None), ("control", k)]
    for part, mine in (("previous_token", prev), ("induction", ind)):
        if len(mine) >= 2:
            for keep in mine:
                masks.append(_mask(shape, [x for x in mine if x != keep]))
                labels.append((f"keep_one_{part}", keep))
    return torch.stack(masks), labels


def knockouts(model: Transformer, heldout: SequenceDataset, *, seed: int,
              probe_sequences: int, num_sequences: int, reference_sequences: int
              ) -> dict[str, Any]:
    """The causal check of one trained model (module docstring) on ``heldout``: its first
    ``probe_sequences`` name the heads, the next ``num_sequences`` are measured and the
    ``reference_sequences`` after them give the mean outputs. Returns ``heads`` (per part,
    its ``(layer, head)`` list), the accuracy of every knockout of :data:`KNOCKOUTS`
    (``None`` where it does not apply) and ``control_heads``, how many heads the control
    removed."""
    for name, v in (("probe_sequences", probe_sequences), ("num_sequences", num_sequences),
                    ("reference_sequences", reference_sequences)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}={v!r}: expected a positive number of sequences")
    need = probe_sequences + num_sequences + reference_sequences
    if len(heldout) < need:
        raise ValueError(f"heldout has {len(heldout)} sequences: the check needs {need}")
    a, b = probe_sequences, probe_sequences + num_sequences
    scores = head_probe(model, heldout.subset(slice(0, a)))
    heads = circuit_heads(scores)
    L, H = len(scores["induction"]), len(scores["induction"][0])
    masks, labels = knockout_masks((L, H), heads, seed)
    fill = head_means(model, heldout.inputs[b : b + reference_sequences])
    acc = evaluate_ablation(model, heldout.subset(slice(a, b)), masks,
                            fill=fill)["accuracy_predictable"]
    out: dict[str, Any] = {"heads": heads, "control_heads": labels[3][1],
                           **dict.fromkeys(KNOCKOUTS), "keep_one_previous_token_mean": None,
                           "keep_one_induction_mean": None}
    for name in KNOCKOUTS[:4]:
        out[name] = float(acc[[lab for lab, _ in labels].index(name)])
    for part in ("previous_token", "induction"):
        mine = [float(v) for (lab, _), v in zip(labels, acc, strict=True)
                if lab == f"keep_one_{part}"]
        if mine:
            out[f"keep_one_{part}"] = max(mine)
            out[f"keep_one_{part}_mean"] = float(np.mean(mine))
    return out


def knockout_summary(rows: Sequence[Mapping[str, Any]], level: float = 0.95
                     ) -> list[dict[str, Any]]:
    """Per configuration ``(heads, head_size)`` of ``rows`` (each a :func:`knockouts` result
    with its ``heads_n``, ``head_size`` and ``seed``), in their order: ``seeds``, the mean
    number of heads of each part (``n_previous_token``, ``n_induction``) and, per knockout
    of :data:`KNOCKOUTS`, the mean accuracy with its t-interval over seeds
    (``<knockout>``: an :class:`~.statistics.Interval`, ``None`` where no seed has it)."""
    out = []
    for h, d in dict.fromkeys((r["heads_n"], r["head_size"]) for r in rows):
        mine = [r for r in rows if (r["heads_n"], r["head_size"]) == (h, d)]
        row: dict[str, Any] = {"heads": h, "head_size": d, "seeds": len(mine),
                               "n_previous_token": float(np.mean(
                                   [len(r["heads"]["previous_token"]) for r in mine])),
                               "n_induction": float(np.mean(
                                   [len(r["heads"]["induction"]) for r in mine]))}
        for k in KNOCKOUTS:
            vals = [r[k] for r in mine if r.get(k) is not None]
            row[k] = seed_interval(vals, level) if vals else None
        out.append(row)
    return out


#: Sequences per model of the causal check, by profile: the probe set (the manifests'),
#: measured, and reference (for mean ablation); and which seeds are checked (``None``:
#: every seed shipped; the quick profile checks the first).
SIZES = {"paper": {"probe": 20, "measured": 100, "reference": 100, "seeds": None},
         "quick": {"probe": 20, "measured": 50, "reference": 50, "seeds": 1}}


#: The numbers of a :func:`knockouts` result, in the order a recorded file keeps them.
VALUES = (*KNOCKOUTS, "keep_one_previous_token_mean", "keep_one_induction_mean")


def _code_key() -> str:
    """SHA-256 of the code a result depends on beyond the measured code of the metrics cache
    (which its key hashes already): this module and the head probes, each as
    :func:`~bparallel.transformer.metrics_cache.code_of` reads it, and of chapter 13's
    formation rule only what a knockout reads (the thresholds' values and the layers each
    part may sit in), so that the chapter's tests can change without its record."""
    import hashlib
    import inspect
    import sys
    import textwrap
    from pathlib import Path

    from ...transformer import head_probes
    from ...transformer.metrics_cache import code_of

    h = hashlib.sha256()
    for module in (head_probes, sys.modules[__name__]):
        path = Path(module.__file__)
        h.update(code_of(path.read_text(encoding="utf-8"), str(path)).encode())
    h.update(repr(sorted(THRESHOLDS.items())).encode())
    h.update(code_of(textwrap.dedent(inspect.getsource(_layers))).encode())
    return h.hexdigest()


def _to_arrays(r: Mapping[str, Any]) -> dict[str, np.ndarray]:
    values = np.array([np.nan if r[k] is None else r[k] for k in VALUES], dtype=np.float64)
    return {"previous_token": np.array(r["heads"]["previous_token"], dtype=np.int64
                                       ).reshape(-1, 2),
            "induction": np.array(r["heads"]["induction"], dtype=np.int64).reshape(-1, 2),
            "control_heads": np.array(r["control_heads"], dtype=np.int64),
            "present": np.array([r[k] is not None for k in VALUES]), "values": values}


def _from_arrays(a: Mapping[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "heads": {part: [(int(x), int(y)) for x, y in a[part]]
                  for part in ("previous_token", "induction")},
        "control_heads": int(a["control_heads"])}
    for k, present, v in zip(VALUES, a["present"], a["values"], strict=True):
        out[k] = float(v) if present else None
    return out


def recorded_knockouts(model: Transformer, heldout: SequenceDataset, *, seed: int,
                       probe_sequences: int, num_sequences: int, reference_sequences: int,
                       cache_dir: Any = None, recorded: Any = None) -> dict[str, Any]:
    """:func:`knockouts`, read from ``recorded`` (``models/recorded/``, ``python -m bparallel
    record``) or ``cache_dir`` where a result of the same weights, sequences, sizes and code
    is there, else computed (and written to ``cache_dir``). The file is named as the
    metrics cache names its results (``metrics-<key>.npz``, the key of
    :func:`~bparallel.transformer.metrics_cache.metrics_key` with this study's code), so that
    ``record`` keeps it and ``record --check`` finds it missing after a change."""
    from pathlib import Path

    from ..._io import atomic_write
    from ...transformer import metrics_cache as mc

    sizes = dict(probe_sequences=probe_sequences, num_sequences=num_sequences,
                 reference_sequences=reference_sequences)
    need = sum(sizes.values())
    key = mc.metrics_key(model, heldout.inputs[:need], measure="circuit-knockouts",
                         seed=int(seed), study_code=_code_key(), **sizes)
    name = f"metrics-{key}.npz"
    for tracked, _ in mc._TRACKED:
        tracked.add(name)
    for folder in (recorded, cache_dir):
        if folder is not None and (Path(folder) / name).is_file():
            with np.load(Path(folder) / name, allow_pickle=False) as f:
                return _from_arrays({k: f[k] for k in f.files})
    if any(lookup_only for _, lookup_only in mc._TRACKED):
        raise mc.NotCached([name])
    r = knockouts(model, heldout, seed=seed, **sizes)
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(cache_dir) / name, lambda fh: np.savez(fh, **_to_arrays(r)))
    return r


def knockout_rows(entries: Sequence[Mapping[str, Any]], models: Mapping[Any, Transformer],
                  heldout: SequenceDataset, profile: str, *, cache_dir: Any = None,
                  recorded: Any = None) -> list[dict[str, Any]]:
    """:func:`knockouts` of every run of ``entries`` (manifest entries with ``heads``,
    ``head_size`` and ``seed``; ``models`` keyed by
    :func:`~.models.run_key`) at the sizes of ``profile`` (:data:`SIZES`), each with its
    ``heads_n``, ``head_size`` and ``seed``, in the entries' order; read from ``recorded`` or
    ``cache_dir`` where they hold it (:func:`recorded_knockouts`)."""
    from .models import run_key

    one_of(profile, "profile", list(SIZES), "profiles")
    size = SIZES[profile]
    seeds = sorted({int(e["seed"]) for e in entries})
    if size["seeds"] is not None:
        seeds = seeds[: size["seeds"]]
    out = []
    for e in entries:
        if int(e["seed"]) not in seeds:
            continue
        r = recorded_knockouts(models[run_key(e)], heldout, seed=int(e["seed"]),
                               probe_sequences=size["probe"], num_sequences=size["measured"],
                               reference_sequences=size["reference"], cache_dir=cache_dir,
                               recorded=recorded)
        out.append({**r, "heads_n": int(e["heads"]), "head_size": int(e["head_size"]),
                    "seed": int(e["seed"])})
    return out
