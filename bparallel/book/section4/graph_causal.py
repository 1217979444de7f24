"""Chapter 12's causal tests on the fresh-data models of its controlled experiment: the one
part of the experiment that loads and runs models (:mod:`.graph_experiment`
reads manifests only).

- :func:`measure_heads`: one measuring pass per model (:func:`~.measures.measure_models`, the
  ``"heads"`` part, through the metrics cache): knockouts, and per head the margin drop of
  removing it alone by mean ablation, its split-half reliability and its minimax fidelity;
- :func:`layer_knockouts`: which layers each task needs, per arm and head count;
- :func:`head_tests`: does per-head fidelity rank the heads as their impact does, per task,
  arm and mode, never pooled across tasks; :func:`head_table`, :func:`head_results` and
  :func:`heads_rows` (the verdict rows, per arm and for the arms together) read them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...transformer.arms import arm_head_dim
from ...transformer.design import ARMS, HEADS
from ...transformer.measure import HeadStudy
from .graph_experiment import ALL_ARMS, arms_condition, arms_evidence
from .graph_tasks import HEADS_CLAIM, head_study, heads_verdict, verdict_index
from .graph_tasks import head_results as task_head_results
from .graph_tasks import head_table as task_head_table
from .models import ARM_NAMES, FreshRuns
from .statistics import head_claims, over_tasks, scored_cells


def measure_heads(models: Mapping[tuple[str, int, int, int], Any], *, num_sequences: int,
                  reference_sequences: int, cache_dir: str | os.PathLike | None,
                  recorded: str | os.PathLike | None = None, horizon: int = 100,
                  ) -> dict[tuple[str, int, int, int], HeadStudy]:
    """The causal tests of the fresh-data models (keyed ``(task, heads, head size, seed)``),
    :func:`~.graph_tasks.head_study` with the impact (the ``"heads"`` part): on the
    first ``num_sequences`` held-out sequences of each task, the knockouts (every head,
    each layer's heads) and, per head, the margin drop of removing it alone by mean ablation
    (the means over the next ``reference_sequences``) with its split-half reliability and
    the head's minimax fidelity in both modes. The sequences are those of the finite-data
    models of the same task. ``recorded``: the results recorded beside the shipped models
    (``models/recorded/``, ``python -m bparallel record``), read before computing."""
    return head_study(models, num_sequences=num_sequences,
                      reference_sequences=reference_sequences, horizon=horizon,
                      cache_dir=cache_dir, recorded=recorded, impact=True)


def layer_knockouts(runs: FreshRuns, measured: Mapping[tuple[str, int, int, int], HeadStudy]
                    ) -> list[dict[str, Any]]:
    """Which layers each task needs, on the fresh-data models: per task, arm and head count,
    the held-out accuracy on the predictable positions (percent, mean over seeds) of the
    intact model, with every head removed, and with one layer's heads removed (zero
    ablation), from :func:`measure_heads`."""
    keys = sorted(measured)
    ko = {k: measured[k].knockout for k in keys}
    rows = []
    for task in runs.profiles:
        for arm in ARMS:
            for h in HEADS:
                mine = [ko[k] for k in keys if k[:3] == (task, h, arm_head_dim(arm, h))]
                if not mine:
                    continue
                layers = sorted(int(n[1:]) for n in mine[0] if n.startswith("L"))
                row: dict[str, Any] = {"task": task, "arm": ARM_NAMES[arm], "heads": h,
                                       "seeds": len(mine)}
                for name, label in (("none", "intact (%)"), ("all", "no attention (%)")):
                    row[label] = f"{100 * np.mean([m[name]['accuracy'] for m in mine]):.1f}"
                for la in layers:
                    row[f"layer {la} removed (%)"] = \
                        f"{100 * np.mean([m[f'L{la}']['accuracy'] for m in mine]):.1f}"
                rows.append(row)
    return rows


def head_tests(measured: Mapping[tuple[str, int, int, int], HeadStudy]
               ) -> list[dict[str, Any]]:
    """Per task, arm and mode, does per-head fidelity rank the fresh-data models' heads as
    their impact does? :func:`~.statistics.head_claims` of the cells above the noise floor
    (:func:`~.statistics.scored_cells`, Holm over every (model, layer) cell of the fresh-data
    models) of :func:`measure_heads`, per task and arm (a model two arms share, 4 x 16 or
    16 x 16, counts in both; never pooled across tasks), with Holm's correction over the
    family of these tests. Each test has its ``task``, ``arm`` and ``ranking``."""
    cells = scored_cells({
        k: {"impact": m.impact, "fidelity.paper": m.head_fidelity["paper"],
            "fidelity.definition": m.head_fidelity["definition"]}
        for k, m in measured.items() if m.impact is not None})
    by_arm = [{**c, "arm": arm} for c in cells for arm in ARMS
              if arm_head_dim(arm, c["model"][1]) == c["model"][2]]
    return head_claims(by_arm, by=("task", "arm"))


def _of_arm(tests: Sequence[Mapping[str, Any]], arm: str) -> list[Mapping[str, Any]]:
    return [t for t in tests if t["arm"] == arm]


def arms_of_tests(tests: Sequence[Mapping[str, Any]]) -> list[str]:
    """The arms :func:`head_tests` tested, in the order of :data:`ARMS`."""
    return [a for a in ARMS if any(t["arm"] == a for t in tests)]


def head_table(tests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`head_tests` as the page shows them: per arm and task, the reliable cells, each
    mode's median rho with its p-value, and the verdict (:func:`~.graph_tasks.head_table`
    of each arm's tests)."""
    return [{"arm": ARM_NAMES[arm], **row} for arm in arms_of_tests(tests)
            for row in task_head_table(_of_arm(tests, arm))]


