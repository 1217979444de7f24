"""Stand-in manifests of chapter 12's fresh runs for its tests: an entry per run, a grid of
both arms' configurations, written where :func:`bparallel.book.section4.models.fresh_runs`
reads them."""

from __future__ import annotations

import json

from bparallel.transformer.design import HEADS
from bparallel.transformer.learning import probe_steps

BUDGET = 12000


def _probes(steps, learn_at, quality):
    """Probes at ``steps``: accuracy jumps at ``learn_at`` (None: never); every proxy is
    better (larger fidelity, shorter mixing) the larger ``quality``."""
    n = len(steps)
    acc = [1.0 if learn_at is not None and s >= learn_at else 0.01 for s in steps]
    layer = lambda v: [[v] * 4 for _ in range(n)]  # noqa: E731
    return {"step": steps, "accuracy_predictable": acc, "accuracy": acc,
            "loss": [1.0] * n, "loss_predictable": [1.0] * n,
            "mixing_time.paper": layer(10.0 - quality), "mixing_time.definition":
                layer(12.0 - quality), "worst_case.definition": layer(20.0 - quality),
            "worst_case.paper": [[None] * 4] * n, "fidelity.paper": layer(quality),
            "fidelity.definition": layer(quality + 0.5), "rollout_min.weighted":
                layer(0.1 * quality), "rollout_min.uniform": layer(0.1 * quality)}


def entry(task, heads, seed, learn_at, *, head_size=None, quality=1.0, factor=1):
    hs = head_size or 64 // heads
    arms = [a for a, ok in (("width", hs * heads == 64), ("head16", hs == 16),
                            ("inner256", hs * heads == 256)) if ok]
    last = learn_at + 1000 if learn_at is not None else BUDGET
    steps = [s for s in probe_steps(BUDGET) if s < last] + [last]
    curve_steps = list(range(0, last + 1, 200))
    curve = [1.0 if learn_at is not None and s >= learn_at else 0.01 for s in curve_steps]
    return {"task": task, "heads": heads, "head_size": hs, "seed": seed, "arms": arms,
            "budget": BUDGET, "budget_factor": factor, "steps_to_threshold": learn_at,
            "threshold": 0.9,
            # the area of a curve that jumps to 1 at learn_at, held to the budget
            "curve_area": 0.01 if learn_at is None else 1 - learn_at / BUDGET,
            "heldout_accuracy_predictable": curve[-1],
            "num_parameters": 172800, "outcome": "converged" if learn_at else "not learned",
            "curve": {"step": curve_steps, "heldout_accuracy_predictable": curve},
            "probes": _probes(steps, learn_at, quality)}


def write(root, entries, profile="induction-fresh"):
    folder = root / profile
    folder.mkdir(parents=True, exist_ok=True)
    models = {f"{e['task']}-h{e['heads']:02d}-hs{e['head_size']}-s{e['seed']}-x"
              f"{e['budget_factor']}": e for e in entries}
    (folder / "manifest.json").write_text(json.dumps({"models": models}))


def grid(seeds=(42, 43, 44), learn=None, quality=None):
    """Both arms' seven configurations of induction; ``learn(heads, hs, seed)`` gives the
    learning step (None: never), ``quality`` the proxies' goodness."""
    learn = learn or (lambda h, hs, s: 800 + 200 * h)
    quality = quality or (lambda h, hs, s: 1.0)
    out = []
    for s in seeds:
        for h in HEADS:
            for hs in sorted({64 // h, 16}):
                out.append(entry("induction", h, s, learn(h, hs, s), head_size=hs,
                                 quality=quality(h, hs, s)))
    return out
