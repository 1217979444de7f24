"""Training of Section 4: one loop for both kinds of data.

Adam (lr 1e-3; a fresh-data profile may decay it over its budget, ``FreshProfile.lr_at``),
batch 50, dropout 0.1, cross-entropy over every position (or the
predictable ones, ``Profile.loss_positions``), seeds fixed for torch, numpy and python
``random``. :func:`train` runs one loop over the units of a schedule; the schedule is the
profile's kind (:mod:`~bparallel.transformer.design`), and only it knows where batches come
from and when the model is evaluated:

- **a finite training set, in epochs** (:class:`~.design.Profile`, the paper's): each unit is
  one pass over the training set in the shuffled order of that epoch
  (:class:`~.data.ShuffledLoader`); after every epoch the model is evaluated on the seed's
  held-out set and a checkpoint is written;
- **fresh data, in steps** (:class:`~.design.FreshProfile`): each unit is one step on the new
  batch of that step (:func:`~.design.fresh_batch`); every ``eval_every`` steps (and at
  step 0) the model is evaluated on the fixed held-out set and a checkpoint is written; at
  the steps of :func:`~.learning.probe_steps` the proxies are recorded
  (:func:`~.measure.training_probe`, and the conditioning of the concatenated heads,
  :func:`~.conditioning.attention_conditioning`: their values go into the history, the
  weights of those steps are not kept); training stops when the convergence rule holds
  (:func:`~.learning.learning_summary`: ``"converged"``, ``"budget reached"`` or ``"not
  learned"``) or at the budget. A run of ``budget_factor`` times the budget has its own
  files, ``<name>-xK``, and starts from the plain run's checkpoint (the same stream: its
  first ``B`` steps are that run, bitwise).

The checkpoint (:mod:`~bparallel.transformer.checkpoints`, written atomically) holds the
model, the optimiser, every RNG state, the schedule's state, the history and the machines the
run trained on (a run resumed on another machine or torch, a GPU run continued on the CPU
say, keeps both with the units of each). :func:`train` resumes from it and ends bitwise
where an uninterrupted run would. Checkpoints load with ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .._checks import one_of, positive_int
from .._io import atomic_copy
from .checkpoints import (
    EpochCheckpoint,
    RunCheckpoint,
    StepCheckpoint,
    atomic_torch_save,
    data_seed_of,
    load_checkpoint,
    on_cpu,
    rng_state,
    seed_everything,
    set_rng_state,
)
from .conditioning import PROBE_KEY, attention_conditioning
from .data import SequenceDataset, ShuffledLoader, heldout_dataset, make_dataset
from .design import FreshProfile, Profile, Recipe, fresh_batch, fresh_heldout, get_profile
from .evaluation import evaluate_accuracy
from .head_probes import HEAD_SCALAR_KEYS, HEAD_SCORE_KEYS, head_probe, head_probe_steps
from .learning import learning_summary, probe_steps
from .measure import PROBE_LAYER_KEYS, PROBE_SCALAR_KEYS, training_probe
from .model import ATTENTION_PATHS, Transformer
from .runs import OfRun, Run
from .runtime import hardware_string, num_threads, resolve_device

__all__ = ["TrainResult", "QUERY_PARAMETERS", "adam_for", "ignore_unpredictable", "initial_model",
           "train", "projected_hours"]

_CURVE_KEYS = ("train_loss", "heldout_loss", "heldout_accuracy", "heldout_accuracy_predictable",
               "heldout_loss_predictable", "seconds")


@dataclass
class TrainResult(OfRun):
    """What :func:`train` returns: the model (eval mode), the :class:`~.runs.Run` it trained,
    how far it trained (``position``: its epoch or step), its history and where its
    checkpoint lives. Fresh-data runs also have their ``budget`` and learning ``summary``."""

    model: Transformer
    run: Run
    position: int
    history: dict[str, Any] = field(default_factory=dict)
    checkpoint: Path | None = None
    resumed_from: int = 0
    budget: int | None = None
    summary: dict[str, Any] | None = None

    @property
    def data_seed(self) -> int | None:
        """The seed of the training batches (fresh data), ``None`` on a finite set."""
        return self.run.batch_seed if isinstance(self.run.profile, FreshProfile) else None

    @property
    def epoch(self) -> int:
        return self.position

    @property
    def step(self) -> int:
        return self.position

    @property
    def outcome(self) -> str | None:
        return None if self.summary is None else self.summary["outcome"]


def ignore_unpredictable(dataset: SequenceDataset) -> SequenceDataset:
    """``dataset`` with the targets of unpredictable positions set to ``-100``,
    :func:`torch.nn.functional.cross_entropy`'s ``ignore_index``: the training loss then
    averages over the predictable positions only (``loss_positions="predictable"``)."""
    targets = torch.where(dataset.mask, dataset.targets, torch.full_like(dataset.targets, -100))
    return SequenceDataset(dataset.task, dataset.inputs, targets, dataset.mask)


# --------------------------------------------------------------------------- schedules


class _Epochs:
    """A finite training set, one unit an epoch (module docstring)."""

    KIND = EpochCheckpoint

    def __init__(self, task: str, p: Profile, seed: int, total: int, model: Transformer,
                 progress: bool) -> None:
        train_set = make_dataset(task, p.num_train, seed=seed, seq_len=p.seq_len,
                                 vocab_size=p.vocab_size)
        if p.loss_positions == "predictable":
            train_set = ignore_unpredictable(train_set)
        self.heldout = heldout_dataset(task, p.num_heldout, seed=seed, seq_len=p.seq_len,
                                       vocab_size=p.vocab_size)
        self.loader = ShuffledLoader(train_set, p.batch_size, seed=seed)
        self.model, self.total, self.progress = model, total, progress
        self.history: dict[str, Any] = {k: [] for k in ("epoch", *_CURVE_KEYS)}
        self.done = False
        self.loss_sum, self.count, self.t0 = 0.0, 0, 0.0

    def restore(self, ck: RunCheckpoint) -> None:
        self.loader.load_state_dict(ck.data["loader"])
        self.history = {k: list(v) for k, v in ck.history.items()}
        for key in ("epoch", *_CURVE_KEYS):  # a key added after the checkpoint was written
            self.history.setdefault(key, [math.nan] * len(self.history["epoch"]))

    def begin(self) -> None:
        pass

    def batches(self, epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        self.t0, self.loss_sum, self.count = time.perf_counter(), 0.0, 0
        yield from tqdm(self.loader.batches(epoch), total=len(self.loader), leave=False,
                        disable=not self.progress, desc=f"epoch {epoch + 1}")

    def add(self, loss: float, n: int) -> None:
        self.loss_sum += loss * n
        self.count += n

    def after(self, epoch: int) -> tuple[bool, dict[str, str]]:
        """Evaluate after ``epoch`` epochs; a checkpoint after every epoch."""
        self.loader.epoch = epoch
        ev = evaluate_accuracy(self.model, self.heldout)
        for key, value in (("epoch", epoch), ("train_loss", self.loss_sum / self.count),
                           ("heldout_loss", ev["loss"]), ("heldout_accuracy", ev["accuracy"]),
                           ("heldout_accuracy_predictable", ev["accuracy_predictable"]),
                           ("heldout_loss_predictable", ev["loss_predictable"]),
                           ("seconds", time.perf_counter() - self.t0)):
            self.history[key].append(value)
        return True, {"loss": f"{self.loss_sum / self.count:.3f}",
                      "acc": f"{ev['accuracy']:.3f}"}

    def state(self) -> dict[str, Any]:
        return {"loader": self.loader.state_dict()}

    def summary(self) -> None:
        return None


class _Steps:
    """Fresh data, one unit a step (module docstring)."""

    KIND = StepCheckpoint

    def __init__(self, run: Run, total: int, model: Transformer, probes: bool = True) -> None:
        p = run.recipe
        self.head_size, self.data_seed, self.probes = run.head_size, run.batch_seed, probes
        self.task, self.p, self.seed, self.total, self.model = run.task, p, run.seed, total, model
        task = run.task
        self.threshold = p.threshold_of(task)
        self.schedule = set(probe_steps(total, p.probe_first)) if probes else set()
        self.heldout = fresh_heldout(task, p)
        self.probe_set = self.heldout.subset(slice(0, p.probe_sequences))
        self.history: dict[str, Any] = {k: [] for k in ("step", *_CURVE_KEYS)}
        self.history["probe"] = {k: [] for k in ("step", *PROBE_SCALAR_KEYS, *PROBE_LAYER_KEYS,
                                                 PROBE_KEY)}
        self.interval = {"loss_sum": 0.0, "count": 0}
        self.done = False
        self.t0 = 0.0
        self.head_schedule: set[int] = set()
        if p.head_probe_every is not None and probes:
            self.head_schedule = set(head_probe_steps(p.head_probe_every, p.head_probe_until,
                                                      p.eval_every, total))
            self.history["heads"] = {k: [] for k in ("step", "seconds", *HEAD_SCALAR_KEYS,
                                                     *HEAD_SCORE_KEYS)}

    def restore(self, ck: RunCheckpoint) -> None:
        self.history, self.interval = ck.history, dict(ck.data["interval"])

    def summary(self) -> dict[str, Any]:
        h = self.history
        return learning_summary(h["step"], h["heldout_accuracy_predictable"],
                                threshold=self.threshold, budget=self.total,
                                patience=self.p.patience, tolerance=self.p.tolerance)

    def _evaluate(self, step: int, seconds: float) -> None:
        ev = evaluate_accuracy(self.model, self.heldout)
        n = self.interval["count"]
        for key, value in (("step", step),
                           ("train_loss", self.interval["loss_sum"] / n if n else math.nan),
                           ("heldout_loss", ev["loss"]), ("heldout_accuracy", ev["accuracy"]),
                           ("heldout_accuracy_predictable", ev["accuracy_predictable"]),
                           ("heldout_loss_predictable", ev["loss_predictable"]),
                           ("seconds", seconds)):
            self.history[key].append(value)
        self.interval.update(loss_sum=0.0, count=0)

    def _probe(self, step: int) -> None:
        probes = self.history["probe"]
        if not self.probes or probes["step"][-1:] == [step]:
            return
        values = training_probe(self.model, self.probe_set)
        if PROBE_KEY in probes:  # a run begun before the probe recorded it resumes without it
            values[PROBE_KEY] = attention_conditioning(self.model, self.probe_set.inputs)
        probes["step"].append(step)
        for key, value in values.items():
            probes[key].append(value)

    def _head_probe(self, step: int) -> None:
        """The per-head probes (:func:`~.head_probes.head_probe`) at ``step``, with the
        seconds they took (their cost beside the training's ``seconds``)."""
        heads = self.history.get("heads")
        if heads is None or heads["step"][-1:] == [step]:
            return
        t0 = time.perf_counter()
        values = head_probe(self.model, self.probe_set)
        heads["step"].append(step)
        heads["seconds"].append(time.perf_counter() - t0)
        for key, value in values.items():
            heads[key].append(value)

    def begin(self) -> None:
        if not self.history["step"]:  # step 0: the untrained model
            self._evaluate(0, 0.0)
            self._probe(0)
            self._head_probe(0)
        self.done = self.summary()["outcome"] != "running"
        self.t0 = time.perf_counter()

    def batches(self, step: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        p = self.p
        batch = fresh_batch(self.task, step, seed=self.seed, data_seed=self.data_seed,
                            batch_size=p.batch_size, seq_len=p.seq_len,
                            vocab_size=p.vocab_size)
        if p.loss_positions == "predictable":
            batch = ignore_unpredictable(batch)
        yield batch.inputs, batch.targets

    def add(self, loss: float, n: int) -> None:
        self.interval["loss_sum"] += loss
        self.interval["count"] += 1

    def after(self, step: int) -> tuple[bool, dict[str, str] | None]:
        """Evaluate every ``eval_every`` steps and at the budget, probe at the schedule's
        steps and when the run stops, a checkpoint at every evaluation and at the stop."""
        postfix = None
        if step % self.p.eval_every == 0 or step == self.total:
            now = time.perf_counter()  # seconds: the wall time since the last evaluation
            self._evaluate(step, now - self.t0)
            self.t0 = now
            self.done = self.summary()["outcome"] != "running"
            postfix = {"loss": f"{self.history['train_loss'][-1]:.3f}",
                       "acc": f"{self.history['heldout_accuracy_predictable'][-1]:.3f}"}
        if step in self.schedule or self.done:
            self._probe(step)
        if step in self.head_schedule or self.done:
            self._head_probe(step)
        return step % self.p.eval_every == 0 or self.done, postfix

    def state(self) -> dict[str, Any]:
        return {"head_size": self.head_size, "budget": self.total,
                "data_seed": self.data_seed, "interval": dict(self.interval)}


# --------------------------------------------------------------------------- the loop


def _segments(data: dict[str, Any] | None, start: int, unit: str, hardware: str,
              torch_version: str) -> list[dict[str, Any]]:
    """Where a run has trained: one segment ``{"from_<unit>", "hardware", "torch_version"}``
    per machine and torch, in order. A checkpoint written before segments were kept counts
    as one segment from 0 on its recorded machine; a run resumed on another machine or torch
    starts a new segment at ``start``, so that neither machine is credited with the other's
    work."""
    key = f"from_{unit}"
    if data is None:
        return [{key: 0, "hardware": hardware, "torch_version": torch_version}]
    segments = [dict(s) for s in data.get("segments") or
                [{key: 0, "hardware": data["hardware"],
                  "torch_version": data["torch_version"]}]]
    last = segments[-1]
    if (last["hardware"], last["torch_version"]) != (hardware, torch_version):
        segments.append({key: start, "hardware": hardware, "torch_version": torch_version})
    return segments


def _joined(segments: list[dict[str, Any]], key: str, sep: str) -> str:
    """The distinct values of ``key`` over ``segments``, in order of first use."""
    return sep.join(dict.fromkeys(s[key] for s in segments))


def _adopt(base: Path, target: Path, budget: int, **expect: Any) -> bool:
    """Start a run of a larger budget from the plain-budget run's checkpoint ``base`` (checked
    to be the same run: ``expect``, :func:`~.checkpoints.load_checkpoint`'s keywords)."""
    if target.exists() or not base.is_file():
        return False
    if load_checkpoint(base, **expect).position > budget:
        return False
    atomic_copy(base, target)
    return True


def initial_model(run: Run) -> Transformer:
    """The weights ``run`` starts from, as :func:`train` draws them (on the CPU, after
    ``seed_everything(run.seed)``): the untrained model of the run's configuration."""
    if not isinstance(run, Run):
        raise ValueError(f"run={type(run).__name__}: give a Run (bparallel.transformer.runs)")
    cfg = run.config
    seed_everything(run.seed)
    model = Transformer(cfg)
    gain = run.recipe.query_gain(cfg)
    if gain != 1.0:  # the queries' parameters are the gain times the default's (adam_for)
        with torch.no_grad():
            for p in _query_parameters(model):
                p.mul_(gain)
    return model


#: The parameters of every head's queries, ``q = W_Q x + b_Q`` (:mod:`.model`).
QUERY_PARAMETERS = ("attn.q.weight", "attn.q.bias")


def _query_parameters(model: Transformer) -> list[torch.nn.Parameter]:
    return [p for name, p in model.named_parameters() if name.endswith(QUERY_PARAMETERS)]


def adam_for(model: Transformer, recipe: Recipe) -> torch.optim.Adam:
    """Adam at the recipe's rate on ``model``, with its logits scaled by the recipe's
    :meth:`~.design.Recipe.query_gain` ``g``: one parameter group (``g = 1``, every shipped
    model's recipe), or the queries' parameters in a group of their own at rate ``g lr`` and
    ``eps / g``.

    Why that is the scale: the model of logit scale ``g / sqrt(D)`` with queries
    ``U x + c``, trained by Adam, is the model of scale ``1 / sqrt(D)`` with ``W = g U``,
    ``b = g c`` (:func:`initial_model` multiplies the initial queries by ``g``). Adam's step
    on ``U`` (gradient ``g`` times ``W``'s; first moment ``g`` times, second ``g**2`` times)
    is ``-lr m / (sqrt(v) + eps / g)`` in ``W``'s moments, so ``W = g U`` moves by
    ``-(g lr) m / (sqrt(v) + eps / g)``: Adam on ``W`` at rate ``g lr`` and ``eps / g``,
    equal in exact arithmetic (``tests/transformer/test_logit_scale.py`` trains both). The
    weights stored are then a model of the usual scale, which every measure reads as is."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model={type(model).__name__}: give a Transformer "
                         "(bparallel.transformer.model)")
    if not isinstance(recipe, Recipe):
        raise ValueError(f"recipe={type(recipe).__name__}: give a profile or Recipe "
                         "(bparallel.transformer.design)")
    gain = recipe.query_gain(model.config)
    if gain == 1.0:
        return torch.optim.Adam(model.parameters(), lr=recipe.lr)
    queries = {id(p) for p in _query_parameters(model)}
    rest = [p for p in model.parameters() if id(p) not in queries]
    base = torch.optim.Adam([{"params": rest, "gain": 1.0}], lr=recipe.lr)
    base.add_param_group({"params": _query_parameters(model), "lr": gain * recipe.lr,
                          "eps": base.defaults["eps"] / gain, "gain": gain})
    return base


def train(
    run: Run,
    *,
    out_dir: str | os.PathLike | None = None,
    epochs: int | None = None,
    stop_after: int | None = None,
    threads: int | None = None,
    progress: bool = True,
    resume: bool = True,
    attention_path: str | None = None,
    device: str | torch.device = "cpu",
    probes: bool = True,
) -> TrainResult:
    """Train one model of Section 4, the :class:`~.runs.Run` ``run`` (task, heads, head
    size, model size, seeds, profile of either kind, budget factor), as the module docstring
    says.

    ``run.seed`` draws the initial weights (and dropout masks); ``run.data_seed``
    (fresh-data profiles; default: the seed) the training batches,
    :func:`~.design.fresh_batch` of ``(data_seed, step)``, so that runs of one data stream
    and several initialisations (or the reverse) can be crossed; a run whose data seed is not
    its seed has its own files (``-d<D>``, :func:`~.design.run_name`), and a checkpoint of
    another data seed is refused. ``epochs`` overrides a finite-data profile's epoch count.
    With ``out_dir``, a checkpoint is written atomically (module docstring; its file:
    :meth:`~.runs.Run.checkpoint_path`) and an existing one is resumed (``resume=True``), so
    an interrupted run ends bitwise where an uninterrupted one would. ``stop_after`` ends
    this call after that many epochs or steps (to simulate an interruption). ``threads``:
    torch threads (default ``$BPARALLEL_THREADS`` or unchanged). ``attention_path``
    (default ``"fused"``) picks the training attention kernel
    (:mod:`bparallel.transformer.model`); a resumed run keeps the path its checkpoint was
    trained with, and naming another one is refused. ``probes=False`` (fresh data) skips
    the proxies and head probes through training (the same weights, a history without
    them); a checkpoint records it, and resuming it with the other setting is refused.

    ``device``: ``"cpu"`` (default) or ``"cuda"``. On the CPU a seed fixes every result
    and a resumed run is bitwise the uninterrupted one. On CUDA the initial weights, data
    and batch order are the CPU run's (all drawn on the CPU), dropout masks come from the
    GPU's generator (saved in the checkpoint, so a resumed run continues the same masks),
    and the GPU's kernels round differently from the CPU's and need not be deterministic:
    a CUDA run is a faithful run of the same seed, not bitwise the CPU one. The checkpoint
    and the weights record the GPU in ``hardware``; they load on any machine.
    """
    if not isinstance(run, Run):
        raise ValueError(f"run={type(run).__name__}: give a Run (bparallel.transformer.runs), "
                         "e.g. Run('copy', 4, 'quick') or Run.in_arm(task, heads, profile, arm)")
    p, recipe = run.profile, run.recipe
    dev = resolve_device(device)
    if attention_path is not None:
        one_of(attention_path, "attention_path", ATTENTION_PATHS, "paths")
    path = attention_path or "fused"
    if isinstance(p, FreshProfile):
        if epochs is not None:
            raise ValueError(f"epochs={epochs}: profile {p.name!r} trains on fresh data, in "
                             "steps (give budget_factor)")
        total = run.total
    else:
        if not probes:
            raise ValueError(f"probes=False: profile {p.name!r} trains on a finite set, "
                             "which records no probes")
        total = run.total if epochs is None else epochs
        positive_int(total, "epochs")
    if stop_after is not None:
        positive_int(stop_after, "stop_after")
    cfg = run.config

    with num_threads(threads):
        model = initial_model(run).to(dev)  # the same weights anywhere
        opt = adam_for(model, recipe)
        unit = (_Steps(run, total, model, probes) if isinstance(p, FreshProfile)
                else _Epochs(run.task, recipe, run.seed, total, model, progress))
        here = (hardware_string(dev), str(torch.__version__))
        segments = _segments(None, 0, p.unit, *here)
        start, ckpt_file = 0, None
        if out_dir is not None:
            ckpt_file = run.checkpoint_path(out_dir)
            if run.budget_factor > 1 and resume:
                _adopt(run.plain().checkpoint_path(out_dir), ckpt_file, total, **run.expect())
        if ckpt_file is not None and resume and ckpt_file.exists():
            ck = load_checkpoint(ckpt_file, **run.expect())
            if isinstance(p, FreshProfile) and data_seed_of(ck.data) != run.batch_seed:
                raise ValueError(f"checkpoint {ckpt_file} has data_seed="
                                 f"{data_seed_of(ck.data)}, not data_seed={run.batch_seed}")
            if ck.data.get("probes", True) != probes:
                raise ValueError(f"checkpoint {ckpt_file} was trained with probes="
                                 f"{ck.data.get('probes', True)}; resuming it with "
                                 f"probes={probes} would leave a history half without them")
            try:
                model.load_state_dict(ck.data["model"])
                opt.load_state_dict(ck.data["optimizer"])
            except (RuntimeError, ValueError, KeyError) as err:
                raise ValueError(f"checkpoint {ckpt_file}: state does not fit: {err}") from err
            if attention_path is not None and attention_path != ck.attention_path:
                raise ValueError(
                    f"checkpoint {ckpt_file} was trained with attention_path="
                    f"{ck.attention_path!r}; resuming with {attention_path!r} would not "
                    "continue the same run (the paths draw dropout masks differently): omit "
                    "attention_path to keep it")
            path = ck.attention_path
            set_rng_state(ck.data["rng"], dev)
            unit.restore(ck)
            start = ck.position
            segments = _segments(ck.data, start, p.unit, *here)
            if start > total:
                raise ValueError(f"checkpoint {ckpt_file} is at {p.unit} {start}, beyond "
                                 f"the {'budget' if p.unit == 'step' else 'epochs='}{total}")
        model.attention_path = path
        decays = isinstance(p, FreshProfile) and p.lr_schedule != "constant"
        saved_at = start if start else None

        def save(position: int) -> None:
            nonlocal saved_at
            if ckpt_file is None or saved_at == position:
                return
            saved_at = position
            atomic_torch_save({
                "format": unit.KIND.FORMAT, "task": run.task, "heads": run.heads,
                "seed": run.seed, "profile": p.name, "profile_config": recipe.to_dict(),
                "model_config": cfg.to_dict(), p.unit: position, **unit.state(),
                **run.record(), **({} if probes else {"probes": False}),
                "attention_path": path, "model": on_cpu(model.state_dict()),
                "optimizer": on_cpu(opt.state_dict()), "rng": rng_state(dev),
                "history": unit.history, "segments": segments,
                "torch_version": _joined(segments, "torch_version", ", "),
                "hardware": _joined(segments, "hardware", "; "),
            }, ckpt_file)

        unit.begin()
        position = start
        end = total if stop_after is None else min(total, start + stop_after)
        bar = tqdm(total=total, initial=start, desc=run.name, disable=not progress,
                   unit=p.unit)
        while position < end and not unit.done:
            model.train()
            for x, y in unit.batches(position):
                x, y = x.to(dev), y.to(dev)  # (B, T) each
                loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())  # logits (B, T, V)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if decays:  # the schedule's rate of this step (FreshProfile.lr_at)
                    for group in opt.param_groups:
                        group["lr"] = recipe.lr_at(position, total) * group.get("gain", 1.0)
                opt.step()
                unit.add(loss.item(), x.shape[0])
            position += 1
            bar.update(1)
            checkpoint, postfix = unit.after(position)
            if postfix:
                bar.set_postfix(**postfix)
            if checkpoint:
                save(position)
        bar.close()
        save(position)  # stopped between evaluations (stop_after), or nothing was trained
    model.eval()
    return TrainResult(model, run, position, unit.history, ckpt_file, start,
                       total if isinstance(p, FreshProfile) else None, unit.summary())


def projected_hours(seconds_per_step: float, profile: str | Profile, models: int = 8) -> float:
    """Wall time of ``models`` runs of the finite-data ``profile`` at ``seconds_per_step``,
    in hours."""
    p = get_profile(profile)
    steps = p.epochs * math.ceil(p.num_train / p.batch_size)
    return models * steps * seconds_per_step / 3600.0
