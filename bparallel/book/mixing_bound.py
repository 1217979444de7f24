"""Theorem 2.8 in numbers: chapter support for "Mixing time and Theorem 2.8" (chapter 02).

What the chapter shows, computed here and tested (``tests/book/test_mixing_bound.py``):

- :func:`bound_vs_exact`: the exact mixing time of Definition 2.7 next to Theorem 2.8's
  bound ``2N/p`` (Eq. 3) on the path and the complete DAG, with :func:`bound_vs_exact_rows`
  (the chapter's table) and :func:`bound_results` (its recorded values at the largest n);
  on the path the proof's binomial law (Eq. 6) is exact:
  :func:`bparallel.ensembles.binomial_mixing_bound` is that second route;
- :func:`proof_replay`: the proof (Eqs. 6-10) replayed on a path, the truncated hitting time
  sampled and computed exactly, the exact shortfall ``Pr[X < N]`` and its Hoeffding bound;
- :func:`combination_sweep`: a slow and a fast head combined with weight ``alpha`` (Eq. 12,
  Eq. 20), the exact mixing time of every combination;
- :func:`good_head_simulation`: Eqs. 16-19, the chance that the best of H i.i.d. heads is
  good, simulated against ``1 - F(p-bar)^H``.

Rows are plain dicts keyed by the column a reader sees, formatted by :data:`FORMATS`;
``results`` dicts hold the chapter's recorded values under the keys it records them with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import ensembles, graphs, markov
from .._checks import positive_int, unit_interval
from .words import fmt_sig, fmt_steps

__all__ = [
    "FAMILIES",
    "FORMATS",
    "NUM_TRIALS",
    "NUM_WALKS",
    "SIZES",
    "CombinationSweep",
    "GoodHeadSimulation",
    "ProofReplay",
    "bound_results",
    "bound_vs_exact",
    "bound_vs_exact_rows",
    "combination_sweep",
    "good_head_simulation",
    "proof_replay",
]

#: Graph sizes n of the bound-vs-exact table, per profile.
SIZES = {"quick": [2, 3, 5, 10, 20, 40, 70, 100], "paper": list(range(2, 101))}
#: Walks sampled in the proof replay, per profile.
NUM_WALKS = {"quick": 2000, "paper": 20000}
#: Trials of the Eq. 18 simulation, per profile.
NUM_TRIALS = {"quick": 20000, "paper": 200000}
#: The graph families of the bound-vs-exact table, in its column order.
FAMILIES = ("path", "complete DAG")

#: Number formats of the chapter's tables, by column.
FORMATS: dict[str, str | Callable[[float], str]] = {
    **{f"T_mix exact ({f})": "d" for f in FAMILIES},
    **{f"2N/p ({f})": fmt_steps for f in FAMILIES},  # a bound on steps: "4", "13.3"
    **{f"ratio ({f})": ".3f" for f in FAMILIES},
    "simulated": ".4f", "1 - F(p̄)^H": ".4f", "z": ".2f",
}


def _family_edges(family: str, n: int) -> list[tuple[int, int]]:
    return graphs.line_graph_edges(n) if family == "path" else graphs.complete_dag_edges(n)


def _sizes(sizes: Sequence[int]) -> list[int]:
    out = [positive_int(n, "sizes") for n in sizes]
    if not out or min(out) < 2:
        raise ValueError(f"sizes={list(sizes)!r}: need at least one size, each n >= 2")
    return out


# ------------------------------------------------------------- Theorem 2.8 against T_mix
def bound_vs_exact(sizes: Sequence[int], eps: float) -> Any:
    """Definition 2.7's exact ``T_mix(eps)`` against Theorem 2.8's ``2N/p`` (Eq. 3).

    One row per graph family (:data:`FAMILIES`: the path ``0 -> 1 -> ... -> n-1`` and the
    complete DAG) and size ``n`` in ``sizes`` (each ``>= 2``): the forward probability
    ``p_h`` (:func:`bparallel.markov.forward_probability`), the exact mixing time, the bound
    and their ratio. Returns a pandas DataFrame with columns ``family, n, p_h,
    T_mix exact, 2N/p, ratio`` (what :func:`bparallel.book.render.plotting.plot_bound_vs_exact`
    draws)."""
    import pandas as pd  # the book's dependency, not the package's

    sizes = _sizes(sizes)
    eps = unit_interval(eps, "eps")
    rows = []
    for n in sizes:
        for family in FAMILIES:
            W = graphs.walk_matrix(_family_edges(family, n), n)
            p = markov.forward_probability(W)
            rows.append({"family": family, "n": n, "p_h": p,
                         "T_mix exact": markov.mixing_time(W, eps),
                         "2N/p": markov.mixing_time_bound(n, p)})
    table = pd.DataFrame(rows)
    table["ratio"] = table["T_mix exact"] / table["2N/p"]
    return table


def _row(table: Any, family: str, n: int) -> Any:
    return table[(table.family == family) & (table.n == n)].iloc[0]


def bound_vs_exact_rows(table: Any) -> list[dict[str, Any]]:
    """The chapter's table from :func:`bound_vs_exact`: one row per size ``n``, and per
    family its exact ``T_mix``, the bound ``2N/p`` and their ratio (formats: :data:`FORMATS`)."""
    families = list(table.family.unique())
    kinds = {"T_mix exact": int, "2N/p": float, "ratio": float}  # plain numbers: right-aligned
    return [{"n": int(n), **{f"{q} ({fam})": kind(_row(table, fam, n)[q])
                             for fam in families for q, kind in kinds.items()}}
            for n in sorted(table.n.unique())]


def bound_results(table: Any) -> dict[str, int | float]:
    """The values the chapter records from :func:`bound_vs_exact` at the largest size
    ``n_max``: the path's exact ``T_mix``, bound and ratio, the complete DAG's ``T_mix`` and
    bound."""
    n_max = int(table.n.max())
    path, complete = _row(table, "path", n_max), _row(table, "complete DAG", n_max)
    return {"n_max": n_max,
            "path.n_max.tmix": int(path["T_mix exact"]),
            "path.n_max.bound": float(path["2N/p"]),
            "path.n_max.ratio": float(path["ratio"]),
            "complete.n_max.tmix": int(complete["T_mix exact"]),
            "complete.n_max.bound": float(complete["2N/p"])}


# ------------------------------------------------------------------- the proof, replayed
@dataclass(frozen=True)
class ProofReplay:
    """The proof of Theorem 2.8 replayed on the path of ``n`` nodes at ``t* = 2N/p``:
    ``E[min(tau, t*)]`` from node 0 sampled (mean and standard error) and exact, the exact
    ``Pr[X < N]`` (Eq. 6) and Hoeffding's bound ``exp(-pN)`` (Eq. 10)."""

    n: int
    t_star: int
    sampled: float
    stderr: float
    exact: float
    shortfall: float
    hoeffding: float

    @property
    def z(self) -> float:
        """``|sampled - exact| / stderr``: the sampler against the exact value."""
        return abs(self.sampled - self.exact) / self.stderr

    def summary(self) -> str:
        """Two lines for the reader: the hitting time sampled and exact, the tail and bound."""
        return (f"E[min(tau, {self.t_star})] from node 0: sampled {self.sampled:.3f} ± "
                f"{self.stderr:.3f}, exact {self.exact:.3f} (z = {self.z:.2f})\n"
                f"Pr[not at tau by t = 2N/p]: exact {fmt_sig(self.shortfall, 3)}, "
                f"Hoeffding bound {fmt_sig(self.hoeffding, 3)}")

    def results(self) -> dict[str, float]:
        """The values the chapter records, under ``proof.path<n>``."""
        key = f"proof.path{self.n}"
        return {f"{key}.truncated_hitting.exact": self.exact,
                f"{key}.shortfall.exact": self.shortfall,
                f"{key}.shortfall.hoeffding": self.hoeffding}


