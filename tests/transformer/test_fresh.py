"""Training on fresh data (``train`` with a ``FreshProfile``): a new batch every step,
resumed bitwise after a kill, stopped by the convergence rule, both arms, shipped with its curve and
its proxies through training. The hidden ``fresh-tiny`` profile: 12 steps, seconds."""

from __future__ import annotations

import dataclasses
import json
import math
import random

import numpy as np
import pytest
import torch

from bparallel.transformer import arms, design
from bparallel.transformer.checkpoints import load_checkpoint, load_weights, sha256_file
from bparallel.transformer.design import PROFILES, model_name
from bparallel.transformer.measure import PROBE_LAYER_KEYS
from bparallel.transformer.model import ModelConfig
from bparallel.transformer.runs import Run
from bparallel.transformer.shipped import load_model, ship
from bparallel.transformer.train import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = PROFILES["fresh-tiny"]


def _same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _same_values(a, b) -> bool:
    """Equal nested lists and dicts of numbers, NaN equal to NaN, None to None."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_values(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _scramble() -> None:
    """Every global RNG somewhere else, as a new process would have them."""
    torch.manual_seed(123)
    np.random.seed(5)  # noqa: NPY002
    random.seed(7)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """An uninterrupted fresh-tiny run of induction, 8 heads of 16 (head16 arm)."""
    out = tmp_path_factory.mktemp("straight")
    return train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=out, progress=False)


def test_a_killed_run_resumes_bitwise(straight, tmp_path):
    # killed between two evaluations (step 5 of 12; evaluations every 4), then again at 9
    first = train(Run.in_arm("induction", 8, TINY, "head16"),
                  out_dir=tmp_path, stop_after=5, progress=False)
    assert first.step == 5 and first.outcome == "running"
    _scramble()
    second = train(Run.in_arm("induction", 8, TINY, "head16"),
                   out_dir=tmp_path, stop_after=4, progress=False)
    assert (second.resumed_from, second.step) == (5, 9)
    _scramble()
    resumed = train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=tmp_path, progress=False)
    assert (resumed.resumed_from, resumed.step) == (9, 12)
    assert _same_state(straight.model.state_dict(), resumed.model.state_dict())
    a = load_checkpoint(straight.checkpoint).data
    b = load_checkpoint(resumed.checkpoint).data
    assert all(_same_state(a["optimizer"]["state"][i], b["optimizer"]["state"][i])
               for i in a["optimizer"]["state"])
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"])
    history = {k: v for k, v in a["history"].items() if k != "seconds"}
    assert _same_values(history, {k: v for k, v in b["history"].items() if k != "seconds"})
    # the probes: the log-spaced schedule of 12 steps from 2, every layer's measures
    assert a["history"]["probe"]["step"] == [0, 2, 4, 8, 12]
    assert a["history"]["step"] == [0, 4, 8, 12]
    # a finished run resumed again trains nothing and leaves its checkpoint as it was
    before = resumed.checkpoint.read_bytes()
    again = train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=tmp_path, progress=False)
    assert again.resumed_from == again.step == 12 and resumed.checkpoint.read_bytes() == before


def test_runs_are_deterministic_and_every_step_draws_new_data(straight):
    again = train(Run.in_arm("induction", 8, TINY, "head16"), progress=False)
    assert _same_state(straight.model.state_dict(), again.model.state_dict())
    other_seed = train(Run.in_arm("induction", 8, TINY, "head16", seed=43), progress=False)
    assert not _same_state(straight.model.state_dict(), other_seed.model.state_dict())
    b0 = design.fresh_batch("induction", 0, seed=42, batch_size=10, seq_len=16)
    b1 = design.fresh_batch("induction", 1, seed=42, batch_size=10, seq_len=16)
    assert not (b0.inputs[:, None] == b1.inputs[None]).all(-1).any()
    # the held-out set is the same for every seed, arm and head count
    held = design.fresh_heldout("induction", TINY)
    assert torch.equal(held.inputs, design.fresh_heldout("induction", TINY).inputs)
    assert len(held) == TINY.num_heldout


def test_a_model_below_the_threshold_is_not_learned(straight):
    """12 steps teach induction nothing: the run ends at its budget, not learned, with no
    learning time, and its mean accuracy over the budget is what it is."""
    s = straight.summary
    assert straight.step == straight.budget == 12
    assert (s["outcome"], s["steps_to_threshold"], s["converged_at"]) == ("not learned", None,
                                                                          None)
    assert 0 <= s["curve_area"] < 0.9


def test_the_convergence_rule_stops_a_run(tmp_path):
    # a threshold every model meets and a tolerance nothing leaves: converged after
    # `patience` evaluations (steps 0 and 4), probed at the step it stopped
    easy = dataclasses.replace(TINY, name="fresh-easy", threshold=0.0, tolerance=1.0)
    res = train(Run("first", 1, easy), out_dir=tmp_path, progress=False)
    assert res.step == 4 and res.outcome == "converged"
    assert res.summary["converged_at"] == 4 and res.summary["steps_to_threshold"] == 0
    assert res.history["step"] == [0, 4] and res.history["probe"]["step"] == [0, 2, 4]
    a0, a1 = res.history["heldout_accuracy_predictable"]  # held from step 4 to the budget
    assert res.summary["curve_area"] == pytest.approx(((a0 + a1) / 2 * 4 + a1 * 8) / 12)


def test_arms_head_sizes_and_names():
    assert [arms.arm_head_size("width", h) for h in (1, 4, 8, 16)] == [None] * 4
    assert [arms.arm_head_size("head16", h) for h in (1, 4, 8, 16)] == [16, None, 16, 16]
    assert arms.arms_of(ModelConfig(n_heads=4)) == ["width", "head16"]  # the shared model
    assert arms.arms_of(ModelConfig(n_heads=8)) == ["width"]
    assert arms.arms_of(ModelConfig(n_heads=8, head_size=16)) == ["head16"]
    assert model_name("induction", 8, 16, 43, 5) == "induction-h08-hs16-x5-s43"
    assert model_name("majority", 4) == "majority-h04"
    with pytest.raises(ValueError, match=r"arm='narrow': valid arms are"):
        arms.arm_head_size("narrow", 4)
    with pytest.raises(ValueError, match="n_heads=3 does not divide d_model=64"):
        train(Run("induction", 3, TINY), progress=False)
    with pytest.raises(ValueError, match=r"arm='head16': arms are for fresh-data profiles"):
        train(Run.in_arm("induction", 1, "induction", "head16"), progress=False)
    with pytest.raises(ValueError, match=r"epochs=3: profile 'fresh-tiny' trains on fresh"):
        train(Run("induction", 1, TINY), epochs=3, progress=False)


def test_profiles_and_their_validation():
    for name in ("first-fresh", "induction-fresh", "majority-fresh", "histogram-fresh"):
        p = PROFILES[name]
        assert p.tasks == (name.split("-")[0],) and p.steps % p.eval_every == 0
        assert (p.batch_size, p.lr, p.dropout, p.seq_len, p.loss_positions) == (
            50, 1e-3, 0.1, 100, "predictable")
        assert p.threshold_of(p.tasks[0]) == 0.9 and p.tolerance == 0.005
    with pytest.raises(ValueError, match="steps=10: must be a multiple of eval_every=4"):
        design.FreshProfile("x", ("first",), steps=10, eval_every=4)
    with pytest.raises(ValueError, match="probe_sequences=30: at most num_heldout=20"):
        design.FreshProfile("x", ("first",), steps=8, eval_every=4, num_heldout=20,
                        probe_sequences=30)
    with pytest.raises(ValueError, match="tasks='sort'"):
        design.FreshProfile("x", ("sort",), steps=8, eval_every=4)


def test_a_checkpoint_of_another_run_is_refused(straight):
    path = straight.checkpoint
    with pytest.raises(ValueError, match="head_size=16, not head_size=None"):
        load_checkpoint(path, head_size=None)
    with pytest.raises(ValueError, match="seed=42, not seed=43"):
        load_checkpoint(path, seed=43)
    other = dataclasses.replace(TINY, lr=1e-2)
    with pytest.raises(ValueError, match=r"other settings of profile 'fresh-tiny': \['lr'\]"):
        load_checkpoint(path, profile=other)
    other_file = path.with_name("other.pt")
    torch.save({"format": "x"}, other_file)
    with pytest.raises(ValueError, match="not a bparallel-checkpoint-v1 or bparallel-fresh"):
        load_checkpoint(other_file)


def test_a_longer_budget_continues_the_plain_run(straight, tmp_path):
    """budget_factor 2: its own file, started from the plain run's checkpoint; the same
    weights as a run of the longer budget from scratch."""
    plain = train(Run("first", 1, TINY), out_dir=tmp_path, progress=False)
    longer = train(Run("first", 1, TINY, budget_factor=2), out_dir=tmp_path, progress=False)
    assert plain.step == 12 and (longer.resumed_from, longer.step, longer.budget) == (12, 24, 24)
    assert longer.checkpoint.name == "first-h01-x2.ckpt.pt"
    scratch = train(Run("first", 1, TINY, budget_factor=2), out_dir=tmp_path / "s", progress=False)
    assert scratch.resumed_from == 0
    assert _same_state(longer.model.state_dict(), scratch.model.state_dict())
    assert longer.history["step"] == scratch.history["step"]


def test_shipping_a_run_round_trips_its_head_size(straight, tmp_path):
    entry = ship(straight.checkpoint, tmp_path, profile=TINY)
    name = "induction-h08-hs16"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["profile"] == "fresh-tiny" and manifest["models"][name] == entry
    assert entry["sha256"] == sha256_file(tmp_path / entry["file"])
    # 239,104 at T = 100 (test_model), less 84 positions x 64 of positional embedding
    assert (entry["heads"], entry["head_size"], entry["arms"], entry["num_parameters"]) == (
        8, 16, ["head16"], 239_104 - 84 * 64)
    assert entry["model_config"]["head_size"] == 16
    assert (entry["budget"], entry["steps"], entry["outcome"]) == (12, 12, "not learned")
    assert entry["steps_to_threshold"] is None and entry["threshold"] == 0.9
    assert entry["curve"]["step"] == [0, 4, 8, 12] and entry["curve"]["train_loss"][0] is None
    assert entry["probes"]["step"] == [0, 2, 4, 8, 12]
    assert all(len(entry["probes"][k]) == 5 and len(entry["probes"][k][0]) == 4
               for k in PROBE_LAYER_KEYS)
    model, meta = load_weights(tmp_path / entry["file"], sha256=entry["sha256"])
    assert model.config == ModelConfig(n_heads=8, seq_len=16, head_size=16)
    assert _same_state(model.state_dict(), straight.model.state_dict())
    assert (meta["head_size"], meta["arms"], meta["outcome"]) == (16, ["head16"], "not learned")
    # load_model reads a fresh checkpoint too
    ck_model, ck_meta = load_model(straight.checkpoint)
    assert ck_meta["step"] == 12 and _same_state(ck_model.state_dict(), model.state_dict())


def test_a_run_resumed_on_another_machine_keeps_both(straight, tmp_path):
    """A checkpoint from a GPU (written before segments were kept) continued here: the
    weights are the run's; the entry names both machines and which steps each trained."""
    train(Run.in_arm("induction", 8, TINY, "head16"),
          out_dir=tmp_path, stop_after=5, progress=False)
    file = tmp_path / "induction-h08-hs16.ckpt.pt"
    data = torch.load(file, weights_only=True)
    assert data["segments"] == [{"from_step": 0, "hardware": data["hardware"],
                                 "torch_version": data["torch_version"]}]
    here = (data["hardware"], data["torch_version"])
    gpu = "Linux x86_64, 16 cores, torch threads 1, NVIDIA H200 (CUDA 13.0)"
    del data["segments"]
    data |= {"hardware": gpu, "torch_version": "2.11.0+cu130"}
    torch.save(data, file)
    _scramble()
    res = train(Run.in_arm("induction", 8, TINY, "head16"), out_dir=tmp_path, progress=False)
    assert res.resumed_from == 5 and res.step == 12
    assert _same_state(res.model.state_dict(), straight.model.state_dict())
    ck = load_checkpoint(res.checkpoint)
    assert ck.segments() == [
        {"steps": [0, 5], "hardware": gpu, "torch_version": "2.11.0+cu130"},
        {"steps": [5, 12], "hardware": here[0], "torch_version": here[1]}]
    entry = ship(res.checkpoint, tmp_path / "models", profile=TINY)
    assert entry["hardware"] == f"{gpu}; {here[0]}"
    assert entry["torch_version"] == f"2.11.0+cu130, {here[1]}"
    assert entry["segments"] == ck.segments()
    # a run that never moved has one machine and no segments in its entry
    plain = ship(straight.checkpoint, tmp_path / "plain", profile=TINY)
    assert "segments" not in plain and ";" not in plain["hardware"]


