"""Writing files so that a reader never sees half of one: atomic replaces, JSON and CSV;
and file locks, so that two writers never work on one file at once.

Shared by every layer (checkpoints, shipped weights, results files, caches, tables).
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(fh)`` on a temporary file beside ``path``, then ``os.replace`` it.

    A reader sees the old file or the new one, never a half-written one, even when the
    writer is killed; the temporary file is removed on failure.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def atomic_copy(src: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Copy ``src`` to ``dest`` atomically (see :func:`atomic_write`)."""
    with open(src, "rb") as fh:
        return atomic_write(dest, lambda out: shutil.copyfileobj(fh, out))


@contextlib.contextmanager
def file_lock(
    path: str | os.PathLike, *, wait: bool = True, tries: int = 5, pause_s: float = 0.2
) -> Iterator[bool]:
    """Hold an exclusive ``fcntl.flock`` on ``path`` (created if missing) inside the block.

    Yields ``True`` once held. With ``wait=False`` it tries ``tries`` times, ``pause_s``
    apart (a :func:`is_locked` probe holds a lock for an instant), then yields ``False``
    without holding it. The kernel releases the lock when its process dies, however it dies.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        held = False
        for attempt in range(1 if wait else tries):
            try:
                fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if attempt + 1 < tries:
                    time.sleep(pause_s)
        try:
            yield held
        finally:
            if held:
                fcntl.flock(fh, fcntl.LOCK_UN)


def is_locked(path: str | os.PathLike) -> bool:
    """Does some process hold a :func:`file_lock` on ``path`` now? (The probe holds a shared
    lock for an instant; a missing file is not locked.)"""
    path = Path(path)
    if not path.is_file():
        return False
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path:
    """Write tidy rows as CSV (columns in first-seen order), atomically."""
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return atomic_write_text(path, buf.getvalue())


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON (numpy scalars converted), atomically."""
    def default(x: Any) -> Any:
        if isinstance(x, (np.integer, np.floating)):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
        raise TypeError(f"cannot write {type(x).__name__} as JSON")

    return atomic_write_text(path, json.dumps(obj, indent=1, default=default) + "\n")


def flatten(tree: Any, prefix: str = "") -> dict[str, np.ndarray]:
    """Nested dicts as flat ``"a/b/c"`` keys of arrays (:func:`unflatten` undoes it)."""
    if isinstance(tree, dict):
        out: dict[str, np.ndarray] = {}
        for k, v in tree.items():
            if "/" in str(k):
                raise ValueError(f"key {k!r} contains '/': cannot be flattened")
            out.update(flatten(v, f"{prefix}/{k}" if prefix else str(k)))
        return out
    return {prefix: np.asarray(tree)}


def unflatten(flat: dict[str, np.ndarray]) -> dict[str, Any]:
    """Nested dicts back from ``"a/b/c"`` keys; 0-d arrays become Python numbers."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *path, last = key.split("/")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value.item() if np.ndim(value) == 0 else value
    return out
