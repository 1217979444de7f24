"""Training on fresh data (issue #33): a new batch every step, a budget in steps, a stated
convergence rule, two arms that separate the number of heads from their size, and the
proxies followed through training. What a run is before it trains (its profile, arm, name
and data) is :mod:`bparallel.transformer.fresh_design`; here, how it trains, its
checkpoint, and how a finished run is shipped.

**Training.** The batch of step ``k`` is :func:`~.fresh_design.fresh_batch`'s, new
sequences from the stream ``(seed, "step", k)``, so a run resumed from a checkpoint
continues bitwise as if never interrupted. Every ``eval_every`` steps (and at step 0) the
model is evaluated on the fixed held-out set (:func:`~.fresh_design.fresh_heldout`).
Training stops when the convergence rule holds (held-out accuracy on the predictable
positions at or above the task's learning threshold, and within 0.5 points of its best for
``patience`` consecutive evaluations: :func:`~.learning.converged_at`) or at the budget. The
outcome is ``"converged"``, ``"budget reached"`` or ``"not learned"``
(:func:`~.learning.learning_summary`): a model that never reaches the threshold is *not
learned within B steps*, never a time.

**Proxies through training.** At the steps of :func:`~.learning.probe_steps` (0, 50, 100,
200, 400, ... and the last step) the model is measured on the probe set
(:func:`~.learning.training_probe`: accuracy, loss, and per layer Algorithms 1-2 in both
modes, Definition 2.7, rollout); the values go into the history, the weights of those
steps are not kept.

**Files.** The checkpoint (``bparallel-fresh-checkpoint-v1``, written atomically at every
evaluation and when a call ends) holds the step, model, optimiser, every RNG state, the
history and the machines it trained on (a run resumed on another machine, a GPU run
continued on the CPU say, keeps both with the steps of each:
:meth:`FreshCheckpoint.segments`); :func:`ship_fresh_checkpoint` exports a finished run's
weights and enters it in ``<models>/manifest.json`` with its configuration (head size
included), arm(s), budget, outcome, learning curve, probes and machines. A run of
``budget_factor`` times the budget (the 5x runs of non-learners) has its own files,
``<name>-x5``, and starts from the run of the plain budget when that checkpoint is there
(the same stream: the first ``B`` steps are that run, bitwise).
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
from .._io import atomic_copy
from .checkpoints import (
    RunCheckpoint,
    atomic_torch_save,
    on_cpu,
    rng_state,
    seed_everything,
    set_rng_state,
    updating_manifest,
    write_weights,
)
from .data import TASKS
from .design import DEFAULT_SEED, model_config
from .evaluation import evaluate_accuracy
from .fresh_design import (
    FreshProfile,
    arm_head_size,
    arms_of,
    fresh_batch,
    fresh_checkpoint_path,
    fresh_heldout,
    fresh_model_name,
    fresh_run_name,
    get_fresh_profile,
)
from .learning import (
    LEARNING_THRESHOLD,
    PROBE_LAYER_KEYS,
    PROBE_SCALAR_KEYS,
    learning_summary,
    probe_steps,
    training_probe,
)
from .model import ATTENTION_PATHS, Transformer
from .runtime import hardware_string, num_threads, resolve_device
from .train import ignore_unpredictable

FRESH_CHECKPOINT_FORMAT = "bparallel-fresh-checkpoint-v1"

# --------------------------------------------------------------------------- checkpoints

_ANY = object()


class FreshCheckpoint(RunCheckpoint):
    """A loaded fresh-data checkpoint (:func:`load_fresh_checkpoint`)."""

    FORMAT = FRESH_CHECKPOINT_FORMAT
    KEYS = ("task", "heads", "head_size", "seed", "profile", "profile_config", "model_config",
            "step", "budget", "model", "optimizer", "rng", "interval", "history",
            "torch_version", "hardware", "attention_path")

    @property
    def step(self) -> int:
        return int(self.data["step"])

    @property
    def budget(self) -> int:
        return int(self.data["budget"])

    @property
    def threshold(self) -> float:
        """The learning threshold the run was trained with."""
        stored = self.data["profile_config"]["threshold"]
        return LEARNING_THRESHOLD[self.data["task"]] if stored is None else float(stored)

    def summary(self) -> dict[str, Any]:
        """:func:`~.learning.learning_summary` of the run so far (its stored rule)."""
        pc, h = self.data["profile_config"], self.history
        return learning_summary(h["step"], h["heldout_accuracy_predictable"],
                                threshold=self.threshold, budget=self.budget,
                                patience=pc["patience"], tolerance=pc["tolerance"])

    def segments(self) -> list[dict[str, Any]]:
        """Which steps the run trained on which machine and torch: ``{"steps": [from, to],
        "hardware", "torch_version"}`` in order (one segment for a run that never moved)."""
        segs = self.data.get("segments") or [{"from_step": 0, "hardware": self.data["hardware"],
                                              "torch_version": self.data["torch_version"]}]
        ends = [s["from_step"] for s in segs[1:]] + [self.step]
        return [{"steps": [s["from_step"], end], "hardware": s["hardware"],
                 "torch_version": s["torch_version"]} for s, end in zip(segs, ends)]  # noqa: B905 (ends has one per segment)

    def meta(self) -> dict[str, Any]:
        """What a weights file records beside the weights (JSON data)."""
        d, cfg = self.data, self.config()
        return {**{k: d[k] for k in ("task", "heads", "seed", "profile", "step", "budget",
                                     "torch_version", "hardware", "attention_path")},
                "head_size": cfg.head_dim, "arms": arms_of(cfg), **self.summary(),
                "history": d["history"]}

    @classmethod
    def _profile(cls, profile: str | FreshProfile) -> tuple[str, dict[str, Any], dict[str, Any]]:
        p = get_fresh_profile(profile)
        return p.name, p.settings(), {}


def load_fresh_checkpoint(
    path: str | os.PathLike, *, task: str | None = None, heads: int | None = None,
    head_size: Any = _ANY, profile: str | FreshProfile | None = None, seed: int | None = None,
) -> FreshCheckpoint:
    """Read and check a fresh-data checkpoint; refuse one of another task, head count, head
    size (``None``: the default), profile or seed. ``FileNotFoundError`` when missing,
    ``ValueError`` naming the problem otherwise."""
    expect = {} if head_size is _ANY else {"head_size": head_size}
    expect |= {k: v for k, v in (("task", task), ("heads", heads), ("seed", seed))
               if v is not None}
    return FreshCheckpoint.read(path, expect=expect, profile=profile)


# --------------------------------------------------------------------------- training


@dataclass
class FreshResult:
    """What :func:`train_fresh` returns: the model (eval mode), its history, where it is."""

    model: Transformer
    task: str
    heads: int
    seed: int
    profile: FreshProfile
    step: int
    budget: int
    summary: dict[str, Any]
    history: dict[str, Any] = field(default_factory=dict)
    checkpoint: Path | None = None
    resumed_from: int = 0

    @property
    def outcome(self) -> str:
        return self.summary["outcome"]


_CURVE_KEYS = ("step", "train_loss", "heldout_loss", "heldout_accuracy",
               "heldout_accuracy_predictable", "heldout_loss_predictable", "seconds")


def _new_history() -> dict[str, Any]:
    history: dict[str, Any] = {k: [] for k in _CURVE_KEYS}
    history["probe"] = {k: [] for k in ("step", *PROBE_SCALAR_KEYS, *PROBE_LAYER_KEYS)}
    return history


def _segments(data: dict[str, Any] | None, start: int, hardware: str,
              torch_version: str) -> list[dict[str, Any]]:
    """Where a run has trained: one segment ``{"from_step", "hardware", "torch_version"}``
    per machine and torch, in order. A checkpoint written before segments were kept counts
    as one segment from step 0 on its recorded machine; a run resumed on another machine or
    torch (a CUDA run continued on the CPU, say) starts a new segment at ``start``, so that
    neither machine is credited with the other's steps."""
    if data is None:
        return [{"from_step": 0, "hardware": hardware, "torch_version": torch_version}]
    segments = [dict(s) for s in data.get("segments") or
                [{"from_step": 0, "hardware": data["hardware"],
                  "torch_version": data["torch_version"]}]]
    last = segments[-1]
    if (last["hardware"], last["torch_version"]) != (hardware, torch_version):
        segments.append({"from_step": start, "hardware": hardware,
                         "torch_version": torch_version})
    return segments


