"""Argument checks at the package's boundaries: one function per kind of check, for scalars
(``positive_int``, ``nonnegative_int``, ``one_of``, ``unit_interval``) and arrays
(``finite_array``, ``square_matrices``) and attention (``attention_pattern``,
``head_weight_vectors``).

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
            raise ValueError(f"{name} has negative entries (min {lo:.3g})")
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


def head_weight_vectors(head_weights: Any, pattern: np.ndarray) -> np.ndarray:
    """``head_weights`` checked against a checked ``pattern`` ``(..., H, T, T)`` and
    broadcast to ``pattern.shape[:-2]`` = ``(..., H)``: finite, nonnegative, not all zero
    for any graph; ``None`` is uniform, ``1/H`` each."""
    H = pattern.shape[-3]
    if head_weights is None:
        return np.full(pattern.shape[:-2], 1.0 / H)
    w = finite_array(head_weights, "head_weights", nonnegative=True)
    if w.ndim == 0 or w.shape[-1] != H:
        raise ValueError(
            f"head_weights has shape {w.shape}: its last dimension must equal the "
            f"number of heads H={H} of pattern (shape {pattern.shape})"
        )
    try:
        w = np.broadcast_to(w, pattern.shape[:-2])
    except ValueError:
        raise ValueError(
            f"head_weights has shape {w.shape}: does not broadcast against "
            f"pattern.shape[:-2]={pattern.shape[:-2]}"
        ) from None
    if w.size and np.any(w.sum(-1) == 0):
        raise ValueError("head_weights are all zero for at least one graph")
    return w
