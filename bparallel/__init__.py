"""bparallel: the graph theory and experiments of *Beyond Parallelism* (arXiv 2507.02944).

Module map (one module per idea of the paper):

- :mod:`bparallel.graphs`   Defs 2.1-2.3, 3.1, 3.6: edge lists -> W, Delta, combinations
- :mod:`bparallel.markov`   Defs 2.4, 2.7, Thm 2.8: stationary distributions, mixing, hitting
- :mod:`bparallel.fidelity` Defs 3.2-3.12, Remark 3.7
- :mod:`bparallel.examples` Examples 3.8 and 3.13
- :mod:`bparallel.exact`    an independent exact (rational) reference for cross-checks
- :mod:`bparallel.ensembles` the claims of Sections 2-3 on graph ensembles (batched)
- :mod:`bparallel.playground`, :mod:`bparallel.webplayground` the toy-DAG playgrounds
- :mod:`bparallel.data`, :mod:`bparallel.model`, :mod:`bparallel.train` Section 4.1
- :mod:`bparallel.proxies`  Algorithms 1-2 on attention tensors (paper / definition modes)
- :mod:`bparallel.evaluate` Tables 1-6 and Figure 4
- :mod:`bparallel.experiments` which models the book uses; shipping paper-profile weights
- :mod:`bparallel.results`, :mod:`bparallel.regress` results JSON and the regression runner
"""

__version__ = "0.1.0"
