"""Results files of the notebooks: flat dotted keys, numbers only, written atomically.

Every notebook ends by calling :func:`save_results`; the regression runner reads the files
back with :func:`load_results` and compares them with stored references.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._io import atomic_write_text


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
