/**
 * @file toydag.mjs: the toy-DAG mathematics of `bparallel`, in dependency-free JavaScript.
 *
 * This module is the browser twin of the Python package (`bparallel.graphs`,
 * `bparallel.markov`, `bparallel.fidelity`, `bparallel.book.playground`), written so that both
 * give the same numbers: `tests/book/test_js_parity.py` runs it under Node on hundreds of graphs
 * and compares every quantity with Python to 1e-12. It runs as is in Node and in a browser
 * (no build step, no imports); `bparallel/book/js_playground.py` inlines it into the book.
 *
 * Conventions (the book's notation page, as in `bparallel.graphs`):
 * - nodes are `0 .. n-1`; the sink tau is `n-1` (the paper's node n);
 * - an edge `[j, i]` means `j -> i`: node j sends, node i receives;
 * - self-loops are always present, whether or not an edge list names them;
 * - matrices are arrays of rows, `M[i][j]`; `A[i][j] = 1` iff `j -> i`;
 * - `W` (Eq. 1) divides column j by the out-degree of j: column-stochastic;
 * - `Delta` (Eq. 21) divides row i by the in-degree of i: row-stochastic.
 *
 * Sums run in the same order as numpy's (left to right from 0), so signals and fidelities
 * come out identical to Python's in practice (the tests allow 1e-12); mixing and hitting
 * times use matrix products and a linear solve whose rounding differs from BLAS/LAPACK in
 * the last bits only, far inside the 1e-12 slack of the thresholds.
 */

/** Signals within this of the peak count as the peak (`bparallel.fidelity.PEAK_ATOL`). */
export const PEAK_ATOL = 1e-12;
/** Distances within this of eps count as mixed (`bparallel.absorbing.MIX_ATOL`). */
export const TV_ATOL = 1e-12;
/** Playground limits (`bparallel.book.playground.MAX_NODES`, `MIN_HEADS`, `MAX_HEADS`). */
export const MAX_NODES = 12;
export const MIN_HEADS = 2;
export const MAX_HEADS = 4;
/** Amplification above this counts as "the heads together beat the best head". */
export const AMPLIFIED_ATOL = 1e-12;

// ------------------------------------------------------------------------ small matrices

/**
 * The n x n identity matrix.
 * @param {number} n
 * @returns {number[][]}
 */
export function identity(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

/**
 * Matrix product `A B`, each entry summed left to right over the inner index.
 * @param {number[][]} A
 * @param {number[][]} B
 * @returns {number[][]}
 */
export function matmul(A, B) {
  const n = A.length;
  const m = B[0].length;
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = new Array(m).fill(0);
    for (let k = 0; k < B.length; k++) {
      const a = A[i][k];
      for (let j = 0; j < m; j++) row[j] += a * B[k][j];
    }
    out.push(row);
  }
  return out;
}

/**
 * The transpose of a square matrix.
 * @param {number[][]} M
 * @returns {number[][]}
 */
export function transpose(M) {
  return M.map((_, i) => M.map((row) => row[i]));
}

// ------------------------------------------------------------------------------ graphs

/**
 * The 0/1 adjacency matrix `A[i][j] = 1` iff `j -> i`, self-loops included (Defs 2.1, 2.3).
 * @param {Array<[number, number]>} edges edge `[j, i]` means `j -> i`
 * @param {number} n number of nodes
 * @returns {number[][]}
 */
export function adjacencyMatrix(edges, n) {
  const A = identity(n);
  for (const [j, i] of edges) A[i][j] = 1;
  return A;
}

/**
 * Random-walk matrix `W` (Definition 2.3, Eq. 1): `W[i][j] = 1/outdeg(j)` if `j -> i`.
 * Column-stochastic; defined for any directed graph.
 * @param {Array<[number, number]>} edges
 * @param {number} n
 * @returns {number[][]}
 */
export function walkMatrix(edges, n) {
  const A = adjacencyMatrix(edges, n);
  const outdeg = A[0].map((_, j) => A.reduce((s, row) => s + row[j], 0));
  return A.map((row) => row.map((a, j) => a / outdeg[j]));
}

