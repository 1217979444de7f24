"""Execute the book's cached chapters side by side before Jupyter Book reads them.

Jupyter Book 1.x executes one notebook at a time, while Sphinx reads the pages (myst-nb's
``cache`` mode, ``_config.yml``): on two cores one core idles for the minutes the chapters
compute. ``scripts/build_book.sh`` therefore first calls :func:`execute_ahead`: every page
of ``_toc.yml`` that myst-nb executes through its cache (a MyST notebook whose
``mystnb.execution_mode`` is not ``force``, ``inline`` or ``off``) is staged in the
execution cache (``_build/.jupyter_cache``) the way myst-nb stages it (jupyter-cache's
``myst_nb_md`` reader), and those with no cached run are executed by jupyter-cache's
worker of its ``local-parallel`` executor, one kernel per core, each with its share of the
cores' torch and BLAS threads (:func:`~.regress.share_of_cores`; its metrics workers, one
thread each, stay one per core, as in the build), in the notebook's folder as the build
runs them.

myst-nb then finds each run by the cache's key (the notebook's code cells and kernel) and
executes nothing again. A notebook whose run failed here is left uncached: the build runs it
once more and reports its error as it reports every failing cell. Nothing here decides what
a page shows: the cells, their folder and their timeout are the build's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from .regress import ROOT, SHARED_VARS, STAGGER_S, share_of_cores
from .toc import toc_files

__all__ = ["CACHED_MODES", "cached_pages", "execute_ahead", "main"]

#: myst-nb's execution modes that read and fill the cache; a page may override the book's
#: mode in its ``mystnb`` metadata (chapters 05 and 15 force a fresh run).
CACHED_MODES = ("cache",)


def _front_matter(text: str) -> dict | None:
    """The YAML front matter of a MyST notebook, ``None`` where the page is not one."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    meta = yaml.safe_load(text[3:end])
    if not isinstance(meta, dict):
        return None
    fmt = (meta.get("jupytext") or {}).get("text_representation", {}).get("format_name")
    return meta if fmt == "myst" or meta.get("file_format") == "mystnb" else None


def cached_pages(root: str | os.PathLike | None = None,
                 book_mode: str | None = None) -> list[Path]:
    """The pages of ``root``'s ``_toc.yml`` (default: the repository's) that myst-nb
    executes through its cache: MyST notebooks whose own ``mystnb.execution_mode`` (else
    ``book_mode``, else the book's ``execute.execute_notebooks`` in ``_config.yml``) is
    ``cache``; in reading order."""
    root = ROOT if root is None else Path(root)
    if book_mode is None:
        config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
        book_mode = (config.get("execute") or {}).get("execute_notebooks", "auto")
    pages = []
    for name in toc_files(root / "_toc.yml"):
        path = root / name if name.endswith((".md", ".ipynb")) else root / f"{name}.md"
        if path.suffix != ".md" or not path.is_file():
            continue
        meta = _front_matter(path.read_text(encoding="utf-8"))
        if meta is None:
            continue
        mode = (meta.get("mystnb") or {}).get("execution_mode", book_mode)
        if mode in CACHED_MODES:
            pages.append(path)
    return pages


def execute_ahead(pages: Sequence[str | os.PathLike], cache_dir: str | os.PathLike, *,
                  timeout: int = 1800, jobs: int | None = None) -> dict[str, list[str]]:
    """Stage ``pages`` in the jupyter-cache at ``cache_dir`` and execute, ``jobs`` at once
    (default: one per core), those with no cached run; returns the pages ``succeeded``,
    ``excepted`` and ``errored`` (jupyter-cache's words) and those ``cached`` already.
    ``timeout``: seconds per cell, as the build's ``execute.timeout``."""
    import multiprocessing

    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ProcessData

    if not isinstance(timeout, int) or timeout <= 0:
        raise ValueError(f"timeout={timeout!r}: expected a positive number of seconds")
    jobs = max(1, os.cpu_count() or 1) if jobs is None else jobs
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs={jobs!r}: expected a positive integer")
    cache = get_cache(str(cache_dir))
    staged = [cache.add_nb_to_project(str(Path(p).resolve()),
                                      read_data={"type": "plugin", "name": "myst_nb_md"})
              for p in pages]
    unexecuted = {r.pk for r in cache.list_unexecuted()}
    todo = [r for r in staged if r.pk in unexecuted]
    out: dict[str, list[str]] = {"cached": [r.uri for r in staged if r.pk not in unexecuted],
                                 "succeeded": [], "excepted": [], "errored": []}
    if not todo:
        return out
    # one notebook at a time to each worker, in reading order: the last to finish ends at
    # most one notebook after the others; the kernels of the first wave start apart, as
    # regress starts them (:data:`~.regress.STAGGER_S`: two kernels at once can race for a port)
    jobs = min(jobs, len(todo))
    work = [(k * STAGGER_S if k < jobs else 0.0, ProcessData(r.pk, r.uri, cache, timeout, False))
            for k, r in enumerate(todo)]
    threads = [v for v in SHARED_VARS if v != "BPARALLEL_WORKERS"]
    with share_of_cores(jobs, threads), multiprocessing.Pool(jobs) as pool:
        for code, uri in pool.imap_unordered(_execute_one, work, chunksize=1):
            out[("succeeded", "excepted", "errored")[code]].append(uri)
    return out


def _execute_one(delay_and_data) -> tuple[int, str]:
    """One notebook in a worker process: after its delay, jupyter-cache's worker of the
    ``local-parallel`` executor runs it in its folder and caches its run."""
    import time

    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc

    delay, data = delay_and_data
    time.sleep(delay)
    return ExecutionWorkerLocalMProc()(data)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bparallel.book.tools.execute_ahead [CACHE_DIR]``: execute the book's
    cached pages side by side into ``CACHE_DIR`` (default ``_build/.jupyter_cache``), as
    ``scripts/build_book.sh`` does before it runs Jupyter Book; always exits 0 (a failed
    page is the build's to report)."""
    import argparse
    import time

    p = argparse.ArgumentParser(prog="python -m bparallel.book.tools.execute_ahead",
                                description="execute the book's cached pages side by side")
    p.add_argument("cache_dir", nargs="?", default=str(ROOT / "_build" / ".jupyter_cache"))
    p.add_argument("--jobs", type=int, default=None)
    args = p.parse_args(argv)
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    timeout = int((config.get("execute") or {}).get("timeout", 1800))
    start = time.monotonic()
    out = execute_ahead(cached_pages(), args.cache_dir, timeout=timeout, jobs=args.jobs)
    ran = {k: [Path(u).name for u in v] for k, v in out.items()}
    print(f"[execute_ahead] {len(ran['cached'])} cached, {len(ran['succeeded'])} executed in "
          f"{time.monotonic() - start:.0f} s, failed (the build runs them again): "
          f"{', '.join(ran['excepted'] + ran['errored']) or 'none'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
