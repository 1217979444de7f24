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
- the ``{execution-status}`` directive: a numbered table of how each chapter of this build
  ran (its profile parameter, its run time, whether it ran in this build or came from the
  execution cache, its status), myst-nb's execution data filled in once every chapter has
  run, captioned with the machine that built it (:func:`machine_description`);
- numbers for the tables and figures of the pages outside the numbered chapters (the
  introduction, the reproducibility and API pages) that cannot be the paper's: Sphinx counts
  them "Table 1, 2, ..." across those pages; :func:`prefix_unnumbered_pages` makes them
  "Table 0.1" in the introduction and "Table A.1", "B.1" on the pages after the chapters
  (``bparallel_number_prefixes``), as the chapters' read "Table 10.3".

Sphinx and docutils are imported here only: the chapters import
:mod:`bparallel.book.verdicts`, never this module.
"""

from __future__ import annotations

import os
import platform
import re
import time
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
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
NUMBER_PREFIXES = {"book/intro": "0", "book/reproducibility": "A", "book/reforms": "B",
                   "book/execution": "C", "book/use": "D", "book/api": "E"}
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


# ---------------------------------------------------------------- execution status


def machine_description(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """The machine a build runs on, in words: CPU model (from ``cpuinfo`` where it names
    one, else the architecture), cores, operating system, Python and torch versions
    ("Intel(R) Xeon(R) ..., 2 cores, Linux, Python 3.11.9, torch 2.13.0+cpu")."""
    model = None
    try:
        for line in Path(cpuinfo).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = " ".join(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    try:
        torch = f"torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        torch = "no torch"
    cores = os.cpu_count() or 1
    return (f"{model or platform.machine() or 'an unnamed CPU'}, {cores} core"
            f"{'s' if cores != 1 else ''}, {platform.system() or 'an unnamed system'}, "
            f"Python {platform.python_version()}, {torch}")


#: A chapter's profile parameter, as its parameters cell sets it (``profile = "auto"``).
_PROFILE = re.compile(r'^profile\s*=\s*"(\w+)"', re.MULTILINE)
#: A block fenced by four or more backticks (or tildes): a page *showing* a notebook's
#: source (the "use the package" page's chapter of one's own), never the page's own cells.
_SHOWN_SOURCE = re.compile(r"^(`{4,}|~{4,})[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)


def profile_parameter(source: str) -> str:
    """The ``profile`` a chapter's parameters cell sets, or "—" for a chapter without one
    (a notebook's source shown inside a fence of four backticks is not the page's own)."""
    m = _PROFILE.search(_SHOWN_SOURCE.sub("", source))
    return m.group(1) if m else "\u2014"


def run_words(data: dict, build_start: float) -> str:
    """Where a chapter's outputs come from: run in this build, or from the execution cache
    (with the date it ran)."""
    mtime = data.get("mtime")
    if mtime is None or mtime >= build_start:
        return "in this build"
    return f"from the execution cache (run {datetime.fromtimestamp(mtime):%Y-%m-%d %H:%M})"


class execution_rows(nodes.General, nodes.Element):
    """Where ``{execution-status}``'s rows go, once every chapter has run."""


