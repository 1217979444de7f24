"""Chapter 12's horse race as shipped against scoring every resampled draw one by one,
side by side in one run (not a test).

:func:`bparallel.book.section4.graph_predictors.horse_race` scores each distinct multiset of
resampled seeds once (both rank correlations are exact, so the order of a draw's runs cannot
move its score); the loop it replaced scored each of the ``SAMPLES`` draws. On the shipped
fresh-data runs of ``--task``, one torch thread: the seconds of each (both include reading
the runs' measures and their initial conditioning, the same work), the ratio, and whether
every interval agrees (to the bit for Spearman's rho, within 1e-12 for the partial rho,
which the loop computes here in floats as before).

    python benchmarks/bench_horse_race.py [--task induction] [--samples 2000]

Times are minima over repeats (the least disturbed run on a shared machine).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from _timing import best_of  # noqa: E402  (benchmarks/ is on sys.path)

from bparallel.book.section4 import graph_predictors as gp
from bparallel.book.section4 import models
from bparallel.ranks import doubled_ranks, spearman

ROOT = Path(__file__).resolve().parents[1]


def float_partial(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    """The partial rank correlation as the loop computed it: float ranks less their group's
    mean, Pearson's correlation in floats."""
    rx = np.asarray(doubled_ranks(x), dtype=np.float64) / 2
    ry = np.asarray(doubled_ranks(y), dtype=np.float64) / 2
    for g in np.unique(groups):
        at = groups == g
        rx[at] -= rx[at].mean()
        ry[at] -= ry[at].mean()
    sx, sy = np.sqrt((rx * rx).sum()), np.sqrt((ry * ry).sum())
    return float("nan") if sx < 1e-9 or sy < 1e-9 else float((rx * ry).sum() / (sx * sy))


def loop(runs: models.FreshRuns, task: str, samples: int) -> list[dict]:
    """Every draw scored on its own, in its own order (the horse race before)."""
    cols, seeds, _ = gp._items(runs, task)
    configs = np.array([f"{e['heads']}x{e['head_size']}" for e in runs.of(task)])
    rng, distinct = np.random.default_rng(0), np.unique(seeds)
    draws = [np.concatenate([np.nonzero(seeds == s)[0]
                             for s in rng.choice(distinct, distinct.size)])
             for _ in range(samples)]
    out = []
    for name in gp.CANDIDATES:
        for outcome in gp.OUTCOMES:
            x, y = cols[name], cols[outcome]
            boot = np.array([float(spearman(x[d], y[d])) for d in draws])
            part = (np.array([float_partial(x[d], y[d], configs[d]) for d in draws])
                    if name not in gp.DESIGN else np.array([np.nan]))
            out.append({"interval": gp._interval(boot, 0.95),
                        "partial": gp._interval(part, 0.95)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", default="induction", choices=models.FRESH_TASKS)
    ap.add_argument("--samples", type=int, default=gp.SAMPLES)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = models.fresh_runs(ROOT / "models")
    if not runs.of(args.task):
        raise SystemExit(f"no shipped fresh-data run of {args.task}")
    shipped_s, rows = best_of(lambda: gp.horse_race(runs, args.task, samples=args.samples),
                              args.repeats)
    loop_s, ref = best_of(lambda: loop(runs, args.task, args.samples), args.repeats)
    same = all(
        (r["low"], r["high"]) == o["interval"]
        and (r["partial"] is None or np.allclose([r["partial_low"], r["partial_high"]],
                                                 o["partial"], rtol=0, atol=1e-12))
        for r, o in zip(rows, ref, strict=True) if r["rho"] is not None)
    print(f"horse race, {args.task}, {args.samples:,} draws, {len(runs.of(args.task))} runs")
    print(f"{'each draw scored (s)':>22s} {'each multiset once (s)':>24s} {'ratio':>7s} "
          f"{'same intervals':>15s}")
    print(f"{loop_s:22.2f} {shipped_s:24.2f} {loop_s / shipped_s:6.1f}x {str(same):>15s}")


if __name__ == "__main__":
    main()
