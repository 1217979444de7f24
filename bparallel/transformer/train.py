"""Training of Section 4.1 on a fixed training set: profiles, the training loop, its
checkpoints and their export.

Adam (lr 1e-3), batch 50, dropout 0.1, cross-entropy over every position, seed 42 (torch,
numpy and python ``random``). Named profiles live in :data:`PROFILES` only.

A checkpoint is written atomically after every epoch (model, optimiser, all RNG states,
the loader's state, histories, provenance); :func:`train` resumes from it and ends with
bitwise the same weights as an uninterrupted run. Checkpoints and shipped weights load with
``torch.load(..., weights_only=True)``. How these files are read and written, the RNG
states and the weights files are :mod:`bparallel.transformer.checkpoints`, shared with
training on fresh data.

This is training on a finite training set, in epochs (the paper's). Training on fresh data,
a new batch every step, to convergence or a budget in steps (issue #33), is
:mod:`bparallel.transformer.fresh`; it shares this module's names and helpers.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .._checks import nonnegative_int, one_of, positive_int
from .checkpoints import (
    RunCheckpoint,
    atomic_torch_save,
    on_cpu,
    rng_state,
    seed_everything,
    set_rng_state,
    write_weights,
)
from .data import (
    TASKS,
    SequenceDataset,
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
)
from .design import (
    DEFAULT_SEED,
    Profile,
    checkpoint_path,
    get_profile,
    model_config,
    run_name,
)
from .evaluation import evaluate_accuracy
from .model import ATTENTION_PATHS, Transformer
from .runtime import hardware_string, num_threads, resolve_device

CHECKPOINT_FORMAT = "bparallel-checkpoint-v1"
# --------------------------------------------------------------------------- checkpoints


class Checkpoint(RunCheckpoint):
    """A loaded training checkpoint (see :func:`load_checkpoint`)."""

    FORMAT = CHECKPOINT_FORMAT
    KEYS = ("task", "heads", "seed", "profile", "profile_config", "model_config", "epoch",
            "model", "optimizer", "rng", "loader", "history", "torch_version", "hardware")

    @property
    def epoch(self) -> int:
        return int(self.data["epoch"])

    @classmethod
    def _profile(cls, profile: str | Profile) -> tuple[str, dict[str, Any], dict[str, Any]]:
        p = get_profile(profile)
        # a field added to Profile after a checkpoint was written has its default there
        return p.name, p.settings(), Profile("", 1, 1, 1).settings()


def load_checkpoint(
    path: str | os.PathLike,
    *,
    task: str | None = None,
    heads: int | None = None,
    profile: str | Profile | None = None,
    seed: int | None = None,
) -> Checkpoint:
    """Read and check a checkpoint; refuse one of another task, head count, profile, seed.

    Raises ``FileNotFoundError`` when missing and ``ValueError`` naming the problem when the
    file is corrupted, incomplete or does not match the requested run.
    """
    expect = {k: v for k, v in (("task", task), ("heads", heads), ("seed", seed))
              if v is not None}
    ck = Checkpoint.read(path, expect=expect, profile=profile)
    if heads is not None and ck.data["model_config"].get("n_heads") != heads:
        raise ValueError(
            f"checkpoint {path} holds a model with {ck.data['model_config'].get('n_heads')} heads"
        )
    return ck


# --------------------------------------------------------------------------- training


@dataclass
class TrainResult:
    """What :func:`train` returns: the model (eval mode), its history and where it lives."""

    model: Transformer
    task: str
    heads: int
    seed: int
    profile: Profile
    epoch: int
    history: dict[str, list[float]] = field(default_factory=dict)
    checkpoint: Path | None = None
    resumed_from: int = 0


def ignore_unpredictable(dataset: SequenceDataset) -> SequenceDataset:
    """``dataset`` with the targets of unpredictable positions set to ``-100``,
    :func:`torch.nn.functional.cross_entropy`'s ``ignore_index``: the training loss then
    averages over the predictable positions only (``Profile.loss_positions``)."""
    targets = torch.where(dataset.mask, dataset.targets, torch.full_like(dataset.targets, -100))
    return SequenceDataset(dataset.task, dataset.inputs, targets, dataset.mask)


def _new_history() -> dict[str, list[float]]:
    keys = ("epoch", "train_loss", "heldout_loss", "heldout_accuracy",
            "heldout_accuracy_predictable", "heldout_loss_predictable", "seconds")
    return {k: [] for k in keys}


def train(
    task: str,
    heads: int,
    profile: str | Profile = "quick",
    *,
    out_dir: str | os.PathLike | None = None,
    seed: int = DEFAULT_SEED,
    epochs: int | None = None,
    stop_after: int | None = None,
    threads: int | None = None,
    progress: bool = True,
    resume: bool = True,
    attention_path: str | None = None,
    device: str | torch.device = "cpu",
) -> TrainResult:
    """Train one model of Section 4.1 (``task`` in copy/cycle, ``heads`` heads).

    ``epochs`` overrides the profile's epoch count. With ``out_dir``, a checkpoint is written
    atomically after every epoch and an existing one is resumed (``resume=True``), so an
    interrupted run ends bitwise where an uninterrupted one would. ``stop_after`` ends this
    call after that many epochs (to simulate an interruption). ``threads``: torch threads
    (default ``$BPARALLEL_THREADS`` or unchanged). ``attention_path`` (default ``"fused"``)
    picks the training attention kernel (:mod:`bparallel.transformer.model`); a resumed run
    keeps the path its checkpoint was trained with, and naming another one is refused.

    ``device``: ``"cpu"`` (default) or ``"cuda"``. On the CPU a seed fixes every result
    and a resumed run is bitwise the uninterrupted one. On CUDA the initial weights, data
    and batch order are the CPU run's (all drawn on the CPU), dropout masks come from the
    GPU's generator (saved in the checkpoint, so a resumed run continues the same masks),
    and the GPU's kernels round differently from the CPU's and need not be deterministic:
    a CUDA run is a faithful run of the same seed, not bitwise the CPU one. The checkpoint
    and the weights record the GPU in ``hardware``; they load on any machine.
    """
    p = get_profile(profile)
    dev = resolve_device(device)
    if attention_path is not None and attention_path not in ATTENTION_PATHS:
        raise ValueError(
            f"attention_path={attention_path!r}: valid paths are {list(ATTENTION_PATHS)}"
        )
    path = attention_path or "fused"
    one_of(task, "task", TASKS, "tasks")
    total = p.epochs if epochs is None else epochs
    positive_int(total, "epochs")
    if stop_after is not None:
        positive_int(stop_after, "stop_after")
    nonnegative_int(seed, "seed")
    cfg = model_config(p, heads)  # validates heads

    with num_threads(threads):
        seed_everything(seed)
        model = Transformer(cfg).to(dev)  # initialised on the CPU: the same weights anywhere
        opt = torch.optim.Adam(model.parameters(), lr=p.lr)
        train_set = make_dataset(task, p.num_train, seed=seed, seq_len=p.seq_len,
                                 vocab_size=p.vocab_size)
        if p.loss_positions == "predictable":
            train_set = ignore_unpredictable(train_set)
        heldout = heldout_dataset(task, p.num_heldout, seed=seed, seq_len=p.seq_len,
                                  vocab_size=p.vocab_size)
        loader = ShuffledLoader(train_set, p.batch_size, seed=seed)
        history = _new_history()
        start = 0
        ckpt_file = None if out_dir is None else checkpoint_path(out_dir, task, heads)
        if ckpt_file is not None and resume and ckpt_file.exists():
            ck = load_checkpoint(ckpt_file, task=task, heads=heads, profile=p, seed=seed)
            try:
                model.load_state_dict(ck.data["model"])
                opt.load_state_dict(ck.data["optimizer"])
            except (RuntimeError, ValueError, KeyError) as err:
                raise ValueError(f"checkpoint {ckpt_file}: state does not fit: {err}") from err
            trained_with = ck.attention_path
            if attention_path is not None and attention_path != trained_with:
                raise ValueError(
                    f"checkpoint {ckpt_file} was trained with attention_path={trained_with!r}; "
                    f"resuming with {attention_path!r} would not continue the same run (the "
                    "paths draw dropout masks differently): omit attention_path to keep it"
                )
            path = trained_with
            set_rng_state(ck.data["rng"], dev)
            loader.load_state_dict(ck.data["loader"])
            history = {k: list(v) for k, v in ck.history.items()}
            for key in _new_history():  # a key added after the checkpoint was written
                history.setdefault(key, [math.nan] * len(history["epoch"]))
            start = ck.epoch
            if start > total:
                raise ValueError(
                    f"checkpoint {ckpt_file} is at epoch {start}, beyond epochs={total}"
                )
        model.attention_path = path
        end = total if stop_after is None else min(total, start + stop_after)
        bar = tqdm(range(start, end), desc=run_name(task, heads), initial=start, total=total,
                   disable=not progress, unit="epoch")
        for epoch in bar:
            t0 = time.perf_counter()
            model.train()
            loss_sum, count = 0.0, 0
            for x, y in tqdm(loader.batches(epoch), total=len(loader), leave=False,
                             disable=not progress, desc=f"epoch {epoch + 1}"):
                x, y = x.to(dev), y.to(dev)  # (B, T) each
                logits = model(x)  # (B, T, V)
                loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                loss_sum += loss.item() * x.shape[0]
                count += x.shape[0]
            loader.epoch = epoch + 1
            ev = evaluate_accuracy(model, heldout)
            for key, value in (("epoch", epoch + 1), ("train_loss", loss_sum / count),
                               ("heldout_loss", ev["loss"]),
                               ("heldout_accuracy", ev["accuracy"]),
                               ("heldout_accuracy_predictable", ev["accuracy_predictable"]),
                               ("heldout_loss_predictable", ev["loss_predictable"]),
                               ("seconds", time.perf_counter() - t0)):
                history[key].append(value)
            bar.set_postfix(loss=f"{loss_sum / count:.3f}", acc=f"{ev['accuracy']:.3f}")
            if ckpt_file is not None:
                atomic_torch_save({
                    "format": CHECKPOINT_FORMAT, "task": task, "heads": heads, "seed": seed,
                    "profile": p.name, "profile_config": p.to_dict(),
                    "model_config": cfg.to_dict(), "epoch": epoch + 1, "attention_path": path,
                    "model": on_cpu(model.state_dict()),
                    "optimizer": on_cpu(opt.state_dict()),
                    "rng": rng_state(dev), "loader": loader.state_dict(), "history": history,
                    "torch_version": str(torch.__version__), "hardware": hardware_string(dev),
                }, ckpt_file)
        bar.close()
    model.eval()
    return TrainResult(model, task, heads, seed, p, end, history, ckpt_file, start)


# --------------------------------------------------------------------------- shipping


def export_weights(
    source: Checkpoint | TrainResult | str | os.PathLike, path: str | os.PathLike
) -> str:
    """Write final weights only (no optimiser or RNG state), atomically; return the SHA-256.

    ``source`` is a checkpoint file, a :class:`Checkpoint` or a :class:`TrainResult`.
    """
    if isinstance(source, (str, os.PathLike)):
        source = load_checkpoint(source)
    if isinstance(source, Checkpoint):
        d = source.data
        meta = {k: d[k] for k in ("task", "heads", "seed", "profile", "epoch", "torch_version",
                                  "hardware")}
        meta["attention_path"] = source.attention_path
        meta["history"] = d["history"]
        config, state = d["model_config"], d["model"]
    else:
        meta = {"task": source.task, "heads": source.heads, "seed": source.seed,
                "profile": source.profile.name, "epoch": source.epoch,
                "torch_version": str(torch.__version__),
                "hardware": hardware_string(next(source.model.parameters()).device),
                "attention_path": source.model.attention_path, "history": source.history}
        config, state = source.model.config.to_dict(), source.model.state_dict()
    return write_weights(path, config, state, meta)


def projected_hours(seconds_per_step: float, profile: str | Profile, models: int = 8) -> float:
    """Wall time of ``models`` runs of ``profile`` at ``seconds_per_step``, in hours."""
    p = get_profile(profile)
    steps = p.epochs * math.ceil(p.num_train / p.batch_size)
    return models * steps * seconds_per_step / 3600.0
