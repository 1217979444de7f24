"""The synthetic datasets of Section 4.1, the graph tasks of this book, and their loaders.

Sequences of ``seq_len = 100`` tokens over ``vocab_size = 256`` symbols, one target per
position. The paper's two tasks (:data:`PAPER_TASKS`), on i.i.d. uniform tokens:

- ``copy``:  target = input, ``(x1, ..., x100) -> (x1, ..., x100)``; needs no attention at
  all (each position holds its own answer);
- ``cycle``: target = input rolled right by one, ``(x1, ..., x100) -> (x100, x1, ..., x99)``;
  one hop, to the neighbouring position. Under causal attention the first target (x100)
  cannot be predicted, so cycle accuracy tops out near 99%.

The graph tasks (:data:`GRAPH_TASKS`), where information must travel through the attention
graph (positions counted from 0 below):

- ``first`` (long-range retrieval): every target is the first token, ``y_t = x_0``, on the
  paper's i.i.d. uniform sequences. One hop, from node 0 to every node: the longest edge of
  the causal DAG, and the only one that matters.
- ``induction`` (two-hop composition, Olsson et al. 2022): positions ``0..50`` hold 51
  distinct tokens, positions ``51..99`` a random arrangement of 49 of the first 50 of them.
  The target is the token that followed the current token where it first occurred,
  ``y_t = x_{f(t)+1}`` with ``f(t)`` the first position holding ``x_t``. In the second half
  that answer lies in the past but at a position the model can find only by content: one hop
  writes each token's predecessor into its position, a second hop matches the current token
  against those predecessors and reads the token found there. In the first half
  (``f(t) = t``) the target is the next, unseen token: unpredictable.
- ``majority`` (aggregation over the prefix): each sequence draws an alphabet of
  :data:`MAJORITY_SYMBOLS` symbols from the 256 and then its tokens uniformly from that
  alphabet; the target is the most frequent symbol of ``x_0..x_t``. Every earlier token
  counts: the answer at the sink depends on the signal of every node. Tie rule: the mode
  changes only when another symbol's count strictly exceeds it (the incumbent keeps a tie);
  positions where two or more symbols share the largest count are masked as unpredictable.

The aggregation task trained on fresh data only (:data:`FRESH_ONLY_TASKS`, no finite-data
profile), the replacement of majority, which no head count learned:

- ``histogram`` (counting, the ``hist`` program of Weiss et al. 2021, "Thinking Like
  Transformers"): sequences drawn like majority's, from an alphabet of
  :data:`HISTOGRAM_SYMBOLS` symbols; the target is how often the current token has occurred
  so far, itself included, ``y_t = #{s <= t : x_s = x_t}``, written as the token id of that
  count (``1..T``, so ``T < vocab_size``). Every earlier position holding the current token
  counts, and every position is predictable. Without attention a model knows only ``x_t``
  and ``t``; its best guess is the most likely count, ``1 + mode of Binomial(t, 1/k)``
  (:func:`histogram_no_attention_ceiling`: 30% of positions for ``k = 16``).

Targets and masks are pure functions of the inputs (:func:`make_targets`,
:func:`predictable`), so any set of sequences can be re-scored. :func:`predictable` gives the
``(N, T)`` mask of positions whose target a causal model can know from the inputs so far;
for copy, cycle, first and induction it is the same for every sequence
(:func:`predictable_mask`), for majority it depends on the sequence.

Randomness is a pure function of a seed. Independent streams are derived with
:class:`numpy.random.SeedSequence` from ``(seed, stream)``: training inputs, held-out inputs,
the loader's shuffle of every epoch, the fresh sequences of Tables 5-6 and the training
batches of fresh-data training (stream ``"step"``, one draw per step: ``(seed, "step",
step)``, :func:`bparallel.transformer.design.fresh_batch`) never overlap. The paper's inputs
do not depend on the task, so copy, cycle and first models see the same sequences; induction
and majority draw sequences of their own structure from the same streams.

The task functions check what they are given at the boundary (:func:`check_tokens`):
``(N, T)`` integer tokens in ``[0, vocab_size)``, a known task, positive counts; anything
else is a ``ValueError`` naming the argument and the problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import nonnegative_int, one_of, positive_int

__all__ = [
    "PAPER_TASKS", "GRAPH_TASKS", "FRESH_ONLY_TASKS", "TASKS", "SEQ_LEN", "VOCAB_SIZE",
    "MAJORITY_SYMBOLS", "HISTOGRAM_SYMBOLS", "ALPHABET_SYMBOLS", "HOPS", "STREAMS",
    "check_tokens", "stream_rng", "random_sequences", "induction_split",
    "induction_sequences", "alphabet_sequences", "task_inputs",
    "histogram_no_attention_ceiling", "make_targets", "predictable_mask", "predictable",
    "SequenceDataset", "make_dataset", "heldout_dataset", "ShuffledLoader",
    "paper_protocol_sequences", "fresh_sequences",
]

PAPER_TASKS = ("copy", "cycle")
GRAPH_TASKS = ("first", "induction", "majority")
FRESH_ONLY_TASKS = ("histogram",)
TASKS = PAPER_TASKS + GRAPH_TASKS + FRESH_ONLY_TASKS
SEQ_LEN = 100
VOCAB_SIZE = 256
MAJORITY_SYMBOLS = 4  # alphabet size of one majority sequence
HISTOGRAM_SYMBOLS = 16  # alphabet size of one histogram sequence
# The tasks whose sequences come from a small alphabet per sequence, and its size.
ALPHABET_SYMBOLS = {"majority": MAJORITY_SYMBOLS, "histogram": HISTOGRAM_SYMBOLS}

# What each task needs of the attention graph, in a phrase (the chapters' tables use it).
HOPS = {
    "copy": "none: each position holds its own answer",
    "cycle": "one hop, from the previous position",
    "first": "one hop, from position 0 to every position",
    "induction": "two hops: previous token, then a match by content",
    "majority": "every earlier position, aggregated",
    "histogram": "every earlier position holding the current token, counted",
}

# Stream identifiers for numpy.random.SeedSequence([seed, stream, ...]). A SeedSequence
# pads its entropy with zeros, so [seed, s] and [seed, s, 0] are the same stream: a stream
# is used either without extra words ("train", "heldout", "fresh") or always with them
# ("shuffle": the epoch, "step": the training step of fresh-data training).
STREAMS = {"train": 0, "heldout": 1, "shuffle": 2, "fresh": 3, "step": 4}


def _check_task(task: str) -> None:
    one_of(task, "task", TASKS, "tasks")


def check_tokens(inputs: object, name: str = "inputs", vocab_size: int = VOCAB_SIZE
                 ) -> torch.Tensor:
    """``inputs`` checked as token sequences: a torch integer tensor ``(N, T)`` (``N >= 0``
    sequences of ``T >= 1`` positions) with every token in ``[0, vocab_size)``.

    A float or bool tensor, another number of dimensions (a single sequence ``(T,)`` too:
    write ``x[None]``) or a token outside the vocabulary is a ``ValueError`` naming
    ``name``. Returns ``inputs`` unchanged."""
    positive_int(vocab_size, "vocab_size")
    if not isinstance(inputs, torch.Tensor):
        raise ValueError(f"{name} is a {type(inputs).__name__}: expected a torch tensor of "
                         "token ids (N, T)")
    if inputs.dtype == torch.bool or inputs.is_floating_point() or inputs.is_complex():
        raise ValueError(f"{name} has dtype {inputs.dtype}: token ids must be integers "
                         "(e.g. torch.int64)")
    if inputs.ndim != 2 or inputs.shape[1] < 1:
        raise ValueError(f"{name} has shape {tuple(inputs.shape)}: expected (N, T), N "
                         "sequences of T >= 1 tokens (one sequence x: x[None])")
    if inputs.numel():
        lo, hi = int(inputs.min()), int(inputs.max())
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"{name} has tokens in [{lo}, {hi}]: outside the vocabulary "
                             f"[0, {vocab_size}) (vocab_size={vocab_size})")
    return inputs


def stream_rng(seed: int, stream: str, *extra: int) -> np.random.Generator:
    """The numpy Generator of one named stream (``STREAMS``) of ``seed``; ``extra``
    non-negative integers select one draw of it (the epoch of ``"shuffle"``, the step of
    ``"step"``)."""
    nonnegative_int(seed, "seed")
    one_of(stream, "stream", STREAMS, "streams")
    for i, word in enumerate(extra):
        nonnegative_int(word, f"extra[{i}]")
    return np.random.default_rng(np.random.SeedSequence([int(seed), STREAMS[stream],
                                                          *map(int, extra)]))


def _rng(seed: int, stream: str, step: int | None) -> np.random.Generator:
    """The stream's Generator, of draw ``step`` when given (``"step"`` needs one)."""
    if stream == "step" and step is None:
        raise ValueError("stream='step' needs step=: the training step whose batch to draw")
    if step is not None:
        return stream_rng(seed, stream, nonnegative_int(step, "step"))
    return stream_rng(seed, stream)


