"""Writing files so that a reader never sees half of one: atomic replaces, JSON and CSV.

Shared by every layer (checkpoints, shipped weights, results files, caches, tables).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
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
