"""The built book, opened in headless Chromium with the network cut off.

For every page of `_toc.yml`, served over http://127.0.0.1 and opened from file://:

- no request leaves the machine (every non-local request is blocked and reported);
- no console error, page error or failed local request;
- math is typeset by MathJax (every Sphinx math node holds an `mjx-container`, no raw `$$`);
- every image has loaded; every sphinx-proof directive of the source shows as a box;
- saved Jupyter widgets render; the playground shows no ipywidgets control (a static page
  cannot recompute it: its live playground is the JavaScript one).

Full-page screenshots of the http pages go to `_build/screenshots/`. Needs a built book
(`make book`); without one these tests fail, they do not skip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bparallel.book.tools.toc import toc_docnames
from tests.browser.offline import OfflinePage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser

PLAYGROUND = "notebooks/05_playground"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
TIMEOUT_MS = 30_000


DOCNAMES = toc_docnames()


def source_of(docname: str) -> str:
    for suffix in (".md", ".ipynb"):
        path = ROOT / f"{docname}{suffix}"
        if path.is_file():
            return path.read_text()
    pytest.fail(f"_toc.yml lists {docname!r} but neither {docname}.md nor .ipynb exists")


FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\S*)")
CODE_INFO = re.compile(r"^(\{code-cell\}|\{code-block\}|\{code\}|[\w+-]*)$")


def strip_code(markdown: str) -> str:
    """Markdown without code blocks, code cells and inline code (`$` there is not math).

    Directive fences (```{prf:definition}, :::{note}) are kept with their content.
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (fence marker, is code)
    for line in markdown.splitlines():
        m = FENCE.match(line)
        if stack and stack[-1][1]:  # inside code: only its closing fence ends it
            if (
                m
                and not m.group(2)
                and m.group(1)[0] == stack[-1][0][0]
                and len(m.group(1)) >= len(stack[-1][0])
            ):
                stack.pop()
            continue
        if m:
            marker, info = m.groups()
            if (
                not info
                and stack
                and marker[0] == stack[-1][0][0]
                and len(marker) >= len(stack[-1][0])
            ):
                stack.pop()  # closes the enclosing directive
            else:
                stack.append((marker, marker[0] != ":" and bool(CODE_INFO.match(info))))
            continue
        out.append(re.sub(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", "", line))
    return "\n".join(out)


def source_has_math(markdown: str) -> bool:
    text = strip_code(markdown)
    return bool(re.search(r"\$\$|\$[^$\s][^$\n]*\$|\\begin\{|\{math\}", text))


def proof_directives(markdown: str) -> int:
    """How many sphinx-proof directives (`{prf:definition}` ...) the source opens."""
    return len(re.findall(r"^\s*(?:`{3,}|:{3,})\{prf:(?!ref\b)[a-z-]+\}", markdown, flags=re.M))


