"""Training-step timings, measured side by side in one run (not a test).

One Adam step (forward, cross-entropy over all positions, backward, update) at batch 50,
T = 100, for the three attention paths of ``bparallel.transformer.model``, per head count and thread
count: ``fused`` (on CPU with dropout: ``bparallel.transformer.attention``'s block-causal kernel),
``sdpa`` (``scaled_dot_product_attention``, which on CPU with dropout runs its unfused math
kernel) and the ``explicit`` baseline; then the projected wall time of the paper profile
(8 models x 200 epochs x 100 steps). Issue #4's target: a step at 16 heads at least 1.4x
faster than the explicit baseline. Then, for the graph tasks' profiles (issue #23) and the
paper's, models per hour on this machine with two one-thread jobs (the sweep's setting):
projected from the measured one-thread step, beside the epoch times that the sweep's own
checkpoints recorded (``runs/sweep/<profile>/seed-*/``, when there are any).

    python benchmarks/bench_train.py [--quick] [--all-heads] [--threads 1 2]

Times are the minimum over repeats (the least disturbed run on a shared machine).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from bparallel.transformer.model import ModelConfig, Transformer
from bparallel.transformer.train import HEADS, get_profile, projected_hours

SWEEP_RUNS = Path(__file__).resolve().parents[1] / "runs" / "sweep"
GRAPH_PROFILES = ("first", "induction", "majority", "paper")


def make_step(heads: int, path: str, dropout: float = 0.1):
    """A closure doing one training step of a fresh model; returns its wall time."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=heads, dropout=dropout), attention_path=path)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randint(0, 256, (50, 100))
    y = torch.roll(x, 1, dims=-1)

    def step() -> float:
        t = time.perf_counter()
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return time.perf_counter() - t

    step()  # warm-up
    return step


def interleaved(steps: dict, repeats: int) -> dict:
    """Minimum step time of each variant, the variants alternating step by step."""
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for name, step in steps.items():
            best[name] = min(best[name], step())
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--all-heads", action="store_true", help="heads 1 4 8 16 (default 1 16)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    heads_list = list(HEADS) if args.all_heads else [1, 16]
    repeats = 2 if args.quick else 4
    before = torch.get_num_threads()
    fused_times: dict[int, dict[int, float]] = {}
    print(f"torch {torch.__version__}; one training step, batch 50, T = 100 (seconds)")
    print(f"{'threads':>7} {'heads':>5} {'fused':>8} {'sdpa':>8} {'explicit':>9} "
          f"{'explicit/fused':>15} {'explicit/sdpa':>14} {'fused, p=0':>11}")
    ratios16 = []
    for n in args.threads:
        torch.set_num_threads(n)
        for h in heads_list:
            variants = {path: make_step(h, path) for path in ("fused", "sdpa", "explicit")}
            if h == 16:
                variants["no_dropout"] = make_step(h, "fused", dropout=0.0)
            t = interleaved(variants, repeats)
            fused_times.setdefault(n, {})[h] = t["fused"]
            if h == 16:
                ratios16.append((n, t["explicit"] / t["fused"]))
            print(f"{n:>7} {h:>5} {t['fused']:8.3f} {t['sdpa']:8.3f} {t['explicit']:9.3f} "
                  f"{t['explicit'] / t['fused']:15.2f} {t['explicit'] / t['sdpa']:14.2f} "
                  f"{t.get('no_dropout', float('nan')):11.3f}")
    torch.set_num_threads(before)
    for n, r in ratios16:
        print(f"target (16 heads, {n} thread(s)): explicit/fused = {r:.2f} "
              f"{'>=' if r >= 1.4 else '<'} 1.4 -> {'met' if r >= 1.4 else 'NOT met'}")
    q, k, v = (torch.randn(50, 16, 100, 4) for _ in range(3))
    backend = {0: "math", 1: "flash"}.get(
        int(torch._fused_sdp_choice(q, k, v, dropout_p=0.1, is_causal=True)), "other")
    print(f"\nCPU SDPA backend with dropout 0.1: {backend} "
          "(math materialises the (B, H, T, T) matrix, as the explicit path does)")
    print("fused, p=0: the same step without any dropout (SDPA's flash kernel on CPU)")
    for n, times in fused_times.items():
        mean = sum(times.values()) / len(times)
        print(f"paper profile, {n} thread(s): mean fused step {mean:.3f} s over heads "
              f"{sorted(times)} -> {projected_hours(mean, 'paper'):.1f} h for 8 models"
              + ("" if len(times) == 4 else " (heads 4 and 8 lie in between: --all-heads)"))
    if 1 in fused_times:
        models_per_hour(fused_times[1])


def measured_epoch_seconds(profile: str) -> dict[int, float]:
    """Median seconds per epoch per head count, from the history of every sweep checkpoint
    of ``profile`` on this machine (one-thread jobs); empty when none is there."""
    from statistics import median

    from bparallel.transformer.train import load_checkpoint

    per_heads: dict[int, list[float]] = {}
    for path in sorted((SWEEP_RUNS / profile).glob("seed-*/*.ckpt.pt")):
        ck = load_checkpoint(path)
        if ck.history.get("seconds"):
            per_heads.setdefault(int(ck.data["heads"]), []).extend(ck.history["seconds"])
    return {h: median(v) for h, v in sorted(per_heads.items())}


def models_per_hour(step_seconds: dict[int, float], jobs: int = 2) -> None:
    """The graph tasks' profiles and the paper's: hours per model per head count and models
    per hour with ``jobs`` one-thread jobs, projected and (where the sweep left checkpoints)
    measured."""
    print(f"\nmodels per hour, {jobs} one-thread jobs (projected from the fused step above; "
          "measured: median epoch of the sweep's checkpoints here, held-out pass included)")
    print(f"{'profile':>10} {'epochs':>6} {'heads':>5} {'h/model':>8} {'models/h':>9} "
          f"{'measured h/model':>17}")
    for name in GRAPH_PROFILES:
        p = get_profile(name)
        measured = measured_epoch_seconds(name)
        for h, t in step_seconds.items():
            hours = projected_hours(t, p, models=1)
            m = measured.get(h)
            shown = f"{m * p.epochs / 3600:17.2f}" if m is not None else f"{'-':>17}"
            print(f"{name:>10} {p.epochs:>6} {h:>5} {hours:8.2f} {jobs / hours:9.1f} {shown}")
    print(f"(steps per epoch: {math.ceil(get_profile('first').num_train / 50)} at 5,000 "
          "sequences and batch 50, the same for every profile listed)")


if __name__ == "__main__":
    main()
