/**
 * @file playground.mjs: the toy-DAG playground as a web page component, no kernel needed.
 *
 * `mountPlayground(root)` fills `root` with controls (presets, number of nodes and heads,
 * one adjacency grid and one beta slider per head, horizon T, epsilon) and outputs that
 * redraw on every change: Figure 3 style signal curves with a dashed phi_min line per head
 * and for the combination, a summary (minimax fidelity per head against the combination,
 * amplification highlighted, mixing and hitting times), the table of node fidelities and
 * optimal times, and a warning for every head that is not feedforward (Definition 2.1) or
 * has extra sinks (Definition 2.2). The configuration lives in the address fragment
 * (`#pg=...`, see `encodeState`), so a link reopens the same graphs, and one button writes
 * the Python code that rebuilds it with `bparallel`.
 *
 * The conventions are the book's: a head's grid reads as its matrices W and Delta (row i
 * receives, column j sends, so the cell in row i and column j is the edge j -> i and a
 * forward edge sits below the diagonal; `gridCells`), a beta slider shows its own value and
 * the normalised weight (`betaText`), and a walk that never mixes reads as in the static
 * tables (`NEVER_MIXES`, `bparallel.book.playground.NEVER_MIXES`). These helpers touch no
 * DOM, so Node imports this module and `tests/book/render/test_js_parity.py` checks them against Python.
 *
 * All mathematics is in `toydag.mjs` and `state.mjs`; this file only draws. Every user-supplied string
 * (node labels come from the link) is written with `textContent`, never as HTML.
 */

import { CAP_LOG2 } from "./toydag.mjs";
import {
  MAX_HEADS,
  MAX_NODES,
  MIN_HEADS,
  PRESET_NAMES,
  compute,
  decodeState,
  encodeState,
  nodeLabels,
  normalizeState,
  presetState,
  setHeadCount,
  setNodeCount,
  setWeight,
  toggleEdge,
  EXAMPLE_3_13_HEAD_2,
} from "./state.mjs";
import { pyFormatFixed, toPython } from "./python.mjs";

/** Matplotlib's tab10 colours, as `bparallel.book.playground.plot_signals` uses. */
const COLORS = [
  "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
];
const SVG_NS = "http://www.w3.org/2000/svg";
const HASH_KEY = "#pg=";
const MAX_HORIZON = 1000;
const DEFAULT_PRESET = "Example 3.13 (paper)";

/** How the static tables say it (`bparallel.book.playground.NEVER_MIXES`, `NEVER_REACHES`). */
export const NEVER_MIXES = "never mixes (\u221e)";
export const NEVER_REACHES = "\u221e (\u03c4 unreachable)";
/** The grid's orientation, the book's: row i receives, column j sends (W[i, j], Delta[i, j]). */
export const GRID_AXES = "row receives, column sends";

// ------------------------------------------------------------------ display conventions

/**
 * The cells of head `h`'s grid, row by row, in the orientation of the book's matrices
 * (`bparallel.graphs.adjacency_matrix`: `A[i][j] = 1` for the edge `j -> i`): row `i` is the
 * receiving node, column `j` the sending one. Each cell is `{i, j, self, on, backward}`:
 * `self` the fixed self-loop on the diagonal, `on` whether the edge (or self-loop) is
 * present, `backward` an edge `j -> i` with `j > i` (above the diagonal), which breaks
 * Definition 2.1.
 * @param {object} state a normalised playground state
 * @param {number} h the head
 * @returns {Array<Array<{i: number, j: number, self: boolean, on: boolean, backward: boolean}>>}
 */
export function gridCells(state, h) {
  const present = new Set(state.heads[h].map(([j, i]) => `${j},${i}`));
  return Array.from({ length: state.n }, (_, i) =>
    Array.from({ length: state.n }, (_, j) => ({
      i, j, self: i === j, on: i === j || present.has(`${j},${i}`), backward: j > i,
    })),
  );
}

/**
 * A beta slider's label: the slider's own (raw) value and the weight it becomes once the
 * weights are normalised to sum 1 (Eq. 26), e.g. "0.80 (normalised 0.615)".
 * @param {number} raw the slider's value
 * @param {number} normalised the normalised weight
 */
export function betaText(raw, normalised) {
  return `${pyFormatFixed(raw, 2)} (normalised ${pyFormatFixed(normalised, 3)})`;
}

/** A mixing time as the summary shows it: the steps, or `NEVER_MIXES` (`null`). */
export function mixingText(steps) {
  return steps === null ? NEVER_MIXES : String(steps);
}