def random_sequences(
    num: int,
    *,
    seed: int,
    stream: str = "train",
    seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE,
    step: int | None = None,
) -> torch.Tensor:
    """``num`` sequences of i.i.d. uniform tokens, ``(num, seq_len)`` int64 (Section 4.1).

    ``step``: the draw of a stream used per step (``"step"``: fresh-data training)."""
    positive_int(num, "num")
    positive_int(seq_len, "seq_len")
    positive_int(vocab_size, "vocab_size")
    rng = _rng(seed, stream, step)
    tokens = rng.integers(0, vocab_size, size=(num, seq_len), dtype=np.int64)
    return torch.from_numpy(tokens)


def induction_split(seq_len: int) -> int:
    """First position of an induction sequence's second half: ``51`` at ``T = 100``.

    The first ``split`` positions hold distinct tokens; the ``seq_len - split`` positions
    after them repeat tokens ``0..split-2`` of the first part (each has a successor there).
    """
    return seq_len // 2 + 1


def induction_sequences(
    num: int, *, seed: int, stream: str = "train", seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE, step: int | None = None,
) -> torch.Tensor:
    """``num`` induction sequences ``(num, seq_len)`` int64 (see the module docstring).

    Positions ``0..s-1`` (``s`` = :func:`induction_split`) hold ``s`` distinct tokens drawn
    uniformly without replacement; positions ``s..T-1`` hold ``T - s`` distinct tokens of
    positions ``0..s-2``, chosen and ordered uniformly at random.
    """
    positive_int(num, "num")
    s = induction_split(positive_int(seq_len, "seq_len"))
    if seq_len < 3:
        raise ValueError(f"seq_len={seq_len}: induction needs at least 3 positions")
    if positive_int(vocab_size, "vocab_size") < s:
        raise ValueError(f"vocab_size={vocab_size}: induction needs at least {s} symbols for "
                         f"seq_len={seq_len} (the first {s} tokens are distinct)")
    rng = _rng(seed, stream, step)
    first = rng.permuted(np.broadcast_to(np.arange(vocab_size), (num, vocab_size)),
                         axis=1)[:, :s]  # (N, s): distinct tokens
    picks = rng.permuted(np.broadcast_to(np.arange(s - 1), (num, s - 1)),
                         axis=1)[:, : seq_len - s]  # (N, T - s): positions 0..s-2
    second = np.take_along_axis(first, picks, axis=1)
    return torch.from_numpy(np.concatenate([first, second], axis=1).astype(np.int64))


