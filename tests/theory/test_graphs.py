import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bparallel import exact
from bparallel import graphs as g
from tests._ulps import assert_close_ulps


def test_walk_matrix_eq1_by_hand():
    # 0 -> 1, 0 -> 2, 1 -> 2 with self-loops: outdeg(0)=3, outdeg(1)=2, outdeg(2)=1
    W = g.walk_matrix([(0, 1), (0, 2), (1, 2)], 3)
    expected = np.array([[1 / 3, 0, 0], [1 / 3, 1 / 2, 0], [1 / 3, 1 / 2, 1]])
    np.testing.assert_allclose(W, expected)
    np.testing.assert_allclose(W.sum(axis=0), 1)


def test_diffusion_matrix_eq21_by_hand():
    # indeg(0)=1, indeg(1)=2, indeg(2)=3
    D = g.diffusion_matrix([(0, 1), (0, 2), (1, 2)], 3)
    expected = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(D, expected)
    np.testing.assert_allclose(D.sum(axis=1), 1)


def test_self_loops_always_present_and_duplicates_ignored():
    a = g.diffusion_matrix([(0, 1), (0, 1), (1, 1)], 2)
    b = g.diffusion_matrix([(0, 1)], 2)
    np.testing.assert_array_equal(a, b)  # bitwise: the same adjacency, then the same operations
    assert np.all(np.diag(g.walk_matrix([], 4)) == 1)


def test_matrices_match_exact_reference():
    edges = [(0, 2), (1, 2), (1, 3), (2, 3), (0, 4), (3, 4)]
    np.testing.assert_allclose(g.walk_matrix(edges, 5), np.array(exact.walk(edges, 5), float))
    np.testing.assert_allclose(
        g.diffusion_matrix(edges, 5), np.array(exact.diffusion(edges, 5), float)
    )


def test_feedforward_and_sinks():
    assert g.is_feedforward([(0, 1), (1, 2)], 3)
    assert not g.is_feedforward([(1, 0), (0, 2)], 3)
    assert g.backward_edges([(1, 0), (0, 2), (2, 1)], 3) == [(1, 0), (2, 1)]
    assert g.sinks([(0, 1), (1, 2)], 3) == [2]
    assert g.has_unique_sink([(0, 1), (1, 2)], 3)
    assert not g.has_unique_sink([(0, 2)], 3)  # node 1 has no way out: a second sink
    assert not g.has_unique_sink([(0, 1), (2, 1)], 3)  # node 2 sends: not a sink


def test_a_causal_order_is_searched_for_and_a_common_one_is_the_union_s():
    from bparallel.examples import example_3_8, example_3_13

    assert g.has_causal_order([(1, 0), (0, 2), (2, 3)], 4)        # order (v, u, w, tau)
    assert not g.is_feedforward([(1, 0), (0, 2), (2, 3)], 4)      # not in positions' order
    assert not g.has_causal_order([(0, 1), (1, 0)], 2)            # the cycle u <-> v
    assert g.has_causal_order([(0, 0), (0, 1), (1, 1)], 2)        # self-loops are no cycle
    assert not g.has_causal_order([(0, 1), (1, 2), (2, 0)], 3)
    paper, code = example_3_13("paper"), example_3_13("code")
    assert paper.causal_order == (True, True) and not paper.common_order
    assert paper.feedforward == (True, False)
    assert code.causal_order == (True, True) and code.common_order
    assert paper.sink_counts == code.sink_counts == (1, 1)
    assert example_3_8().sink_counts == (2, 2) and example_3_8().common_order


def test_require_feedforward_names_the_edge():
    with pytest.raises(ValueError, match=r"backward edge\(s\) 1 -> 0"):
        g.require_feedforward([(1, 0), (0, 2)], 3)


@pytest.mark.parametrize(
    "edges, n, match",
    [
        ([(0, 3)], 3, "out of range"),
        ([(-1, 2)], 3, "out of range"),
        ([(0, 1, 2)], 3, r"\(j, i\) pairs"),
        ([(0.5, 1)], 3, "integer"),
        ([(0, 1)], 0, "positive integer"),
        ([(0, 1)], -2, "positive integer"),
        ([(0, 1)], 2.5, "positive integer"),
        ([(0, 1)], True, "positive integer"),
    ],
)
def test_bad_edges_and_n(edges, n, match):
    with pytest.raises(ValueError, match=match):
        g.walk_matrix(edges, n)


