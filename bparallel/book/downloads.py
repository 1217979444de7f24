"""Each chapter as an executed Jupyter notebook, for readers to download.

myst-nb writes every executed page as a notebook into ``_build/jupyter_execute/`` (from the
text notebook and the execution cache: nothing runs again). :func:`export_notebooks` copies
those of ``notebooks/`` next to their HTML pages (``_build/html/notebooks/<name>.ipynb``),
and ``book/_static/notebook-download.js`` adds a ".ipynb" entry to each chapter's download
menu. ``scripts/build_book.sh`` calls it after every build:
``python -m bparallel.book.downloads _build``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._io import atomic_write_text


def export_notebooks(build_dir: str | Path = "_build", folder: str = "notebooks") -> list[Path]:
    """Copy ``<build_dir>/jupyter_execute/<folder>/*.ipynb`` into ``<build_dir>/html/<folder>/``
    (atomically, each checked to be a notebook with at least one output); return the copies.

    Raises ``FileNotFoundError`` when the book has not been built and ``ValueError`` for an
    executed notebook that is not a notebook or has no outputs (it would not be executed).
    """
    build = Path(build_dir)
    source, dest = build / "jupyter_execute" / folder, build / "html" / folder
    if not dest.is_dir():
        raise FileNotFoundError(f"{dest} does not exist: build the book first")
    if not source.is_dir():
        raise FileNotFoundError(f"{source} does not exist: myst-nb wrote no executed notebooks")
    copies = []
    for nb_path in sorted(source.glob("*.ipynb")):
        text = nb_path.read_text(encoding="utf-8")
        try:
            nb = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{nb_path} is not a notebook: {err}") from None
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if not isinstance(cells, list) or "nbformat" not in nb:
            raise ValueError(f"{nb_path} is not a notebook (no nbformat and cells)")
        if not any(c.get("outputs") for c in cells if c.get("cell_type") == "code"):
            raise ValueError(f"{nb_path} has no outputs: it was not executed")
        if not (dest / f"{nb_path.stem}.html").is_file():
            continue  # a notebook that is not a page of the book
        copies.append(atomic_write_text(dest / nb_path.name, text))
    return copies


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    build = args[0] if args else "_build"
    copies = export_notebooks(build)
    print(f"[downloads] {len(copies)} executed notebooks next to their pages in {build}/html/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
