"""The toy-DAG playground: state, presets, computation and drawing (no widget import at top).

:class:`PlaygroundState` holds what a tinkerer edits: the number of nodes, each head's
edge set, raw (un-normalised) beta weights, the horizon and ``eps``. :func:`compute` turns it
into everything the book discusses for Sections 2-3 (signals, node fidelities and optimal
times, minimax fidelity per head and combined, amplification, mixing and hitting times,
warnings). :func:`plot_signals` draws Figure 3 style panels; :func:`build_widget` wraps it
all in ipywidgets for a live kernel. Everything except :func:`build_widget` is plain
numpy/matplotlib and tested without a browser.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import absorbing
from .._checks import positive_int, unit_interval
from ..examples import example_3_8, example_3_13
from ..fidelity import FidelityReport, fidelity_report, signal_at_sink
from ..graphs import (
    adjacency_matrix,
    as_edges,
    backward_edges,
    convex_combination,
    edges_from_adjacency,
    random_feedforward_adjacency,
    sinks,
)
from ..markov import expected_hitting_times, mixing_time

__all__ = [
    "MAX_NODES",
    "MIN_HEADS",
    "MAX_HEADS",
    "PRESETS",
    "PlaygroundState",
    "PlaygroundResult",
    "from_preset",
    "compute",
    "plot_signals",
    "fidelity_table",
    "to_python",
    "build_widget",
]

MAX_NODES = 12
MIN_HEADS, MAX_HEADS = 2, 4
#: Mixing times beyond this count as "does not mix" in the playground: Definition 2.7's one
#: cap, :data:`bparallel.absorbing.MIX_CAP`.
MIX_CAP = absorbing.MIX_CAP
#: The orientation of the playground's edge grids, the book's (``W[i, j]``, ``Delta[i, j]``
#: for the edge ``j -> i``, :func:`bparallel.graphs.adjacency_matrix`): the cell in row ``i``
#: and column ``j`` is the edge ``j -> i``. The browser playground says the same
#: (``GRID_AXES`` in ``render/js/playground.mjs``).
GRID_AXES = "row receives, column sends"


@dataclass
class PlaygroundState:
    """What the playground edits. ``raw_beta`` need not sum to 1: :attr:`beta` normalises."""

    n: int
    heads: list[set[tuple[int, int]]]
    raw_beta: list[float]
    horizon: int = 20
    eps: float = 0.25
    labels: list[str] | None = None

    def __post_init__(self) -> None:
        self.n = positive_int(self.n, "n")
        if self.n < 2 or self.n > MAX_NODES:
            raise ValueError(f"n must lie in 2..{MAX_NODES}, got {self.n}")
        if not MIN_HEADS <= len(self.heads) <= MAX_HEADS:
            raise ValueError(f"heads: need {MIN_HEADS}..{MAX_HEADS} heads, got {len(self.heads)}")
        self.heads = [
            {(int(j), int(i)) for j, i in as_edges(sorted(h), self.n) if j != i}
            for h in self.heads
        ]
        if len(self.raw_beta) != len(self.heads):
            raise ValueError(
                f"raw_beta must have one weight per head ({len(self.heads)}), "
                f"got {len(self.raw_beta)}"
            )
        self.raw_beta = [float(b) for b in self.raw_beta]
        _ = self.beta  # validates
        self.horizon = positive_int(self.horizon, "horizon")
        self.eps = unit_interval(self.eps, "eps")
        if self.labels is not None and len(self.labels) != self.n:
            self.labels = None

    # ----------------------------------------------------------------- derived values
    @property
    def num_heads(self) -> int:
        return len(self.heads)

    @property
    def beta(self) -> NDArray[np.float64]:
        """The raw weights normalised to sum 1 (what Eq. 26 uses)."""
        w = np.asarray(self.raw_beta, dtype=np.float64)
        if not np.all(np.isfinite(w)) or (w < 0).any():
            raise ValueError(f"raw_beta must be finite and non-negative, got {self.raw_beta}")
        if w.sum() <= 0:
            raise ValueError("raw_beta must not be all zero: at least one head needs weight")
        return w / w.sum()

    @property
    def node_labels(self) -> list[str]:
        if self.labels is not None:
            return list(self.labels)
        return [str(k) for k in range(self.n - 1)] + ["tau"]

    def edge_lists(self) -> list[list[tuple[int, int]]]:
        return [sorted(h) for h in self.heads]

    # ------------------------------------------------------------------------ editing
    def copy(self) -> PlaygroundState:
        return copy.deepcopy(self)

    def toggle(self, head: int, j: int, i: int) -> bool:
        """Toggle edge ``j -> i`` of ``head``; returns whether it is now present."""
        if not 0 <= head < self.num_heads:
            raise ValueError(f"head must lie in 0..{self.num_heads - 1}, got {head}")
        as_edges([(j, i)], self.n)
        if j == i:
            raise ValueError(f"self-loop {j} -> {i} is always present and cannot be toggled")
        edge = (int(j), int(i))
        if edge in self.heads[head]:
            self.heads[head].remove(edge)
            return False
        self.heads[head].add(edge)
        return True

    def set_n(self, n: int) -> None:
        """Change the number of nodes, keeping the sink last (node ``n - 1``).

        The sink keeps its edges: an edge into the old sink goes to the new one. Growing
        inserts the new nodes just before the sink, each with an edge to it (so that it
        reaches the sink); shrinking removes the nodes just before the sink, drops their
        edges, and sends an edge that went into a removed node to the sink instead. So a node
        that reached the sink still does, and growing then shrinking back restores the
        edges. The labels reset to ``0, 1, ..., tau``."""
        n = positive_int(n, "n")
        if not 2 <= n <= MAX_NODES:
            raise ValueError(f"n must lie in 2..{MAX_NODES}, got {n}")
        old = self.n
        kept = min(old, n) - 1  # non-sink nodes 0 .. kept-1 keep their index

        def moved(k: int) -> int | None:  # a node's new index; None: removed
            return n - 1 if k == old - 1 else (k if k < kept else None)

        heads = []
        for h in self.heads:
            new = set()
            for j, i in h:
                a, b = moved(j), moved(i)
                b = n - 1 if b is None else b  # into a removed node: to the sink
                if a is not None and a != b:
                    new.add((a, b))
            new |= {(k, n - 1) for k in range(old - 1, n - 1)}  # new nodes pass to the sink
            heads.append(new)
        self.heads, self.n, self.labels = heads, n, None

    def set_num_heads(self, count: int) -> None:
        """Add heads (weight 1) or drop the last ones. A new head starts as the path
        ``0 -> 1 -> ... -> n-1``, a usable feedforward graph with a unique sink, not empty
        (an empty head never reaches the sink and would zero every minimax fidelity)."""
        if not MIN_HEADS <= count <= MAX_HEADS:
            raise ValueError(f"number of heads must lie in {MIN_HEADS}..{MAX_HEADS}, got {count}")
        while self.num_heads < count:
            self.heads.append({(j, j + 1) for j in range(self.n - 1)})
            self.raw_beta.append(1.0)
        del self.heads[count:], self.raw_beta[count:]

    def set_weight(self, head: int, value: float) -> None:
        if not 0 <= head < self.num_heads:
            raise ValueError(f"head must lie in 0..{self.num_heads - 1}, got {head}")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"weight must be finite and non-negative, got {value}")
        old = self.raw_beta[head]
        self.raw_beta[head] = float(value)
        if sum(self.raw_beta) <= 0:
            self.raw_beta[head] = old
            raise ValueError("raw_beta must not be all zero: at least one head needs weight")


# --------------------------------------------------------------------------- presets
def _from_example(ex: Any) -> PlaygroundState:
    return PlaygroundState(
        n=ex.n,
        heads=[set(e) for e in ex.head_edges],
        raw_beta=list(ex.beta),
        horizon=ex.horizon,
        labels=list(ex.labels),
    )


def _random(seed: int = 0, n: int = 6, heads: int = 2, density: float = 0.3) -> PlaygroundState:
    A = random_feedforward_adjacency(heads, n, density, seed)
    return PlaygroundState(
        n=n, heads=[set(edges_from_adjacency(a)) for a in A], raw_beta=[1.0] * heads
    )


PRESETS: dict[str, Any] = {
    "Example 3.8": lambda **_: _from_example(example_3_8()),
    "Example 3.13 (paper)": lambda **_: _from_example(example_3_13("paper")),
    "Example 3.13 (code)": lambda **_: _from_example(example_3_13("code")),
    "Random feedforward": _random,
}


def from_preset(name: str, **kwargs: Any) -> PlaygroundState:
    """A fresh state from a preset; ``Random feedforward`` takes ``seed, n, heads, density``."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {list(PRESETS)}")
    if name != "Random feedforward" and kwargs:
        raise ValueError(f"preset {name!r} takes no parameters, got {sorted(kwargs)}")
    return PRESETS[name](**kwargs)


