"""Training, checkpoints and shipped weights (bparallel.transformer.train), tiny profile."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch
from torch import nn

from bparallel.transformer import checkpoints, design, runtime, shipped
from bparallel.transformer import train as tr
from bparallel.transformer.checkpoints import load_checkpoint, sha256_file
from bparallel.transformer.data import make_dataset
from bparallel.transformer.evaluation import TokenScores, evaluate_accuracy
from bparallel.transformer.runs import Run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_profiles():
    paper = design.PROFILES["paper"]
    assert (paper.num_train, paper.epochs, paper.batch_size, paper.lr, paper.dropout) == (
        5000, 200, 50, 1e-3, 0.1)
    quick = design.PROFILES["quick"]
    assert 200 <= quick.num_train <= 2000 and quick.epochs <= 10
    assert (quick.batch_size, quick.lr, quick.dropout, quick.seq_len) == (50, 1e-3, 0.1, 100)
    with pytest.raises(ValueError, match=r"profile='fast'.*'paper', 'quick'"):
        design.get_profile("fast")
    # 100 steps per epoch in the paper: 8 models x 200 epochs x 100 steps x 1 s = 444.4 h
    assert tr.projected_hours(1.0, "paper") == pytest.approx(8 * 200 * 100 / 3600)


def _states_equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_resume_is_bitwise_identical(tmp_path):
    straight = tr.train(Run("cycle", 4, "tiny"), out_dir=tmp_path / "a", epochs=3, progress=False)
    first = tr.train(Run("cycle", 4, "tiny"), out_dir=tmp_path / "b", epochs=3, stop_after=2,
                     progress=False)
    assert first.epoch == 2
    # scramble every global RNG, as a new process would have them
    torch.manual_seed(123)
    np.random.seed(5)  # noqa: NPY002
    random.seed(7)
    resumed = tr.train(Run("cycle", 4, "tiny"), out_dir=tmp_path / "b", epochs=3, progress=False)
    assert resumed.resumed_from == 2 and resumed.epoch == 3
    assert _states_equal(straight.model.state_dict(), resumed.model.state_dict())
    a = checkpoints.load_checkpoint(straight.checkpoint).data
    b = checkpoints.load_checkpoint(resumed.checkpoint).data
    assert _states_equal(a["optimizer"]["state"][0], b["optimizer"]["state"][0])
    for key in ("epoch", "train_loss", "heldout_loss", "heldout_accuracy"):
        assert a["history"][key] == b["history"][key]
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"])
    # and the training moved the weights: a run of one epoch differs
    one = tr.train(Run("cycle", 4, "tiny"), epochs=1, progress=False)
    assert not _states_equal(one.model.state_dict(), straight.model.state_dict())
    # nothing but the checkpoint is left in the run directory (atomic writes)
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["cycle-h04.ckpt.pt"]


def test_checkpoint_contents_load_weights_only(tmp_path):
    res = tr.train(Run("copy", 1, "tiny"), out_dir=tmp_path, progress=False)
    data = torch.load(res.checkpoint, weights_only=True)
    assert data["format"] == checkpoints.EpochCheckpoint.FORMAT
    assert (data["task"], data["heads"], data["seed"], data["profile"], data["epoch"]) == (
        "copy", 1, 42, "tiny", 2)
    assert data["torch_version"] == torch.__version__
    assert data["loader"] == {"seed": 42, "epoch": 2}
    assert len(data["history"]["heldout_accuracy"]) == 2
    assert isinstance(data["hardware"], str) and data["hardware"]
    for key in ("torch", "numpy", "python"):
        assert key in data["rng"]


def test_checkpoint_refusals(tmp_path):
    res = tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path, epochs=1, progress=False)
    path = res.checkpoint
    with pytest.raises(FileNotFoundError, match="does not exist"):
        checkpoints.load_checkpoint(tmp_path / "missing.ckpt.pt")
    with pytest.raises(ValueError, match="heads=4, not heads=8"):
        checkpoints.load_checkpoint(path, heads=8)
    with pytest.raises(ValueError, match="task='copy', not task='cycle'"):
        checkpoints.load_checkpoint(path, task="cycle")
    with pytest.raises(ValueError, match="profile='tiny', not 'quick'"):
        checkpoints.load_checkpoint(path, profile="quick")
    with pytest.raises(ValueError, match="seed=42, not seed=1"):
        checkpoints.load_checkpoint(path, seed=1)
    bad = tmp_path / "bad.ckpt.pt"
    bad.write_bytes(path.read_bytes()[:1000])  # truncated
    with pytest.raises(ValueError, match="corrupted"):
        checkpoints.load_checkpoint(bad)
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="corrupted") as err:
        checkpoints.load_checkpoint(bad)
    assert "weights_only" not in str(err.value)  # never pass on torch's advice to turn it off
    # a file torch refuses under weights_only=True (a pickled object): same message, no advice
    torch.save({"format": "x", "obj": _Oracle}, bad)
    with pytest.raises(ValueError, match="corrupted") as err:
        checkpoints.load_checkpoint(bad)
    assert "weights_only" not in str(err.value) and err.value.__cause__ is None
    torch.save({"format": "something-else"}, bad)
    with pytest.raises(ValueError, match="not a bparallel-checkpoint-v1"):
        checkpoints.load_checkpoint(bad)
    # a checkpoint whose weights have the wrong shape is refused when resuming
    data = torch.load(path, weights_only=True)
    data["model"]["head.weight"] = torch.zeros(3, 3)
    torch.save(data, path)
    with pytest.raises(ValueError, match="does not fit"):
        tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path, epochs=2, progress=False)
    with pytest.raises(ValueError, match="do not fit"):
        checkpoints.load_checkpoint(path).model()


def test_export_and_load_weights(tmp_path):
    res = tr.train(Run("cycle", 8, "tiny"), out_dir=tmp_path, epochs=1, progress=False)
    path = tmp_path / "w.pt"
    digest = checkpoints.export_weights(res.checkpoint, path)
    assert digest == sha256_file(path) and len(digest) == 64
    data = torch.load(path, weights_only=True)
    assert "optimizer" not in data and "rng" not in data
    model, meta = checkpoints.load_weights(path, sha256=digest)
    assert (meta["task"], meta["heads"], meta["epoch"]) == ("cycle", 8, 1)
    x = torch.randint(0, 256, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(model(x), res.model(x), rtol=0, atol=0)
    with pytest.raises(ValueError, match="SHA-256"):
        checkpoints.load_weights(path, sha256="0" * 64)
    with pytest.raises(FileNotFoundError):
        checkpoints.load_weights(tmp_path / "nope.pt")
    # the checkpoint's file gives the same bytes; an in-memory result has no machines'
    # record to ship, and is refused
    assert checkpoints.export_weights(load_checkpoint(res.checkpoint), tmp_path / "w2.pt") \
        == digest
    with pytest.raises(ValueError, match="source=TrainResult: give a checkpoint"):
        checkpoints.export_weights(res, tmp_path / "w3.pt")
    # load_model reads both kinds of file, told apart by their content, not their names
    assert shipped.load_model(res.checkpoint)[1]["heads"] == 8
    assert shipped.load_model(path)[1]["heads"] == 8
    disguised = tmp_path / "looks-like.ckpt.pt"
    disguised.write_bytes(path.read_bytes())
    assert "optimizer" not in shipped.load_model(disguised)[1]  # loaded as weights
    torch.save({"format": "something-else"}, disguised)
    with pytest.raises(ValueError, match="neither a bparallel-weights-v1 nor"):
        shipped.load_model(disguised)
    with pytest.raises(FileNotFoundError):
        shipped.load_model(tmp_path / "missing.pt")


class _Oracle(nn.Module):
    """Predicts ``shift`` positions back (0 = copy; 1 = the causal cycle guess)."""

    def __init__(self, shift: int) -> None:
        super().__init__()
        self.shift = shift

    def forward(self, x):
        prev = torch.roll(x, self.shift, dims=-1)
        prev[:, : self.shift] = x[:, : self.shift]  # causal: no wrap-around
        return nn.functional.one_hot(prev, 256).float() * 20.0


def test_evaluate_accuracy_values():
    copy = make_dataset("copy", 30, seed=0, seq_len=10)
    assert evaluate_accuracy(_Oracle(0), copy)["accuracy"] == 1.0
    cycle = make_dataset("cycle", 30, seed=0, seq_len=10)
    ev = evaluate_accuracy(_Oracle(1), cycle)
    # positions 1..9 right; position 0 right only when x_0 == x_9
    lucky = (cycle.inputs[:, 0] == cycle.inputs[:, -1]).float().mean().item()
    assert ev["accuracy_predictable"] == 1.0
    assert ev["accuracy"] == pytest.approx((9 + lucky) / 10)


def test_threads_from_env(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setenv(runtime.THREADS_ENV, "2")
    with runtime.num_threads() as n:
        assert n == 2 == torch.get_num_threads()
    assert torch.get_num_threads() == before == 1  # restored
    with runtime.num_threads(3) as n:  # an argument wins over the environment
        assert n == 3
    monkeypatch.setenv(runtime.THREADS_ENV, "many")
    with pytest.raises(ValueError, match="BPARALLEL_THREADS='many'"), runtime.num_threads():
        pass


def test_rng_state_round_trip():
    tr.seed_everything(3)
    state = tr.rng_state()
    draws = (torch.rand(3), np.random.rand(3), random.random())  # noqa: NPY002
    tr.set_rng_state(state)
    again = (torch.rand(3), np.random.rand(3), random.random())  # noqa: NPY002
    assert torch.equal(draws[0], again[0])
    np.testing.assert_array_equal(draws[1], again[1])
    assert draws[2] == again[2]


def test_train_validation(tmp_path):
    with pytest.raises(ValueError, match="task='sort'"):
        tr.train(Run("sort", 1, "tiny"), progress=False)
    with pytest.raises(ValueError, match="n_heads=5 does not divide d_model=64"):
        tr.train(Run("copy", 5, "tiny"), progress=False)
    with pytest.raises(ValueError, match="epochs=0"):
        tr.train(Run("copy", 1, "tiny"), epochs=0, progress=False)


def test_attention_path_is_recorded_and_kept_on_resume(tmp_path):
    res = tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path / "f", epochs=2, stop_after=1,
                   progress=False)
    data = torch.load(res.checkpoint, weights_only=True)
    assert data["attention_path"] == "fused" and res.model.attention_path == "fused"
    with pytest.raises(ValueError, match="trained with attention_path='fused'; resuming with "
                                         "'sdpa'"):
        tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path / "f", epochs=2, progress=False,
                 attention_path="sdpa")
    with pytest.raises(ValueError, match="attention_path='flash'"):
        tr.train(Run("copy", 4, "tiny"), epochs=1, progress=False, attention_path="flash")
    # a checkpoint from before the field existed was trained with SDPA, and resumes so
    sdpa = tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path / "s", epochs=2, stop_after=1,
                    progress=False, attention_path="sdpa")
    data = torch.load(sdpa.checkpoint, weights_only=True)
    del data["attention_path"]
    torch.save(data, sdpa.checkpoint)
    resumed = tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path / "s", epochs=2, progress=False)
    straight = tr.train(Run("copy", 4, "tiny"), epochs=2, progress=False, attention_path="sdpa")
    assert resumed.model.attention_path == "sdpa"
    assert _states_equal(resumed.model.state_dict(), straight.model.state_dict())
    meta = checkpoints.load_weights(_export(resumed, tmp_path))[1]
    assert meta["attention_path"] == "sdpa"
    # the two training kernels draw different dropout masks: different (valid) runs
    fused = tr.train(Run("copy", 4, "tiny"), epochs=2, progress=False)
    assert not _states_equal(fused.model.state_dict(), straight.model.state_dict())


def _export(result, folder):
    path = folder / "exported.weights.pt"
    checkpoints.export_weights(result.checkpoint, path)
    return path


def test_token_scores_predictable_loss_leaves_out_position_0():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 10, 256, generator=gen) * 3  # (B, T, V)
    targets = torch.randint(0, 256, (6, 10), generator=gen)
    per_token = nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    for task, first in (("copy", 0), ("cycle", 1)):
        scores = TokenScores(task, 10)
        scores.add(logits[:4], targets[:4])
        scores.add(logits[4:], targets[4:])  # two batches, summed
        out = scores.result()
        assert out["loss"] == pytest.approx(per_token.mean().item(), rel=1e-6)
        assert out["loss_predictable"] == pytest.approx(per_token[:, first:].mean().item(),
                                                        rel=1e-6)
        hit = logits.argmax(-1) == targets
        assert out["accuracy"] == hit.float().mean().item()
        assert out["accuracy_predictable"] == pytest.approx(hit[:, first:].float().mean().item())


def test_token_scores_resolve_saturated_losses_in_float64():
    # target logit 30, the 255 others 0: loss log(1 + 255 e^-30) = 2.4e-11 per token, which
    # a float32 cross-entropy rounds to 0 (1 + 2.4e-11 == 1 in float32)
    logits = torch.zeros(2, 5, 256)
    targets = torch.arange(10).view(2, 5)
    logits.scatter_(-1, targets[..., None], 30.0)
    exact = math.log1p(255 * math.exp(-30))
    f64 = TokenScores("copy", 5, loss_dtype=torch.float64)
    f64.add(logits, targets)
    f32 = TokenScores("copy", 5)
    f32.add(logits, targets)
    assert f64.result()["loss"] == pytest.approx(exact, rel=1e-6)
    assert f32.result()["loss"] == 0.0


def test_device_validation():
    assert runtime.resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="device='tpu'"):
        tr.train(Run("copy", 1, "tiny"), epochs=1, progress=False, device="tpu")
    with pytest.raises(ValueError, match="only 'cpu' and 'cuda'"):
        runtime.resolve_device("meta")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available here"):
            tr.train(Run("copy", 1, "tiny"), epochs=1, progress=False, device="cuda")
    assert "CUDA" not in runtime.hardware_string("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_training_resumes_and_loads_on_the_cpu(tmp_path):
    """On a GPU: the same initial weights as on the CPU, a checkpoint that resumes the GPU's
    dropout stream, CPU tensors in every file, and the GPU named in the hardware."""
    cpu0 = tr.train(Run("copy", 4, "tiny"), epochs=1, stop_after=1, progress=False,
                    out_dir=tmp_path / "c")
    gpu = tr.train(Run("copy", 4, "tiny"), epochs=2, stop_after=1, progress=False,
                   out_dir=tmp_path / "g", device="cuda")
    ck = checkpoints.load_checkpoint(tmp_path / "g" / "copy-h04.ckpt.pt")
    assert "CUDA" in ck.data["hardware"] and "torch_cuda" in ck.data["rng"]
    assert all(v.device.type == "cpu" for v in ck.data["model"].values())
    # one epoch (4 Adam steps of lr 1e-3) on each device from the same initial weights:
    # apart by at most twice the distance Adam can move a weight, far below the init's spread
    for (k, a), b in zip(cpu0.model.state_dict().items(), ck.data["model"].values(),
                         strict=True):
        assert (a - b).abs().max() <= 1e-2, k
    resumed = tr.train(Run("copy", 4, "tiny"), epochs=2, progress=False, out_dir=tmp_path / "g",
                       device="cuda")
    assert resumed.resumed_from == 1 and resumed.epoch == 2
    assert next(resumed.model.parameters()).device.type == "cuda"
    model, meta = shipped.load_model(tmp_path / "g" / "copy-h04.ckpt.pt")
    assert meta["epoch"] == 2 and next(model.parameters()).device.type == "cpu"
    assert gpu.heads == 4


def test_weights_files_round_trip_the_head_size(tmp_path):
    """A weights file records ``head_size`` only when it is given: the shipped files, written
    before the field existed, load as models of the default head size, and a default model
    exported today writes the same config as they do."""
    from pathlib import Path

    from bparallel.transformer.model import ModelConfig, Transformer

    shipped = Path(__file__).resolve().parents[2] / "models" / "paper" / "copy-h04.weights.pt"
    stored = torch.load(shipped, weights_only=True)["model_config"]
    assert "head_size" not in stored
    model, _ = checkpoints.load_weights(shipped)
    assert model.config.head_size is None and model.config.head_dim == 16
    res = tr.train(Run("copy", 4, "tiny"), out_dir=tmp_path, epochs=1, progress=False)
    checkpoints.export_weights(res.checkpoint, tmp_path / "w.pt")
    assert torch.load(tmp_path / "w.pt", weights_only=True)["model_config"].keys() == stored.keys()
    # a model of 16 dimensions per head at 8 heads: config and weights come back
    torch.manual_seed(0)
    wide = Transformer(ModelConfig(n_heads=8, head_size=16, seq_len=16))
    meta = {"task": "copy", "heads": 8}
    checkpoints.write_weights(tmp_path / "wide.pt", wide.config.to_dict(), wide.state_dict(), meta)
    back, back_meta = checkpoints.load_weights(tmp_path / "wide.pt")
    assert back.config == wide.config and back.config.attention_width == 128
    assert back_meta == meta and _states_equal(back.state_dict(), wide.state_dict())
