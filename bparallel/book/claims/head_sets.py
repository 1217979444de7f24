"""The head sets searched in Sections 2.2 and 3.1, shared by both claims modules.

:func:`head_sets` draws or enumerates the sets of ``H`` heads on ``n`` nodes for one
``(search, n, H)`` key, :func:`head_set_draws` walks a list of keys in one documented draw
order, and :func:`over_head_sets` applies a comparison (mixing in
:func:`~bparallel.book.claims.mixing.mixing_search`, fidelity in
:func:`~bparallel.book.claims.fidelity_claims.fidelity_search`) to each key's sets;
:func:`store_entry` reads one key of the store a search returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...ensembles import enumerate_feedforward_adjacency, head_tuples, random_head_stacks


def head_sets(
    search: str,
    n: int,
    H: int,
    *,
    num: int | None = None,
    densities: ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    """Adjacency of the head sets searched in Sections 2-3: ``(sets, H, n, n)``.

    ``search="exhaustive"``: every set of ``H`` distinct feedforward graphs with unique sink
    on ``n`` nodes (:func:`enumerate_feedforward_adjacency`, :func:`head_tuples`; no draws).
    ``search="random"``: ``num`` stacks from :func:`random_head_stacks` with ``densities``.
    """
    if search == "exhaustive":
        A = enumerate_feedforward_adjacency(n)
        return A[head_tuples(len(A), H)]
    if search == "random":
        if num is None or densities is None:
            raise ValueError("search='random' needs num and densities")
        return random_head_stacks(num, H, n, densities, seed)[0]
    raise ValueError(f"search must be 'exhaustive' or 'random', got {search!r}")


def per_H(value: int | dict[int, int] | None, H: int, name: str) -> int | None:
    """``value``, or its entry for ``H`` when it is a dict by head count (a clear error when
    ``H`` has none)."""
    if isinstance(value, dict):
        if H not in value:
            raise ValueError(f"{name} has no entry for H = {H}: {value}")
        return value[H]
    return value


def head_set_draws(
    keys: list[tuple[str, int, int]],
    num: int | dict[int, int] | None = None,
    densities: ArrayLike | None = None,
    seed: int | np.random.Generator | None = None,
) -> Iterator[tuple[tuple[str, int, int], NDArray[np.float64]]]:
    """``(key, adjacency)`` per ``(search, n, H)`` of ``keys`` (:func:`head_sets`), lazily.

    Random keys draw from one generator made from ``seed``, in the order of ``keys``; this
    is the draw order of :func:`~bparallel.book.claims.mixing.mixing_search` and
    :func:`~bparallel.book.claims.fidelity_claims.fidelity_search`.
    """
    rng = np.random.default_rng(seed)
    for search, n, H in keys:
        yield (search, n, H), head_sets(search, n, H, num=per_H(num, H, "num"),
                                        densities=densities, seed=rng)


def over_head_sets(
    keys: list[tuple[str, int, int]],
    num: int | dict[int, int] | None,
    densities: ArrayLike | None,
    seed: int | np.random.Generator | None,
    compare: Callable[[NDArray[np.float64], int], Any],
) -> dict[tuple[str, int, int], tuple[NDArray[np.float64], Any]]:
    """``{(search, n, H): (A, compare(A, H))}`` for the head sets ``A`` of each key
    (:func:`head_set_draws`)."""
    return {key: (A, compare(A, key[2]))
            for key, A in head_set_draws(keys, num, densities, seed)}


def store_entry(store: Mapping[tuple[str, int, int], Any], key: tuple[str, int, int]) -> Any:
    """The entry of a search's store (``{(search, n, H): (head sets, comparison)}``) under
    ``key``; a clear error when the search did not cover it."""
    if key not in store:
        raise ValueError(f"the store has no head sets {key}: keys are {list(store)}")
    return store[key]
