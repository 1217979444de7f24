"""The claims chapters' per-section streams reproduce the original single stream."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from bparallel.book import claims
from bparallel.book.claims.ensemble_design import SECTIONS, EnsembleDesign, SectionStreams
from bparallel.ensembles import random_head_stacks

TINY = EnsembleDesign(
    "quick", bound_sizes=(4, 6), bound_densities=(0.3, 0.7), bound_num=3, exhaustive_n=(3, 4),
    grid_steps=3, random_sizes=(6, 7), num_pairs=6, num_triples=4, horizons=(5,),
    horizon_sweep_n=5, tradeoff_sizes=(5, 6), tradeoff_densities=(0.3, 0.6), tradeoff_num=3,
    num_trials=20)


def _run_section(section, design, rng):
    """What the claims chapters compute in ``section``, drawing from ``rng``."""
    if section == "bound":
        return claims.theorem_2_8_ensemble(design.bound_sizes, design.bound_densities,
                                           design.bound_num, 0.25, rng)
    if section == "mixing":
        store = claims.mixing_search(design.mixing_keys, 0.25, grid_steps={2: 2, 3: 2},
                                     num=design.search_num, densities=design.search_densities,
                                     seed=rng)
        return claims.mixing_search_table(store)
    if section == "fidelity":
        store = claims.fidelity_search(design.fidelity_keys, 6, grid_steps={2: 2, 3: 2},
                                       num=design.num_pairs,
                                       densities=design.search_densities, seed=rng)
        A8, _ = random_head_stacks(design.num_pairs, 2, design.horizon_sweep_n,
                                   design.search_densities, rng)
        return claims.amplification_table(store, ("search", "n", "num_heads")), A8
    if section == "tradeoff":
        return claims.tradeoff_table(design.tradeoff_sizes, design.tradeoff_densities,
                                     design.tradeoff_num, 0.25, 8, rng)
    return rng.random(design.num_trials)  # best_head: any draws, it is last


def _assert_same(a, b):
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    else:
        np.testing.assert_array_equal(a, b)


def test_each_section_gets_what_the_single_stream_gave_it():
    single = np.random.default_rng(11)
    expected = {section: _run_section(section, TINY, single) for section in SECTIONS}
    # the two chapters, each running its own sections, in its own order
    streams = SectionStreams(TINY, 11)
    for section in ("bound", "mixing", "best_head", "fidelity", "tradeoff"):
        _assert_same(_run_section(section, TINY, streams[section]), expected[section])
        streams.check(section)
    assert streams["bound"] is streams["bound"]  # one generator per section


def test_replay_draws_exactly_what_the_measures_draw():
    """The replay (draws only) leaves a generator where the measured section leaves it."""
    for section in SECTIONS[:-1]:
        a, b = np.random.default_rng(5), np.random.default_rng(5)
        _run_section(section, TINY, a)
        TINY.draw(section, b)
        assert a.bit_generator.state == b.bit_generator.state, section


def test_check_catches_a_section_that_draws_more_or_less():
    streams = SectionStreams(TINY, 3)
    with pytest.raises(RuntimeError, match="never run"):
        streams.check("bound")
    _run_section("bound", TINY, streams["bound"])
    streams["bound"].random()  # one draw too many
    with pytest.raises(RuntimeError, match="drew differently"):
        streams.check("bound")
    fewer = dataclasses.replace(TINY, tradeoff_num=2)  # a chapter with other numbers
    streams = SectionStreams(TINY, 3)
    _run_section("tradeoff", fewer, streams["tradeoff"])
    with pytest.raises(RuntimeError, match="drew differently"):
        streams.check("tradeoff")
    streams.check("best_head")  # the last section has nothing after it


def test_the_profiles_and_bad_input():
    quick, paper = EnsembleDesign.for_profile("quick"), EnsembleDesign.for_profile("paper")
    assert (quick.bound_num, quick.num_pairs, quick.grid_steps) == (100, 1000, 10)
    assert (paper.bound_num, paper.num_pairs, paper.grid_steps) == (1000, 20000, 20)
    assert quick.mixing_keys[:4] == [("exhaustive", 3, 2), ("exhaustive", 3, 3),
                                     ("exhaustive", 4, 2), ("exhaustive", 4, 3)]
    assert ("random", 5, 2) not in quick.mixing_keys and ("random", 5, 3) in quick.mixing_keys
    assert ("exhaustive", 3, 3) not in quick.fidelity_keys
    with pytest.raises(ValueError, match="profile must be one of quick, paper"):
        EnsembleDesign.for_profile("huge")
    with pytest.raises(ValueError, match="section must be one of"):
        TINY.draw("best_head", np.random.default_rng(0))
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        SectionStreams(TINY, -1)
    with pytest.raises(ValueError, match="design must be an EnsembleDesign"):
        SectionStreams({"profile": "quick"}, 0)
    with pytest.raises(ValueError, match="section must be one of"):
        SectionStreams(TINY, 0)["Section 1"]


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_the_designs_named_in_the_claims_chapters_prose(profile):
    """Chapters 03 and 06 name these sizes in their prose (n = 3, 4, 5 exhaustively, random
    heads up to 20 nodes, the bound up to 100, the five densities, horizons 5 to 100, the
    horizon sweep on 8 nodes, the trade-off on 8, 16 and 32): both profiles keep them."""
    d = EnsembleDesign.for_profile(profile)
    assert d.exhaustive_n == (3, 4, 5) and max(d.random_sizes) == 20
    assert max(d.bound_sizes) == 100
    assert d.search_densities == (0.1, 0.2, 0.35, 0.5, 0.7)
    assert (d.horizons[0], d.horizons[-1]) == (5, 100) and d.horizon_sweep_n == 8
    assert d.tradeoff_sizes == (8, 16, 32)
