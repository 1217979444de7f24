"""The claims of Section 2 tested on graph ensembles: Theorem 2.8's bound (Eqs. 3, 12, 20),
the head-set searches of Section 2.2 (Eq. 5), and the best-head laws of Eqs. 16-19.

One function per experiment, each returning a pandas DataFrame (columns named as in
:data:`~bparallel.book.claims.labels.LABELS`) and taking an explicit ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ... import exact, graphs, markov
from ..._checks import positive_int, square_matrices, unit_interval
from ...ensembles import (
    MixingComparison,
    best_head_exceedance,
    binomial_mixing_bound,
    cdf_below,
    compare_mixing,
    edge_count,
    enumerate_feedforward_adjacency,
    family_adjacency,
    head_tuples,
    lazy_path_walk,
    random_weighted_walk,
    simulate_best_head,
    tv_curves,
)
from .head_sets import over_head_sets, per_H
from .labels import lazy_pandas

if TYPE_CHECKING:
    import pandas as pd



def head_mixing_frame(
    W: ArrayLike, eps: float = 0.25, *, kind: str, density: float = np.nan
) -> pd.DataFrame:
    """One row per head: exact ``T_mix`` (Def. 2.7) next to Theorem 2.8's bound ``2N/p``.

    ``W`` ``(..., n, n)`` feedforward walk matrices; ``p`` is ``p_h``
    (:func:`bparallel.markov.forward_probability`), ``N = n - 1`` and ``t*`` the exact
    binomial bound of :func:`binomial_mixing_bound`. Columns: ``kind, n, density, p,
    p_times_n, t_mix, bound_2n_over_p, t_star``.
    """
    W = square_matrices(W, "W", min_n=2)
    n = W.shape[-1]
    W = W.reshape((-1, n, n))
    p = np.atleast_1d(markov.forward_probability(W))
    return lazy_pandas().DataFrame({
        "kind": kind, "n": n, "density": density, "p": p, "p_times_n": p * (n - 1),
        "t_mix": markov.mixing_time(W, eps), "bound_2n_over_p": markov.mixing_time_bound(n, p),
        "t_star": binomial_mixing_bound(n - 1, p, eps)})


def combination_mixing_frame(
    W_heads: ArrayLike, alpha: ArrayLike, eps: float = 0.25, *, kind: str
) -> pd.DataFrame:
    """One row per combination ``W-bar = sum_h alpha_h W^(h)``: ``T_mix`` against Eqs. 12, 20.

    ``W_heads`` ``(num, H, n, n)``, ``alpha`` ``(num, H)`` convex. ``p`` is Eq. 12's
    ``sum_h alpha_h p_h``; ``p_chain`` the combined chain's own forward probability, which
    gives ``t_star``; ``bound_2n_over_max_p_h`` and ``bound_2n_over_min_p_h`` are the two
    sides of Eq. 20.
    """
    Wh = square_matrices(W_heads, "W_heads", layout="(num, H, n, n)", ndim=4)
    a = np.asarray(alpha, dtype=np.float64)
    if a.shape != Wh.shape[:2]:
        raise ValueError(f"alpha must have shape {Wh.shape[:2]} (num, H), got {a.shape}")
    if np.abs(a.sum(-1) - 1).max() > 1e-9:
        raise ValueError(f"alpha must sum to 1 in each row, got sums {a.sum(-1).tolist()}")
    N = Wh.shape[-1] - 1
    Wbar = graphs.convex_combination(Wh, a)
    ph = markov.forward_probability(Wh)
    p12 = (a * ph).sum(axis=1)  # Eq. 12
    p_chain = markov.forward_probability(Wbar)
    return lazy_pandas().DataFrame({
        "kind": kind, "n": N + 1, "p": p12, "p_times_n": p12 * N,
        "t_mix": markov.mixing_time(Wbar, eps),
        "bound_2n_over_p": markov.mixing_time_bound(N + 1, p12),
        "t_star": binomial_mixing_bound(N, p_chain, eps), "p_chain": p_chain,
        "bound_2n_over_max_p_h": markov.mixing_time_bound(N + 1, ph.max(1)),
        "bound_2n_over_min_p_h": markov.mixing_time_bound(N + 1, ph.min(1))})


def theorem_2_8_draws(
    sizes: ArrayLike,
    densities: ArrayLike,
    num: int,
    seed: int | np.random.Generator | None = None,
    *,
    weighted_density: float = 0.3,
    pair_density: float = 0.3,
    concentration: float = 1.0,
) -> Iterator[tuple[int, str, float, NDArray[np.float64], NDArray[np.float64] | None]]:
    """The random heads of :func:`theorem_2_8_ensemble`, drawn lazily in its order.

    Yields ``(n, kind, density, W, alpha)``: per ``n`` of ``sizes``, ``num`` unweighted
    heads (Eq. 1) per density (``alpha`` None), ``num`` weighted heads
    (:func:`random_weighted_walk`), then ``num`` unweighted and ``num`` weighted pairs
    ``W`` of shape ``(num, 2, n, n)`` with ``alpha ~ Dirichlet(1, 1)``. Lazily, so that the
    ensemble holds one batch at a time and a replay (:mod:`bparallel.book.claims.ensemble_design`)
    can consume the same draws without measuring them.
    """
    num = positive_int(num, "num")
    rng = np.random.default_rng(seed)
    for n in np.atleast_1d(sizes).tolist():
        for d in np.atleast_1d(densities).tolist():
            A = graphs.random_feedforward_adjacency(num, n, d, rng)
            yield n, "unweighted", d, graphs.walk_matrix_from_adjacency(A), None
        W = random_weighted_walk(num, n, weighted_density, concentration, rng)
        yield n, "weighted", weighted_density, W, None
        for kind in ("unweighted", "weighted"):
            if kind == "weighted":
                Wh = random_weighted_walk(2 * num, n, pair_density, concentration, rng)
            else:
                Wh = graphs.walk_matrix_from_adjacency(
                    graphs.random_feedforward_adjacency(2 * num, n, pair_density, rng))
            alpha = rng.dirichlet([1.0, 1.0], num)
            yield n, f"{kind} pair", pair_density, Wh.reshape(num, 2, n, n), alpha


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

    For each ``n`` in ``sizes``, in this order (the draws from ``seed``, made by
    :func:`theorem_2_8_draws`): ``num`` unweighted random heads (Eq. 1) per density of
    ``densities``; ``num`` weighted heads (:func:`random_weighted_walk`); the path and the
    complete DAG; then ``num`` pairs of unweighted and ``num`` pairs of weighted heads, each
    combined with weights ``alpha ~ Dirichlet(1, 1)``. ``heads`` has the columns of
    :func:`head_mixing_frame`, ``pairs`` those of :func:`combination_mixing_frame` (kinds
    ``"... pair"``).
    """
    frames, pair_frames = [], []
    for n, kind, d, W, alpha in theorem_2_8_draws(
            sizes, densities, num, seed, weighted_density=weighted_density,
            pair_density=pair_density, concentration=concentration):
        if alpha is not None:
            pair_frames.append(combination_mixing_frame(W, alpha, eps, kind=kind))
            continue
        frames.append(head_mixing_frame(W, eps, kind=kind, density=d))
        if kind == "weighted":  # the deterministic families follow the weighted heads
            for fam in ("path", "complete"):
                Wf = graphs.walk_matrix_from_adjacency(family_adjacency(fam, n))
                frames.append(head_mixing_frame(Wf, eps, kind=fam))
    return (lazy_pandas().concat(frames, ignore_index=True),
            lazy_pandas().concat(pair_frames, ignore_index=True))