def alphabet_sequences(
    num: int, *, seed: int, stream: str = "train", seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE, symbols: int = MAJORITY_SYMBOLS, step: int | None = None,
) -> torch.Tensor:
    """``num`` sequences ``(num, seq_len)`` int64 over small alphabets (majority's and
    histogram's): per sequence an alphabet of ``symbols`` distinct symbols drawn uniformly
    from ``vocab_size``, then i.i.d. uniform tokens from that alphabet."""
    positive_int(num, "num")
    positive_int(seq_len, "seq_len")
    positive_int(vocab_size, "vocab_size")
    if not 2 <= positive_int(symbols, "symbols") <= vocab_size:
        raise ValueError(f"symbols={symbols}: must lie in 2..vocab_size={vocab_size}")
    rng = _rng(seed, stream, step)
    alphabet = rng.permuted(np.broadcast_to(np.arange(vocab_size), (num, vocab_size)),
                            axis=1)[:, :symbols]  # (N, k)
    which = rng.integers(0, symbols, size=(num, seq_len))
    return torch.from_numpy(np.take_along_axis(alphabet, which, axis=1).astype(np.int64))


def task_inputs(
    task: str, num: int, *, seed: int, stream: str = "train", seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE, step: int | None = None,
) -> torch.Tensor:
    """The input sequences of ``task`` ``(num, seq_len)``: i.i.d. uniform for copy, cycle and
    first (the same sequences for all three), structured for induction, and over a small
    alphabet per sequence for majority and histogram (:func:`alphabet_sequences`);
    ``step``: the draw of a per-step stream (:func:`random_sequences`)."""
    _check_task(task)
    kw = {"seed": seed, "stream": stream, "seq_len": seq_len, "vocab_size": vocab_size,
          "step": step}
    if task == "induction":
        return induction_sequences(num, **kw)
    if task in ALPHABET_SYMBOLS:
        return alphabet_sequences(num, symbols=ALPHABET_SYMBOLS[task], **kw)
    return random_sequences(num, **kw)


