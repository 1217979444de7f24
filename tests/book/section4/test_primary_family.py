"""Chapter 12's primary family (issue 72 item 4): stated in code before the controls
trained, every hypothesis a test the chapter runs, in the direction its claim predicts."""

from __future__ import annotations

import pytest

from bparallel.book.section4 import graph_design as fd
from bparallel.book.section4.graph_experiment import CHANGE_CLAIMS, CLAIMS
from bparallel.book.section4.graph_tasks import SUMMARY
from bparallel.transformer.design import ARMS


def test_every_primary_hypothesis_is_a_claim_the_chapter_tests_in_its_direction():
    for h in fd.PRIMARY_FAMILY:
        assert h.slug in CLAIMS
        if h.quantity == "speed":
            assert h.slug == "speed" and h.sign == +1
        else:
            assert h.quantity in CHANGE_CLAIMS[h.slug]
            assert h.sign == SUMMARY[h.quantity]
    # the graph measures: every quantity of the graph claims, accuracy left secondary
    graph = {q for slug in ("mixing", "t_mix", "fidelity") for q in CHANGE_CLAIMS[slug]}
    assert {h.quantity for h in fd.PRIMARY_FAMILY} == graph | {"speed"}
    assert "accuracy" in fd.SECONDARY_FAMILIES and "rank_speed" in fd.SECONDARY_FAMILIES
    assert not set(fd.SECONDARY_FAMILIES) & {h.slug for h in fd.PRIMARY_FAMILY}


def test_the_primary_tests_and_their_words():
    tests = fd.primary_tests()
    assert len(tests) == len(set(tests)) == len(fd.PRIMARY_FAMILY) * len(fd.PRIMARY_TASKS) \
        * len(ARMS) == 36
    words = fd.primary_family_words().splitlines()
    assert len(words) == len(fd.PRIMARY_FAMILY)
    assert all(line.startswith("- **") and h.what in line and h.direction in line
               for line, h in zip(words, fd.PRIMARY_FAMILY, strict=True))
    assert len(fd.secondary_words().splitlines()) == len(fd.SECONDARY_FAMILIES)


def test_no_configuration_escapes_the_low_rank_bottleneck():
    # queries and keys are affine maps of the 64-dimensional stream: rank <= min(D, 65)
    assert fd.logit_rank_bound(4) == 4 and fd.logit_rank_bound(64) == 64
    assert fd.logit_rank_bound(256) == 65 == fd.max_logit_rank()
    assert fd.max_logit_rank() < 100  # the sequence length: Bhojanapalli et al.'s condition
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="head_size"):
            fd.logit_rank_bound(bad)
