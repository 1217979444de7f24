"""bparallel: the graph theory and experiments of *Beyond Parallelism* (arXiv 2507.02944).

Three layers, imports pointing one way (theory <- Transformer <- book):

- **Theory, Sections 2-3 and Algorithms 1-2** (numpy only):
  :mod:`bparallel.graphs` (Defs 2.1-2.3, 3.1, 3.6: edge lists -> W, Delta),
  :mod:`bparallel.markov` (Defs 2.4, 2.7, Thm 2.8), :mod:`bparallel.fidelity`
  (Defs 3.2-3.12), :mod:`bparallel.examples` (Examples 3.8, 3.13), :mod:`bparallel.exact`
  (exact rationals for cross-checks), :mod:`bparallel.ensembles` (batched graph ensembles),
  :mod:`bparallel.proxies` (Algorithms 1-2 on attention patterns).
- **The Transformer, Section 4.1** (torch): :mod:`bparallel.transformer` -- ``data``,
  ``model``, ``attention``, ``train``, ``measure`` (the proxies on a trained model),
  ``ablation`` and ``importance`` (which heads matter), ``shipped`` and ``metrics_cache``
  (the models the book uses, their cached measures).
- **Book layer** (pandas, matplotlib, ipywidgets): :mod:`bparallel.book`, in three rooms --
  chapter science (``claims``, ``tables``, ``published``, ``seeds``, ``graph_tasks``, ...),
  :mod:`bparallel.book.render` (tables, figures, glue, playground page) and
  :mod:`bparallel.book.tools` (the command line, regression runner, sweep).

Shared helpers: :mod:`bparallel._io` (atomic writes).
"""

__version__ = "0.1.0"
