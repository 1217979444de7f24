"""Signal at the sink and (multi-head) minimax fidelity (Definitions 3.2-3.12, Remark 3.7).

``delta`` is a row-stochastic diffusion matrix (Eq. 21: row ``i`` receives, column ``j``
sends), shape ``(..., n, n)``; the sink ``tau`` is node ``n-1``. Time runs over
``t = 1 .. horizon`` (``t = 0`` is excluded: at ``t = 0`` only the sink itself has signal).
Heads are stacked as ``(..., H, n, n)`` with convex weights ``beta`` of shape ``(..., H)``.
Signals and fidelities are **fractions** in ``[0, 1]``; :mod:`bparallel.proxies` reports
the same quantities of attention patterns in percent, as the paper's tables do.

Graphs that are not feedforward (Definition 2.1: an edge ``j -> i`` with ``j > i``, an entry
``delta[..., i, j] > 0`` above the diagonal): the signal and node fidelity
(:func:`signal_at_sink`, :func:`node_fidelity`) and :func:`fidelity_report` take them, as
the paper's own Example 3.13 needs (its head 2 has the backward edge ``v -> u``, and the
combination of its heads the cycle ``u -> v -> u``); :func:`minimax_fidelity` and what is
built on it (:func:`worst_node`, :func:`multi_head_minimax_fidelity`, :func:`best_head`,
:func:`amplification`) refuse them with a ``ValueError`` naming the backward edge unless
``allow_backward=True``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import no_backward_edges, one_of, positive_int
from .graphs import STOCHASTIC_ATOL, check_stochastic, convex_combination

__all__ = [
    "signal_at_sink",
    "sink_rows",
    "sink_peaks",
    "node_fidelity",
    "minimax_fidelity",
    "min_over_nodes",
    "worst_node",
    "multi_head_operator",
    "multi_head_node_fidelity",
    "multi_head_minimax_fidelity",
    "best_head",
    "amplification",
    "FidelityReport",
    "fidelity_report",
    "cross_head_expansion",
    "cross_head_terms",
]

#: Signals within this of the peak count as the peak when choosing the optimal time.
PEAK_ATOL = 1e-12


def _delta(delta: ArrayLike, name: str = "delta") -> NDArray[np.float64]:
    return check_stochastic(delta, axis=-1, name=name)


def sink_rows(M: ArrayLike, horizon: int, *, product: str = "einsum") -> NDArray[np.float64]:
    """``(M^t)[tau, :]`` for ``t = 0 .. horizon``, ``(..., horizon + 1, n)``, any square ``M``.

    The row recursion ``e_tau^T M^(t+1) = (e_tau^T M^t) M``: one vector-matrix product per
    step. The one place this recursion lives: :func:`signal_at_sink` (``M = Delta``),
    :func:`sink_peaks` (node fidelity, here and on trained attention in
    :class:`bparallel.proxies.Walk`) and :func:`bparallel.ensembles.tv_curves` (``M = W``)
    call it. Inputs are not validated; any dtype and strides (each chunk is read once as
    contiguous float64).

    ``product`` (:data:`PRODUCTS`) is how a step is computed: ``"einsum"``, the row times
    the matrix in numpy's einsum loop, the arithmetic every theory chapter's reference
    values were computed with; ``"matmul"``, the same row as the column
    ``(M^T)^t e_tau`` by BLAS matrix-vector products, about twice as fast on attention-size
    batches (``n = 100``), what :class:`bparallel.proxies.Walk` uses. The two agree within
    a few ulps; a quantity that turns on exact ties (an argmin among equal fidelities) can
    differ between them, so each caller keeps one.

    A batch of matrices is walked :data:`SINK_ROWS_CHUNK` matrices at a time, all steps per
    chunk, so that a chunk's matrices stay in the CPU cache across the steps (the same
    arithmetic per matrix as unchunked; about twice as fast on large batches).
    """
    one_of(product, "product", PRODUCTS)
    n = M.shape[-1]
    out = np.empty(M.shape[:-2] + (horizon + 1, n), dtype=np.float64)
    flat_m = M.reshape(-1, n, n)
    flat_out = out.reshape(-1, horizon + 1, n)
    for start in range(0, flat_m.shape[0], SINK_ROWS_CHUNK):
        chunk = slice(start, start + SINK_ROWS_CHUNK)
        _walk_chunk(flat_m[chunk], flat_out[chunk], product)
    return out


#: The ways :func:`sink_rows` computes a step.
PRODUCTS = ("einsum", "matmul")


def _walk_chunk(m: ArrayLike, o: NDArray[np.float64], product: str) -> None:
    """Rows ``(m^t)[tau, :]`` of a chunk ``m`` ``(c, n, n)`` into ``o`` ``(c, horizon + 1, n)``."""
    if product == "einsum":
        m = np.ascontiguousarray(m, dtype=np.float64)  # no copy for float64 C-contiguous input
        row = np.zeros(m.shape[:-1])  # (c, n)
        row[:, -1] = 1.0
        o[:, 0] = row
        for t in range(1, o.shape[1]):
            row = np.einsum("bk,bkj->bj", row, m)
            o[:, t] = row
        return
    mt = np.ascontiguousarray(np.swapaxes(m, -1, -2), dtype=np.float64)  # (c, n, n): M^T
    u, spare = np.zeros(mt.shape[:-1] + (1,)), np.empty(mt.shape[:-1] + (1,))  # (c, n, 1)
    u[:, -1] = 1.0
    o[:, 0] = u[..., 0]
    for t in range(1, o.shape[1]):
        np.matmul(mt, u, out=spare)  # the column (M^T)^t e_tau = the row (M^t)[tau, :]
        u, spare = spare, u
        o[:, t] = u[..., 0]


#: Matrices per chunk in :func:`sink_rows` (64 matrices of 100 x 100 float64: 5 MB).
SINK_ROWS_CHUNK = 64


def signal_at_sink(delta: ArrayLike, horizon: int) -> NDArray[np.float64]:
    """``phi_j(t) = (Delta^t)[tau, j]`` (Definition 3.2, Eq. 22) for ``t = 0 .. horizon``.

    Returns shape ``(..., horizon + 1, n)``: entry ``[..., t, j]``, by :func:`sink_rows`.
    """
    return sink_rows(_delta(delta), positive_int(horizon, "horizon"))


def _peaks(signal: NDArray[np.float64], times: bool = True
           ) -> tuple[NDArray[np.float64], NDArray[np.int64] | None]:
    s = signal[..., 1:, :]  # t >= 1
    phi = s.max(axis=-2)
    if not times:
        return phi, None
    t = np.argmax(s >= phi[..., None, :] - PEAK_ATOL, axis=-2) + 1  # earliest peak time
    return phi, t


def sink_peaks(
    M: ArrayLike, horizon: int, *, times: bool = True, product: str = "einsum"
) -> tuple[NDArray[np.float64], NDArray[np.int64] | None]:
    """``max_{1<=t<=horizon} (M^t)[tau, j]`` and the earliest ``t`` attaining it (ties
    within :data:`PEAK_ATOL`), each ``(..., n)``, for any square ``M`` (not validated);
    ``None`` times when ``times=False``; ``product`` as in :func:`sink_rows`.

    Definitions 3.3-3.4 on a batch of any size: the rows of :func:`sink_rows` are held for
    one chunk of :data:`SINK_ROWS_CHUNK` matrices at a time, never for the whole batch.
    """
    one_of(product, "product", PRODUCTS)
    n = M.shape[-1]
    flat_m = M.reshape(-1, n, n)
    N = flat_m.shape[0]
    phi = np.empty((N, n))
    t_opt = np.empty((N, n), dtype=np.int64) if times else None
    rows = np.empty((min(SINK_ROWS_CHUNK, N), horizon + 1, n))
    for start in range(0, N, SINK_ROWS_CHUNK):
        stop = min(start + SINK_ROWS_CHUNK, N)
        _walk_chunk(flat_m[start:stop], rows[: stop - start], product)
        peak, t = _peaks(rows[: stop - start], times)
        phi[start:stop] = peak
        if times:
            t_opt[start:stop] = t
    shape = M.shape[:-2] + (n,)
    return phi.reshape(shape), None if t_opt is None else t_opt.reshape(shape)


def node_fidelity(
    delta: ArrayLike, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Node fidelity and optimal fidelity time (Definitions 3.3-3.4, Eqs. 23-24).

    Returns ``(phi, t)``, each of shape ``(..., n)``: ``phi[j] = max_{1<=t<=horizon}
    phi_j(t)`` and ``t[j]`` the earliest time attaining it (ties within ``PEAK_ATOL``), by
    :func:`sink_peaks`.
    """
    return sink_peaks(_delta(delta), positive_int(horizon, "horizon"))


