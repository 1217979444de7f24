"""The figures of the theory chapters (01-06): graphs, walks, mixing-time bounds,
fidelity amplification and the mixing-fidelity trade-off."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ....graphs import as_edges
from .style import RASTERIZE_ABOVE, TEXT_WIDTH, require_columns


def draw_dag(
    edges: Sequence[tuple[int, int]],
    n: int,
    *,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    color: str = "C0",
    title: str | None = None,
) -> Any:
    """Draw a graph on nodes ``0..n-1`` laid out left to right (token order), as an arc
    diagram that keeps every edge visible.

    An edge to the next node is a straight arrow; a longer forward edge is an arc whose
    height grows with its span, above the nodes when it starts at an even node and below
    when it starts at an odd one, so that arcs which would cross (``0 -> 2``, ``1 -> 3``)
    lie on opposite sides. Backward edges (not feedforward) arc below in red, deeper than
    any forward arc. Self-loops are implied and not drawn. Returns the axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    arr = as_edges(edges, n)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(TEXT_WIDTH, 1.1 * n + 1), 2.4))
    labels = list(labels) if labels is not None else [str(k) for k in range(n - 1)] + ["τ"]
    x = np.arange(n, dtype=float)
    reach = 0.5  # the largest arc height above or below the nodes, grown below
    for j, i in arr:
        if j == i:
            continue
        back, span = j > i, abs(i - j)
        # arc3's control point sits rad x chord off the chord; the arc peaks at half of it
        if back:
            below, rad = True, 1.1
        else:
            below, rad = j % 2 == 1, (0.0 if span == 1 else 0.55)
        reach = max(reach, 0.5 * rad * span + 0.45)
        direction = np.sign(i - j)
        ax.add_patch(
            FancyArrowPatch(
                (x[j], 0), (x[i], 0),
                connectionstyle=f"arc3,rad={(rad if below else -rad) * direction}",
                arrowstyle="-|>", mutation_scale=12, lw=1.3, shrinkA=11, shrinkB=11,
                color="crimson" if back else color,
            )
        )
    ax.scatter(x, np.zeros(n), s=520, color="white", edgecolor="k", zorder=3)
    for k in range(n):
        ax.text(x[k], 0, labels[k], ha="center", va="center", zorder=4)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize="medium")
    return ax


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


def plot_matrix_powers(
    W: Any, powers: Sequence[int], *, labels: Sequence[str] | None = None
) -> Any:
    """Heatmaps of ``W^t`` for each ``t`` in ``powers``, on one shared colour scale [0, 1]
    with a colourbar: column ``j`` is where a walker started at ``j`` is after ``t`` steps
    (Definition 2.3), so the mass gathering in the sink row is the stationary distribution
    ``1_tau`` arriving (Lemma 2.5). Returns the figure."""
    import matplotlib.pyplot as plt

    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W has shape {W.shape}: expected one square matrix (n, n)")
    powers = [int(t) for t in powers]
    if not powers or min(powers) < 0:
        raise ValueError(f"powers={powers!r}: expected at least one integer t >= 0")
    n = W.shape[0]
    labels = list(labels) if labels is not None else [str(k) for k in range(n - 1)] + ["τ"]
    width = min(TEXT_WIDTH, 1.7 * len(powers) + 0.9)
    fig, axes = plt.subplots(1, len(powers), figsize=(width, 2.4), squeeze=False,
                             layout="constrained")
    for ax, t in zip(axes[0], powers, strict=True):
        image = ax.imshow(np.linalg.matrix_power(W, t), vmin=0, vmax=1, cmap="viridis")
        ax.set_title(f"$W^{{{t}}}$")
        ax.set_xticks(range(n), labels)
        ax.set_yticks(range(n), labels)
        ax.set_xlabel("start j")
    axes[0, 0].set_ylabel("position i")
    fig.colorbar(image, ax=axes[0].tolist(), label="probability", shrink=0.9)
    return fig


