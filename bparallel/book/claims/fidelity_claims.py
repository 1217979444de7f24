"""The claims of Section 3 tested on graph ensembles: minimax-fidelity amplification
(Defs. 3.11-3.12) in head-set searches and over the horizon, what explains it, and the
trade-off between mixing and fidelity.

One function per experiment, each returning a pandas DataFrame (columns named as in
:data:`~bparallel.book.claims.labels.LABELS`) and taking an explicit ``seed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ... import fidelity, graphs, markov, ranks
from ..._checks import positive_int
from ...cross_head import (
    cross_head_share,
    new_walk_share,
    new_walk_share_at_limiting,
    node_best_head_gain,
)
from ...ensembles import (
    FAMILIES,
    FidelityComparison,
    compare_fidelity,
    edge_jaccard,
    family_adjacency,
    random_head_stacks,
)
from .head_sets import over_head_sets, per_H, store_entry
from .labels import lazy_pandas

if TYPE_CHECKING:
    import pandas as pd

#: Amplification counts only above this (``phi_min`` gains of 1e-9 or less are rounding).
AMP_TOL = 1e-9

#: Columns of :func:`amplification_table` for the head-set searches of Section 3.1.
SEARCH_COLUMNS = (
    "head_sets", "amplified_uniform_pct", "mean_amp_uniform", "max_amp_uniform",
    "amplified_best_pct", "max_amp_best", "worst_nodes_differ_pct", "mean_complementarity",
)
#: Columns of :func:`amplification_table` for the horizon sweep.
HORIZON_COLUMNS = (
    "amplified_uniform_pct", "amplified_best_pct", "max_amp_best", "mean_best_head_phi_min",
)
#: Candidate explanations of amplification in :func:`amplification_features`.
FEATURES = ("jaccard", "complementarity", "mixed_sequence_share", "new_walk_share",
            "new_walk_share_limiting")



def fidelity_search(
    keys: list[tuple[str, int, int]],
    horizon: int,
    *,
    grid_steps: int | dict[int, int] = 10,
    num: int | dict[int, int] | None = None,
    densities: ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> dict[tuple[str, int, int], tuple[NDArray[np.float64], FidelityComparison]]:
    """:func:`compare_fidelity` (Section 3.1) on the head sets of each ``(search, n, H)``.

    As :func:`mixing_search`, on the diffusion matrices (Eq. 21) of the same head sets.
    """
    return over_head_sets(keys, num, densities, seed, lambda A, H: compare_fidelity(
        graphs.diffusion_matrix_from_adjacency(A), horizon,
        grid_steps=per_H(grid_steps, H, "grid_steps")))


def amplification_summary(fc: FidelityComparison) -> dict[str, float]:
    """Summary of a :func:`compare_fidelity` result: how often and how much the combination
    amplifies minimax fidelity (Defs. 3.11-3.12, gains above ``AMP_TOL``), how often the
    heads' worst nodes differ, the mean :func:`node_best_head_gain` and best-head ``phi_min``."""
    return {
        "head_sets": len(fc.heads),
        "amplified_uniform_pct": 100 * (fc.amp_uniform > AMP_TOL).mean(),
        "mean_amp_uniform": fc.amp_uniform.mean(),
        "max_amp_uniform": fc.amp_uniform.max(),
        "amplified_best_pct": 100 * (fc.amp_best > AMP_TOL).mean(),
        "max_amp_best": fc.amp_best.max(),
        "worst_nodes_differ_pct": 100 * (np.ptp(fc.node[..., :-1].argmin(-1), axis=-1) > 0).mean(),
        "mean_complementarity": node_best_head_gain(fc.node).mean(),
        "mean_best_head_phi_min": fc.best_head.mean(),
    }


def amplification_table(
    comparisons: dict, names: tuple[str, ...], columns: tuple[str, ...] = SEARCH_COLUMNS
) -> pd.DataFrame:
    """:func:`amplification_summary` of each comparison, indexed by its key.

    ``comparisons`` maps keys (tuples named by ``names``, or scalars when there is one
    name) to :class:`FidelityComparison` or ``(adjacency, FidelityComparison)`` values.
    """
    names = tuple(names)
    rows = []
    for key, value in comparisons.items():
        fc = value[1] if isinstance(value, tuple) else value
        key = key if isinstance(key, tuple) else (key,)
        if len(key) != len(names):
            raise ValueError(f"key {key} does not match names {names}")
        summary = amplification_summary(fc)
        bad = [c for c in columns if c not in summary]
        if bad:
            raise ValueError(f"unknown columns {bad}; valid: {list(summary)}")
        rows.append({**dict(zip(names, key, strict=True)), **{c: summary[c] for c in columns}})
    return lazy_pandas().DataFrame(rows).set_index(list(names))


