"""The findings at a glance (intro and README), generated from the intro's tables, and the
intro's verdicts, generated from the paper references."""
# ruff: noqa: E501  (the intro's table rows are long lines, as in book/intro.md)

from __future__ import annotations

import argparse
import re

import pytest

from bparallel.book.tools import findings as fd
from bparallel.book.verdicts import Verdict

INTRO = """Some prose.

:::{table} Sections 2-3.
:name: tbl-findings

| Claim of the paper | Verdict | Condition and key number | Evidence |
|:---|:---|:---|:---|
| Lemma 2.5: $1_\\tau$ | {verdict}`holds` | {glue:text}`../notebooks/01_feedforward_graphs.md::share:.0%` of {glue:text}`../notebooks/01_feedforward_graphs.md::graphs:,d` graphs | [feedforward graphs](../notebooks/01_feedforward_graphs.md) |
:::

:::{table} Section 4.
:name: tbl-findings-section4

| Claim | Verdict | With the published code | Under the definitions | Evidence |
|:---|:---|:---|:---|:---|
| More heads | {verdict}`holds with conditions` | **up** {glue:text}`../notebooks/08_proxies.md::x:.2f` | see {numref}`tbl-x` | [proxies](../notebooks/08_proxies.md), [as defined](../notebooks/10_section4_as_defined.md) |
:::
"""
REFS = {"01_feedforward_graphs": {"share": {"value": 1.0}, "graphs": {"value": 12000.0}},
        "08_proxies": {"x": {"value": 0.98765}}}


def test_the_glance_sorts_claims_by_verdict_and_part(monkeypatch):
    monkeypatch.setattr(fd, "PARTS", ("theory", "experiments"))
    monkeypatch.setattr(fd, "SHORT", {"Lemma 2.5: $1_\\tau$": "Lemma 2.5", "More heads": "more"})
    table = fd.glance_markdown(INTRO, readme=True).splitlines()
    assert table[0] == "| Verdict | theory | experiments |"
    assert table[2:] == ["| holds | Lemma 2.5 (01) | — |",
                         "| holds with conditions | — | more (08) |"]
    book = fd.glance_markdown(INTRO)
    assert "| {verdict}`holds` | Lemma 2.5 ([01](../notebooks/01_feedforward_graphs.md)) | — |" \
        in book and ":name: tbl-findings-glance" in book
    # the glance, once written into the intro, is not read back as a part
    written = fd.with_block(f"{fd.GLANCE_START}\n{fd.GLANCE_END}\n{INTRO}", fd.GLANCE_START,
                            fd.GLANCE_END, book)
    assert fd.glance_markdown(written, readme=True).splitlines() == table


def test_the_books_own_tests_sit_beyond_the_paper(monkeypatch):
    """Issue #78: a claim the paper does not make, labelled as the book's test, stays in its
    chapter's table but the glance lists it beyond the paper (the last part)."""
    intro = INTRO.replace("| More heads |", f"| {fd.BOOK_TEST}more heads |")
    monkeypatch.setattr(fd, "PARTS", ("theory", "experiments", "beyond"))
    monkeypatch.setattr(fd, "SHORT", {"Lemma 2.5: $1_\\tau$": "Lemma 2.5",
                                      f"{fd.BOOK_TEST}more heads": "more"})
    monkeypatch.setitem(fd.SHORT, "Other", "other")
    third = intro + (":::{table} Beyond.\n:name: tbl-beyond\n\n| a | b | c | d |\n"
                     "|:---|:---|:---|:---|\n| Other | {verdict}`fails` | x | y |\n:::\n")
    assert fd.glance_markdown(third, readme=True).splitlines()[2:] == [
        "| holds | Lemma 2.5 (01) | — | — |", "| holds with conditions | — | — | more (08) |",
        "| fails | — | — | other |"]
    intro_now = fd.INTRO.read_text()
    for claim in ("per-head fidelity says which heads matter (pruning)",
                  "the layers a task needs are the good graphs",
                  "the paper's Tables 1-6 measure attention that the tasks use"):
        assert f"| {fd.BOOK_TEST}{claim} |" in intro_now


def test_a_long_glance_cell_continues_in_a_row_of_the_same_verdict(monkeypatch):
    """A verdict whose claims of one part would take more than MAX_CELL characters as shown
    (a link as its text) gets a second row, the claims in order; 200 characters exactly
    stay in one cell, 201 do not."""
    monkeypatch.setattr(fd, "PARTS", ("theory", "experiments"))
    monkeypatch.setattr(fd, "MAX_CELL", 20)
    rows = "\n".join(f"| c{i} | {{verdict}}`holds` | x | [a](../notebooks/08_proxies.md) |"
                     for i in range(4))
    intro = INTRO.replace("| Lemma 2.5: $1_\\tau$ | {verdict}`holds` |", "| c9 | {verdict}`fails` |")
    intro = intro.replace("| More heads |", "| More |").replace(
        ":name: tbl-findings-section4\n\n| Claim | Verdict | With the published code | "
        "Under the definitions | Evidence |\n|:---|:---|:---|:---|:---|\n",
        ":name: tbl-findings-section4\n\n| a | b | c | d |\n|:---|:---|:---|:---|\n"
        + rows + "\n")
    monkeypatch.setattr(fd, "SHORT", {**{f"c{i}": f"claim{i}" for i in range(10)}, "More": "m"})
    # "claim0 (08); claim1 (08)" is 24 characters: over 20, so one claim per row
    table = fd.glance_markdown(intro, readme=True).splitlines()[2:]
    assert table[:4] == [f"| holds | — | claim{i} (08) |" for i in range(4)]
    book = fd.glance_markdown(intro).splitlines()
    assert sum(ln.startswith("| {verdict}`holds` |") for ln in book) == 4  # links not counted
    assert fd._packed(["a" * 9, "b" * 9], limit=20) == [["a" * 9, "b" * 9]]  # 9 + 2 + 9 = 20
    assert fd._packed(["a" * 9, "b" * 10], limit=20) == [["a" * 9], ["b" * 10]]  # 21
    assert fd._packed([]) == [[]]
    with pytest.raises(ValueError, match="longer than 20 characters"):
        fd._packed(["a" * 21], limit=20)


