"""The chapter tables of Sections 2-3: each claim of the paper tested on graph ensembles.

Built on the batched primitives of :mod:`bparallel.ensembles` (and the exact theory of
:mod:`bparallel.markov` / :mod:`bparallel.fidelity`), one function per experiment, each
returning a pandas DataFrame and taking an explicit ``seed`` (an int or a shared
``np.random.Generator``, consumed in a documented order, so a chapter that passes one
generator through several calls gets one stream).

Chapter-support code: it lives in the book layer because only the chapters need it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import exact, fidelity, graphs, markov
from .._checks import positive_int
from ..ensembles import (
    FAMILIES,
    FidelityComparison,
    MixingComparison,
    best_head_exceedance,
    binomial_mixing_bound,
    cdf_below,
    compare_fidelity,
    compare_mixing,
    cross_head_share,
    edge_count,
    edge_jaccard,
    enumerate_feedforward_adjacency,
    family_adjacency,
    head_tuples,
    lazy_path_walk,
    new_walk_share,
    node_best_head_gain,
    random_head_stacks,
    random_weighted_walk,
)

if TYPE_CHECKING:
    import pandas as pd



#: Amplification counts only above this (``phi_min`` gains of 1e-9 or less are rounding).
AMP_TOL = 1e-9

#: Columns of :func:`amplification_table` for the head-set searches of Section 3.1.
SEARCH_COLUMNS = (
    "head sets", "amplified, uniform β (%)", "mean amp., uniform β", "max amp., uniform β",
    "amplified, best β (%)", "max amp., best β", "worst nodes differ (%)",
    "mean complementarity",
)
#: Columns of :func:`amplification_table` for the horizon sweep.
HORIZON_COLUMNS = (
    "amplified, uniform β (%)", "amplified, best β (%)", "max amp., best β",
    "mean best-head φ_min",
)
#: Candidate explanations of amplification in :func:`amplification_features`.
FEATURES = ("jaccard", "complementarity", "mixed-sequence share", "new-walk share")


def _pd():
    import pandas as pd  # lazy: pandas is a dependency of the book, not of the package

    return pd


def head_mixing_frame(
    W: ArrayLike, eps: float = 0.25, *, kind: str, density: float = np.nan
) -> pd.DataFrame:
    """One row per head: exact ``T_mix`` (Def. 2.7) next to Theorem 2.8's bound ``2N/p``.

    ``W`` ``(..., n, n)`` feedforward walk matrices; ``p`` is ``p_h``
    (:func:`bparallel.markov.forward_probability`), ``N = n - 1`` and ``t*`` the exact
    binomial bound of :func:`binomial_mixing_bound`. Columns: ``kind, n, density, p, pN,
    T_mix, 2N/p, t*``.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim < 2 or W.shape[-1] != W.shape[-2] or W.shape[-1] < 2:
        raise ValueError(f"W must have shape (..., n, n) with n >= 2, got {W.shape}")
    n = W.shape[-1]
    W = W.reshape((-1, n, n))
    p = np.atleast_1d(markov.forward_probability(W))
    return _pd().DataFrame({
        "kind": kind, "n": n, "density": density, "p": p, "pN": p * (n - 1),
        "T_mix": markov.mixing_time(W, eps), "2N/p": 2 * (n - 1) / p,
        "t*": binomial_mixing_bound(n - 1, p, eps)})


