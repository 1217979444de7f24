/**
 * @file explorer.mjs: the model explorer as a web page component, no kernel needed.
 *
 * `mountExplorer(root, {models, dataUrl})` fills `root` with controls (task and training data,
 * model: a head count, or for chapter 12's fresh-data models a head count, head size and arm;
 * sequence: held-out, fresh or typed; layer; how the heads are weighted; zero or mean
 * ablation; log colour scale) and outputs that follow every change: the sequence with
 * target and prediction per position (right or wrong), accuracy and margin, the combined
 * graph of the chosen layer and every head's pattern as heatmaps on `<canvas>` (hover: the
 * weight; click: that query's attention row), a switch per head that removes it (the model
 * reruns, in every layer), and the combined graph's measures, now and intact. A model's
 * data file (`bparallel.book.section4.explorer.export_models`) is loaded by a script element
 * when the model is chosen, so the page works from `file://`.
 *
 * The view lives in the address fragment (`#ex=...`, {@link encodeView}), parsed field by
 * field against fixed patterns, never evaluated, and applied again when the address changes
 * (an edited link in an open tab needs no reload); "Export as Python" writes the code that
 * reproduces the view with the package ({@link toPython}). All mathematics is in
 * `transformer.mjs`; this file draws. Text from a link is written with `textContent` only.
 */

import { pyFormatFixed } from "./python.mjs";
import {
  forward,
  freshSequence,
  headWeights,
  layerMeasures,
  loadModel,
  sequenceScores,
  taskTargets,
} from "./transformer.mjs";

const HASH_KEY = "#ex=";
const NAME = /^[a-z]+(-fresh|-circuit)?-h\d\d(-hs\d{2,3})?(-t\d{5})?$/;
const WEIGHTINGS = ["learned", "uniform", "custom"];
const FILLS = ["zero", "mean"];
const MAX_TYPED = 100;
const LOG_FLOOR = 1e-6; // the log colour scale spans 1e-6 .. 1

/**
 * The task menu's entry of a model: its task, for a fresh-data model `<task>-fresh`, and for a
 * step of a run through training (chapter 13) `<task>-circuit`.
 */
export function groupOf(m) {
  if (typeof m.series === "string") return `${m.task}-circuit`;
  return m.data === "fresh" ? `${m.task}-fresh` : m.task;
}

/** The steps of the run through training that `entry` is one of, in order (none: `[entry]`). */
export function seriesOf(entry, models) {
  if (typeof entry.series !== "string") return [entry];
  return models.filter((m) => m.series === entry.series).sort((a, b) => a.step - b.step);
}

/** How the task menu names a group of `models`. */
function groupLabel(group, models) {
  const [task, kind] = group.split("-");
  if (kind === "circuit") return `${task}, through training (chapter 13)`;
  if (kind) return `${task}, fresh data (chapter 12)`;
  return models.some((m) => m.data === "fresh" && m.task === task) ? `${task}, finite set` : task;
}

/** How the model menu names a model: its head count, and for a fresh-data model the head size and arms. */
export function modelLabel(m) {
  if (typeof m.label === "string") return m.label; // a model handed over by the training page
  const heads = `${m.heads} head${m.heads > 1 ? "s" : ""}`;
  if (typeof m.series === "string") return `${heads} of ${m.head_size}, seed ${m.seed}, ${m.profile}`;
  return m.data === "fresh" ? `${heads} of ${m.head_size} (${(m.arms || []).join(", ")})` : heads;
}

/** A fresh-data model's outcome in words (chapter 12's rule), or "" for a finite-data model. */
export function outcomeText(m) {
  const o = m.outcome;
  if (!o) return "";
  const steps = (n) => n.toLocaleString("en-US");
  const learned = o.learned_at === null
    ? `never held ${Math.round(100 * o.threshold)}% for ${o.in_a_row} evaluations in a row`
    : `learned at step ${steps(o.learned_at)}`;
  const end = o.outcome === "converged" ? `converged at step ${steps(o.converged_at)}`
    : `censored at the budget of ${steps(o.budget)} steps`;
  return `${learned}; ${end}`;
}

/**
 * The status line of a loaded model: what it is and what its manifest records (held-out
 * accuracy on the predictable positions, the weights' SHA-256, a fresh-data run's outcome).
 * A value the data file lacks reads "not recorded", never a number.
 */
export function statusText(data) {
  const m = data.manifest;
  const acc = typeof m.heldout_accuracy_predictable === "number"
    ? pct(m.heldout_accuracy_predictable) : "not recorded";
  const hash = typeof m.sha256 === "string" ? `SHA-256 ${m.sha256.slice(0, 12)}\u2026` : "SHA-256 not recorded";
  if (typeof m.series === "string") return stepStatusText(data, hash);
  const outcome = m.outcome ? `; ${outcomeText(m)}` : "";
  const page = data.data === "page"; // trained in the training page (chapter 15), not shipped
  const how = page ? `trained in this page for ${m.steps} steps` : data.data === "fresh" ? "trained on fresh data" : "trained on a finite set";
  return `${data.name}: task ${data.task}, ${how}, ` +
    `${data.heads} head${data.heads > 1 ? "s" : ""} of ${data.config.head_dim}, seed ${data.seed}; ` +
    `held-out accuracy ${acc} on the predictable positions (${page ? "the page's last evaluation" : "the manifest's"})${outcome}. ` +
    (page ? "Weights rounded to half precision, as every model of the explorer."
      : `Weights in half precision (${hash} of the shipped file).`);
}

/** The status line of a step of a run through training: the step, the run's outcome, the probe set's accuracy now. */
function stepStatusText(data, hash) {
  const m = data.manifest;
  const s = data.head_scores;
  const acc = s && typeof s.accuracy_predictable === "number"
    ? `${pct(s.accuracy_predictable)} on the predictable positions of its ${s.probe_sequences} probe sequences`
    : "not recorded";
  return `${data.name}: task ${data.task}, trained on fresh data (${data.profile}), ` +
    `${data.heads} head${data.heads > 1 ? "s" : ""} of ${data.config.head_dim}, seed ${data.seed}, ` +
    `at step ${m.step.toLocaleString("en-US")} of its training (the run ${outcomeText(m)}); accuracy now ${acc}. ` +
    `Weights of that step, replayed from the seed, in half precision (${hash} of the step's file).`;
}

