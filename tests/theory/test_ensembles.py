import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from bparallel import cross_head as ch
from bparallel import ensembles as en
from bparallel import exact
from bparallel import fidelity as fi
from bparallel import graphs as g
from bparallel import markov as mk

Q = Fraction(1, 4)


# ------------------------------------------------------------------------ enumeration
def _brute_force_unique_sink(n):
    """Every lower-triangular 0/1 pattern, kept when node n-1 is the one sink (independent)."""
    slots = [(i, j) for i in range(n) for j in range(i)]  # receiver i, sender j < i
    keep = []
    for bits in itertools.product((0, 1), repeat=len(slots)):
        edges = [(j, i) for (i, j), b in zip(slots, bits, strict=True) if b]
        if g.has_unique_sink(edges, n):
            keep.append(frozenset(edges))
    return keep


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_enumeration_matches_brute_force(n):
    brute = _brute_force_unique_sink(n)
    A = en.enumerate_feedforward_adjacency(n)
    mine = [frozenset(g.edges_from_adjacency(a)) for a in A]
    assert len(mine) == len(set(mine)) == len(brute) == en.count_feedforward_unique_sink(n)
    assert set(mine) == set(brute)
    assert np.all(np.diagonal(A, axis1=1, axis2=2) == 1)


def test_count_sequence():
    assert [en.count_feedforward_unique_sink(n) for n in range(1, 8)] == [
        1, 1, 3, 21, 315, 9765, 615195]
    assert en.enumerate_feedforward_adjacency(6).shape == (9765, 6, 6)
    with pytest.raises(ValueError, match="at most 7"):
        en.enumerate_feedforward_adjacency(8)


def test_every_unweighted_head_has_forward_probability_one_half():
    # node n-2 can only send to the sink: out-degree 2, forward probability 1/2 (the minimum)
    for n in (2, 3, 4, 5):
        W = g.walk_matrix_from_adjacency(en.enumerate_feedforward_adjacency(n))
        np.testing.assert_array_equal(mk.forward_probability(W), 0.5)


# -------------------------------------------------------------------------- families
def test_families():
    for fam in en.FAMILIES:
        for n in (2, 5, 9):
            A = en.family_adjacency(fam, n)
            assert g.has_unique_sink(g.edges_from_adjacency(A), n)
            assert np.all(np.triu(A, 1) == 0)
    np.testing.assert_array_equal(
        en.family_adjacency("path", 5), g.adjacency_matrix(g.line_graph_edges(5), 5))
    jumps = set(g.edges_from_adjacency(en.family_adjacency("powers-of-2", 5)))
    assert jumps == {(0, 1), (0, 2), (0, 4), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4)}
    with pytest.raises(ValueError, match="family must be one of"):
        en.family_adjacency("ring", 5)


def test_random_weighted_walk_is_attention_like():
    W = en.random_weighted_walk(50, 7, 0.3, 1.0, seed=1)
    g.check_stochastic(W, axis=-2)
    assert np.all(np.triu(W, 1) == 0)
    assert np.all(np.diagonal(W, axis1=1, axis2=2)[:, :-1] < 1)  # every node can leave
    p = mk.forward_probability(W)
    assert p.min() < 0.5 < p.max()  # unlike Eq. 1's weights, p_h varies
    np.testing.assert_array_equal(W, en.random_weighted_walk(50, 7, 0.3, 1.0, seed=1))


def test_random_head_stacks():
    A, d = en.random_head_stacks(40, 3, 6, [0.1, 0.6], seed=3)
    assert A.shape == (40, 3, 6, 6) and d.shape == (40, 3)
    assert set(np.unique(d)) == {0.1, 0.6}
    for a in A.reshape(-1, 6, 6):
        assert g.has_unique_sink(g.edges_from_adjacency(a), 6)


def test_edge_jaccard_and_count():
    a = g.adjacency_matrix([(0, 1), (1, 2), (0, 2)], 3)
    b = g.adjacency_matrix([(0, 2), (1, 2)], 3)
    assert en.edge_count(np.stack([a, b])).tolist() == [3, 2]
    assert en.edge_jaccard(a, b) == pytest.approx(2 / 3)
    assert en.edge_jaccard(a, a) == 1.0
    assert en.edge_jaccard(np.eye(3), np.eye(3)) == 1.0