# ----------------------------------------------------------------------- computation
@dataclass
class PlaygroundResult:
    """Everything the playground shows for one state."""

    state: PlaygroundState
    head_signals: NDArray[np.float64]  # (H, T+1, n): phi_j(t) per head
    multi_signal: NDArray[np.float64]  # (T+1, n): phi_j(t) of Delta-bar
    report: FidelityReport
    head_mixing: list[int | None]  # Definition 2.7 per head (None: never within eps)
    multi_mixing: int | None
    head_hitting: list[float | None]  # worst-start E[tau] per head (None: infinite)
    multi_hitting: float | None
    warnings: list[str] = field(default_factory=list)

    @property
    def amplified(self) -> bool:
        """Does the combination beat the best single head (Section 3.1)?"""
        return self.report.amplification > 1e-12


def _mix(W: NDArray[np.float64], eps: float) -> int | None:
    """Definition 2.7 (:func:`bparallel.markov.mixing_time`, hence
    :func:`bparallel.absorbing.mixing_times`), on a head with backward edges too (the
    playground flags it: :func:`compute`'s warnings); ``None``: never mixes."""
    try:
        return int(mixing_time(W, eps, allow_backward=True))
    except ValueError:
        return None


def _hit(W: NDArray[np.float64]) -> float | None:
    try:
        return float(expected_hitting_times(W.T, W.shape[-1] - 1).max())
    except ValueError:
        return None


