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


# --------------------------------------------------------------------------- graph tasks


def _mode_by_loop(seq):
    """The running mode with the incumbent keeping ties, and the tie mask, by a plain loop."""
    counts, mode, modes, ties = {}, None, [], []
    for x in seq:
        counts[x] = counts.get(x, 0) + 1
        top = max(counts.values())
        if mode is None or counts[x] > counts[mode]:
            mode = x
        modes.append(mode)
        ties.append(sum(c == top for c in counts.values()) > 1)
    return modes, ties


def test_first_targets_and_inputs():
    ds = data.make_dataset("first", 6, seed=2)
    assert torch.equal(ds.inputs, data.make_dataset("copy", 6, seed=2).inputs)  # the same draws
    assert (ds.targets == ds.inputs[:, :1]).all() and ds.mask.all()


def test_induction_sequences_and_targets_by_brute_force():
    ds = data.make_dataset("induction", 50, seed=3)
    s = data.induction_split(100)
    assert s == 51
    for x, y, m in zip(ds.inputs.tolist(), ds.targets.tolist(), ds.mask.tolist(), strict=True):
        assert len(set(x[:s])) == s  # the first part: distinct tokens
        assert len(set(x[s:])) == 100 - s and set(x[s:]) <= set(x[: s - 1])
        for t in range(100):
            first = x.index(x[t])
            assert y[t] == x[min(first + 1, 99)]
            assert m[t] == (t >= s) == (first < t)
    # the second half is in random order: no fixed offset finds the answer
    offsets = {(ds.inputs[i, s:] == ds.inputs[i, j]).nonzero()[0, 0].item() + s - j
               for i in range(5) for j in range(3)
               if (ds.inputs[i, s:] == ds.inputs[i, j]).any()}
    assert len(offsets) > 3
    np.testing.assert_array_equal(data.predictable_mask("induction", 100),
                                  np.arange(100) >= s)
    with pytest.raises(ValueError, match="vocab_size=40: induction needs at least 51"):
        data.induction_sequences(2, seed=0, vocab_size=40)


def test_majority_targets_and_ties_by_loop():
    ds = data.make_dataset("majority", 40, seed=4)
    for x, y, m in zip(ds.inputs.tolist(), ds.targets.tolist(), ds.mask.tolist(), strict=True):
        assert len(set(x)) <= data.MAJORITY_SYMBOLS
        modes, ties = _mode_by_loop(x)
        assert y == modes
        assert m == [not t for t in ties]
    # a hand example: counts a:2 b:2 at t=3 is a tie (masked), the incumbent a stays
    x = torch.tensor([[5, 5, 7, 7, 7, 5]])
    assert data.make_targets(x, "majority").tolist() == [[5, 5, 5, 5, 7, 7]]
    assert data.predictable(x, "majority").tolist() == [[True, True, True, False, True,
                                                         False]]
    with pytest.raises(ValueError, match="task='majority': its predictable positions depend"):
        data.predictable_mask("majority")
    with pytest.raises(ValueError, match="symbols=1"):
        data.alphabet_sequences(2, seed=0, symbols=1)


def test_histogram_counts_the_current_token_by_loop():
    ds = data.make_dataset("histogram", 40, seed=4)
    assert ds.mask.all()
    for x, y in zip(ds.inputs.tolist(), ds.targets.tolist(), strict=True):
        assert 2 <= len(set(x)) <= data.HISTOGRAM_SYMBOLS
        assert y == [x[: t + 1].count(v) for t, v in enumerate(x)]
    x = torch.tensor([[5, 5, 7, 5, 7]])
    assert data.make_targets(x, "histogram").tolist() == [[1, 2, 1, 3, 2]]
    assert data.predictable_mask("histogram", 5).all()
    # counts are tokens: a sequence as long as the vocabulary could count past it
    with pytest.raises(ValueError, match=r"inputs has 8 positions: .*T < vocab_size=8"):
        data.make_targets(torch.zeros(1, 8, dtype=torch.long), "histogram", vocab_size=8)
    assert data.make_targets(torch.zeros(1, 7, dtype=torch.long), "histogram",
                             vocab_size=8).tolist() == [list(range(1, 8))]


