"""The browser playground as one self-contained HTML snippet (no kernel, no network).

The playground's sources are ES modules and a stylesheet in ``bparallel/book/render/js/``,
one idea each: ``toydag.mjs`` (the mathematics: matrices, graphs, fidelity, mixing,
Definition 2.7), ``random.mjs`` (seeded random numbers and random heads), ``state.mjs`` (the
playground's state, presets, computation and links), ``python.mjs`` (numbers as Python
prints them, a state as Python code) and ``playground.mjs`` (the interface), each importing
only modules before it in :data:`SOURCES`; ``playground.css`` comes after ``widget.css``
(what every in-page widget shares, the model explorer too: :func:`style_block`). They stay
the single source of truth, and Node imports them as they are.

A built book must work from a local file, and Chromium refuses to load ES modules over
``file://``. So :func:`playground_html` inlines everything into one page fragment: the
stylesheet in a ``<style>``, and the modules in one ``<script type="module">``
(:func:`inline_modules`), each a closure that returns its exported names as an object,
whose ``import { ... } from "./x.mjs"`` becomes a destructuring of the object of ``x``.
Nothing is fetched. In the book, ``notebooks/05_playground.md`` displays
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "JS_DIR",
    "SOURCES",
    "module_as_closure",
    "module_var",
    "inline_modules",
    "source_hash",
    "style_block",
    "inline_script",
    "playground_html",
]

JS_DIR = Path(__file__).resolve().parent / "js"
SOURCES = ("toydag.mjs", "random.mjs", "state.mjs", "python.mjs", "playground.mjs",
           "widget.css", "playground.css")

_EXPORT = re.compile(r"^export (function|const|let|class) (\w+)", re.M)
_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./(\w+)\.mjs";', re.M)


def _read(name: str) -> str:
    return (JS_DIR / name).read_text(encoding="utf-8")


def source_hash() -> str:
    """Short SHA-256 of the sources; the page carries it to tell a stale build."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(_read(name).encode())
    return digest.hexdigest()[:16]


def style_block(*stylesheets: str) -> str:
    """A widget's ``<style>`` element: ``widget.css`` (the frame, controls and rows that every
    in-page widget shares, scoped under ``.bp-widget``), then the widget's own
    ``stylesheets`` of :data:`JS_DIR`, in order. Refuses a stylesheet that would end the
    element."""
    if not stylesheets:
        raise ValueError("stylesheets: give at least one")
    sheets = [(name, _read(name)) for name in ("widget.css", *stylesheets)]
    for name, text in sheets:
        if "</style" in text.lower():
            raise ValueError(f"stylesheet={name!r}: it contains '</style', which would end the "
                             "element")
    css = "\n".join(text for _, text in sheets)
    return f"<style>\n{css}</style>\n"


def module_as_closure(source: str, var: str) -> str:
    """An ES module's ``source`` (its imports already read from earlier closures) as
    ``const var = (() => { ...; return {exports}; })();``."""
    names = [m.group(2) for m in _EXPORT.finditer(source)]
    body = _EXPORT.sub(r"\1 \2", source)
    if re.search(r"^\s*(export|import)\b", body, re.M):
        raise ValueError(f"{var}: only `export function|const|let|class NAME` and "
                         '`import { ... } from "./x.mjs"` are inlined')
    exports = ", ".join(names)
    return f"const {var} = (() => {{\n{body}\nreturn Object.freeze({{ {exports} }});\n}})();"


def module_var(module: str) -> str:
    """The name of the closure that holds the inlined module ``module`` (a file stem)."""
    return f"__bp_{module}"


def inline_modules(names: Sequence[str]) -> list[str]:
    """The ES modules ``names`` of :data:`JS_DIR`, each as a closure
    (:func:`module_as_closure`, named :func:`module_var`), in the order given: a module's
    ``import { ... } from "./x.mjs"`` becomes ``const { ... } = __bp_x;``, so ``x`` must come
    before it (a module imported later, or not at all, is refused)."""
    done: list[str] = []
    parts = []
    for name in names:
        def read_from(m: re.Match, importer: str = name) -> str:
            if m.group(2) not in done:
                raise ValueError(f"{importer} imports ./{m.group(2)}.mjs, which is not "
                                 "inlined before it")
            return f"const {{{m.group(1)}}} = {module_var(m.group(2))};"

        stem = name.removesuffix(".mjs")
        parts.append(module_as_closure(_IMPORT.sub(read_from, _read(name)), module_var(stem)))
        done.append(stem)
    return parts


def inline_script(element_id: str = "bp-playground", *, use_hash: bool = True,
                  initial: Mapping[str, Any] | None = None) -> str:
    """The JavaScript of one ``<script type="module">``: both modules, then the mount call
    (``initial``: a configuration, :func:`bparallel.book.playground_link.config_of`)."""
    options: dict[str, Any] = {"hash": use_hash}
    if initial is not None:
        options["initial"] = dict(initial)
    modules = [n for n in SOURCES if n.endswith(".mjs")]
    parts = [
        f"// bparallel toy-DAG playground: bparallel/book/render/js/{{{','.join(modules)}}}, "
        "inlined",
        *inline_modules(modules),
        f"{module_var('playground')}.mountPlayground(document.getElementById("
        f"{json.dumps(element_id)}), {json.dumps(options)});",
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
