"""Chapter 13's formation steps, hypotheses and knockouts (bparallel.book.section4.circuit,
circuit_knockouts): synthetic probe series with known answers, the shipped runs, and the
causal check on one shipped model against an independent evaluation.

Smallest effects these tests find: a formation step off by one probe (20 steps), a head
named one place off, a single probe above the threshold taken for a formed head, a p-value
off scipy's paired t-test by more than 1e-12, an accuracy off the independent evaluation by
more than 1e-12, a knockout that leaves induction at 10% or more.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy import stats

from bparallel.book.section4 import circuit as c
from bparallel.book.section4 import circuit_knockouts as ck
from bparallel.book.verdicts import Outcome, Verdict
from bparallel.transformer.shipped import MODELS_ROOT

STEPS = list(range(0, 420, 20))


def _entry(prev_at=200, ind_at=240, acc_at=260, *, L=3, H=2, blip=None, last_layer_prev=None):
    """A manifest entry whose previous-token score of layer 0 head 1 jumps to 0.5 at
    ``prev_at``, induction score of layer 2 head 0 to 0.9 at ``ind_at``, accuracy to 1 at
    ``acc_at``; ``blip``: one probe where layer 1 head 0's previous-token score is 0.9;
    ``last_layer_prev``: the step from which the last layer's head 1 scores 0.9 on it."""
    prev, ind, acc = [], [], []
    for s in STEPS:
        p = np.full((L, H), 0.04)
        i = np.full((L, H), 0.01)
        if s >= prev_at:
            p[0, 1] = 0.5
        if blip == s:
            p[1, 0] = 0.9
        if last_layer_prev is not None and s >= last_layer_prev:
            p[L - 1, 1] = 0.9
        if s >= ind_at:
            i[2, 0] = 0.9
        prev.append(p.tolist())
        ind.append(i.tolist())
        acc.append(1.0 if s >= acc_at else 0.01)
    return {"task": "induction", "heads": H, "head_size": 8, "seed": 42, "profile": "x",
            "head_probes": {"step": STEPS, "previous_token": prev, "induction": ind,
                            "accuracy_predictable": acc}}


def test_formation_finds_the_known_steps_and_heads():
    f = c.formation(_entry())
    assert f["previous_token"]["step"] == 200
    assert (f["previous_token"]["layer"], f["previous_token"]["head"]) == (0, 1)
    assert f["induction"]["step"] == 240
    assert (f["induction"]["layer"], f["induction"]["head"]) == (2, 0)
    assert f["loss"] == 260
    assert f["previous_token"]["heads_final"] == 1 and f["induction"]["heads_final"] == 1


def test_one_probe_above_the_threshold_is_not_a_formed_head():
    f = c.formation(_entry(prev_at=10_000, blip=100))
    assert f["previous_token"]["step"] is None and f["previous_token"]["layer"] is None


def test_a_previous_token_head_in_the_last_layer_does_not_count():
    f = c.formation(_entry(prev_at=300, last_layer_prev=100))
    assert f["previous_token"]["step"] == 300


def test_sensitivity_on_a_ramp_is_the_first_step_at_each_threshold():
    e = _entry()
    ramp = [min(1.0, s / 400) for s in STEPS]  # score s/400 at step s
    e["head_probes"]["induction"] = [[[0.0, 0.0], [0.0, 0.0], [r, 0.0]] for r in ramp]
    got = c.sensitivity(e)["induction"]
    for tau, step in got.items():
        assert step == min(s for s in STEPS if s / 400 >= tau)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="head_probes"):
        c.formation({"task": "induction"})
    with pytest.raises(ValueError, match="part"):
        c.part_formed(_entry(), "copying")
    with pytest.raises(ValueError, match="threshold"):
        c.part_formed(_entry(), "induction", 1.5)


def _rows(lags1, lags16, prev1, prev16, profile=c.PLANNED_PROFILE):
    rows = []
    for s, (l1, l16, p1, p16) in enumerate(zip(lags1, lags16, prev1, prev16, strict=True)):
        rows.append({"profile": profile, "heads": 1, "head_size": 256, "seed": s,
                     "prev": p1, "ind": p1, "loss": p1 + l1})
        rows.append({"profile": profile, "heads": 16, "head_size": 16, "seed": s,
                     "prev": p16, "ind": p16, "loss": p16 + l16})
    return rows


