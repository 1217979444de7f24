"""bparallel.book.mixing_bound: chapter 02's Theorem 2.8 in numbers (the checks the chapter
made with asserts, and the recorded values by hand)."""

import numpy as np
import pytest

from bparallel.book import mixing_bound as mb
from bparallel.book.words import fmt_sig

EPS = 0.25


@pytest.fixture(scope="module")
def quick_table():
    return mb.bound_vs_exact(mb.SIZES["quick"], EPS)


def test_bound_holds_at_every_size(quick_table):
    # Theorem 2.8: T_mix <= 2N/p on both families, every size of the quick profile
    assert len(quick_table) == 2 * len(mb.SIZES["quick"])
    assert (quick_table["T_mix exact"] <= quick_table["2N/p"]).all()
    assert (quick_table["ratio"] <= 1).all()
    assert np.allclose(quick_table["p_h"], 0.5)  # both families: node n-2 has out-degree 2


@pytest.mark.parametrize("n", mb.SIZES["quick"])
def test_path_mixing_time_is_the_binomial_law(n, quick_table):
    # on the path the proof's Bin(t, 1/2) is the exact law of the forward moves: the
    # chapter's exact column is the binomial route's (ensembles.binomial_mixing_bound)
    from bparallel.ensembles import binomial_mixing_bound

    path = quick_table[(quick_table.family == "path") & (quick_table.n == n)].iloc[0]
    assert path["T_mix exact"] == binomial_mixing_bound(n - 1, 0.5, EPS)


def test_binomial_route_by_hand():
    # n = 2: one forward move, Pr[Bin(t, 1/2) < 1] = 2^-t <= 1/4 first at t = 2
    from bparallel.ensembles import binomial_mixing_bound

    assert binomial_mixing_bound(1, 0.5, EPS) == 2
    assert binomial_mixing_bound(1, 0.5, 0.5) == 1


def test_bound_results_and_rows(quick_table):
    out = mb.bound_results(quick_table)
    assert out == {"n_max": 100, "path.n_max.tmix": 207, "path.n_max.bound": 396.0,
                   "path.n_max.ratio": 207 / 396, "complete.n_max.tmix": 8,
                   "complete.n_max.bound": 396.0}
    rows = mb.bound_vs_exact_rows(quick_table)
    assert [r["n"] for r in rows] == mb.SIZES["quick"]
    assert rows[-1]["T_mix exact (path)"] == 207 and rows[-1]["ratio (complete DAG)"] == 8 / 396
    assert set(rows[0]) - {"n"} <= set(mb.FORMATS)
    # the bound is a number of steps: a whole one reads without decimals
    from bparallel.book.render.markdown import pipe_table

    assert "| 100 | 207 | 396 | 0.523 | 8 | 396 | 0.020 |" in pipe_table(rows, formats=mb.FORMATS)


def test_bound_vs_exact_refuses_bad_arguments():
    with pytest.raises(ValueError, match="sizes"):
        mb.bound_vs_exact([1, 2], EPS)
    with pytest.raises(ValueError, match="sizes"):
        mb.bound_vs_exact([], EPS)
    with pytest.raises(ValueError, match="eps"):
        mb.bound_vs_exact([3], 0.0)


def test_proof_replay_sampler_agrees_with_exact():
    replay = mb.proof_replay(31, mb.NUM_WALKS["quick"], seed=0)
    assert replay.t_star == 120
    assert replay.z < 4  # the sampler against the exact truncated hitting time
    assert replay.shortfall < replay.hoeffding  # Eq. 10 bounds the exact tail
    assert replay.hoeffding == pytest.approx(np.exp(-0.5 * 30))
    out = replay.results()
    assert list(out) == ["proof.path31.truncated_hitting.exact", "proof.path31.shortfall.exact",
                         "proof.path31.shortfall.hoeffding"]
    assert out["proof.path31.truncated_hitting.exact"] == pytest.approx(60.0, abs=1e-7)
    assert "z = " in replay.summary() and "Hoeffding bound" in replay.summary()
    assert "e-" not in replay.summary().split("Pr[")[1]  # tail probabilities as a reader writes
    assert fmt_sig(replay.hoeffding, 3) in replay.summary()
    with pytest.raises(ValueError, match="num_walks"):
        mb.proof_replay(31, 1)


def test_combination_sweep_moves_towards_the_fast_head():
    mix = mb.combination_sweep(EPS, n=12)
    assert len(mix.alphas) == 21 and mix.alphas[10] == 0.5
    assert np.all(np.diff(mix.t_mix) <= 0)  # monotone in the weight on the fast head
    assert np.all(mix.p_bar >= mix.p_eq12 - 1e-12)  # the combination beats Eq. 12's p
    assert np.allclose(mix.bound, 22 / mix.p_eq12)
    assert mix.results() == {"combination.tmix.slow": 25, "combination.tmix.fast": 4,
                             "combination.tmix.uniform": 8}
    with pytest.raises(ValueError, match="num_alphas"):
        mb.combination_sweep(EPS, num_alphas=20)


def test_good_head_simulation_agrees_with_eq18():
    good = mb.good_head_simulation([1, 2, 4, 8, 16], mb.NUM_TRIALS["quick"], seed=0)
    assert np.all(np.abs(good.z) <= 4)  # simulation against 1 - F(pbar)^H
    F = 1 - 0.109375  # Beta(2, 5) CDF at 1/2 = 57/64
    assert np.allclose(good.theory, 1 - F ** good.H)
    out = good.results()
    assert list(out) == [f"eq18.H{h}.theory" for h in (1, 2, 4, 8, 16)]
    assert out["eq18.H1.theory"] == pytest.approx(0.109375)
    rows = good.rows()
    assert rows[0]["H"] == 1 and set(rows[0]) - {"H"} <= set(mb.FORMATS)
    with pytest.raises(ValueError, match="Hs"):
        mb.good_head_simulation([], 10)
    with pytest.raises(ValueError, match="num_trials"):
        mb.good_head_simulation([1], 0)
