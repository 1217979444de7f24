"""bparallel.book.verdicts and the book's Sphinx extension: one closed verdict vocabulary,
rendered by one function, refused when misspelt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from bparallel.book import verdicts
from bparallel.book.render.markdown import cell, table
from bparallel.book.verdicts import LABELS, MEANINGS, Verdict

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "book" / "_static" / "bparallel.css"


def test_the_vocabulary_is_closed_and_each_word_means_something():
    assert LABELS == ("holds", "holds with conditions", "not supported", "fails",
                      "not testable")  # one vocabulary: "published code only" is a condition
    assert set(MEANINGS) == set(Verdict) and all(m.endswith(".") for m in MEANINGS.values())
    slugs = [v.slug for v in Verdict]
    assert len(set(slugs)) == len(slugs) and all(re.fullmatch(r"[a-z-]+", s) for s in slugs)
    for v in Verdict:
        assert Verdict.parse(v.label) is v and str(v) == v.label and f"{v}" == v.label
        assert Verdict.parse(f"  {v.label.replace(' ', '  ')} ") is v  # spacing forgiven


@pytest.mark.parametrize("bad", ["holds in most layers", "Holds", "not resolved", "", 3])
def test_parse_refuses_words_outside_the_vocabulary(bad):
    with pytest.raises(ValueError, match="verdict="):
        Verdict.parse(bad)


def test_one_function_renders_a_verdict_cell_in_tables_and_prose():
    assert verdicts.cell(Verdict.FAILS) == "{verdict}`fails`"
    assert verdicts.cell("holds with conditions", "only  copy") == \
        "{verdict}`holds with conditions`: only copy"
    assert verdicts.cell(Verdict.FAILS, "as defined") == "{verdict}`fails`: as defined"
    with pytest.raises(ValueError, match="vocabulary"):
        verdicts.cell("holds as a supremum")
    # markdown.table turns a Verdict into the same cell; a plain string stays text
    assert cell(Verdict.NOT_TESTABLE) == verdicts.cell(Verdict.NOT_TESTABLE)


@pytest.mark.parametrize("condition", ["", "  ", None, 3])
def test_holds_with_conditions_never_stands_without_its_condition(condition):
    """Issue #45: 19 of 33 verdicts read "holds with conditions" and the phrase stopped
    telling a reader anything; the cell names the condition, in tables made by code too."""
    with pytest.raises(ValueError, match="condition="):
        verdicts.cell(Verdict.HOLDS_WITH_CONDITIONS, condition)
    with pytest.raises(ValueError, match="condition="):
        table([{"claim": "x", "verdict": Verdict.HOLDS_WITH_CONDITIONS}], caption="c",
              name="tbl-x")


def test_the_condition_of_a_claim_over_parts():
    H, HWC, NS = Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS, Verdict.NOT_SUPPORTED
    assert verdicts.condition(HWC, {"copy": H, "cycle": NS}, "task") == "only copy"
    assert verdicts.condition(HWC, {"copy": H, "cycle": HWC, "first": NS}, "task") == \
        "only copy; cycle"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": H}, "task") == \
        "in every task; with conditions in copy"
    assert verdicts.condition(HWC, {"a": HWC, "b": HWC, "c": HWC, "d": H}, "arm") == \
        "in every arm; with conditions in a, b and c"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task") == \
        "in every task, with that task's conditions"
    # with the parts' own conditions: named where they differ, said once where they agree
    said = {"copy": "loosely", "cycle": "in 3 of 4 layers"}
    assert verdicts.condition(HWC, {"copy": H, "cycle": HWC}, "task", said) == \
        "in every task; with conditions in cycle (in 3 of 4 layers)"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task", said) == \
        "in every task, with that task's conditions"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task",
                              {"copy": "loosely", "cycle": "loosely"}) == \
        "loosely, in every task"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task", {"copy": "loosely"}) \
        == "in every task, with that task's conditions"  # one unknown: not the same
    # each part holds only in some of what it ranges over: said so when that is named
    only = {"copy": "only layer 1", "cycle": "only layers 2 and 3"}
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task", only, "layers") == \
        "in every task, for some layers"
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task", only) == \
        "in every task, with that task's conditions"  # not named: the rows say which
    assert verdicts.condition(HWC, {"copy": HWC, "cycle": HWC}, "task",
                              {**only, "copy": "loosely"}, "layers") == \
        "in every task, with that task's conditions"  # not every condition an "only"
    # where only some parts hold, a part holding with conditions carries its own: "only
    # fixed head size" alone would read as if the claim held there for every task
    assert verdicts.condition(HWC, {"width": NS, "head16": HWC}, "arm",
                              {"head16": "only induction"}) == "only head16 (induction)"
    assert verdicts.condition(HWC, {"copy": H, "cycle": HWC, "first": NS}, "task",
                              {"cycle": "in 3 of 4 layers", "copy": "ignored"}) == \
        "only copy; cycle (in 3 of 4 layers)"  # a part that holds has no condition to give
    assert verdicts.condition(H, {"copy": H}, "task") == ""
    assert verdicts.condition(Verdict.FAILS, {"copy": H, "cycle": Verdict.FAILS}, "task") == ""
    with pytest.raises(ValueError, match="every task holds without a condition"):
        verdicts.condition(HWC, {"copy": H, "cycle": H}, "task")  # their verdict is holds
    with pytest.raises(ValueError, match="part="):
        verdicts.condition(HWC, {"copy": H}, " ")


_BARE = re.compile(r"\|\s*\{verdict\}`holds with conditions`\s*\|")


def test_no_page_has_a_verdict_cell_holding_with_conditions_without_its_condition():
    """Every hand-written table of the book (the introduction's findings, the chapters'
    summaries) names the condition in the verdict cell; the glance, a tally by verdict, is
    the one table whose verdict column is a heading."""
    from bparallel.book.tools.findings import GLANCE_END, GLANCE_START, with_block

    bare = []
    for path in [*sorted((ROOT / "book").glob("*.md")),
                 *sorted((ROOT / "notebooks").glob("*.md"))]:
        text = path.read_text()
        if GLANCE_START in text:
            text = with_block(text, GLANCE_START, GLANCE_END, "")
        bare += [f"{path.name}:{text[:m.start()].count(chr(10)) + 1}"
                 for m in _BARE.finditer(text)]
    assert not bare, f"verdict cells without their condition: {bare}"
    text = table([{"claim": "Eq. 5", "verdict": Verdict.HOLDS},
                  {"claim": "Eq. 20", "verdict": Verdict.FAILS}], caption="c", name="tbl-v")
    inner = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    tokens = MarkdownIt("commonmark").enable("table").parse(inner)
    cells = [t.content for t in tokens if t.type == "inline"]
    assert cells == ["claim", "verdict", "Eq. 5", "{verdict}`holds`", "Eq. 20",
                     "{verdict}`fails`"]
    assert ":---" in text.splitlines()[4].split("|")[2]  # verdicts are left-aligned text


def test_booleans_read_yes_and_no():
    import numpy as np

    assert cell(True) == "yes" and cell(np.bool_(False)) == "no"
    assert cell(True, "d") == "1"  # an explicit format still wins
    text = table([{"bound holds": True}, {"bound holds": False}], caption="c", name="tbl-b")
    assert "| yes |" in text and "| no |" in text and ":---" in text


def test_legend_is_the_directive():
    assert verdicts.legend() == ":::{verdict-legend}\n:::\n"


def test_every_verdict_has_a_style_in_light_dark_and_print():
    css = CSS.read_text()
    for v in Verdict:
        rule = f".bp-verdict--{v.slug}"
        assert re.search(re.escape(rule) + r"\s*\{[^}]*--bp-bg", css), f"no light style: {rule}"
        assert re.search(r'html\[data-theme="dark"\] ' + re.escape(rule) + r"\s*\{", css), (
            f"no dark-mode style: {rule}")
        assert re.search(re.escape(rule) + r"::before\s*\{\s*content:", css), (
            f"no glyph: {rule} (colour must not be the only signal)")
    assert "@media print" in css


def test_config_loads_the_extension_and_the_stylesheet():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert "bparallel.book.render.sphinxext" in sphinx["extensions"]
    assert "bparallel.css" in sphinx["html_css_files"]
    assert "cards.js" in sphinx["html_js_files"]


def test_the_conditions_of_both_modes_and_of_a_rank_claim():
    """The verdict cells' words for chapters 10 and 12: where a claim judged in both modes
    holds, and a rank claim that holds only weakly."""
    from bparallel.book.section4.statistics import (
        RHO_CONDITIONS,
        RHO_HOLDS,
        modes_condition,
        rank_condition,
    )

    H, HWC, NS, F = (Verdict.HOLDS, Verdict.HOLDS_WITH_CONDITIONS, Verdict.NOT_SUPPORTED,
                     Verdict.FAILS)
    assert modes_condition(H, NS) == "published code only"
    assert modes_condition(NS, HWC) == "as defined only, weakly"
    assert modes_condition(H, HWC) == "published code; as defined, weakly"
    assert modes_condition(H, H) == "" and modes_condition(F, F) == ""  # holds; fails
    # one mode reverses the claim: it fails, and the cell names that mode and the other's
    assert modes_condition(H, F) == "as defined; published code: holds"
    assert modes_condition(F, NS) == "published code; as defined: not supported"
    assert modes_condition(NS, NS) == ""
    weak = {"cells": 6, "p_min": 0.001, "p": 0.01, "median": (RHO_CONDITIONS + RHO_HOLDS) / 2}
    assert rank_condition(weak) == f"weakly (median ρ below {RHO_HOLDS:g})"
    assert rank_condition({**weak, "median": RHO_HOLDS + 0.1}) == ""  # holds
    assert rank_condition({**weak, "p": 0.5}) == ""  # not supported
    assert rank_condition({**weak, "verdict": Verdict.NOT_TESTABLE}) == ""  # its own verdict


def test_every_written_verdict_gives_its_condition_after_a_colon():
    """A verdict written on a page (a chapter's verdict box, a table, the intro) is followed
    by its condition or note the one way :func:`verdicts.cell` writes it, ``{verdict}`...`:
    condition``, never in parentheses after it, so a reader meets one form everywhere."""
    pages = [*sorted((ROOT / "notebooks").glob("*.md")), *sorted((ROOT / "book").glob("*.md")),
             ROOT / "README.md"]
    bad = [f"{p.name}: {m.group(0)}" for p in pages
           for m in re.finditer(r"\{verdict\}`[^`]+` \(", p.read_text())]
    assert len(pages) > 15 and not bad, bad
