"""The paper's published Tables 1-6, and how this book's tables agree with them.

:data:`PUBLISHED_TABLES` is copied from the paper's text. The agreement measures compare
rows of :func:`bparallel.book.section4.tables.evaluate_models` with it, cell by cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import ranks
from ..._checks import one_of
from ..render.markdown import table as md_table
from ..render.markdown import tabs

__all__ = ["LAYERS", "spearman", "PUBLISHED_TABLES", "published_rows", "published_agreement",
           "largest_differences", "PUBLISHED_DECIMALS", "verdict", "amplification_agreement",
           "SPREAD", "MODE_NAMES", "side_by_side", "tables_1_4_markdown", "layer_means",
           "side_by_side_5_6", "tables_5_6_markdown"]

#: The paper's Transformers have 4 layers: columns L1-L4 of every published table.
LAYERS = 4

def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (:func:`bparallel.ranks.spearman`, the project's one);
    NaN when one side is constant."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(f"spearman needs two 1-d sequences of one length >= 2, got "
                         f"{a.shape} and {b.shape}")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(ranks.spearman(a, b))


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


def published_agreement(
    rows: Sequence[Mapping[str, Any]], *, protocol: str = "paper", mode: str = "paper"
) -> dict[str, dict[str, float]]:
    """How Tables 1-4 from ``rows`` (:func:`~bparallel.book.section4.tables.evaluate_models`'
    ``tables_1_4``) compare with the published ones, per quantity (``mixing_time``,
    ``fidelity``), over the cells (task, heads, layer) present in both:

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


