"""Chapter support for "Training the Section 4 models" (chapter 07): the rows of its tables
and the values it records, from the shipped models' manifests and checkpoints' histories.

Rows are plain dicts keyed by the column a reader sees; the chapter glues them
(:func:`bparallel.book.render.markdown.glue_table`) under captions in its prose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..transformer.data import PAPER_TASKS
from ..transformer.model import ModelConfig, Transformer
from ..transformer.shipped import shipped_status
from ..transformer.train import HEADS, PROFILES

#: Number formats of the chapter's tables, by column.
FORMATS = {"held-out accuracy": ".3f", "parameters": ",d", "training sequences": ",d",
           "held-out sequences": ",d", "final training loss": ".2e",
           "held-out accuracy (%)": ".2f", "predictable positions (%)": ".2f"}


def status_rows(models_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """Per paper-profile model of seed 42 (:func:`~bparallel.transformer.shipped.shipped_status`):
    its status (shipped, training, not started), epochs, held-out accuracy, the attention
    kernel that trained it and the machine."""
    return [{"model": r["model"], "status": r["status"],
             "epochs": f"{r['epochs']} of {r['of_epochs']}",
             "held-out accuracy": r.get("heldout_accuracy"),
             "attention path": r.get("attention_path"), "hardware": r.get("hardware")}
            for r in shipped_status(models_dir)]


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
    """The training profiles a reader can choose (:data:`~bparallel.transformer.train.PROFILES`,
    hidden ones left out)."""
    return [{"profile": p.name, "training sequences": p.num_train, "epochs": p.epochs,
             "held-out sequences": p.num_heldout, "what for": p.description}
            for p in PROFILES.values() if not p.hidden]


def run_rows(metas: Mapping[tuple[str, int], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per model shown: epochs trained, the attention kernel that trained it and the machine."""
    return [{"task": t, "heads": h, "epochs": m["epoch"], "attention path": m["attention_path"],
             "hardware": m.get("hardware")} for (t, h), m in sorted(metas.items())]


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
