"""The condition number of the concatenated heads' outputs: numpy's condition number on a
full-rank matrix, rounding left out of a rank-deficient one, the heads' outputs the output
projection reads (as the ablation's hooks capture them), the probe through training (every
probe step, its step 0 the initial weights', a run begun without it resumed bitwise and
without it), bad input refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bparallel.transformer.checkpoints import load_checkpoint
from bparallel.transformer.conditioning import (
    PROBE_KEY,
    attention_conditioning,
    head_outputs,
    log_condition,
)
from bparallel.transformer.design import PROFILES, fresh_heldout
from bparallel.transformer.model import ModelConfig, Transformer
from bparallel.transformer.runs import Run
from bparallel.transformer.shipped import ship
from bparallel.transformer.train import initial_model, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = PROFILES["fresh-tiny"]


def test_log_condition_is_numpys_condition_number_of_a_full_rank_matrix():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 16)) @ np.diag(np.logspace(0, 3, 16))
    assert log_condition(torch.tensor(x)) == pytest.approx(math.log10(np.linalg.cond(x)),
                                                           rel=1e-10)
    # a (N, T, A) tensor is read as N T rows of A columns; scale does not condition
    y = torch.tensor(x).reshape(10, 20, 16)
    assert log_condition(y) == pytest.approx(log_condition(1e-3 * y), rel=1e-10)
    # an orthogonal matrix is perfectly conditioned
    q, _ = np.linalg.qr(rng.standard_normal((50, 8)))
    assert log_condition(torch.tensor(q)) == pytest.approx(0.0, abs=1e-12)


def test_rounding_is_not_conditioning():
    """Columns of zeros, or of values below float32's resolution of the largest singular
    value, are rank lost, not a huge condition number: the spectrum above that counts."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 6)) @ np.diag([1, 2, 3, 4, 5, 40.0])
    padded = np.hstack([a, np.zeros((300, 3))])
    assert log_condition(torch.tensor(padded)) == pytest.approx(
        math.log10(np.linalg.cond(a)), rel=1e-10)
    dust = np.hstack([a, 1e-12 * rng.standard_normal((300, 2))])  # below float32's reach
    assert np.linalg.cond(dust) > 1e10
    assert log_condition(torch.tensor(dust)) == pytest.approx(
        math.log10(np.linalg.cond(a)), rel=1e-9)
    with pytest.raises(ValueError, match="outputs: every singular value is zero"):
        log_condition(torch.zeros(5, 3))
    # a diverged model's outputs: missing, not an error that would stop its training
    assert math.isnan(log_condition(torch.tensor([[1.0, float("nan")], [0.0, 1.0]])))
    assert math.isnan(log_condition(torch.tensor([[1.0, float("inf")], [0.0, 1.0]])))


def test_the_heads_outputs_are_what_the_output_projection_reads():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=4, head_size=8, seq_len=16)).train()
    inputs = torch.randint(0, model.config.vocab_size, (3, 16))
    outs = head_outputs(model, inputs)
    assert model.training  # the mode is restored
    assert [tuple(y.shape) for y in outs] == [(3, 16, 32)] * model.config.n_layers
    # another path: the output projection of them is each attention's output, as a hook on
    # the attention module itself records it
    model.eval()
    attn_out: list[torch.Tensor] = []
    hooks = [b.attn.register_forward_hook(lambda mod, args, out: attn_out.append(out[0]))
             for b in model.blocks]
    try:
        with torch.no_grad():
            model(inputs)
    finally:
        for h in hooks:
            h.remove()
    with torch.no_grad():
        for b, y, a in zip(model.blocks, outs, attn_out, strict=True):
            assert torch.equal(b.attn.out(y), a)  # the same operation on the same tensor
    assert attention_conditioning(model, inputs) == pytest.approx(
        float(np.mean([log_condition(y) for y in outs])), rel=1e-15)
    assert not any(b.attn.out._forward_pre_hooks for b in model.blocks)  # hooks removed


def test_bad_input_is_refused():
    model = Transformer(ModelConfig(n_heads=2, seq_len=8))
    with pytest.raises(ValueError, match="model: expected a bparallel Transformer"):
        head_outputs(torch.nn.Linear(2, 2), torch.zeros(1, 8, dtype=torch.long))
    with pytest.raises(ValueError, match=r"inputs: expected a \(N, T\) tensor"):
        head_outputs(model, torch.zeros(1, 8))
    with pytest.raises(ValueError, match=r"inputs: expected a \(N, T\) tensor"):
        head_outputs(model, torch.zeros(8, dtype=torch.long))
    with pytest.raises(ValueError, match=r"inputs: expected a \(N, T\) tensor"):
        head_outputs(model, [[1, 2]])
    with pytest.raises(ValueError, match="inputs: no sequences"):
        head_outputs(model, torch.zeros(0, 8, dtype=torch.long))


def test_training_probes_the_conditioning_at_every_probe_step(tmp_path):
    """At every probe step, finite; at step 0, the initial weights' on the probe sequences
    (as chapter 12's horse race computes it before training); a run whose checkpoint was
    written before the probe existed resumes bitwise and goes on without it."""
    done = train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=tmp_path / "a", progress=False)
    probes = done.history["probe"]
    assert len(probes[PROBE_KEY]) == len(probes["step"]) == 5
    assert all(math.isfinite(v) and v >= 0 for v in probes[PROBE_KEY])
    inputs = fresh_heldout("induction", TINY).inputs[: TINY.probe_sequences]
    assert probes[PROBE_KEY][0] == attention_conditioning(
        initial_model(Run("induction", 8, TINY, head_size=16)), inputs)
    assert len(set(probes[PROBE_KEY])) > 1  # training moves it
    entry = ship(done.checkpoint, tmp_path / "models", profile=TINY)
    assert entry["probes"][PROBE_KEY] == pytest.approx(probes[PROBE_KEY], rel=1e-5)  # 6 digits

    # a run begun before the probe: its checkpoint's history has no conditioning
    train(Run.in_arm("induction", 8, TINY, "head16"),
          out_dir=tmp_path / "b", stop_after=5, progress=False)
    file = tmp_path / "b" / "induction-h08-hs16.ckpt.pt"
    data = torch.load(file, weights_only=True)
    del data["history"]["probe"][PROBE_KEY]
    torch.save(data, file)
    res = train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=tmp_path / "b", progress=False)
    assert res.resumed_from == 5 and PROBE_KEY not in res.history["probe"]
    a, b = done.model.state_dict(), res.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)  # the probe never touches the run
    assert load_checkpoint(res.checkpoint).history["probe"]["step"] == probes["step"]