def min_over_nodes(phi: ArrayLike, exclude_sink: bool = True) -> NDArray[np.float64]:
    """``min_j phi_j`` over the last axis (Def. 3.5, Eq. 25): over the non-sink nodes, or with
    ``exclude_sink=False`` over all, the sink included, as the authors' code takes it (a
    graph of the sink alone keeps its one node either way)."""
    phi = np.asarray(phi)
    return (phi[..., :-1] if exclude_sink and phi.shape[-1] > 1 else phi).min(axis=-1)


def _feedforward_delta(delta: ArrayLike, name: str, allow_backward: bool
                       ) -> NDArray[np.float64]:
    """``delta`` checked row-stochastic and, unless ``allow_backward``, feedforward."""
    D = _delta(delta, name)
    if not allow_backward:
        no_backward_edges(D, name, "the minimax fidelity (Definition 3.5) is defined here on",
                          atol=STOCHASTIC_ATOL,
                          hint="; allow_backward=True computes it anyway (Example 3.13 does)")
    return D


def minimax_fidelity(
    delta: ArrayLike, horizon: int, *, exclude_sink: bool = True, allow_backward: bool = False
) -> float | NDArray[np.float64]:
    """Minimax fidelity ``phi_min = min_j phi_j`` (Def. 3.5, Eq. 25; Eq. 29 for ``Delta-bar``).

    The min runs over the non-sink nodes, as in the paper's examples; ``exclude_sink=False``
    includes the sink, as the authors' code does (see ``bparallel.proxies``). A graph with
    a backward edge is refused unless ``allow_backward`` (module docstring).
    """
    phi, _ = node_fidelity(_feedforward_delta(delta, "delta", allow_backward), horizon)
    out = min_over_nodes(phi, exclude_sink)
    return float(out) if out.ndim == 0 else out


