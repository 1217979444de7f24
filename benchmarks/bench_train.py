"""Training-step timings, measured side by side in one run (not a test).

One Adam step (forward, cross-entropy over all positions, backward, update) at batch 50,
T = 100, for the three attention paths of ``bparallel.transformer.model``, per head count and thread
count: ``fused`` (on CPU with dropout: ``bparallel.transformer.attention``'s block-causal kernel),
``sdpa`` (``scaled_dot_product_attention``, which on CPU with dropout runs its unfused math
kernel) and the ``explicit`` baseline; then the projected wall time of the paper profile
(8 models x 200 epochs x 100 steps). Issue #4's target: a step at 16 heads at least 1.4x
faster than the explicit baseline. Then, for the graph tasks' profiles and the
paper's, models per hour on this machine with two one-thread jobs (the sweep's setting):
projected from the measured one-thread step, beside the epoch times that the sweep's own
checkpoints recorded (``runs/sweep/<profile>/seed-*/``, when there are any).

Then the fresh-data grid (:func:`bparallel.transformer.train.train` with a fresh-data
profile): for both arms
(width: head size 64/H; head16: 16 dimensions per head) at every head count, one thread,
the time of a training step with its fresh batch (drawn and scored), of a held-out
evaluation and of a probe of the proxies, and from them the hours of one model trained to
its whole budget (an upper bound: a run stops earlier when it converges), models per hour
with two one-thread jobs, and the hours of the whole grid: induction, majority and
histogram (majority's replacement) x 2 arms x 4 head counts x 3 seeds, less the shared
4 x 16 configuration (63 models).

    python benchmarks/bench_train.py [--quick] [--all-heads] [--threads 1 2] [--fresh-only]

Times are the minimum over repeats (the least disturbed run on a shared machine).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from bparallel.transformer.arms import arm_head_size
from bparallel.transformer.design import (
    ARMS,
    HEADS,
    PROFILES,
    fresh_batch,
    fresh_heldout,
    get_profile,
    model_config,
)
from bparallel.transformer.learning import probe_steps
from bparallel.transformer.measure import training_probe
from bparallel.transformer.model import ModelConfig, Transformer
from bparallel.transformer.train import ignore_unpredictable, projected_hours

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
    ap.add_argument("--fresh-only", action="store_true",
                    help="only the fresh-data grid (one thread)")
    args = ap.parse_args()
    if args.fresh_only:
        fresh_grid(quick=args.quick)
        return
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
    fresh_grid(quick=args.quick)


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


# --------------------------------------------------------------------------- fresh data

FRESH_TASKS = ("induction", "majority", "histogram")
SEEDS = 3


def fresh_configs() -> list[tuple[int, int | None, list[str]]]:
    """The grid's configurations ``(heads, head_size, arms)``: both arms at every head count,
    4 heads of 16 once (both arms' model)."""
    out: dict[tuple[int, int | None], list[str]] = {}
    for arm in ARMS:
        for h in HEADS:
            out.setdefault((h, arm_head_size(arm, h)), []).append(arm)
    return [(h, hs, arms) for (h, hs), arms in out.items()]


def time_fresh(task: str, heads: int, head_size: int | None, repeats: int,
               num_eval: int) -> dict[str, float]:
    """One thread: the minimum time of a fresh-data training step (batch drawn and scored,
    forward, backward, Adam), a held-out evaluation per sequence, and one probe."""
    from bparallel.transformer.evaluation import evaluate_accuracy

    p = PROFILES[f"{task}-fresh"]
    torch.manual_seed(0)
    model = Transformer(model_config(p, heads, head_size))
    opt = torch.optim.Adam(model.parameters(), lr=p.lr)

    def step(k: int) -> float:
        t = time.perf_counter()
        batch = ignore_unpredictable(fresh_batch(task, k, seed=42))
        model.train()
        loss = F.cross_entropy(model(batch.inputs).flatten(0, 1), batch.targets.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return time.perf_counter() - t

    step(0)  # warm-up
    step_s = min(step(k) for k in range(1, repeats + 1))
    held = fresh_heldout(task, p)
    t = time.perf_counter()
    evaluate_accuracy(model, held.subset(slice(0, num_eval)))
    eval_s = (time.perf_counter() - t) / num_eval  # per held-out sequence
    t = time.perf_counter()
    training_probe(model.eval(), held.subset(slice(0, p.probe_sequences)))
    return {"step": step_s, "eval": eval_s, "probe": time.perf_counter() - t}


def fresh_hours(task: str, t: dict[str, float]) -> float:
    """Hours of one model of ``task``'s fresh profile trained to its whole budget."""
    p = PROFILES[f"{task}-fresh"]
    evals = p.steps // p.eval_every + 1
    seconds = (p.steps * t["step"] + evals * p.num_heldout * t["eval"]
               + len(probe_steps(p.steps, p.probe_first)) * t["probe"])
    return seconds / 3600.0


def fresh_grid(quick: bool = False, jobs: int = 2) -> None:
    """Models per hour of the fresh-data profiles, both arms, every head count, with ``jobs``
    one-thread jobs; and the hours of the whole grid."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    repeats, num_eval = (2, 100) if quick else (5, 500)
    configs = fresh_configs()
    print(f"\nfresh data (issue #33), one thread per job, {jobs} jobs; step: fresh batch + "
          f"forward + backward + Adam (min of {repeats}); a model to its whole budget "
          "(upper bound: runs stop when converged)")
    print(f"{'task':>9} {'arm':>12} {'heads':>5} {'head size':>9} {'params':>8} {'step s':>7} "
          f"{'eval s':>7} {'probe s':>7} {'h/model':>8} {'models/h':>9}")
    grid_models, grid_hours = 0, 0.0
    for task in FRESH_TASKS:
        p = PROFILES[f"{task}-fresh"]
        for heads, head_size, arms in configs:
            cfg = model_config(p, heads, head_size)
            t = time_fresh(task, heads, head_size, repeats, num_eval)
            hours = fresh_hours(task, t)
            grid_models += SEEDS
            grid_hours += SEEDS * hours
            print(f"{task:>9} {'+'.join(arms):>12} {heads:>5} {cfg.head_dim:>9} "
                  f"{cfg.num_parameters():>8,} {t['step']:7.3f} {t['eval'] * p.num_heldout:7.2f} "
                  f"{t['probe']:7.2f} {hours:8.2f} {jobs / hours:9.2f}")
    torch.set_num_threads(before)
    budgets = ", ".join(f"{t}: {PROFILES[f'{t}-fresh'].steps:,} steps" for t in FRESH_TASKS)
    print(f"whole grid: {len(FRESH_TASKS)} tasks x {len(ARMS)} arms x {len(HEADS)} heads x "
          f"{SEEDS} seeds less the shared 4 x 16 = {grid_models} models, {grid_hours:.1f} "
          f"model-hours -> {grid_hours / jobs:.1f} h with {jobs} one-thread jobs "
          f"({budgets}; eval s: one held-out evaluation)")


if __name__ == "__main__":
    main()
