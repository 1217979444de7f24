"""bparallel.book.markdown: MyST tables and tabs that render numbered, captioned, unbroken."""

import pytest
from markdown_it import MarkdownIt

from bparallel.book.markdown import cell, table, tabs


def _pipe_table_cells(text):
    """Cells of the pipe table inside a table directive, parsed by a real Markdown parser."""
    inner = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    tokens = MarkdownIt("commonmark").enable("table").parse(inner)
    rows, row = [], None
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            rows.append(row)
    return rows


def test_table_is_a_numbered_captioned_directive_with_escaped_cells():
    rows = [{"heads": 1, "claim": "max $|z|$", "value": 0.123456, "count": 35010},
            {"heads": 16, "claim": "none", "value": None, "count": 7}]
    text = table(rows, caption="Table 1 as published", name="tbl-one",
                 formats={"value": ".3f", "count": ",d"})
    assert text.startswith(":::{table} Table 1 as published\n:name: tbl-one\n")
    assert text.rstrip().endswith(":::")
    parsed = _pipe_table_cells(text)
    assert parsed[0] == ["heads", "claim", "value", "count"]  # the | of |z| did not split it
    assert parsed[1] == ["1", "max $|z|$", "0.123", "35,010"]  # one cell, its pipes intact
    assert parsed[2][2] == "—"  # None reads as a dash, never NaN
    assert "---:" in text.splitlines()[4]  # numbers right-aligned


def test_table_refuses_nan_and_bad_arguments():
    with pytest.raises(ValueError, match="NaN"):
        table([{"a": float("nan")}], caption="c", name="tbl-a")
    with pytest.raises(ValueError, match="empty"):
        table([], caption="c", name="tbl-a")
    with pytest.raises(ValueError, match="caption"):
        table([{"a": 1}], caption=" ", name="tbl-a")
    with pytest.raises(ValueError, match="name="):
        table([{"a": 1}], caption="c", name="Table A")
    with pytest.raises(ValueError, match="align"):
        table([{"a": 1}], caption="c", name="tbl-a", align={"a": "middle"})
    assert cell(2.5, lambda v: f"{v:.0f} steps") == "2 steps"


def test_tabs_nest_tables():
    inner = table([{"a": 1}], caption="c", name="tbl-a")
    text = tabs({"paper mode": inner, "definition mode": inner})
    lines = text.splitlines()
    assert lines[0] == ":::::{tab-set}" and lines[-1] == ":::::"
    assert lines.count("::::{tab-item} paper mode") == 1 and text.count(":::{table}") == 2
    with pytest.raises(ValueError, match="at least one tab"):
        tabs({})
