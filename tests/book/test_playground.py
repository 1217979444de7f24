import numpy as np
import pytest

from bparallel import absorbing
from bparallel.book import playground as pg
from bparallel.examples import example_3_8, example_3_13
from bparallel.fidelity import multi_head_minimax_fidelity
from bparallel.graphs import diffusion_matrix


def test_presets_reproduce_examples():
    r = pg.compute(pg.from_preset("Example 3.13 (paper)"))
    assert r.report.head_minimax.tolist() == pytest.approx([0.375, 0.375])
    assert r.report.multi_minimax == pytest.approx(example_3_13("paper").report().multi_minimax)
    assert r.amplified
    assert any("head 2 is not feedforward" in w and "v->u" in w for w in r.warnings)
    code = pg.compute(pg.from_preset("Example 3.13 (code)"))
    assert code.warnings == []
    assert code.report.multi_minimax == pytest.approx(5 / 12)
    e38 = pg.compute(pg.from_preset("Example 3.8"))
    ex = example_3_8()
    assert e38.report.multi_minimax == pytest.approx(ex.report().multi_minimax)
    assert e38.report.head_minimax.tolist() == [0.0, 0.0]


def test_toggle_edges():
    st = pg.from_preset("Example 3.8")
    assert st.toggle(0, 0, 2) is True  # add u -> tau to head 1
    assert (0, 2) in st.heads[0]
    r = pg.compute(st)
    D1 = diffusion_matrix([(0, 1), (0, 2)], 3)
    np.testing.assert_allclose(r.head_signals[0, 1], D1[2])
    assert st.toggle(0, 0, 2) is False
    assert (0, 2) not in st.heads[0]
    with pytest.raises(ValueError, match="self-loop"):
        st.toggle(0, 1, 1)
    with pytest.raises(ValueError, match="out of range"):
        st.toggle(0, 0, 3)
    with pytest.raises(ValueError, match="head must lie"):
        st.toggle(2, 0, 1)


def test_weight_normalisation():
    st = pg.from_preset("Example 3.13 (paper)")
    st.set_weight(0, 0.3)
    st.set_weight(1, 0.9)
    np.testing.assert_allclose(st.beta, [0.25, 0.75])
    r = pg.compute(st)
    expected = multi_head_minimax_fidelity(example_3_13().deltas, [0.25, 0.75], 20,
                                           allow_backward=True)  # head 2: v -> u
    assert r.report.multi_minimax == pytest.approx(expected)
    st.set_weight(0, 0.0)
    with pytest.raises(ValueError, match="all zero"):
        st.set_weight(1, 0.0)
    assert st.raw_beta == [0.0, 0.9]  # the refused change left the state as it was
    with pytest.raises(ValueError, match="non-negative"):
        st.set_weight(0, -1)


def test_non_feedforward_warning_and_mixing():
    st = pg.PlaygroundState(n=3, heads=[{(0, 1), (1, 2)}, {(1, 0), (0, 2)}], raw_beta=[1, 1])
    r = pg.compute(st)
    assert any("head 2 is not feedforward" in w for w in r.warnings)
    assert r.head_mixing[0] is not None and r.head_mixing[1] is not None
    st2 = pg.PlaygroundState(n=3, heads=[{(0, 2)}, {(0, 2)}], raw_beta=[1, 1])
    r2 = pg.compute(st2)  # node 1 is a second sink: nothing mixes
    assert r2.head_mixing == [None, None] and r2.multi_mixing is None
    assert r2.head_hitting == [None, None]
    assert any("no unique sink" in w for w in r2.warnings)


def test_resize_and_heads():
    st = pg.from_preset("Random feedforward", seed=3, n=7, heads=3, density=0.4)
    assert st.num_heads == 3 and st.n == 7
    st.set_n(4)
    assert all(j < 4 and i < 4 for h in st.heads for j, i in h)
    assert all(any(j == k for j, _ in h) for h in st.heads for k in range(3))  # all still pass on
    st.set_num_heads(4)
    assert st.num_heads == 4 and st.raw_beta[-1] == 1.0
    assert st.heads[-1] == {(0, 1), (1, 2), (2, 3)}  # a new head is the path, not empty
    r = pg.compute(st)
    assert r.report.head_minimax[-1] > 0 and r.head_mixing[-1] is not None  # usable at once
    st.set_num_heads(2)
    assert len(st.raw_beta) == 2
    with pytest.raises(ValueError, match="number of heads"):
        st.set_num_heads(5)
    with pytest.raises(ValueError, match="n must lie"):
        st.set_n(pg.MAX_NODES + 1)
    a = pg.from_preset("Random feedforward", seed=3)
    b = pg.from_preset("Random feedforward", seed=3)
    assert a.heads == b.heads


