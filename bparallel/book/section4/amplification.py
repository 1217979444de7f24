"""What chapter 09 ("Fidelity amplification in trained models") computes, shows and
records beyond Tables 5-6 themselves (:mod:`bparallel.book.section4.tables`,
:mod:`bparallel.book.section4.published`): Tables 5-6 summarised
(:func:`amplification_summary`), against the published ones
(:func:`amplification_agreements`), as a picture (:func:`best_head_panels`), and cycle's
layer 4 (:func:`cycle_l4_results`).

Table rows are plain dicts keyed by the column a reader sees (numbers formatted with
:data:`FORMATS`); ``*_results`` return flat dicts under the keys of the chapter's regression
references, computed exactly as the chapter did before, so the references hold bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .published import amplification_agreement, published_rows, verdict
from .tables import flat_results, table_rows

#: Number formats of the chapter's tables, by column.
FORMATS = {
    "same outcome": ".0%", "Spearman: combined": ".2f", "Spearman: best head": ".2f",
}


def tables_5_6_results(tables: Mapping[str, Any]) -> dict[str, float]:
    """The Tables 5-6 keys of :func:`~bparallel.book.section4.tables.flat_results`
    (``table<5|6>.<protocol>.<sample>.<mode>.<task>.h<H>.L<l>.<individual|combined>``)."""
    table_rows(tables, "tables_5_6")
    return {k: v for k, v in flat_results(tables).items() if k.startswith(("table5", "table6"))}


def amplification_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Does the combination beat its best head (Definitions 3.10-3.12) in Tables 5-6
    (``rows``: ``tables_5_6`` of :func:`~bparallel.book.section4.tables.evaluate_bundle`)?
    ``summary.*``: over the held-out means in definition mode, the cells, the cells where the
    combination wins and the mean share of sequences on which it wins; on the one fresh
    sequence in published-code mode, the cells and the wins."""
    t56 = pd.DataFrame(list(rows))
    if not {"sample", "mode", "combined", "individual"} <= set(t56.columns):
        raise ValueError("rows are not Tables 5-6 rows (tables_5_6 of evaluate_models)")
    sel = t56[(t56["sample"] == "mean") & (t56["mode"] == "definition")]
    fresh = t56[(t56["sample"] == "fresh") & (t56["mode"] == "paper")]
    return {
        "summary.definition.mean.cells": len(sel),
        "summary.definition.mean.cells_combined_wins": (sel.combined > sel.individual).sum(),
        "summary.definition.mean.share_sequences_combined_wins":
            sel.combined_exceeds_fraction.mean(),
        "summary.paper.fresh.cells": len(fresh),
        "summary.paper.fresh.cells_combined_wins": (fresh.combined > fresh.individual).sum(),
    }


#: The Tables 5-6 variants chapter 09 compares with the published ones: (sample, protocol).
SAMPLES = (("fresh", "fresh"), ("mean", "heldout"))


def amplification_agreements(rows: Sequence[Mapping[str, Any]]
                             ) -> dict[tuple[str, str], dict[str, float]]:
    """:func:`~bparallel.book.section4.published.amplification_agreement` of Tables 5-6 (``rows``)
    with the published ones, keyed (sample, mode): the one fresh sequence of the published
    protocol and the held-out means, each in both modes."""
    return {(sample, mode): amplification_agreement(rows, sample=sample, protocol=protocol,
                                                    mode=mode)
            for sample, protocol in SAMPLES for mode in ("paper", "definition")}


def amplification_agreement_table(amp: Mapping[tuple[str, str], Mapping[str, float]]
                                  ) -> list[dict[str, Any]]:
    """Rows of :func:`amplification_agreements` as shown: per sample and mode the cells, the
    combination's wins (published, here), the share of cells with the same outcome and the
    rank correlations."""
    return [{"sample": sample, "mode": mode, "cells": int(a["cells"]),
             "combined wins: published": int(a["published_wins"]),
             "combined wins: this book": int(a["ours_wins"]),
             "same outcome": a["verdict_agreement"],
             "Spearman: combined": a["spearman_combined"],
             "Spearman: best head": a["spearman_individual"]} for (sample, mode), a in amp.items()]


def amplification_agreement_results(amp: Mapping[tuple[str, str], Mapping[str, float]]
                                    ) -> dict[str, float]:
    """:func:`amplification_agreements` as flat keys
    ``amplification_agreement.<sample>.<mode>.<measure>``."""
    return {f"amplification_agreement.{sample}.{mode}.{k}": v
            for (sample, mode), a in amp.items() for k, v in a.items()}


def best_head_panels(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The panels of :func:`~bparallel.book.render.plotting.plot_best_head_vs_combined`
    (pandas frames by title): the published Tables 5-6, this book's one fresh sequence and
    its held-out means, published-code mode; each cell's ``outcome`` is
    :func:`~bparallel.book.section4.published.verdict` (+1 the combination wins, 0 a tie,
    -1 it loses, at the published precision), which the figure counts."""
    t56 = pd.DataFrame(list(rows))
    published = pd.DataFrame(published_rows())

    def with_outcome(frame: Any) -> Any:
        return frame.assign(outcome=[verdict(float(c), float(i)) for c, i in
                                     zip(frame.combined, frame.individual, strict=True)])

    def sel(sample: str) -> Any:
        return t56[(t56["sample"] == sample) & (t56["mode"] == "paper")]

    return {"published (one sequence)": with_outcome(published[published.table.isin([5, 6])]),
            "this book, one fresh sequence": with_outcome(sel("fresh")),
            "this book, held-out mean": with_outcome(sel("mean"))}


def cycle_l4_results(rows: Sequence[Mapping[str, Any]], *, protocol: str = "heldout"
                     ) -> dict[str, float]:
    """The cycle models' last layer, where the sink decides published-code fidelity: the
    largest published value of Table 6's layer 4 (best head or combination;
    ``published.cycle_l4.max``) and this book's combined fidelity there in definition mode,
    mean over ``protocol``'s sequences, per head count
    (``definition.cycle_l4.combined.h<H>``)."""
    pub = [r for r in published_rows() if r["table"] == 6 and r["layer"] == 4]
    out: dict[str, float] = {"published.cycle_l4.max": max(
        max(r["individual"], r["combined"]) for r in pub)}
    mine = sorted((r for r in rows if (r["sample"], r["protocol"], r["mode"], r["task"],
                                       r["layer"]) == ("mean", protocol, "definition",
                                                       "cycle", 4)), key=lambda r: r["heads"])
    if not mine:
        raise ValueError(f"rows have no cycle layer-4 held-out means for protocol={protocol!r}")
    for r in mine:
        out[f"definition.cycle_l4.combined.h{r['heads']}"] = r["combined"]
    return out