def test_head_tuples_and_simplex_grid():
    assert en.head_tuples(5, 2).shape == (10, 2)
    assert en.head_tuples(6, 3).tolist() == [list(c) for c in itertools.combinations(range(6), 3)]
    for H, steps in [(2, 10), (3, 10), (4, 5)]:
        w = en.simplex_grid(H, steps)
        assert w.shape == (math.comb(steps + H - 1, H - 1), H)
        np.testing.assert_allclose(w.sum(1), 1)
        assert np.all(w >= 0)
        for h in range(H):  # every single head is on the grid
            assert any(np.all(row == np.eye(H)[h]) for row in w)
    np.testing.assert_array_equal(en.simplex_grid(2, 4)[0], [1, 0])


# --------------------------------------------------------------------------- mixing
def test_tv_curves_are_matrix_powers():
    W = en.random_weighted_walk(3, 5, 0.4, seed=2)
    T = mk.mixing_time(W)
    tv = en.tv_curves(W, int(T.max()) + 1)
    assert tv.shape == (3, T.max() + 2, 5)
    for t in range(8):
        Wt = np.linalg.matrix_power(W, t)
        np.testing.assert_allclose(tv[:, t], 1 - Wt[:, -1, :], atol=1e-14)
    # the mixing time is the first t with max_j TV <= eps
    for k in range(3):
        d = tv[k].max(axis=1)
        assert (d[T[k]] <= 0.25 + 1e-12) and (T[k] == 0 or d[T[k] - 1] > 0.25)


def test_binomial_mixing_bound_by_loop_and_lazy_path():
    for N in (1, 2, 5, 17):
        for p in (0.03, 0.25, 0.5, 0.9, 1.0):
            t = 0
            while binom.cdf(N - 1, t, p) > 0.25 + 1e-12:
                t += 1
            assert en.binomial_mixing_bound(N, p) == t
            # the lazy path realises the binomial exactly
            assert mk.mixing_time(en.lazy_path_walk(N + 1, p)) == t
    # the unweighted path (p = 1/2) too
    for n in (2, 5, 12):
        W = g.walk_matrix(g.line_graph_edges(n), n)
        assert mk.mixing_time(W) == en.binomial_mixing_bound(n - 1, 0.5)
    out = en.binomial_mixing_bound(np.array([[1], [3]]), np.array([0.1, 0.5]))
    assert out.shape == (2, 2)


def test_coupling_bound_holds_on_weighted_heads():
    W = en.random_weighted_walk(200, 6, 0.3, 1.0, seed=8)
    T = mk.mixing_time(W)
    p = mk.forward_probability(W)
    assert np.all(T <= en.binomial_mixing_bound(5, p))
    assert np.all(T <= 2 * 5 / p)


def test_compare_mixing_against_single_graph_functions():
    A, _ = en.random_head_stacks(6, 2, 5, [0.2, 0.5], seed=4)
    W = g.walk_matrix_from_adjacency(A)
    mc = en.compare_mixing(W, grid_steps=4)
    assert mc.grid.shape == (6, 5)
    for k in range(6):
        assert mc.heads[k].tolist() == [mk.mixing_time(W[k, h]) for h in range(2)]
        assert mc.uniform[k] == mk.mixing_time(g.convex_combination(W[k], [0.5, 0.5]))
        for r, w in enumerate(mc.weights):
            assert mc.grid[k, r] == mk.mixing_time(g.convex_combination(W[k], w))
    assert np.all(mc.best <= mc.fastest)  # Eq. 5 on a grid holding every head


