"""Chapter 12's controls of the reversal (graph_controls): read only when complete."""

from __future__ import annotations

import pytest

from bparallel.book.section4 import graph_controls as gcl
from bparallel.book.section4.models import FreshRuns
from bparallel.book.verdicts import Verdict
from bparallel.transformer.arms import arm_head_dim
from bparallel.transformer.design import HEADS


def _runs(step_of, seeds=(42, 43, 44)):
    """Induction runs of the fixed-attention-width arm, ``step_of(heads, seed)`` its
    learning step (None: never learned)."""
    entries = [{"task": "induction", "heads": h, "head_size": arm_head_dim("inner256", h),
                "seed": s, "arms": ["inner256"], "steps_to_threshold": step_of(h, s)}
               for h in HEADS for s in seeds]
    return FreshRuns(entries, profiles={"induction": {}})


def test_the_shipped_control_is_pending_and_shows_no_partial_result():
    by_rate = gcl.control_runs(gcl.LR_CONTROL)
    status = gcl.control_status(by_rate)
    if status["complete"]:
        pytest.skip("the learning-rate control is complete")
    assert status["words"] == f"runs pending: {status['shipped']} of 36 runs shipped"
    assert status["needed"] == len(HEADS) * len(gcl.LR_CONTROL) * gcl.CONTROL_SEEDS
    with pytest.raises(ValueError, match="not complete"):
        gcl.best_rates(by_rate)
    assert not any(k.endswith("median step") for r in gcl.control_rows(by_rate) for k in r)


def test_each_configuration_at_its_own_best_rate():
    # at 1e-3 more heads learn slower; at 3e-3 sixteen heads learn sooner than at 1e-3,
    # yet later than every other head count at its best rate: the reversal stays
    by_rate = {3e-4: _runs(lambda h, s: None),
               1e-3: _runs(lambda h, s: 400 + 100 * h),
               3e-3: _runs(lambda h, s: 3000 - 100 * h)}
    assert gcl.control_status(by_rate) == {"shipped": 36, "needed": 36, "complete": True,
                                           "words": "complete: 36 runs"}
    assert gcl.best_rates(by_rate) == {1: 1e-3, 4: 1e-3, 8: 1e-3, 16: 3e-3}
    # medians 500, 800, 1,200 at 1e-3; 1,400 at 3e-3: the ranking is still more heads later
    test = gcl.speed_at_best(by_rate)
    assert test["seeds"] == 3 and test["mean"] == pytest.approx(-1.0)
    assert test["verdict"] is Verdict.FAILS
    rows = gcl.control_rows(by_rate, label=lambda r: f"{r:g}")
    assert rows[0]["0.0003: median step"] == "not within the budget"
    assert rows[3]["0.003: median step"] == "1,400"
