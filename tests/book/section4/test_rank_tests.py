"""The rank tests over cells (bparallel.book.section4.rank_tests): the exact test of the mean
Spearman rho against brute-force enumeration and closed forms, and the smallest effect each
test can find."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bparallel.book.section4 import rank_tests as rt
from bparallel.book.section4.statistics import family_verdicts


def _rho(x, y):
    return stats.spearmanr(x, y)[0]


def test_one_cell_of_four_items_has_the_closed_form_p_values():
    """A perfect ranking of 4 items: 1 of the 24 relabellings reaches it (p_up 1/24), and
    the reversed one by symmetry (two-sided 2/24); the best possible p is the same."""
    t = rt.exact_rank_test([([1, 4, 8, 16], [0.1, 0.2, 0.3, 0.4])])
    assert t["mean"] == pytest.approx(1.0) and t["cells"] == 1 and t["items"] == (4,)
    assert t["p_up"] == pytest.approx(1 / 24) and t["p"] == pytest.approx(2 / 24)
    assert t["p_min"] == pytest.approx(2 / 24)
    down = rt.exact_rank_test([([1, 4, 8, 16], [0.4, 0.3, 0.2, 0.1])])
    assert down["mean"] == pytest.approx(-1.0) and down["p_down"] == pytest.approx(1 / 24)
    # five seeds, all perfect (Page's trend test at its extreme): (1/24)^5 each way
    five = rt.exact_rank_test([([1, 4, 8, 16], [1, 2, 3, 4])] * 5)
    assert five["p"] == pytest.approx(2 / 24**5)


def test_the_exact_null_is_brute_force_enumeration_ties_included():
    """Two cells, one with a tie (a censored run ranked last): the p-values equal the
    count over all 24 x 6 relabellings of the mean rho at least (at most) the observed."""
    x1, y1 = np.array([1, 4, 8, 16.0]), np.array([3.0, 1.0, -1e300, -1e300])
    x2, y2 = np.array([0.3, 0.1, 0.2]), np.array([5.0, 7.0, 6.0])
    t = rt.exact_rank_test([(x1, y1), (x2, y2)])
    observed = (_rho(x1, y1) + _rho(x2, y2)) / 2
    assert t["mean"] == pytest.approx(observed)
    sums = [(_rho(x1, y1[list(p)]) + _rho(x2, y2[list(q)])) / 2
            for p in itertools.permutations(range(4)) for q in itertools.permutations(range(3))]
    sums = np.array(sums)
    assert t["p_up"] == pytest.approx(np.mean(sums >= observed - 1e-9))
    assert t["p_down"] == pytest.approx(np.mean(sums <= observed + 1e-9))
    assert t["p"] == pytest.approx(min(1, 2 * min(t["p_up"], t["p_down"])))
    assert t["median"] == pytest.approx(np.median([_rho(x1, y1), _rho(x2, y2)]))


def test_undefined_cells_are_left_out_and_bad_cells_refused():
    t = rt.exact_rank_test([([1, 2, 3], [5, 5, 5]), ([1, 2, 3], [1, 2, 3])])
    assert t["cells"] == 1
    assert rt.exact_rank_test([])["cells"] == 0 and math.isnan(rt.exact_rank_test([])["p"])
    with pytest.raises(ValueError, match="same length"):
        rt.exact_rank_test([([1, 2, 3], [1, 2])])
    with pytest.raises(ValueError, match="at most 7"):
        rt.exact_rank_test([(list(range(8)), list(range(8)))])


def test_the_smallest_mean_rho_is_the_first_value_reaching_the_level():
    t = rt.exact_rank_test([([1, 4, 8, 16], [1, 2, 3, 4])] * 5)
    values, probs = t["null"]
    for level in (0.05, 0.01, 0.05 / 82):
        r = rt.smallest_mean_rho(t, level)
        assert r is not None and 2 * probs[values >= r - 1e-12].sum() <= level
        below = values[(values < r - 1e-12) & (values >= 0)]
        if below.size:  # the next smaller value does not reach the level
            assert 2 * probs[values >= below.max() - 1e-12].sum() > level
    one = rt.exact_rank_test([([1, 2, 3], [1, 2, 3])])  # 1 cell of 3: p at best 2/6
    assert rt.smallest_mean_rho(one, 0.05) is None


def test_smallest_rho_of_the_median_test_and_validation():
    """Three cells of four items: only a median of one can pass 0.05 (p 2 P(median = 1)
    = 2 (3 (1/24)^2 (23/24) + (1/24)^3), about 0.010); none passes 0.001."""
    assert rt.smallest_rho((4, 4, 4), 0.05) == pytest.approx(1.0)
    assert rt.smallest_rho((4, 4, 4), 0.001) is None
    with pytest.raises(ValueError, match="items"):
        rt.smallest_rho((), 0.05)
    with pytest.raises(ValueError, match="level"):
        rt.smallest_rho((4, 4), 1.5)


def test_a_family_gives_every_test_the_smallest_effect_at_holms_first_step():
    speed = rt.exact_rank_test([([1, 4, 8, 16], [4, 3, 2, 1])] * 5)
    median = rt.two_sided_rank_test([([1, 4, 8, 16], [1, 2, 3, 4])] * 3)
    change = {"seeds": 5, "change": -1.0, "low": -1.5, "high": -0.5, "quantity": "q",
              "outcome": None}
    size = family_verdicts([change], [speed, median], lambda c: -1, 3)
    assert size == 3
    assert speed["smallest"] == rt.smallest_mean_rho(speed, 0.05 / size)
    assert median["smallest"] == rt.smallest_rho(median["items"], 0.05 / size)
    assert change["smallest"] > 0 and speed["verdict"].value == "fails"


def test_the_noise_floor_keeps_its_resolution_as_the_family_grows():
    """120 cells whose two heads clearly differ: with the default 4,999 relabellings the
    smallest p-value (2e-4) times 120 cells would still pass, but 300 would not; the test
    runs enough relabellings (4 m / alpha) that every cell stays decidable and reliable."""
    from bparallel.book.section4.statistics import noise_floor

    rng = np.random.default_rng(0)
    effects = {("induction", 2, s): np.stack([rng.normal([[1.0], [0.0]], 0.1, (2, 40))])
               for s in range(300)}  # (L=1, H=2, N=40) per model
    rows = noise_floor(effects)
    assert len(rows) == 300 and all(r["reliable"] for r in rows)
    assert max(r["p_holm"] for r in rows) <= 0.05 / 4 + 1e-12


def test_p_values_in_words_never_print_zero():
    """A p-value below the third decimal reads "< 0.001", never "0.000" (which would say the
    evidence is certain); every p-value of a rank test's words goes through fmt_p."""
    from bparallel.book.section4.statistics import fmt_decided

    assert fmt_decided({"p": 0.0002, "p_holm": 0.0009}) == "p < 0.001, Holm p < 0.001"
    assert fmt_decided({"p": 0.02, "p_holm": None}) == "p 0.020"
    assert fmt_decided({"p": 0.3, "p_min": 0.074, "decidable": False}) == (
        "p 0.300; cannot decide: even ρ = 1 in every seed gives p 0.074, above the "
        "family's threshold")
