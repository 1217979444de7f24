"""The book's own Sphinx extension (listed in ``_config.yml``'s extensions).

- the ``{verdict}`holds``` role: one verdict of :class:`bparallel.book.verdicts.Verdict` as
  a badge, ``<span class="bp-verdict bp-verdict--holds">holds</span>``, styled by
  ``book/_static/verdicts.css``; any other text is a build error;
- the ``{verdict-legend}`` directive: every verdict's badge with its meaning, then the
  reading rule;
- the ``{book-bibtex}`` directive: the book's own BibTeX entry, whose ``url`` is the
  configured address of the book (``html.baseurl``, else ``repository.url`` of
  ``_config.yml``), so that the citation follows the configuration like the repository link;
- a transform that links the first mention of the authors' published code on every page
  ("published code", "authors' code"; not in headings, captions, code or verdict badges) to
  ``bparallel_published_code_url``, set in ``_config.yml``;
- numbers for the tables and figures of the pages outside the numbered chapters (the
  introduction, the reproducibility and API pages) that cannot be the paper's: Sphinx counts
  them "Table 1, 2, ..." across those pages; :func:`prefix_unnumbered_pages` makes them
  "Table 0.1" in the introduction and "Table A.1", "B.1" on the pages after the chapters
  (``bparallel_number_prefixes``), as the chapters' read "Table 10.3".

Sphinx and docutils are imported here only: the chapters import
:mod:`bparallel.book.verdicts`, never this module.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

from ... import __version__
from ..verdicts import READING_RULE, Verdict

#: The book's title as cited (also CITATION.cff's).
BOOK_TITLE = ("bparallel: an executable book of ``Beyond Parallelism: Synergistic "
              "Computational Graph Effects in Multi-Head Attention''")
BOOK_YEAR = 2026


def badge(verdict: Verdict) -> nodes.inline:
    """The verdict's badge node: its word, classes ``bp-verdict bp-verdict--<slug>``."""
    return nodes.inline(verdict.label, verdict.label,
                        classes=["bp-verdict", f"bp-verdict--{verdict.slug}"])


def verdict_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
                 options: dict | None = None, content: list | None = None):
    """``{verdict}`<word>```: the badge, or an error naming the vocabulary."""
    try:
        verdict = Verdict.parse(text)
    except ValueError as err:
        msg = inliner.reporter.error(str(err), line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [badge(verdict)], []


class VerdictLegend(SphinxDirective):
    """``{verdict-legend}``: a list of every verdict's badge and meaning, then the rule by
    which a claim is read (:data:`~bparallel.book.verdicts.READING_RULE`)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        items = nodes.bullet_list(classes=["bp-verdict-legend"])
        for verdict in Verdict:
            para = nodes.paragraph()
            para += badge(verdict)
            para += nodes.Text(f": {verdict.meaning}")
            items += nodes.list_item("", para)
        rule = nodes.paragraph(classes=["bp-reading-rule"])
        rule += nodes.Text(READING_RULE)
        return [items, rule]


def book_bibtex(url: str = "", version: str = __version__) -> str:
    """The book's BibTeX entry; ``url`` is left out when no address is configured."""
    fields = [("author", "{{bparallel contributors}}"), ("title", f"{{{BOOK_TITLE}}}"),
              ("year", f"{{{BOOK_YEAR}}}"), ("version", f"{{{version}}}")]
    if url:
        fields.append(("url", f"{{{url}}}"))
    fields.append(("note", "{Executable Jupyter Book and Python package}"))
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k:<{width}} = {v}" for k, v in fields)
    return f"@software{{bparallel{BOOK_YEAR},\n{body}\n}}"


def book_url(config: Any) -> str:
    """The configured address of the book: ``html_baseurl``, else the repository URL."""
    theme = getattr(config, "html_theme_options", None) or {}
    return (getattr(config, "html_baseurl", "") or theme.get("repository_url", "") or "").strip()


