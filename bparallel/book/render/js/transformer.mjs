/**
 * @file transformer.mjs: the trained Transformers of Section 4.1 and the paper's graph
 * measures on their attention, in dependency-free JavaScript (float64).
 *
 * The browser twin of `bparallel.transformer.model` (the forward pass), of
 * `bparallel.transformer.ablation` (zero and mean head ablation), of
 * `bparallel.transformer.measure` (head weights, held-out scores) and of the measures of
 * `bparallel.proxies` / `bparallel.absorbing` on one layer's attention (Algorithm 1 exactly,
 * Algorithm 2 in both modes, Definition 2.7 with its "never mixes", attention rollout).
 * It runs as is in Node and in a browser (no build step); `tests/book/section4/test_explorer.py` runs it
 * under Node against torch on the shipped weights and against the package on the same
 * patterns. The weights come from the data files of `bparallel.book.section4.explorer.export_models`
 * ({@link loadModel}).
 *
 * Conventions:
 * - a pattern is `[layer][head]`, each a flat `Float64Array` of `T * T` entries,
 *   `p[i * T + j]` the head's attention of query `i` on key `j` (TransformerLens's
 *   `[head, query_pos, key_pos]`, row-major): rows sum to 1, causal (lower triangular);
 * - a combined graph `C = sum_h w_h A[h]` is a flat `T * T` array in the same layout, and
 *   the walk moves along `P = C^T` (`P[j][i] = C[i][j]`, from position `j` to `i >= j`);
 *   the sink is the last position `T - 1`;
 * - every matrix is row-major and flat; weights as torch stores them, `W[out][in]`;
 * - "never mixes" is `Infinity` (a start that never reaches the sink, or beyond `2^62`
 *   steps), as `bparallel.absorbing.mixing_times` returns `inf`.
 *
 * Numbers: the forward pass runs in float64 on the float32 weights (exactly converted); it
 * agrees with torch's float32 forward to about 1e-5 (logits) and with a float64 torch
 * forward to rounding. The measures use the package's algorithms step for step; sums run in
 * another order than numpy's BLAS, so values agree to rounding (the tests allow 1e-9
 * relative), and Definition 2.7 to the step wherever the package states it exact.
 */

import {
  isUpper,
  matVec,
  maxOf,
  minimaxFidelity,
  mixingTimeOfChain,
  nodeFidelity,
  sizeOf,
} from "./toydag.mjs";
import { mulberry32 } from "./random.mjs";

/** Data-file format this module reads (`bparallel.book.section4.explorer.FORMAT`). */
export const FORMAT = 2;
/** Defaults of the measures, as the book's tables use them (`max_steps`, `horizon`, `eps`). */
export const MAX_STEPS = 100;
export const HORIZON = 100;
export const EPS = 0.25;
/** Rollout's residual share (`bparallel.proxies.attention_rollout`'s `residual`). */
export const RESIDUAL = 0.5;
/** Walk modes of Algorithms 1-2 (`bparallel.proxies.MODES`). */
export const MODES = ["paper", "definition"];
/** torch.finfo(torch.float32).eps: what `nn.RMSNorm(eps=None)` adds for float32 models. */
export const FLOAT32_EPS = 2 ** -23;
/** The state-dict tensors of one block, in the order the data file lists them. */
const BLOCK_TENSORS = [
  "norm1.weight", "attn.q.weight", "attn.q.bias", "attn.k.weight", "attn.k.bias",
  "attn.v.weight", "attn.v.bias", "attn.out.weight", "attn.out.bias", "norm2.weight",
  "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias",
];

// ------------------------------------------------------------------------ loading

/**
 * One IEEE 754 half-precision number from its 16 bits, exactly (every float16 is a float64).
 * @param {number} bits 0 .. 65535
 * @returns {number}
 */
export function halfToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24; // zero and subnormals
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/**
 * The 16 bits of the float16 nearest to `x` (ties to even, as numpy's `astype(float16)`;
 * beyond the largest half, infinity): the inverse of {@link halfToNumber} on halves.
 * @param {number} x
 * @returns {number} 0 .. 65535
 */
