"""The model explorer's JavaScript (`bparallel/book/render/js/transformer.mjs`) agrees with
torch and with `bparallel`, on the data files `bparallel.book.section4.explorer` exports.

Every model the explorer offers (each task and head count of seed 42, and chapter 12's
fresh-data models of every arm) is exported once, its weights rounded to float16; one
Node process loads every data file as the page does and runs the forward pass (intact, zero
and mean ablation of some heads, every head removed) and the measures of every layer. It
writes its logits and patterns as raw float64, which the tests compare:

- with torch's float32 forward on the shipped weights rounded as the page's are
  (`explorer.half_rounded`; `ablation.ablated` for the masks,
  mean ablation with head means recomputed here): logits and patterns within 1e-4
  absolute, argmax identical;
- with the package's measures on the *same* patterns (`bparallel.proxies`): Algorithms 1-2
  in both modes, node fidelities, attention rollout, per-head fidelity within 1e-9
  relative, Definition 2.7 exactly (steps, and "never mixes" as inf);
- with the values the exporter recorded for the first sequence (the package on a float64
  copy of the model), which the page's browser tests compare with.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from bparallel import proxies
from bparallel.book.section4 import explorer
from bparallel.book.section4 import explorer_catalogue as catalogue_of
from bparallel.transformer.ablation import ablated, head_means
from bparallel.transformer.data import TASKS, SequenceDataset
from bparallel.transformer.design import HEADS, evaluation_inputs
from bparallel.transformer.importance import head_effects
from bparallel.transformer.patterns import model_head_weights
from bparallel.transformer.shipped import MODELS_ROOT, load_shipped, load_weights
from tests.conftest import EXPLORER_REFERENCE_SEQUENCES, EXPLORER_SEQUENCES

ROOT = Path(__file__).resolve().parents[3]
TRANSFORMER = ROOT / "bparallel" / "book" / "render" / "js" / "transformer.mjs"
#: float32 torch against float64 JavaScript: within this many float32 epsilons of the scale
#: of what is compared (a row's largest logit; 1 for attention probabilities). Measured
#: (float32 torch against its float64 twin, every model and case below, AVX-512 and AVX2
#: kernels): at most 42 for logits (1 x 256 histogram, all heads removed) and 31 for
#: patterns; a wrong weight or layer moves them by far more than 128.
F32_EPSILONS = 128
EPS32 = float(np.finfo(np.float32).eps)
RTOL = 1e-9  # the same patterns through the package and through the JavaScript
#: Models compared with torch: 1 and 16 heads of both paper tasks, graph tasks, and
#: fresh-data models of chapter 12's three arms (the widest attention among them).
TORCH_MODELS = ("copy-h01", "copy-h16", "cycle-h01", "cycle-h16", "first-h04", "induction-h16",
                "majority-h08", "induction-fresh-h16-hs16", "histogram-fresh-h01-hs256",
                "histogram-fresh-h16", "induction-fresh-h08-hs32")
NUM_SEQUENCES = EXPLORER_SEQUENCES  # the export's defaults: what the book ships
REFERENCE_SEQUENCES = EXPLORER_REFERENCE_SEQUENCES

DRIVER = r"""
import { readFileSync, writeFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const jobs = JSON.parse(readFileSync(0, "utf8"));
const f64 = (path, arrays) => {
  const n = arrays.reduce((s, a) => s + a.length, 0);
  const all = new Float64Array(n);
  let at = 0;
  for (const a of arrays) { all.set(a, at); at += a.length; }
  writeFileSync(path, new Uint8Array(all.buffer));
};
const finite = (x) => (Number.isFinite(x) ? x : null);
const out = jobs.map((job) => {
  const ctx = { window: {} };  // what a <script> element sees: nothing but window
  vm.runInNewContext(readFileSync(job.file, "utf8"), ctx);
  const names = Object.keys(ctx.window.BPARALLEL_MODELS);
  const data = ctx.window.BPARALLEL_MODELS[names[0]];
  const model = t.loadModel(data);
  const w = t.headWeights(model);
  const seq = data.sequences;
  const res = { names, head_weights: w, runs: [] };
  for (const run of job.runs) {
    const mask = run.removed === null ? null : t.headMask(model, run.removed);
    const o = t.forward(model, seq.inputs[run.sequence], { mask, fill: run.fill });
    const sc = t.sequenceScores(o, seq.targets[run.sequence], seq.predictable[run.sequence]);
    const r = { accuracy: sc.accuracy, margin: sc.meanMargin, predictions: sc.predictions };
    if (run.dump) {
      f64(run.dump + ".logits", [o.logits]);
      f64(run.dump + ".patterns", o.patterns.flat());
    }
    if (run.measures) {
      r.layers = o.patterns.map((_, l) => {
        const m = t.layerMeasures(o.patterns, l, { weights: w[l], rolloutWeights: w });
        const u = t.rolloutRow(o.patterns.slice(0, l + 1), null);
        const row = { "rollout.uniform": Array.from(u), "rollout.weighted": m.rollout };
        for (const [k, v] of Object.entries(m)) {
          if (k === "combined" || k === "rollout") continue;
          row[k] = typeof v === "number" ? finite(v) : v;
        }
        return row;
      });
    }
    res.runs.push(r);
  }
  return res;
});
process.stdout.write(JSON.stringify(out));
"""


def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node (Node.js >= 18) is not on PATH: run `make setup`")
    return path


def run_node(code: str, payload: Any, timeout: int = 600) -> Any:
    proc = subprocess.run([node(), "--input-type=module", "-e", code],
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, f"node failed:\n{proc.stderr}"
    return json.loads(proc.stdout)


def driver(code: str = DRIVER) -> str:
    return code.replace("MODULE_URL", json.dumps(TRANSFORMER.as_uri()))


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def exported(explorer_export) -> tuple[Path, list[dict[str, Any]]]:
    """Every model the explorer offers, exported as the book exports them (conftest)."""
    return explorer_export


@pytest.fixture(scope="module")
def shipped(exported) -> dict[str, tuple[Any, dict[str, Any]]]:
    """The page's models in float32 torch (the shipped weights rounded to float16,
    ``explorer.half_rounded``) and their metadata, by the explorer's model name."""
    _, catalogue = exported
    out = {}
    for task in catalogue_of.EXPLORER_TASKS:
        folder = MODELS_ROOT / ("paper" if task in ("copy", "cycle") else task)
        models, metas = load_shipped(folder, tasks=(task,))
        for (t, h), model in models.items():
            out[f"{t}-h{h:02d}"] = (explorer.half_rounded(model), metas[(t, h)])
    for e in catalogue:
        if e["data"] == "fresh":
            model, meta = load_weights(MODELS_ROOT / e["folder"] / e["weights"],
                                       sha256=e["sha256"])
            out[e["name"]] = (explorer.half_rounded(model), meta)
    return out


