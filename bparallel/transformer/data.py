"""The synthetic datasets of Section 4.1 and the loaders that feed them.

Sequences of ``seq_len = 100`` tokens drawn independently and uniformly from
``vocab_size = 256`` symbols. Two tasks:

- ``copy``:  target = input, ``(x1, ..., x100) -> (x1, ..., x100)``;
- ``cycle``: target = input rolled right by one, ``(x1, ..., x100) -> (x100, x1, ..., x99)``.
  Under causal attention the first target (x100) cannot be predicted, so cycle accuracy tops
  out near 99% (:func:`predictable_mask`).

Randomness is a pure function of a seed. Independent streams are derived with
:class:`numpy.random.SeedSequence` from ``(seed, stream)``: training inputs, held-out inputs,
the loader's shuffle of every epoch, and the fresh sequences of Tables 5-6 never overlap.
The inputs do not depend on the task, so copy and cycle models see the same sequences.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import nonnegative_int, positive_int

TASKS = ("copy", "cycle")
SEQ_LEN = 100
VOCAB_SIZE = 256

# Stream identifiers for numpy.random.SeedSequence([seed, stream, ...]).
STREAMS = {"train": 0, "heldout": 1, "shuffle": 2, "fresh": 3}


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"task={task!r}: valid tasks are {list(TASKS)}")


def stream_rng(seed: int, stream: str, *extra: int) -> np.random.Generator:
    """The numpy Generator of one named stream (``STREAMS``) of ``seed``."""
    nonnegative_int(seed, "seed")
    if stream not in STREAMS:
        raise ValueError(f"stream={stream!r}: valid streams are {list(STREAMS)}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), STREAMS[stream], *extra]))


def random_sequences(
    num: int,
    *,
    seed: int,
    stream: str = "train",
    seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE,
) -> torch.Tensor:
    """``num`` sequences of i.i.d. uniform tokens, ``(num, seq_len)`` int64 (Section 4.1)."""
    positive_int(num, "num")
    positive_int(seq_len, "seq_len")
    positive_int(vocab_size, "vocab_size")
    rng = stream_rng(seed, stream)
    tokens = rng.integers(0, vocab_size, size=(num, seq_len), dtype=np.int64)
    return torch.from_numpy(tokens)


def make_targets(inputs: torch.Tensor, task: str) -> torch.Tensor:
    """Targets of ``task`` for ``inputs`` ``(..., T)``: copy = identity, cycle = roll by one."""
    _check_task(task)
    if task == "copy":
        return inputs.clone()
    return torch.roll(inputs, shifts=1, dims=-1)  # (x1..xT) -> (xT, x1..x_{T-1})


def predictable_mask(task: str, seq_len: int = SEQ_LEN) -> torch.Tensor:
    """Boolean ``(seq_len,)``: positions whose target a causal model can predict.

    Copy: all. Cycle: all but position 0, whose target ``x_T`` lies in the future.
    """
    _check_task(task)
    positive_int(seq_len, "seq_len")
    mask = torch.ones(seq_len, dtype=torch.bool)
    if task == "cycle":
        mask[0] = False
    return mask


@dataclass(frozen=True)
class SequenceDataset:
    """Inputs and targets of one task, both ``(N, T)`` int64."""

    task: str
    inputs: torch.Tensor
    targets: torch.Tensor

    def __len__(self) -> int:
        return int(self.inputs.shape[0])


def make_dataset(
    task: str,
    num: int,
    *,
    seed: int,
    stream: str = "train",
    seq_len: int = SEQ_LEN,
    vocab_size: int = VOCAB_SIZE,
) -> SequenceDataset:
    """Dataset I (copy) or II (cycle) of Section 4.1, drawn from ``(seed, stream)``."""
    _check_task(task)
    inputs = random_sequences(
        num, seed=seed, stream=stream, seq_len=seq_len, vocab_size=vocab_size
    )
    return SequenceDataset(task, inputs, make_targets(inputs, task))


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
    sel = torch.from_numpy(first)
    ds = loader.dataset
    return SequenceDataset(ds.task, ds.inputs[sel], ds.targets[sel])


def fresh_sequences(
    task: str, num: int = 1, *, seed: int, seq_len: int = SEQ_LEN, vocab_size: int = VOCAB_SIZE
) -> SequenceDataset:
    """Freshly drawn sequences (Tables 5-6 protocol), seeded through the ``"fresh"`` stream."""
    return make_dataset(task, num, seed=seed, stream="fresh", seq_len=seq_len,
                        vocab_size=vocab_size)
