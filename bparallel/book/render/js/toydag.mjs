/**
 * @file toydag.mjs: the toy-DAG mathematics of `bparallel`, in dependency-free JavaScript:
 * small matrices, the graphs of the heads, fidelity (Section 3), mixing and Definition 2.7
 * (Section 2), hitting times.
 *
 * This module is the browser twin of the Python package (`bparallel.graphs`,
 * `bparallel.markov`, `bparallel.absorbing`, `bparallel.fidelity`), written so that both give
 * the same numbers: `tests/book/render/test_js_parity.py` runs it under Node on hundreds of graphs
 * and compares every quantity with Python to 1e-12. It imports nothing and runs as is in
 * Node and in a browser; the playground (`state.mjs`, `playground.mjs`) and the model
 * explorer (`transformer.mjs`) import it, and `bparallel/book/render/js_playground.py`
 * inlines the modules into the book.
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
 * (`tests/book/render/test_js_parity.py`, `tests/book/section4/test_explorer.py`).
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