def compute(state: PlaygroundState) -> PlaygroundResult:
    """Signals, fidelities, mixing and hitting times of every head and of the combination."""
    n = state.n
    A = np.stack([adjacency_matrix(e, n) for e in state.edge_lists()])  # (H, n, n)
    deltas = A / A.sum(axis=-1, keepdims=True)  # Eq. 21, row-stochastic
    walks = A / A.sum(axis=-2, keepdims=True)  # Eq. 1, column-stochastic
    beta = state.beta
    report = fidelity_report(deltas, beta, state.horizon)
    w_bar = convex_combination(walks, beta)
    warnings = []
    labels = state.node_labels
    for h, edges in enumerate(state.edge_lists()):
        back = backward_edges(edges, n)
        if back:
            shown = ", ".join(f"{labels[j]}->{labels[i]}" for j, i in back)
            warnings.append(
                f"head {h + 1} is not feedforward (Definition 2.1): backward edge(s) {shown}"
            )
        extra = [labels[s] for s in sinks(edges, n) if s != n - 1]
        if extra:
            warnings.append(
                f"head {h + 1} has no unique sink (Definition 2.2): "
                f"{', '.join(extra)} never pass(es) anything on"
            )
    return PlaygroundResult(
        state=state,
        head_signals=signal_at_sink(deltas, state.horizon),
        multi_signal=signal_at_sink(convex_combination(deltas, beta), state.horizon),
        report=report,
        head_mixing=[_mix(w, state.eps) for w in walks],
        multi_mixing=_mix(w_bar, state.eps),
        head_hitting=[_hit(w) for w in walks],
        multi_hitting=_hit(w_bar),
        warnings=warnings,
    )