def plot_bound_vs_exact(table: Any, eps: float) -> Any:
    """Exact ``T_mix`` (Definition 2.7) against Theorem 2.8's bound ``2N/p`` per graph family.

    ``table`` has columns ``family``, ``n``, ``T_mix exact`` and ``2N/p``; each family's exact
    curve (solid) and bound (dashed) share one colour. Returns the figure."""
    import matplotlib.pyplot as plt

    require_columns(table, ["family", "n", "T_mix exact", "2N/p"], "table")
    fig, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    for k, (family, marker) in enumerate(zip(table["family"].unique(), "osd^v", strict=False)):
        d = table[table["family"] == family]
        ax.plot(d["n"], d["T_mix exact"], marker=marker, color=f"C{k}",
                label=f"{family}: exact $T_{{mix}}$")
        ax.plot(d["n"], d["2N/p"], "--", color=f"C{k}", label=f"{family}: bound $2N/p$")
    ax.set_xlabel("n (nodes)")
    ax.set_ylabel("steps")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    ax.set_title(f"Exact mixing time and the bound of Theorem 2.8 (ε = {eps:g})")
    return fig


def plot_shortfall(curves: Mapping[float, Mapping[str, Any]], eps: float) -> Any:
    """The proof of Theorem 2.8 made exact: per forward probability ``p`` (the keys of
    ``curves``, :func:`bparallel.book.mixing_bound.shortfall_curves`), ``Pr[Bin(t, p) < N]``
    at ``t = floor(2N/p)`` (solid, ``"exact"``) and Hoeffding's ``exp(-pN)`` (dashed,
    ``"hoeffding"``, Eq. 10) in the same colour against ``"N"``, with the threshold ``eps``
    labelled. Returns the figure."""
    import matplotlib.pyplot as plt

    if not curves:
        raise ValueError("curves is empty: no p to draw")
    fig, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    for k, (p, c) in enumerate(curves.items()):
        missing = [key for key in ("N", "exact", "hoeffding") if key not in c]
        if missing:
            raise ValueError(f"curves[{p!r}] has no {missing}")
        ax.semilogy(c["N"], c["exact"], color=f"C{k}", label=f"exact, p = {p:g}")
        ax.semilogy(c["N"], c["hoeffding"], "--", color=f"C{k}", label=f"exp(-pN), p = {p:g}")
    ax.axhline(eps, color="gray", lw=0.8, ls=":", label=f"ε = {eps:g}")
    ax.set_xlabel("N (forward moves needed)")
    ax.set_ylabel("Pr[X < N] at t = ⌊2N/p⌋")
    ax.legend(fontsize="small", ncol=2)
    return fig


def plot_combination_mixing(alphas: Any, t_mix: Any, bound: Any) -> Any:
    """Exact ``T_mix`` of ``(1 - a) W_slow + a W_fast`` against the weight ``a`` on the fast
    head, with the bound ``2N/p`` of Eq. 12 in the same colour, dashed. Returns the figure."""
    import matplotlib.pyplot as plt

    alphas, t_mix, bound = (np.asarray(v, dtype=float) for v in (alphas, t_mix, bound))
    if not alphas.shape == t_mix.shape == bound.shape or alphas.ndim != 1:
        raise ValueError(f"alphas, t_mix and bound must be 1-d of one length, got "
                         f"{alphas.shape}, {t_mix.shape}, {bound.shape}")
    fig, ax = plt.subplots(figsize=(6.5, 3.4), layout="constrained")
    ax.plot(alphas, t_mix, "o-", color="C0", label=r"exact $T_{mix}(\bar W)$")
    ax.plot(alphas, bound, "--", color="C0", label=r"$2N/p$, $p = \sum_h \alpha_h p_h$ (Eq. 12)")
    ax.set_xlabel(r"weight $\alpha$ on the fast head")
    ax.set_ylabel("steps")
    ax.set_yscale("log")
    ax.legend()
    return fig


def plot_computed_vs_closed_form(
    x: Any, values: Any, closed_form: Any, *, computed: str = "computed",
    closed: str = "closed form", xlabel: str = "",
) -> Any:
    """A computed quantity (dots) on its closed form (line), e.g. Example 3.8's
    ``(Delta-bar^2)[tau, u] = beta_1 beta_2 / 4`` against ``beta_1``. Returns the figure."""
    import matplotlib.pyplot as plt

    x, values, closed_form = (np.asarray(v, dtype=float) for v in (x, values, closed_form))
    if not x.shape == values.shape == closed_form.shape or x.ndim != 1:
        raise ValueError(f"x, values and closed_form must be 1-d of one length, got "
                         f"{x.shape}, {values.shape}, {closed_form.shape}")
    fig, ax = plt.subplots(figsize=(5.5, 3), layout="constrained")
    ax.plot(x, values, "o", ms=3, label=computed)
    ax.plot(x, closed_form, "k-", lw=1, label=closed)
    ax.set_xlabel(xlabel)
    ax.legend()
    return fig


