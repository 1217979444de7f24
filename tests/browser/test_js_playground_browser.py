"""The JavaScript playground of the built book, driven in headless Chromium, network cut off.

The playground page (`_build/html/notebooks/05_playground.html`) is opened from file:// and
over http://127.0.0.1. The test clicks an edge of the adjacency grid and moves a beta slider
with the keyboard, then checks: the address fragment decodes (in Python,
`bparallel.book.playground_link.decode_state`) to exactly the state built the same way
in Python;
the displayed minimax fidelities and amplification equal `bparallel.book.playground.compute`'s
to 1e-12; reloading the link restores the same state and numbers; the exported code equals
`bparallel.book.playground.to_python`; no console error; no request leaves the machine.

Needs a built book (`make book`); without one these tests fail, they do not skip.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bparallel.book import playground as pg
from bparallel.book.playground_link import decode_state
from bparallel.book.render.js_playground import source_hash
from bparallel.graphs import is_feedforward
from tests.browser.offline import OfflinePage

pytestmark = pytest.mark.browser

PAGE = "notebooks/05_playground.html"
TIMEOUT_MS = 30_000
ATOL = 1e-12


@pytest.fixture(scope="module")
def playground_page(built_html: Path) -> Path:
    """The built playground page, checked to hold the current JavaScript playground."""
    page = built_html / PAGE
    if not page.is_file():
        pytest.fail(f"{page} is missing: run `make book`")
    text = page.read_text(encoding="utf-8")
    if 'class="bp-widget bp-pg"' not in text:
        pytest.fail(f"{page} has no JavaScript playground (the 'In your browser' cell): "
                    "run `make book`")
    if f'data-bp-source="{source_hash()}"' not in text:
        pytest.fail(
            f"{page} embeds an older bparallel/book/render/js/ than the sources (the notebook's "
            "output "
            "came from the execution cache): run `rm -rf _build/.jupyter_cache` and `make book`"
        )
    return page


class Session(OfflinePage):
    """The playground's page offline (:class:`OfflinePage`), the book's server allowed; ready
    once it shows the multi-head minimax fidelity."""

    def __init__(self, browser: Any, local_prefix: str) -> None:
        super().__init__(browser, width=1280, height=1000, local_prefix=local_prefix)

    def open(self, url: str) -> None:
        super().open(url, '.bp-pg [data-bp="minimax-multi"]', timeout=TIMEOUT_MS)

    # ------------------------------------------------------------------ reading the page
    def state(self) -> pg.PlaygroundState:
        """The configuration in the address fragment, decoded by Python."""
        url = self.page.evaluate("() => window.location.href")
        assert "#pg=" in url, f"no #pg= fragment in {url}"
        return decode_state(url)

    def shown(self, key: str) -> tuple[str, str]:
        """``(text, data-value)`` of a summary cell such as ``minimax-multi``."""
        cell = self.page.locator(f'.bp-pg [data-bp="{key}"]')
        return cell.inner_text().strip(), cell.get_attribute("data-value")


def check_numbers(s: Session, state: pg.PlaygroundState) -> None:
    """Displayed minimax fidelities, amplification, mixing times equal Python's for state."""
    res = pg.compute(state)
    rep = res.report
    for h, value in enumerate(rep.head_minimax):
        text, exact = s.shown(f"minimax-{h}")
        assert abs(float(exact) - value) <= ATOL, (h, exact, value)
        assert text == f"{value:.5f}"
    text, exact = s.shown("minimax-multi")
    assert abs(float(exact) - rep.multi_minimax) <= ATOL, (exact, rep.multi_minimax)
    assert text == f"{rep.multi_minimax:.5f}"
    amp = s.page.locator('.bp-pg [data-bp="amplification"]').get_attribute("data-value")
    assert abs(float(amp) - rep.amplification) <= ATOL
    for h, m in enumerate(res.head_mixing):
        assert s.shown(f"mixing-{h}")[1] == ("null" if m is None else str(m))
        # a walk that never mixes reads as in the static tables (summary_table)
        assert s.shown(f"mixing-{h}")[0] == (pg.NEVER_MIXES if m is None else str(m))
    assert s.shown("mixing-multi")[1] == ("null" if res.multi_mixing is None
                                          else str(res.multi_mixing))
    shown = s.page.locator('.bp-pg [data-bp="warning"]').all_inner_texts()
    assert [w.lstrip("\u26a0 ").strip() for w in shown] == res.warnings


