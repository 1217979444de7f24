"""The figures of chapter 12's experiment (bparallel.book.render.plotting.experiment), drawn
from synthetic rows: what each panel shows, and clear errors on empty input."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from bparallel.book.render.plotting import experiment as pe  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _learning_rows(task="induction"):
    rows = []
    for arm in ("width", "head16"):
        for h in (1, 4, 8, 16):
            times = [None, None] if (arm, h) == ("width", 16) else [800 * h, 900 * h]
            rows.append({"task": task, "arm": arm, "heads": h, "times": times,
                         "median_time": None if times[0] is None else 850.0 * h,
                         "area": 0.9 - 0.01 * h, "budget": 12000})
    return rows


def test_learning_by_heads_marks_runs_that_never_learned_at_the_budget():
    fig = pe.plot_learning_by_heads({"induction": _learning_rows(), "majority": []},
                                    {"induction": {1: 1.0, 16: 0.013}})
    top = fig.axes[0]
    assert top.get_title() == "induction" and top.get_ylabel() == "steps to threshold"
    # the two non-learners: open triangles at the budget; the budget line drawn
    triangles = [ln for ln in top.lines if ln.get_marker() == "^"]
    assert len(triangles) == 2 and all(ln.get_ydata()[0] == 12000 for ln in triangles)
    assert top.get_ylim()[1] > 12000
    assert len(fig.axes) == 3  # one task with runs, three rows (finite data given)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        pe.ARM_STYLE["width"][2], pe.ARM_STYLE["head16"][2]]
    with pytest.raises(ValueError, match="no task with runs"):
        pe.plot_learning_by_heads({"induction": []})


def test_fresh_learning_curves_one_panel_per_task_and_arm():
    curves = {("width", h, s): {"step": [0, 200, 400], "accuracy": [0.0, 0.5, 1.0]}
              for h in (1, 16) for s in (42, 43)}
    curves[("head16", 16, 42)] = {"step": [0, 200], "accuracy": [0.0, 0.95]}
    fig = pe.plot_fresh_learning_curves({"induction": curves})
    assert len(fig.axes) == 2
    assert len(fig.axes[0].lines) == 4 and len(fig.axes[1].lines) == 1
    assert np.allclose(fig.axes[1].lines[0].get_ydata(), [0, 95])  # percent
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["1 head", "16 heads"]
    with pytest.raises(ValueError, match="nothing to draw"):
        pe.plot_fresh_learning_curves({"majority": {}})


def test_proxies_through_training_mean_over_seeds_and_the_early_step():
    def series(v):
        return {"step": [0, 50, 100], "accuracy": [0.0, 0.0, 1.0],
                **{k: [v, v, v] for k, *_ in pe.PROXY_PANELS if k != "accuracy"}}

    curves = {("width", 4, 42): series(1.0), ("width", 4, 43): series(3.0),
              ("head16", 16, 42): series(5.0)}
    curves[("head16", 16, 42)]["t_mix"] = [math.inf, 4.0, 4.0]  # never mixes at step 0
    fig = pe.plot_proxies_through_training({"induction": curves}, {"induction": 50})
    panels = {ax.get_title(): ax for ax in fig.axes}
    fid = panels["φ_min as defined (%)"]
    assert np.allclose(fid.lines[0].get_ydata(), 5.0)  # head16 x 16 (sorted first)
    assert np.allclose(fid.lines[1].get_ydata(), 2.0)  # mean of the two seeds
    t_mix = panels["Def. 2.7 T_mix (steps)"].lines[0].get_ydata()
    assert fig.axes[0].get_ylabel() == "induction"  # the task names its row
    assert math.isnan(t_mix[0]) and t_mix[1] == 4.0  # an infinite time is not drawn
    # the early step, dash-dotted: dotted lines are the fixed attention width's
    assert [(ln.get_xdata()[0], ln.get_linestyle()) for ln in fid.lines[2:]] == [(50, "-.")]
    with pytest.raises(ValueError, match="nothing to draw"):
        pe.plot_proxies_through_training({})


def test_proxies_by_heads_one_line_per_task_with_intervals():
    rows = []
    for task in ("copy", "induction"):
        for h in (1, 4, 8, 16):
            r = {"task": task, "heads": h}
            for q, *_ in pe.SUMMARY_PANELS:
                r.update({q: 10.0 / h, f"{q}.low": 8.0 / h, f"{q}.high": 12.0 / h})
            rows.append(r)
    rows[0]["t_mix"], rows[0]["t_mix.low"], rows[0]["t_mix.high"] = math.inf, None, None
    fig = pe.plot_proxies_by_heads(rows)
    panels = {ax.get_title(): ax for ax in fig.axes}
    t_mix = panels["Definition 2.7 T_mix (steps)"]
    assert t_mix.get_yscale() == "log"
    copy_line = t_mix.lines[0]
    assert list(copy_line.get_xdata()) == [4, 8, 16]  # the infinite 1-head time left out
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["copy", "induction"]
    with pytest.raises(ValueError, match="summary is empty"):
        pe.plot_proxies_by_heads([])


def test_recipe_pilot_one_panel_per_run_with_threshold_and_convergence():
    def recipe(name, acc, outcome):
        return {"recipe": name, "label": name, "outcome": outcome,
                "curve": {"step": [0, 200, 400], "accuracy": acc}}

    pairs = [{"task": "histogram", "heads": h, "head_size": 64 // h, "seed": 42,
              "recipes": [recipe("constant", [0.3, 0.9, 0.85], "budget reached"),
                          recipe("cosine", [0.3, 0.9, 0.95], "converged")]}
             for h in (1, 4, 8)]
    fig = pe.plot_recipe_pilot(pairs, 0.9)
    drawn = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in drawn] == ["histogram, 1 x 64, seed 42",
                                                "histogram, 4 x 16, seed 42",
                                                "histogram, 8 x 8, seed 42"]
    assert len(fig.axes) == 4 and not fig.axes[3].axison  # two panels a row, one left blank
    ax = drawn[0]
    curves = [ln for ln in ax.lines if len(ln.get_xdata()) == 2]  # the second half
    assert np.allclose(curves[1].get_xdata(), [200, 400])
    assert np.allclose(curves[1].get_ydata(), [90, 95])  # percent
    assert ax.get_ylim() == (80, 100)  # 85 the lowest shown, floored to a multiple of 5
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert [(d.get_xdata()[0], d.get_ydata()[0]) for d in dots] == [(400, 95)]  # converged
    assert any(ln.get_linestyle() == "--" and ln.get_ydata()[0] == 90 for ln in ax.lines)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["constant", "cosine"]
    # start=0: the whole budget, every evaluation drawn
    whole = pe.plot_recipe_pilot(pairs, 0.9, start=0)
    assert max(len(ln.get_xdata()) for ln in whole.axes[0].lines) == 3
    with pytest.raises(ValueError, match="no piloted run"):
        pe.plot_recipe_pilot([], 0.9)
    for start in (1.0, -0.1):
        with pytest.raises(ValueError, match=rf"start={start}: must lie in \[0, 1\)"):
            pe.plot_recipe_pilot(pairs, 0.9, start=start)


def test_arm_design_draws_each_configuration_as_its_heads_to_scale():
    from bparallel.book.section4 import graph_experiment as fx

    configs = fx.configurations()
    fig = pe.plot_arm_design(configs)
    ax = fig.axes[0]
    # one cell per head of every configuration of the three arms
    assert len(ax.patches) == 3 * sum(r["heads"] for r in configs)
    # to scale: the widest head (one of 256) is 64 times the narrowest (16 of 4)
    widths = [p.get_width() for p in ax.patches]
    assert max(widths) / min(widths) == pytest.approx(256 / 4)
    texts = {t.get_text() for t in ax.texts}
    assert {"1 × 256", "16 × 4", "4 × 16", "371,712", "172,800"} <= texts
    with pytest.raises(ValueError, match="configurations is empty"):
        pe.plot_arm_design([])
    with pytest.raises(ValueError, match="lacks"):
        pe.plot_arm_design([{"heads": 1}])


def test_headline_learning_draws_median_and_range_over_seeds_per_arm():
    rows = _learning_rows()
    fig = pe.plot_headline_learning({"induction": rows, "majority": []})
    ax = fig.axes[0]
    assert ax.get_title() == "induction" and len(fig.axes) == 1
    # the range bars: one per arm and head count, from the fastest seed to the slowest
    segments = [s for c in ax.collections for s in c.get_segments()]
    assert len(segments) == 8
    spans = sorted(float(s[1][1] - s[0][1]) for s in segments)
    # 800 h to 900 h; the fixed-width 16 heads never learned: both at the budget, no span
    assert spans == pytest.approx([0, 100, 100, 400, 400, 800, 800, 1600])
    # the two runs that never learned sit at the budget, marked once per configuration
    triangles = [ln for ln in ax.lines if ln.get_marker() == "^" and ln.get_mfc() == "none"]
    assert len(triangles) == 1 and triangles[0].get_ydata()[0] == 12000
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        pe.ARM_STYLE["width"][2], pe.ARM_STYLE["head16"][2]]
    with pytest.raises(ValueError, match="no task with a run that learned"):
        pe.plot_headline_learning({"induction": []})