def _joined(segments: list[dict[str, Any]], key: str, sep: str) -> str:
    """The distinct values of ``key`` over ``segments``, in order of first use."""
    return sep.join(dict.fromkeys(s[key] for s in segments))


def _adopt(base: Path, target: Path, budget: int, **expect: Any) -> bool:
    """Start a run of a larger budget from the plain-budget run's checkpoint ``base`` (checked
    to be the same run: ``expect``, :func:`load_fresh_checkpoint`'s keywords)."""
    if target.exists() or not base.is_file():
        return False
    if load_fresh_checkpoint(base, **expect).step > budget:
        return False
    atomic_copy(base, target)
    return True


def train_fresh(
    task: str,
    heads: int,
    profile: str | FreshProfile = "fresh-quick",
    *,
    arm: str = "width",
    out_dir: str | os.PathLike | None = None,
    seed: int = DEFAULT_SEED,
    budget_factor: int = 1,
    stop_after: int | None = None,
    threads: int | None = None,
    progress: bool = True,
    resume: bool = True,
    attention_path: str | None = None,
    device: str | torch.device = "cpu",
) -> FreshResult:
    """Train one model on fresh data (module docstring) until it converges or reaches the
    budget, ``budget_factor`` times the profile's ``steps``.

    ``arm``: ``"width"``, ``"head16"`` or ``"inner256"`` (``fresh_design.ARMS``). With
    ``out_dir``, a checkpoint is written at every evaluation and when the call ends, and an
    existing one is resumed (``resume=True``): the run ends bitwise where an uninterrupted
    one would.
    ``stop_after`` ends this call after that many steps (to simulate an interruption).
    ``threads``, ``attention_path`` and ``device`` as for :func:`~.train.train` (on CUDA a
    run is faithful, not bitwise the CPU one).
    """
    p = get_fresh_profile(profile)
    dev = resolve_device(device)
    if attention_path is not None:
        one_of(attention_path, "attention_path", ATTENTION_PATHS, "paths")
    path = attention_path or "fused"
    one_of(task, "task", TASKS, "tasks")
    threshold = p.threshold_of(task)
    total = p.steps * positive_int(budget_factor, "budget_factor")
    if stop_after is not None:
        positive_int(stop_after, "stop_after")
    nonnegative_int(seed, "seed")
    head_size = arm_head_size(arm, positive_int(heads, "heads"))
    cfg = model_config(p, heads, head_size)
    schedule = set(probe_steps(total, p.probe_first))

    with num_threads(threads):
        seed_everything(seed)
        model = Transformer(cfg).to(dev)  # initialised on the CPU: the same weights anywhere
        opt = torch.optim.Adam(model.parameters(), lr=p.lr)
        heldout = fresh_heldout(task, p)
        probe_set = heldout.subset(slice(0, p.probe_sequences))
        history, interval, start = _new_history(), {"loss_sum": 0.0, "count": 0}, 0
        here = (hardware_string(dev), str(torch.__version__))
        segments = _segments(None, 0, *here)
        ckpt_file = None
        if out_dir is not None:
            ckpt_file = fresh_checkpoint_path(out_dir, task, heads, head_size, budget_factor)
            if budget_factor > 1 and resume:
                _adopt(fresh_checkpoint_path(out_dir, task, heads, head_size), ckpt_file,
                       total, task=task, heads=heads, head_size=head_size, profile=p,
                       seed=seed)
        if ckpt_file is not None and resume and ckpt_file.exists():
            ck = load_fresh_checkpoint(ckpt_file, task=task, heads=heads, head_size=head_size,
                                       profile=p, seed=seed)
            try:
                model.load_state_dict(ck.data["model"])
                opt.load_state_dict(ck.data["optimizer"])
            except (RuntimeError, ValueError, KeyError) as err:
                raise ValueError(f"checkpoint {ckpt_file}: state does not fit: {err}") from err
            if attention_path is not None and attention_path != ck.attention_path:
                raise ValueError(
                    f"checkpoint {ckpt_file} was trained with attention_path="
                    f"{ck.attention_path!r}; resuming with {attention_path!r} would not "
                    "continue the same run: omit attention_path to keep it")
            path = ck.attention_path
            set_rng_state(ck.data["rng"], dev)
            history, interval, start = ck.history, dict(ck.data["interval"]), ck.step
            segments = _segments(ck.data, start, *here)
            if start > total:
                raise ValueError(f"checkpoint {ckpt_file} is at step {start}, beyond the "
                                 f"budget {total}")
        model.attention_path = path

        def summary() -> dict[str, Any]:
            return learning_summary(history["step"], history["heldout_accuracy_predictable"],
                                    threshold=threshold, budget=total, patience=p.patience,
                                    tolerance=p.tolerance)

        def evaluate(step: int, seconds: float) -> None:
            ev = evaluate_accuracy(model, heldout)
            n = interval["count"]
            for key, value in (("step", step),
                               ("train_loss", interval["loss_sum"] / n if n else math.nan),
                               ("heldout_loss", ev["loss"]), ("heldout_accuracy", ev["accuracy"]),
                               ("heldout_accuracy_predictable", ev["accuracy_predictable"]),
                               ("heldout_loss_predictable", ev["loss_predictable"]),
                               ("seconds", seconds)):
                history[key].append(value)
            interval.update(loss_sum=0.0, count=0)

        def probe(step: int) -> None:
            if history["probe"]["step"][-1:] == [step]:
                return
            values = training_probe(model, probe_set)
            history["probe"]["step"].append(step)
            for key, value in values.items():
                history["probe"][key].append(value)

        saved_at = start if start else None

        def save(step: int) -> None:
            nonlocal saved_at
            if ckpt_file is None or saved_at == step:
                return
            saved_at = step
            atomic_torch_save({
                "format": FRESH_CHECKPOINT_FORMAT, "task": task, "heads": heads,
                "head_size": head_size, "seed": seed, "profile": p.name,
                "profile_config": p.to_dict(), "model_config": cfg.to_dict(), "step": step,
                "budget": total, "attention_path": path, "model": on_cpu(model.state_dict()),
                "optimizer": on_cpu(opt.state_dict()), "rng": rng_state(dev),
                "interval": dict(interval), "history": history, "segments": segments,
                "torch_version": _joined(segments, "torch_version", ", "),
                "hardware": _joined(segments, "hardware", "; "),
            }, ckpt_file)

        if not history["step"]:  # step 0: the untrained model
            evaluate(0, 0.0)
            probe(0)
        step = start
        done = summary()["outcome"] != "running"
        end = total if stop_after is None else min(total, start + stop_after)
        bar = tqdm(total=total, initial=start, desc=fresh_run_name(task, heads, head_size),
                   disable=not progress, unit="step")
        t0 = time.perf_counter()
        while step < end and not done:
            batch = fresh_batch(task, step, seed=seed, batch_size=p.batch_size,
                                seq_len=p.seq_len, vocab_size=p.vocab_size)
            if p.loss_positions == "predictable":
                batch = ignore_unpredictable(batch)
            model.train()
            x, y = batch.inputs.to(dev), batch.targets.to(dev)  # (B, T) each
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())  # logits (B, T, V)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            interval["loss_sum"] += loss.item()
            interval["count"] += 1
            step += 1
            bar.update(1)
            if step % p.eval_every == 0 or step == total:
                now = time.perf_counter()  # seconds: the wall time since the last evaluation
                evaluate(step, now - t0)
                t0 = now
                done = summary()["outcome"] != "running"
                acc = history["heldout_accuracy_predictable"][-1]
                bar.set_postfix(loss=f"{history['train_loss'][-1]:.3f}", acc=f"{acc:.3f}")
            if step in schedule or done:
                probe(step)
            if step % p.eval_every == 0 or done:
                save(step)
        bar.close()
        save(step)  # stopped between evaluations (stop_after), or nothing was trained
    model.eval()
    return FreshResult(model, task, heads, seed, p, step, total, summary(), history, ckpt_file,
                       start)