def combination_mixing_frame(
    W_heads: ArrayLike, alpha: ArrayLike, eps: float = 0.25, *, kind: str
) -> pd.DataFrame:
    """One row per combination ``W-bar = sum_h alpha_h W^(h)``: ``T_mix`` against Eqs. 12, 20.

    ``W_heads`` ``(num, H, n, n)``, ``alpha`` ``(num, H)`` convex. ``p`` is Eq. 12's
    ``sum_h alpha_h p_h``; ``p_chain`` the combined chain's own forward probability, which
    gives ``t*``; ``2N/max p_h`` and ``2N/min p_h`` are the two sides of Eq. 20.
    """
    Wh = np.asarray(W_heads, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)
    if Wh.ndim != 4 or Wh.shape[-1] != Wh.shape[-2]:
        raise ValueError(f"W_heads must have shape (num, H, n, n), got {Wh.shape}")
    if a.shape != Wh.shape[:2]:
        raise ValueError(f"alpha must have shape {Wh.shape[:2]} (num, H), got {a.shape}")
    if np.abs(a.sum(-1) - 1).max() > 1e-9:
        raise ValueError(f"alpha must sum to 1 in each row, got sums {a.sum(-1).tolist()}")
    N = Wh.shape[-1] - 1
    Wbar = graphs.convex_combination(Wh, a)
    ph = markov.forward_probability(Wh)
    p12 = (a * ph).sum(axis=1)  # Eq. 12
    p_chain = markov.forward_probability(Wbar)
    return _pd().DataFrame({
        "kind": kind, "n": N + 1, "p": p12, "pN": p12 * N, "T_mix": markov.mixing_time(Wbar, eps),
        "2N/p": 2 * N / p12, "t*": binomial_mixing_bound(N, p_chain, eps),
        "p_chain": p_chain, "2N/max p_h": 2 * N / ph.max(1), "2N/min p_h": 2 * N / ph.min(1)})


