"""bparallel: the graph theory and experiments of *Beyond Parallelism* (arXiv 2507.02944).

Three layers, imports pointing one way (theory <- Transformer <- book):

- **Theory, Sections 2-3 and Algorithms 1-2** (numpy only), each definition in one module:

  - :mod:`bparallel.graphs`: Definitions 2.1-2.3, 3.1 and 3.6 (edge lists, the walk matrix
    ``W`` of Eq. 1, the diffusion matrix ``Delta`` of Eq. 21, feedforward checks);
  - :mod:`bparallel.absorbing`: **Definition 2.7's mixing time**, computed for many graphs at
    once (``mixing_times``, the package's one implementation), hitting times and the
    absorbing walks of Algorithm 1;
  - :mod:`bparallel.markov`: Definition 2.4 and Lemmas 2.5-2.6 (stationary distributions),
    ``mixing_time`` (Definition 2.7 on one ``W``, through :mod:`bparallel.absorbing`), the
    bound of Theorem 2.8 and its ingredients;
  - :mod:`bparallel.fidelity`: Definitions 3.2-3.12 (signal at the sink, node and minimax
    fidelity, amplification); :mod:`bparallel.examples`: Examples 3.8 and 3.13;
  - :mod:`bparallel.proxies`: Algorithms 1-2 on attention patterns;
    :mod:`bparallel.ensembles`: batched graph ensembles; :mod:`bparallel.ranks`: rank
    correlations and exact rank tests; :mod:`bparallel.exact`: exact rationals for
    cross-checks.
- **The Transformer, Section 4.1** (torch): :mod:`bparallel.transformer` -- ``data``,
  ``model``, ``attention``, ``evaluation``, ``runtime``; ``patterns``, ``measure``,
  ``ablation``, ``importance`` and ``metrics_cache`` (what a trained model does, never
  importing a run's design or training); ``learning`` and ``design`` (what a run is);
  ``checkpoints`` and ``train`` (one loop, on a fixed set or on fresh data); ``shipped``
  (the models the book uses).
- **Book layer** (pandas, matplotlib, ipywidgets): :mod:`bparallel.book`, in three rooms --
  chapter science (``claims``, ``tables``, ``published``, ``seeds``, ``graph_tasks``, ...),
  :mod:`bparallel.book.render` (tables, figures, glue, playground page) and
  :mod:`bparallel.book.tools` (the command line, regression runner, sweep).

Shared helpers: :mod:`bparallel._io` (atomic writes, locks, flat trees of arrays).
"""

__version__ = "0.1.0"