#: The family stated before the runs: H1 at 8 configurations, H2a and H2b at 6.
PLANNED_TESTS = 8 + 6 + 6


def test_hypotheses_on_known_changes():
    # the lag 40-45 steps in both, the previous-token head 400 steps later at 16 heads
    rows = _rows([40, 45, 40, 45], [45, 40, 45, 40], [300, 320, 300, 340],
                 [700, 720, 740, 720])
    tests = c.formation_tests(rows)
    sizes = c.decide(tests)
    # H1 twice, H2a, H2b decided; every other planned test pending
    assert sizes == {"primary": PLANNED_TESTS, "scale": 0, "exploratory": 0}
    assert len(tests) == PLANNED_TESTS
    assert c.pending_tests(tests) == PLANNED_TESTS - 4
    decided = [t for t in tests if t["outcome"] is not None]
    assert {(t["test"], t["heads"]) for t in decided} == {("H1", 1), ("H1", 16), ("H2a", 16),
                                                          ("H2b", 16)}
    h1 = [t for t in decided if t["test"] == "H1"]
    assert all(t["outcome"] is Outcome.AS_CLAIMED for t in h1)
    h2a = next(t for t in decided if t["test"] == "H2a")
    p = stats.ttest_rel([700, 720, 740, 720], [300, 320, 300, 340]).pvalue
    assert h2a["p_value"] == pytest.approx(p, rel=1e-12)
    assert h2a["outcome"] is Outcome.AS_CLAIMED
    h2b = next(t for t in decided if t["test"] == "H2b")
    assert h2b["change"] == 0 and h2b["outcome"] is Outcome.NOT_RESOLVED
    v = c.hypotheses(tests)
    assert v["H1"] is Verdict.HOLDS and v["H2"] is Verdict.HOLDS
    assert v["H3 count"] is Verdict.NOT_TESTABLE


def test_a_lag_that_grows_with_the_head_count_fails_h2():
    rows = _rows([40, 60, 40, 60], [400, 420, 380, 410], [300, 320, 300, 340],
                 [700, 720, 740, 720])
    tests = c.formation_tests(rows)
    c.decide(tests)
    assert c.hypotheses(tests)["H2"] is Verdict.FAILS


def test_fewer_than_three_seeds_is_not_testable():
    rows = _rows([40, 60], [60, 40], [300, 320], [700, 720])
    tests = c.formation_tests(rows)
    assert c.decide(tests) == {"primary": PLANNED_TESTS, "scale": 0, "exploratory": 0}
    assert c.pending_tests(tests) == PLANNED_TESTS
    assert set(c.hypotheses(tests).values()) == {Verdict.NOT_TESTABLE}


def test_a_pending_test_counts_as_p_one_and_the_family_keeps_its_size():
    """The primary family's Holm p-values are Holm's over the decided p-values and one p = 1
    per pending test (statistics.holm, an independent path); when a pending configuration's
    runs arrive, the family's size stays and no decided test's Holm p rises."""
    from bparallel.book.section4.statistics import holm

    rows = _rows([40, 45, 40, 45], [45, 40, 45, 40], [300, 320, 300, 340],
                 [700, 720, 740, 720])
    tests = c.formation_tests(rows)
    c.decide(tests)
    decided = [t for t in tests if t["outcome"] is not None and t.get("p") is not None]
    expected = holm([t["p"] for t in decided] + [1.0] * c.pending_tests(tests))
    assert [t["p_holm"] for t in decided] == pytest.approx(expected[: len(decided)], rel=1e-12)
    # 4 x 64's three seeds arrive: its H1, H2a and H2b leave the pending count
    more = rows + [{"profile": c.PLANNED_PROFILE, "heads": 4, "head_size": 64, "seed": s,
                    "prev": p, "ind": p, "loss": p + lag}
                   for s, (p, lag) in enumerate([(500, 40), (540, 45), (520, 40)])]
    later = c.formation_tests(more)
    assert c.decide(later)["primary"] == PLANNED_TESTS
    assert c.pending_tests(later) == c.pending_tests(tests) - 3
    before = {(t["test"], t["heads"]): t["p_holm"] for t in decided}
    for t in later:
        if (t["test"], t["heads"]) in before and t["head_size"] in (256, 16):
            assert t["p_holm"] <= before[(t["test"], t["heads"])] + 1e-15


