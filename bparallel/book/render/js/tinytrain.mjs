/**
 * @file tinytrain.mjs: the tiny Transformer of the training page, trained with TensorFlow.js.
 *
 * The browser twin of `bparallel.transformer.model.Transformer` (token and learned positional
 * embeddings, pre-norm blocks `x + attn(rmsnorm(x))`, `x + mlp(rmsnorm(x))`, no final norm,
 * a linear head) and of Section 4.1's training (Adam, cross-entropy on the predictable
 * positions of fresh induction batches, `bparallel.transformer.data.induction_sequences`'s
 * task definition), at the size of the package's `induction-tiny` profile. The learning rule
 * is `bparallel.transformer.learning.steps_to_threshold`'s: the first of
 * {@link LEARNED_IN_A_ROW} held-out evaluations in a row at or above the threshold.
 *
 * TensorFlow.js is passed in as `tf` (the page's vendored `tf-core` with its CPU or WASM
 * backend; Node's `@tensorflow/tfjs-core`), so the same code runs in both; nothing here
 * touches the page. Two operations carry their own gradient ({@link embed}: the WASM backend
 * has none for `gather`; {@link mm}: its gradient of `matMul` is slow there). Weights are
 * stored as torch stores them transposed: a linear layer
 * is `W (in, out)`, `b (out)`; `tests/book/render/test_tinytrain_parity.py` loads torch's initial
 * weights here and checks one step's loss and every gradient against torch's.
 *
 * Data come from {@link mulberry32} (not numpy's generator: the same seed draws other
 * sequences than the package does, under the same task definition).
 */

import { mulberry32 } from "./random.mjs";
import { FLOAT32_EPS, FORMAT, encodeFloat16 } from "./transformer.mjs";

/** The tiny model's width, layers, MLP width and sequence length (profile `induction-tiny`). */
export const TINY = Object.freeze({ dModel: 32, nLayers: 2, dMlp: 64, seqLen: 32, vocab: 32 });
/** Training defaults of the page (profile `induction-tiny`). */
export const DEFAULTS = Object.freeze({ batch: 32, lr: 3e-3, evalEvery: 25, steps: 2000,
  heldout: 128, threshold: 0.9 });
/** A run has learned at the first of this many evaluations in a row at the threshold. */
export const LEARNED_IN_A_ROW = 3;
/**
 * The arms: how a head count sets the head size, the package's three
 * (`bparallel.transformer.arms`, named by their values at the paper's width 64), as rules on
 * the model width `d`: `d / heads`, `d / 4` per head, an attention width of `4 d`.
 */
export const ARMS = Object.freeze({
  width: `fixed width: head size ${TINY.dModel} / heads`,
  head16: `fixed head size: ${TINY.dModel / 4} per head`,
  inner256: `fixed attention width: ${4 * TINY.dModel} / heads per head`,
});
const RMS_EPS = 2 ** -23; // torch.nn.RMSNorm's default eps: float32's machine epsilon

/**
 * First position of the second half, as `bparallel.transformer.data.induction_split`.
 * @param {number} T
 */
export function inductionSplit(T) {
  return Math.floor(T / 2) + 1;
}

/**
 * The head size of `heads` heads in `arm` at width `dModel` (throws with a message naming
 * the setting when the arm cannot split it).
 * @param {string} arm one of {@link ARMS}
 * @param {number} heads
 * @param {number} dModel
 * @returns {number}
 */
export function headSizeOf(arm, heads, dModel = TINY.dModel) {
  if (!(arm in ARMS)) throw new Error(`arm: expected one of ${Object.keys(ARMS).join(", ")}, got ${JSON.stringify(arm)}`);
  if (!(Number.isInteger(heads) && heads >= 1)) throw new Error(`heads: expected a positive whole number, got ${JSON.stringify(heads)}`);
  if (arm === "head16") return dModel / 4; // a quarter of the width (16 at the paper's 64)
  const width = arm === "width" ? dModel : 4 * dModel; // inner256: four times the width
  if (width % heads) throw new Error(`heads: ${heads} heads do not divide the ${arm === "width" ? "model" : "attention"} width ${width} (${ARMS[arm]})`);
  return width / heads;
}

