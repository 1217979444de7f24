"""Random walks on feedforward graphs: stationarity, mixing and hitting (Section 2).

- Definition 2.4 and Lemmas 2.5-2.6: :func:`stationary_distributions`,
  :func:`stationary_distribution`.
- Definition 2.7: :func:`tv_distance_to_stationary`, :func:`mixing_time` (exact).
- Absorbing-chain hitting times: :func:`expected_hitting_times`,
  :func:`truncated_hitting_times`, and the vectorised sampler :func:`sample_hitting_times`.
- Theorem 2.8 and its proof: :func:`forward_probability`, :func:`effective_forward_probability`,
  :func:`mixing_time_bound` (``2N/p``) and :func:`mixing_time_bound_steps` (its rounding
  to steps), :func:`hoeffding_tail` (Eqs. 9-10),
  :func:`forward_moves_shortfall` (the exact binomial of Eq. 6),
  :func:`prob_best_head_at_least` (Eqs. 16-19).

``W`` is column-stochastic (``W[i, j]`` = probability ``j -> i``, Eq. 1); hitting-time
functions take the row-stochastic transition matrix ``P = W^T`` as in the usual Markov
chain convention. All matrix functions accept leading batch dimensions ``(..., n, n)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import absorbing
from ._checks import SUM_ATOL, no_backward_edges, positive_int, unit_interval
from .graphs import STOCHASTIC_ATOL, check_stochastic, check_weights, reachability

__all__ = [
    "stationary_distributions",
    "stationary_distribution",
    "reachability",
    "tv_distance_to_stationary",
    "mixing_time",
    "expected_hitting_times",
    "truncated_hitting_times",
    "sample_hitting_times",
    "forward_probability",
    "effective_forward_probability",
    "mixing_time_bound",
    "mixing_time_bound_steps",
    "hoeffding_tail",
    "forward_moves_shortfall",
    "prob_best_head_at_least",
]

#: Distances within this of ``eps`` count as having reached it (floating-point slack): the
#: one tolerance of Definition 2.7, :data:`bparallel.absorbing.MIX_ATOL`.
TV_ATOL = absorbing.MIX_ATOL


def _check_sink(sink: int, n: int) -> int:
    if isinstance(sink, bool) or not isinstance(sink, (int, np.integer)):
        raise ValueError(f"sink must be an integer node index, got {sink!r}")
    sink = int(sink)
    if not -n <= sink < n:
        raise ValueError(f"sink {sink} is out of range 0..{n - 1}")
    return sink % n


# ------------------------------------------------------------------ stationary (Def 2.4)
def stationary_distributions(W: ArrayLike, *, tol: float = 1e-9) -> list[NDArray[np.float64]]:
    """All extreme stationary distributions of one column-stochastic ``W`` (``W pi = pi``).

    One per closed communicating class (a basis of the convex set of stationary
    distributions). For a feedforward graph with a unique sink this is ``[1_tau]``
    (Lemma 2.5); for a convex combination of such heads too (Lemma 2.6).
    """
    W = check_stochastic(W, axis=-2, name="W")
    if W.ndim != 2:
        raise ValueError(f"W must be one (n, n) matrix here, got shape {W.shape}")
    n = W.shape[0]
    R = reachability(W.T > tol)  # R[a, b]: b reachable from a
    closed = [c for c in range(n) if np.all(R[R[c]][:, c])]  # every b reachable from c reaches c
    classes: list[list[int]] = []
    for c in closed:
        if not any(c in cl for cl in classes):
            classes.append([b for b in range(n) if R[c, b]])
    out = []
    for cl in classes:
        sub = W[np.ix_(cl, cl)]
        # stationary vector of the irreducible block: null space of (sub - I)
        _, _, vh = np.linalg.svd(sub - np.eye(len(cl)))
        v = np.abs(vh[-1])
        pi = np.zeros(n)
        pi[cl] = v / v.sum()
        out.append(pi)
    return out


def stationary_distribution(W: ArrayLike) -> NDArray[np.float64]:
    """The unique stationary distribution of ``W``; ``ValueError`` if it is not unique."""
    dists = stationary_distributions(W)
    if len(dists) != 1:
        supports = [np.flatnonzero(d > 1e-12).tolist() for d in dists]
        raise ValueError(
            f"W has {len(dists)} stationary distributions (closed classes {supports}); "
            "a unique sink (Definition 2.2) makes it unique"
        )
    return dists[0]


# --------------------------------------------------------------------- mixing (Def 2.7)
def tv_distance_to_stationary(
    W: ArrayLike, t: int, pi: ArrayLike | None = None
) -> NDArray[np.float64]:
    """``max_j ||W^t e_j - pi||_TV`` (the quantity inside Eq. 2), batched over ``W``.

    ``pi`` defaults to the point mass at the sink ``n-1`` (Lemmas 2.5-2.6).
    """
    W = check_stochastic(W, axis=-2, name="W")
    if int(t) != t or t < 0:
        raise ValueError(f"t must be a non-negative integer, got {t}")
    Wt = np.linalg.matrix_power(W, int(t))
    return _tv_max(Wt, _pi(pi, W))


def _pi(pi: ArrayLike | None, W: NDArray[np.float64]) -> NDArray[np.float64]:
    n = W.shape[-1]
    if pi is None:
        out = np.zeros(n)
        out[-1] = 1.0
        return out
    pi = np.asarray(pi, dtype=np.float64)
    if pi.shape[-1] != n or (pi < 0).any() or np.abs(pi.sum(-1) - 1).max() > 1e-9:
        raise ValueError(f"pi must be a probability vector of length {n}")
    return pi


def _tv_max(Wt: NDArray[np.float64], pi: NDArray[np.float64]) -> NDArray[np.float64]:
    # column j of W^t is the law after t steps from j; TV = half the L1 distance
    return 0.5 * np.abs(Wt - pi[..., :, None]).sum(axis=-2).max(axis=-1)


def mixing_time(
    W: ArrayLike, eps: float = 0.25, *, allow_backward: bool = False
) -> int | NDArray[np.int64]:
    """Exact mixing time of Definition 2.7 (Eq. 2): the least ``t >= 0`` with
    ``max_j ||W^t e_j - 1_tau||_TV <= eps``.

    ``W`` is column-stochastic, ``(n, n)`` or batched ``(..., n, n)`` (then an int array),
    with the sink ``tau = n - 1`` absorbing; ``1_tau`` is the unique stationary distribution
    of a feedforward graph with unique sink (Lemma 2.5) and of convex combinations (Lemma
    2.6). The distance from start ``j`` is then the survival ``P(tau_j > t)``, and the
    computation is :func:`bparallel.absorbing.mixing_times` on the transition matrices
    ``W^T`` (the package's one implementation; distances within
    :data:`~bparallel.absorbing.MIX_ATOL` of ``eps`` count as reached). Raises
    ``ValueError`` when some start never gets within ``eps``, naming the graph and the start
    node that never reaches the sink (or saying that the walk needs more than
    :data:`~bparallel.absorbing.MIX_CAP` steps).

    A graph that is not feedforward (Definition 2.1), whose ``W[..., i, j]`` has a backward
    edge ``j -> i`` with ``j > i``, is refused with a ``ValueError`` naming the edge: Lemma
    2.5, which makes ``1_tau`` the stationary distribution, and Theorem 2.8 assume it.
    ``allow_backward=True`` computes Definition 2.7 on such a walk anyway (the playground
    does, for the heads it flags), where it means what it says whenever every node reaches
    the absorbing sink.
    """
    eps = unit_interval(eps, "eps")
    W = check_stochastic(W, axis=-2, name="W")
    batch, n = W.shape[:-2], W.shape[-1]
    if n > 1 and np.any(np.abs(W[..., -1, -1] - 1.0) > 1e-9):
        bad = np.argwhere(np.abs(np.asarray(W[..., -1, -1]) - 1.0) > 1e-9)
        where = f" (batch index {tuple(int(i) for i in bad[0])})" if batch else ""
        raise ValueError(f"W: the sink {n - 1} must be absorbing (W[{n - 1}, {n - 1}] = 1, "
                         f"Lemma 2.5){where}")
    if not allow_backward:
        no_backward_edges(W, "W", "Definition 2.7 (through Lemma 2.5) assumes",
                          atol=STOCHASTIC_ATOL, hint="; allow_backward=True computes it anyway")
    Q = np.ascontiguousarray(np.swapaxes(W.reshape((-1, n, n)), -1, -2), dtype=np.float64)
    Q[:, -1, :] = 0.0  # exactly absorbing (the check above allows rounding)
    Q[:, -1, -1] = 1.0
    t = absorbing.mixing_times(Q, eps)  # (N,)
    never = ~np.isfinite(t)
    if never.any():
        k = int(np.flatnonzero(never)[0])
        index = np.unravel_index(k, batch) if batch else ()
        where = f" (batch index {tuple(int(i) for i in index)})" if batch else ""
        lost = np.flatnonzero(absorbing.lost_starts(Q[k:k + 1])[0])
        if lost.size:
            also = f"; so can the walks from {lost[1:].tolist()}" if lost.size > 1 else ""
            why = (f"the walk from start node {lost[0]} may never reach the sink {n - 1} (it "
                   f"can be caught where the sink is out of reach{also}), so it never gets "
                   "within eps")
        else:
            why = f"some start needs more than 2^{int(np.log2(absorbing.MIX_CAP))} steps"
        raise ValueError(f"W does not mix to within eps={eps}{where}: {why} (Definition 2.7)")
    out = t.astype(np.int64).reshape(batch)
    return int(out) if not batch else out


# ------------------------------------------------------------------------- hitting times
def _sink_last(P: NDArray[np.float64], sink: int) -> tuple[NDArray[np.float64], NDArray]:
    """The chains of ``P`` ``(..., n, n)`` as :mod:`bparallel.absorbing` takes them: flat
    ``(N, n, n)``, states reordered so that ``sink`` comes last, the sink made absorbing (its
    row never matters to the hitting of it). Also the order: new state ``k`` is old
    ``order[k]``."""
    n = P.shape[-1]
    order = np.r_[np.delete(np.arange(n), sink), sink]
    Q = np.ascontiguousarray(P[..., order[:, None], order[None, :]].reshape(-1, n, n),
                             dtype=np.float64)
    Q[:, -1, :] = 0.0
    Q[:, -1, -1] = 1.0
    return Q, order


def _in_old_order(values: NDArray, order: NDArray, batch: tuple[int, ...]) -> NDArray:
    """Per-state ``values`` ``(N, n, ...)`` of :func:`_sink_last`'s chains back in the old
    state order, reshaped to ``batch + (n, ...)``."""
    out = np.empty_like(values)
    out[:, order] = values
    return out.reshape(batch + values.shape[1:])


def _require_reachable(P: NDArray[np.float64], sink: int) -> None:
    R = reachability(P > 0)
    ok = R[..., :, sink]
    if not ok.all():
        idx = np.argwhere(~ok)[0]
        raise ValueError(
            f"P: node {idx[-1]} cannot reach the sink {sink}"
            + (f" (batch index {tuple(idx[:-1])})" if P.ndim > 2 else "")
            + ", so its hitting time is infinite"
        )


def expected_hitting_times(P: ArrayLike, sink: int) -> NDArray[np.float64]:
    """Exact ``E[tau]`` from every start node, ``tau`` = first time at ``sink``.

    ``P`` is row-stochastic (``P[j, k]`` = probability ``j -> k``; for a walk matrix,
    ``P = W.T``), shape ``(..., n, n)``. Absorbing-chain algebra: with ``Q`` the
    transient block, ``(I - Q) h = 1``; ``h[sink] = 0``, by
    :func:`bparallel.absorbing.hitting_times` (back-substitution for a feedforward chain).
    Raises ``ValueError`` if some node cannot reach the sink.
    """
    P = check_stochastic(P, axis=-1, name="P")
    sink = _check_sink(sink, P.shape[-1])
    _require_reachable(P, sink)
    Q, order = _sink_last(P, sink)
    return _in_old_order(absorbing.hitting_times(Q), order, P.shape[:-2])


def truncated_hitting_times(P: ArrayLike, sink: int, max_steps: int) -> NDArray[np.float64]:
    """Exact ``E[min(tau, M)]`` per start node, ``M = max_steps``: ``sum_{t<M} Pr(tau > t)``
    (:func:`bparallel.absorbing.survival_sums`).

    The walk of Algorithm 1 stops at the sink or after ``M`` steps. ``P`` row-stochastic,
    ``(..., n, n)``. No reachability is needed (the truncation keeps it finite).
    """
    P = check_stochastic(P, axis=-1, name="P")
    sink = _check_sink(sink, P.shape[-1])
    max_steps = positive_int(max_steps, "max_steps")
    Q, order = _sink_last(P, sink)
    return _in_old_order(absorbing.survival_sums(Q, max_steps), order, P.shape[:-2])


def sample_hitting_times(
    P: ArrayLike,
    sink: int,
    num_walks: int,
    *,
    max_steps: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Monte Carlo ``E[tau]`` (or ``E[min(tau, max_steps)]``) per start: ``(mean, stderr)``.

    ``num_walks`` walks from every start node, all advanced together by
    :func:`bparallel.absorbing.sample_walks` (one vectorised step for every walk; no Python
    loop per walk): the next state is drawn by inverse-CDF sampling on the rows of the
    row-stochastic ``P`` (``(..., n, n)``). Without ``max_steps`` every node must reach
    the sink.
    """
    P = check_stochastic(P, axis=-1, name="P")
    n = P.shape[-1]
    sink = _check_sink(sink, n)
    num_walks = positive_int(num_walks, "num_walks")
    if max_steps is None:
        _require_reachable(P, sink)
        limit = np.iinfo(np.int64).max  # every walk reaches the sink: the loop ends
    else:
        limit = positive_int(max_steps, "max_steps")
    Q, order = _sink_last(P, sink)
    steps = absorbing.sample_walks(np.cumsum(Q, axis=-1), limit, num_walks,
                                   np.random.default_rng(seed))
    samples = _in_old_order(steps, order, P.shape[:-2]).astype(np.float64)  # (..., n, S)
    mean = samples.mean(axis=-1)
    stderr = samples.std(axis=-1, ddof=1) / math.sqrt(num_walks) if num_walks > 1 else (
        np.full(mean.shape, np.inf)
    )
    return mean, stderr