// ------------------------------------------------------------------ the view and links

/**
 * @typedef {object} View What the explorer shows, all of it in the link.
 * @property {string} model e.g. "cycle-h16"
 * @property {number|string} seq held-out index, "fresh" or "typed"
 * @property {number} seed the fresh sequence's seed
 * @property {number[]|null} tokens the typed tokens
 * @property {number} layer 0-based
 * @property {string} weights "learned" (the paper's w_h), "uniform" or "custom"
 * @property {number[]|null} beta raw custom weights, one per head
 * @property {string} fill "zero" or "mean"
 * @property {boolean[][]} removed `[layer][head]`: true where the head is removed
 * @property {number} pos the chosen position
 * @property {boolean} log log colour scale
 */

/** The default view of a model: first held-out sequence, last layer, nothing removed. */
export function defaultView(entry) {
  const L = entry.layers || 4;
  return {
    model: entry.name, seq: 0, seed: 1, tokens: null, layer: L - 1, weights: "learned", beta: null,
    fill: "mean", removed: emptyRemoved(L, entry.heads), pos: 99, log: false,
  };
}

function emptyRemoved(L, H) {
  return Array.from({ length: L }, () => new Array(H).fill(false));
}

/**
 * The view as the text after `#ex=`: `v=1;m=cycle-h16;s=0;l=3;w=learned;f=mean;x=0000.0001.0000.0000;p=99`,
 * plus `g=` (fresh seed), `t=` (typed tokens, dot-separated), `b=` (custom weights), `log=1`.
 * Removed heads: per layer a bitmask of the heads, 4 hex digits.
 * @param {View} view
 * @returns {string}
 */
export function encodeView(view) {
  const parts = ["v=1", `m=${view.model}`, `s=${view.seq}`];
  if (view.seq === "fresh") parts.push(`g=${view.seed}`);
  if (view.seq === "typed") parts.push(`t=${view.tokens.join(".")}`);
  parts.push(`l=${view.layer}`, `w=${view.weights}`);
  if (view.weights === "custom") parts.push(`b=${view.beta.map(String).join(",")}`);
  parts.push(`f=${view.fill}`);
  const masks = view.removed.map((row) => row.reduce((m, r, h) => m + (r ? 2 ** h : 0), 0));
  if (masks.some((m) => m)) parts.push(`x=${masks.map((m) => m.toString(16).padStart(4, "0")).join(".")}`);
  parts.push(`p=${view.pos}`);
  if (view.log) parts.push("log=1");
  return parts.join(";");
}

/**
 * A view from link text, every field checked against the models offered; throws `Error`
 * saying which field is wrong (the first, as `readView` lists them). Nothing in the text is
 * ever evaluated or written as HTML.
 * @param {string} text
 * @param {Array<{name: string, heads: number}>} models
 * @returns {View}
 */
export function decodeView(text, models) {
  const { view, problems } = readView(text, models);
  if (problems.length) throw new Error(problems[0]);
  return view;
}

/**
 * What a link can tell, field by field: the view with every field that reads right, and
 * the problems of those that do not (each field wrong keeps the default's value for it;
 * a link that names no model offered keeps the default model, with the link's sequence,
 * typed tokens included, where they read right). `problems` is empty for a good link.
 * @param {string} text
 * @param {Array<{name: string, heads: number}>} models
 * @param {string} [fallback] the model shown when the link names none offered
 * @returns {{view: View|null, problems: string[]}} `view` null only when no model is offered
 */
export function readView(text, models, fallback = "cycle-h16") {
  const problems = [];
  const fail = (message) => {
    problems.push(message);
    return undefined;
  };
  if (!models.length) return { view: null, problems: ["no model is offered"] };
  if (typeof text !== "string" || text.length > 2000) {
    const entry = models.find((m) => m.name === fallback) || models[0];
    return { view: defaultView(entry), problems: ["the link is too long"] };
  }
  const fields = {};
  for (const part of text.split(";")) {
    const at = part.indexOf("=");
    const key = at < 0 ? part : part.slice(0, at);
    if (!/^[a-z]{1,3}$/.test(key)) fail("a field name is malformed");
    else fields[key] = at < 0 ? "" : part.slice(at + 1);
  }
  if (fields.v !== "1") fail("unknown link version");
  let entry = NAME.test(fields.m || "") ? models.find((m) => m.name === fields.m) : undefined;
  if (!entry) {
    fail("the link names no model this page offers");
    entry = models.find((m) => m.name === fallback) || models[0];
  }
  const H = entry.heads;
  const int = (key, lo, hi) => {
    const s = fields[key];
    if (!/^\d{1,9}$/.test(s || "")) return fail(`field ${key} is not a number`);
    const v = Number(s);
    if (v < lo || v > hi) return fail(`field ${key} is out of range`);
    return v;
  };
  const view = defaultView(entry);
  const set = (key, value) => {
    if (value !== undefined) view[key] = value;
  };
  if (fields.s === "fresh") {
    const seed = int("g", 0, 2 ** 31);
    if (seed !== undefined) {
      view.seq = "fresh";
      view.seed = seed;
    }
  } else if (fields.s === "typed") {
    if (!/^\d{1,3}(\.\d{1,3}){0,99}$/.test(fields.t || "")) fail("field t is not a list of tokens");
    else if (fields.t.split(".").some((x) => Number(x) > 255)) fail("field t holds a token above 255");
    else {
      view.seq = "typed";
      view.tokens = fields.t.split(".").map(Number);
    }
  } else {
    set("seq", int("s", 0, 999));
  }
  const L = entry.layers || 4;
  set("layer", int("l", 0, L - 1));
  if (!WEIGHTINGS.includes(fields.w)) fail("field w is not a weighting");
  else if (fields.w !== "custom") view.weights = fields.w;
  else if (!/^[0-9.e+-]+(,[0-9.e+-]+)*$/.test(fields.b || "")) fail("field b is not a list of weights");
  else {
    const beta = fields.b.split(",").map(Number);
    if (beta.length !== H || beta.some((b) => !(Number.isFinite(b) && b >= 0)) || !beta.some((b) => b > 0)) {
      fail(`field b needs ${H} non-negative weights, not all zero`);
    } else {
      view.weights = "custom";
      view.beta = beta;
    }
  }
  if (!FILLS.includes(fields.f)) fail("field f is not zero or mean");
  else view.fill = fields.f;
  if (fields.x !== undefined) {
    if (!new RegExp(`^[0-9a-f]{4}(\\.[0-9a-f]{4}){${L - 1}}$`).test(fields.x)) fail(`field x is not ${L} head masks`);
    else {
      const masks = fields.x.split(".").map((hex) => parseInt(hex, 16));
      if (masks.some((m) => m >= 2 ** H)) fail("field x removes a head the model does not have");
      else view.removed = masks.map((m) => Array.from({ length: H }, (_, h) => Math.floor(m / 2 ** h) % 2 === 1));
    }
  }
  set("pos", int("p", 0, 99));
  view.log = fields.log === "1";
  return { view, problems };
}

