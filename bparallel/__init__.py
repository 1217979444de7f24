"""bparallel: the graph theory and experiments of *Beyond Parallelism* (arXiv 2507.02944).

Module map (one module per idea of the paper):

- :mod:`bparallel.graphs`   Defs 2.1-2.3, 3.1, 3.6: edge lists -> W, Delta, combinations
- :mod:`bparallel.markov`   Defs 2.4, 2.7, Thm 2.8: stationary distributions, mixing, hitting
- :mod:`bparallel.fidelity` Defs 3.2-3.12, Remark 3.7
- :mod:`bparallel.examples` Examples 3.8 and 3.13
"""

__version__ = "0.1.0"