/**
 * Diffusion matrix `Delta` (Definition 3.1, Eq. 21): `Delta[i][j] = 1/indeg(i)` if `j -> i`.
 * Row-stochastic: row i is the receiving node, column j the sender.
 * @param {Array<[number, number]>} edges
 * @param {number} n
 * @returns {number[][]}
 */
export function diffusionMatrix(edges, n) {
  const A = adjacencyMatrix(edges, n);
  return A.map((row) => {
    const indeg = row.reduce((s, a) => s + a, 0);
    return row.map((a) => a / indeg);
  });
}

/**
 * Convex combination `sum_h beta[h] * M[h]`: Eq. 26 for `Delta-bar`, the `W-bar` of Sec. 2.2.
 * @param {number[][][]} matrices one matrix per head
 * @param {number[]} beta convex weights, one per head
 * @returns {number[][]}
 */
export function convexCombination(matrices, beta) {
  const n = matrices[0].length;
  const out = [];
  for (let i = 0; i < n; i++) {
    const row = new Array(n).fill(0);
    for (let j = 0; j < n; j++) {
      for (let h = 0; h < matrices.length; h++) row[j] += beta[h] * matrices[h][i][j];
    }
    out.push(row);
  }
  return out;
}

/**
 * Edges `[j, i]` with `j > i`: they break Definition 2.1 in the given node order.
 * @param {Array<[number, number]>} edges
 * @returns {Array<[number, number]>} in sorted order
 */
export function backwardEdges(edges) {
  return sortEdges(edges).filter(([j, i]) => j > i);
}

/**
 * Definition 2.1: every edge `j -> i` has `j <= i` (the order of token positions).
 * @param {Array<[number, number]>} edges
 * @returns {boolean}
 */
export function isFeedforward(edges) {
  return backwardEdges(edges).length === 0;
}

/**
 * Nodes with no outgoing edge to a distinct node (Definition 2.2), in increasing order.
 * @param {Array<[number, number]>} edges
 * @param {number} n
 * @returns {number[]}
 */
export function sinks(edges, n) {
  const hasOut = new Array(n).fill(false);
  for (const [j, i] of edges) if (j !== i) hasOut[j] = true;
  return hasOut.flatMap((out, v) => (out ? [] : [v]));
}

/**
 * Edges sorted by sender, then receiver (the order of Python's `sorted`), duplicates removed.
 * @param {Array<[number, number]>} edges
 * @returns {Array<[number, number]>}
 */
