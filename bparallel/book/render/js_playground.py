"""The browser playground as one self-contained HTML snippet (no kernel, no network).

The playground's sources are two ES modules and a stylesheet in ``bparallel/book/render/js/``:
``toydag.mjs`` (the mathematics, importable by Node) and ``playground.mjs`` (the interface,
which imports it), with ``playground.css`` after ``widget.css`` (what every in-page widget
shares, the model explorer too: :func:`style_block`). They stay the single source of truth.

A built book must work from a local file, and Chromium refuses to load ES modules over
``file://``. So :func:`playground_html` inlines everything into one page fragment: the
stylesheet in a ``<style>``, and both modules in one ``<script type="module">``, where
``toydag.mjs`` becomes a closure that returns its exported names as an object, and
``playground.mjs``'s ``import { ... } from "./toydag.mjs"`` becomes a destructuring of that
object. Nothing is fetched. In the book, ``notebooks/05_playground.md`` displays
``IPython.display.HTML(playground_html())`` and myst-nb writes it into the page as is.

A configuration to show first is passed as the JSON-ready dict of
:func:`bparallel.book.playground_link.config_of`: this rendering room knows nothing of the
playground's state type; :mod:`bparallel.book.playground_link` is the Python side of the
page's address fragment (``#pg=...``).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "JS_DIR",
    "SOURCES",
    "module_as_closure",
    "source_hash",
    "style_block",
    "inline_script",
    "playground_html",
]

JS_DIR = Path(__file__).resolve().parent / "js"
SOURCES = ("toydag.mjs", "playground.mjs", "widget.css", "playground.css")

_EXPORT = re.compile(r"^export (function|const|let|class) (\w+)", re.M)
_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./toydag\.mjs";', re.M)


def _read(name: str) -> str:
    return (JS_DIR / name).read_text(encoding="utf-8")


def source_hash() -> str:
    """Short SHA-256 of the sources; the page carries it to tell a stale build."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(_read(name).encode())
    return digest.hexdigest()[:16]


def style_block(stylesheet: str) -> str:
    """A widget's ``<style>`` element: ``widget.css`` (the frame, controls and rows that every
    in-page widget shares, scoped under ``.bp-widget``), then the widget's own
    ``stylesheet`` of :data:`JS_DIR`. Refuses a stylesheet that would end the element."""
    css = _read("widget.css") + "\n" + _read(stylesheet)
    if "</style" in css.lower():
        raise ValueError(f"stylesheet={stylesheet!r}: it or widget.css contains '</style'")
    return f"<style>\n{css}</style>\n"


def module_as_closure(source: str, var: str) -> str:
    """An ES module's ``source`` as ``const var = (() => { ...; return {exports}; })();``
    (``toydag.mjs`` here; the explorer inlines its three modules the same way)."""
    names = [m.group(2) for m in _EXPORT.finditer(source)]
    body = _EXPORT.sub(r"\1 \2", source)
    if re.search(r"^\s*(export|import)\b", body, re.M):
        raise ValueError("toydag.mjs: only `export function|const|let|class NAME` is inlined")
    exports = ", ".join(names)
    return f"const {var} = (() => {{\n{body}\nreturn Object.freeze({{ {exports} }});\n}})();"


def _importer_inlined(source: str, var: str) -> str:
    """``playground.mjs`` with its toydag import read from ``var`` and ``export`` dropped."""
    body, count = _IMPORT.subn(lambda m: f"const {{{m.group(1)}}} = {var};", source)
    if count != 1:
        raise ValueError('playground.mjs must import { ... } from "./toydag.mjs" exactly once')
    body = _EXPORT.sub(r"\1 \2", body)
    if re.search(r"^\s*(export|import)\b", body, re.M):
        raise ValueError("playground.mjs: an import/export form the inliner does not handle")
    return body


def inline_script(element_id: str = "bp-playground", *, use_hash: bool = True,
                  initial: Mapping[str, Any] | None = None) -> str:
    """The JavaScript of one ``<script type="module">``: both modules, then the mount call
    (``initial``: a configuration, :func:`bparallel.book.playground_link.config_of`)."""
    var = "__bpToydag"
    options: dict[str, Any] = {"hash": use_hash}
    if initial is not None:
        options["initial"] = dict(initial)
    parts = [
        "// bparallel toy-DAG playground: bparallel/book/render/js/toydag.mjs + playground.mjs, "
        "inlined",
        module_as_closure(_read("toydag.mjs"), var),
        "{",
        _importer_inlined(_read("playground.mjs"), var),
        f"mountPlayground(document.getElementById({json.dumps(element_id)}), "
        f"{json.dumps(options)});",
        "}",
    ]
    script = "\n".join(parts)
    if re.search(r"</script|<!--", script, re.I):
        raise ValueError("the playground sources contain '</script' or '<!--'")
    return script


def playground_html(element_id: str = "bp-playground", *, use_hash: bool = True,
                    initial: Mapping[str, Any] | None = None) -> str:
    """One self-contained HTML fragment: styles, container and module script.

    ``use_hash`` keeps the configuration in the address fragment (one such playground per
    page); ``initial`` (a configuration, :func:`bparallel.book.playground_link.config_of`) is
    shown when the address holds none (default: the page's, Example 3.13, paper).
    """
    noscript = (
        "<noscript>The interactive playground needs JavaScript; the sections below show "
        "its output for every preset.</noscript>"
    )
    return (
        f"{style_block('playground.css')}"
        f'<div id="{html.escape(element_id)}" class="bp-widget bp-pg" '
        f'data-bp-source="{source_hash()}" role="group" aria-label="toy-DAG playground">'
        f"{noscript}</div>\n"
        f'<script type="module">\n{inline_script(element_id, use_hash=use_hash, initial=initial)}'
        "\n</script>\n"
    )
