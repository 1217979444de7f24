"""The book's table of contents (``_toc.yml``): one walker for the build and the tests."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

__all__ = ["toc_files", "toc_docnames"]

# The repository's table of contents (not documented: its value is this machine's path).
TOC = Path(__file__).resolve().parents[3] / "_toc.yml"


def toc_files(toc_path: str | Path | None = None) -> list[str]:
    """The root and every ``file:`` of a jb-book table of contents (parts, chapters,
    sections), in reading order, as written (relative to the repository, suffix optional);
    ``toc_path`` defaults to the repository's ``_toc.yml``."""
    path = TOC if toc_path is None else Path(toc_path)
    if not path.is_file():
        raise ValueError(f"toc_path={str(path)!r}: no such file")
    toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(toc, dict) or "root" not in toc:
        raise ValueError(f"toc_path={str(path)!r}: not a jb-book table of contents (no root)")
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


def toc_docnames(toc_path: str | Path | None = None) -> list[str]:
    """:func:`toc_files` without their ``.md``/``.ipynb`` suffixes: Sphinx's docnames."""
    return [re.sub(r"\.(md|ipynb)$", "", n) for n in toc_files(toc_path)]