def shown_values(html_text: str) -> list[str]:
    """Texts of the cells of every table and of every code cell's output in a page."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    cells = [c.get_text(" ", strip=True) for c in soup.select("main table td, main table th")]
    outputs = [o.get_text(" ", strip=True) for o in soup.select("main .cell_output")]
    return cells + outputs


def test_shown_values_finds_nan_in_tables_and_outputs_only():
    page = ("<main><p>NaN is refused</p><table><tr><td>1.0</td><td>NaN</td></tr></table>"
            "<div class='cell_output'><pre>nan</pre></div></main>")
    values = shown_values(page)
    assert values == ["1.0", "NaN", "nan"]  # the prose's 'NaN' is not a shown value


VISIBLE_TEXT_JS = """() => {
  const main = document.querySelector('main') || document.body;
  const copy = main.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, .highlight').forEach(e => e.remove());
  return copy.innerText;
}"""

PROOF_TYPES = [
    "Definition", "Lemma", "Theorem", "Remark", "Example", "Proposition", "Corollary",
    "Algorithm", "Conjecture", "Axiom", "Criterion", "Observation", "Property", "Assumption",
    "Notation",
]  # fmt: skip
CHECKS_JS = """() => {
  const PROOF_TYPES = PROOF_TYPES_JSON;
  const visible = e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const math = Array.from(document.querySelectorAll('main .math'));
  return {
    math: math.length,
    mathTypeset: math.filter(e => e.querySelector('mjx-container')).length,
    mjx: document.querySelectorAll('mjx-container').length,
    images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
                                                   ok: i.complete && i.naturalWidth > 0})),
    // sphinx-proof boxes: {prf:definition} etc. have a titled box, {prf:proof} has none
    proofs: Array.from(document.querySelectorAll('main div.proof.admonition')).filter(visible)
                 .map(e => ({typed: e.classList.length > 2,
                             title: (e.querySelector('.admonition-title') || {}).textContent
                                    || ''})),
    // a {prf:ref} to an unnumbered box without explicit text renders as a bare "Lemma "
    bareRefs: Array.from(document.querySelectorAll('main a.reference.internal'))
                   .map(a => a.textContent.trim())
                   .filter(t => PROOF_TYPES.includes(t)),
    widgetViews: document.querySelectorAll('script[type="WIDGET_VIEW"]').length,
    widgetsRendered: Array.from(document.querySelectorAll('.widget-subarea > .jupyter-widgets'))
                          .filter(visible).length,
    widgetControls: Array.from(document.querySelectorAll('[class*="widget-"]')).filter(visible)
                         .length,
  };
}""".replace("WIDGET_VIEW", WIDGET_VIEW).replace("PROOF_TYPES_JSON", json.dumps(PROOF_TYPES))


def visit(browser, url: str, local_prefix: str, screenshot: Path | None = None) -> dict:
    """Open `url` with every non-local request blocked; return what the page did and shows."""
    s = OfflinePage(browser, local_prefix=local_prefix)
    page, external, problems = s.page, s.external, s.problems
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )
    page.on(
        "requestfailed",
        lambda r: (
            None if r.url in external else problems.append(f"request failed: {r.url} ({r.failure})")
        ),
    )
    try:
        page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
        # MathJax 3 (loaded with defer) typesets the page once; wait for that to finish.
        page.evaluate("""() => (window.MathJax && window.MathJax.startup
            && window.MathJax.startup.promise)
            ? window.MathJax.startup.promise.then(() => 1) : 0""")
        views = page.evaluate(
            f"() => document.querySelectorAll('script[type=\"{WIDGET_VIEW}\"]').length"
        )
        if views:
            try:
                page.wait_for_function(
                    "n => document.querySelectorAll('.widget-subarea > .jupyter-widgets')"
                    ".length >= n",
                    arg=views,
                    timeout=TIMEOUT_MS,
                )
            except Exception as err:  # reported below as missing widgets
                problems.append(f"widgets did not render in {TIMEOUT_MS} ms: {err}")
        page.wait_for_function(
            "() => Array.from(document.images).every(i => i.complete)", timeout=TIMEOUT_MS
        )
        result = page.evaluate(CHECKS_JS)
        result["text"] = page.evaluate(VISIBLE_TEXT_JS)
        result["has_widget_state"] = page.evaluate(
            f"() => !!document.querySelector('script[type=\"{WIDGET_STATE}\"]')"
        )
        if screenshot is not None:
            page.wait_for_timeout(200)
            page.screenshot(path=str(screenshot), full_page=True)
    finally:
        s.close()
    result["external"] = external
    result["problems"] = problems
    return result


def test_every_toc_page_is_built(built_html):
    missing = [d for d in DOCNAMES if not (built_html / f"{d}.html").is_file()]
    assert not missing, f"pages of _toc.yml missing from {built_html}: {missing}; run `make book`"


@pytest.mark.parametrize("mode", ["http", "file"])
@pytest.mark.parametrize("docname", DOCNAMES)
def test_page_renders_offline(docname, mode, built_html, book_server, browser, screenshot_dir):
    html = built_html / f"{docname}.html"
    if not html.is_file():
        pytest.fail(f"{html} is missing: run `make book`")
    source = source_of(docname)
    url = book_server + f"{docname}.html" if mode == "http" else html.as_uri()
    shot = screenshot_dir / (docname.replace("/", "__") + ".png") if mode == "http" else None
    page = visit(browser, url, local_prefix=book_server, screenshot=shot)

    assert page["external"] == [], f"{docname} ({mode}) asked the network for {page['external']}"
    assert page["problems"] == [], f"{docname} ({mode}): " + "\n".join(page["problems"])

    # math: every math node typeset, nothing left raw
    if source_has_math(source):
        assert page["math"] > 0, f"{docname}: the source has math but the page has no math nodes"
        assert page["mjx"] > 0, f"{docname}: MathJax typeset nothing"
    assert page["mathTypeset"] == page["math"], (
        f"{docname} ({mode}): {page['math'] - page['mathTypeset']} of {page['math']} math "
        "nodes were not typeset by MathJax"
    )
    assert "$$" not in page["text"], f"{docname} ({mode}): raw $$ in the visible text"
    for raw in ("\\(", "\\["):
        assert raw not in page["text"], f"{docname} ({mode}): raw {raw} math delimiter left"

    # A matplotlib Figure displayed without the inline formatter shows as its repr.
    assert "&lt;Figure size" not in html.read_text(encoding="utf-8"), (
        f"{docname} ({mode}): a figure shows as text ('<Figure size ...>'), not as an image; "
        "display it with %matplotlib inline active or plt.show()"
    )
    # Readers never see NaN in a table or a cell's output (the API page may *say* NaN in a
    # docstring), nor a machine's absolute path anywhere.
    text = html.read_text(encoding="utf-8")
    nan = [t for t in shown_values(text) if re.search(r"(?<![A-Za-z])(?:NaN|nan)(?![A-Za-z])", t)]
    assert not nan, f"{docname} ({mode}): 'NaN' in tables or outputs: {nan[:3]}"
    leaked = sorted(set(re.findall(r"(?:/work/|/root/|/home/|/tmp/)[\w./-]*", text)))
    assert not leaked, f"{docname} ({mode}): absolute paths in the page: {leaked[:5]}"
    broken = [i["src"] for i in page["images"] if not i["ok"]]
    assert not broken, f"{docname} ({mode}): images that did not load: {broken}"

    expected_proofs = proof_directives(source)
    assert len(page["proofs"]) >= expected_proofs, (
        f"{docname} ({mode}): {expected_proofs} prf directives in the source, "
        f"{len(page['proofs'])} proof boxes shown"
    )
    untitled = [p for p in page["proofs"] if p["typed"] and not p["title"].strip()]
    assert not untitled, f"{docname}: {len(untitled)} proof boxes have no title"
    assert not page["bareRefs"], (
        f"{docname}: {{prf:ref}} links rendered as bare {page['bareRefs']}: the target has "
        "no number (:nonumber:), so give the link text, {prf:ref}`Lemma 2.5 <lem-single-sink>`"
    )

    assert page["widgetsRendered"] >= page["widgetViews"], (
        f"{docname} ({mode}): {page['widgetViews']} saved widget views, "
        f"{page['widgetsRendered']} rendered"
    )
    if docname == PLAYGROUND:
        # Honest widgets: a static page cannot recompute, so the ipywidgets interface (live
        # only in a running notebook) is left out; the live thing is the JavaScript playground.
        assert page["widgetControls"] == 0, (
            f"{docname} ({mode}): {page['widgetControls']} ipywidgets controls shown in the "
            "static page, where nothing can recompute them"
        )


def _record_errors(page: Any, errors: list[str]) -> None:
    """Append the page's console errors and uncaught exceptions to ``errors`` (over http the
    browser also probes /favicon.ico by itself: not the page's request, not counted)."""
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and not
            m.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))


