"""``python -m bparallel record``: the costliest measures of the shipped models, recorded
beside them in ``models/recorded/``, so that a cold build of the book reads them instead of
computing them for minutes.

These studies take most of a cold build's time, and all depend only on shipped weights,
fixed sequences and the measuring code:

- chapter 08's Tables 1-6 of the 8 paper-profile models on both evaluation sets (the exact
  Algorithm 1-2 proxies of every sequence; chapter 09 reads the held-out ones), about 3
  minutes on 2 cores, and chapter 11's of every shipped seed on the published protocol;
- chapter 10's ablation studies of the 8 paper-profile models (knockouts, head impact,
  pair interactions, pruning curves; :func:`~bparallel.book.section4.as_defined_studies.
  ablation_studies`), about 5 minutes on 2 cores;
- chapter 12's causal tests of the fresh-data models (:func:`~bparallel.book.section4.
  graph_causal.measure_heads`) and the head studies of its finite-data models
  (:func:`~bparallel.book.section4.graph_tasks.head_study`), about 3 minutes, and its
  dropout check (:func:`~bparallel.book.section4.graph_learning.dropout_rows`: every fresh
  run scored with its dropout on), about 2.5 minutes on one core;
- chapter 13's knockouts of the induction circuit in every fresh-data induction model
  (:func:`~bparallel.book.section4.circuit_knockouts.knockout_rows`), about 5 minutes on
  one core.

Each result is the metrics cache's own file (:mod:`bparallel.transformer.metrics_cache`),
named by its content key: the weights, the sequences, the options, the numpy and torch
versions and the source of the measuring code. A chapter looks a result up there before it
computes it (its ``recorded_measures`` parameter; ``None`` computes everything from the
weights), so a recorded result stands in for exactly the computation it came from; after a
change to the measuring code its key changes, the chapter computes the result again (slower,
never stale), and the test suite's check (``--check``) fails until the results are recorded
again with this command, naming the modules whose code changed since (:data:`CODE_FILE`,
written beside the results, keeps the code they were computed with). Recording keeps the
results that are still current (nothing is computed twice) and deletes the rest. Results
are computed in worker processes of one thread each (``BPARALLEL_WORKERS``, default one per
core), as in a book build.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...transformer.shipped import MODELS_ROOT
from ..section4.measures import HORIZON, MAX_STEPS

#: Where the recorded results live.
RECORDED = MODELS_ROOT / "recorded"

#: The file beside them that says which code they were computed with
#: (:func:`measured_code`), so that ``--check`` can name what changed.
CODE_FILE = "code.json"


def measured_code() -> dict[str, str]:
    """Per module of the measuring code (:func:`~bparallel.transformer.metrics_cache.
    measured_code`: the measures, the cache and every module of the package they import),
    the SHA-256 of its code as the metrics cache reads it (docstrings and layout aside)."""
    import hashlib

    from ...transformer import metrics_cache

    return {name: hashlib.sha256(code.encode()).hexdigest()
            for name, code in metrics_cache.measured_code().items()}


def changed_code(folder: str | os.PathLike = RECORDED) -> list[str] | None:
    """The modules of the measuring code whose code differs from the one ``folder``'s results
    were recorded with (added and removed modules too), sorted; ``None`` when ``folder``
    does not say (no :data:`CODE_FILE`)."""
    import json

    path = Path(folder) / CODE_FILE
    if not path.is_file():
        return None
    then, now = json.loads(path.read_text()), measured_code()
    return sorted(f for f in then.keys() | now.keys() if then.get(f) != now.get(f))


def _chapter_08(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 08's Tables 1-6 of the 8 paper-profile models on both evaluation sets (chapter
    09 reads the held-out ones), with the chapter's settings."""
    from ...transformer.shipped import book_models
    from ..section4.tables import evaluate_bundle

    return evaluate_bundle(book_models("paper"), protocols=("paper", "heldout"),
                           max_steps=MAX_STEPS, horizon=HORIZON, cache_dir=cache_dir,
                           recorded=recorded)