/** A worst-start hitting time as the summary shows it: three decimals, or `NEVER_REACHES`. */
export function hittingText(value) {
  return value === null ? NEVER_REACHES : pyFormatFixed(value, 3);
}

// ---------------------------------------------------------------------------- helpers

/**
 * Create an element with attributes and children (strings become text nodes).
 * @param {string} tag
 * @param {Record<string, string|number|boolean>} [attrs] `text` sets textContent
 * @param {Array<Node|string>} [children]
 * @returns {HTMLElement}
 */
function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  node.append(...children);
  return node;
}

/**
 * Create an SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  return node;
}

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = String(value);
    else if (value === false || value === null || value === undefined) node.removeAttribute(key);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

/** Fixed decimals for display, rounded as Python rounds; exact values go in `data-value`. */
function fmt(x, digits = 4) {
  return x === null ? "n/a" : pyFormatFixed(x, digits);
}

/** A number with its sign, for the amplification. */
function signed(x, digits = 4) {
  return (x >= 0 ? "+" : "\u2212") + pyFormatFixed(Math.abs(x), digits);
}

/** Unicode subscript digits for beta_1 ... beta_4. */
function sub(k) {
  return String(k).replace(/\d/g, (d) => "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089"[d]);
}

/** The smallest of 1, 2, 2.5, 5 times a power of ten that is >= x (for the y axis). */
function niceCeil(x) {
  if (!(x > 0)) return 100;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x - 1e-9) return m * p;
  return 10 * p;
}

// ------------------------------------------------------------------------ the component

/**
 * Build the playground inside `root` and draw it.
 * @param {HTMLElement} root an empty container
 * @param {{hash?: boolean, initial?: object}} [options] `hash`: keep the configuration in
 *   the address fragment (one playground per page); `initial`: configuration used when the
 *   address has none (default: the Example 3.13 (paper) preset)
 * @returns {{state: object, result: object, refresh: () => void, load: (s: object) => void,
 *   compute: (s: object) => object}} a small controller, also at `root.bpPlayground` (used by
 *   the tests and the benchmark)
 */
export function mountPlayground(root, options = {}) {
  const useHash = options.hash !== false;
  const ui = buildSkeleton(root);
  const app = { state: null, result: null, refresh, load, compute, linkError: null, inputError: null,
    notice: null, touched: false };
  for (const type of ["input", "change", "click"]) {
    root.addEventListener(type, () => (app.touched = true), true);
  }

  /** Replace the whole configuration (preset, link) and rebuild the head controls. */
  function load(config, presetName = "") {
    app.state = normalizeState(config);
    app.linkError = null;
    app.notice = null;
    ui.preset.value = presetName;
    syncGraphInputs(ui, app.state);
    buildHeads(ui, app, edited);
    refresh();
  }

  /** Rebuild the head controls after a structural change (nodes, heads): an edit. */
  function rebuild() {
    ui.preset.value = ""; // edited: no longer the preset
    app.inputError = null;
    app.notice = null;
    syncGraphInputs(ui, app.state);
    buildHeads(ui, app, edited);
    refresh();
  }

  /** A user's edit: the configuration is no longer the preset it came from. */
  function edited() {
    ui.preset.value = "";
    app.inputError = null;
    app.notice = null;
    refresh();
  }

  /** Recompute everything and redraw the outputs (one live update). */
  function refresh() {
    const t0 = performance.now();
    app.result = compute(app.state);
    const t1 = performance.now();
    updateHeads(ui, app);
    renderWarnings(ui, app);
    const t2 = performance.now();
    renderPlots(ui, app.result);
    const t3 = performance.now();
    renderSummary(ui, app.result);
    renderNodeTable(ui, app.result);
    const t4 = performance.now();
    app.timings = { compute: t1 - t0, heads: t2 - t1, plots: t3 - t2, tables: t4 - t3 }; // ms
    if (!ui.code.hidden) ui.code.value = toPython(app.state);
    if (useHash && ownsHash(app)) writeHash(app.state);
  }

  wireControls(ui, app, { load, rebuild, refresh: edited });
  if (useHash) {
    window.addEventListener("hashchange", () => {
      const text = readHash();
      if (text !== null && text !== encodeState(app.state)) loadFromLink(text);
    });
  }

  /** Load the configuration of a `#pg=` link, or the default with a warning. */
  function loadFromLink(text) {
    let state = null;
    let problem = "";
    try {
      state = decodeState(text);
    } catch (err) {
      problem = err.message;
    }
    if (state) return load(state);
    loadDefault();
    app.linkError = `this link's playground configuration could not be read (${problem}); showing the default`;
    renderWarnings(ui, app);
  }

  function loadDefault() {
    if (options.initial) load(options.initial);
    else load(presetState(DEFAULT_PRESET), DEFAULT_PRESET);
  }

  const fromLink = useHash ? readHash() : null;
  if (fromLink !== null) {
    loadFromLink(fromLink);
    root.scrollIntoView(); // a shared link opens on the playground, not the page top
  } else {
    loadDefault();
  }
  root.bpPlayground = app;
  return app;
}

