"""Chapter 06 ("The claims of Section 3 on graph ensembles"): its tables and recorded values.

The experiments are :mod:`~bparallel.book.claims.fidelity_claims`'s; this module turns their
results into what the chapter shows and records, section by section, and is tested by hand
(``tests/book/claims/test_claims_chapters.py``):

- amplification of minimax fidelity (Section 3.1, Defs. 3.11-3.12, Example 3.13):
  :func:`search_results` on the head-set searches of
  :func:`~bparallel.book.claims.fidelity_claims.fidelity_search`, :func:`horizon_study` (random
  8-node pairs against the horizon ``T``), :func:`feature_study` (which pairs amplify:
  overlap, complementarity and the cross-head pathways of Remark 3.7), and
  :func:`top_results` / :func:`top_pair` for the most amplifying pairs;
- the mixing-fidelity trade-off: :func:`family_table` and :func:`tradeoff_results` on a
  :func:`~bparallel.book.claims.fidelity_claims.tradeoff_table`.

Tables are DataFrames labelled for display (:func:`~bparallel.book.claims.labels.labelled`),
glued by :func:`~bparallel.book.render.markdown.glue_frame` under captions in the prose, with
:func:`column_formats`; ``results`` dicts hold the recorded values under the chapter's keys.
Their values depend on exact ties among fidelities (Spearman ranks, worst-node argmins), so
they are computed here by the same operations, in the same order, as the chapter first did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ... import graphs
from ...cross_head import (
    new_walk_share,
    new_walk_share_at_limiting,
    new_walk_shares,
)
from ...ensembles import (
    FAMILIES,
    FidelityComparison,
    random_head_stacks,
)
from ...examples import example_3_8, example_3_13
from ..render.markdown import column_label
from ..verdicts import Verdict
from .ensemble_design import EnsembleDesign
from .fidelity_claims import (
    AMP_TOL,
    FEATURES,
    HORIZON_COLUMNS,
    amplification_features,
    amplification_table,
    amplified_by_jaccard,
    dominated_fraction,
    feature_correlations,
    horizon_sweep,
    remark_3_7_by_size,
    tradeoff_correlation,
)
from .head_sets import store_entry
from .labels import labelled, lazy_pandas

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "HISTOGRAM_KEYS",
    "SPEARMAN_KEYS",
    "TOP_KEYS",
    "FeatureStudy",
    "HorizonStudy",
    "REMARK_3_7_KEYS",
    "Remark37Study",
    "column_formats",
    "complementarity_results",
    "family_table",
    "feature_study",
    "histogram_sets",
    "horizon_study",
    "remark_3_7_examples",
    "remark_3_7_study",
    "search_results",
    "top_pair",
    "top_results",
    "top_table",
    "tradeoff_results",
]

Store = dict[tuple[str, int, int], tuple[NDArray[np.float64], FidelityComparison]]

#: The pairs of the histograms figure: ``(search, n)``, two heads each.
HISTOGRAM_KEYS = (("exhaustive", 5), ("random", 10), ("random", 20))
#: The searches whose most amplifying pair the chapter shows and draws, in its order.
TOP_KEYS = (("exhaustive", 4, 2), ("exhaustive", 5, 2), ("random", 6, 2), ("random", 8, 2))
#: The recorded key of each feature's Spearman correlation (kept from the first results files).
SPEARMAN_KEYS = {"jaccard": "jaccard", "complementarity": "complementarity",
                 "mixed_sequence_share": "mixed-sequence_share",
                 "new_walk_share": "new-walk_share",
                 "new_walk_share_limiting": "new-walk_share_limiting"}


def column_formats(frame: pd.DataFrame) -> dict[str, str]:
    """Formats of a labelled frame's columns, by the label
    :func:`~bparallel.book.render.markdown.column_label` shows (levels joined by " · "):
    shares in % with one decimal, mixing times (``T_mix · n``) as whole steps; other columns
    are left to ``decimals``."""
    out = {}
    for c in map(column_label, frame.columns):
        if c.endswith("(%)"):
            out[c] = ".1f"
        elif c.startswith("T_mix · "):
            out[c] = ".0f"
    return out


# --------------------------------------------------------- amplification (Section 1)
def search_results(store: Store) -> dict[str, Any]:
    """The chapter's ``fidelity.<search>.n<n>.H<H>.*`` values of a
    :func:`~bparallel.book.claims.fidelity_claims.fidelity_search` store: the share of head sets
    amplified (gain above :data:`~bparallel.book.claims.fidelity_claims.AMP_TOL`) with equal and
    with the best grid weights, and the largest, mean and smallest amplification."""
    out: dict[str, Any] = {}
    for (search, n, H), (_, fc) in store.items():
        key = f"fidelity.{search}.n{n}.H{H}"
        out.update({f"{key}.frac_amplified_uniform": (fc.amp_uniform > AMP_TOL).mean(),
                    f"{key}.frac_amplified_best": (fc.amp_best > AMP_TOL).mean(),
                    f"{key}.max_amp_uniform": fc.amp_uniform.max(),
                    f"{key}.max_amp_best": fc.amp_best.max(),
                    f"{key}.mean_amp_uniform": fc.amp_uniform.mean(),
                    f"{key}.min_amp_uniform": fc.amp_uniform.min()})
    return out


def histogram_sets(
    store: Store, keys: tuple[tuple[str, int], ...] = HISTOGRAM_KEYS
) -> dict[str, FidelityComparison]:
    """The comparisons of the pairs of heads of ``keys`` (``(search, n)``), by the label the
    histograms figure gives them (``"random, n = 10"``)."""
    return {f"{search}, n = {n}": store_entry(store, (search, n, 2))[1] for search, n in keys}


@dataclass(frozen=True)
class HorizonStudy:
    """Amplification of the same random pairs at each horizon ``T``: :attr:`comparisons`
    (``{T: FidelityComparison}``) and :attr:`table` (per ``T``, the columns of
    :data:`~bparallel.book.claims.fidelity_claims.HORIZON_COLUMNS`)."""

    comparisons: dict[int, FidelityComparison]
    table: pd.DataFrame

    def results(self) -> dict[str, float]:
        """``fidelity.horizon.T<T>.*``: the share amplified with equal weights and the
        largest amplification with the best weights, per horizon."""
        out: dict[str, float] = {}
        for T, fc in self.comparisons.items():
            out[f"fidelity.horizon.T{T}.frac_amplified_uniform"] = (
                fc.amp_uniform > AMP_TOL).mean()
            out[f"fidelity.horizon.T{T}.max_amp_best"] = fc.amp_best.max()
        return out


def horizon_study(design: EnsembleDesign, rng: np.random.Generator) -> HorizonStudy:
    """``design.num_pairs`` random pairs on ``design.horizon_sweep_n`` nodes (drawn from
    ``rng`` by :func:`~bparallel.ensembles.random_head_stacks`), compared at each horizon of
    ``design.horizons`` on the weight grid of ``design.grid_steps``
    (:func:`~bparallel.book.claims.fidelity_claims.horizon_sweep`)."""
    A8, _ = random_head_stacks(design.num_pairs, 2, design.horizon_sweep_n,
                               design.search_densities, rng)
    hz_fc = horizon_sweep(graphs.diffusion_matrix_from_adjacency(A8), design.horizons,
                          grid_steps=design.grid_steps)
    return HorizonStudy(hz_fc, amplification_table(hz_fc, ("horizon",), HORIZON_COLUMNS))


@dataclass(frozen=True)
class FeatureStudy:
    """Which equal-weight pairs amplify: :attr:`features` (one row per pair,
    :func:`~bparallel.book.claims.fidelity_claims.amplification_features`), :attr:`rho` (each
    feature's Spearman correlation with the amplification) and :attr:`by_jaccard` (the share
    amplified per bin of edge overlap)."""

    features: pd.DataFrame
    rho: dict[str, float]
    by_jaccard: pd.Series

    def table(self) -> pd.DataFrame:
        """Mean of each feature over the pairs that do and do not amplify, and its Spearman
        correlation with the amplification; labelled."""
        by = self.features.groupby("amplified")[list(FEATURES)].mean()
        by.loc["Spearman ρ with amplification"] = lazy_pandas().Series(self.rho)
        return labelled(by)

    def results(self) -> dict[str, float]:
        """``fidelity.features.*``: the Spearman correlations, the overlap bin where pairs
        amplify most often, the share of amplifying pairs with no signal on new walks and
        their mean new-walk share, the share amplified beyond complementarity and the mean
        mixed-sequence share."""
        feat, by_jaccard = self.features, self.by_jaccard
        amp_new = feat.loc[feat.amplified, "new_walk_share"]
        peak = by_jaccard.idxmax()
        out: dict[str, float] = {}
        for name, r in self.rho.items():
            out[f"fidelity.features.spearman.{SPEARMAN_KEYS[name]}"] = r
        out.update({"fidelity.features.jaccard_peak.left": peak.left,
                    "fidelity.features.jaccard_peak.right": peak.right,
                    "fidelity.features.jaccard_peak.frac_amplified": by_jaccard.max()})
        out.update({"fidelity.features.new_walk_share_zero_among_amplified":
                        (amp_new < 1e-9).mean(),
                    "fidelity.features.new_walk_share_mean_among_amplified": amp_new.mean(),
                    "fidelity.features.amp_above_complementarity":
                        (feat.amplification > feat.complementarity + 1e-9).mean(),
                    **complementarity_results(feat),
                    "fidelity.features.mixed_sequence_share_mean":
                        feat.mixed_sequence_share.mean()})
        return out


def complementarity_results(feat: pd.DataFrame) -> dict[str, float]:
    """Complementarity as a condition of amplification, neither sufficient nor necessary:
    the share of complementary pairs (complementarity above ``AMP_TOL``) that amplify,
    the share of amplifying pairs with none, and the share of amplifying pairs whose
    amplification exceeds their complementarity (``fidelity.features.*``)."""
    complementary = feat.complementarity > AMP_TOL
    amplified = feat.loc[feat.amplified]
    return {"fidelity.features.complementary.frac_amplified":
                feat.amplified[complementary].mean(),
            "fidelity.features.complementary.count": int(complementary.sum()),
            "fidelity.features.amplified.frac_zero_complementarity":
                (amplified.complementarity <= AMP_TOL).mean(),
            "fidelity.features.amplified.frac_above_complementarity":
                (amplified.amplification > amplified.complementarity + 1e-9).mean()}


def feature_study(
    adjacency_pairs: NDArray[np.float64], fc: FidelityComparison, horizon: int, bins: int = 10
) -> FeatureStudy:
    """:class:`FeatureStudy` of the pairs ``adjacency_pairs`` ``(sets, 2, n, n)`` and their
    comparison ``fc`` at ``horizon``, the overlap cut into ``bins`` equal bins."""
    feat = amplification_features(adjacency_pairs, fc, horizon)
    return FeatureStudy(feat, feature_correlations(feat), amplified_by_jaccard(feat, bins=bins))


#: The equal-weight pairs by graph size on which Remark 3.7 is read (n = 5, 10, 20).
REMARK_3_7_KEYS = (("exhaustive", 5, 2), ("random", 10, 2), ("random", 20, 2))


@dataclass(frozen=True)
class Remark37Study:
    """Remark 3.7 read where amplification must happen, by graph size: :attr:`table`
    (:func:`~bparallel.book.claims.fidelity_claims.remark_3_7_by_size`, one row per ``n``)."""

    table: pd.DataFrame

    def verdicts(self) -> dict[str, Verdict]:
        """The verdicts its numbers decide, by the reading rule:

        - ``"paper"``, Remark 3.7 as stated, cross-head pathways *contribute* (an existential
          reading: "promotes additional information propagation pathways"): *holds* where,
          at some size, the amplifying pairs carry more of their limiting nodes' signal on
          new walks than the other pairs (the two t-intervals apart) and some amplifying
          pairs carry some at every size; else *not supported*;
        - ``"every_pair"``, the book's stronger reading, every amplification comes from
          them: *fails* where at some size amplifying pairs with no signal on new walks at
          the limiting nodes are certain to exist (the Wilson interval of their share above
          0), *holds* where none are seen at any size."""
        t = self.table
        apart = (t.mean_limiting_amplified_low > t.mean_limiting_not_amplified_high).any()
        some = (t.zero_limiting_amplified < 1).all()
        paper = Verdict.HOLDS if apart and some else Verdict.NOT_SUPPORTED
        every = Verdict.FAILS if (t.zero_limiting_amplified_low > 0).any() else Verdict.HOLDS
        return {"paper": paper, "every_pair": every}

    def results(self) -> dict[str, float]:
        """``fidelity.remark37.n<n>.<column>`` for every column, the sizes in order
        (``fidelity.remark37.size<i>``), and each verdict's index in
        :class:`~bparallel.book.verdicts.Verdict` (``verdict.remark_3_7.<reading>``)."""
        out: dict[str, float] = {f"fidelity.remark37.n{n}.{col}": float(v)
                                 for n, row in self.table.iterrows() for col, v in row.items()}
        out.update({f"fidelity.remark37.size{i}": int(n) for i, n in enumerate(self.table.index)})
        out.update({f"verdict.remark_3_7.{k}": list(Verdict).index(v)
                    for k, v in self.verdicts().items()})
        return out


def remark_3_7_study(store: Store, horizon: int) -> Remark37Study:
    """:class:`Remark37Study` of the equal-weight pairs of :data:`REMARK_3_7_KEYS` in a
    :func:`~bparallel.book.claims.fidelity_claims.fidelity_search` store, at ``horizon``."""
    return Remark37Study(remark_3_7_by_size(store, list(REMARK_3_7_KEYS), horizon))


def remark_3_7_examples(horizon: int) -> dict[str, float]:
    """The new-walk share on the paper's examples (equal weights), at the nodes that limit
    the best head and at the combination's worst node: Example 3.8 (``u``, whose signal
    travels only along ``u -> v -> tau``, and ``v`` limit head 1; the worst node is ``v``:
    1/2 and 0), Example 3.13 with the paper's head 2 and with the code's
    (``fidelity.remark37.<example>.{limiting,worst}``), and Example 3.8's share at ``u``."""
    out: dict[str, float] = {}
    for name, ex in (("example_3_8", example_3_8()), ("example_3_13", example_3_13("paper")),
                     ("example_3_13_code", example_3_13("code"))):
        D = ex.deltas
        out[f"fidelity.remark37.{name}.limiting"] = float(
            new_walk_share_at_limiting(D, ex.beta, horizon))
        out[f"fidelity.remark37.{name}.worst"] = float(new_walk_share(D, ex.beta, horizon)[0])
        if name == "example_3_8":
            out["fidelity.remark37.example_3_8.u"] = float(
                new_walk_shares(D, ex.beta, horizon)[ex.index("u")])
    return out