def test_an_unfinished_run_is_not_shipped(tmp_path):
    res = train(Run("majority", 1, TINY), out_dir=tmp_path, stop_after=3, progress=False)
    with pytest.raises(ValueError, match="is at step 3 of 12 and has not converged"):
        ship(res.checkpoint, tmp_path / "models", profile=TINY)


def test_a_cosine_schedule_decays_the_rate_to_zero_at_the_budget():
    """FreshProfile.lr_at against its closed form: lr at the first step, lr/2 halfway, 0 at
    the budget (never reached: the last step is total - 1); constant: lr throughout."""
    cos = dataclasses.replace(TINY, name="t", lr_schedule="cosine")
    assert cos.lr_at(0, 12) == 1e-3 and cos.lr_at(6, 12) == pytest.approx(5e-4, rel=1e-15)
    assert cos.lr_at(11, 12) == pytest.approx(1e-3 * (1 + math.cos(math.pi * 11 / 12)) / 2)
    rates = [cos.lr_at(s, 1200) for s in range(1200)]
    # strictly decreasing, positive
    assert all(a > b > 0 for a, b in zip(rates[:-1], rates[1:], strict=True))
    assert {TINY.lr_at(s, 12) for s in range(12)} == {1e-3}
    for bad, message in ((12, r"step=12: must lie in \[0, total=12\)"),
                         (-1, r"step=-1: must lie")):
        with pytest.raises(ValueError, match=message):
            cos.lr_at(bad, 12)
    with pytest.raises(ValueError, match="lr_schedule='linear'"):
        dataclasses.replace(TINY, lr_schedule="linear")
    with pytest.raises(ValueError, match="budget_factor=2: profile 't' decays its learning"):
        cos.total(2)
    assert PROFILES["histogram-cosine"].lr_schedule == "cosine"
    assert PROFILES["histogram-cosine"].settings() == {
        **PROFILES["histogram-fresh"].settings(), "name": "histogram-cosine",
        "lr_schedule": "cosine"}
    # the budget's pilot: the same runs, the rate decayed over three times the budget
    long = PROFILES["histogram-cosine-36k"]
    assert long.settings() == {**PROFILES["histogram-cosine"].settings(),
                               "name": "histogram-cosine-36k"}
    assert long.total() == 3 * PROFILES["histogram-cosine"].total() == 36000
    assert long.lr_at(18000, long.total()) == pytest.approx(long.lr / 2, rel=1e-12)


