"""The last book build's chapters as a regression: what they wrote, compared with the
references, nothing executed again.

The book build (``scripts/build_book.sh``) executes every chapter at the profile its
parameters cell sets: the theory chapters and chapter 15 at ``quick``, chapters 07-14 at
``auto``, which is the paper profile where every shipped model is there. Each chapter writes
its results JSON (``notebooks/results/<name>.json``) as a regression run writes it. The
build notes when it began (:data:`START_FILE`) and, once done, seals what its chapters wrote
(:func:`seal`: the hash of every results file written since, :data:`SEAL_FILE`); a chapter
the build took from the execution cache wrote nothing and is not sealed. :func:`compare_build`
compares each sealed result with the reference of its profile (:func:`~.regress.compare`,
the same rules): chapters 07-14 against the paper profile and the others against the quick
one, at no cost beyond the build. The test suite reads them in place of running those
chapters again (``tests/book/tools/test_regress.py``); a chapter the build did not run is
executed there as before.

``python -m bparallel.book.tools.from_build`` prints the comparison; ``--seal`` is the
build's last step.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._io import atomic_write_text
from ...transformer.checkpoints import sha256_file
from ...transformer.shipped import shipped_complete
from ..render.results import load_results
from ..section4.models import resolve_profile
from .regress import (
    ROOT,
    Row,
    available_notebooks,
    compare,
    declared_parameters,
    format_table,
    load_reference,
    load_tolerance_rules,
    notebooks_dir,
    recorded_values,
    reference_dir,
)

__all__ = ["START_FILE", "SEAL_FILE", "chapter_profile", "seal", "build_results",
           "compare_build", "main"]

#: Written by the build script when the build begins: the second it began.
START_FILE = Path("_build") / "build-start"
#: Written by :func:`seal` when the build ends: each results file the build's chapters wrote,
#: with its hash.
SEAL_FILE = Path("_build") / "build-results.json"


def _results_file(root: Path, name: str) -> Path:
    return notebooks_dir(root) / "results" / f"{name}.json"


def chapter_profile(name: str, root: str | Path = ROOT) -> str | None:
    """The profile the book build runs chapter ``name`` at: its parameters cell's
    ``profile``, where ``"auto"`` is ``"paper"`` when every shipped model is there (the
    paper profile's eight and chapter 12's graph tasks) and ``None`` (not comparable)
    otherwise."""
    declared = declared_parameters(notebooks_dir(Path(root)) / f"{name}.md").get("profile")
    if declared != "auto":
        return declared
    return "paper" if shipped_complete() and resolve_profile("auto") == "paper" else None


def seal(root: str | Path = ROOT) -> dict[str, str]:
    """Record (in :data:`SEAL_FILE`) the results files the chapters wrote since the build
    began (:data:`START_FILE`), by their hashes; returns them by chapter. Nothing is sealed
    without a start."""
    root = Path(root)
    start_file = root / START_FILE
    sealed: dict[str, str] = {}
    if start_file.is_file():
        start = float(start_file.read_text(encoding="utf-8").strip())
        for name in available_notebooks(root):
            path = _results_file(root, name)
            if path.is_file() and path.stat().st_mtime >= start:
                sealed[name] = sha256_file(path)
    atomic_write_text(root / SEAL_FILE, json.dumps(sealed, indent=1, sort_keys=True) + "\n")
    return sealed


def build_results(root: str | Path = ROOT) -> dict[str, tuple[str, dict[str, float]]]:
    """Chapter -> (profile, results) for every chapter the last build ran and sealed whose
    results file is unchanged since and whose profile is known (:func:`chapter_profile`)."""
    root = Path(root)
    try:
        sealed = json.loads((root / SEAL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for name, digest in sorted(sealed.items()):
        path = _results_file(root, name)
        if name not in available_notebooks(root) or not path.is_file():
            continue
        if sha256_file(path) != digest:
            continue
        profile = chapter_profile(name, root)
        if profile is not None:
            out[name] = (profile, load_results(path))
    return out


def compare_build(root: str | Path = ROOT,
                  profile: str | None = None) -> dict[str, tuple[str, list[Row]]]:
    """Chapter -> (profile, rows of :func:`~.regress.compare`) for every chapter of
    :func:`build_results` (of ``profile`` only, when given), against its profile's
    reference."""
    root = Path(root)
    rules = load_tolerance_rules(root)
    out = {}
    for name, (prof, results) in build_results(root).items():
        if profile is not None and prof != profile:
            continue
        reference = load_reference(reference_dir(root) / prof / f"{name}.json")
        out[name] = (prof, compare(recorded_values(results, name), reference, name, rules,
                                   prof))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bparallel.book.tools.from_build [--seal]``: seal the build's results
    (its last step), or compare them with the references (exit 1 on any key that does not
    pass, or when the last build ran no chapter)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m bparallel.book.tools.from_build",
                                description="the last book build's chapters as a regression")
    p.add_argument("--seal", action="store_true", help="record what the build's chapters wrote")
    args = p.parse_args(argv)
    if args.seal:
        sealed = seal()
        print(f"[from_build] {len(sealed)} chapter(s) ran in this build and are sealed")
        return 0
    compared = compare_build()
    counts: dict[str, Any] = {}
    for name, (prof, rows) in compared.items():
        for r in rows:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        print(format_table(f"{name} ({prof})", rows, only_problems=True))
    ok = bool(compared) and set(counts) <= {"PASS"}
    print(f"from the build: {len(compared)} chapter(s), "
          + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items()))
          + f" -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