# --------------------------------------------------------------------------- shipping


def _clean(v: Any) -> Any:
    """``v`` (nested lists of floats) to 6 significant digits; ``None`` for NaN and inf."""
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if v is None or isinstance(v, (bool, int)):
        return v
    return float(f"{v:.6g}") if math.isfinite(v) else None


#: The per-evaluation values a manifest entry keeps as the model's learning curve.
CURVE_KEYS = ("step", "train_loss", "heldout_loss", "heldout_loss_predictable",
              "heldout_accuracy_predictable")


def fresh_entry(ck: FreshCheckpoint) -> dict[str, Any]:
    """The manifest entry of a finished fresh-data run (less ``file`` and ``sha256``).

    ``head_size``: the dimensions per head (64/H in the width arm), also in
    ``model_config``; ``arms``: the arms whose model it is; ``num_parameters``; the
    budget, the steps trained, the rule (``eval_every``, ``threshold``, ``patience``,
    ``tolerance``) and :func:`~.learning.learning_summary` (``outcome``,
    ``steps_to_threshold``, ``converged_at``, ``curve_area``); the last held-out
    evaluation; ``curve`` (:data:`CURVE_KEYS` at every evaluation, step 0 included) and
    ``probes`` (:func:`~.learning.training_probe` at every probed step: scalars, and lists
    of one value per layer). Floats to 6 significant digits, ``None`` for NaN and inf (the
    train loss at step 0; Definition 2.7 where its median is infinite). ``hardware`` and
    ``torch_version`` name every machine and torch the run trained on; a run that moved
    (resumed elsewhere) also has ``segments``, which steps each trained.
    """
    d, cfg, h = ck.data, ck.config(), ck.history
    pc = d["profile_config"]
    moved = len(d.get("segments") or ()) > 1
    return {
        "task": d["task"], "heads": d["heads"], "head_size": cfg.head_dim,
        "arms": arms_of(cfg), "seed": d["seed"], "profile": d["profile"],
        "model_config": {**cfg.to_dict(), "head_size": cfg.head_dim},
        "num_parameters": cfg.num_parameters(), "steps": ck.step,
        "eval_every": pc["eval_every"], "threshold": ck.threshold, "patience": pc["patience"],
        "tolerance": pc["tolerance"], **ck.summary(),
        "final_train_loss": _clean(h["train_loss"][-1]),
        "heldout_accuracy": h["heldout_accuracy"][-1],
        "heldout_accuracy_predictable": h["heldout_accuracy_predictable"][-1],
        "heldout_loss_predictable": h["heldout_loss_predictable"][-1],
        "num_heldout": pc["num_heldout"], "probe_sequences": pc["probe_sequences"],
        "train_seconds": round(sum(h["seconds"]), 1), "torch_version": d["torch_version"],
        "hardware": d["hardware"], "attention_path": ck.attention_path,
        "curve": {k: _clean(list(h[k])) for k in CURVE_KEYS},
        "probes": {k: _clean(list(v)) for k, v in h["probe"].items()},
        **({"segments": ck.segments()} if moved else {}),
    }