def head_results(tests: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The recorded values of :func:`head_tests`: per arm, those of
    :func:`~.graph_tasks.head_results` (``fresh.heads.<arm>.<task>.*`` and
    ``verdict.heads.fresh.<arm>.<task>``), each arm's verdict over the tasks
    (``verdict.heads.fresh.<arm>``) and the arms' common verdict (``verdict.heads.fresh``),
    as :func:`heads_rows` gives them."""
    out: dict[str, float] = {}
    for arm in arms_of_tests(tests):
        for k, v in task_head_results(_of_arm(tests, arm)).items():
            if k.startswith("verdict.heads."):
                out[f"verdict.heads.fresh.{arm}.{k.removeprefix('verdict.heads.')}"] = v
            else:
                out[f"fresh.heads.{arm}.{k.removeprefix('heads.')}"] = v
    for row in heads_rows(tests):
        out["verdict.heads.fresh" + (f".{row['slug']}" if row["slug"] else "")] = \
            verdict_index(row["verdict"])
    return out


def heads_rows(tests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verdict-table rows of the per-head claim on the fresh-data models: one per arm
    (:func:`~.graph_tasks.heads_verdict` of its tests: its verdict over the tasks, the
    per-task verdicts as evidence) and one for the arms together, by the chapter's rule for
    every claim (:func:`~.statistics.over_tasks` of the arms' verdicts, an arm that cannot
    test it set aside: *fails* when any arm fails; its condition names the arms where it
    holds). Each row has a ``slug``: the arm, ``""`` for the arms together."""
    rows = [{**heads_verdict(_of_arm(tests, arm), models="fresh-data models",
                             arm=ARM_NAMES[arm]), "slug": arm} for arm in arms_of_tests(tests)]
    if not rows:
        return []
    by_arm = {r["slug"]: r["verdict"] for r in rows}
    said = {r["slug"]: r.get("condition", "") for r in rows}
    verdict = over_tasks(list(by_arm.values()))
    return [*rows, {"claim": HEADS_CLAIM, "arm": f"{ALL_ARMS} (fresh data)", "slug": "",
                    "verdict": verdict, "condition": arms_condition(verdict, by_arm, said),
                    "evidence": arms_evidence(by_arm, said)}]


__all__ = ["arms_of_tests", "head_results", "head_table", "head_tests", "heads_rows",
           "layer_knockouts", "measure_heads"]
