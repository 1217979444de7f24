"""Chapter 12's pages as the tests read them: its main page and its appendix pages."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def chapter_12_text() -> str:
    """Chapter 12's main page and its appendix pages (notebooks/12*.md) as one text, single
    spaces, each role read as its text (``{term}`modes <definition mode>``` -> ``modes``)."""
    text = " ".join(p.read_text() for p in sorted((ROOT / "notebooks").glob("12*.md")))
    text = re.sub(r"\{(?:term|doc|ref)\}`([^`<]*?)\s*<[^`]*>`", r"\1", text)
    text = re.sub(r"\{term\}`([^`]*)`", r"\1", text)
    return " ".join(text.split())
