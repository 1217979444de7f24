"""Which trained models the Section 4 chapters use, and how paper-profile models are shipped.

- :func:`book_models` gives the 8 models (heads 1/4/8/16 x copy/cycle) for a profile:
  ``"paper"`` loads this project's shipped weights from ``models/paper/`` (SHA-256 checked
  against the manifest) and never trains; ``"quick"`` loads the committed quick-profile
  models of ``models/quick/`` (:func:`fixed_quick`), or, asked to (``retrain=True``, chapter
  07, which regresses training itself) or where none are committed, trains the quick profile
  into ``runs/quick/`` (minutes; resumed, so a second call is instant; a file lock keeps two
  notebooks from training the same model at once); ``"auto"`` picks ``"paper"`` when the
  shipped models are all there, else ``"quick"``.
- **Why the quick models are committed.** Training rounds floats in the order of the CPU's
  kernels (AVX2 and AVX-512 add in other orders), and a few minutes of training carry a
  last-bit difference into the second decimal of a statistic over 50-100 sequences. A
  chapter that *measures* models at the quick profile therefore reads the same committed
  weights on every machine, so that its regression compares fixed inputs; chapter 07 still
  trains them, and its tolerances are those measured across CPU kernels
  (``reference/noise/``).
- :func:`ship_run` exports a finished paper run as weights-only files plus ``manifest.json``;
  :func:`ship` ships one finished run of either kind (what a ``sweep`` job does).

Seeds share one manifest: seed 42, the paper's, is shipped as ``copy-h04`` (file
``copy-h04.weights.pt``), any other seed as ``copy-h04-s43`` (:func:`~.design.model_name`);
:func:`shipped_seeds` lists what is shipped per configuration and ``load_shipped(seed=...)``
loads one seed's 8 models. Unfinished runs are snapshotted into ``partial/seed-<S>/``
(:meth:`~.runs.Run.partial_path`) so that a later session can resume them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .._checks import one_of
from .._io import file_lock
from .checkpoints import (
    CHECKPOINT_KINDS,
    LEGACY_ATTENTION_PATH,
    MANIFEST,
    WEIGHTS_FORMAT,
    EpochCheckpoint,
    RunCheckpoint,
    export_weights,
    load_checkpoint,
    load_weights,
    read_manifest,
    read_torch_file,
    updating_manifest,
)
from .data import PAPER_TASKS, TASKS
from .design import (
    DEFAULT_SEED,
    HEADS,
    FreshProfile,
    Profile,
    get_profile,
    model_name,
    run_name,
    seeded_name,
    weights_path,
)
from .model import Transformer
from .runs import Run
from .train import train

__all__ = ["ROOT", "MODELS_ENV", "MODELS_UNSET", "is_checkout", "find_models_root", "MODELS_ROOT",
           "SHIPPED_DIR", "RUNS_DIR", "models_help", "BOOK_PROFILES", "ModelSet",
           "shipped_manifest", "is_shipped", "shipped_seeds",
           "shipped_status", "shipped_complete", "load_shipped", "QUICK_THREADS", "train_quick",
           "resolve_profile", "fixed_quick", "book_models", "models_by_seed", "seed_overview",
           "ship_run", "ship", "load_model", "load_run_models"]

ROOT = Path(__file__).resolve().parents[2]  # the repository, in a checkout
#: The environment variable naming the models folder (``models/`` of a checkout: one folder
#: and one manifest per profile); ``python -m bparallel --models DIR`` sets it.
MODELS_ENV = "BPARALLEL_MODELS"
#: What :data:`MODELS_ROOT` is when no models folder was found: a path no folder has, so that
#: a missing model's error shows it and :func:`models_help` says how to name the folder.
MODELS_UNSET = Path(f"<{MODELS_ENV} not set>")


def is_checkout(root: str | os.PathLike = ROOT) -> bool:
    """Is ``root`` a checkout of the repository (``pyproject.toml`` and ``models/`` beside the
    package) rather than the ``site-packages`` of an installed wheel?"""
    return (Path(root) / "pyproject.toml").is_file() and (Path(root) / "models").is_dir()


def find_models_root(
    environ: Mapping[str, str] = os.environ, root: str | os.PathLike = ROOT
) -> Path | None:
    """The models folder: ``$BPARALLEL_MODELS`` when set (not empty), else ``models/`` of
    the checkout the package runs from, else ``None``: an installed package never looks
    for models in ``site-packages``."""
    if environ.get(MODELS_ENV):
        return Path(environ[MODELS_ENV]).expanduser().resolve()
    return Path(root) / "models" if is_checkout(root) else None


MODELS_ROOT = find_models_root() or MODELS_UNSET  # models/<profile>/
SHIPPED_DIR = MODELS_ROOT / "paper"
# Where the quick profile trains when no committed models serve: runs/ of the checkout, or
# of the working directory for an installed package (a plain comment: the API page would
# print the build machine's path).
RUNS_DIR = ROOT / "runs" if is_checkout() else Path("runs")


def models_help() -> str:
    """Where the models are read from, and how to name another folder (for errors)."""
    how = (f"set ${MODELS_ENV} to the models/ folder of a checkout of the repository, or "
           "run `python -m bparallel --models DIR ...`")
    if MODELS_ROOT == MODELS_UNSET:
        return (f"this installed bparallel is not a checkout and ${MODELS_ENV} is not set, "
                f"so it has no models folder: {how}")
    source = f"${MODELS_ENV}" if os.environ.get(MODELS_ENV) else "the checkout"
    return f"models are read from {MODELS_ROOT} ({source}); to read others, {how}"
BOOK_PROFILES = ("auto", "quick", "paper")


@dataclass
class ModelSet:
    """The models a chapter evaluates, and where they came from."""

    profile: str  # "quick" or "paper"
    models: dict[tuple[str, int], Any]
    metas: dict[tuple[str, int], dict[str, Any]]
    source: str

    @property
    def note(self) -> str:
        """A sentence for the page saying which models these are."""
        if self.profile == "paper":
            return (f"These results use this project's paper-profile models ({self.source}): "
                    "5,000 sequences, 200 epochs, as in Section 4.1.")
        return (f"QUICK PROFILE: these results use models trained for a few minutes "
                f"({self.source}), not the paper's 200 epochs. They show the pipeline, not "
                "the paper's numbers; the paper-profile models are not shipped yet.")


def shipped_manifest(shipped_dir: str | os.PathLike = SHIPPED_DIR) -> dict[str, Any] | None:
    """The manifest of shipped paper models, or ``None`` if there is none
    (:func:`~.checkpoints.read_manifest`)."""
    return read_manifest(shipped_dir)


def is_shipped(
    name: str, shipped_dir: str | os.PathLike = SHIPPED_DIR, *, seed: int | None = None
) -> bool:
    """Is the model ``name`` listed in the shipped manifest?

    ``name`` is a manifest key (``"copy-h04"``, ``"copy-h04-s43"``); with ``seed``, it is a
    run name (``"copy-h04"``) and that seed's entry is looked up (:func:`~.design.model_name`).
    """
    manifest = shipped_manifest(shipped_dir)
    if manifest is None:
        return False
    key = name if seed is None else seeded_name(name, seed)
    entry = manifest["models"].get(key)
    return entry is not None and (seed is None or entry.get("seed", DEFAULT_SEED) == seed)


def shipped_seeds(shipped_dir: str | os.PathLike = SHIPPED_DIR) -> dict[tuple[str, int], list[int]]:
    """The seeds shipped per configuration, e.g. ``{("copy", 4): [42, 43], ...}`` (sorted;
    configurations with nothing shipped are left out)."""
    seeds: dict[tuple[str, int], list[int]] = {}
    for entry in (shipped_manifest(shipped_dir) or {"models": {}})["models"].values():
        key = (entry["task"], int(entry["heads"]))
        seeds[key] = sorted({*seeds.get(key, []), int(entry.get("seed", DEFAULT_SEED))})
    return dict(sorted(seeds.items(), key=lambda kv: (TASKS.index(kv[0][0]), kv[0][1])))


def shipped_status(
    shipped_dir: str | os.PathLike = SHIPPED_DIR,
    profile: str | Profile = "paper",
    *,
    seed: int = DEFAULT_SEED,
    tasks: Sequence[str] = PAPER_TASKS,
) -> list[dict[str, Any]]:
    """One row per model of ``tasks`` x heads of ``seed`` (default: the paper's 8): shipped
    (with its manifest entry), in progress (epoch of the committed snapshot,
    :meth:`~.runs.Run.find_partial`) or not started."""
    p = get_profile(profile)
    shipped = (shipped_manifest(shipped_dir) or {"models": {}})["models"]
    rows = []
    for task in tasks:
        for heads in HEADS:
            name = run_name(task, heads)
            row: dict[str, Any] = {"model": name, "task": task, "heads": heads}
            entry = shipped.get(model_name(task, heads, seed=seed))
            partial = Run(task, heads, p, seed=seed).find_partial(shipped_dir)
            if entry is not None:
                row.update(status="shipped", epochs=entry["epochs"],
                           heldout_accuracy=entry["heldout_accuracy"],
                           attention_path=entry.get("attention_path", LEGACY_ATTENTION_PATH),
                           hardware=entry["hardware"])
            elif partial is not None:
                ck = load_checkpoint(partial, task=task, heads=heads, profile=p, seed=seed)
                row.update(status="training", epochs=ck.epoch,
                           heldout_accuracy=ck.history["heldout_accuracy"][-1],
                           attention_path=ck.attention_path,
                           hardware=ck.data["hardware"])
            else:
                row.update(status="not started", epochs=0)
            row["of_epochs"] = p.epochs
            rows.append(row)
    return rows


def shipped_complete(
    shipped_dir: str | os.PathLike = SHIPPED_DIR, *, seed: int = DEFAULT_SEED,
    tasks: Sequence[str] = PAPER_TASKS,
) -> bool:
    """Are all models of ``tasks`` x heads of ``seed`` (default: the 8 paper models) listed
    in the manifest (files not yet hash-checked)?"""
    manifest = shipped_manifest(shipped_dir)
    if manifest is None:
        return False
    return all(model_name(t, h, seed=seed) in manifest["models"] for t in tasks for h in HEADS)


def load_shipped(
    shipped_dir: str | os.PathLike = SHIPPED_DIR,
    seed: int = DEFAULT_SEED,
    *,
    tasks: Sequence[str] = PAPER_TASKS,
) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], dict[str, Any]]]:
    """Load the shipped models of ``tasks`` x heads of ``seed`` (default: the 8 paper models
    of seed 42, the paper's), each checked against its SHA-256 in the manifest."""
    shipped_dir = Path(shipped_dir)
    manifest = shipped_manifest(shipped_dir)
    if manifest is None:
        raise FileNotFoundError(
            f"no shipped models: {shipped_dir / MANIFEST} does not exist ({models_help()}; "
            "or train and ship them with `python -m bparallel sweep --profile paper`)"
        )
    models, metas = {}, {}
    for task in tasks:
        for heads in HEADS:
            name = model_name(task, heads, seed=seed)
            entry = manifest["models"].get(name)
            if entry is None:
                raise FileNotFoundError(f"{shipped_dir / MANIFEST} lists no model {name}")
            model, meta = load_weights(shipped_dir / entry["file"], sha256=entry["sha256"])
            if (meta.get("task"), meta.get("heads"), meta.get("seed")) != (task, heads, seed):
                raise ValueError(f"{entry['file']} holds {meta.get('task')}/{meta.get('heads')}"
                                 f" heads, seed {meta.get('seed')}, not {task}/{heads}, "
                                 f"seed {seed}")
            meta.setdefault("attention_path", LEGACY_ATTENTION_PATH)
            models[(task, heads)], metas[(task, heads)] = model, {**meta, **entry}
    return models, metas


#: Torch threads of the models the book trains for itself (the quick profile). A sum of
#: floats split over two threads is added in another order than on one, so the weights
#: would depend on the machine's core count (and on how many notebooks share it); one fixed
#: count makes the quick models, and the quick references, the same on every machine.
QUICK_THREADS = 1


def train_quick(
    tasks: Sequence[str], train_profile: str, folder: str | os.PathLike,
    threads: int | None = None,
) -> dict[tuple[str, int], EpochCheckpoint]:
    """Every ``(task, heads)`` of ``tasks`` x :data:`HEADS` trained to ``train_profile`` in
    ``folder`` (resuming or reusing its checkpoints), under the folder's lock so that two
    chapters built side by side train each model once; the final checkpoints. ``threads``:
    torch threads, default :data:`QUICK_THREADS` whatever ``$BPARALLEL_THREADS`` says
    (the seed then fixes the weights on every machine)."""
    folder = Path(folder)
    threads = QUICK_THREADS if threads is None else threads
    out = {}
    with file_lock(folder / ".lock"):
        for task in tasks:
            for heads in HEADS:
                res = train(Run(task, heads, train_profile), out_dir=folder, progress=False,
                            threads=threads)
                out[(task, heads)] = load_checkpoint(res.checkpoint, task=task, heads=heads,
                                                     profile=train_profile)
    return out


def _shown(folder: str | os.PathLike) -> str:
    """``folder`` as a page may show it: relative to the repository when it lies inside it
    (``models/paper/``), else its name alone (no machine path reaches a page)."""
    path = Path(folder).resolve()
    try:
        return f"{path.relative_to(ROOT)}/"
    except ValueError:
        return f"{path.name}/ (outside the repository)"


def resolve_profile(profile: str, shipped_dir: str | os.PathLike = SHIPPED_DIR, *,
                    complete: Callable[[], bool] | None = None) -> str:
    """One of :data:`BOOK_PROFILES` as the models it stands for: ``"auto"`` -> ``"paper"``
    when the shipped models are all there, else ``"quick"``. ``complete`` says whether they
    are (default: the 8 paper models in ``shipped_dir``, :func:`shipped_complete`; chapter 12
    asks for its graph-task models, :func:`bparallel.book.section4.models.resolve_profile`)."""
    one_of(profile, "profile", BOOK_PROFILES, "profiles")
    if profile != "auto":
        return profile
    done = shipped_complete(shipped_dir) if complete is None else complete()
    return "paper" if done else "quick"


def fixed_quick(
    train_profile: str, tasks: Sequence[str], fixed_dir: str | os.PathLike | None = None,
) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], dict[str, Any]]] | None:
    """The committed models of ``train_profile`` (``models/<train_profile>/``, or
    ``fixed_dir``) for ``tasks`` x :data:`HEADS`, seed 42, hash-checked, or ``None`` when
    the folder does not hold all of them (module docstring: why they are committed). A
    folder whose manifest names another profile is refused."""
    folder = MODELS_ROOT / train_profile if fixed_dir is None else Path(fixed_dir)
    manifest = shipped_manifest(folder)
    if manifest is None or not shipped_complete(folder, tasks=tasks):
        return None
    if manifest.get("profile") != train_profile:
        raise ValueError(f"{folder / MANIFEST} lists {manifest.get('profile')!r}-profile "
                         f"models, not {train_profile!r} ones")
    return load_shipped(folder, tasks=tasks)


