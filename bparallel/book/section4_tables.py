"""What chapters 08 ("Sections 4.2-4.3: mixing-time and fidelity proxies"), 09 ("Fidelity
amplification in trained models") and 11 ("Across seeds") compute, show and record, beyond
Tables 1-6 themselves (:mod:`bparallel.book.tables`, :mod:`bparallel.book.published`) and
the statistics across seeds (:mod:`bparallel.book.seeds`):

- the evaluation of the book's models that the three chapters share (:func:`evaluate_bundle`,
  :func:`evaluate_seeds`);
- chapter 08: Algorithm 1 exactly and by sampling on one sequence
  (:func:`exact_vs_monte_carlo`, :func:`column_sum_rows`), the claims read off Tables 1-4
  (:func:`proxy_claims_results`), their agreement with the published tables
  (:func:`agreement_by_mode`, :func:`largest_differences_by_quantity`) and what the two modes
  and the two evaluation sets change (:func:`differences_results`);
- chapter 09: Tables 5-6 summarised (:func:`amplification_summary`), against the published
  ones (:func:`amplification_agreements`), as a picture (:func:`best_head_panels`);
- chapter 11: the seeds and their machines (:func:`seed_model_rows`, :func:`machines_note`),
  the 1 -> 16-head changes (:func:`effects_results`; shown by
  :func:`~bparallel.book.seeds.effects_table`), the seed trained alone on its machine
  (:func:`odd_seed_comparison`), Tables 5-6 and the claims over seeds.

Table rows are plain dicts keyed by the column a reader sees (numbers formatted with
:data:`FORMATS`); the chapters glue them (:func:`bparallel.book.render.markdown.glue_table`)
under captions in their prose. ``*_results`` return flat dicts under the keys of the
chapters' regression references, computed exactly as the chapters did before (same
operations, same order), so the references hold bit for bit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import nonnegative_int, positive_int
from ..transformer.train import HEADS
from .published import (
    amplification_agreement,
    largest_differences,
    layer_means,
    published_agreement,
    published_rows,
)
from .seeds import changes_by_seed, hardware_kind, odd_seed_out, outside_tail
from .tables import evaluate_models, flat_results
from .verdicts import Outcome, Verdict

#: Algorithm 1 as published samples 500 walks per start node.
WALKS = 500

#: Number formats of the three chapters' tables, by column.
FORMATS = {
    # chapter 08
    "exact": ".4f", f"Monte Carlo ({WALKS} walks)": ".4f", "z": ".2f",
    "smallest column sum": ".3f", "largest column sum": ".3f",
    "Spearman ρ": ".3f", "median |ours − published|": ".3f",
    "1 → 16 heads, same direction": ".0%",
    "published": ".3f", "published std": ".3f", "this book": ".3f",
    "this book − published": ".3f",
    # chapter 09
    "same outcome": ".0%", "Spearman: combined": ".2f", "Spearman: best head": ".2f",
    # chapter 11
    "lowest held-out accuracy": ".4f", "1 head": ".2f", "16 heads": ".2f",
}

#: How chapter 11's tables name the Section 4 quantities (with their units).


def _bundle(bundle: Any) -> None:
    if not hasattr(bundle, "models") or not hasattr(bundle, "profile"):
        raise ValueError(f"bundle is a {type(bundle).__name__}: expected the ModelSet of "
                         "bparallel.transformer.shipped.book_models")


def _rows(tables: Mapping[str, Any], key: str) -> Sequence[Mapping[str, Any]]:
    if not isinstance(tables, Mapping) or key not in tables:
        raise ValueError(f"tables has no {key!r}: expected the result of evaluate_models "
                         "(or evaluate_bundle)")
    return tables[key]


# --------------------------------------------------------------------------- evaluating the models

def evaluate_bundle(
    bundle: Any,
    *,
    protocols: Sequence[str] = ("paper",),
    max_steps: int = 100,
    horizon: int = 100,
    cache_dir: str | os.PathLike | None = None,
    workers: int | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Tables 1-6 (Section 4.2-4.3: Algorithm 1's mixing time, Algorithm 2's minimax
    fidelity, the best head against the combination of Definitions 3.10-3.12) of the models
    a chapter shows (``bundle``: :func:`~bparallel.transformer.shipped.book_models`), on the
    evaluation sets ``protocols`` (``"paper"``: the published protocol's 50 training
    sequences; ``"heldout"``: fresh ones), through the metrics cache ``cache_dir`` (models
    not cached are measured by ``workers`` processes):
    :func:`~bparallel.book.tables.evaluate_models` with the bundle's profile."""
    _bundle(bundle)
    if not protocols:
        raise ValueError("protocols is empty: name at least one evaluation set")
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    return evaluate_models(bundle.models, profile=bundle.profile, protocols=tuple(protocols),
                           max_steps=max_steps, horizon=horizon, cache_dir=cache_dir,
                           workers=workers)


