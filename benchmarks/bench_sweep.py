"""Models per hour of the sweep's local executor: two jobs of one thread against one job of
two threads, side by side in one run (not a test).

Each variant trains the same small grid with ``python -m bparallel sweep``'s own code
(:func:`bparallel.transformer.sweep.run_sweep`, submitit's local executor, a fresh runs and models
folder each time): every model is a real job, a process that imports torch, trains,
evaluates ``--heldout`` held-out sequences and ships the weights. The profile is the
paper's model and data shape with fewer sequences and epochs, so that a run takes a minute
or two; the ratio, not the absolute rate, is what carries over to the paper profile. Issue
#15 asks for the ratio of two jobs at a time to one on this machine.

    python benchmarks/bench_sweep.py [--models 4] [--epochs 2] [--train 1000] [--heldout 200]

For the record (not re-measured here): on one NVIDIA H100 with ``--device cuda``, 16 local
jobs of one thread trained 16 paper-profile models (200 epochs each) in about 14 minutes,
about 70 models per hour; one thread of this project's 2-core CPU takes about 1.5 hours per
paper-profile model.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bparallel.transformer.design import Profile
from bparallel.transformer.sweep import plan, run_sweep

GRID = [("copy", 1), ("cycle", 1), ("copy", 4), ("cycle", 4), ("copy", 16), ("cycle", 16)]


def one_variant(profile: Profile, models: int, jobs: int, threads: int) -> float:
    """Wall seconds for ``models`` models of ``profile`` with ``jobs`` local jobs at once."""
    root = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    try:
        grid = GRID[:models]
        runs = [r for task, heads in grid
                for r in plan([task], [heads], [42], profile, runs_dir=root / "runs",
                              models_dir=root / "models", threads=threads)]
        t = time.perf_counter()
        results = run_sweep(runs, "local", jobs=jobs, poll_s=0.2, echo=lambda _: None)
        seconds = time.perf_counter() - t
        failed = [r for r in results if r["status"] != "shipped"]
        if failed:
            raise RuntimeError(f"jobs did not ship: {failed}")
        return seconds
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=4, help=f"models per variant (<= {len(GRID)})")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--train", type=int, default=1000, help="training sequences per model")
    ap.add_argument("--heldout", type=int, default=200, help="held-out sequences per model")
    args = ap.parse_args()
    if not 1 <= args.models <= len(GRID):
        raise SystemExit(f"--models must lie in 1..{len(GRID)}")
    profile = Profile("bench", num_train=args.train, epochs=args.epochs,
                      num_heldout=args.heldout, description="benchmark", hidden=True)
    variants = {"1 job x 2 threads": (1, 2), "2 jobs x 1 thread": (2, 1)}
    seconds = {name: one_variant(profile, args.models, jobs, threads)
               for name, (jobs, threads) in variants.items()}
    base = seconds["1 job x 2 threads"]
    print(f"{args.models} models, {args.epochs} epochs of {args.train} sequences "
          f"(batch 50, T = 100), local executor")
    print(f"{'variant':<20} {'wall s':>8} {'models/hour':>12} {'vs 1 job':>9}")
    for name, s in seconds.items():
        print(f"{name:<20} {s:8.1f} {3600 * args.models / s:12.1f} {base / s:8.2f}x")


if __name__ == "__main__":
    main()
