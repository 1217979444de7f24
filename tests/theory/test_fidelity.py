import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bparallel import exact
from bparallel import fidelity as fi
from bparallel import graphs as g
from bparallel.examples import example_3_13
from tests._ulps import assert_close_ulps


def test_signal_at_sink_is_matrix_power_row():
    D = g.diffusion_matrix([(0, 1), (1, 3), (0, 2), (2, 3)], 4)
    s = fi.signal_at_sink(D, 6)
    assert s.shape == (7, 4)
    for t in range(7):
        np.testing.assert_allclose(s[t], np.linalg.matrix_power(D, t)[3])


def test_line_graph_fidelity_by_hand():
    # head 1 of Example 3.13: u -> v -> w -> tau. phi_w(t) = t / 2^t peaks at 1/2 (t = 1, 2);
    # phi_v(t) = C(t, 2) / 2^t peaks at 3/8 at t = 3 (and 4): the earliest peak is reported.
    D = g.diffusion_matrix(g.line_graph_edges(4), 4)
    phi, t = fi.node_fidelity(D, 20)
    assert phi[1] == pytest.approx(3 / 8) and t[1] == 3
    assert phi[2] == pytest.approx(1 / 2) and t[2] == 1
    assert fi.minimax_fidelity(D, 20) == pytest.approx(3 / 8)
    assert fi.worst_node(D, 20) == 1
    # including the sink: phi_tau(t) = 2^-t peaks at t = 1 with 1/2: min unchanged here
    assert fi.minimax_fidelity(D, 20, exclude_sink=False) == pytest.approx(3 / 8)


def test_exclude_sink_matters():
    # sink with in-degree 4: phi_tau(t) = 4^-t peaks at 1/4 (t = 1), while each source's
    # signal phi_j(t) = (1 - 4^-t) / 3 rises towards 1/3
    D = g.diffusion_matrix([(0, 3), (1, 3), (2, 3)], 4)
    assert fi.minimax_fidelity(D, 5, exclude_sink=False) == pytest.approx(1 / 4)
    assert fi.minimax_fidelity(D, 5) == pytest.approx((1 - 4.0**-5) / 3)
    D2 = g.diffusion_matrix([(0, 1), (1, 2), (2, 4), (3, 4), (0, 4), (1, 4), (2, 3)], 5)
    phi, _ = fi.node_fidelity(D2, 30)
    assert fi.minimax_fidelity(D2, 30, exclude_sink=False) == pytest.approx(phi.min())
    assert fi.minimax_fidelity(D2, 30) == pytest.approx(phi[:-1].min())


def test_node_fidelity_matches_exact_rationals():
    rng = np.random.default_rng(11)
    for _ in range(5):
        A = g.random_feedforward_adjacency(1, 6, 0.35, seed=rng)[0]
        edges = g.edges_from_adjacency(A)
        phi, t = fi.node_fidelity(g.diffusion_matrix(edges, 6), 15)
        phi_q, t_q = exact.node_fidelity(exact.diffusion(edges, 6), 15)
        np.testing.assert_allclose(phi, [float(x) for x in phi_q], rtol=1e-12)
        np.testing.assert_array_equal(t, t_q)


def test_batched_equals_loop():
    A = g.random_feedforward_adjacency(12, 7, 0.3, seed=2)
    D = g.diffusion_matrix_from_adjacency(A).reshape(3, 4, 7, 7)
    phi, t = fi.node_fidelity(D, 25)
    mm = fi.minimax_fidelity(D, 25)
    assert phi.shape == (3, 4, 7) and mm.shape == (3, 4)
    for a in range(3):
        for b in range(4):
            p1, t1 = fi.node_fidelity(D[a, b], 25)
            # batched against one matrix: a different route, so ulps, not bits
            assert_close_ulps(phi[a, b], p1)
            np.testing.assert_array_equal(t[a, b], t1)
            assert_close_ulps(mm[a, b], fi.minimax_fidelity(D[a, b], 25))