def test_histogram_no_attention_ceiling_exact_and_sampled():
    """The ceiling in closed form: 3 positions over 2 symbols, (1 + 1/2 + 1/2) / 3. Sampled:
    the best rule without attention (the most likely count at each position) scores the
    closed form on held-out sequences, within four standard errors; the current token
    itself (majority's rule) is almost never the count."""
    assert data.histogram_no_attention_ceiling(3, 2) == pytest.approx(2 / 3, abs=1e-15)
    ceiling = data.histogram_no_attention_ceiling()
    assert 0.25 < ceiling < 0.35
    ds = data.heldout_dataset("histogram", 2000, seed=3)
    from scipy.stats import binom

    T = ds.inputs.shape[1]
    guess = torch.tensor([1 + int(binom.pmf(np.arange(t + 1), t, 1 / data.HISTOGRAM_SYMBOLS)
                                  .argmax()) for t in range(T)])
    per_sequence = (ds.targets == guess).double().mean(1)  # (N,): independent sequences
    sampled = float(per_sequence.mean())
    se = float(per_sequence.std()) / np.sqrt(len(per_sequence))
    assert abs(sampled - ceiling) < 4 * se, (sampled, ceiling, se)
    assert float((ds.inputs == ds.targets).float().mean()) < 0.02
    for bad, message in (({"seq_len": 0}, "seq_len=0"), ({"symbols": 1}, "symbols=1")):
        with pytest.raises(ValueError, match=message):
            data.histogram_no_attention_ceiling(**bad)


def test_graph_task_streams_are_seeded_and_disjoint():
    for task in (*data.GRAPH_TASKS, *data.FRESH_ONLY_TASKS):
        a = data.make_dataset(task, 30, seed=1)
        assert torch.equal(a.inputs, data.make_dataset(task, 30, seed=1).inputs)
        held = data.heldout_dataset(task, 30, seed=1)
        assert not (held.inputs[:, None] == a.inputs[None]).all(-1).any()
        assert a.inputs.min() >= 0 and a.inputs.max() < 256
        sub = a.subset(slice(3, 7))
        assert torch.equal(sub.mask, a.mask[3:7]) and len(sub) == 4


def test_without_the_inputs_history_the_graph_tasks_are_at_chance():
    """What a model with no attention can know: the current token and its position. For
    first and induction the target is then almost never the current token (about chance);
    majority's is the current token about a third of the time (four symbols)."""
    for task, most in (("first", 0.02), ("induction", 0.0), ("majority", 0.45)):
        ds = data.make_dataset(task, 400, seed=5)
        own = ((ds.inputs == ds.targets) & ds.mask).sum() / ds.mask.sum()
        assert own <= most, (task, float(own))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("inputs", "message"), [
    (torch.tensor([[1.0, 2.0, 3.0]]), r"inputs has dtype torch.float32: token ids must be "
                                      "integers"),
    (torch.tensor([[True, False]]), "inputs has dtype torch.bool"),
    (torch.tensor([1, 2, 3]), r"inputs has shape \(3,\): expected \(N, T\).*x\[None\]"),
    (torch.zeros(2, 3, 4, dtype=torch.long), r"inputs has shape \(2, 3, 4\): expected \(N, T\)"),
    (torch.zeros(2, 0, dtype=torch.long), r"inputs has shape \(2, 0\)"),
    (torch.tensor([[0, 5, 256]]), r"tokens in \[0, 256\]: outside the vocabulary \[0, 256\)"),
    (torch.tensor([[-1, 5, 3]]), r"tokens in \[-1, 5\]: outside the vocabulary"),
    ([[1, 2, 3]], "inputs is a list: expected a torch tensor"),
])
@pytest.mark.parametrize("task", data.TASKS)
def test_task_functions_refuse_bad_tokens(task, inputs, message):
    calls = (lambda: data.make_targets(inputs, task), lambda: data.predictable(inputs, task),
             lambda: data.SequenceDataset.of(task, inputs))
    for call in calls:
        with pytest.raises(ValueError, match=message):
            call()