/**
 * Python that reproduces the view with `bparallel` (the same model, sequence, ablation and
 * measures of the chosen layer).
 * @param {View} view
 * @param {object} data the model's data object (task, heads, seed, profile, sequences)
 * @param {number[]} tokens the sequence shown
 * @returns {string}
 */
export function toPython(view, data, tokens) {
  const { task, heads, seed, profile } = data;
  const fresh = data.data === "fresh";
  const folder = data.manifest.folder; // the models/ folder that ships it (Python's catalogue)
  const [first, total] = data.sequences.reference;
  const removed = [];
  view.removed.forEach((row, l) => row.forEach((r, h) => r && removed.push(`mask[${l}, ${h}] = 0`)));
  const held = typeof view.seq === "number";
  const lines = [
    "import numpy as np",
    "import torch",
    "from bparallel import proxies",
    "from bparallel.book.section4.explorer import half_rounded, page_head_means",
    "from bparallel.transformer.ablation import ablated",
    "from bparallel.transformer.design import evaluation_inputs",
    "from bparallel.transformer.patterns import model_head_weights",
    ...(fresh
      ? ["from bparallel.transformer.shipped import MODELS_ROOT, load_weights", "",
        `model, _ = load_weights(MODELS_ROOT / ${JSON.stringify(folder)} / ${JSON.stringify(data.manifest.weights)})`]
      : ["from bparallel.transformer.shipped import MODELS_ROOT, load_shipped", "",
        `models, _ = load_shipped(MODELS_ROOT / ${JSON.stringify(folder)}, ${seed}, tasks=(${JSON.stringify(task)},))`,
        `model = models[(${JSON.stringify(task)}, ${heads})]`]),
    "model = half_rounded(model)  # the page's model: weights rounded to half precision",
    `inputs = evaluation_inputs(${JSON.stringify(task)}, "heldout", ${JSON.stringify(profile)}, seed=${seed}, num_sequences=${total})`,
    held
      ? `x = inputs[${view.seq}:${view.seq + 1}]  # held-out sequence ${view.seq + 1}`
      : `x = torch.tensor([[${tokens.join(", ")}]])  # ${view.seq === "fresh" ? "drawn in the page" : "typed"}`,
    `mask = torch.ones(${view.removed.length}, ${heads})  # 1 keeps a head, 0 removes it`,
    ...removed,
    view.fill === "mean"
      ? `fill = page_head_means(model, inputs[${first}:${total}])  # mean ablation, as the page`
      : "fill = None  # zero ablation",
    "with torch.no_grad(), ablated(model, mask, fill):",
    "    logits, patterns = model(x, return_attention=True)",
    `pattern = patterns[${view.layer}, 0].double().numpy()  # layer ${view.layer + 1}: (H, T, T)`,
  ];
  if (view.weights === "learned") lines.push(`w = model_head_weights(model)[${view.layer}]  # the paper's w_h`);
  else if (view.weights === "uniform") lines.push("w = None  # uniform, 1/H each");
  else {
    const total_ = view.beta.reduce((a, b) => a + b, 0);
    lines.push(`w = np.array([${view.beta.map((b) => String(b / total_)).join(", ")}])  # your beta, normalised`);
  }
  lines.push(
    "for mode in proxies.MODES:",
    "    print(mode, proxies.mixing_time_proxy(pattern, w, mode=mode),  # Algorithm 1",
    "          proxies.minimax_fidelity_proxy(pattern, w, mode=mode),  # Algorithm 2",
    "          proxies.worst_case_mixing_time(pattern, w, mode=mode))  # Definition 2.7",
  );
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------- helpers

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = String(value);
    else if (value === false || value === null || value === undefined) continue;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children);
  return node;
}

function option(value, text, selected) {
  return el("option", { value, text, selected: selected || null });
}

function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "n/a";
  if (x === Infinity) return "\u221e (never mixes)";
  return pyFormatFixed(x, digits);
}

function pct(x) {
  return typeof x !== "number" || Number.isNaN(x) ? "n/a" : `${pyFormatFixed(100 * x, 1)}%`;
}

