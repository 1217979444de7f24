"""The authors' checkpoints in the replication (chapters 08 and 09): the published Tables
1-6 beside the authors' own eight models, measured by this book's code in both modes, and
beside the book's retrained models, so that a page can say which differences come from the
code, which from the definitions and which from training.

- :func:`authors_tables` measures the authors' models (:mod:`bparallel.transformer.authors`,
  hash-checked) exactly as chapter 08 measures the book's (:func:`~.tables.evaluate_models`,
  through the metrics cache), or, where the checkpoints are absent, reads the values
  recorded from them with their provenance (:data:`RECORDED_FILE`, written by
  ``python -m bparallel record``, :func:`write_recorded`).
- :func:`reproduction` says how closely the published code on the authors' checkpoints
  reproduces the published Tables 1-4; :func:`numbers_verdict` turns it into the verdict on
  "the numbers".
- :func:`checkpoint_columns` and :func:`sources_of_difference` set the published numbers,
  the checkpoints in both modes and the retrained models (every shipped seed, their mean
  and spread) side by side, and split the differences into code, definitions and training.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..._io import atomic_write_text
from ...transformer import authors, metrics_cache
from ...transformer.authors import checkpoint_dir, load_authors_models
from ...transformer.shipped import MODELS_ROOT
from ..render.markdown import table as md_table
from ..render.markdown import tabs
from ..verdicts import Verdict, cell
from .published import (
    LAYERS,
    PUBLISHED_DECIMALS,
    PUBLISHED_TABLES,
    amplification_agreement,
    published_rows,
    verdict,
)
from .tables import evaluate_models, flat_results, table_rows

#: Where the checkpoint columns are recorded for a build without the checkpoints (beside the
#: recorded measures of the shipped models, ``python -m bparallel record``).
RECORDED_FILE = MODELS_ROOT / "recorded" / "authors-checkpoints.json"

#: How the authors' models are measured: chapter 08's settings (the published protocol's
#: sequences as the paper profile draws them with seed 42, Algorithm 1's cutoff and
#: Algorithm 2's horizon).
SETTINGS: dict[str, Any] = {"profile": "paper", "protocols": ["paper"],
                            "seed": 42, "max_steps": 100, "horizon": 100}

#: The published protocol's sequences per cell: each published mean is over this many.
SEQUENCES = 50

#: A published cell counts as reproduced when the authors' checkpoints, through the
#: published code, come within this many standard errors of it: the published sequences are
#: the authors' training sequences, which this book cannot regenerate, so both means are
#: over 50 sequences of the same distribution, and their difference has the standard error
#: sqrt(s_pub^2/50 + s_ours^2/50). 4 standard errors: a two-sided normal tail of 6e-5 per
#: cell, 0.004 over the 64 cells of Tables 1-4, so a reproduction almost never fails by
#: chance, while a gap of one published standard deviation (5 standard errors where the two
#: spreads are alike) is caught.
Z_TOLERANCE = 4.0

#: Where both standard deviations are 0 (a fidelity of 0.00 on every sequence), a cell
#: counts as reproduced when it reads the published value at the published precision.
DECIMALS = {1: 4, 2: 4, 3: 2, 4: 2}


# --------------------------------------------------------------------------- the values


@dataclass(frozen=True)
class AuthorsTables:
    """Tables 1-6 of the authors' checkpoints (:func:`~.tables.evaluate_models`' result),
    where they came from (``source``: ``"checkpoints"``, measured in this build, or
    ``"recorded"``, read from :data:`RECORDED_FILE`) and their provenance."""

    tables: dict[str, list[dict[str, Any]]]
    source: str
    provenance: dict[str, Any]

    @property
    def note(self) -> str:
        """A sentence for the page: which values these are."""
        # a commit's 40 hex digits would not wrap on a phone: its first 12 name it
        source = re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", self.provenance["source"])
        origin = (f"the authors' eight published models ({source}), each "
                  "checked against its published SHA-256")
        if self.source == "checkpoints":
            return (f"The checkpoint columns are measured in this build from {origin}, by "
                    "this book's code, as it measures its own models.")
        return (f"The authors' checkpoints are not available to this build, so the "
                f"checkpoint columns are the values recorded from {origin} by "
                f"`python -m bparallel record` (torch {self.provenance['torch']}, numpy "
                f"{self.provenance['numpy']}); a build given the checkpoints measures them "
                "again.")


def _provenance() -> dict[str, Any]:


    per_module = {name: hashlib.sha256(code.encode()).hexdigest()
                  for name, code in metrics_cache.measured_code().items()}
    code = hashlib.sha256(json.dumps(per_module, sort_keys=True).encode()).hexdigest()
    return {"source": authors.SOURCE, "sha256": dict(sorted(authors.SHA256.items())),
            "settings": SETTINGS, "measured_code": code, "torch": torch.__version__,
            "numpy": np.__version__, "recorded_by": "python -m bparallel record"}


def evaluate_authors(directory: str | os.PathLike | None = None, *,
                     cache_dir: str | os.PathLike | None = None,
                     workers: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """Tables 1-6 of the authors' eight models (:func:`~bparallel.transformer.authors.
    load_authors_models`: ``directory``, else the environment variable, else the default
    beside the repository; each file hash-checked) with chapter 08's :data:`SETTINGS`, both
    modes, both evaluation sets and the one fresh sequence, through the metrics cache
    ``cache_dir``."""
    models = load_authors_models(directory)
    return evaluate_models(models, profile=SETTINGS["profile"],
                           protocols=tuple(SETTINGS["protocols"]), seed=SETTINGS["seed"],
                           max_steps=SETTINGS["max_steps"], horizon=SETTINGS["horizon"],
                           cache_dir=cache_dir, workers=workers)


def write_recorded(tables: Mapping[str, Sequence[Mapping[str, Any]]],
                   path: str | os.PathLike = RECORDED_FILE) -> Path:
    """Record ``tables`` (:func:`evaluate_authors`' result) with their provenance (the
    checkpoints' source and SHA-256, the settings, the measuring code's hash, the torch and
    numpy versions) as JSON at ``path``, atomically."""
    for key in ("tables_1_4", "tables_5_6"):
        table_rows(tables, key)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"provenance": _provenance(), "tables_1_4": list(tables["tables_1_4"]),
            "tables_5_6": list(tables["tables_5_6"])}
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def read_recorded(path: str | os.PathLike = RECORDED_FILE) -> AuthorsTables:
    """The values :func:`write_recorded` recorded at ``path``; a ``FileNotFoundError`` when
    there are none, a ``ValueError`` when the file is not such a record."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no recorded checkpoint columns at {path}: run `python -m "
                                "bparallel record` where the authors' checkpoints are")
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not {"provenance", "tables_1_4", "tables_5_6"} <= set(data):
        raise ValueError(f"{path} is not a record of the authors' checkpoint columns")
    return AuthorsTables({"tables_1_4": data["tables_1_4"], "tables_5_6": data["tables_5_6"]},
                         "recorded", data["provenance"])


