"""Section 4.1 in torch, by idea, imports one way (each module imports only those above
it in this list):

- :mod:`~bparallel.transformer.data` (the tasks' sequences), :mod:`~bparallel.transformer.attention`
  and :mod:`~bparallel.transformer.model` (the Transformer);
- :mod:`~bparallel.transformer.design` (what a run is: profiles, head counts, seeds, names)
  and :mod:`~bparallel.transformer.runtime` (device, threads, hardware);
- measuring, which never imports training: :mod:`~bparallel.transformer.patterns`
  (attention and head weights out of a model), :mod:`~bparallel.transformer.ablation`,
  :mod:`~bparallel.transformer.importance`, :mod:`~bparallel.transformer.measure` and the
  content-addressed :mod:`~bparallel.transformer.metrics_cache`, whose key hashes this
  measuring code only;
- training: :mod:`~bparallel.transformer.checkpoints` (the files runs write, manifests),
  :mod:`~bparallel.transformer.train` (a fixed training set, in epochs),
  :mod:`~bparallel.transformer.fresh_design`, :mod:`~bparallel.transformer.learning` and
  :mod:`~bparallel.transformer.fresh` (fresh data every step, to convergence or a budget);
- :mod:`~bparallel.transformer.shipped`: the models the book uses, and
  :func:`~bparallel.transformer.shipped.load_model` for any model file.

Imports :mod:`bparallel`'s theory layer (``proxies``); never the book layer.
"""