def bound_ratios(*frames: pd.DataFrame) -> pd.DataFrame:
    """Concatenate mixing frames and add ``ratio = T_mix / (2N/p)`` and
    ``t_mix_over_t_star = T_mix / t*``.

    ``ratio <= 1`` is Theorem 2.8's claim; ``t_mix_over_t_star <= 1`` the exact coupling
    behind it.
    """
    if not frames:
        raise ValueError("bound_ratios needs at least one frame")
    out = lazy_pandas().concat(frames, ignore_index=True)
    out["ratio"] = out["t_mix"] / out["bound_2n_over_p"]
    out["t_mix_over_t_star"] = out["t_mix"] / out["t_star"]
    return out


def bound_summary(table: pd.DataFrame, eps: float = 0.25) -> pd.DataFrame:
    """Per ``(kind, n)`` of a :func:`bound_ratios` table: count (``graphs``), median and max
    ``ratio``, max ``t_mix_over_t_star``, heads with ``pN <= ln(1/eps)`` (``small_p_times_n``:
    where the proof's Hoeffding step of Theorem 2.8 is vacuous) and heads over the bound
    (``exceed``: ``ratio > 1``)."""
    eps = unit_interval(eps, "eps")
    cut = math.log(1 / eps)
    return table.groupby(["kind", "n"], sort=False).agg(
        graphs=("ratio", "size"), median_ratio=("ratio", "median"), max_ratio=("ratio", "max"),
        max_t_mix_over_t_star=("t_mix_over_t_star", "max"),
        small_p_times_n=("p_times_n", lambda s: int((s <= cut).sum())),
        exceed=("ratio", lambda s: int((s > 1).sum())))