def test_a_cosine_run_uses_the_schedule_and_resumes_bitwise(tmp_path):
    """The optimiser steps at the schedule's rate (its last step at ``lr_at(11, 12)``, and
    the weights differ from the constant-rate run of the same seed and batches); a kill
    between two evaluations resumes bitwise; the manifest entry names the schedule; a
    constant-rate checkpoint written before the schedule existed (no ``lr_schedule`` in its
    settings) still loads under a constant profile."""
    cos = dataclasses.replace(TINY, name="fresh-tiny-cos", lr_schedule="cosine")
    straight = train(Run("first", 4, cos), out_dir=tmp_path / "a", progress=False)
    const = train(Run("first", 4, TINY), progress=False)
    assert not _same_state(straight.model.state_dict(), const.model.state_dict())
    ck = load_checkpoint(straight.checkpoint, profile=cos).data
    assert [g["lr"] for g in ck["optimizer"]["param_groups"]] == [cos.lr_at(11, 12)]
    first = train(Run("first", 4, cos), out_dir=tmp_path / "b", stop_after=6, progress=False)
    assert first.step == 6
    _scramble()
    resumed = train(Run("first", 4, cos), out_dir=tmp_path / "b", progress=False)
    assert resumed.resumed_from == 6
    assert _same_state(straight.model.state_dict(), resumed.model.state_dict())
    entry = load_checkpoint(straight.checkpoint).entry()
    assert entry["lr_schedule"] == "cosine"
    plain = train(Run("first", 1, TINY), out_dir=tmp_path / "c", progress=False)
    assert "lr_schedule" not in load_checkpoint(plain.checkpoint).entry()
    data = torch.load(plain.checkpoint, weights_only=True)
    del data["profile_config"]["lr_schedule"]
    torch.save(data, plain.checkpoint)
    load_checkpoint(plain.checkpoint, profile=TINY)  # the default: constant
    with pytest.raises(ValueError, match=r"other settings of profile 'fresh-tiny': "
                                         r"\['lr_schedule'\]"):
        load_checkpoint(plain.checkpoint, profile=dataclasses.replace(TINY,
                                                                      lr_schedule="cosine"))