/** Viridis-like colour ramp, `u` in [0, 1]. */
const RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function colour(u) {
  const x = Math.min(1, Math.max(0, u)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  return RAMP[i].map((c, k) => Math.round(c + f * (RAMP[i + 1][k] - c)));
}

function shade(w, log) {
  if (log) return w <= 0 ? -1 : Math.log10(Math.max(w, LOG_FLOOR)) / -Math.log10(LOG_FLOOR) + 1;
  return w;
}

/** Draw a `T x T` matrix on a canvas, one pixel per entry (CSS scales it). */
function drawHeatmap(canvas, M, T, log, dim = false) {
  canvas.width = T;
  canvas.height = T;
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const img = ctx.createImageData(T, T);
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const at = 4 * (i * T + j);
      const w = M[i * T + j];
      if (j > i && w === 0) {
        img.data.set([245, 245, 245, 255], at);
        continue;
      }
      const u = shade(w, log);
      const [r, g, b] = u < 0 ? [20, 20, 30] : colour(u);
      img.data.set(dim ? [(r + 255) / 2, (g + 255) / 2, (b + 255) / 2, 255] : [r, g, b, 255], at);
    }
  }
  ctx.putImageData(img, 0, 0);
}

/** Which cell of a `T x T` heatmap a pointer event is over, or null. */
function cellAt(canvas, event, T) {
  const box = canvas.getBoundingClientRect();
  if (!box.width || !box.height) return null;
  const j = Math.floor(((event.clientX - box.left) / box.width) * T);
  const i = Math.floor(((event.clientY - box.top) / box.height) * T);
  return i >= 0 && i < T && j >= 0 && j < T ? [i, j] : null;
}

// ------------------------------------------------------------------------ the component

/**
 * Build the explorer inside `root`.
 * @param {HTMLElement} root an empty container
 * @param {{models: Array<object>, dataUrl: string, hash?: boolean}} options the catalogue
 *   (`bparallel.book.section4.explorer.explorer_models`) and the data files' folder
 * @returns {object} a small controller, also at `root.bpExplorer` (tests, benchmarks)
 */
export function mountExplorer(root, options) {
  const models = (options.models || []).filter((m) => NAME.test(m.name) && Number.isInteger(m.heads));
  const useHash = options.hash !== false;
  const given = options.data || null; // name -> data object handed over in the page (no file)
  const app = { view: null, data: null, model: null, intact: null, current: null, busy: false, timings: {} };
  const ui = buildSkeleton(root, models);
  ui.linkButton.hidden = !useHash; // a link restores only what the page's address can load
  ui.pyButton.hidden = options.python === false;
  root.bpExplorer = app;
  if (!models.length) {
    ui.status.textContent = "No model is offered: export them with bparallel.book.section4.explorer.export_models.";
    return app;
  }

  /** Load a model's data file by a script element (once), then resolve its data. */
  function loadData(name) {
    if (given && given[name]) return Promise.resolve(given[name]);
    const store = (window.BPARALLEL_MODELS = window.BPARALLEL_MODELS || {});
    if (store[name]) return Promise.resolve(store[name]);
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = `${options.dataUrl}${name}.js`;
      script.async = true;
      script.onload = () => (store[name] ? resolve(store[name]) : reject(new Error(`${name}.js defined no model ${name}`)));
      script.onerror = () => reject(new Error(`the data file ${name}.js could not be loaded`));
      document.head.append(script);
    });
  }

  async function show(view) {
    const entry = models.find((m) => m.name === view.model);
    app.view = view;
    if (!app.model || app.model.name !== view.model) {
      ui.status.textContent = `Loading ${view.model} (${entry.bytes ? `${(entry.bytes / 2 ** 20).toFixed(1)} MB` : "its weights"})\u2026`;
      app.busy = true;
      let data;
      try {
        data = await loadData(view.model);
      } catch (err) {
        app.busy = false;
        ui.status.textContent = `${err.message}.`;
        return;
      }
      if (app.view !== view) return; // another model was chosen meanwhile
      app.data = data;
      app.model = loadModel(data);
      app.weights = headWeights(app.model);
      app.busy = false;
      const { nLayers: L, nHeads: H } = app.model.config;
      if (view.removed.length !== L || view.removed.some((row) => row.length !== H)) view.removed = emptyRemoved(L, H);
      if (view.layer >= L) view.layer = L - 1;
      if (view.beta && view.beta.length !== H) {
        view.weights = "learned";
        view.beta = null;
      }
      if (typeof view.seq === "number" && view.seq >= data.sequences.inputs.length) view.seq = 0;
    }
    if (!app.model.headMeans) view.fill = "zero"; // a step through training: no head means exported
    syncControls(ui, app, models);
    buildHeadCards(ui, app, rerun);
    rerun({ sequence: true });
  }

  function tokensOf(view) {
    const { seqLen, vocabSize } = app.model.config;
    if (view.seq === "fresh") return freshSequence(app.data.task, view.seed, seqLen, vocabSize);
    if (view.seq === "typed") return view.tokens;
    return app.data.sequences.inputs[view.seq];
  }

  /** Rerun the model (and the intact baseline when the sequence changed) and redraw. */
  function rerun({ sequence = false } = {}) {
    const { view, model } = app;
    if (!model) return;
    const t0 = performance.now();
    const tokens = tokensOf(view);
    app.tokens = tokens;
    const tt = taskTargets(app.data.task, tokens);
    app.targets = tt.targets;
    app.predictable = tt.predictable;
    if (sequence || !app.intact) {
      app.intact = forward(model, tokens);
      app.intactMeasures = {};
    }
    const mask = view.removed.map((row) => row.map((r) => (r ? 0 : 1)));
    const any = view.removed.some((row) => row.some(Boolean));
    app.current = any ? forward(model, tokens, { mask, fill: view.fill }) : app.intact;
    const t1 = performance.now();
    app.measures = measuresOf(app.current);
    const key = `${view.layer}|${view.weights}|${view.beta}`;
    if (!app.intactMeasures[key]) app.intactMeasures[key] = any ? measuresOf(app.intact) : app.measures;
    const t2 = performance.now();
    render(ui, app);
    app.timings = { forward: t1 - t0, measures: t2 - t1, draw: performance.now() - t2 };
    if (useHash) writeHash(view);
  }

  function layerWeights() {
    const { view } = app;
    if (view.weights === "uniform") return null;
    if (view.weights === "custom") {
      const s = view.beta.reduce((a, b) => a + b, 0);
      return view.beta.map((b) => b / s);
    }
    return app.weights[view.layer];
  }

  function measuresOf(out) {
    const { view } = app;
    const w = layerWeights();
    const rolloutWeights = view.weights === "uniform" ? null : app.weights.map((wl, l) => (l === view.layer ? w : wl));
    return layerMeasures(out.patterns, view.layer, { weights: w, rolloutWeights });
  }

  app.show = show;
  app.rerun = rerun;
  app.layerWeights = layerWeights;
  wireControls(ui, app, models, { show, rerun });

  const fromLink = useHash ? readHash() : null;
  let first = defaultView(models.find((m) => m.name === "cycle-h16") || models[0]);
  if (fromLink !== null) {
    const { view, problems } = readView(fromLink, models);
    first = view;
    root.scrollIntoView();
    if (problems.length) ui.linkError.textContent = linkProblems(problems);
  }
  show(first);
  if (useHash) {
    window.addEventListener("hashchange", () => {
      const text = readHash();
      if (text === null || (app.view && text === encodeView(app.view))) return;
      const { view, problems } = readView(text, models);
      ui.linkError.textContent = problems.length ? linkProblems(problems) : "";
      show(view);
    });
  }
  return app;
}

