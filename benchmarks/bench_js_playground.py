"""How long one live update of the browser playground takes, next to the 16 ms frame budget.

The largest configuration the playground allows, 12 nodes and 4 heads, at horizon 200:

- in headless Chromium, one recompute + redraw (``refresh``: `toydag.mjs`'s ``compute``,
  then every output redrawn and the layout forced), and ``compute`` alone;
- in Python, ``bparallel.book.playground.compute`` for the same state.

Medians over repeats, side by side. Usage::

    .venv/bin/python benchmarks/bench_js_playground.py [--repeats 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bparallel.book import playground as pg
from bparallel.book.playground_link import config_of
from bparallel.book.render.js_playground import playground_html
from bparallel.graphs import edges_from_adjacency, random_feedforward_adjacency

FRAME_MS = 16.0
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

TIME_JS = """([repeats]) => {
  const app = document.getElementById("bp-playground").bpPlayground;
  const root = document.getElementById("bp-playground");
  const refresh = [], compute = [];
  for (let r = 0; r < repeats; r++) {
    let t0 = performance.now();
    app.refresh();
    void root.getBoundingClientRect().height;  // force style and layout
    refresh.push(performance.now() - t0);
    t0 = performance.now();
    app.compute(app.state);
    compute.push(performance.now() - t0);
  }
  return {refresh, compute, n: app.state.n, heads: app.state.heads.length,
          horizon: app.state.horizon};
}"""


def big_state(seed: int) -> pg.PlaygroundState:
    """12 nodes, 4 random feedforward heads (density 0.3), horizon 200, unequal weights."""
    A = random_feedforward_adjacency(4, pg.MAX_NODES, 0.3, seed)
    return pg.PlaygroundState(
        n=pg.MAX_NODES,
        heads=[set(edges_from_adjacency(a)) for a in A],
        raw_beta=[1.0, 0.5, 0.25, 0.75],
        horizon=200,
        eps=0.25,
    )


def time_browser(state: pg.PlaygroundState, repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "bench.html"
        page_path.write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>bench</title></head>"
            f"<body>{playground_html(use_hash=False, initial=config_of(state))}</body></html>",
            encoding="utf-8",
        )
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else r.abort())
            page.goto(page_path.as_uri())
            page.wait_for_selector('[data-bp="minimax-multi"]')
            page.evaluate(TIME_JS, [5])  # warm up the JIT
            out = page.evaluate(TIME_JS, [repeats])
            browser.close()
    return out


def time_python(state: pg.PlaygroundState, repeats: int) -> list[float]:
    pg.compute(state)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        pg.compute(state)
        times.append(1e3 * (time.perf_counter() - t0))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    state = big_state(args.seed)
    js = time_browser(state, args.repeats)
    assert (js["n"], js["heads"], js["horizon"]) == (12, 4, 200), js
    py = time_python(state, args.repeats)
    refresh, compute = statistics.median(js["refresh"]), statistics.median(js["compute"])
    python = statistics.median(py)
    print(f"toy-DAG playground: {state.n} nodes, {state.num_heads} heads, horizon "
          f"{state.horizon} (seed {args.seed}); medians over {args.repeats} repeats")
    print(f"{'':42s}{'ms':>9s}{'/ 16 ms frame':>15s}")
    print(f"{'JS recompute + redraw (Chromium)':42s}{refresh:9.2f}{refresh / FRAME_MS:15.2f}")
    print(f"{'JS compute only (Chromium)':42s}{compute:9.2f}{compute / FRAME_MS:15.2f}")
    print(f"{'Python bparallel.book.playground.compute':42s}{python:9.2f}{python / FRAME_MS:15.2f}")
    print(f"Python compute / JS compute: {python / compute:.1f}x")


if __name__ == "__main__":
    main()