def book_models(
    profile: str = "auto",
    *,
    runs_dir: str | os.PathLike = RUNS_DIR,
    shipped_dir: str | os.PathLike = SHIPPED_DIR,
    threads: int | None = None,
    train_profile: str = "quick",
    retrain: bool = False,
    fixed_dir: str | os.PathLike | None = None,
) -> ModelSet:
    """The 8 models of Section 4 for ``profile`` (see the module docstring).

    ``"paper"`` never trains: without shipped models it raises ``FileNotFoundError``.
    ``train_profile`` is what ``"quick"`` reads from ``models/<train_profile>/`` (or
    ``fixed_dir``: :func:`fixed_quick`) or, with ``retrain=True`` or where none are
    committed, trains (the tests use the hidden ``"tiny"``).
    """
    resolved = resolve_profile(profile, shipped_dir)
    if resolved == "paper":
        models, metas = load_shipped(shipped_dir)
        machines = sorted({m.get("hardware", "?") for m in metas.values()})
        return ModelSet("paper", models, metas,
                        f"shipped in {_shown(shipped_dir)}, trained on {'; '.join(machines)}")
    fixed = None if retrain else fixed_quick(train_profile, PAPER_TASKS, fixed_dir)
    if fixed is not None:
        folder = MODELS_ROOT / train_profile if fixed_dir is None else Path(fixed_dir)
        return ModelSet("quick", *fixed, f"committed in {_shown(folder)}: the same weights on "
                        "every machine")
    folder = Path(runs_dir) / train_profile
    models, metas = {}, {}
    for (task, heads), ck in train_quick(PAPER_TASKS, train_profile, folder, threads).items():
        models[(task, heads)] = ck.model().eval()
        metas[(task, heads)] = {"task": task, "heads": heads, "profile": train_profile,
                                "epoch": ck.epoch, "history": ck.history,
                                "seed": ck.data["seed"], "hardware": ck.data["hardware"],
                                "attention_path": ck.attention_path}
    return ModelSet("quick", models, metas, f"trained by this build into {folder.name}/")