// ------------------------------------------------------------------- address fragment

/**
 * Whether the playground may write the address fragment: not while it holds a section
 * anchor (`#example-3-8`) from a link into the page, until the reader edits something.
 */
function ownsHash(app) {
  const { hash } = window.location;
  return app.touched || hash === "" || hash === "#" || hash.startsWith(HASH_KEY);
}

/** The `#pg=` part of the address, or null. */
function readHash() {
  const { hash } = window.location;
  return hash.startsWith(HASH_KEY) ? hash.slice(HASH_KEY.length) : null;
}

/** Put the configuration in the address without adding a history entry. */
function writeHash(state) {
  const hash = HASH_KEY + encodeState(state);
  if (window.location.hash === hash) return;
  try {
    history.replaceState(history.state, "", hash);
  } catch {
    window.location.replace(hash);
  }
}

// ----------------------------------------------------------------------------- layout

/**
 * The static frame: controls, outputs and export; returns the elements to update.
 * @param {HTMLElement} root
 */
function buildSkeleton(root) {
  root.replaceChildren();
  root.classList.add("bp-widget", "bp-pg", "tex2jax_ignore", "mathjax_ignore");
  const ui = {
    root,
    preset: el("select", { "aria-label": "preset", "data-bp": "preset" }, [
      el("option", { value: "", text: "(custom)" }),
      ...PRESET_NAMES.map((name) => el("option", { value: name, text: name })),
    ]),
    seed: el("input", { type: "number", value: 0, step: 1, "aria-label": "random seed", "data-bp": "seed" }),
    density: el("input", {
      type: "number", value: 0.3, min: 0, max: 1, step: 0.05, "aria-label": "edge density of random heads", "data-bp": "density",
    }),
    load: el("button", { type: "button", "data-bp": "load", text: "Load" }),
    nodes: el("input", { type: "number", min: 2, max: MAX_NODES, step: 1, "aria-label": "number of nodes", "data-bp": "nodes" }),
    heads: el("input", { type: "number", min: MIN_HEADS, max: MAX_HEADS, step: 1, "aria-label": "number of heads", "data-bp": "heads" }),
    horizon: el("input", { type: "number", min: 1, max: MAX_HORIZON, step: 1, "aria-label": "horizon T", "data-bp": "horizon" }),
    eps: el("input", { type: "number", min: 0.01, max: 0.99, step: 0.01, "aria-label": "epsilon of the mixing time", "data-bp": "eps" }),
    headBox: el("div", { class: "bp-pg-heads", "data-bp": "heads-box" }),
    warnings: el("div", { class: "bp-pg-warnings", role: "status", "aria-live": "polite", "data-bp": "warnings" }),
    plots: el("div", { class: "bp-pg-plots", "data-bp": "plots" }),
    legend: el("div", { class: "bp-pg-legend", "data-bp": "legend" }),
    summary: el("div", { class: "bp-pg-summary", "data-bp": "summary" }),
    nodeTable: el("div", { class: "bp-pg-scroll", "data-bp": "node-table" }),
    exportButton: el("button", { type: "button", "data-bp": "export", text: "Export as Python" }),
    linkButton: el("button", { type: "button", "data-bp": "copy-link", text: "Copy link" }),
    exportStatus: el("span", { class: "bp-pg-status", role: "status", "data-bp": "export-status" }),
    code: el("textarea", {
      class: "bp-pg-code", rows: 12, readonly: true, spellcheck: "false", hidden: true,
      "aria-label": "Python code that rebuilds this configuration with bparallel", "data-bp": "code",
    }),
  };
  const label = (text, control) => el("label", {}, [el("span", { text }), control]);
  const controls = el("div", { class: "bp-pg-controls" }, [
    el("div", { class: "bp-row" }, [
      label("preset", ui.preset), label("seed", ui.seed), label("density", ui.density), ui.load,
    ]),
    el("div", { class: "bp-row" }, [
      label("nodes", ui.nodes), label("heads", ui.heads), label("horizon T", ui.horizon), label("\u03b5", ui.eps),
    ]),
  ]);
  const nodes = el("details", { class: "bp-pg-nodes", open: true }, [
    el("summary", { text: "Node fidelities \u03c6\u2c7c and optimal times t\u2c7c (Definitions 3.3, 3.4, 3.9)" }),
    ui.nodeTable,
  ]);
  const exporter = el("div", { class: "bp-pg-export" }, [
    el("div", { class: "bp-row" }, [ui.exportButton, ui.linkButton, ui.exportStatus]), ui.code,
  ]);
  // the notes and warnings right under the controls, in the widget's first view (the
  // default preset's flag is explained before the grids that show it)
  root.append(controls, ui.warnings, ui.headBox, ui.plots, ui.legend, ui.summary, nodes, exporter);
  return ui;
}