def binomial_tail_at_bound(N: ArrayLike, p: ArrayLike) -> NDArray[np.float64]:
    """``Pr[Bin(floor(2N/p), p) < N]``: the lazy path's TV distance at Theorem 2.8's bound.

    By the coupling of :func:`binomial_mixing_bound` this is the worst TV distance of any
    feedforward chain at ``t = floor(2N/p)``. Broadcast over ``N`` (>= 1) and ``p``.
    """
    t_star = markov.mixing_time_bound_steps(np.asarray(N) + 1, p)
    return markov.forward_moves_shortfall(p, N, t_star)


def worst_case_bound_ratio(N: ArrayLike, p: ArrayLike, eps: float = 0.25) -> NDArray[np.float64]:
    """``t*(N, p) / (2N/p)``: the largest ``T_mix / (2N/p)`` over all feedforward chains
    (the lazy path attains ``t*``; :func:`binomial_mixing_bound`). Below 1: Theorem 2.8 holds."""
    p_arr = markov.check_forward_probability(p)
    return binomial_mixing_bound(N, p_arr, eps) / markov.mixing_time_bound(np.asarray(N) + 1, p_arr)


#: The values of ``epsilon`` at which Theorem 2.8 is checked under its own hypothesis.
HYPOTHESIS_EPS = (0.25, 0.1, 0.05, 0.01, 0.001)


