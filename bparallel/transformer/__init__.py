"""Section 4.1 in torch, by idea, imports one way (each module imports only those above
it in this list):

- :mod:`~bparallel.transformer.data` (the tasks' sequences), :mod:`~bparallel.transformer.attention`
  and :mod:`~bparallel.transformer.model` (the Transformer);
- :mod:`~bparallel.transformer.evaluation` (accuracy and loss on held-out sequences),
  :mod:`~bparallel.transformer.as_trained` (the same with the model's dropout on, as the
  optimiser saw it; outside the measuring code's key) and
  :mod:`~bparallel.transformer.runtime` (device, threads, hardware);
- measuring, which never imports a run's design or its training:
  :mod:`~bparallel.transformer.patterns` (attention and head weights out of a model),
  :mod:`~bparallel.transformer.ablation`, :mod:`~bparallel.transformer.importance`,
  :mod:`~bparallel.transformer.measure` (the proxies of a model on given sequences, and
  :func:`~bparallel.transformer.measure.training_probe`) and the content-addressed
  :mod:`~bparallel.transformer.metrics_cache`, whose key hashes this measuring code only;
  :mod:`~bparallel.transformer.conditioning` (the condition number of the concatenated
  heads' outputs; outside that key); :mod:`~bparallel.transformer.head_probes` (each head's
  previous-token, induction and copying scores and logit rank, probed through training;
  outside that key);
- what a run is: :mod:`~bparallel.transformer.learning` (learning thresholds, learning time,
  convergence: rules on curves of numbers), :mod:`~bparallel.transformer.arms` (the arms of
  fresh-data training, and the one rule deriving a model's arms),
  :mod:`~bparallel.transformer.design` (both kinds of profile, head counts, seeds, the
  naming rule, the sequences a run trains and is evaluated on) and
  :mod:`~bparallel.transformer.runs` (a run as one value, and every file it owns);
- training: :mod:`~bparallel.transformer.checkpoints` (both checkpoint kinds, weights files,
  manifests) and :mod:`~bparallel.transformer.train` (one loop over epochs of a fixed set
  or steps of fresh data);
- :mod:`~bparallel.transformer.shipped`: the models the book uses, and
  :func:`~bparallel.transformer.shipped.load_model` for any model file;
  :mod:`~bparallel.transformer.replay`: a shipped run's weights at chosen steps, trained
  again from its seed and checked against its manifest;
- sweeps: :mod:`~bparallel.transformer.sweep_runs` (one job: a run, its folders, threads
  and device), :mod:`~bparallel.transformer.sweep_status` (where a sweep stands, and
  snapshots of its unfinished runs) and :mod:`~bparallel.transformer.sweep` (tasks x heads x
  seeds as submitit jobs, ``python -m bparallel sweep``; submitit imported only when jobs
  run);
- :mod:`~bparallel.transformer.authors`: the authors' published checkpoints, read from a
  directory the build names, hash-checked and mapped onto the Transformer (outside the
  measuring code's key).

Imports :mod:`bparallel`'s theory layer (``proxies``); never the book layer.
"""
