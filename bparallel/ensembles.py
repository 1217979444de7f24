"""Graph ensembles for the claims of Sections 2-3: batched primitives (numpy only).

Everything here is a small pure function over stacks of graphs, so that one call handles
thousands of heads (no Python loop per graph in the hot paths). The core quantities come
from :mod:`bparallel.graphs`, :mod:`bparallel.markov` and :mod:`bparallel.fidelity`; this
module adds the ensembles and the comparisons:

- ensembles: :func:`count_feedforward_unique_sink`, :func:`enumerate_feedforward_adjacency`
  (every feedforward graph with unique sink, Definitions 2.1-2.2), :func:`family_adjacency`
  (paths, complete DAGs, stars, ...), :func:`random_weighted_walk` (attention-like weights
  on a random feedforward graph, so that ``p_h`` of Theorem 2.8 varies);
- Theorem 2.8: :func:`tv_curves`,
  :func:`binomial_mixing_bound` (the proof's binomial, exactly), :func:`combination_mixing_times`;
- Section 2.2 and Eq. 5: :func:`simplex_grid`, :func:`compare_mixing`;
- Section 3.1: :func:`compare_fidelity`, :func:`edge_jaccard` (Remark 3.7's cross-head
  paths: :mod:`bparallel.cross_head`);
- Eqs. 16-19: :func:`best_head_exceedance`, :func:`simulate_best_head`, :func:`cdf_below`.

The chapter's tables built on these live in :mod:`bparallel.book.claims`.

Heads are stacked as ``(..., H, n, n)``; weight grids as ``(K, H)``. Walk matrices ``W``
are column-stochastic (Eq. 1), diffusion matrices ``Delta`` row-stochastic (Eq. 21), the
sink is node ``n - 1``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import fidelity, graphs, markov
from ._checks import positive_int, unit_interval

__all__ = [
    "count_feedforward_unique_sink",
    "enumerate_feedforward_adjacency",
    "FAMILIES",
    "family_adjacency",
    "random_weighted_walk",
    "random_head_stacks",
    "lazy_path_walk",
    "edge_count",
    "edge_jaccard",
    "head_tuples",
    "simplex_grid",
    "combinations",
    "tv_curves",
    "binomial_mixing_bound",
    "combination_mixing_times",
    "MixingComparison",
    "compare_mixing",
    "FidelityComparison",
    "compare_fidelity",
    "best_head_exceedance",
    "BestHeadSimulation",
    "simulate_best_head",
    "cdf_below",
    # the claims chapters' tables (03 and 06)
]

#: Largest ``n`` that :func:`enumerate_feedforward_adjacency` accepts (615,195 graphs at 7).
MAX_ENUMERATE_N = 7


# ---------------------------------------------------------------------------- ensembles
def count_feedforward_unique_sink(n: int) -> int:
    """Number of feedforward graphs on ``n`` labelled nodes whose unique sink is ``n - 1``.

    Every node ``j < n - 1`` must send to a non-empty subset of ``{j+1, ..., n-1}``
    (Definitions 2.1-2.2, self-loops implied), and the choices are independent, so the
    count is ``prod_{j=0}^{n-2} (2^(n-1-j) - 1)``: 1, 1, 3, 21, 315, 9765, 615195.
    """
    n = positive_int(n, "n")
    return math.prod(2 ** (n - 1 - j) - 1 for j in range(n - 1))


def enumerate_feedforward_adjacency(n: int) -> NDArray[np.float64]:
    """All feedforward adjacency matrices with unique sink ``n - 1``: ``(G, n, n)``.

    ``A[g, i, j] = 1`` iff ``j -> i`` (self-loops on the diagonal), as
    :func:`bparallel.graphs.random_feedforward_adjacency`. Graph ``g`` is decoded in mixed
    radix: node ``j``'s set of targets is the ``(g_j + 1)``-th non-empty subset of
    ``{j+1, ..., n-1}`` in binary order, node 0 the fastest digit. ``n <= 7``.
    """
    n = positive_int(n, "n")
    if n > MAX_ENUMERATE_N:
        raise ValueError(
            f"n must be at most {MAX_ENUMERATE_N} to enumerate (n = {n} has "
            f"{count_feedforward_unique_sink(n)} graphs); sample instead"
        )
    G = count_feedforward_unique_sink(n)
    A = np.zeros((G, n, n))
    A[:, np.arange(n), np.arange(n)] = 1.0
    rest = np.arange(G)
    for j in range(n - 1):
        radix = 2 ** (n - 1 - j) - 1
        code = rest % radix + 1  # 1 .. 2^(n-1-j) - 1: a non-empty subset
        rest = rest // radix
        bits = (code[:, None] >> np.arange(n - 1 - j)) & 1  # bit k: edge j -> j+1+k
        A[:, j + 1 :, j] = bits
    return A


def _adjacency_from_edges(edges: list[tuple[int, int]], n: int) -> NDArray[np.float64]:
    return graphs.adjacency_matrix(edges, n)


#: Deterministic graph families of the claims chapters (each with unique sink ``n - 1``).
FAMILIES = ("path", "complete", "star", "path+star", "skip-2", "powers-of-2")


def family_adjacency(family: str, n: int) -> NDArray[np.float64]:
    """Adjacency ``(n, n)`` of a named family (``n >= 2``):

    - ``"path"``: ``j -> j+1`` (the line graph; the proof's worst case);
    - ``"complete"``: every ``j -> i`` with ``j < i`` (full causal attention);
    - ``"star"``: every ``j -> tau`` only (everything to the sink);
    - ``"path+star"``: both of the above;
    - ``"skip-2"``: ``j -> j+1`` and ``j -> j+2``;
    - ``"powers-of-2"``: ``j -> j + 2^k`` for every ``k`` with ``j + 2^k < n``.
    """
    n = positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be at least 2 for a graph family, got {n}")
    path = graphs.line_graph_edges(n)
    star = [(j, n - 1) for j in range(n - 1)]
    if family == "path":
        edges = path
    elif family == "complete":
        edges = graphs.complete_dag_edges(n)
    elif family == "star":
        edges = star
    elif family == "path+star":
        edges = path + star
    elif family == "skip-2":
        edges = path + [(j, j + 2) for j in range(n - 2)]
    elif family == "powers-of-2":
        edges = [(j, j + 2**k) for j in range(n) for k in range(n.bit_length())
                 if j + 2**k < n]
    else:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    return _adjacency_from_edges(edges, n)


def random_weighted_walk(
    num: int,
    n: int,
    density: float,
    concentration: float = 1.0,
    seed: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    """``(num, n, n)`` column-stochastic, lower-triangular walk matrices with random weights.

    The support is a random feedforward graph with unique sink
    (:func:`bparallel.graphs.random_feedforward_adjacency`, self-loops included); column
    ``j`` (node ``j``'s out-going distribution) is Dirichlet(``concentration``) on that
    support, like an attention pattern. Unlike Eq. 1's uniform weights, the forward
    probability ``p_h`` of Theorem 2.8 then varies from head to head.
    """
    concentration = float(concentration)
    if not concentration > 0 or not math.isfinite(concentration):
        raise ValueError(f"concentration must be a positive number, got {concentration}")
    rng = np.random.default_rng(seed)
    A = graphs.random_feedforward_adjacency(num, n, density, rng)
    gam = rng.gamma(concentration, size=A.shape) * A
    gam[:, -1, -1] = 1.0  # the sink keeps all its mass
    return gam / gam.sum(axis=-2, keepdims=True)


def random_head_stacks(
    num: int,
    H: int,
    n: int,
    densities: ArrayLike,
    seed: int | np.random.Generator | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``num`` stacks of ``H`` random feedforward heads with unique sink: ``(num, H, n, n)``.

    Each head draws its edge density uniformly from ``densities`` (independently of the
    other heads), then its graph from :func:`bparallel.graphs.random_feedforward_adjacency`.
    Returns ``(adjacency, density)`` with ``density`` of shape ``(num, H)``.
    """
    num = positive_int(num, "num")
    H = positive_int(H, "H")
    dens = np.atleast_1d(np.asarray(densities, dtype=np.float64))
    rng = np.random.default_rng(seed)
    pick = rng.integers(dens.size, size=num * H)
    A = np.empty((num * H, n, n))
    for k, d in enumerate(dens):  # one batched draw per density (a handful), not per graph
        where = np.flatnonzero(pick == k)
        if where.size:
            A[where] = graphs.random_feedforward_adjacency(where.size, n, float(d), rng)
    return A.reshape(num, H, n, n), dens[pick].reshape(num, H)


def lazy_path_walk(n: int, p: ArrayLike) -> NDArray[np.float64]:
    """The lazy path: from each ``j < n-1`` move to ``j+1`` w.p. ``p``, else stay: ``(..., n, n)``.

    Every step is forward with probability exactly ``p`` and exactly ``N = n - 1`` forward
    moves reach the sink, so its TV distance from node 0 *is* ``Pr[Bin(t, p) < N]``: the
    proof of Theorem 2.8 with equality. Batched over ``p`` in (0, 1].
    """
    n = positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    p = markov.check_forward_probability(p)
    W = np.zeros(p.shape + (n, n))
    idx = np.arange(n - 1)
    W[..., idx, idx] = 1.0 - p[..., None]
    W[..., idx + 1, idx] = p[..., None]
    W[..., n - 1, n - 1] = 1.0
    return W


def edge_count(adjacency: ArrayLike) -> NDArray[np.int64]:
    """Number of proper (non-self-loop) edges of each ``(..., n, n)`` adjacency matrix."""
    A = np.asarray(adjacency) != 0
    n = A.shape[-1]
    return (A.sum(axis=(-2, -1)) - A[..., np.arange(n), np.arange(n)].sum(-1)).astype(np.int64)


def edge_jaccard(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Jaccard overlap ``|E_a & E_b| / |E_a | E_b|`` of two heads' proper edge sets.

    Batched over leading dimensions of the ``(..., n, n)`` adjacency matrices (self-loops
    ignored); 1 for identical heads, 0 for edge-disjoint ones.
    """
    A = np.asarray(a) != 0
    B = np.asarray(b) != 0
    off = ~np.eye(A.shape[-1], dtype=bool)
    inter = (A & B & off).sum(axis=(-2, -1))
    union = ((A | B) & off).sum(axis=(-2, -1))
    return np.where(union > 0, inter / np.maximum(union, 1), 1.0)


def head_tuples(num_graphs: int, H: int) -> NDArray[np.int64]:
    """All ``C(num_graphs, H)`` sets of ``H`` distinct graph indices, ``(C, H)``, sorted."""
    num_graphs = positive_int(num_graphs, "num_graphs")
    H = positive_int(H, "H")
    if H == 2:
        i, j = np.triu_indices(num_graphs, 1)
        return np.stack([i, j], axis=1)
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(num_graphs), H)),
        dtype=np.int64,
    )
    return flat.reshape(-1, H)


def simplex_grid(H: int, steps: int) -> NDArray[np.float64]:
    """All convex weights with entries ``k / steps`` (``(K, H)``, ``K = C(steps+H-1, H-1)``).

    Row 0 is ``(1, 0, ..., 0)``; every vertex of the simplex (a single head) is included,
    so a grid search can always fall back to the best single head.
    """
    H = positive_int(H, "H")
    steps = positive_int(steps, "steps")
    rows = [c for c in itertools.product(range(steps + 1), repeat=H) if sum(c) == steps]
    return np.array(sorted(rows, reverse=True), dtype=np.float64) / steps


def combinations(matrices: ArrayLike, weights: ArrayLike) -> NDArray[np.float64]:
    """Every weight vector applied to every head stack: ``(..., H, n, n)``, ``(K, H)`` ->
    ``(..., K, n, n)`` (the ``W-bar`` of Section 2.2, the ``Delta-bar`` of Eq. 26), by
    :func:`bparallel.graphs.convex_combination` broadcast over the ``K`` weight vectors."""
    M = np.asarray(matrices, dtype=np.float64)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    return graphs.convex_combination(M[..., None, :, :, :], w)


# ------------------------------------------------------------------ Theorem 2.8 (mixing)
def tv_curves(W: ArrayLike, horizon: int) -> NDArray[np.float64]:
    """``||W^t e_j - 1_tau||_TV = 1 - (W^t)[tau, j]`` for ``t = 0..horizon``: ``(..., T+1, n)``.

    The distance of Definition 2.7 per start node ``j`` (before the max over ``j``), by the
    sink-row recursion :func:`bparallel.fidelity.sink_rows`.
    """
    W = graphs.check_stochastic(W, axis=-2, name="W")
    return 1.0 - fidelity.sink_rows(W, positive_int(horizon, "horizon"))


def binomial_mixing_bound(N: ArrayLike, p: ArrayLike, eps: float = 0.25) -> NDArray[np.int64]:
    """The least ``t`` with ``Pr[Bin(t, p) < N] <= eps``: the proof of Theorem 2.8, made exact.

    If every step of a feedforward chain is a forward move with probability at least ``p``
    and ``N`` forward moves reach the sink, a coupling with ``t`` independent coins gives
    ``Pr[not at tau after t steps] <= Pr[Bin(t, p) < N]``; so ``T_mix(eps)`` is at most
    this ``t``, with equality on the path (where the law *is* that binomial). Batched over
    broadcast ``N`` (integers >= 1) and ``p`` (in (0, 1]); vectorised bisection on ``t``.
    Tails within ``markov.TV_ATOL`` of ``eps`` count as reached, as in ``mixing_time``.
    """
    eps = unit_interval(eps, "eps")
    N_arr = np.asarray(N)
    if (N_arr < 1).any() or not np.all(N_arr == np.floor(N_arr)):
        raise ValueError(f"N must be integers >= 1, got {N_arr.tolist()}")
    p_arr = markov.check_forward_probability(p)
    N_b, p_b = np.broadcast_arrays(N_arr.astype(np.int64), p_arr)

    def tail(t: NDArray[np.int64]) -> NDArray[np.float64]:
        return np.asarray(markov.forward_moves_shortfall(p_b, N_b, t)) - markov.TV_ATOL

    lo = N_b - 1  # Pr[Bin(N-1, p) < N] = 1 > eps
    hi = np.asarray(markov.mixing_time_bound_steps(N_b + 1, p_b)) + 1  # first guess, doubled below
    while True:  # make sure hi satisfies the condition
        bad = tail(hi) > eps
        if not bad.any():
            break
        hi = np.where(bad, 2 * hi, hi)
    while np.any(hi - lo > 1):  # invariant: tail(lo) > eps >= tail(hi)
        mid = (lo + hi) // 2
        ok = tail(mid) <= eps
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return hi


def combination_mixing_times(
    W_heads: ArrayLike, weights: ArrayLike, eps: float = 0.25
) -> NDArray[np.int64]:
    """Exact ``T_mix`` of ``W-bar = sum_h alpha_h W^(h)`` for every row of ``weights``.

    ``W_heads`` ``(..., H, n, n)``, ``weights`` ``(K, H)`` -> ``(..., K)``.
    """
    return markov.mixing_time(combinations(W_heads, weights), eps)


@dataclass(frozen=True)
class MixingComparison:
    """Exact mixing times of heads and of their combinations (Section 2.2, Eq. 5).

    ``heads`` ``(..., H)``; ``uniform`` ``(...)`` (equal weights); ``grid`` ``(..., K)``
    (every weight of ``weights``, ``(K, H)``); ``best`` ``(...)`` the grid minimum and
    ``best_weights`` ``(..., H)`` the first weights attaining it.
    """

    heads: NDArray[np.int64]
    uniform: NDArray[np.int64]
    weights: NDArray[np.float64]
    grid: NDArray[np.int64]

    @property
    def fastest(self) -> NDArray[np.int64]:
        """``min_h T_mix(W^(h))``."""
        return self.heads.min(axis=-1)

    @property
    def slowest(self) -> NDArray[np.int64]:
        """``max_h T_mix(W^(h))``."""
        return self.heads.max(axis=-1)

    @property
    def best(self) -> NDArray[np.int64]:
        return self.grid.min(axis=-1)

    @property
    def best_weights(self) -> NDArray[np.float64]:
        return self.weights[np.argmin(self.grid, axis=-1)]

    @property
    def uniform_beats_fastest(self) -> NDArray[np.bool_]:
        """The combination with equal weights mixes *strictly* faster than every head."""
        return self.uniform < self.fastest

    @property
    def uniform_slower_than_slowest(self) -> NDArray[np.bool_]:
        """The combination with equal weights mixes strictly slower than every head."""
        return self.uniform > self.slowest

    @property
    def best_beats_fastest(self) -> NDArray[np.bool_]:
        """Some grid weights mix strictly faster than every head."""
        return self.best < self.fastest


def compare_mixing(
    W_heads: ArrayLike, eps: float = 0.25, *, grid_steps: int = 10
) -> MixingComparison:
    """Heads vs their uniform and grid-optimised combinations, exactly (Section 2.2, Eq. 5).

    ``W_heads`` ``(..., H, n, n)``. The grid is :func:`simplex_grid` ``(H, grid_steps)``,
    which contains every single head, so ``best <= fastest`` always holds.
    """
    W = np.asarray(W_heads, dtype=np.float64)
    if W.ndim < 3:
        raise ValueError(f"W_heads must have shape (..., H, n, n), got {W.shape}")
    H = W.shape[-3]
    w = simplex_grid(H, grid_steps)
    return MixingComparison(
        heads=markov.mixing_time(W, eps),
        uniform=combination_mixing_times(W, np.full((1, H), 1.0 / H), eps)[..., 0],
        weights=w,
        grid=combination_mixing_times(W, w, eps),
    )


# ------------------------------------------------------------- Section 3.1 (fidelity)
@dataclass(frozen=True)
class FidelityComparison:
    """Minimax fidelities (Defs 3.5, 3.10-3.11) of heads and of their combinations.

    ``heads`` ``(..., H)``; ``node`` ``(..., H, n)`` the heads' node fidelities; ``uniform``
    ``(...)`` for equal weights; ``grid`` ``(..., K)`` for every weight row of ``weights``.
    """

    heads: NDArray[np.float64]
    node: NDArray[np.float64]
    uniform: NDArray[np.float64]
    weights: NDArray[np.float64]
    grid: NDArray[np.float64]

    @property
    def best_head(self) -> NDArray[np.float64]:
        """``phi_min^(h_*) = max_h phi_min^(h)`` (Eq. 30)."""
        return self.heads.max(axis=-1)

    @property
    def amp_uniform(self) -> NDArray[np.float64]:
        """``phi_min^multi - phi_min^(h_*)`` with equal weights."""
        return self.uniform - self.best_head

    @property
    def amp_best(self) -> NDArray[np.float64]:
        """The same with the grid's best weights (>= 0: the grid holds every single head)."""
        return self.grid.max(axis=-1) - self.best_head

    @property
    def best_weights(self) -> NDArray[np.float64]:
        return self.weights[np.argmax(self.grid, axis=-1)]


def compare_fidelity(
    D_heads: ArrayLike, horizon: int, *, grid_steps: int = 10
) -> FidelityComparison:
    """Heads' minimax fidelity vs the combinations' (Section 3.1), batched.

    ``D_heads`` ``(..., H, n, n)`` row-stochastic; the minimum runs over non-sink nodes and
    ``t = 1..horizon`` (as :func:`bparallel.fidelity.minimax_fidelity`).
    """
    D = graphs.check_stochastic(D_heads, axis=-1, name="D_heads")
    if D.ndim < 3:
        raise ValueError(f"D_heads must have shape (..., H, n, n), got {D.shape}")
    H = D.shape[-3]
    w = simplex_grid(H, grid_steps)
    node, _ = fidelity.node_fidelity(D, horizon)
    uni = combinations(D, np.full((1, H), 1.0 / H))[..., 0, :, :]
    return FidelityComparison(
        heads=node[..., :-1].min(axis=-1),
        node=node,
        uniform=np.asarray(fidelity.minimax_fidelity(uni, horizon)),
        weights=w,
        grid=np.asarray(fidelity.minimax_fidelity(combinations(D, w), horizon)),
    )


# ------------------------------------------------------------------------- Eqs. 16-19
def cdf_below(samples: ArrayLike, pbar: ArrayLike) -> NDArray[np.float64]:
    """Empirical ``Pr(p < pbar)`` (the left limit ``F(pbar-)``) for each ``pbar``.

    Eq. 16 needs ``Pr(p_h >= pbar) = 1 - F(pbar-)``; with atoms in ``F`` (such as the
    ``p_h = 1/2`` of every unweighted head) ``F(pbar) = Pr(p <= pbar)`` would be wrong.
    """
    s = np.sort(np.ravel(np.asarray(samples, dtype=np.float64)))
    if s.size == 0:
        raise ValueError("samples must not be empty")
    return np.searchsorted(s, np.asarray(pbar, dtype=np.float64), side="left") / s.size


def best_head_exceedance(p_heads: ArrayLike, pbar: ArrayLike) -> NDArray[np.float64]:
    """Simulated ``Pr(max_h p_h >= pbar)`` (Eq. 18) from draws ``p_heads`` ``(trials, H)``."""
    p = np.asarray(p_heads, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"p_heads must have shape (trials, H), got {p.shape}")
    best = p.max(axis=1)
    pb = np.asarray(pbar, dtype=np.float64)
    return (best[:, None] >= np.ravel(pb)[None, :]).mean(axis=0).reshape(pb.shape)


@dataclass(frozen=True)
class BestHeadSimulation:
    """Eq. 18 simulated, per number of heads: ``num_heads``, ``simulated``
    (``Pr(max_h p_h >= pbar)`` over the trials), ``theory`` (``1 - F(pbar)^H``) and ``z``
    (the binomial z-score of their difference; 0 where the variance is 0)."""

    num_heads: NDArray[np.int64]
    simulated: NDArray[np.float64]
    theory: NDArray[np.float64]
    z: NDArray[np.float64]


def simulate_best_head(draw: Callable[[tuple[int, int]], ArrayLike], pbar: float, F: float,
                       Hs: ArrayLike, trials: int, *, pool_size: int = 0) -> BestHeadSimulation:
    """Simulated ``Pr(max_h p_h >= pbar)`` against Eq. 18's ``1 - F(pbar)^H``, per ``H`` of
    ``Hs`` (chapters 02 and 03).

    ``draw(shape)`` returns i.i.d. forward probabilities of shape ``(trials, H)``; it is
    called once per ``H`` in the order of ``Hs``. ``z`` is the binomial z-score; when ``F``
    is itself estimated from a pool of ``pool_size`` draws, its variance is added by the
    delta method.
    """
    trials = positive_int(trials, "trials")
    if not 0.0 <= F <= 1.0:
        raise ValueError(f"F must lie in [0, 1], got {F}")
    heads, sims, theories, zs = [], [], [], []
    for H in np.asarray(Hs):
        sim = float(best_head_exceedance(draw((trials, int(H))), pbar))
        theory = float(markov.prob_best_head_at_least(F, H))
        var = theory * (1 - theory) / trials
        if pool_size:  # F itself is estimated: delta method
            var += (H * F ** (H - 1)) ** 2 * F * (1 - F) / pool_size
        heads.append(int(H))
        sims.append(sim)
        theories.append(theory)
        zs.append((sim - theory) / math.sqrt(var) if var > 0 else 0.0)
    return BestHeadSimulation(np.array(heads, dtype=np.int64), np.array(sims),
                              np.array(theories), np.array(zs))
