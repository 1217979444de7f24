"""The paper's fidelity examples in numbers: chapter support for "Minimax fidelity and its
amplification" (chapter 04) and "The toy-DAG playground" (chapter 05).

Chapter 04 (Examples 3.8 and 3.13, Remark 3.7):

- :func:`example_3_8_terms`: the terms of ``(Delta-bar^2)[tau, u]`` by head sequence
  (Remark 3.7, Eq. 27), whose only nonzero one is the cross term ``beta_1 beta_2 / 4``;
  :func:`example_3_8_closed_form` the same entry over all weights;
  :func:`example_3_8_results` the minimax fidelities (Definitions 3.5, 3.10);
- :func:`example_3_13_reports`: Example 3.13 with the paper's head 2 and with the authors'
  code's, at the chapter's horizon and at :data:`LIMIT_HORIZON`, with the comparison table;
  :func:`exact_phi_min_multi` the combination's minimax fidelity as an exact fraction
  (:mod:`bparallel.exact`, an independent route the tests hold against the float one);
- :func:`remark_3_7`: the expansion of Remark 3.7 against the matrix power, and the share
  of the signal that travels along mixed-head sequences.

Chapter 05 (the Python playground, :mod:`bparallel.book.playground`, on its presets):
:data:`PLAYGROUND_RUNS` names what the chapter shows, :func:`playground_runs` computes it,
:func:`playground_report` renders one run and :func:`playground_results` gives the values
the chapter records.

Rows are plain dicts keyed by the column a reader sees, formatted by :data:`FORMATS`;
``results`` dicts hold the chapter's recorded values under the keys it records them with.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import exact, fidelity
from .._checks import nonnegative_int, one_of, positive_int, unit_interval
from ..examples import EXAMPLE_3_13_VARIANTS, ToyExample, example_3_8, example_3_13
from ..fidelity import FidelityReport
from . import playground as pg

__all__ = [
    "FORMATS",
    "LIMIT_HORIZON",
    "PLAYGROUND_RUNS",
    "Example313",
    "example_3_8_closed_form",
    "example_3_8_results",
    "example_3_8_terms",
    "example_3_13_reports",
    "exact_phi_min_multi",
    "first_horizon_above_heads",
    "playground_report",
    "playground_results",
    "playground_runs",
    "remark_3_7",
]

#: The horizon at which the chapter reads Example 3.13's limit (the gap to 1/2 is below
#: machine precision there).
LIMIT_HORIZON = 200

#: Number formats of chapter 04's tables, by column.
FORMATS: dict[str, str] = {
    "weight": ".4f", "(product)[τ,u]": ".4f", "contribution": ".4f",
    "paper (text)": ".6f", "authors' code": ".6f",
}


# ----------------------------------------------------------------------- Example 3.8
def example_3_8_terms(beta_1: float, beta_2: float) -> tuple[list[dict[str, Any]],
                                                              dict[str, float]]:
    """Example 3.8 at weights ``(beta_1, beta_2)``: the four terms of ``(Delta-bar^2)[tau, u]``
    by the sequence of heads (Remark 3.7, Eq. 27, via
    :func:`bparallel.fidelity.cross_head_terms`), as rows ``term, weight, (product)[τ,u],
    contribution``, and the values the chapter records: the weights and the entry of the
    matrix power, ``example_3_8.cross_term.beta_<beta_1>`` (equal to ``beta_1 beta_2 / 4``)."""
    b1 = unit_interval(beta_1, "beta_1", closed=True)
    b2 = unit_interval(beta_2, "beta_2", closed=True)
    ex = example_3_8(b1, b2)
    tau, u = ex.index("tau"), ex.index("u")
    rows = [{"term": " · ".join(f"Δ({h + 1})" for h in seq), "weight": w,
             "(product)[τ,u]": M[tau, u], "contribution": w * M[tau, u]}
            for seq, w, M in fidelity.cross_head_terms(ex.deltas, ex.beta, 2)]
    power = np.linalg.matrix_power(ex.delta_bar, 2)[tau, u]
    return rows, {"example_3_8.beta_1": b1, "example_3_8.beta_2": b2,
                  f"example_3_8.cross_term.beta_{b1:g}": float(power)}


def example_3_8_closed_form(num: int = 41) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                     NDArray[np.float64]]:
    """Example 3.8 over all weights: ``(beta_1, (Delta-bar^2)[tau, u], beta_1 beta_2 / 4)`` on
    ``num`` equally spaced ``beta_1`` in ``[0, 1]`` with ``beta_2 = 1 - beta_1``: the entry
    computed by matrix power next to the paper's closed form."""
    num = positive_int(num, "num")
    if num < 2:
        raise ValueError(f"num={num!r}: need at least 2 weights")
    grid = np.linspace(0, 1, num)
    computed = np.array([np.linalg.matrix_power(example_3_8(b, 1 - b).delta_bar, 2)[2, 0]
                         for b in grid])
    return grid, computed, grid * (1 - grid) / 4


