"""A content-addressed cache of per-model proxy metrics, shared by the Section 4 chapters.

The key (:func:`metrics_key`) hashes the weights, the input sequences, the options, the
numpy and torch versions and the package's source, so a cached result is never stale.
:func:`cached_metrics_many` computes the missing results of many models in parallel worker
processes (one per CPU core, one torch thread each): the exact proxies are single-threaded
numpy loops, so a cold book build uses every core.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import hashlib
import json
import multiprocessing
import os
import signal
import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._checks import positive_int
from .._io import atomic_write, file_lock
from .measure import PARTS, HeadStudy, ModelMeasures, check_parts, measure_model
from .model import Transformer

__all__ = [
    "MEASURES", "NotCached", "cached_metrics", "cached_metrics_many", "cached_sequence_metrics",
    "code_of", "default_workers", "heads_measure", "measured_code", "metrics_key",
    "return_freed_memory", "tracked_files",
]

#: Bumped when the layout of a cached metrics file changes (2: :meth:`~bparallel.transformer.
#: measure.ModelMeasures.flat`, a prefix per part).
_CACHE_FORMAT = 2


#: Where the code a cached result depends on starts: the measures and this cache. Their
#: imports, followed through the package (:func:`_measured_sources`), are the rest.
_ROOTS = ("transformer/measure.py", "transformer/metrics_cache.py")


def _imported_modules(path: Path, root: Path) -> set[Path]:
    """The package's modules that ``path`` imports anywhere (top level or inside a
    function), as files under ``root`` (``bparallel/``)."""
    import ast

    here = path.relative_to(root).parent.parts  # e.g. ("transformer",)
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:  # from .x import y / from .. import z
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            stem = (*base, *(node.module.split(".") if node.module else ()))
            targets = [stem] + [(*stem, alias.name) for alias in node.names]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            name = node.module if isinstance(node, ast.ImportFrom) else None
            names = [name] if name else [a.name for a in node.names]
            targets = [tuple(n.split(".")[1:]) for n in names if n.split(".")[0] == "bparallel"]
        else:
            continue
        for parts in targets:
            for candidate in (root.joinpath(*parts).with_suffix(".py"),
                              root.joinpath(*parts, "__init__.py")):
                if parts and candidate.is_file():
                    out.add(candidate)
    return out


def _measured_sources(root: Path) -> list[Path]:
    """The source files a cached result depends on: :data:`_ROOTS` and every module of the
    package they import, directly or not (package ``__init__`` files included)."""
    todo = [root / r for r in _ROOTS]
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += [g for g in _imported_modules(f, root) if g not in seen]
        for parent in f.relative_to(root).parents:  # importing a.b runs a/__init__.py
            init = root / parent / "__init__.py"
            if init.is_file() and init not in seen:
                todo.append(init)
    return sorted(seen)


def code_of(source: str, filename: str = "<source>") -> str:
    """The code of a module's ``source`` without what cannot change a result: its syntax
    tree (``ast.dump``, no line numbers, so no comment, blank line or layout) with every
    string that stands alone as a statement (docstrings, attribute notes) removed."""
    import ast

    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [s for s in body if not (isinstance(s, ast.Expr)
                                            and isinstance(s.value, ast.Constant)
                                            and isinstance(s.value.value, str))]
            node.body = kept or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def measured_code() -> dict[str, str]:
    """The code a cached result depends on, per module: for each of :func:`_measured_sources`
    (the measures, this cache and every module of the package they import), its path under
    ``bparallel/`` and its code as :func:`code_of` reads it (docstrings and layout aside). The
    cache's key hashes it whole (:func:`_package_fingerprint`); ``python -m bparallel record``
    keeps a hash per module, so that a stale record names the module that changed."""
    root = Path(__file__).resolve().parents[1]  # bparallel/
    return {f.relative_to(root).as_posix(): code_of(f.read_text(encoding="utf-8"), str(f))
            for f in _measured_sources(root)}


@functools.lru_cache(maxsize=1)
def _package_fingerprint() -> str:
    """SHA-256 of the code of the package's modules that compute cached metrics
    (:func:`measured_code`, the theory modules among them): a change to the code of any of
    them invalidates the cache (and the recorded measures, ``python -m bparallel record``);
    a change to a docstring or comment, or to a module elsewhere (the book layer, the
    ensembles of chapter 03, the CLI), keeps it.

    Read once per process, when the code that computes the metrics is the code loaded."""
    h = hashlib.sha256()
    for name, code in measured_code().items():
        h.update(name.encode() + b"\0" + code.encode() + b"\0")
    return h.hexdigest()


def metrics_key(model: Transformer, inputs: torch.Tensor, **options: Any) -> str:
    """Content key of :func:`sequence_metrics`: weights, config, inputs, options and code.

    Two calls with the same key compute the same arrays, so a cached result may stand in.
    """
    h = hashlib.sha256()
    head = {"format": _CACHE_FORMAT, "config": model.config.to_dict(), "options": options,
            "code": _package_fingerprint(), "numpy": np.__version__,
            "torch": str(torch.__version__)}
    h.update(json.dumps(head, sort_keys=True).encode())
    for name, value in sorted(model.state_dict().items()):
        t = value.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    x = inputs.detach().cpu().contiguous()
    h.update(f"inputs:{x.dtype}:{tuple(x.shape)}".encode())
    h.update(x.numpy().tobytes())
    return h.hexdigest()


#: The parts of :func:`~bparallel.transformer.measure.measure_model` that can be cached, alone
#: or together (one pass over the sequences per cached result): ``"sequence"`` (Tables
#: 1-6), ``"defined"`` (Section 4 as defined), ``"ablation"`` (knockouts, head importance,
#: pruning), ``"heads"`` (its light version for the graph tasks).
MEASURES = PARTS


def heads_measure(model: Transformer, inputs: torch.Tensor, *, task: str,
                  reference_sequences: int, horizon: int = 100,
                  impact: bool = True) -> HeadStudy:
    """The light head study of the graph-task chapter (:func:`measure_model`'s ``"heads"``
    part, a :class:`~bparallel.transformer.measure.HeadStudy`): knockouts and, with
    ``impact``, the per-sequence margin drop of removing each head alone by mean ablation
    with its split-half reliability, and each head's minimax fidelity in both modes.
    ``inputs`` ``(N, T)``: the sequences measured (the targets of ``task``), then
    ``reference_sequences`` more whose mean head outputs mean ablation uses."""
    return measure_model(model, inputs, parts="heads", task=task,
                         reference_sequences=reference_sequences, horizon=horizon,
                         impact=impact).heads


def _load(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a cached result (no pickles)."""
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def cached_metrics(
    parts: str | Sequence[str],
    model: Transformer,
    inputs: torch.Tensor,
    *,
    cache_dir: str | os.PathLike | None,
    **options: Any,
) -> ModelMeasures:
    """:func:`~bparallel.transformer.measure.measure_model` of ``parts`` (one of
    :data:`MEASURES` or several) on ``(model, inputs, **options)``, stored under
    ``cache_dir`` by :func:`metrics_key` (which hashes the parts too) as
    :meth:`~bparallel.transformer.measure.ModelMeasures.flat`'s arrays; a result computed
    and one read back are alike (both through
    :meth:`~bparallel.transformer.measure.ModelMeasures.from_flat`).

    The cache is content-addressed (weights, inputs, options and the package's source), so
    it never serves a stale result; a file that cannot be read is computed again and
    replaced. Written atomically, under a per-key file lock, so concurrent callers compute
    a key once. ``cache_dir=None`` computes without a cache.
    """
    parts = check_parts(parts)
    if cache_dir is None:
        return ModelMeasures.from_flat(measure_model(model, inputs, parts=parts,
                                                     **options).flat())
    key = metrics_key(model, inputs, measure=_cache_name(parts), **options)
    path = Path(cache_dir) / f"metrics-{key}.npz"
    # One computation per key: a second process (say chapter 09 run beside 08) waits for the
    # first and then reads its result.
    with file_lock(path.with_suffix(".lock")):
        if path.is_file():
            try:
                return ModelMeasures.from_flat(_load(path))
            except Exception as exc:  # a truncated or corrupted file: compute again
                warnings.warn(f"ignoring unreadable metrics cache {path}: {exc}", stacklevel=2)
        out = measure_model(model, inputs, parts=parts, **options).flat()
        atomic_write(path, lambda fh: np.savez(fh, **out))
        return ModelMeasures.from_flat(out)


