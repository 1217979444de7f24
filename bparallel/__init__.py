"""bparallel: the graph theory and experiments of *Beyond Parallelism* (arXiv 2507.02944).

Three layers, imports pointing one way (theory <- Transformer <- book):

- **Theory, Sections 2-3 and Algorithms 1-2** (numpy only):
  :mod:`bparallel.graphs` (Defs 2.1-2.3, 3.1, 3.6: edge lists -> W, Delta),
  :mod:`bparallel.markov` (Def 2.4, Lemmas 2.5-2.6, Def 2.7 exact, Thm 2.8),
  :mod:`bparallel.absorbing` (absorbing walks in batches: Algorithm 1, Def 2.7 on many
  graphs at once, hitting times), :mod:`bparallel.ranks` (exact rank tests),
  :mod:`bparallel.fidelity`
  (Defs 3.2-3.12), :mod:`bparallel.examples` (Examples 3.8, 3.13), :mod:`bparallel.exact`
  (exact rationals for cross-checks), :mod:`bparallel.ensembles` (batched graph ensembles),
  :mod:`bparallel.proxies` (Algorithms 1-2 on attention patterns).
- **The Transformer, Section 4.1** (torch): :mod:`bparallel.transformer` -- ``data``,
  ``model``, ``attention``; ``design`` and ``runtime`` (what a run is, where it runs);
  ``patterns``, ``measure``, ``ablation``, ``importance`` and ``metrics_cache`` (what a
  trained model does, never importing training); ``checkpoints``, ``train``, ``fresh``
  (training on a fixed set or on fresh data); ``shipped`` (the models the book uses).
- **Book layer** (pandas, matplotlib, ipywidgets): :mod:`bparallel.book`, in three rooms --
  chapter science (``claims``, ``tables``, ``published``, ``seeds``, ``graph_tasks``, ...),
  :mod:`bparallel.book.render` (tables, figures, glue, playground page) and
  :mod:`bparallel.book.tools` (the command line, regression runner, sweep).

Shared helpers: :mod:`bparallel._io` (atomic writes, locks, flat trees of arrays).
"""

__version__ = "0.1.0"