def proof_replay(n: int, num_walks: int, seed: int = 0) -> ProofReplay:
    """Replay the proof of Theorem 2.8 (Eqs. 6-10) on the path of ``n`` nodes (``p = 1/2``,
    ``N = n - 1``, ``t* = 2N/p``): ``num_walks`` walks sampled from node 0 with
    :func:`bparallel.markov.sample_hitting_times` (seeded), the same truncated hitting time
    exactly (:func:`bparallel.markov.truncated_hitting_times`), the exact shortfall
    (:func:`bparallel.markov.forward_moves_shortfall`) and Hoeffding's bound
    (:func:`bparallel.markov.hoeffding_tail`)."""
    n = positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n={n!r}: the path needs at least 2 nodes")
    num_walks = positive_int(num_walks, "num_walks")
    if num_walks < 2:
        raise ValueError(f"num_walks={num_walks!r}: a standard error needs at least 2 walks")
    P = graphs.walk_matrix(graphs.line_graph_edges(n), n).T
    t_star = markov.mixing_time_bound_steps(n, 0.5)
    mean, se = markov.sample_hitting_times(P, n - 1, num_walks, max_steps=t_star, seed=seed)
    return ProofReplay(
        n=n, t_star=t_star, sampled=float(mean[0]), stderr=float(se[0]),
        exact=float(markov.truncated_hitting_times(P, n - 1, t_star)[0]),
        shortfall=float(markov.forward_moves_shortfall(0.5, n - 1, t_star)),
        hoeffding=float(markov.hoeffding_tail(0.5, n - 1)),
    )


