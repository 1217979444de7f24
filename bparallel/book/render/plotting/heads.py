"""Heads side by side: the toy examples' heads as arc diagrams in one row (chapter 04's
Examples 3.8 and 3.13), one :func:`~bparallel.book.render.plotting.draw_dag` panel per head."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .style import TEXT_WIDTH
from .theory import draw_dag

__all__ = ["draw_heads"]


def draw_heads(
    heads: Sequence[Sequence[tuple[int, int]]],
    labels: Sequence[str],
    *,
    titles: Sequence[str] | None = None,
    colors: Sequence[str] | None = None,
    height: float = 1.9,
) -> Any:
    """One arc diagram per head (an edge list on the nodes named by ``labels``, the sink
    last), in one row of panels ``height`` inches high and at most the text column wide.
    ``titles`` default to ``head 1, head 2, ...``, ``colors`` to ``C0, C1, ...`` (a backward
    edge is red whatever the colour). Returns the figure."""
    import matplotlib.pyplot as plt

    heads = [list(h) for h in heads]
    if not heads:
        raise ValueError("heads is empty: give at least one edge list")
    titles = list(titles) if titles is not None else [f"head {h + 1}" for h in range(len(heads))]
    colors = list(colors) if colors is not None else [f"C{h}" for h in range(len(heads))]
    for name, values in (("titles", titles), ("colors", colors)):
        if len(values) != len(heads):
            raise ValueError(f"{name} has {len(values)} entries: need one per head "
                             f"({len(heads)})")
    if len(labels) < 2:
        raise ValueError(f"labels={list(labels)!r}: need at least 2 nodes")
    fig, axes = plt.subplots(1, len(heads), squeeze=False,
                             figsize=(min(TEXT_WIDTH, 3.5 * len(heads)), height))
    for edges, ax, title, color in zip(heads, axes[0], titles, colors, strict=True):
        draw_dag(edges, len(labels), labels=list(labels), ax=ax, color=color, title=title)
    return fig
