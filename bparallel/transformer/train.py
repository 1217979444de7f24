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

import contextlib
import math
import os
import platform
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .._checks import nonnegative_int, one_of, positive_int
from .checkpoints import (
    WEIGHTS_FORMAT,
    RunCheckpoint,
    atomic_torch_save,
    load_weights,
    on_cpu,
    read_torch_file,
    rng_state,
    seed_everything,
    set_rng_state,
    write_weights,
)
from .data import (
    GRAPH_TASKS,
    PAPER_TASKS,
    TASKS,
    SequenceDataset,
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
)
from .evaluation import evaluate_accuracy
from .model import ATTENTION_PATHS, ModelConfig, Transformer

CHECKPOINT_FORMAT = "bparallel-checkpoint-v1"
THREADS_ENV = "BPARALLEL_THREADS"
DEFAULT_SEED = 42
HEADS = (1, 4, 8, 16)
# The training loss averages the cross-entropy over every position (Section 4.1), or over
# the predictable ones only: the graph tasks' unpredictable positions (induction's first half)
# carry no signal, and with them in the loss a model waits far longer to start learning.
LOSS_POSITIONS = ("all", "predictable")


@dataclass(frozen=True)
class Profile:
    """How much to train: data sizes, epochs and the optimiser settings of Section 4.1."""

    name: str
    num_train: int
    epochs: int
    num_heldout: int
    batch_size: int = 50
    lr: float = 1e-3
    dropout: float = 0.1
    seq_len: int = 100
    vocab_size: int = 256
    description: str = ""
    hidden: bool = False
    loss_positions: str = "all"

    def __post_init__(self) -> None:
        if self.loss_positions not in LOSS_POSITIONS:
            raise ValueError(f"loss_positions={self.loss_positions!r}: valid values are "
                             f"{list(LOSS_POSITIONS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def settings(self) -> dict[str, Any]:
        """What a run of this profile is trained with, less the epoch count (which may grow):
        the part a resumed checkpoint must match."""
        return {k: v for k, v in self.to_dict().items() if k not in ("epochs", "description")}


PROFILES: dict[str, Profile] = {
    "paper": Profile(
        "paper", num_train=5000, epochs=200, num_heldout=2000,
        description="Section 4.1: 5,000 sequences, 200 epochs (about half a day on 2 CPU cores)",
    ),
    "quick": Profile(
        "quick", num_train=1000, epochs=4, num_heldout=500,
        description="CI and book builds: all 8 models in a few minutes on 2 CPU cores",
    ),
    "tiny": Profile(
        "tiny", num_train=40, epochs=2, num_heldout=20, batch_size=10, seq_len=16,
        description="tests only: seconds", hidden=True,
    ),
    # The graph tasks, one profile per task family, each sized so that its models reach
    # their plateau; the loss on the predictable positions (LOSS_POSITIONS).
    "first": Profile(
        "first", num_train=5000, epochs=15, num_heldout=1000, loss_positions="predictable",
        description="long-range retrieval (task first): 5,000 sequences, 15 epochs",
    ),
    "induction": Profile(
        "induction", num_train=5000, epochs=60, num_heldout=1000,
        loss_positions="predictable",
        description="two-hop composition (task induction): 5,000 sequences, 60 epochs",
    ),
    "majority": Profile(
        "majority", num_train=5000, epochs=40, num_heldout=1000, loss_positions="predictable",
        description="aggregation over the prefix (task majority): 5,000 sequences, 40 epochs",
    ),
    "graph-quick": Profile(
        "graph-quick", num_train=1000, epochs=4, num_heldout=200, loss_positions="predictable",
        description="the graph tasks in CI and book builds: all 12 models in a few minutes",
    ),
}

#: The tasks each profile trains: the paper's for its profiles, the graph tasks for theirs.
PROFILE_TASKS = {"paper": PAPER_TASKS, "quick": PAPER_TASKS, "tiny": TASKS,
                 **{task: (task,) for task in GRAPH_TASKS}, "graph-quick": GRAPH_TASKS}


def get_profile(profile: str | Profile) -> Profile:
    """The :class:`Profile` named ``profile`` (or ``profile`` itself)."""
    if isinstance(profile, Profile):
        return profile
    one_of(profile, "profile", PROFILES, "profiles")
    return PROFILES[profile]


def profile_tasks(profile: str | Profile) -> tuple[str, ...]:
    """The tasks ``profile`` is made for (:data:`PROFILE_TASKS`; a profile built by hand:
    every task)."""
    return PROFILE_TASKS.get(get_profile(profile).name, TASKS)


def model_config(profile: str | Profile, heads: int, head_size: int | None = None
                 ) -> ModelConfig:
    """The Section 4.1 model for ``heads`` heads under ``profile`` (any object with the
    fields ``vocab_size``, ``seq_len``, ``dropout``), of head size ``head_size`` (``None``:
    ``d_model / heads``, the paper's)."""
    p = get_profile(profile) if isinstance(profile, str) else profile
    return ModelConfig(n_heads=heads, vocab_size=p.vocab_size, seq_len=p.seq_len,
                       dropout=p.dropout, head_size=head_size)


def run_name(task: str, heads: int, head_size: int | None = None) -> str:
    """File stem of one model's run, e.g. ``"copy-h04"``; a model of a fixed head size
    (``ModelConfig.head_size``) adds it: ``"induction-h08-hs16"``."""
    name = f"{task}-h{heads:02d}"
    return name if head_size is None else f"{name}-hs{head_size:02d}"


def checkpoint_path(out_dir: str | os.PathLike, task: str, heads: int,
                    head_size: int | None = None) -> Path:
    return Path(out_dir) / f"{run_name(task, heads, head_size)}.ckpt.pt"


def weights_path(out_dir: str | os.PathLike, task: str, heads: int,
                 head_size: int | None = None) -> Path:
    return Path(out_dir) / f"{run_name(task, heads, head_size)}.weights.pt"


def lock_path(out_dir: str | os.PathLike, task: str, heads: int,
              head_size: int | None = None) -> Path:
    """The lock file held by the process that trains this model into ``out_dir`` (the
    ``train`` command and ``sweep`` jobs), so that two never train it at once."""
    return Path(out_dir) / f".{run_name(task, heads, head_size)}.lock"


def hardware_string(device: str | torch.device = "cpu") -> str:
    """Where a run happened: CPU, cores, torch threads and, for a CUDA ``device``, the GPU."""
    cpu = platform.processor() or platform.machine()
    text = f"{platform.system()} {cpu}, {os.cpu_count()} cores"
    text += f", torch threads {torch.get_num_threads()}"
    dev = torch.device(device)
    if dev.type == "cuda":
        text += f", {torch.cuda.get_device_name(dev)} (CUDA {torch.version.cuda})"
    return text


def device_name(device: str | torch.device) -> torch.device:
    """``device`` (``"cpu"``, ``"cuda"`` or ``"cuda:N"``) as a ``torch.device``; another kind
    of device is a ``ValueError``. Whether this machine has it is :func:`resolve_device`'s
    check (a sweep checks only the name: its jobs may run on a GPU node)."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r}: not a device name ({err}); use 'cpu' or "
                         "'cuda'") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: only 'cpu' and 'cuda' are supported")
    return dev


def resolve_device(device: str | torch.device) -> torch.device:
    """``device`` as a ``torch.device`` (:func:`device_name`), checked to exist here.

    Raises ``ValueError`` for another kind of device or a CUDA device this machine lacks.
    """
    dev = device_name(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r}: CUDA is not available here (torch "
                             f"{torch.__version__}, no usable GPU); use device='cpu'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    return dev


@contextlib.contextmanager
def num_threads(n: int | None = None) -> Iterator[int]:
    """Run with ``n`` torch threads (default: ``$BPARALLEL_THREADS``, else unchanged)."""
    if n is None and os.environ.get(THREADS_ENV):
        try:
            n = int(os.environ[THREADS_ENV])
        except ValueError:
            raise ValueError(
                f"{THREADS_ENV}={os.environ[THREADS_ENV]!r}: must be a positive integer"
            ) from None
    if n is not None:
        positive_int(n, "threads")
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if n is not None:
            torch.set_num_threads(before)


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


def load_model(path: str | os.PathLike) -> tuple[Transformer, dict[str, Any]]:
    """A model and its metadata from a weights file, a training checkpoint or a fresh-data
    training checkpoint (:mod:`bparallel.transformer.fresh`).

    The file's own ``format`` field decides which it is."""
    from .fresh import FRESH_CHECKPOINT_FORMAT, load_fresh_checkpoint

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist")
    obj = read_torch_file(path, "model file")
    fmt = obj.get("format") if isinstance(obj, dict) else None
    if fmt == WEIGHTS_FORMAT:
        return load_weights(path)
    if fmt == FRESH_CHECKPOINT_FORMAT:
        ck = load_fresh_checkpoint(path)
        return ck.model(), ck.meta()
    if fmt != CHECKPOINT_FORMAT:
        raise ValueError(f"model file {path} is neither a {WEIGHTS_FORMAT} nor a "
                         f"{CHECKPOINT_FORMAT} or {FRESH_CHECKPOINT_FORMAT} file (found "
                         f"{fmt!r})")
    ck = load_checkpoint(path)
    meta = {k: ck.data[k] for k in ("task", "heads", "seed", "profile", "epoch")}
    meta["history"] = ck.history
    return ck.model(), meta


def projected_hours(seconds_per_step: float, profile: str | Profile, models: int = 8) -> float:
    """Wall time of ``models`` runs of ``profile`` at ``seconds_per_step``, in hours."""
    p = get_profile(profile)
    steps = p.epochs * math.ceil(p.num_train / p.batch_size)
    return models * steps * seconds_per_step / 3600.0