/**
 * Check a configuration of the page; returns it normalised or throws an `Error` whose message
 * names the setting and the problem.
 * @param {{arm: string, heads: number, seed: any, lr: any}} config
 */
export function checkConfig(config) {
  const heads = Number(config.heads);
  const D = headSizeOf(config.arm, heads);
  const seedText = String(config.seed ?? "").trim();
  if (seedText === "") throw new Error("seed: empty; give a whole number");
  if (!/^-?\d+$/.test(seedText)) throw new Error(`seed: ${JSON.stringify(seedText)} is not a whole number`);
  const lr = Number(String(config.lr ?? "").trim() || NaN);
  if (!Number.isFinite(lr) || lr <= 0) throw new Error(`learning rate: must be a number > 0, got ${JSON.stringify(config.lr)}`);
  if (lr > 1) throw new Error(`learning rate: ${lr} is above 1 (Adam diverges)`);
  return { arm: config.arm, heads, headSize: D, seed: Number(seedText), lr };
}

// ---------------------------------------------------------------------- data

/**
 * `num` induction sequences of length `T` over `V` symbols (flat `Int32Array`, row-major),
 * as `induction_sequences` defines them: `s` distinct tokens, then `T - s` distinct tokens of
 * positions `0..s-2` in random order. Targets: the successor of the current token's first
 * occurrence.
 * @param {() => number} rand uniform in [0, 1)
 */
export function inductionBatch(rand, num, T = TINY.seqLen, V = TINY.vocab) {
  const s = inductionSplit(T);
  if (V < s) throw new Error(`vocab: induction needs at least ${s} symbols for ${T} positions`);
  const tokens = new Int32Array(num * T);
  const targets = new Int32Array(num * T);
  const perm = new Int32Array(V);
  const picks = new Int32Array(s - 1);
  for (let n = 0; n < num; n++) {
    for (let v = 0; v < V; v++) perm[v] = v;
    for (let i = 0; i < s; i++) { // partial Fisher-Yates: s distinct tokens
      const j = i + Math.floor(rand() * (V - i));
      const t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (let i = 0; i < s - 1; i++) picks[i] = i;
    for (let i = 0; i < T - s; i++) {
      const j = i + Math.floor(rand() * (s - 1 - i));
      const t = picks[i]; picks[i] = picks[j]; picks[j] = t;
    }
    const row = n * T;
    for (let i = 0; i < s; i++) tokens[row + i] = perm[i];
    for (let i = s; i < T; i++) tokens[row + i] = perm[picks[i - s]];
    for (let i = 0; i < T; i++) { // successor of the first occurrence (first half: itself + 1)
      const first = i < s ? i : picks[i - s];
      targets[row + i] = tokens[row + Math.min(first + 1, T - 1)];
    }
  }
  return { tokens, targets, num, T };
}

// ---------------------------------------------------------------------- model

/**
 * The parameter shapes of a configuration, in the order of torch's `named_parameters()` (names
 * as torch's, `W` transposed).
 */
export function parameterShapes(cfg) {
  const { dModel: C, nLayers: L, dMlp: M, seqLen: T, vocab: V, heads: H, headSize: D } = cfg;
  const A = H * D;
  const shapes = [["tok_emb.weight", [V, C]], ["pos_emb.weight", [T, C]]];
  for (let l = 0; l < L; l++) {
    const p = `blocks.${l}.`;
    shapes.push([`${p}norm1.weight`, [C]]);
    for (const n of ["q", "k", "v"]) shapes.push([`${p}attn.${n}.weight`, [C, A]], [`${p}attn.${n}.bias`, [A]]);
    shapes.push([`${p}attn.out.weight`, [A, C]], [`${p}attn.out.bias`, [C]]);
    shapes.push([`${p}norm2.weight`, [C]]);
    shapes.push([`${p}mlp.fc.weight`, [C, M]], [`${p}mlp.fc.bias`, [M]]);
    shapes.push([`${p}mlp.proj.weight`, [M, C]], [`${p}mlp.proj.bias`, [C]]);
  }
  shapes.push(["head.weight", [C, V]], ["head.bias", [V]]);
  return shapes;
}

/**
 * Initial weights drawn as torch draws them (embeddings N(0, 1); a linear layer's weight and
 * bias uniform on +-1/sqrt(fan_in); norms 1), from `seed` (mulberry32, not torch's generator).
 * @returns {Object<string, Float32Array>} flat values per parameter name
 */
export function initialWeights(cfg, seed) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const out = {};
  for (const [name, shape] of parameterShapes(cfg)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const w = new Float32Array(size);
    if (name.endsWith("emb.weight")) for (let i = 0; i < size; i++) w[i] = normal();
    else if (name.includes("norm")) w.fill(1);
    else {
      const fanIn = name.endsWith(".bias") ? null : shape[0];
      const inOf = fanIn ?? parameterShapes(cfg).find(([n]) => n === name.replace(".bias", ".weight"))[1][0];
      const bound = 1 / Math.sqrt(inOf);
      for (let i = 0; i < size; i++) w[i] = (2 * rand() - 1) * bound;
    }
    out[name] = w;
  }
  return out;
}