def theorem_2_8_ensemble(
    sizes: ArrayLike,
    densities: ArrayLike,
    num: int,
    eps: float = 0.25,
    seed: int | np.random.Generator | None = None,
    *,
    weighted_density: float = 0.3,
    pair_density: float = 0.3,
    concentration: float = 1.0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact mixing times vs Theorem 2.8's ``2N/p`` on heads and pairs: ``(heads, pairs)``.

    For each ``n`` in ``sizes``, in this order (the draws from ``seed``): ``num`` unweighted
    random heads (Eq. 1) per density of ``densities``; ``num`` weighted heads
    (:func:`random_weighted_walk`); the path and the complete DAG; then ``num`` pairs of
    unweighted and ``num`` pairs of weighted heads, each combined with weights
    ``alpha ~ Dirichlet(1, 1)``. ``heads`` has the columns of :func:`head_mixing_frame`,
    ``pairs`` those of :func:`combination_mixing_frame` (kinds ``"... pair"``).
    """
    num = positive_int(num, "num")
    rng = np.random.default_rng(seed)
    frames, pair_frames = [], []
    for n in np.atleast_1d(sizes).tolist():
        for d in np.atleast_1d(densities).tolist():
            A = graphs.random_feedforward_adjacency(num, n, d, rng)
            frames.append(head_mixing_frame(graphs.walk_matrix_from_adjacency(A), eps,
                                            kind="unweighted", density=d))
        W = random_weighted_walk(num, n, weighted_density, concentration, rng)
        frames.append(head_mixing_frame(W, eps, kind="weighted", density=weighted_density))
        for fam in ("path", "complete"):
            W = graphs.walk_matrix_from_adjacency(family_adjacency(fam, n))
            frames.append(head_mixing_frame(W, eps, kind=fam))
        for kind in ("unweighted", "weighted"):
            if kind == "weighted":
                Wh = random_weighted_walk(2 * num, n, pair_density, concentration, rng)
            else:
                Wh = graphs.walk_matrix_from_adjacency(
                    graphs.random_feedforward_adjacency(2 * num, n, pair_density, rng))
            alpha = rng.dirichlet([1.0, 1.0], num)
            pair_frames.append(combination_mixing_frame(
                Wh.reshape(num, 2, n, n), alpha, eps, kind=f"{kind} pair"))
    return (_pd().concat(frames, ignore_index=True),
            _pd().concat(pair_frames, ignore_index=True))


def bound_ratios(*frames: pd.DataFrame) -> pd.DataFrame:
    """Concatenate mixing frames and add ``ratio = T_mix / (2N/p)`` and ``T/t* = T_mix / t*``.

    ``ratio <= 1`` is Theorem 2.8's claim; ``T/t* <= 1`` the exact coupling behind it.
    """
    if not frames:
        raise ValueError("bound_ratios needs at least one frame")
    out = _pd().concat(frames, ignore_index=True)
    out["ratio"] = out["T_mix"] / out["2N/p"]
    out["T/t*"] = out["T_mix"] / out["t*"]
    return out


def bound_summary(table: pd.DataFrame, eps: float = 0.25) -> pd.DataFrame:
    """Per ``(kind, n)`` of a :func:`bound_ratios` table: count, median and max ``ratio``,
    max ``T/t*``, heads with ``pN <= ln(1/eps)`` (where the proof's Hoeffding step of
    Theorem 2.8 is vacuous) and heads over the bound (``ratio > 1``)."""
    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    cut = math.log(1 / eps)
    return table.groupby(["kind", "n"], sort=False).agg(
        graphs=("ratio", "size"), median_ratio=("ratio", "median"), max_ratio=("ratio", "max"),
        max_T_over_tstar=("T/t*", "max"),
        small_pN=("pN", lambda s: int((s <= cut).sum())),
        exceed=("ratio", lambda s: int((s > 1).sum())))


def binomial_tail_at_bound(N: ArrayLike, p: ArrayLike) -> NDArray[np.float64]:
    """``Pr[Bin(floor(2N/p), p) < N]``: the lazy path's TV distance at Theorem 2.8's bound.

    By the coupling of :func:`binomial_mixing_bound` this is the worst TV distance of any
    feedforward chain at ``t = floor(2N/p)``. Broadcast over ``N`` (>= 1) and ``p``.
    """
    from scipy.stats import binom

    N_arr = np.asarray(N)
    if (N_arr < 1).any() or not np.all(N_arr == np.floor(N_arr)):
        raise ValueError(f"N must be integers >= 1, got {N_arr.tolist()}")
    p_arr = markov._check_p(p)
    return binom.cdf(N_arr - 1, np.floor(2 * N_arr / p_arr), p_arr)


def worst_case_bound_ratio(N: ArrayLike, p: ArrayLike, eps: float = 0.25) -> NDArray[np.float64]:
    """``t*(N, p) / (2N/p)``: the largest ``T_mix / (2N/p)`` over all feedforward chains
    (the lazy path attains ``t*``; :func:`binomial_mixing_bound`). Below 1: Theorem 2.8 holds."""
    p_arr = markov._check_p(p)
    return binomial_mixing_bound(N, p_arr, eps) / (2 * np.asarray(N) / p_arr)


def lazy_path_eps_table(eps_values: ArrayLike, n: int = 2, p: float = 0.001) -> pd.DataFrame:
    """``T_mix`` of the lazy path (:func:`lazy_path_walk`) against ``2N/p`` for each ``eps``.

    With ``n = 2`` and small ``p`` it shows that Theorem 2.8's constant 2 needs
    ``eps >= e^-2`` (about 0.135). Columns ``ε``, ``T_mix (n=.., p=..)``, ``2N/p``,
    ``bound holds``.
    """
    W = lazy_path_walk(n, p)
    bound = 2 * (n - 1) / p
    rows = []
    for e in np.atleast_1d(eps_values).tolist():
        T = int(markov.mixing_time(W, e))
        rows.append({"ε": e, f"T_mix (n={n}, p={p:g})": T, "2N/p": bound,
                     "bound holds": T <= bound})
    return _pd().DataFrame(rows)


def eq20_checks(pairs: pd.DataFrame) -> pd.DataFrame:
    """Boolean checks of Eq. 20, Eq. 3 and Eq. 12 per combination of a pairs frame
    (:func:`combination_mixing_frame`), with its ``kind`` column; ``.groupby("kind").mean()``
    gives the share of combinations where each holds."""
    missing = {"kind", "p", "T_mix", "2N/p", "p_chain", "2N/max p_h", "2N/min p_h"} - set(pairs)
    if missing:
        raise ValueError(f"pairs is missing the columns {sorted(missing)}")
    checks = _pd().DataFrame({
        "2N/max p_h ≤ T_mix (Eq. 20, left)": pairs["2N/max p_h"] <= pairs["T_mix"],
        "T_mix ≤ 2N/p, p of Eq. 12 (Eq. 3)": pairs["T_mix"] <= pairs["2N/p"],
        "T_mix ≤ 2N/min p_h (Eq. 20, right)": pairs["T_mix"] <= pairs["2N/min p_h"],
        "p_chain ≥ p of Eq. 12": pairs["p_chain"] >= pairs["p"] - 1e-12,
    })
    checks["kind"] = pairs["kind"]
    return checks


# ------------------------------------------------------- head-set searches (Sections 2-3)
def head_sets(
    search: str,
    n: int,
    H: int,
    *,
    num: int | None = None,
    densities: ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    """Adjacency of the head sets searched in Sections 2-3: ``(sets, H, n, n)``.

    ``search="exhaustive"``: every set of ``H`` distinct feedforward graphs with unique sink
    on ``n`` nodes (:func:`enumerate_feedforward_adjacency`, :func:`head_tuples`; no draws).
    ``search="random"``: ``num`` stacks from :func:`random_head_stacks` with ``densities``.
    """
    if search == "exhaustive":
        A = enumerate_feedforward_adjacency(n)
        return A[head_tuples(len(A), H)]
    if search == "random":
        if num is None or densities is None:
            raise ValueError("search='random' needs num and densities")
        return random_head_stacks(num, H, n, densities, seed)[0]
    raise ValueError(f"search must be 'exhaustive' or 'random', got {search!r}")


def _per_H(value: int | dict[int, int] | None, H: int, name: str) -> int | None:
    if isinstance(value, dict):
        if H not in value:
            raise ValueError(f"{name} has no entry for H = {H}: {value}")
        return value[H]
    return value


def _over_head_sets(keys, num, densities, seed, compare):
    """``{(search, n, H): (A, compare(A, H))}`` for the head sets ``A`` of each key, drawn
    from one generator made from ``seed``, in the order of ``keys``."""
    rng = np.random.default_rng(seed)
    out = {}
    for search, n, H in keys:
        A = head_sets(search, n, H, num=_per_H(num, H, "num"), densities=densities, seed=rng)
        out[(search, n, H)] = (A, compare(A, H))
    return out


def mixing_search(
    keys: list[tuple[str, int, int]],
    eps: float = 0.25,
    *,
    grid_steps: int | dict[int, int] = 10,
    num: int | dict[int, int] | None = None,
    densities: ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> dict[tuple[str, int, int], tuple[NDArray[np.float64], MixingComparison]]:
    """:func:`compare_mixing` (Section 2.2, Eq. 5) on the head sets of each ``(search, n, H)``.

    Random keys draw from ``seed`` in the order of ``keys``; ``grid_steps`` and ``num`` are
    ints or dicts keyed by ``H``. Returns ``{key: (adjacency (sets, H, n, n), comparison)}``.
    """
    return _over_head_sets(keys, num, densities, seed, lambda A, H: compare_mixing(
        graphs.walk_matrix_from_adjacency(A), eps, grid_steps=_per_H(grid_steps, H, "grid_steps")))


def mixing_search_table(
    store: dict[tuple[str, int, int], tuple[NDArray[np.float64], MixingComparison]],
) -> pd.DataFrame:
    """One row per ``(search, n, H)`` of :func:`mixing_search`: head sets whose uniform or
    best grid combination mixes strictly faster than the fastest head (Eq. 5), uniform
    combinations slower than the slowest head, the largest speed-up, and the counts in %."""
    rows = []
    for (search, n, H), (_, mc) in store.items():
        rows.append({"search": search, "n": n, "H": H, "head sets": mc.heads.shape[0],
                     "uniform < fastest": int(mc.uniform_beats_fastest.sum()),
                     "best grid < fastest": int(mc.best_beats_fastest.sum()),
                     "uniform > slowest": int(mc.uniform_slower_than_slowest.sum()),
                     "max speed-up (steps)": int((mc.fastest - mc.best).max())})
    table = _pd().DataFrame(rows)
    for col in ["uniform < fastest", "best grid < fastest", "uniform > slowest"]:
        table[col + " (%)"] = (100 * table[col] / table["head sets"]).round(2)
    return table


def fewest_edges_index(adjacency_sets: ArrayLike, mask: ArrayLike) -> int:
    """Index of the head set with the fewest proper edges among those where ``mask`` holds
    (ties: the lowest index). ``adjacency_sets`` ``(sets, H, n, n)``, ``mask`` ``(sets,)``."""
    cands = np.flatnonzero(np.asarray(mask, dtype=bool))
    if cands.size == 0:
        raise ValueError("mask selects no head set")
    edges = edge_count(np.asarray(adjacency_sets)[cands]).sum(axis=1)
    return int(cands[np.lexsort((cands, edges))[0]])


def exact_combination_mixing(
    edges_heads: list[list[tuple[int, int]]], n: int, weights: ArrayLike, eps: float = 0.25
) -> tuple[list[list[list[Fraction]]], list[int]]:
    """Walk matrices and mixing times of heads and their combination on exact rationals.

    Uses :mod:`bparallel.exact` (no floating point): ``weights`` and ``eps`` are turned into
    fractions (denominators up to 100 and 1000). Returns ``([W^(1), ..., W-bar], [T_mix
    of each])``, the combination last: Section 2.2's counterexamples, checked exactly.
    """
    if len(edges_heads) != len(np.atleast_1d(weights)):
        raise ValueError(f"weights must have one entry per head ({len(edges_heads)}), "
                         f"got {np.atleast_1d(weights).tolist()}")
    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    heads = [exact.walk(e, n) for e in edges_heads]
    bar = exact.combine(heads, [Fraction(w).limit_denominator(100) for w in weights])
    eps_q = Fraction(eps).limit_denominator(1000)
    return [*heads, bar], [exact.mixing_time(M, eps_q) for M in (*heads, bar)]


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
    return _over_head_sets(keys, num, densities, seed, lambda A, H: compare_fidelity(
        graphs.diffusion_matrix_from_adjacency(A), horizon,
        grid_steps=_per_H(grid_steps, H, "grid_steps")))


def amplification_summary(fc: FidelityComparison) -> dict[str, float]:
    """Summary of a :func:`compare_fidelity` result: how often and how much the combination
    amplifies minimax fidelity (Defs. 3.11-3.12, gains above ``AMP_TOL``), how often the
    heads' worst nodes differ, the mean :func:`node_best_head_gain` and best-head ``phi_min``."""
    return {
        "head sets": len(fc.heads),
        "amplified, uniform β (%)": 100 * (fc.amp_uniform > AMP_TOL).mean(),
        "mean amp., uniform β": fc.amp_uniform.mean(),
        "max amp., uniform β": fc.amp_uniform.max(),
        "amplified, best β (%)": 100 * (fc.amp_best > AMP_TOL).mean(),
        "max amp., best β": fc.amp_best.max(),
        "worst nodes differ (%)": 100 * (np.ptp(fc.node[..., :-1].argmin(-1), axis=-1) > 0).mean(),
        "mean complementarity": node_best_head_gain(fc.node).mean(),
        "mean best-head φ_min": fc.best_head.mean(),
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
    return _pd().DataFrame(rows).set_index(list(names))


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
    ``mixed-sequence share`` (:func:`cross_head_share`, Remark 3.7), ``new-walk share``
    (:func:`new_walk_share`) and ``t*``, the worst node's optimal time.
    """
    A = np.asarray(adjacency_pairs, dtype=np.float64)
    if A.ndim != 4 or A.shape[1] != 2:
        raise ValueError(f"adjacency_pairs must have shape (sets, 2, n, n), got {A.shape}")
    if len(fc.heads) != A.shape[0]:
        raise ValueError(f"fc has {len(fc.heads)} head sets, adjacency_pairs {A.shape[0]}")
    D = graphs.diffusion_matrix_from_adjacency(A)
    amp = fc.amp_uniform
    feat = _pd().DataFrame({
        "amplification": amp, "amplified": amp > AMP_TOL,
        "jaccard": edge_jaccard(A[:, 0], A[:, 1]),
        "complementarity": node_best_head_gain(fc.node)})
    feat["mixed-sequence share"], _, t_star = cross_head_share(D, [0.5, 0.5], horizon)
    feat["new-walk share"], _, _ = new_walk_share(D, [0.5, 0.5], horizon)
    feat["t*"] = t_star
    return feat


def feature_correlations(
    feat: pd.DataFrame, columns: tuple[str, ...] = FEATURES, target: str = "amplification"
) -> dict[str, float]:
    """Spearman rank correlation of each feature column with ``target``: ``{column: rho}``."""
    from scipy import stats

    missing = [c for c in (*columns, target) if c not in feat]
    if missing:
        raise ValueError(f"feat is missing the columns {missing}")
    return {c: stats.spearmanr(feat[c], feat[target])[0] for c in columns}


def amplified_by_jaccard(feat: pd.DataFrame, bins: int = 10) -> pd.Series:
    """Share of amplifying pairs per bin of edge Jaccard overlap (``bins`` equal bins on
    ``[0, 1]``, empty bins left out), indexed by the bin's interval."""
    bins = positive_int(bins, "bins")
    jb = _pd().cut(feat.jaccard, np.linspace(0, 1, bins + 1), include_lowest=True)
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
                     "φ_min head 1": fc.heads[k, 0], "φ_min head 2": fc.heads[k, 1],
                     "φ_min multi (β = 1/2)": fc.uniform[k], "amplification": fc.amp_uniform[k],
                     "best β_1": fc.best_weights[k, 0], "amp. at best β": fc.amp_best[k]})
    return _pd().DataFrame(rows)


