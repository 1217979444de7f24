"""The introduction reads in two minutes (issue #46, item 1): its detailed findings tables
hold short cells (at most about 200 characters as rendered), no two rows share a key-number
cell, and every link to a chapter names it by number and a short title, in the intro's
tables and in the prose of every page. Checked on the sources: a glued number is counted as
five characters, a term or a link as its text."""

from __future__ import annotations

import re
from pathlib import Path

from bparallel.book.tools import findings as fd

ROOT = Path(__file__).resolve().parents[3]
INTRO = (ROOT / "book" / "intro.md").read_text()
PAGES = sorted([*(ROOT / "book").glob("*.md"), *(ROOT / "notebooks").glob("*.md")])
#: The longest cell the intro's findings tables may show, as rendered.
MAX_CELL = fd.MAX_CELL


REFS = fd.load_references(ROOT)
_GLUE = re.compile(r"\{glue:text\}`(?:\.\./notebooks/(?P<nb>\w+)\.md::)?(?P<key>[^`]*?)"
                   r"(?::(?P<fmt>[^:`]*))?`")


def _glued(m: re.Match) -> str:
    """A glued number as the paper build shows it (its value in the paper references,
    formatted as the role says); five characters where the references do not hold it
    (a glued word, a key of a page not recorded)."""
    try:
        return format(REFS[m.group("nb")][m.group("key")]["value"], m.group("fmt") or "")
    except (KeyError, TypeError, ValueError):
        return "0.000"


def rendered(cell: str) -> str:
    """``cell`` about as the reader sees it: a glued number as :func:`_glued` formats it, a
    role its text, a link its text, no emphasis marks."""
    cell = _GLUE.sub(_glued, cell)
    cell = re.sub(r"\{(?:term|ref|doc)\}`([^`<]*?)\s*<[^`]*>`", r"\1", cell)
    cell = re.sub(r"\{\w+\}`([^`]*)`", r"\1", cell)
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return cell.replace("*", "").replace("$", "").strip()


def detailed_rows() -> list[list[str]]:
    intro = fd.with_block(INTRO, fd.GLANCE_START, fd.GLANCE_END, "")
    tables = [rows for rows in fd.table_rows(intro) if rows and len(rows[0]) in (4, 5)]
    assert len(tables) == len(fd.PARTS)
    return [row for rows in tables for row in rows]


def test_the_measure_of_a_cell_counts_what_the_reader_sees():
    cell = ("*cycle*: {glue:text}`../notebooks/10_x.md::a.b:.1%` with the {term}`logit margin` "
            "and {term}`pairs <pair redundancy>` ([10 Section 4 as defined](../notebooks/10_x.md))")
    assert rendered(cell) == ("cycle: 0.000 with the logit margin and pairs "
                              "(10 Section 4 as defined)")


def test_every_findings_cell_is_short_and_no_two_rows_share_a_key_number():
    rows = detailed_rows()
    assert len(rows) >= 30
    long = [(row[0][:40], len(rendered(c))) for row in rows for c in row
            if len(rendered(c)) > MAX_CELL]
    assert not long, f"cells longer than {MAX_CELL} characters as rendered: {long}"
    keys = [rendered(c) for row in rows for c in row[2:-1] if len(rendered(c)) > 20]
    shared = {k for k in keys if keys.count(k) > 1}
    assert not shared, f"rows share a key-number cell: {shared}"


def _table_lines(markdown: str) -> list[str]:
    return [ln for ln in markdown.splitlines()
            if ln.startswith("|") and not re.fullmatch(r"\|(?:\s*:?-+:?\s*\|)+", ln)]


def test_every_cell_and_caption_of_the_intro_and_readme_is_short():
    """No table cell of the intro (the glance included) or of the README over
    fd.MAX_CELL characters as rendered, no table caption of the intro over fd.MAX_CAPTION:
    each checked to the character (a cell one character over is found)."""
    readme = fd.README.read_text()
    for name, text in (("book/intro.md", INTRO), ("README.md", readme)):
        lines = _table_lines(text)
        assert len(lines) >= (40 if name == "book/intro.md" else 5), name
        long = [(ln[:40], len(rendered(c))) for ln in lines
                for c in ln.strip().strip("|").split(" | ") if len(rendered(c)) > fd.MAX_CELL]
        assert not long, f"{name}: cells over {fd.MAX_CELL} characters as rendered: {long}"
    captions = re.findall(r"^:::\{table\} (.*)$", INTRO, re.M)
    assert len(captions) == len(fd.PARTS) + 1  # the glance and one table per part
    long = [(c[:40], len(rendered(c))) for c in captions if len(rendered(c)) > fd.MAX_CAPTION]
    assert not long, f"intro captions over {fd.MAX_CAPTION} characters: {long}"