def test_bad_presets_and_state():
    with pytest.raises(ValueError, match="unknown preset"):
        pg.from_preset("Example 9.9")
    with pytest.raises(ValueError, match="takes no parameters"):
        pg.from_preset("Example 3.8", seed=1)
    with pytest.raises(ValueError, match="one weight per head"):
        pg.PlaygroundState(n=3, heads=[set(), set()], raw_beta=[1])
    with pytest.raises(ValueError, match="horizon"):
        pg.PlaygroundState(n=3, heads=[set(), set()], raw_beta=[1, 1], horizon=0)
    with pytest.raises(ValueError, match="eps"):
        pg.PlaygroundState(n=3, heads=[set(), set()], raw_beta=[1, 1], eps=1.0)


def test_to_python_roundtrip():
    st = pg.from_preset("Example 3.13 (code)")
    st.set_weight(1, 0.25)
    code = pg.to_python(st)
    scope: dict = {}
    exec(compile(code, "<playground>", "exec"), scope)  # our own generated code, not user text
    assert scope["report"].multi_minimax == pytest.approx(pg.compute(st).report.multi_minimax)
    # every name the exported code imports or assigns is used (no unused imports)
    import ast

    tree = ast.parse(code)
    defined = {a.asname or a.name for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    defined |= {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                for t in ast.walk(node.targets[0]) if isinstance(t, ast.Name)}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert defined - used == {"report"}, defined - used  # report is the result


def test_table_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    r = pg.compute(pg.from_preset("Example 3.13 (paper)"))
    rows = pg.fidelity_table(r)
    assert [row["node"] for row in rows] == ["u", "v", "w"]
    assert rows[1]["head 1 phi"] == pytest.approx(0.375) and rows[1]["head 1 t"] == 3
    fig = pg.plot_signals(r)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 3  # two heads and the combination, two panels a row
    assert "37.5" in shown[0].get_title()
    # drawn to read on a phone: its text at PHONE_FONT_PT, the legend 2 pt smaller
    from bparallel.book.render.plotting.style import PHONE_FONT_PT
    assert shown[0].title.get_fontsize() == PHONE_FONT_PT
    assert shown[-1].get_legend().get_texts()[0].get_fontsize() == PHONE_FONT_PT - 2


def test_draw_dag_smoke():
    """Smoke test: the drawing helper runs and draws one arrow per non-loop edge."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.patches import FancyArrowPatch

    from bparallel.book.render.plotting import draw_dag

    ax = draw_dag([(0, 1), (1, 0), (1, 2), (2, 2)], 3)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3
    assert sum(a.get_edgecolor()[0] > 0.8 and a.get_edgecolor()[2] < 0.3 for a in arrows) == 1


def test_widget_redraws_into_image_and_html():
    """The ipywidgets UI (no Output widget) recomputes when an edge checkbox is toggled."""
    import matplotlib

    matplotlib.use("Agg")
    w = pg.build_widget(pg.from_preset("Example 3.13 (paper)"))
    image, info = w.children[2], w.children[3]
    assert image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "not feedforward" in info.value and "0.3750" in info.value
    head1 = w.children[1].children[0].children[0]
    assert pg.GRID_AXES in head1.children[0].value
    # as W and Delta: row i receives, column j sends; children: title, header, row 0, row 1 ...
    checkbox = head1.children[3].children[1]  # row v (receives), column u (sends): u -> v
    assert checkbox.value is True and checkbox.tooltip == "head 1: u -> v"
    assert head1.children[2].children[2].value is False  # row u, column v: v -> u, absent
    checkbox.value = False  # remove u -> v from head 1: u no longer reaches tau in head 1
    assert "<td>0.0000</td>" in info.value


def test_widget_says_never_mixes_as_the_tables_do():
    import matplotlib

    matplotlib.use("Agg")
    info = pg.build_widget(pg.from_preset("Example 3.8")).children[3].value
    assert f"heads [{pg.NEVER_MIXES}, {pg.NEVER_MIXES}]" in info and "None" not in info


def test_summary_table_says_never_instead_of_nan():
    r = pg.compute(pg.from_preset("Example 3.8"))
    rows = pg.summary_table(r)
    assert [row["graph"] for row in rows] == ["head 1", "head 2", "combined"]
    mix = [row["T_mix (ε = 0.25)"] for row in rows]
    hit = [row["max_j E[τ_j]"] for row in rows]
    # head 1 (u -> v only) and head 2 (v -> tau only) leave a start that never reaches tau
    assert mix[:2] == [pg.NEVER_MIXES] * 2 and hit[:2] == [pg.NEVER_REACHES] * 2
    assert isinstance(mix[2], int) and mix[2] == r.multi_mixing
    assert hit[2] == pytest.approx(r.multi_hitting)
    assert [row["φ_min"] for row in rows] == [0.0, 0.0, pytest.approx(r.report.multi_minimax)]
    assert not any(isinstance(v, float) and v != v for row in rows for v in row.values())


def test_report_markdown_numbers_and_captions_both_tables():
    r = pg.compute(pg.from_preset("Example 3.8"))
    md = pg.report_markdown(r, name="ex-3-8", title="Example 3.8")
    assert md.count(":::{table}") == 2
    assert ":name: ex-3-8-nodes" in md and ":name: ex-3-8-summary" in md
    assert "Example 3.8: node fidelity" in md and "Example 3.8: minimax fidelity" in md
    assert pg.NEVER_MIXES in md and "nan" not in md.lower()
    phi = r.report.multi_minimax
    assert f"| combined | {phi:.4f} |" in md  # four decimals, no float-formatted counts
    assert f"= {r.report.amplification:+.4f}: the combination beats its best head." in md
    # Each head of Example 3.8 has no unique sink: the warnings come first, as an admonition.
    assert r.warnings and md.startswith(":::{warning}")
    assert all(w in md.split(":::", 2)[1] for w in r.warnings)
    r = pg.compute(pg.from_preset("Random feedforward", seed=7, n=6, heads=2, density=0.3))
    assert not r.warnings and "{warning}" not in pg.report_markdown(r, name="r", title="R")


def test_node_count_keeps_the_sink_last():
    """Example 3.13 on 4 nodes grown to 6: the sink keeps its edges (they follow it to node 5),
    the new nodes 3 and 4 pass to it, so every node still reaches the sink and the numbers
    stay meaningful (not 0, not "does not mix"); shrinking back restores the edges."""
    st = pg.from_preset("Example 3.13 (code)")
    before = [set(h) for h in st.heads]
    st.set_n(6)
    assert st.n == 6 and st.labels is None
    assert st.heads[0] == {(0, 1), (1, 2), (2, 5), (3, 5), (4, 5)}  # path u v w, then tau = 5
    assert st.heads[1] == {(0, 2), (1, 2), (1, 5), (2, 5), (3, 5), (4, 5)}
    r = pg.compute(st)
    assert r.report.multi_minimax > 0 and all(m is not None for m in r.head_mixing)
    assert not any("sink" in w for w in r.warnings)
    st.set_n(4)
    assert [set(h) for h in st.heads] == before
    st.set_n(3)  # node w (2) removed: edges into it go to the sink, now node 2
    assert st.heads[0] == {(0, 1), (1, 2)} and st.heads[1] == {(0, 2), (1, 2)}
    # one step at a time or all at once: the same graph
    a, b = pg.from_preset("Example 3.13 (code)"), pg.from_preset("Example 3.13 (code)")
    a.set_n(7)
    for n in (5, 6, 7):
        b.set_n(n)
    assert a.heads == b.heads
    a.set_n(2)
    assert a.heads == [{(0, 1)}, {(0, 1)}]


def test_the_playground_goes_through_absorbing(mixing_time_calls):
    """One Definition 2.7: the playground's mixing times are absorbing.mixing_times', one
    call per head and one for the combination, with its cap."""
    result = pg.compute(pg.from_preset("Example 3.13 (paper)"))
    assert len(mixing_time_calls) == len(result.head_mixing) + 1  # every head, the combination
    assert pg.MIX_CAP == absorbing.MIX_CAP