# -------------------------------------------------------------- Theorem 2.8 and its proof
def forward_probability(W: ArrayLike) -> float | NDArray[np.float64]:
    """``p_h``: the least probability, over non-sink nodes, of a forward move in one step.

    For a feedforward (lower-triangular) column-stochastic ``W`` a move out of ``j`` is a
    forward move, so ``p_h = min_{j < n-1} (1 - W[j, j])`` (Theorem 2.8's assumption).
    For a convex combination this can exceed the ``sum_h alpha_h p_h`` of Eq. 12.
    Raises ``ValueError`` for a non-feedforward ``W``.
    """
    W = check_stochastic(W, axis=-2, name="W")
    no_backward_edges(W, "W", "a 'forward move' (Theorem 2.8) needs")
    n = W.shape[-1]
    if n < 2:
        raise ValueError("W needs at least 2 nodes to have a forward move")
    diag = np.diagonal(W, axis1=-2, axis2=-1)[..., : n - 1]
    p = (1.0 - diag).min(axis=-1)
    return float(p) if p.ndim == 0 else p


def effective_forward_probability(p: ArrayLike, alpha: ArrayLike) -> float | NDArray[np.float64]:
    """Eq. 12: ``p = sum_h alpha_h p_h`` for convex weights ``alpha`` (shape ``(..., H)``)."""
    p = np.asarray(p, dtype=np.float64)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"p must lie in [0, 1], got {p.tolist()}")
    a = check_weights(alpha, p.shape[-1], "alpha")
    if np.abs(a.sum(-1) - 1).max() > SUM_ATOL:  # the package's one rule for weights
        raise ValueError(f"alpha must sum to 1 (convex weights), got {a.tolist()}")
    out = (a * p).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def check_forward_probability(p: ArrayLike) -> NDArray[np.float64]:
    """``p`` as forward probabilities in (0, 1] (Theorem 2.8), float64; a clear error else."""
    p = np.asarray(p, dtype=np.float64)
    if ((p <= 0) | (p > 1)).any() or not np.all(np.isfinite(p)):
        raise ValueError(f"p must lie in (0, 1], got {p.tolist()}")
    return p