def recorded_is_current(path: str | os.PathLike = RECORDED_FILE) -> bool:
    """Whether the record at ``path`` was made by the measuring code of now (its hash in the
    provenance); ``False`` when there is no record."""
    try:
        then = read_recorded(path).provenance.get("measured_code")
    except FileNotFoundError:
        return False
    return then == _provenance()["measured_code"]


def authors_tables(directory: str | os.PathLike | None = None, *,
                   cache_dir: str | os.PathLike | None = None,
                   recorded_file: str | os.PathLike = RECORDED_FILE,
                   workers: int | None = None) -> AuthorsTables:
    """The checkpoint columns of chapters 08 and 09: measured from the authors' checkpoints
    (:func:`evaluate_authors`) where :func:`~bparallel.transformer.authors.checkpoint_dir`
    finds them (``directory``, the environment variable, the default), else read from the
    record at ``recorded_file`` (:func:`read_recorded`)."""
    folder = checkpoint_dir(directory)
    if folder is None:
        return read_recorded(recorded_file)
    return AuthorsTables(evaluate_authors(folder, cache_dir=cache_dir, workers=workers),
                         "checkpoints", _provenance())


# --------------------------------------------------------------------------- the comparisons


def _cells(rows: Sequence[Mapping[str, Any]], *, protocol: str, mode: str
           ) -> dict[tuple[int, int, int], float]:
    """``{(table, heads, layer): mean}`` of Tables 1-4 ``rows`` for one protocol and mode."""
    return {(r["table"], r["heads"], r["layer"]): r["mean"] for r in rows
            if r["protocol"] == protocol and r["mode"] == mode}


