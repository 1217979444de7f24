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
    assert verdicts.cell("holds with conditions") == "{verdict}`holds with conditions`"
    with pytest.raises(ValueError, match="vocabulary"):
        verdicts.cell("holds as a supremum")
    # markdown.table turns a Verdict into the same cell; a plain string stays text
    assert cell(Verdict.NOT_TESTABLE) == verdicts.cell(Verdict.NOT_TESTABLE)
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
