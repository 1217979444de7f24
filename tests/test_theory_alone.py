"""The theory layer's tests need only numpy and the theory's own dependencies (issue #74):
``pytest tests/theory`` passes where torch, pandas, matplotlib and the book's packages
cannot be imported. No numpy-only environment can be installed offline, so the run below
makes them unimportable (``tests/numpy_only/sitecustomize.py`` on ``PYTHONPATH``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKER = ROOT / "tests" / "numpy_only"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BLOCKER), str(ROOT)])
    # the installed pytest plugins are not the theory's: only hypothesis's is loaded
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def test_the_blocker_blocks_the_layers_above_and_their_dependencies():
    code = ("import importlib\n"
            "for name in ('torch', 'pandas', 'matplotlib', 'bparallel.book',\n"
            "             'bparallel.transformer'):\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ModuleNotFoundError:\n"
            "        continue\n"
            "    raise SystemExit(name + ' imported')\n"
            "import numpy, scipy, bparallel, bparallel.proxies, bparallel.ensembles\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_theory_tests_pass_with_numpy_alone():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "hypothesis.extra.pytestplugin", "tests/theory"],
        env=_env(), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