def _published() -> dict[tuple[int, int, int], Mapping[str, Any]]:
    return {(r["table"], r["heads"], r["layer"]): r for r in published_rows()
            if r["table"] <= 4}


def _rows_by_cell(rows: Sequence[Mapping[str, Any]], *, protocol: str, mode: str
                  ) -> dict[tuple[int, int, int], Mapping[str, Any]]:
    return {(r["table"], r["heads"], r["layer"]): r for r in rows
            if r["protocol"] == protocol and r["mode"] == mode}


def cell_z(ours: Mapping[str, Any], published: Mapping[str, Any]) -> float:
    """The difference of a cell's mean from the published one in standard errors of the
    difference of two means over :data:`SEQUENCES` sequences each (``ours``' ``n``), 0
    where the two read the same at the published precision, infinite where they do not and
    both standard deviations are 0."""
    d = ours["mean"] - published["mean"]
    se = float(np.sqrt(published["std"] ** 2 / SEQUENCES + ours["std"] ** 2 / ours["n"]))
    same = round(ours["mean"], DECIMALS[published["table"]]) == round(
        published["mean"], DECIMALS[published["table"]])
    if same:
        return 0.0
    return abs(d) / se if se > 0 else float("inf")


def reproduction(rows: Sequence[Mapping[str, Any]], *, protocol: str = "paper",
                 mode: str = "paper") -> dict[str, float]:
    """How closely Tables 1-4 ``rows`` (the authors' checkpoints, published-code mode and
    protocol by default) reproduce the published ones, per quantity (``mixing``: Tables
    1-2, steps; ``fidelity``: Tables 3-4, points): the cells compared, the largest and the
    median absolute difference, the cells that read the published value at the published
    precision (four decimals, two), the largest difference in standard errors
    (:func:`cell_z`) and the cells within :data:`Z_TOLERANCE` of them."""
    ours, pub = _rows_by_cell(rows, protocol=protocol, mode=mode), _published()
    keys = sorted(k for k in pub if k in ours)
    if not keys:
        raise ValueError(f"rows have no Tables 1-4 cells for protocol={protocol!r}, "
                         f"mode={mode!r}")
    out: dict[str, float] = {}
    for name, numbers in (("mixing", (1, 2)), ("fidelity", (3, 4))):
        ks = [k for k in keys if k[0] in numbers]
        diff = np.array([abs(ours[k]["mean"] - pub[k]["mean"]) for k in ks])
        z = np.array([cell_z(ours[k], pub[k]) for k in ks])
        same = [round(ours[k]["mean"], DECIMALS[k[0]]) == round(pub[k]["mean"], DECIMALS[k[0]])
                for k in ks]
        out.update({f"{name}.cells": len(ks), f"{name}.max_abs_difference": float(diff.max()),
                    f"{name}.median_abs_difference": float(np.median(diff)),
                    f"{name}.same_at_published_decimals": int(sum(same)),
                    f"{name}.max_z": float(z.max()),
                    f"{name}.within": int((z <= Z_TOLERANCE).sum())})
    return out


