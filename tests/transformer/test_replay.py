"""A shipped run's weights at chosen steps (issue 75, item 5; bparallel.transformer.replay):
the committed steps are the shipped runs' own (their per-head scores, recomputed here on
the stored weights, equal the manifest's as stored; step 0 is the initial model bit for
bit), a short replay on this machine agrees with the manifest, and bad input is refused.

Smallest effects these tests find: a step's weights that are not the run's at that step
(any score off the manifest's by more than 1e-5 relative), a replay from another data stream or
seed (scores off by more than 1e-3 after 20 steps), a weights file changed by one byte."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from bparallel.transformer import replay
from bparallel.transformer.checkpoints import load_weights
from bparallel.transformer.design import fresh_heldout, get_profile
from bparallel.transformer.head_probes import HEAD_SCALAR_KEYS, HEAD_SCORE_KEYS, head_probe
from bparallel.transformer.runs import Run
from bparallel.transformer.shipped import MODELS_ROOT
from bparallel.transformer.train import initial_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: Scores recomputed here against the manifest's 6 significant digits: the rounding's
#: 5e-6 relative and the kernels' noise; a step's weights off by even one training step
#: move the scores by far more (about 1e-3 at the smallest, the replay test below).
RTOL = 1e-5


def _numbers(value):
    """A score as floats (``None``, a manifest's NaN, as NaN)."""
    return np.array(replay._numbers(value if isinstance(value, list) else [value]),
                    dtype=np.float64)

PROFILE = "induction-fresh-lr3e-3"
FOLDER = MODELS_ROOT / PROFILE
#: The runs whose steps are shipped (chapter 13's figure; the explorer's slider).
SHIPPED = [Run("induction", 1, PROFILE, head_size=256), Run("induction", 16, PROFILE,
                                                             head_size=16)]


def _manifest_entry(run: Run) -> dict:
    return json.loads((FOLDER / "manifest.json").read_text())["models"][run.shipped_name]


@pytest.mark.parametrize("run", SHIPPED, ids=lambda r: r.shipped_name)
def test_the_shipped_steps_are_the_runs_own(run):
    index = replay.read_steps_index(FOLDER)[run.shipped_name]
    entry = _manifest_entry(run)
    assert index["probes_equal"] and index["probe_difference"] == 0.0
    assert index["shipped_sha256"] == entry["sha256"]
    steps = index["steps"]
    assert len(steps) >= 8 and steps == sorted(set(steps)) and steps[0] == 0
    # step 0: the initial model, bit for bit (the same weights on any machine)
    first = replay.load_step(run, FOLDER, 0)
    for name, tensor in initial_model(run).state_dict().items():
        assert torch.equal(first.state_dict()[name], tensor), name
    # every step the run probed: its scores recomputed on the stored weights are the
    # manifest's, as stored (6 significant digits: half a unit of the 6th digit, 5e-6
    # relative; other CPU kernels than the training's move the last bits of a float32
    # forward, about 1e-7 relative, so a rounding may land on the other side)
    hp = entry["head_probes"]
    probes = fresh_heldout("induction", PROFILE).subset(
        slice(0, get_profile(PROFILE).probe_sequences))
    checked = 0
    for step in steps:
        if step not in hp["step"]:
            continue
        at = hp["step"].index(step)
        values = head_probe(replay.load_step(run, FOLDER, step), probes)
        for key in HEAD_SCORE_KEYS + HEAD_SCALAR_KEYS:
            np.testing.assert_allclose(_numbers(values[key]), _numbers(hp[key][at]),
                                       rtol=RTOL, atol=1e-9, err_msg=f"{step} {key}")
        checked += 1
    assert checked >= 5
    # the steps span the phase change: before it the probe set is at chance, after it learned
    acc = {s: hp["accuracy_predictable"][hp["step"].index(s)] for s in steps if s in hp["step"]}
    assert acc[steps[0]] < 0.05 and acc[max(acc)] > 0.9
    assert any(0.05 < a < 0.9 for a in acc.values())  # at least one step inside the fall


def test_a_changed_step_file_is_refused(tmp_path):
    run = SHIPPED[0]
    shutil.copytree(FOLDER / replay.STEPS_FOLDER, tmp_path / replay.STEPS_FOLDER)
    path = replay.step_path(run, tmp_path, 0)
    raw = bytearray(path.read_bytes())
    raw[-40] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="SHA-256"):
        replay.load_step(run, tmp_path, 0)
    with pytest.raises(ValueError, match="no replayed step 7"):
        replay.load_step(run, tmp_path, 7)


@pytest.mark.slow
def test_a_short_replay_here_agrees_with_the_manifest(tmp_path):
    """Replaying the first 20 steps of the 1 x 256 run on this machine: its probes agree with
    the manifest's (bitwise on the machine it trained on; within 1e-3 on another CPU, where
    20 steps of float rounding may differ), and a killed replay resumes."""
    run = SHIPPED[0]
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(FOLDER / "manifest.json", models / "manifest.json")
    first = replay.replay_steps(run, [0, 10], models, tmp_path / "work", progress=False)
    assert first["steps"] == [0, 10] and first["probe_difference"] is not None
    entry = replay.replay_steps(run, [0, 10, 20], models, tmp_path / "work", progress=False)
    assert entry["files"]["10"] == first["files"]["10"]  # kept, not written again
    assert entry["probe_difference"] <= 1e-3
    model, meta = load_weights(replay.step_path(run, models, 20))
    assert meta["step"] == 20 and meta["replayed_from"] == run.shipped_name
    assert replay.read_steps_index(models)[run.shipped_name] == entry


def test_probe_difference_reads_the_stored_digits():
    shipped = {"step": [0, 20], "previous_token": [[[0.5]], [[0.25]]],
               "accuracy_predictable": [0.1, None], "seconds": [1.0, 2.0]}
    same = {"step": [0, 20], "previous_token": [[[0.5000001]], [[0.25]]],
            "accuracy_predictable": [0.1, float("nan")], "seconds": [9.0, 9.0]}
    assert replay.probe_difference(same, shipped) == 0.0  # equal to 6 digits; NaN both
    off = {**same, "previous_token": [[[0.5]], [[0.2501]]]}
    assert replay.probe_difference(off, shipped) == pytest.approx(1e-4)
    assert replay.probe_difference({**same, "accuracy_predictable": [0.1, 0.3]},
                                   shipped) == float("inf")
    with pytest.raises(ValueError, match="not the first"):
        replay.probe_difference({"step": [20]}, shipped)
    with pytest.raises(ValueError, match="no 'induction'"):
        replay.probe_difference({"step": [0], "induction": [[[0.1]]]}, shipped)


def test_bad_input_names_the_argument(tmp_path):
    run = SHIPPED[0]
    with pytest.raises(ValueError, match="ascending"):
        replay.replay_steps(run, [20, 10], FOLDER, tmp_path)
    with pytest.raises(ValueError, match="steps"):
        replay.replay_steps(run, [-1], FOLDER, tmp_path)
    with pytest.raises(ValueError, match="beyond"):
        replay.replay_steps(run, [10**6], FOLDER, tmp_path)
    with pytest.raises(ValueError, match="ships no manifest"):
        replay.replay_steps(run, [0], tmp_path / "none", tmp_path)
    with pytest.raises(ValueError, match="finite-data"):
        replay.replay_steps(Run("copy", 1, "quick"), [0], FOLDER, tmp_path)
    with pytest.raises(ValueError, match="not shipped"):
        replay.replay_steps(Run("induction", 2, PROFILE, head_size=128), [0], FOLDER, tmp_path)