def models_by_seed(
    bundle: ModelSet, shipped_dir: str | os.PathLike = SHIPPED_DIR
) -> dict[int, dict[tuple[str, int], Any]]:
    """Every seed a chapter can compare: for paper-profile models, each seed with all 8
    models shipped (hash-checked, :func:`load_shipped`), seed 42 taken from ``bundle``; for
    a quick-profile ``bundle``, its one seed."""
    seed_of = {int(m.get("seed", DEFAULT_SEED)) for m in bundle.metas.values()}
    if len(seed_of) != 1:
        raise ValueError(f"bundle mixes seeds {sorted(seed_of)}: expected one")
    own = seed_of.pop()
    out = {own: dict(bundle.models)}
    if bundle.profile != "paper":
        return out
    per_config = shipped_seeds(shipped_dir)
    complete = set.intersection(*(set(per_config.get((t, h), []))
                                  for t in PAPER_TASKS for h in HEADS))
    for seed in sorted(complete - {own}):
        out[seed] = load_shipped(shipped_dir, seed=seed)[0]
    return dict(sorted(out.items()))


def seed_overview(
    bundle: ModelSet, seeds: Sequence[int], shipped_dir: str | os.PathLike = SHIPPED_DIR
) -> list[dict[str, Any]]:
    """One row per seed: how many models, where they were trained (``hardware``, torch)
    and the lowest held-out token accuracy among them (manifest entries for shipped paper
    models, the bundle's own metadata otherwise)."""
    if bundle.profile == "paper":
        entries = (shipped_manifest(shipped_dir) or {"models": {}})["models"].values()
    else:
        entries = [{**m, "heldout_accuracy": m["history"]["heldout_accuracy"][-1],
                    "torch_version": str(torch.__version__)} for m in bundle.metas.values()]
    rows = []
    for seed in seeds:
        mine = [e for e in entries if int(e.get("seed", DEFAULT_SEED)) == seed]
        rows.append({
            "seed": seed, "models": len(mine),
            "trained on": "; ".join(sorted({e["hardware"] for e in mine})),
            "torch": ", ".join(sorted({e["torch_version"] for e in mine})),
            "lowest held-out accuracy": min(e["heldout_accuracy"] for e in mine),
        })
    return rows


