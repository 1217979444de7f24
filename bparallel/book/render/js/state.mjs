/**
 * @file state.mjs: the playground's state, its presets, what it computes, and its links.
 *
 * The browser twin of `bparallel.book.playground` (`PlaygroundState`, the presets,
 * `compute`) and of `bparallel.book.playground_link` (the `#pg=` address): the state a
 * reader edits, validated with the Python messages; the presets of Examples 3.8 and 3.13;
 * the mixing and fidelity numbers of a state, from the mathematics of `toydag.mjs`; and the
 * compact link that stores a state in the page's address. `tests/book/render/test_js_parity.py`
 * checks every number and link against Python.
 */

import {
  backwardEdges,
  bestHead,
  convexCombination,
  diffusionMatrix,
  isFeedforward,
  minimaxFidelity,
  mixingTime,
  nodeFidelity,
  signalAtSink,
  sinks,
  sortEdges,
  walkMatrix,
  worstHittingTime,
} from "./toydag.mjs";
import { randomFeedforwardHeads } from "./random.mjs";

/** Playground limits (`bparallel.book.playground.MAX_NODES`, `MIN_HEADS`, `MAX_HEADS`). */
export const MAX_NODES = 12;
export const MIN_HEADS = 2;
export const MAX_HEADS = 4;
/** Amplification above this counts as "the heads together beat the best head". */
export const AMPLIFIED_ATOL = 1e-12;

// ------------------------------------------------------------------ playground state

/**
 * @typedef {object} PlaygroundState What the playground edits (`bparallel.book.playground.PlaygroundState`).
 * @property {number} n number of nodes, 2..MAX_NODES; the sink is n-1
 * @property {Array<Array<[number, number]>>} heads one sorted edge list per head (no self-loops)
 * @property {number[]} raw_beta un-normalised weights, one per head
 * @property {number} horizon T >= 1
 * @property {number} eps the epsilon of Definition 2.7, in (0, 1)
 * @property {string[]|null} labels node names (null: "0", "1", ..., "tau")
 */

function isInt(x) {
  return typeof x === "number" && Number.isInteger(x);
}

/**
 * Validate a configuration and return a clean state (self-loops dropped, edges sorted),
 * with the checks and messages of `PlaygroundState.__post_init__`. Throws `Error`.
 * @param {object} config `{n, heads, raw_beta, horizon = 20, eps = 0.25, labels = null}`
 * @returns {PlaygroundState}
 */
export function normalizeState(config) {
  const { n, heads, raw_beta: rawBeta, horizon = 20, eps = 0.25, labels = null } = config;
  if (!isInt(n) || n < 2 || n > MAX_NODES) throw new Error(`n must lie in 2..${MAX_NODES}, got ${n}`);
  if (!Array.isArray(heads) || heads.length < MIN_HEADS || heads.length > MAX_HEADS) {
    throw new Error(`heads: need ${MIN_HEADS}..${MAX_HEADS} heads, got ${heads && heads.length}`);
  }
  const clean = heads.map((edges) => {
    for (const e of edges) {
      if (!Array.isArray(e) || e.length !== 2 || !e.every(isInt)) {
        throw new Error(`edges must be (j, i) pairs of node indices, got ${JSON.stringify(e)}`);
      }
      if (e.some((v) => v < 0 || v >= n)) {
        throw new Error(`edges: edge (${e[0]}, ${e[1]}) has a node out of range 0..${n - 1} (n=${n})`);
      }
    }
    return sortEdges(edges.filter(([j, i]) => j !== i));
  });
  if (!Array.isArray(rawBeta) || rawBeta.length !== clean.length) {
    throw new Error(`raw_beta must have one weight per head (${clean.length}), got ${rawBeta}`);
  }
  normalizedBeta(rawBeta); // validates
  if (!isInt(horizon) || horizon < 1) throw new Error(`horizon must be an integer >= 1, got ${horizon}`);
  if (!(typeof eps === "number" && eps > 0 && eps < 1)) throw new Error(`eps must lie in (0, 1), got ${eps}`);
  const keepLabels = Array.isArray(labels) && labels.length === n ? labels.map(String) : null;
  return { n, heads: clean, raw_beta: rawBeta.map(Number), horizon, eps, labels: keepLabels };
}

/**
 * The raw weights normalised to sum 1 (what Eq. 26 uses). Throws on bad weights.
 * @param {number[]} rawBeta
 * @returns {number[]}
 */
export function normalizedBeta(rawBeta) {
  if (!rawBeta.every((b) => typeof b === "number" && Number.isFinite(b) && b >= 0)) {
    throw new Error(`raw_beta must be finite and non-negative, got ${rawBeta}`);
  }
  const total = rawBeta.reduce((s, b) => s + b, 0);
  if (!(total > 0)) throw new Error("raw_beta must not be all zero: at least one head needs weight");
  return rawBeta.map((b) => b / total);
}