def test_runs_of_another_recipe_are_exploratory_and_carry_no_verdict():
    rows = _rows([40, 45, 40, 45], [400, 420, 380, 410], [300, 320, 300, 340],
                 [700, 720, 740, 720], profile="induction-nodropout-cosine")
    tests = c.formation_tests(rows)
    sizes = c.decide(tests)
    explore = [t for t in tests if t["family"] == "exploratory"]
    assert len(explore) == 4 and sizes["exploratory"] == 4
    assert sizes["primary"] == PLANNED_TESTS and c.pending_tests(tests) == PLANNED_TESTS
    h2b = next(t for t in explore if t["test"] == "H2b")
    assert h2b["outcome"] is Outcome.AS_CLAIMED  # the lag grew: it would fail H2 if primary
    assert set(c.hypotheses(tests).values()) == {Verdict.NOT_TESTABLE}


def _scale_rows(one, plain16, scaled16, plain4, scaled4):
    """Loss steps per seed: 1 x 256 and 16 x 16, 1 x 64 and 16 x 4 at the planned profile
    (the 1-head runs the same list: the arms are not compared), the 16-head ones scaled."""
    rows = []
    for s in range(len(one)):
        for profile, h, d, loss in ((c.PLANNED_PROFILE, 1, 256, one[s]),
                                    (c.PLANNED_PROFILE, 1, 64, one[s]),
                                    (c.PLANNED_PROFILE, 16, 16, plain16[s]),
                                    (c.PLANNED_PROFILE, 16, 4, plain4[s])) + (
                (c.SCALE_PROFILE, 16, 16, scaled16[s]), (c.SCALE_PROFILE, 16, 4, scaled4[s])):
            if loss is not None:
                rows.append({"profile": profile, "heads": h, "head_size": d, "seed": s,
                             "prev": loss - 20, "ind": loss - 20, "loss": loss})
    return rows


def test_the_scale_control_is_stated_before_its_runs():
    """With no scaled run shipped, the scale family has its 4 tests (S1 and S2 at 16 x 16
    and 16 x 4), all pending at p = 1, and its verdicts are not testable; the reading says
    it cannot say yet."""
    from bparallel.book.section4 import circuit_report as cr

    rows = _scale_rows([300, 340, 280], [480, 520, 460], [None] * 3, [1040, 1120, 1080],
                       [None] * 3)
    tests = c.scale_tests(rows)
    sizes = c.decide(tests)
    assert sizes["scale"] == 4 == c.pending_tests(tests, family="scale")
    assert {t["test"] for t in tests} == {"S1", "S2"}
    v = c.hypotheses(tests)
    assert v["S1"] is Verdict.NOT_TESTABLE and v["S2"] is Verdict.NOT_TESTABLE
    assert "cannot say yet" in cr.scale_reading(v, tests)
    with pytest.raises(ValueError, match="family"):
        c.pending_tests(tests, family="exploratory")


@pytest.mark.parametrize(("scaled16", "scaled4", "s1", "s2", "words"), [
    # the scale is the whole delay: as soon as one head (within a few steps)
    ([300, 360, 280], [320, 340, 280], Verdict.HOLDS, Verdict.HOLDS, "The delay is"),
    # part of it: sooner, still behind one head
    ([400, 450, 370], [700, 800, 760], Verdict.HOLDS, Verdict.FAILS, "part of the delay"),
    # not it: no change
    ([500, 500, 460], [1060, 1100, 1080], Verdict.NOT_SUPPORTED, Verdict.FAILS,
     "do not learn resolvably sooner"),
    # against it: later
    ([560, 610, 530], [1160, 1230, 1190], Verdict.FAILS, Verdict.FAILS, "learn *later*"),
])
def test_the_scale_control_reads_its_three_outcomes(scaled16, scaled4, s1, s2, words):
    """S1 by paired t-test against the unscaled runs (scipy, an independent path), S2
    two-sided against one head; each of the three readings the chapter can give."""
    from bparallel.book.section4 import circuit_report as cr

    one, plain16, plain4 = [300, 340, 280], [480, 520, 460], [1040, 1120, 1080]
    tests = c.scale_tests(_scale_rows(one, plain16, scaled16, plain4, scaled4))
    assert c.decide(tests)["scale"] == 4
    s1_16 = next(t for t in tests if (t["test"], t["head_size"]) == ("S1", 16))
    assert s1_16["p_value"] == pytest.approx(stats.ttest_rel(scaled16, plain16).pvalue,
                                             rel=1e-12)
    v = c.hypotheses(tests)
    assert (v["S1"], v["S2"]) == (s1, s2)
    assert words in cr.scale_reading(v, tests)
    assert set(cr.scale_words(tests)) == {"S1", "S2"}
    # a claim of no change reads a resolved change as against it, never "as claimed"
    s2 = [r["outcome"] for r in cr.tests_table(tests) if r["test"].startswith("S2")]
    assert len(s2) == 2 and "as claimed" not in s2
    assert (v["S2"] is Verdict.FAILS) == ("a change: against the claim of none" in s2)