def evaluate_seeds(
    bundle: Any,
    models_dir: str | os.PathLike,
    *,
    max_steps: int = 100,
    horizon: int = 100,
    cache_dir: str | os.PathLike | None = None,
    workers: int | None = None,
) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Tables 1-6 on the published protocol for every seed of the book's models
    (:func:`~bparallel.transformer.shipped.models_by_seed`: the shipped paper-profile seeds,
    or a quick bundle's one seed), keyed by seed; each seed's evaluation sequences are its
    own training data's, as in the published protocol."""
    from ..transformer.shipped import models_by_seed

    _bundle(bundle)
    positive_int(max_steps, "max_steps")
    positive_int(horizon, "horizon")
    return {seed: evaluate_models(m, profile=bundle.profile, protocols=("paper",), seed=seed,
                                  max_steps=max_steps, horizon=horizon, cache_dir=cache_dir,
                                  workers=workers)
            for seed, m in models_by_seed(bundle, models_dir).items()}


# --------------------------------------------------------------------------- chapter 08

def exact_vs_monte_carlo(pattern: Any, head_weights: Any, *, max_steps: int = 100,
                         seed: int = 0) -> list[dict[str, Any]]:
    """Algorithm 1 two ways on one sequence's attention ``pattern`` ``(L, H, T, T)`` with
    the heads weighted by ``head_weights`` ``(L, H)``: per mode (``"paper"``, the published
    sampler; ``"definition"``, the walk of Definition 2.3) and layer, the exact expectation
    of the truncated hitting time (:func:`bparallel.proxies.mixing_time_proxy`, absorbing
    chain) against the mean of :data:`WALKS` sampled walks per start (seeded), and the
    z-score of their difference (the sampled mean's standard error as unit)."""
    from .. import proxies

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
    """The Tables 1-4 keys of :func:`~bparallel.book.tables.flat_results`
    (``table<k>.<protocol>.<mode>.<task>.h<H>.L<l>.<mean|std>``, k = 1..4)."""
    _rows(tables, "tables_1_4")
    return {k: v for k, v in flat_results(tables).items()
            if k.startswith("table") and not k.startswith(("table5", "table6"))}


def proxy_claims_results(rows: Sequence[Mapping[str, Any]], *, slow: int = 10
                         ) -> dict[str, float]:
    """The claims of Section 4.2-4.3 read off Tables 1-4, this book's (``rows``: the
    ``tables_1_4`` of :func:`evaluate_bundle`, published-code mode and protocol) and the
    published ones (``claims.<claim>.<ours|published>``): the single-head copy model's mean
    mixing time over layers 2-4 and the 16-head one's slowest layer (Table 1); per head
    count the cycle layers slower than ``slow`` steps (Table 2); the copy model's layer-1
    fidelity with 1 and 16 heads (Table 3); the cycle models' largest layer-4 fidelity
    (Table 4); and that layer-4 fidelity per head count in definition mode."""
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
    """:func:`~bparallel.book.published.published_agreement` of Tables 1-4 (``rows``) with
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
    (:func:`~bparallel.book.published.largest_differences`)."""
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
    import pandas as pd

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


# --------------------------------------------------------------------------- chapter 09

def tables_5_6_results(tables: Mapping[str, Any]) -> dict[str, float]:
    """The Tables 5-6 keys of :func:`~bparallel.book.tables.flat_results`
    (``table<5|6>.<protocol>.<sample>.<mode>.<task>.h<H>.L<l>.<individual|combined>``)."""
    _rows(tables, "tables_5_6")
    return {k: v for k, v in flat_results(tables).items() if k.startswith(("table5", "table6"))}


def amplification_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Does the combination beat its best head (Definitions 3.10-3.12) in Tables 5-6
    (``rows``: ``tables_5_6`` of :func:`evaluate_bundle`)? ``summary.*``: over the held-out
    means in definition mode, the cells, the cells where the combination wins and the mean
    share of sequences on which it wins; on the one fresh sequence in published-code mode,
    the cells and the wins."""
    import pandas as pd

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
    """:func:`~bparallel.book.published.amplification_agreement` of Tables 5-6 (``rows``)
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
    its held-out means, published-code mode."""
    import pandas as pd

    t56 = pd.DataFrame(list(rows))
    published = pd.DataFrame(published_rows())

    def sel(sample: str) -> Any:
        return t56[(t56["sample"] == sample) & (t56["mode"] == "paper")]

    return {"published (one sequence)": published[published.table.isin([5, 6])],
            "this book, one fresh sequence": sel("fresh"),
            "this book, held-out mean": sel("mean")}


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


# --------------------------------------------------------------------------- chapter 11

def seed_kinds(overview: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Per seed of :func:`~bparallel.transformer.shipped.seed_overview`, the kind of machine
    that trained it (:func:`~bparallel.book.seeds.hardware_kind`: "CPU", "GPU", or several
    joined by "; ")."""
    return {r["seed"]: "; ".join(hardware_kind(m) for m in r["trained on"].split("; "))
            for r in overview}


def seed_model_rows(overview: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of :func:`~bparallel.transformer.shipped.seed_overview` as shown: per seed the
    models, the kind of machine, the machine, torch and the lowest held-out accuracy."""
    kinds = seed_kinds(overview)
    return [{"seed": r["seed"], "models": r["models"], "kind": kinds[r["seed"]],
             **{k: v for k, v in r.items() if k not in ("seed", "models")}} for r in overview]


def machines_note(overview: Sequence[Mapping[str, Any]]) -> str:
    """One paragraph for the top of chapter 11: which seeds each machine (and torch
    version) trained, and, when the machines are not all of one kind, that a difference
    between seeds may come from the seed or the hardware."""
    if not overview:
        raise ValueError("overview is empty: no seed to describe")
    machines: dict[tuple[str, str], list[int]] = {}  # (machine, torch) -> seeds trained there
    for r in overview:
        machines.setdefault((r["trained on"], r["torch"]), []).append(r["seed"])
    text = "**Which models this page shows, and where they were trained.** " + " ".join(
        f"Seed{'s' * (len(seeds) > 1)} {' and '.join(map(str, seeds))}: "
        f"{'; '.join(hardware_kind(m) for m in machine.split('; '))} "
        f"({machine}; torch {torch})." for (machine, torch), seeds in machines.items())
    if len({hardware_kind(m) for (m, _) in machines}) > 1:
        text += (" The seeds were not all trained on one kind of machine: a difference between "
                 "them may come from the seed or from the hardware (see *Seed or machine?* "
                 "below).")
    return text


def effects_results(effects: Mapping[str, Sequence[Mapping[str, Any]]], *, n_seeds: int
                    ) -> dict[str, float]:
    """The values chapter 11 records from :func:`~bparallel.book.seeds.head_count_effects`
    per mode (``effects``: ``{"paper": rows, "definition": rows}``): per (quantity, task,
    layer) the change and whether it survives the seeds
    (``effects.<mode>.<quantity>.<task>.L<l>.<change|survives>``); the survivors per mode,
    the cells, the changes against the claim in definition mode; with ``n_seeds`` >= 2 the
    tests and the survivors after Holm's correction (``effects.<mode>.holm.*``)."""
    positive_int(n_seeds, "n_seeds")
    if set(effects) != {"paper", "definition"}:
        raise ValueError(f"effects has modes {sorted(effects)}: expected 'paper' and "
                         "'definition'")
    out: dict[str, float] = {}
    for mode, rows in effects.items():
        for r in rows:
            base = f"effects.{mode}.{r['quantity']}.{r['task']}.L{r['layer']}"
            out[f"{base}.change"] = r["effect"]
            out[f"{base}.survives"] = int(r["outcome"] == Outcome.AS_CLAIMED)
    survive = {mode: sum(r["outcome"] == Outcome.AS_CLAIMED for r in rows)
               for mode, rows in effects.items()}
    out["effects.paper.survive"] = survive["paper"]
    out["effects.paper.cells"] = len(effects["paper"])
    out["effects.definition.survive"] = survive["definition"]
    out["effects.definition.reversed"] = sum(r["outcome"] == Outcome.AGAINST
                                             for r in effects["definition"])
    if n_seeds >= 2:  # with one seed there are no tests to correct
        for mode, rows in effects.items():
            out[f"effects.{mode}.holm.tests"] = sum(r["p_value"] is not None for r in rows)
            out[f"effects.{mode}.holm.survive"] = sum(r["outcome_holm"] == Outcome.AS_CLAIMED
                                                      for r in rows)
    return out


def odd_seed_comparison(
    overview: Sequence[Mapping[str, Any]],
    by_seed: Mapping[int, Mapping[str, Sequence[Mapping[str, Any]]]],
) -> tuple[int, list[dict[str, Any]]]:
    """The seed to set against the others, and how it compares
    (:func:`~bparallel.book.seeds.odd_seed_out` of the 1 -> 16-head changes per seed): the
    one seed trained alone on its kind of machine when there are 3 seeds or more, else seed
    42; no rows with a single seed (nothing to compare with)."""
    kinds = seed_kinds(overview)
    alone = [seed for seed in kinds if list(kinds.values()).count(kinds[seed]) == 1]
    n_seeds = len(by_seed)
    odd_seed = alone[0] if len(alone) == 1 and n_seeds >= 3 else 42
    return odd_seed, odd_seed_out(changes_by_seed(by_seed), odd_seed) if n_seeds >= 2 else []


def hardware_results(odd: Sequence[Mapping[str, Any]], *, seed: int, n_seeds: int
                     ) -> dict[str, float]:
    """The values chapter 11 records from :func:`odd_seed_comparison` (``hardware.*``): the
    seed, the cells, how many put it outside the others' range (above, below) or between,
    in how many every seed's change has one sign, and the binomial tail of the outside
    count (:func:`~bparallel.book.seeds.outside_tail`). Empty without rows."""
    if not odd:
        return {}
    outside = sum(r["position"] != "between" for r in odd)
    return {"hardware.seed": seed, "hardware.cells": len(odd), "hardware.outside": outside,
            "hardware.between": len(odd) - outside,
            "hardware.above": sum(r["position"] == "above" for r in odd),
            "hardware.below": sum(r["position"] == "below" for r in odd),
            "hardware.same_sign": sum(r["same_sign"] for r in odd),
            "hardware.outside_tail": outside_tail(outside, len(odd), n_seeds)}


def hardware_split(overview: Sequence[Mapping[str, Any]]) -> str:
    """Which seeds were trained on which kind of machine, as a clause: "seed 42 was trained
    on a CPU, seeds 43 and 44 on a GPU" (from :func:`seed_kinds`)."""
    kinds = seed_kinds(overview)
    groups: dict[str, list[int]] = {}
    for seed, kind in kinds.items():
        groups.setdefault(kind, []).append(seed)
    parts = []
    for i, (kind, seeds) in enumerate(sorted(groups.items(), key=lambda kv: min(kv[1]))):
        names = (f"seed {seeds[0]}" if len(seeds) == 1 else
                 "seeds " + ", ".join(map(str, seeds[:-1])) + f" and {seeds[-1]}")
        verb = (" was" if len(seeds) == 1 else " were") + " trained" if i == 0 else ""
        parts.append(f"{names}{verb} on a {kind}")
    return ", ".join(parts)


def interval_results(n_seeds: int, level: float) -> dict[str, float]:
    """The constants behind chapter 11's intervals and its machine check: the Student-t
    quantile of a ``level`` interval over ``n_seeds`` seeds (``t_crit``, its degrees of
    freedom ``t_dof``), and the chance that one given seed lies outside the range of the
    others in a cell when seeds are exchangeable (``hardware.outside_chance``: 2 / n)."""
    from scipy import stats

    positive_int(n_seeds, "n_seeds")
    dof = max(n_seeds - 1, 1)
    return {"t_dof": dof, "t_crit": float(stats.t.ppf(0.5 + level / 2, dof)),
            "hardware.outside_chance": 2 / n_seeds}


def hardware_markdown(odd: Sequence[Mapping[str, Any]], *, seed: int,
                      overview: Sequence[Mapping[str, Any]], name: str = "tbl-seeds-hardware",
                      ) -> str:
    """:func:`odd_seed_comparison`'s rows as a numbered, captioned MyST table (its columns
    and caption name the seeds), or a note when there is no other seed to compare with."""
    from .render.markdown import table

    if not odd:
        return "```{note}\nWith one seed there is nothing to compare it with.\n```\n"
    others = ", ".join(str(r["seed"]) for r in overview if r["seed"] != seed)
    rows = [{"quantity": r["quantity"].replace("_", " "), "task": r["task"], "layer": r["layer"],
             f"seed {seed}": r["change"], f"seeds {others}: lowest": r["low"],
             f"seeds {others}: highest": r["high"], f"seed {seed} is": r["position"],
             "one sign in all seeds": r["same_sign"]} for r in odd]
    return table(rows, name=name,
                 formats={f"seed {seed}": ".2f", f"seeds {others}: lowest": ".2f",
                          f"seeds {others}: highest": ".2f"},
                 caption=f"Does seed {seed} ({seed_kinds(overview)[seed]}) stand apart? The "
                         "change from 1 to 16 heads per quantity, task and layer "
                         "(published-code mode; steps for mixing time, percentage points for "
                         "fidelity) in that seed, beside the lowest and highest change among "
                         "the other seeds, where it lies among them, and whether every seed's "
                         "change has the same sign.")


def seed_amplification_results(amplification: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Tables 5-6 over seeds (rows of :func:`~bparallel.book.seeds.amplification_across_seeds`):
    the cells, those where the combination wins in every seed and in none."""
    return {"amplification.cells": len(amplification),
            "amplification.every_seed": sum(r["share"] == 1 for r in amplification),
            "amplification.no_seed": sum(r["share"] == 0 for r in amplification)}


def seed_amplification_table(amplification: Sequence[Mapping[str, Any]]
                             ) -> list[dict[str, Any]]:
    """Per task and multi-head count, per layer: in how many seeds the combination beats
    its best single head ("2 of 3")."""
    shares = []
    for task in ("copy", "cycle"):
        for heads in HEADS[1:]:
            row: dict[str, Any] = {"task": task, "heads": heads}
            for r in amplification:
                if (r["task"], r["heads"]) == (task, heads):
                    row[f"layer {r['layer']}"] = f"{r['wins']} of {r['seeds']}"
            shares.append(row)
    return shares


_CLAIM_KEYS = {"more heads mix faster (Tables 1-2)": "mixing",
               "more heads keep more fidelity (Tables 3-4)": "fidelity",
               "the combination beats its best head (Tables 5-6)": "amplification"}


def seed_claims_results(claims: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The values chapter 11 records from :func:`~bparallel.book.seeds.surviving_claims`:
    the (claim, task) units, how many hold, hold with conditions or fail (under the keys'
    first names, ``claims.survives``, ``claims.partly``, ``claims.fails``), and per claim
    and task the units that hold and of how many (``claims.<claim>.<task>.<holds|units>``;
    ``holds`` after Holm's correction, ``holds_uncorrected`` before it), and the verdicts:
    ``verdict.<claim>.<task>`` and, across tasks, ``verdict.<claim>`` (the index in
    :class:`Verdict`; what the introduction's findings are checked against)."""
    out: dict[str, float] = {"claims.units": len(claims)}
    for key, verdict in (("survives", Verdict.HOLDS), ("partly", Verdict.HOLDS_WITH_CONDITIONS),
                         ("fails", Verdict.FAILS)):
        out[f"claims.{key}"] = sum(c["verdict"] is verdict for c in claims)
    for c in claims:
        if c["claim"] not in _CLAIM_KEYS:
            raise ValueError(f"claims holds an unknown claim {c['claim']!r}")
        key = _CLAIM_KEYS[c["claim"]]
        out[f"claims.{key}.{c['task']}.holds"] = c["holds"]
        out[f"claims.{key}.{c['task']}.units"] = c["units"]
        if "holds_uncorrected" in c:
            out[f"claims.{key}.{c['task']}.holds_uncorrected"] = c["holds_uncorrected"]
        out[f"verdict.{key}.{c['task']}"] = list(Verdict).index(c["verdict"])
    from .section4 import across_tasks

    for key in sorted(set(_CLAIM_KEYS.values())):
        mine = [c["verdict"] for c in claims if _CLAIM_KEYS[c["claim"]] == key]
        if mine:
            out[f"verdict.{key}"] = list(Verdict).index(across_tasks(mine))
    return out


def _holds(c: Mapping[str, Any]) -> str:
    """"2 of 4 (3 uncorrected)": the units that hold after Holm's correction, and before it
    where that differs."""
    text = f"{c['holds']} of {c['units']}"
    raw = c.get("holds_uncorrected", c["holds"])
    return text if raw == c["holds"] else f"{text} ({raw} uncorrected)"


def seed_claims_table(claims: Sequence[Mapping[str, Any]],
                      claims_definition: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The claims over seeds with the published code's walk and fidelity (``claims``) beside
    the definitions' (``claims_definition``), one row per (claim, task): the units that hold
    after Holm's correction (and, in brackets, by their own intervals, uncorrected) and the
    verdict in each mode."""
    if len(claims) != len(claims_definition):
        raise ValueError(f"claims ({len(claims)}) and claims_definition "
                         f"({len(claims_definition)}) must pair up row by row")
    return [{"claim": c["claim"], "task": c["task"], "seeds": c["seeds"],
             "published code: holds in": _holds(c),
             "verdict: published code": c["verdict"],
             "definitions: holds in": _holds(d),
             "verdict: definitions": d["verdict"]}
            for c, d in zip(claims, claims_definition, strict=True)]