/**
 * Node names: the state's labels, or `"0", "1", ..., "tau"`.
 * @param {PlaygroundState} state
 * @returns {string[]}
 */
export function nodeLabels(state) {
  if (state.labels) return [...state.labels];
  return Array.from({ length: state.n }, (_, k) => (k === state.n - 1 ? "tau" : String(k)));
}

/**
 * Toggle edge `j -> i` of head `h` in place (`PlaygroundState.toggle`).
 * @param {PlaygroundState} state
 * @param {number} h head index
 * @param {number} j sender
 * @param {number} i receiver
 * @returns {boolean} whether the edge is now present
 */
export function toggleEdge(state, h, j, i) {
  if (!(isInt(h) && h >= 0 && h < state.heads.length)) {
    throw new Error(`head must lie in 0..${state.heads.length - 1}, got ${h}`);
  }
  if (![j, i].every((v) => isInt(v) && v >= 0 && v < state.n)) {
    throw new Error(`edges: edge (${j}, ${i}) has a node out of range 0..${state.n - 1} (n=${state.n})`);
  }
  if (j === i) throw new Error(`self-loop ${j} -> ${i} is always present and cannot be toggled`);
  const edges = state.heads[h];
  const at = edges.findIndex(([a, b]) => a === j && b === i);
  if (at >= 0) edges.splice(at, 1);
  else state.heads[h] = sortEdges([...edges, [j, i]]);
  return at < 0;
}

/**
 * Change the number of nodes in place, keeping the sink last (`PlaygroundState.set_n`): an
 * edge into the old sink goes to the new one; growing inserts the new nodes just before the
 * sink, each with an edge to it; shrinking removes the nodes just before the sink and sends
 * an edge into a removed node to the sink. The labels reset.
 * @param {PlaygroundState} state
 * @param {number} n
 * @returns {string} what changed, in a sentence for the reader ("" when nothing did)
 */
export function setNodeCount(state, n) {
  if (!isInt(n) || n < 2 || n > MAX_NODES) throw new Error(`n must lie in 2..${MAX_NODES}, got ${n}`);
  const old = state.n;
  if (n === old) return "";
  const kept = Math.min(old, n) - 1; // non-sink nodes 0 .. kept-1 keep their index
  const moved = (k) => (k === old - 1 ? n - 1 : k < kept ? k : null);
  const between = (a, b) => Array.from({ length: b - a }, (_, k) => a + k);
  state.heads = state.heads.map((edges) => {
    const out = [];
    for (const [j, i] of edges) {
      const a = moved(j);
      const b = moved(i) ?? n - 1; // into a removed node: to the sink
      if (a !== null && a !== b) out.push([a, b]);
    }
    for (const k of between(old - 1, n - 1)) out.push([k, n - 1]); // new nodes -> sink
    const seen = new Set();
    return sortEdges(out.filter(([j, i]) => !seen.has(`${j},${i}`) && seen.add(`${j},${i}`)));
  });
  state.n = n;
  state.labels = null;
  const list = (ks) => ks.join(", ");
  if (n > old) {
    return `Nodes ${old} \u2192 ${n}: the sink \u03c4 stays last (now node ${n - 1}) and keeps ` +
      `its edges; the new node${n - old > 1 ? "s" : ""} ${list(between(old - 1, n - 1))} ` +
      `pass${n - old > 1 ? "" : "es"} to \u03c4.`;
  }
  return `Nodes ${old} \u2192 ${n}: the sink \u03c4 stays last (now node ${n - 1}); node` +
    `${old - n > 1 ? "s" : ""} ${list(between(n - 1, old - 1))} ${old - n > 1 ? "were" : "was"} ` +
    "removed and the edges into them now go to \u03c4.";
}

/**
 * Add empty heads (weight 1) or drop the last ones, in place (`set_num_heads`).
 * @param {PlaygroundState} state
 * @param {number} count
 */
export function setHeadCount(state, count) {
  if (!isInt(count) || count < MIN_HEADS || count > MAX_HEADS) {
    throw new Error(`number of heads must lie in ${MIN_HEADS}..${MAX_HEADS}, got ${count}`);
  }
  while (state.heads.length < count) {
    // a new head starts as the path 0 -> 1 -> ... -> n-1 (usable), not empty (`set_num_heads`)
    state.heads.push(Array.from({ length: state.n - 1 }, (_, j) => [j, j + 1]));
    state.raw_beta.push(1);
  }
  state.heads.length = count;
  state.raw_beta.length = count;
}

/**
 * Set the raw weight of head `h` in place; refuses to make every weight zero (`set_weight`).
 * @param {PlaygroundState} state
 * @param {number} h
 * @param {number} value finite, >= 0
 */
