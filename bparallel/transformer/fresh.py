"""Training on fresh data (issue #33): a new batch every step, a budget in steps, a stated
convergence rule, two arms that separate the number of heads from their size, and the
proxies followed through training.

**Data.** The batch of step ``k`` (``k = 0, 1, ...``) is ``batch_size`` new sequences of the
task drawn from the stream ``(seed, "step", k)`` (:func:`fresh_batch`): a pure function of
the seed and the step, so a run is deterministic and, resumed from a checkpoint, continues
bitwise as if never interrupted. No sequence is seen twice, so a model cannot memorise its
training set. The held-out set is fixed per task, the same for every seed, arm and head
count: the first ``num_heldout`` sequences of the held-out stream of seed
:data:`HELDOUT_SEED` (:func:`~bparallel.transformer.data.heldout_dataset`); its first
``probe_sequences`` sequences are the probe set of :func:`~.learning.training_probe`.

**Budget and convergence.** A :class:`FreshProfile` gives the budget ``steps``; every
``eval_every`` steps (and at step 0) the model is evaluated on the held-out set. Training
stops when the convergence rule holds (held-out accuracy on the predictable positions at
or above the task's learning threshold, and within 0.5 points of its best for ``patience``
consecutive evaluations: :func:`~.learning.converged_at`) or at the budget. The outcome is
``"converged"``, ``"budget reached"`` or ``"not learned"`` (:func:`~.learning.learning_summary`):
a model that never reaches the threshold is *not learned within B steps*, never a time.

**Arms** (:data:`ARMS`). ``"width"``: head size ``64/H``, the paper's, the same 172,800
parameters at every head count. ``"head16"``: 16 dimensions per head at every head count,
the attention's inner width ``16 H`` (Bhojanapalli et al. 2020's remedy for the low-rank
bottleneck); the parameters grow with ``H`` (:meth:`~.model.ModelConfig.num_parameters`).
4 heads of 16 is both arms' model: one run, shipped once, listed under both
(:func:`arm_head_size` maps it to the default head size).

**Proxies through training.** At the steps of :func:`~.learning.probe_steps` (0, 50, 100,
200, 400, ... and the last step) the model is measured on the probe set
(:func:`~.learning.training_probe`: accuracy, loss, and per layer Algorithms 1-2 in both
modes, Definition 2.7, rollout); the values go into the history, the weights of those
steps are not kept.

**Files.** The checkpoint (``bparallel-fresh-checkpoint-v1``, written atomically at every
evaluation and when a call ends) holds the step, model, optimiser, every RNG state and the
history; :func:`ship_fresh_checkpoint` exports a finished run's weights and enters it in
``<models>/manifest.json`` with its configuration (head size included), arm(s), budget,
outcome, learning curve and probes. A run of ``budget_factor`` times the budget (the 5x
runs of non-learners) has its own files, ``<name>-x5``, and starts from the run of the
plain budget when that checkpoint is there (the same stream: the first ``B`` steps are
that run, bitwise).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .._checks import nonnegative_int, one_of, positive_int, unit_interval
from .._io import atomic_copy, file_lock
from .data import GRAPH_TASKS, TASKS, SequenceDataset, heldout_dataset, make_dataset
from .evaluation import evaluate_accuracy
from .learning import (
    LEARNING_THRESHOLD,
    PATIENCE,
    PROBE_LAYER_KEYS,
    PROBE_SCALAR_KEYS,
    TOLERANCE,
    learning_summary,
    probe_steps,
    training_probe,
)
from .model import ATTENTION_PATHS, ModelConfig, Transformer
from .train import (
    DEFAULT_SEED,
    LOSS_POSITIONS,
    _atomic_torch_save,
    _build_model,
    _on_cpu,
    _safe_load,
    hardware_string,
    ignore_unpredictable,
    model_config,
    num_threads,
    resolve_device,
    rng_state,
    run_name,
    seed_everything,
    set_rng_state,
    write_weights,
)

FRESH_CHECKPOINT_FORMAT = "bparallel-fresh-checkpoint-v1"
ARMS = ("width", "head16")
ARM_HEAD_SIZE = 16  # the head16 arm's head size
HELDOUT_SEED = DEFAULT_SEED  # the fixed held-out set of every fresh-data run


@dataclass(frozen=True)
class FreshProfile:
    """How a fresh-data run trains: its tasks, budget, evaluation and convergence rule.

    ``steps``: the budget ``B`` (a multiple of ``eval_every``); ``eval_every``: steps between
    held-out evaluations; ``patience``, ``tolerance``: the convergence rule
    (:func:`~.learning.converged_at`); ``threshold``: the learning threshold, ``None`` for
    the task's :data:`~.learning.LEARNING_THRESHOLD`; ``num_heldout``: the fixed held-out
    set; ``probe_sequences``: how many of its sequences the probes measure; ``probe_first``:
    the first step after 0 of the log-spaced probe schedule (:func:`~.learning.probe_steps`).
    The optimiser and model settings are Section 4.1's (Adam, lr 1e-3, batch 50, dropout
    0.1); the loss is taken over the predictable positions (``loss_positions``).
    """

    name: str
    tasks: tuple[str, ...]
    steps: int
    eval_every: int
    patience: int = PATIENCE
    tolerance: float = TOLERANCE
    threshold: float | None = None
    num_heldout: int = 1000
    probe_sequences: int = 20
    probe_first: int = 50
    batch_size: int = 50
    lr: float = 1e-3
    dropout: float = 0.1
    seq_len: int = 100
    vocab_size: int = 256
    loss_positions: str = "predictable"
    description: str = ""
    hidden: bool = False

    def __post_init__(self) -> None:
        for name in ("steps", "eval_every", "patience", "num_heldout", "probe_sequences",
                     "probe_first", "batch_size"):
            positive_int(getattr(self, name), name)
        for task in self.tasks:
            one_of(task, "tasks", TASKS, "tasks")
        if self.steps % self.eval_every:
            raise ValueError(f"steps={self.steps}: must be a multiple of "
                             f"eval_every={self.eval_every}")
        if self.probe_sequences > self.num_heldout:
            raise ValueError(f"probe_sequences={self.probe_sequences}: at most "
                             f"num_heldout={self.num_heldout}")
        unit_interval(self.tolerance, "tolerance", closed=True)
        if self.threshold is not None:
            unit_interval(self.threshold, "threshold", closed=True)
        one_of(self.loss_positions, "loss_positions", LOSS_POSITIONS, "values")

    def threshold_of(self, task: str) -> float:
        """The learning threshold of ``task`` under this profile."""
        if self.threshold is not None:
            return self.threshold
        return LEARNING_THRESHOLD[one_of(task, "task", list(LEARNING_THRESHOLD),
                                         "tasks with a learning threshold (else give the "
                                         "profile one)")]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tasks"] = list(self.tasks)
        return d

    def settings(self) -> dict[str, Any]:
        """What a run is trained with, less the budget (which may grow): what a resumed
        checkpoint must match."""
        return {k: v for k, v in self.to_dict().items()
                if k not in ("steps", "description", "hidden")}


FRESH_PROFILES: dict[str, FreshProfile] = {
    "first-fresh": FreshProfile(
        "first-fresh", ("first",), steps=4000, eval_every=100,
        description="long-range retrieval on fresh data: up to 4,000 steps of 50 new sequences",
    ),
    "induction-fresh": FreshProfile(
        "induction-fresh", ("induction",), steps=12000, eval_every=200,
        description="two-hop composition on fresh data: up to 12,000 steps",
    ),
    "majority-fresh": FreshProfile(
        "majority-fresh", ("majority",), steps=12000, eval_every=200,
        description="aggregation over the prefix on fresh data: up to 12,000 steps",
    ),
    "fresh-quick": FreshProfile(
        "fresh-quick", GRAPH_TASKS, steps=300, eval_every=50, patience=3, num_heldout=200,
        description="the graph tasks on fresh data in CI and book builds: 300 steps a model",
    ),
    "fresh-tiny": FreshProfile(
        "fresh-tiny", GRAPH_TASKS, steps=12, eval_every=4, patience=2, num_heldout=20,
        probe_sequences=4, probe_first=2, batch_size=10, seq_len=16,
        description="tests only: seconds", hidden=True,
    ),
}


def get_fresh_profile(profile: str | FreshProfile) -> FreshProfile:
    """The :class:`FreshProfile` named ``profile`` (or ``profile`` itself)."""
    if isinstance(profile, FreshProfile):
        return profile
    one_of(profile, "profile", FRESH_PROFILES, "fresh profiles")
    return FRESH_PROFILES[profile]


def arm_head_size(arm: str, heads: int, d_model: int = 64) -> int | None:
    """The head size of ``heads`` heads in ``arm``, as ``ModelConfig.head_size``: ``None``
    (``d_model / heads``) for ``"width"`` and for ``"head16"`` where ``16 heads = d_model``
    (4 heads: both arms' model), else 16."""
    one_of(arm, "arm", ARMS, "arms")
    positive_int(heads, "heads")
    if arm == "width" or ARM_HEAD_SIZE * heads == d_model:
        return None
    return ARM_HEAD_SIZE


def arms_of(config: ModelConfig) -> list[str]:
    """The arms whose model ``config`` is: ``["width"]``, ``["head16"]``, both (4 heads of
    16) or none."""
    default = config.d_model % config.n_heads == 0 and (
        config.head_dim == config.d_model // config.n_heads)
    return [arm for arm, ok in (("width", default), ("head16", config.head_dim == ARM_HEAD_SIZE))
            if ok]


def fresh_run_name(task: str, heads: int, head_size: int | None = None,
                   budget_factor: int = 1) -> str:
    """File stem of a fresh-data run: :func:`~.train.run_name` (``"induction-h08-hs16"``),
    and ``-x5`` for a run of 5 times the budget."""
    name = run_name(task, heads, head_size)
    return name if positive_int(budget_factor, "budget_factor") == 1 else \
        f"{name}-x{budget_factor}"


def fresh_model_name(task: str, heads: int, head_size: int | None = None, seed: int = DEFAULT_SEED,
                     budget_factor: int = 1) -> str:
    """Manifest key and file stem of a shipped fresh-data model: :func:`fresh_run_name`, and
    ``-s<S>`` for a seed other than 42 (as :func:`~.shipped.shipped_name`)."""
    name = fresh_run_name(task, heads, head_size, budget_factor)
    return name if seed == DEFAULT_SEED else f"{name}-s{seed}"


def fresh_checkpoint_path(out_dir: str | os.PathLike, task: str, heads: int,
                          head_size: int | None = None, budget_factor: int = 1) -> Path:
    return Path(out_dir) / f"{fresh_run_name(task, heads, head_size, budget_factor)}.ckpt.pt"


def fresh_batch(task: str, step: int, *, seed: int, batch_size: int = 50, seq_len: int = 100,
                vocab_size: int = 256) -> SequenceDataset:
    """The training batch of step ``step``: ``batch_size`` new sequences of ``task`` from the
    stream ``(seed, "step", step)``."""
    return make_dataset(task, batch_size, seed=seed, stream="step", step=step,
                        seq_len=seq_len, vocab_size=vocab_size)


def fresh_heldout(task: str, profile: str | FreshProfile) -> SequenceDataset:
    """The fixed held-out set of ``task`` under ``profile`` (module docstring); its first
    ``probe_sequences`` sequences are the probe set."""
    p = get_fresh_profile(profile)
    return heldout_dataset(task, p.num_heldout, seed=HELDOUT_SEED, seq_len=p.seq_len,
                           vocab_size=p.vocab_size)


# --------------------------------------------------------------------------- checkpoints

_ANY = object()
_CHECKPOINT_KEYS = ("task", "heads", "head_size", "seed", "profile", "profile_config",
                    "model_config", "step", "budget", "model", "optimizer", "rng", "interval",
                    "history", "torch_version", "hardware", "attention_path")


@dataclass
class FreshCheckpoint:
    """A loaded fresh-data checkpoint (:func:`load_fresh_checkpoint`)."""

    path: Path
    data: dict[str, Any]

    @property
    def step(self) -> int:
        return int(self.data["step"])

    @property
    def budget(self) -> int:
        return int(self.data["budget"])

    @property
    def history(self) -> dict[str, Any]:
        return self.data["history"]

    @property
    def attention_path(self) -> str:
        return self.data["attention_path"]

    def config(self) -> ModelConfig:
        return ModelConfig(**self.data["model_config"])

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

    def model(self) -> Transformer:
        """The model at this checkpoint, in eval mode."""
        where = f"checkpoint {self.path}"
        return _build_model(self.data["model_config"], self.data["model"], where).eval()

    def meta(self) -> dict[str, Any]:
        """What a weights file records beside the weights (JSON data)."""
        d, cfg = self.data, self.config()
        return {**{k: d[k] for k in ("task", "heads", "seed", "profile", "step", "budget",
                                     "torch_version", "hardware", "attention_path")},
                "head_size": cfg.head_dim, "arms": arms_of(cfg), **self.summary(),
                "history": d["history"]}


def load_fresh_checkpoint(
    path: str | os.PathLike, *, task: str | None = None, heads: int | None = None,
    head_size: Any = _ANY, profile: str | FreshProfile | None = None, seed: int | None = None,
) -> FreshCheckpoint:
    """Read and check a fresh-data checkpoint; refuse one of another task, head count, head
    size (``None``: the default), profile or seed. ``FileNotFoundError`` when missing,
    ``ValueError`` naming the problem otherwise."""
    data = _safe_load(path, "checkpoint", FRESH_CHECKPOINT_FORMAT)
    missing = [k for k in _CHECKPOINT_KEYS if k not in data]
    if missing:
        raise ValueError(f"checkpoint {path} is incomplete: missing {missing}")
    if head_size is not _ANY and data["head_size"] != head_size:
        raise ValueError(f"checkpoint {path} has head_size={data['head_size']!r}, not "
                         f"head_size={head_size!r}")
    for key, want in {"task": task, "heads": heads, "seed": seed}.items():
        if want is not None and data[key] != want:
            raise ValueError(f"checkpoint {path} has {key}={data[key]!r}, not {key}={want!r}")
    if profile is not None:
        p = get_fresh_profile(profile)
        if data["profile"] != p.name:
            raise ValueError(f"checkpoint {path} has profile={data['profile']!r}, not {p.name!r}")
        stored = data["profile_config"]
        diff = sorted(k for k, v in p.settings().items() if stored.get(k) != v)
        if diff:
            raise ValueError(f"checkpoint {path} was made with other settings of profile "
                             f"{p.name!r}: {diff}")
    return FreshCheckpoint(Path(path), data)


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

    ``arm``: ``"width"`` or ``"head16"`` (:data:`ARMS`). With ``out_dir``, a checkpoint is
    written at every evaluation and when the call ends, and an existing one is resumed
    (``resume=True``): the run ends bitwise where an uninterrupted one would.
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
            _atomic_torch_save({
                "format": FRESH_CHECKPOINT_FORMAT, "task": task, "heads": heads,
                "head_size": head_size, "seed": seed, "profile": p.name,
                "profile_config": p.to_dict(), "model_config": cfg.to_dict(), "step": step,
                "budget": total, "attention_path": path, "model": _on_cpu(model.state_dict()),
                "optimizer": _on_cpu(opt.state_dict()), "rng": rng_state(dev),
                "interval": dict(interval), "history": history,
                "torch_version": str(torch.__version__), "hardware": hardware_string(dev),
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
    train loss at step 0; Definition 2.7 where its median is infinite).
    """
    d, cfg, h = ck.data, ck.config(), ck.history
    pc = d["profile_config"]
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
    }


def export_fresh_weights(source: FreshCheckpoint | str | os.PathLike,
                         path: str | os.PathLike) -> str:
    """Write a fresh-data run's weights (no optimiser or RNG state), atomically; return
    the SHA-256 (:func:`~.train.write_weights`; ``meta``: :meth:`FreshCheckpoint.meta`)."""
    ck = source if isinstance(source, FreshCheckpoint) else load_fresh_checkpoint(source)
    return write_weights(path, ck.data["model_config"], ck.data["model"], ck.meta())


def ship_fresh_checkpoint(
    checkpoint: str | os.PathLike, dest: str | os.PathLike, *,
    profile: str | FreshProfile, name: str | None = None,
) -> dict[str, Any]:
    """Ship one finished fresh-data run into ``dest``: weights file ``<name>.weights.pt``
    and its entry in ``dest/manifest.json`` (:func:`fresh_entry`, file and SHA-256), written
    under the manifest's lock; return the entry. ``name`` defaults to
    :func:`fresh_model_name`. A run still short of its budget and not converged is refused.
    """
    from .shipped import MANIFEST_LOCK, _open_manifest, _write_manifest

    dest, p = Path(dest), get_fresh_profile(profile)
    ck = load_fresh_checkpoint(checkpoint, profile=p)
    if ck.summary()["outcome"] == "running":
        raise ValueError(f"checkpoint {checkpoint} is at step {ck.step} of {ck.budget} and has "
                         "not converged: only finished runs are shipped")
    factor = ck.budget // p.steps
    if name is None:
        name = fresh_model_name(ck.data["task"], ck.data["heads"], ck.data["head_size"],
                                ck.data["seed"], factor)
    with file_lock(dest / MANIFEST_LOCK):
        manifest = _open_manifest(dest, p)
        file = f"{name}.weights.pt"
        sha = export_fresh_weights(ck, dest / file)
        manifest["models"][name] = entry = {"file": file, "sha256": sha, **fresh_entry(ck),
                                            "budget_factor": factor}
        _write_manifest(dest, manifest)
    return entry
