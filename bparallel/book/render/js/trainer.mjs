/**
 * @file trainer.mjs: the training page's interface (no kernel, no network).
 *
 * The reader picks an arm, one or two head counts, a seed and a learning rate; Train trains
 * one model per head count with {@link makeRun} (TensorFlow.js, the page's global `tf`) in
 * short slices between frames, alternating the two, so the page stays responsive. Live: the
 * held-out accuracy and loss of both on one chart each, the learning step by the book's rule,
 * and the graph measures of the last layer's attention on a held-out sequence (Algorithm 1's
 * mean mixing time and the minimax fidelity of Definition 3.5 with the learned head weights,
 * as the explorer computes them: `transformer.mjs`'s `layerMeasures`), and every head's
 * attention pattern; each head of the last layer alone (its learned weight, its walk's mean
 * mixing time and its minimax fidelity, at step 0 and now). Pause, resume, reset; "Export as
 * Python" prints the package's commands for the same configuration; "Open in the explorer"
 * hands the models as they are to the explorer's views (`explorer.mjs`'s `mountExplorer`,
 * chapter 14) below, as data objects in the page (`tinytrain.mjs`'s `explorerData`): no file,
 * no request, so it works from `file://`.
 */

import { DEFAULTS, ARMS, TINY, checkConfig, makeRun } from "./tinytrain.mjs";
import { layerMeasures } from "./transformer.mjs";
import { mountExplorer } from "./explorer.mjs";

const COLOURS = ["#1f6fb2", "#d9822b"];
const SVG = "http://www.w3.org/2000/svg";
const SLICE_MS = 40; // training time per slice before yielding a frame to the page
const RENDER_MS = 500; // the charts and table are redrawn at most this often between evaluations

/**
 * Start TensorFlow.js on the WASM backend from the inlined binary (`wasmUri`, a base64 data
 * URI: a page opened from `file://` may not fetch a `.wasm` file), else on the CPU backend.
 * @returns {Promise<{backend: string, note: string}>}
 */
export function startBackend(tf, wasmUri) {
  return startBackendAsync(tf, wasmUri);
}

async function startBackendAsync(tf, wasmUri) {
  let reason = "the WASM backend is not in the page";
  if (tf.wasm && wasmUri) {
    try {
      const map = {};
      for (const name of ["tfjs-backend-wasm.wasm", "tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm-threaded-simd.wasm"]) map[name] = wasmUri;
      tf.wasm.setWasmPaths(map);
      if (await tf.setBackend("wasm")) {
        await tf.ready();
        return { backend: "wasm", note: "TensorFlow.js on its WASM backend (SIMD)" };
      }
      reason = "the WASM backend did not start";
    } catch (err) {
      reason = `the WASM backend did not start (${err.message})`;
    }
  }
  await tf.setBackend("cpu");
  await tf.ready();
  return { backend: "cpu", note: `TensorFlow.js on its CPU backend, about ten times slower: ${reason}` };
}

/**
 * The page's settings as Python: the package trains the same configuration (same task
 * definition, its own data) with the `induction-tiny` profile.
 */
export function toPython(settings) {
  const heads = settings.heads.join(" ");
  return [
    "# The same configuration in the package (profile induction-tiny: 2 layers, width 32,",
    "# 32 tokens; the package draws its own induction batches with numpy).",
    "from bparallel.transformer.design import get_profile, model_config",
    "from bparallel.transformer.model import Transformer",
    "",
    "profile = get_profile(\"induction-tiny\")",
    ...settings.heads.map((h) => {
      const size = settings.headSizes[h] * h === TINY.dModel ? "None" : String(settings.headSizes[h]);
      return `model_h${h} = Transformer(model_config(profile, ${h}, head_size=${size}))  # ${h} heads of ${settings.headSizes[h]}`;
    }),
    "",
    "# Train it with the sweep (the learning step by the book's rule in its manifest):",
    `# python -m bparallel sweep --profile induction-tiny --tasks induction --arms ${settings.arm} --heads ${heads} --seeds ${settings.seed}`,
  ].join("\n");
}