/** Show the state's node count, head count, horizon and epsilon in the inputs. */
function syncGraphInputs(ui, state) {
  ui.nodes.value = state.n;
  ui.heads.value = state.heads.length;
  ui.horizon.value = state.horizon;
  ui.eps.value = state.eps;
}

/**
 * Read an integer/number input; mark it invalid (and return null) when out of range.
 * @param {HTMLInputElement} input
 * @param {(v: number) => boolean} valid
 */
function readNumber(input, valid) {
  const v = input.value.trim() === "" ? NaN : Number(input.value);
  const ok = Number.isFinite(v) && valid(v);
  input.setAttribute("aria-invalid", String(!ok));
  return ok ? v : null;
}

/** Connect the preset and graph-wide inputs, and the export buttons. */
function wireControls(ui, app, { load, rebuild, refresh }) {
  const loadPreset = () => {
    const name = ui.preset.value;
    if (!name) return;
    const options = {};
    if (name === "Random feedforward") {
      options.seed = readNumber(ui.seed, Number.isInteger) ?? 0;
      options.density = readNumber(ui.density, (v) => v >= 0 && v <= 1) ?? 0.3;
      options.n = app.state.n;
      options.heads = app.state.heads.length;
    }
    load(presetState(name, options), name);
  };
  ui.preset.addEventListener("change", loadPreset);
  ui.load.addEventListener("click", loadPreset);
  ui.seed.addEventListener("change", () => ui.preset.value === "Random feedforward" && loadPreset());
  ui.density.addEventListener("change", () => ui.preset.value === "Random feedforward" && loadPreset());

  ui.nodes.addEventListener("input", () => {
    const n = readNumber(ui.nodes, (v) => Number.isInteger(v) && v >= 2 && v <= MAX_NODES);
    if (n !== null && n !== app.state.n) {
      const notice = setNodeCount(app.state, n);
      rebuild();
      app.notice = notice; // said after the rebuild, which clears the previous one
      renderWarnings(ui, app);
    }
  });
  ui.heads.addEventListener("input", () => {
    const count = readNumber(ui.heads, (v) => Number.isInteger(v) && v >= MIN_HEADS && v <= MAX_HEADS);
    if (count !== null && count !== app.state.heads.length) {
      setHeadCount(app.state, count);
      rebuild();
    }
  });
  ui.horizon.addEventListener("input", () => {
    const T = readNumber(ui.horizon, (v) => Number.isInteger(v) && v >= 1 && v <= MAX_HORIZON);
    if (T !== null && T !== app.state.horizon) {
      app.state.horizon = T;
      refresh();
    }
  });
  // Out-of-range input is refused visibly: when the box is left (change), it reverts to the
  // value in use and a warning says why.
  const limits = [
    [ui.nodes, "nodes", `a whole number in 2..${MAX_NODES}`, () => app.state.n],
    [ui.heads, "heads", `a whole number in ${MIN_HEADS}..${MAX_HEADS}`, () => app.state.heads.length],
    [ui.horizon, "horizon T", `a whole number in 1..${MAX_HORIZON}`, () => app.state.horizon],
    [ui.eps, "epsilon", "a number strictly between 0 and 1", () => app.state.eps],
  ];
  for (const [input, name, rule, current] of limits) {
    input.addEventListener("change", () => {
      if (input.getAttribute("aria-invalid") !== "true") return;
      const bad = input.value.trim() === "" ? "an empty box" : `"${input.value}"`;
      input.value = String(current());
      input.setAttribute("aria-invalid", "false");
      app.inputError = `${name}: ${bad} was refused (it must be ${rule}); kept ${input.value}`;
      renderWarnings(ui, app);
    });
  }
  ui.eps.addEventListener("input", () => {
    const eps = readNumber(ui.eps, (v) => v > 0 && v < 1);
    if (eps !== null && eps !== app.state.eps) {
      app.state.eps = eps;
      refresh();
    }
  });

  ui.exportButton.addEventListener("click", () => {
    ui.code.hidden = false;
    ui.code.value = toPython(app.state);
    ui.code.focus();
    ui.code.select();
    copyText(ui, ui.code.value, "Python code");
  });
  ui.linkButton.addEventListener("click", () => {
    const url = window.location.href.split("#")[0] + HASH_KEY + encodeState(app.state);
    copyText(ui, url, "link");
  });
}

