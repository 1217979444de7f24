"""bparallel.book.fidelity_examples: chapters 04 and 05's examples in numbers (the checks the
chapters made with asserts, the two routes to Example 3.13 against each other, and the
recorded values by hand); and the heads figure of chapter 04 (render.plotting.draw_heads)."""

from fractions import Fraction

import numpy as np
import pytest

from bparallel.book import fidelity_examples as fx
from bparallel.book import playground as pg
from bparallel.examples import example_3_8, example_3_13


# ----------------------------------------------------------------------- Example 3.8
def test_example_3_8_terms_only_the_cross_term_survives():
    rows, values = fx.example_3_8_terms(0.3, 0.7)
    assert [r["term"] for r in rows] == ["Δ(1) · Δ(1)", "Δ(1) · Δ(2)", "Δ(2) · Δ(1)",
                                         "Δ(2) · Δ(2)"]
    assert [r["contribution"] for r in rows if r["contribution"] != 0] == [
        pytest.approx(0.3 * 0.7 / 4)]  # head 1 then head 2: Delta(2) Delta(1)
    total = sum(r["contribution"] for r in rows)
    assert list(values) == ["example_3_8.beta_1", "example_3_8.beta_2",
                            "example_3_8.cross_term.beta_0.3"]
    power = values["example_3_8.cross_term.beta_0.3"]
    assert np.isclose(total, power) and np.isclose(power, 0.3 * 0.7 / 4)  # Remark 3.7
    assert values["example_3_8.beta_1"] == 0.3 and values["example_3_8.beta_2"] == 0.7
    assert set(rows[0]) - {"term"} <= set(fx.FORMATS)


def test_example_3_8_terms_refuses_bad_weights():
    with pytest.raises(ValueError, match="beta_1"):
        fx.example_3_8_terms(1.5, 0.7)
    with pytest.raises(ValueError, match="sum to 1"):
        fx.example_3_8_terms(0.3, 0.3)


def test_example_3_8_closed_form_over_all_weights():
    beta_1, computed, closed = fx.example_3_8_closed_form()
    assert len(beta_1) == 41 and beta_1[0] == 0 and beta_1[-1] == 1
    assert np.allclose(computed, closed, atol=1e-15)  # (Delta-bar^2)[tau, u] = b1 b2 / 4
    with pytest.raises(ValueError, match="num"):
        fx.example_3_8_closed_form(1)


def test_example_3_8_results_amplify_from_zero():
    out = fx.example_3_8_results(20)
    assert out == {"example_3_8.phi_min.head1": 0.0, "example_3_8.phi_min.head2": 0.0,
                   "example_3_8.phi_min.multi": pytest.approx(0.421875),  # 27/64
                   # head 1: v and tau have no way out; head 2: u and tau (Definition 2.2)
                   "example_3_8.sinks.head1": 2, "example_3_8.sinks.head2": 2}
    with pytest.raises(ValueError, match="horizon"):
        fx.example_3_8_results(0)


# ---------------------------------------------------------------------- Example 3.13
@pytest.fixture(scope="module")
def ex13():
    return fx.example_3_13_reports(20)


def test_example_3_13_paper_numbers(ex13):
    assert np.allclose(ex13.paper.head_minimax, 0.375)  # the paper: 3/8 per head
    assert abs(ex13.paper_limit.multi_minimax - 0.5) < 1e-12  # 1/2 as a supremum
    assert ex13.paper.multi_minimax < 0.5
    out = ex13.results()
    assert out["example_3_13.horizon"] == 20
    assert out["example_3_13.optimal_time.head1.v"] == 3  # C(3,2)/2^3 at t = 3
    assert out["example_3_13.amplification_limit"] == pytest.approx(0.125)
    assert out["example_3_13.first_horizon_above_heads"] == 5
    assert len(out) == 12 and sum(k.startswith("example_3_13_code.") for k in out) == 4


def test_example_3_13_amplifies_from_horizon_5_and_approaches_one_half():
    """The combination's phi_min at horizon T is 1/2 - (T+1)/2^(T+1) from T = 5 on (exact
    fractions): above the heads' 3/8 at every T >= 5, never 1/2 (a supremum)."""
    from bparallel.book.fidelity_examples import first_horizon_above_heads

    for T in range(5, 30):
        assert fx.exact_phi_min_multi(T) == Fraction(1, 2) - Fraction(T + 1, 2 ** (T + 1))
    assert fx.exact_phi_min_multi(4) <= Fraction(3, 8) < fx.exact_phi_min_multi(5)
    assert first_horizon_above_heads("paper") == 5
    assert first_horizon_above_heads("code") == 4  # 5/12 > 1/4 ... the code's head 2
    with pytest.raises(ValueError, match="variant"):
        first_horizon_above_heads("text")


def test_example_3_13_code_numbers(ex13):
    assert np.isclose(ex13.code.multi_minimax, 5 / 12)
    # the feedforward head 2 of the authors' code: amplification 0.125 -> 1/24
    assert ex13.code.amplification == pytest.approx(1 / 24)
    assert ex13.results()["example_3_13_code.phi_min.head2"] == pytest.approx(0.25, abs=1e-8)
    rows = ex13.rows()
    assert [r["quantity"] for r in rows] == ["φ_min head 1", "φ_min head 2",
                                             "φ_min multi (T=20)", "φ_min multi (T=200)"]
    assert rows[3]["paper (text)"] == ex13.paper_limit.multi_minimax
    assert rows[2]["authors' code"] == ex13.code.multi_minimax
    assert set(rows[0]) - {"quantity"} <= set(fx.FORMATS)


