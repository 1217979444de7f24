"""The chapter tables of Sections 2-3: each claim of the paper tested on graph ensembles.

Built on the batched primitives of :mod:`bparallel.ensembles` (and the exact theory of
:mod:`bparallel.markov` / :mod:`bparallel.fidelity`), one function per experiment, each
returning a pandas DataFrame and taking an explicit ``seed`` (an int or a shared
``np.random.Generator``, consumed in a documented order, so a chapter that passes one
generator through several calls gets one stream).

- :mod:`~bparallel.book.claims.mixing`: Section 2 (chapter 03): Theorem 2.8's bound, the
  head-set searches, the best-head laws of Eqs. 16-19;
- :mod:`~bparallel.book.claims.fidelity_claims`: Section 3 (chapter 06): amplification of minimax
  fidelity, its features, the mixing-fidelity trade-off;
- :mod:`~bparallel.book.claims.head_sets`: the head sets both searches walk (Sections 2.2
  and 3.1), in one draw order;
- :mod:`~bparallel.book.claims.labels`: the label a reader sees for each column identifier;
- :mod:`~bparallel.book.claims.mixing_report` and
  :mod:`~bparallel.book.claims.fidelity_report`: what chapters 03 and 06 show and record of
  those frames (their tables, glued with the captions in the prose, and their results
  keys); not re-exported here: the chapters import them by name.

Every frame is keyed by snake_case identifiers (``t_mix``, ``amplified_uniform_pct``), so
code and tests index columns by name; :data:`LABELS` holds the label a reader sees for each
identifier and :func:`labelled` renames a frame for display. This package re-exports the
modules' public names, so ``claims.theorem_2_8_ensemble`` reads as before.

Chapter-support code: it lives in the book layer because only the chapters need it.
"""

from .fidelity_claims import (
    AMP_TOL,
    FEATURES,
    HORIZON_COLUMNS,
    REMARK_3_7_COLUMNS,
    SEARCH_COLUMNS,
    amplification_features,
    amplification_summary,
    amplification_table,
    amplified_by_jaccard,
    dominated_fraction,
    feature_correlations,
    fidelity_search,
    horizon_sweep,
    remark_3_7_by_size,
    top_amplifying,
    tradeoff_correlation,
    tradeoff_draws,
    tradeoff_table,
)
from .head_sets import head_set_draws, head_sets
from .labels import (
    LABELS,
    labelled,
)
from .mixing import (
    atom_best_head_table,
    best_head_simulation,
    binomial_tail_at_bound,
    bound_ratios,
    bound_summary,
    combination_mixing_frame,
    eq20_checks,
    exact_combination_mixing,
    exact_matrices_table,
    fewest_edges_index,
    head_mixing_frame,
    lazy_path_eps_table,
    mixing_order_by_eps,
    mixing_search,
    mixing_search_table,
    pair_tv_curves,
    theorem_2_8_draws,
    theorem_2_8_ensemble,
    theorem_2_8_under_hypothesis,
    weighted_forward_probabilities,
    worst_case_bound_ratio,
)

__all__ = [
    "AMP_TOL",
    "FEATURES",
    "HORIZON_COLUMNS",
    "REMARK_3_7_COLUMNS",
    "LABELS",
    "SEARCH_COLUMNS",
    "amplification_features",
    "amplification_summary",
    "amplification_table",
    "amplified_by_jaccard",
    "atom_best_head_table",
    "best_head_simulation",
    "binomial_tail_at_bound",
    "bound_ratios",
    "bound_summary",
    "combination_mixing_frame",
    "dominated_fraction",
    "eq20_checks",
    "exact_combination_mixing",
    "pair_tv_curves",
    "exact_matrices_table",
    "feature_correlations",
    "fewest_edges_index",
    "fidelity_search",
    "head_mixing_frame",
    "head_set_draws",
    "head_sets",
    "horizon_sweep",
    "remark_3_7_by_size",
    "labelled",
    "lazy_path_eps_table",
    "theorem_2_8_under_hypothesis",
    "mixing_order_by_eps",
    "mixing_search",
    "mixing_search_table",
    "theorem_2_8_draws",
    "theorem_2_8_ensemble",
    "top_amplifying",
    "tradeoff_correlation",
    "tradeoff_draws",
    "tradeoff_table",
    "weighted_forward_probabilities",
    "worst_case_bound_ratio",
]
