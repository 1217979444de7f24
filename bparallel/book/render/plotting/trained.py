"""The figures of the trained models' chapters (07-12): training and learning curves,
Figure 4, Definition 2.7 against Algorithm 1, hitting profiles, pruning."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...._io import atomic_write
from .style import TEXT_WIDTH, require_columns


def plot_training_curves(histories: Mapping[tuple[str, int], Mapping[str, Sequence[float]]]) -> Any:
    """Training loss (top, log scale) and held-out token accuracy (bottom) per epoch, one
    column per task and one colour per head count. ``histories`` maps ``(task, heads)`` to a
    training history (``epoch``, ``train_loss``, ``heldout_accuracy``). Returns the figure."""
    import matplotlib.pyplot as plt

    if not histories:
        raise ValueError("histories is empty: no model to draw")
    tasks = sorted({task for task, _ in histories})
    heads = sorted({h for _, h in histories})
    fig, axes = plt.subplots(2, len(tasks), figsize=(TEXT_WIDTH, 5.4), sharex=True,
                             squeeze=False, layout="constrained")
    for col, task in enumerate(tasks):
        for i, h in enumerate(heads):
            hist = histories.get((task, h))
            if hist is None:
                continue
            for key in ("epoch", "train_loss", "heldout_accuracy"):
                if key not in hist:
                    raise ValueError(f"history of {task}, {h} heads has no {key!r}")
            label = f"{h} head{'s' * (h > 1)}"
            axes[0, col].plot(hist["epoch"], hist["train_loss"], color=f"C{i}", label=label)
            axes[1, col].plot(hist["epoch"], 100 * np.asarray(hist["heldout_accuracy"]),
                              color=f"C{i}", label=label)
        axes[0, col].set_title(f"{task}: training loss")
        axes[0, col].set_yscale("log")
        axes[1, col].set_title(f"{task}: held-out token accuracy (%)")
        axes[1, col].set_xlabel("epoch")
    axes[0, 0].legend()
    return fig


def plot_best_head_vs_combined(panels: dict[str, Any]) -> Any:
    """Tables 5-6 as a picture: per cell (task, heads, layer), the best single head's fidelity
    (x) against the combination's (y). Above the diagonal the combination amplifies. ``panels``
    maps a title to a frame with columns ``task``, ``heads``, ``layer``, ``individual``,
    ``combined`` and ``outcome`` (+1 above, 0 on, -1 below the line, decided by the chapter:
    :func:`bparallel.book.section4.amplification.best_head_panels`); colour is the head
    count, the marker the task. Titles count the outcomes. Returns the figure."""
    import matplotlib.pyplot as plt


    if not panels:
        raise ValueError("plot_best_head_vs_combined needs at least one panel")
    for title, frame in panels.items():
        require_columns(frame, ("task", "heads", "layer", "individual", "combined", "outcome"),
                         f"plot_best_head_vs_combined (panel {title!r})")
    fig, axes = plt.subplots(1, len(panels), figsize=(TEXT_WIDTH, 3.9), squeeze=False,
                             layout="constrained")
    heads = sorted({int(h) for f in panels.values() for h in f.heads})
    colors = {h: f"C{i}" for i, h in enumerate(heads)}
    markers = {"copy": "o", "cycle": "s"}
    top = max(max(float(f.individual.max()), float(f.combined.max())) for f in panels.values())
    lim = 1.05 * top if top > 0 else 1.0
    for ax, (title, frame) in zip(axes[0], panels.items(), strict=True):
        for (task, h), d in frame.groupby(["task", "heads"]):
            ax.scatter(d.individual, d.combined, color=colors[int(h)],
                       marker=markers.get(task, "^"), s=30, alpha=0.85,
                       label=f"{task}, {int(h)} heads")
        ax.plot([0, lim], [0, lim], "k--", lw=0.8)
        verdicts = [int(v) for v in frame.outcome]
        won, tied = verdicts.count(1), verdicts.count(0)
        ax.set_title(f"{title}\n{won} above, {tied} on, {len(frame) - won - tied} below",
                     fontsize="small")
        ax.set_xlim(0, lim)
        ax.set_ylim(0, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("best head (%)")
    axes[0, 0].set_ylabel("combined heads (%)")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside upper center", ncol=3)
    return fig


def plot_figure4(
    rows: Sequence[Mapping[str, Any]],
    path: str | os.PathLike | None = None,
    *,
    mode: str = "paper",
    protocol: str = "paper",
    title: str | None = None,
    mode_name: str | None = None,
) -> Any:
    """Figure 4: mixing time (a, b) and fidelity (c, d) per layer, one line per head count.

    ``rows`` are Tables 1-4 rows (:func:`evaluate_models` or :func:`published_rows`); error
    bars are the standard deviations; the layers present are the ticks. ``mode_name``: how
    the default title names ``mode`` (the chapter's wording; default the mode itself).
    Saved as PNG (atomically) when ``path`` is given.
    Returns the matplotlib figure.
    """
    from matplotlib.figure import Figure  # no pyplot: no global state, works headless

    sel = [r for r in rows if r.get("mode", mode) == mode
           and r.get("protocol", protocol) == protocol and "mean" in r]
    if not sel:
        raise ValueError(f"no Tables 1-4 rows for mode={mode!r}, protocol={protocol!r}")
    fig = Figure(figsize=(TEXT_WIDTH, 6.4), layout="constrained")
    axes = fig.subplots(2, 2)
    panels = [("mixing_time", "copy", "(a) Mixing time for Sequence Copying"),
              ("mixing_time", "cycle", "(b) Mixing time for Sequence Cycling"),
              ("fidelity", "copy", "(c) Fidelity for Sequence Copying"),
              ("fidelity", "cycle", "(d) Fidelity for Sequence Cycling")]
    for ax, (quantity, task, label) in zip(axes.flat, panels, strict=True):
        heads = sorted({r["heads"] for r in sel if r["quantity"] == quantity
                        and r["task"] == task})
        for i, h in enumerate(heads):
            pts = sorted((r["layer"], r["mean"], r.get("std", 0.0)) for r in sel
                         if r["quantity"] == quantity and r["task"] == task
                         and r["heads"] == h)
            x, y, e = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
            ax.errorbar(x, y, yerr=e, marker="o", capsize=3, color=f"C{i}",
                        label=f"{h} head{'s' if h > 1 else ''}")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("layer")
        ax.set_ylabel("steps" if quantity == "mixing_time" else "fidelity (%)")
        ax.set_xticks(sorted({int(r["layer"]) for r in sel}))
        if heads:
            ax.legend(fontsize="small")
    fig.suptitle(title or f"Figure 4 ({mode_name or mode}, {protocol} protocol)")
    if path is not None:
        atomic_write(path, lambda fh: fig.savefig(fh, dpi=120, format="png"))
    return fig


def plot_definition_vs_proxy(rows: Sequence[Mapping[str, Any]], *, cutoff: int = 100) -> Any:
    """Section 4 as defined: per task (panel) and head count (colour), Definition 2.7's
    median mixing time (solid, log scale) against Algorithm 1's mean truncated hitting time
    (dashed, same colour) per layer, with the cutoff ``M`` dotted. ``rows`` are
    :func:`bparallel.book.section4.as_defined.definition_rows`; a median that is infinite (the walk
    never mixes) is drawn as an upward triangle at the top. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if not rows:
        raise ValueError("rows is empty: nothing to draw")
    tasks = sorted({r["task"] for r in rows})
    heads = sorted({r["heads"] for r in rows})
    finite = [r["t_mix_median"] for r in rows if np.isfinite(r["t_mix_median"])]
    top = 10 ** np.ceil(np.log10(max(finite + [cutoff]) * 10))
    fig, axes = plt.subplots(1, len(tasks), figsize=(TEXT_WIDTH, 3.9), squeeze=False,
                             sharey=True, layout="constrained")
    for ax, task in zip(axes[0], tasks, strict=True):
        for i, h in enumerate(heads):
            pts = sorted((r["layer"], r["t_mix_median"], r["proxy_definition"]) for r in rows
                         if r["task"] == task and r["heads"] == h)
            if not pts:
                continue
            layer, t_mix, proxy = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
            label = f"{h} head{'s' * (h > 1)}"
            ax.plot(layer, np.where(np.isfinite(t_mix), t_mix, np.nan), "o-", color=f"C{i}",
                    label=f"{label}: Def. 2.7")
            never = ~np.isfinite(t_mix)
            ax.plot(layer[never], np.full(never.sum(), top), "^", color=f"C{i}", ms=9)
            ax.plot(layer, proxy, "s--", color=f"C{i}", alpha=0.8, label=f"{label}: Alg. 1")
        ax.axhline(cutoff, color="gray", ls=":", lw=1, label=f"cutoff M = {cutoff}")
        ax.set_yscale("log")
        ax.set_title(task)
        ax.set_xlabel("layer")
        ax.set_xticks(sorted({r["layer"] for r in rows}))
    axes[0, 0].set_ylabel("steps (log scale)")
    keys = [Line2D([], [], color=f"C{i}", lw=3, label=f"{h} head{'s' * (h > 1)}")
            for i, h in enumerate(heads)]
    keys += [Line2D([], [], color="k", marker="o", label="Def. 2.7 (median)"),
             Line2D([], [], color="k", ls="--", marker="s", label="Alg. 1 (mean)"),
             Line2D([], [], color="gray", ls=":", label=f"cutoff M = {cutoff}")]
    fig.legend(handles=keys, loc="outside upper center", ncol=4, fontsize="small")
    return fig


def plot_hitting_profiles(
    profiles: Mapping[str, np.ndarray], *, cutoff: int = 100
) -> Any:
    """Expected hitting time of the sink per start position (exact, log scale), averaged
    over sequences, one line per labelled model/layer; the cutoff ``M`` of Algorithm 1
    dotted: above it, the proxy counts only ``M``. ``profiles`` maps a label to an array
    ``(N, T)`` of exact hitting times (``inf`` entries are left out of the mean and marked
    by the share of sequences that never arrive). Returns the figure."""
    import matplotlib.pyplot as plt

    if not profiles:
        raise ValueError("profiles is empty: nothing to draw")
    fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
    for i, (label, h) in enumerate(profiles.items()):
        h = np.asarray(h, dtype=float)
        if h.ndim != 2:
            raise ValueError(f"profiles[{label!r}] has shape {h.shape}: expected (N, T)")
        finite = np.where(np.isfinite(h), h, np.nan)
        mean = np.nanmean(np.where(np.isnan(finite).all(0), 0.0, finite), axis=0)
        ax.plot(np.arange(h.shape[1] - 1), mean[:-1], color=f"C{i}", label=label)
    ax.axhline(cutoff, color="gray", ls=":", lw=1, label=f"cutoff M = {cutoff}")
    ax.set_yscale("log")
    ax.set_xlabel("start position j")
    ax.set_ylabel("E[τ_j] (steps, log scale)")
    ax.legend(fontsize="small")
    return fig


def plot_pruning_curves(
    panels: Mapping[str, Mapping[str, Any]],
    *,
    metrics: Sequence[str] = ("accuracy_predictable", "margin"),
) -> Any:
    """Pruning curves: held-out ``metrics`` (one row of panels each) against the number of
    heads kept per layer, heads removed from every layer at once in the order of each
    ranking (lowest first), one column per model. ``panels`` maps a title to an
    :func:`~bparallel.transformer.importance.importance_study` ``"pruning"`` result; its
    ``"random"`` orders are drawn as their median with the 5-95% band shaded. Returns the
    figure."""
    import matplotlib.pyplot as plt

    if not panels:
        raise ValueError("panels is empty: nothing to draw")
    names = {"zero.margin": "by zero-ablation impact (oracle)", "weight": "by head weight w_h",
             "gradient": "by gradient importance",
             "fidelity.definition": "by fidelity (definition)",
             "fidelity.paper": "by fidelity (published-code mode)"}
    ylabel = {"accuracy_predictable": "accuracy (%)", "margin": "mean logit margin",
              "kl": "KL from intact (nats)"}
    scale = {"accuracy_predictable": 100.0}
    fig, axes = plt.subplots(len(metrics), len(panels), figsize=(TEXT_WIDTH, 2.6 * len(metrics)),
                             squeeze=False, sharex=True, layout="constrained")
    for col, (title, pruning) in enumerate(panels.items()):
        kept = np.asarray(pruning["heads_kept"])
        for row, metric in enumerate(metrics):
            ax = axes[row, col]
            k = scale.get(metric, 1.0)
            for i, (key, label) in enumerate(names.items()):
                if key in pruning:
                    ax.plot(kept, k * np.asarray(pruning[key][metric], dtype=float), "o-",
                            ms=3, color=f"C{i}", label=label)
            if "random" in pruning:
                r = k * np.asarray(pruning["random"][metric], dtype=float).reshape(-1, len(kept))
                low, mid, high = np.percentile(r, [5, 50, 95], axis=0)
                ax.fill_between(kept, low, high, color="gray", alpha=0.25,
                                label=f"random orders, 5-95% ({len(r)})")
                ax.plot(kept, mid, "k--", lw=1, label="random orders, median")
            if row == 0:
                ax.set_title(title)
            if col == 0:
                ax.set_ylabel(ylabel.get(metric, metric))
            if row == len(metrics) - 1:
                ax.set_xlabel("heads kept per layer")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=3, fontsize=8)
    return fig


