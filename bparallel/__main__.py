"""``python -m bparallel``: runs the command line, :func:`bparallel.book.tools.cli.main`.

The command line lives in the book-tooling layer (it trains, evaluates, sweeps and runs the
notebooks, with torch and pandas); this file imports it only when run, so that importing the
theory layer (:mod:`bparallel`, numpy only) never pulls torch in.
"""

if __name__ == "__main__":
    import sys

    from bparallel.book.tools.cli import main

    sys.exit(main())
