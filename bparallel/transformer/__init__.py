"""Section 4.1 in torch: the tasks' data, the Transformer, its attention kernels, training
with resumable checkpoints (on a fixed training set, :mod:`~bparallel.transformer.train`,
or on fresh data every step, :mod:`~bparallel.transformer.fresh`, its runs designed in
:mod:`~bparallel.transformer.fresh_design`, with the learning measures of
:mod:`~bparallel.transformer.learning`; the files both write, RNG states and weights files:
:mod:`~bparallel.transformer.checkpoints`), the proxies measured on a trained model, head
ablation and importance, and the model infrastructure the book uses: the shipped models
(:mod:`~bparallel.transformer.shipped`) and the content-addressed metrics cache
(:mod:`~bparallel.transformer.metrics_cache`).

Imports :mod:`bparallel`'s theory layer (``proxies``); never the book layer.
"""
