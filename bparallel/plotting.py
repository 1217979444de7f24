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


def plot_pair_mixing(
    edges_pair: Sequence[Sequence[tuple[int, int]]],
    matrices: Sequence[Sequence[Sequence[Any]]],
    mixing_times: Sequence[int],
    eps: float,
    *,
    weights: Sequence[float],
    labels: Sequence[str] | None = None,
) -> Any:
    """Two heads and their combination: the graphs (top) and the TV curves per start node
    (bottom, Definition 2.7), with ``eps`` and each mixing time marked. ``matrices`` and
    ``mixing_times`` as returned by :func:`bparallel.ensembles.exact_combination_mixing`
    (heads first, combination last; exact fractions or floats). Returns the figure."""
    import matplotlib.pyplot as plt

    from .ensembles import tv_curves

    if len(edges_pair) != 2 or len(matrices) != 3 or len(mixing_times) != 3:
        raise ValueError("plot_pair_mixing needs 2 heads and 3 matrices and mixing times "
                         f"(heads, combination), got {len(edges_pair)}, {len(matrices)}, "
                         f"{len(mixing_times)}")
    mats = [np.array([[float(x) for x in row] for row in M]) for M in matrices]
    n = mats[0].shape[-1]
    fig, axes = plt.subplots(2, 3, figsize=(11, 4.6), gridspec_kw={"height_ratios": [1, 1.6]})
    draw_dag(edges_pair[0], n, labels=labels, ax=axes[0, 0], title="head 1")
    draw_dag(edges_pair[1], n, labels=labels, ax=axes[0, 1], color="C1", title="head 2")
    draw_dag(sorted(set(edges_pair[0]) | set(edges_pair[1])), n, labels=labels, ax=axes[0, 2],
             color="C2", title=f"combination, weights {tuple(float(w) for w in weights)}")
    horizon_tv = max(mixing_times) + 3
    for ax, M, T, name in zip(axes[1], mats, mixing_times, ["head 1", "head 2", "combination"],
                              strict=True):
        tv = tv_curves(M, horizon_tv)
        for j in range(n - 1):
            ax.plot(range(horizon_tv + 1), tv[:, j], "o-", ms=3, label=f"start {j}")
        ax.plot(range(horizon_tv + 1), tv.max(axis=1), "k--", lw=1, label="max over starts")
        ax.axhline(eps, color="gray", lw=0.8)
        ax.axvline(T, color="crimson", lw=1)
        ax.set_title(f"{name}: $T_{{mix}}$ = {T}")
        ax.set_xlabel("t")
    axes[1, 0].set_ylabel(r"$\|W^t e_j - 1_\tau\|_{TV}$")
    axes[1, 0].legend(fontsize="x-small")
    fig.tight_layout()
    return fig
