"""The quick regression of every chapter (``test_regress_quick.py``, marked ``long``:
``tests/conftest.py`` schedules it first, so that the other pytest-xdist worker shares
everything else while it runs). What the last book build ran at a profile is compared from
what it wrote (:mod:`bparallel.book.tools.from_build`), the rest is run here.

On a machine with AVX-512 kernels, the chapters that measure trained models again
(:data:`~bparallel.book.tools.noise.MEASURING`) run here with numpy, OpenBLAS and torch held
to AVX2 kernels and their metrics cache off (``NOISE_SETTINGS["avx2"]``): the book build ran
them natively at the paper profile, so both widths are checked and each chapter runs once
(before, CI ran them here natively and again under AVX2 in ``make test-avx2``).
``BPARALLEL_QUICK_NATIVE=1`` runs them natively instead."""

from __future__ import annotations

import argparse
import io
import os
import shutil

from bparallel.book.tools import regress as rg
from bparallel.book.tools.noise import MEASURING, NOISE_SETTINGS, environment

#: Set to run the measuring chapters natively even where the CPU has AVX-512.
NATIVE_ENV = "BPARALLEL_QUICK_NATIVE"


def passed_in_the_build(profile: str) -> list[str]:
    """The chapters the last book build ran at ``profile``, each asserted to pass against
    its reference as a regression run of it would."""
    from bparallel.book.tools import from_build

    built = from_build.compare_build(profile=profile)
    for name, (_, rows) in built.items():
        bad = [r for r in rows if r.verdict != "PASS"]
        assert not bad, rg.format_table(f"{name} ({profile}, from the build)", bad)
    return sorted(built)


def under_avx2() -> bool:
    """Whether the measuring chapters run here under AVX2 kernels: the CPU's widest torch
    kernels are AVX-512 and :data:`NATIVE_ENV` is not set."""
    import torch

    wide = torch.backends.cpu.get_cpu_capability().upper().startswith("AVX512")
    return wide and not os.environ.get(NATIVE_ENV)


def _regress(names: list[str], tmp_path, *, no_cache: bool = False) -> None:
    if not names:
        return
    out = io.StringIO()
    args = argparse.Namespace(profile="quick", notebooks=names, parameter=[],
                              output_dir=str(tmp_path), update=False, timeout=600,
                              jobs=None, verbose=False, retries=2, no_cache=no_cache)
    assert rg.run(args, out=out) == 0, out.getvalue()


def run_quick(tmp_path) -> None:
    """The quick regression of every chapter: from the build where it ran them, else run
    here (the chapters side by side on this worker's share of the cores; the measuring ones
    under AVX2 kernels where the CPU has AVX-512, :func:`under_avx2`)."""
    built = passed_in_the_build("quick")
    names = [n for n in rg.available_notebooks() if n not in built]
    for name in rg.available_notebooks():
        assert (rg.reference_dir() / "quick" / f"{name}.json").is_file(), name
    avx2 = [n for n in names if n in MEASURING] if under_avx2() else []
    _regress([n for n in names if n not in avx2], tmp_path / "native")
    with environment(NOISE_SETTINGS["avx2"]):
        _regress(avx2, tmp_path / "avx2", no_cache=True)
    shutil.rmtree(tmp_path, ignore_errors=True)
