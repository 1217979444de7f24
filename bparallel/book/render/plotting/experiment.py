"""The figures of chapter 12's controlled experiment (fresh data, two arms): learning against
head count, learning curves, and the proxies through training. Their data come from
:mod:`bparallel.book.section4.graph_experiment`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .style import TEXT_WIDTH

#: Line style and marker per arm; colour per head count (``C0`` ... in the order of heads).
ARM_STYLE = {"width": ("-", "o", "fixed width (64/H per head)"),
             "head16": ("--", "s", "fixed head size (16 per head)"),
             "inner256": (":", "^", "fixed attention width (256/H per head)")}
HEAD_COUNTS = (1, 4, 8, 16)


def _heads_axis(ax: Any) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(HEAD_COUNTS, [str(h) for h in HEAD_COUNTS])
    ax.minorticks_off()
    ax.set_xlabel("heads")


def plot_learning_by_heads(rows: Mapping[str, Sequence[Mapping[str, Any]]],
                           finite: Mapping[str, Mapping[int, float]] | None = None) -> Any:
    """Small multiples, one column per task: steps to the learning threshold (top; a run
    that never learned is drawn as an open triangle at the budget, labelled) and the area
    under the learning curve (bottom), against the head count, one line per arm through the
    (censored) medians, every seed a dot. ``rows``: per task, the rows of
    :func:`bparallel.book.section4.graph_experiment.learning_rows`; ``finite``: per task and head
    count, the final accuracy of the models trained on 5,000 sequences, drawn on a second
    panel row when given. Returns the figure."""
    import matplotlib.pyplot as plt

    tasks = [t for t, r in rows.items() if r]
    if not tasks:
        raise ValueError("rows holds no task with runs: nothing to draw")
    n_rows = 3 if finite else 2
    fig, axes = plt.subplots(n_rows, len(tasks), figsize=(TEXT_WIDTH, 2.2 * n_rows + 0.6),
                             squeeze=False, sharex=True, layout="constrained")
    for col, task in enumerate(tasks):
        top, mid = axes[0, col], axes[1, col]
        budget = max(r["budget"] for r in rows[task])
        for arm, (ls, marker, label) in ARM_STYLE.items():
            mine = sorted((r for r in rows[task] if r["arm"] == arm), key=lambda r: r["heads"])
            if not mine:
                continue
            h = [r["heads"] for r in mine]
            med = [budget if r["median_time"] is None else r["median_time"] for r in mine]
            top.plot(h, med, ls=ls, color="0.3", lw=1.2, label=label)
            for r in mine:
                for t in r["times"]:
                    if t is None:
                        top.plot(r["heads"], budget, marker="^", mfc="none", color="C3", ms=7)
                    else:
                        top.plot(r["heads"], t, marker=marker, color="C0", ms=4, alpha=0.7,
                                 ls="none")
            mid.plot(h, [100 * r["area"] for r in mine], ls=ls, marker=marker, color="0.3",
                     label=label)
        times = [t for r in rows[task] for t in r["times"]]
        if any(t is None for t in times):  # the budget marks the runs that never learned
            top.axhline(budget, color="C3", lw=0.8, ls=":")
            top.set_ylim(0, budget * 1.08)
        else:
            top.set_ylim(0, 1.25 * max(times))
        top.set_title(task, fontsize=10)
        if finite and task in finite:
            low = axes[2, col]
            hs = sorted(finite[task])
            low.plot(hs, [100 * finite[task][h] for h in hs], marker="D", color="C2",
                     label="5,000 sequences, 60 epochs")
            low.set_ylim(0, 105)
        elif finite:  # a task trained on fresh data only: say so, draw no empty axes
            low = axes[2, col]
            low.set_axis_off()
            low.text(0.5, 0.5, f"{task}: trained on\nfresh data only", ha="center",
                     va="center", fontsize=9, color="0.4", transform=low.transAxes)

        for ax in axes[:, col]:
            _heads_axis(ax)
    # the curve areas are compared across tasks: one range for every panel of the row
    areas = [100 * r["area"] for t in tasks for r in rows[t]]
    low_area = 10 * math.floor(min(areas) / 10)
    for ax in axes[1]:
        ax.set_ylim(low_area, 100)
    axes[0, 0].set_ylabel("steps to threshold", fontsize=9)
    axes[1, 0].set_ylabel("curve area (%)", fontsize=9)
    if finite:
        axes[2, 0].set_ylabel("final accuracy,\nfinite data (%)", fontsize=9)
    handles, labels = axes[1, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2, fontsize=8)
    return fig


def plot_fresh_learning_curves(curves: Mapping[str, Mapping[tuple[str, int, int],
                                                            Mapping[str, Sequence[float]]]]
                               ) -> Any:
    """Held-out accuracy on the predictable positions against training steps, one row per
    task and one column per arm, one colour per head count (every seed a line).
    ``curves``: per task, :func:`bparallel.book.section4.graph_experiment.learning_curves`. Returns
    the figure."""
    import matplotlib.pyplot as plt

    tasks = [t for t, c in curves.items() if c]
    if not tasks:
        raise ValueError("curves holds no task with runs: nothing to draw")
    # the arms with runs only: an arm still being trained gets no empty column
    arms = [a for a in ARM_STYLE if any(k[0] == a for t in tasks for k in curves[t])]
    # one row per task, one column per arm; short titles keep three columns legible
    fig, axes = plt.subplots(len(tasks), len(arms), figsize=(TEXT_WIDTH, 2.3 * len(tasks) + 0.5),
                             squeeze=False, sharey=True, layout="constrained")
    for r, task in enumerate(tasks):
        for c, arm in enumerate(arms):
            ax = axes[r, c]
            mine = sorted((k, cur) for k, cur in curves[task].items() if k[0] == arm)
            if not mine:  # no run of this task in this arm: say so, draw no empty axes
                ax.axis("off")
                ax.text(0.5, 0.5, f"{task}: no run in this arm", ha="center", va="center",
                        transform=ax.transAxes, fontsize=9, color="0.4")
                continue
            for (_a, heads, _seed), cur in mine:
                i = HEAD_COUNTS.index(heads) if heads in HEAD_COUNTS else 0
                ax.plot(cur["step"], 100 * np.asarray(cur["accuracy"]), color=f"C{i}",
                        lw=1.2, label=f"{heads} head{'s' * (heads > 1)}")
            if r == 0:
                ax.set_title(ARM_STYLE[arm][2].split(" (")[0])
            ax.set_xlabel("training step")
            if c == 0:
                ax.set_ylabel(f"{task}\nheld-out accuracy (%)")
    handles, labels = [], []
    for ax in axes.flat:
        for hd, lb in zip(*ax.get_legend_handles_labels(), strict=True):
            if lb not in labels:
                handles.append(hd)
                labels.append(lb)
    order = sorted(range(len(labels)), key=lambda k: int(labels[k].split()[0]))
    fig.legend([handles[k] for k in order], [labels[k] for k in order],
               loc="outside upper center", ncol=4, fontsize=8)
    return fig


def plot_recipe_pilot(pairs: Sequence[Mapping[str, Any]], threshold: float,
                      start: float = 0.5) -> Any:
    """A recipe's pilot: one panel per piloted run, the held-out accuracy (predictable
    positions) against training steps under the task's recipe (grey) and the pilot's
    (colour), from ``start`` of the way through training (``0.5``: the second half, where
    a decayed rate differs most; ``0``: all of it), the learning threshold dashed, a run's
    convergence marked by a dot at the step it stopped. ``pairs``:
    :func:`bparallel.book.section4.graph_pilots.recipe_pairs`; ``threshold``: a fraction.
    Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    if not pairs:
        raise ValueError("pairs is empty: no piloted run to draw")
    if not 0.0 <= start < 1.0:
        raise ValueError(f"start={start!r}: must lie in [0, 1)")
    cols = min(2, len(pairs))
    rows = -(-len(pairs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(TEXT_WIDTH, 2.6 * rows + 0.6),
                             squeeze=False, sharey=True, layout="constrained")
    styles = ({"color": "0.55", "lw": 1.0}, {"color": "C3", "lw": 1.4})
    for ax, p in zip(axes.flat, pairs, strict=False):
        first = start * max(r["curve"]["step"][-1] for r in p["recipes"])
        low = 100.0 * threshold
        for style, r in zip(styles, p["recipes"], strict=True):
            steps = np.asarray(r["curve"]["step"], dtype=float)
            acc = 100 * np.asarray(r["curve"]["accuracy"], dtype=float)
            shown = steps >= first
            ax.plot(steps[shown], acc[shown], label=r["label"], **style)
            low = min(low, float(acc[shown].min()) if shown.any() else low)
            if r["outcome"] == "converged":
                ax.plot(steps[-1], acc[-1], "o", ms=5, color=style["color"])
        ax.axhline(100 * threshold, color="0.3", lw=0.8, ls="--")
        ax.set_ylim(5 * math.floor(low / 5 - 0.2), 100)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        ax.set_title(f"{p['task']}, {p['heads']} x {p['head_size']}, seed {p['seed']}",
                     fontsize=9)
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out accuracy (%)")
    for ax in list(axes.flat)[len(pairs):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2, fontsize=8)
    return fig


#: The panels of :func:`plot_proxies_through_training`: key, title, scale.
PROXY_PANELS = (("accuracy", "accuracy (%)", 100.0),
                ("fidelity.definition", "φ_min as defined (%)", 1.0),
                ("mixing.definition", "Alg. 1 as defined (steps)", 1.0),
                ("t_mix", "Def. 2.7 T_mix (steps)", 1.0),
                ("rollout_min", "rollout minimum", 1.0),
                ("fidelity.paper", "φ_min published (%)", 1.0))


def plot_proxies_through_training(
        curves: Mapping[str, Mapping[tuple[str, int, int], Mapping[str, Sequence[float]]]],
        early_steps: Mapping[str, int | None] | None = None) -> Any:
    """The proxies and the accuracy at the recorded steps of training (probe sequences):
    per task two rows of panels, one per quantity of :data:`PROXY_PANELS`, one colour per
    head count, the arm by the line style (mean over seeds; layer means, Definition 2.7 the
    median over layers). ``curves``: per task,
    :func:`bparallel.book.section4.graph_early.proxy_curves`; ``early_steps``: per task, the
    step whose proxies predict, drawn as a grey dash-dotted vertical line (the arms' dotted
    style is the fixed attention width's). Returns the figure."""
    import matplotlib.pyplot as plt

    tasks = [t for t, c in curves.items() if c]
    if not tasks:
        raise ValueError("curves holds no task with runs: nothing to draw")
    early_steps = early_steps or {}
    fig, axes = plt.subplots(2 * len(tasks), 3, figsize=(TEXT_WIDTH, 4.6 * len(tasks) + 0.8),
                             squeeze=False, sharex=True, layout="constrained")
    heads_seen: set[int] = set()
    arms_seen: set[str] = set()
    for t, task in enumerate(tasks):
        configs = sorted({(arm, h) for arm, h, _ in curves[task]})
        heads_seen |= {h for _, h in configs}
        arms_seen |= {a for a, _ in configs}
        for ax, (key, title, scale) in zip(axes[2 * t : 2 * t + 2].flat, PROXY_PANELS,
                                           strict=True):
            for arm, heads in configs:
                runs = [c for (a, h, _), c in curves[task].items() if (a, h) == (arm, heads)]
                n = min(len(r["step"]) for r in runs)
                steps = np.asarray(runs[0]["step"][:n], dtype=float)
                vals = np.array([np.asarray(r[key][:n], dtype=float) for r in runs]) * scale
                y = np.where(np.isfinite(vals), vals, np.nan)
                y = np.nanmean(y, axis=0) if np.isfinite(y).any(axis=0).all() else \
                    np.array([np.nanmean(c) if np.isfinite(c).any() else np.nan for c in y.T])
                ax.plot(steps, y, ls=ARM_STYLE[arm][0], marker=ARM_STYLE[arm][1], ms=3,
                        color=f"C{HEAD_COUNTS.index(heads)}")
            if early_steps.get(task) is not None:
                ax.axvline(early_steps[task], color="0.5", lw=1.0, ls="-.")
            ax.set_xscale("symlog", linthresh=100, linscale=0.5)
            ax.set_xticks([0, 100, 1000, 10000], ["0", "100", "1,000", "10,000"])
            ax.minorticks_off()
            ax.set_title(title, fontsize=9)
        axes[2 * t, 0].set_ylabel(task, fontsize=10, fontweight="bold")
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    fig.legend(*_config_legend(sorted(heads_seen), [a for a in ARM_STYLE if a in arms_seen]),
               loc="outside upper center", ncol=3, fontsize=8)
    return fig


def _config_legend(heads: Sequence[int], arms: Sequence[str]) -> tuple[list, list[str]]:
    """Legend entries: a colour per head count, a line style per arm."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=f"C{HEAD_COUNTS.index(h)}", lw=2) for h in heads]
    labels = [f"{h} head{'s' * (h > 1)}" for h in heads]
    handles += [Line2D([], [], color="0.3", ls=ARM_STYLE[a][0], marker=ARM_STYLE[a][1])
                for a in arms]
    return handles, labels + [ARM_STYLE[a][2] for a in arms]


__all__ = ["ARM_STYLE", "PROXY_PANELS", "plot_fresh_learning_curves", "plot_learning_by_heads",
           "plot_proxies_through_training", "plot_recipe_pilot"]


#: The panels of :func:`plot_proxies_by_heads`: quantity of an across-seeds summary, title,
#: scale, logarithmic axis.
SUMMARY_PANELS = (("mixing.paper", "Algorithm 1, published (steps)", 1.0, True),
                  ("mixing.definition", "Algorithm 1, as defined (steps)", 1.0, True),
                  ("t_mix", "Definition 2.7 T_mix (steps)", 1.0, True),
                  ("fidelity.paper", "minimax fidelity, published (%)", 1.0, False),
                  ("fidelity.definition", "minimax fidelity, as defined (%)", 1.0, False),
                  ("rollout_min", "rollout minimum", 1.0, False))


def plot_proxies_by_heads(summary: Sequence[Mapping[str, Any]]) -> Any:
    """Small multiples of the trained models' graphs against the head count: one panel per
    quantity of :data:`SUMMARY_PANELS`, one line per task, the mean over seeds with its
    t-interval across seeds as an error bar (a median without interval where a value is
    infinite; an infinite value is not drawn). ``summary``: rows of
    :func:`bparallel.book.section4.graph_tasks.across_seeds`. Returns the figure."""
    import matplotlib.pyplot as plt

    if not summary:
        raise ValueError("summary is empty: nothing to draw")
    tasks = list(dict.fromkeys(r["task"] for r in summary))
    fig, axes = plt.subplots(2, 3, figsize=(TEXT_WIDTH, 5.0), squeeze=False, sharex=True,
                             layout="constrained")
    for ax, (q, title, scale, log) in zip(axes.flat, SUMMARY_PANELS, strict=True):
        for i, task in enumerate(tasks):
            rows = sorted((r for r in summary if r["task"] == task and q in r
                           and math.isfinite(r[q])), key=lambda r: r["heads"])
            if not rows:
                continue
            h = [r["heads"] for r in rows]
            y = np.array([scale * r[q] for r in rows])
            lo = np.array([scale * r[f"{q}.low"] if r.get(f"{q}.low") is not None else np.nan
                           for r in rows])
            hi = np.array([scale * r[f"{q}.high"] if r.get(f"{q}.high") is not None
                           else np.nan for r in rows])
            # a log panel counts steps: no interval reaches below one step, the least a
            # walk takes (a t-interval over three seeds of a skewed time can)
            err = np.vstack([np.nan_to_num(y - np.maximum(lo, 1.0 if log else 0.0)),
                             np.nan_to_num(hi - y)])
            ax.errorbar(h, y, yerr=np.maximum(err, 0), marker="o", ms=4, capsize=2,
                        color=f"C{i}", label=task)
        if log:
            ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        _heads_axis(ax)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=len(tasks), fontsize=8)
    return fig


__all__ += ["SUMMARY_PANELS", "plot_proxies_by_heads"]


def plot_horse_race(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> Any:
    """The horse race: one panel per task, one line per candidate (the design's quantities
    above, the graph measures at the early step below, a rule between them), Spearman's rho
    of the candidate with the speed (filled circle) and with the curve area (open square),
    and for a graph measure its partial rho with the curve area, the configuration held
    (orange triangle), each with its interval over resampled seeds, and a line at 0 (no
    ranking). ``rows``: per task, :func:`bparallel.book.section4.graph_predictors.horse_race`.
    Returns the figure."""
    import matplotlib.pyplot as plt

    tasks = [t for t, r in rows.items() if r]
    if not tasks:
        raise ValueError("rows holds no task with a horse race: nothing to draw")
    fig, axes = plt.subplots(1, len(tasks), figsize=(TEXT_WIDTH, 3.6), sharey=True,
                             squeeze=False, layout="constrained")
    for ax, task in zip(axes[0], tasks, strict=True):
        labels = list(dict.fromkeys(r["label"] for r in rows[task]))
        kinds = {r["label"]: r["kind"] for r in rows[task]}
        y_of = {label: len(labels) - 1 - i for i, label in enumerate(labels)}
        for r in rows[task]:
            if r["rho"] is None:
                continue
            dy, marker, fill = (0.15, "o", "C0") if r["outcome"] == "speed" else \
                (-0.15, "s", "none")
            y = y_of[r["label"]] + dy
            if r["low"] is not None:
                ax.plot([r["low"], r["high"]], [y, y], color="C0", lw=1.2)
            ax.plot(r["rho"], y, marker=marker, ms=5, mfc=fill, mec="C0", ls="none")
            if r["outcome"] == "area" and r.get("partial") is not None:
                y = y_of[r["label"]] - 0.4
                if r["partial_low"] is not None:
                    ax.plot([r["partial_low"], r["partial_high"]], [y, y], color="C1", lw=1.2)
                ax.plot(r["partial"], y, marker="^", ms=5, color="C1", ls="none")
        split = sum(kinds[label] == "design" for label in labels)
        ax.axhline(len(labels) - split - 0.5, color="0.6", lw=0.8)
        ax.axvline(0, color="0.3", lw=0.8, ls=":")
        ax.set_xlim(-1.05, 1.05)
        ax.set_yticks(range(len(labels)), labels[::-1], fontsize=8)
        ax.set_title(task, fontsize=9)
    handles = [plt.Line2D([], [], color="C0", marker="o", ls="-", label="speed"),
               plt.Line2D([], [], color="C0", marker="s", mfc="none", ls="-",
                          label="curve area"),
               plt.Line2D([], [], color="C1", marker="^", ls="-",
                          label="curve area, configuration held")]
    fig.legend(handles=handles, loc="outside upper center", ncols=3, fontsize=8,
               frameon=False)
    fig.supxlabel("Spearman ρ with learning over every run (right: ranks the fast runs first)",
                  fontsize=9)
    return fig


def plot_arm_design(configurations: Sequence[Mapping[str, Any]]) -> Any:
    """Chapter 12's design in one figure: one row per arm, one column per head count, each
    configuration drawn as its attention's inner width ($H \\times D$ dimensions, bar length
    to scale) cut into its $H$ heads of $D$ dimensions, labelled with $H \\times D$ and the
    model's parameters. ``configurations``: the rows of
    :func:`bparallel.book.section4.graph_experiment.configurations` (``heads`` and, per arm
    label of :data:`ARM_STYLE`, ``"<label>: head size"`` and ``"<label>: parameters"``).
    Returns the figure; ``ValueError`` for no rows or a row without an arm's columns."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    rows = list(configurations)
    if not rows:
        raise ValueError("configurations is empty: nothing to draw")
    arms = {"width": "fixed width", "head16": "fixed head size",
            "inner256": "fixed attention width"}
    for r in rows:
        missing = [f"{label}: {k}" for label in arms.values() for k in ("head size", "parameters")
                   if f"{label}: {k}" not in r] + ([] if "heads" in r else ["heads"])
        if missing:
            raise ValueError(f"configurations: a row lacks {missing}")
    rows.sort(key=lambda r: r["heads"])
    widest = max(r["heads"] * r[f"{label}: head size"] for r in rows for label in arms.values())
    fig, ax = plt.subplots(figsize=(TEXT_WIDTH, 0.5 + 1.0 * len(arms)), layout="constrained")
    gap = 0.12  # between the columns, in units of one column
    for i, label in enumerate(arms.values()):
        y = len(arms) - 1 - i
        for j, r in enumerate(rows):
            h, size = r["heads"], r[f"{label}: head size"]
            length = (1 - gap) * h * size / widest
            x0 = j + gap / 2
            for k in range(h):  # one cell per head, alternating shades
                ax.add_patch(Rectangle((x0 + k * length / h, y + 0.42), length / h, 0.3,
                                       facecolor="C0" if k % 2 == 0 else "#9ecae1",
                                       edgecolor="white", lw=0.3))
            ax.text(j + 0.5, y + 0.22, f"{h} × {size}", ha="center", va="center", fontsize=9)
            ax.text(j + 0.5, y - 0.02, f"{r[f'{label}: parameters']:,}",
                    ha="center", va="center", fontsize=8, color="0.35")
        ax.text(-0.05, y + 0.57, label, ha="right", va="center", fontsize=9)
        ax.text(-0.05, y - 0.02, "parameters", ha="right", va="center", fontsize=8,
                color="0.35")
    ax.set_xlim(-1.35, len(rows))
    ax.set_ylim(-0.2, len(arms))
    ax.set_xticks([j + 0.5 for j in range(len(rows))],
                  [f"{r['heads']} head{'s' if r['heads'] > 1 else ''}" for r in rows])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    return fig


