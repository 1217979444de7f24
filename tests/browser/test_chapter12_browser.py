"""Chapter 12 readable in ten minutes (issue #73, item 1), in the built book: its main page
at most :data:`MAX_HEIGHT` px tall at 1280 x 800, its appendix pages built and each linked
from the main page's text, every term of its "In short" box defined or linked before its
first use, and no table cell or caption of the chapter's pages longer than the book's limits
(:data:`bparallel.book.tools.findings.MAX_CELL`, ``MAX_CAPTION``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bparallel.book.tools import findings as fd
from tests.browser.test_book_browser import TIMEOUT_MS, toc_docnames

ROOT = Path(__file__).resolve().parents[2]
MAIN = "notebooks/12_graph_tasks"
#: The chapter's appendix pages: the notebooks 12<letter>_*.md, nested under it in the toc.
APPENDICES = sorted(f"notebooks/{p.stem}" for p in (ROOT / "notebooks").glob("12[a-z]_*.md"))
#: Fifteen screens of 800 px.
MAX_HEIGHT = 12_000
#: The terms of the chapter a newcomer cannot be assumed to know (each a regular expression,
#: matched case-insensitively on whole words). Where the summary box uses one, its first use
#: on the page must be a link (to the glossary, or to the page that defines it).
TERMS = {
    "censored": r"censored",
    "Holm": r"Holm(?:'s correction)?",
    "primary family": r"primary famil(?:y|ies)",
    "horse race": r"horse race",
    "partial rho": r"partial (?:ρ|rho|rank correlation)",
    "rollout": r"rollout",
    "curve area": r"curve areas?",
    "noise floor": r"noise floor",
    "Tarone": r"Tarone(?:'s rule)?",
    "fresh data": r"fresh data",
    "learning threshold": r"learning threshold",
    "learning time": r"learning times?",
    "arm": r"arms?",
    "head size": r"head size",
    "minimax fidelity": r"minimax fidelity",
    "mixing time": r"mixing times?",
    "Algorithm 1": r"Algorithm 1",
    "mode": r"modes?",
    "exploratory": r"exploratory",
}

FIRST_USES_JS = r"""(terms) => {
  const main = document.querySelector('article') || document.querySelector('main');
  const box = main.querySelector('.admonition');
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
  const out = {};
  for (const [name, pattern] of Object.entries(terms)) {
    const re = new RegExp('(^|[^\\w])(' + pattern + ')(?![\\w])', 'i');
    const first = nodes.find(n => re.test(n.textContent));
    if (!first) continue;
    const inBox = nodes.some(n => box && box.contains(n) && re.test(n.textContent));
    out[name] = {inBox: inBox, linked: !!first.parentElement.closest('a'),
                 text: first.textContent.trim().slice(0, 80)};
  }
  return out;
}"""


def _open(browser, html: Path, width: int = 1280, height: int = 800):
    context = browser.new_context(viewport={"width": width, "height": height},
                                  service_workers="block")
    page = context.new_page()
    page.goto(html.as_uri(), wait_until="load", timeout=TIMEOUT_MS)
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)",
                           timeout=TIMEOUT_MS)
    page.wait_for_timeout(200)
    return context, page


def test_the_appendices_are_nested_under_the_chapter_in_the_toc():
    names = toc_docnames()
    assert APPENDICES, "no appendix pages found"
    at = names.index(MAIN)
    assert names[at + 1: at + 1 + len(APPENDICES)] == APPENDICES


def test_the_main_page_is_at_most_fifteen_screens_at_1280(built_html, browser):
    context, page = _open(browser, built_html / f"{MAIN}.html")
    try:
        height = page.evaluate("() => document.documentElement.scrollHeight")
    finally:
        context.close()
    assert height <= MAX_HEIGHT, f"{MAIN}: {height} px tall at 1280 x 800"


def test_every_appendix_is_built_and_linked_from_the_main_pages_text(built_html, browser):
    context, page = _open(browser, built_html / f"{MAIN}.html")
    try:
        hrefs = page.evaluate("""() => Array.from(
            (document.querySelector('article') || document.querySelector('main'))
            .querySelectorAll('a[href]')).map(a => a.getAttribute('href'))""")
    finally:
        context.close()
    for docname in APPENDICES:
        stem = docname.split("/")[-1]
        assert (built_html / f"{docname}.html").is_file(), f"{docname} is not built"
        assert any(h.split("#")[0].endswith(f"{stem}.html") for h in hrefs), \
            f"the main page's text never links {stem}"


def test_every_term_of_the_summary_is_linked_at_its_first_use(built_html, browser):
    context, page = _open(browser, built_html / f"{MAIN}.html")
    try:
        uses = page.evaluate(FIRST_USES_JS, TERMS)
    finally:
        context.close()
    in_box = {name: use for name, use in uses.items() if use["inBox"]}
    assert in_box, "the summary box uses none of the chapter's terms: is it there?"
    unlinked = {name: use["text"] for name, use in in_box.items() if not use["linked"]}
    assert not unlinked, f"terms of the summary first used without a link: {unlinked}"


@pytest.mark.parametrize("docname", [MAIN, *APPENDICES])
def test_no_cell_or_caption_of_the_chapter_is_too_long(docname, built_html):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built_html / f"{docname}.html").read_text(encoding="utf-8"),
                         "html.parser")
    main = soup.find("main") or soup
    cells = [" ".join(c.get_text(" ", strip=True).split()) for c in main.select("td, th")]
    long_cells = [(c[:40], len(c)) for c in cells if len(c) > fd.MAX_CELL]
    assert not long_cells, f"{docname}: cells over {fd.MAX_CELL} characters: {long_cells}"
    captions = [" ".join(c.get_text(" ", strip=True).split())
                for c in main.select("table caption, figcaption")]
    # the caption's own number ("Table 12.3") is not the author's text
    long_captions = [(c[:40], len(c)) for c in captions
                     if len(re.sub(r"^(Table|Fig\.) [\w.]+\s*", "", c)) > fd.MAX_CAPTION]
    assert not long_captions, f"{docname}: captions over {fd.MAX_CAPTION}: {long_captions}"
