"""Rendering: how the chapters show their results, and nothing they compute.

``markdown`` (captioned MyST tables, verdict cells), ``plotting`` (every figure, sized for
the text column), ``results`` (``ChapterResults``: glue and the results JSON the regression
runner reads), ``js_playground`` and ``js/`` (the kernel-free playground inlined into the
page), ``js_trainer`` (the training page: TensorFlow.js trains a tiny Transformer in the
page), ``sphinxext`` (the verdict role, the legend and the book's BibTeX).
"""
