"""The one walker of the book's table of contents (:mod:`bparallel.book.tools.toc`)."""

from __future__ import annotations

import pytest

from bparallel.book.tools.toc import TOC, toc_docnames, toc_files


def test_the_book_toc_is_walked_in_reading_order():
    files = toc_files()
    assert files[0] == "book/intro" and "notebooks/12_graph_tasks" in files
    assert files.index("notebooks/12_graph_tasks") < files.index("notebooks/12a_graph_runs")
    assert toc_docnames(TOC) == [f.removesuffix(".md") for f in files]


def test_a_missing_or_foreign_toc_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        toc_files(tmp_path / "_toc.yml")
    (tmp_path / "_toc.yml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="no root"):
        toc_files(tmp_path / "_toc.yml")
