"""Which trained models the Section 4 chapters use, and how paper-profile models are shipped.

- :func:`book_models` gives the 8 models (heads 1/4/8/16 x copy/cycle) for a profile:
  ``"paper"`` loads this project's shipped weights from ``models/paper/`` (SHA-256 checked
  against the manifest) and never trains; ``"quick"`` trains the quick profile into
  ``runs/quick/`` (minutes; resumed, so a second call is instant; a file lock keeps two
  notebooks from training the same model at once); ``"auto"`` picks ``"paper"`` when the
  shipped models are all there, else ``"quick"``.
- :func:`ship_run` exports a finished paper run as weights-only files plus ``manifest.json``.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from ..transformer.data import TASKS
from ..transformer.train import (
    HEADS,
    LEGACY_ATTENTION_PATH,
    evaluate_accuracy,
    export_weights,
    get_profile,
    hardware_string,
    load_checkpoint,
    load_weights,
    run_name,
    train,
)

ROOT = Path(__file__).resolve().parents[2]  # the repository
SHIPPED_DIR = ROOT / "models" / "paper"
RUNS_DIR = ROOT / "runs"
MANIFEST = "manifest.json"
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
    """The manifest of shipped paper models, or ``None`` if there is none."""
    path = Path(shipped_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(manifest.get("models"), dict):
        raise ValueError(f"{path} has no 'models' table")
    return manifest


def is_shipped(name: str, shipped_dir: str | os.PathLike = SHIPPED_DIR) -> bool:
    """Is the model ``name`` (e.g. ``"copy-h04"``) listed in the shipped manifest?"""
    manifest = shipped_manifest(shipped_dir)
    return manifest is not None and name in manifest["models"]


def shipped_status(
    shipped_dir: str | os.PathLike = SHIPPED_DIR, profile: str = "paper"
) -> list[dict[str, Any]]:
    """One row per paper-profile model: shipped (with its manifest entry), in progress
    (epoch of the committed snapshot in ``partial/``) or not started. Reads no weights."""
    p = get_profile(profile)
    shipped = (shipped_manifest(shipped_dir) or {"models": {}})["models"]
    rows = []
    for task in TASKS:
        for heads in HEADS:
            name = run_name(task, heads)
            row: dict[str, Any] = {"model": name, "task": task, "heads": heads}
            entry = shipped.get(name)
            partial = Path(shipped_dir) / "partial" / f"{name}.ckpt.pt"
            if entry is not None:
                row.update(status="shipped", epochs=entry["epochs"],
                           heldout_accuracy=entry["heldout_accuracy"],
                           attention_path=entry.get("attention_path", LEGACY_ATTENTION_PATH),
                           hardware=entry["hardware"])
            elif partial.is_file():
                ck = load_checkpoint(partial, task=task, heads=heads, profile=p.name)
                row.update(status="training", epochs=ck.epoch,
                           heldout_accuracy=ck.history["heldout_accuracy"][-1],
                           attention_path=ck.attention_path,
                           hardware=ck.data["hardware"])
            else:
                row.update(status="not started", epochs=0)
            row["of_epochs"] = p.epochs
            rows.append(row)
    return rows


def shipped_complete(shipped_dir: str | os.PathLike = SHIPPED_DIR) -> bool:
    """Are all 8 paper models listed in the manifest (files not yet hash-checked)?"""
    manifest = shipped_manifest(shipped_dir)
    if manifest is None:
        return False
    return all(run_name(t, h) in manifest["models"] for t in TASKS for h in HEADS)


def load_shipped(
    shipped_dir: str | os.PathLike = SHIPPED_DIR,
) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], dict[str, Any]]]:
    """Load the shipped paper models, each checked against its SHA-256 in the manifest."""
    shipped_dir = Path(shipped_dir)
    manifest = shipped_manifest(shipped_dir)
    if manifest is None:
        raise FileNotFoundError(
            f"no shipped paper-profile models: {shipped_dir / MANIFEST} does not exist "
            "(train them with scripts/train_paper.sh, then ship them with ship_run)"
        )
    models, metas = {}, {}
    for task in TASKS:
        for heads in HEADS:
            name = run_name(task, heads)
            entry = manifest["models"].get(name)
            if entry is None:
                raise FileNotFoundError(f"{shipped_dir / MANIFEST} lists no model {name}")
            model, meta = load_weights(shipped_dir / entry["file"], sha256=entry["sha256"])
            if meta.get("task") != task or meta.get("heads") != heads:
                raise ValueError(f"{entry['file']} holds {meta.get('task')}/{meta.get('heads')}"
                                 f" heads, not {task}/{heads}")
            meta.setdefault("attention_path", LEGACY_ATTENTION_PATH)
            models[(task, heads)], metas[(task, heads)] = model, {**meta, **entry}
    return models, metas


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _shown(folder: str | os.PathLike) -> str:
    """``folder`` relative to the repository when it lies inside it (``models/paper/``)."""
    path = Path(folder).resolve()
    try:
        return f"{path.relative_to(ROOT)}/"
    except ValueError:
        return f"{path}/"


def resolve_profile(profile: str, shipped_dir: str | os.PathLike = SHIPPED_DIR) -> str:
    """``"auto"`` -> ``"paper"`` when all shipped models are present, else ``"quick"``."""
    if profile not in BOOK_PROFILES:
        raise ValueError(f"profile={profile!r}: valid profiles are {list(BOOK_PROFILES)}")
    if profile == "auto":
        return "paper" if shipped_complete(shipped_dir) else "quick"
    return profile


def book_models(
    profile: str = "auto",
    *,
    runs_dir: str | os.PathLike = RUNS_DIR,
    shipped_dir: str | os.PathLike = SHIPPED_DIR,
    threads: int | None = None,
    train_profile: str = "quick",
) -> ModelSet:
    """The 8 models of Section 4 for ``profile`` (see the module docstring).

    ``"paper"`` never trains: without shipped models it raises ``FileNotFoundError``.
    ``train_profile`` is what ``"quick"`` trains (the tests use the hidden ``"tiny"``).
    """
    resolved = resolve_profile(profile, shipped_dir)
    if resolved == "paper":
        models, metas = load_shipped(shipped_dir)
        machines = sorted({m.get("hardware", "?") for m in metas.values()})
        return ModelSet("paper", models, metas,
                        f"shipped in {_shown(shipped_dir)}, trained on {'; '.join(machines)}")
    folder = Path(runs_dir) / train_profile
    models, metas = {}, {}
    with _locked(folder):
        for task in TASKS:
            for heads in HEADS:
                res = train(task, heads, train_profile, out_dir=folder, progress=False,
                            threads=threads)
                ck = load_checkpoint(res.checkpoint, task=task, heads=heads,
                                     profile=train_profile)
                models[(task, heads)] = ck.model().eval()
                metas[(task, heads)] = {"task": task, "heads": heads, "profile": train_profile,
                                        "epoch": ck.epoch, "history": ck.history,
                                        "seed": ck.data["seed"], "hardware": ck.data["hardware"],
                                        "attention_path": ck.attention_path}
    return ModelSet("quick", models, metas, f"trained by this build into {folder.name}/")


def ship_run(
    run_dir: str | os.PathLike,
    dest: str | os.PathLike = SHIPPED_DIR,
    *,
    hardware: str | None = None,
    profile: str = "paper",
) -> dict[str, Any]:
    """Export every finished paper-profile checkpoint of ``run_dir`` as weights + manifest.

    Only runs that reached the paper's epoch count are shipped; the manifest records
    profile, seed, hardware, torch version, epochs, final training loss, held-out accuracy
    and the SHA-256 of each file. Written atomically; returns the manifest. A model whose
    exported weights hash to its manifest entry keeps that entry (it is not re-evaluated).
    """
    from ..transformer.data import heldout_dataset

    run_dir, dest = Path(run_dir), Path(dest)
    p = get_profile(profile)
    manifest = shipped_manifest(dest) or {"profile": p.name, "models": {}}
    for task in TASKS:
        for heads in HEADS:
            name = run_name(task, heads)
            ckpt = run_dir / f"{name}.ckpt.pt"
            if not ckpt.is_file():
                continue
            ck = load_checkpoint(ckpt, task=task, heads=heads, profile=p.name)
            if ck.epoch < p.epochs:
                continue
            file = f"{name}.weights.pt"
            sha = export_weights(ck, dest / file)
            known = manifest["models"].get(name)
            if known and known.get("sha256") == sha and known.get("file") == file:
                # Same bytes as already shipped: keep the recorded evaluation (2,000 sequences).
                if hardware:
                    known["hardware"] = hardware
                continue
            held = heldout_dataset(task, p.num_heldout, seed=ck.data["seed"],
                                   seq_len=p.seq_len, vocab_size=p.vocab_size)
            acc = evaluate_accuracy(ck.model(), held)
            manifest["models"][name] = {
                "file": file, "sha256": sha, "task": task, "heads": heads,
                "seed": ck.data["seed"], "epochs": ck.epoch,
                "final_train_loss": ck.history["train_loss"][-1],
                "heldout_accuracy": acc["accuracy"],
                "heldout_accuracy_predictable": acc["accuracy_predictable"],
                "torch_version": ck.data["torch_version"],
                "hardware": hardware or ck.data["hardware"],
                "attention_path": ck.attention_path,
            }
    manifest.pop("hardware", None)
    manifest["shipped_on"] = hardware_string()
    atomic_write_text(dest / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
