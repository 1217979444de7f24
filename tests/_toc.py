"""The book's table of contents as the tests read it: one walker of ``_toc.yml``."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

TOC = Path(__file__).resolve().parents[1] / "_toc.yml"


def toc_files(toc_path: Path = TOC) -> list[str]:
    """The root and every ``file:`` of a jb-book table of contents (parts, chapters,
    sections), in reading order, as written."""
    toc = yaml.safe_load(toc_path.read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return files


def toc_docnames(toc_path: Path = TOC) -> list[str]:
    """:func:`toc_files` without their ``.md``/``.ipynb`` suffixes: Sphinx's docnames."""
    return [re.sub(r"\.(md|ipynb)$", "", n) for n in toc_files(toc_path)]
