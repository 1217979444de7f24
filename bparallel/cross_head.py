"""Remark 3.7's cross-head pathways, measured (numpy only): how much of a combination's
signal at the sink travels on walks that mix heads, and where amplification must happen.

- :func:`cross_head_share`: the share of the worst node's combined peak signal carried by
  mixed-head sequences of Remark 3.7's expansion of ``(Delta-bar)^t``;
- :func:`new_walk_share`, :func:`new_walk_shares`: the share of the signal on walks that no
  single head has (new walks), at the worst node or at every node;
- :func:`limiting_nodes`, :func:`new_walk_share_at_limiting`: the nodes that limit the best
  head's minimax fidelity, and the new-walk share there (where an amplification must lift
  the signal);
- :func:`node_best_head_gain`: the heads' complementarity, node by node.

Heads are stacked as ``(..., H, n, n)`` diffusion matrices ``Delta`` (row-stochastic,
Eq. 21), the sink is node ``n - 1``; the combinations are :func:`bparallel.ensembles.combinations`.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import fidelity, graphs
from ._checks import positive_int

__all__ = ["cross_head_share", "new_walk_share", "new_walk_shares", "limiting_nodes",
           "new_walk_share_at_limiting", "TIE_TOL", "node_best_head_gain"]


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
    steps, as the walk ``u -> v -> tau`` of Example 3.8 (:func:`new_walk_shares`, per node).
    For the worst node ``j*`` of ``Delta-bar`` at its optimal time ``t*`` returns
    ``(share, j*, t*)``; ``share = 1 - old / total``.
    """
    shares, phi, t_opt = _new_walk_split(D_heads, beta, horizon)
    j_star = np.argmin(phi[..., :-1], axis=-1)
    t_star = np.take_along_axis(t_opt, j_star[..., None], -1)[..., 0]
    return np.take_along_axis(shares, j_star[..., None], -1)[..., 0], j_star, t_star


def new_walk_shares(D_heads: ArrayLike, beta: ArrayLike, horizon: int) -> NDArray[np.float64]:
    """Per node ``j``, the share of its combined peak signal (Definition 3.9, at its own
    optimal time) carried by walks that no single head's graph contains: ``(..., n)``, 0 at
    the sink and where no signal arrives. The walks inside head ``h``'s graph carry
    ``(Delta-bar * mask_h)^t``; inclusion-exclusion over sets of heads removes the walks
    counted twice (self-loops, shared edges). Masks are the supports ``D_heads > 0``
    (``(..., H, n, n)``)."""
    return _new_walk_split(D_heads, beta, horizon)[0]


def _new_walk_split(D_heads, beta, horizon):
    D = graphs.check_stochastic(D_heads, axis=-1, name="D_heads")
    if D.ndim < 3:
        raise ValueError(f"D_heads must have shape (..., H, n, n), got {D.shape}")
    H = D.shape[-3]
    b = graphs.check_weights(beta, H, "beta")
    bar = graphs.convex_combination(D, b)
    horizon = positive_int(horizon, "horizon")
    total = fidelity.sink_rows(bar, horizon)
    support = D > 0
    old = np.zeros_like(total)
    for size in range(1, H + 1):
        for subset in itertools.combinations(range(H), size):
            mask = support[..., list(subset), :, :].all(axis=-3)
            old += (-1) ** (size + 1) * fidelity.sink_rows(bar * mask, horizon)
    phi, t_opt = fidelity.node_fidelity(bar, horizon)
    tot = np.take_along_axis(total, t_opt[..., None, :], axis=-2)[..., 0, :]  # (..., n)
    od = np.take_along_axis(old, t_opt[..., None, :], axis=-2)[..., 0, :]
    share = np.where(tot > 0, 1.0 - od / np.where(tot > 0, tot, 1.0), 0.0)
    share[..., -1] = 0.0  # the sink sends nothing
    return np.clip(share, 0.0, 1.0), phi, t_opt


#: Two fidelities closer than this are a tie (a best head, a limiting node).
TIE_TOL = 1e-12


def limiting_nodes(node_phi: ArrayLike) -> NDArray[np.bool_]:
    """The nodes that limit the best head (Definitions 3.5, 3.11-3.12): ``(..., n)``, true at
    every non-sink node ``j`` where some best head ``h`` (``phi_min^(h) = phi_min^(h_*)``)
    has ``phi_j^(h) = phi_min^(h)``, ties within :data:`TIE_TOL` (the sink last, false).
    A combination amplifies only by lifting every one of them above ``phi_min^(h_*)``.
    ``node_phi`` ``(..., H, n)``, the heads' node fidelities."""
    phi = np.asarray(node_phi, dtype=np.float64)
    if phi.ndim < 2 or phi.shape[-1] < 2:
        raise ValueError(f"node_phi must have shape (..., H, n) with n >= 2, got {phi.shape}")
    inner = phi[..., :-1]
    head_min = inner.min(axis=-1)                                          # (..., H)
    best = head_min >= head_min.max(axis=-1, keepdims=True) - TIE_TOL      # (..., H)
    at_min = inner <= head_min[..., None] + TIE_TOL                        # (..., H, n-1)
    mask = (at_min & best[..., None]).any(axis=-2)
    return np.concatenate([mask, np.zeros(mask.shape[:-1] + (1,), dtype=bool)], axis=-1)


def new_walk_share_at_limiting(
    D_heads: ArrayLike, beta: ArrayLike, horizon: int
) -> NDArray[np.float64]:
    """Remark 3.7 where amplification must happen: the mean, over the nodes that limit the
    best head (:func:`limiting_nodes`), of the share of each one's combined peak signal
    carried by new walks (:func:`new_walk_shares`). Unlike the share at the combination's
    worst node (:func:`new_walk_share`), it sees a cross-head path that lifts the node
    holding the best head back, as ``u -> v -> tau`` does in Example 3.8. ``(...)``."""
    shares = new_walk_shares(D_heads, beta, horizon)
    node, _ = fidelity.node_fidelity(np.asarray(D_heads, dtype=np.float64), horizon)
    mask = limiting_nodes(node)
    return (shares * mask).sum(axis=-1) / mask.sum(axis=-1)


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