def test_task_functions_refuse_a_wrong_task_and_name_the_vocabulary():
    x = torch.tensor([[1, 2, 3]])
    for fn in (data.make_targets, data.predictable):
        with pytest.raises(ValueError, match=r"task='reverse': valid tasks are"):
            fn(x, "reverse")
    with pytest.raises(ValueError, match=r"task='reverse'"):
        data.task_inputs("reverse", 2, seed=0)
    # a smaller vocabulary is named in the message; tokens inside it pass
    with pytest.raises(ValueError, match=r"outside the vocabulary \[0, 3\) \(vocab_size=3\)"):
        data.make_targets(x, "copy", vocab_size=3)
    assert data.make_targets(x, "copy", vocab_size=4).tolist() == [[1, 2, 3]]
    with pytest.raises(ValueError, match="vocab_size=0"):
        data.predictable(x, "copy", vocab_size=0)
    # an empty batch of sequences is a batch: nothing to refuse
    assert data.make_targets(torch.zeros(0, 5, dtype=torch.long), "majority").shape == (0, 5)


@pytest.mark.parametrize("num", [0, -3, 2.5, True, "4"])
@pytest.mark.parametrize("make", [
    lambda n: data.random_sequences(n, seed=0),
    lambda n: data.induction_sequences(n, seed=0),
    lambda n: data.alphabet_sequences(n, seed=0),
    lambda n: data.task_inputs("first", n, seed=0),
    lambda n: data.make_dataset("majority", n, seed=0),
    lambda n: data.heldout_dataset("induction", n, seed=0),
], ids=["random", "induction", "majority", "task_inputs", "make_dataset", "heldout"])
def test_generators_refuse_non_positive_counts(make, num):
    with pytest.raises(ValueError, match=f"num={num!r}: must be a positive integer"):
        make(num)


def test_generators_refuse_bad_sizes_and_draws():
    for kw, message in (({"seq_len": 0}, "seq_len=0"), ({"vocab_size": -1}, "vocab_size=-1"),
                        ({"seed": 1.5}, "seed=1.5"), ({"stream": "step"}, "stream='step' needs "
                                                      "step="),
                        ({"stream": "step", "step": -1}, "step=-1")):
        for task in data.TASKS:
            with pytest.raises(ValueError, match=message):
                data.make_dataset(task, 2, **{"seed": 0, **kw})


def test_the_step_stream_draws_a_new_batch_every_step():
    """Fresh-data training: the batch of step k is a pure function of (seed, k), new at every
    step, from none of the other streams (SeedSequence pads with zeros, so step 0 of a
    stream that had no extra word would be that stream itself)."""
    for task in (*data.GRAPH_TASKS, *data.FRESH_ONLY_TASKS):
        def batch(step, seed=7, task=task):
            return data.make_dataset(task, 20, seed=seed, stream="step", step=step).inputs

        b0, b1 = batch(0), batch(1)
        assert torch.equal(b0, batch(0)) and not torch.equal(b0, b1)
        assert not torch.equal(b0, batch(0, seed=8))
        for stream in ("train", "heldout", "fresh"):
            other = data.make_dataset(task, 20, seed=7, stream=stream).inputs
            assert not (b0[:, None] == other[None]).all(-1).any(), stream
        ds = data.make_dataset(task, 20, seed=7, stream="step", step=3)
        assert torch.equal(ds.targets, data.make_targets(ds.inputs, task))
        assert torch.equal(ds.mask, data.predictable(ds.inputs, task))
