"""Results files of the notebooks: flat dotted keys, numbers only, written atomically.

Every notebook ends by calling :func:`save_results`; the regression runner reads the files
back with :func:`load_results` and compares them with stored references.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np


def flatten(values: Mapping, prefix: str = "") -> dict[str, float]:
    """Flatten nested mappings into ``{"a.b.c": number}``; reject non-numbers and NaN."""
    out: dict[str, float] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key or "." in key and isinstance(value, Mapping):
            raise ValueError(f"results key {key!r}: must be a non-empty string")
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            out.update(flatten(value, name))
            continue
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"results key {name!r}: value {value!r} is not a number")
        value = float(value) if isinstance(value, (float, np.floating)) else int(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"results key {name!r}: value {value!r} is not finite")
        out[name] = value
    return out


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


def save_results(results_dir: str | os.PathLike, name: str, values: Mapping) -> Path:
    """Write ``<results_dir>/<name>.json`` with flat dotted keys (sorted), atomically."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"name {name!r}: must be a plain file stem")
    flat = flatten(values)
    text = json.dumps(dict(sorted(flat.items())), indent=1) + "\n"
    return atomic_write_text(Path(results_dir) / f"{name}.json", text)


def load_results(path: str | os.PathLike) -> dict[str, float]:
    """Read a results file written by :func:`save_results` (validated again)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"results file {path} does not exist")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"results file {path} is not valid JSON: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"results file {path} must hold a JSON object")
    return flatten(data)
