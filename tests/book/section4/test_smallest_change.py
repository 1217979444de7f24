"""The smallest change a paired t-test could find (``statistics.smallest_change``): the
closed form ``(t_{1-a/2,n-1} + t_{power,n-1}) s / sqrt(n)``, and undefined (``None``)
where it has no meaning: under two seeds, or seeds whose changes do not spread."""
import numpy as np
import pytest
from scipy import stats

from bparallel.book.section4.statistics import smallest_change


def _row(changes: list[float]) -> dict:
    x = np.asarray(changes, dtype=float)
    n, m, s = len(x), x.mean(), x.std(ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s / np.sqrt(n)
    return {"seeds": n, "change": m, "low": m - half, "high": m + half}


def test_the_closed_form_at_five_seeds():
    x = [3.0, -1.0, 4.0, 1.0, 5.0]
    s = np.std(x, ddof=1)
    want = (stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * s / np.sqrt(5)
    assert smallest_change(_row(x)) == pytest.approx(want, rel=1e-12)
    # a stricter level needs a larger change
    assert smallest_change(_row(x), alpha=0.01) > smallest_change(_row(x))


def test_undefined_without_spread_or_seeds():
    assert smallest_change(_row([20.0, 20.0, 20.0])) is None  # every seed moved alike
    assert smallest_change({"seeds": 1, "change": 5.0, "low": None, "high": None}) is None
