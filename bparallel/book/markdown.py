"""MyST Markdown for tables a reader can read: numbered, captioned, in tabs.

A chapter cell returns ``IPython.display.Markdown(text)``; with myst-nb's
``nb_render_markdown_format: myst`` (``_config.yml``) the output is parsed as MyST, so a
``{table}`` made here is numbered and captioned like one written in the prose, and can be
cited with ``{numref}``. Cells are escaped so that ``|`` inside a value cannot split a column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def cell(value: Any, fmt: str | Callable[[Any], str] = "") -> str:
    """One table cell as text: ``fmt`` is a format spec (``".2f"``, ``",d"``) or a function.

    ``None`` reads "—"; a NaN is refused (say what it means instead); ``|`` is escaped."""
    if value is None:
        text = "—"
    elif isinstance(value, float) and math.isnan(value):
        raise ValueError("a table cell is NaN: show what it means (e.g. 'never mixes (∞)')")
    elif callable(fmt):
        text = fmt(value)
    else:
        text = format(value, fmt)
    return text.replace("|", "\\|").replace("\n", " ")


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    caption: str,
    name: str,
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: Mapping[str, str] | None = None,
) -> str:
    """A numbered, captioned MyST table (``:::{table}``) of ``rows`` (columns in first-seen
    order, no index column). ``formats`` per column (format spec or function); ``align`` per
    column ``"left" | "right" | "center"`` (default: right for numbers, left otherwise);
    ``name`` is the label for ``{numref}`` (lower case, digits, hyphens)."""
    if not rows:
        raise ValueError("rows is empty: nothing to show")
    if not caption.strip():
        raise ValueError("caption is empty: every table needs one")
    if not _NAME.match(name):
        raise ValueError(f"name={name!r}: use lower case letters, digits and hyphens")
    formats, align = dict(formats or {}), dict(align or {})
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    marks = {"left": ":---", "right": "---:", "center": ":---:"}
    header, rule, body = [], [], []
    for c in columns:
        numeric = all(isinstance(r.get(c), (int, float)) for r in rows if r.get(c) is not None)
        side = align.get(c, "right" if numeric else "left")
        if side not in marks:
            raise ValueError(f"align[{c!r}]={side!r}: valid values are {list(marks)}")
        header.append(cell(c))
        rule.append(marks[side])
    for r in rows:
        body.append([cell(r.get(c), formats.get(c, "")) for c in columns])
    lines = [f":::{{table}} {caption.strip()}", f":name: {name}", ""]
    lines += ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(b) + " |" for b in body]
    return "\n".join(lines + [":::"]) + "\n"


def tabs(items: Mapping[str, str]) -> str:
    """A ``tab-set`` with one ``tab-item`` per ``label: content`` (content may hold tables
    made by :func:`table`, whose colon fences are 3 deep)."""
    if not items:
        raise ValueError("items is empty: a tab set needs at least one tab")
    out = [":::::{tab-set}"]
    for label, content in items.items():
        out += [f"::::{{tab-item}} {label}", content.rstrip(), "::::"]
    return "\n".join(out + [":::::"]) + "\n"