def verdict(combined: float, individual: float) -> int:
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
    """How Tables 5-6 from ``rows`` (:func:`~bparallel.book.section4.tables.evaluate_models`'
    ``tables_5_6``) compare with the published ones, over the cells (task, heads, layer)
    present in both:

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
    v_pub = [verdict(pub[k]["combined"], pub[k]["individual"]) for k in keys]
    v_ours = [verdict(ours[k]["combined"], ours[k]["individual"]) for k in keys]
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


#: A cell is marked when this book and the paper differ by more than this many published
#: standard deviations (or differ at the published precision where that deviation is 0).
SPREAD = 2.0

_TITLES = {1: "mixing time (steps), copy", 2: "mixing time (steps), cycle",
           3: "minimax fidelity (%), copy", 4: "minimax fidelity (%), cycle"}
#: How the prose names the modes: "paper" alone means the training profile (see the
#: reproducibility page), so the ``paper`` mode reads "published-code mode".
MODE_NAMES = {"paper": "published-code mode", "definition": "definition mode"}

_SETS = {"paper": "the published protocol (50 training sequences)",
         "heldout": "held-out sequences"}


def _differs(ours: float, mean: float, std: float, decimals: int) -> bool:
    if std > 0:
        return abs(ours - mean) > SPREAD * std
    return round(ours, decimals) != round(mean, decimals)


def side_by_side(
    rows: Sequence[Mapping[str, Any]], table: int, *, protocol: str, mode: str,
    decimals: int = 2,
) -> list[dict[str, str]]:
    """One published Table 1-4 beside this book's: a row per head count, per layer this
    book's mean and the published mean as text at ``decimals`` decimals, this book's marked
    "†" where the two differ beyond the published spread (:data:`SPREAD` standard
    deviations). ``rows`` are :func:`bparallel.book.section4.tables.evaluate_models`'
    ``tables_1_4``."""
    one_of(table, "table", list(_TITLES), "tables (Tables 1-4 only)")
    pub = {(r["heads"], r["layer"]): r for r in published_rows() if r["table"] == table}
    ours = {(r["heads"], r["layer"]): r["mean"] for r in rows
            if r["table"] == table and r["protocol"] == protocol and r["mode"] == mode}
    if not ours:
        raise ValueError(f"no rows of Table {table} for protocol={protocol!r}, mode={mode!r}")
    out = []
    for heads in sorted({h for h, _ in pub}):
        row = {"heads": str(heads)}
        for layer in range(1, LAYERS + 1):
            p = pub[(heads, layer)]
            o = ours.get((heads, layer))
            mark = "" if o is None or not _differs(o, p["mean"], p["std"], decimals) else " †"
            row[f"L{layer}"] = "—" if o is None else f"{o:.{decimals}f}{mark}"
            row[f"L{layer} paper"] = f"{p['mean']:.{decimals}f}"
        out.append(row)
    return out


def tables_1_4_markdown(rows: Sequence[Mapping[str, Any]], *, name_prefix: str = "tbl") -> str:
    """Tables 1-4 for the reader: one tab set per published table, one numbered, captioned
    table per mode and evaluation set (:func:`side_by_side`), as MyST Markdown."""
    out = []
    have = {(r["protocol"], r["mode"]) for r in rows}
    for t, title in _TITLES.items():
        items = {}
        for protocol, mode in (("paper", "paper"), ("heldout", "paper"),
                               ("paper", "definition"), ("heldout", "definition")):
            if (protocol, mode) not in have:
                continue
            caption = (f"Paper's Table {t}, {title}: this book's mean over {_SETS[protocol]} "
                       f"({MODE_NAMES[mode]}) per layer L1-L4, beside the published mean (paper). "
                       f"† marks a difference of more than {SPREAD:g} published standard "
                       "deviations.")
            items[f"{MODE_NAMES[mode]}, "
                  f"{'published protocol' if protocol == 'paper' else 'held-out'}"] = (
                md_table(side_by_side(rows, t, protocol=protocol, mode=mode), caption=caption,
                         name=f"{name_prefix}-table{t}-{protocol}-{mode}"))
        out.append(tabs(items))
    return "\n".join(out)


def layer_means(
    rows: Sequence[Mapping[str, Any]], table: int, heads: int, *, protocol: str = "paper",
    mode: str = "paper",
) -> np.ndarray:
    """Means of one row of Table ``table`` (one head count), layers L1-L4, ``(4,)``.

    ``rows`` are this book's (``protocol`` and ``mode`` select the variant) or
    :func:`published_rows` (which have neither); a pandas DataFrame of such rows works too."""
    if hasattr(rows, "to_dict"):  # a DataFrame: its records
        rows = rows.to_dict("records")
    sel = sorted((r["layer"], r["mean"]) for r in rows
                 if r["table"] == table and r["heads"] == heads
                 and r.get("protocol", protocol) == protocol and r.get("mode", mode) == mode)
    if len(sel) != LAYERS:
        raise ValueError(f"table={table}, heads={heads}, protocol={protocol!r}, mode={mode!r}: "
                         f"{len(sel)} layers found, expected {LAYERS}")
    return np.array([m for _, m in sel])


_VERDICT_MARK = {1: "▲", 0: "=", -1: "▼"}


def side_by_side_5_6(
    rows: Sequence[Mapping[str, Any]], table: int, *, sample: str, protocol: str, mode: str,
) -> list[dict[str, str]]:
    """One published Table 5-6 beside this book's: a row per head count, per layer the best
    single head's and the combination's minimax fidelity (%) as "best / combined" at the
    published two decimals, marked ▲ (the combination wins), = (tie) or ▼ (it loses), by
    :func:`verdict`. ``rows`` are :func:`bparallel.book.section4.tables.evaluate_models`'
    ``tables_5_6``."""
    if table not in (5, 6):
        raise ValueError(f"table={table!r}: Tables 5-6 only")
    pub = {(r["heads"], r["layer"]): r for r in published_rows() if r["table"] == table}
    ours = {(r["heads"], r["layer"]): r for r in rows if r["table"] == table
            and r["sample"] == sample and r["protocol"] == protocol and r["mode"] == mode}
    if not ours:
        raise ValueError(f"no rows of Table {table} for sample={sample!r}, "
                         f"protocol={protocol!r}, mode={mode!r}")
    d = PUBLISHED_DECIMALS

    def text(r: Mapping[str, Any] | None) -> str:
        if r is None:
            return "—"
        mark = _VERDICT_MARK[verdict(r["combined"], r["individual"])]
        return f"{r['individual']:.{d}f} / {r['combined']:.{d}f} {mark}"

    out = []
    for heads in sorted({h for h, _ in pub}):
        row = {"heads": str(heads)}
        for layer in range(1, LAYERS + 1):
            row[f"L{layer}"] = text(ours.get((heads, layer)))
            row[f"L{layer} paper"] = text(pub[(heads, layer)])
        out.append(row)
    return out


def tables_5_6_markdown(rows: Sequence[Mapping[str, Any]], *, name_prefix: str = "tbl") -> str:
    """Tables 5-6 for the reader: one tab set per published table (one fresh sequence in
    published-code mode as published; held-out means in both modes), numbered and captioned."""
    variants = (("fresh", "fresh", "paper",
                 "one fresh sequence, published-code mode (as published)"),
                ("mean", "heldout", "paper", "held-out mean, published-code mode"),
                ("mean", "heldout", "definition", "held-out mean, definition mode"))
    have = {(r["sample"], r["protocol"], r["mode"]) for r in rows}
    out = []
    for t, task in ((5, "copy"), (6, "cycle")):
        items = {}
        for sample, protocol, mode, label in variants:
            if (sample, protocol, mode) not in have:
                continue
            caption = (f"Paper's Table {t} ({task}): minimax fidelity (%) of the best single "
                       f"head / the weighted combination per layer, this book ({label}) beside "
                       "the paper; ▲ the combination beats the best head, = tie, ▼ it loses "
                       "(at the published two decimals).")
            items[label] = md_table(side_by_side_5_6(rows, t, sample=sample, protocol=protocol,
                                                     mode=mode),
                                    caption=caption, name=f"{name_prefix}-table{t}-{sample}-{mode}")
        out.append(tabs(items))
    return "\n".join(out)