def worst_node(delta: ArrayLike, horizon: int, *, exclude_sink: bool = True,
               allow_backward: bool = False) -> int | NDArray:
    """The node attaining the minimax fidelity (the lowest index among ties)."""
    phi, _ = node_fidelity(_feedforward_delta(delta, "delta", allow_backward), horizon)
    if exclude_sink and phi.shape[-1] > 1:
        phi = phi[..., :-1]
    out = np.argmin(phi, axis=-1)
    return int(out) if out.ndim == 0 else out


def multi_head_operator(deltas: ArrayLike, beta: ArrayLike) -> NDArray[np.float64]:
    """Multi-head diffusion operator ``Delta-bar = sum_h beta_h Delta^(h)`` (Def. 3.6, Eq. 26).

    ``deltas`` ``(..., H, n, n)`` row-stochastic; ``beta`` convex, ``(H,)`` or ``(..., H)``.
    """
    D = _delta(deltas, "deltas")
    if D.ndim < 3:
        raise ValueError(f"deltas must have shape (..., H, n, n), got {D.shape}")
    return convex_combination(D, beta)


def multi_head_node_fidelity(
    deltas: ArrayLike, beta: ArrayLike, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Definition 3.9 (Eq. 28): node fidelity and optimal time of ``Delta-bar``."""
    return node_fidelity(multi_head_operator(deltas, beta), horizon)


def multi_head_minimax_fidelity(
    deltas: ArrayLike, beta: ArrayLike, horizon: int, *, exclude_sink: bool = True,
    allow_backward: bool = False,
) -> float | NDArray[np.float64]:
    """Definition 3.10 (Eq. 29): ``phi_min^multi``, the minimax fidelity of ``Delta-bar``."""
    _feedforward_delta(deltas, "deltas", allow_backward)  # names the head's backward edge
    return minimax_fidelity(multi_head_operator(deltas, beta), horizon,
                            exclude_sink=exclude_sink, allow_backward=allow_backward)


def best_head(
    deltas: ArrayLike, horizon: int, *, exclude_sink: bool = True, allow_backward: bool = False
) -> tuple[int | NDArray[np.int64], float | NDArray[np.float64]]:
    """Definitions 3.11-3.12: ``(h_*, phi_min^(h_*))``, the head with the largest minimax
    fidelity (the lowest index among ties) and that fidelity."""
    D = _feedforward_delta(deltas, "deltas", allow_backward)
    if D.ndim < 3:
        raise ValueError(f"deltas must have shape (..., H, n, n), got {D.shape}")
    per_head = np.asarray(minimax_fidelity(D, horizon, exclude_sink=exclude_sink,
                                           allow_backward=allow_backward))
    h = np.argmax(per_head, axis=-1)
    val = per_head.max(axis=-1)
    if h.ndim == 0:
        return int(h), float(val)
    return h, val


def amplification(
    deltas: ArrayLike, beta: ArrayLike, horizon: int, *, exclude_sink: bool = True,
    allow_backward: bool = False,
) -> float | NDArray[np.float64]:
    """``phi_min^multi - phi_min^(h_*)``: positive when the heads together beat the best head
    (the synergy of Section 3.1)."""
    multi = np.asarray(multi_head_minimax_fidelity(
        deltas, beta, horizon, exclude_sink=exclude_sink, allow_backward=allow_backward))
    _, best = best_head(deltas, horizon, exclude_sink=exclude_sink,
                        allow_backward=allow_backward)
    out = multi - np.asarray(best)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class FidelityReport:
    """Everything Section 3 says about one set of heads, for one horizon.

    Arrays: ``node_phi``/``node_t`` ``(H, n)`` per head; ``multi_phi``/``multi_t`` ``(n,)``;
    ``head_minimax`` ``(H,)``; scalars for the multi-head operator and the best head.
    """

    horizon: int
    beta: NDArray[np.float64]
    node_phi: NDArray[np.float64]
    node_t: NDArray[np.int64]
    multi_phi: NDArray[np.float64]
    multi_t: NDArray[np.int64]
    head_minimax: NDArray[np.float64]
    multi_minimax: float
    best_head: int
    best_head_minimax: float

    @property
    def amplification(self) -> float:
        """``phi_min^multi - phi_min^(h_*)``."""
        return self.multi_minimax - self.best_head_minimax


def fidelity_report(deltas: ArrayLike, beta: ArrayLike, horizon: int) -> FidelityReport:
    """Node fidelities, times and minimax fidelities of each head and of ``Delta-bar``.

    One graph set only: ``deltas`` ``(H, n, n)``, ``beta`` ``(H,)``.
    """
    D = _delta(deltas, "deltas")
    if D.ndim != 3:
        raise ValueError(f"deltas must have shape (H, n, n), got {D.shape}")
    bar = multi_head_operator(D, beta)
    phi, t = node_fidelity(D, horizon)
    mphi, mt = node_fidelity(bar, horizon)
    head_min = min_over_nodes(phi, True)
    h = int(np.argmax(head_min))
    return FidelityReport(
        horizon=positive_int(horizon, "horizon"),
        beta=np.asarray(beta, dtype=np.float64),
        node_phi=phi,
        node_t=t,
        multi_phi=mphi,
        multi_t=mt,
        head_minimax=head_min,
        multi_minimax=float(min_over_nodes(mphi, True)),
        best_head=h,
        best_head_minimax=float(head_min[h]),
    )


# ------------------------------------------------------------------------- Remark 3.7
def cross_head_terms(
    deltas: ArrayLike, beta: ArrayLike, t: int
) -> list[tuple[tuple[int, ...], float, NDArray[np.float64]]]:
    """The ``H^t`` terms of Eq. 27: ``(heads, prod beta, Delta^(h_1) ... Delta^(h_t))``.

    ``heads = (h_1, ..., h_t)`` in the order of the product as written in Eq. 27, so the
    rightmost factor ``Delta^(h_t)`` acts first on a column signal.
    """
    D = _delta(deltas, "deltas")
    if D.ndim != 3:
        raise ValueError(f"deltas must have shape (H, n, n), got {D.shape}")
    H, n, _ = D.shape
    multi_head_operator(D, beta)  # validates beta: convex, one weight per head
    b = np.asarray(beta, dtype=np.float64)
    t = positive_int(t, "horizon")
    if H**t > 2**20:
        raise ValueError(f"Remark 3.7 expansion has H^t = {H}^{t} terms; too many to list")
    terms = []
    for seq in itertools.product(range(H), repeat=t):
        prod = np.eye(n)
        for h in seq:
            prod = prod @ D[h]
        terms.append((seq, float(np.prod(b[list(seq)])), prod))
    return terms


def cross_head_expansion(deltas: ArrayLike, beta: ArrayLike, t: int) -> NDArray[np.float64]:
    """``(Delta-bar)^t`` summed term by term over head sequences (Remark 3.7, Eq. 27).

    An independent route to ``np.linalg.matrix_power(multi_head_operator(deltas, beta), t)``.
    """
    terms = cross_head_terms(deltas, beta, t)
    return sum(w * M for _, w, M in terms)