function el(tag, attrs = {}, text = "") {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

function svgEl(tag, attrs = {}) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** A line chart of `series` ({label, colour, xs, ys, mark}) into `svg`. */
function drawChart(svg, series, { yMin, yMax, xMax, title, threshold = null, fmt }) {
  const W = 360, H = 180, L = 44, R = 8, T = 18, B = 26;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const x = (s) => L + (W - L - R) * (s / xMax);
  const y = (v) => T + (H - T - B) * (1 - (Math.min(Math.max(v, yMin), yMax) - yMin) / (yMax - yMin));
  svg.append(svgEl("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "none", stroke: "currentColor", "stroke-opacity": 0.3 }));
  const label = (tx, ty, text, anchor = "middle") => {
    const t = svgEl("text", { x: tx, y: ty, "text-anchor": anchor, "font-size": 10, fill: "currentColor" });
    t.textContent = text;
    svg.append(t);
  };
  label(W / 2, 12, title);
  label(L - 4, y(yMax) + 4, fmt(yMax), "end");
  label(L - 4, y(yMin), fmt(yMin), "end");
  label(L, H - 8, "0", "start");
  label(W - R, H - 8, `${xMax} steps`, "end");
  if (threshold !== null) {
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(threshold), y2: y(threshold), stroke: "currentColor", "stroke-dasharray": "4 3", "stroke-opacity": 0.6 }));
    label(L + 4, y(threshold) - 3, `threshold ${fmt(threshold)}`, "start");
  }
  for (const s of series) {
    if (!s.xs.length) continue;
    const d = s.xs.map((sx, i) => `${i ? "L" : "M"}${x(sx).toFixed(1)},${y(s.ys[i]).toFixed(1)}`).join("");
    svg.append(svgEl("path", { d, fill: "none", stroke: s.colour, "stroke-width": 2, "data-series": s.label }));
    if (s.mark !== null && s.mark !== undefined) {
      svg.append(svgEl("line", { x1: x(s.mark), x2: x(s.mark), y1: T, y2: H - B, stroke: s.colour, "stroke-dasharray": "2 2" }));
    }
  }
}

/** One layer's heads as small heatmaps (query rows, key columns), on canvases, each with a
 * toggle that removes the head (`onToggle(removedHeads)`). */
