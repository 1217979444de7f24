"""Argument checks at the package's boundaries: one function per kind of check, for scalars
(``positive_int``, ``nonnegative_int``, ``one_of``, ``unit_interval``) and arrays
(``finite_array``, ``square_matrices``, ``nonnegative_entries``, ``sums_to_one``,
``no_backward_edges``) and attention (``attention_pattern``, ``head_weight_vectors``,
``causal_attention``).

Each raises ``ValueError`` whose message names the argument and its bad value
(``"horizon=0: must be a positive integer"``, ``"W has shape (3, 4): expected square
matrices (..., n, n)"``) and returns the value in canonical form. Inner helpers trust their
callers and do not re-check.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def positive_int(value: object, name: str) -> int:
    """``value`` as an ``int >= 1`` (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name}={value!r}: must be a positive integer")
    return int(value)


def nonnegative_int(value: object, name: str) -> int:
    """``value`` as an ``int >= 0`` (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name}={value!r}: must be a non-negative integer")
    return int(value)


def one_of(value: T, name: str, valid: Sequence[T], what: str = "values") -> T:
    """``value`` if it is one of ``valid`` (the message: ``"task='x': valid tasks are [...]"``,
    ``what`` naming the kind)."""
    if value not in valid:
        raise ValueError(f"{name}={value!r}: valid {what} are {list(valid)}")
    return value


def unit_interval(value: object, name: str, *, closed: bool = False) -> float:
    """``value`` as a float in ``(0, 1)``, or ``[0, 1]`` when ``closed`` (bools and NaN refused)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    v = float(value) if real else math.nan
    if not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):  # NaN fails both
        raise ValueError(f"{name}={value!r}: must be a real number in "
                         f"{'[0, 1]' if closed else '(0, 1)'}")
    return v


def finite_array(
    value: Any, name: str, *, keep_float32: bool = False, nonnegative: bool = False
) -> np.ndarray:
    """``value`` (an array, a nested sequence or a torch tensor) as a float64 array, float32
    kept as is when ``keep_float32``; NaN and infinities refused, negative entries too when
    ``nonnegative``. Two passes over the data (its minimum and maximum)."""
    if hasattr(value, "detach"):  # torch.Tensor
        value = value.detach().to("cpu")
        value = value.numpy() if str(value.dtype) == "torch.float32" else value.double().numpy()
    arr = np.asarray(value)
    if not (keep_float32 and arr.dtype == np.float32):
        arr = arr.astype(np.float64, copy=False)
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if not (np.isfinite(lo) and np.isfinite(hi)):  # NaN, +-inf
            raise ValueError(f"{name} contains NaN or infinite entries")
        if nonnegative and lo < 0:
            index = np.unravel_index(int(arr.argmin()), arr.shape)
            raise ValueError(f"{name} has negative entries ({name}{_at(index)} = {lo:.6g})")
    return arr


def square_matrices(
    value: Any, name: str, *, layout: str = "(..., n, n)", ndim: int | None = None,
    min_n: int = 1,
) -> np.ndarray:
    """``value`` as a float64 array of square matrices: at least two dimensions (exactly
    ``ndim`` when given), the last two equal and at least ``min_n``; ``layout`` names the
    expected shape in the message."""
    a = np.asarray(value, dtype=np.float64)
    dims_ok = a.ndim == ndim if ndim is not None else a.ndim >= layout.count(",")
    if not dims_ok or a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < min_n:
        raise ValueError(f"{name} has shape {a.shape}: expected square matrices {layout}"
                         + (f" with n >= {min_n}" if min_n > 1 else ""))
    return a


def attention_pattern(
    pattern: Any, name: str = "pattern", layout: str = "(..., H, T, T)"
) -> np.ndarray:
    """``pattern`` as attention weights ``layout``: finite and nonnegative, float64 (float32
    kept as is, to be combined in float64 later), at least the named dimensions, the last two
    equal, at least one head and one position."""
    a = finite_array(pattern, name, keep_float32=True, nonnegative=True)
    dims = layout.count(",")  # the named dimensions after "..."
    if a.ndim < dims:
        raise ValueError(f"{name} has shape {a.shape}: expected {layout}, at least {dims} dims")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} has shape {a.shape}: the last two dimensions must be equal")
    if a.shape[-1] < 1 or a.shape[-3] < 1:
        raise ValueError(f"{name} has shape {a.shape}: needs at least one head and one position")
    return a


#: How far from 1 a sum that means a probability may be: the head weights of one graph and
#: each row of an attention pattern. A float32 softmax row over ``T`` keys rounds to within
#: about ``T * 2^-24`` of 1 (``6e-6`` at ``T = 100``, ``1e-4`` at ``T = 2000``); the shipped
#: models' patterns (``models/paper`` and ``models/quick``, ``T = 100``, 50 sequences of both
#: protocols) sum to 1 within ``3.0e-7``, their learned head weights (float64) within
#: ``2.3e-16``. Anything further from 1 is not a distribution, and is refused.
SUM_ATOL = 1e-4


