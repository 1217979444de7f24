"""bparallel.book.feedforward: chapter 01's Section 2.1 in numbers (the checks the chapter
made with asserts: Figure 1's graph, Definition 2.3's matrix, Lemmas 2.5 and 2.6)."""

import numpy as np
import pytest

from bparallel import graphs, markov
from bparallel.book import feedforward as ff


def test_figure_1_is_feedforward_with_a_unique_sink():
    # Definitions 2.1-2.2 on the graph of the chapter's first figure
    assert graphs.is_feedforward(ff.FIGURE_1_EDGES, 5)
    assert graphs.has_unique_sink(ff.FIGURE_1_EDGES, 5)
    assert graphs.sinks(ff.FIGURE_1_EDGES, 5) == [4]


def test_walk_matrix_rows_are_definition_2_3():
    W = graphs.walk_matrix(ff.FIGURE_1_EDGES, 5)
    assert np.allclose(W.sum(axis=0), 1) and np.all(np.triu(W, 1) == 0)  # the table's caption
    rows = ff.walk_matrix_rows(W)
    assert [r["to"] for r in rows] == ["0", "1", "2", "3", "τ"]
    assert list(rows[0]) == ["to", "from 0", "from 1", "from 2", "from 3", "from τ"]
    table = np.array([[r[f"from {lab}"] for lab in ff.node_labels(5)] for r in rows])
    np.testing.assert_array_equal(table, W)
    assert rows[1]["from 0"] == pytest.approx(1 / 3)  # node 0: self-loop, 0 -> 1, 0 -> 2
    assert set(rows[0]) - {"to"} == set(ff.walk_matrix_formats(5))
    with pytest.raises(ValueError, match="W"):
        ff.walk_matrix_rows(np.ones((2, 3)))


def test_lemma_2_5_on_figure_1_and_without_a_unique_sink():
    pi = markov.stationary_distributions(graphs.walk_matrix(ff.FIGURE_1_EDGES, 5))
    assert len(pi) == 1 and ff.vector_text(pi[0]) == "(0, 0, 0, 0, 1)"
    dists = markov.stationary_distributions(graphs.walk_matrix(ff.TWO_SINKS, 4))
    assert len(dists) == 2  # the hypothesis matters: one per sink
    assert ff.sink_names(ff.TWO_SINKS, 4) == "1 and τ"
    assert sorted(ff.vector_text(d) for d in dists) == ["(0, 0, 0, 1)", "(0, 1, 0, 0)"]


def test_lemma_2_5_on_random_graphs():
    assert ff.single_head_unique_fraction(60, np.random.default_rng(3)) == 1.0


def test_lemma_2_6_on_random_combinations():
    assert ff.combination_unique_fraction(60, np.random.default_rng(4)) == 1.0


def test_one_seed_fixes_both_lemmas():
    # Lemma 2.6 goes on where Lemma 2.5 left the generator, as in the chapter
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(0)
        ff.single_head_unique_fraction(5, rng)
        ff.combination_unique_fraction(3, rng)
        runs.append(rng.bit_generator.state)
    assert runs[0] == runs[1] != np.random.default_rng(0).bit_generator.state


def test_labels_and_bad_input():
    assert ff.node_labels(4) == ["0", "1", "2", "τ"]
    assert ff.walk_matrix_formats(2) == {"from 0": ".3f", "from τ": ".3f"}
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="num_graphs"):
            ff.single_head_unique_fraction(bad, np.random.default_rng(0))
        with pytest.raises(ValueError, match="num_graphs"):
            ff.combination_unique_fraction(bad, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n=0"):
        ff.node_labels(0)


def test_combination_ranges_are_the_draws_inclusive_ends():
    from bparallel.book import feedforward as ff

    assert ff.combination_ranges() == {"lemma_2_6.heads.min": 2, "lemma_2_6.heads.max": 8,
                                       "lemma_2_6.nodes.max": 24}
    # the draws stay inside them: 200 combinations from one stream
    rng = np.random.default_rng(3)
    draws = [(int(rng.integers(*ff.COMBINATION_HEADS)), int(rng.integers(*ff.COMBINATION_NODES)))
             for _ in range(200)]
    assert min(h for h, _ in draws) == 2 and max(h for h, _ in draws) == 8
    assert max(n for _, n in draws) == 24