def plot_learning_curves(curves: Mapping[tuple[str, int, int], Sequence[float]]) -> Any:
    """Learning curves, one panel per task: held-out accuracy (percent) after every epoch,
    the mean over seeds per head count with the range over seeds shaded. ``curves`` maps
    ``(task, heads, seed)`` to the accuracy per epoch. Returns the figure."""
    import matplotlib.pyplot as plt

    if not curves:
        raise ValueError("curves is empty: nothing to draw")
    tasks = list(dict.fromkeys(k[0] for k in sorted(curves)))
    fig, axes = plt.subplots(1, len(tasks), figsize=(TEXT_WIDTH, 2.8), squeeze=False,
                             sharey=True, layout="constrained")
    for ax, task in zip(axes[0], tasks, strict=True):
        heads = sorted({k[1] for k in curves if k[0] == task})
        for i, h in enumerate(heads):
            runs = [np.asarray(c, dtype=float) for k, c in curves.items() if k[:2] == (task, h)]
            n = min(len(r) for r in runs)
            stack = 100 * np.stack([r[:n] for r in runs])  # (seeds, epochs)
            epochs = np.arange(1, n + 1)
            ax.plot(epochs, stack.mean(0), color=f"C{i}", lw=1.5,
                    label=f"{h} head{'s' * (h > 1)}")
            if len(runs) > 1:
                ax.fill_between(epochs, stack.min(0), stack.max(0), color=f"C{i}", alpha=0.2)
        ax.set_title(task)
        ax.set_xlabel("epoch")
    axes[0, 0].set_ylabel("held-out accuracy (%)")
    axes[0, -1].legend(fontsize=8, loc="lower right")
    return fig


