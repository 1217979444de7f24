import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/package.json");
const tf = require("@tensorflow/tfjs");
require("@tensorflow/tfjs-backend-wasm");
globalThis.btoa ??= (s) => Buffer.from(s, "binary").toString("base64");
const t = await import(process.cwd() + "/bparallel/book/render/js/tinytrain.mjs");
const x = await import(process.cwd() + "/bparallel/book/render/js/transformer.mjs");
await tf.setBackend("wasm"); await tf.ready();
for (const [arm, heads] of [["width", 4], ["head16", 2], ["inner256", 1]]) {
  const run = t.makeRun(tf, { arm, heads, seed: 3, lr: 3e-3 }, { evalEvery: 1e9 });
  for (let i = 0; i < 30; i++) run.update();
  const t0 = performance.now();
  const data = run.explorerData();
  const ms = performance.now() - t0;
  const model = x.loadModel(data);
  // the page's model with the half-rounded weights: the explorer's forward must agree
  const w = {};
  for (const [name, e] of Object.entries(data.tensors)) w[name] = null;
  const half = x.decodeFloat16(data.weights);
  const shapes = Object.fromEntries(t.parameterShapes(run.cfg));
  for (const [name, e] of Object.entries(data.tensors)) {
    const size = e.shape.reduce((a, b) => a * b, 1);
    const v = half.subarray(e.offset, e.offset + size);
    if (shapes[name].length === 2 && e.shape[0] !== shapes[name][0]) { // transposed back
      const [rows, cols] = e.shape; const o = new Float32Array(size);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) o[c * rows + r] = v[r * cols + c];
      w[name] = o;
    } else w[name] = Float32Array.from(v);
  }
  const twin = t.makeRun(tf, { arm, heads, seed: 3, lr: 3e-3 }, { evalEvery: 1e9, weights: w });
  const tok = data.sequences.inputs[0];
  const ex = x.forward(model, tok);
  const { logits, patterns } = tf.tidy(() => { const o = t.forward(tf, twin.cfg, twin.vars, tf.tensor2d([tok], [1, 32], "int32"), true); return { logits: o.logits.dataSync().slice(), patterns: o.patterns.map((p) => p.dataSync().slice()) }; });
  let dl = 0, dp = 0;
  const exLogits = ex.logits.flat ? ex.logits.flat() : ex.logits;
  console.log(Object.keys(ex));
  console.log(arm, heads, data.name, "ms", ms.toFixed(0), "weights b64", data.weights.length);
  run.dispose(); twin.dispose();
}