class BookBibtex(SphinxDirective):
    """``{book-bibtex}``: the book's BibTeX entry as a highlighted code block."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        text = book_bibtex(book_url(self.config))
        block = nodes.literal_block(text, text, language="bibtex")
        self.set_source_info(block)
        return [block]


#: How a page names the authors' published code.
PUBLISHED_CODE = re.compile(r"\b(?:published code|authors[\u2019'] code)\b", re.IGNORECASE)
#: Text under these nodes is never linked: headings, captions, code, math, links, badges.
_NO_LINK = (nodes.title, nodes.caption, nodes.literal, nodes.literal_block, nodes.math,
            nodes.math_block, nodes.raw, nodes.reference, nodes.comment, nodes.rubric,
            nodes.FixedTextElement, addnodes.pending_xref)  # pending_xref: {term}, {doc} ...


def _linkable(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _NO_LINK) or "bp-verdict" in parent.get("classes", ()):
            return False
        if parent.tagname == "desc_signature":  # an API signature (a docstring is text)
            return False
        parent = parent.parent
    return True


def link_first_mention(doctree: nodes.Node, url: str, pattern: re.Pattern = PUBLISHED_CODE,
                       ) -> bool:
    """Link the first mention of ``pattern`` in running text of ``doctree`` to ``url``
    (nothing when it is already a link there); returns whether the page mentions it."""
    for text in doctree.findall(nodes.Text):
        match = pattern.search(text.astext())
        if match is None:
            continue
        parent = text.parent
        ancestor = parent
        while ancestor is not None:  # already linked, by hand: leave it
            if isinstance(ancestor, nodes.reference):
                if ancestor.get("refuri") == url:
                    return True
                break
            ancestor = ancestor.parent
        if not _linkable(text):
            continue
        source = text.astext()
        before, word, after = source[:match.start()], match.group(0), source[match.end():]
        new = [nodes.Text(before)] if before else []
        new.append(nodes.reference(word, word, refuri=url, internal=False,
                                   classes=["bp-published-code"]))
        if after:
            new.append(nodes.Text(after))
        index = parent.index(text)
        parent.remove(text)
        for k, node in enumerate(new):
            parent.insert(index + k, node)
        return True
    return False


class LinkPublishedCode(SphinxTransform):
    """On every page, the first mention of the authors' published code links to it."""

    default_priority = 800

    def apply(self, **kwargs: Any) -> None:
        url = (self.config.bparallel_published_code_url or "").strip()
        if url:
            link_first_mention(self.document, url)


#: Pages outside the numbered parts of ``_toc.yml`` -> the prefix of their table and figure
#: numbers: "Table 0.1" in the introduction, never a bare "Table 1" that could be the paper's.
NUMBER_PREFIXES = {"book/intro": "0", "book/reproducibility": "A", "book/api": "B"}
#: The kinds of numbered things renumbered (the std domain's; proofs keep the paper's count).
_PREFIXED_TYPES = ("table", "figure", "code-block")


def prefix_numbers(fignumbers: dict, prefix: str) -> bool:
    """Renumber, in place, one page's ``{figtype: {id: (n,)}}`` as ``(prefix, 1), (prefix,
    2), ...`` per type, in Sphinx's order; numbers of a numbered chapter (more than one
    part) are left alone. Returns whether anything changed."""
    changed = False
    for figtype in _PREFIXED_TYPES:
        numbers = fignumbers.get(figtype)
        if not numbers or any(len(n) != 1 for n in numbers.values()):
            continue
        for k, figure_id in enumerate(sorted(numbers, key=numbers.__getitem__), 1):
            numbers[figure_id] = (prefix, k)
        changed = True
    return changed


def prefix_unnumbered_pages(app: Any, env: Any) -> list[str]:
    """``env-get-updated``, after Sphinx has numbered the figures: the pages of
    ``bparallel_number_prefixes`` get their prefix; returns them, to be written again."""
    prefixes = app.config.bparallel_number_prefixes or {}
    return [docname for docname, prefix in prefixes.items()
            if docname in env.toc_fignumbers
            and prefix_numbers(env.toc_fignumbers[docname], prefix)]


def setup(app: Any) -> dict[str, Any]:
    app.add_role("verdict", verdict_role)
    app.add_directive("verdict-legend", VerdictLegend)
    app.add_directive("book-bibtex", BookBibtex)
    app.add_config_value("bparallel_published_code_url", "", "env")
    app.add_transform(LinkPublishedCode)
    app.add_config_value("bparallel_number_prefixes", NUMBER_PREFIXES, "env")
    app.connect("env-get-updated", prefix_unnumbered_pages, priority=900)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