def test_smallest_mixing_counterexamples_are_exact():
    """Exhaustive n = 3, 4 search; every reported violation recomputed on exact rationals."""
    for n in (3, 4):
        A = en.enumerate_feedforward_adjacency(n)
        pairs = en.head_tuples(len(A), 2)
        mc = en.compare_mixing(g.walk_matrix_from_adjacency(A)[pairs], grid_steps=4)
        faster = np.flatnonzero(mc.uniform_beats_fastest)
        slower = np.flatnonzero(mc.uniform_slower_than_slowest)
        if n == 3:
            assert faster.size == slower.size == 0
            continue
        assert (faster.size, slower.size) == (9, 1)
        for k in np.concatenate([faster, slower]):
            heads = [exact.walk(g.edges_from_adjacency(A[i]), n) for i in pairs[k]]
            T_heads = [exact.mixing_time(Wq, Q) for Wq in heads]
            T_bar = exact.mixing_time(exact.combine(heads, [Fraction(1, 2)] * 2), Q)
            assert T_heads == mc.heads[k].tolist() and T_bar == mc.uniform[k]
            assert T_bar < min(T_heads) if k in faster else T_bar > max(T_heads)
    # the one with fewest edges, by hand: heads slow at different start nodes
    h1 = exact.walk([(1, 2), (0, 3), (2, 3)], 4)  # 0 -> tau directly, 1 -> 2 -> tau
    h2 = exact.walk([(0, 2), (1, 3), (2, 3)], 4)  # 0 -> 2 -> tau, 1 -> tau directly
    assert exact.mixing_time(h1, Q) == exact.mixing_time(h2, Q) == 5
    assert exact.mixing_time(exact.combine([h1, h2], [Fraction(1, 2)] * 2), Q) == 4


# ------------------------------------------------------------------------- fidelity
def test_compare_fidelity_against_single_graph_functions():
    A, _ = en.random_head_stacks(5, 3, 5, [0.3, 0.6], seed=6)
    D = g.diffusion_matrix_from_adjacency(A)
    fc = en.compare_fidelity(D, 12, grid_steps=3)
    for k in range(5):
        np.testing.assert_allclose(fc.heads[k], fi.minimax_fidelity(D[k], 12))
        assert fc.uniform[k] == pytest.approx(
            fi.multi_head_minimax_fidelity(D[k], np.full(3, 1 / 3), 12), abs=1e-14)
        assert fc.amp_uniform[k] == pytest.approx(
            fi.amplification(D[k], np.full(3, 1 / 3), 12), abs=1e-14)
        for r, w in enumerate(fc.weights):
            assert fc.grid[k, r] == pytest.approx(
                fi.multi_head_minimax_fidelity(D[k], w, 12), abs=1e-14)
    assert np.all(fc.amp_best >= -1e-15)


def test_compare_fidelity_matches_exact_rationals():
    e1, e2 = [(0, 1), (0, 2), (1, 2), (2, 3)], [(0, 2), (1, 2), (1, 3), (2, 3)]
    D = np.stack([g.diffusion_matrix(e1, 4), g.diffusion_matrix(e2, 4)])
    fc = en.compare_fidelity(D, 10)
    Dq = exact.combine([exact.diffusion(e1, 4), exact.diffusion(e2, 4)], [Fraction(1, 2)] * 2)
    phi_q, _ = exact.node_fidelity(Dq, 10)
    assert fc.uniform == pytest.approx(float(min(phi_q[:3])), rel=1e-12)


def _walk_split(deltas, beta, t, j):
    """Brute force over node sequences: (total, inside some single head, pure-head terms)."""
    H, n, _ = deltas.shape
    bar = np.einsum("h,hij->ij", beta, deltas)
    total = old = 0.0
    for mid in itertools.product(range(n), repeat=t - 1):
        seq = (n - 1, *mid, j)  # rows of Delta-bar^t: tau <- ... <- j
        steps = list(itertools.pairwise(seq))
        w = math.prod(bar[a, b] for a, b in steps)
        total += w
        if any(all(deltas[h, a, b] > 0 for a, b in steps) for h in range(H)):
            old += w
    pure = sum(beta[h] ** t * np.linalg.matrix_power(deltas[h], t)[n - 1, j] for h in range(H))
    return total, old, pure


def test_cross_head_and_new_walk_shares_by_brute_force():
    A, _ = en.random_head_stacks(4, 2, 4, [0.3, 0.7], seed=9)
    D = g.diffusion_matrix_from_adjacency(A)
    beta = np.array([0.3, 0.7])
    share, j, t = ch.cross_head_share(D, beta, 6)
    new, j2, t2 = ch.new_walk_share(D, beta, 6)
    np.testing.assert_array_equal(j, j2)
    np.testing.assert_array_equal(t, t2)
    for k in range(4):
        total, old, pure = _walk_split(D[k], beta, int(t[k]), int(j[k]))
        assert share[k] == pytest.approx(1 - pure / total, abs=1e-12)
        assert new[k] == pytest.approx(1 - old / total, abs=1e-12)
        # Remark 3.7 term by term: the pure-head terms of the expansion
        terms = fi.cross_head_terms(D[k], beta, int(t[k]))
        pure_terms = sum(w * M[3, j[k]] for seq, w, M in terms if len(set(seq)) == 1)
        assert pure_terms == pytest.approx(pure, abs=1e-14)