def _first_occurrence(inputs: torch.Tensor) -> torch.Tensor:
    """``f[..., t]``: the first position holding ``inputs[..., t]`` ``(..., T)`` (tokens
    non-negative): per sequence, the smallest position of each symbol, read at each token."""
    flat = inputs.reshape(-1, inputs.shape[-1])  # (N, T)
    N, T = flat.shape
    if not flat.numel():
        return torch.zeros_like(inputs)
    pos = torch.arange(T, device=flat.device).expand(N, T)
    first = torch.full((N, int(flat.max()) + 1), T, dtype=pos.dtype, device=flat.device)
    first.scatter_reduce_(1, flat, pos, reduce="amin")  # (N, V): first position of a symbol
    return first.gather(1, flat).view(inputs.shape)  # (..., T)


def _counts_so_far(flat: torch.Tensor) -> torch.Tensor:
    """``c[n, t, s] = #{r <= t : x_r = x_s}`` for ``flat`` ``(N, T)``, zero for ``s > t``:
    at each position, how often each earlier position's symbol has occurred so far
    ``(N, T, T)`` int16 (majority's counts; histogram reads the diagonal ``s = t``)."""
    T = flat.shape[1]
    same = (flat[:, :, None] == flat[:, None, :]).to(torch.int16)  # (N, r, s)
    counts = same.cumsum(1, dtype=torch.int16)  # (N, t, s)
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # s <= t
    return torch.where(causal, counts, torch.zeros((), dtype=torch.int16))


