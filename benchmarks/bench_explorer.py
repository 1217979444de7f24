"""How long the model explorer takes to rerun a model, next to its 150 ms budget (issue 34).

For the models named (default: cycle with 1 and 16 heads, and chapter 12's widest 16-head
fresh-data model, 16 heads of 16 on induction), exported as the book exports them
(:func:`bparallel.book.section4.explorer.export_models`), on the first held-out sequence:

- in Node, ``transformer.mjs``: one forward pass (``forward``), and one full recompute, what
  the page does when a head is toggled: the forward pass with that head removed (mean
  ablation), then every measure of one layer (``layerMeasures``: Algorithms 1-2 in both
  modes, Definition 2.7 in both modes, node fidelities, rollout, each head's fidelity);
- in Python, the same with torch (float32, one sequence) and the package's measures of
  that layer (:mod:`bparallel.proxies`), for scale.

Medians over repeats after a warm-up, side by side. Usage::

    .venv/bin/python benchmarks/bench_explorer.py [--models cycle-h01 cycle-h16 ...]
        [--layer 3] [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from bparallel import proxies
from bparallel.book.section4 import explorer
from bparallel.book.section4.explorer_catalogue import EXPLORER_TASKS, explorer_models
from bparallel.transformer.ablation import ablated
from bparallel.transformer.data import PAPER_TASKS
from bparallel.transformer.patterns import model_head_weights
from bparallel.transformer.shipped import MODELS_ROOT, load_shipped, load_weights

BUDGET_MS = 150.0
ROOT = Path(__file__).resolve().parents[1]
TRANSFORMER = ROOT / "bparallel" / "book" / "render" / "js" / "transformer.mjs"

DRIVER = r"""
import { readFileSync } from "node:fs";
import vm from "node:vm";
const t = await import(MODULE_URL);
const { file, layer, repeats } = JSON.parse(readFileSync(0, "utf8"));
const ctx = { window: {} };
vm.runInNewContext(readFileSync(file, "utf8"), ctx);
const data = Object.values(ctx.window.BPARALLEL_MODELS)[0];
const model = t.loadModel(data);
const w = t.headWeights(model);
const x = data.sequences.inputs[0];
const mask = t.headMask(model, [[0, 0]]);
const recompute = () => {
  const o = t.forward(model, x, { mask, fill: "mean" });
  return t.layerMeasures(o.patterns, layer, { weights: w[layer], rolloutWeights: w });
};
for (let r = 0; r < 3; r++) recompute();  // warm up the JIT
const forward = [], full = [];
for (let r = 0; r < repeats; r++) {
  let t0 = performance.now();
  t.forward(model, x);
  forward.push(performance.now() - t0);
  t0 = performance.now();
  recompute();
  full.push(performance.now() - t0);
}
process.stdout.write(JSON.stringify({ forward, full }));
"""


def time_node(file: Path, layer: int, repeats: int) -> dict[str, list[float]]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node (Node.js >= 18) is not on PATH")
    code = DRIVER.replace("MODULE_URL", json.dumps(TRANSFORMER.as_uri()))
    proc = subprocess.run([node, "--input-type=module", "-e", code],
                          input=json.dumps({"file": str(file), "layer": layer,
                                            "repeats": repeats}),
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def time_python(model, inputs, layer: int, repeats: int) -> dict[str, list[float]]:
    """torch float32 forward, and forward with head (0, 0) mean-ablated (zeros as the fill:
    the same work) + the package's measures of ``layer`` on its patterns."""
    w = model_head_weights(model)[layer]
    L, H = model.config.n_layers, model.config.n_heads
    mask = torch.ones(L, H)
    mask[0, 0] = 0
    fill = torch.zeros(L, inputs.shape[-1], H * model.config.head_dim)

    def recompute():
        with torch.no_grad(), ablated(model, mask, fill):
            _, patterns = model(inputs[None], return_attention=True)
        a = patterns[layer, 0].numpy()
        for mode in proxies.MODES:
            proxies.mixing_time_proxy(a, w, mode=mode)
            proxies.worst_case_mixing_time(a, w, mode=mode)
        proxies.node_fidelity_proxy(a, w)
        proxies.best_head_vs_combined(a, w, mode="paper")
        proxies.best_head_vs_combined(a, w, mode="definition")
        proxies.attention_rollout(patterns[: layer + 1, 0].numpy(), model_head_weights(model)
                                  [: layer + 1])

    recompute()
    forward, full = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        with torch.no_grad():
            model(inputs[None])
        forward.append(1e3 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        recompute()
        full.append(1e3 * (time.perf_counter() - t0))
    return {"forward": forward, "full": full}


def torch_model(entry: dict) -> torch.nn.Module:
    """The page's model of a catalogue entry in torch (weights rounded as the page's)."""
    if entry["data"] == "fresh":
        model, _ = load_weights(MODELS_ROOT / entry["folder"] / entry["weights"],
                                sha256=entry["sha256"])
    else:
        task = entry["task"]
        folder = MODELS_ROOT / ("paper" if task in PAPER_TASKS else task)
        models, _ = load_shipped(folder, tasks=(task,))
        model = models[(task, entry["heads"])]
    return explorer.half_rounded(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+",
                        default=["cycle-h01", "cycle-h16", "induction-fresh-h16-hs16"])
    parser.add_argument("--layer", type=int, default=3, help="0-based layer measured")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    offered = {e["name"]: e for e in explorer_models()}
    unknown = [m for m in args.models if m not in offered]
    if unknown:
        raise SystemExit(f"--models: {unknown} not offered; choose from {sorted(offered)}")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tasks = sorted({offered[m]["task"] for m in args.models
                        if offered[m]["data"] == "finite"}, key=EXPLORER_TASKS.index)
        fresh = sorted({offered[m]["task"] for m in args.models
                        if offered[m]["data"] == "fresh" and "series" not in offered[m]})
        steps = sorted({(offered[m]["heads"], offered[m]["head_size"]) for m in args.models
                        if "series" in offered[m]})
        catalogue = explorer.export_models(tmp, tasks=tasks or ["copy"], heads=[1, 16],
                                           fresh_tasks=fresh, step_runs=steps)
        for entry in catalogue:
            if entry["name"] not in args.models:
                continue
            data = explorer.read_data_script(Path(tmp) / entry["file"])
            inputs = torch.tensor(data["sequences"]["inputs"][0])
            js = time_node(Path(tmp) / entry["file"], args.layer, args.repeats)
            py = time_python(torch_model(entry), inputs, args.layer, args.repeats)
            rows[entry["name"]] = {k: statistics.median(v) for k, v in
                                   {"js_forward": js["forward"], "js_full": js["full"],
                                    "py_forward": py["forward"], "py_full": py["full"]}.items()}
    print(f"model explorer, layer {args.layer + 1} measured, one sequence of 100 tokens; "
          f"medians over {args.repeats} repeats (ms)")
    print(f"{'':44s}" + "".join(f"{m:>26s}" for m in args.models))
    labels = {"js_forward": "JS forward pass (Node)",
              "js_full": "JS recompute: ablated forward + measures",
              "py_forward": "torch forward (float32, 1 thread)",
              "py_full": "torch + package measures (same work)"}
    for key, label in labels.items():
        print(f"{label:44s}" + "".join(f"{rows[m][key]:26.1f}" for m in args.models))
    worst = max(rows[m]["js_full"] for m in args.models)
    print(f"JS recompute / {BUDGET_MS:.0f} ms budget: {worst / BUDGET_MS:.2f} (worst of them)")


if __name__ == "__main__":
    main()