def test_a_claim_without_a_short_form_or_a_missing_part_is_named(monkeypatch):
    monkeypatch.setattr(fd, "PARTS", ("theory", "experiments"))
    monkeypatch.setattr(fd, "SHORT", {"More heads": "more"})
    with pytest.raises(ValueError, match="'Lemma 2.5: \\$1_\\\\\\\\tau\\$' has no short form"):
        fd.glance_markdown(INTRO)
    with pytest.raises(ValueError, match="2 findings tables, not one per part \\(3\\)"):
        monkeypatch.setattr(fd, "PARTS", ("a", "b", "c"))
        fd.glance_markdown(INTRO)


def test_every_claim_of_the_intro_has_a_short_form_and_the_glance_comes_first():
    intro = fd.INTRO.read_text()
    claims = [row[0] for rows in fd.table_rows(with_block_removed(intro)) for row in rows]
    assert set(claims) == set(fd.SHORT)
    assert all(len(short) <= 45 for short in fd.SHORT.values())
    # one sentence naming every verdict comes before the glance (the first thing after the
    # title), the full legend after the tables
    assert intro.index("{verdict}`not testable`") < intro.index(fd.GLANCE_START) < intro.index(
        ":name: tbl-findings\n") < intro.index("(verdict-legend)=")
    assert intro.index(fd.GLANCE_START) < intro.index("This book re-derives")


def with_block_removed(intro: str) -> str:
    return fd.with_block(intro, fd.GLANCE_START, fd.GLANCE_END, "")


def test_readme_block_is_replaced_between_markers():
    readme = f"# title\n\n{fd.START}\nold\n{fd.END}\n\nmore\n"
    assert fd.readme_with_findings(readme, "| new |\n") == (
        f"# title\n\n{fd.START}\n| new |\n{fd.END}\n\nmore\n")
    with pytest.raises(ValueError, match="no findings markers"):
        fd.readme_with_findings("# title\n", "| new |\n")


def test_the_readme_table_is_the_generated_one():
    """The README's findings are what the intro and the paper references give now."""
    assert fd.run(argparse.Namespace(check=True)) == 0


def test_every_recorded_intro_verdict_is_the_chapters():
    """The intro's verdicts of chapters 10-12 are written from the chapters' recorded
    verdicts (``python -m bparallel findings``): every listed row exists, and each reads the
    verdict its chapter's paper references record."""
    refs = fd.load_references()
    rows = {c[0]: c for table in fd.table_rows(fd.INTRO.read_text()) for c in table}
    for claim in fd.INTRO_VERDICTS:
        typed = re.fullmatch(r"\{verdict\}`([^`]+)`(: .+)?", rows[claim][1])
        assert typed, (claim, rows[claim][1])
        assert typed.group(1) == fd.recorded_verdict(claim, refs).value, claim
        # holding with conditions, the cell names them (issue #45)
        assert typed.group(1) != "holds with conditions" or typed.group(2), claim


def test_intro_verdicts_are_rewritten_from_the_references():
    intro = "| Per-head fidelity says which heads do the work | {verdict}`holds` | x | y |\n"
    index = float(list(Verdict).index(Verdict.NOT_SUPPORTED))  # recorded as its index
    refs = {"12_graph_tasks": {"verdict.heads": {"value": index}}}
    few = dict(fd.INTRO_VERDICTS)
    try:
        fd.INTRO_VERDICTS.clear()
        fd.INTRO_VERDICTS["Per-head fidelity says which heads do the work"] = \
            few["Per-head fidelity says which heads do the work"]
        out = fd.intro_with_verdicts(intro, refs)
        assert "{verdict}`not supported`" in out and out.endswith("| x | y |\n")
        with pytest.raises(KeyError, match="verdict.heads: the intro's verdict"):
            fd.intro_with_verdicts(intro, {"12_graph_tasks": {}})
        with pytest.raises(ValueError, match="no findings row"):
            fd.intro_with_verdicts("nothing", refs)
        # a condition stays with its verdict; a changed verdict asks for new words
        hwc = {"12_graph_tasks": {"verdict.heads": {
            "value": float(list(Verdict).index(Verdict.HOLDS_WITH_CONDITIONS))}}}
        kept = intro.replace("`holds`", "`holds with conditions`: only induction")
        assert fd.intro_with_verdicts(kept, hwc) == kept
        with pytest.raises(ValueError, match="rewrite the row's condition"):
            fd.intro_with_verdicts(kept, refs)
        with pytest.raises(ValueError, match="condition="):  # which conditions?
            fd.intro_with_verdicts(intro, hwc)
    finally:
        fd.INTRO_VERDICTS.clear()
        fd.INTRO_VERDICTS.update(few)
