"""The chapter plots of bparallel.book.plotting: they draw the data they are given, and refuse
frames without the columns they need."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from bparallel.book import plotting  # noqa: E402


def _points(ax):
    return sum(len(c.get_offsets()) for c in ax.collections)


def test_plot_mixing_bound_draws_every_head_on_the_left():
    rng = np.random.default_rng(0)
    kinds = list(plotting.BOUND_KINDS)
    heads = pd.DataFrame({"kind": np.repeat(kinds, 5), "n": np.tile([10, 100, 10, 100, 10], 6),
                          "pN": rng.uniform(0.1, 50, 30), "ratio": rng.uniform(0.01, 1, 30)})
    fig = plotting.plot_mixing_bound(heads, [10, 100], eps=0.01)
    left, right = fig.axes
    assert _points(left) == 30
    assert _points(right) == 20  # weighted, weighted pair, unweighted, path
    assert right.lines[0].get_xdata()[0] == pytest.approx(np.log(100))  # pN = ln(1/eps)
    plt.close(fig)
    with pytest.raises(ValueError, match=r"missing \['pN'\]"):
        plotting.plot_mixing_bound(heads.drop(columns="pN"), [10, 100], eps=0.01)
    with pytest.raises(ValueError, match="eps=1.5"):
        plotting.plot_mixing_bound(heads, [10, 100], eps=1.5)


def test_plot_amplification_features():
    rng = np.random.default_rng(1)
    n = 40
    feat = pd.DataFrame({"complementarity": rng.uniform(0, 0.2, n),
                         "amplification": rng.uniform(-0.1, 0.2, n),
                         "amplified": np.arange(n) % 3 == 0, "t*": rng.integers(1, 9, n),
                         "mixed-sequence share": rng.uniform(0, 1, n),
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
        plotting.plot_amplification_features(feat.drop(columns="t*"), by, horizon=8)
    with pytest.raises(ValueError, match="horizon=0"):
        plotting.plot_amplification_features(feat, by, horizon=0)


def test_plot_tradeoff():
    rows = []
    for n in (8, 16):
        rows += [{"n": n, "kind": "random", "T_mix": 3 + k, "phi_min": 0.1 / (k + 1),
                  "density": 0.1 * (k + 1)} for k in range(6)]
        rows += [{"n": n, "kind": "random pair (β = 1/2)", "T_mix": 4, "phi_min": 0.2,
                  "density": 0.5}]
        rows += [{"n": n, "kind": f, "T_mix": t, "phi_min": p, "density": 1.0}
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


def test_plot_pair_mixing_refuses_the_wrong_number_of_heads():
    with pytest.raises(ValueError, match="2 heads and 3 matrices"):
        plotting.plot_pair_mixing([[(0, 1)]], [], [], 0.1, weights=[1.0])


def test_plot_best_head_vs_combined_counts_cells_as_published_decimals():
    ours = pd.DataFrame({"task": ["copy", "copy", "cycle", "cycle"], "heads": [4, 16, 4, 8],
                         "layer": [1, 2, 1, 3], "individual": [0.30, 0.501, 0.2, 0.0],
                         "combined": [0.56, 0.499, 0.1, 0.0]})
    pub = ours.assign(combined=[0.1, 0.9, 0.9, 0.3])
    fig = plotting.plot_best_head_vs_combined({"published": pub, "this book": ours})
    left, right = fig.axes
    assert _points(left) == 4 and _points(right) == 4
    # 0.501 vs 0.499 round to 0.50 both: a tie at the published two decimals
    assert right.get_title().endswith("combined above 1, on 2, below 1 of 4")
    assert left.get_title().endswith("combined above 3, on 0, below 1 of 4")
    xy = np.concatenate([c.get_offsets() for c in right.collections])
    drawn = sorted(map(tuple, xy.tolist()))
    assert drawn == sorted(zip(ours.individual, ours.combined, strict=True))
    plt.close(fig)
    with pytest.raises(ValueError, match=r"panel 'x'.*missing \['combined'\]"):
        plotting.plot_best_head_vs_combined({"x": ours.drop(columns="combined")})
    with pytest.raises(ValueError, match="at least one panel"):
        plotting.plot_best_head_vs_combined({})


def test_plot_matrix_powers_draws_each_power_on_one_scale():
    from bparallel import graphs
    from bparallel.book.plotting import plot_matrix_powers

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
    from bparallel.book.plotting import plot_bound_vs_exact, plot_combination_mixing, plot_shortfall

    table = pd.DataFrame({"family": ["path", "path", "complete DAG", "complete DAG"],
                          "n": [2, 3, 2, 3], "T_mix exact": [2, 5, 2, 2], "2N/p": [2.0, 8, 2, 8]})
    ax = plot_bound_vs_exact(table, 0.25).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_array_equal(lines["path: exact $T_{mix}$"].get_ydata(), [2, 5])
    np.testing.assert_array_equal(lines["complete DAG: bound $2N/p$"].get_ydata(), [2, 8])
    assert lines["path: exact $T_{mix}$"].get_color() == lines["path: bound $2N/p$"].get_color()
    with pytest.raises(ValueError, match="2N/p"):
        plot_bound_vs_exact(table.drop(columns="2N/p"), 0.25)

    ax = plot_shortfall([1, 2, 3], [0.5], 0.25).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["exp(-pN), p = 0.5"].get_ydata(),
                               [markov.hoeffding_tail(0.5, N) for N in (1, 2, 3)])
    assert lines["ε = 0.25"].get_ydata()[0] == 0.25  # the threshold is labelled
    assert lines["exact, p = 0.5"].get_color() == lines["exp(-pN), p = 0.5"].get_color()

    ax = plot_combination_mixing([0, 0.5, 1], [9, 4, 2], [20, 8, 5]).axes[0]
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [9, 4, 2])
    with pytest.raises(ValueError, match="one length"):
        plot_combination_mixing([0, 1], [1], [1, 2])


def test_plot_computed_vs_closed_form():
    from bparallel.book.plotting import plot_computed_vs_closed_form

    x = np.linspace(0, 1, 5)
    ax = plot_computed_vs_closed_form(x, x**2, x**2, xlabel="b").axes[0]
    dots, line = ax.get_lines()
    np.testing.assert_array_equal(dots.get_ydata(), x**2)
    assert dots.get_linestyle() == "None" and ax.get_xlabel() == "b"
    with pytest.raises(ValueError, match="one length"):
        plot_computed_vs_closed_form(x, x[:2], x)


def test_plot_training_curves_draws_each_history():
    from bparallel.book.plotting import plot_training_curves

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
    from bparallel.book.plotting import plot_definition_vs_proxy, plot_hitting_profiles

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
