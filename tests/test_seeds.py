"""bparallel.book.seeds against hand-computed statistics."""

import math

import pytest

from bparallel.book.seeds import paired_effect, seed_interval, share_of_seeds


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

from bparallel.book.seeds import (  # noqa: E402
    amplification_across_seeds,
    effect_verdict,
    head_count_effects,
    surviving_claims,
    tables_1_4_across_seeds,
)

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


def test_effect_verdict():
    from bparallel.book.seeds import Interval

    assert effect_verdict(Interval(-6, -8, -4, 3, 0.95), -1) == "survives"
    assert effect_verdict(Interval(6, 4, 8, 3, 0.95), -1) == "reversed"
    assert effect_verdict(Interval(-1, -3, 1, 3, 0.95), -1) == "not resolved"
    assert effect_verdict(Interval(0, 0, 0, 3, 0.95), 1) == "no change"
    assert effect_verdict(Interval(2, None, None, 1, 0.95), 1) == "as claimed (one seed)"
    assert effect_verdict(Interval(2, None, None, 1, 0.95), -1) == "against the claim (one seed)"
    with pytest.raises(ValueError, match="direction"):
        effect_verdict(Interval(2, None, None, 1, 0.95), 0)


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
    assert mix["verdict"] == "survives"
    fid = rows["fidelity"]
    assert fid["effect"] == pytest.approx(0.0, abs=1e-12) and fid["verdict"] == "not resolved"


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


def test_amplification_and_surviving_claims():
    amp = amplification_across_seeds(_by_seed())
    assert [(r["layer"], r["wins"], r["share"]) for r in amp] == [(1, 3, 1.0), (2, 1, 1 / 3)]
    claims = surviving_claims(head_count_effects(_by_seed()), amp)
    by_claim = {c["claim"].split(" (")[0]: c for c in claims}
    assert by_claim["more heads mix faster"]["verdict"] == "survives"
    assert by_claim["more heads keep more fidelity"]["verdict"] == "fails"
    assert by_claim["more heads keep more fidelity"]["undecided"] == 1
    comb = by_claim["the combination beats its best head"]
    assert (comb["holds"], comb["against"], comb["undecided"], comb["verdict"]) == (
        1, 0, 1, "partly")
    one = {42: _by_seed()[42]}
    assert {c["verdict"] for c in surviving_claims(
        head_count_effects(one), amplification_across_seeds(one))} == {"one seed"}


def test_models_by_seed_from_the_shipped_models():
    from bparallel.book.shipped import book_models, models_by_seed, shipped_complete

    if not shipped_complete():
        pytest.skip("paper-profile models not shipped")
    by_seed = models_by_seed(book_models("paper"))
    assert {42, 43, 44} <= set(by_seed)
    assert all(len(models) == 8 for models in by_seed.values())
    assert by_seed[43][("copy", 4)].config.n_heads == 4
