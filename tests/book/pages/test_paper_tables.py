"""The paper's tables and the book's never share a name (issue #36, item 1).

The paper numbers its tables 1 to 6; the book numbers its own by chapter ("Table 10.3",
``use_multitoc_numbering`` with numbered parts in ``_toc.yml``) and the pages outside the
chapters with 0 or a letter ("Table 0.1" in the introduction:
``bparallel.book.render.sphinxext.NUMBER_PREFIXES``). In prose a
reader must never meet a bare "Table 3" that could be either: the paper's tables are written
"the paper's Table 3" / "the paper's Tables 1-6", and the book's own are referenced with
``{numref}`tbl-...``` (a role, so never typed). This test scans the prose of every page
(pipe-table cells and captions included; code cells, inline code, math and roles excluded)
and fails on a "Table N" / "Tables N-M" not directly preceded by "paper's".
"""

from __future__ import annotations

import re

import pytest

from tests.book.pages.test_prose_numbers import NOT_PROSE, _blank, sources

#: Pages that another piece of work is rewriting, with the reason: their mentions are not
#: checked until that work lands; delete the entry then.
NOT_YET_CHECKED: dict[str, str] = {
}

#: What is not prose here: what test_prose_numbers blanks, except pipe-table rows (the
#: introduction's findings tables are read as prose).
_PIPE_ROWS = r"^[ \t]*\|.*\|[ \t]*$"
_NOT_PROSE = [p for p in NOT_PROSE if p.pattern != _PIPE_ROWS]
#: "Table 3", "Tables 1-6", "Tables 1 to 4", "table 10.3", "Figure 4" (the paper's figures
#: are numbered 1-4, the book's by chapter: the same rule holds for them).
MENTION = re.compile(r"\b(?:[Tt]ables?|[Ff]igures?)\s+\d")
#: What must come right before a mention of the paper's table.
PAPER_S = re.compile(r"paper[’']s\s+$", re.I)
#: ... or ends a list that "paper's" opens: "the paper's Tables 1-4 and Figure 4".
PAPER_LIST = re.compile(r"paper[’']s\s+(?:[Tt]ables?|[Ff]igures?)\s+[\d.]+(?:\s*(?:[–-]|to)\s*"
                        r"[\d.]+)?\s+and\s+$", re.I)


def bare_mentions(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every "Table N" in the prose of ``text`` that is not the
    paper's."""
    assert not any(p.pattern == _PIPE_ROWS for p in _NOT_PROSE)
    blanked = text
    for pattern in _NOT_PROSE:
        blanked = pattern.sub(_blank, blanked)
    lines = text.splitlines()
    hits = []
    for match in MENTION.finditer(blanked):
        before = blanked[max(0, match.start() - 60):match.start()]
        if PAPER_S.search(before[-20:]) or PAPER_LIST.search(before):
            continue
        line = blanked.count("\n", 0, match.start())
        hits.append((line + 1, lines[line].strip()))
    return hits


def test_no_bare_table_number_in_prose():
    bad = [f"{path.name}:{line}: {text}" for path in sources()
           if path.name not in NOT_YET_CHECKED
           for line, text in bare_mentions(path.read_text(encoding="utf-8"))]
    assert not bad, ("a bare 'Table N' could be the paper's or the book's: write \"the "
                     "paper's Table N\" for the paper's, {numref}`tbl-...` for the book's:\n"
                     + "\n".join(bad))


def test_not_yet_checked_pages_exist():
    names = {p.name for p in sources()}
    assert set(NOT_YET_CHECKED) <= names, set(NOT_YET_CHECKED) - names


@pytest.mark.parametrize("text, bare", [
    ("The paper's Tables 1-6 measure it.", []),
    ("as in the paper’s Table 3, and Tables 1–4 here", [1]),
    ("see {numref}`tbl-x` and Table 10.3", [1]),
    ("| Tables 1-2: more heads | holds |", [1]),
    (":::{table} How Tables 5-6 line up\n:name: tbl-x\n:::\n", [1]),
    ("```{code-cell} ipython3\ncaption = 'Table 1'\n```\n", []),
    ("the `Table 1` key, $Table 2$, and 3 tables more", []),
    ("the paper's Figure 3, and Figure 4 beside it", [1]),
    ("the paper's Tables 1–4 and Figure 4, and Table 5", [1]),
])
def test_scanner(text, bare):
    assert [line for line, _ in bare_mentions(text)] == bare
