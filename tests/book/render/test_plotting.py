"""The chapter plots of bparallel.book.render.plotting: they draw the data they are given, and
refuse
frames without the columns they need."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from bparallel import ensembles as en  # noqa: E402
from bparallel import graphs as g  # noqa: E402
from bparallel.book import claims  # noqa: E402
from bparallel.book.render import plotting
from bparallel.book.section4.published import verdict  # noqa: E402


def _points(ax):
    return sum(len(c.get_offsets()) for c in ax.collections)


def test_plot_mixing_bound_draws_every_head_on_the_left():
    rng = np.random.default_rng(0)
    kinds = list(plotting.BOUND_KINDS)
    heads = pd.DataFrame({"kind": np.repeat(kinds, 5), "n": np.tile([10, 100, 10, 100, 10], 6),
                          "p_times_n": rng.uniform(0.1, 50, 30),
                          "ratio": rng.uniform(0.01, 1, 30)})
    fig = plotting.plot_mixing_bound(heads, [10, 100], eps=0.01)
    left, right = fig.axes
    assert _points(left) == 30
    assert _points(right) == 20  # weighted, weighted pair, unweighted, path
    assert right.lines[0].get_xdata()[0] == pytest.approx(np.log(100))  # pN = ln(1/eps)
    plt.close(fig)
    with pytest.raises(ValueError, match=r"missing \['p_times_n'\]"):
        plotting.plot_mixing_bound(heads.drop(columns="p_times_n"), [10, 100], eps=0.01)
    with pytest.raises(ValueError, match="eps=1.5"):
        plotting.plot_mixing_bound(heads, [10, 100], eps=1.5)


def test_plot_amplification_features():
    rng = np.random.default_rng(1)
    n = 40
    feat = pd.DataFrame({"complementarity": rng.uniform(0, 0.2, n),
                         "amplification": rng.uniform(-0.1, 0.2, n),
                         "amplified": np.arange(n) % 3 == 0, "t_star": rng.integers(1, 9, n),
                         "mixed_sequence_share": rng.uniform(0, 1, n),
                         "jaccard": rng.uniform(0, 1, n)})
    by = (feat.groupby(pd.cut(feat.jaccard, 4), observed=False).amplified.mean())
    fig = plotting.plot_amplification_features(feat, by, horizon=8)
    a0, a1, a2 = fig.axes
    assert np.allclose(a0.lines[0].get_ydata(), 100 * by.to_numpy(), equal_nan=True)
    assert _points(a1) == n and _points(a2) == n
    curve = a2.lines[0]
    assert np.allclose(curve.get_ydata(), 1 - 2.0 ** (1 - np.arange(1, 9)))
    plt.close(fig)
    with pytest.raises(ValueError, match="missing"):
        plotting.plot_amplification_features(feat.drop(columns="t_star"), by, horizon=8)
    with pytest.raises(ValueError, match="horizon=0"):
        plotting.plot_amplification_features(feat, by, horizon=0)


def test_plot_tradeoff():
    rows = []
    for n in (8, 16):
        rows += [{"n": n, "kind": "random", "t_mix": 3 + k, "phi_min": 0.1 / (k + 1),
                  "density": 0.1 * (k + 1)} for k in range(6)]
        rows += [{"n": n, "kind": "random pair (β = 1/2)", "t_mix": 4, "phi_min": 0.2,
                  "density": 0.5}]
        rows += [{"n": n, "kind": f, "t_mix": t, "phi_min": p, "density": 1.0}
                 for f, t, p in (("path", n, 0.9), ("complete", 2, 0.1))]
    trade = pd.DataFrame(rows)
    fig = plotting.plot_tradeoff(trade, [8, 16], {8: -0.5, 16: -0.25}, ["path", "complete"])
    panels = fig.axes[:2]  # then the colour bar
    for ax in panels:
        assert _points(ax) == 6 + 1 + 2
    assert "ρ(random) = -0.25" in panels[1].get_title()
    plt.close(fig)
    with pytest.raises(ValueError, match=r"n = \[16\]"):
        plotting.plot_tradeoff(trade, [8, 16], {8: -0.5}, ["path"])
    with pytest.raises(ValueError, match="missing"):
        plotting.plot_tradeoff(trade.drop(columns="density"), [8], {8: 0.0}, ["path"])


def test_plot_binomial_bound_draws_one_curve_per_n():
    p = np.geomspace(1e-2, 1, 30)
    Ns = np.array([1, 3])
    tails = claims.binomial_tail_at_bound(Ns[:, None], p)
    ratios = claims.worst_case_bound_ratio(Ns[:, None], p)
    fig = plotting.plot_binomial_bound(p, Ns, tails, ratios, eps=0.25)
    left, right = fig.axes
    for ax, curves in ((left, tails), (right, ratios)):
        for line, N, curve in zip(ax.lines, Ns, curves, strict=False):
            assert line.get_label() == f"N = {N}"
            np.testing.assert_array_equal(line.get_xdata(), p)
            np.testing.assert_array_equal(line.get_ydata(), curve)
    # after the curves: eps and e^-2 on the left, 1 on the right
    assert [ln.get_ydata()[0] for ln in left.lines[2:]] == [0.25, pytest.approx(np.exp(-2))]
    assert right.lines[2].get_ydata()[0] == 1
    plt.close(fig)
    with pytest.raises(ValueError, match=r"shape \(2, 30\)"):
        plotting.plot_binomial_bound(p, Ns, tails[:1], ratios, eps=0.25)


def test_plot_mixing_weights_counts_pairs_faster_and_slower():
    A, _ = en.random_head_stacks(30, 2, 5, [0.3, 0.6], seed=2)
    mc = en.compare_mixing(g.walk_matrix_from_adjacency(A), grid_steps=4)
    fig = plotting.plot_mixing_weights(mc, n=5)
    left, right = fig.axes
    uniform, best = left.containers  # the two histograms, in that order
    gains_u, gains_b = mc.fastest - mc.uniform, mc.fastest - mc.best
    for bars, gains in ((uniform, gains_u), (best, gains_b)):
        centres = [b.get_x() + b.get_width() / 2 for b in bars]
        heights = [b.get_height() for b in bars]
        assert heights == [np.sum(gains == round(c)) for c in centres]
    faster, slower = right.lines
    np.testing.assert_array_equal(faster.get_xdata(), mc.weights[:, 0])
    np.testing.assert_allclose(faster.get_ydata(), 100 * (mc.grid < mc.fastest[:, None]).mean(0))
    np.testing.assert_allclose(slower.get_ydata(), 100 * (mc.grid > mc.slowest[:, None]).mean(0))
    assert right.get_ylabel() == "% of pairs (n = 5)"
    plt.close(fig)
    triples = en.compare_mixing(g.walk_matrix_from_adjacency(
        en.random_head_stacks(3, 3, 4, [0.5], seed=1)[0]), grid_steps=2)
    with pytest.raises(ValueError, match="pairs of heads, got H = 3"):
        plotting.plot_mixing_weights(triples, n=4)


def _fidelity_pairs(num, n, seed):
    A, _ = en.random_head_stacks(num, 2, n, [0.3, 0.6], seed=seed)
    return en.compare_fidelity(g.diffusion_matrix_from_adjacency(A), 8, grid_steps=4)


def test_plot_amplification_histograms_draws_each_comparison():
    comps = {"a": _fidelity_pairs(25, 5, 1), "b": _fidelity_pairs(15, 6, 2)}
    fig = plotting.plot_amplification_histograms(comps)
    uniform, best, by_weight = fig.axes
    for k, fc in enumerate(comps.values()):
        for ax, amp in ((uniform, fc.amp_uniform), (best, fc.amp_best)):
            counts, _ = np.histogram(amp, bins=60, density=True)
            drawn = ax.patches[k].get_path().vertices[:, 1]  # the step outline
            assert drawn.max() == pytest.approx(counts.max())
        line = by_weight.lines[k]
        expected = 100 * ((fc.grid - fc.best_head[:, None]) > 1e-9).mean(0)
        np.testing.assert_allclose(line.get_ydata(), expected)
        assert line.get_label() == list(comps)[k]
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plotting.plot_amplification_histograms({})


def test_plot_amplification_by_horizon_and_size():
    by_horizon = pd.DataFrame({"amplified_uniform_pct": [10.0, 20.0, 25.0],
                               "amplified_best_pct": [30.0, 35.0, 40.0]},
                              index=pd.Index([5, 10, 20], name="horizon"))
    by_size = pd.DataFrame({"search": ["exhaustive", "random"], "n": [3, 20],
                            "amplified_uniform_pct": [0.0, 66.8],
                            "amplified_best_pct": [1.0, 80.8]}).set_index(["search", "n"])
    fig = plotting.plot_amplification_by_horizon_and_size(by_horizon, by_size, n=8, horizon=20,
                                                          labels=claims.LABELS)
    left, right = fig.axes
    assert [ln.get_label() for ln in left.lines] == [claims.LABELS["amplified_uniform_pct"],
                                                      claims.LABELS["amplified_best_pct"]]
    np.testing.assert_array_equal(left.lines[0].get_xdata(), [5, 10, 20])
    np.testing.assert_array_equal(left.lines[1].get_ydata(), [30.0, 35.0, 40.0])
    np.testing.assert_array_equal(right.lines[0].get_xdata(), [3, 20])
    np.testing.assert_array_equal(right.lines[0].get_ydata(), [0.0, 66.8])
    assert left.get_ylabel() == "% of pairs (n = 8)" and right.get_ylabel() == "% of pairs (T = 20)"
    plt.close(fig)
    with pytest.raises(ValueError, match=r"by_size.*missing \['amplified_best_pct'\]"):
        plotting.plot_amplification_by_horizon_and_size(
            by_horizon, by_size.drop(columns="amplified_best_pct"), n=8, horizon=20,
            labels=claims.LABELS)
    with pytest.raises(ValueError, match=r"labels has no legend text for \['amplified_best_pct'\]"):
        plotting.plot_amplification_by_horizon_and_size(
            by_horizon, by_size, n=8, horizon=20, labels={"amplified_uniform_pct": "u"})


def test_plot_head_pair_draws_each_heads_edges():
    e1, e2 = [(0, 1), (1, 3), (2, 3)], [(0, 2), (1, 2), (2, 3)]
    A = np.stack([g.adjacency_matrix(e1, 4), g.adjacency_matrix(e2, 4)])
    fig = plotting.plot_head_pair(A, [0.25, 0.5])
    for ax, edges, phi in zip(fig.axes, (e1, e2), (0.25, 0.5), strict=True):
        assert len(ax.patches) == len(edges)  # one arrow per edge, self-loops not drawn
        assert ax.get_title() == f"n = 4, head {fig.axes.index(ax) + 1}: φ_min = {phi:.3f}"
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\(2, n, n\)"):
        plotting.plot_head_pair(A[:1], [0.25])


def test_plot_best_head_draws_theory_and_simulation_per_law():
    table = pd.concat([claims.best_head_simulation(lambda s, v=v: np.full(s, v), 0.5, F, [1, 2, 4],
                                                   10, label=name)
                       for name, v, F in (("flat", 0.9, 0.3), ("low", 0.1, 0.8))],
                      ignore_index=True)
    fig = plotting.plot_best_head(table, ["flat", "low"])
    ax = fig.axes[0]
    theory_low, sim_low = ax.lines[2:]
    np.testing.assert_array_equal(theory_low.get_xdata(), [1, 2, 4])
    np.testing.assert_allclose(theory_low.get_ydata(), [1 - 0.8 ** h for h in (1, 2, 4)])
    np.testing.assert_array_equal(sim_low.get_ydata(), [0.0, 0.0, 0.0])  # p = 0.1 < 0.5
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), [1.0, 1.0, 1.0])  # p = 0.9
    assert theory_low.get_label() == "low: Eq. 18"
    plt.close(fig)
    with pytest.raises(ValueError, match=r"no rows for the laws \['uniform'\]"):
        plotting.plot_best_head(table, ["uniform"])


def test_plot_pair_mixing_refuses_the_wrong_number_of_heads():
    with pytest.raises(ValueError, match="2 heads and 3 curves"):
        plotting.plot_pair_mixing([[(0, 1)]], [], [], 0.1, weights=[1.0])


def test_plot_best_head_vs_combined_counts_cells_as_published_decimals():
    ours = pd.DataFrame({"task": ["copy", "copy", "cycle", "cycle"], "heads": [4, 16, 4, 8],
                         "layer": [1, 2, 1, 3], "individual": [0.30, 0.501, 0.2, 0.0],
                         "combined": [0.56, 0.499, 0.1, 0.0]})
    pub = ours.assign(combined=[0.1, 0.9, 0.9, 0.3])
    # the chapter decides each cell at the published precision; the figure counts
    ours, pub = (f.assign(outcome=[verdict(c, i) for c, i in zip(f.combined, f.individual,
                                                                  strict=True)])
                 for f in (ours, pub))
    fig = plotting.plot_best_head_vs_combined({"published": pub, "this book": ours})
    left, right = fig.axes
    assert _points(left) == 4 and _points(right) == 4
    # 0.501 vs 0.499 round to 0.50 both: a tie at the published two decimals
    assert right.get_title().endswith("1 above, 2 on, 1 below")
    assert left.get_title().endswith("3 above, 0 on, 1 below")
    xy = np.concatenate([c.get_offsets() for c in right.collections])
    drawn = sorted(map(tuple, xy.tolist()))
    assert drawn == sorted(zip(ours.individual, ours.combined, strict=True))
    plt.close(fig)
    with pytest.raises(ValueError, match=r"panel 'x'.*missing \['combined'\]"):
        plotting.plot_best_head_vs_combined({"x": ours.drop(columns="combined")})
    with pytest.raises(ValueError, match=r"panel 'x'.*missing \['outcome'\]"):
        plotting.plot_best_head_vs_combined({"x": ours.drop(columns="outcome")})
    with pytest.raises(ValueError, match="at least one panel"):
        plotting.plot_best_head_vs_combined({})


def test_plot_matrix_powers_draws_each_power_on_one_scale():
    from bparallel import graphs
    from bparallel.book.render.plotting import plot_matrix_powers

    W = graphs.walk_matrix([(0, 1), (1, 2)], 3)
    fig = plot_matrix_powers(W, [0, 1, 3])
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3
    for image, t in zip(images, [0, 1, 3], strict=True):
        np.testing.assert_allclose(image.get_array(), np.linalg.matrix_power(W, t))
        assert image.get_clim() == (0, 1)
    assert any(ax.get_ylabel() == "probability" for ax in fig.axes)  # the colourbar
    with pytest.raises(ValueError, match="square"):
        plot_matrix_powers(np.ones((2, 3)), [1])
    with pytest.raises(ValueError, match="powers"):
        plot_matrix_powers(W, [])


def test_chapter_02_figures_draw_the_data_with_matching_colours():
    from bparallel import markov
    from bparallel.book.render.plotting import (
        plot_bound_vs_exact,
        plot_combination_mixing,
        plot_shortfall,
    )

    table = pd.DataFrame({"family": ["path", "path", "complete DAG", "complete DAG"],
                          "n": [2, 3, 2, 3], "T_mix exact": [2, 5, 2, 2], "2N/p": [2.0, 8, 2, 8]})
    ax = plot_bound_vs_exact(table, 0.25).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_array_equal(lines["path: exact $T_{mix}$"].get_ydata(), [2, 5])
    np.testing.assert_array_equal(lines["complete DAG: bound $2N/p$"].get_ydata(), [2, 8])
    assert lines["path: exact $T_{mix}$"].get_color() == lines["path: bound $2N/p$"].get_color()
    with pytest.raises(ValueError, match="2N/p"):
        plot_bound_vs_exact(table.drop(columns="2N/p"), 0.25)

    from bparallel.book import claims
    from bparallel.book.mixing_bound import shortfall_curves

    curves = shortfall_curves([1, 2, 3], [0.5, 0.3])
    ax = plot_shortfall(curves, 0.25).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["exp(-pN), p = 0.5"].get_ydata(),
                               [markov.hoeffding_tail(0.5, N) for N in (1, 2, 3)])
    # the exact tail at floor(2N/p): chapter 03's table's rounding, two implementations
    for p in (0.5, 0.3):
        np.testing.assert_allclose(lines[f"exact, p = {p}"].get_ydata(),
                                   claims.binomial_tail_at_bound(np.array([1, 2, 3]), p),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="has no"):
        plot_shortfall({0.5: {"N": [1]}}, 0.25)
    assert lines["ε = 0.25"].get_ydata()[0] == 0.25  # the threshold is labelled
    assert lines["exact, p = 0.5"].get_color() == lines["exp(-pN), p = 0.5"].get_color()

    ax = plot_combination_mixing([0, 0.5, 1], [9, 4, 2], [20, 8, 5]).axes[0]
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [9, 4, 2])
    with pytest.raises(ValueError, match="one length"):
        plot_combination_mixing([0, 1], [1], [1, 2])


def test_plot_computed_vs_closed_form():
    from bparallel.book.render.plotting import plot_computed_vs_closed_form

    x = np.linspace(0, 1, 5)
    ax = plot_computed_vs_closed_form(x, x**2, x**2, xlabel="b").axes[0]
    dots, line = ax.get_lines()
    np.testing.assert_array_equal(dots.get_ydata(), x**2)
    assert dots.get_linestyle() == "None" and ax.get_xlabel() == "b"
    with pytest.raises(ValueError, match="one length"):
        plot_computed_vs_closed_form(x, x[:2], x)


def test_plot_training_curves_draws_each_history():
    from bparallel.book.render.plotting import plot_training_curves

    hist = {("copy", 1): {"epoch": [1, 2], "train_loss": [2, 1], "heldout_accuracy": [0.5, 1]},
            ("cycle", 4): {"epoch": [1, 2], "train_loss": [3, 2], "heldout_accuracy": [0, 0.25]}}
    fig = plot_training_curves(hist)
    acc_cycle = fig.axes[3]  # row 2, column 2 (cycle accuracy)
    np.testing.assert_array_equal(acc_cycle.get_lines()[0].get_ydata(), [0, 25])
    assert fig.axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="empty"):
        plot_training_curves({})
    with pytest.raises(ValueError, match="train_loss"):
        plot_training_curves({("copy", 1): {"epoch": [1], "heldout_accuracy": [1]}})


def test_section4_definition_figures():
    from bparallel.book.render.plotting import plot_definition_vs_proxy, plot_hitting_profiles

    rows = [{"task": "copy", "heads": h, "layer": layer, "t_mix_median": t, "proxy_definition": p}
            for h, layer, t, p in ((1, 1, 13.0, 8.6), (1, 2, np.inf, 97.5),
                                   (16, 1, 10.0, 5.9), (16, 2, 10.0, 6.2))]
    ax = plot_definition_vs_proxy(rows).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_array_equal(lines["16 heads: Def. 2.7"].get_ydata(), [10, 10])
    assert np.isnan(lines["1 head: Def. 2.7"].get_ydata()[1])  # never mixes: not on the curve
    assert ax.get_yscale() == "log" and "cutoff M = 100" in lines
    with pytest.raises(ValueError, match="empty"):
        plot_definition_vs_proxy([])
    h = np.array([[50.0, 150.0, np.inf, 0.0], [30.0, 250.0, 2.0, 0.0]])
    ax = plot_hitting_profiles({"copy, 1 head, L2": h}).axes[0]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [40, 200, 2])
    with pytest.raises(ValueError, match="expected"):
        plot_hitting_profiles({"x": np.ones(3)})


def test_plot_pruning_curves_draws_each_order():
    from bparallel.book.render.plotting import plot_pruning_curves

    pr = {"heads_kept": np.arange(3),
          "weight": {"accuracy_predictable": np.array([0.1, 0.5, 1.0]),
                     "margin": np.array([-2.0, 1.0, 3.0])},
          "random": {"accuracy_predictable": np.array([[0.2, 0.6, 1.0], [0.0, 0.4, 1.0]]),
                     "margin": np.array([[-1.0, 0.0, 3.0], [-3.0, 2.0, 3.0]])}}
    fig = plot_pruning_curves({"copy, 2 heads": pr})
    top, bottom = fig.axes[:2]  # one row per metric: accuracy (percent), then the margin
    lines = {ln.get_label(): ln for ln in top.get_lines()}
    np.testing.assert_allclose(lines["by head weight w_h"].get_ydata(), [10, 50, 100])
    # the random orders: their median (here of two: the mean) and a 5-95% band
    np.testing.assert_allclose(lines["random orders, median"].get_ydata(), [10, 50, 100])
    lines = {ln.get_label(): ln for ln in bottom.get_lines()}
    np.testing.assert_allclose(lines["by head weight w_h"].get_ydata(), [-2, 1, 3])
    np.testing.assert_allclose(lines["random orders, median"].get_ydata(), [-2, 1, 3])
    assert any(c.get_label() == "random orders, 5-95% (2)" for c in bottom.collections)
    assert bottom.get_ylabel() == "mean logit margin"
    one = plot_pruning_curves({"copy, 2 heads": pr}, metrics=("accuracy_predictable",))
    assert len(one.axes) == 1
    with pytest.raises(ValueError, match="empty"):
        plot_pruning_curves({})


def test_draw_dag_keeps_crossing_arcs_apart():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    from bparallel.book.render.plotting import draw_dag

    fig, ax = plt.subplots()
    edges = [(0, 1), (0, 2), (1, 3), (2, 4), (3, 1)]
    draw_dag(edges, 5, ax=ax)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(edges)
    rad = [a.get_connectionstyle().rad for a in arrows]  # in the order of the edges
    assert rad[0] == 0  # to the next node: straight
    assert rad[1] < 0 and rad[3] < 0  # from even nodes: above (left to right, rad < 0)
    assert rad[2] > 0  # from an odd node: below, so 0 -> 2 and 1 -> 3 do not overlap
    back = arrows[4]
    assert back.get_facecolor()[:3] != arrows[1].get_facecolor()[:3]  # red
    assert rad[4] < 0 and abs(rad[4]) > abs(rad[2])  # right to left, below, and deeper
    lo, hi = ax.get_ylim()
    assert lo < 0 < hi and -lo >= 0.5 * abs(rad[4]) * 2  # the deepest arc fits
    plt.close(fig)


def test_book_style_draws_legible_figures():
    """Under the book's style a figure is at most the text column wide and none of its text is
    below MIN_FONT_PT (10.7 px at the drawn size; the browser tests measure the pages)."""
    from matplotlib.text import Text

    plotting.use_book_style()
    hist = {"epoch": [1, 2, 3], "train_loss": [1.0, 0.5, 0.2],
            "heldout_accuracy": [0.2, 0.6, 0.9]}
    fig = plotting.plot_training_curves({(t, h): hist for t in ("copy", "cycle")
                                         for h in (1, 4, 8, 16)})
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert min(sizes) >= plotting.MIN_FONT_PT, sorted(sizes)[:3]
    assert fig.get_figwidth() <= plotting.TEXT_WIDTH
    plt.close(fig)


#: The paper's claims: more heads shorten mixing times and raise fidelity (chapter 11's).
DIRECTIONS = {"mixing_time": -1, "fidelity": +1}


def test_plot_head_count_changes_draws_each_interval_where_its_outcome_says():
    """The forest plot of chapter 11: per (task, layer) the interval from low to high and the
    mean change, coloured by the row's outcome; zero line; the claimed side shaded (left for
    mixing time: fewer steps; right for fidelity); text legible under the book's style."""
    from matplotlib.colors import to_hex
    from matplotlib.text import Text

    from bparallel.book.verdicts import Outcome

    def row(quantity, task, layer, effect, low, high, outcome):
        return {"quantity": quantity, "task": task, "layer": layer, "effect": effect,
                "low": low, "high": high, "outcome_holm": outcome}

    panels = {"mode A": [row("mixing_time", "copy", 1, -40.0, -45.0, -35.0, Outcome.AS_CLAIMED),
                         row("mixing_time", "cycle", 1, -1.0, -30.0, 20.0, Outcome.NOT_RESOLVED),
                         row("fidelity", "copy", 1, 0.4, 0.3, 0.5, Outcome.AS_CLAIMED),
                         row("fidelity", "cycle", 1, -80.0, -90.0, -70.0, Outcome.AGAINST)],
              "mode B": [row("mixing_time", "copy", 1, -0.4, -0.7, -0.1,
                             Outcome.NOT_AFTER_HOLM)]}
    fig = plotting.plot_head_count_changes(panels, DIRECTIONS)
    a_mix, a_fid, b_mix, b_fid = fig.axes
    assert [a_mix.get_xscale(), a_fid.get_xscale()] == ["symlog", "symlog"]
    assert a_mix.get_title() == "mixing time (steps)"
    assert [t.get_text() for t in a_mix.get_yticklabels()] == ["copy, L1", "cycle, L1"]
    style = plotting.OUTCOME_STYLE
    # interval lines (two points) and markers (one point), in the rows' order
    intervals = [ln for ln in a_fid.lines if len(ln.get_xdata()) == 2
                 and ln.get_xdata()[0] != ln.get_xdata()[1]]
    markers = [ln for ln in a_fid.lines if len(ln.get_xdata()) == 1]
    assert [list(ln.get_xdata()) for ln in intervals] == [[0.3, 0.5], [-90.0, -70.0]]
    assert [ln.get_xdata()[0] for ln in markers] == [0.4, -80.0]
    assert [to_hex(ln.get_color()) for ln in markers] == [
        style["as claimed"][0], style["against the claim"][0]]
    assert markers[1].get_marker() == style["against the claim"][1]
    assert markers[0].get_ydata()[0] > markers[1].get_ydata()[0]  # copy above cycle
    # the zero line, and every interval inside the axis
    assert any(list(ln.get_xdata()) == [0, 0] for ln in a_fid.lines)
    assert a_fid.get_xlim()[0] < -90 and a_fid.get_xlim()[1] > 90
    # the claimed side: left of 0 for mixing time, right of 0 for fidelity
    (mix_side,), (fid_side,) = a_mix.patches, a_fid.patches
    assert mix_side.get_x() < 0 and mix_side.get_x() + mix_side.get_width() == 0
    assert fid_side.get_x() == 0 and fid_side.get_width() > 0
    # open marker for "as claimed, not after Holm"; empty fidelity panel in mode B
    (open_marker,) = [ln for ln in b_mix.lines if len(ln.get_xdata()) == 1]
    assert open_marker.get_markerfacecolor() == "white"
    assert not [ln for ln in b_fid.lines if len(ln.get_xdata()) == 1]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "as claimed", "as claimed, not after Holm", "not resolved", "against the claim",
        "the claimed side"]
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert min(sizes) >= plotting.MIN_FONT_PT and fig.get_figwidth() <= plotting.TEXT_WIDTH
    plt.close(fig)
    # one seed: no interval, only the mean
    fig = plotting.plot_head_count_changes(
        {"one seed": [row("fidelity", "copy", 2, 0.2, None, None, Outcome.AS_CLAIMED_ONE_SEED)]},
        DIRECTIONS)
    assert [len(ln.get_xdata()) for ln in fig.axes[0].lines if ln.get_xdata()[0] != 0] == [1]
    plt.close(fig)
    with pytest.raises(ValueError, match="empty"):
        plotting.plot_head_count_changes({}, DIRECTIONS)
    with pytest.raises(ValueError, match=r"no \['high'\]"):
        plotting.plot_head_count_changes({"x": [{k: v for k, v in panels["mode B"][0].items()
                                                 if k != "high"}]}, DIRECTIONS)
    with pytest.raises(ValueError, match="unknown outcome 'maybe'"):
        plotting.plot_head_count_changes({"x": [{**panels["mode B"][0], "outcome_holm": "maybe"}]},
                                         DIRECTIONS)


