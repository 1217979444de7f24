"""The seed as the unit of chapter 12's within-configuration rankings (seed_unit) and the
spectral gap of the attention chain (graph_spectral)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bparallel.book.section4 import graph_spectral as gs
from bparallel.book.section4 import seed_unit as su
from bparallel.book.section4.graph_predictors import partial_rank_correlation
from bparallel.book.section4.rank_tests import exact_rank_test


def _design(n_configs, seeds, proxy, outcome):
    configs = np.repeat(np.arange(n_configs), len(seeds))
    s = np.tile(np.array(seeds), n_configs)
    return (np.array([proxy(c, k) for c, k in zip(configs, s, strict=True)], float),
            np.array([outcome(c, k) for c, k in zip(configs, s, strict=True)], float),
            configs, s)


def test_a_seed_that_is_fast_everywhere_is_one_unit_not_ten():
    # ten configurations, three seeds, the proxy and the outcome ordered alike by the seed
    # alone: cell by cell the exact test calls it certain, the seed-level test cannot decide
    x, y, c, s = _design(10, (42, 43, 44), lambda c, k: k, lambda c, k: k + 0.1 * c)
    cells = [(x[c == i], y[c == i]) for i in range(10)]
    assert exact_rank_test(cells)["p"] < 1e-4
    t = su.seed_permutation_test(x, y, c, s)
    assert t["mean"] == pytest.approx(1.0) and t["seeds"] == 3 and t["cells"] == 10
    assert t["p"] == pytest.approx(2 / 6) == t["p_min"]  # 2 of the 3! relabellings


def test_the_seed_level_null_by_hand_for_five_seeds():
    rng = np.random.default_rng(1)
    seeds = (1, 2, 3, 4, 5)
    table = rng.random((4, 5, 2))
    x, y, c, s = _design(4, seeds, lambda c, k: table[c, k - 1, 0],
                         lambda c, k: table[c, k - 1, 1])
    t = su.seed_permutation_test(x, y, c, s)
    # by hand: every relabelling, one statistic each, no convolution of cells
    obs = np.mean([np.corrcoef(np.argsort(np.argsort(table[i, :, 0])),
                               np.argsort(np.argsort(table[i, :, 1])))[0, 1] for i in range(4)])
    null = []
    for perm in itertools.permutations(range(5)):
        null.append(np.mean([np.corrcoef(np.argsort(np.argsort(table[i, :, 0])),
                                         np.argsort(np.argsort(table[i, list(perm), 1])))[0, 1]
                             for i in range(4)]))
    null = np.array(null)
    up, down = (null >= obs - 1e-9).mean(), (null <= obs + 1e-9).mean()
    assert math.isclose(t["mean"], obs, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(t["p"], min(1.0, 2 * min(up, down)), rel_tol=1e-12)
    assert t["p_min"] == pytest.approx(2 / 120)


def test_the_partial_correlation_by_seed_level_permutation():
    # the outcome follows the seed in every configuration, the measure too: partial rho 1,
    # and its seed-level p-value is the least five seeds can give
    x, y, c, s = _design(3, (1, 2, 3, 4, 5), lambda c, k: 10 * c + k, lambda c, k: 20 * c + 2 * k)
    t = su.seed_permutation_test(x, y, c, s, partial_rank_correlation)
    assert t["mean"] == pytest.approx(1.0) and t["p"] == pytest.approx(2 / 120)


def test_only_the_common_seeds_enter_and_bad_input_is_refused():
    x, y, c, s = _design(3, (1, 2, 3), lambda c, k: k, lambda c, k: k)
    x, y, c, s = (np.append(v, extra) for v, extra in zip((x, y, c, s), (9, 9, 0, 7),
                                                            strict=True))
    assert su.common_seeds(c, s) == [1, 2, 3]
    assert su.seed_permutation_test(x, y, c, s)["seeds"] == 3
    with pytest.raises(ValueError, match="1-D of one length"):
        su.seed_permutation_test(x[:-1], y, c, s)
    x8, y8, c8, s8 = _design(1, tuple(range(8)), lambda c, k: k, lambda c, k: k)
    with pytest.raises(ValueError, match="8 common seeds"):
        su.seed_permutation_test(x8, y8, c8, s8)
    one = su.seed_permutation_test([1.0, 2.0], [1.0, 2.0], [0, 1], [1, 1])
    assert math.isnan(one["p"]) and one["cells"] == 0


def test_the_spectral_gap_of_a_causal_chain_is_one_less_its_largest_later_diagonal():
    rng = np.random.default_rng(0)
    a = np.tril(rng.random((6, 7, 7)))
    a /= a.sum(-1, keepdims=True)
    gap = gs.spectral_gap(a)
    for m, g in zip(a, gap, strict=True):  # an independent method: a general eigensolver
        moduli = np.sort(np.abs(np.linalg.eigvals(m)))[::-1]
        assert moduli[0] == pytest.approx(1.0)
        assert g == pytest.approx(1.0 - moduli[1], abs=1e-9)
    uniform = np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None]
    assert gs.spectral_gap(uniform) == pytest.approx(0.5)  # row 1 keeps 1/2 on itself
    with pytest.raises(ValueError, match="lower triangular"):
        gs.spectral_gap(np.full((3, 3), 1 / 3))
    with pytest.raises(ValueError, match="shape"):
        gs.spectral_gap(np.ones((2, 3)))