def _ship_into(manifest: dict[str, Any], ck: RunCheckpoint, dest: Path, name: str | None,
               hardware: str | None, profile: Profile | FreshProfile) -> dict[str, Any]:
    """Export ``ck``'s weights into ``dest`` and enter them in ``manifest`` (in memory): the
    checkpoint kind's :meth:`~.checkpoints.RunCheckpoint.entry`, with file and SHA-256. The
    same bytes already shipped keep their entry where the kind reuses it (a finite-data
    run's held-out evaluation)."""
    name = ck.name(profile) if name is None else name
    file = f"{name}.weights.pt"
    sha = export_weights(ck, dest / file)
    known = manifest["models"].get(name)
    same = known if known and known.get("sha256") == sha and known.get("file") == file else None
    entry = ck.entry(reuse=same)
    if entry is not same:
        entry = {"file": file, "sha256": sha, **entry}
    if hardware:
        entry["hardware"] = hardware
    manifest["models"][name] = entry
    return entry


def ship_run(
    run_dir: str | os.PathLike,
    dest: str | os.PathLike = SHIPPED_DIR,
    *,
    hardware: str | None = None,
    profile: str | Profile = "paper",
) -> dict[str, Any]:
    """Export every finished checkpoint of a finite-data ``run_dir`` as weights + manifest.

    Only runs that reached the profile's epoch count are shipped, under the names of their
    seed (:func:`~.design.model_name`); the manifest records profile, seed, hardware, torch
    version, epochs, final training loss, held-out accuracy and the SHA-256 of each file.
    Written atomically under a lock (concurrent shippers take turns); returns the manifest.
    A model whose exported weights hash to its manifest entry keeps that entry (it is not
    re-evaluated).
    """
    run_dir, dest = Path(run_dir), Path(dest)
    p = get_profile(profile)
    with updating_manifest(dest, p.name) as manifest:
        for task in TASKS:
            for heads in HEADS:
                ckpt = Run(task, heads, p).checkpoint_path(run_dir)
                if not ckpt.is_file():
                    continue
                ck = load_checkpoint(ckpt, task=task, heads=heads, profile=p)
                if ck.finished(p):
                    _ship_into(manifest, ck, dest, None, hardware, p)
    return manifest