/** Copy to the clipboard where the page may (file:// pages often may not); say what happened. */
function copyText(ui, text, what) {
  const done = (ok) => {
    ui.exportStatus.textContent = ok
      ? `${what} copied to the clipboard`
      : `select and copy the ${what}${what === "link" ? " from the address bar" : " below"}`;
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
  } else {
    done(false);
  }
}

// ----------------------------------------------------------------------- head controls

/**
 * One card per head: its beta slider (raw weight and normalised value shown) and its
 * adjacency grid (row receives, column sends, as the book's matrices; the diagonal
 * self-loop is fixed).
 */
function buildHeads(ui, app, refresh) {
  const { state } = app;
  const labels = nodeLabels(state);
  ui.headBox.replaceChildren();
  ui.headCards = state.heads.map((_, h) => {
    const slider = el("input", {
      type: "range", min: 0, max: 1, step: 0.01, value: state.raw_beta[h],
      "aria-label": `raw weight of head ${h + 1} (beta ${h + 1} before normalising)`, "data-bp": `beta-${h}`,
    });
    const shown = el("output", { class: "bp-pg-beta", "data-bp": `beta-value-${h}` });
    slider.addEventListener("input", () => {
      try {
        setWeight(app.state, h, Number(slider.value));
      } catch {
        slider.value = app.state.raw_beta[h]; // every weight zero: refused
      }
      refresh();
    });
    const badge = el("span", { class: "bp-pg-badge", "data-bp": `badge-${h}` });
    const grid = buildGrid(state, h, labels, app, refresh);
    const card = el("fieldset", { class: "bp-pg-head", "data-bp": `head-${h}` }, [
      el("legend", {}, [`head ${h + 1} `, badge]),
      el("label", { class: "bp-pg-slider" }, [el("span", { text: `\u03b2${sub(h + 1)}` }), slider, shown]),
      grid,
    ]);
    ui.headBox.append(card);
    return { slider, shown, badge, grid };
  });
}

/**
 * The adjacency grid of head `h`, as the book's matrices: row i receives, column j sends
 * (`gridCells`); a button per edge `j -> i` with `aria-pressed`; arrow keys move between
 * buttons.
 */
function buildGrid(state, h, labels, app, refresh) {
  const n = state.n;
  const head = el("tr", {}, [
    el("th", { scope: "col", class: "bp-pg-corner", title: `${GRID_AXES}: the cell in row i, column j is the edge j \u2192 i`, text: "i\u2190j" }),
    ...labels.map((name) => el("th", { scope: "col", title: `${name} sends`, text: name })),
  ]);
  const rows = gridCells(state, h).map((cells, i) =>
    el("tr", {}, [
      el("th", { scope: "row", title: `${labels[i]} receives`, text: labels[i] }),
      ...cells.map((c) => el("td", {}, [gridCell(h, c, labels, app, refresh)])),
    ]),
  );
  // two heads side by side where they fit; never under 24 px (WCAG 2.2 target size)
  const cell = n > 5 ? "24px" : "max(24px, 1.5rem)";
  const table = el("table", {
    class: "bp-pg-grid", "data-bp": `grid-${h}`, style: `--bp-cell: ${cell}`,
    "aria-label": `head ${h + 1} edges: ${GRID_AXES}`,
  }, [
    el("caption", { text: `${GRID_AXES} (as W and \u0394)` }),
    el("thead", {}, [head]),
    el("tbody", {}, rows),
  ]);
  table.addEventListener("keydown", (event) => moveFocus(event, table, n));
  return table;
}

/** One grid cell of `gridCells`: the fixed self-loop, or a toggle button for edge `j -> i`. */
function gridCell(h, { i, j, self, on, backward }, labels, app, refresh) {
  const from = labels[j];
  const to = labels[i];
  if (self) {
    return el("span", { class: "bp-pg-cell bp-pg-self", title: `self-loop ${from} \u2192 ${to} (always present)`, text: "\u25cf" });
  }
  const button = el("button", {
    type: "button",
    class: backward ? "bp-pg-cell bp-pg-back" : "bp-pg-cell",
    "aria-pressed": String(on),
    "aria-label": `head ${h + 1}: edge ${from} \u2192 ${to}${backward ? " (backward)" : ""}`,
    title: `${from} \u2192 ${to}${backward ? ": backward, breaks Definition 2.1" : ""}`,
    "data-j": j,
    "data-i": i,
    "data-bp": `edge-${h}-${j}-${i}`,
  });
  button.addEventListener("click", () => {
    const now = toggleEdge(app.state, h, j, i);
    button.setAttribute("aria-pressed", String(now));
    refresh();
  });
  return button;
}