// ------------------------------------------------------------------- address fragment

/** The reader's word on a link read in part: every problem, and that the rest is shown. */
function linkProblems(problems) {
  return `This link could not be read in full (${problems.join("; ")}); ` +
    "everything else it holds is shown, and the default stands in for the rest.";
}

function readHash() {
  const { hash } = window.location;
  return hash.startsWith(HASH_KEY) ? hash.slice(HASH_KEY.length) : null;
}

function writeHash(view) {
  const { hash } = window.location;
  if (!(hash === "" || hash === "#" || hash.startsWith(HASH_KEY))) return; // a section anchor
  const next = HASH_KEY + encodeView(view);
  if (hash === next) return;
  try {
    history.replaceState(history.state, "", next);
  } catch {
    /* some file:// contexts refuse; the link button still works */
  }
}

// ----------------------------------------------------------------------------- layout

function buildSkeleton(root, models) {
  root.replaceChildren();
  root.classList.add("bp-widget", "bp-ex", "tex2jax_ignore", "mathjax_ignore");
  const groups = [...new Set(models.map(groupOf))];
  const ui = {};
  ui.task = el("select", { "aria-label": "task and training data", "data-bp": "task" },
    groups.map((g) => option(g, groupLabel(g, models))));
  ui.heads = el("select", { "aria-label": "model: number of heads", "data-bp": "heads" });
  ui.seq = el("select", { "aria-label": "sequence", "data-bp": "sequence" });
  ui.seed = el("input", { type: "number", min: 0, step: 1, "aria-label": "seed of the fresh sequence", "data-bp": "seed", hidden: true });
  ui.typed = el("input", { type: "text", size: 28, placeholder: "tokens 0-255, e.g. 5 17 5 9", "aria-label": "typed tokens", "data-bp": "typed", hidden: true });
  ui.layer = el("select", { "aria-label": "layer", "data-bp": "layer" });
  ui.weights = el("select", { "aria-label": "head weights of the combined graph", "data-bp": "weights" }, [
    option("learned", "learned w\u2095 (paper)"), option("uniform", "uniform 1/H"), option("custom", "your \u03b2"),
  ]);
  ui.fill = el("select", { "aria-label": "how a removed head is replaced", "data-bp": "fill" }, [
    option("mean", "mean ablation"), option("zero", "zero ablation"),
  ]);
  ui.log = el("input", { type: "checkbox", "data-bp": "log" });
  ui.step = el("input", { type: "range", min: 0, max: 0, step: 1, value: 0, "aria-label": "step of training", "data-bp": "step" });
  ui.stepText = el("span", { class: "bp-ex-muted", "data-bp": "step-text" });
  const label = (text, input) => el("label", {}, [text, input]);
  ui.stepRow = el("div", { class: "bp-row bp-ex-steps", "data-bp": "steps", hidden: true }, [
    label("step of training ", ui.step), ui.stepText,
  ]);
  ui.controls = el("div", { class: "bp-row bp-ex-controls" }, [
    label("task ", ui.task), label("model ", ui.heads), label("sequence ", ui.seq), ui.seed, ui.typed,
    label("layer ", ui.layer), label("weights ", ui.weights), label("removed heads: ", ui.fill),
    label("log colours ", ui.log),
  ]);
  ui.restore = el("button", { type: "button", text: "Restore every head", "data-bp": "restore" });
  ui.removeLayer = el("button", { type: "button", text: "Remove this layer's heads", "data-bp": "remove-layer" });
  ui.removeAll = el("button", { type: "button", text: "Remove every head", "data-bp": "remove-all" });
  ui.linkButton = el("button", { type: "button", text: "Copy link", "data-bp": "copy-link" });
  ui.pyButton = el("button", { type: "button", text: "Export as Python", "data-bp": "export-python" });
  ui.actions = el("div", { class: "bp-row" }, [ui.restore, ui.removeLayer, ui.removeAll, ui.linkButton, ui.pyButton]);
  ui.status = el("p", { class: "bp-ex-status", role: "status", "data-bp": "status" });
  ui.layerNote = el("p", {
    class: "bp-ex-muted", "data-bp": "layer-note",
    text: "Removing a layer's heads leaves that layer's own pattern and measures unchanged: its attention is computed " +
      "from its input, which its heads do not touch; the layers after it change.",
  });
  ui.linkError = el("p", { class: "bp-ex-warn", "data-bp": "link-error" });
  ui.summary = el("div", { class: "bp-ex-summary", "data-bp": "summary" });
  ui.strip = el("div", { class: "bp-ex-strip", "data-bp": "strip", role: "list", "aria-label": "the sequence: token per position, right or wrong" });
  ui.measures = el("table", { class: "bp-ex-table", "data-bp": "measures" });
  ui.combined = el("canvas", { class: "bp-ex-map", "data-bp": "combined", "aria-label": "combined graph heatmap" });
  ui.row = el("canvas", { class: "bp-ex-row-plot", "data-bp": "row", width: 400, height: 80, "aria-label": "attention row of the chosen position" });
  ui.tip = el("p", { class: "bp-ex-tip", "data-bp": "tip", text: "Hover a heatmap for a weight; click it to choose that query." });
  ui.headBox = el("div", { class: "bp-ex-heads", "data-bp": "heads-grid" });
  ui.code = el("textarea", { class: "bp-ex-code", rows: 14, readonly: true, hidden: true, "data-bp": "python", "aria-label": "Python code" });
  ui.exportStatus = el("span", { class: "bp-ex-muted", "data-bp": "export-status" });
  root.append(
    ui.controls, ui.stepRow, ui.actions, ui.layerNote, ui.status, ui.linkError, ui.summary, ui.strip,
    el("div", { class: "bp-ex-split" }, [
      el("figure", { class: "bp-ex-fig" }, [ui.combined, el("figcaption", { "data-bp": "combined-caption" })]),
      el("div", { class: "bp-ex-side" }, [ui.measures, ui.row, ui.tip]),
    ]),
    ui.headBox, el("div", { class: "bp-row" }, [ui.exportStatus]), ui.code,
  );
  return ui;
}

