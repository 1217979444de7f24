"""Chapter 13's graph through the replayed steps (bparallel.book.section4.circuit_steps):
the measure of the shipped runs' replayed weights agrees with what their training probed at
the steps both have; the reading around the fall on known series.

Smallest effects these tests find: a value off the manifest's by more than 1e-5 of it (the
manifest keeps 6 digits; CI's AVX2 kernels round differently from the native ones that
trained), a layer other than the previous-token head's, a step mark one step off."""

from __future__ import annotations

import pytest

from bparallel.book.section4 import circuit as c
from bparallel.book.section4 import circuit_steps as cs
from bparallel.book.section4.explorer_steps import STEP_RUNS

RTOL = 1e-5


@pytest.fixture(scope="module")
def series():
    return cs.graph_through_steps()


def test_the_replayed_graph_is_the_one_training_probed(series):
    assert [(r["heads"], r["head_size"]) for r in series] == list(STEP_RUNS)
    for r in series:
        assert r["layer"] is not None and len(r["values"]) == len(r["steps"]) >= 8
        both = [(v, w) for v, w in zip(r["values"], r["recorded"], strict=True)
                if w is not None]
        assert len(both) >= 2  # steps 0 and 200 (and 400): the runs' log-spaced probes
        for v, w in both:
            assert v == pytest.approx(w, rel=RTOL)
        assert r["steps"][0] < r["prev"] <= r["loss"] <= r["steps"][-1]


def test_the_layer_is_the_previous_token_heads(series):
    from bparallel.book.section4.circuit import probed_entries

    entries = {(e["heads"], e["head_size"], e["seed"]): e for e in probed_entries()
               if e["profile"] == c.PLANNED_PROFILE}
    for r in series:
        f = c.formation(entries[(r["heads"], r["head_size"], r["seed"])])
        assert r["layer"] == f["previous_token"]["layer"]
        assert (r["prev"], r["loss"]) == (f["previous_token"]["step"], f["loss"])


def _row(values, steps=(0, 200, 260, 280, 300, 400), prev=280, loss=300):
    return {"heads": 1, "head_size": 256, "seed": 42, "layer": 2, "prev": prev, "loss": loss,
            "steps": list(steps), "values": list(values), "recorded": [None] * len(steps)}


def test_through_the_fall_reads_the_steps_around_it():
    around = cs.through_the_fall(_row([6.0, 5.5, 5.2, 5.0, 4.0, 4.5]))
    assert around == {"before_step": 260, "before": 5.2, "after_step": 300, "after": 4.0,
                      "change": pytest.approx(-1.2, abs=1e-12)}
    assert cs.through_the_fall(_row([6.0] * 6, prev=0)) is None  # no step before
    assert cs.through_the_fall(_row([6.0] * 6, loss=500)) is None  # none after
    assert cs.through_the_fall({**_row([6.0] * 6), "layer": None}) is None
    # a missing value is skipped, not read as a number
    around = cs.through_the_fall(_row([6.0, 5.5, None, 5.0, None, 4.5]))
    assert (around["before_step"], around["after_step"]) == (200, 400)


def test_the_table_marks_the_formation_and_the_fall():
    rows = cs.steps_graph_table([_row([6.0, 5.5, 5.2, 5.0, 4.0, 4.5], prev=300, loss=300),
                                 {**_row([1.0] * 6), "layer": None}])
    assert len(rows) == 6 and rows[0]["run"] == "1 × 256, seed 42, layer 3"
    assert rows[4]["at this step"] == "previous-token head forms; loss falls"
    assert [r["at this step"] for r in rows[:4]] == [""] * 4
    assert rows[4]["mixing time (Algorithm 1, as defined)"] == "4.00"


def test_the_reading_says_which_way_each_run_moves():
    faster = _row([6.0, 5.5, 5.2, 5.0, 4.0, 4.5])
    slower = {**_row([6.0, 5.5, 5.2, 5.0, 7.0, 4.5]), "heads": 16, "head_size": 16}
    text = cs.steps_reading([faster, slower])
    assert text.startswith("In 1 × 256 it falls from 5.20 (step 260) to 4.00 (step 300)")
    assert "in 16 × 16 it rises from 5.20 (step 260) to 7.00" in text
    assert "opposite directions" in text
    assert "faster through the fall in every run" in cs.steps_reading([faster])
    assert "slower through the fall in every run" in cs.steps_reading([slower])
    assert cs.steps_reading([{**faster, "layer": None}]).startswith("No run")
