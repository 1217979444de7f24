"""The book's list wording (bparallel.book.words), shared by every page that writes one."""

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