def save_screenshot(s: Session, path: Path) -> None:
    """The whole playground, from a full-page capture at scroll 0 (no sticky header over it)."""
    s.page.evaluate("""() => {
        document.querySelectorAll(".bp-pg textarea").forEach(t => t.setSelectionRange(0, 0));
        document.activeElement.blur();
        window.scrollTo(0, 0);
    }""")
    box = s.page.locator(".bp-pg").bounding_box()
    assert box is not None, "the playground is not displayed"
    pad = 8
    s.page.screenshot(path=str(path), full_page=True, clip={
        "x": max(0, box["x"] - pad), "y": max(0, box["y"] - pad),
        "width": box["width"] + 2 * pad, "height": box["height"] + 2 * pad,
    })


def exercise(s: Session, url: str, screenshot: Path | None = None) -> None:
    """Open the page, edit with mouse and keyboard, check against Python, reload the link."""
    s.open(url)
    start = pg.from_preset("Example 3.13 (paper)")
    assert s.state() == start, "the playground should open on Example 3.13 (paper)"
    check_numbers(s, start)
    assert any("head 2 is not feedforward" in w for w in
               s.page.locator('.bp-pg [data-bp="warning"]').all_inner_texts())

    # the grid reads as W and Delta (graphs.adjacency_matrix): row i receives, column j
    # sends, so row v, column u holds head 1's edge u -> v, and the backward v -> u of head 2
    # sits above the diagonal (row u, column v)
    rows = s.page.locator('.bp-pg [data-bp="grid-0"] tbody tr')
    assert rows.nth(1).locator("td").nth(0).locator("button").get_attribute(
        "data-bp") == "edge-0-0-1"
    back = s.page.locator('.bp-pg [data-bp="grid-1"] tbody tr').nth(0).locator("td").nth(1)
    assert back.locator("button").get_attribute("data-bp") == "edge-1-1-0"
    assert "bp-pg-back" in back.locator("button").get_attribute("class")

    # click head 1's edge u -> tau, then lower head 2's raw beta from 0.5 to 0.3 by keyboard
    edge = s.page.locator('.bp-pg [data-bp="edge-0-0-3"]')
    assert edge.get_attribute("aria-pressed") == "false"
    preset = s.page.locator('.bp-pg [data-bp="preset"]')
    assert preset.input_value() == "Example 3.13 (paper)"
    edge.click()
    assert edge.get_attribute("aria-pressed") == "true"
    assert preset.input_value() == "", "after an edit the preset menu must say (custom)"
    slider = s.page.locator('.bp-pg [data-bp="beta-1"]')
    slider.focus()
    for _ in range(20):
        slider.press("ArrowLeft")
    expected = pg.from_preset("Example 3.13 (paper)")
    expected.toggle(0, 0, 3)
    expected.set_weight(1, 0.3)
    got = s.state()
    assert got == expected, f"the link holds {got}, expected {expected}"
    check_numbers(s, expected)
    # the slider's own value and the normalised weight
    assert s.page.locator('.bp-pg [data-bp="beta-value-1"]').inner_text() == (
        f"{0.3:.2f} (normalised {expected.beta[1]:.3f})"
    )

    # keyboard on the grid: arrows move between edges (down: the next receiver, in column
    # v), stepping over the self-loop; Space toggles (head 2: v -> w)
    s.page.locator('.bp-pg [data-bp="edge-1-1-0"]').focus()
    s.page.keyboard.press("ArrowDown")  # steps over the self-loop v -> v
    s.page.keyboard.press("ArrowDown")
    focused = s.page.evaluate("() => document.activeElement.dataset.bp")
    assert focused == "edge-1-1-3"
    s.page.keyboard.press("ArrowUp")
    s.page.keyboard.press("Space")
    expected.toggle(1, 1, 2)
    assert s.state() == expected
    check_numbers(s, expected)

    # export: the Python that rebuilds this configuration
    s.page.locator('.bp-pg [data-bp="export"]').click()
    code = s.page.locator('.bp-pg [data-bp="code"]').input_value()
    assert code == pg.to_python(expected)

    if screenshot is not None:
        save_screenshot(s, screenshot)

    # the link round-trips: a fresh load of the address shows the same state and numbers
    link = s.page.evaluate("() => window.location.href")
    s.page.goto("about:blank")
    s.open(link)
    assert s.page.evaluate("() => window.location.href") == link
    assert s.state() == expected
    assert s.page.locator('.bp-pg [data-bp="edge-0-0-3"]').get_attribute("aria-pressed") == "true"
    assert s.page.locator('.bp-pg [data-bp="beta-1"]').input_value() == "0.3"
    check_numbers(s, expected)