/**
 * The model's variables from flat weights (`initialWeights`, or torch's exported ones).
 * @returns {Object<string, tf.Variable>}
 */
export function makeVariables(tf, cfg, weights) {
  const vars = {};
  for (const [name, shape] of parameterShapes(cfg)) {
    const w = weights[name];
    if (!w) throw new Error(`weights: no ${name}`);
    const init = tf.tensor(Float32Array.from(w), shape);
    vars[name] = tf.variable(init, true); // unnamed: names are global to tf
    init.dispose(); // the variable holds a copy
  }
  return vars;
}

function rmsnorm(tf, x, w) {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), RMS_EPS))), w);
}

/**
 * `a b` (2-D, or batched over leading axes of equal shape) with a gradient written with
 * explicit transposes: TensorFlow.js's own gradient of `matMul` multiplies with its transpose
 * flags, which the WASM backend runs about ten times slower than a transpose and a plain
 * product (`benchmarks/bench_trainer.py --parts node` measures the step). Same values:
 * `da = dy b^T`, `db = a^T dy`.
 */
const matMuls = new WeakMap(); // one custom op per tf instance
function mm(tf, a, b) {
  let op = matMuls.get(tf);
  if (!op) {
    const swap = (t) => (t.rank === 2 ? tf.transpose(t) : tf.transpose(t, [...Array(t.rank - 2).keys(), t.rank - 1, t.rank - 2]));
    op = tf.customGrad((x, y, save) => {
      save([x, y]);
      return { value: tf.matMul(x, y), gradFunc: (dy, [sx, sy]) => [tf.matMul(dy, swap(sy)), tf.matMul(swap(sx), dy)] };
    });
    matMuls.set(tf, op);
  }
  return op(a, b);
}

/**
 * Rows `ids` (int32 `(N)`) of the embedding `W (V, C)`: a lookup forward, and the gradient
 * `onehot(ids)^T dy` as a product (the WASM backend has no gradient for `gather`: its
 * `UnsortedSegmentSum` is not registered); no gradient flows to the integer `ids`.
 */
const embeds = new WeakMap();
function embed(tf, W, ids) {
  let op = embeds.get(tf);
  if (!op) {
    op = tf.customGrad((w, i, save) => {
      save([i]);
      return {
        value: tf.gather(w, i),
        gradFunc: (dy, [si]) => [tf.matMul(tf.transpose(tf.oneHot(si, w.shape[0])), dy), tf.zerosLike(si)],
      };
    });
    embeds.set(tf, op);
  }
  return op(W, ids);
}

function linear(tf, x, W, b) { // x (N, in) -> (N, out)
  return tf.add(mm(tf, x, W), b);
}

/**
 * Logits `(B, T, V)` of `tokens` (int32 tensor `(B, T)`), and with `withPatterns` every
 * layer's attention pattern `(B, H, T, T)` (`[batch, head, query_pos, key_pos]`) and every
 * layer's head outputs before the output projection `(B, H, T, D)` (`heads`). `removed`:
 * heads whose output is set to zero, `removed[l]` an array of head indices of layer `l`
 * (zero ablation, as `bparallel.transformer.ablation` and the explorer remove a head).
 */