@pytest.mark.parametrize("mode", ["http", "file"])
def test_search_page_explains_file_urls(mode, built_html, book_server, browser):
    """Opened from file://, the search page says before its results why they have no text
    previews and how to serve the book; over http it says nothing of the kind."""
    html = built_html / "search.html"
    query = "?q=fidelity"
    url = book_server + "search.html" + query if mode == "http" else html.as_uri() + query
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        _record_errors(page, errors)
        page.goto(url)
        page.wait_for_load_state("load")
        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0",
                               timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)  # previews (http) are fetched after the list appears
        notes = page.locator(".file-search-note")
        if mode == "http":
            assert notes.count() == 0
        else:
            assert notes.count() == 1 and notes.first.is_visible()
            text = notes.first.inner_text()
            assert "python -m http.server" in text and "search.html" in text
            # the note comes before the results
            assert page.evaluate(
                "() => { const n = document.querySelector('.file-search-note');"
                " const r = document.querySelector('#search-results');"
                " return !r ||"
                " !!(n.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING); }")
    finally:
        context.close()
    # from file:// each preview fetch would be blocked and logged: the page makes none
    assert errors == [], f"search page ({mode}) logged console errors: {errors[:3]}"


@pytest.mark.parametrize("query", ["mixing", "fidelity"])
def test_search_ranks_the_chapters_before_the_api_and_lists_each_place_once(query, built_html,
                                                                            browser):
    """Issue #73, item 5: searching a word of the paper from file:// lists the chapters and
    prose pages first (book/search_scorer.js), every API entry after them, and no place
    twice (the same page and anchor)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto((built_html / "search.html").as_uri() + f"?q={query}")
        page.wait_for_function("() => /Search finished/.test(document.body.innerText)",
                               timeout=TIMEOUT_MS)
        links = page.evaluate("() => [...document.querySelectorAll('#search-results li > a')]"
                              ".map((a) => a.getAttribute('href'))")
    finally:
        context.close()
    api = [k for k, href in enumerate(links) if href.split("#")[0].endswith("book/api.html")]
    others = [k for k in range(len(links)) if k not in api]
    assert others, f"{query}: only API entries: {links[:5]}"
    assert not api or min(api) > max(others), (
        f"{query}: an API entry ranks before a chapter: {links[:12]}")
    assert len(links) == len(set(links)), (
        f"{query}: a place is listed twice: {[h for h in links if links.count(h) > 1][:4]}")


def test_the_execution_page_lists_every_chapter_and_its_machine(built_html):
    """Issue #73, item 6: the generated page says, for every chapter of the build, its
    profile, its run time and where its outputs come from, each succeeded, in a numbered
    table whose caption names the machine (CPU, cores, Python, torch)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built_html / "book" / "execution.html").read_text(encoding="utf-8"),
                         "html.parser")
    table = soup.select_one("main table")
    assert table is not None
    caption = table.find("caption").get_text(" ", strip=True)
    assert caption.startswith("Table C.1") and " cores" in caption and "torch " in caption
    rows = [[td.get_text(" ", strip=True) for td in tr.find_all("td")]
            for tr in table.select("tbody tr")]
    chapters = [d.split("/")[-1] for d in toc_docnames() if d.startswith("notebooks/")]
    assert [r[0] for r in rows if r[0] in chapters] == chapters  # every chapter, in order
    for name, profile, seconds, ran, status in rows:
        assert profile in ("auto", "quick", "paper", "\u2014"), (name, profile)
        assert float(seconds.replace(",", "")) >= 0, (name, seconds)
        assert ran == "in this build" or ran.startswith("from the execution cache"), ran
        assert status == "succeeded", (name, status)