# ------------------------------------------------------------- Section 4 (trade-off)
def _tradeoff_frame(n, kind, density, W, D, eps, horizon):
    return _pd().DataFrame({"n": n, "kind": kind, "density": density,
                            "T_mix": markov.mixing_time(W, eps),
                            "phi_min": fidelity.minimax_fidelity(D, horizon)})


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

    For each ``n`` of ``sizes``, in this order (the draws from ``seed``): the ``families``;
    ``num`` random graphs per density; ``len(densities) * num`` equal-weight pairs of random
    heads (:func:`random_head_stacks`). Columns ``n, kind, density, T_mix, phi_min``.
    """
    num = positive_int(num, "num")
    rng = np.random.default_rng(seed)
    dens = np.atleast_1d(densities).tolist()
    rows = []
    for n in np.atleast_1d(sizes).tolist():
        for fam in families:
            A = family_adjacency(fam, n)[None]
            rows.append(_tradeoff_frame(n, fam, np.nan, graphs.walk_matrix_from_adjacency(A),
                                        graphs.diffusion_matrix_from_adjacency(A), eps, horizon))
        for d in dens:
            A = graphs.random_feedforward_adjacency(num, n, d, rng)
            rows.append(_tradeoff_frame(n, "random", d, graphs.walk_matrix_from_adjacency(A),
                                        graphs.diffusion_matrix_from_adjacency(A), eps, horizon))
        A2, _ = random_head_stacks(len(dens) * num, 2, n, dens, rng)
        rows.append(_tradeoff_frame(n, "random pair (β = 1/2)", np.nan,
                                    graphs.walk_matrix_from_adjacency(A2).mean(axis=1),
                                    graphs.diffusion_matrix_from_adjacency(A2).mean(axis=1),
                                    eps, horizon))
    return _pd().concat(rows, ignore_index=True)


def tradeoff_correlation(trade: pd.DataFrame, kind: str = "random") -> dict[int, float]:
    """Spearman rank correlation of ``T_mix`` and ``phi_min`` among graphs of ``kind``, per
    ``n`` of a :func:`tradeoff_table` (negative: slow mixing goes with low fidelity)."""
    from scipy import stats

    out = {}
    for n in trade.n.unique().tolist():
        d = trade[(trade.n == n) & (trade.kind == kind)]
        if len(d) < 2:
            raise ValueError(f"need at least 2 graphs of kind {kind!r} at n = {n}, got {len(d)}")
        out[n] = stats.spearmanr(d.T_mix, d.phi_min)[0]
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
        dom = ((fam.T_mix.values[None, :] <= d.T_mix.values[:, None])
               & (fam.phi_min.values[None, :] >= d.phi_min.values[:, None])).any(axis=1)
        out[n] = dom.mean()
    return out


# ---------------------------------------------------------------- Eqs. 16-19 (tables)
def weighted_forward_probabilities(
    size: int | tuple[int, ...],
    n: int,
    density: float,
    concentration: float = 1.0,
    seed: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    """``p_h`` (Theorem 2.8) of fresh :func:`random_weighted_walk` heads, shaped ``size``."""
    shape = tuple(np.atleast_1d(size).tolist())
    W = random_weighted_walk(int(np.prod(shape)), n, density, concentration, seed)
    return np.asarray(markov.forward_probability(W)).reshape(shape)


def best_head_simulation(
    draw: Callable[[tuple[int, int]], ArrayLike],
    pbar: float,
    F: float,
    Hs: ArrayLike,
    trials: int,
    *,
    pool_size: int = 0,
    label: str = "",
) -> pd.DataFrame:
    """Simulated ``Pr(max_h p_h >= pbar)`` against Eq. 18's ``1 - F(pbar)^H``, per ``H``.

    ``draw(shape)`` returns i.i.d. forward probabilities of shape ``(trials, H)``; it is
    called once per ``H`` in the order of ``Hs``. ``z`` is the binomial z-score; when ``F``
    is itself estimated from a pool of ``pool_size`` draws, its variance is added by the
    delta method. Columns ``F`` (``label``), ``p̄``, ``H``, ``simulated``, ``1 - F(p̄)^H``,
    ``z``.
    """
    trials = positive_int(trials, "trials")
    if not 0.0 <= F <= 1.0:
        raise ValueError(f"F must lie in [0, 1], got {F}")
    rows = []
    for H in np.asarray(Hs):
        sim = float(best_head_exceedance(draw((trials, int(H))), pbar))
        theory = float(markov.prob_best_head_at_least(F, H))
        var = theory * (1 - theory) / trials
        if pool_size:  # F itself is estimated: delta method
            var += (H * F ** (H - 1)) ** 2 * F * (1 - F) / pool_size
        z = (sim - theory) / math.sqrt(var) if var > 0 else 0.0
        rows.append({"F": label, "p̄": pbar, "H": int(H), "simulated": sim,
                     "1 - F(p̄)^H": theory, "z": z})
    return _pd().DataFrame(rows)


def atom_best_head_table(
    p: ArrayLike, Hs: ArrayLike, pbar: float, label: str = "unweighted DAGs"
) -> pd.DataFrame:
    """Eq. 18 when ``F`` has an atom at ``pbar``: the best of ``H`` of the draws ``p`` (split
    into consecutive groups of ``H``) against ``1 - F(pbar)^H`` with ``F(pbar) = Pr(p <= pbar)``
    and with the left limit ``F(pbar-) = Pr(p < pbar)`` (:func:`cdf_below`); two rows per ``H``."""
    p = np.ravel(np.asarray(p, dtype=np.float64))
    F_le = float(np.mean(p <= pbar))
    F_lt = cdf_below(p, pbar)
    rows = []
    for H in np.asarray(Hs):
        if H > p.size:
            raise ValueError(f"H = {H} exceeds the {p.size} draws of p")
        sim = float(best_head_exceedance(p[: (p.size // H) * H].reshape(-1, H), pbar))
        rows.append({"F": f"{label}, F(p̄) = Pr(p ≤ p̄)", "p̄": pbar, "H": int(H),
                     "simulated": sim, "1 - F(p̄)^H": float(markov.prob_best_head_at_least(F_le, H)),
                     "z": np.nan})
        rows.append({"F": f"{label}, F(p̄-) = Pr(p < p̄)", "p̄": pbar, "H": int(H),
                     "simulated": sim, "1 - F(p̄)^H": float(markov.prob_best_head_at_least(F_lt, H)),
                     "z": np.nan})
    return _pd().DataFrame(rows)