def _at(index: Sequence[int]) -> str:
    """``[1, 0, 3]``: a position in an array, for a message (empty for a 0-d array)."""
    return f"[{', '.join(str(int(i)) for i in index)}]" if len(index) else ""


def nonnegative_entries(a: np.ndarray, name: str, what: str) -> None:
    """Refuse a negative entry of a finite ``a``, naming its position and value."""
    if a.size and a.min() < 0:
        index = np.unravel_index(int(a.argmin()), a.shape)
        raise ValueError(f"{name}{_at(index)} = {a[index]:.6g}: {what} must be non-negative")


def sums_to_one(a: np.ndarray, name: str, what: str, atol: float = SUM_ATOL) -> None:
    """Refuse ``a`` ``(..., K)`` whose sum along the last axis is further than ``atol`` from
    1 anywhere, naming the worst position and its sum."""
    if not a.size:
        return
    dev = np.abs(a.sum(-1, dtype=np.float64) - 1.0)  # (...)
    if dev.max() > atol:
        index = np.unravel_index(int(dev.argmax()), dev.shape)
        where = f"{name}[{', '.join([*(str(int(i)) for i in index), ':'])}]"
        raise ValueError(f"{where} sums to {a[index].sum(dtype=np.float64):.6g}: {what} must "
                         f"sum to 1 (within {atol:g})")


def no_backward_edges(
    M: np.ndarray, name: str, needs: str, atol: float = 0.0, hint: str = ""
) -> None:
    """Refuse an entry ``M[..., i, j] > atol`` with ``j > i``: an edge ``j -> i`` backward in
    the order of positions, which Definition 2.1's feedforward graphs do not have. ``M`` is
    indexed ``[receiver i, sender j]``: an attention pattern (query ``i`` reads key ``j``),
    ``W`` of Eq. 1 and ``Delta`` of Eq. 21 alike. The message names the first such entry,
    its value, the edge, what ``needs`` the graph feedforward and a ``hint``."""
    n = M.shape[-1]
    if n < 2 or not M.size:
        return
    rows, cols = np.triu_indices(n, 1)
    above = M[..., rows, cols]  # (..., n(n-1)/2): every entry above the diagonal
    hit = above > atol
    if hit.any():
        *batch, k = np.unravel_index(int(np.argmax(hit)), hit.shape)
        i, j = int(rows[k]), int(cols[k])
        raise ValueError(
            f"{name}{_at((*batch, i, j))} = {M[(*batch, i, j)]:.6g}: a backward edge {j} -> {i}"
            f" (position {j} feeds the earlier position {i}); {needs} a feedforward graph "
            f"(Definition 2.1: every edge j -> i has j <= i){hint}")


def head_weight_vectors(head_weights: Any, pattern: np.ndarray) -> np.ndarray:
    """``head_weights`` checked against a checked ``pattern`` ``(..., H, T, T)`` and
    broadcast to ``pattern.shape[:-2]`` = ``(..., H)``: finite, non-negative and summing to
    1 within :data:`SUM_ATOL` for every graph (the one rule of the package's head weights:
    Definition 3.6's convex ``beta``, Section 4.2's ``w_h``); ``None`` is uniform, ``1/H``
    each. Weights that are not a distribution are refused, never rescaled: divide them by
    their sum first, ``w / w.sum(-1, keepdims=True)``."""
    H = pattern.shape[-3]
    if head_weights is None:
        return np.full(pattern.shape[:-2], 1.0 / H)
    w = finite_array(head_weights, "head_weights")
    if w.ndim == 0 or w.shape[-1] != H:
        raise ValueError(
            f"head_weights has shape {w.shape}: its last dimension must equal the "
            f"number of heads H={H} of pattern (shape {pattern.shape})"
        )
    try:
        wide = np.broadcast_to(w, pattern.shape[:-2])
    except ValueError:
        raise ValueError(
            f"head_weights has shape {w.shape}: does not broadcast against "
            f"pattern.shape[:-2]={pattern.shape[:-2]}"
        ) from None
    nonnegative_entries(w, "head_weights", "head weights")  # positions as given
    sums_to_one(w, "head_weights", "the head weights of each graph")
    return wide


def causal_attention(pattern: np.ndarray, name: str = "pattern") -> None:
    """Refuse a checked attention ``pattern`` ``(..., H, T, T)`` that is not causal (a query
    reading a later key, beyond :data:`SUM_ATOL`: :func:`no_backward_edges`) or whose rows
    do not sum to 1 within :data:`SUM_ATOL` (:func:`sums_to_one`): a post-softmax causal
    pattern, as Algorithms 1-2 read it."""
    no_backward_edges(pattern, name, "attention must be causal: Algorithms 1-2 need",
                      atol=SUM_ATOL)
    sums_to_one(pattern, name, "each row of an attention pattern (a query's weights on keys)")