def _check_counts(x: ArrayLike, name: str, minimum: int) -> NDArray[np.int64]:
    """Integers ``>= minimum`` (a scalar or an array), as int64."""
    arr = np.asarray(x)
    if arr.dtype == bool or not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)) \
            or (arr < minimum).any():
        raise ValueError(f"{name} must be integers >= {minimum}, got {arr.tolist()}")
    return arr.astype(np.int64)


def mixing_time_bound(n: ArrayLike, p: ArrayLike) -> float | NDArray[np.float64]:
    """Theorem 2.8 (Eq. 3): ``2N / p`` with ``N = n - 1`` forward moves to the sink.

    The package's one ``2N/p`` (broadcast over integer ``n >= 1`` and ``p`` in (0, 1]);
    :func:`mixing_time_bound_steps` is its one rounding to whole steps."""
    N = _check_counts(n, "n", 1) - 1
    out = 2.0 * N / check_forward_probability(p)
    return float(out) if np.ndim(out) == 0 else out


def mixing_time_bound_steps(n: ArrayLike, p: ArrayLike) -> int | NDArray[np.int64]:
    """``t* = floor(2N/p)``: the last whole step within Theorem 2.8's bound
    (:func:`mixing_time_bound`), where the book evaluates the proof's binomial (Eqs. 6-10).
    The one rounding of ``2N/p`` to steps: a walk mixed by ``t*`` is mixed within the bound."""
    out = np.floor(mixing_time_bound(n, p)).astype(np.int64)
    return int(out) if np.ndim(out) == 0 else out