def example_3_8_results(horizon: int) -> dict[str, float]:
    """Example 3.8 with equal weights at ``horizon``: the minimax fidelity of each head
    (Definition 3.5, 0: neither head reaches the sink from ``u``) and of the combination
    (Definition 3.10, positive)."""
    ex = example_3_8()
    rep = ex.report(positive_int(horizon, "horizon"))
    return {"example_3_8.phi_min.head1": float(rep.head_minimax[0]),
            "example_3_8.phi_min.head2": float(rep.head_minimax[1]),
            "example_3_8.phi_min.multi": rep.multi_minimax,
            **{f"example_3_8.sinks.head{h + 1}": k for h, k in enumerate(ex.sink_counts)}}


# ---------------------------------------------------------------------- Example 3.13
@dataclass(frozen=True)
class Example313:
    """Example 3.13's fidelity reports (Definitions 3.3-3.12): with the paper's head 2 and
    with the authors' code's, at ``horizon`` and at ``limit``."""

    horizon: int
    limit: int
    paper: FidelityReport
    paper_limit: FidelityReport
    code: FidelityReport
    code_limit: FidelityReport

    def rows(self) -> list[dict[str, Any]]:
        """The comparison table: the minimax fidelity of each head and of the combination
        (at ``horizon`` and at ``limit``), paper's head 2 against the code's."""
        names = ["φ_min head 1", "φ_min head 2", f"φ_min multi (T={self.horizon})",
                 f"φ_min multi (T={self.limit})"]

        def column(at: FidelityReport, lim: FidelityReport) -> list[float]:
            return [at.head_minimax[0], at.head_minimax[1], at.multi_minimax, lim.multi_minimax]

        return [{"quantity": q, "paper (text)": p, "authors' code": c} for q, p, c in
                zip(names, column(self.paper, self.paper_limit),
                    column(self.code, self.code_limit), strict=True)]

    def results(self) -> dict[str, int | float]:
        """The values the chapter records: ``example_3_13.*`` (the paper's head 2: the horizon,
        the minimax fidelities, their limit, the amplification in the limit, the optimal
        time of node v in head 1, the first horizon from which the combination beats the
        heads' 0.375, :func:`first_horizon_above_heads`) and ``example_3_13_code.*`` (the
        code's head 2)."""
        p, c = self.paper, self.code
        return {"example_3_13.horizon": self.horizon,
                "example_3_13.first_horizon_above_heads": first_horizon_above_heads(),
                "example_3_13.phi_min.head1": float(p.head_minimax[0]),
                "example_3_13.phi_min.head2": float(p.head_minimax[1]),
                "example_3_13.phi_min.multi": p.multi_minimax,
                "example_3_13.phi_min.multi_limit": self.paper_limit.multi_minimax,
                "example_3_13.amplification_limit": self.paper_limit.amplification,
                "example_3_13.optimal_time.head1.v": int(p.node_t[0, 1]),
                "example_3_13_code.phi_min.head1": float(c.head_minimax[0]),
                "example_3_13_code.phi_min.head2": float(c.head_minimax[1]),
                "example_3_13_code.phi_min.multi": c.multi_minimax,
                "example_3_13_code.amplification": c.amplification}


def example_3_13_reports(horizon: int, limit: int = LIMIT_HORIZON) -> Example313:
    """Example 3.13 (:func:`bparallel.examples.example_3_13`, both variants) reported at
    ``horizon`` and at ``limit`` (greater than ``horizon``)."""
    horizon, limit = positive_int(horizon, "horizon"), positive_int(limit, "limit")
    if limit <= horizon:
        raise ValueError(f"limit={limit!r}: must exceed horizon={horizon!r}")
    paper, code = example_3_13("paper"), example_3_13("code")
    return Example313(horizon=horizon, limit=limit,
                      paper=paper.report(horizon), paper_limit=paper.report(limit),
                      code=code.report(horizon), code_limit=code.report(limit))


def first_horizon_above_heads(variant: str = "paper", limit: int = LIMIT_HORIZON) -> int:
    """The least horizon ``T`` at which Example 3.13's combination has a minimax fidelity
    (Definition 3.10 over ``t <= T``) above every head's at ``limit`` (0.375 with the paper's
    head 2): from there on the amplification the paper reports is there at every ``T``,
    its 0.5 a supremum approached as ``1/2 - (T+1)/2^(T+1)``."""
    ex = example_3_13(one_of(variant, "variant", sorted(EXAMPLE_3_13_VARIANTS), "variants"))
    best = float(ex.report(positive_int(limit, "limit")).head_minimax.max())
    for T in range(1, limit + 1):
        if ex.report(T).multi_minimax > best:
            return T
    raise ValueError(f"limit={limit}: the combination never beats the heads' {best}")