/**
 * Arrow keys move focus across a grid's buttons, stepping over the diagonal: left and
 * right change the column (the sender j), up and down the row (the receiver i).
 */
function moveFocus(event, table, n) {
  const steps = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
  const step = steps[event.key]; // [row, column] = [i, j]
  const from = event.target.closest("button[data-j]");
  if (!step || !from) return;
  let i = Number(from.dataset.i) + step[0];
  let j = Number(from.dataset.j) + step[1];
  if (j === i) {
    i += step[0];
    j += step[1];
  }
  if (j < 0 || i < 0 || j >= n || i >= n) return;
  const target = table.querySelector(`button[data-j="${j}"][data-i="${i}"]`);
  if (target) {
    event.preventDefault();
    target.focus();
  }
}

/** Update the normalised beta values and the feedforward badges of the head cards. */
function updateHeads(ui, app) {
  const { report, feedforward } = app.result;
  ui.headCards.forEach((card, h) => {
    card.slider.value = app.state.raw_beta[h];
    card.shown.textContent = betaText(app.state.raw_beta[h], report.beta[h]);
    card.shown.title = `slider (raw weight) ${app.state.raw_beta[h]}, normalised to sum 1 (Eq. 26): ${report.beta[h]}`;
    card.badge.textContent = feedforward[h] ? "" : "not feedforward";
    card.badge.hidden = feedforward[h];
  });
}

// ----------------------------------------------------------------------------- outputs

/**
 * Why the first view is flagged: the default preset is Example 3.13 as the paper prints it,
 * whose head 2 has a backward edge, so the paper's own head is not feedforward. A reader
 * should know that this is the example, not the widget. Empty for a state without that head.
 * @param {object} state a normalised state
 * @returns {string}
 */
export function presetNote(state) {
  const key = (edges) => JSON.stringify(edges.map(([j, i]) => `${j}>${i}`).sort());
  const paper = key(EXAMPLE_3_13_HEAD_2.paper);
  const h = state.heads.findIndex((edges) => key(edges) === paper);
  if (state.n !== 4 || h < 0) return "";
  const [u, v] = nodeLabels(state);
  return `Head ${h + 1} is Example 3.13's head 2 as the paper prints it: its edge ${v}->${u} `
    + "points backward, so the paper's own head is not feedforward and is flagged below. "
    + "That is the example, not the widget: the preset \"Example 3.13 (code)\" loads the "
    + "head 2 of the authors' code, which is feedforward.";
}

/** Warnings (not feedforward, extra sinks, unreadable link), each in its own line, after
 * the notes (what was just done; why the paper's Example 3.13 is flagged). */
function renderWarnings(ui, app) {
  const lines = [...(app.linkError ? [app.linkError] : []),
    ...(app.inputError ? [app.inputError] : []), ...app.result.warnings];
  const preset = presetNote(app.result.state);
  const notes = [
    ...(app.notice ? [el("p", { class: "bp-pg-note", "data-bp": "notice" }, [`\u2139 ${app.notice}`])] : []),
    ...(preset ? [el("p", { class: "bp-pg-note", "data-bp": "preset-note" }, [`\u2139 ${preset}`])] : []),
  ];
  ui.warnings.replaceChildren(
    ...notes,
    ...lines.map((text) => el("p", { class: "bp-pg-warning", "data-bp": "warning" }, [`\u26a0 ${text}`])),
  );
}

/** Panel geometry (SVG user units). */
const PANEL = { W: 208, H: 172, left: 36, right: 8, top: 22, bottom: 30 };

/**
 * Figure 3 style panels: one per head and one for the combination; legend below. The SVG
 * elements are built once per shape (heads, nodes, labels, horizon) and then only their
 * attributes change, so a live update stays well inside one frame.
 */