def test_multi_head_definitions():
    D = g.diffusion_matrix_from_adjacency(g.random_feedforward_adjacency(3, 6, 0.3, seed=4))
    beta = np.array([0.2, 0.3, 0.5])
    bar = fi.multi_head_operator(D, beta)
    np.testing.assert_allclose(bar, np.einsum("h,hij->ij", beta, D))
    mphi, _ = fi.multi_head_node_fidelity(D, beta, 30)
    np.testing.assert_allclose(mphi, fi.node_fidelity(bar, 30)[0])
    per_head = fi.minimax_fidelity(D, 30)
    h, best = fi.best_head(D, 30)
    assert h == int(np.argmax(per_head)) and best == per_head.max()
    amp = fi.amplification(D, beta, 30)
    assert amp == pytest.approx(fi.multi_head_minimax_fidelity(D, beta, 30) - best)
    rep = fi.fidelity_report(D, beta, 30)
    assert rep.best_head == h and rep.amplification == pytest.approx(amp)
    # one head with all the weight is that head
    one = fi.multi_head_minimax_fidelity(D, [0, 1, 0], 30)
    assert one == pytest.approx(per_head[1])


def test_remark_3_7_expansion_equals_matrix_power():
    D = g.diffusion_matrix_from_adjacency(g.random_feedforward_adjacency(3, 5, 0.4, seed=9))
    beta = [0.5, 0.3, 0.2]
    bar = fi.multi_head_operator(D, beta)
    for t in range(1, 6):
        np.testing.assert_allclose(
            fi.cross_head_expansion(D, beta, t), np.linalg.matrix_power(bar, t), atol=1e-14
        )
    terms = fi.cross_head_terms(D, beta, 3)
    assert len(terms) == 27
    assert sum(w for _, w, _ in terms) == pytest.approx(1.0)
    seq, w, M = terms[5]  # (0, 1, 2)
    assert seq == (0, 1, 2) and w == pytest.approx(0.5 * 0.3 * 0.2)
    np.testing.assert_allclose(M, D[0] @ D[1] @ D[2])


@pytest.mark.parametrize("horizon", [0, -1, 2.5, True])
def test_bad_horizon(horizon):
    with pytest.raises(ValueError, match="horizon"):
        fi.node_fidelity(np.eye(3), horizon)


def test_minimax_fidelity_refuses_a_backward_edge_unless_allowed():
    cyclic = g.diffusion_matrix([(0, 1), (1, 2), (2, 0), (2, 3)], 4)
    for where, call in ((r"delta\[0, 2\]", lambda **k: fi.minimax_fidelity(cyclic, 20, **k)),
                        (r"delta\[0, 2\]", lambda **k: fi.worst_node(cyclic, 20, **k)),
                        (r"deltas\[0, 0, 2\]", lambda **k: fi.best_head(cyclic[None], 20, **k))):
        with pytest.raises(ValueError, match=rf"^{where} = 0\.5: a backward edge 2 -> 0 "
                                             r".*Definition 3\.5.*allow_backward=True"):
            call()
        call(allow_backward=True)
    # Example 3.13: head 2's backward edge v -> u is named, on the heads as given
    ex = example_3_13("paper")
    with pytest.raises(ValueError, match=r"deltas\[1, 0, 1\] = 0\.5: a backward edge 1 -> 0"):
        fi.multi_head_minimax_fidelity(ex.deltas, ex.beta, 20)
    with pytest.raises(ValueError, match="backward edge 1 -> 0"):
        fi.amplification(ex.deltas, ex.beta, 20)
    # allowed, the paper's numbers, the same as the report's (which takes any graph)
    rep = ex.report(horizon=100)
    assert fi.multi_head_minimax_fidelity(ex.deltas, ex.beta, 100, allow_backward=True) == (
        rep.multi_minimax)
    assert fi.amplification(ex.deltas, ex.beta, 100, allow_backward=True) == pytest.approx(
        rep.amplification, abs=1e-15)


