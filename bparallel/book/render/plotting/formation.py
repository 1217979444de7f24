"""Chapter 13's figure: the induction circuit's scores through training."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .style import TEXT_WIDTH

#: Each series of a panel: its label and colour.
SERIES = {"previous_token": ("previous-token score (best head)", "C0"),
          "induction": ("induction score (best head)", "C1"),
          "accuracy": ("probe accuracy, predictable positions", "0.3")}


def plot_circuit_scores(panels: Sequence[Mapping[str, Any]], *,
                        window: tuple[int, int] | None = None) -> Any:
    """One panel per run: against the training step, the best previous-token and induction
    scores and the probe set's accuracy (each in ``[0, 1]``), with a dashed line at each
    formation step. ``panels``: per run, ``title``, ``step`` and the series of
    :data:`SERIES` (equal lengths), and ``marks``, per series name its formation step
    (``None``: none). ``window``: the steps shown. Returns the figure."""
    from matplotlib.figure import Figure  # not pyplot's: the page shows it once, captioned

    if not panels:
        raise ValueError("panels is empty: nothing to draw")
    fig = Figure(figsize=(TEXT_WIDTH, 2.8), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)
    for ax, p in zip(axes[0], panels, strict=True):
        step = np.asarray(p["step"])
        for name, (label, colour) in SERIES.items():
            ax.plot(step, p[name], color=colour, lw=1.3, label=label,
                    ls=":" if name == "accuracy" else "-")
            mark = p.get("marks", {}).get(name)
            if mark is not None:
                ax.axvline(mark, color=colour, lw=0.9, ls="--")
        if window is not None:
            ax.set_xlim(*window)
        ax.set_ylim(0, 1.02)
        ax.set_title(p["title"], fontsize=10)
        ax.set_xlabel("training step")
    axes[0, 0].set_ylabel("score or accuracy")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2, fontsize=8)
    return fig