def _cache_name(parts: tuple[str, ...]) -> str:
    """The parts as the cache key records them: ``"defined+heads"``."""
    return "+".join(parts)


def _read(path: Path) -> ModelMeasures | None:
    """A cached result, or ``None`` if absent or unreadable (then computed again)."""
    if not path.is_file():
        return None
    try:
        return ModelMeasures.from_flat(_load(path))
    except Exception:  # truncated or corrupted: cached_metrics warns and replaces it
        return None


def _one_thread() -> None:
    """Worker start-up: one torch thread per process (the processes share the cores), and
    Ctrl-C left to the parent (a notebook interrupts its kernel's whole process group)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    return_freed_memory()


# glibc's malloc keeps freed blocks below its mmap threshold for reuse, and the threshold
# grows with each large block freed: an ablation study, which allocates and frees tensors of
# tens of MB per mask (hundreds of masks), then holds 12 GB that it no longer uses, and two
# such workers exhaust a 24 GB machine. Blocks of 1 MB and more are mmap'ed instead, so
# freeing them returns them to the system (measured: 11.6 GB -> 0.5 GB at the peak).


def return_freed_memory() -> None:
    """Have glibc's malloc give large freed blocks back to the system: ``mallopt`` with an
    mmap threshold of 1 MB and a trim threshold of 0 (nothing where the C library is not
    glibc). Workers set it at start-up; an in-process computation of
    :func:`cached_metrics_many` first."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 0)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