def reproduces(rep: Mapping[str, float]) -> bool:
    """Whether :func:`reproduction` ``rep`` reproduces the published Tables 1-4: all 32
    cells of each pair of tables compared, each within :data:`Z_TOLERANCE` standard
    errors."""
    full = sum(len(PUBLISHED_TABLES[t]["mean"]) * LAYERS for t in (1, 2))
    return all(rep[f"{q}.cells"] == full and rep[f"{q}.within"] == full
               for q in ("mixing", "fidelity"))


#: The condition of "the numbers" when the checkpoints reproduce them.
NUMBERS_CONDITION = "with the published code on the authors' checkpoints"


def numbers_verdict(rep: Mapping[str, float]) -> tuple[Verdict, str]:
    """The verdict on "the paper's Tables 1-4 as published (the numbers)" and its condition,
    from what the published code does on the authors' checkpoints (:func:`reproduction`):
    *holds with conditions* (:data:`NUMBERS_CONDITION`; computed as the paper defines the
    quantities, the numbers are others, chapter 08's definition mode) where
    :func:`reproduces`; else *not supported*: the published code and checkpoints, the
    authors' own, do not give the published numbers. Retrained models are not evidence on
    this claim: how far they land is training variance, reported beside it."""
    if reproduces(rep):
        return Verdict.HOLDS_WITH_CONDITIONS, NUMBERS_CONDITION
    return Verdict.NOT_SUPPORTED, ""


def numbers_results(rep: Mapping[str, float]) -> dict[str, float]:
    """The results keys of the verdict: ``verdict.numbers`` (its index in
    :class:`~bparallel.book.verdicts.Verdict`, read by ``python -m bparallel findings``)."""
    verdict, _ = numbers_verdict(rep)
    return {"verdict.numbers": list(Verdict).index(verdict)}


def numbers_cell(rep: Mapping[str, float]) -> str:
    """The verdict cell of "the numbers" (:func:`~bparallel.book.verdicts.cell`)."""
    return cell(*numbers_verdict(rep))


def seed_spread(by_seed: Mapping[int, Sequence[Mapping[str, Any]]], *, protocol: str = "paper",
                mode: str = "paper") -> dict[tuple[int, int, int], tuple[float, float, int]]:
    """Per cell of Tables 1-4, the retrained models' mean over seeds, the standard
    deviation over seeds (``ddof=1``; 0 for one seed) and the number of seeds, from
    ``by_seed`` (seed -> Tables 1-4 rows, :func:`~.tables.evaluate_seeds`)."""
    if not by_seed:
        raise ValueError("by_seed is empty: give at least one seed's Tables 1-4 rows")
    per = [_cells(rows, protocol=protocol, mode=mode) for rows in by_seed.values()]
    keys = sorted(set.intersection(*(set(p) for p in per)))
    out = {}
    for k in keys:
        v = np.array([p[k] for p in per])
        out[k] = (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0, len(v))
    return out


def checkpoint_columns(authors_rows: Sequence[Mapping[str, Any]],
                       by_seed: Mapping[int, Sequence[Mapping[str, Any]]], table: int
                       ) -> list[dict[str, Any]]:
    """One of the paper's Tables 1-4 (``table``) as rows per head count and layer: the
    published mean, the authors' checkpoints through the published code (published-code
    mode) and through the definitions (definition mode), and the retrained models'
    published-code mean over seeds with its standard deviation over seeds
    (:func:`seed_spread`); all on the published protocol's sequences."""
    if table not in (1, 2, 3, 4):
        raise ValueError(f"table={table!r}: Tables 1-4 only")
    pub = _published()
    code = _cells(authors_rows, protocol="paper", mode="paper")
    defs = _cells(authors_rows, protocol="paper", mode="definition")
    spread = seed_spread(by_seed)
    n = {s for _, _, s in spread.values()}
    seeds = f"retrained, {min(n)} seed{'s' if min(n) > 1 else ''}"
    out = []
    for k in sorted(k for k in pub if k[0] == table):
        mean, sd, _ = spread.get(k, (None, None, 0))
        row = {"heads": k[1], "layer": k[2], "published": pub[k]["mean"],
               "checkpoints, published code": code.get(k),
               "checkpoints, definitions": defs.get(k), f"{seeds}, mean": mean}
        if min(n) > 1:  # one seed has no spread to show
            row[f"{seeds}, SD"] = sd
        out.append(row)
    return out