export function numberToHalf(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return sign | 0x7c00;
  const even = (q) => { // q >= 0 rounded to the nearest integer, ties to even
    const f = Math.floor(q), r = q - f;
    return r > 0.5 || (r === 0.5 && f % 2 === 1) ? f + 1 : f;
  };
  if (a < 2 ** -14) return sign | even(a / 2 ** -24); // subnormals (1024 rounds up to the first normal)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1; // log2's rounding near powers of two
  if (2 ** (e + 1) <= a) e += 1;
  let m = even((a / 2 ** e - 1) * 1024);
  if (m === 1024) { m = 0; e += 1; }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

/**
 * Values as little-endian float16 base64 text, the data files' encoding (the inverse of
 * {@link decodeFloat16} up to the rounding to half precision).
 * @param {ArrayLike<number>} values
 * @returns {string}
 */
export function encodeFloat16(values) {
  let binary = "";
  for (let i = 0; i < values.length; i++) {
    const b = numberToHalf(values[i]);
    binary += String.fromCharCode(b & 0xff, b >> 8);
  }
  return btoa(binary);
}

let HALVES = null; // every float16's value, by its bits (built once)

/**
 * Little-endian float16 values from base64 text, as float64 (exact): the data files' weights
 * and head means (`bparallel.book.section4.explorer`, format 2).
 * @param {string} text base64
 * @returns {Float64Array}
 */
export function decodeFloat16(text) {
  if (typeof text !== "string") throw new Error("expected base64 text of float16 values");
  const binary = atob(text);
  if (binary.length % 2) throw new Error(`base64 holds ${binary.length} bytes, not a multiple of 2`);
  if (!HALVES) HALVES = Float64Array.from({ length: 65536 }, (_, b) => halfToNumber(b));
  const out = new Float64Array(binary.length / 2);
  for (let i = 0; i < out.length; i++) {
    const value = HALVES[binary.charCodeAt(2 * i) | (binary.charCodeAt(2 * i + 1) << 8)];
    if (!Number.isFinite(value)) throw new Error(`value ${i} is not finite`);
    out[i] = value;
  }
  return out;
}

function isPosInt(x) {
  return Number.isInteger(x) && x > 0;
}

/**
 * A model ready for {@link forward} from the object a data file assigns into
 * `window.BPARALLEL_MODELS` (`bparallel.book.section4.explorer.model_data`): every tensor decoded
 * and its shape checked against the config. Throws `Error` naming what is wrong.
 * @param {object} data
 * @returns {object} `{name, task, heads, seed, config, tensors, blocks, headMeans, data}`
 */
export function loadModel(data) {
  if (!data || typeof data !== "object") throw new Error("model data: expected an object");
  if (data.format !== FORMAT) {
    throw new Error(`model data format ${JSON.stringify(data.format)}: this page reads format ${FORMAT}`);
  }
  const c = data.config || {};
  const config = {
    nLayers: c.n_layers, nHeads: c.n_heads, headDim: c.head_dim, dModel: c.d_model,
    dMlp: c.d_mlp, vocabSize: c.vocab_size, seqLen: c.seq_len, normEps: c.norm_eps,
  };
  for (const [k, v] of Object.entries(config)) {
    if (k === "normEps" ? !(v > 0 && Number.isFinite(v)) : !isPosInt(v)) {
      throw new Error(`model data config: ${k} = ${JSON.stringify(v)} is not valid`);
    }
  }
  const { nLayers: L, dModel: C, dMlp: M, vocabSize: V, seqLen: T } = config;
  const A = config.nHeads * config.headDim; // the attention's inner width
  const flat = decodeFloat16(data.weights);
  const want = {
    "tok_emb.weight": [V, C], "pos_emb.weight": [T, C], "head.weight": [V, C], "head.bias": [V],
  };
  const blockShapes = {
    "norm1.weight": [C], "attn.q.weight": [A, C], "attn.q.bias": [A], "attn.k.weight": [A, C],
    "attn.k.bias": [A], "attn.v.weight": [A, C], "attn.v.bias": [A], "attn.out.weight": [C, A],
    "attn.out.bias": [C], "norm2.weight": [C], "mlp.fc.weight": [M, C], "mlp.fc.bias": [M],
    "mlp.proj.weight": [C, M], "mlp.proj.bias": [C],
  };
  for (let l = 0; l < L; l++) for (const n of BLOCK_TENSORS) want[`blocks.${l}.${n}`] = blockShapes[n];
  const index = data.tensors || {};
  const names = Object.keys(index);
  const missing = Object.keys(want).filter((n) => !(n in index));
  const extra = names.filter((n) => !(n in want));
  if (missing.length || extra.length) {
    throw new Error(`model data tensors: missing [${missing.join(", ")}], unexpected [${extra.join(", ")}]`);
  }
  const tensors = {};
  for (const [name, shape] of Object.entries(want)) {
    const entry = index[name];
    const size = shape.reduce((a, b) => a * b, 1);
    if (!Array.isArray(entry.shape) || entry.shape.join(",") !== shape.join(",")) {
      throw new Error(`model data: ${name} has shape [${entry.shape}], expected [${shape}]`);
    }
    if (!(Number.isInteger(entry.offset) && entry.offset >= 0 && entry.offset + size <= flat.length)) {
      throw new Error(`model data: ${name} lies outside the weights (offset ${entry.offset})`);
    }
    tensors[name] = flat.subarray(entry.offset, entry.offset + size);
  }
  const blocks = [];
  for (let l = 0; l < L; l++) {
    const t = (n) => tensors[`blocks.${l}.${n}`];
    blocks.push({
      norm1: t("norm1.weight"), norm2: t("norm2.weight"),
      q: [t("attn.q.weight"), t("attn.q.bias")], k: [t("attn.k.weight"), t("attn.k.bias")],
      v: [t("attn.v.weight"), t("attn.v.bias")], out: [t("attn.out.weight"), t("attn.out.bias")],
      fc: [t("mlp.fc.weight"), t("mlp.fc.bias")], proj: [t("mlp.proj.weight"), t("mlp.proj.bias")],
    });
  }
  let headMeans = null;
  if (data.head_means) {
    headMeans = decodeFloat16(data.head_means);
    if (headMeans.length !== L * T * A) {
      throw new Error(`model data: head_means holds ${headMeans.length} values, expected L*T*A = ${L * T * A}`);
    }
  }
  return {
    name: data.name, task: data.task, heads: data.heads, seed: data.seed,
    config: { ...config, attentionWidth: A }, tensors, blocks, headMeans, data,
  };
}

// ------------------------------------------------------------------------ forward pass

/** `y = x W^T + b` for `x` `(T, I)`, `W` `(O, I)`: `torch.nn.Linear`. Four outputs at a time
 * (each summed over `i` in order, as one dot product). */
function linear(x, T, I, W, b, O) {
  const y = new Float64Array(T * O);
  const O4 = O - (O % 4);
  for (let t = 0; t < T; t++) {
    const xo = t * I;
    const yo = t * O;
    let o = 0;
    for (; o < O4; o += 4) {
      const w0 = o * I;
      const w1 = w0 + I;
      const w2 = w1 + I;
      const w3 = w2 + I;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let i = 0; i < I; i++) {
        const xi = x[xo + i];
        s0 += xi * W[w0 + i];
        s1 += xi * W[w1 + i];
        s2 += xi * W[w2 + i];
        s3 += xi * W[w3 + i];
      }
      y[yo + o] = s0 + b[o];
      y[yo + o + 1] = s1 + b[o + 1];
      y[yo + o + 2] = s2 + b[o + 2];
      y[yo + o + 3] = s3 + b[o + 3];
    }
    for (; o < O; o++) {
      const wo = o * I;
      let s = 0;
      for (let i = 0; i < I; i++) s += x[xo + i] * W[wo + i];
      y[yo + o] = s + b[o];
    }
  }
  return y;
}