def test_the_data_seed_is_the_seed_unless_given(straight, tmp_path):
    """A data seed separate from the initialisation seed (issue 72): equal to the seed it
    draws bitwise the batches, weights and history every earlier run drew; another one draws
    other batches from the same starting weights, under its own name, and is recorded."""
    from bparallel.transformer.checkpoints import data_seed_of

    kw = {"batch_size": 10, "seq_len": 16}
    old = design.fresh_batch("induction", 3, seed=43, **kw)
    same = design.fresh_batch("induction", 3, seed=43, data_seed=43, **kw)
    other = design.fresh_batch("induction", 3, seed=43, data_seed=44, **kw)
    assert torch.equal(old.inputs, same.inputs) and torch.equal(old.targets, same.targets)
    assert torch.equal(other.inputs, design.fresh_batch("induction", 3, seed=44, **kw).inputs)
    assert not torch.equal(old.inputs, other.inputs)
    # a run of data seed = seed is bitwise the run without one
    again = train(Run.in_arm("induction", 8, TINY, "head16", data_seed=42), progress=False)
    assert again.data_seed == 42
    assert _same_state(straight.model.state_dict(), again.model.state_dict())
    # another data seed: the same initial weights (seed 42), other batches, its own file
    crossed = train(Run.in_arm("induction", 8, TINY, "head16", data_seed=44),
                    out_dir=tmp_path, progress=False)
    assert crossed.checkpoint.name == "induction-h08-hs16-d44.ckpt.pt"
    assert not _same_state(straight.model.state_dict(), crossed.model.state_dict())
    ck = load_checkpoint(crossed.checkpoint)
    assert (ck.data["seed"], data_seed_of(ck.data), ck.name()) == (42, 44,
                                                                   "induction-h08-hs16-d44")
    entry = ship(crossed.checkpoint, tmp_path / "shipped", profile=TINY)
    assert (entry["seed"], entry["data_seed"]) == (42, 44)
    assert entry["file"] == "induction-h08-hs16-d44.weights.pt"
    assert model_name("induction", 8, 16, seed=43, data_seed=43) == "induction-h08-hs16-s43"
    assert model_name("induction", 8, 16, seed=43, data_seed=44) == \
        "induction-h08-hs16-d44-s43"
    # a checkpoint of another data seed is refused; an old entry without one reads its seed
    (tmp_path / "other").mkdir()
    crossed.checkpoint.rename(tmp_path / "other" / "induction-h08-hs16.ckpt.pt")
    with pytest.raises(ValueError, match="data_seed=44, not data_seed=42"):
        train(Run.in_arm("induction", 8, TINY, "head16", data_seed=42),
              out_dir=tmp_path / "other", progress=False)
    assert data_seed_of({"seed": 45}) == 45 and data_seed_of({"seed": 45, "data_seed": 2}) == 2
    with pytest.raises(ValueError, match="record"):
        data_seed_of({"task": "induction"})
    with pytest.raises(ValueError, match="data_seed"):
        train(Run("copy", 1, "tiny", data_seed=43), progress=False)
    with pytest.raises(ValueError, match="data_seed"):
        design.fresh_batch("induction", 0, seed=42, data_seed=-1, **kw)


