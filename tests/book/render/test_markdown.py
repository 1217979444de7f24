"""bparallel.book.render.markdown: MyST tables and tabs that render numbered, captioned,
unbroken."""

import pytest
from markdown_it import MarkdownIt

from bparallel.book.render.markdown import cell, frame_table, table, tabs


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


def test_a_cell_that_rounds_to_zero_carries_no_sign():
    """A float formatted to zero reads "0.00", never "-0.00" (a table of changes printed
    one in chapter 11) nor "+0.00"; everything else keeps its sign."""
    import numpy as np

    assert cell(-0.001, ".2f") == "0.00" and cell(0.001, "+.2f") == "0.00"
    assert cell(np.float64(-0.004), ".1f") == "0.0" and cell(-0.0004, ".1%") == "0.0%"
    assert cell(-0.4, ".0f") == "0" and cell(-0.6, ".0f") == "-1"
    assert cell(-0.01, ".2f") == "-0.01" and cell(0.01, "+.2f") == "+0.01"
    assert cell(-100.0, ".2f") == "-100.00" and cell(-0.5, ".1f") == "-0.5"


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


def test_frame_table_flattens_index_and_column_levels():
    pd = pytest.importorskip("pandas")
    cols = pd.MultiIndex.from_tuples([("median", 5), ("median", 10), ("exceed", 5)],
                                     names=["stat", "n"])
    idx = pd.MultiIndex.from_tuples([("path", "a"), ("complete", "b")], names=["kind", "id"])
    df = pd.DataFrame([[0.5, 0.25, 3], [1.0, 0.125, 0]], index=idx, columns=cols)
    md = frame_table(df, caption="Ratios.", name="t-ratios", decimals=3)
    lines = md.splitlines()
    assert lines[:2] == [":::{table} Ratios.", ":name: t-ratios"]
    assert lines[3] == "| kind | id | median · 5 | median · 10 | exceed · 5 |"
    assert lines[4] == "| :--- | :--- | ---: | ---: | ---: |"
    assert lines[5] == "| path | a | 0.500 | 0.250 | 3 |"  # same decimals; counts stay counts
    assert lines[6] == "| complete | b | 1.000 | 0.125 | 0 |"
    # A default index is not a column; formats per column or for all.
    plain = pd.DataFrame({"share": [0.5, 0.25]})
    assert "| share |" in frame_table(plain, caption="S.", name="s", formats="{:.0%}".format)
    assert "| 25% |" in frame_table(plain, caption="S.", name="s", formats={"share": ".0%"})


def test_frame_table_refuses_missing_values_unless_told_what_they_mean():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"z": [1.5, float("nan")]}, index=pd.Index(["a", "b"], name="law"))
    with pytest.raises(ValueError, match="missing value in column 'z'"):
        frame_table(df, caption="Z.", name="z")
    md = frame_table(df, caption="Z (— : not estimated).", name="z", decimals=2, na="—")
    assert "| b | — |" in md and "| a | 1.50 |" in md and "nan" not in md.lower()
    with pytest.raises(ValueError, match="expected a pandas DataFrame"):
        frame_table([{"z": 1}], caption="Z.", name="z")
    with pytest.raises(ValueError, match=r"formats names \['y'\]"):
        frame_table(df, caption="Z.", name="z", na="—", formats={"y": ".1f"})


def test_latex_matrix_writes_exact_fractions_not_a_printed_array():
    from bparallel.book.render.markdown import latex_matrix, latex_number

    assert latex_number(1.0) == "1" and latex_number(0.0) == "0"
    assert latex_number(0.5) == r"\tfrac{1}{2}" and latex_number(-0.25) == r"-\tfrac{1}{4}"
    assert latex_number(1 / 3) == r"\tfrac{1}{3}"
    assert latex_number(0.123456789) == "0.1235"  # not a small fraction: 4 digits
    text = latex_matrix([[1.0, 0.0], [0.5, 0.5]], name=r"\Delta^{(1)}")
    assert text == ("$$\n\\Delta^{(1)} = \\begin{bmatrix} 1 & 0 \\\\ \\tfrac{1}{2} & "
                    "\\tfrac{1}{2} \\end{bmatrix}\n$$\n")
    with pytest.raises(ValueError, match="2-d"):
        latex_matrix([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        latex_number(float("nan"))


def test_frame_table_drops_an_unnamed_default_index_even_after_a_rename():
    import pandas as pd

    frame = pd.DataFrame({"eps": [0.25, 0.1], "holds": [True, False]}).rename(index={0: 0})
    assert not isinstance(frame.index, pd.RangeIndex)
    text = frame_table(frame, caption="c", name="tbl-x")
    header = [line for line in text.splitlines() if line.startswith("|")][0]
    assert header == "| eps | holds |"
    assert "| 0.25 | yes |" in text and "| 0.1 | no |" in text


def test_glue_table_glues_the_pipe_table_that_table_captions(monkeypatch):
    import myst_nb

    from bparallel.book.render import markdown as md

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, obj, display: glued.update(
        {name: (obj.data, display)}))
    rows = [{"task": "copy", "accuracy": 0.5}, {"task": "cycle|x", "accuracy": 1.0}]
    assert md.glue_table("tbl-x", rows, formats={"accuracy": ".0%"}) is None
    body, display = glued["tbl-x"]
    assert display is False and body == md.pipe_table(rows, formats={"accuracy": ".0%"})
    assert body.splitlines()[1] == "| :--- | ---: |" and "cycle\\|x" in body and "50%" in body
    captioned = md.table(rows, caption="A caption.", name="tbl-x", formats={"accuracy": ".0%"})
    assert captioned == f":::{{table}} A caption.\n:name: tbl-x\n\n{body}:::\n"
    with pytest.raises(ValueError, match="name='Tbl X'"):
        md.glue_table("Tbl X", rows)
    with pytest.raises(ValueError, match="rows is empty"):
        md.pipe_table([])


def test_table_directives_in_the_prose_keep_their_caption_on_one_line():
    """A MyST directive's argument is its first line: a caption continued on the next lines
    would become the table's content ("exactly one table expected")."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    found = 0
    for path in [*root.glob("notebooks/*.md"), *root.glob("book/*.md")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith(":::{table}"):
                found += 1
                assert lines[i + 1].startswith(":") or not lines[i + 1].strip(), (
                    f"{path.name}:{i + 1}: the caption continues on the next line")
    assert found >= 17  # the glued tables of chapters 10-12


def test_chapter_12s_captions_are_short():
    """Issue #73, item 1: no caption of chapter 12's pages (main page and appendices, tables
    and figures) over the book's limit (findings.MAX_CAPTION characters as written); what a
    long caption said is in the prose before its table or figure."""
    import re
    from pathlib import Path

    import yaml

    from bparallel.book.tools.findings import MAX_CAPTION

    root = Path(__file__).resolve().parents[3]
    pages = sorted(root.glob("notebooks/12*.md"))
    assert len(pages) >= 2
    long = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        captions = re.findall(r"^:::\{table\} (.*)$", text, re.M)
        for head in re.findall(r"^```\{code-cell\}[^\n]*\n---\n(.*?)\n---\n", text, re.S | re.M):
            figure = (yaml.safe_load(head).get("mystnb") or {}).get("figure")
            if figure:
                captions.append(figure["caption"])
        long += [(path.name, c[:40], len(c)) for c in captions if len(c) > MAX_CAPTION]
    assert not long, f"captions over {MAX_CAPTION} characters: {long}"
