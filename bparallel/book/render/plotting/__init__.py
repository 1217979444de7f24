"""Small drawing helpers shared by the chapters (matplotlib imported lazily).

Importing this package puts the book's figure style in place (:func:`use_book_style`): in a
notebook, figures are shown as SVG, drawn at most :data:`TEXT_WIDTH` wide with no text
smaller than :data:`MIN_FONT_PT`, so that on the page every tick label and legend entry is
at least 10 px (the browser tests measure it). Every chapter that draws imports it.

- :mod:`~bparallel.book.render.plotting.style`: the style and its sizes;
- :mod:`~bparallel.book.render.plotting.theory`: the figures of chapters 01-06;
- :mod:`~bparallel.book.render.plotting.trained`: the figures of chapters 07-12;
- :mod:`~bparallel.book.render.plotting.experiment`: chapter 12's fresh-data experiment;
- :mod:`~bparallel.book.render.plotting.formation`: chapter 13's induction circuit.

This package re-exports their public names.
"""

from .experiment import (
    plot_arm_design,
    plot_fresh_learning_curves,
    plot_headline_learning,
    plot_horse_race,
    plot_learning_by_heads,
    plot_proxies_by_heads,
    plot_proxies_through_training,
    plot_recipe_pilot,
)
from .formation import plot_circuit_scores
from .style import (
    MIN_FONT_PT,
    RASTERIZE_ABOVE,
    TEXT_WIDTH,
    use_book_style,
)
from .theory import (
    BOUND_KINDS,
    draw_dag,
    draw_heads,
    plot_amplification_by_horizon_and_size,
    plot_amplification_features,
    plot_amplification_histograms,
    plot_best_head,
    plot_binomial_bound,
    plot_bound_vs_exact,
    plot_combination_mixing,
    plot_computed_vs_closed_form,
    plot_head_pair,
    plot_matrix_powers,
    plot_mixing_bound,
    plot_mixing_weights,
    plot_pair_mixing,
    plot_shortfall,
    plot_tradeoff,
)
from .trained import (
    OUTCOME_STYLE,
    plot_best_head_vs_combined,
    plot_definition_vs_proxy,
    plot_figure4,
    plot_head_count_changes,
    plot_hitting_profiles,
    plot_learning_curves,
    plot_pruning_curves,
    plot_training_curves,
)

__all__ = [
    "plot_circuit_scores",
    "plot_horse_race",
    "BOUND_KINDS",
    "MIN_FONT_PT",
    "OUTCOME_STYLE",
    "RASTERIZE_ABOVE",
    "TEXT_WIDTH",
    "draw_dag",
    "draw_heads",
    "plot_amplification_by_horizon_and_size",
    "plot_amplification_features",
    "plot_amplification_histograms",
    "plot_best_head",
    "plot_best_head_vs_combined",
    "plot_arm_design",
    "plot_fresh_learning_curves",
    "plot_headline_learning",
    "plot_learning_by_heads",
    "plot_proxies_by_heads",
    "plot_proxies_through_training",
    "plot_recipe_pilot",
    "plot_binomial_bound",
    "plot_bound_vs_exact",
    "plot_combination_mixing",
    "plot_computed_vs_closed_form",
    "plot_definition_vs_proxy",
    "plot_figure4",
    "plot_head_count_changes",
    "plot_head_pair",
    "plot_hitting_profiles",
    "plot_learning_curves",
    "plot_matrix_powers",
    "plot_mixing_bound",
    "plot_mixing_weights",
    "plot_pair_mixing",
    "plot_pruning_curves",
    "plot_shortfall",
    "plot_tradeoff",
    "plot_training_curves",
    "use_book_style",
]
