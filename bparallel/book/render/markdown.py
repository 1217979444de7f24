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
from fractions import Fraction
from typing import Any

import numpy as np

from ..._checks import one_of
from ..verdicts import Verdict
from ..verdicts import cell as verdict_cell
from ..words import unsigned_zero
from .results import PROFILES

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def cell(value: Any, fmt: str | Callable[[Any], str] = "") -> str:
    """One table cell as text: ``fmt`` is a format spec (``".2f"``, ``",d"``) or a function.

    ``None`` reads "—"; a float that rounds to zero carries no sign ("0.00", never "-0.00");
    a NaN is refused (say what it means instead); ``|`` is escaped; a
    :class:`~bparallel.book.verdicts.Verdict` becomes its colour-coded verdict cell
    (:func:`bparallel.book.verdicts.cell`; a bare *holds with conditions* is refused: give
    the row ``verdicts.cell(verdict, condition)``); a bool reads "yes" or "no"."""
    if value is None:
        text = "—"
    elif isinstance(value, Verdict):
        return verdict_cell(value)
    elif isinstance(value, (bool, np.bool_)) and not fmt:
        text = "yes" if value else "no"
    elif isinstance(value, float) and math.isnan(value):
        raise ValueError("a table cell is NaN: show what it means (e.g. 'never mixes (∞)')")
    elif callable(fmt):
        text = fmt(value)
    else:
        text = format(value, fmt)
        if isinstance(value, (float, np.floating)):
            text = unsigned_zero(text)  # a value that rounds to zero reads "0.00"
    return text.replace("|", "\\|").replace("\n", " ")


def pipe_table(
    rows: Sequence[Mapping[str, Any]],
    *,
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: Mapping[str, str] | None = None,
) -> str:
    """The Markdown pipe table of ``rows`` (columns in first-seen order, no index column).
    ``formats`` per column (format spec or function); ``align`` per column ``"left" |
    "right" | "center"`` (default: right for numbers, left otherwise)."""
    if not rows:
        raise ValueError("rows is empty: nothing to show")
    formats, align = dict(formats or {}), dict(align or {})
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    marks = {"left": ":---", "right": "---:", "center": ":---:"}
    header, rule, body = [], [], []
    for c in columns:
        numeric = all(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool)
                      for r in rows if r.get(c) is not None)
        side = align.get(c, "right" if numeric else "left")
        if side not in marks:
            raise ValueError(f"align[{c!r}]={side!r}: valid values are {list(marks)}")
        header.append(cell(c))
        rule.append(marks[side])
    for r in rows:
        body.append([cell(r.get(c), formats.get(c, "")) for c in columns])
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(b) + " |" for b in body]
    return "\n".join(lines) + "\n"


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    caption: str,
    name: str,
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: Mapping[str, str] | None = None,
) -> str:
    """A numbered, captioned MyST table (``:::{table}``) of ``rows``: the
    :func:`pipe_table` of ``rows`` under ``caption``; ``name`` is the label for
    ``{numref}`` (lower case, digits, hyphens)."""
    if not caption.strip():
        raise ValueError("caption is empty: every table needs one")
    _check_name(name)
    body = pipe_table(rows, formats=formats, align=align)
    return f":::{{table}} {caption.strip()}\n:name: {name}\n\n{body}:::\n"


def glue_table(
    name: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    align: Mapping[str, str] | None = None,
) -> None:
    """Glue the :func:`pipe_table` of ``rows`` under ``name`` (not shown where the cell is),
    so that the chapter's prose holds the caption (on one line: a directive's argument
    is its first line) and places the table::

        :::{table} The caption, in the prose.
        :name: tbl-name
        ```{glue:md} tbl-name
        :format: myst
        ```
        :::
    """
    _check_name(name)
    body = pipe_table(rows, formats=formats, align=align)
    from IPython.display import Markdown
    from myst_nb import glue  # the book's dependency, not the package's

    glue(name, Markdown(body), display=False)


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"name={name!r}: use lower case letters, digits and hyphens")


def tabs(items: Mapping[str, str]) -> str:
    """A ``tab-set`` with one ``tab-item`` per ``label: content`` (content may hold tables
    made by :func:`table`, whose colon fences are 3 deep)."""
    if not items:
        raise ValueError("items is empty: a tab set needs at least one tab")
    out = [":::::{tab-set}"]
    for label, content in items.items():
        out += [f"::::{{tab-item}} {label}", content.rstrip(), "::::"]
    return "\n".join(out + [":::::"]) + "\n"


FrameFormats = str | Callable[[Any], str] | Mapping[str, str | Callable[[Any], str]] | None


def frame_table(
    frame: Any,
    *,
    caption: str,
    name: str,
    decimals: int | None = None,
    formats: FrameFormats = None,
    na: str | None = None,
) -> str:
    """:func:`table` of a pandas DataFrame (:func:`frame_rows`)."""
    rows, align = frame_rows(frame, decimals=decimals, formats=formats, na=na)
    return table(rows, caption=caption, name=name, align=align)


def glue_frame(
    name: str,
    frame: Any,
    *,
    decimals: int | None = None,
    formats: FrameFormats = None,
    na: str | None = None,
) -> None:
    """:func:`glue_table` of a pandas DataFrame (:func:`frame_rows`): the caption goes in the
    prose."""
    rows, align = frame_rows(frame, decimals=decimals, formats=formats, na=na)
    glue_table(name, rows, align=align)


