"""The glossary (book/glossary.md) and the pages' links to it (issue #36, item 2), without a
build: every entry is linked by ``{term}`` from some page, and every ``{term}`` names an
entry (a build would fail on the second too, but only after executing the book)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.book.pages.test_prose_numbers import sources

ROOT = Path(__file__).resolve().parents[3]
GLOSSARY = ROOT / "book" / "glossary.md"
#: ``{term}`text``` or ``{term}`text <target>```.
TERM_ROLE = re.compile(r"\{term\}`(?P<text>[^`<]*?)\s*(?:<(?P<target>[^`>]+)>)?`")


def glossary_entries(text: str) -> list[list[str]]:
    """The entries of the ``{glossary}`` directives of ``text``: per entry, its terms (the
    unindented lines above an indented definition)."""
    entries: list[list[str]] = []
    for body in re.findall(r"^:::\{glossary\}[^\n]*\n(.*?)^:::[ \t]*$", text, re.S | re.M):
        terms: list[str] = []
        for line in body.splitlines():
            if not line.strip():
                continue
            if line[0] in " \t":  # a definition line closes the entry's list of terms
                if terms:
                    entries.append(terms)
                terms = []
            else:
                terms.append(line.strip())
        assert not terms, f"glossary terms without a definition: {terms}"
    return entries


def term_links(text: str) -> list[str]:
    """The targets of the ``{term}`` roles of ``text``, as written."""
    return [(m.group("target") or m.group("text")).strip() for m in TERM_ROLE.finditer(text)]


def _key(term: str) -> str:
    return " ".join(term.lower().split())  # Sphinx matches glossary terms case-insensitively


def test_glossary_parser():
    text = (":::{glossary}\nmean ablation\n  Replace by the mean.\n\nreliability\nsplit halves\n"
            "  Median over splits, with\n  a second line.\n:::\n")
    assert glossary_entries(text) == [["mean ablation"], ["reliability", "split halves"]]
    assert term_links("a {term}`Mean ablation` and {term}`two halves <split halves>`.") == [
        "Mean ablation", "split halves"]


def test_every_term_link_names_an_entry():
    terms = {_key(t) for entry in glossary_entries(GLOSSARY.read_text()) for t in entry}
    bad = [f"{path.name}: {target!r}" for path in sources()
           for target in term_links(path.read_text(encoding="utf-8"))
           if _key(target) not in terms]
    assert not bad, "{term} links to no glossary entry:\n" + "\n".join(bad)


def test_every_entry_is_linked_from_a_page():
    entries = glossary_entries(GLOSSARY.read_text())
    assert len(entries) >= 20
    linked = {_key(t) for path in sources() if path != GLOSSARY
              for t in term_links(path.read_text(encoding="utf-8"))}
    unlinked = [entry for entry in entries if not linked & {_key(t) for t in entry}]
    assert not unlinked, f"glossary entries that no page links with {{term}}: {unlinked}"