def plot_pair_mixing(
    edges_pair: Sequence[Sequence[tuple[int, int]]],
    curves: Sequence[Any],
    mixing_times: Sequence[int],
    eps: float,
    *,
    weights: Sequence[float],
    labels: Sequence[str] | None = None,
) -> Any:
    """Two heads and their combination: the graphs (top) and the TV curves per start node
    (bottom, Definition 2.7), with ``eps`` and each mixing time marked. ``curves``: per
    graph (heads first, combination last) the TV distance from every start node at
    ``t = 0, 1, ...``, ``(horizon + 1, n)`` (:func:`bparallel.book.claims.pair_tv_curves`);
    ``mixing_times`` as :func:`bparallel.book.claims.exact_combination_mixing` returns them.
    Returns the figure."""
    import matplotlib.pyplot as plt

    if len(edges_pair) != 2 or len(curves) != 3 or len(mixing_times) != 3:
        raise ValueError("plot_pair_mixing needs 2 heads and 3 curves and mixing times "
                         f"(heads, combination), got {len(edges_pair)}, {len(curves)}, "
                         f"{len(mixing_times)}")
    curves = [np.asarray(c, dtype=np.float64) for c in curves]
    n = curves[0].shape[-1]
    fig, axes = plt.subplots(2, 3, figsize=(TEXT_WIDTH, 4.8),
                             gridspec_kw={"height_ratios": [1, 1.6]})
    draw_dag(edges_pair[0], n, labels=labels, ax=axes[0, 0], title="head 1")
    draw_dag(edges_pair[1], n, labels=labels, ax=axes[0, 1], color="C1", title="head 2")
    beta = ", ".join(f"{float(w):g}" for w in weights)
    draw_dag(sorted(set(edges_pair[0]) | set(edges_pair[1])), n, labels=labels, ax=axes[0, 2],
             color="C2", title=f"combination, β = ({beta})")
    for ax, tv, T, name in zip(axes[1], curves, mixing_times, ["head 1", "head 2", "combination"],
                               strict=True):
        steps = range(tv.shape[0])
        for j in range(n - 1):
            ax.plot(steps, tv[:, j], "o-", ms=3, label=f"start {j}")
        ax.plot(steps, tv.max(axis=1), "k--", lw=1, label="max over starts")
        ax.axhline(eps, color="gray", lw=0.8)
        ax.axvline(T, color="crimson", lw=1)
        ax.set_title(f"{name}: $T_{{mix}}$ = {T}")
        ax.set_xlabel("t")
    axes[1, 0].set_ylabel(r"$\|W^t e_j - 1_\tau\|_{TV}$")
    axes[1, 0].legend(fontsize="small")
    fig.tight_layout()
    return fig


#: Head kinds of the Theorem 2.8 survey (chapter 03, section 1), in plotting order.
BOUND_KINDS = ("unweighted", "weighted", "path", "complete", "unweighted pair", "weighted pair")


