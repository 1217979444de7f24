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


def test_the_reversal_read_under_each_recipe():
    """Under the paper's recipe more heads learn later in every seed (mean rho -1, the
    reversal: *fails*); under the settling recipe the head counts are shuffled (rho 0.4, 0,
    -0.4: not supported); Holm over the two recipes, each p from the exact test of chapter
    12 (p of a perfect ranking in 3 seeds of 4 head counts: below 0.05 even after
    doubling). A seed whose head counts all tie has no rho: with two seeds left, not
    testable."""
    order = {1: 0, 4: 1, 8: 2, 16: 3}
    shuffled = {42: (600, 500, 700, 400), 43: (500, 700, 400, 600), 44: (600, 400, 500, 700)}
    by_recipe = {"paper": _runs(lambda h, s: 400 + 200 * order[h]),
                 "settling": _runs(lambda h, s: shuffled[s][order[h]])}
    tests = gcl.speed_by_recipe(by_recipe)
    paper, settling = tests["paper"], tests["settling"]
    assert paper["mean"] == pytest.approx(-1.0) and paper["seeds"] == 3
    assert paper["p_holm"] == pytest.approx(min(1.0, 2 * paper["p"]))
    assert paper["verdict"] is Verdict.FAILS
    assert settling["mean"] == pytest.approx(0.0, abs=1e-12)
    assert settling["verdict"] is Verdict.NOT_SUPPORTED and settling["cells"] == 3
    tied = {**shuffled, 44: (500,) * 4}
    tests = gcl.speed_by_recipe({**by_recipe,
                                 "settling": _runs(lambda h, s: tied[s][order[h]])})
    assert tests["settling"]["cells"] == 2
    assert tests["settling"]["verdict"] is Verdict.NOT_TESTABLE
    words = gcl.recipe_words(tests)
    assert words == ("under the paper recipe, mean ρ -1.00 over 3 seeds, significant after "
                     "the correction (Holm p < 0.001): more heads learn later: the reversal is "
                     "there; under the settling recipe, mean ρ +0.20 over 2 seeds, which its "
                     "seeds cannot decide (Holm p 0.733): its seeds cannot say whether the "
                     "reversal is there")
    assert set(gcl.RECIPE_KEYS) == set(gcl.RECIPE_CONTROL)
    with pytest.raises(ValueError, match="not complete"):
        gcl.speed_by_recipe({"paper": _runs(lambda h, s: 500, seeds=(42, 43))})
