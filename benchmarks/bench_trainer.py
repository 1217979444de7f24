"""The training page against the package: learning steps side by side, and its speed.

For each head count of the default comparison (fixed width, 1 and 4 heads, learning rate and
budget of the ``induction-tiny`` profile) and each of ``--seeds`` seeds:

- the package trains the profile's model (:func:`bparallel.transformer.train.train`, torch,
  its own numpy batches) and its learning step is
  :func:`bparallel.transformer.learning.steps_to_threshold` of its curve;
- the training page (``bparallel/book/render/js_trainer.py``), opened from ``file://`` in
  headless Chromium with the vendored TensorFlow.js, trains the same configuration alone and
  reports its learning step (the same rule), its milliseconds a step and the wall time from
  Train to the learning step's confirmation (the time to the threshold).

Printed side by side: the median learning step of each (a run that never learns counts as
later than every other), whether the ordering of the head counts agrees with chapter 12's
(:func:`bparallel.book.train_it_yourself.ordering_facts`, medians and seed by seed), the
page's step time and, per head count, a ``VERDICT`` line: the median time to the threshold
against the 60 s goal;
and, in Node, one step's time on TensorFlow.js's CPU and WASM backends (the speed-up). The
record goes to ``benchmarks/records/bench_trainer.json`` (read by chapter 15). Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_trainer.py [--seeds 5] [--heads 1 4]
        [--parts package page node]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bparallel.book.render.js_trainer import trainer_html
from bparallel.book.train_it_yourself import GOAL_S, agreement_words, ordering_facts
from bparallel.transformer.design import get_profile
from bparallel.transformer.runs import Run
from bparallel.transformer.train import train

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "records" / "bench_trainer.json"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PROFILE = "induction-tiny"
PARTS = ("package", "page", "node")

NODE_STEP = """
import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/package.json");
const tf = require("@tensorflow/tfjs");
require("@tensorflow/tfjs-backend-wasm");
const t = await import(TINYTRAIN);
const out = {};
for (const backend of ["wasm", "cpu"]) {
  await tf.setBackend(backend); await tf.ready();
  for (const heads of HEADS) {
    const run = t.makeRun(tf, { arm: "width", heads, seed: 1, lr: 3e-3 }, { evalEvery: 1e9 });
    run.update(); run.update();  // warm-up
    const t0 = Date.now();
    for (let i = 0; i < STEPS; i++) run.update();
    out[`${backend}.h${heads}`] = (Date.now() - t0) / STEPS;
    run.dispose();
  }
}
console.log("BP_RESULT" + JSON.stringify(out));
"""


def median_step(steps: list[int | None], budget: int) -> float:
    """Median learning step, a run that never learned counted as later than the budget."""
    return float(statistics.median(budget + 1 if s is None else s for s in steps))


def package_runs(heads: int, seeds: list[int]) -> list[int | None]:
    out = []
    for seed in seeds:
        result = train(Run("induction", heads, PROFILE, seed=seed), progress=False)
        out.append(result.summary["steps_to_threshold"])  # steps_to_threshold, the book's rule
    return out


def page_runs(heads: int, seeds: list[int], budget: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        (site / "notebooks").mkdir()
        shutil.copytree(ROOT / "book" / "_vendor" / "tfjs", site / "_static" / "tfjs")
        page_file = site / "notebooks" / "train.html"
        page_file.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body>"
                             + trainer_html(steps=budget) + "</body></html>", encoding="utf-8")
        out = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for seed in seeds:
                page = browser.new_page()
                page.goto(page_file.as_uri())
                page.wait_for_selector("#bp-trainer[data-bp-state=ready]", timeout=120_000)
                backend = page.get_attribute("#bp-trainer", "data-bp-backend")
                page.fill("[data-bp='heads A']", str(heads))
                page.fill("[data-bp='heads B']", "")
                page.fill("[data-bp=seed]", str(seed))
                t0 = time.perf_counter()
                page.click("[data-bp=train]")
                page.wait_for_selector("#bp-trainer[data-bp-state=done]", timeout=3_600_000)
                wall = time.perf_counter() - t0
                run = page.evaluate("() => { const r = document.getElementById('bp-trainer')"
                                    ".bpTrainer.runs[0]; return {step: r.step, learned: "
                                    "r.learnedAt, ms: r.ms}; }")
                out.append({"seed": seed, "learned": run["learned"], "steps": run["step"],
                            "ms_per_step": run["ms"] / run["step"], "wall_s": wall,
                            "backend": backend})
                page.close()
            browser.close()
    return out


def node_step_ms(heads: list[int], steps: int = 40) -> dict[str, float]:
    url = json.dumps((ROOT / "bparallel" / "book" / "render" / "js" / "tinytrain.mjs").as_uri())
    code = (NODE_STEP.replace("TINYTRAIN", url).replace("HEADS", json.dumps(heads))
            .replace("STEPS", str(steps)))
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "step.mjs"
        driver.write_text(code)
        done = subprocess.run(["node", str(driver)], cwd=ROOT, capture_output=True, text=True,
                              check=True, timeout=1800)
    line = next(x for x in done.stdout.splitlines() if x.startswith("BP_RESULT"))
    return json.loads(line.removeprefix("BP_RESULT"))


def save(record: dict) -> None:
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--heads", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                    help="what to run (default all); the record keeps the other parts' numbers")
    ap.add_argument("--no-record", action="store_true", help="print only")
    args = ap.parse_args()
    if args.seeds < 1:
        raise SystemExit("--seeds must be at least 1")
    seeds = list(range(1, args.seeds + 1))
    budget = get_profile(PROFILE).steps
    record: dict = {"per_heads": {}}
    if RECORD.is_file() and set(args.parts) != set(PARTS):
        record = json.loads(RECORD.read_text(encoding="utf-8"))
        if record.get("seeds") != seeds or record.get("heads") != args.heads:
            record = {"per_heads": {}}
    record.update({"date": datetime.now(UTC).strftime("%Y-%m-%d"), "seeds": seeds,
                   "budget": budget, "heads": args.heads})
    for heads in args.heads:
        row = record["per_heads"].setdefault(str(heads), {})
        if "package" in args.parts:
            row["package_steps"] = package_runs(heads, seeds)
            row["package_median"] = median_step(row["package_steps"], budget)
            print(f"{heads} heads, package: learning steps {row['package_steps']}, median "
                  f"{row['package_median']:.0f}", flush=True)
        if "page" in args.parts:
            js = page_runs(heads, seeds, budget)
            walls = [r["wall_s"] for r in js if r["learned"] is not None]
            row.update({
                "page_steps": [r["learned"] for r in js],
                "page_median": median_step([r["learned"] for r in js], budget),
                "page_ms_per_step": statistics.median(r["ms_per_step"] for r in js),
                "page_median_s": statistics.median(walls) if walls else None,
                "page_backend": js[0]["backend"], "page": js,
            })
            secs = "never" if row["page_median_s"] is None else f"{row['page_median_s']:.1f} s"
            print(f"{heads} heads, page ({row['page_backend']}): learning steps "
                  f"{row['page_steps']}, median {row['page_median']:.0f}; "
                  f"{row['page_ms_per_step']:.0f} ms a step; median time to the threshold "
                  f"{secs} (goal: under {GOAL_S:.0f} s)", flush=True)
        if not args.no_record:  # as it goes: a long run interrupted keeps what it measured
            save(record)
    for key in ("package_median", "page_median"):
        order = [record["per_heads"][str(h)].get(key) for h in args.heads]
        if None not in order:
            pairs = zip(order, order[1:], strict=False)
            record[f"{key}_increases_with_heads"] = all(a < b for a, b in pairs)
            print(f"{key}: grows with the head count: {record[f'{key}_increases_with_heads']}")
    if not args.no_record:
        save(record)
    with tempfile.TemporaryDirectory() as tmp:  # as chapter 15 states it, from this run
        written = Path(tmp) / "bench_trainer.json"
        written.write_text(json.dumps(record), encoding="utf-8")
        facts = ordering_facts(written)
        for side in ("page", "package"):
            if f"bench.{side}.agrees" in facts:
                print(f"ordering of {facts['bench.heads.fewer']} and {facts['bench.heads.more']}"
                      f" heads, {side}: medians {facts[f'bench.{side}.fewer']:.0f} and "
                      f"{facts[f'bench.{side}.more']:.0f} (chapter 12: "
                      f"{facts['bench.ch12.fewer']:.0f} and {facts['bench.ch12.more']:.0f}): "
                      f"{agreement_words(facts, side)}; seed by seed, fewer heads first in "
                      f"{facts[f'bench.{side}.seeds.fewer_first']}, same evaluation in "
                      f"{facts[f'bench.{side}.seeds.same']}, later in "
                      f"{facts[f'bench.{side}.seeds.more_first']}", flush=True)
    for h in args.heads:  # the 60 s verdict of each configuration
        row = record["per_heads"][str(h)]
        if "page_median_s" in row:
            secs = row["page_median_s"]
            verdict = ("never learned" if secs is None else
                       f"{secs:.1f} s: {'meets' if secs < GOAL_S else 'misses'} the {GOAL_S:.0f} s "
                       "goal")
            print(f"VERDICT fixed width, {h} head(s), page on {row['page_backend']}: median time "
                  f"to the threshold over {len(seeds)} seeds {verdict}", flush=True)
    if "node" in args.parts:
        record["node_step_ms"] = node_step_ms(args.heads)
        for h in args.heads:
            w, c = record["node_step_ms"][f"wasm.h{h}"], record["node_step_ms"][f"cpu.h{h}"]
            print(f"Node, {h} heads: WASM {w:.0f} ms a step, CPU {c:.0f} ms: {c / w:.1f}x")
    if not args.no_record:
        save(record)
        print(f"record: {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
