"""Chapter support for "Training the Section 4 models" (chapter 07): the rows of its tables
and the values it records, from the shipped models' manifests and checkpoints' histories;
and the table of the machines and attention kernels that trained every shipped model, which
the reproducibility page shows (:func:`machine_rows`: hardware lives in one place).

Rows are plain dicts keyed by the column a reader sees; the pages glue them
(:func:`bparallel.book.render.markdown.glue_table`) under captions in their prose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...transformer.checkpoints import LEGACY_ATTENTION_PATH
from ...transformer.data import PAPER_TASKS
from ...transformer.design import HEADS, get_profile, model_config, profiles
from ...transformer.model import ModelConfig, Transformer
from ...transformer.shipped import MANIFEST, MODELS_ROOT, shipped_manifest, shipped_status
from ..words import fmt_sig

#: Number formats of the chapter's tables, by column.
FORMATS = {"held-out accuracy": ".3f", "parameters": ",d", "training sequences": ",d",
           "held-out sequences": ",d", "final training loss": lambda v: fmt_sig(v, 3),
           "held-out accuracy (%)": ".2f", "predictable positions (%)": ".2f"}


def status_rows(models_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """Per paper-profile model of seed 42 (:func:`~bparallel.transformer.shipped.shipped_status`):
    its status (shipped, training, not started), epochs and held-out accuracy. The kernel and
    the machine that trained it are in :func:`machine_rows`."""
    return [{"model": r["model"], "status": r["status"],
             "epochs": f"{r['epochs']} of {r['of_epochs']}",
             "held-out accuracy": r.get("heldout_accuracy")}
            for r in shipped_status(models_dir)]


def model_settings(profile: str = "paper") -> dict[str, int | float]:
    """The settings of the Section 4.1 model and of its training that the prose quotes, as
    the code uses them: ``model.*`` from :func:`~bparallel.transformer.design.model_config`
    (vocabulary, sequence length, width, layers, MLP width, dropout) and ``training.*`` from
    the profile (:data:`~bparallel.transformer.design.PROFILES`: sequences, epochs, batch
    size, learning rate)."""
    p = get_profile(profile)
    config = model_config(p, 1)
    return {"model.vocab_size": config.vocab_size, "model.seq_len": config.seq_len,
            "model.d_model": config.d_model, "model.n_layers": config.n_layers,
            "model.d_mlp": config.d_mlp, "model.dropout": config.dropout,
            "training.num_train": p.num_train, "training.epochs": p.epochs,
            "training.batch_size": p.batch_size, "training.lr": p.lr}


def parameter_rows() -> list[dict[str, Any]]:
    """Per head count: the head dimension and the parameter count of the Section 4.1 model
    (the width stays 64, so the count does not change)."""
    rows = []
    for h in HEADS:
        config = ModelConfig(n_heads=h)
        rows.append({"heads": h, "head dim": config.d_model // h,
                     "parameters": sum(p.numel() for p in Transformer(config).parameters())})
    return rows


def profile_rows() -> list[dict[str, Any]]:
    """The finite-data training profiles a reader can choose
    (:func:`~bparallel.transformer.design.profiles`, hidden ones left out; chapter 12 shows
    the fresh-data ones)."""
    return [{"profile": p.name, "training sequences": p.num_train, "epochs": p.epochs,
             "held-out sequences": p.num_heldout, "what for": p.description}
            for p in map(get_profile, profiles("epoch"))]


def machine_rows(models_root: str | os.PathLike = MODELS_ROOT) -> list[dict[str, Any]]:
    """Which machine and which attention kernel trained every shipped model: one row per
    model folder under ``models_root`` (``paper``, and the graph tasks' ``first``,
    ``induction``, ``majority``), seed, attention kernel (``attention_path``; entries older
    than the field were trained with ``sdpa``), machine (``hardware``: system, cores, torch
    threads, GPU) and torch version, with the models so trained (named without their seed
    suffix). Read from the manifests only; nothing is loaded."""
    groups: dict[tuple, list[str]] = {}
    folders = [p for p in Path(models_root).iterdir() if (p / MANIFEST).is_file()]
    for folder in folders:
        for name, entry in sorted(shipped_manifest(folder)["models"].items()):
            seed = int(entry["seed"])
            key = (folder.name, seed, entry.get("attention_path", LEGACY_ATTENTION_PATH),
                   entry["hardware"], entry.get("torch_version", "not recorded"))
            groups.setdefault(key, []).append(name.removesuffix(f"-s{seed}"))
    return [{"folder": f"models/{folder}", "seed": seed, "attention kernel": path,
             "machine": hardware, "torch": torch, "models": ", ".join(names)}
            for (folder, seed, path, hardware, torch), names in sorted(
                groups.items(), key=lambda kv: (kv[0][0] != "paper", kv[0]))]


def final_rows(metas: Mapping[tuple[str, int], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per paper task and head count: where training ends (the last epoch of the history):
    training loss and held-out token accuracy, over all positions and the predictable ones."""
    rows = []
    for task in PAPER_TASKS:
        for h in HEADS:
            hist = metas[(task, h)]["history"]
            rows.append({"task": task, "heads": h, "epochs": hist["epoch"][-1],
                         "final training loss": hist["train_loss"][-1],
                         "held-out accuracy (%)": 100 * hist["heldout_accuracy"][-1],
                         "predictable positions (%)":
                             100 * hist["heldout_accuracy_predictable"][-1]})
    return rows


def training_results(metas: Mapping[tuple[str, int], Mapping[str, Any]],
                     profile: str) -> dict[str, float]:
    """The values the chapter records: per model its last held-out accuracy and training
    loss (``<profile>.<task>.h<H>.*``), the lowest copy accuracy and the best cycle accuracy
    over all positions and over the predictable ones."""
    out: dict[str, float] = {}
    for (task, h), meta in sorted(metas.items()):
        out[f"{profile}.{task}.h{h}.heldout_accuracy"] = meta["history"]["heldout_accuracy"][-1]
        out[f"{profile}.{task}.h{h}.train_loss"] = meta["history"]["train_loss"][-1]
    final = final_rows(metas)
    copy_min = min(r["held-out accuracy (%)"] for r in final if r["task"] == "copy") / 100
    out[f"{profile}.copy.min_heldout_accuracy"] = copy_min
    out["copy.min_heldout_accuracy"] = copy_min
    cycle = [r for r in final if r["task"] == "cycle"]
    out["cycle.max_heldout_accuracy"] = max(r["held-out accuracy (%)"] for r in cycle) / 100
    out["cycle.max_heldout_accuracy_predictable"] = max(
        r["predictable positions (%)"] for r in cycle) / 100
    return out