function syncControls(ui, app, models) {
  const { view, data } = app;
  const entry = models.find((m) => m.name === view.model);
  ui.task.value = groupOf(entry);
  const series = seriesOf(entry, models);
  const at = series.indexOf(entry);
  // one menu entry per run: a run through training by its step at the slider's place
  const place = (m) => { const s = seriesOf(m, models); return s[Math.min(at, s.length - 1)]; };
  const offered = models.filter((m) => groupOf(m) === groupOf(entry) && (m.series === undefined || m === place(m)));
  ui.heads.replaceChildren(...offered.map((m) => option(m.name, modelLabel(m), m.name === entry.name)));
  ui.stepRow.hidden = series.length < 2;
  ui.step.max = String(series.length - 1);
  ui.step.value = String(at);
  ui.stepText.textContent = typeof entry.step === "number"
    ? `step ${entry.step.toLocaleString("en-US")} (${at + 1} of ${series.length}: ${series.map((m) => m.step.toLocaleString("en-US")).join(", ")})`
    : "";
  const n = data.sequences.inputs.length;
  ui.seq.replaceChildren(
    ...Array.from({ length: n }, (_, k) => option(k, `held-out ${k + 1}`)),
    option("fresh", "fresh (drawn here)"), option("typed", "typed"),
  );
  ui.seq.value = String(view.seq);
  ui.typed.placeholder = `tokens 0-${app.model.config.vocabSize - 1}, e.g. 5 17 5 9`;
  ui.seed.hidden = view.seq !== "fresh";
  ui.seed.value = view.seed;
  ui.typed.hidden = view.seq !== "typed";
  if (view.seq === "typed") ui.typed.value = view.tokens.join(" ");
  ui.layer.replaceChildren(...view.removed.map((_, l) => option(l, `layer ${l + 1}`)));
  ui.layer.value = view.layer;
  ui.weights.value = view.weights;
  const mean = ui.fill.querySelector('option[value="mean"]');
  mean.disabled = !app.model.headMeans;
  mean.title = app.model.headMeans ? "" : "a step through training has no head means: its heads are removed by zero ablation";
  ui.fill.value = view.fill;
  ui.log.checked = view.log;
}

