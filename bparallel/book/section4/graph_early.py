"""Chapter 12's graphs before learning: the proxies every fresh-data run recorded through
training (:data:`PROXIES`, read off its manifest entry by :func:`probe_at`), the step at
which no run of a task has learned yet (:func:`early_step`: below its threshold and within
:data:`EARLY_MARGIN` of what a model without attention gets), and whether the proxies there
rank the runs by their later learning (:func:`prediction_tests`, shown by
:func:`prediction_table`): across head counts with the arm held, and within a configuration
across seeds. :func:`proxy_curves` gives every run's proxies at every probe step for the
figure. The verdicts that read these tests are :mod:`~.graph_experiment`'s; what predicts
learning beyond the design is :mod:`~.graph_predictors`'."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ... import ranks
from ...transformer.design import ARMS, HEADS
from ...transformer.learning import learning_time
from ..words import fmt_fixed, fmt_p
from .graph_tasks import no_attention_ceiling
from .models import ARM_NAMES, FreshRuns
from .rank_tests import exact_rank_test
from .statistics import rank_claim_verdict

#: The proxies followed through training: manifest probe key -> (column, direction of "better"
#: by the paper's claims: -1 a time, +1 a share).
PROXIES = {
    "mixing_time.paper": ("mixing.paper", -1),
    "mixing_time.definition": ("mixing.definition", -1),
    "worst_case.definition": ("t_mix", -1),
    "fidelity.paper": ("fidelity.paper", +1),
    "fidelity.definition": ("fidelity.definition", +1),
    "rollout_min.weighted": ("rollout_min", +1),
}


def probe_at(entry: Mapping[str, Any], step: int | None = None) -> dict[str, float]:
    """The run's recorded probe at ``step`` (``None``: its last), layer means: accuracy on
    the predictable positions and every proxy of :data:`PROXIES` (``t_mix``: the median over
    layers of Definition 2.7's median mixing time, infinite where it never mixes)."""
    probes = entry["probes"]
    steps = list(probes["step"])
    i = len(steps) - 1 if step is None else steps.index(step)
    out = {"step": steps[i], "accuracy": float(probes["accuracy_predictable"][i])}
    for key, (name, _) in PROXIES.items():
        layers = [math.inf if v is None else float(v) for v in probes[key][i]]
        out[name] = (ranks.median(layers) if all(map(math.isfinite, layers))
                     else float(np.median(layers))) if name == "t_mix" \
            else float(np.mean(layers))
    return out


#: How far above what a model without attention gets (:func:`~.graph_tasks.no_attention_ceiling`)
#: a run's probe accuracy may be at the early step: "before learning" means that no run
#: has yet learned more than a model could without its attention, give or take 5 points.
EARLY_MARGIN = 0.05


def early_step(runs: FreshRuns, task: str) -> int | None:
    """The last probe step *before learning*: before any run of ``task`` reached its
    threshold, and where no run's probe accuracy on the predictable positions is more than
    :data:`EARLY_MARGIN` above the task's no-attention ceiling; the proxies there are
    measured before learning, for every run. ``None`` without runs, or when no common probe
    step qualifies."""
    entries = runs.of(task)
    if not entries:
        return None
    limit = no_attention_ceiling(task) + EARLY_MARGIN
    first = min((t for t in map(learning_time, entries) if t is not None), default=None)
    common = set.intersection(*(set(e["probes"]["step"]) for e in entries))

    def before_learning(step: int) -> bool:
        return all(e["probes"]["accuracy_predictable"][e["probes"]["step"].index(step)]
                   <= limit for e in entries)

    before = [s for s in common if (first is None or s < first) and before_learning(s)]
    return max(before) if before else None


def prediction_tests(runs: FreshRuns, task: str) -> dict[str, dict[str, Any]]:
    """Do the proxies at :func:`early_step` rank runs by their later learning speed? Speed
    here is the learning-curve area (the mean held-out accuracy over the budget: larger is
    faster, a run that never learns is low, and unlike the steps to the threshold, read on
    the evaluation grid, it does not tie between seeds that learn within one evaluation
    interval). For each proxy of :data:`PROXIES` (signed so that larger is better),
    :func:`~.rank_tests.exact_rank_test` over cells:

    - ``across.<arm>.<proxy>``: one cell per complete seed, its four head counts;
    - ``within.<proxy>``: one cell per configuration (arm, heads) with three seeds or more,
      its seeds.
    """
    step = early_step(runs, task)
    out: dict[str, dict[str, Any]] = {}

    def key_of(e: Mapping[str, Any], name: str, sign: int) -> float:
        v = sign * probe_at(e, step)[name]
        return float(np.clip(v, -1e300, 1e300))

    for name, sign in PROXIES.values():
        for arm in ARMS:
            pairs = []
            for seed in runs.seeds(task, arm) if step is not None else []:
                by = {e["heads"]: e for e in runs.of(task, arm) if e["seed"] == seed}
                pairs.append((np.array([key_of(by[h], name, sign) for h in HEADS]),
                              np.array([float(by[h]["curve_area"]) for h in HEADS])))
            test = exact_rank_test(pairs)
            out[f"across.{arm}.{name}"] = {**test, "verdict": rank_claim_verdict(test)}
        pairs = []
        configs = {(e["heads"], e["head_size"]) for e in runs.of(task)} if step is not None \
            else set()
        for heads, hs in sorted(configs):
            mine = [e for e in runs.of(task) if (e["heads"], e["head_size"]) == (heads, hs)]
            if len(mine) >= 3:
                pairs.append((np.array([key_of(e, name, sign) for e in mine]),
                              np.array([float(e["curve_area"]) for e in mine])))
        test = exact_rank_test(pairs)
        out[f"within.{name}"] = {**test, "verdict": rank_claim_verdict(test)}
    return out


#: How the prediction table names the proxies of :data:`PROXIES`.
PROXY_NAMES = {"mixing.paper": "Algorithm 1, published code",
               "mixing.definition": "Algorithm 1, as defined",
               "t_mix": "Definition 2.7", "fidelity.paper": "minimax fidelity, published code",
               "fidelity.definition": "minimax fidelity, as defined",
               "rollout_min": "rollout minimum"}


def _test_cell(test: Mapping[str, Any]) -> str:
    if not test["cells"]:
        return "—"
    return (f"mean ρ {fmt_fixed(test['mean'], 2)} (p {fmt_p(test['p'])}, {test['cells']} "
            f"cell{'s' * (test['cells'] > 1)})")


def prediction_table(runs: FreshRuns,
                     prediction: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> list[dict[str, Any]]:
    """:func:`prediction_tests` as the page shows them: per task and proxy, the mean rho
    over cells (proxy against curve area) with its exact two-sided p-value and number of
    cells, across head counts in each arm and within configurations. ``prediction``: per
    task, :func:`prediction_tests` of ``runs`` already run (the chapter's tests hold them),
    read rather than run again."""
    rows = []
    for task in runs.profiles:
        if early_step(runs, task) is None:
            continue
        tests = prediction[task] if prediction is not None else prediction_tests(runs, task)
        for _, (name, _) in PROXIES.items():
            row: dict[str, Any] = {"task": task, "proxy at the early step": PROXY_NAMES[name]}
            for arm in ARMS:
                t = tests[f"across.{arm}.{name}"]
                row[f"across heads, {ARM_NAMES[arm]}"] = _test_cell(t)
            row["within configurations"] = _test_cell(tests[f"within.{name}"])
            rows.append(row)
    return rows


def proxy_curves(runs: FreshRuns, task: str) -> dict[tuple[str, int, int], dict[str, list]]:
    """Per run of ``task`` keyed ``(arm, heads, seed)`` (a run of both arms under each):
    the probe steps and, per step, accuracy and every proxy (:func:`probe_at`), as
    :func:`bparallel.book.render.plotting.plot_proxies_through_training` takes them."""
    out = {}
    for arm in ARMS:
        for e in runs.of(task, arm):
            series: dict[str, list] = {}
            for s in e["probes"]["step"]:
                for k, v in probe_at(e, s).items():
                    series.setdefault(k, []).append(v)
            out[(arm, e["heads"], e["seed"])] = series
    return out


__all__ = ["EARLY_MARGIN", "PROXIES", "PROXY_NAMES", "early_step", "prediction_table",
           "prediction_tests", "probe_at", "proxy_curves"]
