"""Feedforward graphs, walk and diffusion matrices (Definitions 2.1-2.3, 3.1, 3.6).

Conventions (see the book's notation page):

- Nodes are ``0 .. n-1``; the sink ``tau`` is ``n - 1`` (the paper's node ``n``).
- An edge ``(j, i)`` means ``j -> i``: node ``j`` sends, node ``i`` receives.
- Self-loops are always present, whether or not the edge list names them.
- ``adjacency[..., i, j] = 1`` iff ``j -> i`` (receiver row, sender column), so a
  feedforward graph has a lower-triangular adjacency matrix.
- ``W`` (Eq. 1) divides column ``j`` by the out-degree of ``j``: column-stochastic.
- ``Delta`` (Eq. 21) divides row ``i`` by the in-degree of ``i``: row-stochastic.

Matrix-level functions accept leading batch dimensions ``(..., n, n)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import SUM_ATOL, positive_int, square_matrices

__all__ = [
    "as_edges",
    "reachability",
    "adjacency_matrix",
    "walk_matrix",
    "diffusion_matrix",
    "walk_matrix_from_adjacency",
    "diffusion_matrix_from_adjacency",
    "has_causal_order",
    "is_feedforward",
    "backward_edges",
    "require_feedforward",
    "sinks",
    "has_unique_sink",
    "check_weights",
    "convex_combination",
    "check_stochastic",
    "line_graph_edges",
    "complete_dag_edges",
    "edges_from_adjacency",
    "random_feedforward_adjacency",
    "random_feedforward_edges",
]

STOCHASTIC_ATOL = 1e-9


# --------------------------------------------------------------------------- validation
def as_edges(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> NDArray[np.int64]:
    """Validate an edge list ``[(j, i), ...]`` (``j -> i``) on nodes ``0..n-1``.

    Returns an ``(m, 2)`` int array. Raises ``ValueError`` for malformed edges or nodes
    out of range.
    """
    n = positive_int(n, "n")
    try:
        arr = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges)
    except TypeError as err:
        raise ValueError(f"edges must be a sequence of (j, i) pairs, got {edges!r}") from err
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"edges must be a sequence of (j, i) pairs, got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
        raise ValueError(f"edges must hold integer node indices, got {arr.tolist()}")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"edges must hold integer node indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        j, i = arr[np.argwhere(bad)[0, 0]]
        raise ValueError(f"edges: edge ({j}, {i}) has a node out of range 0..{n - 1} (n={n})")
    return arr


def check_stochastic(
    M: ArrayLike, *, axis: int, name: str = "matrix", atol: float = STOCHASTIC_ATOL
) -> NDArray[np.float64]:
    """Check a batch of square non-negative matrices whose sums along ``axis`` are 1.

    ``axis=-1``: rows sum to 1 (row-stochastic, e.g. ``Delta``); ``axis=-2``: columns
    sum to 1 (column-stochastic, e.g. ``W``).
    """
    M = square_matrices(M, name)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} has non-finite entries")
    if (M < -atol).any():
        raise ValueError(f"{name} has negative entries (min {M.min():.3g})")
    sums = M.sum(axis=axis)
    worst = np.abs(sums - 1.0).max()
    if worst > atol:
        kind = "rows" if axis in (-1, M.ndim - 1) else "columns"
        raise ValueError(
            f"{name} is not stochastic: its {kind} must sum to 1 (largest deviation {worst:.3g})"
        )
    return M


def check_weights(weights: ArrayLike, count: int, name: str = "weights") -> NDArray[np.float64]:
    """Validate convex weights of shape ``(..., count)``: finite, >= 0, not all zero."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 0 or w.shape[-1] != count:
        raise ValueError(f"{name} must have length {count} (one per head), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite, got {w.tolist()}")
    if (w < 0).any():
        raise ValueError(f"{name} must be non-negative, got {w.tolist()}")
    if (w.sum(axis=-1) <= 0).any():
        raise ValueError(f"{name} must not be all zero, got {w.tolist()}")
    return w


