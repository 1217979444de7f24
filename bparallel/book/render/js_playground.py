"""The browser playground as one self-contained HTML snippet (no kernel, no network).

The playground's sources are two ES modules and a stylesheet in ``bparallel/book/render/js/``:
``toydag.mjs`` (the mathematics, importable by Node) and ``playground.mjs`` (the interface,
which imports it), with ``playground.css``. They stay the single source of truth.

A built book must work from a local file, and Chromium refuses to load ES modules over
``file://``. So :func:`playground_html` inlines everything into one page fragment: the
stylesheet in a ``<style>``, and both modules in one ``<script type="module">``, where
``toydag.mjs`` becomes a closure that returns its exported names as an object, and
``playground.mjs``'s ``import { ... } from "./toydag.mjs"`` becomes a destructuring of that
object. Nothing is fetched. In the book, ``notebooks/05_playground.md`` displays
``IPython.display.HTML(playground_html())`` and myst-nb writes it into the page as is.

:func:`encode_state` / :func:`decode_state` are the Python side of the page's address
fragment (``#pg=...``), so a link can be made from, or read back into, a
:class:`~bparallel.book.playground.PlaygroundState`.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote, unquote

from ..playground import PlaygroundState, from_preset

__all__ = [
    "JS_DIR",
    "SOURCES",
    "module_as_closure",
    "source_hash",
    "inline_script",
    "playground_html",
    "encode_state",
    "decode_state",
    "fragment",
    "js_number",
]

JS_DIR = Path(__file__).resolve().parent / "js"
SOURCES = ("toydag.mjs", "playground.mjs", "playground.css")
HASH_PREFIX = "pg="

_EXPORT = re.compile(r"^export (function|const|let|class) (\w+)", re.M)
_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./toydag\.mjs";', re.M)


def _read(name: str) -> str:
    return (JS_DIR / name).read_text(encoding="utf-8")


def source_hash() -> str:
    """Short SHA-256 of the three sources; the page carries it to tell a stale build."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(_read(name).encode())
    return digest.hexdigest()[:16]


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
                  initial: PlaygroundState | None = None) -> str:
    """The JavaScript of one ``<script type="module">``: both modules, then the mount call."""
    var = "__bpToydag"
    options = {"hash": use_hash}
    if initial is not None:
        options["initial"] = config_of(initial)
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
                    initial: PlaygroundState | None = None) -> str:
    """One self-contained HTML fragment: styles, container and module script.

    ``use_hash`` keeps the configuration in the address fragment (one such playground per
    page); ``initial`` is shown when the address holds none (default: Example 3.13, paper).
    """
    css = _read("playground.css")
    if "</style" in css.lower():
        raise ValueError("playground.css contains '</style'")
    noscript = (
        "<noscript>The interactive playground needs JavaScript; the sections below show "
        "its output for every preset.</noscript>"
    )
    return (
        f"<style>\n{css}</style>\n"
        f'<div id="{html.escape(element_id)}" class="bp-pg" data-bp-source="{source_hash()}" '
        f'role="group" aria-label="toy-DAG playground">{noscript}</div>\n'
        f'<script type="module">\n{inline_script(element_id, use_hash=use_hash, initial=initial)}'
        "\n</script>\n"
    )


# ---------------------------------------------------------------- the address fragment
def config_of(state: PlaygroundState) -> dict:
    """The JSON-ready configuration of a playground state (what the JS module takes)."""
    return {
        "n": state.n,
        "heads": [[list(e) for e in edges] for edges in state.edge_lists()],
        "raw_beta": list(state.raw_beta),
        "horizon": state.horizon,
        "eps": state.eps,
        "labels": state.labels,
    }


def js_number(x: float) -> str:
    """JavaScript's ``String(x)`` for a finite float: shortest round-trip digits, with
    exponent form below 1e-6 or from 1e21 (``1``, ``0.25``, ``1e-7``, ``1.5e+21``)."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x}")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exp = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    e = int(exp) + len(digits) - 1  # |x| = d.ddd * 10^e
    if -7 < e < 21:
        if e < 0:
            return f"{sign}0.{'0' * (-e - 1)}{digits}"
        whole, frac = digits[: e + 1].ljust(e + 1, "0"), digits[e + 1 :]
        return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"
    m = f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
    return f"{sign}{m}e{'-' if e < 0 else '+'}{abs(e)}"


def encode_state(state: PlaygroundState) -> str:
    """The compact text of the page's ``#pg=`` fragment (same as ``encodeState`` in
    ``toydag.mjs``): ``v=1;n=4;T=20;e=0.25;b=0.5,0.5;h=2480,4180;l=u,v,w,tau``.

    Each head is its adjacency by sender row: row ``j`` is a bitmask of the receivers of
    ``j`` in ``ceil(n/4)`` hex digits.
    """
    width = math.ceil(state.n / 4)
    heads = []
    for edges in state.edge_lists():
        rows = [0] * state.n
        for j, i in edges:
            rows[j] |= 1 << i
        heads.append("".join(f"{r:0{width}x}" for r in rows))
    parts = [
        "v=1",
        f"n={state.n}",
        f"T={state.horizon}",
        f"e={js_number(state.eps)}",
        "b=" + ",".join(js_number(b) for b in state.raw_beta),
        "h=" + ",".join(heads),
    ]
    if state.labels is not None:
        parts.append("l=" + ",".join(quote(lab, safe="-_.!~*'()") for lab in state.labels))
    return ";".join(parts)


def decode_state(text: str) -> PlaygroundState:
    """A :class:`PlaygroundState` from the fragment text (or a whole URL with ``#pg=``)."""
    if "#" in text:
        text = text.split("#", 1)[1]
    text = text.removeprefix(HASH_PREFIX)
    fields = dict(part.partition("=")[::2] for part in text.split(";"))
    if fields.get("v") != "1":
        raise ValueError(f"unknown playground link version {fields.get('v')!r}")
    try:
        n = int(fields["n"])
        width = math.ceil(n / 4)
        heads = []
        for hexes in fields["h"].split(","):
            if len(hexes) != n * width:
                raise ValueError(f"bad head {hexes!r}")
            rows = [int(hexes[j * width : (j + 1) * width], 16) for j in range(n)]
            heads.append({(j, i) for j in range(n) for i in range(n) if rows[j] >> i & 1})
        labels = [unquote(lab) for lab in fields["l"].split(",")] if "l" in fields else None
        return PlaygroundState(
            n=n,
            heads=heads,
            raw_beta=[float(b) for b in fields["b"].split(",")],
            horizon=int(fields["T"]),
            eps=float(fields["e"]),
            labels=labels,
        )
    except (KeyError, ValueError) as err:
        raise ValueError(f"playground link {text!r} could not be read: {err}") from err


def fragment(state: PlaygroundState | None = None) -> str:
    """``#pg=...`` for a state (default: Example 3.13, paper), to append to the page URL."""
    return "#" + HASH_PREFIX + encode_state(state or from_preset("Example 3.13 (paper)"))
