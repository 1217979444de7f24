"""Claims of Sections 2-3 tested on graph ensembles: batched helpers for chapter 5.

Everything here is a small pure function over stacks of graphs, so that one call handles
thousands of heads (no Python loop per graph in the hot paths). The core quantities come
from :mod:`bparallel.graphs`, :mod:`bparallel.markov` and :mod:`bparallel.fidelity`; this
module adds the ensembles and the comparisons:

- ensembles: :func:`count_feedforward_unique_sink`, :func:`enumerate_feedforward_adjacency`
  (every feedforward graph with unique sink, Definitions 2.1-2.2), :func:`family_adjacency`
  (paths, complete DAGs, stars, ...), :func:`random_weighted_walk` (attention-like weights
  on a random feedforward graph, so that ``p_h`` of Theorem 2.8 varies);
- Theorem 2.8: :func:`tv_curves`, :func:`mixing_times` (memory-bounded batches),
  :func:`binomial_mixing_bound` (the proof's binomial, exactly), :func:`combination_mixing_times`;
- Section 2.2 and Eq. 5: :func:`simplex_grid`, :func:`compare_mixing`;
- Section 3.1 and Remark 3.7: :func:`compare_fidelity`, :func:`cross_head_share`,
  :func:`node_best_head_gain`, :func:`edge_jaccard`;
- Eqs. 16-19: :func:`best_head_exceedance`, :func:`cdf_below`.

The chapter's tables (pandas DataFrames; pandas is imported lazily) are built by small
functions on top of these, one per experiment, each taking an explicit ``seed``:

- Theorem 2.8, Eqs. 12 and 20: :func:`theorem_2_8_ensemble` (from :func:`head_mixing_frame`
  and :func:`combination_mixing_frame`), :func:`bound_ratios`, :func:`bound_summary`,
  :func:`binomial_tail_at_bound`, :func:`worst_case_bound_ratio`,
  :func:`lazy_path_eps_table`, :func:`eq20_checks`;
- Section 2.2: :func:`head_sets`, :func:`mixing_search`, :func:`mixing_search_table`,
  :func:`fewest_edges_index`, :func:`exact_combination_mixing`;
- Section 3.1: :func:`fidelity_search`, :func:`amplification_table`, :func:`horizon_sweep`,
  :func:`amplification_features`, :func:`feature_correlations`,
  :func:`amplified_by_jaccard`, :func:`top_amplifying`;
- the mixing-fidelity trade-off: :func:`tradeoff_table`, :func:`tradeoff_correlation`,
  :func:`dominated_fraction`;
- Eqs. 16-19: :func:`weighted_forward_probabilities`, :func:`best_head_simulation`,
  :func:`atom_best_head_table`.

Heads are stacked as ``(..., H, n, n)``; weight grids as ``(K, H)``. Walk matrices ``W``
are column-stochastic (Eq. 1), diffusion matrices ``Delta`` row-stochastic (Eq. 21), the
sink is node ``n - 1``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import exact, fidelity, graphs, markov

if TYPE_CHECKING:
    import pandas as pd

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
    "combine_heads",
    "tv_curves",
    "mixing_times",
    "binomial_mixing_bound",
    "combination_mixing_times",
    "MixingComparison",
    "compare_mixing",
    "FidelityComparison",
    "compare_fidelity",
    "cross_head_share",
    "new_walk_share",
    "node_best_head_gain",
    "best_head_exceedance",
    "cdf_below",
    # chapter 5 tables
    "AMP_TOL",
    "SEARCH_COLUMNS",
    "HORIZON_COLUMNS",
    "FEATURES",
    "head_mixing_frame",
    "combination_mixing_frame",
    "theorem_2_8_ensemble",
    "bound_ratios",
    "bound_summary",
    "binomial_tail_at_bound",
    "worst_case_bound_ratio",
    "lazy_path_eps_table",
    "eq20_checks",
    "head_sets",
    "mixing_search",
    "mixing_search_table",
    "fewest_edges_index",
    "exact_combination_mixing",
    "fidelity_search",
    "amplification_summary",
    "amplification_table",
    "horizon_sweep",
    "amplification_features",
    "feature_correlations",
    "amplified_by_jaccard",
    "top_amplifying",
    "tradeoff_table",
    "tradeoff_correlation",
    "dominated_fraction",
    "weighted_forward_probabilities",
    "best_head_simulation",
    "atom_best_head_table",
]

#: Largest ``n`` that :func:`enumerate_feedforward_adjacency` accepts (615,195 graphs at 7).
MAX_ENUMERATE_N = 7
#: Matrix entries per chunk in :func:`mixing_times` (bounds memory of the squarings).
CHUNK_ENTRIES = 2_000_000


# ---------------------------------------------------------------------------- ensembles
def count_feedforward_unique_sink(n: int) -> int:
    """Number of feedforward graphs on ``n`` labelled nodes whose unique sink is ``n - 1``.

    Every node ``j < n - 1`` must send to a non-empty subset of ``{j+1, ..., n-1}``
    (Definitions 2.1-2.2, self-loops implied), and the choices are independent, so the
    count is ``prod_{j=0}^{n-2} (2^(n-1-j) - 1)``: 1, 1, 3, 21, 315, 9765, 615195.
    """
    n = graphs.check_n(n)
    return math.prod(2 ** (n - 1 - j) - 1 for j in range(n - 1))


def enumerate_feedforward_adjacency(n: int) -> NDArray[np.float64]:
    """All feedforward adjacency matrices with unique sink ``n - 1``: ``(G, n, n)``.

    ``A[g, i, j] = 1`` iff ``j -> i`` (self-loops on the diagonal), as
    :func:`bparallel.graphs.random_feedforward_adjacency`. Graph ``g`` is decoded in mixed
    radix: node ``j``'s set of targets is the ``(g_j + 1)``-th non-empty subset of
    ``{j+1, ..., n-1}`` in binary order, node 0 the fastest digit. ``n <= 7``.
    """
    n = graphs.check_n(n)
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


#: Deterministic graph families of chapter 5 (each with unique sink ``n - 1``).
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
    n = graphs.check_n(n)
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
    num = graphs.check_n(num, "num")
    H = graphs.check_n(H, "H")
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
    n = graphs.check_n(n)
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    p = markov._check_p(p)
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
    num_graphs = graphs.check_n(num_graphs, "num_graphs")
    H = graphs.check_n(H, "H")
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
    H = graphs.check_n(H, "H")
    steps = graphs.check_n(steps, "steps")
    rows = [c for c in itertools.product(range(steps + 1), repeat=H) if sum(c) == steps]
    return np.array(sorted(rows, reverse=True), dtype=np.float64) / steps


def combine_heads(matrices: ArrayLike, weights: ArrayLike) -> NDArray[np.float64]:
    """Every weight vector applied to every head stack: ``(..., H, n, n)``, ``(K, H)`` ->
    ``(..., K, n, n)`` (the ``W-bar`` of Section 2.2, the ``Delta-bar`` of Eq. 26)."""
    M = np.asarray(matrices, dtype=np.float64)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    graphs.check_weights(w, M.shape[-3])
    if np.abs(w.sum(-1) - 1).max() > 1e-9:
        raise ValueError(f"weights must sum to 1 (convex), got sums {w.sum(-1).tolist()}")
    return np.einsum("kh,...hij->...kij", w, M)


# ------------------------------------------------------------------ Theorem 2.8 (mixing)
def tv_curves(W: ArrayLike, horizon: int) -> NDArray[np.float64]:
    """``||W^t e_j - 1_tau||_TV = 1 - (W^t)[tau, j]`` for ``t = 0..horizon``: ``(..., T+1, n)``.

    The distance of Definition 2.7 per start node ``j`` (before the max over ``j``), by the
    row recursion ``e_tau^T W^(t+1) = (e_tau^T W^t) W``.
    """
    W = graphs.check_stochastic(W, axis=-2, name="W")
    horizon = fidelity.check_horizon(horizon)
    n = W.shape[-1]
    row = np.zeros(W.shape[:-2] + (n,))
    row[..., -1] = 1.0
    out = np.empty(W.shape[:-2] + (horizon + 1, n))
    out[..., 0, :] = 1.0 - row
    for t in range(1, horizon + 1):
        row = np.einsum("...k,...kj->...j", row, W)
        out[..., t, :] = 1.0 - row
    return out


def mixing_times(W: ArrayLike, eps: float = 0.25) -> NDArray[np.int64]:
    """Exact mixing times (Definition 2.7) of a ``(..., n, n)`` stack, in memory-bounded chunks.

    The same numbers as :func:`bparallel.markov.mixing_time`, which it calls on chunks of at
    most ``CHUNK_ENTRIES`` matrix entries; always returns an int array of shape ``(...)``.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim < 2:
        raise ValueError(f"W must have shape (..., n, n), got {W.shape}")
    batch = W.shape[:-2]
    n = W.shape[-1]
    flat = W.reshape((-1, n, n))
    size = max(1, CHUNK_ENTRIES // (n * n))
    out = np.empty(flat.shape[0], dtype=np.int64)
    for start in range(0, flat.shape[0], size):
        out[start : start + size] = markov.mixing_time(flat[start : start + size], eps)
    return out.reshape(batch)


def binomial_mixing_bound(N: ArrayLike, p: ArrayLike, eps: float = 0.25) -> NDArray[np.int64]:
    """The least ``t`` with ``Pr[Bin(t, p) < N] <= eps``: the proof of Theorem 2.8, made exact.

    If every step of a feedforward chain is a forward move with probability at least ``p``
    and ``N`` forward moves reach the sink, a coupling with ``t`` independent coins gives
    ``Pr[not at tau after t steps] <= Pr[Bin(t, p) < N]``; so ``T_mix(eps)`` is at most
    this ``t``, with equality on the path (where the law *is* that binomial). Batched over
    broadcast ``N`` (integers >= 1) and ``p`` (in (0, 1]); vectorised bisection on ``t``.
    Tails within ``markov.TV_ATOL`` of ``eps`` count as reached, as in ``mixing_time``.
    """
    from scipy.stats import binom

    eps = float(eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    N_arr = np.asarray(N)
    if (N_arr < 1).any() or not np.all(N_arr == np.floor(N_arr)):
        raise ValueError(f"N must be integers >= 1, got {N_arr.tolist()}")
    p_arr = markov._check_p(p)
    N_b, p_b = np.broadcast_arrays(N_arr.astype(np.int64), p_arr)

    def tail(t: NDArray[np.int64]) -> NDArray[np.float64]:
        return binom.cdf(N_b - 1, t, p_b) - markov.TV_ATOL

    lo = N_b - 1  # Pr[Bin(N-1, p) < N] = 1 > eps
    hi = np.ceil(2 * N_b / p_b).astype(np.int64) + 1
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
    return mixing_times(combine_heads(W_heads, weights), eps)


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
        heads=mixing_times(W, eps),
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
    uni = combine_heads(D, np.full((1, H), 1.0 / H))[..., 0, :, :]
    return FidelityComparison(
        heads=node[..., :-1].min(axis=-1),
        node=node,
        uniform=np.asarray(fidelity.minimax_fidelity(uni, horizon)),
        weights=w,
        grid=np.asarray(fidelity.minimax_fidelity(combine_heads(D, w), horizon)),
    )


def cross_head_share(
    D_heads: ArrayLike, beta: ArrayLike, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Share of the worst node's combined peak signal carried by mixed-head sequences.

    In Remark 3.7's expansion of ``(Delta-bar)^t``, the pure-head sequences sum to
    ``sum_h beta_h^t (Delta^(h))^t``; every other term mixes heads. For the worst node
    ``j*`` of ``Delta-bar`` (Definition 3.10) at its optimal time ``t*``, returns
    ``(share, j*, t*)`` with ``share = 1 - pure[tau, j*] / total[tau, j*]`` (0 when the
    total is 0). ``D_heads`` ``(..., H, n, n)``, ``beta`` ``(H,)`` or ``(..., H)``.
    """
    D = graphs.check_stochastic(D_heads, axis=-1, name="D_heads")
    if D.ndim < 3:
        raise ValueError(f"D_heads must have shape (..., H, n, n), got {D.shape}")
    b = graphs.check_weights(beta, D.shape[-3], "beta")
    bar = graphs.convex_combination(D, b)
    total = fidelity.signal_at_sink(bar, horizon)  # (..., T+1, n)
    per_head = fidelity.signal_at_sink(D, horizon)  # (..., H, T+1, n)
    t_axis = np.arange(horizon + 1)
    bt = np.asarray(b)[..., :, None] ** t_axis  # (..., H, T+1): beta_h^t
    pure = np.einsum("...ht,...htj->...tj", bt, per_head)
    phi, t_opt = fidelity.node_fidelity(bar, horizon)
    j_star = np.argmin(phi[..., :-1], axis=-1)
    t_star = np.take_along_axis(t_opt, j_star[..., None], -1)[..., 0]
    tot = _pick(total, t_star, j_star)
    pu = _pick(pure, t_star, j_star)
    share = np.where(tot > 0, 1.0 - pu / np.where(tot > 0, tot, 1.0), 0.0)
    return share, j_star, t_star


def new_walk_share(
    D_heads: ArrayLike, beta: ArrayLike, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Share of the worst node's combined peak signal that travels along *new* walks.

    A walk of ``Delta-bar`` (Eq. 26) is new when no single head's graph contains all its
    steps, as the walk ``u -> v -> tau`` of Example 3.8. The walks inside head ``h``'s graph
    carry ``(Delta-bar * mask_h)^t``; inclusion-exclusion over sets of heads removes the walks
    counted twice (self-loops, shared edges). For the worst node ``j*`` of ``Delta-bar`` at
    its optimal time ``t*`` returns ``(share, j*, t*)``; ``share = 1 - old / total``.
    Masks are the supports ``D_heads > 0`` (``(..., H, n, n)``).
    """
    D = graphs.check_stochastic(D_heads, axis=-1, name="D_heads")
    if D.ndim < 3:
        raise ValueError(f"D_heads must have shape (..., H, n, n), got {D.shape}")
    H = D.shape[-3]
    b = graphs.check_weights(beta, H, "beta")
    bar = graphs.convex_combination(D, b)
    horizon = fidelity.check_horizon(horizon)
    total = _sink_rows(bar, horizon)
    support = D > 0
    old = np.zeros_like(total)
    for size in range(1, H + 1):
        for subset in itertools.combinations(range(H), size):
            mask = support[..., list(subset), :, :].all(axis=-3)
            old += (-1) ** (size + 1) * _sink_rows(bar * mask, horizon)
    phi, t_opt = fidelity.node_fidelity(bar, horizon)
    j_star = np.argmin(phi[..., :-1], axis=-1)
    t_star = np.take_along_axis(t_opt, j_star[..., None], -1)[..., 0]
    tot = _pick(total, t_star, j_star)
    share = np.where(tot > 0, 1.0 - _pick(old, t_star, j_star) / np.where(tot > 0, tot, 1.0), 0.0)
    return np.clip(share, 0.0, 1.0), j_star, t_star


def _sink_rows(M: NDArray[np.float64], horizon: int) -> NDArray[np.float64]:
    """``(M^t)[tau, :]`` for ``t = 0..horizon``: ``(..., T+1, n)``, any square ``M``."""
    n = M.shape[-1]
    row = np.zeros(M.shape[:-2] + (n,))
    row[..., -1] = 1.0
    out = np.empty(M.shape[:-2] + (horizon + 1, n))
    out[..., 0, :] = row
    for t in range(1, horizon + 1):
        row = np.einsum("...k,...kj->...j", row, M)
        out[..., t, :] = row
    return out


def _pick(sig: NDArray[np.float64], t: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray:
    rows = np.take_along_axis(sig, t[..., None, None], axis=-2)[..., 0, :]  # (..., n)
    return np.take_along_axis(rows, j[..., None], axis=-1)[..., 0]


def node_best_head_gain(node_phi: ArrayLike) -> NDArray[np.float64]:
    """Complementarity of heads: ``min_j max_h phi_j^(h) - max_h min_j phi_j^(h)`` (>= 0).

    ``node_phi`` ``(..., H, n)`` (node fidelities, sink last and excluded). Zero when one
    head is best at every node; large when each head covers the others' worst nodes.
    """
    phi = np.asarray(node_phi, dtype=np.float64)[..., :-1]
    return phi.max(axis=-2).min(axis=-1) - phi.min(axis=-1).max(axis=-1)


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


# --------------------------------------------------------------- chapter 5 tables
# The functions below turn the batched routines above into the chapter's tables. They take
# an explicit ``seed`` (an int or a shared ``np.random.Generator``, consumed in a documented
# order, so a chapter that passes one generator through several calls gets one stream).

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
        "T_mix": mixing_times(W, eps), "2N/p": 2 * (n - 1) / p,
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
    Wbar = np.einsum("kh,khij->kij", a, Wh)
    ph = markov.forward_probability(Wh)
    p12 = (a * ph).sum(axis=1)  # Eq. 12
    p_chain = markov.forward_probability(Wbar)
    return _pd().DataFrame({
        "kind": kind, "n": N + 1, "p": p12, "pN": p12 * N, "T_mix": mixing_times(Wbar, eps),
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
    num = graphs.check_n(num, "num")
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
        T = int(mixing_times(W, e))
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
    bins = graphs.check_n(bins, "bins")
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
                            "T_mix": mixing_times(W, eps),
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
    num = graphs.check_n(num, "num")
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
    trials = graphs.check_n(trials, "trials")
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
