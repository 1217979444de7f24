"""The paper's graph view through the phase change, at the replayed steps (chapter 13,
exploratory): the layer that carries the previous-token head, measured as the paper reads a
layer, at every step :mod:`bparallel.transformer.replay` kept of the explorer's two runs
(:data:`~.explorer_steps.STEP_RUNS`, seed 42), 10 to 20 steps apart through the fall.

The runs' own probes of the graph (:func:`~bparallel.transformer.measure.training_probe`)
are log-spaced, 200 or 400 steps apart around the fall, too coarse to say whether the graph
moves before the loss does (:func:`~.circuit.graph_around`). The replayed weights give the
same measure, :data:`~.circuit.GRAPH_MEASURE` (Algorithm 1 as defined, the layer's heads
combined with their learned weights), on the same probe sequences, at each kept step: equal
to the manifest's value at every step both have (to its 6 stored digits; tested). One seed
per run, stated after the runs: a reading, not a test.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...transformer.measure import training_probe
from ...transformer.replay import load_step
from ...transformer.shipped import MODELS_ROOT
from .circuit import GRAPH_MEASURE, formation
from .explorer_steps import STEP_RUNS, replayed_run, step_probe_set

__all__ = ["graph_through_steps", "steps_graph_table", "steps_reading", "through_the_fall"]


def _probe_value(entry: Mapping[str, Any], step: int, layer: int) -> float | None:
    """The manifest's own probe of the layer at ``step``, if the run probed there."""
    probes = entry.get("probes") or {}
    steps = list(probes.get("step", []))
    if step not in steps or GRAPH_MEASURE not in probes:
        return None
    value = probes[GRAPH_MEASURE][steps.index(step)][layer]
    return None if value is None else float(value)


def graph_through_steps(runs: Sequence[Sequence[int]] = STEP_RUNS, *,
                        models_root: str | os.PathLike = MODELS_ROOT) -> list[dict[str, Any]]:
    """Per run ``(heads, head_size)`` of ``runs`` (seed 42 of
    :data:`~.explorer_steps.STEP_PROFILE`, :func:`~.explorer_steps.replayed_run`): the
    previous-token head's layer (:func:`~.circuit.formation`, the best-scoring head when it
    forms), the steps that head forms and the loss falls (the probes' clock), and at every
    replayed step the layer's :data:`~.circuit.GRAPH_MEASURE` on the run's probe sequences
    (:func:`~.explorer_steps.step_probe_set`)
    (``values``, one per ``steps``) beside the manifest's value where the run probed that
    step (``recorded``, else ``None``). A run whose head never formed has ``layer`` ``None``
    and no values. ``FileNotFoundError`` when a run or its steps are not shipped."""
    probe_set = step_probe_set()
    out = []
    for pair in runs:
        run, entry, kept, folder = replayed_run(pair, models_root)
        f = formation(entry)
        layer = f["previous_token"]["layer"] if f["previous_token"]["step"] is not None \
            else None
        row: dict[str, Any] = {"heads": run.heads, "head_size": run.config.head_dim,
                               "seed": run.seed, "layer": layer,
                               "prev": f["previous_token"]["step"], "loss": f["loss"],
                               "steps": [int(s) for s in kept["steps"]], "values": [],
                               "recorded": []}
        if layer is not None:
            for step in row["steps"]:
                probe = training_probe(load_step(run, folder, step), probe_set)
                value = probe[GRAPH_MEASURE][layer]
                row["values"].append(None if value is None or not math.isfinite(value)
                                     else float(value))
                row["recorded"].append(_probe_value(entry, step, layer))
        out.append(row)
    return out


def through_the_fall(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The measure of a :func:`graph_through_steps` run at the last replayed step before
    its previous-token head forms (``before``, ``before_step``) and the first at or after
    its loss falls (``after``, ``after_step``), and the ``change``; ``None`` where either
    side has no step."""
    if row["layer"] is None or row["prev"] is None or row["loss"] is None:
        return None
    pairs = [(s, v) for s, v in zip(row["steps"], row["values"], strict=True) if v is not None]
    before = [(s, v) for s, v in pairs if s < row["prev"]]
    after = [(s, v) for s, v in pairs if s >= row["loss"]]
    if not before or not after:
        return None
    (s0, v0), (s1, v1) = before[-1], after[0]
    return {"before_step": s0, "before": v0, "after_step": s1, "after": v1, "change": v1 - v0}


def steps_graph_table(series: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chapter 13's table of :func:`graph_through_steps`: one row per replayed step of each
    run, the measure of its previous-token head's layer, and what happens at that step (the
    head forms, the loss falls: the probes' clock)."""
    rows = []
    for r in series:
        if r["layer"] is None:
            continue
        name = f"{r['heads']} × {r['head_size']}, seed {r['seed']}, layer {r['layer'] + 1}"
        for step, value in zip(r["steps"], r["values"], strict=True):
            marks = [text for at, text in ((r["prev"], "previous-token head forms"),
                                           (r["loss"], "loss falls")) if at == step]
            rows.append({"run": name, "step": f"{step:,}",
                         "mixing time (Algorithm 1, as defined)":
                             "—" if value is None else f"{value:.2f}",
                         "at this step": "; ".join(marks)})
    return rows


def steps_reading(series: Sequence[Mapping[str, Any]]) -> str:
    """In words, how the previous-token head's layer's mixing time moves through the fall in
    each run of :func:`graph_through_steps` (:func:`through_the_fall`), and whether the runs
    agree with the paper's view that a layer that learns mixes faster. One seed per run: a
    reading, never a verdict."""
    moves = []
    for r in series:
        a = through_the_fall(r)
        if a is None:
            continue
        way = "falls" if a["change"] < 0 else "rises" if a["change"] > 0 else "stays"
        moves.append((a["change"], f"in {r['heads']} × {r['head_size']} it {way} from "
                                   f"{a['before']:.2f} (step {a['before_step']:,}) to "
                                   f"{a['after']:.2f} (step {a['after_step']:,})"))
    if not moves:
        return "No run has a replayed step on both sides of its fall."
    said = "; ".join(text for _, text in moves)
    signs = {(change > 0) - (change < 0) for change, _ in moves}
    if signs == {-1}:
        end = ("the layer mixes faster through the fall in every run, as the paper's view "
               "would have it")
    elif signs == {+1}:
        end = "the layer mixes slower through the fall in every run, against the paper's view"
    else:
        end = ("the runs move in opposite directions, so nothing here says that the "
               "previous-token head makes its layer mix faster as the loss falls")
    return (f"{said[0].upper()}{said[1:]}: {end}. One seed per run, stated after the runs: a "
            "reading, not a test.")
