"""Chapter 12's horse race: which measure predicts the learning speed, beyond the design
(bparallel.book.section4.graph_predictors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bparallel.book.section4 import models as model_sets
from tests.book.section4.fresh_manifests import grid, write


def test_the_horse_race_ranks_a_design_quantity_that_sets_the_speed_first(tmp_path):
    """Speed set by the head count alone (fewer heads learn later): the head count ranks
    the runs perfectly (rho 1 with the speed, a zero-width interval over resampled seeds),
    and a proxy whose quality is noise ranks them near chance; every candidate scored."""
    from bparallel.book.render.plotting import plot_horse_race
    from bparallel.book.section4 import graph_predictors as gp

    write(tmp_path, grid(seeds=(42, 43, 44, 45), learn=lambda h, hs, s: 3000 - 150 * h,
                         quality=lambda h, hs, s: float((h * 7 + s * 13 + hs) % 5)))
    runs = model_sets.fresh_runs(tmp_path)
    rows = gp.horse_race(runs, "induction", samples=200)
    assert {(r["candidate"], r["outcome"]) for r in rows} == {
        (c, o) for c in gp.CANDIDATES for o in gp.OUTCOMES}
    heads = next(r for r in rows if r["candidate"] == "heads" and r["outcome"] == "speed")
    assert heads["rho"] == pytest.approx(1.0) and heads["low"] == pytest.approx(1.0)
    assert gp.best(rows, "speed", "design")["candidate"] in ("heads",)
    out = gp.results({"induction": rows})
    assert out["race.induction.heads.speed.rho"] == pytest.approx(1.0)
    assert gp.horse_race(runs, "histogram") == []  # no run: no race
    with pytest.raises(ValueError, match="samples=0"):
        gp.horse_race(runs, "induction", samples=0)
    fig = plot_horse_race({"induction": rows})
    assert len(fig.axes) == 1


def test_the_horse_race_scores_each_multiset_of_seeds_once_as_the_loop_would(tmp_path):
    """Batched against the loop: the horse race scores each distinct multiset of drawn seeds
    once; every interval equals the one from scoring all the draws one by one, in their
    own order, with the same random draws (both rhos are exact, so a draw's order of runs
    cannot move its score)."""
    from bparallel.book.section4 import graph_predictors as gp
    from bparallel.ranks import spearman

    write(tmp_path, grid(seeds=(42, 43, 44, 45), learn=lambda h, hs, s: 3000 - 150 * h
                         + 97 * ((s * 31 + h) % 7),
                         quality=lambda h, hs, s: float((h * 7 + s * 13 + hs) % 5)))
    runs = model_sets.fresh_runs(tmp_path)
    rows = gp.horse_race(runs, "induction", samples=300, seed=5)
    cols, seeds, _ = gp._items(runs, "induction")
    configs = np.array([f"{e['heads']}x{e['head_size']}" for e in runs.of("induction")])
    rng, distinct = np.random.default_rng(5), np.unique(seeds)
    draws = [np.concatenate([np.nonzero(seeds == s)[0]
                             for s in rng.choice(distinct, distinct.size)])
             for _ in range(300)]
    checked = 0
    for r in rows:
        x, y = cols[r["candidate"]], cols[r["outcome"]]
        if r["rho"] is None:
            continue
        assert (r["low"], r["high"]) == gp._interval(
            np.array([float(spearman(x[d], y[d])) for d in draws]), 0.95)
        if r["partial"] is not None:
            loop = np.array([gp.partial_rank_correlation(x[d], y[d], configs[d])
                             for d in draws])
            assert (r["partial_low"], r["partial_high"]) == gp._interval(loop, 0.95)
            checked += 1
    assert checked >= 3


def test_the_horse_race_reads_the_conditioning_at_the_early_step_only_from_every_run(
        tmp_path):
    """Runs that recorded the conditioning through training are read at the early step,
    like the graph measures, and the row says so; one run without it sends every run back to
    the conditioning before training (here undefined: the entries have no model
    configuration), never a mix."""
    from bparallel.book.section4 import graph_predictors as gp
    from bparallel.ranks import spearman
    from bparallel.transformer.conditioning import PROBE_KEY
    from bparallel.transformer.learning import learning_time

    runs = grid(seeds=(42, 43, 44, 45), learn=lambda h, hs, s: 3000 - 150 * h - 40 * (s - 42))
    for e in runs:  # better conditioned (smaller) the more heads, plus seed noise
        e["probes"][PROBE_KEY] = [2.0 - 0.1 * e["heads"] + 0.03 * ((e["seed"] * 7) % 5)
                                  + 0.001 * i for i in range(len(e["probes"]["step"]))]
    write(tmp_path, runs)
    fresh = model_sets.fresh_runs(tmp_path)
    assert gp.conditioning_source(fresh, "induction") == "early step"
    step = gp.early_step(fresh, "induction")
    rows = gp.horse_race(fresh, "induction", samples=50)
    row = next(r for r in rows if r["candidate"] == "conditioning" and r["outcome"] == "speed")
    assert row["label"] == "condition number at the early step"
    x = [-gp.probe_conditioning(e, step) for e in fresh.of("induction")]
    y = [-learning_time(e) for e in fresh.of("induction")]
    assert row["rho"] == pytest.approx(float(spearman(np.array(x), np.array(y))))
    assert row["rho"] > 0.5

    del runs[3]["probes"][PROBE_KEY]
    write(tmp_path, runs)
    fresh = model_sets.fresh_runs(tmp_path)
    assert gp.conditioning_source(fresh, "induction") == "before training"
    without = [e for e in fresh.of("induction") if PROBE_KEY not in e["probes"]]
    assert len(without) == 1 and math.isnan(gp.probe_conditioning(without[0], step))
    missing = {"probes": {"step": [0, step], PROBE_KEY: [1.5, None]}}  # not finite there
    assert math.isnan(gp.probe_conditioning(missing, step))
    assert gp.probe_conditioning(missing, 0) == 1.5
    rows = gp.horse_race(fresh, "induction", samples=50)
    row = next(r for r in rows if r["candidate"] == "conditioning" and r["outcome"] == "speed")
    assert row["label"] == "condition number before training" and row["rho"] is None
    assert gp.conditioning_source(model_sets.FreshRuns([]), "induction") == "before training"


def test_where_the_race_reads_the_conditioning_is_said_per_task(monkeypatch):
    """conditioning_words names where the race reads each task's conditioning: one phrase
    when every task is read in one place, the tasks by name when they differ; no task, or
    one without runs, is refused."""
    from bparallel.book.section4 import graph_predictors as gp

    runs = model_sets.FreshRuns([{"task": t, "heads": 1, "head_size": 64, "seed": 42,
                                  "arms": ["width"]} for t in ("induction", "histogram")])
    for early, said in (
            ((), "read before training, on the weights each run started from: the runs "
                  "trained before their probes recorded it"),
            (("induction", "histogram"),
             "read at the early step: every run recorded it at each probe step"),
            (("histogram",), "read at the early step on histogram, whose runs recorded it at "
                             "each probe step, and before training on induction, whose runs "
                             "trained before their probes recorded it")):
        monkeypatch.setattr(gp, "conditioning_source", lambda r, t, early=early:
                            "early step" if t in early else "before training")
        assert gp.conditioning_words(runs, ["induction", "histogram"]) == said
    with pytest.raises(ValueError, match="tasks is empty"):
        gp.conditioning_words(runs, [])
    with pytest.raises(ValueError, match="'majority' has no shipped run"):
        gp.conditioning_words(runs, ["induction", "majority"])


def test_the_partial_rank_correlation_holds_the_configuration():
    """A measure that only says which configuration a run has adds nothing once the
    configuration is held (partial rho undefined: nothing varies within); one that ranks
    the seeds within every configuration as the outcome does gets 1, whatever the
    configurations' order; with one group it is Spearman's rho; against scipy's Pearson of
    the demeaned average ranks, an independent computation."""
    from scipy.stats import pearsonr, rankdata

    from bparallel.book.section4.graph_predictors import partial_rank_correlation as prc
    from bparallel.ranks import spearman

    groups = np.repeat(["a", "b", "c"], 4)
    seed_effect = np.tile([0.1, 0.3, 0.2, 0.4], 3)
    config_effect = np.repeat([3.0, 1.0, 2.0], 4)
    outcome = config_effect + seed_effect
    assert math.isnan(prc(config_effect, outcome, groups))  # the design alone: nothing added
    assert prc(-config_effect + seed_effect, outcome, groups) == pytest.approx(1.0)
    assert prc(-seed_effect, outcome, groups) == pytest.approx(-1.0)
    one = np.zeros(12)
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=12), rng.normal(size=12)
    assert prc(x, y, one) == pytest.approx(float(spearman(x, y)))
    rx, ry = rankdata(x), rankdata(y)
    for g in np.unique(groups):
        rx[groups == g] -= rx[groups == g].mean()
        ry[groups == g] -= ry[groups == g].mean()
    assert prc(x, y, groups) == pytest.approx(pearsonr(rx, ry)[0], abs=1e-12)
    with pytest.raises(ValueError, match="1-D of one length"):
        prc(x, y[:5], groups)
    # exact: any order of the items gives the same float, ties included
    x[3] = x[7]
    order = rng.permutation(12)
    assert prc(x[order], y[order], groups[order]) == prc(x, y, groups)
    assert prc(x, y, np.repeat(["a", "b", "c", "d"], [5, 3, 2, 2])) == pytest.approx(
        _demeaned_pearson(x, y, np.repeat(["a", "b", "c", "d"], [5, 3, 2, 2])), abs=1e-12)


def _demeaned_pearson(x, y, groups):
    from scipy.stats import pearsonr, rankdata

    rx, ry = rankdata(x), rankdata(y)
    for g in np.unique(groups):
        rx[groups == g] -= rx[groups == g].mean()
        ry[groups == g] -= ry[groups == g].mean()
    return pearsonr(rx, ry)[0]


def test_the_horse_race_says_what_a_measure_adds_beyond_the_design(tmp_path):
    """Proxies set by the configuration alone: their plain rho can be large, their partial
    rho with the configuration held is undefined or none; proxies that follow the seeds
    within each configuration get a partial rho with an interval."""
    from bparallel.book.section4 import graph_predictors as gp

    write(tmp_path, grid(seeds=(42, 43, 44, 45),
                         learn=lambda h, hs, s: 3000 - 150 * h - 40 * (s - 42),
                         quality=lambda h, hs, s: 10.0 - 0.1 * h + 0.01 * (s - 42)))
    rows = gp.horse_race(model_sets.fresh_runs(tmp_path), "induction", samples=200)
    graph = [r for r in rows if r["kind"] == "graph" and r["rho"] is not None]
    assert graph and all(r["partial"] is None or -1 <= r["partial"] <= 1 for r in graph)
    assert all(r["partial"] is None for r in rows if r["kind"] == "design")
    held = [r for r in graph if r["partial"] is not None and r["outcome"] == "speed"]
    assert held, "no partial rho: the within-configuration spread was lost"
    assert all(r["partial_low"] <= r["partial"] <= r["partial_high"] for r in held)
    out = gp.results({"induction": rows})
    assert any(k.endswith(".partial.rho") for k in out)


def _race_row(candidate, kind, rho, low, high, partial=None, p_low=None, p_high=None,
              outcome="speed", p_holm=None, p_min=None):
    from bparallel.book.section4 import graph_predictors as gp

    return {"candidate": candidate, "label": gp.CANDIDATES[candidate][0], "kind": kind,
            "outcome": outcome, "rho": rho, "low": low, "high": high, "partial": partial,
            "partial_low": p_low, "partial_high": p_high, "partial_p": p_holm,
            "partial_p_holm": p_holm, "partial_p_min": p_min}


def test_what_the_horse_race_says_is_read_off_its_intervals():
    """race_words: the design's best quantities (ties at two decimals named together), then
    each graph measure by the side of zero its interval leaves (a zero-holding interval is
    neither way, whatever its ρ), every measure said at once when all agree; with the
    configuration held, the partial intervals; the condition number is no graph measure;
    an unknown outcome or a race without a design row is refused. conditioning_reading
    reads the condition number's intervals per task the same way."""
    from bparallel.book.section4 import graph_predictors as gp

    rows = [_race_row("heads", "design", -0.47, -0.5, -0.4),
            _race_row("width", "design", 0.661, 0.6, 0.7),
            _race_row("head_size", "design", 0.659, 0.6, 0.7),
            _race_row("t_mix", "graph", -0.6, -0.8, -0.4, -0.27, -0.62, -0.01, p_holm=0.01),
            _race_row("mixing.definition", "graph", -0.01, -0.4, 0.4, 0.1, -0.4, 0.5),
            _race_row("fidelity.definition", "graph", 0.16, 0.05, 0.22, 0.1, -0.3, 0.5),
            _race_row("conditioning", "graph", -0.7, -0.8, -0.6, 0.0, -0.3, 0.2),
            _race_row("t_mix", "graph", 0.9, 0.8, 0.95, outcome="area")]
    assert gp.race_words(rows, "speed") == (
        "the attention width (and so the parameters) and head size rank the runs best of "
        "the design's quantities "
        "(ρ 0.66 with the speed); of the 3 graph measures, 1 ranks them backwards "
        "(Definition 2.7), 1 the claimed way (fidelity, as defined) and 1 neither "
        "(Algorithm 1, as defined)")
    # held: by the seed-level permutation test after Holm, never by the resampled interval
    assert gp.race_words(rows, "speed", held=True) == (
        "of the 3 graph measures, 1 ranks them backwards (Definition 2.7) and 2 neither "
        "(Algorithm 1, as defined; fidelity, as defined)")
    undecided = [{**r, "partial_p_holm": None, "partial_p_min": 2 / 6} for r in rows]
    assert gp.race_words(undecided, "speed", held=True) == (
        "no graph measure's partial test can decide with the seed as the unit: its best "
        "possible two-sided p-value, 0.333, is above what Holm's correction over the race's "
        "tests needs")
    loss = {**_race_row("loss", "baseline", 0.42, 0.1, 0.6, 0.5, 0.2, 0.7, p_holm=0.0167),
            "partial_p": 0.0167}
    assert gp.baseline_words([*rows, loss], "speed") == (
        "held-out loss at the early step: ρ +0.42, partial ρ +0.50 (seed-level p 0.017)")
    with pytest.raises(ValueError, match="no baseline"):
        gp.baseline_words(rows, "speed")
    backwards = [r if r["kind"] == "design" else {**r, "low": -0.9, "high": -0.1}
                 for r in rows[:6]]
    assert gp.race_words(backwards, "speed").endswith(
        "; every one of the 3 graph measures ranks them backwards")
    with pytest.raises(ValueError, match="outcome='loss'"):
        gp.race_words(rows, "loss")
    with pytest.raises(ValueError, match="no design quantity"):
        gp.race_words(rows, "area")
    with pytest.raises(ValueError, match="no graph measure has a partial"):
        gp.race_words(rows[:3], "speed", held=True)
    # an end within float rounding of zero holds it: no reading on the last bits
    edge = [*rows[:3], {**rows[3], "low": -0.5, "high": -1e-12}]
    assert gp.race_words(edge, "speed").endswith(
        "; the one graph measure, Definition 2.7, ranks them neither way")
    # the condition number: its own interval, per task
    flat = [{**rows[6], "low": -0.2, "high": 0.3}]
    # a ρ that rounds to zero reads "0.00", never "+0.00" or "-0.00"
    assert gp.conditioning_reading({"induction": rows, "histogram": rows}, "speed") == (
        "backwards on both tasks, the better-conditioned runs learning slower (ρ with the "
        "speed -0.70 on induction and -0.70 on histogram); with the configuration held, "
        "neither way on both tasks (partial ρ 0.00, interval -0.30 to +0.20, on induction; "
        "0.00, interval -0.30 to +0.20, on histogram)")
    assert gp.conditioning_reading({"induction": rows, "histogram": flat}, "speed") == (
        "backwards on induction (ρ with the speed -0.70, the better-conditioned runs learning "
        "slower) and neither way on histogram (ρ -0.70); with the configuration held, neither "
        "way on both tasks (partial ρ 0.00, interval -0.30 to +0.20, on induction; 0.00, "
        "interval -0.30 to +0.20, on histogram)")
    claimed = [{**flat[0], "low": 0.1, "high": 0.5, "rho": 0.3, "partial_low": 0.05,
                "partial": 0.2, "partial_p_holm": 0.01}]
    assert gp.conditioning_reading({"induction": claimed, "histogram": rows}, "speed") == (
        "the claimed way on induction (ρ with the speed +0.30, the better-conditioned runs "
        "learning faster) and backwards on histogram (ρ -0.70, the better-conditioned runs "
        "learning slower); with the configuration held, the claimed way on induction "
        "(partial ρ +0.20, interval +0.05 to +0.20) and neither way on histogram (partial ρ "
        "0.00, interval -0.30 to +0.20)")
    no_partial = [{**rows[6], "partial": None, "partial_low": None, "partial_high": None}]
    assert gp.conditioning_reading({"induction": no_partial}, "speed") == (
        "backwards on induction (ρ with the speed -0.70, the better-conditioned runs learning "
        "slower)")  # no partial interval: nothing said with the configuration held
    with pytest.raises(ValueError, match="no task ranks its runs by the condition number"):
        gp.conditioning_reading({"induction": rows}, "area")
    with pytest.raises(ValueError, match="outcome='loss'"):
        gp.conditioning_reading({"induction": rows}, "loss")


def test_the_parameters_rank_the_runs_as_the_width_does():
    """The horse race keeps the width alone: over every shipped fresh-data run the parameter
    count is a strictly increasing function of the attention width (so the same ranking);
    a run set where it is not is said to be."""
    from bparallel.book.section4 import graph_predictors as gp
    from bparallel.book.section4.models import FreshRuns, fresh_runs

    assert "parameters" not in gp.CANDIDATES and "width" in gp.DESIGN
    assert gp.parameters_follow_width(fresh_runs())
    odd = FreshRuns([{"heads": 1, "head_size": 64, "num_parameters": 200},
                     {"heads": 4, "head_size": 64, "num_parameters": 100}])
    assert not gp.parameters_follow_width(odd)
    tied = FreshRuns([{"heads": 1, "head_size": 64, "num_parameters": 100},
                      {"heads": 4, "head_size": 16, "num_parameters": 101}])
    assert not gp.parameters_follow_width(tied)