# ------------------------------------------------------------------------- constructors
def adjacency_matrix(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> NDArray[np.float64]:
    """0/1 matrix ``A[i, j] = 1`` iff ``j -> i``, self-loops included; shape ``(n, n)``."""
    arr = as_edges(edges, n)
    A = np.eye(n)
    A[arr[:, 1], arr[:, 0]] = 1.0
    return A


def walk_matrix_from_adjacency(adjacency: ArrayLike) -> NDArray[np.float64]:
    """``W`` of Eq. 1 from ``(..., n, n)`` adjacency (``A[i, j]`` for ``j -> i``).

    Self-loops are added; column ``j`` is divided by the out-degree of ``j``.
    """
    A = _with_self_loops(adjacency, "adjacency")
    return A / A.sum(axis=-2, keepdims=True)


def diffusion_matrix_from_adjacency(adjacency: ArrayLike) -> NDArray[np.float64]:
    """``Delta`` of Eq. 21 from ``(..., n, n)`` adjacency; row ``i`` / in-degree of ``i``."""
    A = _with_self_loops(adjacency, "adjacency")
    return A / A.sum(axis=-1, keepdims=True)


def walk_matrix(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> NDArray[np.float64]:
    """Random-walk matrix ``W`` (Definition 2.3, Eq. 1): ``W[i, j] = 1/outdeg(j)`` if ``j -> i``.

    Shape ``(n, n)``; columns sum to 1. Defined for any directed graph (feedforward or not).
    """
    return walk_matrix_from_adjacency(adjacency_matrix(edges, n))


def diffusion_matrix(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> NDArray[np.float64]:
    """Diffusion matrix ``Delta`` (Def. 3.1, Eq. 21): ``Delta[i, j] = 1/indeg(i)`` if ``j -> i``.

    Shape ``(n, n)``; rows sum to 1. Row ``i`` is the receiving node, column ``j`` the sender.
    """
    return diffusion_matrix_from_adjacency(adjacency_matrix(edges, n))


def _with_self_loops(adjacency: ArrayLike, name: str) -> NDArray[np.float64]:
    A = square_matrices(adjacency, name)
    if not np.all((A == 0) | (A == 1)):
        raise ValueError(f"{name} must hold only 0 and 1")
    A = A.copy()
    idx = np.arange(A.shape[-1])
    A[..., idx, idx] = 1.0
    return A


# ---------------------------------------------------------------------------- structure
def backward_edges(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> list[tuple[int, int]]:
    """Edges ``(j, i)`` with ``j > i``: they break Definition 2.1 (in the given indexing)."""
    arr = as_edges(edges, n)
    return [(int(j), int(i)) for j, i in arr if j > i]


def is_feedforward(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> bool:
    """Definition 2.1: every edge ``j -> i`` has ``j <= i`` in the node order ``0..n-1``.

    The order is the order of token positions (causal attention), so it is fixed rather
    than searched for; such a graph is acyclic apart from its self-loops.
    """
    return not backward_edges(edges, n)


def has_causal_order(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> bool:
    """Definition 2.1 as stated: *some* indexing of the nodes puts every edge ``j -> i``
    forward, i.e. the graph without its self-loops is acyclic (found by Kahn's algorithm).

    Weaker than :func:`is_feedforward`, which fixes the order to ``0..n-1`` (token
    positions). Given the union of several heads' edges, it says whether the heads share a
    common causal order: Example 3.13's head 2 has one alone, ``(v, u, w, tau)``, but with
    head 1 the union holds the cycle ``u -> v -> u``.
    """
    arr = as_edges(edges, n)
    proper = {(int(j), int(i)) for j, i in arr if j != i}
    indegree = np.zeros(n, dtype=np.int64)
    for _, i in proper:
        indegree[i] += 1
    ready = [v for v in range(n) if indegree[v] == 0]
    seen = 0
    while ready:
        j = ready.pop()
        seen += 1
        for a, i in proper:
            if a == j:
                indegree[i] -= 1
                if indegree[i] == 0:
                    ready.append(i)
    return seen == n


def require_feedforward(
    edges: Iterable[Sequence[int]] | ArrayLike, n: int, name: str = "edges"
) -> None:
    """Raise ``ValueError`` naming the backward edges unless the graph is feedforward."""
    bad = backward_edges(edges, n)
    if bad:
        shown = ", ".join(f"{j} -> {i}" for j, i in bad[:5])
        raise ValueError(
            f"{name}: not a feedforward graph (Definition 2.1): backward edge(s) {shown}"
        )


def sinks(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> list[int]:
    """Nodes with no outgoing edge to a *distinct* node (Definition 2.2)."""
    arr = as_edges(edges, n)
    has_out = np.zeros(n, dtype=bool)
    proper = arr[arr[:, 0] != arr[:, 1]]
    has_out[proper[:, 0]] = True
    return [int(v) for v in np.flatnonzero(~has_out)]


def has_unique_sink(edges: Iterable[Sequence[int]] | ArrayLike, n: int) -> bool:
    """Definition 2.2 as Lemma 2.5 uses it: node ``n-1`` is the one and only sink."""
    return sinks(edges, n) == [n - 1]


def edges_from_adjacency(adjacency: ArrayLike) -> list[tuple[int, int]]:
    """Edge list ``[(j, i), ...]`` (no self-loops) of one ``(n, n)`` adjacency matrix."""
    A = np.asarray(adjacency)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be one square (n, n) matrix, got shape {A.shape}")
    return [(int(j), int(i)) for i, j in zip(*np.nonzero(A), strict=True) if i != j]


def reachability(adjacency: ArrayLike) -> NDArray[np.bool_]:
    """Reflexive-transitive closure: ``R[..., a, b]`` iff ``b`` is reachable from ``a``.

    ``adjacency[..., a, b]`` is a step ``a -> b`` (row = from), as in a row-stochastic ``P``.
    (Named ``reaches`` before; not :func:`bparallel.ranks.reaches`, the book's threshold
    decision ``value >= threshold`` up to a tolerance.)
    """
    R = np.asarray(adjacency, dtype=bool).copy()
    n = R.shape[-1]
    idx = np.arange(n)
    R[..., idx, idx] = True
    for _ in range(max(1, math.ceil(math.log2(max(n, 2))))):
        R = (R.astype(np.float64) @ R.astype(np.float64)) > 0
    return R


# ---------------------------------------------------------------------- combination
def convex_combination(
    matrices: ArrayLike, weights: ArrayLike, *, normalize: bool = False
) -> NDArray[np.float64]:
    """``sum_h weights[h] * matrices[h]`` (Eq. 26 for ``Delta``; the ``W-bar`` of Section 2.2).

    ``matrices`` has shape ``(..., H, n, n)``; ``weights`` ``(H,)`` or ``(..., H)``, non-negative
    and summing to 1 (or any non-negative, not-all-zero weights with ``normalize=True``).

    Of walk matrices (Eq. 1) it is the **combined-W walk** ``W-bar`` of Section 2 (Theorem
    2.8), each head divided by the sender's out-degree before the heads are combined; of
    diffusion matrices (Eq. 21) it is ``Delta-bar``, whose transposed walk, the
    **combined-Delta walk**, the proxies take (:mod:`bparallel.proxies`): two different
    chains, with different mixing times.
    """
    M = square_matrices(matrices, "matrices", layout="(..., H, n, n)")
    w = check_weights(weights, M.shape[-3])
    total = w.sum(axis=-1, keepdims=True)
    if normalize:
        w = w / total
    elif np.abs(total - 1.0).max() > SUM_ATOL:  # the package's one rule for weights
        raise ValueError(
            f"weights must sum to 1 (convex), got sum {np.ravel(total).tolist()}; "
            "pass normalize=True to rescale them"
        )
    return head_sum(M, w)


def head_sum(matrices: ArrayLike, weights: ArrayLike) -> NDArray:
    """``sum_h weights[..., h] * matrices[..., h, :, :]``: the one head combination.

    ``matrices`` ``(..., H, n, n)`` and ``weights`` ``(..., H)`` broadcast against each other's
    leading dimensions; the result is ``(..., n, n)`` in the inputs' common dtype (float32
    stays float32). Not validated: :func:`convex_combination` (Definition 3.6, Eq. 26) and
    :func:`bparallel.proxies.combine_heads` (Algorithms 1-2, line 2) check their inputs and
    call it.
    """
    M, w = np.asarray(matrices), np.asarray(weights)
    H, n, m = M.shape[-3:]
    flat = M.reshape(*M.shape[:-3], H, n * m)  # (..., H, n*m)
    out = (w[..., None, :] @ flat)[..., 0, :]  # (..., n*m)
    return out.reshape(*out.shape[:-1], n, m)


# -------------------------------------------------------------------------- families
def line_graph_edges(n: int) -> list[tuple[int, int]]:
    """The path ``0 -> 1 -> ... -> n-1`` (every forward move advances by one)."""
    n = positive_int(n, "n")
    return [(j, j + 1) for j in range(n - 1)]


def complete_dag_edges(n: int) -> list[tuple[int, int]]:
    """Every forward edge ``j -> i`` with ``j < i`` (full causal attention)."""
    n = positive_int(n, "n")
    return [(j, i) for j in range(n) for i in range(j + 1, n)]


def random_feedforward_adjacency(
    num: int, n: int, density: float, seed: int | np.random.Generator | None = None
) -> NDArray[np.float64]:
    """``(num, n, n)`` random feedforward adjacency matrices with a unique sink ``n-1``.

    Each forward edge ``j -> i`` (``j < i``) is present with probability ``density``;
    a node left without a forward edge gets one to a uniformly chosen later node, so
    ``n-1`` is the only sink (Definition 2.2). Self-loops are on the diagonal.
    """
    num = positive_int(num, "num")
    n = positive_int(n, "n")
    if not (0.0 <= float(density) <= 1.0):
        raise ValueError(f"density must lie in [0, 1], got {density}")
    rng = np.random.default_rng(seed)
    A = (rng.random((num, n, n)) < density) & np.tri(n, n, -1, dtype=bool)  # [i, j], j < i
    lonely = ~A[:, :, : n - 1].any(axis=1)  # (num, n-1): node j has no forward edge
    if lonely.any():
        b, j = np.nonzero(lonely)
        target = j + 1 + (rng.random(j.size) * (n - 1 - j)).astype(np.int64)
        A[b, target, j] = True
    A = A.astype(np.float64)
    A[:, np.arange(n), np.arange(n)] = 1.0
    return A


def random_feedforward_edges(
    n: int, density: float, seed: int | np.random.Generator | None = None
) -> list[tuple[int, int]]:
    """Edge list of one random feedforward graph with unique sink (see above)."""
    return edges_from_adjacency(random_feedforward_adjacency(1, n, density, seed)[0])
