"""Fixtures every folder of the tests shares, and the fast tier.

The tests are arranged like the package: ``theory/`` (the theory layer), ``transformer/``
(the Transformer floor), ``book/`` (the book layer, one folder per room of ``bparallel/book/``:
``claims/``, ``section4/``, ``render/``, ``tools/``, with the tests of the layer's own modules
beside them and ``pages/`` for the book's prose and frame),
``browser/`` (the built book and the widgets in headless Chromium; their fixtures are
``browser/conftest.py``), and ``test_layers.py`` on the package as a whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

#: What each pytest-xdist worker shares of the cores: its torch and BLAS threads and the
#: package's metrics workers (``regress.SHARED_VARS``, pinned by tests/book/tools/test_regress.py).
SHARED_VARS = ("BPARALLEL_WORKERS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _share_the_cores_between_workers() -> None:
    """Under pytest-xdist, each worker gets ``cores // workers`` threads of torch and BLAS
    and as many metrics workers (a variable the caller has set is kept). Set before numpy
    or torch is imported, so that both read it. Without it, each of two workers on two cores
    starts a thread per core and their spinning threads wait on each other: two exports of
    the explorer side by side took 197 s against 51 s with one thread each."""
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if count and count.isdigit() and int(count) > 1:
        share = str(max(1, (os.cpu_count() or 1) // int(count)))
        for var in SHARED_VARS:
            os.environ.setdefault(var, share)


_share_the_cores_between_workers()
ROOT = Path(__file__).resolve().parents[1]
#: The explorer's export as the book ships it: sequences shown, and reference sequences.
EXPLORER_SEQUENCES = 8
EXPLORER_REFERENCE_SEQUENCES = 100


@pytest.fixture
def one_torch_thread():
    """Tiny models run fastest, and steadiest on a shared machine, on one torch thread."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------------- the fast tier
#: The folder whose every test is slow: it opens the built book and the widgets in a
#: browser. Single slow tests elsewhere (notebook regressions) carry ``@pytest.mark.slow``.
SLOW_FOLDER = ROOT / "tests" / "browser"


def pytest_collection_modifyitems(config, items):
    """Mark the browser tests (those marked ``browser`` and all of :data:`SLOW_FOLDER`)
    ``slow``, so that ``pytest -m "not slow"`` is the fast tier: the package's own tests, in a
    few minutes; and run the tests marked ``long`` first."""
    for item in items:
        if item.get_closest_marker("browser") or SLOW_FOLDER in item.path.parents:
            item.add_marker(pytest.mark.slow)
    # the tests that run for minutes go first: pytest-xdist hands out files in this order,
    # and a long one handed out last would leave the other worker idle while it runs
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
def explorer_export(tmp_path_factory, worker_id) -> tuple[Path, list[dict[str, Any]]]:
    """Every model the explorer offers, exported as the book exports them: the folder of
    data files (a copy of its own) and the catalogue (``tests/book/section4/test_explorer.py``
    checks them against torch and the package, ``tests/browser/test_explorer_browser.py``
    opens them).

    The export is measured once per run of the suite: the book build's own export
    (``explorer.BUILD_DIR``) where it was made from this package, these models and these
    settings (``explorer.export_key``), else one export that the first pytest-xdist worker
    writes while the others wait on its lock."""
    import shutil

    from filelock import FileLock

    from bparallel.book.section4 import explorer

    settings = {"num_sequences": EXPLORER_SEQUENCES,
                "reference_sequences": EXPLORER_REFERENCE_SEQUENCES}
    base = tmp_path_factory.getbasetemp()
    shared = (base if worker_id == "master" else base.parent) / "explorer-export"
    with FileLock(f"{shared}.lock"):
        key = explorer.export_key(**settings)
        source = explorer.BUILD_DIR
        if explorer.read_export(source, key) is None:
            source = shared
            explorer.cached_export(shared, **settings)
    out = tmp_path_factory.mktemp("explorer-data")
    shutil.copytree(source, out, dirs_exist_ok=True)
    catalogue = explorer.read_export(out, key)
    assert catalogue is not None, f"the export copied from {source} does not read back"
    return out, catalogue


@pytest.fixture
def mixing_time_calls(monkeypatch) -> list[tuple[int, ...]]:
    """The shapes of the matrices ``bparallel.absorbing.mixing_times`` (Definition 2.7, the
    one implementation) is called with while the test runs; it still computes."""
    from bparallel import absorbing

    calls: list[tuple[int, ...]] = []
    real = absorbing.mixing_times

    def counting(Q, eps):
        calls.append(tuple(Q.shape))
        return real(Q, eps)

    monkeypatch.setattr(absorbing, "mixing_times", counting)
    return calls