export function sortEdges(edges) {
  const seen = new Set();
  const out = [];
  for (const [j, i] of edges) {
    const key = `${j},${i}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push([j, i]);
    }
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

// ------------------------------------------------------------------ fidelity (Section 3)

/**
 * Signal at the sink `phi_j(t) = (Delta^t)[tau][j]` (Definition 3.2, Eq. 22), `t = 0..T`.
 * Computed as the row recursion `e_tau^T Delta^t`, one vector-matrix product per step.
 * @param {number[][]} delta row-stochastic diffusion matrix
 * @param {number} horizon T >= 1
 * @returns {number[][]} `signal[t][j]`, T+1 rows of n values
 */
export function signalAtSink(delta, horizon) {
  const n = delta.length;
  let row = new Array(n).fill(0);
  row[n - 1] = 1;
  const out = [row];
  for (let t = 1; t <= horizon; t++) {
    const next = new Array(n).fill(0);
    for (let j = 0; j < n; j++) {
      for (let k = 0; k < n; k++) next[j] += row[k] * delta[k][j];
    }
    out.push(next);
    row = next;
  }
  return out;
}

/**
 * Node fidelity and optimal fidelity time (Definitions 3.3-3.4, Eqs. 23-24) from a signal:
 * `phi[j] = max_{1<=t<=T} phi_j(t)`, `t[j]` the earliest time within `PEAK_ATOL` of it.
 * @param {number[][]} signal from {@link signalAtSink}
 * @returns {{phi: number[], t: number[]}}
 */
export function nodeFidelity(signal) {
  const n = signal[0].length;
  const phi = new Array(n).fill(-Infinity);
  for (let t = 1; t < signal.length; t++) {
    for (let j = 0; j < n; j++) if (signal[t][j] > phi[j]) phi[j] = signal[t][j];
  }
  const times = phi.map((p, j) => {
    for (let t = 1; t < signal.length; t++) if (signal[t][j] >= p - PEAK_ATOL) return t;
    return signal.length - 1;
  });
  return { phi, t: times };
}

/**
 * Minimax fidelity `phi_min = min_j phi_j` over the non-sink nodes (Def. 3.5, Eq. 25;
 * Eq. 29 for `Delta-bar`).
 * @param {number[]} phi node fidelities, sink last
 * @returns {number}
 */
export function minimaxFidelity(phi) {
  const nodes = phi.length > 1 ? phi.slice(0, -1) : phi;
  return Math.min(...nodes);
}

/**
 * Best head (Definitions 3.11-3.12): the largest minimax fidelity, lowest index among ties.
 * @param {number[]} headMinimax one `phi_min` per head
 * @returns {{head: number, value: number}}
 */
export function bestHead(headMinimax) {
  let head = 0;
  for (let h = 1; h < headMinimax.length; h++) if (headMinimax[h] > headMinimax[head]) head = h;
  return { head, value: headMinimax[head] };
}

// ---------------------------------------------------------------------- mixing (Sec. 2)

/**
 * `max_j || M e_j - 1_tau ||_TV`, the distance inside Eq. 2 with the point mass at the sink
 * (the stationary distribution of Lemmas 2.5-2.6): half the L1 distance, worst column.
 * @param {number[][]} M a column-stochastic matrix (e.g. `W^t`)
 * @returns {number}
 */
export function tvToSink(M) {
  const n = M.length;
  let worst = -Infinity;
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.abs(M[i][j] - (i === n - 1 ? 1 : 0));
    worst = Math.max(worst, 0.5 * s);
  }
  return worst;
}

/**
 * Mixing time of Definition 2.7 (Eq. 2): the least `t >= 0` with
 * `max_j ||W^t e_j - 1_tau||_TV <= eps` (distances within `TV_ATOL` of eps count), as
 * `bparallel.markov.mixing_time`: the sink's point mass is stationary, so the distance from
 * `j` is the survival `P(tau_j > t)`, and {@link mixingTimeOfChain} computes it on
 * `Q = W^T` (the sink made absorbing).
 * @param {number[][]} W column-stochastic walk matrix
 * @param {number} eps in (0, 1)
 * @returns {number|null} null when it never mixes (a start that never reaches the sink, a
 *   sink that is not absorbing, or not within `2^CAP_LOG2` steps)
 */
export function mixingTime(W, eps) {
  const n = W.length;
  // the sink must be absorbing (markov.mixing_time refuses the walk otherwise): a sink that
  // sends elsewhere leaves 1_tau non-stationary, shown as "never mixes"
  if (n > 1 && Math.abs(W[n - 1][n - 1] - 1) > 1e-9) return null;
  const Q = new Float64Array(n * n);
  for (let i = 0; i < n - 1; i++) for (let j = 0; j < n; j++) Q[i * n + j] = W[j][i];
  Q[n * n - 1] = 1;
  const t = mixingTimeOfChain(Q, eps);
  return Number.isFinite(t) ? t : null;
}

// ------------------------------------------------------- Definition 2.7 on a chain

/** Definition 2.7 beyond `2^CAP_LOG2` steps is "never mixes" (`bparallel.absorbing.MIX_CAP`). */
export const CAP_LOG2 = 62;
const DIRECT_STEPS = 128; // absorbing._DIRECT_STEPS: phase 1 of Definition 2.7, step by step
const LOOKAHEAD = 16; // absorbing._LOOKAHEAD
/** The float64 machine epsilon, `2^-52`. */
export const FLOAT64_EPS = 2 ** -52;

/** `T` of a flat `T x T` matrix (throws when it is not square). */
export function sizeOf(C) {
  const T = Math.round(Math.sqrt(C.length));
  if (T * T !== C.length || T < 1) throw new Error(`a graph must be T x T, got ${C.length} entries`);
  return T;
}

/** `out = Q v` for flat `Q` `(n, n)` (upper triangular when `upper`). */
export function matVec(Q, v, n, out, upper) {
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = upper ? i : 0; k < n; k++) s += Q[i * n + k] * v[k];
    out[i] = s;
  }
  return out;
}

/** Is flat `Q` `(n, n)` upper triangular (the walk only moves forward)? */
export function isUpper(Q, n) {
  for (let i = 1; i < n; i++) for (let k = 0; k < i; k++) if (Q[i * n + k] > 0) return false;
  return true;
}

/** Non-sink positions the walk never leaves (`absorbing.traps`): off-diagonal mass of the
 * row (its sum minus its diagonal, as numpy computes it) at most `T 2^-52`. */
function hasTrap(Q, T) {
  const tol = T * FLOAT64_EPS;
  for (let j = 0; j < T - 1; j++) {
    let s = 0;
    for (let k = 0; k < T; k++) s += Q[j * T + k];
    if (s - Q[j * T + j] <= tol) return true;
  }
  return false;
}

/** `M M` for flat `(m, m)`; for upper-triangular `M` only `i <= k <= j` (`absorbing._square`). */
function square(M, m, upper) {
  const out = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let k = upper ? i : 0; k < m; k++) {
      const a = M[i * m + k];
      if (a === 0) continue;
      for (let j = upper ? k : 0; j < m; j++) out[i * m + j] += a * M[k * m + j];
    }
  }
  return out;
}

/** The largest entry of `v`. */
export function maxOf(v) {
  let m = -Infinity;
  for (const x of v) if (x > m) m = x;
  return m;
}

/**
 * Definition 2.7 for one walk `Q`: the least integer `t >= 0` with `max_i P(tau_i > t) <= eps`
 * (survivals within `TV_ATOL` of eps count), `Infinity` ("never mixes") where a start never
 * gets there (a trap) or not within `2^CAP_LOG2` steps. The twin of
 * `bparallel.absorbing.mixing_times`, the package's one implementation, step for step:
 * survival vectors `v_t = Q v_{t-1}` for at most 128 steps (stopping early when the decay
 * predicts no mixing by then), then galloping on `R^(2^k)` (`R`: the chain without the sink)
 * and binary lifting; finite values above `2^53` are rounded. Parity-tested against Python
 * (`tests/book/test_js_parity.py`, `tests/book/test_explorer.py`).
 * @param {Float64Array} Q row-stochastic, sink last and absorbing
 * @param {number} eps
 * @returns {number}
 */
export function mixingTimeOfChain(Q, eps) {
  const T = sizeOf(Q);
  if (T === 1) return 0;
  if (hasTrap(Q, T)) return Infinity;
  const upper = isUpper(Q, T);
  // phase 1: step by step
  let v = new Float64Array(T).fill(1);
  v[T - 1] = 0;
  let spare = new Float64Array(T);
  let mBefore = 1;
  let t = 0;
  while (t < DIRECT_STEPS) {
    t += 1;
    matVec(Q, v, T, spare, upper);
    [v, spare] = [spare, v];
    const m = maxOf(v);
    if (m <= eps + TV_ATOL) return t;
    if (t % LOOKAHEAD === 0) {
      const rate = Math.log(m / mBefore);
      const toGo = Math.log(eps / m);
      const soon = rate < 0 && LOOKAHEAD * toGo >= (DIRECT_STEPS - t) * rate;
      if (!soon) break;
      mBefore = m;
    }
  }
  // phase 2: galloping on R^(2^k), then binary lifting (absorbing._lift_to_mixing)
  const n = T - 1;
  const R = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) R[i * n + k] = Q[i * T + k];
  let vr = v.slice(0, n);
  let s = t;
  const levels = [];
  let M = R;
  let top = -1;
  const w = new Float64Array(n);
  for (let k = 0; k < CAP_LOG2; k++) {
    matVec(M, vr, n, w, upper);
    if (!(maxOf(w) > eps + TV_ATOL)) {
      top = k;
      break;
    }
    levels.push(M);
    vr = w.slice();
    s += 2 ** k;
    if (k + 1 < CAP_LOG2) M = square(M, n, upper);
  }
  if (top < 0) return Infinity;
  for (let j = top - 1; j >= 0; j--) {
    matVec(levels[j], vr, n, w, upper);
    if (maxOf(w) > eps + TV_ATOL) {
      vr = w.slice();
      s += 2 ** j;
    }
  }
  return s + 1;
}


/**
 * Which nodes can reach `sink` along positive entries of a row-stochastic `P`.
 * @param {number[][]} P `P[a][b] > 0` is a step `a -> b`
 * @param {number} sink
 * @returns {boolean[]}
 */
export function reachesSink(P, sink) {
  const n = P.length;
  const ok = new Array(n).fill(false);
  ok[sink] = true;
  const stack = [sink];
  while (stack.length) {
    const b = stack.pop();
    for (let a = 0; a < n; a++) {
      if (!ok[a] && P[a][b] > 0) {
        ok[a] = true;
        stack.push(a);
      }
    }
  }
  return ok;
}

/**
 * Solve `M x = rhs` by Gaussian elimination with partial pivoting.
 * @param {number[][]} M square, non-singular (copied, not modified)
 * @param {number[]} rhs
 * @returns {number[]}
 */
export function solve(M, rhs) {
  const m = M.length;
  const a = M.map((row, i) => [...row, rhs[i]]);
  for (let c = 0; c < m; c++) {
    let p = c;
    for (let r = c + 1; r < m; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    [a[c], a[p]] = [a[p], a[c]];
    for (let r = c + 1; r < m; r++) {
      const f = a[r][c] / a[c][c];
      if (f !== 0) for (let k = c; k <= m; k++) a[r][k] -= f * a[c][k];
    }
  }
  const x = new Array(m).fill(0);
  for (let r = m - 1; r >= 0; r--) {
    let s = a[r][m];
    for (let k = r + 1; k < m; k++) s -= a[r][k] * x[k];
    x[r] = s / a[r][r];
  }
  return x;
}

/**
 * Exact expected hitting times `E[tau_j]` of the sink from every start j (absorbing chain:
 * with Q the transient block, `(I - Q) h = 1`, `h[sink] = 0`), as
 * `bparallel.markov.expected_hitting_times`.
 * @param {number[][]} P row-stochastic transition matrix (`P = W^T` for a walk matrix)
 * @param {number} sink
 * @returns {number[]|null} null when some node cannot reach the sink (infinite time)
 */
export function expectedHittingTimes(P, sink) {
  if (!reachesSink(P, sink).every(Boolean)) return null;
  const keep = P.map((_, k) => k).filter((k) => k !== sink);
  const IminusQ = keep.map((a, r) => keep.map((b, c) => (r === c ? 1 : 0) - P[a][b]));
  const h = new Array(P.length).fill(0);
  if (keep.length) solve(IminusQ, keep.map(() => 1)).forEach((v, r) => (h[keep[r]] = v));
  return h;
}

/**
 * Worst-start expected hitting time of the sink `n-1` for a walk matrix (null: infinite).
 * @param {number[][]} W column-stochastic
 * @returns {number|null}
 */
export function worstHittingTime(W) {
  const h = expectedHittingTimes(transpose(W), W.length - 1);
  return h === null ? null : Math.max(...h);
}

// ---------------------------------------------------------------------- random graphs

/**
 * mulberry32: a small, fast, seeded PRNG with uniform floats in [0, 1).
 * (Not numpy's generator: the same seed draws different graphs in Python.)
 * @param {number} seed any integer (taken mod 2^32)
 * @returns {() => number}
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Random feedforward heads with the unique sink `n-1`, as
 * `bparallel.graphs.random_feedforward_adjacency`: each forward edge `j -> i` (`j < i`) is
 * present with probability `density`; a node left without one gets an edge to a uniformly
 * chosen later node, so `n-1` is the only sink (Definition 2.2).
 * @param {number} count number of heads
 * @param {number} n number of nodes
 * @param {number} density in [0, 1]
 * @param {number} seed
 * @returns {Array<Array<[number, number]>>} one sorted edge list per head
 */
export function randomFeedforwardHeads(count, n, density, seed) {
  const rand = mulberry32(seed);
  const heads = [];
  for (let b = 0; b < count; b++) {
    const edges = [];
    const hasForward = new Array(n).fill(false);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const r = rand();
        if (j < i && r < density) {
          edges.push([j, i]);
          hasForward[j] = true;
        }
      }
    }
    for (let j = 0; j < n - 1; j++) {
      if (!hasForward[j]) edges.push([j, j + 1 + Math.floor(rand() * (n - 1 - j))]);
    }
    heads.push(sortEdges(edges));
  }
  return heads;
}

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

/**
 * Python's `format(x, ".{p}g")`: p significant digits, round half to even on the exact
 * binary value, trailing zeros removed, exponent form below 1e-4 or from 10^p.
 * @param {number} x finite
 * @param {number} [p]
 * @returns {string}
 */
export function pyFormatG(x, p = 6) {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const ax = Math.abs(x);
  let [mant, expText] = ax.toExponential(p - 1).split("e"); // JS rounds exact ties up
  const exact = ax.toExponential(Math.min(100, p + 60)).split("e");
  const tail = exact[0].replace(".", "").slice(p);
  const lastKept = Number(exact[0].replace(".", "")[p - 1]);
  if (exact[1] === expText && /^50*$/.test(tail) && lastKept % 2 === 0) {
    mant = exact[0].replace(".", "").slice(0, p).replace(/^(\d)/, "$1."); // tie: keep the even digit
  }
  const exp = Number(expText);
  const digits = mant.replace(".", "").replace(/0+$/, "") || "0";
  if (exp < -4 || exp >= p) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return frac ? `${sign}${whole}.${frac}` : `${sign}${whole}`;
}

/**
 * Python's `format(x, ".{digits}f")`: like `toFixed`, but an exact tie (such as 0.03125 to
 * four digits) rounds to the even digit, as Python does, instead of away from zero.
 * @param {number} x finite, |x| < 1e21
 * @param {number} digits 0..50
 * @returns {string}
 */
export function pyFormatFixed(x, digits) {
  const exact = x.toFixed(Math.min(100, digits + 40)); // exact for the binary fractions here
  const [whole, frac] = exact.split(".");
  const rest = frac.slice(digits);
  const last = digits > 0 ? frac[digits - 1] : whole[whole.length - 1];
  if (/^50*$/.test(rest) && Number(last) % 2 === 0) {
    const kept = digits > 0 ? `${whole}.${frac.slice(0, digits)}` : whole;
    return kept;
  }
  return x.toFixed(digits);
}

/**
 * The Python code that rebuilds this configuration with `bparallel`: the same text as
 * `bparallel.book.playground.to_python`.
 * @param {PlaygroundState} state
 * @returns {string}
 */
export function toPython(state) {
  const heads = state.heads
    .map((edges) => `[${sortEdges(edges).map(([j, i]) => `(${j}, ${i})`).join(", ")}]`)
    .join(",\n    ");
  const beta = normalizedBeta(state.raw_beta).map((b) => pyFormatG(b, 6)).join(", ");
  return (
    "import numpy as np\n" +
    "from bparallel.graphs import diffusion_matrix\n" +
    "from bparallel.fidelity import fidelity_report\n" +
    `n, horizon = ${state.n}, ${state.horizon}\n` +
    `heads = [\n    ${heads},\n]\n` +
    `beta = np.array([${beta}])\n` +
    "deltas = np.stack([diffusion_matrix(e, n) for e in heads])\n" +
    "report = fidelity_report(deltas, beta, horizon)\n"
  );
}