def test_a_run_with_head_probes_records_them_at_its_schedule_and_resumes_bitwise(tmp_path):
    """The per-head probes of issue 75: at step 0, every 2 steps up to step 6, then at the
    evaluations (every 4) and the budget; in the checkpoint, resumed bitwise after a kill,
    and shipped in the manifest entry with their schedule. The probes change no weight."""
    from bparallel.transformer.head_probes import HEAD_SCALAR_KEYS, HEAD_SCORE_KEYS

    probed = dataclasses.replace(TINY, head_probe_every=2, head_probe_until=6)
    straight = train(Run.in_arm("induction", 4, probed, "inner256"),
                     out_dir=tmp_path / "a", progress=False)
    plain = train(Run.in_arm("induction", 4, TINY, "inner256"), progress=False)
    assert _same_state(straight.model.state_dict(), plain.model.state_dict())
    heads = straight.history["heads"]
    assert heads["step"] == [0, 2, 4, 6, 8, 12]
    assert set(heads) == {"step", "seconds", *HEAD_SCALAR_KEYS, *HEAD_SCORE_KEYS}
    assert all(len(heads[k]) == 6 and len(heads[k][0]) == 4 and len(heads[k][0][0]) == 4
               for k in HEAD_SCORE_KEYS)
    assert "heads" not in plain.history
    train(Run.in_arm("induction", 4, probed, "inner256"),
          out_dir=tmp_path / "b", stop_after=5, progress=False)
    resumed = train(Run.in_arm("induction", 4, probed, "inner256"),
                    out_dir=tmp_path / "b", progress=False)
    assert resumed.resumed_from == 5  # stopped at step 5, between head probes 4 and 6
    again = resumed.history["heads"]
    assert again["step"] == heads["step"]
    assert _same_values({k: v for k, v in again.items() if k != "seconds"},
                        {k: v for k, v in heads.items() if k != "seconds"})
    entry = ship(straight.checkpoint, tmp_path / "shipped", profile=probed)
    assert entry["head_probes"]["step"] == heads["step"]
    assert (entry["head_probe_every"], entry["head_probe_until"]) == (2, 6)
    assert len(entry["head_probes"]["induction"][0]) == 4  # layers x heads


def test_the_control_profiles():
    """Issue 72's controls: induction's fixed-attention-width arm at 3e-4 and 3e-3, and under
    histogram's settling recipe; each with head probes every 20 steps through the change."""
    base, settling = PROFILES["induction-fresh"], PROFILES["histogram-nodropout-cosine"]
    low, high = PROFILES["induction-fresh-lr3e-4"], PROFILES["induction-fresh-lr3e-3"]
    recipe = PROFILES["induction-nodropout-cosine"]
    for p, lr in ((low, 3e-4), (high, 3e-3)):
        assert p.lr == lr and p.tasks == ("induction",)
        assert dataclasses.replace(p, name=base.name, lr=base.lr, description=base.description,
                                   head_probe_every=None, head_probe_until=0) == base
    assert (recipe.dropout, recipe.lr_schedule) == (settling.dropout, settling.lr_schedule)
    assert (recipe.lr, recipe.steps, recipe.eval_every) == (base.lr, base.steps,
                                                            base.eval_every)
    for p in (low, high, recipe):
        assert p.head_probe_every == 20 and p.head_probe_until >= 2000
    with pytest.raises(ValueError, match="head_probe_every"):
        dataclasses.replace(TINY, head_probe_every=0)