function renderPlots(ui, result) {
  const { state, report } = result;
  const labels = nodeLabels(state);
  const data = result.head_signals.map((signal, h) => ({
    title: `head ${h + 1}`, signal, phiMin: report.head_minimax[h], highlight: false,
  }));
  data.push({ title: "combined", signal: result.multi_signal, phiMin: report.multi_minimax, highlight: result.amplified });
  const shape = JSON.stringify([data.length, labels, state.horizon]);
  if (ui.plotShape !== shape) {
    ui.plotShape = shape;
    ui.panels = data.map((d) => buildPanel(d.title, labels, state.horizon));
    ui.plots.replaceChildren(...ui.panels.map((p) => p.chart));
    ui.legend.replaceChildren(
      ...labels.slice(0, -1).map((name, j) =>
        el("span", { class: "bp-pg-key" }, [el("i", { style: `background:${COLORS[j % 10]}` }), name]),
      ),
      el("span", { class: "bp-pg-key" }, [el("i", { class: "bp-pg-dash" }), "\u03c6_min (Eqs. 25, 29)"]),
    );
  }
  let top = 0;
  for (const { signal } of data) {
    for (let t = 1; t < signal.length; t++) for (let j = 0; j < state.n - 1; j++) top = Math.max(top, signal[t][j]);
  }
  const yMax = Math.min(100, niceCeil(100 * top * 1.04));
  data.forEach((d, k) => updatePanel(ui.panels[k], d, labels, state.horizon, yMax));
}

/** x (t = 0..T) and y (signal in [0, 1], axis up to yMax percent; the ticks and the
 * heading read fractions, as the tables do) in SVG units. */
function scales(horizon, yMax) {
  const { W, H, left, right, top, bottom } = PANEL;
  return {
    x: (t) => left + ((W - left - right) * t) / horizon,
    y: (v) => top + (H - top - bottom) * (1 - (100 * v) / yMax),
  };
}

/**
 * The fixed parts of one SVG panel (frame, t axis, labels) and empty slots for the parts
 * that change (y ticks, one curve per non-sink node, the dashed phi_min line, the title).
 */
function buildPanel(title, labels, horizon) {
  const { W, H, left, right, top, bottom } = PANEL;
  const { x } = scales(horizon, 100);
  const midY = top + (H - top - bottom) / 2;
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", class: "bp-pg-panel" });
  chart.append(svg("rect", { x: left, y: top, width: W - left - right, height: H - top - bottom, class: "bp-pg-frame" }));
  const ticks = [0, 1, 2, 3, 4].map(() => {
    const line = svg("line", { x1: left, x2: W - right, class: "bp-pg-gridline" });
    const text = textAt(left - 4, 0, "", "end");
    chart.append(line, text);
    return { line, text };
  });
  for (const t of [0, Math.round(horizon / 2), horizon]) chart.append(textAt(x(t), H - bottom + 12, String(t), "middle"));
  chart.append(textAt((left + W - right) / 2, H - 4, "t", "middle"));
  chart.append(textAt(12, midY, "signal at the sink", "middle", `rotate(-90 12 ${midY})`));
  const curves = labels.slice(0, -1).map((name, j) => {
    const line = svg("polyline", { stroke: COLORS[j % 10], class: "bp-pg-curve" });
    const tip = svg("title");
    tip.textContent = name;
    line.append(tip);
    chart.append(line);
    return line;
  });
  const phiMin = svg("line", { x1: left, x2: W - right, class: "bp-pg-phimin" });
  const heading = textAt(4, 14, "", "start");
  heading.classList.add("bp-pg-title");
  chart.append(phiMin, heading);
  const xs = Array.from({ length: horizon + 1 }, (_, t) => String(Math.round(10 * x(t)) / 10));
  return { chart, ticks, curves, phiMin, heading, xs, title };
}

/** Draw one panel's data: y ticks, curves (t = 1..T), phi_min, title and description. */
function updatePanel(panel, { title, signal, phiMin, highlight }, labels, horizon, yMax) {
  const { y } = scales(horizon, yMax);
  panel.ticks.forEach(({ line, text }, k) => {
    const percent = (yMax * k) / 4;
    const at = y(percent / 100);
    setAttrs(line, { y1: at, y2: at });
    setAttrs(text, { y: at + 3, text: fmtTick(percent / 100) });
  });
  panel.curves.forEach((line, j) => {
    const points = new Array(signal.length - 1);
    for (let t = 1; t < signal.length; t++) points[t - 1] = `${panel.xs[t]},${Math.round(10 * y(signal[t][j])) / 10}`;
    line.setAttribute("points", points.join(" "));
  });
  setAttrs(panel.phiMin, { y1: y(phiMin), y2: y(phiMin) });
  panel.heading.textContent = `${title}: \u03c6_min = ${fmt(phiMin, 5)}`; // as the table
  panel.chart.classList.toggle("bp-pg-amplified", highlight);
  panel.chart.setAttribute(
    "aria-label",
    `${title}: signal at the sink over time for nodes ${labels.slice(0, -1).join(", ")}; minimax fidelity ${fmt(phiMin)}`,
  );
}

