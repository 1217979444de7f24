"""Algorithms 1-2 timings, measured side by side in one run (not a test).

1. One sample-layer (T = 100): the exact mixing-time proxy vs the loop-free Monte Carlo
   (500 walks per start) vs a plain per-walk Python loop (the published style);
2. Tables 1-4 (+ 5-6) of 8 models x 50 sequences (trained models from --run-dir, else
   random init);
3. the exact proxies of one model over 5,000 sequences x 4 layers (target < 10 s);
4. those graphs per second against the arithmetic limit (horizon x T^2 multiply-adds per
   graph at this machine's float64 matrix-product rate), and each head's own fidelity
   (Tables 5-6) read from the float32 patterns as extracted;
5. the Section 4 evaluation of 8 models, computed here (one process) against worker
   processes, one per core (``cached_metrics_many``), side by side.

    python benchmarks/bench_proxies.py [--quick] [--run-dir runs/paper] [--threads 2]

Times are minima over repeats (the least disturbed run on a shared machine).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _timing import best_of  # noqa: E402  (benchmarks/ is on sys.path)

from bparallel import absorbing
from bparallel import proxies as px
from bparallel.book.section4.tables import evaluate_models
from bparallel.transformer.design import model_config
from bparallel.transformer.measure import (
    evaluation_inputs,
    extract_patterns,
    model_head_weights,
)
from bparallel.transformer.metrics_cache import default_workers
from bparallel.transformer.model import Transformer
from bparallel.transformer.shipped import load_run_models


def models_for(run_dir: str | None, heads: list[int]) -> dict:
    if run_dir:
        return load_run_models(run_dir, heads=heads)[0]
    models = {}
    for i, key in enumerate((t, h) for t in ("copy", "cycle") for h in heads):
        torch.manual_seed(i)
        models[key] = Transformer(model_config("paper", key[1])).eval()
    return models


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and sequences")
    ap.add_argument("--run-dir", default=None, help="trained models (default: random init)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--heads", type=int, default=4, help="head count of part 3's model")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    reps = 1 if args.quick else 3
    models = models_for(args.run_dir, [1, 4, 8, 16])
    print(f"torch threads {torch.get_num_threads()}, "
          f"{'trained' if args.run_dir else 'random-init'} models")

    # 1. one sample-layer ---------------------------------------------------------------
    model = models[("copy", 8)]
    x = evaluation_inputs("copy", "heldout", "paper", num_sequences=1)
    pattern = extract_patterns(model, x)[1, 0]  # layer 2, (H, T, T)
    w = model_head_weights(model)[1]
    S = 500
    t_exact, exact = best_of(lambda: px.mixing_time_proxy(pattern, w, mode="paper"), 5 * reps)
    t_mc, (mc, se) = best_of(lambda: px.mixing_time_proxy(
        pattern, w, mode="paper", method="monte-carlo", num_simulations=S, seed=0,
        return_stderr=True), reps)
    s_loop = 25 if args.quick else 100  # the loop is timed on fewer walks and scaled
    moves = px.Walk(pattern, w).moves("paper")[0]  # (T, T): the walk's moves, paper mode
    t_loop, times = best_of(lambda: absorbing.reference_walks(moves, 100, s_loop, seed=0), 1)
    t_loop *= S / s_loop
    print("\n1. one sample-layer (T = 100, 8 heads, paper mode, M = 100)")
    print(f"   exact        {t_exact * 1e3:9.2f} ms   value {float(exact):.4f}")
    print(f"   monte-carlo  {t_mc * 1e3:9.2f} ms   value {float(mc):.4f} +- {float(se):.4f}"
          f"  ({S} walks/start, loop-free)")
    print(f"   per-walk loop{t_loop * 1e3:9.0f} ms   value {times.mean():.4f} "
          f"(timed on {s_loop} walks/start, scaled to {S})")
    print(f"   ratios: loop / monte-carlo {t_loop / t_mc:7.1f}x, "
          f"monte-carlo / exact {t_mc / t_exact:7.1f}x, loop / exact {t_loop / t_exact:7.0f}x")

    # 2. Tables 1-6 of 8 models x 50 sequences --------------------------------------------
    n_seq = 10 if args.quick else 50
    t_tab, _ = best_of(lambda: evaluate_models(models, profile="paper",
                                                  num_sequences=n_seq), 1)
    print(f"\n2. Tables 1-4 (both modes) + 5-6 of 8 models x {n_seq} sequences: {t_tab:.1f} s"
          + ("" if not args.quick else f" (x{50 / n_seq:.0f} = ~{t_tab * 50 / n_seq:.0f} s "
                                       "for 50)"))

    # 3. exact proxies of one model over 5,000 sequences x 4 layers ---------------------
    # Attention of n_distinct sequences is extracted once and its proxies computed over
    # `passes` passes, 5,000 sequences in all (the cost per graph does not depend on which).
    n_distinct = 250 if args.quick else 1000
    passes = 5000 // n_distinct
    model = models[("copy", args.heads)]
    w = model_head_weights(model)[:, None]  # (L, 1, H)
    t_extract = t_comb = t_mix = t_fid = t_def = 0.0
    batch = 250
    inputs = evaluation_inputs("copy", "heldout", "paper", num_sequences=n_distinct)
    one = np.ones(1)
    for start in range(0, n_distinct, batch):
        t = time.perf_counter()
        pattern = extract_patterns(model, inputs[start : start + batch])  # (L, B, H, T, T)
        t_extract += time.perf_counter() - t
        for _ in range(passes):
            t = time.perf_counter()
            C = px.combine_heads(pattern, w)[:, :, None]  # (L, B, 1, T, T), as evaluate does
            t_comb += time.perf_counter() - t
            t = time.perf_counter()
            px.mixing_time_proxy(C, one, mode="paper")
            t_mix += time.perf_counter() - t
            t = time.perf_counter()
            phi = px.node_fidelity_proxy(C, one, times=False).phi
            _ = phi.min(-1), phi[..., :-1].min(-1)  # both modes' minimax
            t_fid += time.perf_counter() - t
            t = time.perf_counter()
            px.mixing_time_proxy(C, one, mode="definition")
            t_def += time.perf_counter() - t
    print(f"\n3. one model ({args.heads} heads), 5,000 sequences x 4 layers = 20,000 graphs "
          f"({n_distinct} distinct sequences x {passes} passes)")
    print(f"   attention extraction        {t_extract * passes:6.1f} s (projected)")
    print(f"   head combination (once)     {t_comb:6.1f} s")
    print(f"   mixing time, paper mode     {t_mix:6.1f} s")
    print(f"   fidelity, both modes        {t_fid:6.1f} s")
    total = t_comb + t_mix + t_fid
    print(f"   Tables 1-4 paper proxies    {total:6.1f} s (target < 10 s)")
    print(f"   mixing time, definition     {t_def:6.1f} s")

    # 4. against the arithmetic limit ------------------------------------------------------
    # Fidelity at horizon M over T nodes is M vector-matrix products: M * T^2 multiply-adds
    # per graph (1e6 at M = T = 100). The limit: this machine's float64 multiply-add rate
    # in one large matrix product (the best case of the same arithmetic).
    graphs = 4 * 5000
    T, M = 100, 100
    a = np.random.default_rng(0).random((1000, 1000))
    t_gemm, _ = best_of(lambda: a @ a, 3)
    rate = 1000**3 / t_gemm  # multiply-adds per second
    limit = rate / (M * T * T)
    print(f"\n4. against the arithmetic limit ({M} x {T}^2 = {M * T * T:.0e} multiply-adds "
          f"per graph; float64 matrix product: {rate / 1e9:.1f} G multiply-adds/s)")
    print(f"   {'':26}{'graphs/s':>10} {'limit/s':>9} {'share of limit':>15}")
    pattern = extract_patterns(model, inputs[:batch])  # (L, B, H, T, T) float32
    heads = pattern[:, :, :, None]  # (L, B, H, 1, T, T): each head alone, as Tables 5-6 need
    t_head, _ = best_of(lambda: px.node_fidelity_proxy(heads, one, times=False), 3)
    head_graphs = heads.shape[0] * heads.shape[1] * heads.shape[2]
    for name, n, secs in (("fidelity, both modes", graphs, t_fid),
                          ("fidelity of each head", head_graphs, t_head),
                          ("mixing time, paper mode", graphs, t_mix),
                          ("mixing time, definition", graphs, t_def)):
        print(f"   {name:<26}{n / secs:10.0f} {limit:9.0f} {n / secs / limit:14.0%}")

    # 5. the Section 4 evaluation in worker processes -------------------------------------
    # The exact proxies are single-threaded numpy loops: one worker process per core runs
    # them side by side (each with one torch and one BLAS thread). No cache: both compute.
    n_eval = 25 if args.quick else 200
    t_one, _ = best_of(lambda: evaluate_models(models, profile="paper", protocols=("heldout",),
                                               num_sequences=n_eval, workers=1), 1)
    workers = default_workers()  # their processes were started by section 2's evaluation
    t_many, _ = best_of(lambda: evaluate_models(models, profile="paper",
                                                protocols=("heldout",), num_sequences=n_eval,
                                                workers=workers), 1)
    print(f"\n5. Tables 1-6 of 8 models x {n_eval} held-out sequences")
    print(f"   in this process              {t_one:6.1f} s")
    print(f"   {workers} worker processes          {t_many:6.1f} s   ({t_one / t_many:.2f}x)")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
