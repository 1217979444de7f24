"""Each chapter as an executed Jupyter notebook, for readers to download.

myst-nb writes every page as a notebook into ``_build/jupyter_execute/``: with its outputs
when it executed the page in this build, without them when it took the outputs from the
execution cache (myst-nb 1.4 writes the notebook it read, not the one it merged).
:func:`export_notebooks` therefore takes each notebook's outputs from the execution cache
(``_build/.jupyter_cache``) when the written notebook has none: nothing runs again. It copies
the notebooks of ``notebooks/`` next to their HTML pages
(``_build/html/notebooks/<name>.ipynb``),
and ``book/_static/notebook-download.js`` adds a ".ipynb" entry to each chapter's download
menu. ``scripts/build_book.sh`` calls it after every build:
``python -m bparallel.book.tools.downloads _build``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..._io import atomic_write_text


def _has_outputs(nb: dict) -> bool:
    return any(c.get("outputs") for c in nb["cells"] if c.get("cell_type") == "code")


def _from_cache(nb_path: Path, text: str, cache_dir: Path) -> str:
    """The notebook ``text`` with the outputs of its run in the jupyter-cache at ``cache_dir``."""
    import nbformat
    from jupyter_cache import get_cache

    missing = ValueError(f"{nb_path} has no outputs: it was not executed, and the execution "
                         f"cache {cache_dir} holds no run of it")
    if not cache_dir.is_dir():
        raise missing
    try:
        _, merged = get_cache(str(cache_dir)).merge_match_into_notebook(
            nbformat.reads(text, as_version=4))
    except KeyError:
        raise missing from None
    if not _has_outputs(merged):
        raise missing
    return nbformat.writes(merged)


def export_notebooks(build_dir: str | Path = "_build", folder: str = "notebooks") -> list[Path]:
    """Copy ``<build_dir>/jupyter_execute/<folder>/*.ipynb`` into ``<build_dir>/html/<folder>/``
    (atomically, each checked to be a notebook with at least one output; a notebook written
    without outputs gets them from the execution cache ``<build_dir>/.jupyter_cache``);
    return the copies.

    Raises ``FileNotFoundError`` when the book has not been built and ``ValueError`` for an
    executed notebook that is not a notebook or has no outputs, in the file or in the cache
    (it was not executed).
    """
    build = Path(build_dir)
    source, dest = build / "jupyter_execute" / folder, build / "html" / folder
    if not dest.is_dir():
        raise FileNotFoundError(f"{dest} does not exist: build the book first")
    if not source.is_dir():
        raise FileNotFoundError(f"{source} does not exist: myst-nb wrote no executed notebooks")
    copies = []
    for nb_path in sorted(source.glob("*.ipynb")):
        if not (dest / f"{nb_path.stem}.html").is_file():
            continue  # a notebook that is not a page of the book
        text = nb_path.read_text(encoding="utf-8")
        try:
            nb = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{nb_path} is not a notebook: {err}") from None
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if not isinstance(cells, list) or "nbformat" not in nb:
            raise ValueError(f"{nb_path} is not a notebook (no nbformat and cells)")
        if not _has_outputs(nb):
            text = _from_cache(nb_path, text, build / ".jupyter_cache")
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