@pytest.mark.parametrize("mode", ["file", "http"])
def test_edit_check_against_python_and_reload(mode, playground_page, book_server,
                                              offline_page, screenshot_dir):
    url = playground_page.as_uri() if mode == "file" else book_server + PAGE
    s = offline_page(Session, local_prefix=book_server)
    try:
        shot = screenshot_dir / "js_playground.png" if mode == "file" else None
        exercise(s, url, screenshot=shot)
    finally:
        s.close()
    assert s.external == [], f"the playground page ({mode}) asked the network for {s.external}"
    assert s.problems == [], "\n".join(s.problems)


def test_presets_and_resizing_match_python(playground_page, book_server, offline_page):
    """Every preset through the <select>, then 12 nodes, 4 heads and horizon 200."""
    s = offline_page(Session, local_prefix=book_server)
    try:
        s.open(playground_page.as_uri())
        select = s.page.locator('.bp-pg [data-bp="preset"]')
        for name in pg.PRESETS:
            select.select_option(name)
            state = s.state()
            if name != "Random feedforward":
                assert state == pg.from_preset(name)
            else:
                assert all(is_feedforward(e, state.n) for e in state.edge_lists())
            check_numbers(s, state)
        # a head added by the heads box starts as the path, as in Python (not empty)
        select.select_option("Example 3.13 (paper)")
        s.page.locator('.bp-pg [data-bp="heads"]').fill("3")
        expected = pg.from_preset("Example 3.13 (paper)")
        expected.set_num_heads(3)
        assert s.state() == expected
        check_numbers(s, expected)
        assert select.input_value() == ""  # an edit: (custom)
        # out-of-range input is refused visibly: the box reverts and a warning says why
        nodes = s.page.locator('.bp-pg [data-bp="nodes"]')
        nodes.fill("50")
        nodes.blur()  # leaving the box commits it ('change')
        assert nodes.input_value() == "4" and s.state() == expected
        warnings = s.page.locator('.bp-pg [data-bp="warning"]').all_inner_texts()
        assert any('nodes: "50" was refused' in w and "kept 4" in w for w in warnings), warnings
        s.page.locator('.bp-pg [data-bp="nodes"]').fill("12")
        s.page.locator('.bp-pg [data-bp="heads"]').fill("4")
        s.page.locator('.bp-pg [data-bp="seed"]').fill("5")
        s.page.locator('.bp-pg [data-bp="load"]').click()
        s.page.locator('.bp-pg [data-bp="horizon"]').fill("200")
        state = s.state()
        assert (state.n, state.num_heads, state.horizon) == (12, 4, 200)
        check_numbers(s, state)
        assert s.page.locator(".bp-pg svg.bp-pg-panel").count() == 5
    finally:
        s.close()
    assert s.external == [], f"the playground page asked the network for {s.external}"
    assert s.problems == [], "\n".join(s.problems)


def test_bad_link_falls_back_with_a_warning(playground_page, book_server, offline_page):
    s = offline_page(Session, local_prefix=book_server)
    try:
        s.open(playground_page.as_uri() + "#pg=v=1;n=99")
        warnings = s.page.locator('.bp-pg [data-bp="warning"]').all_inner_texts()
        assert any("could not be read" in w for w in warnings)
        assert s.state() == pg.from_preset("Example 3.13 (paper)")
    finally:
        s.close()
    assert s.external == [] and s.problems == [], (s.external, s.problems)