export function forward(tf, cfg, vars, tokens, withPatterns = false, removed = null) {
  const { dModel: C, nLayers: L, vocab: V, heads: H, headSize: D } = cfg;
  const [B, T] = tokens.shape;
  const N = B * T;
  let x = embed(tf, vars["tok_emb.weight"], tf.reshape(tokens, [N])); // (N, C)
  const pos = tf.slice(vars["pos_emb.weight"], [0, 0], [T, C]); // (T, C)
  x = tf.reshape(tf.add(tf.reshape(x, [B, T, C]), pos), [N, C]); // (N, C)
  const mask = tf.tensor2d(Float32Array.from({ length: T * T }, (_, i) => (i % T > Math.floor(i / T) ? -1e9 : 0)), [T, T]);
  const patterns = [], headOutputs = [];
  const split = (y) => tf.transpose(tf.reshape(y, [B, T, H, D]), [0, 2, 1, 3]); // (B, H, T, D)
  for (let l = 0; l < L; l++) {
    const p = `blocks.${l}.`;
    const h = rmsnorm(tf, x, vars[`${p}norm1.weight`]); // (N, C)
    const q = split(linear(tf, h, vars[`${p}attn.q.weight`], vars[`${p}attn.q.bias`]));
    const k = split(linear(tf, h, vars[`${p}attn.k.weight`], vars[`${p}attn.k.bias`]));
    const v = split(linear(tf, h, vars[`${p}attn.v.weight`], vars[`${p}attn.v.bias`]));
    const scores = tf.add(tf.div(mm(tf, q, tf.transpose(k, [0, 1, 3, 2])), Math.sqrt(D)), mask); // (B, H, T, T)
    const pattern = tf.softmax(scores); // (B, H, T, T)
    if (withPatterns) patterns.push(pattern);
    let heads = mm(tf, pattern, v); // (B, H, T, D)
    if (withPatterns) headOutputs.push(heads);
    if (removed && removed[l] && removed[l].length) {
      const keep = Float32Array.from({ length: H }, (_, h) => (removed[l].includes(h) ? 0 : 1));
      heads = tf.mul(heads, tf.tensor4d(keep, [1, H, 1, 1])); // zero ablation
    }
    const y = tf.reshape(tf.transpose(heads, [0, 2, 1, 3]), [N, H * D]); // (N, A)
    x = tf.add(x, linear(tf, y, vars[`${p}attn.out.weight`], vars[`${p}attn.out.bias`]));
    const g = rmsnorm(tf, x, vars[`${p}norm2.weight`]);
    const m = tf.relu(linear(tf, g, vars[`${p}mlp.fc.weight`], vars[`${p}mlp.fc.bias`]));
    x = tf.add(x, linear(tf, m, vars[`${p}mlp.proj.weight`], vars[`${p}mlp.proj.bias`]));
  }
  const logits = tf.reshape(linear(tf, x, vars["head.weight"], vars["head.bias"]), [B, T, V]);
  return withPatterns ? { logits, patterns, heads: headOutputs } : logits;
}

/**
 * Mean cross-entropy over the predictable positions (the second half, from
 * {@link inductionSplit}), as the package's loss with `loss_positions="predictable"`.
 */
export function loss(tf, cfg, vars, batch) {
  const { num: B, T } = batch;
  const tokens = tf.tensor2d(batch.tokens, [B, T], "int32");
  return lossOfLogits(tf, cfg, forward(tf, cfg, vars, tokens), batch);
}

function lossOfLogits(tf, cfg, logits, batch) { // logits (B, T, V)
  const { num: B, T } = batch;
  const s = inductionSplit(T);
  const tail = tf.slice(logits, [0, s, 0], [B, T - s, cfg.vocab]); // (B, T - s, V)
  const tgt = new Int32Array(B * (T - s));
  for (let n = 0; n < B; n++) for (let i = s; i < T; i++) tgt[n * (T - s) + i - s] = batch.targets[n * T + i];
  const onehot = tf.oneHot(tf.tensor1d(tgt, "int32"), cfg.vocab); // (B (T - s), V)
  const logp = tf.logSoftmax(tf.reshape(tail, [B * (T - s), cfg.vocab]));
  return tf.neg(tf.mean(tf.sum(tf.mul(onehot, logp), -1)));
}

/**
 * Held-out accuracy on the predictable positions and the mean loss there.
 * @returns {{accuracy: number, loss: number}}
 */
