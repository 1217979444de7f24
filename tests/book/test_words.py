"""The book's small rules of wording (bparallel.book.words): lists, and words that agree
with a count, numbers to significant digits; shared by every page that writes a
sentence from data."""

from __future__ import annotations

import pytest

from bparallel.book.words import fmt_sig, join_words


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
