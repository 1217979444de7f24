"""No verdict hangs on the last bit of a float: every threshold decision of the
verdict code goes through :func:`bparallel.ranks.reaches`, and every recorded verdict input
of the chapters sits clear of its threshold or was decided by that rule."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bparallel import ranks
from bparallel.book.tools.regress import reference_dir

ROOT = Path(__file__).resolve().parents[3]
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


#: Recorded verdict inputs of the paper references (key prefixes) and the thresholds their
#: medians are judged against (``statistics.RHO_HOLDS``, ``RHO_CONDITIONS``; the head
#: impact's reliability ``importance.RELIABLE``).
INPUTS = {"10_section4_as_defined": {"heads_claim.": (0.5, 0.2), "layers_claim.": (0.5, 0.2),
                                     "head_impact.": (0.8,)},
          "12_graph_tasks": {"heads.": (0.5, 0.2), "fresh.heads.": (0.5, 0.2)}}


def _verdict_inputs(refs: dict, prefixes: dict) -> dict[str, list[tuple[float, float, float]]]:
    """Per prefix, the ``(value, threshold, tolerance)`` triples of its recorded medians (the
    tolerance the regression allows the median)."""
    out: dict[str, list[tuple[float, float, float]]] = {prefix: [] for prefix in prefixes}
    for key, entry in refs.items():
        if not key.endswith(".median"):
            continue
        prefix = max((p for p in prefixes if key.startswith(p)), key=len, default=None)
        if prefix is not None:
            v = float(entry["value"])
            tol = entry.get("abs", 0.0) + entry.get("rel", 0.0) * abs(v)
            out[prefix] += [(v, t, tol) for t in prefixes[prefix]]
    return out


def test_the_constants_above_are_the_codes_thresholds():
    from bparallel.book.section4.statistics import RHO_CONDITIONS, RHO_HOLDS
    from bparallel.transformer.importance import RELIABLE

    assert (RHO_HOLDS, RHO_CONDITIONS, RELIABLE) == (0.5, 0.2, 0.8)


@pytest.mark.parametrize("notebook", sorted(INPUTS))
def test_recorded_inputs_near_a_threshold_are_decided_by_the_rule(notebook):
    """Every prefix names recorded medians (else this test would check nothing), and every
    recorded median is asserted on, one of two ways. A median within ``DECISION_TOL`` of a
    threshold is on the threshold (the values lie on a grid far coarser than that,
    bparallel.ranks), so the rule counts it as reaching: perturbing it by 1e-12 either way
    changes no decision. Any other median is clear of its threshold by more than its
    regression tolerance, so no move the regression lets pass can carry it across the
    threshold and flip a verdict unseen. (Chapter 12's 32 pairs are all of the second kind:
    none lies near a threshold, each is checked for its margin.)"""
    refs = json.loads((reference_dir() / "paper" / f"{notebook}.json").read_text())
    found = _verdict_inputs(refs, INPUTS[notebook])
    assert all(found.values()), f"prefixes naming no recorded median: " \
        f"{[p for p, pairs in found.items() if not pairs]}"
    unguarded = []
    for prefix, pairs in found.items():
        for v, t, tol in pairs:
            if abs(v - t) < ranks.DECISION_TOL:
                assert ranks.reaches(v - 1e-12, t) and ranks.reaches(v + 1e-12, t), prefix
            elif abs(v - t) <= tol:
                unguarded.append(f"{prefix} median {v!r}: threshold {t} within its "
                                 f"tolerance {tol:.3g}")
    assert not unguarded, unguarded


def test_the_reference_scan_finds_medians_by_their_longest_prefix():
    refs = {"heads.x.median": {"value": 0.5}, "fresh.heads.x.median": {"value": 0.2,
                                                                        "abs": 0.01},
            "heads.x.p": {"value": 0.01}}
    found = _verdict_inputs(refs, {"heads.": (0.5,), "fresh.heads.": (0.2,)})
    assert found == {"heads.": [(0.5, 0.5, 0.0)], "fresh.heads.": [(0.2, 0.2, 0.01)]}
    assert _verdict_inputs(refs, {"agreement.": (0.5,)}) == {"agreement.": []}
