"""The paper's toy examples as ready-made objects (Examples 3.8 and 3.13).

Each example is a :class:`ToyExample`: node labels, one edge list per head, convex weights
``beta`` and a horizon; from these it derives every matrix and fidelity of Section 3.

Example 3.13 comes in two variants:

- ``"paper"``: the text's head 2, edges ``v -> u, u -> w, w -> tau``. Alone it is a
  feedforward graph with a unique sink (Definition 2.1 asks only for some order:
  ``(v, u, w, tau)``), but its edge ``v -> u`` points backward in the positions' order, so
  the two heads share no causal order: their union holds the cycle ``u -> v -> u``, a
  closed class of ``Delta-bar``. The paper reports ``phi_min = 0.375`` per head and ``0.5``
  combined.
- ``"code"``: the head 2 that the authors' published code plots for Figure 3, edges
  ``u -> w, v -> w, v -> tau, w -> tau`` (feedforward), horizon 20, ``beta = (1/2, 1/2)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ._checks import SUM_ATOL, positive_int
from .fidelity import (
    FidelityReport,
    fidelity_report,
    multi_head_operator,
    signal_at_sink,
)
from .graphs import (
    as_edges,
    check_weights,
    diffusion_matrix,
    has_causal_order,
    has_unique_sink,
    is_feedforward,
    sinks,
    walk_matrix,
)

__all__ = ["ToyExample", "example_3_8", "example_3_13", "EXAMPLE_3_13_VARIANTS"]

Edge = tuple[int, int]


@dataclass(frozen=True, eq=False)
class ToyExample:
    """A set of heads on the same nodes, with convex weights and a horizon."""

    name: str
    labels: tuple[str, ...]
    head_edges: tuple[tuple[Edge, ...], ...]
    beta: tuple[float, ...]
    horizon: int = 20
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        n = len(self.labels)
        if n < 2:
            raise ValueError(f"labels: need at least 2 nodes, got {self.labels}")
        if len(self.head_edges) < 1:
            raise ValueError("head_edges: need at least one head")
        for edges in self.head_edges:
            as_edges(edges, n)
        w = check_weights(self.beta, len(self.head_edges), "beta")
        if abs(w.sum() - 1.0) > SUM_ATOL:  # the package's one rule for weights
            raise ValueError(f"beta must sum to 1 (convex weights), got {self.beta}")
        positive_int(self.horizon, "horizon")

    @property
    def n(self) -> int:
        """Number of nodes; the sink is node ``n - 1``."""
        return len(self.labels)

    @property
    def num_heads(self) -> int:
        return len(self.head_edges)

    @cached_property
    def deltas(self) -> NDArray[np.float64]:
        """Per-head diffusion matrices (Eq. 21), shape ``(H, n, n)``."""
        return np.stack([diffusion_matrix(e, self.n) for e in self.head_edges])

    @cached_property
    def walks(self) -> NDArray[np.float64]:
        """Per-head random-walk matrices (Eq. 1), shape ``(H, n, n)``."""
        return np.stack([walk_matrix(e, self.n) for e in self.head_edges])

    @cached_property
    def delta_bar(self) -> NDArray[np.float64]:
        """The multi-head diffusion operator (Eq. 26), shape ``(n, n)``."""
        return multi_head_operator(self.deltas, self.beta)

    @property
    def feedforward(self) -> tuple[bool, ...]:
        """Definition 2.1 per head, in the node order ``0..n-1`` (token positions)."""
        return tuple(is_feedforward(e, self.n) for e in self.head_edges)

    @property
    def causal_order(self) -> tuple[bool, ...]:
        """Definition 2.1 as stated, per head: some order of the nodes puts every edge
        forward (:func:`~bparallel.graphs.has_causal_order`)."""
        return tuple(has_causal_order(e, self.n) for e in self.head_edges)

    @property
    def common_order(self) -> bool:
        """Whether one order puts every edge of every head forward: the union of the heads'
        edges is acyclic, as causal attention makes it."""
        return has_causal_order([e for edges in self.head_edges for e in edges], self.n)

    @property
    def sink_counts(self) -> tuple[int, ...]:
        """The number of sinks of each head (Definition 2.2 asks for one)."""
        return tuple(len(sinks(e, self.n)) for e in self.head_edges)

    @property
    def unique_sink(self) -> tuple[bool, ...]:
        """Definition 2.2 per head (node ``n-1`` is the only sink)."""
        return tuple(has_unique_sink(e, self.n) for e in self.head_edges)

    def signals(self, horizon: int | None = None) -> tuple[NDArray, NDArray]:
        """``(per_head (H, T+1, n), multi (T+1, n))`` signals at the sink, ``t = 0..T``."""
        T = self.horizon if horizon is None else horizon
        return signal_at_sink(self.deltas, T), signal_at_sink(self.delta_bar, T)

    def report(self, horizon: int | None = None) -> FidelityReport:
        """Node and minimax fidelities per head and combined (Definitions 3.3-3.12)."""
        T = self.horizon if horizon is None else horizon
        return fidelity_report(self.deltas, self.beta, T)

    def index(self, label: str) -> int:
        """Node index of a label such as ``"u"`` or ``"tau"``."""
        try:
            return self.labels.index(label)
        except ValueError:
            raise ValueError(f"label {label!r} is not one of {self.labels}") from None


def example_3_8(beta1: float = 0.5, beta2: float = 0.5, horizon: int = 20) -> ToyExample:
    """Example 3.8: nodes ``(u, v, tau)``; head 1 has ``u -> v``, head 2 has ``v -> tau``.

    Neither head alone carries signal from ``u`` to ``tau``; the cross term of
    ``(Delta-bar^2)[tau, u]`` equals ``beta1 * beta2 / 4``.
    """
    return ToyExample(
        name="Example 3.8",
        labels=("u", "v", "tau"),
        head_edges=(((0, 1),), ((1, 2),)),
        beta=(float(beta1), float(beta2)),
        horizon=horizon,
        description="head 1: u->v; head 2: v->tau (plus self-loops)",
    )


EXAMPLE_3_13_VARIANTS: dict[str, tuple[Edge, ...]] = {
    # nodes u=0, v=1, w=2, tau=3; head 2's edges
    "paper": ((1, 0), (0, 2), (2, 3)),
    "code": ((0, 2), (1, 2), (1, 3), (2, 3)),
}


def example_3_13(variant: str = "paper", horizon: int = 20) -> ToyExample:
    """Example 3.13: nodes ``(u, v, w, tau)``, ``beta = (1/2, 1/2)``.

    Head 1: ``u -> v -> w -> tau``. Head 2 depends on ``variant`` (see module docstring):
    ``"paper"`` (the text: ``v -> u, u -> w, w -> tau``) or ``"code"`` (the authors'
    Figure 3 code: ``u -> w, v -> w, v -> tau, w -> tau``). Horizon 20 as in that code.
    """
    if variant not in EXAMPLE_3_13_VARIANTS:
        raise ValueError(
            f"variant must be one of {sorted(EXAMPLE_3_13_VARIANTS)}, got {variant!r}"
        )
    head1 = ((0, 1), (1, 2), (2, 3))
    return ToyExample(
        name=f"Example 3.13 ({variant})",
        labels=("u", "v", "w", "tau"),
        head_edges=(head1, EXAMPLE_3_13_VARIANTS[variant]),
        beta=(0.5, 0.5),
        horizon=horizon,
        description=(
            "head 1: u->v->w->tau; head 2: "
            + ", ".join(f"{'uvw'[j] if j < 3 else 'tau'}->{'uvw'[i] if i < 3 else 'tau'}"
                        for j, i in EXAMPLE_3_13_VARIANTS[variant])
        ),
    )
