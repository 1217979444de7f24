"""Fixtures every folder of the tests shares, and the fast tier.

The tests are arranged like the package: ``theory/`` (the theory layer), ``transformer/``
(the Transformer floor), ``book/`` (the book layer, one folder per room of ``bparallel/book/``:
``claims/``, ``section4/``, ``render/``, ``tools/``, with the tests of the layer's own modules
beside them and ``pages/`` for the book's prose and frame),
``browser/`` (the built book and the widgets in headless Chromium; their fixtures are
``browser/conftest.py``), and ``test_layers.py`` on the package as a whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
    few minutes."""
    for item in items:
        if item.get_closest_marker("browser") or SLOW_FOLDER in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def explorer_export(tmp_path_factory) -> tuple[Path, list[dict[str, Any]]]:
    """Every model the explorer offers, exported once as the book exports them: the folder
    of data files and the catalogue (``tests/book/section4/test_explorer.py`` checks them against
    torch and the package, ``tests/browser/test_explorer_browser.py`` opens them)."""
    from bparallel.book.section4 import explorer

    out = tmp_path_factory.mktemp("explorer-data")
    return out, explorer.export_models(out, num_sequences=EXPLORER_SEQUENCES,
                                       reference_sequences=EXPLORER_REFERENCE_SEQUENCES)