#: Thread-count variables of the BLAS and OpenMP libraries numpy and torch may load: set to
#: 1 in the workers' environment, else each worker's matrix products would use every core.
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@functools.lru_cache(maxsize=1)
def _pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` processes, started now and kept for the life of the interpreter (a chapter
    calls several times), each with one thread for torch and for BLAS.

    Started with ``spawn`` (forking a process that holds torch's thread pools can deadlock),
    so a script that uses them needs the usual ``if __name__ == "__main__":`` guard."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_one_thread)
    saved = {v: os.environ.get(v) for v in _THREAD_VARS}
    os.environ.update(dict.fromkeys(_THREAD_VARS, "1"))  # inherited by the spawned workers
    try:
        for started in [pool.submit(int) for _ in range(workers)]:
            started.result()
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    atexit.register(pool.shutdown)
    return pool


def default_workers() -> int:
    """Worker processes of :func:`cached_metrics_many`: ``BPARALLEL_WORKERS`` if set, else
    the CPU cores available to this process."""
    env = os.environ.get("BPARALLEL_WORKERS")
    if env is not None:
        return positive_int(int(env) if env.strip().isdigit() else env, "BPARALLEL_WORKERS")
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


#: The :func:`tracked_files` blocks open in this process: (names, lookup only).
_TRACKED: list[tuple[set[str], bool]] = []


class NotCached(LookupError):
    """Raised by :func:`cached_metrics_many` inside ``tracked_files(lookup_only=True)`` when
    a result is neither cached nor recorded (``names``: their file names)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"{len(names)} result(s) not cached: {', '.join(names[:3])}"
                         + (", ..." if len(names) > 3 else ""))
        self.names = names


@contextlib.contextmanager
def tracked_files(*, lookup_only: bool = False) -> Iterator[set[str]]:
    """Within the block, the file names (``metrics-<key>.npz``) of every result that
    :func:`cached_metrics_many` looks up in this process are added to the set it yields:
    the results a computation needs (``python -m bparallel record`` keeps those and
    deletes the rest). With ``lookup_only``, a call that would compute a missing result
    raises :class:`NotCached` instead, after adding the names."""
    names: set[str] = set()
    entry = (names, lookup_only)
    _TRACKED.append(entry)
    try:
        yield names
    finally:
        _TRACKED.remove(entry)


def cached_metrics_many(
    parts: str | Sequence[str],
    jobs: Sequence[tuple[Transformer, torch.Tensor, Mapping[str, Any]]],
    *,
    cache_dir: str | os.PathLike | None,
    recorded: str | os.PathLike | None = None,
    workers: int | None = None,
    progress: bool = False,
    desc: str | None = None,
) -> list[ModelMeasures]:
    """:func:`cached_metrics` of every ``(model, inputs, options)`` of ``jobs``, in order.

    Cached results are read here, from ``cache_dir`` and then from ``recorded``, a folder
    of results recorded beside the shipped models (``models/recorded/``, written by
    ``python -m bparallel record``; read only, never written here). Both are keyed by
    content (:func:`metrics_key`: the weights, the sequences, the options and the source of
    the measuring code), so a recorded result stands in for exactly the computation it
    came from, and after any change to that code it is no longer found. The missing
    results are computed by ``workers`` processes (default :func:`default_workers`; 1
    computes here, in this process), each job through :func:`cached_metrics`, so the cache
    is filled as by serial calls. Jobs are handed out largest first (heads x sequences). A
    worker uses one torch thread: its attention patterns can differ from a many-threaded
    extraction's in the last float32 bit, far below the tolerances of the Section 4
    references.
    """
    parts = check_parts(parts)
    workers = default_workers() if workers is None else positive_int(workers, "workers")
    out: list[ModelMeasures | None] = [None] * len(jobs)
    folders = [Path(d) for d in (cache_dir, recorded) if d is not None]
    names = [f"metrics-{metrics_key(m, x, measure=_cache_name(parts), **o)}.npz"
             for m, x, o in jobs] if folders or _TRACKED else []
    for tracked, _ in _TRACKED:
        tracked.update(names)
    for i, name in enumerate(names if folders else ()):
        out[i] = next((r for f in folders if (r := _read(f / name)) is not None), None)
    todo = [i for i, r in enumerate(out) if r is None]
    if todo and any(lookup_only for _, lookup_only in _TRACKED):
        raise NotCached([names[i] for i in todo])
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), disable=not progress, desc=desc or _cache_name(parts),
               unit="model")
    if workers == 1 or len(todo) < 2:
        return_freed_memory()
        for i in todo:
            model, inputs, options = jobs[i]
            out[i] = cached_metrics(parts, model, inputs, cache_dir=cache_dir, **options)
            bar.update()
    else:
        size = {i: jobs[i][0].config.n_heads * len(jobs[i][1]) for i in todo}
        pool = _pool(workers)
        futures = {pool.submit(cached_metrics, parts, jobs[i][0], jobs[i][1],
                               cache_dir=cache_dir, **jobs[i][2]): i
                   for i in sorted(todo, key=lambda i: -size[i])}
        try:
            for future in as_completed(futures):
                out[futures[future]] = future.result()
                bar.update()
        except BaseException:  # an error or Ctrl-C: the jobs not started yet are dropped
            for future in futures:
                future.cancel()
            raise
    bar.close()
    return out  # type: ignore[return-value]


def cached_sequence_metrics(
    model: Transformer,
    inputs: torch.Tensor,
    *,
    cache_dir: str | os.PathLike | None,
    max_steps: int = 100,
    horizon: int = 100,
) -> dict[str, np.ndarray]:
    """:func:`sequence_metrics` through :func:`cached_metrics` (Tables 1-6): the graph
    measures of the ``"sequence"`` part."""
    return cached_metrics("sequence", model, inputs, cache_dir=cache_dir, max_steps=max_steps,
                          horizon=horizon).graphs
