"""The claims chapters' (03, 06) batched ensemble routines vs a per-graph loop, side by side
(not a test).

1. Exact mixing times of every pair of 5-node feedforward heads (49,455 pairs, uniform
   weights): ``ensembles.mixing_times`` on the stack vs ``markov.mixing_time`` per graph;
2. minimax fidelity of the same pairs' combinations (horizon 20): ``compare_fidelity`` vs
   ``fidelity.multi_head_minimax_fidelity`` per pair.

    python benchmarks/bench_ensembles.py [--quick]

The loop runs on a subset and is scaled up; times are minima over repeats.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_of  # noqa: E402  (benchmarks/ is on sys.path)

from bparallel import ensembles as en
from bparallel import fidelity, graphs, markov


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one repeat, smaller loop subset")
    args = ap.parse_args()
    reps, sub = (1, 500) if args.quick else (3, 3000)

    A = en.enumerate_feedforward_adjacency(5)
    pairs = en.head_tuples(len(A), 2)
    W = graphs.walk_matrix_from_adjacency(A)[pairs].mean(axis=1)  # (P, 5, 5) uniform combos
    D = graphs.diffusion_matrix_from_adjacency(A)[pairs]  # (P, 2, 5, 5)
    P = len(pairs)

    t_batch, T = best_of(lambda: en.mixing_times(W), reps)
    t_loop, T_loop = best_of(lambda: [markov.mixing_time(w) for w in W[:sub]], reps)
    assert np.array_equal(T[:sub], T_loop)
    t_loop *= P / sub
    print(f"mixing time, {P:,} combined 5-node pairs: batched {t_batch:.2f} s, "
          f"loop {t_loop:.1f} s (scaled from {sub}), ratio {t_loop / t_batch:.0f}x")

    t_batch, fc = best_of(lambda: en.compare_fidelity(D, 20, grid_steps=1), reps)
    beta = np.array([0.5, 0.5])
    t_loop, phi = best_of(
        lambda: [fidelity.multi_head_minimax_fidelity(d, beta, 20) for d in D[:sub]], reps)
    np.testing.assert_allclose(fc.uniform[:sub], phi, atol=1e-14)
    t_loop *= P / sub
    print(f"minimax fidelity (heads + uniform + 2 grid weights), {P:,} pairs: batched "
          f"{t_batch:.2f} s; uniform combination alone, loop {t_loop:.1f} s "
          f"(scaled from {sub}), ratio {t_loop / t_batch:.0f}x")


if __name__ == "__main__":
    main()