def test_plot_pair_mixing_draws_the_chapters_tv_curves():
    """The figure draws what chapter 03 computes: the TV curves of two heads and their
    combination, whose maximum over starts falls to eps at each exact mixing time."""
    edges = [[(0, 1), (1, 2)], [(0, 2), (1, 2)]]
    matrices, t_mix = claims.exact_combination_mixing(edges, 3, [0.5, 0.5], 0.25)
    curves = claims.pair_tv_curves(matrices, t_mix)
    assert [c.shape for c in curves] == [(max(t_mix) + 4, 3)] * 3
    for c, T in zip(curves, t_mix, strict=True):
        worst = c.max(axis=1)
        assert worst[T] <= 0.25 + 1e-12 and (T == 0 or worst[T - 1] > 0.25)
    fig = plotting.plot_pair_mixing(edges, curves, t_mix, 0.25, weights=[0.5, 0.5])
    bottom = fig.axes[3:6]
    for ax, c in zip(bottom, curves, strict=True):
        worst_line = next(ln for ln in ax.get_lines() if ln.get_label() == "max over starts")
        np.testing.assert_array_equal(worst_line.get_ydata(), c.max(axis=1))
    plt.close(fig)
    with pytest.raises(ValueError, match="one time per matrix"):
        claims.pair_tv_curves(matrices, t_mix[:2])