def ship(
    checkpoint: str | os.PathLike,
    dest: str | os.PathLike = SHIPPED_DIR,
    *,
    profile: str | Profile | FreshProfile = "paper",
    run: Run | None = None,
    name: str | None = None,
    hardware: str | None = None,
) -> dict[str, Any]:
    """Ship one finished run of either kind (any seed) into ``dest``: its weights file
    ``<name>.weights.pt`` and its entry in ``dest/manifest.json``, written under the
    manifest's lock (:func:`~.checkpoints.updating_manifest`); return the entry. ``run``
    (:class:`~.runs.Run`): the run the checkpoint must be (its profile then is the run's,
    its name the run's :attr:`~.runs.Run.shipped_name`); without it, ``profile``, and
    ``name`` defaults to the checkpoint's own run's shipped name. A run short of the
    profile's epochs, or short of its budget and not converged, is refused.
    """
    dest = Path(dest)
    if run is not None:
        p = run.recipe
        ck = load_checkpoint(checkpoint, **run.expect())
        name = run.shipped_name if name is None else name
    else:
        p = get_profile(profile)
        ck = load_checkpoint(checkpoint, profile=p)
    if not ck.finished(p):
        raise ValueError(f"checkpoint {checkpoint} is at {p.unit} {ck.position} of "
                         f"{ck.data.get('budget', getattr(p, 'epochs', None))}"
                         f"{' and has not converged' if p.unit == 'step' else ''}: only "
                         "finished runs are shipped")
    with updating_manifest(dest, p.name) as manifest:
        return _ship_into(manifest, ck, dest, name, hardware, p)


