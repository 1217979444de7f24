"""What chapter 08 ("Sections 4.2-4.3: mixing-time and fidelity proxies") computes, shows
and records beyond Tables 1-4 themselves (:mod:`bparallel.book.section4.tables`,
:mod:`bparallel.book.section4.published`): Algorithm 1 exactly and by sampling on one
sequence (:func:`exact_vs_monte_carlo`, :func:`column_sum_rows`), the claims read off Tables
1-4 (:func:`proxy_claims_results`), their agreement with the published tables
(:func:`agreement_by_mode`, :func:`largest_differences_by_quantity`) and what the two modes
and the two evaluation sets change (:func:`differences_results`).

Table rows are plain dicts keyed by the column a reader sees (numbers formatted with
:data:`FORMATS`); the chapter glues them (:func:`bparallel.book.render.markdown.glue_table`)
under captions in its prose. ``*_results`` return flat dicts under the keys of the chapter's
regression references, computed exactly as the chapter did before (same operations, same
order), so the references hold bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import proxies
from ..._checks import nonnegative_int, positive_int
from ...transformer.design import HEADS
from .published import largest_differences, layer_means, published_agreement, published_rows
from .tables import flat_results, table_rows

#: Algorithm 1 as published samples 500 walks per start node.
WALKS = 500


#: Number formats of the chapter's tables, by column.
FORMATS = {
    "exact": ".4f", f"Monte Carlo ({WALKS} walks)": ".4f", "z": ".2f",
    "smallest column sum": ".3f", "largest column sum": ".3f",
    "Spearman ρ": ".3f", "median |ours − published|": ".3f",
    "1 → 16 heads, same direction": ".0%",
    "published": ".3f", "published std": ".3f", "this book": ".3f",
    "this book − published": ".3f",
}


def exact_vs_monte_carlo(pattern: Any, head_weights: Any, *, max_steps: int = 100,
                         seed: int = 0) -> list[dict[str, Any]]:
    """Algorithm 1 two ways on one sequence's attention ``pattern`` ``(L, H, T, T)`` with
    the heads weighted by ``head_weights`` ``(L, H)``: per mode (``"paper"``, the published
    sampler; ``"definition"``, the walk of Definition 2.3) and layer, the exact expectation
    of the truncated hitting time (:func:`bparallel.proxies.mixing_time_proxy`, absorbing
    chain) against the mean of :data:`WALKS` sampled walks per start (seeded), and the
    z-score of their difference (the sampled mean's standard error as unit)."""
    positive_int(max_steps, "max_steps")
    nonnegative_int(seed, "seed")
    rows = []
    for mode in ("paper", "definition"):
        exact = proxies.mixing_time_proxy(pattern, head_weights, mode=mode, max_steps=max_steps)
        mc, se = proxies.mixing_time_proxy(pattern, head_weights, mode=mode,
                                           method="monte-carlo", max_steps=max_steps,
                                           num_simulations=WALKS, seed=seed, return_stderr=True)
        rows += [{"mode": mode, "layer": layer + 1, "exact": exact[layer],
                  f"Monte Carlo ({WALKS} walks)": mc[layer],
                  "z": (mc[layer] - exact[layer]) / se[layer]} for layer in range(len(exact))]
    return rows


def column_sum_rows(combined: Any) -> list[dict[str, Any]]:
    """Per layer of the combined heads ``C`` ``(L, T, T)`` (Definition 3.6): the smallest
    and largest column sum over the non-sink positions, the totals of the rows the
    published sampler draws from (a walk's rows would sum to 1)."""
    c = np.asarray(combined)
    if c.ndim != 3 or c.shape[-1] != c.shape[-2] or c.shape[-1] < 2:
        raise ValueError(f"combined has shape {c.shape}: expected (L, T, T) with T >= 2")
    col = c.sum(axis=-2)
    return [{"layer": layer + 1, "smallest column sum": float(s[:-1].min()),
             "largest column sum": float(s[:-1].max())} for layer, s in enumerate(col)]


def tables_1_4_results(tables: Mapping[str, Any]) -> dict[str, float]:
    """The Tables 1-4 keys of :func:`~bparallel.book.section4.tables.flat_results`
    (``table<k>.<protocol>.<mode>.<task>.h<H>.L<l>.<mean|std>``, k = 1..4)."""
    table_rows(tables, "tables_1_4")
    return {k: v for k, v in flat_results(tables).items()
            if k.startswith("table") and not k.startswith(("table5", "table6"))}


def proxy_claims_results(rows: Sequence[Mapping[str, Any]], *, slow: int = 10
                         ) -> dict[str, float]:
    """The claims of Section 4.2-4.3 read off Tables 1-4, this book's (``rows``: the
    ``tables_1_4`` of :func:`~bparallel.book.section4.tables.evaluate_bundle`, published-code
    mode and protocol) and the published ones (``claims.<claim>.<ours|published>``): the
    single-head copy model's mean mixing time over layers 2-4 and the 16-head one's slowest
    layer (Table 1); per head count the cycle layers slower than ``slow`` steps (Table 2); the
    copy model's layer-1 fidelity with 1 and 16 heads (Table 3); the cycle models' largest
    layer-4 fidelity (Table 4); and that layer-4 fidelity per head count in definition mode."""
    nonnegative_int(slow, "slow")
    out: dict[str, float] = {"claims.slow_steps": slow}
    for who, frame in (("ours", rows), ("published", published_rows())):
        out[f"claims.copy_h1_deep_layers.{who}"] = layer_means(frame, 1, 1)[1:].mean()
        out[f"claims.copy_h16_max.{who}"] = layer_means(frame, 1, 16).max()
        for h in HEADS:
            out[f"claims.cycle_slow_layers.h{h}.{who}"] = (layer_means(frame, 2, h) > slow).sum()
        out[f"claims.copy_l1_fidelity.h1.{who}"] = layer_means(frame, 3, 1)[0]
        out[f"claims.copy_l1_fidelity.h16.{who}"] = layer_means(frame, 3, 16)[0]
        out[f"claims.cycle_l4_fidelity_max.{who}"] = max(layer_means(frame, 4, h)[3]
                                                         for h in HEADS)
    for h in HEADS:
        out[f"claims.cycle_l4_fidelity.definition.h{h}"] = layer_means(
            rows, 4, h, mode="definition")[3]
    return out


def agreement_by_mode(rows: Sequence[Mapping[str, Any]], *, protocol: str = "paper"
                      ) -> dict[str, dict[str, dict[str, float]]]:
    """:func:`~bparallel.book.section4.published.published_agreement` of Tables 1-4 (``rows``) with
    the published ones on ``protocol``, per mode (``"paper"``, ``"definition"``)."""
    return {mode: published_agreement(rows, protocol=protocol, mode=mode)
            for mode in ("paper", "definition")}


def agreement_table(agreement: Mapping[str, Mapping[str, Mapping[str, float]]]
                    ) -> list[dict[str, Any]]:
    """Rows of :func:`agreement_by_mode` as shown: per mode and quantity the cells compared,
    the rank correlation, the median absolute difference and the share of (task, layer)
    pairs whose 1 -> 16-head change goes the published way."""
    return [{"mode": mode, "quantity": q.replace("_", " "), "cells": int(a["cells"]),
             "Spearman ρ": a["spearman"], "median |ours − published|": a["median_abs_difference"],
             "1 → 16 heads, same direction": a["trend_agreement"]}
            for mode, by_q in agreement.items() for q, a in by_q.items()]


def largest_differences_by_quantity(rows: Sequence[Mapping[str, Any]], *, n: int = 5
                                    ) -> dict[str, list[dict[str, Any]]]:
    """Per quantity (mixing time, fidelity), the ``n`` cells of Tables 1-4 (published-code
    mode, published protocol) farthest from the published means
    (:func:`~bparallel.book.section4.published.largest_differences`)."""
    return {q: largest_differences(rows, quantity=q, protocol="paper", mode="paper", n=n)
            for q in ("mixing_time", "fidelity")}


_DIFFERENCE_NAMES = {"published_std": "published std", "ours": "this book",
                     "difference": "this book − published"}


def largest_differences_table(worst: Mapping[str, Sequence[Mapping[str, Any]]]
                              ) -> list[dict[str, Any]]:
    """Rows of :func:`largest_differences_by_quantity` as shown, quantity first."""
    return [{"quantity": q.replace("_", " "),
             **{_DIFFERENCE_NAMES.get(k, k): v for k, v in row.items()}}
            for q, rows in worst.items() for row in rows]


def largest_differences_results(worst: Mapping[str, Sequence[Mapping[str, Any]]]
                                ) -> dict[str, float]:
    """The largest absolute difference per quantity (``largest_difference.<quantity>``) and
    the largest mixing-time cell's published mean, this book's and the published standard
    deviation."""
    for q in ("mixing_time", "fidelity"):
        if not worst.get(q):
            raise ValueError(f"worst has no {q!r} rows: expected "
                             "largest_differences_by_quantity's result")
    out = {f"largest_difference.{q}": abs(rows[0]["difference"]) for q, rows in worst.items()}
    top = worst["mixing_time"][0]
    out["largest_difference.mixing_time.published"] = top["published"]
    out["largest_difference.mixing_time.ours"] = top["ours"]
    out["largest_difference.mixing_time.published_std"] = top["published_std"]
    return out


def differences_results(rows: Sequence[Mapping[str, Any]], *, max_steps: int,
                        seq_len: int) -> dict[str, float]:
    """What the two modes and the two evaluation sets change in Tables 1-4 (``rows`` with
    both modes and both protocols, ``"paper"`` and ``"heldout"``), ``differences.*``:

    - the 16-head copy model's layer-1 mixing time in each mode (``copy_h16_l1``);
    - ``position0_share``: the floor that position 0 adds to a published-code mixing time,
      ``max_steps / seq_len`` (it never moves, so it contributes the cutoff M);
    - the smallest published mixing time and the share of published ones below 4 steps;
    - ``sink_binding``: in how many (protocol, task, heads, layer) cells the sink decides
      the minimum of Algorithm 2 (definition-mode fidelity above published-code mode's; the
      minimum over more nodes can only be lower, Definition 3.5), of how many, by at most
      how much;
    - ``protocol.max_relative``: the largest relative difference of published-code mixing
      times between the held-out and the published protocol's sequences.
    """
    positive_int(max_steps, "max_steps")
    positive_int(seq_len, "seq_len")
    t14 = pd.DataFrame(list(rows))
    need = {("paper", "paper"), ("paper", "definition"), ("heldout", "paper"),
            ("heldout", "definition")}
    have = set(zip(t14["protocol"], t14["mode"], strict=True)) if len(t14) else set()
    if not need <= have:
        raise ValueError(f"rows lack (protocol, mode) {sorted(need - have)}: evaluate both "
                         "protocols ('paper', 'heldout')")
    published = pd.DataFrame(published_rows())
    out: dict[str, float] = {
        "differences.copy_h16_l1.paper": layer_means(t14, 1, 16)[0],
        "differences.copy_h16_l1.definition": layer_means(t14, 1, 16, mode="definition")[0],
        "differences.position0_share": max_steps / seq_len,
    }
    pub_mix = published[published.quantity == "mixing_time"]["mean"]
    out["differences.published_mixing.min"] = pub_mix.min()
    out["differences.published_mixing.share_below_4"] = (pub_mix < 4).mean()
    fid = t14[t14.quantity == "fidelity"].pivot_table(
        index=["protocol", "task", "heads", "layer"], columns="mode", values="mean")
    gap = fid["definition"] - fid["paper"]
    out["differences.sink_binding.cells"] = (gap > 1e-9).sum()
    out["differences.sink_binding.of"] = len(gap)
    out["differences.sink_binding.max_gap"] = gap.max()
    mt = t14[(t14.quantity == "mixing_time") & (t14["mode"] == "paper")].pivot_table(
        index=["task", "heads", "layer"], columns="protocol", values="mean")
    out["differences.protocol.max_relative"] = (
        (mt["heldout"] - mt["paper"]).abs() / mt["paper"]).max()
    return out