def plot_headline_learning(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> Any:
    """Chapter 12's headline: the step at which each run learned against the head count,
    one panel per task, the three arms side by side (offset a little along the axis): per
    arm and head count the median over seeds (marker, joined per arm) and the range over
    seeds (a vertical bar from the fastest seed to the slowest; a run that never learned
    counts at the budget, drawn as an open triangle there). ``rows``: per task, the rows
    of :func:`bparallel.book.section4.graph_learning.learning_rows`; tasks without rows or
    without any run that learned are left out. Returns the figure."""
    import matplotlib.pyplot as plt

    tasks = [t for t, r in rows.items() if r and any(x is not None for row in r
                                                     for x in row["times"])]
    if not tasks:
        raise ValueError("rows holds no task with a run that learned: nothing to draw")
    fig, axes = plt.subplots(1, len(tasks), figsize=(TEXT_WIDTH, 3.2), squeeze=False,
                             layout="constrained")
    offset = {"width": 0.92, "head16": 1.0, "inner256": 1.08}  # factors on a log axis
    for ax, task in zip(axes[0], tasks, strict=True):
        budget = max(r["budget"] for r in rows[task])
        for arm, (ls, marker, label) in ARM_STYLE.items():
            mine = sorted((r for r in rows[task] if r["arm"] == arm), key=lambda r: r["heads"])
            if not mine:
                continue
            x = [r["heads"] * offset[arm] for r in mine]
            at = [[budget if t is None else t for t in r["times"]] for r in mine]
            med = [budget if r["median_time"] is None else r["median_time"] for r in mine]
            ax.plot(x, med, ls=ls, marker=marker, color="0.25", ms=5, lw=1.1, label=label)
            ax.vlines(x, [min(a) for a in at], [max(a) for a in at], color="0.25", lw=1.6,
                      alpha=0.6)
            for xi, r in zip(x, mine, strict=True):
                if any(t is None for t in r["times"]):
                    ax.plot(xi, budget, marker="^", mfc="none", color="C3", ms=7, ls="none")
        if any(t is None for r in rows[task] for t in r["times"]):
            ax.axhline(budget, color="C3", lw=0.8, ls=":")
            ax.text(1, budget, " budget", color="C3", fontsize=8, va="bottom")
            ax.set_ylim(0, budget * 1.1)
        else:  # every run learned: the budget would only squash the panel
            ax.set_ylim(0, 1.15 * max(t for r in rows[task] for t in r["times"]))
        ax.set_title(task, fontsize=10)
        _heads_axis(ax)
    axes[0, 0].set_ylabel("step at which it learned", fontsize=9)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=3, fontsize=8)
    return fig
