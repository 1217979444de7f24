"""No verdict hangs on the last bit of a float (issue #32): every threshold decision of the
verdict code goes through :func:`bparallel.ranks.reaches`, and every recorded verdict input
of the chapters sits clear of its threshold or was decided by that rule."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bparallel import ranks

ROOT = Path(__file__).resolve().parents[1]
#: The modules that turn measured numbers into verdicts and reliability flags.
VERDICT_CODE = tuple(f"bparallel/book/section4/{m}.py" for m in (
    "statistics", "as_defined", "graph_tasks", "graph_experiment", "across_seeds",
    "across_seeds_stats", "proxies",
    "amplification"))
#: Names that hold a threshold of a decision.
THRESHOLDS = {"RELIABLE", "RHO_HOLDS", "RHO_CONDITIONS", "ALPHA", "holds", "conditions",
              "threshold", "tolerance", "alpha"}


def _threshold_comparisons(path: Path) -> list[str]:
    """Comparisons ``x >= t`` / ``x < t`` (any order) whose one side names a threshold."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            continue
        sides = [node.left, *node.comparators]
        names = {s.id for s in sides if isinstance(s, ast.Name)} | {
            s.attr for s in sides if isinstance(s, ast.Attribute)}
        other = [s for s in sides if not (isinstance(s, ast.Name) and s.id in THRESHOLDS)
                 and not (isinstance(s, ast.Attribute) and s.attr in THRESHOLDS)]
        if names & THRESHOLDS and other:  # a threshold against a value, not another threshold
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_verdict_code_decides_thresholds_only_through_reaches():
    found = [hit for p in VERDICT_CODE for hit in _threshold_comparisons(ROOT / p)]
    assert not found, f"threshold compared by float comparison, not ranks.reaches: {found}"


def test_the_scan_sees_a_float_comparison(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(value, threshold):\n    return value >= threshold\n")
    assert _threshold_comparisons(bad) == ["bad.py:2"]


#: Recorded verdict inputs of the paper references and their thresholds.
INPUTS = {"10_section4_as_defined": {"heads_claim.": (0.5, 0.2), "layers_claim.": (0.5, 0.2),
                                     "head_impact.": (0.8,)},
          "12_graph_tasks": {"heads.": (0.5, 0.2), "agreement.": (0.5, 0.2)}}


@pytest.mark.parametrize("notebook", sorted(INPUTS))
def test_recorded_inputs_near_a_threshold_are_decided_by_the_rule(notebook):
    """A recorded median or reliability within 1e-9 of a threshold is on the threshold (the
    values lie on a grid far coarser than that, bparallel.ranks), so the rule counts it as
    reaching: perturbing it by 1e-12 either way changes no decision."""
    refs = json.loads((ROOT / "tests" / "reference" / "paper" / f"{notebook}.json").read_text())
    near = 0
    for key, entry in refs.items():
        for prefix, thresholds in INPUTS[notebook].items():
            if not key.startswith(prefix) or not key.endswith((".median", "rho.median")):
                continue
            for t in thresholds:
                v = float(entry["value"])
                if abs(v - t) < ranks.DECISION_TOL:
                    near += 1
                    assert ranks.reaches(v - 1e-12, t) and ranks.reaches(v + 1e-12, t), key
    assert near >= 0  # counted for the message of a failure above
