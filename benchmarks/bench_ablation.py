"""Head-ablation passes per second, measured side by side in one run (not a test).

On one shipped paper-profile model (default: cycle, 16 heads) and ``--sequences`` held-out
sequences, one torch thread:

1. the 64 single-head removals (zero ablation) as separate full forward passes under
   ``ablated`` (the plain way) against ``evaluate_ablation``, which reuses the intact pass
   up to each removed head's layer and scores every mask from the same logits (loss,
   accuracy, logit margin and KL, float64): passes per second and the ratio;
2. the cost of the scores alone: the float64 log-softmax, margin and KL of one pass against
   the forward pass they score;
3. the whole ``importance_study`` of chapter 10 (knockouts, zero and mean removal, gradient
   importance, pair synergy of the last layer, pruning by four rankings and three random
   orders) and the light ``heads_measure`` of chapter 12, in seconds.

    python benchmarks/bench_ablation.py [--task cycle] [--heads 16] [--sequences 100]

Times are minima over repeats (the least disturbed run on a shared machine).
"""

from __future__ import annotations

import argparse

import torch
from _timing import best_of  # noqa: E402  (benchmarks/ is on sys.path)

from bparallel.transformer import ablation as ab
from bparallel.transformer.data import heldout_dataset
from bparallel.transformer.importance import _single_masks, head_fidelity, importance_study
from bparallel.transformer.metrics_cache import heads_measure
from bparallel.transformer.shipped import load_shipped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", default="cycle", choices=("copy", "cycle"))
    ap.add_argument("--heads", type=int, default=16, choices=(1, 4, 8, 16))
    ap.add_argument("--sequences", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load_shipped()[0][(args.task, args.heads)]
    ds = heldout_dataset(args.task, 2 * args.sequences, seed=42)
    data, reference = ds.subset(slice(0, args.sequences)), ds.inputs[args.sequences:]
    L, H = model.config.n_layers, model.config.n_heads
    masks = _single_masks(L, H)  # (1 + L H, L, H)
    n = len(masks)

    def plain() -> None:
        with torch.no_grad():
            for mask in masks:
                with ab.ablated(model, mask):
                    model(data.inputs)

    t_plain, _ = best_of(plain, args.repeats)
    t_reuse, _ = best_of(lambda: ab.evaluate_ablation(model, data, masks, per_sequence=True),
                         args.repeats)
    print(f"1. {n} masks ({args.task}, {H} heads, {args.sequences} sequences), passes per "
          "second:")
    print(f"   full forward per mask (logits only)      {n / t_plain:8.1f}")
    print(f"   evaluate_ablation (prefix reused, scored) {n / t_reuse:8.1f}   "
          f"x{t_plain / t_reuse:.2f}")

    with torch.no_grad():
        logits = model(data.inputs)
    t_fwd, _ = best_of(lambda: model(data.inputs), args.repeats)

    def score() -> None:
        logp = torch.log_softmax(logits.double(), -1)
        ab.logit_margin(logits, data.targets)
        (logp.exp() * (logp - logp)).sum(-1)

    t_score, _ = best_of(score, args.repeats)
    print(f"2. one full forward {1e3 * t_fwd:7.1f} ms; its float64 scores {1e3 * t_score:7.1f} ms"
          f"   (scores / forward = {t_score / t_fwd:.2f})")

    fid = head_fidelity(model, data.inputs)
    t_study, _ = best_of(lambda: importance_study(model, data, reference=reference,
                                                  fidelity=fid), 1)
    both = torch.cat([data.inputs, reference])
    t_light, _ = best_of(lambda: heads_measure(model, both, task=args.task,
                                               reference_sequences=len(reference)), 1)
    print(f"3. importance_study (chapter 10) {t_study:7.1f} s;  heads_measure (chapter 12) "
          f"{t_light:7.1f} s   (ratio {t_study / t_light:.1f})")


if __name__ == "__main__":
    main()
