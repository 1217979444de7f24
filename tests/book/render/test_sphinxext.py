"""bparallel.book.render.sphinxext, the book's Sphinx extension, on one-page builds: the verdict
role
and legend, the book's BibTeX entry, the link to the authors' code where a page first names it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bparallel.book.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[3]
URL = "https://example.org/authors/code"


def _build(source: str, tmp_path: Path, conf: str = "", pages: dict[str, str] | None = None):
    """Build one MyST page (``index``, and any other ``pages``: name -> source) with the
    extension; return the Sphinx application and its warnings."""
    import io

    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['myst_parser', 'bparallel.book.render.sphinxext']\n"
                                 "myst_enable_extensions = ['colon_fence']\n"
                                 + conf)
    (src / "index.md").write_text(source)
    for name, text in (pages or {}).items():
        (src / f"{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (src / f"{name}.md").write_text(text)
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"),
                 "html", status=None, warning=warnings, freshenv=True)
    app.build()
    return app, warnings


def _render(source: str, tmp_path: Path, conf: str = "") -> tuple[str, str]:
    """Build one MyST page with the extension; return (html of the body, warnings)."""
    _, warnings = _build(source, tmp_path, conf)
    html = (tmp_path / "out" / "index.html").read_text()
    # only the page's own warnings (several apps in one process re-register roles: noise)
    own = [w for w in warnings.getvalue().splitlines() if "index.md" in w]
    return html, "\n".join(own)


def test_role_renders_a_badge_and_refuses_a_typo(tmp_path):
    html, warnings = _render("# T\n\n| a | b |\n|---|---|\n| x | {verdict}`not testable` |\n\n"
                             "A {verdict}`holds with conditions` and a {verdict}`mostly`.\n",
                             tmp_path)
    badges = re.findall(r'<span class="bp-verdict bp-verdict--([a-z-]+)">([^<]*)</span>', html)
    assert badges == [("not-testable", "not testable"),
                      ("holds-with-conditions", "holds with conditions")]
    assert "not in the book's vocabulary" in warnings and "mostly" in warnings


def test_legend_directive_lists_every_verdict_with_its_meaning(tmp_path):
    html, warnings = _render("# T\n\n:::{verdict-legend}\n:::\n", tmp_path)
    assert not warnings.strip(), warnings
    for v in Verdict:
        assert f'bp-verdict--{v.slug}">{v.label}</span>' in html
    assert html.count("bp-verdict--") == len(Verdict)
    # the reading rule, written once (verdicts.READING_RULE), follows the list
    rule = re.search(r'<p class="bp-reading-rule">(.*?)</p>', html, flags=re.S)
    assert rule is not None and "as the paper states it" in rule.group(1)
    assert "beyond the paper" in rule.group(1) and html.index("bp-verdict--") < rule.start()


def test_book_bibtex_takes_its_url_from_the_configuration(tmp_path):
    from bparallel import __version__
    from bparallel.book.render.sphinxext import book_bibtex

    assert "url" not in book_bibtex("")
    entry = book_bibtex("https://example.org/book/")
    assert re.search(r"^  url +\= \{https://example\.org/book/\},$", entry, flags=re.M)
    assert f"{{{__version__}}}" in entry and entry.startswith("@software{bparallel")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["version"] == __version__  # the BibTeX and CITATION.cff cite one version
    html, _ = _render("# T\n\n```{book-bibtex}\n```\n", tmp_path,
                      conf="html_baseurl = 'https://example.org/book/'\n")
    assert "https://example.org/book/" in html and "@software" in html


def test_first_mention_of_the_published_code_links_to_it(tmp_path):
    page = ("# The published code\n\n"                       # a heading: not linked
            "```{code-block} text\nthe published code\n```\n\n"  # code: not linked
            "A {verdict}`holds with conditions` badge.\n\n"  # a badge's text: never linked
            "**The authors' published code** differs. The published code again.\n")
    html, warnings = _render(page, tmp_path, conf=f"bparallel_published_code_url = {URL!r}\n")
    assert not warnings.strip(), warnings
    links = re.findall(r'<a class="bp-published-code reference external" '
                       r'href="([^"]*)">([^<]*)</a>', html)
    assert links == [(URL, "published code")]
    body = html[html.index("<strong>"):]
    assert body.index(URL) < body.index("The published code again")  # the first, not the second
    assert html.count(URL) == 1


def test_a_page_that_links_by_hand_is_left_alone(tmp_path):
    page = f"# T\n\nThe [published code]({URL}) and the published code.\n"
    html, _ = _render(page, tmp_path, conf=f"bparallel_published_code_url = {URL!r}\n")
    assert html.count(URL) == 1 and "bp-published-code" not in html


def test_config_links_the_authors_repository():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    # the address the paper's abstract gives (arXiv 2507.02944)
    assert sphinx["bparallel_published_code_url"] == (
        "https://github.com/haitzsaezdeocariz/beyondparallelism")


def test_a_mention_in_an_api_docstring_is_linked(tmp_path):
    page = "# API\n\n```{py:function} f(x)\n\nComputes it as the authors' code does.\n```\n"
    html, _ = _render(page, tmp_path, conf=f"bparallel_published_code_url = {URL!r}\n")
    links = [text for href, text in re.findall(r'href="([^"]*)">([^<]*)</a>', html) if href == URL]
    assert len(links) == 1 and links[0].endswith("code"), links


def test_a_term_link_is_not_linked_again_to_the_published_code(tmp_path):
    """Text inside a cross-reference ({term}, {doc}) is never wrapped in a second link."""
    page = ("# T\n\n:::{glossary}\nthe published code\n  Defined.\n:::\n\n"
            "See {term}`the published code`, and the published code.\n")
    html, warnings = _render(page, tmp_path, conf=f"bparallel_published_code_url = {URL!r}\n")
    assert not warnings.strip(), warnings
    assert 'href="#term-the-published-code"' in html
    assert html.count(URL) == 1  # the second mention, outside the term link
    assert not re.search(r"<a [^>]*>[^<]*<a ", html)  # no link inside a link


def test_pages_outside_the_chapters_number_tables_with_a_prefix(tmp_path):
    """The introduction's tables read "Table 0.1", "Table 0.2": never the paper's "Table 1"."""
    table = ":::{{table}} {caption}\n:name: {name}\n\n| a |\n|---|\n| {caption} |\n:::\n\n"
    page = ("# T\n\n" + table.format(caption="First", name="tbl-first")
            + table.format(caption="Second", name="tbl-second")
            + "As {numref}`tbl-second` shows.\n")
    html, warnings = _render(page, tmp_path, conf="numfig = True\n"
                             "bparallel_number_prefixes = {'index': '0'}\n")
    assert not warnings.strip(), warnings
    numbers = re.findall(r'<span class="caption-number">([^<]*)</span>', html)
    assert [n.strip() for n in numbers] == ["Table 0.1", "Table 0.2"]
    assert "Table 0.2</span>" in html.split("As ")[-1]  # the reference reads the same
    # a numbered chapter's numbers are left alone; Sphinx's order is kept
    fig = {"table": {"b": (2,), "a": (1,)}, "figure": {"x": (10, 1)}}
    from bparallel.book.render.sphinxext import prefix_numbers
    assert prefix_numbers(fig, "A")
    assert fig == {"table": {"b": ("A", 2), "a": ("A", 1)}, "figure": {"x": (10, 1)}}


def test_the_execution_status_table_is_numbered_and_names_its_machine(tmp_path):
    """``{execution-status}``: a numbered, captioned table (a page after the chapters reads
    "Table C.1"), its caption naming the machine; with no executed chapter it says so in its
    one row rather than showing an empty table."""
    html, warnings = _render("# How this build ran\n\n```{execution-status}\n```\n", tmp_path,
                             conf="numfig = True\n"
                             "bparallel_number_prefixes = {'index': 'C'}\n")
    assert not warnings.strip(), warnings
    numbers = re.findall(r'<span class="caption-number">([^<]*)</span>', html)
    assert [n.strip() for n in numbers] == ["Table C.1"]
    from bparallel.book.render.sphinxext import machine_description
    assert machine_description() in html.replace("&#8217;", "'")
    assert "no chapter was executed in this build" in html


def test_the_execution_status_page_is_marked_by_its_directive(tmp_path):
    """The page written again once every chapter has run is the one whose
    ``{execution-status}`` directive marked it, whatever its name (here ``status/how``, not
    ``book/execution``), and no other; read again without the directive, it is unmarked."""
    from bparallel.book.render.sphinxext import _status_pages, _update_execution_status

    app, warnings = _build("# Index\n\n```{toctree}\nstatus/how\nother\n```\n", tmp_path,
                           pages={"status/how": "# How it ran\n\n```{execution-status}\n```\n",
                                  "other": "# Other\n\nNo table.\n"})
    assert "status/how.md" not in warnings.getvalue(), warnings.getvalue()
    assert _update_execution_status(app, app.env) == ["status/how"]
    assert app.env.found_docs >= {"index", "status/how", "other"}
    app.emit("env-purge-doc", app.env, "status/how")
    assert _update_execution_status(app, app.env) == [] and _status_pages(app.env) == set()


def test_the_machine_chapters_and_provenance_in_words(tmp_path):
    from bparallel.book.render.sphinxext import (
        machine_description,
        profile_parameter,
        run_words,
    )

    cpu = tmp_path / "cpuinfo"
    cpu.write_text("processor\t: 0\nmodel name\t: Intel(R)  Xeon(R) CPU @ 2.10GHz\n")
    words = machine_description(cpu)
    assert words.startswith("Intel(R) Xeon(R) CPU @ 2.10GHz, ") and " core" in words
    assert "Python 3." in words and ("torch " in words or "no torch" in words)
    assert not machine_description(tmp_path / "missing").startswith(", ")
    assert profile_parameter('x = 1\nprofile = "auto"  # the book\'s\n') == "auto"
    assert profile_parameter("no parameters here") == "\u2014"
    shown = 'text\n````md\n```{code-cell} ipython3\nprofile = "quick"\n```\n````\nmore\n'
    assert profile_parameter(shown) == "\u2014"  # an example shown on a page, not its cell
    assert profile_parameter(shown + 'profile = "paper"\n') == "paper"
    assert run_words({"mtime": 200.0}, build_start=100.0) == "in this build"
    assert run_words({"mtime": None}, build_start=100.0) == "in this build"
    assert run_words({"mtime": 50.0}, 100.0).startswith("from the execution cache (run 19")


def test_a_chapter_run_before_sphinx_started_ran_in_this_build(monkeypatch):
    """scripts/build_book.sh sets the build's start before Sphinx starts: a run since then is
    "in this build", an older one is from the cache; without the variable, the build starts
    when Sphinx does."""
    import time
    import types

    from bparallel.book.render import sphinxext

    app = types.SimpleNamespace()
    monkeypatch.setenv(sphinxext.BUILD_START_ENV, "1000")
    sphinxext._note_build_start(app)
    assert app.bparallel_build_start == 1000.0
    assert sphinxext.run_words({"mtime": 1500.0}, app.bparallel_build_start) == "in this build"
    assert sphinxext.run_words({"mtime": 900.0}, 1000.0).startswith("from the execution cache")
    monkeypatch.delenv(sphinxext.BUILD_START_ENV)
    sphinxext._note_build_start(app)
    assert abs(app.bparallel_build_start - time.time()) < 60
