"""The quick regression of every chapter, in two halves of about equal length that the
pytest-xdist workers run side by side from the start (``tests/conftest.py`` schedules
tests marked ``long`` first): ``test_regress_quick_measures.py`` and
``test_regress_quick_graphs.py``. What the last book build ran at a profile is compared
from what it wrote (:mod:`bparallel.book.tools.from_build`), the rest is run here."""

from __future__ import annotations

import argparse
import io
import shutil

from bparallel.book.tools import regress as rg

#: The chapters of the second half: chapter 07 (it trains the quick models) and chapter 12
#: with its appendices; every other chapter is in the first.
GRAPH_HALF = ("07_training", "12_graph_tasks", "12a_graph_runs", "12b_graph_tests",
              "12c_graph_pilots", "12d_graph_dropout", "12e_graph_horse_race",
              "12f_graph_heads", "12g_graph_finite", "12h_graph_controls")


def passed_in_the_build(profile: str) -> list[str]:
    """The chapters the last book build ran at ``profile``, each asserted to pass against
    its reference as a regression run of it would."""
    from bparallel.book.tools import from_build

    built = from_build.compare_build(profile=profile)
    for name, (_, rows) in built.items():
        bad = [r for r in rows if r.verdict != "PASS"]
        assert not bad, rg.format_table(f"{name} ({profile}, from the build)", bad)
    return sorted(built)


def half(which: str) -> list[str]:
    """The chapters of one half (``"graphs"``: :data:`GRAPH_HALF`; ``"measures"``: the
    others), in the repository's order."""
    if which not in ("graphs", "measures"):
        raise ValueError(f"which={which!r}: expected 'graphs' or 'measures'")
    return [n for n in rg.available_notebooks() if (n in GRAPH_HALF) == (which == "graphs")]


def run_half(which: str, tmp_path) -> None:
    """The quick regression of one half: from the build where it ran them, else run here
    (the chapters side by side on this worker's share of the cores)."""
    built = passed_in_the_build("quick")
    names = [n for n in half(which) if n not in built]
    for name in half(which):
        assert (rg.reference_dir() / "quick" / f"{name}.json").is_file(), name
    if names:
        out = io.StringIO()
        args = argparse.Namespace(profile="quick", notebooks=names, parameter=[],
                                  output_dir=str(tmp_path), update=False, timeout=600,
                                  jobs=None, verbose=False, retries=2)
        assert rg.run(args, out=out) == 0, out.getvalue()
    shutil.rmtree(tmp_path, ignore_errors=True)
