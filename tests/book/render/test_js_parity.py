"""The browser playground's JavaScript (`bparallel/book/render/js/`: toydag, random, state,
python) agrees with `bparallel`.

One Node process computes every configuration (presets and hundreds of seeded random head
sets, some not feedforward, some without a unique sink, with varied beta, horizon and eps);
every quantity of `bparallel.book.playground.compute` is compared with it to 1e-12: signals,
node fidelities and optimal times, minimax fidelities per head and combined, best head,
amplification, mixing times, hitting times, warnings, and the exported Python code.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bparallel.book import playground as pg
from bparallel.book.playground_link import config_of, decode_state, encode_state
from bparallel.book.render.js_playground import inline_script, playground_html
from bparallel.graphs import edges_from_adjacency, random_feedforward_adjacency

ROOT = Path(__file__).resolve().parents[3]
JS = ROOT / "bparallel" / "book" / "render" / "js"
#: The playground's modules below its interface: mathematics, random numbers, state and
#: links, Python export. The drivers import them as one namespace ``t``.
MODULES = [JS / f"{name}.mjs" for name in ("toydag", "random", "state", "python")]
MODULE_URLS = json.dumps([m.as_uri() for m in MODULES])
ATOL = 1e-12
NUM_RANDOM = 400

DRIVER = """
import { readFileSync } from "node:fs";
const t = Object.assign({}, ...(await Promise.all(MODULE_URLS.map((u) => import(u)))));
const configs = JSON.parse(readFileSync(0, "utf8"));
const out = configs.map((config) => {
  const result = t.compute(config);
  const link = t.encodeState(result.state);
  return {
    result,
    python: t.toPython(result.state),
    link,
    link_round_trip: JSON.stringify(t.decodeState(link)) === JSON.stringify(result.state),
  };
});
process.stdout.write(JSON.stringify(out));
"""


def node_json(code: str, payload: Any, *, timeout: float = 120) -> Any:
    """Run the module ``code`` (its ``MODULE_URLS`` filled in with the playground's modules)
    in one Node process, ``payload`` as JSON on its standard input; what it prints, as JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js >= 18) is not on PATH: run `make setup`")
    proc = subprocess.run([node, "--input-type=module", "-e",
                           code.replace("MODULE_URLS", MODULE_URLS)],
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, f"node failed:\n{proc.stderr}"
    return json.loads(proc.stdout)


def run_node(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compute every configuration with the playground's modules in one Node process."""
    return node_json(DRIVER, configs, timeout=300)


# ------------------------------------------------------------------------- configurations
def preset_configs() -> list[dict[str, Any]]:
    """The Python presets (Random feedforward: several numpy seeds, sizes and densities)."""
    states = [pg.from_preset(name) for name in pg.PRESETS if name != "Random feedforward"]
    for seed in range(5):
        states.append(pg.from_preset("Random feedforward", seed=seed, n=4 + 2 * seed,
                                     heads=2 + seed % 3, density=0.2 + 0.15 * seed))
    return [config_of(s) for s in states]


def random_configs(count: int, seed: int = 2507) -> list[dict[str, Any]]:
    """Seeded random head sets from `random_feedforward_adjacency`, then perturbed: about a
    fifth get backward edges (sometimes out of the sink), about a tenth lose a node's forward
    edges (an extra sink); weights may be zero; horizons from 1 to 200; eps in (0, 1)."""
    rng = np.random.default_rng(seed)
    configs = []
    for k in range(count):
        n = int(rng.integers(2, pg.MAX_NODES + 1))
        num_heads = int(rng.integers(pg.MIN_HEADS, pg.MAX_HEADS + 1))
        A = random_feedforward_adjacency(num_heads, n, float(rng.uniform(0.05, 0.95)), rng)
        heads = [set(edges_from_adjacency(a)) for a in A]
        if rng.random() < 0.2 and n > 2:  # backward edges: not feedforward (Definition 2.1)
            h = int(rng.integers(num_heads))
            for _ in range(int(rng.integers(1, 4))):
                j = int(rng.integers(1, n))
                heads[h].add((j, int(rng.integers(0, j))))
        if rng.random() < 0.1 and n > 2:  # a node that passes nothing on: an extra sink
            h, v = int(rng.integers(num_heads)), int(rng.integers(0, n - 1))
            heads[h] = {(j, i) for j, i in heads[h] if j != v}
        raw = rng.choice([0.0, 0.01, 0.1, 0.25, 0.5, 0.73, 1.0], size=num_heads)
        if raw.sum() == 0:
            raw[0] = 1.0
        if k % 7 == 0:
            raw = rng.random(num_heads) + 0.01
        horizon = int(rng.choice([1, 2, 3, 5, 10, 20, 50, 100, 200]))
        eps = float(rng.choice([0.25, 0.5, 0.125, 0.01, 0.99, float(rng.uniform(0.01, 0.99))]))
        labels = None
        if k % 11 == 0:
            labels = [f"x{j}" for j in range(n - 1)] + ["tau"]
        state = pg.PlaygroundState(n=n, heads=heads, raw_beta=raw.tolist(), horizon=horizon,
                                   eps=eps, labels=labels)
        configs.append(config_of(state))
    return configs


# ----------------------------------------------------------------------------- comparison
def close(a: Any, b: Any, atol: float = ATOL) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol))