export function evaluate(tf, cfg, vars, batch, removed = null) {
  return tf.tidy(() => {
    const { num: B, T } = batch;
    const s = inductionSplit(T);
    const logits = forward(tf, cfg, vars, tf.tensor2d(batch.tokens, [B, T], "int32"), false, removed);
    const pred = tf.argMax(logits, -1).dataSync();
    let right = 0;
    for (let n = 0; n < B; n++) for (let i = s; i < T; i++) right += pred[n * T + i] === batch.targets[n * T + i];
    const l = lossOfLogits(tf, cfg, logits, batch).dataSync()[0];
    return { accuracy: right / (B * (T - s)), loss: l };
  });
}

/**
 * The learning step of a curve (`steps_to_threshold`): the first evaluated step that starts
 * {@link LEARNED_IN_A_ROW} evaluations in a row at or above `threshold`, or null.
 * @param {number[]} steps
 * @param {number[]} accuracy
 */
export function stepsToThreshold(steps, accuracy, threshold = DEFAULTS.threshold) {
  for (let i = 0; i + LEARNED_IN_A_ROW <= accuracy.length; i++) {
    let ok = true;
    for (let j = i; j < i + LEARNED_IN_A_ROW; j++) ok = ok && accuracy[j] >= threshold;
    if (ok) return steps[i];
  }
  return null;
}

/**
 * One training run, stepped by the caller: `run.step()` does one Adam update on a fresh batch
 * (and an evaluation every `evalEvery` steps, recorded in `run.curve`); `run.dispose()` frees
 * its tensors.
 * @param {object} tf
 * @param {{arm: string, heads: number, seed: any, lr: any}} config checked by {@link checkConfig}
 */
export function makeRun(tf, config, options = {}) {
  const c = checkConfig(config);
  const o = { ...DEFAULTS, ...options };
  const cfg = { ...TINY, heads: c.heads, headSize: c.headSize };
  const vars = makeVariables(tf, cfg, options.weights ?? initialWeights(cfg, c.seed));
  const optimizer = tf.train.adam(c.lr, 0.9, 0.999, 1e-8);
  const data = mulberry32(c.seed * 7919 + 1);
  const heldout = inductionBatch(mulberry32(0x5eed), o.heldout, cfg.seqLen, cfg.vocab);
  const run = {
    config: c, cfg, vars, options: o, step: 0, learnedAt: null, ms: 0,
    curve: { steps: [], accuracy: [], loss: [], trainLoss: [] },
    evaluate() {
      const r = evaluate(tf, cfg, vars, heldout);
      run.curve.steps.push(run.step);
      run.curve.accuracy.push(r.accuracy);
      run.curve.loss.push(r.loss);
      run.learnedAt = stepsToThreshold(run.curve.steps, run.curve.accuracy, o.threshold);
      return r;
    },
    update() {
      const t0 = Date.now();
      const batch = inductionBatch(data, o.batch, cfg.seqLen, cfg.vocab);
      const l = optimizer.minimize(() => loss(tf, cfg, vars, batch), true);
      run.lastLoss = l.dataSync()[0];
      l.dispose();
      run.step += 1;
      if (run.step % o.evalEvery === 0) run.evaluate();
      run.ms += Date.now() - t0;
    },
    accuracyWithout(removed) { // held-out accuracy with heads removed ({@link forward})
      return evaluate(tf, cfg, vars, heldout, removed).accuracy;
    },
    done() {
      return run.learnedAt !== null || run.step >= o.steps;
    },
    patterns(sequence = 0) { // every layer's patterns on one held-out sequence, [layer][head] flat T*T
      return tf.tidy(() => {
        const T = cfg.seqLen;
        const tok = tf.tensor2d(heldout.tokens.slice(sequence * T, (sequence + 1) * T), [1, T], "int32");
        const { patterns } = forward(tf, cfg, vars, tok, true);
        return patterns.map((p) => {
          const a = p.dataSync();
          return Array.from({ length: cfg.heads }, (_, h) => Float64Array.from(a.subarray(h * T * T, (h + 1) * T * T)));
        });
      });
    },
    explorerData(shown = EXPLORER_SEQUENCES) { // the explorer's data object ({@link explorerData})
      return explorerData(tf, run, heldout, shown);
    },
    weightsOf() { // flat copies of every weight, by torch's names
      const out = {};
      for (const [name, v] of Object.entries(vars)) out[name] = v.dataSync().slice();
      return out;
    },
    dispose() {
      for (const v of Object.values(vars)) v.dispose();
      optimizer.dispose();
    },
  };
  run.evaluate(); // step 0: the untrained model
  return run;
}