def test_bad_matrices_and_weights():
    with pytest.raises(ValueError, match="rows must sum to 1"):
        fi.minimax_fidelity(np.ones((3, 3)), 5)
    with pytest.raises(ValueError, match="square"):
        fi.minimax_fidelity(np.ones((3, 2)) / 2, 5)
    D = np.stack([np.eye(3), np.eye(3)])
    with pytest.raises(ValueError, match="non-negative"):
        fi.multi_head_operator(D, [1.5, -0.5])
    with pytest.raises(ValueError, match="all zero"):
        fi.multi_head_operator(D, [0, 0])
    with pytest.raises(ValueError, match="length 2"):
        fi.multi_head_operator(D, [1 / 3] * 3)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 9),
    density=st.floats(0.05, 1),
    seed=st.integers(0, 2**31 - 1),
    b=st.floats(0, 1),
)
def test_fidelity_properties(n, density, seed, b):
    A = g.random_feedforward_adjacency(2, n, density, seed)
    D = g.diffusion_matrix_from_adjacency(A)
    beta = [b, 1 - b]
    phi, t = fi.multi_head_node_fidelity(D, beta, 40)
    assert np.all((phi >= 0) & (phi <= 1 + 1e-12))
    assert np.all((t >= 1) & (t <= 40))
    # unique sink: every node reaches tau, so every node fidelity is positive
    assert np.all(phi > 0)
    # the signal at the optimal time is the peak
    s = fi.signal_at_sink(fi.multi_head_operator(D, beta), 40)
    np.testing.assert_allclose(s[t, np.arange(n)], phi)


def test_sink_rows_chunked_batch_is_the_per_matrix_recursion():
    """A batch larger than SINK_ROWS_CHUNK, walked chunk by chunk, equals the plain row
    recursion matrix by matrix, in any leading shape (within a few ulps: a batched and a
    single product may take different vector kernels)."""
    from bparallel.fidelity import SINK_ROWS_CHUNK, sink_rows

    rng = np.random.default_rng(3)
    M = rng.random((3, SINK_ROWS_CHUNK + 5, 6, 6))
    out = sink_rows(M, 7)
    assert out.shape == (3, SINK_ROWS_CHUNK + 5, 8, 6)
    for idx in np.ndindex(M.shape[:-2]):
        row = np.zeros(6)
        row[-1] = 1.0
        for t in range(8):
            np.testing.assert_array_max_ulp(out[idx][t], row, maxulp=8)
            row = np.einsum("k,kj->j", row, M[idx])
    assert sink_rows(np.eye(4), 3).shape == (4, 4)


def test_sink_peaks_over_chunks_is_the_matrix_power_peak_per_matrix():
    """Node fidelity of a batch larger than a chunk, float32 and strided input included,
    equals the peak over ``t = 1..horizon`` of ``(M^t)[tau, :]`` by matrix powers."""
    from bparallel.fidelity import SINK_ROWS_CHUNK, sink_peaks

    rng = np.random.default_rng(11)
    M = rng.dirichlet(np.ones(5), size=(2, SINK_ROWS_CHUNK + 3, 5))  # row-stochastic
    for M_in in (M, M.astype(np.float32), np.swapaxes(np.swapaxes(M, -1, -2).copy(), -1, -2)):
        phi, t = sink_peaks(M_in, 9)
        _, none = sink_peaks(M_in, 9, times=False)
        assert phi.shape == t.shape == (2, SINK_ROWS_CHUNK + 3, 5) and none is None
        for idx in [(0, 0), (1, SINK_ROWS_CHUNK), (1, SINK_ROWS_CHUNK + 2)]:
            m = np.asarray(M_in[idx], dtype=np.float64)
            s = np.array([np.linalg.matrix_power(m, k)[-1] for k in range(1, 10)])
            np.testing.assert_allclose(phi[idx], s.max(0), rtol=1e-13)
            np.testing.assert_array_equal(t[idx], s.argmax(0) + 1)


def test_sink_rows_products_agree_within_ulps_and_are_checked():
    """The einsum and the BLAS (matmul) step give the same rows within a few ulps, on a
    batch across chunks; an unknown product is a ValueError naming the argument."""
    from bparallel.fidelity import SINK_ROWS_CHUNK, sink_peaks, sink_rows

    rng = np.random.default_rng(12)
    M = rng.dirichlet(np.ones(7), size=(SINK_ROWS_CHUNK + 9, 7))
    by_einsum, by_matmul = sink_rows(M, 12), sink_rows(M, 12, product="matmul")
    np.testing.assert_allclose(by_matmul, by_einsum, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(sink_peaks(M, 12, product="matmul")[0],
                               sink_peaks(M, 12)[0], rtol=1e-14)
    with pytest.raises(ValueError, match="product='blas'"):
        sink_rows(M, 3, product="blas")
    with pytest.raises(ValueError, match="product='blas'"):
        sink_peaks(M, 3, product="blas")
