"""Comparisons of floats computed by different code paths, within a few units in the last
place (ulps).

Two code paths that do the same arithmetic in a different order (a batched ``einsum``
against a loop, numpy against a hand-written recursion) round differently, and how they
round depends on the CPU's vector width: AVX2 and AVX-512 machines sum a row in different
orders. Bitwise equality (``assert_array_equal``, ``check_exact=True``) is kept for the same
operations in the same order; everything else compares through these helpers, with a stated
number of ulps. NaN equals NaN, an infinity only the same infinity, and integers, booleans,
strings and categories compare exactly.
"""

from __future__ import annotations

import numpy as np

ULPS = 8  # a few ulps: summation-order differences over rows of up to a few hundred terms


def assert_close_ulps(actual, desired, ulps: int = ULPS, err_msg: str = "") -> None:
    """``actual`` equals ``desired`` within ``ulps`` units in the last place, elementwise.

    Non-float arrays must be equal exactly. Zero against a tiny number counts ulps from zero
    (so ``0`` and ``5e-324`` are one ulp apart, ``0`` and ``1e-17`` are not close).
    """
    a, d = np.asarray(actual), np.asarray(desired)
    assert a.shape == d.shape, f"{err_msg} shapes differ: {a.shape} vs {d.shape}"
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(d.dtype, np.floating)):
        np.testing.assert_array_equal(a, d, err_msg=err_msg)
        return
    a, d = a.astype(np.float64), d.astype(np.float64)
    same_nan = np.isnan(a) & np.isnan(d)
    a, d = np.where(same_nan, 0.0, a), np.where(same_nan, 0.0, d)
    try:
        np.testing.assert_array_max_ulp(a, d, maxulp=ulps)
    except AssertionError as err:
        bad = np.flatnonzero(~np.isclose(a, d, rtol=ulps * np.finfo(float).eps, atol=0)
                             & (a != d))
        raise AssertionError(f"{err_msg} more than {ulps} ulps apart at flat index "
                             f"{bad[:5].tolist()}: {a.ravel()[bad[:5]]} vs "
                             f"{d.ravel()[bad[:5]]} ({err})") from None


def assert_frames_close_ulps(actual, desired, ulps: int = ULPS) -> None:
    """Two DataFrames with the same index, columns and dtypes; float columns within
    ``ulps`` (:func:`assert_close_ulps`), every other column exactly."""
    import pandas as pd

    pd.testing.assert_index_equal(actual.columns, desired.columns)
    pd.testing.assert_index_equal(actual.index, desired.index)
    pd.testing.assert_series_equal(actual.dtypes, desired.dtypes)
    for col in actual.columns:
        assert_close_ulps(actual[col].to_numpy(), desired[col].to_numpy(), ulps,
                          err_msg=f"column {col!r}:")
