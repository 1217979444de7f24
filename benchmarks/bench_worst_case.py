"""Definition 2.7 on attention: batched ``proxies.worst_case_mixing_time`` against a per-graph
loop over ``markov.mixing_time`` on the same chains, side by side in one run (not a test).

Families of T = 100 graphs (definition mode unless said): random causal softmax patterns,
near-sink ones (attention mostly on token 0), near-diagonal ones (mostly on the token
itself: slow walks, thousands of steps), paper mode (position 0 is a trap: inf), and the
shipped trained models' patterns (the 8 of seed 42 x 4 layers, head-weighted as in Section 4.2).
For each: graphs/s of the batched function from the patterns (wall clock and process CPU
time: this machine is shared), graphs/s of the loop from the ready chains ``W = Q^T``, the
ratio, and whether the two agree on the loop's graphs.

    python benchmarks/bench_worst_case.py [--quick] [--run-dir models/paper]

BLAS runs one thread unless OPENBLAS_NUM_THREADS is set: on a busy 2-core machine,
OpenBLAS's threads make 100 x 100 products many times slower. Times are minima over repeats.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from bparallel import markov  # noqa: E402
from bparallel import proxies as px  # noqa: E402

T = 100


def causal_softmax(rng: np.random.Generator, n: int, H: int, scale: float = 2.0) -> np.ndarray:
    """Random causal softmax patterns ``(n, H, T, T)``, float32 as a model returns them."""
    s = rng.normal(size=(n, H, T, T)) * scale
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    return (a / a.sum(-1, keepdims=True)).astype(np.float32)


def trained_patterns(run_dir: str, n_seq: int) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Per shipped model of ``run_dir`` (seed 42): patterns ``(L * B, H, T, T)`` and head
    weights ``(L * B, H)`` of every layer and sequence; ``None`` when no model is shipped."""
    if not (Path(run_dir) / "manifest.json").is_file():
        return None
    import torch

    from bparallel.transformer.measure import (
        evaluation_inputs,
        extract_patterns,
        model_head_weights,
    )
    from bparallel.transformer.shipped import load_shipped

    torch.set_num_threads(1)
    models, _ = load_shipped(run_dir)
    parts = []
    for (task, _heads), model in models.items():
        x = evaluation_inputs(task, "heldout", "paper", num_sequences=n_seq)
        pattern = extract_patterns(model, x)  # (L, B, H, T, T)
        w = np.broadcast_to(model_head_weights(model)[:, None], pattern.shape[:3])  # (L, B, H)
        parts.append((pattern.reshape(-1, *pattern.shape[2:]), w.reshape(-1, pattern.shape[2])))
    return parts


def best_time(fn, repeats: int) -> tuple[float, float, object]:
    """Fastest wall and CPU seconds of ``repeats`` calls, and the last result."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu, out


def markov_loop(W: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty(len(W))
    for g, Wg in enumerate(W):
        try:
            out[g] = markov.mixing_time(Wg, eps)
        except ValueError:  # does not mix within 2^40 steps
            out[g] = np.inf
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer graphs and repeats")
    ap.add_argument("--run-dir", default="models/paper", help="trained models (if present)")
    ap.add_argument("--eps", type=float, default=0.25)
    args = ap.parse_args()
    n = 400 if args.quick else 2000
    n_loop = 40 if args.quick else 200
    reps = 1 if args.quick else 3
    rng = np.random.default_rng(0)
    H = 8
    near_sink = 0.1 * causal_softmax(rng, n, H)
    near_sink[..., 0] += 0.9
    families = [  # (name, [(patterns, head weights), ...] one call each, mode)
        ("random causal softmax", [(causal_softmax(rng, n, H), None)], "definition"),
        ("near-sink (0.9 on token 0)", [(near_sink, None)], "definition"),
        ("near-diagonal (0.9 on itself)",
         [(0.9 * np.eye(T, dtype=np.float32) + 0.1 * causal_softmax(rng, n // 2, H), None)],
         "definition"),
        ("random causal, paper mode", [(causal_softmax(rng, n, H), None)], "paper"),
    ]
    trained = trained_patterns(args.run_dir, 10 if args.quick else 50)
    if trained is not None:
        families.append((f"trained, 8 models ({args.run_dir})", trained, "definition"))
    print(f"T = {T}, eps = {args.eps}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
          f", {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'family':32s} {'graphs':>6s} {'median t':>9s} {'max t':>9s} {'inf':>5s} | "
          f"{'batched/s':>9s} {'(CPU)':>7s} | {'loop/s':>7s} {'(CPU)':>7s} | "
          f"{'ratio':>6s} {'(CPU)':>6s} agree")
    total = [0, 0.0, 0.0]
    for name, parts, mode in families:
        def batched(parts=parts, mode=mode):
            return np.concatenate([px.worst_case_mixing_time(p, w, mode=mode, eps=args.eps)
                                   for p, w in parts])

        wall, cpu, t_mix = best_time(batched, reps)
        # the loop's graphs: an even share of every part, the same chains W = Q^T
        k = max(1, n_loop // len(parts))
        W = np.concatenate([np.swapaxes(px.transition_matrix(
            p[:k], None if w is None else w[:k], mode=mode), -1, -2) for p, w in parts])
        lwall, lcpu, ref = best_time(lambda W=W: markov_loop(W, args.eps), 1)
        mine = np.concatenate([t_mix[a : a + k] for a in np.cumsum([0] + [len(p) for p, _ in
                                                                          parts[:-1]])])
        finite = t_mix[np.isfinite(t_mix)]
        med = f"{np.median(finite):9.0f}" if finite.size else f"{'-':>9s}"
        top = f"{finite.max():9.3g}" if finite.size else f"{'-':>9s}"
        g, gl = len(t_mix), W.shape[0]
        agree = "yes" if np.array_equal(mine, ref) else "NO"
        print(f"{name:32s} {g:6d} {med} {top} {int(np.isinf(t_mix).sum()):5d} | "
              f"{g / wall:9.0f} {g / cpu:7.0f} | {gl / lwall:7.0f} {gl / lcpu:7.0f} | "
              f"{(g / wall) / (gl / lwall):5.1f}x {(g / cpu) / (gl / lcpu):5.1f}x {agree}")
        total[0] += g
        total[1] += wall
        total[2] += cpu
    print(f"{'all families':32s} {total[0]:6d} {'':>9s} {'':>9s} {'':>5s} | "
          f"{total[0] / total[1]:9.0f} {total[0] / total[2]:7.0f} |")


if __name__ == "__main__":
    main()
