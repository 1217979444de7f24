"""Chapter 03 ("The claims of Section 2 on graph ensembles"): its tables and recorded values.

The experiments are :mod:`~bparallel.book.claims.mixing`'s; this module turns their frames
into what the chapter shows and records, section by section, and is tested by hand
(``tests/book/claims/test_claims_chapters.py``):

- Theorem 2.8 (Eqs. 3, 12): :func:`bound_table` and :func:`theorem_2_8_results` on the
  ensemble of :func:`~bparallel.book.claims.mixing.theorem_2_8_ensemble`;
  :func:`binomial_bound_grid`, the proof made exact (``t*(N, p)`` against ``2N/p``), and
  :func:`lazy_path_table`, the two-node lazy path for several ``eps``;
- Eq. 20: :func:`eq20_table` and :func:`eq20_results`;
- Section 2.2 and Eq. 5: :func:`search_table` and :func:`mixing_search_results` on the
  head-set searches of :func:`~bparallel.book.claims.mixing.mixing_search`, and
  :func:`pair_example`, the smallest pair whose combination mixes faster (or slower) than
  its heads, on exact rationals;
- Eqs. 16-19: :func:`best_head_study`, the best of ``H`` heads under four laws of ``p_h``.

Tables are DataFrames labelled for display (:func:`~bparallel.book.claims.labels.labelled`),
glued by :func:`~bparallel.book.render.markdown.glue_frame` under captions in the prose;
``results`` dicts hold the recorded values under the chapter's keys, computed as the chapter
first computed them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ... import graphs
from ..._checks import one_of, positive_int, unit_interval
from ...ensembles import MixingComparison, cdf_below
from ..words import fmt_steps
from .head_sets import store_entry
from .labels import labelled, lazy_pandas
from .mixing import (
    atom_best_head_table,
    best_head_simulation,
    binomial_tail_at_bound,
    bound_summary,
    exact_combination_mixing,
    exact_matrices_table,
    fewest_edges_index,
    lazy_path_eps_table,
    mixing_order_by_eps,
    theorem_2_8_under_hypothesis,
    weighted_forward_probabilities,
    worst_case_bound_ratio,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BOUND_FORMATS",
    "BOUND_KINDS",
    "HS",
    "HYPOTHESIS_FORMATS",
    "ATOM_LABEL",
    "ATOM_LAW",
    "LAZY_EPS",
    "LAZY_FORMATS",
    "SEARCH_FORMATS",
    "BestHeadStudy",
    "BinomialBound",
    "PairExample",
    "best_head_study",
    "binomial_bound_grid",
    "bound_table",
    "eq20_results",
    "eq20_table",
    "hypothesis_check",
    "lazy_path_table",
    "matrices_table",
    "mixing_search_results",
    "order_by_eps",
    "pair_example",
    "search_table",
    "theorem_2_8_results",
]

#: The kinds of head of the Theorem 2.8 ensemble, in the order of the chapter's figure.
BOUND_KINDS = ("unweighted", "weighted", "path", "complete", "unweighted pair", "weighted pair")
#: Number formats of :func:`bound_table`, by column label.
BOUND_FORMATS = {"graphs": ",d", "median T_mix / (2N/p)": ".3f", "max T_mix / (2N/p)": ".3f",
                 "pN ≤ ln(1/ε)": ",d", "over the bound": ",d"}
#: Number formats of :func:`search_table`: each share of head sets, in %, at two decimals
#: ("4.00", never "4.0" beside "4.29": one precision per column).
SEARCH_FORMATS = {f"{col} (%)": ".2f" for col in ("uniform < fastest", "best grid < fastest",
                                                   "uniform > slowest")}
#: Number formats of :func:`lazy_path_table`: the bound, a number of steps, as one.
LAZY_FORMATS = {"2N/p": fmt_steps}
#: Number formats of the table of Theorem 2.8 under its hypothesis, by column label.
HYPOTHESIS_FORMATS = {"ε": "{:g}".format, "(N, p) under the hypothesis": "{:,d}".format,
                      "violations": "{:d}".format, "largest tail / ε": "{:.3f}".format,
                      "violations without the hypothesis": "{:,d}".format}
#: The thresholds of the lazy-path table (around e^-2 = 0.135).
LAZY_EPS = (0.25, 0.2, 0.14, 0.13, 0.1, 0.05)
#: Eq. 18's atom, inside the paper's hypothesis ``F(p-bar) < 1``: ``p_h`` takes the two
#: values with probability 1/2 each, and ``p-bar`` is the lower one.
ATOM_LAW = ((0.5, 0.7), 0.5)
#: The two-point law's name in the table.
ATOM_LABEL = "p_h = 0.5 or 0.7"
#: The numbers of heads of Eq. 18's simulation.
HS = (1, 2, 4, 8, 16)


# ----------------------------------------------------------------- Theorem 2.8 (Section 1)
def bound_table(allm: pd.DataFrame, eps: float) -> pd.DataFrame:
    """Per kind of head and size n (:func:`~bparallel.book.claims.mixing.bound_summary` of a
    :func:`~bparallel.book.claims.mixing.bound_ratios` table): the number of graphs, the
    median and largest ``T_mix / (2N/p)``, the graphs with ``pN <= ln(1/eps)`` (where the
    proof's Hoeffding step says nothing) and those over Theorem 2.8's bound; labelled."""
    summary = bound_summary(allm, eps)
    return labelled(summary[["graphs", "median_ratio", "max_ratio", "small_p_times_n",
                             "exceed"]])


def theorem_2_8_results(allm: pd.DataFrame, eps: float) -> dict[str, Any]:
    """The chapter's ``thm28.*`` values of a :func:`~bparallel.book.claims.mixing.bound_ratios`
    table: graphs, how many exceed ``2N/p``, the largest ratios (overall, against ``t*``, in
    the regime ``pN <= ln(1/eps)`` and per kind of :data:`BOUND_KINDS`), the median per kind,
    the smallest ``pN`` and the ratio of the path and the complete DAG at ``n = 100``."""
    eps = unit_interval(eps, "eps")
    missing = {"kind", "n", "ratio", "t_mix_over_t_star", "p_times_n"} - set(allm)
    if missing:
        raise ValueError(f"allm is missing the columns {sorted(missing)}")
    small = allm.p_times_n <= math.log(1 / eps)
    out: dict[str, Any] = {
        "thm28.graphs": len(allm),
        "thm28.exceed": (allm.ratio > 1).sum(),
        "thm28.max_ratio": allm.ratio.max(),
        "thm28.max_T_over_tstar": allm.t_mix_over_t_star.max(),
        "thm28.min_pN": allm.p_times_n.min(),
        "thm28.small_pN.count": small.sum(),
        "thm28.small_pN.max_ratio": allm.ratio[small].max(),
    }
    for kind in BOUND_KINDS:
        ratio = allm[allm.kind == kind].ratio
        out[f"thm28.{kind.replace(' ', '_')}.max_ratio"] = ratio.max()
        out[f"thm28.{kind.replace(' ', '_')}.median_ratio"] = ratio.median()
    for kind in ("path", "complete"):
        row = allm[(allm.kind == kind) & (allm.n == 100)]
        out[f"thm28.{kind}.n100.ratio"] = row.ratio.item()
        if kind == "complete":  # Eq. 5's equality 2N/max p_h = min_h T_mix, for one head
            out["thm28.complete.n100.t_mix"] = int(row.t_mix.item())
            out["thm28.complete.n100.bound"] = row.bound_2n_over_p.item()
    return out


@dataclass(frozen=True)
class BinomialBound:
    """The proof of Theorem 2.8 made exact on a grid of ``p`` (:attr:`p`) and ``N``
    (:attr:`N`): :attr:`tails` is the lazy path's TV distance at ``t = floor(2N/p)``
    (:func:`~bparallel.book.claims.mixing.binomial_tail_at_bound`), :attr:`ratios` the
    worst case ``t*(N, p) / (2N/p)`` over all chains
    (:func:`~bparallel.book.claims.mixing.worst_case_bound_ratio`), both ``(len(N), len(p))``."""

    p: NDArray[np.float64]
    N: NDArray[np.int64]
    tails: NDArray[np.float64]
    ratios: NDArray[np.float64]

    def results(self) -> dict[str, float]:
        """``sup_tail_at_bound`` and ``sup_worst_case_ratio``: the largest of each."""
        return {"sup_tail_at_bound": self.tails.max(), "sup_worst_case_ratio": self.ratios.max()}


def binomial_bound_grid(
    eps: float, N: tuple[int, ...] = (1, 2, 3, 5, 10, 30, 100), num_p: int = 1200
) -> BinomialBound:
    """:class:`BinomialBound` on ``num_p`` values of ``p`` spaced geometrically in
    ``[1e-3, 1]`` and the ``N`` given (the chapter draws the first five)."""
    eps = unit_interval(eps, "eps")
    num_p = positive_int(num_p, "num_p")
    p_grid = np.geomspace(1e-3, 1, num_p)
    Ns = np.array(N)
    tails = binomial_tail_at_bound(Ns[:, None], p_grid)          # lazy path at t = 2N/p
    ratios = worst_case_bound_ratio(Ns[:, None], p_grid, eps)    # t*(N, p) / (2N/p)
    return BinomialBound(p_grid, Ns, tails, ratios)


def lazy_path_table(eps_values: tuple[float, ...] = LAZY_EPS) -> pd.DataFrame:
    """The two-node lazy path with ``p = 0.001``
    (:func:`~bparallel.book.claims.mixing.lazy_path_eps_table`): its exact mixing time
    against ``2N/p`` per ``eps``; the bound holds exactly when ``eps >= e^-2``. Labelled."""
    return labelled(lazy_path_eps_table(list(eps_values), n=2, p=0.001))


def hypothesis_check(N_max: int = 200) -> tuple[pd.DataFrame, dict[str, float]]:
    """Theorem 2.8 under the paper's hypothesis ``exp(-pN) <= epsilon``
    (:func:`~bparallel.book.claims.mixing.theorem_2_8_under_hypothesis`, ``N <= N_max``): the
    table (labelled) and the chapter's ``thm28.hypothesis.*`` values: the ``epsilon`` range,
    ``N_max``, the cases and violations in all, the largest tail over ``epsilon`` and the
    violations once the hypothesis is dropped."""
    table = theorem_2_8_under_hypothesis(N_max=N_max)
    out = {"thm28.hypothesis.eps_max": table.eps.max(), "thm28.hypothesis.eps_min": table.eps.min(),
           "thm28.hypothesis.N_max": N_max, "thm28.hypothesis.cases": int(table.cases.sum()),
           "thm28.hypothesis.violations": int(table.violations.sum()),
           "thm28.hypothesis.max_tail_over_eps": table.max_tail_over_eps.max(),
           "thm28.hypothesis.violations_without": int(table.violations_without.sum())}
    return labelled(table), out


# ----------------------------------------------------------------------- Eq. 20 (Section 1)
def eq20_table(checks: pd.DataFrame) -> pd.DataFrame:
    """The share of combinations for which each inequality of Eq. 20 and Eq. 3 holds, per
    kind of pair (:func:`~bparallel.book.claims.mixing.eq20_checks`), one row per check;
    labelled."""
    return labelled(checks.groupby("kind").mean().T)


def eq20_results(checks: pd.DataFrame) -> dict[str, float]:
    """The chapter's ``eq20.*`` values: the share of unweighted and of weighted pairs for
    which Eq. 20's left side holds, and of all pairs for its right side."""
    if "kind" not in checks:
        raise ValueError("checks has no column 'kind': pass eq20_checks(pairs)")
    left = checks.groupby("kind").eq20_left_holds.mean()
    return {"eq20.left.frac_holds.unweighted": left["unweighted pair"],
            "eq20.left.frac_holds.weighted": left["weighted pair"],
            "eq20.right.frac_holds": checks.eq20_right_holds.mean()}


# --------------------------------------------------------- Section 2.2 and Eq. 5 (Section 2)
Store = dict[tuple[str, int, int], tuple[NDArray[np.float64], MixingComparison]]


def search_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`~bparallel.book.claims.mixing.mixing_search_table` indexed by search, size and
    number of heads; labelled."""
    return labelled(table.set_index(["search", "n", "num_heads"]))


def mixing_search_results(store: Store, table: pd.DataFrame) -> dict[str, Any]:
    """The chapter's ``mixing.*`` values of a :func:`~bparallel.book.claims.mixing.mixing_search`
    store and its table: per ``(search, n, H)`` the head sets and how many mix faster than
    the fastest head (uniform, best grid weights) or slower than the slowest; for the pairs
    on 5 nodes these as shares and the largest gains and loss (Eq. 5); for the random pairs
    the totals."""
    out: dict[str, Any] = {}
    for (search, n, H), (_, mc) in store.items():
        key = f"mixing.{search}.n{n}.H{H}"
        out.update({f"{key}.sets": mc.heads.shape[0],
                    f"{key}.uniform_faster": mc.uniform_beats_fastest.sum(),
                    f"{key}.best_faster": mc.best_beats_fastest.sum(),
                    f"{key}.uniform_slower": mc.uniform_slower_than_slowest.sum()})
    m5 = store_entry(store, ("exhaustive", 5, 2))[1]
    rand = table[(table.search == "random") & (table.num_heads == 2)]
    gain_u, gain_b = m5.fastest - m5.uniform, m5.fastest - m5.best
    key = "mixing.exhaustive.n5.H2"
    out.update({f"{key}.uniform_faster_frac": m5.uniform_beats_fastest.mean(),
                f"{key}.best_faster_frac": m5.best_beats_fastest.mean(),
                f"{key}.uniform_slower_frac": m5.uniform_slower_than_slowest.mean(),
                "mixing.random.H2.sets": rand.head_sets.sum(),
                "mixing.random.H2.uniform_faster": rand.uniform_faster.sum(),
                f"{key}.max_gain_best": gain_b.max(), f"{key}.max_gain_uniform": gain_u.max(),
                f"{key}.max_loss_uniform": -gain_u.min()})
    return out


@dataclass(frozen=True)
class PairExample:
    """A pair of heads and their equal-weight combination, on exact rationals:
    :attr:`index` in the store, :attr:`edges` per head, :attr:`matrices` ``[W^(1), W^(2),
    W-bar]`` (:class:`~fractions.Fraction` entries), :attr:`t_mix` of each (Definition 2.7),
    :attr:`best` the best grid combination's mixing time (floating point) and :attr:`which`
    (``"faster"``: faster than both heads; ``"slower"``: slower than both)."""

    index: int
    edges: list[list[tuple[int, int]]]
    matrices: list[list[list[Fraction]]]
    t_mix: list[int]
    best: int
    which: str

    def results(self) -> dict[str, int]:
        """``T_head1``, ``T_head2``, ``T_uniform``; for a speed-up (the example Eq. 5 speaks
        to) also ``T_best``."""
        out = {"T_head1": self.t_mix[0], "T_head2": self.t_mix[1], "T_uniform": self.t_mix[2]}
        if self.which == "faster":
            out["T_best"] = self.best
        return out


def order_by_eps(n: int = 5) -> tuple[pd.DataFrame, dict[str, float]]:
    """The mixing-order counts over all pairs on ``n`` nodes at each ``epsilon`` of
    :data:`~bparallel.book.claims.mixing.ORDER_EPS`
    (:func:`~bparallel.book.claims.mixing.mixing_order_by_eps`): the table (labelled) and the
    chapter's ``mixing.by_eps.e<i>.*`` values (``eps``, ``uniform_faster``,
    ``uniform_slower``), in that order of ``epsilon``."""
    table = mixing_order_by_eps(n)
    out: dict[str, float] = {}
    for i, row in enumerate(table.itertuples()):
        out.update({f"mixing.by_eps.e{i}.eps": row.eps,
                    f"mixing.by_eps.e{i}.uniform_faster": row.uniform_faster,
                    f"mixing.by_eps.e{i}.uniform_slower": row.uniform_slower})
    return labelled(table.set_index("eps")), out


def pair_example(store: Store, which: str, eps: float, n: int = 4) -> PairExample:
    """The pair of heads on ``n`` nodes (exhaustive search) with the fewest edges whose
    equal-weight combination mixes strictly faster than both heads (``which="faster"``) or
    strictly slower (``"slower"``), as :class:`PairExample`, its walk matrices and mixing
    times recomputed on exact rationals
    (:func:`~bparallel.book.claims.mixing.exact_combination_mixing`)."""
    one_of(which, "which", ("faster", "slower"))
    A_pairs, mc = store_entry(store, ("exhaustive", n, 2))
    mask = mc.uniform_beats_fastest if which == "faster" else mc.uniform_slower_than_slowest
    k = fewest_edges_index(A_pairs, mask)
    edges = [graphs.edges_from_adjacency(a) for a in A_pairs[k]]
    mats, T = exact_combination_mixing(edges, n, [0.5, 0.5], eps)
    return PairExample(k, edges, mats, T, int(mc.best[k]), which)


def matrices_table(example: PairExample) -> pd.DataFrame:
    """The exact walk matrices of :class:`PairExample`'s heads and combination side by side
    (:func:`~bparallel.book.claims.mixing.exact_matrices_table`)."""
    return exact_matrices_table(example.matrices)


# ------------------------------------------------------------ Eqs. 16-19 (Section 3)
@dataclass(frozen=True)
class BestHeadStudy:
    """Eq. 18 simulated: :attr:`table` (the rows of
    :func:`~bparallel.book.claims.mixing.best_head_simulation` per law, then those of
    :func:`~bparallel.book.claims.mixing.atom_best_head_table` for the two-point law of
    :data:`ATOM_LAW`),
    :attr:`laws` the continuous laws in order, :attr:`sims` their frames and :attr:`pbar_dag`
    the threshold of the weighted DAGs (the 80th percentile of their ``p_h``)."""

    table: pd.DataFrame
    laws: list[str]
    sims: list[pd.DataFrame]
    pbar_dag: float
    atom_draws: NDArray[np.float64]

    def shown(self) -> pd.DataFrame:
        """Simulated, theory and z per law (rows) and ``H`` (columns); labelled."""
        return labelled(self.table.pivot(index="num_heads", columns="law",
                                         values=["simulated", "theory", "z"])).T.dropna(how="all")

    def results(self) -> dict[str, float]:
        """The chapter's ``eq18.*`` values: per continuous law (keyed by the first word of its
        name, lower case) and ``H`` the theory and the simulation, the largest ``|z|`` and the
        weighted DAGs' threshold."""
        out: dict[str, float] = {}
        for name, sim in zip(self.laws, self.sims, strict=True):
            law = name.split(" ")[0].lower()  # "uniform(0,", "beta(2,", "weighted": the keys
            for H, simulated, theory in zip(sim.num_heads, sim.simulated, sim.theory,
                                            strict=True):
                out[f"eq18.{law}.H{H}.theory"] = theory
                out[f"eq18.{law}.H{H}.simulated"] = simulated
        out["eq18.max_abs_z"] = self.table.z.dropna().abs().max()
        out["eq18.weighted_dags.pbar"] = self.pbar_dag
        values, pbar = ATOM_LAW
        atom = self.table[self.table.law.str.startswith(ATOM_LABEL)]
        le = atom[atom.law.str.contains("≤")]
        lt = atom[atom.law.str.contains("<")]
        out.update({"eq18.atom.p_low": values[0], "eq18.atom.p_high": values[1],
                    "eq18.atom.pbar": pbar, "eq18.atom.F": float(np.mean(self.atom_draws <= pbar))})
        for H, sim, th_le, th_lt in zip(le.num_heads, le.simulated, le.theory, lt.theory,
                                        strict=True):
            out[f"eq18.atom.H{H}.simulated"] = sim
            out[f"eq18.atom.H{H}.theory"] = th_le
            out[f"eq18.atom.H{H}.theory_left_limit"] = th_lt
        return out


