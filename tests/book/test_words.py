"""The book's small rules of wording (bparallel.book.words): lists, and words that agree
with a count; shared by every page that writes a sentence from data."""

from __future__ import annotations

import pytest

from bparallel.book.words import join_words


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
