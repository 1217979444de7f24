"""Tools: the command line (``python -m bparallel``, :mod:`~bparallel.book.tools.cli`) and
what it runs -- the notebook regression runner (``regress``), the training sweep as
submitit jobs (``sweep``), the chapters' notebook downloads (``downloads``) and the README's
generated findings table (``findings``). No chapter imports these.
"""
