"""The book's chapters executed side by side into the execution cache before the build
(:mod:`bparallel.book.tools.execute_ahead`), found there by myst-nb's own lookup; and the
one walker of the table of contents (:mod:`bparallel.book.tools.toc`)."""

from __future__ import annotations

import pytest

from bparallel.book.tools.execute_ahead import cached_pages, execute_ahead
from bparallel.book.tools.toc import TOC, toc_docnames, toc_files

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
{extra}---

# {title}

```{{code-cell}} ipython3
{code}
```
"""


def _notebook(path, code, title="A page", extra=""):
    path.write_text(HEADER.format(extra=extra, title=title, code=code), encoding="utf-8")
    return path


@pytest.fixture
def book(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nparts:\n  - caption: One\n    chapters:\n"
        "      - file: notebooks/a\n      - file: notebooks/forced\n"
        "        sections:\n          - file: notebooks/b.md\n      - file: plain\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "plain.md").write_text("---\ntitle: x\n---\n# Plain\n")
    _notebook(tmp_path / "notebooks" / "a.md", "x = 6 * 7\nprint(x)")
    _notebook(tmp_path / "notebooks" / "b.md", "open('here.txt', 'w').write('b')")
    _notebook(tmp_path / "notebooks" / "forced.md", "print(1)",
              extra="mystnb:\n  execution_mode: force\n")
    return tmp_path


def test_the_pages_run_through_the_cache_are_the_toc_notebooks_in_cache_mode(book):
    assert [p.name for p in cached_pages(book)] == ["a.md", "b.md"]
    assert cached_pages(book, book_mode="off") == []  # the book's mode, where a page has none
    assert [p.name for p in cached_pages(book, book_mode="cache")] == ["a.md", "b.md"]


def test_executed_ahead_myst_nb_finds_each_run_in_the_cache(book):
    """Each page runs once, in its own folder; myst-nb's lookup (its reader, the cache's
    match on code and kernel) then finds the run with its outputs; a second call runs
    nothing; a failing page is left uncached for the build to run and report."""
    from jupyter_cache import get_cache
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    cache_dir = book / "_build" / ".jupyter_cache"
    pages = cached_pages(book)
    out = execute_ahead(pages, cache_dir, timeout=120, jobs=2)
    assert sorted(p.rsplit("/", 1)[-1] for p in out["succeeded"]) == ["a.md", "b.md"]
    assert out["cached"] == out["excepted"] == out["errored"] == []
    assert (book / "notebooks" / "here.txt").read_text() == "b"  # in the notebook's folder
    path = pages[0]
    text = path.read_text(encoding="utf-8")
    reader = create_nb_reader(str(path), MdParserConfig(), NbParserConfig(), text)
    _, merged = get_cache(str(cache_dir)).merge_match_into_notebook(reader.read(text))
    outputs = [o for c in merged.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs and outputs[0]["text"] == "42\n"
    again = execute_ahead(pages, cache_dir, timeout=120)
    assert len(again["cached"]) == 2 and again["succeeded"] == []
    bad = _notebook(book / "notebooks" / "a.md", "raise RuntimeError('no')")
    failed = execute_ahead([bad], cache_dir, timeout=120)
    assert [p.rsplit("/", 1)[-1] for p in failed["excepted"]] == ["a.md"]
    assert execute_ahead([bad], cache_dir, timeout=120)["cached"] == []  # not cached


@pytest.mark.parametrize(("kwargs", "match"), [({"timeout": 0}, "timeout=0"),
                                               ({"jobs": 0}, "jobs=0"),
                                               ({"timeout": 1.5}, "timeout=1.5")])
def test_bad_settings_are_refused(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        execute_ahead([], tmp_path / "cache", **kwargs)


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