def export_fresh_weights(source: FreshCheckpoint | str | os.PathLike,
                         path: str | os.PathLike) -> str:
    """Write a fresh-data run's weights (no optimiser or RNG state), atomically; return
    the SHA-256 (:func:`~.checkpoints.write_weights`; ``meta``: :meth:`FreshCheckpoint.meta`)."""
    ck = source if isinstance(source, FreshCheckpoint) else load_fresh_checkpoint(source)
    return write_weights(path, ck.data["model_config"], ck.data["model"], ck.meta())


def ship_fresh_checkpoint(
    checkpoint: str | os.PathLike, dest: str | os.PathLike, *,
    profile: str | FreshProfile, name: str | None = None,
) -> dict[str, Any]:
    """Ship one finished fresh-data run into ``dest``: weights file ``<name>.weights.pt``
    and its entry in ``dest/manifest.json`` (:func:`fresh_entry`, file and SHA-256), written
    under the manifest's lock (:func:`~.checkpoints.updating_manifest`); return the entry.
    ``name`` defaults to :func:`~.fresh_design.fresh_model_name`. A run still short of its
    budget and not converged is refused.
    """
    dest, p = Path(dest), get_fresh_profile(profile)
    ck = load_fresh_checkpoint(checkpoint, profile=p)
    if ck.summary()["outcome"] == "running":
        raise ValueError(f"checkpoint {checkpoint} is at step {ck.step} of {ck.budget} and has "
                         "not converged: only finished runs are shipped")
    factor = ck.budget // p.steps
    if name is None:
        name = fresh_model_name(ck.data["task"], ck.data["heads"], ck.data["head_size"],
                                ck.data["seed"], factor)
    with updating_manifest(dest, p.name) as manifest:
        file = f"{name}.weights.pt"
        sha = export_fresh_weights(ck, dest / file)
        manifest["models"][name] = entry = {"file": file, "sha256": sha, **fresh_entry(ck),
                                            "budget_factor": factor}
    return entry