def sources_of_difference(authors_rows: Sequence[Mapping[str, Any]],
                          by_seed: Mapping[int, Sequence[Mapping[str, Any]]]
                          ) -> dict[str, dict[str, float]]:
    """Per quantity (``mixing_time``: Tables 1-2, steps; ``fidelity``: Tables 3-4, points),
    the three differences a reader can attribute, over the cells of the published protocol,
    each as its median and largest absolute value:

    - ``code``: the authors' checkpoints through the published code less the published
      number (what is left when the models are the same: the code, here the published
      sampling's noise);
    - ``definitions``: the checkpoints through the definitions less through the published
      code (the same models, the other mode);
    - ``training``: the retrained models' mean over seeds less the checkpoints, both
      through the published code (the same code, other training runs), also counted in
      cells more than two published standard deviations from the published mean
      (``training.beyond_2sd``, per seed mean over the seeds) and in cells where the
      checkpoint lies outside the retrained seeds' range (``training.outside_seeds``).
    """
    pub = _published()
    code = _cells(authors_rows, protocol="paper", mode="paper")
    defs = _cells(authors_rows, protocol="paper", mode="definition")
    spread = seed_spread(by_seed)
    per_seed = [_cells(rows, protocol="paper", mode="paper") for rows in by_seed.values()]
    out: dict[str, dict[str, float]] = {}
    for quantity, numbers in (("mixing_time", (1, 2)), ("fidelity", (3, 4))):
        keys = sorted(k for k in pub if k[0] in numbers and k in code and k in defs
                      and k in spread)
        if not keys:
            raise ValueError(f"no {quantity} cells in common: expected Tables 1-4 rows of "
                             "the published protocol in both modes")
        diffs = {"code": [code[k] - pub[k]["mean"] for k in keys],
                 "definitions": [defs[k] - code[k] for k in keys],
                 "training": [spread[k][0] - code[k] for k in keys]}
        q: dict[str, float] = {"cells": len(keys)}
        for name, d in diffs.items():
            a = np.abs(np.array(d))
            q[f"{name}.median"], q[f"{name}.max"] = float(np.median(a)), float(a.max())
        beyond = [np.mean([abs(p[k] - pub[k]["mean"]) > 2 * pub[k]["std"] for p in per_seed])
                  for k in keys]
        q["training.beyond_2sd"] = float(np.sum(beyond))
        q["training.outside_seeds"] = float(sum(
            not min(p[k] for p in per_seed) <= code[k] <= max(p[k] for p in per_seed)
            for k in keys))
        out[quantity] = q
    return out


def columns_markdown(authors_rows: Sequence[Mapping[str, Any]],
                     by_seed: Mapping[int, Sequence[Mapping[str, Any]]], *,
                     name_prefix: str = "tbl-checkpoints") -> str:
    """Tables 1-4 with the checkpoint columns (:func:`checkpoint_columns`), one numbered,
    captioned table per published table, in tabs, as MyST Markdown."""
    titles = {1: ("mixing time (steps), copy", ".4f"), 2: ("mixing time (steps), cycle", ".4f"),
              3: ("minimax fidelity (%), copy", ".2f"), 4: ("minimax fidelity (%), cycle", ".2f")}
    seeds = sorted(by_seed)
    items = {}
    for t, (title, fmt) in titles.items():
        rows = checkpoint_columns(authors_rows, by_seed, t)
        formats = {k: fmt for k in rows[0] if k not in ("heads", "layer")}
        caption = (f"Paper's Table {t}, {title}, on the published protocol's sequences: the "
                   "published mean, the authors' checkpoints through the published code "
                   "(published-code mode) and through the definitions (definition mode), and "
                   f"this book's retrained models (seeds {seeds[0]}-{seeds[-1]}, published-code "
                   "mode: mean and standard deviation over seeds)."
                   if len(seeds) > 1 else
                   f"Paper's Table {t}, {title}, on the published protocol's sequences: the "
                   "published mean, the authors' checkpoints through the published code "
                   "(published-code mode) and through the definitions (definition mode), and "
                   f"this book's retrained models (seed {seeds[0]}, published-code mode).")
        items[f"Table {t}"] = md_table(rows, caption=caption, name=f"{name_prefix}-table{t}",
                                       formats=formats)
    return tabs(items)