/** Columns `[o, o + D)` of `x` `(T, A)` as a contiguous `(T, D)` array (one head's slice). */
function headSlice(x, T, A, o, D) {
  const out = new Float64Array(T * D);
  for (let t = 0; t < T; t++) for (let d = 0; d < D; d++) out[t * D + d] = x[t * A + o + d];
  return out;
}

/** `nn.RMSNorm`: `x / sqrt(mean(x^2) + eps) * weight`, per position, `(T, C)`. */
function rmsNorm(x, T, C, weight, eps) {
  const y = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    let ss = 0;
    for (let i = 0; i < C; i++) ss += x[t * C + i] * x[t * C + i];
    const r = 1 / Math.sqrt(ss / C + eps);
    for (let i = 0; i < C; i++) y[t * C + i] = x[t * C + i] * r * weight[i];
  }
  return y;
}

/**
 * Check tokens, mask and fill; returns the mask as `L` arrays of `H` numbers (or null).
 * Mirrors `ablation._check_mask` / `_check_fill`.
 */
function checkInputs(model, tokens, mask, fill) {
  const { nLayers: L, nHeads: H, vocabSize: V, seqLen } = model.config;
  if (!tokens || typeof tokens.length !== "number" || tokens.length < 1 || tokens.length > seqLen) {
    throw new Error(`tokens: expected 1..${seqLen} token ids, got ${tokens && tokens.length}`);
  }
  for (const tok of tokens) {
    if (!(Number.isInteger(tok) && tok >= 0 && tok < V)) {
      throw new Error(`tokens: ${JSON.stringify(tok)} is not a token id in 0..${V - 1}`);
    }
  }
  if (fill !== "zero" && fill !== "mean") throw new Error(`fill: "zero" or "mean", got ${JSON.stringify(fill)}`);
  if (fill === "mean" && !model.headMeans) throw new Error("fill \"mean\": this model's data has no head means");
  if (mask === undefined || mask === null) return null;
  if (!Array.isArray(mask) || mask.length !== L || mask.some((row) => !row || row.length !== H)) {
    throw new Error(`mask: expected ${L} rows of ${H} entries (1 keeps a head, 0 removes it)`);
  }
  for (const row of mask) {
    for (const m of row) {
      if (!(typeof m === "number" && m >= 0 && m <= 1)) throw new Error(`mask: ${JSON.stringify(m)} is not in [0, 1]`);
    }
  }
  return mask;
}

/**
 * The forward pass of `bparallel.transformer.model.Transformer` in eval mode (no dropout),
 * explicit attention path, on one sequence, with head ablation as
 * `bparallel.transformer.ablation.ablated`: head `h` of layer `l` has its slice of the
 * concatenated head outputs (the output projection's input) replaced by
 * `m y + (1 - m) fill`, with `m = mask[l][h]` and `fill` zero (zero ablation) or the
 * recorded per-position head means (mean ablation, `ablation.head_means`); the projection's
 * bias stays. A mask of all ones (or none) is the intact model.
 *
 * @param {object} model from {@link loadModel}
 * @param {ArrayLike<number>} tokens `T <= seq_len` token ids
 * @param {{mask?: number[][], fill?: "zero"|"mean"}} [options]
 * @returns {{T: number, V: number, logits: Float64Array, patterns: Float64Array[][]}} logits
 *   `(T, V)` row-major; `patterns[l][h]` `(T, T)` row-major
 */
