"""Argument checks at the package's boundaries: one function per kind of check.

Each raises ``ValueError`` whose message names the argument and its bad value
(``"horizon=0: must be a positive integer"``) and returns the value in canonical form.
Inner helpers trust their callers and do not re-check.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TypeVar

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


def one_of(value: T, name: str, valid: Sequence[T]) -> T:
    """``value`` if it is one of ``valid``."""
    if value not in valid:
        raise ValueError(f"{name}={value!r}: valid values are {list(valid)}")
    return value


def unit_interval(value: object, name: str, *, closed: bool = False) -> float:
    """``value`` as a float in ``(0, 1)``, or ``[0, 1]`` when ``closed`` (bools and NaN refused)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    v = float(value) if real else math.nan
    if not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):  # NaN fails both
        raise ValueError(f"{name}={value!r}: must be a real number in "
                         f"{'[0, 1]' if closed else '(0, 1)'}")
    return v