def exact_phi_min_multi(horizon: int, variant: str = "paper") -> Fraction:
    """Example 3.13's ``phi_min^multi`` at ``horizon`` as an exact fraction: the combination
    of the rational diffusion matrices (Definitions 3.1, 3.6) and its node fidelities by
    explicit powers (:mod:`bparallel.exact`, no code shared with the float route), the
    minimum over the non-sink nodes (Definition 3.10)."""
    horizon = positive_int(horizon, "horizon")
    variant = one_of(variant, "variant", sorted(EXAMPLE_3_13_VARIANTS), "variants")
    ex = example_3_13(variant)
    D = exact.combine([exact.diffusion(e, ex.n) for e in ex.head_edges],
                      [Fraction(b) for b in ex.beta])
    phi, _ = exact.node_fidelity(D, horizon)
    return min(phi[: ex.n - 1])


# ------------------------------------------------------------------------ Remark 3.7
def remark_3_7(example: ToyExample, t_max: int = 6, t_share: int = 3,
               start: str = "u") -> dict[str, float]:
    """Remark 3.7 (Eq. 27) on ``example``: the largest entry of ``|expansion - Delta-bar^t|``
    over ``t = 1..t_max`` (:func:`bparallel.fidelity.cross_head_expansion` against the matrix
    power), and at ``t_share`` the share of ``(Delta-bar^t)[tau, start]`` carried by the
    head sequences that mix heads. Keys ``remark_3_7.max_error`` and
    ``remark_3_7.cross_share.t<t_share>``."""
    t_max, t_share = positive_int(t_max, "t_max"), positive_int(t_share, "t_share")
    D, beta, bar = example.deltas, example.beta, example.delta_bar
    errs = [np.abs(fidelity.cross_head_expansion(D, beta, t)
                   - np.linalg.matrix_power(bar, t)).max() for t in range(1, t_max + 1)]
    tau, j = example.n - 1, example.index(start)
    cross = sum(w * M[tau, j] for seq, w, M in fidelity.cross_head_terms(D, beta, t_share)
                if len(set(seq)) > 1)
    total = np.linalg.matrix_power(bar, t_share)[tau, j]
    if total == 0:
        raise ValueError(f"start={start!r}: no signal reaches the sink at t_share={t_share}")
    return {"remark_3_7.max_error": float(max(errs)),
            f"remark_3_7.cross_share.t{t_share}": float(cross / total)}


# ------------------------------------------------------------- chapter 05: the playground
#: What chapter 05 shows, by the name of its tables (``<name>-nodes``, ``<name>-summary``):
#: ``(title, preset, preset parameters, results prefix)``.
PLAYGROUND_RUNS: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "example-3-8": ("Example 3.8", "Example 3.8", {}, "example_3_8"),
    "example-3-13-paper": ("Example 3.13 as in the paper", "Example 3.13 (paper)", {},
                           "example_3_13"),
    "example-3-13-code": ("Example 3.13 as in the authors' code", "Example 3.13 (code)", {},
                          "example_3_13_code"),
    "random-pair": ("A random feedforward pair", "Random feedforward",
                    {"n": 6, "heads": 2, "density": 0.3}, "random"),
}


def playground_runs(random_seed: int) -> dict[str, pg.PlaygroundResult]:
    """:func:`bparallel.book.playground.compute` on every preset of :data:`PLAYGROUND_RUNS`,
    the random pair drawn with ``random_seed``; keyed by the names there."""
    seed = nonnegative_int(random_seed, "random_seed")
    out = {}
    for name, (_, preset, params, _) in PLAYGROUND_RUNS.items():
        kwargs = {"seed": seed, **params} if preset == "Random feedforward" else params
        out[name] = pg.compute(pg.from_preset(preset, **kwargs))
    return out


def playground_report(runs: dict[str, pg.PlaygroundResult], name: str) -> str:
    """The MyST report of one run (:func:`bparallel.book.playground.report_markdown`): its
    warnings, node-fidelity table and summary, under the title of :data:`PLAYGROUND_RUNS`."""
    name = one_of(name, "name", list(runs), "runs")
    return pg.report_markdown(runs[name], name=name, title=PLAYGROUND_RUNS[name][0])


def playground_results(runs: dict[str, pg.PlaygroundResult]) -> dict[str, float]:
    """The values chapter 05 records: the combination's minimax fidelity of every run
    (``<prefix>.phi_min.multi``) and the amplification of the paper's Example 3.13 and of
    the random pair (``<prefix>.amplification``)."""
    missing = [name for name in PLAYGROUND_RUNS if name not in runs]
    if missing:
        raise ValueError(f"runs lacks {missing}: pass what playground_runs() returns")
    out: dict[str, float] = {}
    for name, (_, _, _, prefix) in PLAYGROUND_RUNS.items():
        report = runs[name].report
        out[f"{prefix}.phi_min.multi"] = report.multi_minimax
        if prefix in ("example_3_13", "random"):
            out[f"{prefix}.amplification"] = report.amplification
    return out