/** A y tick, a fraction like the table's (0, 0.25, 0.5; 0.025 on a zoomed axis). */
function fmtTick(v) {
  return String(Number(v.toPrecision(3)));
}

function textAt(x, y, text, anchor, transform) {
  const node = svg("text", { x, y, "text-anchor": anchor, class: "bp-pg-axis" });
  if (transform) node.setAttribute("transform", transform);
  node.textContent = text;
  return node;
}

/** Per-head vs combined: beta, phi_min, mixing time, worst hitting time; amplification. */
function renderSummary(ui, result) {
  const { report, state } = result;
  const cell = (value, shown, key) => el("td", { "data-value": value === null ? "null" : String(value), "data-bp": key, text: shown });
  const mixing = mixingText;
  const hitting = hittingText;
  const head = el("tr", {}, [
    el("th", { scope: "col", text: "" }),
    el("th", { scope: "col", text: "\u03b2", title: "normalised weight (Eq. 26)" }),
    el("th", { scope: "col", text: "\u03c6_min", title: "minimax fidelity (Definitions 3.5, 3.10)" }),
    el("th", { scope: "col", text: `T_mix(${state.eps})`, title: `mixing time for \u03b5 = ${state.eps} (Definition 2.7); ${NEVER_MIXES}: some start never gets within \u03b5 of the sink (or not within 2^${CAP_LOG2} steps)` }),
    el("th", { scope: "col", text: "max E[\u03c4]", title: `expected hitting time of the sink from the worst start; ${NEVER_REACHES}: some start never reaches it` }),
  ]);
  const rows = state.heads.map((_, h) =>
    el("tr", { class: h === report.best_head ? "bp-pg-best" : "" }, [
      el("th", { scope: "row", text: `head ${h + 1}${h === report.best_head ? " (best, h*)" : ""}` }),
      el("td", { text: fmt(report.beta[h], 3) }),
      cell(report.head_minimax[h], fmt(report.head_minimax[h], 5), `minimax-${h}`),
      cell(result.head_mixing[h], mixing(result.head_mixing[h]), `mixing-${h}`),
      cell(result.head_hitting[h], hitting(result.head_hitting[h]), `hitting-${h}`),
    ]),
  );
  rows.push(
    el("tr", { class: "bp-pg-combined" }, [
      el("th", { scope: "row", text: "combined" }),
      el("td", { text: "\u2014" }),
      cell(report.multi_minimax, fmt(report.multi_minimax, 5), "minimax-multi"),
      cell(result.multi_mixing, mixing(result.multi_mixing), "mixing-multi"),
      cell(result.multi_hitting, hitting(result.multi_hitting), "hitting-multi"),
    ]),
  );
  const amp = el("p", {
    class: result.amplified ? "bp-pg-amp bp-pg-amp-yes" : "bp-pg-amp bp-pg-amp-no",
    "data-bp": "amplification",
    "data-value": String(report.amplification),
  }, [
    "amplification \u03c6_min(combined) \u2212 \u03c6_min(head ",
    String(report.best_head + 1),
    ") = ",
    el("strong", { text: signed(report.amplification) }),
    result.amplified ? ": the heads together beat the best head" : ": no amplification",
  ]);
  ui.summary.replaceChildren(
    el("div", { class: "bp-pg-scroll" }, [el("table", { class: "bp-pg-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)])]),
    amp,
  );
}

/** Node fidelity and optimal time per head and combined; each column's worst node bold. */
function renderNodeTable(ui, result) {
  const { report, state } = result;
  const labels = nodeLabels(state);
  const columns = state.heads.map((_, h) => ({ name: `head ${h + 1}`, phi: report.node_phi[h], t: report.node_t[h], min: report.head_minimax[h] }));
  columns.push({ name: "combined", phi: report.multi_phi, t: report.multi_t, min: report.multi_minimax });
  const head = el("tr", {}, [
    el("th", { scope: "col", text: "node" }),
    ...columns.flatMap((c) => [el("th", { scope: "col", text: `${c.name} \u03c6` }), el("th", { scope: "col", text: `${c.name} t` })]),
  ]);
  const rows = labels.slice(0, -1).map((name, j) =>
    el("tr", {}, [
      el("th", { scope: "row", text: name }),
      ...columns.flatMap((c) => [
        el("td", { class: c.phi[j] === c.min ? "bp-pg-worst" : "", "data-value": String(c.phi[j]), text: fmt(c.phi[j]) }),
        el("td", { text: String(c.t[j]) }),
      ]),
    ]),
  );
  ui.nodeTable.replaceChildren(el("table", { class: "bp-pg-table", "data-bp": "node-fidelities" }, [el("thead", {}, [head]), el("tbody", {}, rows)]));
}