def hitting_close(js: float | None, py: float | None) -> bool:
    """Equal, or both infinite (None); values to 1e-12 relative (they reach the hundreds)."""
    if js is None or py is None:
        return js is None and py is None
    return abs(js - py) <= ATOL * max(1.0, abs(py))


def differences(config: dict[str, Any], js: dict[str, Any]) -> list[str]:
    """Every quantity where JavaScript and Python disagree (empty: they agree)."""
    state = pg.PlaygroundState(**config)
    py = pg.compute(state)
    rep, jr, jrep = py.report, js["result"], js["result"]["report"]
    bad = []

    def check(name: str, ok: bool) -> None:
        if not ok:
            bad.append(name)

    check("head_signals", close(jr["head_signals"], py.head_signals))
    check("multi_signal", close(jr["multi_signal"], py.multi_signal))
    check("beta", close(jrep["beta"], state.beta))
    check("node_phi", close(jrep["node_phi"], rep.node_phi))
    check("node_t", jrep["node_t"] == rep.node_t.tolist())
    check("multi_phi", close(jrep["multi_phi"], rep.multi_phi))
    check("multi_t", jrep["multi_t"] == rep.multi_t.tolist())
    check("head_minimax", close(jrep["head_minimax"], rep.head_minimax))
    check("multi_minimax", close(jrep["multi_minimax"], rep.multi_minimax))
    check("best_head_minimax", close(jrep["best_head_minimax"], rep.best_head_minimax))
    # the best head is the argmax; heads tied to within 1e-12 may be told apart by rounding
    tied = abs(rep.head_minimax[jrep["best_head"]] - rep.best_head_minimax) <= ATOL
    check("best_head", jrep["best_head"] == rep.best_head or tied)
    check("amplification", close(jrep["amplification"], rep.amplification))
    check("amplified", jr["amplified"] == py.amplified)
    check("head_mixing", jr["head_mixing"] == py.head_mixing)
    check("multi_mixing", jr["multi_mixing"] == py.multi_mixing)
    check("head_hitting", all(hitting_close(a, b) for a, b in
                              zip(jr["head_hitting"], py.head_hitting, strict=True)))
    check("multi_hitting", hitting_close(jr["multi_hitting"], py.multi_hitting))
    check("warnings", jr["warnings"] == py.warnings)
    check("to_python", js["python"] == pg.to_python(state))
    check("link_round_trip", js["link_round_trip"])
    check("link", js["link"] == encode_state(state) and decode_state(js["link"]) == state)
    return bad


@pytest.fixture(scope="module")
def parity() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    configs = preset_configs() + random_configs(NUM_RANDOM)
    return list(zip(configs, run_node(configs), strict=True))