#: Chapters whose figures and output tables all have a number and a caption: every chapter.
CAPTIONED = sorted(f"notebooks/{p.stem}"
                   for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.md"))


def _page_main(built_html, docname):
    """The ``<main>`` of a built page, parsed."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built_html / f"{docname}.html").read_text(encoding="utf-8"),
                         "html.parser")
    return soup.find("main") or soup


@pytest.mark.parametrize("docname", CAPTIONED)
def test_every_figure_is_numbered_and_captioned(docname, built_html):
    for img in _page_main(built_html, docname).select(".cell_output img, .output img"):
        figure = img.find_parent("figure")
        caption = figure.find("figcaption") if figure else None
        assert caption is not None, f"{docname}: an output image has no caption"
        text = caption.get_text(" ", strip=True)
        # chapter-prefixed ("Fig. 10.2"): never a number that could be one of the paper's
        assert re.match(r"Fig\. \d+\.\d+ \S", text), \
            f"{docname}: caption not numbered by chapter: {text[:60]}"


@pytest.mark.parametrize("docname", CAPTIONED)
def test_every_table_is_numbered_and_captioned(docname, built_html):
    main = _page_main(built_html, docname)
    tables = main.find_all("table")  # the outputs' and the prose's (glued tables sit there)
    assert tables, f"{docname}: no tables found (did the page change?)"
    # every table the chapter names (a {table} directive's :name:, a table(name=...) call)
    # is on the page under that id
    source = (ROOT / f"{docname}.md").read_text(encoding="utf-8")
    named = set(re.findall(r"""(?:^:name: |name=["'])(tbl-[a-z0-9-]+)""", source, flags=re.M))
    missing = named - {t.get("id") for t in tables}
    assert not missing, f"{docname}: named tables not on the page: {sorted(missing)}"
    for t in tables:
        caption = t.find("caption")
        assert caption is not None, f"{docname}: a table has no caption: {t.get_text()[:60]}"
        text = caption.get_text(" ", strip=True)
        assert re.match(r"Table \d+\.\d+ \S", text), \
            f"{docname}: caption not numbered by chapter: {text[:60]}"


#: A number that rounds to zero printed with a sign ("-0.00", "+0.0", "−0.00%").
SIGNED_ZERO = re.compile(r"(?<![\w.,])[-+−]0\.0+(?![\d])")


@pytest.mark.parametrize("docname", DOCNAMES)
def test_no_page_prints_a_signed_zero(docname, built_html):
    """A value that rounds to zero reads "0.00": "-0.00" says a sign the number does not
    have (chapter 11's table of seed 42's changes and chapter 12's partial ρ printed it)."""
    text = _page_main(built_html, docname).get_text(" ", strip=True)
    found = [text[max(0, m.start() - 50):m.end() + 10] for m in SIGNED_ZERO.finditer(text)]
    assert not found, f"{docname}: numbers that round to zero print a sign: {found[:5]}"


#: A cell that prints a whole number with a decimal zero ("100.0", "4,800.0").
POINT_ZERO = re.compile(r"-?[\d,]+\.0")


@pytest.mark.parametrize("docname", CAPTIONED)
def test_no_table_prints_a_count_or_an_accuracy_as_n_point_0_without_a_unit(docname,
                                                                          built_html):
    """Issue #46, item 3: a percentage column says % in its header (then "100.0" reads as a
    percent with one decimal); a cell reading "N.0" under a header without a unit is a count
    printed as a float or an accuracy whose unit the reader must guess."""
    bad = []
    for t in _page_main(built_html, docname).find_all("table"):
        heads = [th.get_text(" ", strip=True) for th in t.select("thead th")]
        for tr in t.select("tbody tr"):
            for j, td in enumerate(tr.find_all(["td", "th"])):
                head = heads[j] if j < len(heads) else ""
                text = td.get_text(" ", strip=True)
                if POINT_ZERO.fullmatch(text) and "%" not in head:
                    bad.append(f"{t.get('id') or '?'}: {head!r} = {text}")
    assert not bad, f"{docname}: cells print N.0 without a unit: {bad[:8]}"


def test_chapter_download_menu_offers_the_executed_notebook(built_html, book_server, browser):
    """A chapter's download menu links its executed notebook, which exists beside the page
    and holds the chapter's outputs (copied by scripts/build_book.sh, nothing re-run)."""
    import json

    docname = "notebooks/02_mixing_time"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(book_server + f"{docname}.html")
        page.wait_for_load_state("load")
        link = page.locator(".dropdown-download-buttons a.notebook-download")
        assert link.count() == 1, "no .ipynb entry in the download menu"
        assert link.get_attribute("href") == "02_mixing_time.ipynb"
        assert link.get_attribute("download") == "02_mixing_time.ipynb"  # saved, not opened
    finally:
        context.close()
    nb = json.loads((built_html / "notebooks" / "02_mixing_time.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert nb["nbformat"] == 4 and any("image/svg+xml" in o.get("data", {}) for o in outputs)
    for name in DOCNAMES:
        if name.startswith("notebooks/"):
            assert (built_html / f"{name}.ipynb").is_file(), f"{name}.ipynb is missing"



# ------------------------------------------------------- second reading: any screen, one vocabulary
from bparallel.book.verdicts import LABELS, Verdict  # noqa: E402

PUBLISHED_CODE_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"][
    "bparallel_published_code_url"]
#: A text group of matplotlib's SVG (text drawn as paths): ``scale(s -s)`` is the font size in
#: points over 100, in the user units (points) of the figure's viewBox.
SVG_TEXT = re.compile(r'<g transform="translate\([^)]*\)(?: rotate\([^)]*\))? '
                      r'scale\(([0-9.]+) -\1\)"')
#: The smallest text a reader should have to read in a figure, in CSS px at the displayed size.
MIN_TEXT_PX = 10.0
#: The smallest figure text a phone (390 px) must show, unless the figure opens full size
#: on tap (issues #46, item 5, and #73, item 4).
MIN_PHONE_TEXT_PX = 8.0

READING_JS = """(verdictLabels) => {
  const main = document.querySelector('main') || document.body;
  const out = {scrollW: document.documentElement.scrollWidth,
               clientW: document.documentElement.clientWidth};
  // every verdict badge: one of the closed set, its class naming its word
  out.badges = Array.from(main.querySelectorAll('.bp-verdict')).map(b => ({
    text: b.textContent.trim(),
    slug: Array.from(b.classList).filter(c => c.startsWith('bp-verdict--')).join(' ')}));
  // every cell of a column headed "verdict": exactly one badge and nothing else
  out.verdictCells = [];
  for (const t of main.querySelectorAll('table')) {
    const heads = Array.from(t.querySelectorAll('thead th')).map(th => th.textContent.trim());
    heads.forEach((h, k) => {
      if (!/verdict/i.test(h)) return;
      for (const row of t.querySelectorAll('tbody tr')) {
        const cell = row.children[k];
        if (!cell) continue;
        const badges = cell.querySelectorAll('.bp-verdict');
        out.verdictCells.push({table: t.id, head: h, text: cell.textContent.trim(),
                               glance: !!t.closest('.bp-glance'), badges: badges.length,
                               badge: badges.length ? badges[0].textContent.trim() : ''});
      }
    });
  }
  // tables: wider than their box only when the box scrolls; captions whole inside the box
  out.tables = Array.from(main.querySelectorAll('table')).map(t => {
    const box = t.parentElement, br = box.getBoundingClientRect();
    const cap = t.querySelector('caption'), cr = cap ? cap.getBoundingClientRect() : null;
    return {id: t.id, width: t.getBoundingClientRect().width, box: br.width,
            scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
            capInside: !cr || (cr.left >= br.left - 1 && cr.right <= br.right + 1),
            cards: t.classList.contains('bp-cards')};
  });
  // code: a line longer than its block scrolls inside it
  out.code = Array.from(main.querySelectorAll('pre')).filter(p => p.scrollWidth > p.clientWidth + 1)
    .map(p => ({scrolls: ['auto', 'scroll'].includes(getComputedStyle(p).overflowX),
                text: p.textContent.slice(0, 40)}));
  out.images = Array.from(main.querySelectorAll('.cell_output img, figure img')).map(i => ({
    src: i.getAttribute('src'), shown: i.getBoundingClientRect().width,
    zoom: !!(i.closest('a') && i.closest('a').href === i.src)}));
  // the first mention of the authors' code in running text (not a heading, caption, code
  // or badge) is a link to their repository
  const skip = 'h1, h2, h3, h4, h5, h6, caption, figcaption, pre, code, script, style, '
             + '.bp-verdict, .admonition-title, nav';
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  out.firstMention = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!/published code|authors['\u2019] code/i.test(n.textContent)) continue;
    if (n.parentElement.closest(skip)) continue;
    const a = n.parentElement.closest('a');
    out.firstMention = {text: n.textContent.trim().slice(0, 60), href: a ? a.href : null};
    break;
  }
  out.links = Array.from(main.querySelectorAll('a')).map(a => a.href);
  return out;
}"""


def svg_text_sizes(svg: Path) -> tuple[float, float]:
    """The smallest text of a matplotlib SVG figure, in points, and its viewBox width."""
    text = svg.read_text(encoding="utf-8")
    view = re.search(r'viewBox="0 0 ([0-9.]+) [0-9.]+"', text)
    assert view is not None, f"{svg}: no viewBox"
    sizes = [100 * float(s) for s in SVG_TEXT.findall(text)]
    return (min(sizes) if sizes else float("inf")), float(view.group(1))


def test_svg_text_sizes_reads_matplotlib_figures(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2], [3, 4], label="a")
    ax.legend(fontsize=7)
    ax.set_ylabel("rotated")
    fig.savefig(tmp_path / "f.svg")
    plt.close(fig)
    smallest, width = svg_text_sizes(tmp_path / "f.svg")
    assert smallest == pytest.approx(7.0) and width == pytest.approx(216.0)  # 3 in = 216 pt


def _read(browser, url: str, width: int, *, height: int = 900, js: str = READING_JS) -> dict:
    context = browser.new_context(viewport={"width": width, "height": height},
                                  service_workers="block")
    try:
        page = context.new_page()
        page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
        page.evaluate("""() => (window.MathJax && window.MathJax.startup
            && window.MathJax.startup.promise)
            ? window.MathJax.startup.promise.then(() => 1) : 0""")
        page.wait_for_function("() => Array.from(document.images).every(i => i.complete)",
                               timeout=TIMEOUT_MS)
        page.wait_for_timeout(200)
        return page.evaluate(js, list(LABELS))
    finally:
        context.close()


#: The longest condition or note a verdict cell may add after its badge: two arms, each
#: with the task and mode where the claim holds, "only fixed head size (induction,
#: published code); fixed attention width (histogram, published code)" (96 characters,
#: chapter 12's mixing claim over its arms), is the longest the book's rules write.
MAX_CONDITION = 100


def verdict_cell_reads(cell: dict) -> bool:
    """A verdict cell holds one badge and, after a *holds with conditions*, its condition
    (never the badge alone: issue #45, the condition in the verdict cell itself), after a
    *fails*, *not supported* or *not testable* at most its note ("as defined; the published
    code reproduces it", "copy set aside: needs no attention"), in a few words following a
    colon; *holds* stands alone. The glance table's first column, a
    heading per verdict (``glance``), holds the badge alone."""
    if cell["badges"] != 1 or not cell["text"].startswith(cell["badge"]):
        return False
    rest = cell["text"][len(cell["badge"]):]
    if cell.get("glance"):
        return not rest
    if not rest:
        return cell["badge"] != "holds with conditions"
    words = rest.removeprefix(":").strip()
    return (cell["badge"] != "holds" and rest.startswith(":")
            and 0 < len(words) <= MAX_CONDITION)


def test_a_verdict_cell_is_one_verdict_and_at_most_its_condition():
    cell = {"badges": 1, "badge": "holds with conditions"}
    assert not verdict_cell_reads({**cell, "text": "holds with conditions"})  # which ones?
    assert verdict_cell_reads({**cell, "text": "holds with conditions", "glance": True})
    assert not verdict_cell_reads({**cell, "text": "holds with conditions: x", "glance": True})
    assert verdict_cell_reads({"badges": 1, "badge": "fails", "text": "fails"})
    assert verdict_cell_reads({**cell, "text": "holds with conditions: only induction"})
    assert not verdict_cell_reads({**cell, "text": "holds with conditions and more"})
    too_long = "x" * (MAX_CONDITION + 1)
    assert not verdict_cell_reads({**cell, "text": f"holds with conditions: {too_long}"})
    assert not verdict_cell_reads({**cell, "badges": 2, "text": "holds with conditions"})
    assert not verdict_cell_reads({"badges": 1, "badge": "holds", "text": "holds: mostly"})
    assert verdict_cell_reads({"badges": 1, "badge": "not supported",
                              "text": "not supported: copy set aside: needs no attention"})


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("docname", DOCNAMES)
def test_page_reads_on_any_screen(docname, width, built_html, browser):
    """Opened from file:// at 1280 px and at 390 px: every verdict is one of the book's closed
    set, every verdict cell holds one badge and nothing else, no table is clipped (it fits its
    box or scrolls inside it, its caption whole), code scrolls, figure text is at least
    10 px at 1280 px (at 390 px a figure shrinks to the screen: see
    test_phone_screen_scrolls_only_inside_tables), the first mention of the authors' code
    links to it, and at 390 px the page itself never scrolls sideways."""
    html = built_html / f"{docname}.html"
    page = _read(browser, html.as_uri(), width)
    where = f"{docname} at {width} px"

    wrong = [b for b in page["badges"] if b["text"] not in LABELS
             or b["slug"] != f"bp-verdict--{Verdict.parse(b['text']).slug}"]
    assert not wrong, f"{where}: verdicts outside the vocabulary: {wrong[:3]}"
    bad_cells = [c for c in page["verdictCells"] if not verdict_cell_reads(c)]
    assert not bad_cells, f"{where}: verdict cells that are not one verdict: {bad_cells[:3]}"

    for t in page["tables"]:
        assert t["width"] <= t["box"] + 1 or t["scrolls"], (
            f"{where}: table {t['id']!r} ({t['width']:.0f} px) is cut off in its "
            f"{t['box']:.0f} px box")
        assert t["capInside"], f"{where}: the caption of table {t['id']!r} is clipped"
    cut = [c["text"] for c in page["code"] if not c["scrolls"]]
    assert not cut, f"{where}: code lines cut off: {cut[:3]}"

    for img in page["images"]:
        src = img["src"].split("?")[0]
        assert src.endswith(".svg"), f"{where}: a figure is a raster image ({src}), not SVG"
        smallest, view_width = svg_text_sizes((html.parent / src).resolve())
        shown = smallest * img["shown"] / view_width
        if width == 1280:
            assert shown >= MIN_TEXT_PX, (
                f"{where}: figure {src} shows text at {shown:.1f} px (< {MIN_TEXT_PX:g} px)")
        elif img["shown"] > 0:
            # on a phone a figure shrinks to the screen: its text reads at 8 px, or the
            # figure opens full size on tap (book/_static/figure-zoom.js)
            assert shown >= MIN_PHONE_TEXT_PX or img["zoom"], (
                f"{where}: figure {src} shows text at {shown:.1f} px and does not open "
                "full size on tap")

    mention = page["firstMention"]
    if mention is not None:
        assert mention["href"] == PUBLISHED_CODE_URL, (
            f"{where}: the first mention of the authors' code is not linked: {mention}")

    if width == 390:
        assert page["scrollW"] <= page["clientW"], (
            f"{where}: the page is {page['scrollW']} px wide in a {page['clientW']} px screen")
        for t in page["tables"]:
            if t["cards"]:
                assert t["width"] <= t["box"] + 1, (
                    f"{where}: the findings table {t['id']!r} does not fit as cards")


PHONE_JS = """() => {
  const main = document.querySelector('main') || document.body;
  const out = {scrollW: document.scrollingElement.scrollWidth, innerW: window.innerWidth};
  // every image of a figure: within its figure and on the screen (its legend with it)
  out.images = Array.from(main.querySelectorAll('figure img')).map(i => {
    const r = i.getBoundingClientRect(), f = i.closest('figure').getBoundingClientRect();
    return {src: (i.getAttribute('src') || '').split('/').pop(), width: r.width,
            box: f.width, left: r.left, right: r.right};
  }).filter(i => i.width > 0);  // a figure in a closed dropdown is not shown
  // every table wider than its box: the box scrolls, the first column stays in view
  out.tables = Array.from(main.querySelectorAll('table')).map(t => {
    const box = t.parentElement;
    const first = Array.from(t.rows).map(r => r.cells[0]).filter(c => c);
    return {id: t.id || t.className, width: t.getBoundingClientRect().width,
            box: box.clientWidth, overflowX: getComputedStyle(box).overflowX,
            positions: Array.from(new Set(first.map(c => getComputedStyle(c).position)))};
  }).filter(t => t.width > t.box + 1);
  return out;
}"""





def test_the_playground_figures_read_on_a_phone(built_html, browser):
    """At 390 px the playground's figures (Fig. 5.1 and the others drawn by
    ``playground.plot_signals``) shrink to the screen and their smallest text still reads:
    at least 8 px as shown (a text-width figure at 10 pt would show 5 px there)."""
    html = built_html / "notebooks" / "05_playground.html"
    page = _read(browser, html.as_uri(), 390)
    assert page["images"], "no figure on the playground page"
    for img in page["images"]:
        src = img["src"].split("?")[0]
        smallest, view_width = svg_text_sizes((html.parent / src).resolve())
        shown = smallest * img["shown"] / view_width
        assert shown >= MIN_PHONE_TEXT_PX, f"figure {src}: text at {shown:.1f} px at 390 px"


@pytest.mark.parametrize("docname", DOCNAMES)
def test_phone_screen_scrolls_only_inside_tables(docname, built_html, browser):
    """At 390 x 844 (a phone), opened from file://: the page never scrolls sideways; every
    figure shrinks to fit its box and the screen, so all of it (legend included) is in view;
    a table wider than its box scrolls inside that box with its first column sticky."""
    page = _read(browser, (built_html / f"{docname}.html").as_uri(), 390, height=844,
                 js=PHONE_JS)
    where = f"{docname} at 390 px"
    assert page["scrollW"] <= page["innerW"] + 1, (
        f"{where}: the page is {page['scrollW']} px wide on a {page['innerW']} px screen")
    for img in page["images"]:
        assert img["width"] <= img["box"] + 1, (
            f"{where}: figure {img['src']} is {img['width']:.0f} px in a {img['box']:.0f} px box")
        assert img["left"] >= -1 and img["right"] <= page["innerW"] + 1, (
            f"{where}: figure {img['src']} reaches outside the screen: {img}")
    for t in page["tables"]:
        assert t["overflowX"] in ("auto", "scroll"), (
            f"{where}: table {t['id']!r} ({t['width']:.0f} px) is wider than its "
            f"{t['box']} px box, which does not scroll (overflow-x: {t['overflowX']})")
        assert t["positions"] == ["sticky"], (
            f"{where}: the first column of the wide table {t['id']!r} is not sticky: "
            f"{t['positions']}")


def test_intro_findings_give_both_answers_and_their_evidence(built_html, browser):
    """The introduction's findings: a verdict and a link to the evidence in every row; for
    Section 4 the published code's answer beside the definitions', the reversal shown."""
    html = built_html / "book" / "intro.html"
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
    tables = {t.get("id"): t for t in soup.select("main table")}
    assert {"tbl-findings", "tbl-findings-section4"} <= set(tables)
    for name in ("tbl-findings", "tbl-findings-section4"):
        rows = tables[name].select("tbody tr")
        assert rows, name
        for row in rows:
            assert len(row.select(".bp-verdict")) == 1, row.get_text(" ", strip=True)[:80]
            evidence = [a["href"] for a in row.select("a[href]") if "notebooks/" in a["href"]]
            assert evidence, f"{name}: no evidence linked: {row.get_text(' ', strip=True)[:80]}"
    section4 = tables["tbl-findings-section4"]
    heads = [th.get_text(" ", strip=True) for th in section4.select("thead th")]
    assert heads[2:4] == ["With the published code", "Under the definitions"], heads
    text = section4.get_text(" ", strip=True)
    assert "reversed" in text  # a reversal named in its cell (the pairs, in cycle)
    assert "reproduced (published code only)" not in text  # one vocabulary: a condition
    # the first screen: a heading, one sentence naming the five verdicts, then the findings
    # at a glance (every claim by verdict and part, chapters linked); the narrative after it
    first = soup.select_one("main section")
    paragraphs = first.find_all("p", recursive=False)
    lede = paragraphs[0]
    assert len(re.findall(r"\.(?:\s|$)", lede.get_text(" ", strip=True))) == 1
    assert len(lede.select(".bp-verdict")) == len(Verdict)
    box = lede.find_next_sibling()
    glance = None if box is None else box.select_one("table#tbl-findings-glance")
    assert glance is not None
    rows = glance.select("tbody tr")
    assert rows and all(len(r.select(".bp-verdict")) == 1 for r in rows)
    assert len(glance.select("a[href*='notebooks/']")) >= sum(
        len(tables[n].select("tbody tr")) for n in ("tbl-findings", "tbl-findings-section4"))
    # in a browser at 1280 x 800 every verdict of the glance is on the first screen; at 390
    # its parts stack (cards), nothing behind a sideways scroll
    screen = _read(browser, html.as_uri(), 1280, height=800, js="""() => {
      const t = document.querySelector('#tbl-findings-glance');
      const rows = [...t.querySelectorAll('tbody tr')].map((r) => r.getBoundingClientRect());
      return {bottom: Math.max(...rows.map((r) => r.bottom)), rows: rows.length};
    }""")
    assert screen["rows"] == len(rows) and screen["bottom"] <= 800, screen
    page = _read(browser, html.as_uri(), 390)
    assert page["scrollW"] <= page["clientW"]


def test_reproducibility_page_links_the_authors_repository(built_html):
    text = (built_html / "book" / "reproducibility.html").read_text(encoding="utf-8")
    assert f'href="{PUBLISHED_CODE_URL}"' in text


def test_cite_this_links_citation_cff_copied_into_the_book(built_html):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built_html / "book" / "intro.html").read_text(encoding="utf-8"),
                         "html.parser")
    box = next(a for a in soup.select("main .admonition")
               if "Cite this" in a.get_text(" ", strip=True))
    link = next(a for a in box.select("a[href]") if a["href"].endswith("CITATION.cff"))
    copied = (built_html / "book" / link["href"]).resolve()
    assert copied.is_file() and copied.read_text() == (ROOT / "CITATION.cff").read_text()
    assert "@software{bparallel" in box.get_text()