export function setWeight(state, h, value) {
  if (!(isInt(h) && h >= 0 && h < state.heads.length)) {
    throw new Error(`head must lie in 0..${state.heads.length - 1}, got ${h}`);
  }
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new Error(`weight must be finite and non-negative, got ${value}`);
  }
  const rest = state.raw_beta.reduce((s, b, k) => (k === h ? s : s + b), 0);
  if (!(rest + value > 0)) throw new Error("raw_beta must not be all zero: at least one head needs weight");
  state.raw_beta[h] = value;
}

// ------------------------------------------------------------------------------ presets

/** Preset names, as in `bparallel.book.playground.PRESETS`. */
export const PRESET_NAMES = [
  "Example 3.8",
  "Example 3.13 (paper)",
  "Example 3.13 (code)",
  "Random feedforward",
];

/** Example 3.13's head 2, by variant (`bparallel.examples.EXAMPLE_3_13_VARIANTS`). */
export const EXAMPLE_3_13_HEAD_2 = {
  paper: [[1, 0], [0, 2], [2, 3]],
  code: [[0, 2], [1, 2], [1, 3], [2, 3]],
};

/**
 * A fresh state from a preset (`bparallel.book.playground.from_preset`). `Random feedforward`
 * takes `{seed = 0, n = 6, heads = 2, density = 0.3}` and draws with {@link mulberry32}.
 * @param {string} name one of {@link PRESET_NAMES}
 * @param {{seed?: number, n?: number, heads?: number, density?: number}} [options]
 * @returns {PlaygroundState}
 */
export function presetState(name, options = {}) {
  switch (name) {
    case "Example 3.8": // head 1: u -> v; head 2: v -> tau
      return normalizeState({
        n: 3, heads: [[[0, 1]], [[1, 2]]], raw_beta: [0.5, 0.5], horizon: 20, labels: ["u", "v", "tau"],
      });
    case "Example 3.13 (paper)":
    case "Example 3.13 (code)": {
      const variant = name.includes("paper") ? "paper" : "code";
      return normalizeState({
        n: 4,
        heads: [[[0, 1], [1, 2], [2, 3]], EXAMPLE_3_13_HEAD_2[variant]],
        raw_beta: [0.5, 0.5],
        horizon: 20,
        labels: ["u", "v", "w", "tau"],
      });
    }
    case "Random feedforward": {
      const { seed = 0, n = 6, heads = 2, density = 0.3 } = options;
      return normalizeState({
        n, heads: randomFeedforwardHeads(heads, n, density, seed), raw_beta: new Array(heads).fill(1),
      });
    }
    default:
      throw new Error(`unknown preset ${JSON.stringify(name)}; choose one of ${PRESET_NAMES.join(", ")}`);
  }
}

// -------------------------------------------------------------------------- computation

/**
 * @typedef {object} PlaygroundResult Everything the playground shows for one state; the
 * field names are those of Python's `PlaygroundResult` and `FidelityReport`.
 * @property {PlaygroundState} state
 * @property {number[][][]} head_signals `[h][t][j]`: phi_j(t) per head, t = 0..T (Eq. 22)
 * @property {number[][]} multi_signal `[t][j]` for `Delta-bar` (Eq. 26)
 * @property {object} report `{horizon, beta, node_phi, node_t, multi_phi, multi_t,
 *   head_minimax, multi_minimax, best_head, best_head_minimax, amplification}`
 * @property {Array<number|null>} head_mixing Definition 2.7 per head (null: never within eps)
 * @property {number|null} multi_mixing for `W-bar`
 * @property {Array<number|null>} head_hitting worst-start E[tau] per head (null: infinite)
 * @property {number|null} multi_hitting
 * @property {boolean[]} feedforward Definition 2.1 per head
 * @property {string[]} warnings
 * @property {boolean} amplified amplification > 1e-12
 */

/**
 * The warnings of `bparallel.book.playground.compute`: backward edges (Definition 2.1) and
 * extra sinks (Definition 2.2), per head.
 * @param {PlaygroundState} state
 * @returns {string[]}
 */
export function stateWarnings(state) {
  const labels = nodeLabels(state);
  const out = [];
  state.heads.forEach((edges, h) => {
    const back = backwardEdges(edges);
    if (back.length) {
      const shown = back.map(([j, i]) => `${labels[j]}->${labels[i]}`).join(", ");
      out.push(`head ${h + 1} is not feedforward (Definition 2.1): backward edge(s) ${shown}`);
    }
    const extra = sinks(edges, state.n).filter((s) => s !== state.n - 1).map((s) => labels[s]);
    if (extra.length) {
      out.push(
        `head ${h + 1} has no unique sink (Definition 2.2): ${extra.join(", ")} never pass(es) anything on`,
      );
    }
  });
  return out;
}

