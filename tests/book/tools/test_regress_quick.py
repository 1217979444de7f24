"""The quick regression of every chapter (tests/book/tools/quick_regression.py)."""

import pytest

from tests.book.tools.quick_regression import run_quick


@pytest.mark.slow
@pytest.mark.long
def test_quick_regression_of_every_notebook(tmp_path):
    """End-to-end, quick profile, against the committed references: the chapters the last
    book build ran at the quick profile from what it wrote, the others run here."""
    run_quick(tmp_path)