# ------------------------------------------------------------------ the text a reader reads

#: What a template left on a page looks like: a range whose ends read the same ("between
#: 100.0% and 100.0%"), a verb that did not agree with its count ("1 hold"), a bound that
#: says nothing ("keep >= 100%", "at most 0.00%"), an internal name ("results key"), a note
#: from an earlier version ("first edition").
LEFTOVERS = {
    "equal bounds": re.compile(r"\bbetween (-?[\d.,]+%?) and \1(?![\d.])"),
    "equal range": re.compile(r"(?<![\d.])(-?[\d.,]+%?) to \1(?![\d.%])"),
    "count agreement": re.compile(r"(?<![\w.,-])1 (?:hold|fail|survive|remain)\b(?!s)"),
    "vacuous bound": re.compile(r"(?:≥|>=)\s*100(?:\.0+)?\s?%|at most 0(?:\.0+)?\s?%"),
    "results key": re.compile(r"results key [\w.]+\.[\w.]+|verdict\.order_rho"),
    "earlier edition": re.compile(r"first edition"),
}


@pytest.mark.parametrize("docname", toc_docnames())
def test_no_template_leftovers_on_a_page(docname, built_html):
    text = _page_main(built_html, docname).get_text(" ", strip=True)
    found = {name: pat.search(text).group(0) for name, pat in LEFTOVERS.items()
             if pat.search(text)}
    assert not found, f"{docname}: template leftovers {found}"


