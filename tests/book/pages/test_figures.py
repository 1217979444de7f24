"""Every figure of the book is captioned, named (numbered, referable) and has alt text
(issue #36, item 3); no build needed.

A figure is a code cell whose YAML header has ``mystnb: figure:``; myst-nb numbers it when it
has a ``name`` and a ``caption``, and takes the image's alt text from ``mystnb: image: alt:``
(without one, the alt text of the built page is the image's file path). The alt text must
say what the figure shows: a few words, not a path or a file name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.md"))

#: A code cell with a YAML header: the header is group 1.
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n---\n(.*?)\n---[ \t]*\n", re.S | re.M)
#: The fewest words an alt text may have.
MIN_WORDS = 6
#: What looks like a path or a file name rather than a description.
PATHLIKE = re.compile(r"^\S*[/\\]\S*$|\.(?:png|jpe?g|svg|gif|pdf)\b", re.I)


def figure_cells(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The figure cells of ``path``: (line of the cell, its ``mystnb`` mapping)."""
    text = path.read_text()
    cells = []
    for m in CELL.finditer(text):
        header = yaml.safe_load(m.group(1))
        mystnb = header.get("mystnb") if isinstance(header, dict) else None
        if isinstance(mystnb, dict) and "figure" in mystnb:
            cells.append((text.count("\n", 0, m.start()) + 1, mystnb))
    return cells


FIGURES = [(path, line, mystnb) for path in CHAPTERS for line, mystnb in figure_cells(path)]


def test_the_chapters_have_figures():
    """The parser finds the figures (a format change must not make the checks vacuous)."""
    assert len(FIGURES) >= 40, f"only {len(FIGURES)} figure cells found in {len(CHAPTERS)} files"


def test_cell_headers_parse_as_yaml():
    for path in CHAPTERS:
        text = path.read_text()
        for m in CELL.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            try:
                header = yaml.safe_load(m.group(1))
            except yaml.YAMLError as err:  # pragma: no cover - the message is the point
                pytest.fail(f"{path.name}:{line}: the cell header is not YAML: {err}")
            assert isinstance(header, dict), f"{path.name}:{line}: header is not a mapping"


@pytest.mark.parametrize(("path", "line", "mystnb"), FIGURES,
                         ids=[f"{p.name}:{n}" for p, n, _ in FIGURES])
def test_figure_is_captioned_named_and_has_alt_text(path, line, mystnb):
    where = f"{path.name}:{line}"
    figure = mystnb["figure"]
    assert isinstance(figure, dict), f"{where}: mystnb.figure is not a mapping"
    name, caption = figure.get("name"), figure.get("caption")
    assert isinstance(name, str) and re.fullmatch(r"fig-[a-z0-9-]+", name), \
        f"{where}: figure name {name!r} is not fig-<lowercase-with-hyphens>"
    assert isinstance(caption, str) and len(caption.split()) >= MIN_WORDS, \
        f"{where} ({name}): caption {caption!r} is missing or too short"
    image = mystnb.get("image")
    alt = image.get("alt") if isinstance(image, dict) else None
    assert isinstance(alt, str) and alt.strip(), \
        f"{where} ({name}): no alt text (mystnb: image: alt:)"
    assert len(alt.split()) >= MIN_WORDS, \
        f"{where} ({name}): alt text {alt!r} is shorter than {MIN_WORDS} words"
    assert not PATHLIKE.search(alt.strip()), f"{where} ({name}): alt text {alt!r} is a path"
    assert alt.strip() != caption.strip(), f"{where} ({name}): alt text repeats the caption"


def test_figure_names_are_unique():
    names = [mystnb["figure"].get("name") for _, _, mystnb in FIGURES]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"figure names used twice: {duplicates}"


#: The chapters whose every figure the prose must cite where it makes its point (#46).
READ_IN_PROSE = ("10_section4_as_defined", "11_across_seeds", "12_graph_tasks",
                 "12a_graph_runs", "12c_graph_pilots", "12e_graph_horse_race",
                 "12g_graph_finite")


def prose(text: str) -> str:
    """``text`` without its code cells (a figure's own caption lives in its cell)."""
    return re.sub(r"^```\{code-cell\}.*?^```[ \t]*$", "", text, flags=re.S | re.M)


@pytest.mark.parametrize("stem", READ_IN_PROSE)
def test_every_figure_of_the_late_chapters_is_cited_in_the_prose(stem):
    path = ROOT / "notebooks" / f"{stem}.md"
    names = [m["figure"]["name"] for _, m in figure_cells(path)]
    assert names, f"{stem}: no figures found"
    text = prose(path.read_text())
    uncited = [n for n in names if f"{{numref}}`{n}`" not in text]
    assert not uncited, f"{stem}: figures the prose never cites: {uncited}"
