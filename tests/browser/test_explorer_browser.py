"""The model explorer in headless Chromium, offline: the exported page at two widths, a
crafted link, and chapter 13 of the built book (the data files are checked against torch
and the package in ``tests/book/test_explorer.py``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from bparallel.book.section4 import explorer
from tests.book.test_explorer import RTOL, SCALARS, STEPS, data_of


@pytest.fixture(scope="module")
def exported(explorer_export) -> tuple[Path, list[dict[str, Any]]]:
    return explorer_export


class Session:
    """One offline browser context on the page: every request but file: aborted and
    recorded, console errors, page errors and dialogs recorded."""

    def __init__(self, browser: Any, width: int = 1280) -> None:
        self.problems: list[str] = []
        self.external: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900},
                                           service_workers="block")
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.problems.append(m.text)
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(str(e)))
        self.page.on("dialog", self._dialog)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            self.external.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load")
        self.page.wait_for_selector('[data-bp="accuracy"]', timeout=60_000)

    def value(self, selector: str) -> float:
        return float(self.page.get_attribute(selector, "data-value"))


@pytest.fixture(scope="module")
def page_file(exported) -> Path:
    folder, catalogue = exported
    path = folder / "explorer.html"
    path.write_text("<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' "
                    "content='width=device-width, initial-scale=1'><title>explorer</title>"
                    "</head><body>" + explorer.page_html("./", catalogue=catalogue)
                    + "</body></html>", encoding="utf-8")
    return path


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_page_in_chromium_offline(width, exported, page_file, browser):
    """The page from file://, every other request refused: the default view (cycle, 16
    heads) shows the recorded accuracy, margin and measures; removing every head changes
    the predictions and the link; choosing another model draws its heatmaps; no console
    error; nothing overflows the width."""
    rec = data_of(exported, "cycle-h16")["recorded"]
    s = Session(browser, width)
    s.open(page_file.as_uri())
    assert math.isclose(s.value('[data-bp="accuracy"]'), rec["accuracy"], rel_tol=RTOL)
    assert math.isclose(s.value('[data-bp="margin"]'), rec["margin"], rel_tol=RTOL)
    for key in SCALARS + STEPS:
        shown, want = s.value(f'[data-bp="m-{key}"] td[data-value]'), rec["layers"][3][key]
        both_inf = math.isinf(shown) and math.isinf(want)  # "never mixes"
        assert both_inf or math.isclose(shown, want, rel_tol=RTOL), key
    page = s.page
    assert page.locator(".bp-ex-card").count() == 16
    page.click('[data-bp="remove-all"]')
    assert s.value('[data-bp="changed"]') > 90
    assert "x=ffff.ffff.ffff.ffff" in page.evaluate("location.hash")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.select_option('[data-bp="task"]', "majority")
    page.wait_for_function("document.querySelectorAll('.bp-ex-card').length === 16 && "
                           "location.hash.includes('majority-h16')", timeout=60_000)
    page.select_option('[data-bp="heads"]', "4")
    page.wait_for_function("document.querySelectorAll('.bp-ex-card').length === 4",
                           timeout=60_000)
    assert page.evaluate("document.querySelector('[data-bp=head-map-0]').width") == 100
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    s.context.close()
    assert not s.problems and not s.external, (s.problems, s.external)


@pytest.mark.browser
def test_a_crafted_link_injects_nothing(page_file, browser):
    s = Session(browser)
    s.open(page_file.as_uri() + "#ex=v=1;m=cycle-h16;s=0;l=1;w=learned;f=mean;"
           "p=0%3Cimg%20src=x%20onerror=alert(1)%3E")
    assert "could not be read" in s.page.inner_text('[data-bp="link-error"]')
    assert s.page.locator("#bp-explorer img").count() == 0
    assert "m=cycle-h16" in s.page.evaluate("location.hash")  # the default view
    s.context.close()
    assert not s.problems and not s.external, (s.problems, s.external)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_built_chapter_runs_the_explorer_offline(width, built_html, browser):
    """Chapter 13 of the built book, from file:// with every other request refused: the
    explorer loads its data from ``_static/explorer-data/``, shows the recorded accuracy of
    the default model, reruns the model when every head is removed, and nothing overflows."""
    page = built_html / "notebooks" / "13_explorer.html"
    data = explorer.read_data_script(built_html / "_static" / "explorer-data" / "cycle-h16.js")
    s = Session(browser, width)
    s.open(page.as_uri())
    assert math.isclose(s.value('[data-bp="accuracy"]'), data["recorded"]["accuracy"],
                        rel_tol=RTOL)
    s.page.click('[data-bp="remove-all"]')
    assert s.value('[data-bp="changed"]') > 90
    assert s.page.evaluate("document.querySelector('#bp-explorer').scrollWidth") <= width
    s.context.close()
    assert not s.problems and not s.external, (s.problems, s.external)