def test_shares_on_examples():
    # Example 3.8: u's signal reaches tau only along the new walk u -> v -> tau
    d1 = g.diffusion_matrix([(0, 1)], 3)
    d2 = g.diffusion_matrix([(1, 2)], 3)
    new, j, _ = ch.new_walk_share(np.stack([d1, d2]), [0.2, 0.8], 10)  # u is the worst node
    assert j == 0 and new == pytest.approx(1.0)
    # identical heads: no new walks, but mixed sequences carry 1 - 2^(1-t) of the signal
    D = g.diffusion_matrix(g.line_graph_edges(5), 5)
    share, _, t = ch.cross_head_share(np.stack([D, D]), [0.5, 0.5], 20)
    new, _, _ = ch.new_walk_share(np.stack([D, D]), [0.5, 0.5], 20)
    assert share == pytest.approx(1 - 2.0 ** (1 - t)) and new == pytest.approx(0.0)


def test_new_walk_shares_per_node_and_at_the_limiting_nodes_by_brute_force():
    """Every node's share at its own optimal time equals the brute-force walk count; the
    limiting nodes are where a best head reaches its minimax fidelity."""
    A, _ = en.random_head_stacks(3, 2, 4, [0.3, 0.7], seed=11)
    D = g.diffusion_matrix_from_adjacency(A)
    beta = np.array([0.4, 0.6])
    horizon = 6
    shares = ch.new_walk_shares(D, beta, horizon)
    bar = np.einsum("h,khij->kij", beta, D)
    node_bar, t_opt = fi.node_fidelity(bar, horizon)
    node_heads, _ = fi.node_fidelity(D, horizon)
    mask = ch.limiting_nodes(node_heads)
    for k in range(3):
        for j in range(3):
            total, old, _ = _walk_split(D[k], beta, int(t_opt[k, j]), j)
            assert shares[k, j] == pytest.approx(1 - old / total if total > 0 else 0, abs=1e-12)
        best = node_heads[k, :, :3].min(-1).max()
        want = [any(node_heads[k, h, :3].min() == best and node_heads[k, h, j] == best
                    for h in range(2)) for j in range(3)]
        assert mask[k].tolist() == [*want, False]
        assert ch.new_walk_share_at_limiting(D, beta, horizon)[k] == pytest.approx(
            shares[k][mask[k]].mean(), abs=1e-15)
    assert shares[..., -1].tolist() == [0.0, 0.0, 0.0]  # the sink sends nothing
    with pytest.raises(ValueError, match="node_phi"):
        ch.limiting_nodes(np.ones(3))


def test_remark_3_7_on_the_paper_examples_at_the_limiting_nodes():
    """Example 3.8 (equal weights): u and v limit head 1; u's signal travels only on the new
    walk u -> v -> tau (share 1), v's only inside head 2 (0), so 1/2 at the limiting nodes
    where the combination's worst node, v, shows 0. Example 3.13: the limiting nodes (v of
    head 1, u of head 2) are the combination's worst, with the same share; with the code's
    feedforward head 2 the limiting node v carries nothing on new walks."""
    from bparallel.examples import example_3_8, example_3_13

    ex = example_3_8()
    node, _ = fi.node_fidelity(ex.deltas, 20)
    assert ch.limiting_nodes(node).tolist() == [True, True, False]
    assert ch.new_walk_shares(ex.deltas, ex.beta, 20).tolist() == [1.0, 0.0, 0.0]
    assert ch.new_walk_share_at_limiting(ex.deltas, ex.beta, 20) == 0.5
    share, j, _ = ch.new_walk_share(ex.deltas, ex.beta, 20)
    assert j == 1 and share == 0.0
    paper = example_3_13("paper")
    node, _ = fi.node_fidelity(paper.deltas, 6)
    assert ch.limiting_nodes(node).tolist() == [True, True, False, False]
    shares = ch.new_walk_shares(paper.deltas, paper.beta, 6)
    total, old, _ = _walk_split(paper.deltas, np.array(paper.beta), 6, 0)  # u peaks at T = 6
    assert shares[0] == shares[1] == pytest.approx(1 - old / total, abs=1e-12)
    at_limiting = ch.new_walk_share_at_limiting(paper.deltas, paper.beta, 6)
    assert at_limiting == pytest.approx(float(ch.new_walk_share(paper.deltas, paper.beta, 6)[0]))
    assert 0.1 < at_limiting < 0.2  # at T = 6 the cycle u <-> v has carried 13%
    long = ch.new_walk_share_at_limiting(paper.deltas, paper.beta, 20)  # the paper's horizon
    assert long == float(ch.new_walk_share(paper.deltas, paper.beta, 20)[0]) > 0.9
    code = example_3_13("code")
    assert ch.new_walk_share_at_limiting(code.deltas, code.beta, 20) == 0.0