def test_leftover_patterns_catch_what_they_name():
    samples = {"equal bounds": "between 100.0% and 100.0% of", "equal range": "from 3.1 to 3.1",
               "count agreement": "1 hold with conditions", "vacuous bound": "keep ≥ 100% acc",
               "results key": "results key verdict.order_rho", "earlier edition": "first edition"}
    for name, text in samples.items():
        assert LEFTOVERS[name].search(text), name
    assert LEFTOVERS["vacuous bound"].search("at most 0.00 % at any head count")
    for fine in ("between 0.4% and 100.0%", "from 3.1 to 3.15", "2 hold", "11 of 16",
                 "at most 0.5%", "1 holds", "positions 0..s-1 hold s tokens",
                 "their flat results keys."):
        assert not any(p.search(fine) for p in LEFTOVERS.values()), fine


def verdict_rows(main) -> list[tuple[str, str, str]]:
    """Every table row of a page that holds a verdict badge: (claim, qualifier, verdict), the
    claim the row's first cell, the qualifier its "task" or "arm" column ("" without one). In
    a grid with an arm per column (chapter 12's verdicts in short, ``verdict_grid``), each
    cell is a row of its own, qualified by its column's arm."""
    out = []
    for table in main.find_all("table"):
        head = [th.get_text(" ", strip=True).lower() for th in table.select("thead th")]
        grid = "all arms" in head and "arm" not in head and "task" not in head
        for tr in table.select("tbody tr"):
            badge = tr.select_one(".bp-verdict")
            if badge is None:
                continue
            tds = tr.find_all("td")
            cells = [td.get_text(" ", strip=True) for td in tds]
            if grid:
                for name, td in zip(head[1:], tds[1:], strict=False):
                    if (b := td.select_one(".bp-verdict")) is not None:
                        out.append((cells[0], name, b.get_text(" ", strip=True)))
                continue
            # what narrows the claim: a task, or an arm of chapter 12's experiment
            qualifier = next((cells[head.index(q)] for q in ("task", "arm") if q in head), "")
            out.append((cells[0], qualifier, badge.get_text(" ", strip=True)))
    return out