#: How :func:`plot_head_count_changes` marks each outcome: colour (the verdict badges'
#: palette), marker and whether the marker is filled; the shape alone tells them apart in
#: black and white.
OUTCOME_STYLE = {
    "as claimed": ("#2f8a47", "o", True),
    "as claimed, not after Holm": ("#2f8a47", "o", False),
    "as claimed (one seed)": ("#2f8a47", "^", False),
    "not resolved": ("#7d848c", "D", False),
    "no change": ("#7d848c", "|", True),
    "against the claim": ("#c0392b", "s", True),
    "against the claim (one seed)": ("#c0392b", "v", False),
}


def plot_head_count_changes(
    panels: Mapping[str, Sequence[Mapping[str, Any]]],
    directions: Mapping[str, int],
    *,
    outcome: str = "outcome_holm",
    linthresh: float = 1.0,
) -> Any:
    """A forest plot of the change from 1 to 16 heads: one row of panels per entry of
    ``panels`` (a title, e.g. a mode, mapped to
    :func:`~bparallel.book.section4.across_seeds_stats.head_count_effects` rows), one column per
    quantity (mixing time, fidelity); in each panel one line per (task, layer): the mean change
    over seeds (marker) and its interval across seeds (``low`` to ``high``; none with one
    seed), a zero line, the side the paper claims shaded (``directions``: per quantity, +1
    when the paper claims more heads raise it, -1 when they lower it, as
    :data:`bparallel.book.section4.across_seeds_stats.CLAIMED_DIRECTION`). Colour and marker
    say the row's ``outcome`` (:data:`OUTCOME_STYLE`). The x axes are symmetric-log, linear within
    ``linthresh`` of 0, so a change of 0.3 and one of 90 both show whether their interval holds
    0. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    if not panels or not any(panels.values()):
        raise ValueError("panels is empty: no change to draw")
    if not linthresh > 0:
        raise ValueError(f"linthresh={linthresh!r}: must be positive")
    titles = {"mixing_time": "mixing time (steps)",
              "fidelity": "minimax fidelity (percentage points)"}
    for title, rows in panels.items():
        for r in rows:
            missing = [k for k in ("quantity", "task", "layer", "effect", "low", "high",
                                   outcome) if k not in r]
            if missing:
                raise ValueError(f"a row of panel {title!r} has no {missing}")
            if str(r[outcome]) not in OUTCOME_STYLE:
                raise ValueError(f"panel {title!r}: unknown outcome {str(r[outcome])!r}")
    quantities = [q for q in titles if any(r["quantity"] == q for rows in panels.values()
                                           for r in rows)]
    units = sorted({(r["task"], r["layer"]) for rows in panels.values() for r in rows})
    y = {u: len(units) - 1 - k for k, u in enumerate(units)}  # first unit on top
    fig = plt.figure(figsize=(TEXT_WIDTH, 0.8 + (0.9 + 0.26 * len(units)) * len(panels)),
                     layout="constrained")
    seen = set()
    for sub, (title, rows) in zip(np.atleast_1d(fig.subfigures(len(panels), 1)),
                                  panels.items(), strict=True):
        sub.suptitle(title, fontsize="large")
        axes = sub.subplots(1, len(quantities), sharey=True, squeeze=False)[0]
        for ax, quantity in zip(axes, quantities, strict=True):
            drawn = [r for r in rows if r["quantity"] == quantity]
            ends = [abs(v) for r in drawn for v in (r["effect"], r["low"], r["high"])
                    if v is not None]
            reach = max([1.15 * e for e in ends] + [1.5 * linthresh])
            ax.set_xscale("symlog", linthresh=linthresh, linscale=1.0)
            ax.set_xlim(-reach, reach)
            ticks = [0.0] + [s * 10.0 ** k for k in range(int(np.floor(np.log10(linthresh))),
                                                             int(np.floor(np.log10(reach))) + 1)
                             for s in (-1, 1)]
            if len(ticks) < 5:
                ticks += [-linthresh / 2, linthresh / 2]
            ax.set_xticks(sorted(ticks))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(plt.NullLocator())
            for r in drawn:
                color, marker, filled = OUTCOME_STYLE[str(r[outcome])]
                seen.add(str(r[outcome]))
                yy = y[(r["task"], r["layer"])]
                if r["low"] is not None:
                    ax.plot([r["low"], r["high"]], [yy, yy], color=color, lw=2,
                            solid_capstyle="butt")
                ax.plot([r["effect"]], [yy], marker=marker, ms=7, color=color, ls="none",
                        markerfacecolor=color if filled else "white", markeredgewidth=1.5)
            ax.axvline(0, color="k", lw=0.8)
            claimed = (0, reach) if directions[quantity] > 0 else (-reach, 0)
            ax.axvspan(*claimed, color="#2f8a47", alpha=0.08, lw=0)
            ax.set_title(titles[quantity], fontsize="medium")
            ax.set_xlabel("change, 1 → 16 heads")
            ax.grid(axis="x", color="0.88", lw=0.6)
            ax.set_axisbelow(True)
        axes[0].set_yticks([y[u] for u in units], [f"{task}, L{layer}" for task, layer in units])
        axes[0].set_ylim(-0.6, len(units) - 0.4)
    keys = [Line2D([], [], color=c, marker=m, ms=7, markerfacecolor=c if filled else "white",
                   markeredgewidth=1.5, lw=2, label=o)
            for o, (c, m, filled) in OUTCOME_STYLE.items() if o in seen]
    keys.append(Line2D([], [], color="#2f8a47", alpha=0.25, lw=8, label="the claimed side"))
    fig.legend(handles=keys, loc="outside upper center", ncol=3)
    return fig
