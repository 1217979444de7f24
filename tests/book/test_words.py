"""The book's small rules of wording (bparallel.book.words): lists, and words that agree
with a count, numbers to significant digits; shared by every page that writes a
sentence from data."""

from __future__ import annotations

import math

import pytest

from bparallel.book.words import (
    fmt_fixed,
    fmt_p,
    fmt_sig,
    fmt_steps,
    join_words,
    unsigned_zero,
)


def test_lists_read_a_b_and_c():
    assert join_words(["a"]) == "a"
    assert join_words(["a", "b"]) == "a and b"
    assert join_words(["a", "b", "c"]) == "a, b and c"
    assert join_words((42, 43, 44, 45)) == "42, 43, 44 and 45"  # seeds: any items, as str
    with pytest.raises(ValueError, match="empty"):
        join_words([])


def test_a_word_agrees_with_its_count():
    from bparallel.book.words import agree

    assert [agree(k, "has", "have") for k in (0, 1, 2, 12)] == ["have", "has", "have", "have"]
    assert f"1 {agree(1, 'seed', 'seeds')}, 2 {agree(2, 'seed', 'seeds')}" == "1 seed, 2 seeds"
    for bad in (-1, 1.0, True, "1", None):
        with pytest.raises(ValueError, match="count"):
            agree(bad, "is", "are")


def test_a_count_of_a_total_reads_all_both_none_or_k_of_the_n():
    from bparallel.book.words import count_of

    said = [count_of(k, n, "run", "runs") for k, n in
            ((12, 12), (7, 12), (0, 12), (2, 2), (1, 2), (0, 2), (1, 1), (0, 1))]
    assert said == ["all 12 runs", "7 of the 12 runs", "none of the 12 runs", "both runs",
                    "1 of the 2 runs", "neither of the 2 runs", "the one run", "no run"]
    for count, total in ((13, 12), (-1, 3), (0, 0), (True, 2), (1.0, 2), (1, "2")):
        with pytest.raises(ValueError, match="count|total"):
            count_of(count, total, "run", "runs")


def test_numbers_for_a_reader_have_significant_digits_and_no_e_notation():
    """fmt_sig: significant digits, plain and grouped from 1e-4 to 1e6, a power of ten
    written out beyond; the sign on request; zero never negative; bad input refused."""
    assert fmt_sig(1300.4) == "1,300" and fmt_sig(0.00025) == "0.00025"
    assert fmt_sig(-431.2, 3, sign=True) == "-431" and fmt_sig(9.1749, 3, sign=True) == "+9.17"
    assert fmt_sig(-4.49e-05, 3) == "-4.49 × 10⁻⁵" and fmt_sig(1.3e7) == "1.3 × 10⁷"
    assert fmt_sig(999_999) == "1.0 × 10⁶"  # rounding moves it across the boundary
    assert fmt_sig(0.0) == "0" and fmt_sig(-0.0, sign=True) == "0"
    assert fmt_sig(-1e-320) == "-1.0 × 10⁻³²⁰"  # a subnormal is still a number
    for x in (3.14159, -2.5e-9, 7.0e12, 0.0123):
        assert "e" not in fmt_sig(x, 3)
        text = fmt_sig(x, 3).replace(",", "").replace(" × 10", "e").translate(
            str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
        assert float(text) == float(f"{x:.2e}")  # the digits shown are x's, rounded
    for bad, match in ((float("nan"), "finite"), (float("inf"), "finite")):
        with pytest.raises(ValueError, match=match):
            fmt_sig(bad)
    with pytest.raises(ValueError, match="digits"):
        fmt_sig(1.0, 0)


def test_steps_p_values_and_fixed_decimals_are_written_through_fmt_sig():
    """The book's other number words: steps as counts (no ".0"; ∞; large ones in
    significant digits), p-values never "0.000", fixed decimals never "-0.00" and large
    values in significant digits, so no table prints e notation."""
    assert fmt_steps(math.inf) == "∞" and fmt_steps(12.0) == "12" and fmt_steps(3.25) == "3.2"
    assert fmt_steps(2.37e6) == "2.37 × 10⁶" and fmt_steps(12_345) == "12,300"
    assert fmt_p(0.0004) == "< 0.001" and fmt_p(0.001) == "0.001" and fmt_p(None) == "—"
    assert fmt_p(0.0) == "< 0.001" and fmt_p(1.0) == "1.000"
    assert fmt_fixed(12.3456, 2) == "12.35" and fmt_fixed(-0.001, 2) == "0.00"
    assert fmt_fixed(-0.004, 1) == "0.0" and fmt_fixed(-0.05, 1) == "-0.1"
    assert fmt_fixed(9.84e8, 2) == "9.84 × 10⁸" and fmt_fixed(-123_456.0, 0) == "-123,000"
    # signed: a + before what does not round to zero, never "-0.00" nor "+0.00"
    assert fmt_fixed(0.4, 2, sign=True) == "+0.40" and fmt_fixed(-0.4, 2, sign=True) == "-0.40"
    assert fmt_fixed(-0.001, 2, sign=True) == "0.00" and fmt_fixed(0.001, 2, sign=True) == "0.00"
    assert fmt_fixed(2e5, 1, sign=True) == "+200,000"
    # the one rule both fmt_fixed and a table cell apply to a formatted number
    assert [unsigned_zero(t) for t in ("-0.00", "+0.0", "-0", "-0.0%", "+0.00%")] == \
        ["0.00", "0.0", "0", "0.0%", "0.00%"]
    assert [unsigned_zero(t) for t in ("-0.01", "+0.40", "-10", "-0.05%", "0.00", "-")] == \
        ["-0.01", "+0.40", "-10", "-0.05%", "0.00", "-"]
    with pytest.raises(ValueError, match="text"):
        unsigned_zero(-0.0)
    for x in (1e-9, 3.5e7, -2.2e11):
        assert "e" not in fmt_fixed(x, 2)