class ExecutionStatus(SphinxDirective):
    """``{execution-status}``: a table (numbered and captioned at reading, so that it is
    counted like any other) of every executed chapter: its profile parameter, run time,
    provenance and status; the rows are myst-nb's execution data, filled in after every
    chapter has been read (:class:`FillExecutionStatus`)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        _status_pages(self.env).add(self.env.docname)  # written again once all have run
        caption = ("How each chapter of this build ran: the profile its parameters cell "
                   "sets, its run time, whether it ran in this build or came from the "
                   "execution cache, and whether it succeeded. Built on "
                   f"{machine_description()}.")
        table = nodes.table(classes=["colwidths-auto"], ids=["tbl-execution-status"])
        table += nodes.title(caption, caption)
        self.state.document.note_explicit_target(table)
        group = nodes.tgroup(cols=5)
        table += group
        for _ in range(5):
            group += nodes.colspec(colwidth=20)
        head = nodes.thead()
        row = nodes.row()
        for name in ("chapter", "profile", "run time (s)", "ran", "status"):
            row += nodes.entry("", nodes.paragraph(text=name))
        head += row
        group += head
        body = nodes.tbody()
        body += execution_rows()
        group += body
        self.set_source_info(table)
        return [table]


class FillExecutionStatus(SphinxPostTransform):
    """Replace :class:`execution_rows` with one row per executed chapter."""

    default_priority = 8  # before the references are resolved

    def run(self, **kwargs: Any) -> None:
        try:  # myst-nb's execution data: none in a build without myst-nb
            from myst_nb.sphinx_ import NbMetadataCollector

            data = NbMetadataCollector.get_doc_data(self.env)
        except (ImportError, AttributeError):
            data = {}
        start = getattr(self.env.app, "bparallel_build_start", 0.0)
        for placeholder in list(self.document.findall(execution_rows)):
            rows = []
            for docname in sorted(data):
                run = data[docname].get("exec_data")
                if not run:
                    continue
                source = Path(self.env.doc2path(docname))
                text = source.read_text(encoding="utf-8") if source.is_file() else ""
                link = addnodes.pending_xref(
                    refdoc=self.env.docname, reftype="doc", refdomain="std",
                    refexplicit=True, refwarn=True,
                    reftarget="/" + docname)
                link += nodes.inline(text=docname.rsplit("/", 1)[-1])
                seconds = run.get("runtime")
                status = ("succeeded" if run.get("succeeded") else
                          f"failed: {(run.get('error') or 'see the build log')[:80]}")
                row = nodes.row()
                for cell in (nodes.paragraph("", "", link),
                             nodes.paragraph(text=profile_parameter(text)),
                             nodes.paragraph(text="\u2014" if seconds is None
                                             else f"{seconds:,.1f}"),
                             nodes.paragraph(text=run_words(run, start)),
                             nodes.paragraph(text=status)):
                    row += nodes.entry("", cell)
                rows.append(row)
            if not rows:
                rows = [nodes.row("", *[nodes.entry("", nodes.paragraph(text=t)) for t in
                                        ("no chapter was executed in this build",
                                         "\u2014", "\u2014", "\u2014", "\u2014")])]
            placeholder.replace_self(rows)


#: Set by ``scripts/build_book.sh`` to the second its build began (before it exports the
#: explorer's data and runs Jupyter Book): a chapter run since then ran "in this build".
BUILD_START_ENV = "BPARALLEL_BUILD_START"


def _note_build_start(app: Any) -> None:
    start = os.environ.get(BUILD_START_ENV, "")
    app.bparallel_build_start = float(start) if start.isdigit() else time.time()


#: The attribute of the build environment that holds the pages with an
#: ``{execution-status}`` table (as myst-nb marks a page with ``has_exec_table``).
STATUS_PAGES = "bparallel_execution_status_pages"


def _status_pages(env: Any) -> set[str]:
    """The pages of ``env`` whose ``{execution-status}`` directive has marked them."""
    if not hasattr(env, STATUS_PAGES):
        setattr(env, STATUS_PAGES, set())
    return getattr(env, STATUS_PAGES)


def _purge_status_page(app: Any, env: Any, docname: str) -> None:
    _status_pages(env).discard(docname)  # read again: its directive marks it again


def _merge_status_pages(app: Any, env: Any, docnames: Any, other: Any) -> None:
    _status_pages(env).update(_status_pages(other) & set(docnames))  # parallel reading


def _update_execution_status(app: Any, env: Any) -> list[str]:
    """The pages with an ``{execution-status}`` table, whatever their name, are written
    again once every chapter has run."""
    return sorted(_status_pages(env) & set(env.found_docs))


def setup(app: Any) -> dict[str, Any]:
    app.add_role("verdict", verdict_role)
    app.add_directive("verdict-legend", VerdictLegend)
    app.add_directive("book-bibtex", BookBibtex)
    app.add_config_value("bparallel_published_code_url", "", "env")
    app.add_transform(LinkPublishedCode)
    app.add_config_value("bparallel_number_prefixes", NUMBER_PREFIXES, "env")
    app.connect("env-get-updated", prefix_unnumbered_pages, priority=900)
    app.add_node(execution_rows)
    app.add_directive("execution-status", ExecutionStatus)
    app.add_post_transform(FillExecutionStatus)
    app.connect("builder-inited", _note_build_start)
    app.connect("env-purge-doc", _purge_status_page)
    app.connect("env-merge-info", _merge_status_pages)
    app.connect("env-updated", _update_execution_status)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