/**
 * Signals, fidelities, mixing and hitting times of every head and of the combination:
 * what `bparallel.book.playground.compute` returns, for a configuration object.
 * @param {object} config see {@link normalizeState}
 * @returns {PlaygroundResult}
 */
export function compute(config) {
  const state = normalizeState(config);
  const { n, horizon, eps } = state;
  const beta = normalizedBeta(state.raw_beta);
  const deltas = state.heads.map((edges) => diffusionMatrix(edges, n)); // Eq. 21
  const walks = state.heads.map((edges) => walkMatrix(edges, n)); // Eq. 1
  const deltaBar = convexCombination(deltas, beta); // Eq. 26
  const wBar = convexCombination(walks, beta); // W-bar of Section 2.2

  const headSignals = deltas.map((d) => signalAtSink(d, horizon));
  const multiSignal = signalAtSink(deltaBar, horizon);
  const heads = headSignals.map(nodeFidelity);
  const multi = nodeFidelity(multiSignal);
  const headMinimax = heads.map((f) => minimaxFidelity(f.phi));
  const multiMinimax = minimaxFidelity(multi.phi);
  const best = bestHead(headMinimax);
  const amplification = multiMinimax - best.value;

  return {
    state,
    head_signals: headSignals,
    multi_signal: multiSignal,
    report: {
      horizon,
      beta,
      node_phi: heads.map((f) => f.phi),
      node_t: heads.map((f) => f.t),
      multi_phi: multi.phi,
      multi_t: multi.t,
      head_minimax: headMinimax,
      multi_minimax: multiMinimax,
      best_head: best.head,
      best_head_minimax: best.value,
      amplification,
    },
    head_mixing: walks.map((w) => mixingTime(w, eps)),
    multi_mixing: mixingTime(wBar, eps),
    head_hitting: walks.map(worstHittingTime),
    multi_hitting: worstHittingTime(wBar),
    feedforward: state.heads.map(isFeedforward),
    warnings: stateWarnings(state),
    amplified: amplification > AMPLIFIED_ATOL,
  };
}

// ------------------------------------------------------------- sharing: link and Python

const ROW_BITS = 4; // one hex digit per 4 receivers

/**
 * Compact text form of a state for the address fragment, e.g. for Example 3.13 (paper):
 * `v=1;n=4;T=20;e=0.25;b=0.5,0.5;h=2480,4180;l=u,v,w,tau`. Each head is its adjacency by
 * sender row: row j is a bitmask of the receivers of j, `ceil(n/4)` hex digits per row.
 * Numbers keep every digit (`String(x)` round-trips exactly).
 * @param {PlaygroundState} state
 * @returns {string} only URL-safe characters
 */
export function encodeState(state) {
  const width = Math.ceil(state.n / ROW_BITS);
  const heads = state.heads.map((edges) => {
    const rows = new Array(state.n).fill(0);
    for (const [j, i] of edges) rows[j] += 2 ** i;
    return rows.map((r) => r.toString(16).padStart(width, "0")).join("");
  });
  const parts = [
    "v=1",
    `n=${state.n}`,
    `T=${state.horizon}`,
    `e=${state.eps}`,
    `b=${state.raw_beta.map(String).join(",")}`,
    `h=${heads.join(",")}`,
  ];
  if (state.labels) parts.push(`l=${state.labels.map(encodeURIComponent).join(",")}`);
  return parts.join(";");
}

/**
 * Inverse of {@link encodeState}; throws `Error` on a malformed or invalid text.
 * @param {string} text
 * @returns {PlaygroundState}
 */
export function decodeState(text) {
  const fields = Object.fromEntries(
    text.split(";").map((part) => {
      const at = part.indexOf("=");
      return at < 0 ? [part, ""] : [part.slice(0, at), part.slice(at + 1)];
    }),
  );
  if (fields.v !== "1") throw new Error(`unknown playground link version ${JSON.stringify(fields.v)}`);
  const n = Number(fields.n);
  const width = Math.ceil(n / ROW_BITS);
  const heads = (fields.h || "").split(",").map((hex) => {
    if (!/^[0-9a-f]*$/.test(hex) || hex.length !== n * width) throw new Error(`bad head ${JSON.stringify(hex)}`);
    const edges = [];
    for (let j = 0; j < n; j++) {
      const row = parseInt(hex.slice(j * width, (j + 1) * width), 16);
      for (let i = 0; i < n; i++) if (Math.floor(row / 2 ** i) % 2 === 1) edges.push([j, i]);
    }
    return edges;
  });
  const numbers = (s) => (s === undefined || s === "" ? [] : s.split(",").map(Number));
  return normalizeState({
    n,
    heads,
    raw_beta: numbers(fields.b),
    horizon: Number(fields.T),
    eps: Number(fields.e),
    labels: fields.l === undefined ? null : fields.l.split(",").map(decodeURIComponent),
  });
}