#: Number formats of :func:`sources_table`'s columns.
FORMATS = {"median |difference|": ".4f", "largest |difference|": ".3f"}


def sources_table(sources: Mapping[str, Mapping[str, float]]) -> list[dict[str, Any]]:
    """Rows of :func:`sources_of_difference` as shown: per quantity and source, the median
    and largest absolute difference."""
    what = {"code": "published code on the checkpoints − published",
            "definitions": "checkpoints: definitions − published code",
            "training": "retrained (mean over seeds) − checkpoints"}
    return [{"quantity": q.replace("_", " "), "difference": what[s],
             "median |difference|": v[f"{s}.median"], "largest |difference|": v[f"{s}.max"]}
            for q, v in sources.items() for s in what]


def flat_columns(tables: Mapping[str, Sequence[Mapping[str, Any]]], prefix: str = "authors"
                 ) -> dict[str, float]:
    """The checkpoint columns as results keys, ``<prefix>.`` before
    :func:`~.tables.flat_results`' keys."""
    return {f"{prefix}.{k}": v for k, v in flat_results(tables).items()}


__all__ = ["DECIMALS", "FORMATS", "SEQUENCES", "Z_TOLERANCE", "cell_z",
           "NUMBERS_CONDITION", "RECORDED_FILE", "SETTINGS", "AuthorsTables",
           "authors_tables", "checkpoint_columns", "columns_markdown", "evaluate_authors",
           "flat_columns", "numbers_cell", "numbers_results", "numbers_verdict",
           "reproduction_by_seed", "AMPLIFICATION_VARIANTS", "amplification_columns",
           "amplification_markdown", "amplification_results",
           "read_recorded", "recorded_is_current", "reproduces", "reproduction",
           "seed_spread", "sources_of_difference", "sources_table", "write_recorded"]


def reproduction_by_seed(by_seed: Mapping[int, Sequence[Mapping[str, Any]]]
                         ) -> dict[str, float]:
    """:func:`reproduction` of each retrained seed's Tables 1-4 (published-code mode and
    protocol), summarised over the seeds: per quantity the fewest and the most cells within
    :data:`Z_TOLERANCE` standard errors of the published mean (``<q>.within.min|max``), and
    the number of seeds."""
    if not by_seed:
        raise ValueError("by_seed is empty: give at least one seed's Tables 1-4 rows")
    reps = [reproduction(rows) for rows in by_seed.values()]
    out: dict[str, float] = {"seeds": len(reps)}
    for q in ("mixing", "fidelity"):
        within = [r[f"{q}.within"] for r in reps]
        out[f"{q}.within.min"], out[f"{q}.within.max"] = min(within), max(within)
    return out


# --------------------------------------------------------------------------- Tables 5-6

#: The checkpoint variants of Tables 5-6: (sample, protocol, mode) -> how a column names it.
AMPLIFICATION_VARIANTS: dict[tuple[str, str, str], str] = {
    ("fresh", "fresh", "paper"): "checkpoints, one fresh sequence, published code",
    ("mean", "paper", "paper"): "checkpoints, mean, published code",
    ("mean", "paper", "definition"): "checkpoints, mean, definitions",
}


