"""Argument checks at the package's boundaries: one function per kind of check, for scalars
(``positive_int``, ``nonnegative_int``, ``one_of``, ``unit_interval``) and arrays
(``finite_array``, ``square_matrices``).

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