def test_presets_agree(parity):
    presets = parity[: len(preset_configs())]
    failures = {i: d for i, (c, js) in enumerate(presets) if (d := differences(c, js))}
    assert not failures, f"JavaScript and Python disagree on presets: {failures}"


def test_random_head_sets_agree(parity):
    failures = [(c, d) for c, js in parity if (d := differences(c, js))]
    assert not failures, (
        f"{len(failures)} of {len(parity)} configurations disagree; first: "
        f"{failures[0][1]} for {json.dumps(failures[0][0])}"
    )


def test_random_sample_covers_the_interesting_cases(parity):
    """The sample must include what the comparison is for: non-feedforward heads, extra
    sinks, heads that never mix and infinite hitting times, amplification of both signs."""
    results = [js["result"] for _, js in parity]
    warnings = [w for r in results for w in r["warnings"]]
    assert any("not feedforward" in w for w in warnings)
    assert any("no unique sink" in w for w in warnings)
    assert any(m is None for r in results for m in r["head_mixing"])
    assert any(h is None for r in results for h in r["head_hitting"])
    assert any(r["amplified"] for r in results)
    assert any(r["report"]["amplification"] < -1e-6 for r in results)
    assert any(r["report"]["best_head"] > 0 for r in results)


def test_example_3_13_values_in_javascript(parity):
    """Closed forms, independently of Python: 3/8 per head (paper), 5/12 combined (code)."""
    by_labels = [(c, js["result"]) for c, js in parity if c["labels"] == ["u", "v", "w", "tau"]]
    paper, code = by_labels[0][1], by_labels[1][1]
    assert paper["report"]["head_minimax"] == [0.375, 0.375]
    assert abs(code["report"]["multi_minimax"] - 5 / 12) < 1e-12
    assert paper["warnings"] == [
        "head 2 is not feedforward (Definition 2.1): backward edge(s) v->u"
    ]