def theorem_2_8_under_hypothesis(
    eps_values: ArrayLike = HYPOTHESIS_EPS, N_max: int = 200, num_p: int = 400
) -> pd.DataFrame:
    """Theorem 2.8 judged under the paper's own hypothesis, ``exp(-pN) <= epsilon`` (the
    proof's Eq. 10 below ``epsilon``): for every ``N`` in ``1..N_max`` and ``num_p`` values
    of ``p`` spaced geometrically in ``[1e-3, 1]``, the worst chain's TV distance at
    ``t = floor(2N/p)``, ``Pr[Bin(t, p) < N]`` (:func:`binomial_tail_at_bound`, attained by
    the lazy path, so no feedforward chain does worse); a *violation* of
    ``T_mix <= floor(2N/p)`` is a tail above ``epsilon``.

    One row per ``epsilon``: ``eps``, ``cases`` (grid points under the hypothesis),
    ``violations`` among them, ``max_tail_over_eps`` (the largest tail under the hypothesis
    over ``epsilon``), and ``violations_without`` (over the whole grid, hypothesis dropped:
    what the hypothesis rules out)."""
    eps = np.array([unit_interval(e, "eps_values") for e in np.atleast_1d(eps_values).tolist()])
    N_max, num_p = positive_int(N_max, "N_max"), positive_int(num_p, "num_p")
    N = np.arange(1, N_max + 1)[:, None]
    p = np.geomspace(1e-3, 1, num_p)[None, :]
    tails = binomial_tail_at_bound(N, p)           # (N_max, num_p): the worst chain at 2N/p
    rows = []
    for e in eps.tolist():
        under = np.exp(-p * N) <= e                # the paper's hypothesis
        rows.append({"eps": e, "cases": int(under.sum()),
                     "violations": int((tails[under] > e).sum()),
                     "max_tail_over_eps": float(tails[under].max() / e),
                     "violations_without": int((tails > e).sum())})
    return lazy_pandas().DataFrame(rows)


def lazy_path_eps_table(eps_values: ArrayLike, n: int = 2, p: float = 0.001) -> pd.DataFrame:
    """``T_mix`` of the lazy path (:func:`lazy_path_walk`) against ``2N/p`` for each ``eps``.

    With ``n = 2`` and small ``p`` it shows that Theorem 2.8's constant 2 needs
    ``eps >= e^-2`` (about 0.135). Columns ``eps``, ``t_mix``, ``bound_2n_over_p``,
    ``bound_holds``.
    """
    W = lazy_path_walk(n, p)
    bound = markov.mixing_time_bound(n, p)
    rows = []
    for e in np.atleast_1d(eps_values).tolist():
        T = int(markov.mixing_time(W, e))
        rows.append({"eps": e, "t_mix": T, "bound_2n_over_p": bound, "bound_holds": T <= bound})
    return lazy_pandas().DataFrame(rows)


def eq20_checks(pairs: pd.DataFrame) -> pd.DataFrame:
    """Boolean checks of Eq. 20, Eq. 3 and Eq. 12 per combination of a pairs frame
    (:func:`combination_mixing_frame`), with its ``kind`` column; ``.groupby("kind").mean()``
    gives the share of combinations where each holds. Columns ``eq20_left_holds``
    (``2N/max p_h <= T_mix``), ``eq3_holds`` (``T_mix <= 2N/p`` with Eq. 12's ``p``),
    ``eq20_right_holds`` (``T_mix <= 2N/min p_h``), ``p_chain_at_least_eq12``, ``kind``."""
    missing = {"kind", "p", "t_mix", "bound_2n_over_p", "p_chain", "bound_2n_over_max_p_h",
               "bound_2n_over_min_p_h"} - set(pairs)
    if missing:
        raise ValueError(f"pairs is missing the columns {sorted(missing)}")
    checks = lazy_pandas().DataFrame({
        "eq20_left_holds": pairs["bound_2n_over_max_p_h"] <= pairs["t_mix"],
        "eq3_holds": pairs["t_mix"] <= pairs["bound_2n_over_p"],
        "eq20_right_holds": pairs["t_mix"] <= pairs["bound_2n_over_min_p_h"],
        "p_chain_at_least_eq12": pairs["p_chain"] >= pairs["p"] - 1e-12,
    })
    checks["kind"] = pairs["kind"]
    return checks


# ------------------------------------------------------- head-set searches (Section 2.2)
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
    return over_head_sets(keys, num, densities, seed, lambda A, H: compare_mixing(
        graphs.walk_matrix_from_adjacency(A), eps, grid_steps=per_H(grid_steps, H, "grid_steps")))