# --------------------------------------------------------------------- combining heads
@dataclass(frozen=True)
class CombinationSweep:
    """A slow head (the path) and a fast one (every node also jumps to the sink) combined as
    ``(1 - alpha) W_slow + alpha W_fast``: per ``alpha``, the exact mixing time, the forward
    probability of the combination, Eq. 12's ``sum_h alpha_h p_h`` and the bound ``2N/p`` at
    that ``p``."""

    n: int
    alphas: NDArray[np.float64]
    t_mix: NDArray[np.int64]
    p_bar: NDArray[np.float64]
    p_eq12: NDArray[np.float64]

    @property
    def bound(self) -> NDArray[np.float64]:
        """Theorem 2.8's ``2N/p`` with Eq. 12's ``p``
        (:func:`bparallel.markov.mixing_time_bound`)."""
        return markov.mixing_time_bound(self.n, self.p_eq12)

    def results(self) -> dict[str, int]:
        """The values the chapter records: ``T_mix`` of the slow head alone, of the fast head
        alone and of the uniform mix (``alpha = 1/2``)."""
        return {"combination.tmix.slow": int(self.t_mix[0]),
                "combination.tmix.fast": int(self.t_mix[-1]),
                "combination.tmix.uniform": int(self.t_mix[len(self.alphas) // 2])}


def combination_sweep(eps: float, n: int = 12, num_alphas: int = 21) -> CombinationSweep:
    """Eq. 20 by exact mixing times: the path on ``n`` nodes (slow) and the path with every
    node also sent to the sink (fast), combined with weight ``alpha`` on the fast head over
    ``num_alphas`` equally spaced weights in ``[0, 1]`` (an odd number, so that the middle one
    is the uniform mix)."""
    eps = unit_interval(eps, "eps")
    n = positive_int(n, "n")
    if n < 2:
        raise ValueError(f"n={n!r}: the heads need at least 2 nodes")
    num_alphas = positive_int(num_alphas, "num_alphas")
    if num_alphas < 3 or num_alphas % 2 == 0:
        raise ValueError(f"num_alphas={num_alphas!r}: must be odd and at least 3")
    W_slow = graphs.walk_matrix(graphs.line_graph_edges(n), n)
    W_fast = graphs.walk_matrix([(j, n - 1) for j in range(n - 1)] + graphs.line_graph_edges(n),
                                n)
    alphas = np.linspace(0, 1, num_alphas)
    Wbar = np.stack([graphs.convex_combination(np.stack([W_slow, W_fast]), [1 - a, a])
                     for a in alphas])
    p_eq12 = markov.effective_forward_probability(
        [markov.forward_probability(W_slow), markov.forward_probability(W_fast)],
        np.stack([1 - alphas, alphas], axis=-1))
    return CombinationSweep(n=n, alphas=alphas, t_mix=markov.mixing_time(Wbar, eps),
                            p_bar=markov.forward_probability(Wbar), p_eq12=p_eq12)


# ---------------------------------------------------------------------- Eqs. 16-19
@dataclass(frozen=True)
class GoodHeadSimulation:
    """Eq. 18 simulated: per number of heads ``H``, the fraction of trials whose best head
    has ``p_h >= p-bar``, the theory ``1 - F(p-bar)^H`` and its binomial standard error."""

    H: NDArray[np.int64]
    simulated: NDArray[np.float64]
    theory: NDArray[np.float64]
    num_trials: int

    @property
    def stderr(self) -> NDArray[np.float64]:
        """The simulation's binomial standard error at the theory, per ``H``."""
        return np.sqrt(self.theory * (1 - self.theory) / self.num_trials)

    @property
    def z(self) -> NDArray[np.float64]:
        """``(simulated - theory) / stderr`` per ``H``."""
        return (self.simulated - self.theory) / self.stderr

    def rows(self) -> list[dict[str, Any]]:
        """The chapter's table: per ``H``, simulated, theory and z (formats: :data:`FORMATS`)."""
        return [{"H": int(H), "simulated": s, "1 - F(p̄)^H": th, "z": z}
                for H, s, th, z in zip(self.H, self.simulated, self.theory, self.z, strict=True)]

    def results(self) -> dict[str, float]:
        """The values the chapter records: the theory per ``H``, ``eq18.H<H>.theory``."""
        return {f"eq18.H{H}.theory": float(v) for H, v in zip(self.H, self.theory, strict=True)}


def good_head_simulation(Hs: Sequence[int], num_trials: int, seed: int = 0, *,
                         pbar: float = 0.5, a: float = 2.0, b: float = 5.0) -> GoodHeadSimulation:
    """Eqs. 16-19: heads' forward probabilities drawn i.i.d. from ``Beta(a, b)`` (CDF ``F``);
    for each ``H`` in ``Hs``, ``num_trials`` draws of ``H`` heads (one generator seeded by
    ``seed``, used in the order of ``Hs``) give the fraction whose best head reaches
    ``pbar``, against Eq. 18's ``1 - F(pbar)^H``, by chapter 03's
    :func:`bparallel.ensembles.simulate_best_head` (chapter 03's too)."""
    from scipy import stats

    H = np.array([positive_int(h, "Hs") for h in Hs])
    if H.size == 0:
        raise ValueError("Hs is empty: give at least one number of heads")
    num_trials = positive_int(num_trials, "num_trials")
    pbar = unit_interval(pbar, "pbar")
    if not (a > 0 and b > 0):
        raise ValueError(f"a={a!r}, b={b!r}: the Beta parameters must be positive")
    rng = np.random.default_rng(seed)
    law = stats.beta(a, b)
    sim = ensembles.simulate_best_head(lambda size: law.rvs(size, random_state=rng), pbar,
                                       float(law.cdf(pbar)), H, num_trials)
    return GoodHeadSimulation(H=H, simulated=sim.simulated, theory=sim.theory,
                              num_trials=num_trials)


def shortfall_curves(Ns: Sequence[int], ps: Sequence[float]) -> dict[float, dict[str, Any]]:
    """The proof of Theorem 2.8 made exact (chapter 02's figure), per forward probability
    ``p`` of ``ps``, over the forward moves ``Ns``: ``"exact"``, ``Pr[Bin(t, p) < N]`` at
    ``t = floor(2N/p)``, the last whole step within the bound (the rounding of chapter 03's
    :func:`bparallel.book.claims.binomial_tail_at_bound`;
    :func:`bparallel.markov.forward_moves_shortfall`), and ``"hoeffding"``, Hoeffding's
    ``exp(-pN)`` (Eq. 10, :func:`bparallel.markov.hoeffding_tail`); ``"N"`` the moves."""
    Ns = [positive_int(int(N), "Ns") for N in Ns]
    out: dict[float, dict[str, Any]] = {}
    for p in ps:
        p = unit_interval(p, "ps")
        t = [markov.mixing_time_bound_steps(N + 1, p) for N in Ns]
        out[p] = {"N": np.asarray(Ns),
                  "exact": np.array([markov.forward_moves_shortfall(p, N, tt)
                                     for N, tt in zip(Ns, t, strict=True)], dtype=np.float64),
                  "hoeffding": np.array([markov.hoeffding_tail(p, N) for N in Ns],
                                        dtype=np.float64)}
    return out

