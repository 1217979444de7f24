"""Small drawing helpers shared by the chapters (matplotlib imported lazily)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .graphs import as_edges


def draw_dag(
    edges: Sequence[tuple[int, int]],
    n: int,
    *,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    color: str = "C0",
    title: str | None = None,
) -> Any:
    """Draw a graph on nodes ``0..n-1`` laid out left to right (token order).

    Forward edges arc above the nodes, backward edges (not feedforward) arc below in red;
    self-loops are implied and not drawn. Returns the axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    arr = as_edges(edges, n)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * n + 1, 1.9))
    labels = list(labels) if labels is not None else [str(k) for k in range(n - 1)] + ["τ"]
    x = np.arange(n, dtype=float)
    for j, i in arr:
        if j == i:
            continue
        back = j > i
        rad = (0.5 if back else -0.5) * np.sign(i - j) * min(1.0, 0.35 + 0.12 * abs(i - j))
        ax.add_patch(
            FancyArrowPatch(
                (x[j], 0), (x[i], 0), connectionstyle=f"arc3,rad={rad}",
                arrowstyle="-|>", mutation_scale=12, lw=1.3, shrinkA=11, shrinkB=11,
                color="crimson" if back else color,
            )
        )
    ax.scatter(x, np.zeros(n), s=520, color="white", edgecolor="k", zorder=3)
    for k in range(n):
        ax.text(x[k], 0, labels[k], ha="center", va="center", zorder=4)
    span = 0.2 + 0.25 * n
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-span, span)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