def test_node_best_head_gain():
    phi = np.array([[[0.5, 0.1, 0.3, 1.0], [0.2, 0.4, 0.35, 1.0]]])
    # per node best: 0.5, 0.4, 0.35 -> min 0.35; best head minimax max(0.1, 0.2) = 0.2
    assert ch.node_best_head_gain(phi) == pytest.approx([0.15])


# ---------------------------------------------------------------------- Eqs. 16-19
def test_cdf_below_and_exceedance():
    s = np.array([0.5, 0.5, 0.2, 0.8])
    np.testing.assert_allclose(en.cdf_below(s, [0.2, 0.5, 0.6, 0.9]), [0, 0.25, 0.75, 1])
    p = np.array([[0.1, 0.6], [0.3, 0.2], [0.5, 0.5]])
    np.testing.assert_allclose(en.best_head_exceedance(p, [0.5, 0.4]), [2 / 3, 2 / 3])
    assert en.best_head_exceedance(p, 0.5) == pytest.approx(2 / 3)


# ------------------------------------------------------------------------ validation
def test_validation_errors():
    with pytest.raises(ValueError, match="concentration"):
        en.random_weighted_walk(2, 4, 0.3, 0.0)
    with pytest.raises(ValueError, match="eps"):
        en.binomial_mixing_bound(3, 0.5, eps=1.5)
    with pytest.raises(ValueError, match="N must be"):
        en.binomial_mixing_bound(0, 0.5)
    with pytest.raises(ValueError, match="p must lie"):
        en.binomial_mixing_bound(2, 0.0)
    with pytest.raises(ValueError, match="sum to 1"):
        en.combinations(np.stack([np.eye(3)] * 2), [[0.5, 0.6]])
    with pytest.raises(ValueError, match=r"\(\.\.\., H, n, n\)"):
        en.compare_mixing(np.eye(3))
    with pytest.raises(ValueError, match="horizon"):
        en.tv_curves(np.eye(3), 0)


def test_simulate_best_head_against_eq_18_and_refuses_bad_input():
    """Uniform heads: Pr(max of H >= pbar) = 1 - pbar^H exactly (Eq. 18 with F(p) = p); the
    simulation lands within 4.5 binomial standard errors, its z is that distance, and the
    delta method's term only widens the error."""
    rng = np.random.default_rng(3)
    sim = en.simulate_best_head(lambda shape: rng.random(shape), 0.7, 0.7, [1, 2, 8], 4000)
    np.testing.assert_array_equal(sim.num_heads, [1, 2, 8])
    np.testing.assert_allclose(sim.theory, 1 - 0.7 ** np.array([1, 2, 8]), rtol=1e-15)
    se = np.sqrt(sim.theory * (1 - sim.theory) / 4000)
    np.testing.assert_allclose(sim.z, (sim.simulated - sim.theory) / se, rtol=1e-12)
    assert np.all(np.abs(sim.z) < 4.5)
    rng = np.random.default_rng(3)
    pooled = en.simulate_best_head(lambda shape: rng.random(shape), 0.7, 0.7, [1, 2, 8], 4000,
                                   pool_size=100)
    np.testing.assert_array_equal(pooled.simulated, sim.simulated)
    assert np.all(np.abs(pooled.z) < np.abs(sim.z))
    with pytest.raises(ValueError, match="F must lie"):
        en.simulate_best_head(lambda shape: np.ones(shape), 0.5, 1.5, [1], 10)
    with pytest.raises(ValueError, match="trials"):
        en.simulate_best_head(lambda shape: np.ones(shape), 0.5, 0.5, [1], 0)