def test_embedded_snippet_is_one_offline_module():
    """The book's snippet: one inline module that Node accepts, nothing fetched."""
    html = playground_html()
    assert html.count("<script") == 1 and '<script type="module">' in html
    for needle in ("src=", "href=", "@import", "url(", "fetch(", "import(", "XMLHttpRequest"):
        assert needle not in html, f"the playground snippet would fetch something: {needle}"
    urls = set(re.findall(r"https?://[^\s\"'`)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # an XML namespace, never fetched
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js >= 18) is not on PATH: run `make setup`")
    proc = subprocess.run([node, "--input-type=module", "--check"], input=inline_script(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr


FORMAT_DRIVER = """
import { readFileSync } from "node:fs";
const t = Object.assign({}, ...(await Promise.all(MODULE_URLS.map((u) => import(u)))));
const values = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(values.map((x) => [
  t.pyFormatFixed(x, 2), t.pyFormatFixed(x, 3), t.pyFormatFixed(x, 4), t.pyFormatFixed(x, 5),
  t.pyFormatG(x, 6),
])));
"""


def test_number_formatting_matches_python():
    """Displayed numbers and exported code round as Python does, exact ties included
    (0.03125 -> '0.0312', where JavaScript's toFixed gives '0.0313')."""
    rng = np.random.default_rng(3)
    ties = [k / 2**m for m in range(1, 12) for k in range(1, 2**m, max(1, 2 ** (m - 4)))]
    values = ties + [0.0, 1.0, 5 / 12, 0.49998998641967773, 2**-10, 1e-5, 1.5e-7, 123456.5,
                     1234567.0] + rng.random(200).tolist() + (rng.random(50) * 300).tolist()
    for x, got in zip(values, node_json(FORMAT_DRIVER, values), strict=True):
        assert got == [f"{x:.2f}", f"{x:.3f}", f"{x:.4f}", f"{x:.5f}", f"{x:.6g}"], x


def test_python_link_helpers():
    """`bparallel.book.render.js_playground` reads and writes the page's #pg= links (also
    from a URL)."""
    from bparallel.book.playground_link import fragment

    state = pg.from_preset("Example 3.13 (code)")
    link = fragment(state)
    assert link == "#pg=v=1;n=4;T=20;e=0.25;b=0.5,0.5;h=2480,4c80;l=u,v,w,tau"
    assert decode_state("file:///book/notebooks/05_playground.html" + link) == state
    for bad in ("v=2;n=4", "v=1;n=4;T=20;e=0.25;b=1,1;h=24,4c80", "v=1;n=40;T=1;e=0.5;b=1,1;h=,"):
        with pytest.raises(ValueError):
            decode_state(bad)


RESIZE_DRIVER = """
import { readFileSync } from "node:fs";
const t = Object.assign({}, ...(await Promise.all(MODULE_URLS.map((u) => import(u)))));
const jobs = JSON.parse(readFileSync(0, "utf8"));
const out = jobs.map(([config, sizes]) => {
  const state = t.normalizeState(config);
  const notes = sizes.map((n) => t.setNodeCount(state, n));
  return { state: t.normalizeState(state), notes };
});
process.stdout.write(JSON.stringify(out));
"""


def test_node_count_changes_agree_with_python():
    """`setNodeCount` (JavaScript) and `PlaygroundState.set_n` (Python) give the same graphs
    over chains of resizes of random head sets, and the JavaScript says what it did."""
    rng = np.random.default_rng(24)
    jobs = []
    for config in random_configs(60, seed=24):
        sizes = [int(x) for x in rng.integers(2, pg.MAX_NODES + 1, size=3)]
        jobs.append((config, sizes))
    for (config, sizes), js in zip(jobs, node_json(RESIZE_DRIVER, jobs), strict=True):
        state = pg.PlaygroundState(**config)
        old = state.n
        for n, note in zip(sizes, js["notes"], strict=True):
            state.set_n(n)
            if n == old:
                assert note == ""
            else:
                assert note.startswith(f"Nodes {old} \u2192 {n}: the sink \u03c4 stays last")
            old = n
        assert pg.PlaygroundState(**js["state"]) == state, (config, sizes)


# ------------------------------------------------------------- the page's display conventions
PLAYGROUND = ROOT / "bparallel" / "book" / "render" / "js" / "playground.mjs"

CONVENTIONS_DRIVER = """
import { readFileSync } from "node:fs";
const t = Object.assign({}, ...(await Promise.all(MODULE_URLS.map((u) => import(u)))));
const p = await import(PLAYGROUND_URL);
const jobs = JSON.parse(readFileSync(0, "utf8"));
const summary = (config) => {
  const r = t.compute(config);
  return [...r.head_mixing, r.multi_mixing].map(p.mixingText)
    .concat([...r.head_hitting, r.multi_hitting].map(p.hittingText));
};
process.stdout.write(JSON.stringify({
  grids: jobs.configs.map((config) => {
    const state = t.normalizeState(config);
    return state.heads.map((_, h) => p.gridCells(state, h));
  }),
  summaries: jobs.configs.map(summary),
  beta_labels: jobs.beta.map(([raw, normalised]) => p.betaText(raw, normalised)),
  constants: { NEVER_MIXES: p.NEVER_MIXES, NEVER_REACHES: p.NEVER_REACHES,
               GRID_AXES: p.GRID_AXES },
}));
"""


@pytest.fixture(scope="module")
def conventions() -> dict[str, Any]:
    """The interface helpers of playground.mjs (no DOM: Node imports the module) on the
    presets and random head sets, and beta labels of random slider settings."""
    configs = preset_configs() + random_configs(60, seed=36)
    rng = np.random.default_rng(36)
    states = [pg.PlaygroundState(n=3, heads=[set(), set()], raw_beta=raw.tolist())
              for raw in np.round(rng.random((40, 2)), 2) + 0.01]
    beta = [(s.raw_beta[0], float(s.beta[0])) for s in states] + [(0.8, 0.8 / 1.3)]
    code = CONVENTIONS_DRIVER.replace("PLAYGROUND_URL", json.dumps(PLAYGROUND.as_uri()))
    return {"configs": configs, "beta": beta,
            **node_json(code, {"configs": configs, "beta": beta})}


def test_grid_reads_as_the_books_matrices(conventions):
    """Each head's grid is laid out as `graphs.adjacency_matrix` (and so as W and Delta): the
    cell in row i and column j is the edge j -> i, present exactly where A[i, j] = 1, the
    self-loop on the diagonal, backward edges (j > i) above it."""
    from bparallel.graphs import adjacency_matrix, walk_matrix

    for config, grids in zip(conventions["configs"], conventions["grids"], strict=True):
        state = pg.PlaygroundState(**config)
        for edges, cells in zip(state.edge_lists(), grids, strict=True):
            A = adjacency_matrix(edges, state.n)
            on = np.array([[c["on"] for c in row] for row in cells], dtype=float)
            assert np.array_equal(on, A), (config, edges)
            assert np.array_equal(on > 0, walk_matrix(edges, state.n) > 0)
            for i, row in enumerate(cells):
                for j, c in enumerate(row):
                    assert (c["i"], c["j"]) == (i, j)
                    assert c["self"] == (i == j) and c["backward"] == (j > i)
    # Example 3.13 as printed: head 2's backward edge v -> u sits in row u, column v
    paper = conventions["grids"][1][1]
    assert paper[0][1] == {"i": 0, "j": 1, "self": False, "on": True, "backward": True}
    assert pg.GRID_AXES == conventions["constants"]["GRID_AXES"] == "row receives, column sends"


def test_beta_label_shows_the_slider_and_the_normalised_weight(conventions):
    labels = conventions["beta_labels"]
    assert labels[-1] == "0.80 (normalised 0.615)"  # the slider at 0.8 beside a head at 0.5
    for (raw, normalised), label in zip(conventions["beta"], labels, strict=True):
        assert label == f"{raw:.2f} (normalised {normalised:.3f})"


def test_never_mixes_reads_as_in_the_static_tables(conventions):
    """A walk that never mixes, and a sink that a start never reaches, read in the page as in
    `bparallel.book.playground.summary_table` (what the static tables print)."""
    constants = conventions["constants"]
    assert constants["NEVER_MIXES"] == pg.NEVER_MIXES == "never mixes (\u221e)"
    assert constants["NEVER_REACHES"] == pg.NEVER_REACHES
    for config, shown in zip(conventions["configs"], conventions["summaries"], strict=True):
        rows = pg.summary_table(pg.compute(pg.PlaygroundState(**config)))
        mix = [str(r[next(k for k in r if k.startswith("T_mix"))]) for r in rows]
        hit = [r["max_j E[τ_j]"] for r in rows]
        hit = [h if isinstance(h, str) else f"{h:.3f}" for h in hit]
        assert shown == mix + hit, config
    assert any(pg.NEVER_MIXES in s for s in conventions["summaries"])  # Example 3.8 is there


def test_style_block_puts_the_shared_stylesheet_first_and_refuses_an_end_tag(tmp_path,
                                                                              monkeypatch):
    """Both widgets' <style>: widget.css, then their own sheet; a sheet that would close the
    element is refused, naming it."""
    from bparallel.book.render import js_playground as jp

    html = playground_html()
    shared, own = (jp.JS_DIR / "widget.css").read_text(), (jp.JS_DIR / "playground.css").read_text()
    assert html.startswith(f"<style>\n{shared}\n{own}</style>\n")
    assert 'class="bp-widget bp-pg"' in html
    (tmp_path / "widget.css").write_text(".bp-widget { color: red; }\n")
    (tmp_path / "bad.css").write_text("a { } </STYLE><script>alert(1)</script>\n")
    monkeypatch.setattr(jp, "JS_DIR", tmp_path)
    assert jp.style_block("widget.css").count(".bp-widget") == 2
    with pytest.raises(ValueError, match=r"stylesheet='bad\.css'.*'</style'"):
        jp.style_block("bad.css")