# --------------------------------------------------------------------------- drawing
def plot_signals(result: PlaygroundResult, *, percent: bool = True, axes: Any = None) -> Any:
    """Figure 3 style: one panel per head and one for the combination; signal at the sink
    per node over time, with the minimax fidelity as a dashed line. Drawn (when ``axes`` is
    not given) two panels a row with text of
    :data:`~bparallel.book.render.plotting.style.PHONE_FONT_PT`, so that it reads on a
    phone as on a wide screen. Returns the figure."""
    import matplotlib.pyplot as plt

    from .render.plotting import TEXT_WIDTH  # the book's figure style
    from .render.plotting.style import PHONE_FONT_PT

    if axes is None:  # the chapter's figure: two panels a row, text that reads at 390 px
        with plt.rc_context({"font.size": PHONE_FONT_PT, "legend.fontsize": PHONE_FONT_PT - 2,
                             "axes.titlesize": PHONE_FONT_PT}):
            panels = len(result.head_signals) + 1
            cols = min(2, panels)
            rows = -(-panels // cols)
            fig, grid = plt.subplots(rows, cols, figsize=(TEXT_WIDTH, 3.4 * rows),
                                     sharey=True, squeeze=False)
            for ax in grid.flat[panels:]:
                ax.set_visible(False)
            return plot_signals(result, percent=percent, axes=list(grid.flat[:panels]))

    st, rep = result.state, result.report
    panels = [
        (f"head {h + 1}", result.head_signals[h], rep.head_minimax[h]) for h in range(st.num_heads)
    ]
    panels.append(("multi-head", result.multi_signal, rep.multi_minimax))
    scale = 100.0 if percent else 1.0
    fig = axes[0].figure
    t = np.arange(st.horizon + 1)
    labels = st.node_labels
    colors = plt.get_cmap("tab10")
    for ax, (title, sig, phi_min) in zip(axes, panels, strict=True):
        for j in range(st.n - 1):
            ax.plot(t[1:], scale * sig[1:, j], color=colors(j % 10), label=labels[j])
        ax.axhline(scale * phi_min, color="k", ls="--", lw=1, label=r"$\phi_{\min}$")
        ax.set_title(f"{title}: $\\phi_{{\\min}}$ = {scale * phi_min:.3g}{'%' if percent else ''}",
                     fontsize="medium")
        ax.set_xlabel("t")
    axes[0].set_ylabel("signal at the sink" + (" (%)" if percent else ""))
    axes[-1].legend(loc="best")
    if result.amplified:
        axes[-1].set_facecolor("#eef8ee")
    fig.tight_layout()
    return fig


def fidelity_table(result: PlaygroundResult) -> list[dict[str, Any]]:
    """Rows ``{node, head 1 phi, head 1 t, ..., multi phi, multi t}`` for display."""
    st, rep = result.state, result.report
    rows = []
    for j, name in enumerate(st.node_labels[:-1]):
        row: dict[str, Any] = {"node": name}
        for h in range(st.num_heads):
            row[f"head {h + 1} phi"] = float(rep.node_phi[h, j])
            row[f"head {h + 1} t"] = int(rep.node_t[h, j])
        row["multi phi"] = float(rep.multi_phi[j])
        row["multi t"] = int(rep.multi_t[j])
        rows.append(row)
    return rows


NEVER_MIXES = "never mixes (∞)"
NEVER_REACHES = "∞ (τ unreachable)"


def summary_table(result: PlaygroundResult) -> list[dict[str, Any]]:
    """Rows ``{graph, phi_min, T_mix, max E[tau]}`` per head and for the combination.

    A walk that never gets within ``eps`` of ``1_tau`` (Definition 2.7 undefined: some start
    never reaches the sink) reads :data:`NEVER_MIXES`, an infinite hitting time
    :data:`NEVER_REACHES`: words, never ``NaN``."""
    st, rep = result.state, result.report
    names = [f"head {h + 1}" for h in range(st.num_heads)] + ["combined"]
    phis = list(rep.head_minimax) + [rep.multi_minimax]
    mix = result.head_mixing + [result.multi_mixing]
    hit = result.head_hitting + [result.multi_hitting]
    return [{"graph": g, "φ_min": float(p),
             f"T_mix (ε = {st.eps:g})": NEVER_MIXES if m is None else int(m),
             "max_j E[τ_j]": NEVER_REACHES if e is None else float(e)}
            for g, p, m, e in zip(names, phis, mix, hit, strict=True)]


def report_markdown(result: PlaygroundResult, *, name: str, title: str) -> str:
    """What the playground shows below its curves, as MyST for a book page: the warnings (an
    admonition), the node-fidelity table (:func:`fidelity_table`) and the summary
    (:func:`summary_table`) as numbered, captioned tables labelled ``<name>-nodes`` and
    ``<name>-summary``, and the amplification in a sentence."""
    from .render.markdown import table

    def four(v: Any) -> str:  # words (never mixes, unreachable) as they are
        return v if isinstance(v, str) else f"{v:.4f}"

    nodes = fidelity_table(result)
    summary = summary_table(result)
    node_formats = {k: four for k, v in nodes[0].items() if isinstance(v, float)}
    out = []
    if result.warnings:
        out.append(":::{warning}\n" + "\n\n".join(result.warnings) + "\n:::\n")
    out.append(table(nodes, name=f"{name}-nodes", formats=node_formats, caption=(
        f"{title}: node fidelity φ_j (the largest signal at the sink over t = 1..horizon) "
        "and the first time t_j it is reached, per head and for the weighted combination.")))
    out.append(table(summary, name=f"{name}-summary",
                     formats={"φ_min": four, "max_j E[τ_j]": four}, caption=(
        f"{title}: minimax fidelity φ_min, Definition 2.7's mixing time and the largest "
        "expected hitting time of the sink, per head and for the combination.")))
    amp = result.report.amplification
    out.append(f"Amplification φ_min(combined) − φ_min(best head) = {amp:+.4f}"
               + (": the combination beats its best head." if amp > 0 else "."))
    return "\n".join(out)


def to_python(state: PlaygroundState) -> str:
    """The Python code that rebuilds this configuration with ``bparallel`` in a notebook."""
    heads = ",\n    ".join(repr(sorted(h)) for h in state.heads)
    beta = ", ".join(f"{b:.6g}" for b in state.beta)
    return (
        "import numpy as np\n"
        "from bparallel.graphs import diffusion_matrix\n"
        "from bparallel.fidelity import fidelity_report\n"
        f"n, horizon = {state.n}, {state.horizon}\n"
        f"heads = [\n    {heads},\n]\n"
        f"beta = np.array([{beta}])\n"
        "deltas = np.stack([diffusion_matrix(e, n) for e in heads])\n"
        "report = fidelity_report(deltas, beta, horizon)\n"
    )


# ---------------------------------------------------------------------------- widgets
def build_widget(state: PlaygroundState | None = None) -> Any:  # pragma: no cover - UI glue
    """An ipywidgets interface over :class:`PlaygroundState`; redraws live on every change."""
    import io

    import ipywidgets as W
    import matplotlib.pyplot as plt

    state = state or from_preset("Example 3.13 (paper)")
    # The redraw writes into an Image and an HTML widget (no Output widget: capturing output
    # while nbclient executes the notebook can hang the book build, and widget values are
    # saved with the page, so the static book shows the plot inside the widget too).
    image = W.Image(format="png")
    info = W.HTML()
    grid_box = W.VBox()
    beta_box = W.VBox()
    preset = W.Dropdown(options=list(PRESETS), value=None, description="preset")
    seed = W.IntText(value=0, description="seed")
    n_w = W.IntSlider(value=state.n, min=2, max=8, description="nodes")
    h_w = W.IntSlider(value=state.num_heads, min=MIN_HEADS, max=MAX_HEADS, description="heads")
    horizon = W.IntSlider(value=state.horizon, min=1, max=200, description="horizon")
    eps = W.FloatSlider(value=state.eps, min=0.01, max=0.99, step=0.01, description="eps")
    busy = {"flag": False}

    def redraw() -> None:
        res = compute(state)
        fig = plot_signals(res)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        plt.close(fig)
        image.value = buf.getvalue()
        rep = res.report
        mix = ", ".join(NEVER_MIXES if m is None else str(m) for m in res.head_mixing)
        multi_mix = NEVER_MIXES if res.multi_mixing is None else res.multi_mixing
        warn = "".join(f"<p style='color:#b00'>&#9888; {w}</p>" for w in res.warnings)
        rows = fidelity_table(res)
        head = "".join(f"<th>{k}</th>" for k in rows[0])
        body = "".join(
            "<tr>" + "".join(
                f"<td>{v:.4f}</td>" if isinstance(v, float) else f"<td>{v}</td>"
                for v in r.values()
            ) + "</tr>"
            for r in rows
        )
        info.value = (
            f"{warn}<p>minimax fidelity per head: {np.round(rep.head_minimax, 4).tolist()}; "
            f"combined: <b>{rep.multi_minimax:.4f}</b>; amplification "
            f"<b style='color:{'#080' if res.amplified else '#555'}'>"
            f"{rep.amplification:+.4f}</b>. Mixing times (eps={state.eps}): "
            f"heads [{mix}], combined {multi_mix}.</p>"
            f"<table><tr>{head}</tr>{body}</table>"
        )

    def rebuild() -> None:
        labels = state.node_labels
        heads = []
        for h in range(state.num_heads):  # the grid reads as W and Delta: row i receives
            rows = []
            for i in range(state.n):
                cells = [W.Label(f"{labels[i]} <-", layout=W.Layout(width="50px"))]
                for j in range(state.n):
                    cb = W.Checkbox(
                        value=(j, i) in state.heads[h] or i == j,
                        disabled=i == j,
                        indent=False,
                        layout=W.Layout(width="28px"),
                        description_allow_html=False,
                        tooltip=f"head {h + 1}: {labels[j]} -> {labels[i]}",
                    )

                    def on(change: Any, h: int = h, j: int = j, i: int = i) -> None:
                        if not busy["flag"]:
                            state.toggle(h, j, i)
                            redraw()

                    cb.observe(on, names="value")
                    cells.append(cb)
                rows.append(W.HBox(cells))
            header = W.HBox(
                [W.Label("", layout=W.Layout(width="50px"))]
                + [W.Label(lab, layout=W.Layout(width="28px")) for lab in labels]
            )
            heads.append(W.VBox([W.HTML(f"<b>head {h + 1}</b> ({GRID_AXES})"),
                                 header, *rows]))
        grid_box.children = [W.HBox(heads)]
        sliders = []
        for h in range(state.num_heads):
            s = W.FloatSlider(value=state.raw_beta[h], min=0, max=1, step=0.01,
                              description=f"beta {h + 1}")
            lab = W.Label(f"normalised {state.beta[h]:.3f}")

            def on_beta(change: Any, h: int = h) -> None:
                if busy["flag"]:
                    return
                try:
                    state.set_weight(h, change["new"])
                except ValueError:
                    return
                for k, box in enumerate(beta_box.children):
                    box.children[1].value = f"normalised {state.beta[k]:.3f}"
                redraw()

            s.observe(on_beta, names="value")
            sliders.append(W.HBox([s, lab]))
        beta_box.children = sliders

    def on_structure(change: Any) -> None:
        if busy["flag"]:
            return
        state.set_n(n_w.value)
        state.set_num_heads(h_w.value)
        rebuild()
        redraw()

    def on_scalar(change: Any) -> None:
        state.horizon, state.eps = horizon.value, eps.value
        redraw()

    def on_preset(change: Any) -> None:
        nonlocal state
        if change["new"] is None:
            return
        kw = {"seed": seed.value} if change["new"] == "Random feedforward" else {}
        new = from_preset(change["new"], **kw)
        state.__dict__.update(new.__dict__)
        busy["flag"] = True
        n_w.value, h_w.value = state.n, state.num_heads
        horizon.value = state.horizon
        busy["flag"] = False
        rebuild()
        redraw()

    n_w.observe(on_structure, names="value")
    h_w.observe(on_structure, names="value")
    horizon.observe(on_scalar, names="value")
    eps.observe(on_scalar, names="value")
    preset.observe(on_preset, names="value")
    rebuild()
    redraw()
    controls = W.VBox([W.HBox([preset, seed]), W.HBox([n_w, h_w]), W.HBox([horizon, eps]),
                       beta_box])
    return W.VBox([controls, grid_box, image, info])
