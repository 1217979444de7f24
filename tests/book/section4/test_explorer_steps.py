"""The explorer's steps through training (issue 75, item 5;
bparallel.book.section4.explorer_steps): each step's data file runs the replayed weights of
that step (rounded to float16 as every model of the page) and holds each head's scores at
that step as chapter 13 reads them (float32 weights, the run's probe set).

Smallest effects these tests find: a data file of another step or run (weights off by one
float16 step anywhere), a head score off by one ulp of float64, a step missing from the
catalogue."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from bparallel.book.section4 import explorer, explorer_steps
from bparallel.transformer.replay import load_step, read_steps_index
from bparallel.transformer.runs import Run
from bparallel.transformer.shipped import MODELS_ROOT

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_catalogue_offers_every_replayed_step():
    offered = explorer_steps.step_explorer_models()
    index = read_steps_index(MODELS_ROOT / explorer_steps.STEP_PROFILE)
    for heads, size in explorer_steps.STEP_RUNS:
        run = Run("induction", heads, explorer_steps.STEP_PROFILE, head_size=size)
        mine = [e for e in offered if e["series"] == explorer_steps.series_name(run)]
        assert [e["step"] for e in mine] == index[run.shipped_name]["steps"]
        assert [e["name"] for e in mine] == [f"induction-circuit-h{heads:02d}-hs{size}-t"
                                             f"{s:05d}" for s in index[run.shipped_name]["steps"]]
        assert all(explorer.NAME.fullmatch(e["name"]) for e in mine)
    assert explorer_steps.step_explorer_models(()) == []
    with pytest.raises(FileNotFoundError, match="no steps"):
        explorer_steps.step_explorer_models([(4, 64)])
    with pytest.raises(ValueError, match="profile"):
        explorer_steps.step_scores(load_step(run, MODELS_ROOT / explorer_steps.STEP_PROFILE,
                                             0), "induction-fresh")


def test_a_replayed_run_and_its_probe_set():
    """replayed_run: the run, its manifest entry, its replayed steps and its folder, one
    lookup for the explorer and chapter 13; a pair that is not (heads, head size) or a run
    not shipped is refused. step_probe_set: the profile's probe sequences, the first of its
    held-out set."""
    from bparallel.transformer.design import fresh_heldout, get_profile

    run, entry, steps, folder = explorer_steps.replayed_run((16, 16))
    assert (run.heads, run.config.head_dim, run.seed) == (16, 16, 42)
    assert entry["sha256"] == steps["shipped_sha256"] and folder.name == explorer_steps.STEP_PROFILE
    with pytest.raises(ValueError, match="not \\(heads, head_size\\)"):
        explorer_steps.replayed_run((16,))
    with pytest.raises(FileNotFoundError, match="no such model"):
        explorer_steps.replayed_run((2, 128))
    probes = explorer_steps.step_probe_set()
    n = get_profile(explorer_steps.STEP_PROFILE).probe_sequences
    held = fresh_heldout("induction", explorer_steps.STEP_PROFILE)
    assert len(probes) == n and np.array_equal(probes.inputs, held.inputs[:n])


@pytest.mark.parametrize("pick", [0, -1], ids=["first step", "last step"])
def test_a_steps_data_file_runs_that_steps_weights_and_holds_its_scores(pick, explorer_export):
    folder, catalogue = explorer_export
    for heads, size in explorer_steps.STEP_RUNS:
        run = Run("induction", heads, explorer_steps.STEP_PROFILE, head_size=size)
        mine = [e for e in catalogue if e.get("series") == explorer_steps.series_name(run)]
        entry = mine[pick]
        data = explorer.read_data_script(folder / entry["file"])
        model = load_step(run, MODELS_ROOT / explorer_steps.STEP_PROFILE, entry["step"])
        assert data["manifest"]["step"] == entry["step"]
        assert "head_means" not in data and "head_effects" not in data  # zero ablation only
        assert data["manifest"]["steps"] == [e["step"] for e in mine]
        # the weights: the step's, rounded to float16, bit for bit
        blob = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f2")
        for name, tensor in explorer.half_rounded(model).state_dict().items():
            at = data["tensors"][name]
            got = blob[at["offset"] : at["offset"] + tensor.numel()].reshape(tensor.shape)
            assert np.array_equal(got.astype(np.float32), tensor.numpy()), name
        # the scores: chapter 13's measurement of the float32 weights, as recomputed here
        want = explorer_steps.step_scores(model)
        assert data["head_scores"] == want
        assert np.asarray(want["previous_token"]).shape == (4, heads)


STEP_VIEW_DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const ex = await import(EXPLORER_URL);
const { file, models } = JSON.parse(readFileSync(0, "utf8"));
const ctx = { window: {} };
vm.runInNewContext(readFileSync(file, "utf8"), ctx);
const data = Object.values(ctx.window.BPARALLEL_MODELS)[0];
const model = t.loadModel(data);
const view = ex.decodeView(`v=1;m=${data.name};s=0;l=1;w=learned;f=zero;x=0000.0003.0000.0000;p=99`,
                           models);
const tokens = data.sequences.inputs[0];
const mask = view.removed.map((row) => row.map((r) => (r ? 0 : 1)));
let mean = null;
try { t.forward(model, tokens, { mask, fill: "mean" }); } catch (e) { mean = e.message; }
const o = t.forward(model, tokens, { mask, fill: view.fill });
const m = t.layerMeasures(o.patterns, view.layer, { weights: t.headWeights(model)[view.layer] });
process.stdout.write(JSON.stringify({
  python: ex.toPython(view, data, tokens), status: ex.statusText(data), mean,
  group: ex.groupOf(models.find((e) => e.name === data.name)),
  series: ex.seriesOf(models.find((e) => e.name === data.name), models).map((e) => e.step),
  measure: m["mixing_time.definition"],
}));
"""


def test_export_as_python_of_a_step_loads_that_steps_weights(explorer_export):
    """The page's "Export as Python" at a step (heads removed by zero ablation, the only
    ablation a step offers) loads the step's own weights file and, run here, gives the page's
    Algorithm 1; the page groups the steps of a run and refuses mean ablation there."""
    import json
    import math

    from tests.book.section4.test_explorer import TRANSFORMER, driver, run_node

    folder, catalogue = explorer_export
    entry = next(e for e in catalogue if e.get("series") == "induction-circuit-h16-hs16"
                 and e["step"] > 0)
    code = driver(STEP_VIEW_DRIVER).replace(
        "EXPLORER_URL", json.dumps((TRANSFORMER.parent / "explorer.mjs").as_uri()))
    out = run_node(code, {"file": str(folder / entry["file"]), "models": catalogue})
    assert out["group"] == "induction-circuit" and out["series"] == entry["steps"]
    assert "no head means" in out["mean"]
    assert f"at step {entry['step']:,} of its training" in out["status"]
    assert json.dumps(entry["weights"]) in out["python"] and "fill = None" in out["python"]
    namespace: dict = {}
    python = out["python"].replace("    print(mode,", "    results[mode] = (")
    exec(compile("results = {}\n" + python, "<export>", "exec"), namespace)  # noqa: S102
    alg1 = float(namespace["results"]["definition"][0])
    assert math.isclose(alg1, out["measure"], rel_tol=1e-5)
