"""The book's small rules of wording, shared by every page that writes a sentence from data."""

from __future__ import annotations

from collections.abc import Sequence


def join_words(words: Sequence[object]) -> str:
    """A list as the book writes it: ``a``, ``a and b``, ``a, b and c`` (no serial comma).
    ``ValueError`` for an empty list (there is no sentence to write)."""
    items = [str(w) for w in words]
    if not items:
        raise ValueError("words is empty: nothing to join")
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def agree(count: int, one: str, many: str) -> str:
    """The word that agrees with ``count``: ``one`` for exactly one (``"is"``, ``"has"``,
    ``"was"``), ``many`` otherwise (zero included: "0 runs have")."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count={count!r}: expected a count (an int >= 0)")
    return one if count == 1 else many


__all__ = ["agree", "join_words"]
