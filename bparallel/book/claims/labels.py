"""The labels a reader sees for the identifiers of the claims' frames."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: The label shown to readers for each column (and index) identifier of this module's frames.
LABELS: dict[str, str] = {
    # Theorem 2.8 and Eq. 20 (head_mixing_frame, combination_mixing_frame, bound_ratios)
    "kind": "kind",
    "n": "n",
    "density": "density",
    "p": "p",
    "p_times_n": "pN",
    "t_mix": "T_mix",
    "bound_2n_over_p": "2N/p",
    "t_star": "t*",
    "p_chain": "p_chain",
    "bound_2n_over_max_p_h": "2N/max p_h",
    "bound_2n_over_min_p_h": "2N/min p_h",
    "ratio": "T_mix / (2N/p)",
    "t_mix_over_t_star": "T_mix / t*",
    # bound_summary
    "graphs": "graphs",
    "median_ratio": "median T_mix / (2N/p)",
    "max_ratio": "max T_mix / (2N/p)",
    "max_t_mix_over_t_star": "max T_mix / t*",
    "small_p_times_n": "pN ≤ ln(1/ε)",
    "exceed": "over the bound",
    # lazy_path_eps_table
    "eps": "ε",
    "bound_holds": "bound holds",
    # theorem_2_8_under_hypothesis
    "cases": "(N, p) under the hypothesis",
    "violations": "violations",
    "max_tail_over_eps": "largest tail / ε",
    "violations_without": "violations without the hypothesis",
    # eq20_checks
    "eq20_left_holds": "2N/max p_h ≤ T_mix (Eq. 20, left)",
    "eq3_holds": "T_mix ≤ 2N/p, p of Eq. 12 (Eq. 3)",
    "eq20_right_holds": "T_mix ≤ 2N/min p_h (Eq. 20, right)",
    "p_chain_at_least_eq12": "p_chain ≥ p of Eq. 12",
    # mixing_search_table
    "search": "search",
    "num_heads": "H",
    "head_sets": "head sets",
    "sets": "head pairs",
    "uniform_faster": "uniform < fastest",
    "best_faster": "best grid < fastest",
    "uniform_slower": "uniform > slowest",
    "max_speedup_steps": "max speed-up (steps)",
    "uniform_faster_pct": "uniform < fastest (%)",
    "best_faster_pct": "best grid < fastest (%)",
    "uniform_slower_pct": "uniform > slowest (%)",
    # amplification_summary / amplification_table
    "horizon": "horizon T",
    "amplified_uniform_pct": "amplified, uniform β (%)",
    "mean_amp_uniform": "mean amp., uniform β",
    "max_amp_uniform": "max amp., uniform β",
    "amplified_best_pct": "amplified, best β (%)",
    "max_amp_best": "max amp., best β",
    "worst_nodes_differ_pct": "worst nodes differ (%)",
    "mean_complementarity": "mean complementarity",
    "mean_best_head_phi_min": "mean best-head φ_min",
    # amplification_features
    "amplification": "amplification",
    "amplified": "amplified",
    "jaccard": "jaccard",
    "complementarity": "complementarity",
    "mixed_sequence_share": "mixed-sequence share",
    "new_walk_share": "new-walk share",
    "new_walk_share_limiting": "new-walk share, limiting nodes",
    # remark_3_7_by_size
    "pairs": "pairs",
    "zero_limiting_amplified": "no new walk at limiting nodes (share of amplified)",
    "mean_limiting_amplified": "mean share at limiting nodes, amplified",
    "mean_limiting_not_amplified": "mean share at limiting nodes, not amplified",
    "zero_worst_amplified": "no new walk at the worst node (share of amplified)",
    "mean_worst_amplified": "mean share at the worst node, amplified",
    # top_amplifying
    "pair": "pair",
    "phi_min_head_1": "φ_min head 1",
    "phi_min_head_2": "φ_min head 2",
    "phi_min_uniform": "φ_min multi (β = 1/2)",
    "best_beta_1": "best β_1",
    "amp_at_best_beta": "amp. at best β",
    # tradeoff_table
    "phi_min": "φ_min",
    # best_head_simulation, atom_best_head_table (Eq. 18)
    "law": "F",
    "pbar": "p̄",
    "simulated": "simulated",
    "theory": "1 - F(p̄)^H",
    "z": "z",
}


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for display: every identifier of :data:`LABELS` that names a column or a
    row (at any level of the axes) or an axis becomes its label; other names are kept."""
    out = frame.rename(columns=LABELS, index=LABELS)
    out.columns = out.columns.set_names([LABELS.get(x, x) for x in out.columns.names])
    out.index = out.index.set_names([LABELS.get(x, x) for x in out.index.names])
    return out


def lazy_pandas():
    """The pandas module, imported when first needed."""
    import pandas as pd  # lazy: pandas is a dependency of the book, not of the package

    return pd
