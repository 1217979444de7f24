"""Section 4's chapters (07-14), one module per chapter, named after the chapter's file:

- ``training`` (07_training): the models' training, their settings and machines;
- ``proxies`` (08_proxies): Algorithm 1 exactly and by sampling, the claims of Tables 1-4
  and their agreement with the published tables;
- ``amplification`` (09_amplification): Tables 5-6, the best head against the combination;
- ``as_defined`` (10_section4_as_defined): the measures as defined and the knockouts,
  ``as_defined_verdicts``: the chapter's verdicts by the book's one rule, and
  ``as_defined_studies``: its measures of the shipped models through the metrics cache, and
  ``as_defined_report``: the tables it shows and the values it records;
- ``across_seeds`` (11_across_seeds): the tables it shows and the values it records, and
  ``across_seeds_stats``: what it computes, Tables 1-6 and the head-count effects over
  seeds;
- ``graph_tasks`` (12_graph_tasks): the graph-task models' rows, summaries and verdicts,
  ``graph_design``: the arms, configurations and seeds of the same chapter's controlled
  experiment on fresh data, ``graph_learning``: its learning times by one rule,
  ``graph_pilots``: the pilots that chose histogram's recipe and budget,
  ``graph_early``: its graphs before learning (the early step and the proxies' rank tests
  there), ``graph_experiment``: that experiment's tests and verdicts, from the runs'
  manifests, ``graph_families``: its verdicts read by the primary family stated before the
  controls, ``graph_common``: its accuracy at a common step, ``seed_unit``: its
  within-configuration tests with the seed as the unit, ``graph_predictors``: its horse
  race of the design's quantities, the baselines and the graph measures,
  ``graph_spectral``: the attention chain's spectral gap there, ``graph_controls``: the
  controls of its reversal (learning rates, one recipe), read once complete, and
  ``graph_causal``: its causal tests, which run the models;
- ``circuit`` (13_circuit): when each part of the induction circuit forms through
  training and the hypotheses on what the phase change waits for, and
  ``circuit_knockouts``: the causal check, the circuit's heads knocked out, and
  ``circuit_report``: the tables it shows and the values it records;
  ``circuit_steps``: the previous-token head's layer as the paper reads a graph, at the
  replayed steps through the phase change;
- ``explorer`` (14_explorer): the model explorer's data files and page,
  ``explorer_catalogue``: which models it offers (the finite-data models and chapter 12's
  fresh-data ones), read from the manifests, and ``explorer_steps``: chapter 13's two runs
  through training, at their replayed steps.

Beneath them, what several chapters share, each named for what it is:

- ``published``: the paper's published Tables 1-6 and the agreement with them (08, 09, 11);
- ``authors_columns``: the authors' checkpoints measured (or their recorded values read) and set
  beside the published tables and the retrained seeds, the verdict on the numbers (08, 09);
- ``tables``: Tables 1-6 measured on the book's models (08, 09, 11, ``python -m bparallel
  evaluate``);
- ``statistics``: intervals across seeds, Holm, the noise floor and the verdict rules
  (10, 11, 12), and ``rank_tests``: the rank tests over cells it judges, each with the
  smallest effect it can find;
- ``models``: chapter 12's model collections (graph-task models, fresh-data runs, the names
  of its arms) and which profile ``"auto"`` means for them;
- ``measures``: the one call that measures a collection of models (one pass per model and
  set of sequences, through the metrics cache) for every chapter (08-12).

A chapter's module imports the shared ones, never another chapter's (chapter 08 reads the
training settings of chapter 07, :func:`bparallel.book.section4.training.model_settings`,
from the chapter's notebook).
"""