def _chapter_11(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 11's Tables 1-6 of every shipped seed on the published protocol."""
    from ...transformer.shipped import SHIPPED_DIR, book_models
    from ..section4.tables import evaluate_seeds

    return evaluate_seeds(book_models("paper"), SHIPPED_DIR, max_steps=MAX_STEPS,
                          horizon=HORIZON, cache_dir=cache_dir, recorded=recorded)


def _chapter_11_heads(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 11's per-head fidelities of every shipped seed's multi-head models on the
    published protocol (Tables 5-6 sequence by sequence, both readings of the best head)."""
    from ...transformer.shipped import SHIPPED_DIR, book_models
    from ..section4.across_seeds_stats import sequence_amplification_data

    return sequence_amplification_data(book_models("paper"), SHIPPED_DIR, max_steps=MAX_STEPS,
                                       horizon=HORIZON, cache_dir=cache_dir, recorded=recorded)


def _chapter_10(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 10's ablation studies at the paper profile, with the chapter's settings."""
    from ...transformer.shipped import book_models
    from ..section4 import as_defined_studies as studies

    sizes = studies.SIZES["paper"]
    bundle = book_models("paper")
    return studies.ablation_studies(bundle, skip=sizes["measured"],
                                    num_sequences=sizes["ablation"],
                                   reference_sequences=sizes["reference"], horizon=HORIZON,
                                   cache_dir=cache_dir, recorded=recorded)


def _chapter_10_seeds(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 10's per-head studies of the other shipped seeds (43-46) at the paper profile,
    with the chapter's settings (its parameter ``other_seeds``), and the layer knockouts of
    their 1-head models (the per-layer tests; their Definition 2.7 measures are computed,
    seconds per model, as seed 42's are)."""
    from ...transformer.shipped import SHIPPED_DIR, book_models
    from ..section4 import as_defined_studies as studies

    sizes = studies.SIZES["paper"]
    return studies.seed_head_studies(book_models("paper"), SHIPPED_DIR, skip=sizes["measured"],
                                    num_sequences=sizes["ablation"],
                                    reference_sequences=sizes["reference"], horizon=HORIZON,
                                    cache_dir=cache_dir, recorded=recorded, single_head=True)


def _chapter_12(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 12's causal tests of every shipped fresh-data model, with the chapter's
    paper-profile settings."""
    from ..section4 import graph_causal, graph_tasks, models

    sizes = graph_tasks.defaults("paper")
    runs = models.fresh_runs()
    return graph_causal.measure_heads(models.load_models(runs),
                                      num_sequences=sizes["measured"],
                                      reference_sequences=sizes["reference"],
                                      cache_dir=cache_dir, recorded=recorded)


def _chapter_12_finite(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 12's head studies of the graph tasks' finite-data models and of the paper
    tasks' models beside them (knockouts only), with the chapter's paper-profile settings."""
    from ..section4 import graph_tasks, models

    sizes = graph_tasks.defaults("paper")
    study = dict(num_sequences=sizes["measured"], reference_sequences=sizes["reference"],
                 horizon=HORIZON, cache_dir=cache_dir, recorded=recorded)
    paper, _ = graph_tasks.paper_beside("paper")
    return (graph_tasks.head_study(models.graph_models("paper").models, **study),
            graph_tasks.head_study(paper, **study, impact=False))


def _chapter_12_dropout(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 12's dropout check: every shipped fresh-data run trained with dropout
    (:data:`~bparallel.book.section4.models.DROPOUT_CHECKED`) and every shipped run of the
    budget pilot, scored as evaluated and as the optimiser saw it, dropout on."""
    from ..section4 import graph_learning, models

    runs = models.fresh_runs(profiles=models.DROPOUT_CHECKED)
    budget = models.budget_pilot_shipped()
    return tuple(graph_learning.dropout_rows(r, models.load_models(r), cache_dir=cache_dir,
                                             recorded=recorded) for r in (runs, budget))


def _chapter_13(cache_dir: Path | None, recorded: Path | None) -> Any:
    """Chapter 13's causal check: the induction circuit's knockouts of every shipped induction
    model trained on fresh data, with the chapter's paper-profile settings."""
    from ...transformer.design import fresh_heldout
    from ..section4 import circuit_knockouts, models

    runs = models.fresh_runs(tasks=["induction"])
    heldout = fresh_heldout("induction", runs.profiles["induction"]["profile"])
    return circuit_knockouts.knockout_rows(runs.of("induction"), models.load_models(runs),
                                           heldout, "paper", cache_dir=cache_dir,
                                           recorded=recorded)


#: The checkpoint columns of chapters 08 and 09, recorded from the authors' checkpoints where
#: a build has them (:mod:`bparallel.book.section4.authors_columns`), for the builds that do not.
AUTHORS_FILE = "authors-checkpoints.json"


def record_authors(folder: str | os.PathLike = RECORDED) -> bool:
    """Measure the authors' checkpoints (hash-checked) and record the checkpoint columns in
    ``folder`` (:data:`AUTHORS_FILE`), where the checkpoints are found
    (:func:`~bparallel.transformer.authors.checkpoint_dir`); ``False``, recording nothing and
    keeping the record there is, where they are not."""
    from ...transformer.authors import checkpoint_dir
    from ..section4 import authors_columns as authors

    if checkpoint_dir() is None:
        return False
    authors.write_recorded(authors.evaluate_authors(), Path(folder) / AUTHORS_FILE)
    return True


#: The recorded studies: the chapter -> its call, ``(cache_dir, recorded)``.
STUDIES: dict[str, Callable[[Path | None, Path | None], Any]] = {
    "08_proxies": _chapter_08,
    "10_section4_as_defined": _chapter_10,
    "10_section4_as_defined (seeds 43-46)": _chapter_10_seeds,
    "11_across_seeds": _chapter_11,
    "11_across_seeds (per head)": _chapter_11_heads,
    "12_graph_tasks": _chapter_12,
    "12_graph_tasks (5,000 sequences)": _chapter_12_finite,
    "12d_graph_dropout (dropout check)": _chapter_12_dropout,
    "13_circuit": _chapter_13,
}


def needed(folder: str | os.PathLike = RECORDED) -> dict[str, tuple[set[str], bool]]:
    """Per study of :data:`STUDIES`, the file names of the results its chapter looks up in
    ``folder``, computing nothing (the content keys come from the weights and the
    sequences), and whether that list is complete: a study stops at its first call whose
    results are not all there, so the names of its later calls are not known then."""
    from ...transformer.metrics_cache import NotCached, tracked_files

    out = {}
    for name, study in STUDIES.items():
        with tracked_files(lookup_only=True) as names:
            try:
                study(None, Path(folder))
                complete = True
            except NotCached:
                complete = False
        out[name] = (set(names), complete)
    return out


def missing(folder: str | os.PathLike = RECORDED) -> dict[str, list[str]]:
    """Per study, the results its chapter needs that ``folder`` does not hold (of a study
    that stops early, those of its first incomplete call: at least one when any is)."""
    return {name: sorted(n for n in names if not (Path(folder) / n).is_file())
            for name, (names, _) in needed(folder).items()}


def stale(folder: str | os.PathLike = RECORDED) -> list[str] | None:
    """The files of ``folder`` that no chapter needs (results of older code or models);
    ``None`` while a result is missing (the needed ones are not all known then)."""
    found = needed(folder)
    if not all(complete for _, complete in found.values()):
        return None
    keep = set().union(*(names for names, _ in found.values())) | {CODE_FILE, AUTHORS_FILE}
    return sorted(p.name for p in Path(folder).glob("*") if p.name not in keep)


def record(folder: str | os.PathLike = RECORDED) -> dict[str, Any]:
    """Compute the results the chapters need that ``folder`` lacks (into ``folder``), then
    delete every other file there (stale results, lock files) and write which code they were
    computed with (:data:`CODE_FILE`); return the counts."""
    import json

    from ..._io import atomic_write_text
    from ...transformer.metrics_cache import tracked_files

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in folder.glob("metrics-*.npz")}
    with tracked_files() as keep:
        for study in STUDIES.values():
            study(folder, None)
    authors = record_authors(folder)
    removed = 0
    for p in folder.iterdir():
        if p.name not in keep | {CODE_FILE, AUTHORS_FILE}:
            p.unlink()
            removed += p.suffix == ".npz"
    atomic_write_text(folder / CODE_FILE, json.dumps(measured_code(), indent=1,
                                                     sort_keys=True) + "\n")
    return {"kept": len(keep & before), "computed": len(keep - before), "removed": removed,
            "authors": authors,
            "bytes": sum(p.stat().st_size for p in folder.glob("metrics-*.npz"))}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true",
                   help="compute nothing; fail if a chapter needs a result not recorded")


def run(args: argparse.Namespace) -> int:
    if args.check:
        gaps, old = missing(), stale()
        for name, files in gaps.items():
            print(f"{name}: {'all recorded' if not files else f'{len(files)} not recorded'}"
                  + (" (at least)" if files and old is None else ""))
        if old:
            print(f"{len(old)} stale file(s) no chapter needs")
        from ..section4.authors_columns import recorded_is_current

        authors_stale = not recorded_is_current(RECORDED / AUTHORS_FILE)
        if authors_stale:
            print(f"{AUTHORS_FILE}: the checkpoint columns are not recorded with the "
                  "measuring code of now (record them where the authors' checkpoints are)")
        if any(gaps.values()) or old or authors_stale:
            changed = changed_code()
            if changed:
                print(f"the measuring code changed since they were recorded: "
                      f"{', '.join(changed)} (a check or helper only the book needs belongs "
                      "in the book's modules, where it keys no result)")
            print("run `python -m bparallel record` to record them again")
            return 1
        return 0
    counts = record()
    print(f"recorded in {RECORDED.relative_to(MODELS_ROOT.parent)}/: {counts['kept']} kept, "
          f"{counts['computed']} computed, {counts['removed']} stale removed, "
          f"the authors' checkpoints {'measured' if counts['authors'] else 'not found'}, "
          f"{counts['bytes'] / 1e6:.1f} MB")
    return 0


__all__ = ["AUTHORS_FILE", "CODE_FILE", "RECORDED", "STUDIES", "add_arguments", "changed_code",
           "measured_code", "missing", "needed", "record", "record_authors", "run", "stale"]