function wireControls(ui, app, models, { show, rerun }) {
  const switchModel = (group, name, heads) => {
    const mine = models.filter((m) => groupOf(m) === group);
    const entry = mine.find((m) => m.name === name) || mine.find((m) => m.heads === heads) || mine[0];
    const view = { ...defaultView(entry), layer: app.view.layer, fill: app.view.fill, log: app.view.log };
    if (app.view.weights !== "custom") view.weights = app.view.weights;
    show(view);
  };
  ui.task.addEventListener("change", () => switchModel(ui.task.value, null, app.data ? app.data.heads : 16));
  ui.step.addEventListener("input", () => {
    // another step of the same run: the same view (sequence, layer, removed heads), other weights
    const series = seriesOf(models.find((m) => m.name === app.view.model), models);
    const entry = series[Number(ui.step.value)];
    if (entry && entry.name !== app.view.model) show({ ...app.view, model: entry.name, removed: app.view.removed.map((row) => row.slice()) });
  });
  ui.heads.addEventListener("change", () => switchModel(ui.task.value, ui.heads.value, null));
  ui.seq.addEventListener("change", () => {
    const v = ui.seq.value;
    const { view } = app;
    if (v === "typed") {
      view.seq = "typed";
      view.tokens = view.tokens || app.tokens.slice(0, 20);
    } else view.seq = v === "fresh" ? "fresh" : Number(v);
    view.pos = Math.min(view.pos, tokensLength(app) - 1);
    syncControls(ui, app, models);
    rerun({ sequence: true });
  });
  ui.seed.addEventListener("change", () => {
    const s = Number(ui.seed.value);
    if (Number.isInteger(s) && s >= 0 && s <= 2 ** 31) {
      app.view.seed = s;
      rerun({ sequence: true });
    }
  });
  ui.typed.addEventListener("change", () => {
    const tokens = ui.typed.value.trim().split(/[\s,.;]+/).filter(Boolean).map(Number);
    const most = Math.min(MAX_TYPED, app.model.config.seqLen), top = app.model.config.vocabSize - 1;
    const ok = tokens.length >= 1 && tokens.length <= most && tokens.every((x) => Number.isInteger(x) && x >= 0 && x <= top);
    ui.typed.setAttribute("aria-invalid", ok ? "false" : "true");
    if (!ok) {
      ui.status.textContent = `Type 1 to ${most} tokens, each a whole number from 0 to ${top}.`;
      return;
    }
    app.view.tokens = tokens;
    app.view.pos = tokens.length - 1;
    rerun({ sequence: true });
  });
  ui.layer.addEventListener("change", () => {
    app.view.layer = Number(ui.layer.value);
    buildHeadCards(ui, app, rerun);
    rerun();
  });
  ui.weights.addEventListener("change", () => {
    app.view.weights = ui.weights.value;
    if (app.view.weights === "custom" && !app.view.beta) app.view.beta = app.weights[app.view.layer].slice();
    buildHeadCards(ui, app, rerun);
    rerun();
  });
  ui.fill.addEventListener("change", () => {
    app.view.fill = ui.fill.value;
    rerun();
  });
  ui.log.addEventListener("change", () => {
    app.view.log = ui.log.checked;
    rerun();
  });
  const setAll = (value, layerOnly) => {
    app.view.removed.forEach((row, l) => {
      if (!layerOnly || l === app.view.layer) row.fill(value);
    });
    rerun();
  };
  ui.restore.addEventListener("click", () => setAll(false, false));
  ui.removeLayer.addEventListener("click", () => setAll(true, true));
  ui.removeAll.addEventListener("click", () => setAll(true, false));
  ui.linkButton.addEventListener("click", () => {
    const url = window.location.href.split("#")[0] + HASH_KEY + encodeView(app.view);
    const done = (ok) => {
      ui.exportStatus.textContent = ok ? "link copied to the clipboard" : "select and copy the link from the address bar";
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(() => done(true), () => done(false));
    else done(false);
  });
  ui.pyButton.addEventListener("click", () => {
    ui.code.hidden = !ui.code.hidden;
    if (!ui.code.hidden) {
      ui.code.value = toPython(app.view, app.data, app.tokens);
      ui.code.select();
    }
  });
  const hover = (canvas, matrix) => (event) => {
    const T = tokensLength(app);
    const cell = cellAt(canvas, event, T);
    if (!cell) return;
    const M = matrix();
    ui.tip.textContent = `query ${cell[0]}, key ${cell[1]}: weight ${M ? pyFormatFixed(M[cell[0] * T + cell[1]], 4) : "n/a"}`;
  };
  ui.combined.addEventListener("mousemove", hover(ui.combined, () => app.measures && app.measures.combined));
  ui.combined.addEventListener("click", (event) => {
    const cell = cellAt(ui.combined, event, tokensLength(app));
    if (cell) choosePosition(app, cell[0]);
  });
  ui.hover = hover;
}

function tokensLength(app) {
  return app.tokens ? app.tokens.length : app.model ? app.model.config.seqLen : 100;
}

function choosePosition(app, pos) {
  app.view.pos = pos;
  app.rerun();
}

/** One card per head of the chosen layer: heatmap, weight, fidelity, recorded effect, a removal switch. */
function buildHeadCards(ui, app, rerun) {
  const { view, data } = app;
  ui.headBox.replaceChildren();
  ui.cards = [];
  for (let h = 0; h < data.heads; h++) {
    const canvas = el("canvas", { class: "bp-ex-map", "data-bp": `head-map-${h}`, "aria-label": `head ${h + 1} pattern` });
    const toggle = el("button", { type: "button", class: "bp-ex-toggle", "data-bp": `toggle-${h}` });
    toggle.addEventListener("click", () => {
      view.removed[view.layer][h] = !view.removed[view.layer][h];
      rerun();
    });
    canvas.addEventListener("mousemove", ui.hover(canvas, () => app.current && app.current.patterns[view.layer][h]));
    canvas.addEventListener("click", (event) => {
      const cell = cellAt(canvas, event, tokensLength(app));
      if (cell) choosePosition(app, cell[0]);
    });
    const info = el("span", { class: "bp-ex-muted", "data-bp": `head-info-${h}` });
    let beta = null;
    if (view.weights === "custom") {
      beta = el("input", { type: "number", min: 0, step: 0.05, value: view.beta[h], "aria-label": `your weight of head ${h + 1}`, "data-bp": `beta-${h}` });
      beta.addEventListener("change", () => {
        const b = Number(beta.value);
        const rest = view.beta.reduce((s, x, k) => (k === h ? s : s + x), 0);
        if (Number.isFinite(b) && b >= 0 && rest + b > 0) {
          view.beta[h] = b;
          rerun();
        } else beta.value = view.beta[h];
      });
    }
    const card = el("div", { class: "bp-ex-card", "data-bp": `head-${h}` }, [
      el("div", { class: "bp-ex-card-head" }, [el("strong", { text: `head ${h + 1}` }), toggle]),
      canvas, info, ...(beta ? [beta] : []),
    ]);
    ui.headBox.append(card);
    ui.cards.push({ card, canvas, toggle, info });
  }
}

// ----------------------------------------------------------------------------- drawing

function render(ui, app) {
  const { view, data, current, intact, measures } = app;
  const T = app.tokens.length;
  const intactM = app.intactMeasures[`${view.layer}|${view.weights}|${view.beta}`];
  if (view.pos >= T) view.pos = T - 1;
  ui.status.textContent = statusText(data);
  // scores and the sequence strip
  const scores = (out) => sequenceScores(out, app.targets, app.predictable);
  const now = scores(current);
  const base = scores(intact);
  const changed = now.predictions.reduce((n, p, t) => n + (p !== base.predictions[t] ? 1 : 0), 0);
  const removedCount = view.removed.flat().filter(Boolean).length;
  ui.summary.replaceChildren(
    el("span", { "data-bp": "accuracy", "data-value": now.accuracy, text: `accuracy ${pct(now.accuracy)}` }),
    el("span", { text: ` (intact ${pct(base.accuracy)}) on ${now.count} predictable positions; ` }),
    el("span", { "data-bp": "margin", "data-value": now.meanMargin, text: `mean margin ${fmt(now.meanMargin)}` }),
    el("span", { text: ` (intact ${fmt(base.meanMargin)}); ` }),
    el("span", { "data-bp": "changed", "data-value": changed, text: `${changed} prediction${changed === 1 ? "" : "s"} changed` }),
    el("span", { text: `; ${removedCount} head${removedCount === 1 ? "" : "s"} removed (${view.fill} ablation). ` }),
    el("span", { "data-bp": "position", text: `Position ${view.pos}: token ${app.tokens[view.pos]}, target ${app.targets[view.pos]}, prediction ${now.predictions[view.pos]}, margin ${fmt(now.margin[view.pos])}` +
      `${app.predictable[view.pos] ? "" : " (unpredictable)"}.` }),
  );
  ui.strip.replaceChildren(...app.tokens.map((tok, t) => {
    const kind = !app.predictable[t] ? "skip" : now.correct[t] ? "right" : "wrong";
    const cell = el("button", {
      type: "button", role: "listitem", class: `bp-ex-tok bp-ex-${kind}${t === view.pos ? " bp-ex-pos" : ""}`,
      title: `position ${t}: token ${tok}, target ${app.targets[t]}, prediction ${now.predictions[t]}, margin ${fmt(now.margin[t])}`,
      "data-bp": `tok-${t}`, "data-kind": kind, text: tok,
    });
    cell.addEventListener("click", () => choosePosition(app, t));
    return cell;
  }));
  // measures of the chosen layer's combined graph
  const rows = [
    ["Algorithm 1, published code (steps)", "mixing_time.paper", 2],
    ["Algorithm 1, as defined (steps)", "mixing_time.definition", 2],
    ["Algorithm 2, published code (%)", "fidelity.paper", 4],
    ["Algorithm 2, as defined (%)", "fidelity.definition", 4],
    ["Definition 2.7, as defined (steps)", "worst_case.definition", 0],
    ["Definition 2.7 on the published code's walk (steps)", "worst_case.paper", 0],
  ];
  const rollMin = (m) => T * Math.min(...m.rollout.slice(0, -1));
  ui.measures.replaceChildren(
    el("caption", { text: `Layer ${view.layer + 1}, heads combined with ${view.weights === "learned" ? "the learned w\u2095" : view.weights === "uniform" ? "uniform weights" : "your \u03b2"}` }),
    el("tr", {}, [el("th", { text: "measure" }), el("th", { text: "now" }), el("th", { text: "intact" })]),
    ...rows.map(([label, key, d]) => el("tr", { "data-bp": `m-${key}` }, [
      el("td", { text: label }),
      el("td", { "data-value": measures[key], text: fmt(measures[key], d) }),
      el("td", { text: fmt(intactM[key], d) }),
    ])),
    el("tr", { "data-bp": "m-rollout" }, [
      el("td", { text: "rollout minimum \u00d7 T (1: every token counts equally)" }),
      el("td", { text: fmt(rollMin(measures), 3) }), el("td", { text: fmt(rollMin(intactM), 3) }),
    ]),
  );
  // heatmaps
  drawHeatmap(ui.combined, measures.combined, T, view.log);
  ui.combined.parentElement.querySelector("figcaption").textContent =
    `Combined graph of layer ${view.layer + 1} (query \u00d7 key), ${view.log ? "log" : "linear"} colours; click a row to choose its query.`;
  drawRow(ui.row, measures.combined, T, view.pos);
  const w = app.layerWeights();
  ui.cards.forEach(({ card, canvas, toggle, info }, h) => {
    const removed = view.removed[view.layer][h];
    drawHeatmap(canvas, current.patterns[view.layer][h], T, view.log, removed);
    toggle.textContent = removed ? "removed" : "on";
    toggle.setAttribute("aria-pressed", removed ? "false" : "true");
    toggle.setAttribute("aria-label", `${removed ? "restore" : "remove"} head ${h + 1} of layer ${view.layer + 1}`);
    card.classList.toggle("bp-ex-off", removed);
    const wh = w === null ? 1 / data.heads : w[h];
    const effect = data.head_effects ? data.head_effects[view.layer][h] : null;
    const sc = data.head_scores;
    const scores = sc ? `; scores: previous-token ${fmt(sc.previous_token[view.layer][h], 2)}, ` +
      `induction ${fmt(sc.induction[view.layer][h], 2)}, copying ${fmt(sc.copying[view.layer][h], 2)}` : "";
    info.textContent = `w ${pyFormatFixed(wh, 3)}; fidelity alone ${fmt(measures["head_fidelity.definition"][h], 2)}%` +
      (effect === null ? "" : `; removing it costs ${fmt(effect, 2)} logits of margin`) + scores;
    info.dataset.previousToken = sc ? String(sc.previous_token[view.layer][h]) : "";
    info.dataset.induction = sc ? String(sc.induction[view.layer][h]) : "";
    info.title = "w: the head's learned weight; fidelity: its own minimax fidelity (as defined) on this sequence; " +
      "cost: the drop of the mean logit margin when this head alone is removed (mean ablation), " +
      `mean over the ${data.sequences.inputs.length} sequences of this page, recorded by the book's Python` +
      (sc ? `; scores: the head's previous-token, induction and copying scores at this step on the ${sc.probe_sequences} ` +
        "probe sequences of its training (chapter 13), computed by the book's Python on the full-precision weights" : "");
    info.dataset.effect = effect === null ? "" : String(effect);
  });
}

function drawRow(canvas, C, T, pos) {
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const { width, height } = canvas;
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = "#1f6fb2";
  const bw = width / T;
  for (let j = 0; j <= pos; j++) {
    const v = C[pos * T + j];
    ctx.fillRect(j * bw, height - v * height, Math.max(1, bw - 0.5), v * height);
  }
}