def test_node_count_change_keeps_the_sink_last(playground_page, book_server, offline_page):
    """Raising the number of nodes keeps the sink last: the edges into the old sink follow it,
    the new nodes pass to it, the page says so, and the numbers stay Python's (no minimax
    fidelity collapsing to 0, no "does not mix"); lowering it back restores the graph."""
    s = offline_page(Session, local_prefix=book_server)
    try:
        s.open(playground_page.as_uri())
        start = pg.from_preset("Example 3.13 (paper)")
        expected = start.copy()
        nodes = s.page.locator('.bp-pg [data-bp="nodes"]')
        nodes.fill("6")
        expected.set_n(6)
        assert s.state() == expected
        assert (0, 5) not in expected.heads[0] and (2, 5) in expected.heads[0]  # w -> tau kept
        check_numbers(s, expected)
        note = s.page.locator('.bp-pg [data-bp="notice"]').inner_text()
        assert "Nodes 4 \u2192 6: the sink \u03c4 stays last (now node 5)" in note, note
        assert "the new nodes 3, 4 pass to \u03c4" in note, note
        assert float(s.shown("minimax-multi")[1]) > 0
        assert all(s.shown(f"mixing-{k}")[1] != "null" for k in ("0", "1", "multi"))
        nodes.fill("4")
        expected.set_n(4)
        assert s.state() == expected
        assert [set(h) for h in expected.heads] == [set(h) for h in start.heads]
        check_numbers(s, expected)
        assert "were removed" in s.page.locator('.bp-pg [data-bp="notice"]').inner_text()
        s.page.locator('.bp-pg [data-bp="edge-0-0-3"]').click()  # another edit: the note goes
        assert s.page.locator('.bp-pg [data-bp="notice"]').count() == 0
    finally:
        s.close()
    assert s.external == [] and s.problems == [], (s.external, s.problems)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_first_view_explains_its_flag_and_fits_a_thumb(width, playground_page, offline_page):
    """At 1280 and 390 px: the default preset (Example 3.13 as the paper prints it) says why
    its head 2 is flagged within the widget's first view (right under its controls, before
    the grids), every edge toggle is at least 24 px square (WCAG 2.2 target size; 40 px on a
    phone) and on a phone every other control at least 24 px tall, the panels state phi_min in the
    table's unit (a fraction, no percent), and nothing overflows the page."""
    s = offline_page(width=width, height=844)
    s.open(playground_page.as_uri(), '.bp-pg [data-bp="minimax-multi"]')
    page = s.page
    try:
        notes = page.locator('.bp-pg [data-bp="preset-note"]').all_inner_texts()
        assert any("as the paper prints it" in n and "Example 3.13 (code)" in n for n in notes)
        sizes = page.evaluate("""() => {
          const box = (e) => e.getBoundingClientRect();
          const cells = [...document.querySelectorAll('.bp-pg .bp-pg-cell')].map(box);
          const other = [...document.querySelectorAll(
            '.bp-pg button:not(.bp-pg-cell), .bp-pg input, .bp-pg select')]
            .filter((e) => box(e).width > 0).map(box);
          const widget = box(document.querySelector('.bp-pg'));
          const note = box(document.querySelector('.bp-pg [data-bp="preset-note"]'));
          const grid = box(document.querySelector('.bp-pg [data-bp="grid-0"]'));
          return {cell: Math.min(...cells.map((b) => Math.min(b.width, b.height))),
                  other: Math.min(...other.map((b) => b.height)),
                  overflow: document.documentElement.scrollWidth,
                  note: note.top - widget.top, beforeGrid: note.bottom <= grid.top,
                  headings: [...document.querySelectorAll('.bp-pg .bp-pg-title')]
                    .map((e) => e.textContent)};
        }""")
        assert sizes["cell"] >= (40 if width == 390 else 24), sizes
        if width == 390:  # a thumb's other targets (a mouse's at 1280 keep their size)
            assert sizes["other"] >= 24, sizes
        assert sizes["overflow"] <= width, sizes
        assert sizes["beforeGrid"] and sizes["note"] < 844 / 2, sizes
        assert sizes["headings"] and all(
            re.fullmatch(r".+: \u03c6_min = [01]\.\d{5}", h) for h in sizes["headings"]), sizes
    finally:
        s.close()
    assert not s.problems and not s.external, (s.problems, s.external)
