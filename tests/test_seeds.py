"""bparallel.book.seeds against hand-computed statistics."""

import math

import pytest

from bparallel.book.seeds import paired_effect, seed_interval, share_of_seeds


def test_t_interval_by_hand():
    # values 1, 2, 3: mean 2, s = 1, t_{2, 0.975} = 4.302652729749464
    iv = seed_interval([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)
    assert iv.mean == 2.0 and iv.n == 3
    assert iv.low == pytest.approx(2 - half, rel=1e-12)
    assert iv.high == pytest.approx(2 + half, rel=1e-12)
    assert iv.half_width == pytest.approx(half, rel=1e-12)
    # 90%: t_{2, 0.95} = 2.919985580355516
    assert seed_interval([1, 2, 3], 0.9).high == pytest.approx(2 + 2.919985580355516 / math.sqrt(3))


def test_one_seed_has_no_interval_and_bad_input_is_refused():
    iv = seed_interval([5.0])
    assert (iv.mean, iv.low, iv.high, iv.half_width) == (5.0, None, None, None)
    with pytest.raises(ValueError, match="non-empty"):
        seed_interval([])
    with pytest.raises(ValueError, match="non-finite"):
        seed_interval([1, float("inf")])
    with pytest.raises(ValueError, match="level"):
        seed_interval([1, 2], level=1.0)


def test_paired_effect_by_hand():
    # differences 1, 3, 2: mean 2, s = 1; t = 2 / (1 / sqrt 3) = 3.4641; p (2 df) = 0.07418
    before, after = [10.0, 20.0, 30.0], [11.0, 23.0, 32.0]
    eff = paired_effect(before, after)
    assert eff.effect.mean == 2.0
    assert eff.effect.high == pytest.approx(2 + 4.302652729749464 / math.sqrt(3), rel=1e-12)
    assert eff.p_value == pytest.approx(0.0741799, rel=1e-5)
    assert paired_effect([1.0], [3.0]).p_value is None  # one seed: no test
    assert paired_effect([1.0, 2.0], [2.0, 3.0]).p_value is None  # no spread: no test
    with pytest.raises(ValueError, match="pair up"):
        paired_effect([1, 2], [1])


def test_share_of_seeds():
    assert share_of_seeds([True, False, True, True]) == 0.75
    with pytest.raises(ValueError, match="non-empty"):
        share_of_seeds([])