def horizon_sweep(
    D_heads: ArrayLike, horizons: ArrayLike, *, grid_steps: int = 10
) -> dict[int, FidelityComparison]:
    """:func:`compare_fidelity` of the same head stacks at each horizon ``T``: ``{T: result}``."""
    return {T: compare_fidelity(D_heads, T, grid_steps=grid_steps)
            for T in np.atleast_1d(horizons).tolist()}


def amplification_features(
    adjacency_pairs: ArrayLike, fc: FidelityComparison, horizon: int
) -> pd.DataFrame:
    """Candidate explanations of equal-weight amplification, one row per pair of heads.

    ``adjacency_pairs`` ``(sets, 2, n, n)`` and its :func:`compare_fidelity` result ``fc``.
    Columns: ``amplification`` (``fc.amp_uniform``), ``amplified``, ``jaccard``
    (:func:`edge_jaccard`), ``complementarity`` (:func:`node_best_head_gain`),
    ``mixed_sequence_share`` (:func:`cross_head_share`, Remark 3.7), ``new_walk_share``
    (:func:`new_walk_share`, at the combination's worst node), ``new_walk_share_limiting``
    (:func:`new_walk_share_at_limiting`, at the nodes that limit the best head) and
    ``t_star``, the worst node's optimal time.
    """
    A = np.asarray(adjacency_pairs, dtype=np.float64)
    if A.ndim != 4 or A.shape[1] != 2:
        raise ValueError(f"adjacency_pairs must have shape (sets, 2, n, n), got {A.shape}")
    if len(fc.heads) != A.shape[0]:
        raise ValueError(f"fc has {len(fc.heads)} head sets, adjacency_pairs {A.shape[0]}")
    D = graphs.diffusion_matrix_from_adjacency(A)
    amp = fc.amp_uniform
    feat = lazy_pandas().DataFrame({
        "amplification": amp, "amplified": amp > AMP_TOL,
        "jaccard": edge_jaccard(A[:, 0], A[:, 1]),
        "complementarity": node_best_head_gain(fc.node)})
    feat["mixed_sequence_share"], _, t_star = cross_head_share(D, [0.5, 0.5], horizon)
    feat["new_walk_share"], _, _ = new_walk_share(D, [0.5, 0.5], horizon)
    feat["new_walk_share_limiting"] = new_walk_share_at_limiting(D, [0.5, 0.5], horizon)
    feat["t_star"] = t_star
    return feat


#: Remark 3.7's measure by graph size: the columns of :func:`remark_3_7_by_size`.
REMARK_3_7_COLUMNS = (
    "pairs", "amplified", "zero_limiting_amplified", "zero_limiting_amplified_low",
    "zero_limiting_amplified_high", "mean_limiting_amplified", "mean_limiting_amplified_low",
    "mean_limiting_amplified_high", "mean_limiting_not_amplified",
    "mean_limiting_not_amplified_low", "mean_limiting_not_amplified_high",
    "zero_worst_amplified", "mean_worst_amplified")


