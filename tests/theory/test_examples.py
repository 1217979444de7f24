from fractions import Fraction

import numpy as np
import pytest

from bparallel import exact
from bparallel import fidelity as fi
from bparallel.examples import example_3_8, example_3_13


@pytest.mark.parametrize("b1", [0.5, 0.1, 0.37, 1.0, 0.0])
def test_example_3_8_cross_term(b1):
    ex = example_3_8(b1, 1 - b1)
    tau, u = ex.index("tau"), ex.index("u")
    sq = np.linalg.matrix_power(ex.delta_bar, 2)
    assert sq[tau, u] == pytest.approx(b1 * (1 - b1) / 4, abs=1e-15)
    # single heads carry nothing from u to tau in two steps (nor ever)
    for D in ex.deltas:
        assert np.linalg.matrix_power(D, 2)[tau, u] == 0
        assert fi.node_fidelity(D, 50)[0][u] == 0
    # Remark 3.7: only the head-1-then-head-2 term Delta2 @ Delta1 survives
    terms = fi.cross_head_terms(ex.deltas, ex.beta, 2)
    nonzero = [(seq, w * M[tau, u]) for seq, w, M in terms if M[tau, u] != 0]
    if 0 < b1 < 1:
        assert [s for s, _ in nonzero] == [(1, 0)]
        assert nonzero[0][1] == pytest.approx(b1 * (1 - b1) / 4)


def test_example_3_8_paper_matrices():
    ex = example_3_8()
    paper_d1 = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [0, 0, 1]])
    paper_d2 = np.array([[1, 0, 0], [0, 1, 0], [0, 1 / 2, 1 / 2]])
    np.testing.assert_array_equal(ex.deltas[0], paper_d1)
    np.testing.assert_array_equal(ex.deltas[1], paper_d2)
    assert ex.feedforward == (True, True)
    # multi-head fidelity of u is positive while each head's is zero
    rep = ex.report()
    assert rep.head_minimax.tolist() == [0.0, 0.0]
    assert rep.multi_minimax > 0


def test_example_3_8_bad_beta():
    with pytest.raises(ValueError, match="sum to 1"):
        example_3_8(0.5, 0.6)
    with pytest.raises(ValueError, match="non-negative"):
        example_3_8(-0.5, 1.5)


def test_example_3_13_paper_matrices_and_values():
    ex = example_3_13("paper")
    h = 1 / 2
    paper_d1 = np.array([[1, 0, 0, 0], [h, h, 0, 0], [0, h, h, 0], [0, 0, h, h]])
    paper_d2 = np.array([[h, h, 0, 0], [0, 1, 0, 0], [h, 0, h, 0], [0, 0, h, h]])
    paper_bar = np.array(
        [[3 / 4, 1 / 4, 0, 0], [1 / 4, 3 / 4, 0, 0], [1 / 4, 1 / 4, h, 0], [0, 0, h, h]]
    )
    np.testing.assert_array_equal(ex.deltas[0], paper_d1)
    np.testing.assert_array_equal(ex.deltas[1], paper_d2)
    np.testing.assert_array_equal(ex.delta_bar, paper_bar)
    # head 2's v -> u points backwards: not feedforward (Definition 2.1)
    assert ex.feedforward == (True, False)
    rep = ex.report(horizon=20)
    np.testing.assert_allclose(rep.head_minimax, [0.375, 0.375], atol=1e-15)
    # 0.5 is the supremum over t of the u and v signals (the u-v block mixes at rate 1/2):
    # at the code's horizon 20 the value is 1/2 - 1/2^(t+...) ~ 0.49999; at 100 it is 0.5
    assert 0.5 - 1e-4 < rep.multi_minimax < 0.5
    assert ex.report(horizon=100).multi_minimax == pytest.approx(0.5, abs=1e-15)
    assert rep.amplification > 0.12


def test_example_3_13_multi_exact_rational():
    ex = example_3_13("paper")
    Dq = exact.combine(
        [exact.diffusion(e, 4) for e in ex.head_edges], [Fraction(1, 2), Fraction(1, 2)]
    )
    phi_q, _ = exact.node_fidelity(Dq, 20)
    phi, _ = fi.node_fidelity(ex.delta_bar, 20)
    np.testing.assert_allclose(phi, [float(x) for x in phi_q], rtol=1e-13)
    # the exact value at horizon 20 is strictly below 1/2
    assert min(phi_q[:3]) < Fraction(1, 2)


def test_example_3_13_code_variant():
    ex = example_3_13("code")
    assert ex.feedforward == (True, True) and ex.unique_sink == (True, True)
    rep = ex.report()
    # computed independently with exact rationals
    per_head = []
    for e in ex.head_edges:
        phi_q, _ = exact.node_fidelity(exact.diffusion(e, 4), 20)
        per_head.append(min(phi_q[:3]))
    # head 2's worst node u creeps up to 1/4 (at t = 20: 871696090 / 3^20, just below)
    assert per_head == [Fraction(3, 8), Fraction(871696090, 3**20)]
    Dq = exact.combine([exact.diffusion(e, 4) for e in ex.head_edges], [Fraction(1, 2)] * 2)
    multi_q = min(exact.node_fidelity(Dq, 20)[0][:3])
    assert multi_q == Fraction(5, 12)
    np.testing.assert_allclose(rep.head_minimax, [float(x) for x in per_head], rtol=1e-13)
    assert rep.multi_minimax == pytest.approx(5 / 12)
    assert rep.best_head == 0 and rep.amplification == pytest.approx(5 / 12 - 3 / 8)


def test_example_3_13_unknown_variant():
    with pytest.raises(ValueError, match="variant must be one of"):
        example_3_13("nope")
