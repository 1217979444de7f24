"""Results files of the notebooks: flat dotted keys, numbers only, written atomically.
A function that records values under a name the caller chooses checks it with
:func:`key_name`.

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

from ..._io import atomic_write_text
from ..words import fmt_sig

__all__ = ["PROFILES", "key_name", "flatten", "save_results", "load_results", "ChapterResults"]

#: The profiles a chapter is built and its results recorded at: ``quick`` (CI and the book's
#: builds) and ``paper`` (the paper's sizes); each has its own regression references. A
#: theory chapter samples at the profile's sizes, a Section 4 chapter reads the models
#: trained at it.
PROFILES = ("quick", "paper")


def key_name(value: object, name: str) -> str:
    """``value`` as a part of a recorded value's dotted key (``"pilot"``,
    ``"budget.dropout"``): words of letters, digits and ``_`` joined by ``.``; else
    ``ValueError`` naming the argument ``name``. (Kept out of :mod:`bparallel._checks`: the
    metrics cache keys its results by that module's code, and a recorded key's name is the
    book's concern.)"""
    if not isinstance(value, str) or not all(w.isidentifier() for w in value.split(".")):
        raise ValueError(f"{name}={value!r}: must be words of letters, digits and _ "
                         "joined by '.'")
    return value


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


class ChapterResults:
    """A chapter's numbers: each one recorded for its results file and glued for its prose,
    under one flat dotted key, by one call.

    ``chapter = ChapterResults(results_dir, "02_mixing_time")``, then
    ``chapter("path.n_max.ratio", ratio)`` stores the number and glues it as a Python int or
    float, so the prose formats it with a glue format spec:
    ``{glue:text}`path.n_max.ratio:.2f```. ``chapter.save()`` writes
    ``<results_dir>/<name>.json`` (:func:`save_results`). Numbers only: a sentence is written
    in the prose, never glued from code.
    """

    def __init__(self, results_dir: str | os.PathLike, name: str, *, glue: bool = True) -> None:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"name={name!r}: must be a plain file stem")
        self.results_dir, self.name, self._glue = Path(results_dir), name, glue
        self.values: dict[str, int | float] = {}

    def __call__(self, key: str, value: object) -> int | float:
        """Record ``value`` under ``key`` (and glue it); returns the plain number."""
        number = flatten({key: value})[key]
        if key in self.values and self.values[key] != number:
            raise ValueError(f"results key {key!r} recorded twice with different values "
                             f"({self.values[key]!r}, then {number!r})")
        self.values[key] = number
        if self._glue:
            from myst_nb import glue  # the book's dependency, not the package's

            glue(key, number, display=False)
        return number

    def glue_sig(self, key: str, digits: int = 2) -> str:
        """Glue the number recorded under ``key`` once more, as a reader writes it:
        ``digits`` significant digits, never in ``e`` notation
        (:func:`~bparallel.book.words.fmt_sig`: ``"3.7 × 10⁻³"``), as Markdown under
        ``<key>.sig`` for the prose's ``{glue:md}`<key>.sig```; returns the text. A
        ``ValueError`` for a key with no number recorded yet."""
        if key not in self.values:
            raise ValueError(f"key={key!r}: no number recorded under it")
        text = fmt_sig(self.values[key], digits)
        if self._glue:
            from IPython.display import Markdown
            from myst_nb import glue

            glue(f"{key}.sig", Markdown(text), display=False)
        return text

    def update(self, values: Mapping, prefix: str = "") -> None:
        """Record (and glue) every number of a (nested) mapping, keys joined by dots."""
        for key, value in flatten(values, prefix).items():
            self(key, value)

    def show(self, values: Mapping, prefix: str = "") -> None:
        """Glue every number of a (nested) mapping for the prose, keys joined by dots,
        *without* recording it: for a page of a chapter that shows numbers another of the
        chapter's notebooks records (a chapter's appendix pages computed through the same
        functions), so that each number is in exactly one results file. A ``ValueError``
        for a key this page records too."""
        flat = flatten(values, prefix)
        both = sorted(set(flat) & set(self.values))
        if both:
            raise ValueError(f"keys {both[:5]} are recorded here: show only what another "
                             "notebook records")
        if self._glue:
            from myst_nb import glue

            for key, number in flat.items():
                glue(key, number, display=False)

    def save(self) -> Path:
        """Write the results file (flat dotted keys, sorted), atomically."""
        return save_results(self.results_dir, self.name, self.values)
