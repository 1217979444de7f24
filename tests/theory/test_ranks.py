"""bparallel.ranks: the one rank correlation, exact at its thresholds, and its chance rates."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from bparallel import ranks
from tests._ulps import assert_close_ulps


def test_one_swapped_pair_of_four_is_exactly_point_eight():
    # scipy's float route gives 0.7999999999999999, which a float comparison puts below 0.8
    assert stats.spearmanr([1, 2, 3, 4], [2, 1, 3, 4]).statistic < 0.8
    rho = float(ranks.spearman([1, 2, 3, 4], [2, 1, 3, 4]))
    assert rho == 0.8 and ranks.reaches(rho, 0.8)
    assert ranks.spearman_exact([1, 2, 3, 4], [2, 1, 3, 4]) == (16, 400)  # 16 / sqrt(400)


def test_spearman_is_scipys_value_within_ulps():
    rng = np.random.default_rng(0)
    for n in (2, 3, 4, 5, 8, 16, 60):
        for _ in range(50):
            a = rng.integers(0, 4, n).astype(float)  # ties
            b = rng.random(n)
            if np.ptp(a) == 0:
                continue
            assert_close_ulps(float(ranks.spearman(a, b)), stats.spearmanr(a, b).statistic, 4)


def test_spearman_rows_nan_and_bad_input():
    a = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, np.nan, 2.0]])
    b = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    out = ranks.spearman(a, b)
    assert out[0] == -1.0 and np.isnan(out[1]) and np.isnan(out[2])
    assert np.isnan(ranks.spearman([1.0], [2.0]))
    with pytest.raises(ValueError, match="expected the same shape"):
        ranks.spearman([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        ranks.doubled_ranks([1.0, math.nan])
    assert ranks.doubled_ranks([3.0, 1.0, 3.0]) == [5, 2, 5]


def test_without_ties_rho_is_the_rational_of_the_rank_differences():
    for n in (3, 4, 5, 6):
        for perm in itertools.permutations(range(n)):
            d2 = sum((i - p) ** 2 for i, p in enumerate(perm))
            exact = 1 - Fraction(6 * d2, n * (n * n - 1))
            assert float(ranks.spearman(np.arange(n), np.array(perm))) == float(exact)


def test_grid_spacing_makes_the_tolerance_exact():
    """Without ties the values of n <= 16 items are multiples of 6/(n(n^2-1)) >= 1/680 apart,
    so a value within DECISION_TOL of a threshold on that grid is the threshold itself."""
    assert min(Fraction(6, n * (n * n - 1)) for n in range(2, 17)) == Fraction(1, 680)
    assert ranks.DECISION_TOL < 1e-6 * float(Fraction(1, 680))
    assert ranks.reaches(0.49999999999999994, 0.5) and not ranks.reaches(0.4985, 0.5)
    assert not ranks.reaches(math.nan, 0.0)


def test_exact_median():
    assert ranks.median([0.39999999999999997, 0.6]) == 0.5  # numpy: 0.49999999999999994
    assert ranks.median([3.0, 1.0, 2.0]) == 2.0 and math.isnan(ranks.median([]))


def test_chance_rates_by_enumeration_and_sampling():
    assert ranks.chance_at_least(4, 0.8) == pytest.approx(4 / 24)  # the p = 1/6
    # by brute force over the orderings of 5 items
    rhos = [float(ranks.spearman(np.arange(5), np.array(p)))
            for p in itertools.permutations(range(5))]
    assert ranks.chance_at_least(5, 0.5) == pytest.approx(np.mean([ranks.reaches(r, 0.5)
                                                                  for r in rhos]))
    # Monte Carlo beyond EXACT_UP_TO agrees with exact enumeration at 8 within its error
    sampled = ranks.chance_at_least(9, 0.8, samples=100_000)
    assert 0.0 < sampled < ranks.chance_at_least(8, 0.8)
    with pytest.raises(ValueError, match="n=1"):
        ranks.chance_at_least(1, 0.5)


def test_median_rho_test():
    perfect = [(np.arange(4.0), np.arange(4.0)) for _ in range(3)]
    out = ranks.median_rho_test(perfect, permutations=999)
    assert out["median"] == 1.0 and out["cells"] == 3
    assert out["p"] == out["p_min"] and out["p"] < 0.05  # perfect data: the smallest p
    rng = np.random.default_rng(0)
    null = [(rng.random(6), rng.random(6)) for _ in range(5)]
    assert ranks.median_rho_test(null, permutations=999)["p"] > 0.05
    one = ranks.median_rho_test([(np.arange(4.0), np.arange(4.0))], permutations=9999)
    assert one["p_min"] == pytest.approx(1 / 24, abs=0.01)  # one cell of four items: 1/24
    assert ranks.median_rho_test([(np.ones(3), np.arange(3.0))])["cells"] == 0
    with pytest.raises(ValueError, match="pairs\\[0\\]"):
        ranks.median_rho_test([(np.arange(3.0), np.arange(4.0))])