def mixing_search_table(
    store: dict[tuple[str, int, int], tuple[NDArray[np.float64], MixingComparison]],
) -> pd.DataFrame:
    """One row per ``(search, n, H)`` of :func:`mixing_search`: head sets whose uniform or
    best grid combination mixes strictly faster than the fastest head (Eq. 5), uniform
    combinations slower than the slowest head, the largest speed-up, and the counts in %.
    Columns ``search, n, num_heads, head_sets, uniform_faster, best_faster, uniform_slower,
    max_speedup_steps`` and ``<count>_pct``."""
    rows = []
    for (search, n, H), (_, mc) in store.items():
        rows.append({"search": search, "n": n, "num_heads": H, "head_sets": mc.heads.shape[0],
                     "uniform_faster": int(mc.uniform_beats_fastest.sum()),
                     "best_faster": int(mc.best_beats_fastest.sum()),
                     "uniform_slower": int(mc.uniform_slower_than_slowest.sum()),
                     "max_speedup_steps": int((mc.fastest - mc.best).max())})
    table = lazy_pandas().DataFrame(rows)
    for col in ["uniform_faster", "best_faster", "uniform_slower"]:
        table[col + "_pct"] = (100 * table[col] / table["head_sets"]).round(2)
    return table


#: The values of ``epsilon`` at which the mixing-order counts are shown beside the headline.
ORDER_EPS = (0.25, 0.1, 0.01)


def mixing_order_by_eps(
    n: int = 5, eps_values: ArrayLike = ORDER_EPS, H: int = 2
) -> pd.DataFrame:
    """Section 2.2's orderings at several ``epsilon`` (Definition 2.7): over every set of
    ``H`` distinct feedforward graphs with a unique sink on ``n`` nodes (no draws), how many
    equal-weight combinations mix strictly faster than their fastest head and how many
    strictly slower than their slowest (as :class:`~bparallel.ensembles.MixingComparison`
    counts them; each graph's own mixing time is computed once, not once per set). One row
    per ``epsilon``: ``eps``, ``sets``, ``uniform_faster``, ``uniform_slower``."""
    n, H = positive_int(n, "n"), positive_int(H, "H")
    eps = [unit_interval(e, "eps_values") for e in np.atleast_1d(eps_values).tolist()]
    W = graphs.walk_matrix_from_adjacency(enumerate_feedforward_adjacency(n))
    sets = head_tuples(len(W), H)
    uniform = W[sets].mean(axis=-3)  # equal weights
    rows = []
    for e in eps:
        heads = np.asarray(markov.mixing_time(W, e))[sets]  # (sets, H)
        t_bar = np.asarray(markov.mixing_time(uniform, e))
        rows.append({"eps": e, "sets": len(sets),
                     "uniform_faster": int((t_bar < heads.min(axis=-1)).sum()),
                     "uniform_slower": int((t_bar > heads.max(axis=-1)).sum())})
    return lazy_pandas().DataFrame(rows)


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
    eps = unit_interval(eps, "eps")
    heads = [exact.walk(e, n) for e in edges_heads]
    bar = exact.combine(heads, [Fraction(w).limit_denominator(100) for w in weights])
    eps_q = Fraction(eps).limit_denominator(1000)
    return [*heads, bar], [exact.mixing_time(M, eps_q) for M in (*heads, bar)]


def pair_tv_curves(matrices: list[list[list[Fraction]]], mixing_times: list[int]
                   ) -> list[NDArray[np.float64]]:
    """What :func:`bparallel.book.render.plotting.plot_pair_mixing` draws under each graph:
    per matrix of :func:`exact_combination_mixing` (heads, then the combination), the TV
    distance to the sink from every start at ``t = 0 .. max(mixing_times) + 3``
    (:func:`bparallel.ensembles.tv_curves`, Definition 2.7), ``(horizon + 1, n)``."""
    if len(matrices) != len(mixing_times):
        raise ValueError(f"matrices and mixing_times have {len(matrices)} and "
                         f"{len(mixing_times)} entries: expected one time per matrix")
    horizon = max(int(t) for t in mixing_times) + 3
    return [tv_curves(np.array([[float(x) for x in row] for row in M]), horizon)
            for M in matrices]