export function forward(model, tokens, options = {}) {
  const fill = options.fill ?? "zero";
  const mask = checkInputs(model, tokens, options.mask, fill);
  const { nHeads: H, headDim: D, dModel: C, dMlp: M, vocabSize: V, normEps } = model.config;
  const A = H * D;
  const T = tokens.length;
  const tok = model.tensors["tok_emb.weight"];
  const pos = model.tensors["pos_emb.weight"];
  let x = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < C; i++) x[t * C + i] = tok[tokens[t] * C + i] + pos[t * C + i];
  }
  const scale = 1 / Math.sqrt(D);
  const patterns = [];
  model.blocks.forEach((block, l) => {
    const h1 = rmsNorm(x, T, C, block.norm1, normEps);
    const q = linear(h1, T, C, block.q[0], block.q[1], A);
    const k = linear(h1, T, C, block.k[0], block.k[1], A);
    const v = linear(h1, T, C, block.v[0], block.v[1], A);
    const y = new Float64Array(T * A); // heads concatenated (the output projection's input)
    const layer = [];
    const row = new Float64Array(T);
    const acc = new Float64Array(D);
    for (let h = 0; h < H; h++) {
      const p = new Float64Array(T * T);
      const o = h * D;
      const qh = headSlice(q, T, A, o, D);
      const kh = headSlice(k, T, A, o, D);
      const vh = headSlice(v, T, A, o, D);
      for (let i = 0; i < T; i++) {
        let max = -Infinity;
        const qi = i * D;
        for (let j = 0; j <= i; j++) {
          let s = 0;
          const kj = j * D;
          for (let d = 0; d < D; d++) s += qh[qi + d] * kh[kj + d];
          s *= scale;
          row[j] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) {
          const e = Math.exp(row[j] - max);
          row[j] = e;
          sum += e;
        }
        acc.fill(0);
        const pi = i * T;
        for (let j = 0; j <= i; j++) {
          const pij = row[j] / sum;
          p[pi + j] = pij;
          const vj = j * D;
          for (let d = 0; d < D; d++) acc[d] += pij * vh[vj + d];
        }
        for (let d = 0; d < D; d++) y[i * A + o + d] = acc[d];
      }
      layer.push(p);
    }
    patterns.push(layer);
    if (mask) {
      const means = model.headMeans;
      const seqLen = model.config.seqLen;
      for (let h = 0; h < H; h++) {
        const m = mask[l][h];
        if (m === 1) continue;
        for (let t = 0; t < T; t++) {
          for (let d = 0; d < D; d++) {
            const at = t * A + h * D + d;
            y[at] *= m;
            if (fill === "mean") y[at] += (1 - m) * means[(l * seqLen + t) * A + h * D + d];
          }
        }
      }
    }
    const a = linear(y, T, A, block.out[0], block.out[1], C);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const h2 = rmsNorm(x, T, C, block.norm2, normEps);
    const f = linear(h2, T, C, block.fc[0], block.fc[1], M);
    for (let i = 0; i < f.length; i++) if (f[i] < 0) f[i] = 0; // ReLU
    const g = linear(f, T, M, block.proj[0], block.proj[1], C);
    const next = new Float64Array(T * C);
    for (let i = 0; i < x.length; i++) next[i] = x[i] + g[i];
    x = next;
  });
  const logits = linear(x, T, C, model.tensors["head.weight"], model.tensors["head.bias"], V);
  return { T, V, logits, patterns };
}

/**
 * A mask of ones `(L, H)` with the listed heads removed (`[[layer, head], ...]`).
 * @param {object} model
 * @param {Array<[number, number]>} [removed]
 * @returns {number[][]}
 */
export function headMask(model, removed = []) {
  const { nLayers: L, nHeads: H } = model.config;
  const mask = Array.from({ length: L }, () => new Array(H).fill(1));
  for (const [l, h] of removed) {
    if (!(Number.isInteger(l) && l >= 0 && l < L && Number.isInteger(h) && h >= 0 && h < H)) {
      throw new Error(`removed head (${l}, ${h}) is not in 0..${L - 1} x 0..${H - 1}`);
    }
    mask[l][h] = 0;
  }
  return mask;
}

/**
 * Predictions and scores of one sequence on its predictable positions, as
 * `bparallel.transformer.ablation.evaluate_ablation` scores them: the argmax (first index
 * among ties, as torch), right or wrong, and the logit margin (`ablation.logit_margin`:
 * the target's logit minus the largest other one).
 * @param {{T: number, V: number, logits: Float64Array}} out from {@link forward}
 * @param {ArrayLike<number>} targets `T` target ids
 * @param {ArrayLike<number|boolean>} predictable `T` flags
 * @returns {{predictions: number[], correct: boolean[], margin: number[], accuracy: number,
 *   meanMargin: number, count: number}} `accuracy` and `meanMargin` over the predictable
 *   positions (NaN when there is none)
 */
export function sequenceScores(out, targets, predictable) {
  const { T, V, logits } = out;
  if (targets.length !== T || predictable.length !== T) {
    throw new Error(`targets and predictable must hold ${T} entries`);
  }
  const predictions = [];
  const correct = [];
  const margin = [];
  let hits = 0;
  let sum = 0;
  let count = 0;
  for (let t = 0; t < T; t++) {
    let best = 0;
    let other = -Infinity;
    const y = targets[t];
    for (let k = 0; k < V; k++) {
      const z = logits[t * V + k];
      if (z > logits[t * V + best]) best = k;
      if (k !== y && z > other) other = z;
    }
    predictions.push(best);
    correct.push(best === y);
    const m = logits[t * V + y] - other;
    margin.push(m);
    if (predictable[t]) {
      count += 1;
      hits += best === y ? 1 : 0;
      sum += m;
    }
  }
  return {
    predictions, correct, margin, count,
    accuracy: count ? hits / count : NaN, meanMargin: count ? sum / count : NaN,
  };
}

// ------------------------------------------------------------------------ the tasks

/** The tasks (`bparallel.transformer.data.TASKS`). */
export const TASKS = ["copy", "cycle", "first", "induction", "majority", "histogram"];
/** Symbols of one majority sequence (`data.MAJORITY_SYMBOLS`). */
export const MAJORITY_SYMBOLS = 4;
/** Symbols of one histogram sequence (`data.HISTOGRAM_SYMBOLS`). */
export const HISTOGRAM_SYMBOLS = 16;
/** The tasks drawn from a small alphabet per sequence, and its size (`data.ALPHABET_SYMBOLS`). */
const ALPHABET_SYMBOLS = { majority: MAJORITY_SYMBOLS, histogram: HISTOGRAM_SYMBOLS };