def column_label(column: Any) -> str:
    """A DataFrame column as a table shows it: the levels of a tuple joined by " · "."""
    return " · ".join(str(x) for x in column) if isinstance(column, tuple) else str(column)


def frame_rows(
    frame: Any,
    *,
    decimals: int | None = None,
    formats: FrameFormats = None,
    na: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The rows and alignment of a pandas DataFrame as a table: the index levels become the
    first columns (left-aligned; an unnamed default index ``0, 1, 2, ...`` is dropped),
    column levels are joined with " · " and the value columns right-aligned.

    ``formats`` is one format (spec or function) for every value column, or one per column
    label as shown; other floats get ``decimals`` decimals (all the same, e.g. "0.500"), or
    Python's shortest form without ``decimals``. A missing value (NaN, ``None``) is refused
    unless ``na`` says what to show for it (explain it in the caption)."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame is a {type(frame).__name__}: expected a pandas DataFrame")
    df = frame.copy()
    df.columns = [column_label(c) for c in df.columns]
    values = list(df.columns)
    if len(set(values)) < len(values):
        raise ValueError(f"frame has repeated column labels: {values}")
    index: list[str] = []
    default = df.index.names == [None] and list(df.index) == list(range(len(df)))
    if not default:  # an unnamed 0, 1, 2, ... index (even if no longer a RangeIndex) is dropped
        index = [str(n) if n is not None else "" for n in df.index.names]
        if len(set(index)) < len(index) or set(index) & set(values):
            raise ValueError(f"index names {index} collide with each other or a column")
        df.index = df.index.set_names(index)
        df = df.reset_index()
    if formats is None or callable(formats) or isinstance(formats, str):
        formats = {} if formats is None else dict.fromkeys(values, formats)
    unknown = set(formats) - set(values)
    if unknown:
        raise ValueError(f"formats names {sorted(unknown)}, not columns of frame {values}")

    def shown(column: str, v: Any) -> Any:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            if na is None:
                raise ValueError(f"frame has a missing value in column {column!r}: pass na= "
                                 "(what it means, e.g. '—') and explain it in the caption")
            return na
        if hasattr(v, "item") and not isinstance(v, str):
            v = v.item()  # a numpy scalar as a Python number
        f = formats.get(column)
        if f is not None:
            return f(v) if callable(f) else format(v, f)
        if decimals is not None and isinstance(v, float):
            return f"{v:.{decimals}f}"
        return v

    rows = [{k: shown(k, v) for k, v in r.items()} for r in df.to_dict("records")]
    return rows, {**dict.fromkeys(index, "left"), **dict.fromkeys(values, "right")}


def latex_number(x: float, max_denominator: int = 64) -> str:
    """A number for a LaTeX matrix: an integer as is, a float within 1e-12 of a fraction with
    a denominator up to ``max_denominator`` as ``\\tfrac{p}{q}``, anything else to 4
    significant digits."""
    if isinstance(x, float) and math.isnan(x):
        raise ValueError("a matrix entry is NaN: show what it means instead")
    q = Fraction(x).limit_denominator(max_denominator)
    if abs(float(q) - x) <= 1e-12:
        if q.denominator == 1:
            return str(q.numerator)
        sign = "-" if q < 0 else ""
        return f"{sign}\\tfrac{{{abs(q.numerator)}}}{{{q.denominator}}}"
    return f"{x:.4g}"


def latex_matrix(matrix: Any, name: str = "") -> str:
    """Display math for a reader (a MyST ``$$ ... $$`` block), instead of a printed array:
    ``name = \\begin{bmatrix} ... \\end{bmatrix}``, entries by :func:`latex_number`."""
    rows = np.asarray(matrix, dtype=np.float64)
    if rows.ndim != 2 or rows.size == 0:
        raise ValueError(f"matrix has shape {rows.shape}: expected a non-empty 2-d array")
    body = " \\\\ ".join(" & ".join(latex_number(float(v)) for v in row) for row in rows)
    left = f"{name} = " if name else ""
    return f"$$\n{left}\\begin{{bmatrix}} {body} \\end{{bmatrix}}\n$$\n"


def profile_note(profile: str, notebook: str,
                 sizes: Mapping[str, Mapping[str, int]]) -> str:
    """The line that says at which profile a page was built, for a chapter that samples
    (chapters 01-03 and 06): ``sizes`` maps what the page samples ("random graphs") to its
    count per profile (``{"quick": 300, "paper": 3000}``); ``notebook`` is the page's stem,
    for the command that runs it at the paper profile. The introduction's numbers that cite
    the page are the ones it shows (they are glued from it)."""
    one_of(profile, "profile", PROFILES, "profiles")
    if not re.fullmatch(r"\d\d_[a-z0-9_]+", notebook) or not sizes:
        raise ValueError(f"notebook={notebook!r} and sizes={dict(sizes)!r}: a page's stem "
                         "and at least one sample size are needed")
    for what, per in sizes.items():
        if set(per) != set(PROFILES):
            raise ValueError(f"sizes[{what!r}] must give a count for {PROFILES}, "
                             f"not {sorted(per)}")
    shown = "; ".join(f"{per[profile]:,} {what}" for what, per in sizes.items())
    other = "paper" if profile == "quick" else "quick"
    there = "; ".join(f"{per[other]:,}" for per in sizes.values())
    note = (f"**Built at the {profile} profile:** {shown} (the {other} profile: {there}). "
            "The introduction's numbers that cite this page are the ones shown here.")
    if profile == "quick":
        note += (" To build it at the paper profile: `python -m bparallel regress --profile "
                 f"paper --notebooks {notebook}`.")
    return note
