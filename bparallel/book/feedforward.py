"""Section 2.1 in numbers: chapter support for "Feedforward graphs and their stationary
distribution" (chapter 01).

What the chapter shows, computed here and tested (``tests/book/test_feedforward_chapter.py``):

- :data:`FIGURE_1_EDGES`: a feedforward DAG on 5 nodes with a unique sink, as in the paper's
  Figure 1 (Definitions 2.1-2.2), and :data:`TWO_SINKS`, a 4-node graph without one;
- :func:`walk_matrix_rows`: the walk matrix of Definition 2.3 as table rows (one per node
  moved to, one column per node moved from), formatted by :func:`walk_matrix_formats`;
- :func:`single_head_unique_fraction`: Lemma 2.5 on random feedforward graphs, the share
  whose only stationary distribution (Definition 2.4) is the sink's point mass;
- :func:`combination_unique_fraction`: Lemma 2.6 on random convex combinations of heads
  (Section 2.2), the same share;
- :func:`vector_text` and :func:`sink_names`: how the chapter writes a distribution and the
  sinks of a graph.

Nodes are ``0, ..., n-1``, the last is the sink ``τ``; an edge ``(j, i)`` is ``j -> i``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import graphs, markov
from .._checks import positive_int, square_matrices

__all__ = [
    "COMBINATION_HEADS",
    "COMBINATION_NODES",
    "FIGURE_1_EDGES",
    "NUM_GRAPHS",
    "TWO_SINKS",
    "combination_ranges",
    "combination_unique_fraction",
    "node_labels",
    "single_head_unique_fraction",
    "sink_names",
    "vector_text",
    "walk_matrix_formats",
    "walk_matrix_rows",
]

#: Random graphs (and random combinations) of Lemmas 2.5 and 2.6, per profile.
NUM_GRAPHS = {"quick": 300, "paper": 3000}
#: Lemma 2.6's random combinations: numbers of heads ``H`` and of nodes ``n`` drawn
#: uniformly from these half-open ranges (``rng.integers(low, high)``).
COMBINATION_HEADS = (2, 9)
COMBINATION_NODES = (2, 25)
#: A feedforward DAG on n = 5 nodes with the unique sink τ = 4, as in the paper's Figure 1.
FIGURE_1_EDGES: list[tuple[int, int]] = [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 4)]
#: A feedforward graph on 4 nodes with two sinks (node 1 never passes anything on): Lemma
#: 2.5 without its hypothesis.
TWO_SINKS: list[tuple[int, int]] = [(0, 2), (0, 3), (2, 3)]


def node_labels(n: int) -> list[str]:
    """The names of nodes ``0, ..., n-2`` and of the sink ``τ``, as the chapter writes them."""
    n = positive_int(n, "n")
    return [str(k) for k in range(n - 1)] + ["τ"]


def walk_matrix_rows(W: ArrayLike) -> list[dict[str, Any]]:
    """The walk matrix ``W`` (Definition 2.3) as table rows: one row per node moved to
    (column ``to``), one column ``from j`` per node moved from, so each column sums to 1."""
    W = square_matrices(W, "W", layout="(n, n)", ndim=2)
    labels = node_labels(W.shape[0])
    return [{"to": labels[i], **{f"from {labels[j]}": W[i, j] for j in range(len(labels))}}
            for i in range(len(labels))]


def walk_matrix_formats(n: int) -> dict[str, str]:
    """Number formats of :func:`walk_matrix_rows` on ``n`` nodes: three decimals."""
    return {f"from {lab}": ".3f" for lab in node_labels(n)}


def _only_the_sink(W: np.ndarray) -> bool:
    """Is the sink's point mass ``1_τ`` the one stationary distribution of ``W``
    (:func:`bparallel.markov.stationary_distributions`)?"""
    dists = markov.stationary_distributions(W)
    return len(dists) == 1 and bool(np.allclose(dists[0], np.eye(W.shape[-1])[-1]))


def single_head_unique_fraction(num_graphs: int, rng: np.random.Generator) -> float:
    """Lemma 2.5 on ``num_graphs`` random feedforward graphs with a unique sink: the share
    whose only stationary distribution is ``1_τ``.

    Per graph, drawn from ``rng`` in this order: all sizes ``n`` in ``[2, 30)``, all edge
    densities in ``[0.02, 0.9)``, then one adjacency per graph
    (:func:`bparallel.graphs.random_feedforward_adjacency`); the stationary distributions
    are all of them (:func:`bparallel.markov.stationary_distributions`)."""
    num_graphs = positive_int(num_graphs, "num_graphs")
    sizes = rng.integers(2, 30, num_graphs)
    dens = rng.uniform(0.02, 0.9, num_graphs)
    unique = 0
    for n, d in zip(sizes, dens, strict=True):
        W = graphs.walk_matrix_from_adjacency(
            graphs.random_feedforward_adjacency(1, int(n), d, rng)[0])
        unique += _only_the_sink(W)
    return unique / num_graphs


def combination_unique_fraction(num_graphs: int, rng: np.random.Generator) -> float:
    """Lemma 2.6 on ``num_graphs`` random convex combinations ``W-bar = sum_h alpha_h W^(h)``
    of heads sharing the sink: the share whose only stationary distribution is ``1_τ``.

    Per combination, drawn from ``rng`` in this order: ``H`` in :data:`COMBINATION_HEADS`
    (``[2, 9)``), ``n`` in :data:`COMBINATION_NODES` (``[2, 25)``), the heads (one edge
    density in ``[0.05, 0.8)`` for all of them) and ``alpha ~ Dirichlet(1, ..., 1)``."""
    num_graphs = positive_int(num_graphs, "num_graphs")
    ok = 0
    for _ in range(num_graphs):
        H = int(rng.integers(*COMBINATION_HEADS))
        n = int(rng.integers(*COMBINATION_NODES))
        Ws = graphs.walk_matrix_from_adjacency(
            graphs.random_feedforward_adjacency(H, n, rng.uniform(0.05, 0.8), rng))
        alpha = rng.dirichlet(np.ones(H))
        ok += _only_the_sink(graphs.convex_combination(Ws, alpha))
    return ok / num_graphs


def vector_text(x: ArrayLike) -> str:
    """A distribution of point masses as the chapter writes it: ``(0, 0, 1)``."""
    return "(" + ", ".join(f"{v:.0f}" for v in np.ravel(np.asarray(x, dtype=np.float64))) + ")"


def sink_names(edges: Iterable[Sequence[int]], n: int) -> str:
    """The sinks of a graph (Definition 2.2) by name, joined by "and": ``"1 and τ"``."""
    labels = node_labels(n)
    return " and ".join(labels[k] for k in graphs.sinks(edges, n))


def combination_ranges() -> dict[str, int]:
    """The ranges of :func:`combination_unique_fraction`'s draws as a reader reads them
    (inclusive): ``lemma_2_6.heads.min/max`` and ``lemma_2_6.nodes.max``."""
    return {"lemma_2_6.heads.min": COMBINATION_HEADS[0],
            "lemma_2_6.heads.max": COMBINATION_HEADS[1] - 1,
            "lemma_2_6.nodes.max": COMBINATION_NODES[1] - 1}
