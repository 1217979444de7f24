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

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser

PLAYGROUND = "notebooks/05_playground"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
TIMEOUT_MS = 30_000


def toc_docnames(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The root and every `file:` of a jb-book table of contents, in reading order."""
    toc = yaml.safe_load(toc_path.read_text())
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return [re.sub(r"\.(md|ipynb)$", "", n) for n in names]


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
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    external: list[str] = []
    problems: list[str] = []

    def route(r):
        u = r.request.url
        if u.startswith((local_prefix, "file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            external.append(u)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on(
        "console",
        lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
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
        context.close()
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


@pytest.mark.parametrize("mode", ["http", "file"])
def test_search_page_explains_file_urls(mode, built_html, book_server, browser):
    """Opened from file://, the search page says before its results why they have no text
    previews and how to serve the book; over http it says nothing of the kind."""
    html = built_html / "search.html"
    query = "?q=fidelity"
    url = book_server + "search.html" + query if mode == "http" else html.as_uri() + query
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_load_state("load")
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


#: Chapters whose figures and output tables all have a number and a caption: every chapter.
CAPTIONED = sorted(f"notebooks/{p.stem}" for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.md"))


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
        assert re.match(r"Fig\. \d+ \S", text), f"{docname}: caption not numbered: {text[:60]}"


@pytest.mark.parametrize("docname", CAPTIONED)
def test_every_table_is_numbered_and_captioned(docname, built_html):
    main = _page_main(built_html, docname)
    tables = main.select(".cell_output table, .output table")
    assert tables, f"{docname}: no output tables found (did the page change?)"
    for t in main.find_all("table"):  # the prose's tables too, not only the outputs'
        caption = t.find("caption")
        assert caption is not None, f"{docname}: a table has no caption: {t.get_text()[:60]}"
        text = caption.get_text(" ", strip=True)
        assert re.match(r"Table \d+ \S", text), f"{docname}: caption not numbered: {text[:60]}"


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
    finally:
        context.close()
    nb = json.loads((built_html / "notebooks" / "02_mixing_time.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert nb["nbformat"] == 4 and any("image/png" in o.get("data", {}) for o in outputs)
    for name in DOCNAMES:
        if name.startswith("notebooks/"):
            assert (built_html / f"{name}.ipynb").is_file(), f"{name}.ipynb is missing"
