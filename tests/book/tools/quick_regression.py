"""The quick regression of every chapter (``test_regress_quick.py``, marked ``long``:
``tests/conftest.py`` schedules it first, so that the other pytest-xdist worker shares
everything else while it runs). What the last book build ran at a profile is compared from
what it wrote (:mod:`bparallel.book.tools.from_build`), the rest is run here."""

from __future__ import annotations

import argparse
import io
import shutil

from bparallel.book.tools import regress as rg


def passed_in_the_build(profile: str) -> list[str]:
    """The chapters the last book build ran at ``profile``, each asserted to pass against
    its reference as a regression run of it would."""
    from bparallel.book.tools import from_build

    built = from_build.compare_build(profile=profile)
    for name, (_, rows) in built.items():
        bad = [r for r in rows if r.verdict != "PASS"]
        assert not bad, rg.format_table(f"{name} ({profile}, from the build)", bad)
    return sorted(built)


def run_quick(tmp_path) -> None:
    """The quick regression of every chapter: from the build where it ran them, else run
    here (the chapters side by side on this worker's share of the cores)."""
    built = passed_in_the_build("quick")
    names = [n for n in rg.available_notebooks() if n not in built]
    for name in rg.available_notebooks():
        assert (rg.reference_dir() / "quick" / f"{name}.json").is_file(), name
    if names:
        out = io.StringIO()
        args = argparse.Namespace(profile="quick", notebooks=names, parameter=[],
                                  output_dir=str(tmp_path), update=False, timeout=600,
                                  jobs=None, verbose=False, retries=2)
        assert rg.run(args, out=out) == 0, out.getvalue()
    shutil.rmtree(tmp_path, ignore_errors=True)
