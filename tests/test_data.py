"""Datasets and loaders of Section 4.1 (bparallel.transformer.data)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bparallel.transformer import data


def test_copy_and_cycle_targets():
    x = torch.tensor([[1, 2, 3, 4, 5]])
    assert data.make_targets(x, "copy").tolist() == [[1, 2, 3, 4, 5]]
    # (x1..xT) -> (xT, x1, ..., x_{T-1})
    assert data.make_targets(x, "cycle").tolist() == [[5, 1, 2, 3, 4]]
    ds = data.make_dataset("cycle", 7, seed=3)
    assert ds.inputs.shape == ds.targets.shape == (7, 100)
    assert torch.equal(ds.targets[:, 1:], ds.inputs[:, :-1])
    assert torch.equal(ds.targets[:, 0], ds.inputs[:, -1])


def test_tokens_uniform_and_seeded():
    a = data.random_sequences(400, seed=1)
    assert a.dtype == torch.int64 and a.min() >= 0 and a.max() <= 255
    counts = np.bincount(a.flatten().numpy(), minlength=256)
    expected = a.numel() / 256
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 255 + 6 * np.sqrt(2 * 255)  # 255 dof, six sigma
    assert torch.equal(a, data.random_sequences(400, seed=1))
    assert not torch.equal(a, data.random_sequences(400, seed=2))
    held = data.heldout_dataset("copy", 400, seed=1).inputs
    assert (held == a).all(-1).sum() == 0  # another stream
    # the task does not change the inputs: copy and cycle models see the same sequences
    assert torch.equal(data.make_dataset("copy", 5, seed=1).inputs,
                       data.make_dataset("cycle", 5, seed=1).inputs)


def test_predictable_mask():
    assert data.predictable_mask("copy", 4).tolist() == [True] * 4
    assert data.predictable_mask("cycle", 4).tolist() == [False, True, True, True]


def test_loader_epochs_are_seeded_permutations():
    ds = data.make_dataset("copy", 23, seed=0, seq_len=4)
    loader = data.ShuffledLoader(ds, 5, seed=9)
    assert len(loader) == 5
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == [5, 5, 5, 5, 3]
    seen = torch.cat([b[0] for b in batches])
    assert sorted(map(tuple, seen.tolist())) == sorted(map(tuple, ds.inputs.tolist()))
    assert loader.epoch == 1
    second = torch.cat([b[0] for b in loader])
    assert not torch.equal(seen, second)  # reshuffled
    # the order of an epoch is a function of (seed, epoch): a fresh loader restored to the
    # saved state continues identically
    other = data.ShuffledLoader(ds, 5, seed=9)
    other.load_state_dict({"seed": 9, "epoch": 1})
    assert torch.equal(torch.cat([b[0] for b in other]), second)
    np.testing.assert_array_equal(loader.order(4), data.ShuffledLoader(ds, 5, seed=9).order(4))
    with pytest.raises(ValueError, match="seed=1"):
        other.load_state_dict({"seed": 1, "epoch": 0})


def test_paper_protocol_takes_first_sequence_of_each_batch():
    ds = data.make_dataset("cycle", 120, seed=0, seq_len=6)
    loader = data.ShuffledLoader(ds, 10, seed=5)
    picked = data.paper_protocol_sequences(loader, epoch=3, num_batches=50)
    firsts = [x[0] for x, _ in loader.batches(3)]
    assert picked.inputs.shape == (12, 6)  # only 12 batches exist
    assert torch.equal(picked.inputs, torch.stack(firsts))
    assert torch.equal(picked.targets, data.make_targets(picked.inputs, "cycle"))
    assert len(data.paper_protocol_sequences(loader, epoch=3, num_batches=4)) == 4


def test_validation():
    with pytest.raises(ValueError, match=r"task='reverse'.*\['copy', 'cycle', 'first'"):
        data.make_dataset("reverse", 3, seed=0)
    with pytest.raises(ValueError, match="num=0"):
        data.random_sequences(0, seed=0)
    with pytest.raises(ValueError, match="seed=-1"):
        data.random_sequences(3, seed=-1)
    with pytest.raises(ValueError, match="batch_size=0"):
        data.ShuffledLoader(data.make_dataset("copy", 3, seed=0), 0, seed=0)
    with pytest.raises(ValueError, match="stream='test'"):
        data.stream_rng(0, "test")
