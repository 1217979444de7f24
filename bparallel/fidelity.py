"""Signal at the sink and (multi-head) minimax fidelity (Definitions 3.2-3.12, Remark 3.7).

``delta`` is a row-stochastic diffusion matrix (Eq. 21: row ``i`` receives, column ``j``
sends), shape ``(..., n, n)``; the sink ``tau`` is node ``n-1``. Time runs over
``t = 1 .. horizon`` (``t = 0`` is excluded: at ``t = 0`` only the sink itself has signal).
Heads are stacked as ``(..., H, n, n)`` with convex weights ``beta`` of shape ``(..., H)``.
Non-feedforward diffusion matrices (such as Example 3.13's head 2) are allowed here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import positive_int
from .graphs import check_stochastic, convex_combination

__all__ = [
    "signal_at_sink",
    "node_fidelity",
    "minimax_fidelity",
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


def sink_rows(M: NDArray[np.float64], horizon: int) -> NDArray[np.float64]:
    """``(M^t)[tau, :]`` for ``t = 0 .. horizon``, ``(..., horizon + 1, n)``, any square ``M``.

    The row recursion ``e_tau^T M^(t+1) = (e_tau^T M^t) M``: one vector-matrix product per
    step. The one place this recursion lives: :func:`signal_at_sink` (``M = Delta``) and
    :func:`bparallel.ensembles.tv_curves` (``M = W``) call it. Inputs are not validated.

    A batch of matrices is walked :data:`SINK_ROWS_CHUNK` matrices at a time, all steps per
    chunk, so that a chunk's matrices stay in the CPU cache across the steps (the same
    arithmetic in the same order: bitwise the unchunked result, about twice as fast on
    large batches).
    """
    n = M.shape[-1]
    out = np.empty(M.shape[:-2] + (horizon + 1, n), dtype=np.result_type(M, np.float64))
    flat_m = M.reshape(-1, n, n)
    flat_out = out.reshape(-1, horizon + 1, n)
    for start in range(0, flat_m.shape[0], SINK_ROWS_CHUNK):
        m = flat_m[start : start + SINK_ROWS_CHUNK]
        row = np.zeros(m.shape[:-1])
        row[:, -1] = 1.0
        o = flat_out[start : start + SINK_ROWS_CHUNK]
        o[:, 0] = row
        for t in range(1, horizon + 1):
            row = np.einsum("bk,bkj->bj", row, m)
            o[:, t] = row
    return out


#: Matrices per chunk in :func:`sink_rows` (64 matrices of 100 x 100 float64: 5 MB).
SINK_ROWS_CHUNK = 64


def signal_at_sink(delta: ArrayLike, horizon: int) -> NDArray[np.float64]:
    """``phi_j(t) = (Delta^t)[tau, j]`` (Definition 3.2, Eq. 22) for ``t = 0 .. horizon``.

    Returns shape ``(..., horizon + 1, n)``: entry ``[..., t, j]``, by :func:`sink_rows`.
    """
    return sink_rows(_delta(delta), positive_int(horizon, "horizon"))


def _peaks(signal: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    s = signal[..., 1:, :]  # t >= 1
    phi = s.max(axis=-2)
    t = np.argmax(s >= phi[..., None, :] - PEAK_ATOL, axis=-2) + 1  # earliest peak time
    return phi, t


def node_fidelity(
    delta: ArrayLike, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Node fidelity and optimal fidelity time (Definitions 3.3-3.4, Eqs. 23-24).

    Returns ``(phi, t)``, each of shape ``(..., n)``: ``phi[j] = max_{1<=t<=horizon}
    phi_j(t)`` and ``t[j]`` the earliest time attaining it (ties within ``PEAK_ATOL``).
    """
    return _peaks(signal_at_sink(delta, horizon))


def _min_over_nodes(phi: NDArray[np.float64], exclude_sink: bool) -> NDArray[np.float64]:
    return (phi[..., :-1] if exclude_sink and phi.shape[-1] > 1 else phi).min(axis=-1)


def minimax_fidelity(
    delta: ArrayLike, horizon: int, *, exclude_sink: bool = True
) -> float | NDArray[np.float64]:
    """Minimax fidelity ``phi_min = min_j phi_j`` (Def. 3.5, Eq. 25; Eq. 29 for ``Delta-bar``).

    The min runs over the non-sink nodes, as in the paper's examples; ``exclude_sink=False``
    includes the sink, as the authors' code does (see ``bparallel.proxies``).
    """
    phi, _ = node_fidelity(delta, horizon)
    out = _min_over_nodes(phi, exclude_sink)
    return float(out) if out.ndim == 0 else out


def worst_node(delta: ArrayLike, horizon: int, *, exclude_sink: bool = True) -> int | NDArray:
    """The node attaining the minimax fidelity (the lowest index among ties)."""
    phi, _ = node_fidelity(delta, horizon)
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
    deltas: ArrayLike, beta: ArrayLike, horizon: int, *, exclude_sink: bool = True
) -> float | NDArray[np.float64]:
    """Definition 3.10 (Eq. 29): ``phi_min^multi``, the minimax fidelity of ``Delta-bar``."""
    return minimax_fidelity(multi_head_operator(deltas, beta), horizon, exclude_sink=exclude_sink)


def best_head(
    deltas: ArrayLike, horizon: int, *, exclude_sink: bool = True
) -> tuple[int | NDArray[np.int64], float | NDArray[np.float64]]:
    """Definitions 3.11-3.12: ``(h_*, phi_min^(h_*))``, the head with the largest minimax
    fidelity (the lowest index among ties) and that fidelity."""
    D = _delta(deltas, "deltas")
    if D.ndim < 3:
        raise ValueError(f"deltas must have shape (..., H, n, n), got {D.shape}")
    per_head = np.asarray(minimax_fidelity(D, horizon, exclude_sink=exclude_sink))
    h = np.argmax(per_head, axis=-1)
    val = per_head.max(axis=-1)
    if h.ndim == 0:
        return int(h), float(val)
    return h, val


def amplification(
    deltas: ArrayLike, beta: ArrayLike, horizon: int, *, exclude_sink: bool = True
) -> float | NDArray[np.float64]:
    """``phi_min^multi - phi_min^(h_*)``: positive when the heads together beat the best head
    (the synergy of Section 3.1)."""
    multi = np.asarray(
        multi_head_minimax_fidelity(deltas, beta, horizon, exclude_sink=exclude_sink)
    )
    _, best = best_head(deltas, horizon, exclude_sink=exclude_sink)
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
    head_min = _min_over_nodes(phi, True)
    h = int(np.argmax(head_min))
    return FidelityReport(
        horizon=positive_int(horizon, "horizon"),
        beta=np.asarray(beta, dtype=np.float64),
        node_phi=phi,
        node_t=t,
        multi_phi=mphi,
        multi_t=mt,
        head_minimax=head_min,
        multi_minimax=float(_min_over_nodes(mphi, True)),
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
