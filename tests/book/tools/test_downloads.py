"""bparallel.book.tools.downloads: executed chapter notebooks copied next to their pages."""

from __future__ import annotations

import json

import pytest

from bparallel.book.tools.downloads import export_notebooks, main


def _nb(outputs: bool) -> str:
    cell = {"cell_type": "code", "id": "c1", "source": "1 + 1", "metadata": {},
            "execution_count": 1,
            "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2"},
                         "metadata": {}, "execution_count": 1}] if outputs else []}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})


def _build(tmp_path, notebooks: dict[str, str], pages: list[str]):
    (tmp_path / "jupyter_execute" / "notebooks").mkdir(parents=True)
    (tmp_path / "html" / "notebooks").mkdir(parents=True)
    for name, text in notebooks.items():
        (tmp_path / "jupyter_execute" / "notebooks" / f"{name}.ipynb").write_text(text)
    for name in pages:
        (tmp_path / "html" / "notebooks" / f"{name}.html").write_text("<html></html>")
    return tmp_path


def test_copies_executed_notebooks_of_pages_only(tmp_path):
    build = _build(tmp_path, {"01_a": _nb(True), "02_b": _nb(True)}, ["01_a"])
    copies = export_notebooks(build)
    assert [c.name for c in copies] == ["01_a.ipynb"]
    assert (build / "html" / "notebooks" / "01_a.ipynb").read_text() == _nb(True)
    assert not (build / "html" / "notebooks" / "02_b.ipynb").exists()
    assert main([str(build)]) == 0


def test_refuses_unexecuted_or_broken_notebooks_and_missing_builds(tmp_path):
    with pytest.raises(ValueError, match="no outputs: it was not executed"):
        export_notebooks(_build(tmp_path / "a", {"01_a": _nb(False)}, ["01_a"]))
    with pytest.raises(ValueError, match="is not a notebook"):
        export_notebooks(_build(tmp_path / "b", {"01_a": "{not json"}, ["01_a"]))
    with pytest.raises(FileNotFoundError, match="build the book first"):
        export_notebooks(tmp_path / "nothing")


def test_a_notebook_written_without_outputs_gets_them_from_the_execution_cache(tmp_path):
    """myst-nb writes a page served from the execution cache without its outputs; the copy
    takes them from the cache, and a notebook the cache never ran is still refused."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    build = _build(tmp_path, {"01_a": _nb(False), "02_b": _nb(False).replace("1 + 1", "2 + 2")},
                   ["01_a"])
    cache = get_cache(str(build / ".jupyter_cache"))
    cache.cache_notebook_bundle(CacheBundleIn(nbformat.reads(_nb(True), as_version=4), "a.md"),
                                check_validity=False)
    copies = export_notebooks(build)
    assert [c.name for c in copies] == ["01_a.ipynb"]
    cells = json.loads(copies[0].read_text())["cells"]
    assert "".join(cells[0]["outputs"][0]["data"]["text/plain"]) == "2"  # nbformat splits lines
    (build / "html" / "notebooks" / "02_b.html").write_text("<html></html>")
    with pytest.raises(ValueError, match="holds no run of it"):
        export_notebooks(build)
