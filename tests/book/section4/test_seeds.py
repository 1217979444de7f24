"""bparallel.book.section4.statistics and .across_seeds against hand-computed statistics."""

import math

import numpy as np
import pytest

from bparallel.book.section4.statistics import (
    paired_effect,
    seed_interval,
    share_interval,
    share_of_seeds,
)


def test_t_interval_by_hand():
    # values 1, 2, 3: mean 2, s = 1, t_{2, 0.975} = 4.302652729749464
    iv = seed_interval([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)
    assert iv.mean == 2.0 and iv.n == 3
    assert iv.low == pytest.approx(2 - half, rel=1e-12)
    assert iv.high == pytest.approx(2 + half, rel=1e-12)
    assert iv.half_width == pytest.approx(half, rel=1e-12)
    # 90%: t_{2, 0.95} = 2.919985580355516
    assert seed_interval([1, 2, 3], 0.9).high == pytest.approx(2 + 2.919985580355516 / math.sqrt(3))


def test_one_seed_has_no_interval_and_bad_input_is_refused():
    iv = seed_interval([5.0])
    assert (iv.mean, iv.low, iv.high, iv.half_width) == (5.0, None, None, None)
    with pytest.raises(ValueError, match="non-empty"):
        seed_interval([])
    with pytest.raises(ValueError, match="non-finite"):
        seed_interval([1, float("inf")])
    with pytest.raises(ValueError, match="level"):
        seed_interval([1, 2], level=1.0)


def test_share_interval_stays_in_zero_one():
    # two seeds at 0.9 and 1.0: mean 0.95, s = 0.1 / sqrt 2, t_{1, 0.975} = 12.706204736174707,
    # so the t-interval is 0.95 -+ 0.6353 and reaches past 1; cut, its top is 1 and its
    # bottom the t-interval's own (a bound off by 1e-12 would be found)
    half = 12.706204736174707 * (0.1 / math.sqrt(2)) / math.sqrt(2)
    iv = share_interval([0.9, 1.0])
    assert seed_interval([0.9, 1.0]).high > 1
    assert (iv.mean, iv.high, iv.n) == (pytest.approx(0.95, abs=1e-15), 1.0, 2)
    assert iv.low == pytest.approx(0.95 - half, rel=1e-12)
    # and below 0 at the other end; both bounds cut when the interval spans [0, 1]
    low = share_interval([0.0, 0.1])
    assert low.low == 0.0 and low.high == pytest.approx(0.05 + half, rel=1e-12)
    assert (share_interval([0.0, 1.0]).low, share_interval([0.0, 1.0]).high) == (0.0, 1.0)
    # inside [0, 1] the t-interval unchanged; every seed at 1: the point 1 (no spread)
    inside = share_interval([0.4, 0.5, 0.6])
    assert (inside.low, inside.high) == (seed_interval([0.4, 0.5, 0.6]).low,
                                         seed_interval([0.4, 0.5, 0.6]).high)
    assert (share_interval([1.0, 1.0]).low, share_interval([1.0, 1.0]).high) == (1.0, 1.0)
    assert share_interval([0.7]).low is None
    with pytest.raises(ValueError, match=r"shares must lie in \[0, 1\]"):
        share_interval([0.5, 1.2])
    with pytest.raises(ValueError, match="shares must be a non-empty"):
        share_interval([])


def test_paired_effect_by_hand():
    # differences 1, 3, 2: mean 2, s = 1; t = 2 / (1 / sqrt 3) = 3.4641; p (2 df) = 0.07418
    before, after = [10.0, 20.0, 30.0], [11.0, 23.0, 32.0]
    eff = paired_effect(before, after)
    assert eff.effect.mean == 2.0
    assert eff.effect.high == pytest.approx(2 + 4.302652729749464 / math.sqrt(3), rel=1e-12)
    assert eff.p_value == pytest.approx(0.0741799, rel=1e-5)
    assert paired_effect([1.0], [3.0]).p_value is None  # one seed: no test
    assert paired_effect([1.0, 2.0], [2.0, 3.0]).p_value is None  # no spread: no test
    with pytest.raises(ValueError, match="pair up"):
        paired_effect([1, 2], [1])


def test_share_of_seeds():
    assert share_of_seeds([True, False, True, True]) == 0.75
    with pytest.raises(ValueError, match="non-empty"):
        share_of_seeds([])


# ------------------------------------------------------------------ Section 4 across seeds

from bparallel.book.section4.across_seeds_stats import (  # noqa: E402
    amplification_across_seeds,
    amplification_per_sequence,
    changes_by_seed,
    head_count_effects,
    odd_seed_out,
    outside_tail,
    surviving_claims,
    tables_1_4_across_seeds,
)
from bparallel.book.section4.statistics import effect_outcome, holm  # noqa: E402
from bparallel.book.verdicts import Verdict  # noqa: E402

T2_975 = 0.95 * math.sqrt(2 / (4 * 0.975 * 0.025))  # Student t_2's 97.5% quantile, closed form


def _t14(quantity, task, heads, layer, mean, mode="paper", protocol="paper"):
    table = {("mixing_time", "copy"): 1, ("mixing_time", "cycle"): 2,
             ("fidelity", "copy"): 3, ("fidelity", "cycle"): 4}[(quantity, task)]
    return {"table": table, "protocol": protocol, "quantity": quantity, "mode": mode,
            "task": task, "heads": heads, "layer": layer, "mean": mean, "std": 0.0, "n": 50}


def _t56(task, heads, layer, combined, individual):
    return {"table": 5, "protocol": "paper", "sample": "mean", "mode": "paper", "task": task,
            "heads": heads, "layer": layer, "combined": combined, "individual": individual}


def _by_seed():
    """Three seeds; copy layer 1: mixing 10/12/14 steps with 1 head, 5/6/7 with 16 (change
    -5, -6, -7); fidelity 1.0/1.0/1.0 -> 1.1/0.9/1.0 (change +0.1, -0.1, 0: unresolved)."""
    mix1, mix16 = (10.0, 12.0, 14.0), (5.0, 6.0, 7.0)
    fid1, fid16 = (1.0, 1.0, 1.0), (1.1, 0.9, 1.0)
    out = {}
    for i, seed in enumerate((42, 43, 44)):
        out[seed] = {
            "tables_1_4": [_t14("mixing_time", "copy", 1, 1, mix1[i]),
                           _t14("mixing_time", "copy", 16, 1, mix16[i]),
                           _t14("fidelity", "copy", 1, 1, fid1[i]),
                           _t14("fidelity", "copy", 16, 1, fid16[i]),
                           _t14("mixing_time", "copy", 1, 1, 99.0, protocol="heldout")],
            "tables_5_6": [_t56("copy", 4, 1, 0.5, 0.3),  # wins in every seed
                           _t56("copy", 4, 2, 0.3 + 0.1 * (seed == 43), 0.3)],  # one seed
        }
    return out


def test_effect_outcome():
    from bparallel.book.section4.statistics import Interval

    assert effect_outcome(Interval(-6, -8, -4, 3, 0.95), -1) == "as claimed"
    assert effect_outcome(Interval(6, 4, 8, 3, 0.95), -1) == "against the claim"
    assert effect_outcome(Interval(-1, -3, 1, 3, 0.95), -1) == "not resolved"
    assert effect_outcome(Interval(0, 0, 0, 3, 0.95), 1) == "no change"
    assert effect_outcome(Interval(2, None, None, 1, 0.95), 1) == "as claimed (one seed)"
    assert effect_outcome(Interval(2, None, None, 1, 0.95), -1) == "against the claim (one seed)"
    with pytest.raises(ValueError, match="direction"):
        effect_outcome(Interval(2, None, None, 1, 0.95), 0)


def test_head_count_effects_by_hand():
    rows = {r["quantity"]: r for r in head_count_effects(_by_seed())}
    mix = rows["mixing_time"]
    half = T2_975 * 1.0 / math.sqrt(3)  # differences -5, -6, -7: sd 1
    assert (mix["fewer"], mix["more"], mix["seeds"]) == (12.0, 6.0, 3)
    assert mix["effect"] == pytest.approx(-6.0)
    assert (mix["low"], mix["high"]) == pytest.approx((-6 - half, -6 + half))
    # paired t = -6 / (1 / sqrt 3) with 2 degrees of freedom, whose two-sided tail has the
    # closed form P(|T| > t) = 1 - t / sqrt(t^2 + 2)
    t = 6 * math.sqrt(3)
    assert mix["p_value"] == pytest.approx(1 - t / math.sqrt(t * t + 2))
    assert mix["outcome"] == "as claimed"
    fid = rows["fidelity"]
    assert fid["effect"] == pytest.approx(0.0, abs=1e-12) and fid["outcome"] == "not resolved"
    # Holm over the two tests: the smaller p doubles, the larger is at least that
    assert mix["p_holm"] == pytest.approx(min(1.0, 2 * mix["p_value"]))
    assert fid["p_holm"] == pytest.approx(max(mix["p_holm"], fid["p_value"]))
    assert mix["outcome_holm"] == ("as claimed" if mix["p_holm"] <= 0.05
                                  else "as claimed, not after Holm")


def test_tables_1_4_across_seeds_by_hand():
    rows = tables_1_4_across_seeds(_by_seed())
    r = next(r for r in rows if r["quantity"] == "mixing_time" and r["heads"] == 1)
    half = T2_975 * 2.0 / math.sqrt(3)  # 10, 12, 14: sd 2
    assert (r["mean"], r["seeds"], r["seed_42"]) == (12.0, 3, 10.0)
    assert (r["low"], r["high"]) == pytest.approx((12 - half, 12 + half))
    one = tables_1_4_across_seeds({42: _by_seed()[42]})
    assert all(r["low"] is None and r["high"] is None for r in one)
    with pytest.raises(ValueError, match="protocol='fresh'"):
        tables_1_4_across_seeds(_by_seed(), protocol="fresh")


def _amp_data(seeds=(42, 43, 44)):
    """Per seed, a 2-head copy model of 3 layers on 4 sequences, per-head fidelities
    ``(L, N, H)`` and the combination ``(L, N)``. Layer 1: the combination beats both heads
    on every sequence. Layer 2: the heads take turns being best (head 0 on sequences 0-1 at
    0.6, head 1 on 2-3 at 0.6, the other at 0.2) and the combination, 0.5, loses every
    sequence to the best head per sequence but wins half against head 0, the best on
    average (ties to the published resolution none). Layer 3: all tie near 0 at the sink."""
    out = {}
    for seed in seeds:
        per_head = np.zeros((3, 4, 2))
        per_head[0] = 0.3
        per_head[1] = [[0.6, 0.2], [0.6, 0.2], [0.2, 0.6], [0.2, 0.61]]
        per_head[2] = 1e-4
        comb = np.array([[0.5] * 4, [0.5] * 4, [1e-4 + 1e-6] * 4])
        d = {"combined": comb, "per_head": per_head}
        out[seed] = {("copy", 2): {"paper": d, "definition": d}}
    return out


def test_amplification_per_sequence_both_readings_and_ties():
    from bparallel.book.section4.across_seeds_stats import (
        TIE,
        amplification_claims,
        amplification_per_sequence,
        win_share,
    )

    assert win_share(np.array([1.0, 0.5, 0.2]), np.array([0.5, 0.5 + TIE / 2, 0.3])) == (
        0.5, 1 / 3)  # one win, one tie (left out), one loss
    assert win_share(np.zeros(2), np.full(2, TIE / 2)) == (None, 1.0)
    with pytest.raises(ValueError, match="matching"):
        win_share(np.zeros(2), np.zeros(3))
    rows = {(r["layer"], r["reading"]): r for r in amplification_per_sequence(_amp_data())}
    assert rows[(1, "per_sequence")]["share"] == 1.0 and rows[(1, "per_sequence")][
        "outcome"] == "as claimed" and rows[(1, "per_sequence")]["wins"] == 3
    # every interval of a share lies in [0, 1] (share_interval)
    assert all(0 <= r["low"] <= r["share"] <= r["high"] <= 1
               for r in rows.values() if r["share"] is not None)
    # layer 2: the best head per sequence wins every sequence; against head 0, the best on
    # average, the combination wins the two sequences head 0 loses
    assert rows[(2, "per_sequence")]["share"] == 0.0
    assert rows[(2, "per_sequence")]["outcome"] == "against the claim"
    assert rows[(2, "on_average")]["share"] == 0.5
    assert rows[(2, "on_average")]["outcome"] == "not resolved"
    # the seed-level reading at two decimals: 0.50 against the mean of the per-sequence
    # best (0.6025) loses; against head 0's mean (0.40) wins, in every seed
    assert rows[(2, "per_sequence")]["wins"] == 0 and rows[(2, "on_average")]["wins"] == 3
    assert rows[(3, "per_sequence")]["share"] is None and rows[(3, "per_sequence")][
        "ties"] == 1.0 and rows[(3, "per_sequence")]["outcome"] == "no change"
    claims = {(c["claim"], c["reading"]): c for c in amplification_claims(
        list(rows.values()))}
    # wins occur in the one head count under both readings
    assert claims[("occurs", "per_sequence")]["verdict"] is Verdict.HOLDS
    # in every seed: the tied cell is no unit; layer 2 reverses per sequence (fails) but not
    # against the best head on average, where it wins in every seed
    every = claims[("every_seed", "per_sequence")]
    assert (every["units"], every["holds"], every["against"]) == (2, 1, 1)
    assert every["verdict"] is Verdict.FAILS
    assert claims[("every_seed", "on_average")]["verdict"] is Verdict.HOLDS
    # one seed: nothing survives seeds that were not trained
    one = amplification_claims(amplification_per_sequence(_amp_data((42,))))
    assert {c["verdict"] for c in one} == {Verdict.NOT_TESTABLE}


def test_amplification_and_surviving_claims():
    amp = amplification_across_seeds(_by_seed())
    assert [(r["layer"], r["wins"], r["share"]) for r in amp] == [(1, 3, 1.0), (2, 1, 1 / 3)]
    claims = surviving_claims(head_count_effects(_by_seed()), amplification_per_sequence(
        _amp_data()))
    by_claim = {c["claim"].split(" (")[0]: c for c in claims}
    assert by_claim["more heads mix faster"]["verdict"] is Verdict.HOLDS
    # nothing holds and nothing reverses after Holm: not supported (the one rule of
    # chapters 11 and 12; "fails" needs a significant reversal)
    assert by_claim["more heads keep more fidelity"]["verdict"] is Verdict.NOT_SUPPORTED
    assert by_claim["more heads keep more fidelity"]["undecided"] == 1
    comb = by_claim["the combination beats its best head"]
    # the stricter claim over the cells that do not tie throughout, by the best head per
    # sequence: layer 1 wins in every seed, layer 2 loses beyond the seeds
    assert (comb["units"], comb["holds"], comb["against"], comb["undecided"],
            comb["verdict"]) == (2, 1, 1, 0, Verdict.FAILS)
    one = {42: _by_seed()[42]}
    assert {c["verdict"] for c in surviving_claims(
        head_count_effects(one), amplification_per_sequence(_amp_data((42,))))} == {
        Verdict.NOT_TESTABLE}


def _holm_by_steps(p, alpha):
    """Holm's procedure as stated: reject the k-th smallest p while p_(k) <= alpha/(m-k+1)."""
    order = sorted(range(len(p)), key=lambda k: p[k])
    rejected = set()
    for rank, k in enumerate(order):
        if p[k] > alpha / (len(p) - rank):
            break
        rejected.add(k)
    return rejected


def test_holm_by_hand_and_against_the_stepwise_procedure():
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, max(0.06, 1*0.04)
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([None, 0.2, None]) == [None, 0.2, None]  # no test: not in the family
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # capped at 1
    rng = np.random.default_rng(1979)
    for _ in range(200):
        p = rng.uniform(0, 0.2, size=int(rng.integers(1, 12))).tolist()
        adj = holm(p)
        for alpha in (0.01, 0.05, 0.1):
            assert {k for k, a in enumerate(adj) if a <= alpha} == _holm_by_steps(p, alpha)
    with pytest.raises(ValueError, match=r"p_values\[1\]"):
        holm([0.1, 1.5])


def test_chapter_family_corrects_both_modes_together():
    """Issue #78: chapter 11's Holm family is the chapter's (both modes' tables), as the
    REFORMS page says, and every test states the smallest change it could find."""
    from scipy import stats

    from bparallel.book.section4.across_seeds_stats import chapter_family

    effects = {mode: head_count_effects(_by_seed(), mode="paper") for mode in
               ("paper", "definition")}  # the same two tests twice: a family of four
    ps = [r["p_value"] for rows in effects.values() for r in rows]
    assert chapter_family(effects) == 4
    flat = [r for rows in effects.values() for r in rows]
    assert [r["p_holm"] for r in flat] == pytest.approx(holm(ps))
    mix = flat[[r["quantity"] for r in flat].index("mixing_time")]
    # the paired t-test's 80%-power effect at Holm's first step, 0.05 / 4: 3 seeds, sd 1
    t = stats.t.ppf(1 - 0.05 / 4 / 2, 2) + stats.t.ppf(0.8, 2)
    assert mix["smallest"] == pytest.approx(t * 1.0 / math.sqrt(3))
    alone = {r["quantity"]: r for r in head_count_effects(_by_seed())}["mixing_time"]
    assert mix["p_holm"] == pytest.approx(2 * alone["p_holm"])  # twice the tests


def test_the_odd_seed_out():
    by_seed = _by_seed()
    rows = changes_by_seed(by_seed)
    mix = next(r for r in rows if r["quantity"] == "mixing_time")
    assert mix["changes"] == {42: -5.0, 43: -6.0, 44: -7.0}
    odd = {r["quantity"]: r for r in odd_seed_out(rows, 42)}
    assert odd["mixing_time"]["position"] == "above" and odd["mixing_time"]["same_sign"]
    assert (odd["mixing_time"]["low"], odd["mixing_time"]["high"]) == (-7.0, -6.0)
    fid = odd["fidelity"]  # changes +0.1, -0.1, 0: seed 42 the largest, signs differ
    assert fid["position"] == "above" and not fid["same_sign"]
    assert {r["position"] for r in odd_seed_out(rows, 43)} == {"between", "below"}
    with pytest.raises(ValueError, match="at least one other seed"):
        odd_seed_out(changes_by_seed({42: by_seed[42]}), 42)
    # issue #78: a change within the published resolution of the others' range ties with
    # it: -1.8e-6 beside +1.6e-7 and +3e-7 is not "below" them
    tiny = [{"quantity": "fidelity", "task": "cycle", "layer": 4,
             "changes": {42: -1.8e-6, 43: 1.6e-7, 44: 3e-7}}]
    assert odd_seed_out(tiny, 42)[0]["position"] == "between"
    assert odd_seed_out(tiny, 42, tie=1e-9)[0]["position"] == "below"
    # exchangeable seeds: a given one of 3 is outside the others' range with probability 2/3
    assert outside_tail(0, 16, 3) == 1.0
    assert outside_tail(16, 16, 3) == pytest.approx((2 / 3) ** 16)
    assert outside_tail(1, 1, 2) == 1.0  # with two seeds one is always the low or the high
    with pytest.raises(ValueError, match="outside"):
        outside_tail(5, 4, 3)


def test_models_by_seed_from_the_shipped_models():
    from bparallel.transformer.shipped import book_models, models_by_seed, shipped_complete

    if not shipped_complete():
        pytest.skip("paper-profile models not shipped")
    by_seed = models_by_seed(book_models("paper"))
    assert {42, 43, 44} <= set(by_seed)
    assert all(len(models) == 8 for models in by_seed.values())
    assert by_seed[43][("copy", 4)].config.n_heads == 4