def plot_mixing_bound(heads: Any, sizes: Sequence[int], eps: float) -> Any:
    """Theorem 2.8 / Eq. 20 survey: exact ``T_mix / (2N/p)`` per head (DataFrame with columns
    ``kind``, ``n``, ``p_times_n``, ``ratio``, as :func:`bparallel.book.claims.bound_ratios`
    returns) against the size ``n`` (left, kinds side by side) and against ``pN`` (right; left
    of ``pN = ln(1/eps)`` the Hoeffding step is vacuous). Returns the figure."""
    import matplotlib.pyplot as plt

    require_columns(heads, ("kind", "n", "p_times_n", "ratio"), "plot_mixing_bound")
    if not 0 < eps < 1:
        raise ValueError(f"eps={eps}: must lie in (0, 1)")
    kinds = list(BOUND_KINDS)
    fig, axes = plt.subplots(1, 2, figsize=(TEXT_WIDTH, 3.3))
    ax = axes[0]
    for k, kind in enumerate(kinds):
        d = heads[heads.kind == kind]
        x = np.log10(d.n) + (k - 2.5) * 0.025  # kinds side by side at each size
        ax.scatter(x, d.ratio, s=6, alpha=0.4, color=f"C{k}", label=kind,
                   rasterized=len(d) > RASTERIZE_ABOVE)
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xticks(np.log10(list(sizes)), [str(n) for n in sizes])
    ax.set_xlabel("n")
    ax.set_ylabel(r"$T_{mix} / (2N/p)$")
    ax.set_yscale("log")
    ax.legend(fontsize="small", ncol=2, markerscale=2)
    ax.set_title("exact mixing time over the bound")
    ax = axes[1]
    threshold = float(np.log(1 / eps))
    for kind in ("weighted", "weighted pair", "unweighted", "path"):
        d = heads[heads.kind == kind]
        ax.scatter(d.p_times_n, d.ratio, s=6, alpha=0.4, color=f"C{kinds.index(kind)}",
                   label=kind, rasterized=len(d) > RASTERIZE_ABOVE)
    ax.axvline(threshold, color="gray", ls="--", lw=1)
    ax.text(threshold * 1.1, 1.3, r"$pN = \ln(1/\epsilon)$", fontsize="small", color="gray")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("pN")
    ax.set_ylabel(r"$T_{mix} / (2N/p)$")
    ax.legend(fontsize="small", markerscale=2)
    ax.set_title("by pN (Hoeffding vacuous left of dashes)", fontsize="medium")
    fig.tight_layout()
    return fig