# --------------------------------------------------------------------------- loading any model file


def load_model(path: str | os.PathLike) -> tuple[Transformer, dict[str, Any]]:
    """A model and its metadata from a weights file or a training checkpoint of either kind
    (:func:`~.checkpoints.load_checkpoint`). The file's own ``format`` field decides which
    it is."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist")
    obj = read_torch_file(path, "model file")
    fmt = obj.get("format") if isinstance(obj, dict) else None
    if fmt == WEIGHTS_FORMAT:
        return load_weights(path)
    if fmt not in CHECKPOINT_KINDS:
        raise ValueError(f"model file {path} is neither a {WEIGHTS_FORMAT} nor a "
                         f"{' or '.join(CHECKPOINT_KINDS)} file (found {fmt!r})")
    ck = load_checkpoint(path)
    return ck.model(), ck.meta()


def load_run_models(
    run_dir: str | os.PathLike,
    *,
    tasks: Iterable[str] = TASKS,
    heads: Iterable[int] = HEADS,
) -> tuple[dict[tuple[str, int], Transformer], dict[tuple[str, int], dict[str, Any]]]:
    """Models of a run directory: ``<task>-hNN.weights.pt``, else the ``.ckpt.pt`` checkpoint.

    Returns ``(models, metas)`` keyed by ``(task, heads)``; a missing model is an error.
    """
    run_dir = Path(run_dir)
    models, metas = {}, {}
    for task in tasks:
        for h in heads:
            path = weights_path(run_dir, task, h)
            if not path.is_file():
                path = run_dir / f"{run_name(task, h)}.ckpt.pt"
            if not path.is_file():
                raise FileNotFoundError(
                    f"no weights or checkpoint for {run_name(task, h)} in {run_dir}"
                )
            model, meta = load_model(path)
            if meta.get("task") != task or meta.get("heads") != h:
                raise ValueError(f"{path} holds task={meta.get('task')!r}, "
                                 f"heads={meta.get('heads')!r}, not {task!r}, {h}")
            models[(task, h)], metas[(task, h)] = model, meta
    return models, metas