/**
 * Targets and predictable positions of `task` for one sequence
 * (`bparallel.transformer.data.make_targets` and `predictable`): copy = the input; cycle =
 * the input rolled right by one (position 0 unpredictable); first = `x_0` everywhere;
 * induction = the token after the current token's first occurrence, predictable where the
 * current token occurred earlier; majority = the running mode (the incumbent keeps a tie),
 * predictable where one symbol alone holds the largest count; histogram = how often the
 * current token has occurred so far, itself included (every position predictable).
 * @param {string} task
 * @param {number[]} tokens
 * @returns {{targets: number[], predictable: number[]}} predictable as 0/1
 */
export function taskTargets(task, tokens) {
  if (!TASKS.includes(task)) throw new Error(`task: ${JSON.stringify(task)} is not one of ${TASKS.join(", ")}`);
  const T = tokens.length;
  if (T < 1) throw new Error("tokens: expected at least one token");
  const x = Array.from(tokens);
  const ones = () => new Array(T).fill(1);
  if (task === "copy") return { targets: x.slice(), predictable: ones() };
  if (task === "cycle") {
    const p = ones();
    p[0] = 0;
    return { targets: [x[T - 1], ...x.slice(0, T - 1)], predictable: p };
  }
  if (task === "first") return { targets: new Array(T).fill(x[0]), predictable: ones() };
  if (task === "histogram") {
    const seen = new Map();
    const targets = x.map((tok) => {
      const c = (seen.get(tok) || 0) + 1;
      seen.set(tok, c);
      return c;
    });
    return { targets, predictable: ones() };
  }
  const firstAt = new Map();
  x.forEach((tok, t) => {
    if (!firstAt.has(tok)) firstAt.set(tok, t);
  });
  if (task === "induction") {
    return {
      targets: x.map((tok) => x[Math.min(firstAt.get(tok) + 1, T - 1)]),
      predictable: x.map((tok, t) => (firstAt.get(tok) < t ? 1 : 0)),
    };
  }
  const counts = new Map();
  const targets = [];
  const predictable = [];
  let mode = x[0];
  let top = 0;
  for (let t = 0; t < T; t++) {
    const c = (counts.get(x[t]) || 0) + 1;
    counts.set(x[t], c);
    if (t === 0 || c > top) mode = x[t];
    top = Math.max(top, c);
    let holders = 0;
    for (const v of counts.values()) if (v === top) holders += 1;
    targets.push(mode);
    predictable.push(holders === 1 ? 1 : 0);
  }
  return { targets, predictable };
}

/**
 * A fresh sequence with the structure of `task`'s (`data.task_inputs`): i.i.d. uniform
 * tokens for copy, cycle and first; for induction `T // 2 + 1` distinct tokens, then
 * distinct tokens of the first half but its last, in random order; for majority tokens
 * drawn from a random alphabet of {@link MAJORITY_SYMBOLS} symbols, for histogram of
 * {@link HISTOGRAM_SYMBOLS}. Drawn with toydag's
 * `mulberry32`, not numpy's generator: a page's fresh sequence is not one of the package's.
 * @param {string} task
 * @param {number} seed
 * @param {number} [T]
 * @param {number} [V]
 * @returns {number[]}
 */
