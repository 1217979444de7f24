"""One offline browser page, the set-up every widget's browser test shares: a fresh context
whose every request outside the allowed schemes (and the book's server, where given) is
aborted and recorded, with console errors, page errors and dialogs recorded (a dialog is
dismissed). Opened by the ``offline_page`` fixture of ``conftest.py``, which closes it."""

from __future__ import annotations

from typing import Any

#: The requests a page opened offline may make: its own files and in-memory data.
LOCAL = ("file:", "data:", "blob:", "about:")
TIMEOUT_MS = 30_000


class OfflinePage:
    """A page in its own browser context, every request but ``allow`` (and ``local_prefix``)
    aborted and recorded in :attr:`external`; console errors, page errors and dialogs
    recorded in :attr:`problems`."""

    def __init__(self, browser: Any, *, width: int = 1280, height: int = 900,
                 local_prefix: str | None = None, allow: tuple[str, ...] = LOCAL) -> None:
        self.external: list[str] = []
        self.problems: list[str] = []
        self.closed = False
        self.allow = allow + ((local_prefix,) if local_prefix else ())
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           service_workers="block")
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.problems.append(f"console.{m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", self._dialog)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.allow):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def open(self, url: str, ready: str, timeout: int = TIMEOUT_MS) -> None:
        """Go to ``url`` and wait for the selector ``ready``."""
        self.page.goto(url, wait_until="load", timeout=timeout)
        self.page.wait_for_selector(ready, timeout=timeout)

    def close(self) -> None:
        if not self.closed:
            self.context.close()
            self.closed = True