def remark_3_7_by_size(
    store: dict[tuple[str, int, int], tuple[NDArray[np.float64], FidelityComparison]],
    keys: list[tuple[str, int, int]], horizon: int, level: float = 0.95,
) -> pd.DataFrame:
    """Remark 3.7 by graph size, on equal-weight pairs of a :func:`fidelity_search` store:
    per key (one row, indexed by ``n``), the pairs, how many amplify, and among the amplifying
    ones the share with *no* signal on new walks at the nodes that limit the best head
    (:func:`new_walk_share_at_limiting`) with its Wilson interval at ``level``; the mean of
    that share over amplifying and over other pairs, each with its t-interval (scipy); and,
    for comparison, the same zero share and mean at the combination's worst node
    (:func:`new_walk_share`), which cannot see a path that lifts another node."""
    from scipy import stats

    horizon = positive_int(horizon, "horizon")
    if not 0 < level < 1:
        raise ValueError(f"level={level!r}: must lie in (0, 1)")

    def mean_ci(x: NDArray[np.float64]) -> tuple[float, float, float]:
        if len(x) < 2:
            raise ValueError(f"a mean interval needs two pairs or more, got {len(x)}")
        ci = stats.ttest_1samp(x, 0.0).confidence_interval(level)
        return float(x.mean()), float(ci.low), float(ci.high)

    rows = []
    for key in keys:
        A, fc = store_entry(store, key)
        if A.shape[1] != 2:
            raise ValueError(f"{key}: remark_3_7_by_size needs pairs of heads, H = {A.shape[1]}")
        D = graphs.diffusion_matrix_from_adjacency(A)
        limiting = new_walk_share_at_limiting(D, [0.5, 0.5], horizon)
        worst, _, _ = new_walk_share(D, [0.5, 0.5], horizon)
        amp = fc.amp_uniform > AMP_TOL
        zero = int((limiting[amp] < 1e-9).sum())
        ci = stats.binomtest(zero, int(amp.sum())).proportion_ci(level, method="wilson")
        m, lo, hi = mean_ci(limiting[amp])
        m0, lo0, hi0 = mean_ci(limiting[~amp])
        rows.append({"n": key[1], "pairs": len(A), "amplified": int(amp.sum()),
                     "zero_limiting_amplified": zero / amp.sum(),
                     "zero_limiting_amplified_low": ci.low,
                     "zero_limiting_amplified_high": ci.high,
                     "mean_limiting_amplified": m, "mean_limiting_amplified_low": lo,
                     "mean_limiting_amplified_high": hi, "mean_limiting_not_amplified": m0,
                     "mean_limiting_not_amplified_low": lo0,
                     "mean_limiting_not_amplified_high": hi0,
                     "zero_worst_amplified": float((worst[amp] < 1e-9).mean()),
                     "mean_worst_amplified": float(worst[amp].mean())})
    return lazy_pandas().DataFrame(rows).set_index("n")


def feature_correlations(
    feat: pd.DataFrame, columns: tuple[str, ...] = FEATURES, target: str = "amplification"
) -> dict[str, float]:
    """Spearman rank correlation of each feature column with ``target``: ``{column: rho}``
    (:func:`bparallel.ranks.spearman`, the project's one, exact)."""
    missing = [c for c in (*columns, target) if c not in feat]
    if missing:
        raise ValueError(f"feat is missing the columns {missing}")
    y = feat[target].to_numpy(dtype=np.float64)
    return {c: float(ranks.spearman(feat[c].to_numpy(dtype=np.float64), y)) for c in columns}


def amplified_by_jaccard(feat: pd.DataFrame, bins: int = 10) -> pd.Series:
    """Share of amplifying pairs per bin of edge Jaccard overlap (``bins`` equal bins on
    ``[0, 1]``, empty bins left out), indexed by the bin's interval."""
    bins = positive_int(bins, "bins")
    jb = lazy_pandas().cut(feat.jaccard, np.linspace(0, 1, bins + 1), include_lowest=True)
    return feat.groupby(jb, observed=True).amplified.mean()


def top_amplifying(
    store: dict[tuple[str, int, int], tuple[NDArray[np.float64], FidelityComparison]],
    keys: list[tuple[str, int, int]],
) -> pd.DataFrame:
    """The pair with the largest equal-weight amplification for each key of a
    :func:`fidelity_search` store: its heads' and the combination's ``phi_min`` (Def. 3.5),
    the best grid weight and its amplification; ``pair`` is its index in the store."""
    rows = []
    for key in keys:
        _, fc = store[key]
        if fc.heads.shape[-1] != 2:
            raise ValueError(f"top_amplifying needs pairs of heads, {key} has H = "
                             f"{fc.heads.shape[-1]}")
        k = int(np.argmax(fc.amp_uniform))
        rows.append({"n": key[1], "search": key[0], "pair": k,
                     "phi_min_head_1": fc.heads[k, 0], "phi_min_head_2": fc.heads[k, 1],
                     "phi_min_uniform": fc.uniform[k], "amplification": fc.amp_uniform[k],
                     "best_beta_1": fc.best_weights[k, 0], "amp_at_best_beta": fc.amp_best[k]})
    return lazy_pandas().DataFrame(rows)


# ------------------------------------------------------------- Section 4 (trade-off)
def _tradeoff_frame(n, kind, density, W, D, eps, horizon):
    return lazy_pandas().DataFrame({"n": n, "kind": kind, "density": density,
                            "t_mix": markov.mixing_time(W, eps),
                            "phi_min": fidelity.minimax_fidelity(D, horizon)})