def removed_heads(H: int) -> list[list[int]]:
    """A few heads across the layers: layer 0 head 0, layer 1 the last head, layer 2 head 1
    (when there is one) and layer 3 head 0."""
    out = [[0, 0], [1, H - 1], [3, 0]]
    if H > 1:
        out.append([2, 1])
    return out


def all_heads(L: int, H: int) -> list[list[int]]:
    return [[layer, h] for layer in range(L) for h in range(H)]


#: The forward runs compared with torch, per model: (label, removed heads, fill).
RUNS = ("intact", "zero", "mean", "zero-all", "mean-all")


@pytest.fixture(scope="module")
def js(exported, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """The Node results per model name: every model runs its first sequence intact with the
    measures of every layer; the models of TORCH_MODELS also run the ablations of RUNS and
    write logits and patterns to `<dump>.logits` / `.patterns`."""
    folder, catalogue = exported
    dumps = tmp_path_factory.mktemp("explorer-js")
    jobs = []
    for entry in catalogue:
        name, H = entry["name"], entry["heads"]
        dump = str(dumps / name)
        runs = [{"removed": None, "fill": "zero", "sequence": 0, "measures": True,
                 "dump": dump + ".intact"}]
        if name in TORCH_MODELS:
            for label, removed, fill in (("zero", removed_heads(H), "zero"),
                                         ("mean", removed_heads(H), "mean"),
                                         ("zero-all", all_heads(4, H), "zero"),
                                         ("mean-all", all_heads(4, H), "mean")):
                runs.append({"removed": removed, "fill": fill, "sequence": 1,
                             "measures": False, "dump": f"{dump}.{label}"})
        jobs.append({"file": str(folder / entry["file"]), "runs": runs})
    results = run_node(driver(), jobs)
    return {e["name"]: {**r, "dump": str(dumps / e["name"]), "entry": e}
            for e, r in zip(catalogue, results, strict=True)}


def read_f64(path: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.fromfile(path, dtype="<f8").reshape(shape)


def data_of(exported, name: str) -> dict[str, Any]:
    folder, _ = exported
    return explorer.read_data_script(folder / f"{name}.js")


# --------------------------------------------------------------------------- the export


def test_every_model_is_offered_and_within_the_size_budget(exported, shipped):
    folder, catalogue = exported
    finite = [e for e in catalogue if e["data"] == "finite"]
    assert [(e["task"], e["heads"]) for e in finite] == [
        (t, h) for t in catalogue_of.EXPLORER_TASKS for h in HEADS]
    # chapter 12's fresh-data models: every arm and head count of seed 42, a configuration
    # two arms share once (4 x 16: fixed width and head size; 16 x 16: head size and width)
    fresh = [e for e in catalogue if e["data"] == "fresh" and "series" not in e]
    for task in catalogue_of.EXPLORER_FRESH_TASKS:
        mine = {(e["heads"], e["head_size"]): e["arms"] for e in fresh if e["task"] == task}
        assert set(mine) == {(1, 64), (4, 16), (8, 8), (16, 4), (1, 16), (8, 16), (16, 16),
                             (1, 256), (4, 64), (8, 32)}, task
        assert mine[(4, 16)] == ["fixed width", "fixed head size"]
        assert mine[(16, 16)] == ["fixed head size", "fixed attention width"]
    assert all(e["outcome"]["outcome"] in ("converged", "budget reached", "not learned")
               for e in fresh)
    # chapter 13's two runs through training, at least eight steps each
    steps = [e for e in catalogue if "series" in e]
    assert {(e["heads"], e["head_size"]) for e in steps} == {(1, 256), (16, 16)}
    assert all(sum(f["series"] == e["series"] for f in steps) >= 8 for e in steps)
    total = sum(e["bytes"] for e in catalogue)
    assert total == sum((folder / e["file"]).stat().st_size for e in catalogue)
    assert total <= explorer.MAX_DATA_BYTES, f"{total:,} bytes of data"
    assert max(e["bytes"] for e in catalogue) <= explorer.MAX_FILE_BYTES
    # the weights dominate: float16 in base64, 8/3 bytes per parameter; the head means,
    # sequences and recorded values add at most about two fifths
    for e in catalogue:
        n = sum(p.numel() for p in shipped[e["name"]][0].parameters())
        assert 8 / 3 * n < e["bytes"] < 1.45 * 8 / 3 * n, e["name"]
    assert all((folder / e["file"]).stat().st_mode & 0o044 == 0o044 for e in catalogue)


def test_data_file_holds_what_the_page_needs(exported, shipped):
    data = data_of(exported, "majority-h04")
    model, meta = shipped["majority-h04"]
    assert data["format"] == explorer.FORMAT and data["name"] == "majority-h04"
    assert (data["task"], data["heads"], data["seed"], data["profile"]) == ("majority", 4, 42,
                                                                            "majority")
    assert data["manifest"]["sha256"] == meta["sha256"]
    cfg = data["config"]
    assert (cfg["n_layers"], cfg["n_heads"], cfg["head_dim"], cfg["d_model"]) == (4, 4, 16, 64)
    assert cfg["norm_eps"] == torch.finfo(torch.float32).eps
    seq = data["sequences"]
    total = NUM_SEQUENCES + REFERENCE_SEQUENCES
    inputs = evaluation_inputs("majority", "heldout", "majority", num_sequences=total)
    assert seq["inputs"] == inputs[:NUM_SEQUENCES].tolist()
    assert seq["reference"] == [NUM_SEQUENCES, total]
    # the exported means are those of the reference sequences, rounded to float16
    means = np.frombuffer(base64.b64decode(data["head_means"]), dtype="<f2")
    expected = head_means(model, inputs[NUM_SEQUENCES:]).to(torch.float16)
    assert np.array_equal(means.reshape(expected.shape), expected.numpy())
    expected = expected.to(torch.float32).numpy()
    # the weights, bit for bit those of the rounded model; the rounding is float16's
    blob = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f2")
    original, _ = load_shipped(MODELS_ROOT / "majority", tasks=("majority",))
    for name, tensor in model.state_dict().items():
        at = data["tensors"][name]
        assert at["shape"] == list(tensor.shape)
        got = blob[at["offset"] : at["offset"] + tensor.numel()].reshape(tensor.shape)
        assert np.array_equal(got.astype(np.float32), tensor.numpy()), name
        full = original[("majority", 4)].state_dict()[name].numpy()
        np.testing.assert_allclose(got, full, rtol=2 ** -11, atol=2 ** -24, err_msg=name)
    # each head's recorded causal effect: (L, H), the package's float32 head study agrees
    effects = np.asarray(data["head_effects"])
    assert effects.shape == (4, 4) and np.isfinite(effects).all()
    study = head_effects(model, SequenceDataset.of("majority", inputs[:NUM_SEQUENCES]),
                         removal="mean", fill=torch.from_numpy(expected))
    np.testing.assert_allclose(effects, study["effect"]["margin"].mean(-1), atol=1e-3)
    assert np.abs(effects).max() > 0.01  # some head matters: the check is not vacuous


def test_the_data_file_sets_one_name_and_nothing_else(js):
    """A data file, run with only `window` defined, defines exactly its own model."""
    for name, res in js.items():
        assert res["names"] == [name]


# --------------------------------------------------------------------------- forward pass


def torch_run(model, inputs, removed, fill):
    """torch logits (T, V) and patterns (L, H, T, T), in float64, with `removed` heads
    ablated (``model``'s own precision: float32, or its float64 copy)."""
    L, H = model.config.n_layers, model.config.n_heads
    mask = torch.ones(L, H, dtype=next(model.parameters()).dtype)
    for layer, h in removed or []:
        mask[layer, h] = 0
    with torch.no_grad(), ablated(model, mask, fill):
        logits, patterns = model(inputs[None], return_attention=True)
    return logits[0].double().numpy(), patterns[:, 0].double().numpy()


@pytest.mark.parametrize("name", TORCH_MODELS)
def test_forward_and_ablation_match_torch(name, js, exported, shipped):
    """Logits and patterns within float32's rounding of torch's float32 (F32_EPSILONS of
    the scale: a row's largest logit, since a logit is a sum of terms that large; 1 for the
    probabilities), argmax identical, intact and with heads removed by zero and mean
    ablation (the means recomputed here, independently of the exported ones); and within
    1e-9 of torch's float64 copy of the same model, the precision the page computes in."""
    res, data = js[name], data_of(exported, name)
    task, H = res["entry"]["task"], res["entry"]["heads"]
    model, _ = shipped[name]
    total = NUM_SEQUENCES + REFERENCE_SEQUENCES
    inputs = evaluation_inputs(task, "heldout", data["profile"], num_sequences=total)
    means = head_means(model, inputs[NUM_SEQUENCES:]).to(torch.float16).to(torch.float32)
    assert torch.equal(means, explorer.page_head_means(model, inputs[NUM_SEQUENCES:]))
    L, T, V = 4, inputs.shape[1], 256
    cases = [("intact", 0, None, None), ("zero", 1, removed_heads(H), None),
             ("mean", 1, removed_heads(H), means), ("zero-all", 1, all_heads(L, H), None),
             ("mean-all", 1, all_heads(L, H), means)]
    twin = explorer._float64_copy(model)
    for k, (label, sequence, removed, fill) in enumerate(cases):
        logits, patterns = torch_run(model, inputs[sequence], removed, fill)
        js_logits = read_f64(f"{res['dump']}.{label}.logits", (T, V))
        js_patterns = read_f64(f"{res['dump']}.{label}.patterns", (L, H, T, T))
        fill64 = None if fill is None else fill.double()
        logits64, patterns64 = torch_run(twin, inputs[sequence], removed, fill64)
        scale = np.abs(logits64).max(-1, keepdims=True)
        rounding = np.abs(js_logits - logits) / (EPS32 * scale)
        assert rounding.max() <= F32_EPSILONS, (label, float(rounding.max()))
        assert np.abs(js_patterns - patterns).max() <= F32_EPSILONS * EPS32, label
        np.testing.assert_allclose(js_logits, logits64, rtol=1e-9, atol=1e-9, err_msg=label)
        np.testing.assert_allclose(js_patterns, patterns64, rtol=1e-9, atol=1e-12,
                                   err_msg=label)
        assert np.array_equal(js_logits.argmax(-1), logits.argmax(-1)), label
        assert res["runs"][k]["predictions"] == logits.argmax(-1).tolist(), label


def test_removing_every_head_of_cycle_16_changes_its_predictions(js):
    """The issue's browser check, here on the JavaScript alone: cycle needs its attention."""
    runs = js["cycle-h16"]["runs"]
    intact_other = runs[0]  # sequence 0
    zero_all = runs[3]
    assert intact_other["accuracy"] == 1.0
    assert zero_all["accuracy"] < 0.05
    copy = js["copy-h16"]["runs"]
    assert copy[3]["accuracy"] == 1.0  # copy needs no attention (chapter 10's knockouts)


def test_head_weights_match_the_package(js, shipped):
    for name, res in js.items():
        model, _ = shipped[name]
        np.testing.assert_allclose(res["head_weights"], model_head_weights(model),
                                   rtol=1e-12, atol=0, err_msg=name)


# --------------------------------------------------------------------------- measures

SCALARS = tuple(f"{q}.{mode}" for q in ("mixing_time", "fidelity") for mode in proxies.MODES)
STEPS = tuple(f"worst_case.{mode}" for mode in proxies.MODES)
VECTORS = ("fidelity.node", "rollout.weighted", "rollout.uniform", "head_fidelity.paper",
           "head_fidelity.definition")


def package_measures(patterns: np.ndarray, w: np.ndarray) -> list[dict[str, Any]]:
    """The package's measures of every layer of one sequence's patterns ``(L, H, T, T)``
    with head weights ``(L, H)``, keyed as ``layerMeasures``."""
    out = []
    weighted = proxies.attention_rollout(patterns, w)[..., -1, :]  # (L, T)
    uniform = proxies.attention_rollout(patterns)[..., -1, :]
    for layer, (a, wl) in enumerate(zip(patterns, w, strict=True)):
        row: dict[str, Any] = {}
        for mode in proxies.MODES:
            row[f"mixing_time.{mode}"] = float(proxies.mixing_time_proxy(a, wl, mode=mode))
            row[f"fidelity.{mode}"] = float(proxies.minimax_fidelity_proxy(a, wl, mode=mode))
            row[f"worst_case.{mode}"] = float(proxies.worst_case_mixing_time(a, wl, mode=mode))
            row[f"head_fidelity.{mode}"] = proxies.best_head_vs_combined(
                a, wl, mode=mode)["per_head"]
        row["fidelity.node"] = proxies.node_fidelity_proxy(a, wl).phi
        row["rollout.weighted"], row["rollout.uniform"] = weighted[layer], uniform[layer]
        out.append(row)
    return out


def compare(got: list[dict[str, Any]], want: list[dict[str, Any]], what: str) -> list[str]:
    """Every (layer, key) where `got` (JavaScript) and `want` differ beyond RTOL, or in
    Definition 2.7's steps at all (None is "never mixes", inf)."""
    bad = []
    for layer, (g, w) in enumerate(zip(got, want, strict=True)):
        for key in SCALARS + VECTORS:
            a, b = np.asarray(g[key], dtype=float), np.asarray(w[key], dtype=float)
            if a.shape != b.shape or not np.allclose(a, b, rtol=RTOL, atol=0):
                err = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
                bad.append(f"{what} layer {layer} {key}: relative error {err:.2g}")
        for key in STEPS:
            a = math.inf if g[key] is None else g[key]
            if a != w[key]:
                bad.append(f"{what} layer {layer} {key}: {a} != {w[key]}")
    return bad


def test_measures_match_the_package_on_the_same_patterns(js, shipped):
    """Every exported model's first sequence, every layer: the JavaScript measures of its
    patterns against the package's on those very patterns."""
    bad = []
    for name, res in js.items():
        H = res["entry"]["heads"]
        model, _ = shipped[name]
        patterns = read_f64(f"{res['dump']}.intact.patterns", (4, H, 100, 100))
        want = package_measures(patterns, model_head_weights(model))
        bad += compare(res["runs"][0]["layers"], want, name)
    assert not bad, "\n".join(bad)


def test_definition_2_7_covers_slow_and_never_mixing_walks(js):
    """The sample holds what Definition 2.7's two phases and its "never mixes" are for:
    every paper-mode walk is trapped at position 0, and some definition-mode walks take
    more than the 128 direct steps (the single-head copy model: up to ~1e12)."""
    steps = [layer for res in js.values() for layer in res["runs"][0]["layers"]]
    assert all(s["worst_case.paper"] is None for s in steps)
    slow = [s["worst_case.definition"] for s in steps if s["worst_case.definition"] is not None]
    assert max(slow) > 128 and min(slow) < 128


def test_recorded_values_match_the_javascript(js, exported):
    """What the exporter recorded for the first sequence (the package on a float64 copy of
    the model: what the page's browser tests compare with) is what the JavaScript computes."""
    bad = []
    for name, res in js.items():
        rec = data_of(exported, name)["recorded"]
        run = res["runs"][0]
        assert run["predictions"] == rec["predictions"], name
        assert math.isclose(run["accuracy"], rec["accuracy"], rel_tol=RTOL), name
        assert math.isclose(run["margin"], rec["margin"], rel_tol=RTOL), name
        np.testing.assert_allclose(res["head_weights"], rec["head_weights"], rtol=1e-12)
        bad += compare(run["layers"], rec["layers"], name)
    assert not bad, "\n".join(bad)


EFFECTS_DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const job = JSON.parse(readFileSync(0, "utf8"));
const ctx = { window: {} };
vm.runInNewContext(readFileSync(job.file, "utf8"), ctx);
const data = Object.values(ctx.window.BPARALLEL_MODELS)[0];
const model = t.loadModel(data);
const seq = data.sequences;
const L = data.config.n_layers, H = data.config.n_heads;
const margin = (removed, s) => {
  const mask = removed === null ? null : t.headMask(model, removed);
  const o = t.forward(model, seq.inputs[s], { mask, fill: "mean" });
  return t.sequenceScores(o, seq.targets[s], seq.predictable[s]).meanMargin;
};
const N = seq.inputs.length;
const intact = Array.from({ length: N }, (_, s) => margin(null, s));
const out = [];
for (let l = 0; l < L; l++) {
  const row = [];
  for (let h = 0; h < H; h++) {
    let sum = 0;
    for (let s = 0; s < N; s++) sum += intact[s] - margin([[l, h]], s);
    row.push(sum / N);
  }
  out.push(row);
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.parametrize("name", ["cycle-h04", "induction-h01", "histogram-fresh-h08-hs32"])
def test_recorded_head_effects_are_what_the_page_computes(name, exported):
    """The effect shown under each head (recorded by the package on a float64 copy) is what
    the JavaScript gets by removing that head alone by mean ablation on every shown
    sequence: one measure, two implementations, within rounding."""
    folder, _ = exported
    js = run_node(driver(EFFECTS_DRIVER), {"file": str(folder / f"{name}.js")})
    recorded = data_of(exported, name)["head_effects"]
    np.testing.assert_allclose(js, recorded, rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- bad input


def test_export_refuses_bad_choices(tmp_path):
    with pytest.raises(ValueError, match=r"tasks: 'nope' is not one of"):
        explorer.export_models(tmp_path, tasks=["nope"])
    with pytest.raises(ValueError, match=r"heads: 3 is not one of \[1, 4, 8, 16\]"):
        explorer.export_models(tmp_path, heads=[3])
    with pytest.raises(ValueError, match="tasks is empty"):
        explorer.export_models(tmp_path, tasks=[])
    with pytest.raises(ValueError, match="repeats"):
        explorer.export_models(tmp_path, heads=[1, 1])
    with pytest.raises(FileNotFoundError, match="lists no model cycle-h04-s7"):
        explorer.export_models(tmp_path, tasks=["cycle"], heads=[4], seed=7)
    with pytest.raises(FileNotFoundError, match="first/manifest.json lists no model first-h01"):
        explorer.export_models(tmp_path, tasks=["first"], models_root=tmp_path / "none")
    with pytest.raises(ValueError, match="num_sequences"):
        explorer.export_models(tmp_path, tasks=["copy"], heads=[1], num_sequences=0)
    with pytest.raises(ValueError, match="over the budget"):
        explorer.export_models(tmp_path, tasks=["copy"], heads=[1], max_bytes=1000,
                               num_sequences=1, reference_sequences=1)
    with pytest.raises(ValueError, match="fresh_tasks: 'majority' is not one of"):
        catalogue_of.explorer_models(fresh_tasks=["majority"])
    folder = catalogue_of.FRESH_PROFILES["histogram"]  # the chapter's histogram runs
    with pytest.raises(FileNotFoundError, match=f"{folder}/manifest.json lists no model "
                                                "histogram-h01-s7"):
        catalogue_of.fresh_explorer_models("histogram", seed=7)
    assert not any(tmp_path.glob("*.js.*.tmp"))


HALF_DRIVER = r"""
const t = await import(MODULE_URL);
const bits = Array.from({ length: 65536 }, (_, b) => b);
process.stdout.write(JSON.stringify(bits.map((b) => {
  const v = t.halfToNumber(b);
  return Number.isFinite(v) ? v : String(v);
})));
"""


def test_every_float16_decodes_as_numpy_reads_it():
    """The page's half-precision decoder against numpy's, all 65,536 bit patterns (zeros,
    subnormals, normals, infinities, NaN); the data files never hold the last two."""
    got = run_node(driver(HALF_DRIVER), {})
    want = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float64)
    finite = np.isfinite(want)
    pairs = list(zip(got, finite, strict=True))
    assert np.array_equal(np.asarray([g for g, f in pairs if f]), want[finite])
    assert {g for g, f in pairs if not f} == {"Infinity", "-Infinity", "NaN"}
    with pytest.raises(ValueError, match="float16's range"):
        explorer._float16_base64([1e6])


def test_data_scripts_are_checked(tmp_path):
    with pytest.raises(ValueError, match="expected '<task>-hNN'"):
        explorer.data_script({"name": '"]=alert(1);//'})
    bad = tmp_path / "x.js"
    bad.write_text("alert(1);\n")
    with pytest.raises(ValueError, match="not an explorer data file"):
        explorer.read_data_script(bad)


BAD_INPUT_DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const { file } = JSON.parse(readFileSync(0, "utf8"));
const ctx = { window: {} };
vm.runInNewContext(readFileSync(file, "utf8"), ctx);
const data = Object.values(ctx.window.BPARALLEL_MODELS)[0];
const model = t.loadModel(data);
const x = data.sequences.inputs[0];
const tries = {
  format: () => t.loadModel({ ...data, format: 99 }),
  tensor: () => t.loadModel({
    ...data, tensors: { ...data.tensors, "ln_f.weight": { offset: 0, shape: [64] } } }),
  shape: () => t.loadModel({ ...data, config: { ...data.config, d_model: 32 } }),
  token: () => t.forward(model, [...x.slice(0, 5), 256]),
  long: () => t.forward(model, [...x, 1]),
  mask: () => t.forward(model, x, { mask: [[1], [1]] }),
  maskValue: () => t.forward(model, x, { mask: t.headMask(model).map((r) => r.map(() => 2)) }),
  fill: () => t.forward(model, x, { fill: "median" }),
  head: () => t.headMask(model, [[4, 0]]),
  mode: () => t.mixingTimeProxy(new Float64Array([1]), { mode: "published" }),
  weights: () => t.combineHeads([new Float64Array(4)], [0]),
  layer: () => t.layerMeasures([], 0),
};
const out = {};
for (const [k, f] of Object.entries(tries)) {
  try { f(); out[k] = null; } catch (e) { out[k] = e.message; }
}
process.stdout.write(JSON.stringify(out));
"""


def test_javascript_refuses_bad_input_with_clear_errors(exported):
    folder, _ = exported
    out = run_node(driver(BAD_INPUT_DRIVER), {"file": str(folder / "cycle-h04.js")})
    expected = {
        "format": "format 99: this page reads format 2",
        "tensor": "unexpected [ln_f.weight]",
        "shape": "has shape [256,64], expected [256,32]",
        "token": "256 is not a token id in 0..255",
        "long": "expected 1..100 token ids, got 101",
        "mask": "mask: expected 4 rows of 4 entries",
        "maskValue": "mask: 2 is not in [0, 1]",
        "fill": 'fill: "zero" or "mean", got "median"',
        "head": "removed head (4, 0) is not in 0..3 x 0..3",
        "mode": 'mode: "published" is not one of paper, definition',
        "weights": "head weights are all zero",
        "layer": "layer must lie in 0..-1, got 0",
    }
    for key, needle in expected.items():
        assert out[key] is not None and needle in out[key], (key, out[key])


# --------------------------------------------------------------------------- the page


def test_page_fits_its_budget_and_loads_nothing_until_a_model_is_chosen(exported):
    _, catalogue = exported
    html = explorer.page_html("explorer-data/", catalogue=catalogue)
    assert len(html.encode("utf-8")) <= explorer.MAX_PAGE_BYTES
    assert html.count("<script") == 1 and '<script type="module">' in html
    for needle in ("src=", "href=", "@import", "url(", "fetch(", "import(", "XMLHttpRequest"):
        assert needle not in html, needle
    proc = subprocess.run([node(), "--input-type=module", "--check"],
                          input=explorer.inline_script(catalogue, "explorer-data/"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    for bad in ("javascript:alert(1)//", "data/x", "a b/", "</script>/"):
        with pytest.raises(ValueError, match="data_url"):
            explorer.page_html(bad, catalogue=catalogue)


VIEW_DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const ex = await import(EXPLORER_URL);
const { file, models, links } = JSON.parse(readFileSync(0, "utf8"));
const ctx = { window: {} };
vm.runInNewContext(readFileSync(file, "utf8"), ctx);
const data = Object.values(ctx.window.BPARALLEL_MODELS)[0];
const model = t.loadModel(data);
const view = ex.decodeView(
  "v=1;m=cycle-h04;s=1;l=2;w=custom;b=1,0.5,0,2;f=mean;x=0001.0000.000a.0000;p=7", models);
const tokens = data.sequences.inputs[view.seq];
const mask = view.removed.map((row) => row.map((r) => (r ? 0 : 1)));
const o = t.forward(model, tokens, { mask, fill: view.fill });
const s = view.beta.reduce((a, b) => a + b, 0);
const m = t.layerMeasures(o.patterns, view.layer, { weights: view.beta.map((b) => b / s) });
const bad = {};
for (const link of links) {
  try { ex.decodeView(link, models); bad[link] = null; } catch (e) { bad[link] = e.message; }
}
const fresh = t.freshSequence("induction", 5);
const partial = [
  "v=1;m=cycle-h04;s=typed;t=5.17.5.9;l=9;w=uniform;f=zero;p=2",
  "v=1;m=cycle-h03;s=typed;t=5.17.5.9;l=1;w=uniform;f=zero;x=0001.0000.0000.0000;p=2",
].map((link) => ex.readView(link, models));
process.stdout.write(JSON.stringify({
  link: ex.encodeView(view), python: ex.toPython(view, data, tokens), bad, partial,
  measures: Object.fromEntries(["mixing_time.paper", "mixing_time.definition",
    "fidelity.paper", "fidelity.definition", "worst_case.paper", "worst_case.definition"]
    .map((k) => [k, Number.isFinite(m[k]) ? m[k] : null])),
  fresh, freshTargets: t.taskTargets("induction", fresh),
}));
"""

BAD_LINKS = (
    "v=2;m=cycle-h04;s=0;l=0;w=learned;f=mean;p=0",
    "v=1;m=cycle-h03;s=0;l=0;w=learned;f=mean;p=0",
    "v=1;m=cycle-h04;s=0;l=4;w=learned;f=mean;p=0",
    "v=1;m=cycle-h04;s=0;l=0;w=learned;f=mean;p=0<img src=x onerror=alert(1)>",
    "v=1;m=cycle-h04;s=0;l=0;w=eval;f=mean;p=0",
    "v=1;m=cycle-h04;s=0;l=0;w=learned;f=mean;x=0010.0000.0000.0000;p=0",
    "v=1;m=cycle-h04;s=typed;t=1.2.300;l=0;w=learned;f=mean;p=0",
    "v=1;m=cycle-h04;s=0;l=0;w=custom;b=0,0,0,0;f=mean;p=0",
    "v=1;m=__proto__;s=0;l=0;w=learned;f=mean;p=0",
)


@pytest.mark.parametrize("name", ["cycle-h04", "histogram-fresh-h04-hs64"])
def test_links_round_trip_and_export_as_python_reproduces_the_view(name, exported):
    """A link decodes to the view it encodes; malformed or hostile links are refused with a
    reason; the "Export as Python" code, run here, gives the page's measures (the package's
    float32 model: within 1e-5 relative; Definition 2.7's steps may differ by rounding of
    the float32 patterns, so only the finite/never-mixes answer is compared exactly)."""
    folder, catalogue = exported
    code = driver(VIEW_DRIVER).replace(
        "EXPLORER_URL", json.dumps((TRANSFORMER.parent / "explorer.mjs").as_uri()))
    code = code.replace("m=cycle-h04", f"m={name}")
    out = run_node(code, {"file": str(folder / f"{name}.js"), "models": catalogue,
                          "links": list(BAD_LINKS)})
    assert out["link"] == (f"v=1;m={name};s=1;l=2;w=custom;b=1,0.5,0,2;f=mean;"
                           "x=0001.0000.000a.0000;p=7")
    assert all(out["bad"][link] for link in BAD_LINKS), out["bad"]
    # a link read in part keeps every field that reads right: the typed tokens above all
    one, other = out["partial"]
    assert one["problems"] == ["field l is out of range"]
    assert {k: one["view"][k] for k in ("model", "seq", "tokens", "weights", "fill", "pos")} \
        == {"model": name, "seq": "typed", "tokens": [5, 17, 5, 9],
            "weights": "uniform", "fill": "zero", "pos": 2}
    assert one["view"]["layer"] == 3  # the default's
    assert other["problems"] == ["the link names no model this page offers"]
    assert other["view"]["model"] == "cycle-h16" and other["view"]["tokens"] == [5, 17, 5, 9]
    assert other["view"]["layer"] == 1 and other["view"]["removed"][0][0] is True
    namespace: dict[str, Any] = {}
    python = out["python"].replace("    print(mode,", "    results[mode] = (")
    exec(compile("results = {}\n" + python, "<export>", "exec"), namespace)  # noqa: S102
    for mode, (alg1, alg2, def27) in namespace["results"].items():
        assert math.isclose(float(alg1), out["measures"][f"mixing_time.{mode}"], rel_tol=1e-5)
        assert math.isclose(float(alg2), out["measures"][f"fidelity.{mode}"], rel_tol=1e-5,
                            abs_tol=1e-6)  # a fidelity near 0 is all rounding
        assert math.isinf(def27) == (out["measures"][f"worst_case.{mode}"] is None)
    # the page's fresh induction sequence has the task's structure, and its targets are the
    # package's
    fresh = torch.tensor([out["fresh"]])
    from bparallel.transformer.data import make_targets, predictable
    assert len(set(out["fresh"][:51])) == 51 and set(out["fresh"][51:]) <= set(out["fresh"][:50])
    assert out["freshTargets"]["targets"] == make_targets(fresh, "induction")[0].tolist()
    assert out["freshTargets"]["predictable"] == predictable(fresh, "induction")[0].int().tolist()


TARGETS_DRIVER = r"""
import { readFileSync } from "node:fs";
const t = await import(MODULE_URL);
const jobs = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(jobs.map(([task, x]) => t.taskTargets(task, x))))
"""


def test_task_targets_match_the_package():
    """`taskTargets` (typed and fresh sequences) against `data.make_targets` and
    `data.predictable`, on random sequences with many repeats (ties for majority)."""
    from bparallel.transformer.data import make_targets, predictable

    rng = np.random.default_rng(34)
    jobs = []
    for task in TASKS:
        for k in range(30):
            T = int(rng.integers(1, 101))
            jobs.append((task, rng.integers(0, 3 + k * 8, size=T).tolist()))
    got = run_node(driver(TARGETS_DRIVER), jobs)
    for (task, x), js_out in zip(jobs, got, strict=True):
        xt = torch.tensor([x])
        assert js_out["targets"] == make_targets(xt, task)[0].tolist(), (task, x)
        assert js_out["predictable"] == predictable(xt, task)[0].int().tolist(), (task, x)


CONSTANTS_DRIVER = r"""
import { readFileSync } from "node:fs";
const t = await import(MODULE_URL);
const seeds = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
  tasks: t.TASKS, majority: t.MAJORITY_SYMBOLS, histogram: t.HISTOGRAM_SYMBOLS,
  fresh: Object.fromEntries(
    t.TASKS.map((task) => [task, seeds.map((s) => t.freshSequence(task, s))])),
}))
"""


def test_the_javascript_tasks_are_the_packages():
    """The twin's task list and alphabet sizes are the package's, and its fresh sequences
    have each task's structure (histogram's and majority's: one small alphabet each)."""
    from bparallel.transformer import data

    out = run_node(driver(CONSTANTS_DRIVER), [1, 2, 3])
    assert out["tasks"] == list(data.TASKS)
    assert (out["majority"], out["histogram"]) == (data.MAJORITY_SYMBOLS,
                                                    data.HISTOGRAM_SYMBOLS)
    for task, sequences in out["fresh"].items():
        for x in sequences:
            assert len(x) == data.SEQ_LEN and all(0 <= v < data.VOCAB_SIZE for v in x)
            if task in ("majority", "histogram"):
                assert 2 <= len(set(x)) <= out[task], (task, x)


OUTCOME_DRIVER = r"""
import { readFileSync } from "node:fs";
const ex = await import(EXPLORER_URL);
const models = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(models.map((m) => [m.name, ex.outcomeText(m)])));
"""


def test_the_page_states_each_fresh_models_outcome_by_the_chapters_rule(exported):
    """The status line's outcome (``outcomeText``) reads the catalogue: the learning step,
    or the rule's own count of evaluations in a row for a run that never learned, and
    convergence or the budget that censored it; nothing for a finite-data model. Every
    shipped fresh model is checked, and one of each outcome is made from a shipped entry
    (the shipped runs need not have all three: under a settling recipe every run
    converges)."""
    _, catalogue = exported
    fresh = next(e for e in catalogue if e["data"] == "fresh")
    made = [{**fresh, "name": f"made-{outcome}",
             "outcome": {**fresh["outcome"], "outcome": outcome, "learned_at": learned,
                         "converged_at": 5200 if outcome == "converged" else None}}
            for outcome, learned in (("not learned", None), ("budget reached", 4400),
                                     ("converged", 4400))]
    code = OUTCOME_DRIVER.replace(
        "EXPLORER_URL", json.dumps((TRANSFORMER.parent / "explorer.mjs").as_uri()))
    text = dict(run_node(code, [*catalogue, *made]))
    assert text["cycle-h16"] == ""
    budget, in_a_row = fresh["outcome"]["budget"], fresh["outcome"]["in_a_row"]
    assert text["made-not learned"] == (f"never held 90% for {in_a_row} evaluations in a "
                                        f"row; censored at the budget of {budget:,} steps")
    assert text["made-budget reached"] == ("learned at step 4,400; censored at the budget "
                                           f"of {budget:,} steps")
    assert text["made-converged"] == "learned at step 4,400; converged at step 5,200"
    for e in [*catalogue, *made]:
        if e["data"] != "fresh":
            continue  # (a step through training reads its run's outcome, as a fresh model)
        o = e["outcome"]
        learned = (f"never held 90% for {o['in_a_row']} evaluations in a row"
                   if o["learned_at"] is None else f"learned at step {o['learned_at']:,}")
        end = (f"converged at step {o['converged_at']:,}" if o["outcome"] == "converged"
               else f"censored at the budget of {o['budget']:,} steps")
        assert text[e["name"]] == f"{learned}; {end}", e["name"]


STATUS_DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const ex = await import(EXPLORER_URL);
const files = JSON.parse(readFileSync(0, "utf8"));
const context = { window: {} };
vm.createContext(context);
for (const f of files) vm.runInContext(readFileSync(f, "utf8"), context);
const models = context.window.BPARALLEL_MODELS;
process.stdout.write(JSON.stringify(Object.keys(models).map((k) => [k, ex.statusText(models[k])])));
"""


def test_every_status_line_states_its_manifest(exported):
    """The status line of every model the page offers (finite-data and fresh-data) states
    the held-out accuracy on the predictable positions and the SHA-256 that the model's own
    manifest records, read here from the shipped ``manifest.json`` files, not from the
    catalogue the exporter used. (Every fresh-data file once read "0.0%": the checkpoint's
    metadata, which holds no accuracy, had been copied instead of the manifest's.)"""
    folder, catalogue = exported
    code = STATUS_DRIVER.replace(
        "EXPLORER_URL", json.dumps((TRANSFORMER.parent / "explorer.mjs").as_uri()))
    text = dict(run_node(code, [str(folder / e["file"]) for e in catalogue]))
    assert len(text) == len(catalogue) == 40 + sum("series" in e for e in catalogue)
    manifests = {}
    for e in catalogue:
        if "series" in e:  # a step through training: its step, its scores' accuracy, its file
            data = data_of(exported, e["name"])
            accuracy = f"{100 * data['head_scores']['accuracy_predictable']:.1f}%"
            status = text[e["name"]]
            assert f"at step {e['step']:,} of its training" in status, status
            assert f"accuracy now {accuracy} on the predictable positions" in status, status
            assert f"SHA-256 {e['sha256'][:12]}" in status and "not recorded" not in status
            continue
        if e["folder"] not in manifests:
            manifests[e["folder"]] = json.loads(
                (MODELS_ROOT / e["folder"] / "manifest.json").read_text())["models"]
        suffix = "" if e["data"] == "finite" else f"-hs{e['head_size']}"
        key = f"{e['task']}-h{e['heads']:02d}"
        entry = manifests[e["folder"]].get(key + suffix) or manifests[e["folder"]][key]
        assert entry["seed"] == 42 and entry["heads"] == e["heads"], e["name"]
        assert entry.get("head_size", e["head_size"]) == e["head_size"], e["name"]
        status = text[e["name"]]
        accuracy = f"{100 * entry['heldout_accuracy_predictable']:.1f}%"
        assert (f"held-out accuracy {accuracy} on the predictable positions" in status), (
            e["name"], status)
        assert f"SHA-256 {entry['sha256'][:12]}" in status, e["name"]
        assert "not recorded" not in status and "n/a" not in status, e["name"]
    # the fresh-data models learned induction and histogram: none reads 0.0%
    assert all("accuracy 0.0%" not in s for s in text.values())


def test_a_data_file_without_its_manifests_numbers_is_refused(exported, shipped):
    model, meta = shipped["induction-fresh-h16-hs16"]
    for field in explorer.MANIFEST_FIELDS:
        bad = {**meta, "task": "induction", "heads": 16, "name": "induction-fresh-h16-hs16",
               "heldout_accuracy": 0.5, "heldout_accuracy_predictable": 1.0,
               "sha256": "0" * 64, field: None}
        with pytest.raises(ValueError, match=f"meta: induction-fresh-h16-hs16 has no {field}"):
            explorer.model_data(model, bad, num_sequences=1, reference_sequences=1)
