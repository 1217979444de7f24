"""The book layer: what the chapters compute, how they show it, and the tools around them.

Three rooms, one question each (where does a new helper go?):

- **Chapter science, here** (``bparallel.book.*``): the numbers and verdicts a chapter
  reports, beyond the theory and the Transformer layers, and the tables and recorded
  values it builds from them, so that a chapter narrates and calls --
  ``feedforward`` (chapter 01), ``mixing_bound`` (02), ``claims`` (the graph ensembles of
  Sections 2-3 and their design, ``claims.ensemble_design``, chapters 03 and 06),
  ``fidelity_examples`` (04, 05), ``playground`` (the toy DAGs) and ``playground_link``
  (its #pg= links), ``section4`` (chapters 07-13, one module per chapter named after the
  chapter's file, and the pieces several of them share: the published tables, Tables 1-6
  measured, the statistics and verdict rules, chapter 12's model collections; its
  docstring lists them), ``train_it_yourself`` (chapter 15, the training page's facts and
  benchmark), ``verdicts`` (the one verdict vocabulary), ``words`` (the book's
  wording of lists, shared by the pages that write sentences from data). A
  helper that computes something a chapter shows goes here, in its chapter's module; what
  several chapters share goes in a module named for what it is.
- **Rendering**, :mod:`bparallel.book.render`: tables, figures, glue and results files,
  the in-page playground, the Sphinx extension. A helper that only changes how a result
  looks goes there.
- **Tools**, :mod:`bparallel.book.tools`: the command line and what it runs (regression
  runner, sweep, downloads, the README's findings). A command goes there.

The shipped models and the metrics cache are model infrastructure, in the Transformer
layer (:mod:`bparallel.transformer.shipped`, :mod:`bparallel.transformer.metrics_cache`).
Imports the theory and Transformer layers; nothing below imports it.
"""