def test_size_or_count_directions():
    times = {}
    for s in range(4):
        times |= {(1, 16, s): 1300 + 20 * s, (16, 16, s): 1000 + 10 * s,
                  (1, 256, s): 600, (16, 4, s): 2200 - 40 * s}
    tests = c.size_or_count(times)
    c.decide(tests)
    count = next(t for t in tests if t["test"] == "H3 count")
    assert count["outcome"] is Outcome.AGAINST  # more heads of 16 learn sooner here
    sizes = {t["heads"]: t for t in tests if t["test"] == "H3 size"}
    assert sizes[1]["fewer"] == (1, 16) and sizes[1]["head_size"] == 256
    assert all(t["outcome"] is Outcome.AS_CLAIMED for t in sizes.values())
    v = c.hypotheses(tests)
    assert v["H3 count"] is Verdict.FAILS and v["H3 size"] is Verdict.HOLDS


def _naive_first(steps, values, tau, k=3):
    for i in range(len(steps) - k + 1):
        if all(v >= tau for v in values[i : i + k]):
            return steps[i]
    return None


def test_the_shipped_probed_runs_agree_with_a_naive_reading():
    entries = c.probed_entries()
    if not entries:
        pytest.skip("no probed run shipped")
    for e in entries:
        hp = e["head_probes"]
        f = c.formation(e)
        assert f["loss"] == _naive_first(hp["step"], hp["accuracy_predictable"], 0.9)
        best = [max(max(layer) for layer in step[:-1]) for step in hp["previous_token"]]
        assert f["previous_token"]["step"] == _naive_first(hp["step"], best, 0.3)
        best = [max(max(layer) for layer in step[1:]) for step in hp["induction"]]
        assert f["induction"]["step"] == _naive_first(hp["step"], best, 0.5)


# --------------------------------------------------------------------------- knockouts


def test_circuit_heads_and_masks():
    scores = {"previous_token": [[0.5, 0.04], [0.04, 0.45], [0.9, 0.9]],
              "induction": [[0.9, 0.01], [0.01, 0.01], [0.97, 0.6]]}
    heads = ck.circuit_heads(scores)
    assert heads == {"previous_token": [(0, 0), (1, 1)], "induction": [(2, 0), (2, 1)]}
    masks, labels = ck.knockout_masks((3, 2), heads, seed=0)
    assert [lab for lab, _ in labels[:4]] == ["none", "previous_token", "induction", "control"]
    assert masks[0].sum() == 6 and masks[1][0, 0] == 0 and masks[1][1, 1] == 0
    assert masks[1].sum() == 4 and masks[2].sum() == 4
    outside = {(0, 1), (1, 0)}
    removed = {tuple(ix) for ix in torch.nonzero(masks[3] == 0).tolist()}
    assert removed == outside  # two previous-token heads: both heads outside removed
    keep = [(lab, h) for lab, h in labels if lab.startswith("keep_one")]
    assert len(keep) == 4
    for (_lab, h), m in zip(labels[4:], masks[4:], strict=True):
        assert m[h] == 1 and m.sum() == 5


