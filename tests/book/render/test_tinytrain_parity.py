"""The training page's model (`bparallel/book/render/js/tinytrain.mjs`, TensorFlow.js) is the
package's: same loss and same gradients as torch on the same weights and the same batch.

One Node process loads torch's initial weights of the `induction-tiny` profile's model
(`bparallel.transformer.design.model_config`; linear weights transposed, as the page stores
them) into TensorFlow.js, on its CPU backend and on its WASM backend (the page's), and returns
one step's loss on the predictable positions and the gradient of every parameter; torch
computes both with `F.cross_entropy(..., ignore_index=-100)` on the targets of
`bparallel.transformer.data.make_targets`, as `bparallel.transformer.train` trains.

Tolerances (float32; the two libraries sum in other orders): the loss within 2e-6 relative,
each gradient within 1e-4 of its tensor's largest entry (max-abs difference); the key biases'
gradients are 0 in closed form (a key bias adds one constant to a whole row of scores, which
the softmax ignores), so both sides must be 0 to 1e-6 of the largest gradient. Smallest effect
the test can find: a change of the loss by 2e-6 of itself, or of any entry of a gradient by
1e-4 of that gradient's largest entry (a wrong mask, scale, norm or head split moves them by
far more); 1e-4 leaves room for float32 sums over 32 x 15 positions in other orders.

The page's batches are also checked against the package's task definition: the targets the
page computes for its own sequences are `make_targets`'s, its second half the positions
`predictable` marks, and its sequences those `induction_sequences` can draw (distinct first
half; the second half distinct repeats of positions `0..s-2`).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from bparallel.transformer.data import (
    induction_sequences,
    induction_split,
    make_targets,
    predictable,
)
from bparallel.transformer.design import get_profile, model_config
from bparallel.transformer.model import Transformer

ROOT = Path(__file__).resolve().parents[3]
TINYTRAIN = ROOT / "bparallel" / "book" / "render" / "js" / "tinytrain.mjs"
LOSS_RTOL = 2e-6
GRAD_ATOL = 1e-4  # relative to each gradient tensor's largest entry

DRIVER = """
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/package.json");
const tf = require("@tensorflow/tfjs");
require("@tensorflow/tfjs-backend-wasm");
const t = await import(TINYTRAIN);
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = {};
for (const backend of ["cpu", "wasm"]) {
  await tf.setBackend(backend);
  await tf.ready();
  const cfg = { ...t.TINY, heads: job.heads, headSize: job.headSize };
  const vars = t.makeVariables(tf, cfg, job.weights);
  const batch = { tokens: Int32Array.from(job.tokens), targets: Int32Array.from(job.targets),
                  num: job.num, T: job.T };
  const names = Object.keys(vars);
  const { value, grads } = tf.variableGrads(() => t.loss(tf, cfg, vars, batch),
                                            names.map((n) => vars[n]));
  const g = {};
  for (const n of names) g[n] = Array.from(grads[vars[n].name].dataSync());
  out[backend] = { loss: value.dataSync()[0], grads: g, backend: tf.getBackend() };
  for (const v of Object.values(vars)) v.dispose();
}
const { mulberry32 } = await import(TINYTRAIN.replace("tinytrain.mjs", "random.mjs"));
const page = t.inductionBatch(mulberry32(7), 64);
out.page = { tokens: Array.from(page.tokens), targets: Array.from(page.targets) };
writeFileSync(process.argv[3], JSON.stringify(out));
"""


def run_node(job: dict, tmp_path: Path) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js >= 18) is not on PATH: run `make setup`")
    if not (ROOT / "node_modules" / "@tensorflow" / "tfjs").is_dir():
        pytest.fail("TensorFlow.js is not installed in node_modules: run `make setup`")
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER.replace("TINYTRAIN", json.dumps(TINYTRAIN.as_uri())))
    (tmp_path / "job.json").write_text(json.dumps(job))
    subprocess.run([node, str(driver), str(tmp_path / "job.json"), str(tmp_path / "out.json")],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    return json.loads((tmp_path / "out.json").read_text())


@pytest.fixture(scope="module", params=[(1, None), (4, None), (4, 8)],
                ids=["1x32", "4x8", "4x8-fixed"])
def parity(request, tmp_path_factory):
    heads, head_size = request.param
    cfg = model_config("induction-tiny", heads, head_size)
    torch.manual_seed(3)
    model = Transformer(cfg, attention_path="explicit")
    p = get_profile("induction-tiny")
    tokens = induction_sequences(p.batch_size, seed=5, seq_len=p.seq_len,
                                 vocab_size=p.vocab_size)  # (B, T)
    targets = make_targets(tokens, "induction", vocab_size=p.vocab_size)  # (B, T)
    weights = {}
    for name, w in model.named_parameters():
        w = w.detach()
        w = w.T if w.ndim == 2 and "emb" not in name else w  # torch's (out, in) -> (in, out)
        weights[name] = w.contiguous().flatten().tolist()
    job = {"heads": heads, "headSize": cfg.head_dim, "weights": weights,
           "tokens": tokens.flatten().tolist(), "targets": targets.flatten().tolist(),
           "num": p.batch_size, "T": p.seq_len}
    out = run_node(job, tmp_path_factory.mktemp(f"tiny{heads}"))
    masked = targets.clone()
    masked[~predictable(tokens, "induction", vocab_size=p.vocab_size)] = -100
    loss = F.cross_entropy(model(tokens).flatten(0, 1), masked.flatten())
    loss.backward()
    grads = {}
    for name, w in model.named_parameters():
        g = w.grad
        grads[name] = (g.T if g.ndim == 2 and "emb" not in name else g).flatten().numpy()
    return loss.item(), grads, out


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
def test_loss_matches_torch(parity, backend):
    loss, _, out = parity
    assert out[backend]["backend"] == backend
    assert out[backend]["loss"] == pytest.approx(loss, rel=LOSS_RTOL)


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
def test_every_gradient_matches_torch(parity, backend):
    _, grads, out = parity
    js = out[backend]["grads"]
    assert set(js) == set(grads)
    largest = max(float(np.abs(g).max()) for g in grads.values())
    for name, g in grads.items():
        if name.endswith("attn.k.bias"):  # closed form: 0 (a key bias shifts a whole score row)
            for values in (g, np.asarray(js[name])):
                assert float(np.abs(values).max()) <= 1e-6 * largest, name
            continue
        scale = float(np.abs(g).max())
        assert scale > 1e-6 * largest, name
        diff = float(np.abs(np.asarray(js[name], dtype=np.float64) - g).max())
        assert diff <= GRAD_ATOL * scale, f"{name}: max |JS - torch| = {diff:.3g} of {scale:.3g}"


def test_page_batches_follow_the_task_definition(parity):
    p = get_profile("induction-tiny")
    page = parity[2]["page"]
    tokens = torch.tensor(page["tokens"]).view(-1, p.seq_len)  # (64, T)
    s = induction_split(p.seq_len)
    assert torch.equal(torch.tensor(page["targets"]).view(-1, p.seq_len),
                       make_targets(tokens, "induction", vocab_size=p.vocab_size))
    assert bool(predictable(tokens, "induction", vocab_size=p.vocab_size)[:, s:].all())
    assert not bool(predictable(tokens, "induction", vocab_size=p.vocab_size)[:, :s].any())
    for row in tokens.tolist():
        first, second = row[:s], row[s:]
        assert len(set(first)) == s and len(set(second)) == len(second)
        assert {first.index(x) for x in second} <= set(range(s - 1))


EXPLORER_DRIVER = """
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/package.json");
const tf = require("@tensorflow/tfjs");
require("@tensorflow/tfjs-backend-wasm");
globalThis.btoa ??= (s) => Buffer.from(s, "binary").toString("base64");
const t = await import(TINYTRAIN);
const x = await import(TINYTRAIN.replace("tinytrain.mjs", "transformer.mjs"));
await tf.setBackend("wasm");
await tf.ready();
const out = [];
for (const [arm, heads] of CONFIGS) {
  const run = t.makeRun(tf, { arm, heads, seed: 3, lr: 3e-3 }, { evalEvery: 1e9 });
  for (let i = 0; i < 20; i++) run.update();
  const data = run.explorerData();
  const model = x.loadModel(data);  // the explorer's reader: shapes, offsets, head means
  const seen = x.forward(model, data.sequences.inputs[0]);
  out.push({ arm, heads, data, logits: Array.from(seen.logits),
             patterns: seen.patterns.map((l) => l.map((p) => Array.from(p))) });
  run.dispose();
}
writeFileSync(process.argv[2], JSON.stringify(out));
"""


def test_the_trained_model_opens_in_the_explorer_as_torch_reads_it(tmp_path):
    """The training page hands a model to the explorer's views as the explorer's data object
    (`tinytrain.mjs`'s `explorerData`): read back by torch (float16 weights in torch's layout
    loaded into the package's model), the explorer's forward pass on its first held-out
    sequence gives torch's logits (within 1e-4 of the largest) and patterns (within 1e-5),
    and its mean-ablation fill is the package's `head_means` over the other held-out
    sequences (within 2e-2 of the largest mean: the page averages with its float32 weights,
    then rounds to half precision). Smallest effect: a transposed weight or a head of the
    means in the wrong place moves them by far more; one arm each, so that every head size
    rule of the page is read."""
    from bparallel.transformer.ablation import head_means

    configs = [["width", 4], ["head16", 2], ["inner256", 1]]
    driver = tmp_path / "explorer.mjs"
    driver.write_text(EXPLORER_DRIVER.replace("TINYTRAIN", json.dumps(TINYTRAIN.as_uri()))
                      .replace("CONFIGS", json.dumps(configs)))
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js >= 18) is not on PATH: run `make setup`")
    subprocess.run([node, str(driver), str(tmp_path / "out.json")], cwd=ROOT, check=True,
                   capture_output=True, timeout=600)
    for got, (arm, heads) in zip(json.loads((tmp_path / "out.json").read_text()), configs,
                                 strict=True):
        data = got["data"]
        assert data["format"] == 2 and data["data"] == "page" and data["heads"] == heads
        cfg = model_config("induction-tiny", heads, data["config"]["head_dim"])
        assert cfg.head_dim == {"width": 8, "head16": 8, "inner256": 128}[arm]
        flat = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f2").astype(np.float32)
        model = Transformer(cfg, attention_path="explicit")
        state = {name: torch.from_numpy(flat[e["offset"]:e["offset"] + int(np.prod(e["shape"]))]
                                        .reshape(e["shape"]).copy())
                 for name, e in data["tensors"].items()}
        model.load_state_dict(state, strict=True)
        model.eval()
        seqs = torch.tensor(data["sequences"]["inputs"])
        with torch.no_grad():
            logits, patterns = model(seqs[:1], return_attention=True)
        logits = logits[0].double().numpy()
        js = np.asarray(got["logits"]).reshape(logits.shape)
        assert np.abs(js - logits).max() <= 1e-4 * np.abs(logits).max(), arm
        js_p = np.asarray(got["patterns"])  # (L, H, T*T)
        torch_p = patterns[:, 0].double().numpy().reshape(js_p.shape)
        assert np.abs(js_p - torch_p).max() <= 1e-5, arm
        # the reference sequences: the page's held-out set after the shown ones
        assert data["sequences"]["reference"] == [len(seqs), data["sequences"]["num_drawn"]]
        means = np.frombuffer(base64.b64decode(data["head_means"]), dtype="<f2")
        first, total = data["sequences"]["reference"]
        assert means.size == cfg.n_layers * cfg.seq_len * cfg.n_heads * cfg.head_dim
        assert total - first > 100
        # the page's reference sequences are its own draws: rebuild them from its batch rule
        ref = _page_heldout(total)[first:]
        want = head_means(model, torch.tensor(ref)).numpy().reshape(means.shape)
        assert np.abs(means.astype(np.float64) - want).max() <= 2e-2 * np.abs(want).max(), arm


def _page_heldout(num: int) -> list[list[int]]:
    """The page's fixed held-out sequences (its `inductionBatch(mulberry32(0x5eed), num)`),
    drawn by Node."""
    code = (f"const t = await import({json.dumps(TINYTRAIN.as_uri())});"
            f"const r = await import({json.dumps(TINYTRAIN.with_name('random.mjs').as_uri())});"
            f"const b = t.inductionBatch(r.mulberry32(0x5eed), {num});"
            "console.log(JSON.stringify(Array.from(b.tokens)));")
    done = subprocess.run([shutil.which("node"), "--input-type=module", "-e", code], cwd=ROOT,
                          check=True, capture_output=True, text=True, timeout=120)
    tokens = json.loads(done.stdout)
    T = get_profile("induction-tiny").seq_len
    return [tokens[i:i + T] for i in range(0, len(tokens), T)]