export function freshSequence(task, seed, T = 100, V = 256) {
  if (!TASKS.includes(task)) throw new Error(`task: ${JSON.stringify(task)} is not one of ${TASKS.join(", ")}`);
  const rand = mulberry32(seed);
  const int = (n) => Math.floor(rand() * n);
  const shuffled = (n) => {
    const a = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = int(i + 1);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  if (task === "induction") {
    const s = Math.floor(T / 2) + 1;
    const first = shuffled(V).slice(0, s);
    const picks = shuffled(s - 1).slice(0, T - s);
    return [...first, ...picks.map((k) => first[k])];
  }
  const k = ALPHABET_SYMBOLS[task];
  if (k !== undefined) {
    const alphabet = shuffled(V).slice(0, k);
    return Array.from({ length: T }, () => alphabet[int(k)]);
  }
  return Array.from({ length: T }, () => int(V));
}

// ------------------------------------------------------------------ head weights

/**
 * Learned head weights of every layer, `L` arrays of `H` summing to 1
 * (`bparallel.transformer.measure.model_head_weights` / `head_weights`): head `h`'s raw
 * score is the Frobenius norm of its `D` columns of the output projection.
 * @param {object} model
 * @returns {number[][]}
 */
export function headWeights(model) {
  const { nHeads: H, headDim: D, dModel: C } = model.config;
  const A = H * D;
  return model.blocks.map((block) => {
    const W = block.out[0]; // (C, A)
    const norms = new Array(H).fill(0);
    for (let h = 0; h < H; h++) {
      let s = 0;
      for (let o = 0; o < C; o++) for (let d = 0; d < D; d++) s += W[o * A + h * D + d] ** 2;
      norms[h] = Math.sqrt(s);
    }
    const total = norms.reduce((a, b) => a + b, 0);
    if (!(total > 0)) throw new Error("an output projection is all zero: head weights are undefined");
    return norms.map((n) => n / total);
  });
}

// --------------------------------------------------------------- combining heads

/**
 * Check head weights against `H` heads: finite, non-negative, not all zero
 * (`bparallel._checks.head_weight_vectors`); `null` is uniform, `1/H` each.
 * @param {number[]|null} weights
 * @param {number} H
 * @returns {number[]}
 */
export function checkHeadWeights(weights, H) {
  if (weights === null || weights === undefined) return new Array(H).fill(1 / H);
  if (!weights || weights.length !== H) throw new Error(`head weights: expected ${H} values`);
  const w = Array.from(weights, Number);
  if (w.some((x) => !(Number.isFinite(x) && x >= 0))) throw new Error("head weights must be finite and non-negative");
  if (!(w.reduce((a, b) => a + b, 0) > 0)) throw new Error("head weights are all zero");
  return w;
}

/**
 * `C = sum_h w_h A[h]`, flat `(T, T)` (Definition 3.6; `bparallel.proxies.combine_heads`
 * and `Walk`: one head of weight 1 is its own combination).
 * @param {Float64Array[]} heads one layer's patterns, `H` flat `(T, T)` arrays
 * @param {number[]|null} weights `H` weights, or null for uniform
 * @returns {Float64Array}
 */
export function combineHeads(heads, weights = null) {
  const w = checkHeadWeights(weights, heads.length);
  if (heads.length === 1 && w[0] === 1) return Float64Array.from(heads[0]);
  const C = new Float64Array(heads[0].length);
  for (let h = 0; h < heads.length; h++) {
    const a = heads[h];
    const wh = w[h];
    for (let i = 0; i < C.length; i++) C[i] += wh * a[i];
  }
  return C;
}

// ------------------------------------------------------------------------ the walk

/**
 * The walk's transition matrix `Q` `(T, T)` (flat, row-major) of a combined graph `C`,
 * sink absorbing (`bparallel.proxies.Walk.chain`): `P = C^T`; in `"paper"` mode the chain
 * implied by the published sampler (`proxies._paper_chain`: inverse CDF on unnormalised
 * cumulative sums clipped at 1, the rest to the sink), in `"definition"` mode Definition
 * 2.3's (`_definition_chain`: rows of `P` normalised; a non-sink position without outgoing
 * weight waits there, `_patch_empty_rows`).
 * @param {Float64Array} C
 * @param {string} mode
 * @returns {Float64Array}
 */
export function walkChain(C, mode) {
  checkMode(mode);
  const T = sizeOf(C);
  const Q = new Float64Array(T * T);
  for (let j = 0; j < T; j++) {
    if (mode === "paper") {
      let cs = 0; // numpy's cumsum of row j of P, left to right
      let before = 0; // min(cs, 1) at k - 1
      for (let k = 0; k < T - 1; k++) {
        cs += C[k * T + j];
        const clipped = Math.min(cs, 1);
        Q[j * T + k] = clipped - before;
        before = clipped;
      }
      Q[j * T + T - 1] = 1 - before;
    } else {
      let sum = 0;
      for (let k = 0; k < T; k++) sum += C[k * T + j];
      if (sum === 0 && j < T - 1) {
        Q[j * T + j] = 1; // waits there
      } else {
        const s = sum === 0 ? 1 : sum;
        for (let k = 0; k < T; k++) Q[j * T + k] = C[k * T + j] / s;
      }
    }
  }
  for (let k = 0; k < T; k++) Q[(T - 1) * T + k] = 0;
  Q[T * T - 1] = 1;
  return Q;
}

function checkMode(mode) {
  if (!MODES.includes(mode)) throw new Error(`mode: ${JSON.stringify(mode)} is not one of ${MODES.join(", ")}`);
}

function checkPositiveInt(x, name) {
  if (!isPosInt(x)) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(x)}`);
  return x;
}

// ------------------------------------------------------------------- Algorithm 1

/**
 * `E[min(tau, M)] = sum_{t<M} P(tau > t)` from every start, `T` values, the sink 0
 * (`bparallel.absorbing.survival_sums`; exact, no sampling). A trap's survival stays 1.
 * @param {Float64Array} Q from {@link walkChain}
 * @param {number} maxSteps M
 * @returns {Float64Array}
 */
export function survivalSums(Q, maxSteps) {
  const T = sizeOf(Q);
  const total = new Float64Array(T);
  if (T === 1) return total;
  const upper = isUpper(Q, T);
  let v = new Float64Array(T).fill(1);
  v[T - 1] = 0;
  let spare = new Float64Array(T);
  total.set(v);
  for (let t = 1; t < maxSteps; t++) {
    matVec(Q, v, T, spare, upper);
    [v, spare] = [spare, v];
    for (let i = 0; i < T; i++) total[i] += v[i];
  }
  return total;
}

/**
 * Algorithm 1: the mean over start positions of `E[min(tau, max_steps)]`, exactly
 * (`bparallel.proxies.mixing_time_proxy(..., method="exact")`).
 * @param {Float64Array} C combined graph
 * @param {{mode?: string, maxSteps?: number, reduce?: "mean"|"max"|"none"}} [options]
 * @returns {number|Float64Array}
 */
export function mixingTimeProxy(C, options = {}) {
  const { mode = "paper", maxSteps = MAX_STEPS, reduce = "mean" } = options;
  checkMode(mode);
  checkPositiveInt(maxSteps, "maxSteps");
  const perStart = survivalSums(walkChain(C, mode), maxSteps);
  if (reduce === "none") return perStart;
  if (reduce === "max") return Math.max(...perStart);
  if (reduce !== "mean") throw new Error(`reduce: "mean", "max" or "none", got ${JSON.stringify(reduce)}`);
  let s = 0;
  for (const x of perStart) s += x;
  return s / perStart.length;
}

// ------------------------------------------------------------------ Definition 2.7

/**
 * Definition 2.7 (Eq. 2) on the walk: the least integer `t >= 0` with
 * `max_i P(tau_i > t) <= eps`; `Infinity` ("never mixes") where a start never gets there
 * (a trap, as paper mode's position 0) or beyond `2^62` steps. The algorithm of
 * `bparallel.absorbing.mixing_times` (through `bparallel.proxies.worst_case_mixing_time`):
 * survival vectors `v_t = Q v_{t-1}` step by step for at most 128 steps (stopping early
 * when the decay predicts no mixing by then), then galloping on `R^(2^k)` (`R`: the chain
 * without the sink) and binary lifting; finite values above `2^53` are rounded.
 * @param {Float64Array} C combined graph
 * @param {{mode?: string, eps?: number}} [options]
 * @returns {number}
 */
export function worstCaseMixingTime(C, options = {}) {
  const { mode = "definition", eps = EPS } = options;
  checkMode(mode);
  if (!(typeof eps === "number" && eps > 0 && eps < 1)) throw new Error(`eps must lie in (0, 1), got ${eps}`);
  return mixingTime(walkChain(C, mode), eps);
}

/**
 * Definition 2.7 for one walk `Q` (row-stochastic, flat, sink last and absorbing):
 * toydag's {@link mixingTimeOfChain}, the twin of `bparallel.absorbing.mixing_times`.
 * @param {Float64Array} Q
 * @param {number} eps
 * @returns {number} `Infinity`: never mixes
 */
export function mixingTime(Q, eps) {
  return mixingTimeOfChain(Q, eps);
}

// ------------------------------------------------------------------- Algorithm 2

/**
 * Rows `(C^t)[T-1, :]` for `t = 0 .. horizon` (`bparallel.fidelity.sink_rows`, the row
 * recursion `e_tau^T C^(t+1) = (e_tau^T C^t) C`; toydag's `signalAtSink` on flat input).
 * @param {Float64Array} C
 * @param {number} horizon
 * @returns {Float64Array[]} `horizon + 1` rows of `T`
 */
export function sinkRows(C, horizon) {
  const T = sizeOf(C);
  const lower = isLower(C, T); // causal attention: C[k][j] = 0 for j > k, skipped
  let row = new Float64Array(T);
  row[T - 1] = 1;
  const out = [row];
  for (let t = 1; t <= horizon; t++) {
    const next = new Float64Array(T);
    for (let k = 0; k < T; k++) {
      const r = row[k];
      if (r === 0) continue;
      const o = k * T;
      const end = lower ? k + 1 : T;
      for (let j = 0; j < end; j++) next[j] += r * C[o + j];
    }
    out.push(next);
    row = next;
  }
  return out;
}

function isLower(C, T) {
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) if (C[i * T + j] !== 0) return false;
  return true;
}

/**
 * Node fidelity `phi_j = max_{1<=t<=horizon} (C^t)[T-1, j]` and the earliest `t` within
 * `PEAK_ATOL` of it (Definitions 3.3-3.4; `bparallel.proxies.node_fidelity_proxy` as
 * fractions, not percent): toydag's `nodeFidelity` on {@link sinkRows}.
 * @param {Float64Array} C
 * @param {number} [horizon]
 * @returns {{phi: number[], t: number[]}}
 */
export function nodeFidelityOf(C, horizon = HORIZON) {
  checkPositiveInt(horizon, "horizon");
  const { phi, t } = nodeFidelity(sinkRows(C, horizon));
  return { phi: Array.from(phi), t };
}

/**
 * Algorithm 2: minimax fidelity in percent from node fidelities
 * (`bparallel.proxies.minimax_fidelity_proxy`): `"paper"` takes the min over every node,
 * the sink included (the published code), `"definition"` over the non-sink nodes
 * (Definition 3.5; toydag's `minimaxFidelity`).
 * @param {number[]} phi node fidelities (fractions)
 * @param {string} mode
 * @returns {number}
 */
export function minimaxOf(phi, mode) {
  checkMode(mode);
  return 100 * (mode === "paper" ? Math.min(...phi) : minimaxFidelity(phi));
}

/**
 * Algorithm 2 on a combined graph (`bparallel.proxies.minimax_fidelity_proxy`), percent.
 * @param {Float64Array} C
 * @param {{mode?: string, horizon?: number}} [options]
 * @returns {number}
 */
export function minimaxFidelityProxy(C, options = {}) {
  const { mode = "paper", horizon = HORIZON } = options;
  return minimaxOf(nodeFidelityOf(C, horizon).phi, mode);
}

// ------------------------------------------------------------------------ rollout

/**
 * Attention rollout (Abnar & Zuidema 2020; `bparallel.proxies.attention_rollout`): per
 * layer `A_l = sum_h w_h A_l[h]`, `A^_l = r I + (1 - r) A_l` with rows re-normalised (a
 * row without weight keeps its own position), and the rollout after layer `l` is
 * `A^_l ... A^_1`, flat `(T, T)`; row `i` says how much of position `i`'s representation
 * after layer `l + 1` is traceable to each input token.
 * @param {Float64Array[][]} patterns `[layer][head]`
 * @param {Array<number[]|null>|null} [weights] per layer, or null for uniform heads
 * @param {number} [residual]
 * @returns {Float64Array[]} one matrix per layer
 */
export function attentionRollout(patterns, weights = null, residual = RESIDUAL) {
  if (!(residual >= 0 && residual <= 1)) throw new Error(`residual must lie in [0, 1], got ${residual}`);
  const out = [];
  let prev = null;
  patterns.forEach((heads, l) => {
    const C = combineHeads(heads, weights === null ? null : weights[l]);
    const T = sizeOf(C);
    const Ah = new Float64Array(T * T);
    for (let i = 0; i < T; i++) {
      let s = 0;
      for (let j = 0; j < T; j++) {
        const a = (i === j ? residual : 0) + (1 - residual) * C[i * T + j];
        Ah[i * T + j] = a;
        s += a;
      }
      if (s === 0) {
        Ah[i * T + i] = 1;
        s = 1;
      }
      for (let j = 0; j < T; j++) Ah[i * T + j] /= s;
    }
    if (prev === null) {
      prev = Ah;
    } else {
      const R = new Float64Array(T * T);
      for (let i = 0; i < T; i++) {
        for (let k = 0; k < T; k++) {
          const a = Ah[i * T + k];
          if (a === 0) continue;
          for (let j = 0; j < T; j++) R[i * T + j] += a * prev[k * T + j];
        }
      }
      prev = R;
    }
    out.push(prev);
  });
  return out;
}

/**
 * One row of the rollout after the last layer of `patterns` (default: the sink's, `T - 1`),
 * `T` values: the row of {@link attentionRollout}'s last matrix, as the vector-matrix
 * products `e_row^T A^_L ... A^_1` (`O(L T^2)` instead of `O(L T^3)`; the same products
 * associated the other way, so equal to rounding).
 * @param {Float64Array[][]} patterns `[layer][head]`
 * @param {Array<number[]|null>|null} [weights]
 * @param {number} [residual]
 * @param {number|null} [row]
 * @returns {Float64Array}
 */
export function rolloutRow(patterns, weights = null, residual = RESIDUAL, row = null) {
  if (!(residual >= 0 && residual <= 1)) throw new Error(`residual must lie in [0, 1], got ${residual}`);
  let r = null;
  for (let l = patterns.length - 1; l >= 0; l--) {
    const C = combineHeads(patterns[l], weights === null ? null : weights[l]);
    const T = sizeOf(C);
    if (r === null) {
      r = new Float64Array(T);
      r[row === null ? T - 1 : row] = 1;
    }
    const next = new Float64Array(T);
    for (let k = 0; k < T; k++) {
      if (r[k] === 0) continue;
      let s = 0;
      for (let j = 0; j < T; j++) s += (k === j ? residual : 0) + (1 - residual) * C[k * T + j];
      const a = r[k];
      if (s === 0) {
        next[k] += a; // a row without weight keeps its own position
        continue;
      }
      for (let j = 0; j < T; j++) {
        next[j] += a * (((k === j ? residual : 0) + (1 - residual) * C[k * T + j]) / s);
      }
    }
    r = next;
  }
  return r;
}

// --------------------------------------------------------------- one layer at once

/**
 * Every measure of one layer that the explorer shows, from the patterns of a forward pass
 * (`bparallel.transformer.measure.sequence_metrics` and `defined_metrics` for one sequence
 * and layer): on the combined graph `C` (heads weighted by `weights`) Algorithm 1
 * (`mixing_time.<mode>`), Algorithm 2 (`fidelity.<mode>`, percent), Definition 2.7
 * (`worst_case.<mode>`, Infinity: never mixes), the node fidelities in percent
 * (`fidelity.node`), the sink's row of the attention rollout after this layer (`rollout`,
 * every layer's heads weighted by `rolloutWeights[l]`, null: uniform, as the package's
 * `rollout.uniform`; the learned weights give `rollout.weighted`); and each head alone
 * (weight 1): its
 * minimax fidelity per mode (`head_fidelity.<mode>`, percent; `best_head_vs_combined`'s
 * `per_head`).
 * @param {Float64Array[][]} patterns `[layer][head]` from {@link forward}
 * @param {number} layer
 * @param {{weights?: number[]|null, rolloutWeights?: Array<number[]|null>|null,
 *   maxSteps?: number, horizon?: number, eps?: number, heads?: boolean}} [options]
 * @returns {object}
 */
export function layerMeasures(patterns, layer, options = {}) {
  const {
    weights = null, rolloutWeights = null, maxSteps = MAX_STEPS, horizon = HORIZON, eps = EPS,
    heads = true,
  } = options;
  if (!(Number.isInteger(layer) && layer >= 0 && layer < patterns.length)) {
    throw new Error(`layer must lie in 0..${patterns.length - 1}, got ${JSON.stringify(layer)}`);
  }
  checkPositiveInt(maxSteps, "maxSteps");
  checkPositiveInt(horizon, "horizon");
  const C = combineHeads(patterns[layer], weights);
  const out = { combined: C };
  for (const mode of MODES) {
    const Q = walkChain(C, mode);
    const perStart = survivalSums(Q, maxSteps);
    let s = 0;
    for (const x of perStart) s += x;
    out[`mixing_time.${mode}`] = s / perStart.length;
    out[`worst_case.${mode}`] = mixingTime(Q, eps);
  }
  const { phi } = nodeFidelityOf(C, horizon);
  out["fidelity.node"] = phi.map((x) => 100 * x);
  for (const mode of MODES) out[`fidelity.${mode}`] = minimaxOf(phi, mode);
  out.rollout = Array.from(rolloutRow(patterns.slice(0, layer + 1), rolloutWeights));
  if (heads) {
    for (const mode of MODES) out[`head_fidelity.${mode}`] = [];
    for (const a of patterns[layer]) {
      const p = nodeFidelity(sinkRows(a, horizon)).phi;
      for (const mode of MODES) out[`head_fidelity.${mode}`].push(minimaxOf(Array.from(p), mode));
    }
  }
  return out;
}