def plot_binomial_bound(
    p: Sequence[float], Ns: Sequence[int], tails: Any, ratios: Any, eps: float
) -> Any:
    """Theorem 2.8 made exact, one line per ``N`` of ``Ns`` against ``p`` (log axis): the lazy
    path's TV distance at ``t = floor(2N/p)`` (left, ``tails[i]``, with ``eps`` and ``e^-2``
    marked) and the worst case over all chains ``t*(N, p) / (2N/p)`` (right, ``ratios[i]``).
    ``tails`` and ``ratios`` are ``(len(Ns), len(p))``, as
    :func:`bparallel.book.claims.binomial_tail_at_bound` and
    :func:`bparallel.book.claims.worst_case_bound_ratio` return them. Returns the figure."""
    import matplotlib.pyplot as plt

    p = np.asarray(p, dtype=float)
    tails, ratios = np.asarray(tails, dtype=float), np.asarray(ratios, dtype=float)
    Ns = [int(N) for N in Ns]
    if tails.shape != (len(Ns), len(p)) or ratios.shape != tails.shape:
        raise ValueError(f"tails and ratios must have shape {(len(Ns), len(p))} (Ns, p), got "
                         f"{tails.shape} and {ratios.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(TEXT_WIDTH, 3.2))
    for N, tail, ratio in zip(Ns, tails, ratios, strict=True):
        axes[0].semilogx(p, tail, label=f"N = {N}")
        axes[1].semilogx(p, ratio, label=f"N = {N}")
    axes[0].axhline(eps, color="k", lw=0.8)
    axes[0].axhline(np.exp(-2), color="gray", ls=":", lw=1)
    axes[0].text(1.2 * p.min(), np.exp(-2) * 1.05, "$e^{-2}$", color="gray")
    axes[0].set_xlabel("p")
    axes[0].set_ylabel(r"Pr[Bin($\lfloor 2N/p \rfloor$, p) < N]")
    axes[0].set_title("lazy path: TV at t = 2N/p")
    axes[0].legend(fontsize="small")
    axes[1].axhline(1, color="k", lw=0.8)
    axes[1].set_xlabel("p")
    axes[1].set_ylabel(r"$t^*(N, p) \,/\, (2N/p)$")
    axes[1].set_title(f"worst case, ε = {eps}")
    fig.tight_layout()
    return fig


def plot_mixing_weights(mc: Any, n: int) -> Any:
    """Eq. 5 on pairs of heads (a :class:`bparallel.ensembles.MixingComparison` ``mc`` with
    ``H = 2``, on ``n`` nodes): histograms of the speed-up ``min_h T_mix(W^(h)) - T_mix(W-bar)``
    with uniform and with the best grid weights (left, log counts), and per grid weight
    ``alpha_1`` the % of pairs faster than the fastest head and slower than the slowest
    (right). Returns the figure."""
    import matplotlib.pyplot as plt

    if mc.weights.shape[-1] != 2:
        raise ValueError(f"plot_mixing_weights needs pairs of heads, got H = "
                         f"{mc.weights.shape[-1]}")
    gain_u = mc.fastest - mc.uniform
    gain_b = mc.fastest - mc.best
    fig, axes = plt.subplots(1, 2, figsize=(TEXT_WIDTH, 3.1))
    bins = np.arange(min(gain_u.min(), 0) - 0.5, gain_b.max() + 1.5)
    axes[0].hist(gain_u, bins=bins, alpha=0.6, label="uniform weights")
    axes[0].hist(gain_b, bins=bins, alpha=0.6, label=f"best of {len(mc.weights)} grid weights")
    axes[0].set_yscale("log")
    axes[0].set_xlabel(r"$\min_h T_{mix}(W^{(h)}) - T_{mix}(\bar W)$ (steps)")
    axes[0].set_ylabel(f"pairs (n = {n})")
    axes[0].legend(fontsize="small")
    alphas = mc.weights[:, 0]
    axes[1].plot(alphas, (mc.grid < mc.fastest[:, None]).mean(0) * 100, "o-", ms=3,
                 label="faster than fastest head")
    axes[1].plot(alphas, (mc.grid > mc.slowest[:, None]).mean(0) * 100, "s-", ms=3,
                 label="slower than slowest head")
    axes[1].set_xlabel(r"weight $\alpha_1$ on head 1")
    axes[1].set_ylabel(f"% of pairs (n = {n})")
    axes[1].legend(fontsize="small")
    fig.tight_layout()
    return fig


def plot_amplification_histograms(comparisons: Mapping[str, Any], tol: float = 1e-9) -> Any:
    """Fidelity amplification of pairs of heads, one colour per entry of ``comparisons``
    (label -> :class:`bparallel.ensembles.FidelityComparison`): density histograms of the
    amplification with equal weights (left) and with the best grid weights (middle), and
    the % of pairs amplified (by more than ``tol``) at each grid weight ``beta_1`` (right).
    Returns the figure."""
    import matplotlib.pyplot as plt

    if not comparisons:
        raise ValueError("plot_amplification_histograms needs at least one comparison")
    fig, axes = plt.subplots(1, 3, figsize=(TEXT_WIDTH, 2.9))
    for k, (label, fc) in enumerate(comparisons.items()):
        color = f"C{k}"
        axes[0].hist(fc.amp_uniform, bins=60, density=True, histtype="step", color=color,
                     label=label)
        axes[1].hist(fc.amp_best, bins=60, density=True, histtype="step", color=color,
                     label=label)
        amp_grid = fc.grid - fc.best_head[:, None]
        axes[2].plot(fc.weights[:, 0], 100 * (amp_grid > tol).mean(0), "o-", ms=3,
                     color=color, label=label)
    for ax, title in zip(axes[:2], ["equal weights", "best grid weights"], strict=True):
        ax.axvline(0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel(r"$\phi_{min}^{multi} - \max_h \phi_{min}^{(h)}$")
    axes[0].legend(fontsize="small")
    axes[2].set_xlabel(r"$\beta_1$")
    axes[2].set_ylabel("% of pairs amplified")
    axes[2].set_title("by weight")
    fig.tight_layout()
    return fig


def plot_amplification_by_horizon_and_size(
    by_horizon: Any, by_size: Any, *, n: int, horizon: int, labels: Mapping[str, str]
) -> Any:
    """The % of pairs amplified with uniform and with the best weights against the horizon
    ``T`` (left: ``by_horizon``, indexed by ``T``, pairs on ``n`` nodes) and against the size
    ``n`` (right: ``by_size``, with an index level or column ``n``, at ``horizon``). Both
    frames as :func:`bparallel.book.claims.amplification_table` returns them, with columns
    ``amplified_uniform_pct`` and ``amplified_best_pct``; ``labels`` names each column in the
    legend (the chapter's words: :data:`bparallel.book.claims.LABELS`). Returns the
    figure."""
    import matplotlib.pyplot as plt

    columns = ("amplified_uniform_pct", "amplified_best_pct")
    missing = [c for c in columns if c not in labels]
    if missing:
        raise ValueError(f"labels has no legend text for {missing}")
    require_columns(by_horizon, columns, "plot_amplification_by_horizon_and_size (by_horizon)")
    require_columns(by_size, columns, "plot_amplification_by_horizon_and_size (by_size)")
    sizes = by_size.reset_index()
    if "n" not in sizes:
        raise ValueError("by_size needs an index level or column 'n'")
    fig, axes = plt.subplots(1, 2, figsize=(TEXT_WIDTH, 3.0))
    for col, marker in zip(columns, "os", strict=True):
        axes[0].plot(by_horizon.index, by_horizon[col], marker=marker, label=labels[col])
        axes[1].plot(sizes.n, sizes[col], marker=marker, label=labels[col])
    axes[0].set_xscale("log")
    axes[0].set_xlabel("horizon T")
    axes[0].set_ylabel(f"% of pairs (n = {n})")
    axes[0].legend(fontsize="small")
    axes[1].set_xlabel("n")
    axes[1].set_ylabel(f"% of pairs (T = {horizon})")
    axes[1].legend(fontsize="small")
    fig.tight_layout()
    return fig


def plot_head_pair(adjacency_pair: Any, phi_min: Sequence[float]) -> Any:
    """Two heads side by side (``adjacency_pair`` ``(2, n, n)``), each titled with its
    minimax fidelity ``phi_min[h]`` (Definition 3.5). Returns the figure."""
    import matplotlib.pyplot as plt

    from ....graphs import edges_from_adjacency

    A = np.asarray(adjacency_pair)
    if A.ndim != 3 or A.shape[0] != 2 or len(phi_min) != 2:
        raise ValueError(f"plot_head_pair needs adjacency (2, n, n) and 2 phi_min, got "
                         f"{A.shape} and {len(phi_min)}")
    n = A.shape[-1]
    fig, axes = plt.subplots(1, 2, figsize=(min(TEXT_WIDTH, 2 * (1.1 * n + 1)), 2.0))
    for h in range(2):
        draw_dag(edges_from_adjacency(A[h]), n, ax=axes[h], color=f"C{h}",
                 title=f"n = {n}, head {h + 1}: φ_min = {phi_min[h]:.3f}")
    return fig


def plot_best_head(table: Any, laws: Sequence[str]) -> Any:
    """Eqs. 16-19: for each law of ``laws``, Eq. 18's ``1 - F(p̄)^H`` (line) and the simulated
    best of ``H`` heads (dots) against ``H`` (log axis). ``table`` has columns ``law``,
    ``num_heads``, ``theory``, ``simulated``, as
    :func:`bparallel.book.claims.best_head_simulation` returns. Returns the figure."""
    import matplotlib.pyplot as plt

    require_columns(table, ("law", "num_heads", "theory", "simulated"), "plot_best_head")
    missing = [law for law in laws if law not in set(table.law)]
    if missing:
        raise ValueError(f"table has no rows for the laws {missing}")
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for k, law in enumerate(laws):
        d = table[table.law == law]
        ax.plot(d.num_heads, d.theory, "-", color=f"C{k}", label=f"{law}: Eq. 18")
        ax.plot(d.num_heads, d.simulated, "o", color=f"C{k}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("H (heads)")
    ax.set_ylabel(r"Pr(max$_h$ $p_h \geq \bar p$)")
    ax.legend(fontsize="small")
    ax.set_title("dots: simulated best of H heads")
    return fig


def plot_amplification_features(features: Any, by_jaccard: Any, horizon: int) -> Any:
    """Which pairs amplify (Section 3.1 on random pairs): share amplified per edge-Jaccard bin
    (``by_jaccard``, a Series indexed by intervals), amplification against complementarity,
    and the mixed-sequence share of Eq. 27 against the worst node's optimal time ``t*``, with
    the identical-heads curve ``1 - 2^(1-t)``. ``features`` as returned by
    :func:`bparallel.book.claims.amplification_features`. Returns the figure."""
    import matplotlib.pyplot as plt

    require_columns(features, ("complementarity", "amplification", "amplified", "t_star",
                                "mixed_sequence_share"), "plot_amplification_features")
    if horizon < 1:
        raise ValueError(f"horizon={horizon}: must be at least 1")
    fig, axes = plt.subplots(1, 3, figsize=(TEXT_WIDTH, 2.9))
    axes[0].plot([iv.mid for iv in by_jaccard.index], 100 * np.asarray(by_jaccard), "o-")
    axes[0].set_xlabel("edge Jaccard index")
    axes[0].set_ylabel("% amplified")
    axes[1].scatter(features.complementarity, features.amplification, s=3, alpha=0.25,
                    rasterized=len(features) > RASTERIZE_ABOVE)
    lim = float(features.complementarity.max())
    axes[1].plot([0, lim], [0, lim], "k--", lw=0.8, label="amplification = complementarity")
    axes[1].axhline(0, color="gray", lw=0.6)
    axes[1].set_xlabel("complementarity")
    axes[1].set_ylabel("amplification")
    axes[1].legend(fontsize="small")
    tt = np.arange(1, horizon + 1)
    for flag, c in [(False, "C7"), (True, "C3")]:
        d = features[features.amplified == flag]
        axes[2].scatter(d.t_star + (0.15 if flag else -0.15), d.mixed_sequence_share, s=3,
                        alpha=0.3, color=c, label="amplified" if flag else "not amplified",
                        rasterized=len(d) > RASTERIZE_ABOVE)
    axes[2].plot(tt, 1 - 2.0 ** (1 - tt), "k-", lw=1, label=r"identical heads: $1 - 2^{1-t}$")
    axes[2].set_xlabel("t* of the worst node")
    axes[2].set_ylabel("mixed-sequence share")
    axes[2].legend(fontsize="small", markerscale=3)
    fig.tight_layout()
    return fig


def plot_tradeoff(
    trade: Any, sizes: Sequence[int], rho: dict[int, float], families: Sequence[str]
) -> Any:
    """The mixing-fidelity trade-off: ``T_mix`` against ``phi_min`` per size, random graphs
    coloured by log density, equal-weight random pairs as crosses, the structured
    ``families`` as large markers. ``trade`` has columns ``n``, ``kind``, ``t_mix``,
    ``phi_min``, ``density``; ``rho[n]`` is the random graphs' rank correlation, shown in
    each title. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    require_columns(trade, ("n", "kind", "t_mix", "phi_min", "density"), "plot_tradeoff")
    sizes = list(sizes)
    missing = [n for n in sizes if n not in rho]
    if missing:
        raise ValueError(f"rho has no rank correlation for n = {missing}")
    fig, axes = plt.subplots(1, len(sizes), figsize=(TEXT_WIDTH, 4.0), squeeze=False,
                             layout="constrained")
    markers = dict(zip(families, "os^Dvp*hX", strict=False))
    sc = None
    for ax, n in zip(axes[0], sizes, strict=True):
        d = trade[(trade.n == n) & (trade.kind == "random")]
        sc = ax.scatter(d.t_mix, d.phi_min, c=np.log10(d.density), s=8, cmap="viridis",
                        alpha=0.6, rasterized=len(d) > RASTERIZE_ABOVE)
        dp = trade[(trade.n == n) & (trade.kind == "random pair (β = 1/2)")]
        ax.scatter(dp.t_mix, dp.phi_min, s=8, marker="x", color="C3", alpha=0.4,
                   label="random pair, β = 1/2", rasterized=len(dp) > RASTERIZE_ABOVE)
        fam = trade[(trade.n == n) & trade.kind.isin(list(families))]
        for _, r in fam.iterrows():
            ax.scatter(r.t_mix, r.phi_min, marker=markers[r.kind], s=60, edgecolor="k",
                       color="white", zorder=3, label=r.kind)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"n = {n}, ρ(random) = {rho[n]:.2f}", fontsize="small")
        ax.set_xlabel(r"$T_{mix}$")
    axes[0, 0].set_ylabel(r"$\phi_{min}$")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=4, fontsize="small")
    if sc is not None:
        cb = fig.colorbar(sc, ax=axes[0].tolist(), shrink=0.8)
        cb.set_label("log10 density (random)", fontsize="small")
    return fig