def test_one_verdict_per_claim_in_the_whole_book(built_html):
    """A claim (a row's first cell, for the claim as a whole: no task, or task "all") reads
    the same verdict on every page that states it: the introduction's findings and the
    chapters' verdict tables come from the same recorded verdicts."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    rows = 0
    for docname in toc_docnames():
        for claim, task, verdict in verdict_rows(_page_main(built_html, docname)):
            if task not in ("", "all", "all arms", "both", "—"):  # the claim as a whole
                continue
            rows += 1
            key = " ".join(claim.lower().split())
            if key in seen and seen[key][1] != verdict:
                clashes.append((claim, seen[key], (docname, verdict)))
            seen.setdefault(key, (docname, verdict))
    assert rows > 20, f"only {rows} verdict rows found: did the tables change?"
    assert not clashes, f"claims with two verdicts: {clashes}"


@pytest.mark.parametrize("mode", ["http", "file"])
def test_a_query_in_the_address_of_a_content_page_logs_no_error(mode, built_html, book_server,
                                                                 browser):
    """A link such as ``intro.html?q=fidelity#sec`` (the search dialog's query carried to a
    page) opens the page without a console error, keeping its fragment."""
    query = "?q=fidelity#verdict-legend"
    url = (book_server + "book/intro.html" + query if mode == "http"
           else (built_html / "book" / "intro.html").as_uri() + query)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        _record_errors(page, errors)
        page.goto(url)
        page.wait_for_load_state("load")
        page.wait_for_timeout(1000)
        assert page.evaluate("() => window.location.hash") == "#verdict-legend"
    finally:
        context.close()
    assert errors == [], f"intro.html?q= ({mode}) logged console errors: {errors[:3]}"


def test_every_number_of_the_readme_findings_is_the_built_books(built_html):
    """Issue #46, item 2: the README's findings cite no number the built book does not show:
    every number in its findings block (a claim's equation or table, a chapter) appears in
    the built introduction's findings at a glance, so the two cannot drift apart."""
    from bparallel.book.tools import findings as fd

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split(fd.START, 1)[1].split(fd.END, 1)[0]
    numbers = re.findall(r"\d+(?:[.,]\d+)*", block)
    assert len(numbers) > 20, "the README's findings block holds almost no numbers"
    glance = _page_main(built_html, "book/intro").find(id="tbl-findings-glance")
    assert glance is not None, "the built intro has no findings at a glance"
    shown = set(re.findall(r"\d+(?:[.,]\d+)*", glance.get_text(" ", strip=True)))
    missing = sorted(set(numbers) - shown)
    assert not missing, f"README numbers the built book does not show: {missing}"
