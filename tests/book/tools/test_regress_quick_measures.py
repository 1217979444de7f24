"""The quick regression of the measures half of the chapters
(tests/book/tools/quick_regression.py)."""

import pytest

from tests.book.tools.quick_regression import half, run_half


@pytest.mark.slow
@pytest.mark.long
def test_quick_regression_of_the_measures_half(tmp_path):
    """End-to-end, quick profile, against the committed references: the chapters the last
    book build ran at the quick profile from what it wrote, the others run here."""
    assert half("measures")
    run_half("measures", tmp_path)