def exact_matrices_table(
    matrices: list[list[list[Fraction]]],
    names: tuple[str, ...] = ("W head 1", "W head 2", "W-bar"),
    labels: list[str] | None = None,
) -> pd.DataFrame:
    """Exact matrices side by side for display, each entry written as a fraction (``"1/2"``):
    one block of columns per matrix, headed by its name. As in Definition 2.3, entry
    ``(i, j)`` is the probability of moving from node ``j`` to node ``i``: the columns are
    labelled ``from 0, ..., from τ`` (each sums to 1) and the rows, the index named ``to``,
    ``0, ..., n-2, τ`` (node names ``labels`` when given). ``matrices`` as the first element
    returned by :func:`exact_combination_mixing`."""
    if len(matrices) != len(names):
        raise ValueError(f"names must have one entry per matrix ({len(matrices)}), got {names}")
    n = len(matrices[0])
    labels = list(labels) if labels is not None else [str(k) for k in range(n - 1)] + ["τ"]
    if len(labels) != n:
        raise ValueError(f"labels must have {n} entries, got {labels}")
    pd = lazy_pandas()
    index = pd.Index(labels, name="to")
    senders = [f"from {lab}" for lab in labels]
    return pd.concat({name: pd.DataFrame([[str(x) for x in row] for row in M], index=index,
                                         columns=senders)
                      for name, M in zip(names, matrices, strict=True)}, axis=1)

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
    """Simulated ``Pr(max_h p_h >= pbar)`` against Eq. 18's ``1 - F(pbar)^H``, per ``H``
    (:func:`bparallel.ensembles.simulate_best_head`) as a frame: columns ``law``
    (``label``), ``pbar``, ``num_heads``, ``simulated``, ``theory`` (``1 - F(p̄)^H``), ``z``.
    """
    sim = simulate_best_head(draw, pbar, F, Hs, trials, pool_size=pool_size)
    rows = [{"law": label, "pbar": pbar, "num_heads": int(H), "simulated": float(s),
             "theory": float(t), "z": float(z)}
            for H, s, t, z in zip(sim.num_heads, sim.simulated, sim.theory, sim.z, strict=True)]
    return lazy_pandas().DataFrame(rows)


def atom_best_head_table(
    p: ArrayLike, Hs: ArrayLike, pbar: float, label: str = "unweighted DAGs"
) -> pd.DataFrame:
    """Eq. 18 when ``F`` has an atom at ``pbar``: the best of ``H`` of the draws ``p`` (split
    into consecutive groups of ``H``) against ``1 - F(pbar)^H`` with ``F(pbar) = Pr(p <= pbar)``
    and with the left limit ``F(pbar-) = Pr(p < pbar)`` (:func:`cdf_below`); two rows per ``H``,
    the columns of :func:`best_head_simulation` (``z`` is NaN: there is no sampling error
    to compare against)."""
    p = np.ravel(np.asarray(p, dtype=np.float64))
    F_le = float(np.mean(p <= pbar))
    F_lt = cdf_below(p, pbar)
    rows = []
    for H in np.asarray(Hs):
        if H > p.size:
            raise ValueError(f"H = {H} exceeds the {p.size} draws of p")
        sim = float(best_head_exceedance(p[: (p.size // H) * H].reshape(-1, H), pbar))
        rows.append({"law": f"{label}, F(p̄) = Pr(p ≤ p̄)", "pbar": pbar, "num_heads": int(H),
                     "simulated": sim, "theory": float(markov.prob_best_head_at_least(F_le, H)),
                     "z": np.nan})
        rows.append({"law": f"{label}, F(p̄-) = Pr(p < p̄)", "pbar": pbar, "num_heads": int(H),
                     "simulated": sim, "theory": float(markov.prob_best_head_at_least(F_lt, H)),
                     "z": np.nan})
    return lazy_pandas().DataFrame(rows)