def test_a_glued_number_counts_as_the_paper_build_shows_it():
    nb, key = next((nb, k) for nb, ref in REFS.items() for k, v in ref.items()
                   if isinstance(v.get("value"), float) and 1 < abs(v["value"]) < 1000)
    value = REFS[nb][key]["value"]
    assert rendered(f"{{glue:text}}`../notebooks/{nb}.md::{key}:.2f`") == f"{value:.2f}"
    assert rendered(f"{{glue:text}}`../notebooks/{nb}.md::no.such.key:.2f`") == "0.000"


def test_the_evidence_links_name_the_chapter_by_number_and_short_title():
    links = [(m.group(1), m.group(2)) for row in detailed_rows()
             for m in re.finditer(r"\[([^\]]+)\]\(\.\./notebooks/(\d\d)_", row[-1])]
    assert len(links) >= 30
    wrong = [(text, nb) for text, nb in links if text != f"{nb} {fd.CHAPTER_TITLES[nb]}"]
    assert not wrong, f"evidence links whose text is not 'NN short title': {wrong}"


def test_no_page_links_a_chapter_by_its_whole_title():
    """A bare ``{doc}`` role renders the chapter's whole title (one is 70 characters):
    every link to a chapter gives its own text, which names the chapter's number."""
    bare, unnumbered = [], []
    for page in PAGES:
        text = page.read_text()
        bare += [f"{page.name}: {m.group(0)}" for m in
                 re.finditer(r"\{doc\}`(?:\.\./notebooks/)?\d\d_[a-z0-9_]+`", text)]
        for m in re.finditer(r"\{doc\}`([^`<]+)<(?:\.\./notebooks/)?(\d\d)_[a-z0-9_]+>`", text):
            if m.group(2) not in m.group(1):
                unnumbered.append(f"{page.name}: {m.group(0)}")
        for m in re.finditer(r"\[([^\]]+)\]\((?:\.\./notebooks/)?(\d\d)_[a-z0-9_]+\.md", text):
            if m.group(2) not in m.group(1) and "glance" not in m.group(1):
                unnumbered.append(f"{page.name}: {m.group(0)}")
    assert not bare, f"links that show a chapter's whole title: {bare}"
    assert not unnumbered, f"links to a chapter whose text has no chapter number: {unnumbered}"


def test_a_sampling_chapter_says_at_which_profile_it_was_built():
    """Issue #46, item 2: the intro glues its numbers from the built chapters, so a chapter
    whose numbers depend on its profile says on the page which one it shows."""
    from bparallel.book.render.markdown import profile_note

    sampling = [p for p in sorted((ROOT / "notebooks").glob("0*.md"))
                if re.search(r"\[profile\]|for_profile\(profile\)", p.read_text())]
    assert [p.stem[:2] for p in sampling] == ["01", "02", "03", "06"]
    for page in sampling:
        assert f'profile_note(profile, "{page.stem}"' in page.read_text(), page.name
    note = profile_note("quick", "01_feedforward_graphs", {"random graphs": {"quick": 300,
                                                                            "paper": 3000}})
    assert note.startswith("**Built at the quick profile:** 300 random graphs (the paper "
                           "profile: 3,000).")
    assert "--profile paper --notebooks 01_feedforward_graphs" in note
    paper = profile_note("paper", "01_feedforward_graphs", {"graphs": {"quick": 3, "paper": 4}})
    assert paper.startswith("**Built at the paper profile:** 4 graphs") and "regress" not in paper
    for bad in (("fast", "01_x", {"g": {"quick": 1, "paper": 2}}),
                ("quick", "x y", {"g": {"quick": 1, "paper": 2}}),
                ("quick", "01_x", {}), ("quick", "01_x", {"g": {"quick": 1}})):
        try:
            profile_note(*bad)
        except ValueError as err:
            assert any(w in str(err) for w in ("profile=", "notebook=", "sizes[")), err
        else:
            raise AssertionError(f"profile_note{bad} did not refuse")