def hoeffding_tail(
    p: ArrayLike, N: int, t: ArrayLike | None = None
) -> float | NDArray[np.float64]:
    """Hoeffding bound on ``Pr[X < N]`` for ``X ~ Bin(t, p)`` (Eq. 9).

    With ``t = 2N/p`` (the default, :func:`mixing_time_bound`, not rounded) this is
    ``exp(-pN)`` (Eq. 10). Requires ``tp >= N``.
    """
    p = check_forward_probability(p)
    N = positive_int(N, "N")
    t = mixing_time_bound(N + 1, p) if t is None else np.asarray(t, dtype=np.float64)
    if np.any(t * p < N):
        raise ValueError("Hoeffding's bound needs t * p >= N")
    out = np.exp(-2.0 * (t * p - N) ** 2 / t)
    return float(out) if np.ndim(out) == 0 else out


def forward_moves_shortfall(p: ArrayLike, N: ArrayLike, t: ArrayLike
                            ) -> float | NDArray[np.float64]:
    """Exact ``Pr[X < N]`` for the forward-move count ``X ~ Bin(t, p)`` of Eq. 6: the
    package's one binomial tail, broadcast over ``p`` (in (0, 1]), ``N`` (integers >= 1)
    and ``t`` (integers >= 0). On the path with forward probability ``p`` it *is* the
    distance to stationarity after ``t`` steps; on any feedforward chain it bounds it."""
    from scipy.stats import binom

    p = check_forward_probability(p)
    N = _check_counts(N, "N", 1)
    t = _check_counts(t, "t", 0)
    out = binom.cdf(N - 1, t, p)
    return float(out) if np.ndim(out) == 0 else out


def prob_best_head_at_least(F_pbar: ArrayLike, H: ArrayLike) -> float | NDArray[np.float64]:
    """Eq. 18: ``Pr(max_h p_h >= pbar) = 1 - F(pbar)^H`` for i.i.d. heads with CDF ``F``.

    ``F_pbar`` is ``F(pbar)`` in ``[0, 1]``; ``H`` the number of heads (>= 1). As ``H``
    grows this tends to 1 whenever ``F(pbar) < 1`` (Eq. 19).
    """
    F = np.asarray(F_pbar, dtype=np.float64)
    H = np.asarray(H)
    if ((F < 0) | (F > 1)).any():
        raise ValueError(f"F_pbar must lie in [0, 1], got {F.tolist()}")
    if (H < 1).any() or not np.all(H == np.floor(H)):
        raise ValueError(f"H must be integers >= 1, got {H.tolist()}")
    out = 1.0 - F**H
    return float(out) if np.ndim(out) == 0 else out