def best_head_study(num_trials: int, rng: np.random.Generator) -> BestHeadStudy:
    """Eq. 18 (``Pr(max_h p_h >= p-bar) = 1 - F(p-bar)^H``) simulated for ``H`` in :data:`HS`
    with ``num_trials`` trials per ``H``, for ``p_h ~ Uniform(0, 1)`` (``p-bar = 0.7``),
    ``Beta(2, 5)`` (0.5), the forward probabilities of weighted random DAGs (``n = 10``,
    density 0.3; ``F`` estimated from a separate pool) and the two-point law of
    :data:`ATOM_LAW` (``p_h`` 0.5 or 0.7 with probability 1/2 each, ``p-bar = 0.5``): an atom
    at ``p-bar`` with ``F(p-bar) = 1/2 < 1``, inside the paper's hypothesis (unweighted
    DAGs, whose ``p_h`` is always 1/2, have ``F(1/2) = 1``, a case the paper excludes).

    Draws from ``rng`` in this order: the pool, then per law and per ``H`` the simulation,
    then the two-point law."""
    from scipy import stats

    num_trials = positive_int(num_trials, "num_trials")
    Hs = np.array(HS)
    pool = weighted_forward_probabilities(num_trials, 10, 0.3, 1.0, rng)
    pbar_dag = float(np.round(np.quantile(pool, 0.8), 2))
    dists: dict[str, tuple[Callable[[Any], Any], float, float, int]] = {
        # name: (draw(shape), p̄, F(p̄), size of the pool F was estimated from)
        "Uniform(0, 1)": (lambda size: rng.random(size), 0.7, 0.7, 0),
        "Beta(2, 5)": (lambda size: stats.beta(2, 5).rvs(size, random_state=rng), 0.5,
                       float(stats.beta(2, 5).cdf(0.5)), 0),
        "weighted DAGs (empirical)": (
            lambda size: weighted_forward_probabilities(size, 10, 0.3, 1.0, rng),
            pbar_dag, float(cdf_below(pool, pbar_dag)), len(pool)),
    }
    sims = [best_head_simulation(draw, pbar, F, Hs, num_trials, pool_size=pool_size,
                                 label=name)
            for name, (draw, pbar, F, pool_size) in dists.items()]
    # an atom at p-bar inside the paper's hypothesis: F(p-bar) = Pr(p <= p-bar) = 1/2 < 1
    values, pbar = ATOM_LAW
    p_atom = rng.choice(np.array(values), size=num_trials)
    table = lazy_pandas().concat([*sims, atom_best_head_table(p_atom, Hs, pbar, ATOM_LABEL)],
                                 ignore_index=True)
    return BestHeadStudy(table, list(dists), sims, pbar_dag, p_atom)