def _majority(inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The running mode of ``inputs`` ``(..., T)`` (the incumbent keeps a tie) and the mask
    of positions without a tie for the largest count, both ``(..., T)``."""
    flat = inputs.reshape(-1, inputs.shape[-1])  # (N, T)
    T = flat.shape[1]
    counts = _counts_so_far(flat)  # (N, t, s)
    top = counts.amax(-1)  # (N, T): the largest count at t
    # symbols holding the top count, each counted once (at its first occurrence)
    first = _first_occurrence(flat)  # (N, T)
    is_first = first == torch.arange(T)  # (N, s): s is its symbol's first position
    holders = ((counts == top[:, :, None]) & is_first[:, None, :]).sum(-1)  # (N, T)
    # the mode changes only when x_t's count beats the old top: it is x at the last such t
    own = counts.diagonal(dim1=1, dim2=2)  # (N, T): count of x_t at t
    beats = torch.ones_like(flat, dtype=torch.bool)  # t = 0: x_0 is the first mode
    beats[:, 1:] = own[:, 1:] > top[:, :-1]
    last = torch.where(beats, torch.arange(T), 0).cummax(-1).values  # (N, T)
    mode = flat.gather(1, last)
    return mode.view(inputs.shape), (holders == 1).view(inputs.shape)


def _histogram(inputs: torch.Tensor) -> torch.Tensor:
    """``y[..., t] = #{s <= t : x_s = x_t}`` for ``inputs`` ``(..., T)``: how often the
    current token has occurred so far, itself included."""
    flat = inputs.reshape(-1, inputs.shape[-1])  # (N, T)
    own = _counts_so_far(flat).diagonal(dim1=1, dim2=2)  # (N, T): count of x_t at t
    return own.to(torch.int64).view(inputs.shape)


def histogram_no_attention_ceiling(seq_len: int = SEQ_LEN,
                                   symbols: int = HISTOGRAM_SYMBOLS) -> float:
    """The most a model without attention gets right on histogram: it knows ``x_t`` and
    ``t`` only, and the count of ``x_t`` among the ``t`` earlier tokens is
    ``Binomial(t, 1/symbols)``, so its best guess at ``t`` is right with probability
    ``max_c P(Binomial(t, 1/symbols) = c)``; the mean over the ``seq_len`` positions."""
    from scipy.stats import binom

    positive_int(seq_len, "seq_len")
    if positive_int(symbols, "symbols") < 2:
        raise ValueError(f"symbols={symbols}: a histogram alphabet needs at least 2 symbols")
    return float(np.mean([binom.pmf(np.arange(t + 1), t, 1 / symbols).max()
                          for t in range(seq_len)]))


def make_targets(inputs: torch.Tensor, task: str, *, vocab_size: int = VOCAB_SIZE
                 ) -> torch.Tensor:
    """Targets of ``task`` for ``inputs`` ``(N, T)`` (definitions: the module docstring):
    copy = identity, cycle = roll by one, first = ``x_0`` everywhere, induction = the
    successor of the current token's first occurrence, majority = the running mode,
    histogram = the count of the current token so far.

    ``inputs`` must be integer tokens in ``[0, vocab_size)`` (:func:`check_tokens`); for
    histogram ``T < vocab_size`` (a count up to ``T`` is a token)."""
    _check_task(task)
    check_tokens(inputs, "inputs", vocab_size)
    if task == "histogram":
        if inputs.shape[-1] >= vocab_size:
            raise ValueError(f"inputs has {inputs.shape[-1]} positions: histogram's targets "
                             f"(counts up to T) must be tokens, so T < vocab_size={vocab_size}")
        return _histogram(inputs)
    if task == "copy":
        return inputs.clone()
    if task == "cycle":
        return torch.roll(inputs, shifts=1, dims=-1)  # (x1..xT) -> (xT, x1..x_{T-1})
    if task == "first":
        return inputs[..., :1].expand_as(inputs).clone()
    if task == "induction":
        T = inputs.shape[-1]
        nxt = (_first_occurrence(inputs) + 1).clamp(max=T - 1)
        return torch.gather(inputs, -1, nxt)
    return _majority(inputs)[0]


def predictable_mask(task: str, seq_len: int = SEQ_LEN) -> torch.Tensor:
    """Boolean ``(seq_len,)``: positions whose target a causal model can predict, for the
    tasks where this does not depend on the sequence.

    Copy and first: all. Cycle: all but position 0, whose target ``x_T`` lies in the future.
    Induction: the second half (from :func:`induction_split` on). Histogram: all (a count
    is known from the prefix). Majority depends on the sequence (its ties): use
    :func:`predictable`.
    """
    _check_task(task)
    positive_int(seq_len, "seq_len")
    if task == "majority":
        raise ValueError("task='majority': its predictable positions depend on the sequence "
                         "(ties); use predictable(inputs, 'majority')")
    mask = torch.ones(seq_len, dtype=torch.bool)
    if task == "cycle":
        mask[0] = False
    if task == "induction":
        mask[: induction_split(seq_len)] = False
    return mask


def predictable(inputs: torch.Tensor, task: str, *, vocab_size: int = VOCAB_SIZE
                ) -> torch.Tensor:
    """Boolean ``(N, T)``: the positions of ``inputs`` ``(N, T)`` whose target is predictable.

    :func:`predictable_mask` broadcast to the inputs, except for majority (no tie for the
    largest count so far) and induction on sequences not drawn by
    :func:`induction_sequences` (there: the current token occurred earlier). ``inputs`` as
    for :func:`make_targets`.
    """
    _check_task(task)
    check_tokens(inputs, "inputs", vocab_size)
    if task == "majority":
        return _majority(inputs)[1]
    if task == "induction":
        T = inputs.shape[-1]
        return _first_occurrence(inputs) < torch.arange(T)
    return predictable_mask(task, inputs.shape[-1]).expand(inputs.shape).clone()


@dataclass(frozen=True)
class SequenceDataset:
    """Inputs and targets of one task, both ``(N, T)`` int64, and the ``(N, T)`` boolean mask
    of predictable positions (:func:`predictable`)."""

    task: str
    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    @classmethod
    def of(cls, task: str, inputs: torch.Tensor, *, vocab_size: int = VOCAB_SIZE
           ) -> SequenceDataset:
        """The dataset of ``task`` on ``inputs`` ``(N, T)``: targets and mask computed
        (:func:`make_targets`, :func:`predictable`; majority's running mode once)."""
        _check_task(task)
        check_tokens(inputs, "inputs", vocab_size)
        if task == "majority":
            return cls(task, inputs, *_majority(inputs))
        return cls(task, inputs, make_targets(inputs, task, vocab_size=vocab_size),
                   predictable(inputs, task, vocab_size=vocab_size))

    def subset(self, index: torch.Tensor | slice) -> SequenceDataset:
        """The sequences ``index`` (a slice or an index tensor) of this dataset."""
        return SequenceDataset(self.task, self.inputs[index], self.targets[index],
                               self.mask[index])


def make_dataset(
    task: str,
    num: int,
    *,
    seed: int,
    stream: str = "train",
    seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE,
    step: int | None = None,
) -> SequenceDataset:
    """The dataset of ``task`` drawn from ``(seed, stream)``: Dataset I (copy) or II (cycle)
    of Section 4.1, or a graph task's (:func:`task_inputs`); ``step``: the draw of a
    per-step stream (``"step"``: the batch of one step of fresh-data training)."""
    _check_task(task)
    positive_int(num, "num")
    inputs = task_inputs(task, num, seed=seed, stream=stream, seq_len=seq_len,
                         vocab_size=vocab_size, step=step)
    return SequenceDataset.of(task, inputs, vocab_size=vocab_size)


def heldout_dataset(
    task: str, num: int = 2000, *, seed: int, seq_len: int = SEQ_LEN, vocab_size: int = VOCAB_SIZE
) -> SequenceDataset:
    """Held-out evaluation set: the ``"heldout"`` stream, disjoint from training draws."""
    return make_dataset(
        task, num, seed=seed, stream="heldout", seq_len=seq_len, vocab_size=vocab_size
    )


class ShuffledLoader:
    """Mini-batches of a :class:`SequenceDataset`, reshuffled every epoch.

    The order of epoch ``e`` is a pure function of ``(seed, e)``, so the loader's whole state
    is its seed and the next epoch number (:meth:`state_dict`). Iterating yields the batches
    of the current epoch, then advances the epoch counter. The last batch may be short.
    """

    def __init__(
        self, dataset: SequenceDataset, batch_size: int = 50, *, seed: int, shuffle: bool = True
    ) -> None:
        positive_int(batch_size, "batch_size")
        nonnegative_int(seed, "seed")
        self.dataset, self.batch_size, self.seed, self.shuffle = dataset, batch_size, seed, shuffle
        self.epoch = 0

    def __len__(self) -> int:
        return -(-len(self.dataset) // self.batch_size)

    def order(self, epoch: int) -> np.ndarray:
        """Permutation of the dataset indices used in ``epoch``."""
        if not self.shuffle:
            return np.arange(len(self.dataset))
        return stream_rng(self.seed, "shuffle", int(epoch)).permutation(len(self.dataset))

    def batches(self, epoch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """The ``(inputs, targets)`` batches of ``epoch``, each ``(b, T)``."""
        idx = torch.from_numpy(self.order(epoch))
        for start in range(0, len(idx), self.batch_size):
            sel = idx[start : start + self.batch_size]
            yield self.dataset.inputs[sel], self.dataset.targets[sel]

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        epoch = self.epoch
        yield from self.batches(epoch)
        self.epoch = epoch + 1

    def state_dict(self) -> dict[str, int]:
        return {"seed": int(self.seed), "epoch": int(self.epoch)}

    def load_state_dict(self, state: dict[str, int]) -> None:
        if int(state["seed"]) != self.seed:
            raise ValueError(f"loader state has seed={state['seed']}, this loader {self.seed}")
        self.epoch = int(state["epoch"])


def paper_protocol_sequences(
    loader: ShuffledLoader, epoch: int, num_batches: int = 50
) -> SequenceDataset:
    """The sequences of Tables 1-4 as the published code picks them.

    The first sequence of each of the first ``num_batches`` batches of the shuffled training
    loader in ``epoch`` (at most ``len(loader)`` batches when the dataset is smaller).
    """
    positive_int(num_batches, "num_batches")
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
        raise ValueError(f"epoch={epoch!r}: must be a non-negative integer")
    order = loader.order(epoch)
    first = order[:: loader.batch_size][:num_batches]  # first index of each batch
    return loader.dataset.subset(torch.from_numpy(first))


def fresh_sequences(
    task: str, num: int = 1, *, seed: int, seq_len: int = SEQ_LEN, vocab_size: int = VOCAB_SIZE
) -> SequenceDataset:
    """Freshly drawn sequences (Tables 5-6 protocol), seeded through the ``"fresh"`` stream."""
    return make_dataset(task, num, seed=seed, stream="fresh", seq_len=seq_len,
                        vocab_size=vocab_size)