function drawPatterns(box, patterns, layer, T, onToggle) {
  box.replaceChildren();
  const toggles = [];
  patterns[layer].forEach((a, h) => {
    const fig = el("figure", { class: "bp-tr-head" });
    const c = el("canvas", { width: T, height: T, "aria-label": `head ${h + 1} of layer ${layer + 1}` });
    const ctx = c.getContext("2d");
    const img = ctx.createImageData(T, T);
    for (let i = 0; i < T * T; i++) {
      const v = Math.round(255 * (1 - Math.sqrt(a[i])));
      img.data[4 * i] = v; img.data[4 * i + 1] = v; img.data[4 * i + 2] = 255; img.data[4 * i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    const cap = el("figcaption");
    const on = el("input", { type: "checkbox", "data-bp-head": String(h), "aria-label": `keep head ${h + 1}` });
    on.checked = true;
    toggles.push(on);
    on.addEventListener("change", () => onToggle(toggles.flatMap((t, i) => (t.checked ? [] : [i]))));
    const lab = el("label", {}, `head ${h + 1} `);
    lab.prepend(on);
    cap.append(lab);
    fig.append(c, cap);
    box.append(fig);
  });
}

/** Head weights of Algorithm 1: the Frobenius norm of each head's output-projection rows. */
function headWeightsOf(run, layer) {
  const { heads: H, headSize: D, dModel: C } = run.cfg;
  const W = run.vars[`blocks.${layer}.attn.out.weight`].dataSync(); // (A, C)
  const norms = Array.from({ length: H }, (_, h) => {
    let s = 0;
    for (let r = h * D; r < (h + 1) * D; r++) for (let o = 0; o < C; o++) s += W[r * C + o] ** 2;
    return Math.sqrt(s);
  });
  const total = norms.reduce((a, b) => a + b, 0);
  return norms.map((n) => n / total);
}

/**
 * Mount the training page into `root`.
 * @param {HTMLElement} root
 * @param {{tf: object, wasmUri?: string, defaults?: object}} options
 */
export function mountTrainer(root, options) {
  const tf = options.tf;
  const d = { arm: "width", headsA: 1, headsB: 4, seed: 1, lr: DEFAULTS.lr, steps: DEFAULTS.steps, ...(options.defaults || {}) };
  root.replaceChildren();
  const row1 = el("div", { class: "bp-row" });
  const arm = el("select", { "aria-label": "arm", "data-bp": "arm" });
  for (const [k, text] of Object.entries(ARMS)) { const o = el("option", { value: k }, text); arm.append(o); }
  arm.value = d.arm;
  const inp = (name, value, size = 5) => el("input", { type: "text", value: String(value), size: String(size), "data-bp": name, "aria-label": name });
  const headsA = inp("heads A", d.headsA, 3), headsB = inp("heads B", d.headsB, 3);
  const seed = inp("seed", d.seed, 5), lr = inp("learning rate", d.lr, 7);
  const lab = (text, control) => { const l = el("label", {}, text); l.append(control); return l; };
  row1.append(lab("Arm ", arm), lab("Heads ", headsA), lab("and ", headsB), lab("Seed ", seed), lab("Learning rate ", lr));
  const row2 = el("div", { class: "bp-row" });
  const train = el("button", { type: "button", "data-bp": "train" }, "Train");
  const pause = el("button", { type: "button", "data-bp": "pause", disabled: "" }, "Pause");
  const reset = el("button", { type: "button", "data-bp": "reset" }, "Reset");
  const exportPy = el("button", { type: "button", "data-bp": "export" }, "Export as Python");
  const explore = el("button", { type: "button", "data-bp": "explore", disabled: "" }, "Open in the explorer");
  row2.append(train, pause, reset, exportPy, explore);
  const message = el("p", { class: "bp-tr-message", role: "alert", "data-bp": "message" });
  const backendLine = el("p", { class: "bp-tr-backend", "data-bp": "backend" }, "Starting TensorFlow.js ...");
  const charts = el("div", { class: "bp-tr-charts" });
  const accSvg = svgEl("svg", { role: "img", "aria-label": "held-out accuracy", "data-bp": "accuracy" });
  const lossSvg = svgEl("svg", { role: "img", "aria-label": "held-out loss", "data-bp": "loss" });
  charts.append(accSvg, lossSvg);
  const table = el("table", { class: "bp-tr-table", "data-bp": "table" });
  const patternsBox = el("div", { class: "bp-tr-patterns", "data-bp": "patterns" });
  const patternTitle = el("p", { class: "bp-tr-note" });
  const ablation = el("p", { class: "bp-tr-note", "data-bp": "ablation", "aria-live": "polite" });
  const python = el("pre", { class: "bp-tr-python", "data-bp": "python", hidden: "" });
  const headTable = el("table", { class: "bp-tr-table", "data-bp": "head-measures" });
  const explorerNote = el("p", { class: "bp-tr-note", "data-bp": "explorer-note" });
  const explorerBox = el("div", { class: "bp-tr-explorer", "data-bp": "explorer" });
  root.append(row1, row2, message, backendLine, charts, table, headTable, patternTitle, patternsBox, ablation, python,
    explorerNote, explorerBox);

  const state = { runs: [], playing: false, backend: null, settings: null, measures: [], headHistory: [], timer: null, rendered: 0 };
  root.bpTrainer = state; // for tests and the curious: the runs, their curves and measures

  function readSettings() {
    const heads = [headsA.value, headsB.value].map((t) => t.trim()).filter((t) => t !== "");
    if (!heads.length) throw new Error("heads: give at least one head count");
    const configs = heads.map((h) => {
      if (!/^\d+$/.test(h)) throw new Error(`heads: ${JSON.stringify(h)} is not a whole number`);
      return checkConfig({ arm: arm.value, heads: Number(h), seed: seed.value, lr: lr.value });
    });
    if (configs.length === 2 && configs[0].heads === configs[1].heads) throw new Error("heads: the two head counts are the same");
    const headSizes = Object.fromEntries(configs.map((c) => [c.heads, c.headSize]));
    return { arm: arm.value, heads: configs.map((c) => c.heads), headSizes, seed: configs[0].seed, lr: configs[0].lr, configs };
  }

  function disposeRuns() {
    for (const r of state.runs) r.dispose();
    state.runs = [];
    state.measures = [];
    state.headHistory = [];
    explore.setAttribute("disabled", "");
  }

  function measure(run, i) {
    const layer = run.cfg.nLayers - 1;
    const patterns = run.patterns(0);
    const weights = headWeightsOf(run, layer);
    const m = layerMeasures(patterns, layer, { weights, heads: true });
    // each head alone (weight 1): its own walk's mean mixing time (Algorithm 1) and fidelity
    const perHead = patterns[layer].map((a, h) => {
      const alone = layerMeasures([[a]], 0, { heads: false });
      return { weight: weights[h], mixing: alone["mixing_time.definition"], fidelity: m["head_fidelity.definition"][h] };
    });
    state.measures[i] = { step: run.step, mixing: m["mixing_time.definition"], fidelity: m["fidelity.definition"], heads: perHead };
    const history = (state.headHistory[i] = state.headHistory[i] || []);
    history.push({ step: run.step, heads: perHead });
    if (i === state.runs.length - 1 || state.runs.length === 1) {
      patternTitle.textContent = `Attention of the ${run.config.heads}-head model's last layer (layer ${layer + 1}) on a held-out sequence at step ${run.step}: rows are queries, columns keys; darker is more weight. Untick a head to remove it (its output set to zero).`;
      ablation.textContent = "";
      drawPatterns(patternsBox, patterns, layer, run.cfg.seqLen, (gone) => {
        if (!gone.length) { ablation.textContent = ""; return; }
        const removed = Array.from({ length: run.cfg.nLayers }, (_, l) => (l === layer ? gone : []));
        const acc = run.accuracyWithout(removed);
        const all = run.curve.accuracy.at(-1);
        ablation.textContent = `Held-out accuracy at step ${run.step} without head${gone.length > 1 ? "s" : ""} ${gone.map((h) => h + 1).join(", ")} of layer ${layer + 1}: ${(100 * acc).toFixed(1)}% (all heads: ${(100 * all).toFixed(1)}%).`;
      });
    }
  }

  function render() {
    const xMax = Math.max(100, ...state.runs.map((r) => r.step));
    const series = (key) => state.runs.map((r, i) => ({ label: `${r.config.heads} heads`, colour: COLOURS[i], xs: r.curve.steps, ys: r.curve[key], mark: r.learnedAt }));
    drawChart(accSvg, series("accuracy"), { yMin: 0, yMax: 1, xMax, title: "held-out accuracy (predictable positions)", threshold: DEFAULTS.threshold, fmt: (v) => `${Math.round(100 * v)}%` });
    const maxLoss = Math.max(1, ...state.runs.flatMap((r) => r.curve.loss));
    drawChart(lossSvg, series("loss"), { yMin: 0, yMax: Math.ceil(maxLoss), xMax, title: "held-out loss (cross-entropy)", fmt: (v) => v.toFixed(0) });
    table.replaceChildren();
    const head = el("tr");
    for (const t of ["model", "step", "accuracy", "loss", "learned at step", "ms a step", "mixing time (Alg. 1)", "minimax fidelity"]) head.append(el("th", {}, t));
    table.append(head);
    state.runs.forEach((r, i) => {
      const tr = el("tr", { "data-heads": String(r.config.heads) });
      const m = state.measures[i];
      const acc = r.curve.accuracy.at(-1), l = r.curve.loss.at(-1);
      const cells = [
        `${r.config.heads} × ${r.config.headSize}`, String(r.step), `${(100 * acc).toFixed(1)}%`, l.toFixed(3),
        r.learnedAt === null ? (r.step >= r.options.steps ? `not within ${r.options.steps}` : "not yet") : String(r.learnedAt),
        r.step ? (r.ms / r.step).toFixed(0) : "",
        m ? (Number.isFinite(m.mixing) ? m.mixing.toFixed(2) : "never mixes") : "",
        m ? `${m.fidelity.toFixed(1)}%` : "",
      ];
      cells.forEach((c, j) => { const td = el("td", {}, c); if (j === 0) td.style.color = COLOURS[i]; tr.append(td); });
      table.append(tr);
    });
    drawHeadTable();
  }

  /** Every head of each model's last layer at the latest evaluation, with the evaluation at
   * which it was first measured for comparison: its learned weight and its own graph measures. */
  function drawHeadTable() {
    headTable.replaceChildren();
    if (!state.runs.length) return;
    const cap = el("caption", {}, "Each head of the last layer alone, on the held-out sequence: its learned weight wₕ, its walk's mean mixing time (Algorithm 1, as defined) and its minimax fidelity (Definition 3.5), at step 0 and now.");
    const head = el("tr");
    for (const t of ["model", "head", "wₕ now", "mixing time, step 0 → now", "fidelity, step 0 → now"]) head.append(el("th", {}, t));
    headTable.append(cap, head);
    const mix = (x) => (Number.isFinite(x) ? x.toFixed(2) : "never");
    state.runs.forEach((r, i) => {
      const hist = state.headHistory[i];
      if (!hist || !hist.length) return;
      const first = hist[0], last = hist.at(-1);
      last.heads.forEach((hm, h) => {
        const tr = el("tr", { "data-heads": String(r.config.heads), "data-head": String(h) });
        const f0 = first.heads[h];
        const cells = [h ? "" : `${r.config.heads} × ${r.config.headSize}`, String(h + 1), hm.weight.toFixed(3),
          `${mix(f0.mixing)} → ${mix(hm.mixing)}`, `${f0.fidelity.toFixed(1)}% → ${hm.fidelity.toFixed(1)}%`];
        cells.forEach((c, j) => { const td = el("td", {}, c); if (j === 0) td.style.color = COLOURS[i]; tr.append(td); });
        headTable.append(tr);
      });
    });
  }

  /** Hand every model, as it is now, to the explorer's views below (no file, no request). */
  function openExplorer() {
    if (!state.runs.length) return;
    const data = {}, models = [];
    for (const r of state.runs) {
      const d = r.explorerData();
      data[d.name] = d;
      models.push({ name: d.name, heads: r.config.heads, task: "induction", data: "page", layers: r.cfg.nLayers,
        label: `${r.config.heads} head${r.config.heads > 1 ? "s" : ""} of ${r.config.headSize} (step ${r.step})` });
    }
    explorerNote.textContent = `The explorer's views (chapter 14) of the model${models.length > 1 ? "s" : ""} as trained up to now: ` +
      "the held-out sequences, every layer's heads with their switches (mean or zero ablation) and the combined graph's measures. " +
      "Weights rounded to half precision, as every model of the explorer; press the button again for a later step.";
    mountExplorer(explorerBox, { models, data, hash: false, python: false });
    root.dataset.bpExplorer = models.map((m) => m.name).join(" ");
  }

  function slice() {
    state.timer = null;
    if (!state.playing) return;
    const t0 = performance.now();
    let active = state.runs.filter((r) => !r.done());
    let evaluated = false;
    while (active.length && performance.now() - t0 < SLICE_MS) {
      for (const r of active) {
        r.update();
        if (r.step % r.options.evalEvery === 0) { measure(r, state.runs.indexOf(r)); evaluated = true; }
      }
      active = active.filter((r) => !r.done());
    }
    // redraw at an evaluation (new points), else at most every RENDER_MS (the step counts)
    if (evaluated || !active.length || t0 - state.rendered >= RENDER_MS) { render(); state.rendered = t0; }
    if (!active.length) {
      state.playing = false;
      pause.setAttribute("disabled", "");
      train.removeAttribute("disabled");
      train.textContent = "Train";
      root.dataset.bpState = "done";
      return;
    }
    state.timer = setTimeout(slice, 0);
  }

  train.addEventListener("click", () => {
    if (!state.backend) return;
    if (state.runs.length && state.runs.some((r) => !r.done()) && !state.playing) { // resume
      state.playing = true;
      root.dataset.bpState = "training";
      train.setAttribute("disabled", "");
      pause.removeAttribute("disabled");
      slice();
      return;
    }
    let settings;
    try {
      settings = readSettings();
    } catch (err) {
      message.textContent = `Not trained: ${err.message}.`;
      root.dataset.bpState = "refused";
      return;
    }
    message.textContent = "";
    disposeRuns();
    state.settings = settings;
    state.runs = settings.configs.map((c) => makeRun(tf, c, { steps: d.steps }));
    state.runs.forEach((r, i) => measure(r, i));
    explore.removeAttribute("disabled");
    state.playing = true;
    root.dataset.bpState = "training";
    train.setAttribute("disabled", "");
    pause.removeAttribute("disabled");
    render();
    slice();
  });
  pause.addEventListener("click", () => {
    state.playing = false;
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    pause.setAttribute("disabled", "");
    train.removeAttribute("disabled");
    train.textContent = "Resume";
    root.dataset.bpState = "paused";
  });
  reset.addEventListener("click", () => {
    state.playing = false;
    if (state.timer !== null) clearTimeout(state.timer);
    disposeRuns();
    train.textContent = "Train";
    train.removeAttribute("disabled");
    pause.setAttribute("disabled", "");
    message.textContent = "";
    patternsBox.replaceChildren();
    patternTitle.textContent = "";
    explorerBox.replaceChildren();
    explorerNote.textContent = "";
    delete root.dataset.bpExplorer;
    render();
    root.dataset.bpState = "ready";
  });
  explore.addEventListener("click", openExplorer);
  exportPy.addEventListener("click", () => {
    try {
      python.textContent = toPython(readSettings());
      python.removeAttribute("hidden");
    } catch (err) {
      message.textContent = `No export: ${err.message}.`;
    }
  });
  render();
  startBackend(tf, options.wasmUri).then((b) => {
    state.backend = b.backend;
    backendLine.textContent = `${b.note}. Model: ${TINY.nLayers} layers, width ${TINY.dModel}, ${TINY.seqLen} tokens over ${TINY.vocab} symbols; batches of ${DEFAULTS.batch} fresh sequences; held-out evaluation of ${DEFAULTS.heldout} sequences every ${DEFAULTS.evalEvery} steps; at most ${d.steps} steps.`;
    root.dataset.bpBackend = b.backend;
    root.dataset.bpState = "ready";
  });
  return state;
}