def tradeoff_draws(
    sizes: ArrayLike,
    densities: ArrayLike,
    num: int,
    seed: int | np.random.Generator | None = None,
    *,
    families: tuple[str, ...] = FAMILIES,
) -> Iterator[tuple[int, str, float, NDArray[np.float64]]]:
    """The graphs of :func:`tradeoff_table`, lazily in its order: ``(n, kind, density, A)``.

    ``A`` is ``(graphs, n, n)`` adjacency, or ``(graphs, 2, n, n)`` for the equal-weight
    pairs (kind ``"random pair (β = 1/2)"``); ``density`` is NaN where it does not apply.
    """
    num = positive_int(num, "num")
    rng = np.random.default_rng(seed)
    dens = np.atleast_1d(densities).tolist()
    for n in np.atleast_1d(sizes).tolist():
        for fam in families:
            yield n, fam, np.nan, family_adjacency(fam, n)[None]
        for d in dens:
            yield n, "random", d, graphs.random_feedforward_adjacency(num, n, d, rng)
        A2, _ = random_head_stacks(len(dens) * num, 2, n, dens, rng)
        yield n, "random pair (β = 1/2)", np.nan, A2


def tradeoff_table(
    sizes: ArrayLike,
    densities: ArrayLike,
    num: int,
    eps: float = 0.25,
    horizon: int = 100,
    seed: int | np.random.Generator | None = None,
    *,
    families: tuple[str, ...] = FAMILIES,
) -> pd.DataFrame:
    """Exact ``T_mix`` of ``W`` (Def. 2.7) and ``phi_min`` of ``Delta`` (Def. 3.5) per graph.

    For each ``n`` of ``sizes``, in this order (the draws from ``seed``, made by
    :func:`tradeoff_draws`): the ``families``; ``num`` random graphs per density;
    ``len(densities) * num`` equal-weight pairs of random heads (:func:`random_head_stacks`).
    Columns ``n, kind, density, t_mix, phi_min``.
    """
    rows = []
    for n, kind, d, A in tradeoff_draws(sizes, densities, num, seed, families=families):
        W = graphs.walk_matrix_from_adjacency(A)
        D = graphs.diffusion_matrix_from_adjacency(A)
        if A.ndim == 4:  # a pair of heads, combined with equal weights
            W, D = W.mean(axis=1), D.mean(axis=1)
        rows.append(_tradeoff_frame(n, kind, d, W, D, eps, horizon))
    return lazy_pandas().concat(rows, ignore_index=True)


def tradeoff_correlation(trade: pd.DataFrame, kind: str = "random") -> dict[int, float]:
    """Spearman rank correlation of ``T_mix`` and ``phi_min`` among graphs of ``kind``, per
    ``n`` of a :func:`tradeoff_table` (negative: slow mixing goes with low fidelity;
    :func:`bparallel.ranks.spearman`, exact, infinite times ranked last)."""
    out = {}
    for n in trade.n.unique().tolist():
        d = trade[(trade.n == n) & (trade.kind == kind)]
        if len(d) < 2:
            raise ValueError(f"need at least 2 graphs of kind {kind!r} at n = {n}, got {len(d)}")
        out[n] = float(ranks.spearman(d.t_mix.to_numpy(dtype=np.float64),
                                      d.phi_min.to_numpy(dtype=np.float64)))
    return out


def dominated_fraction(
    trade: pd.DataFrame, kind: str = "random", families: tuple[str, ...] = FAMILIES
) -> dict[int, float]:
    """Per ``n`` of a :func:`tradeoff_table`: the share of graphs of ``kind`` for which some
    family mixes no slower *and* keeps at least the same ``phi_min`` (Pareto-dominated)."""
    out = {}
    for n in trade.n.unique().tolist():
        d = trade[(trade.n == n) & (trade.kind == kind)]
        fam = trade[(trade.n == n) & trade.kind.isin(families)]
        if len(d) == 0:
            raise ValueError(f"no graphs of kind {kind!r} at n = {n}")
        dom = ((fam.t_mix.values[None, :] <= d.t_mix.values[:, None])
               & (fam.phi_min.values[None, :] >= d.phi_min.values[:, None])).any(axis=1)
        out[n] = dom.mean()
    return out