def top_table(top: pd.DataFrame) -> pd.DataFrame:
    """A :func:`~bparallel.book.claims.fidelity_claims.top_amplifying` table for display (without
    the pair's index in the store); labelled."""
    return labelled(top.drop(columns="pair"))


def top_results(top: pd.DataFrame) -> dict[str, float]:
    """``fidelity.top.n<n>.amp_uniform``: the largest equal-weight amplification per size."""
    return {f"fidelity.top.n{n}.amp_uniform": amp for n, amp in zip(top.n, top.amplification,
                                                                    strict=True)}


def top_pair(
    store: Store, top: pd.DataFrame, i: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The ``i``-th most amplifying pair of a
    :func:`~bparallel.book.claims.fidelity_claims.top_amplifying` table made with
    :data:`TOP_KEYS`: its adjacency ``(2, n, n)`` and the heads' ``phi_min``."""
    if not 0 <= i < len(top):
        raise ValueError(f"i={i}: top has {len(top)} rows")
    row = top.iloc[i]
    A, fc = store_entry(store, (row.search, int(row.n), 2))
    return A[row.pair], fc.heads[row.pair]


# ------------------------------------------------------------------ trade-off (Section 2)
def family_table(trade: pd.DataFrame, families: tuple[str, ...] = FAMILIES) -> pd.DataFrame:
    """Exact mixing time and minimax fidelity per family (rows) and size n (columns) of a
    :func:`~bparallel.book.claims.fidelity_claims.tradeoff_table`; labelled."""
    fam = trade[trade.kind.isin(families)].pivot(index="kind", columns="n",
                                                 values=["t_mix", "phi_min"])
    return labelled(fam)


def tradeoff_results(trade: pd.DataFrame, families: tuple[str, ...] = FAMILIES) -> dict[str, Any]:
    """``tradeoff.n<n>.*`` of a :func:`~bparallel.book.claims.fidelity_claims.tradeoff_table`: per
    size the Spearman correlation of ``T_mix`` and ``phi_min`` among random graphs, the share
    of them Pareto-dominated by a family, and each family's ``T_mix`` and ``phi_min``."""
    rho = tradeoff_correlation(trade)            # random graphs, per n
    dominated = dominated_fraction(trade, families=families)
    out: dict[str, Any] = {}
    for n in rho:
        out[f"tradeoff.n{n}.spearman_random"] = rho[n]
        out[f"tradeoff.n{n}.frac_random_dominated_by_families"] = dominated[n]
        for fam in families:
            row = trade[(trade.n == n) & (trade.kind == fam)].iloc[0]
            out[f"tradeoff.n{n}.{fam}.T_mix"] = row.t_mix
            out[f"tradeoff.n{n}.{fam}.phi_min"] = row.phi_min
    return out