// ---------------------------------------------------------------------- the explorer's views

/** Held-out sequences the explorer shows of a model trained here (as its data files, 8). */
export const EXPLORER_SEQUENCES = 8;
const TRANSPOSED = /(attn\.[qkvo]\w*|mlp\.\w+|^head)\.weight$/; // linear weights: torch's (out, in)

/**
 * The explorer's name of a model trained here: `induction-h<HH>`, with `-hs<D>` where the
 * head size is not the width over the heads (as `bparallel.transformer.design.run_name`).
 */
export function explorerName(cfg) {
  const hs = cfg.headSize * cfg.heads === cfg.dModel ? "" : `-hs${String(cfg.headSize).padStart(2, "0")}`;
  return `induction-h${String(cfg.heads).padStart(2, "0")}${hs}`;
}

/**
 * A run's model as the explorer's data object (format {@link FORMAT} of
 * `bparallel.book.section4.explorer.model_data`, read by `transformer.mjs`'s `loadModel`):
 * the weights in torch's layout, rounded to half precision as every model of the explorer;
 * the first `shown` held-out sequences, and the per-position mean head outputs of mean
 * ablation over the others (`head_means`, `(L, T, A)`, of the page's float32 weights); the
 * manifest fields the explorer's status line reads (the last evaluation's held-out accuracy
 * on the predictable positions, the steps trained). No file is written or fetched: the
 * trainer hands the object to `mountExplorer`.
 */
export function explorerData(tf, run, heldout, shown = EXPLORER_SEQUENCES) {
  const { cfg, vars } = run;
  const { dModel: C, nLayers: L, dMlp: M, seqLen: T, vocab: V, heads: H, headSize: D } = cfg;
  if (!(Number.isInteger(shown) && shown >= 1 && shown < heldout.num)) {
    throw new Error(`shown: expected a whole number from 1 to ${heldout.num - 1}, got ${JSON.stringify(shown)}`);
  }
  const tensors = {};
  const parts = [];
  let offset = 0;
  for (const [name, shape] of parameterShapes(cfg)) {
    let values = vars[name].dataSync();
    let torchShape = shape;
    if (shape.length === 2 && TRANSPOSED.test(name)) { // (in, out) -> torch's (out, in)
      const [rows, cols] = shape;
      const t = new Float32Array(values.length);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = values[r * cols + c];
      values = t;
      torchShape = [cols, rows];
    }
    tensors[name] = { shape: torchShape, offset };
    parts.push(values);
    offset += values.length;
  }
  const flat = new Float32Array(offset);
  let at = 0;
  for (const v of parts) { flat.set(v, at); at += v.length; }
  const A = H * D;
  const means = tf.tidy(() => { // mean head outputs per layer and position over the reference sequences
    const rest = heldout.num - shown;
    const tok = tf.tensor2d(heldout.tokens.slice(shown * T), [rest, T], "int32");
    const { heads } = forward(tf, cfg, vars, tok, true);
    return tf.stack(heads.map((y) => tf.reshape(tf.transpose(tf.mean(y, 0), [1, 0, 2]), [T, A]))).dataSync(); // (L, T, A)
  });
  const inputs = Array.from({ length: shown }, (_, n) => Array.from(heldout.tokens.slice(n * T, (n + 1) * T)));
  const name = explorerName(cfg);
  return {
    format: FORMAT, name, data: "page", task: "induction", heads: H, seed: run.config.seed,
    profile: "induction-tiny",
    manifest: { heldout_accuracy_predictable: run.curve.accuracy.at(-1), steps: run.step },
    config: { n_layers: L, n_heads: H, head_dim: D, d_model: C, d_mlp: M, vocab_size: V, seq_len: T, norm_eps: FLOAT32_EPS },
    tensors, weights: encodeFloat16(flat), head_means: encodeFloat16(means),
    sequences: { protocol: "heldout", num_drawn: heldout.num, reference: [shown, heldout.num], inputs },
  };
}