def test_example_3_13_reports_refuses_a_short_limit():
    with pytest.raises(ValueError, match="limit"):
        fx.example_3_13_reports(20, limit=20)


@pytest.mark.parametrize("variant", ["paper", "code"])
@pytest.mark.parametrize("horizon", [1, 3, 20])
def test_exact_route_agrees_with_the_float_route(variant, horizon):
    # two routes to phi_min^multi: fractions (bparallel.exact) and numpy floats
    exact = fx.exact_phi_min_multi(horizon, variant)
    assert isinstance(exact, Fraction)
    floating = example_3_13(variant).report(horizon).multi_minimax
    assert abs(float(exact) - floating) <= 1e-15


def test_exact_phi_min_multi_by_hand():
    assert fx.exact_phi_min_multi(20, "code") == Fraction(5, 12)  # w at t = 1
    phi = fx.exact_phi_min_multi(20)
    assert phi < Fraction(1, 2) and Fraction(1, 2) - phi < Fraction(1, 10**4)
    with pytest.raises(ValueError, match="variant"):
        fx.exact_phi_min_multi(20, "other")


# ------------------------------------------------------------------------ Remark 3.7
def test_remark_3_7_expansion_equals_the_matrix_power():
    out = fx.remark_3_7(example_3_13("paper"), t_max=6, t_share=3)
    assert list(out) == ["remark_3_7.max_error", "remark_3_7.cross_share.t3"]
    assert out["remark_3_7.max_error"] < 1e-14
    assert out["remark_3_7.cross_share.t3"] == pytest.approx(0.75)
    # Example 3.8: from u, every signal at t = 2 travels along the mixed sequence
    assert fx.remark_3_7(example_3_8(), t_max=3, t_share=2)["remark_3_7.cross_share.t2"] == 1


def test_remark_3_7_refuses_a_start_without_signal():
    with pytest.raises(ValueError, match="start"):
        fx.remark_3_7(example_3_8(), t_max=2, t_share=1)  # u reaches tau only at t >= 2


# ------------------------------------------------------------- chapter 05: playground
@pytest.fixture(scope="module")
def runs():
    return fx.playground_runs(7)


def test_playground_runs_match_the_examples(runs):
    assert list(runs) == list(fx.PLAYGROUND_RUNS)
    assert np.isclose(runs["example-3-8"].report.multi_minimax,
                      example_3_8().report().multi_minimax)
    paper = runs["example-3-13-paper"]
    assert np.allclose(paper.report.head_minimax, 0.375)
    assert any("not feedforward" in w for w in paper.warnings)
    assert np.isclose(runs["example-3-13-code"].report.multi_minimax,
                      example_3_13("code").report().multi_minimax)
    assert runs["random-pair"].state.n == 6 and runs["random-pair"].state.num_heads == 2


def test_playground_runs_use_the_seed():
    state = pg.from_preset("Random feedforward", seed=3, n=6, heads=2, density=0.3)
    assert fx.playground_runs(3)["random-pair"].state.heads == state.heads
    with pytest.raises(ValueError, match="random_seed"):
        fx.playground_runs(-1)


def test_playground_results_and_report(runs):
    out = fx.playground_results(runs)
    assert list(out) == ["example_3_8.phi_min.multi", "example_3_13.phi_min.multi",
                         "example_3_13.amplification", "example_3_13_code.phi_min.multi",
                         "random.phi_min.multi", "random.amplification"]
    assert out["example_3_8.phi_min.multi"] == pytest.approx(0.421875)
    assert out["example_3_13_code.phi_min.multi"] == pytest.approx(5 / 12)
    assert out["example_3_13.amplification"] == pytest.approx(
        out["example_3_13.phi_min.multi"] - 0.375)
    text = fx.playground_report(runs, "example-3-13-paper")
    assert ":name: example-3-13-paper-summary" in text and "not feedforward" in text
    assert "Example 3.13 as in the paper:" in text
    with pytest.raises(ValueError, match="name"):
        fx.playground_report(runs, "nope")
    with pytest.raises(ValueError, match="runs lacks"):
        fx.playground_results({"example-3-8": runs["example-3-8"]})


# ------------------------------------------------------------------ the heads figure
def test_draw_heads_one_panel_per_head():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bparallel.book.render.plotting import draw_heads

    paper, code = example_3_13("paper"), example_3_13("code")
    fig = draw_heads([*paper.head_edges, code.head_edges[1]], labels=["u", "v", "w", "τ"],
                     titles=["a", "b", "c"])
    assert [ax.get_title() for ax in fig.axes] == ["a", "b", "c"]
    assert tuple(fig.get_size_inches()) == pytest.approx((7.0, 1.9))
    plt.close(fig)
    fig = draw_heads(example_3_8().head_edges, labels=["u", "v", "τ"])
    assert [ax.get_title() for ax in fig.axes] == ["head 1", "head 2"]
    plt.close(fig)
    with pytest.raises(ValueError, match="titles"):
        draw_heads(paper.head_edges, labels=["u", "v", "w", "τ"], titles=["only one"])
    with pytest.raises(ValueError, match="heads"):
        draw_heads([], labels=["u", "τ"])