def amplification_columns(authors_rows: Sequence[Mapping[str, Any]],
                          by_seed: Mapping[int, Sequence[Mapping[str, Any]]], table: int
                          ) -> list[dict[str, Any]]:
    """One of the paper's Tables 5-6 (``table``) as rows per head count and layer: the
    published "best head / combined" (minimax fidelity, %), the authors' checkpoints in
    each of :data:`AMPLIFICATION_VARIANTS` (``authors_rows``: Tables 5-6 rows of
    :func:`authors_tables`; the mean over the published protocol's sequences), and in how
    many of the retrained seeds the combination beats its best head (``by_seed``: seed ->
    Tables 5-6 rows of :func:`~.tables.evaluate_seeds`, the mean over each seed's published
    protocol, published-code mode), each marked ▲ (the combination wins), = (tie) or ▼ (it
    loses) at the published two decimals (:func:`~.published.verdict`)."""
    if table not in (5, 6):
        raise ValueError(f"table={table!r}: Tables 5-6 only")
    if not by_seed:
        raise ValueError("by_seed is empty: give at least one seed's Tables 5-6 rows")
    d = PUBLISHED_DECIMALS
    mark = {1: "▲", 0: "=", -1: "▼"}

    def text(r: Mapping[str, Any] | None) -> str | None:
        if r is None:
            return None
        return (f"{r['individual']:.{d}f} / {r['combined']:.{d}f} "
                f"{mark[verdict(r['combined'], r['individual'])]}")

    def index(rows, sample, protocol, mode):
        return {(r["heads"], r["layer"]): r for r in rows if r["table"] == table
                and r["sample"] == sample and r["protocol"] == protocol and r["mode"] == mode}

    pub = {(r["heads"], r["layer"]): r for r in published_rows() if r["table"] == table}
    ours = {v: index(authors_rows, *v) for v in AMPLIFICATION_VARIANTS}
    seeds = [index(rows, "mean", "paper", "paper") for rows in by_seed.values()]
    out = []
    for k in sorted(pub):
        row: dict[str, Any] = {"heads": k[0], "layer": k[1], "published": text(pub[k])}
        for v, name in AMPLIFICATION_VARIANTS.items():
            row[name] = text(ours[v].get(k))
        wins = [verdict(s[k]["combined"], s[k]["individual"]) > 0 for s in seeds if k in s]
        row["retrained: seeds where the combination wins"] = f"{sum(wins)} of {len(wins)}"
        out.append(row)
    return out


def amplification_markdown(authors_rows: Sequence[Mapping[str, Any]],
                           by_seed: Mapping[int, Sequence[Mapping[str, Any]]], *,
                           name_prefix: str = "tbl-checkpoints") -> str:
    """Tables 5-6 with the checkpoint columns (:func:`amplification_columns`), one numbered,
    captioned table per published table, in tabs, as MyST Markdown."""
    seeds = sorted(by_seed)
    items = {}
    for t, task in ((5, "copy"), (6, "cycle")):
        caption = (f"Paper's Table {t} ({task}): minimax fidelity (%) of the best single head / "
                   "the weighted combination per head count and layer, published, and from "
                   "the authors' checkpoints: on one fresh sequence in published-code mode (as "
                   "published, seeded here), and as the mean over the published protocol's "
                   "sequences in both modes; ▲ the combination beats the best head, = tie, ▼ it "
                   "loses (at the published two decimals). Last column: in how many of this "
                   f"book's retrained seeds ({seeds[0]}-{seeds[-1]}, protocol mean, "
                   "published-code mode) the combination wins.")
        items[f"Table {t}"] = md_table(amplification_columns(authors_rows, by_seed, t),
                                       caption=caption, name=f"{name_prefix}-table{t}")
    return tabs(items)


def amplification_results(authors_rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """How the authors' checkpoints' Tables 5-6 agree with the published ones, per variant of
    :data:`AMPLIFICATION_VARIANTS` (:func:`~.published.amplification_agreement`), under
    ``checkpoints.<sample>.<mode>.*``."""
    out = {}
    for sample, protocol, mode in AMPLIFICATION_VARIANTS:
        agree = amplification_agreement(authors_rows, sample=sample, protocol=protocol,
                                        mode=mode)
        out.update({f"checkpoints.{sample}.{mode}.{k}": v for k, v in agree.items()})
    return out
