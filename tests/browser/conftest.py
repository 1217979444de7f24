"""Fixtures of the browser tests: the built book served or opened from ``file://``, and
headless Debian Chromium driven by Playwright (never ``playwright install``).

A built book is required, not optional: without `_build/html` these fixtures *fail* and say
to run `make book`, so a browser test can never pass by being skipped.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = os.environ.get("BPARALLEL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
]


@pytest.fixture(scope="session")
def built_html() -> Path:
    """`_build/html`, after checking that the book has been built."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"the book is not built ({HTML / 'index.html'} is missing): run `make book`")
    return HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the stdlib signature
        pass


@pytest.fixture(scope="session")
def book_server(built_html: Path):
    """Serve `_build/html` on 127.0.0.1 at a free port; yields the base URL (ends with /)."""
    handler = functools.partial(_QuietHandler, directory=str(built_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright (never `playwright install`)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        pytest.fail(
            f"playwright (Python) is not installed in this environment: {err}; run `make setup`"
        )
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make setup` (installs Debian chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def offline_page(browser):
    """Open pages offline: ``offline_page(cls=OfflinePage, **options)`` opens a
    :class:`tests.browser.offline.OfflinePage` (or a subclass's) in its own context, closed
    after the test."""
    from tests.browser.offline import OfflinePage

    opened: list[OfflinePage] = []

    def open_page(cls: type[OfflinePage] = OfflinePage, **options) -> OfflinePage:
        opened.append(cls(browser, **options))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()