def test_convex_combination_eq26():
    D1 = g.diffusion_matrix([(0, 1)], 3)
    D2 = g.diffusion_matrix([(1, 2)], 3)
    bar = g.convex_combination(np.stack([D1, D2]), [0.25, 0.75])
    np.testing.assert_allclose(bar, 0.25 * D1 + 0.75 * D2)
    np.testing.assert_allclose(bar.sum(axis=1), 1)
    again = g.convex_combination(np.stack([D1, D2]), [1, 3], normalize=True)
    np.testing.assert_allclose(again, bar)


@pytest.mark.parametrize(
    "weights, match",
    [
        ([0.5, -0.5], "non-negative"),
        ([0.0, 0.0], "all zero"),
        ([1.0], "length 2"),
        ([0.3, 0.3], "sum to 1"),
        ([np.nan, 1.0], "finite"),
    ],
)
def test_convex_combination_bad_weights(weights, match):
    M = np.stack([np.eye(2), np.eye(2)])
    with pytest.raises(ValueError, match=match):
        g.convex_combination(M, weights)


def test_check_stochastic_errors():
    with pytest.raises(ValueError, match="square"):
        g.check_stochastic(np.ones((2, 3)), axis=-1, name="delta")
    with pytest.raises(ValueError, match="rows must sum to 1"):
        g.check_stochastic(np.ones((2, 2)), axis=-1, name="delta")
    with pytest.raises(ValueError, match="columns must sum to 1"):
        g.check_stochastic(np.array([[1.0, 0.5], [0.0, 0.0]]), axis=-2, name="W")
    with pytest.raises(ValueError, match="negative"):
        g.check_stochastic(np.array([[1.5, -0.5], [0, 1]]), axis=-1)


def test_batched_constructors_equal_single_within_ulps():
    # batched (N, n, n) against one edge list at a time: a different route, so ulps, not
    # bits; an entry is 1 / degree, and a wrong degree (1/k vs 1/(k+1)) is ~1e15 ulps off
    A = g.random_feedforward_adjacency(7, 6, 0.4, seed=1)
    Ws = g.walk_matrix_from_adjacency(A)
    Ds = g.diffusion_matrix_from_adjacency(A)
    for k in range(7):
        edges = g.edges_from_adjacency(A[k])
        assert_close_ulps(Ws[k], g.walk_matrix(edges, 6), err_msg=f"W, graph {k}:")
        assert_close_ulps(Ds[k], g.diffusion_matrix(edges, 6), err_msg=f"Delta, graph {k}:")


def test_families():
    assert g.line_graph_edges(4) == [(0, 1), (1, 2), (2, 3)]
    assert len(g.complete_dag_edges(5)) == 10
    assert g.is_feedforward(g.complete_dag_edges(5), 5)


def test_random_generator_seeded():
    a = g.random_feedforward_adjacency(3, 8, 0.3, seed=5)
    b = g.random_feedforward_adjacency(3, 8, 0.3, seed=5)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="density"):
        g.random_feedforward_adjacency(3, 8, 1.5)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 12),
    density=st.floats(0, 1),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_dag_properties(n, density, seed):
    A = g.random_feedforward_adjacency(1, n, density, seed)[0]
    edges = g.edges_from_adjacency(A)
    assert g.is_feedforward(edges, n)
    assert g.has_unique_sink(edges, n)
    W, D = g.walk_matrix(edges, n), g.diffusion_matrix(edges, n)
    # stochasticity and triangularity (Eq. 1 lower-diagonal note)
    np.testing.assert_allclose(W.sum(axis=0), 1)
    np.testing.assert_allclose(D.sum(axis=1), 1)
    assert np.all(np.triu(W, 1) == 0) and np.all(np.triu(D, 1) == 0)
    assert np.all((W > 0) == (D > 0))  # same support: A[i, j] for j -> i