@pytest.fixture
def shipped_induction():
    """``shipped_induction(name)``: the shipped induction-fresh model ``name`` of the
    manifest (its SHA-256 checked) and the task's fresh held-out set; skips where the
    profile is not shipped."""
    from bparallel.transformer.checkpoints import load_weights
    from bparallel.transformer.design import fresh_heldout

    path = MODELS_ROOT / "induction-fresh" / "manifest.json"
    if not path.is_file():
        pytest.skip("induction-fresh not shipped")

    def load(name: str):
        entry = json.loads(path.read_text())["models"][name]
        model, _ = load_weights(MODELS_ROOT / "induction-fresh" / entry["file"],
                                sha256=entry["sha256"])
        return model, fresh_heldout("induction", "induction-fresh")

    return load


def test_knockouts_on_a_shipped_model(shipped_induction):
    from bparallel.transformer.evaluation import evaluate_accuracy

    model, held = shipped_induction("induction-h04")
    r = ck.knockouts(model, held, seed=42, probe_sequences=20, num_sequences=40,
                     reference_sequences=40)
    intact = evaluate_accuracy(model, held.subset(slice(20, 60)))["accuracy_predictable"]
    assert abs(r["none"] - intact) <= 1e-12
    assert r["previous_token"] < 0.1 and r["induction"] < 0.1  # the circuit's heads
    assert r["control"] >= 0.9  # as many heads outside it
    assert len(r["heads"]["induction"]) == 4 and r["keep_one_induction"] is not None
    with pytest.raises(ValueError, match="num_sequences"):
        ck.knockouts(model, held, seed=42, probe_sequences=20, num_sequences=0,
                     reference_sequences=40)


def _iv(mean, half):
    from bparallel.book.section4.statistics import Interval
    return Interval(mean, mean - half, mean + half, 3, 0.95)


def test_knockout_verdict_by_the_rule():
    from bparallel.book.section4 import circuit_report as cr

    ok = {"previous_token": _iv(0.03, 0.02), "induction": _iv(0.01, 0.005),
          "control": _iv(0.99, 0.01)}
    assert cr.knockout_verdict([ok, ok]) == (Verdict.HOLDS, 2, 2)
    # a knockout whose interval reaches the collapse level (0.1) is not a collapse
    edge = {**ok, "induction": _iv(0.08, 0.03)}
    assert cr.knockout_verdict([ok, edge]) == (Verdict.HOLDS_WITH_CONDITIONS, 1, 2)
    kept = {**ok, "previous_token": _iv(0.95, 0.01)}  # the circuit not needed: against
    assert cr.knockout_verdict([ok, kept])[0] is Verdict.FAILS


def test_knockout_summary_is_the_seed_interval():
    from bparallel.book.section4.statistics import seed_interval

    rows = [{"heads": {"previous_token": [(1, 0)], "induction": [(3, 0)]}, "heads_n": 1,
             "head_size": 64, "seed": s, "none": 1.0, "previous_token": p, "induction": 0.01,
             "control": 1.0, "keep_one_previous_token": None, "keep_one_induction": None}
            for s, p in zip((42, 43, 44), (0.02, 0.05, 0.03), strict=True)]
    (row,) = ck.knockout_summary(rows)
    want = seed_interval([0.02, 0.05, 0.03])
    assert row["previous_token"] == want and row["keep_one_induction"] is None
    assert row["seeds"] == 3 and row["n_previous_token"] == 1.0


def test_a_recorded_knockout_reads_back_what_was_computed(tmp_path, shipped_induction):
    from bparallel.transformer import metrics_cache

    model, held = shipped_induction("induction-h01")
    sizes = dict(seed=42, probe_sequences=20, num_sequences=20, reference_sequences=20)
    with metrics_cache.tracked_files(lookup_only=True) as names, \
            pytest.raises(metrics_cache.NotCached):
        ck.recorded_knockouts(model, held, cache_dir=tmp_path, **sizes)
    computed = ck.recorded_knockouts(model, held, cache_dir=tmp_path, **sizes)
    assert [p.name for p in tmp_path.glob("metrics-*.npz")] == [names.pop()]
    with metrics_cache.tracked_files(lookup_only=True):
        read = ck.recorded_knockouts(model, held, recorded=tmp_path, **sizes)
    assert read == computed  # the same numbers, None where a knockout does not apply
    assert read["keep_one_induction"] is None and read["heads"] == computed["heads"]


def test_a_conditional_hypothesis_names_the_configurations_that_bear_it_out():
    """cr.conditions: H2 holds with conditions at 8 x 32 when 8 x 32's H2a goes the claimed
    way and its H2b resolves no change, and not at 4 x 64 whose H2a is unresolved; every
    other verdict has no condition; a conditional verdict no test bears out is refused."""
    from bparallel.book.section4 import circuit_report as cr
    from bparallel.book.verdicts import Outcome, Verdict

    def t(name, h, d, outcome):
        return {"test": name, "heads": h, "head_size": d, "outcome": outcome,
                "family": "primary"}

    tests = [t("H2a", 4, 64, Outcome.NOT_RESOLVED), t("H2b", 4, 64, Outcome.NOT_RESOLVED),
             t("H2a", 8, 32, Outcome.AS_CLAIMED), t("H2b", 8, 32, Outcome.NOT_RESOLVED),
             t("H1", 4, 64, Outcome.NO_CHANGE)]
    verdicts = {"H1": Verdict.NOT_SUPPORTED, "H2": Verdict.HOLDS_WITH_CONDITIONS}
    assert cr.conditions(verdicts, tests) == {"H1": "", "H2": "at 8 × 32"}
    rows = cr.verdicts_table(verdicts, {"H1": "a", "H2": "b"}, cr.conditions(verdicts, tests))
    assert rows[1]["verdict"] == "{verdict}`holds with conditions`: at 8 × 32"
    tests[3]["outcome"] = Outcome.AGAINST  # its lag changed: 8 x 32 no longer bears it out
    with pytest.raises(ValueError, match="no configuration"):
        cr.conditions(verdicts, tests)


def test_the_graph_around_the_phase_change_reads_the_probes_on_each_side():
    """circuit.graph_around: the previous-token head's layer's Algorithm 1 at the last
    training probe before the head forms and the first at or after the loss falls; None
    where a side has no probe or the value is not finite; graph_tests pairs it by seed as
    an exploratory test (no verdict)."""
    e = _entry(prev_at=200, ind_at=240, acc_at=260)
    mix = [[5.0, 5.0 + s / 100, 7.0] for s in (0, 100, 200, 400)]
    e["probes"] = {"step": [0, 100, 200, 400], c.GRAPH_MEASURE: mix}
    g = c.graph_around(e)
    assert g == {"layer": 0, "before_step": 100, "after_step": 400, "before": 5.0,
                 "after": 5.0}
    e["probes"][c.GRAPH_MEASURE][1][0] = None  # never mixed within the cutoff
    assert c.graph_around(e) is None
    e["probes"] = {"step": [300, 400], c.GRAPH_MEASURE: mix[:2]}  # nothing before the head
    assert c.graph_around(e) is None
    rows = [{"profile": "x", "heads": 4, "head_size": 16, "seed": s,
             "graph": {"before": 5.0 + s, "after": 7.0 + s + 0.01 * s}} for s in range(3)]
    tests = c.graph_tests(rows)
    assert len(tests) == 1 and tests[0]["family"] == "exploratory"
    assert tests[0]["change"] == pytest.approx(2.01) and tests[0]["direction"] == -1
    c.decide(tests)
    assert tests[0]["outcome"] is Outcome.AGAINST  # slower after: against the graph view
    assert set(c.hypotheses(tests).values()) == {Verdict.NOT_TESTABLE}


def test_no_change_that_rounds_to_zero_prints_a_sign():
    """A mixing time's change of -0.001 in the tests table reads 0.00 (the browser test of
    every page found "[-0.00, 6.97]"); a step change of 0.2 in the scale words reads 0."""
    from bparallel.book.section4 import circuit_report as cr

    g = {"test": "G", "family": "exploratory", "profile": "p", "heads": 8, "head_size": 32,
         "seeds": 3, "change": 3.48, "low": -0.001, "high": 6.97, "p": 0.2, "p_holm": 0.7,
         "outcome": Outcome.NOT_RESOLVED, "smallest": 17.0}
    assert cr.tests_table([g])[0]["steps (95% interval)"] == "3.48 [0.00, 6.97]"
    s1 = {"test": "S1", "family": "scale", "heads": 16, "head_size": 16, "seeds": 3,
          "change": 0.2, "p_holm": 0.5, "outcome": Outcome.NOT_RESOLVED}
    assert cr.scale_words([s1])["S1"] == "16 × 16: 0 steps (Holm p 0.500)"
