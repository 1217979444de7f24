"""Chapter 12's causal checks: shipped fresh weights loaded and knocked out, and the per-head
tests keyed by head size and arm (bparallel.book.section4.graph_causal)."""

from __future__ import annotations

import pytest

from bparallel.book.section4 import graph_causal as fc
from bparallel.book.section4 import models as model_sets
from bparallel.book.verdicts import Verdict
from bparallel.transformer.design import PROFILES
from bparallel.transformer.runs import Run


@pytest.mark.usefixtures("one_torch_thread")
def test_shipped_weights_load_checked_and_their_layers_are_knocked_out(tmp_path):
    from bparallel.transformer.shipped import ship
    from bparallel.transformer.train import train

    tiny = PROFILES["fresh-tiny"]
    res = train(Run.in_arm("induction", 4, tiny, "width"),
                out_dir=tmp_path / "runs", progress=False)
    ship(res.checkpoint, tmp_path / "models" / "induction-fresh",
                             profile=tiny)
    runs = model_sets.fresh_runs(tmp_path / "models")
    models = model_sets.load_models(runs, tmp_path / "models")
    assert list(models) == [("induction", 4, 16, 42)]
    # a run another set already loaded (the same SHA-256) is not read again
    again = model_sets.load_models(runs, tmp_path / "models", have=(runs, models))
    assert again[("induction", 4, 16, 42)] is models[("induction", 4, 16, 42)]
    other = model_sets.FreshRuns([{**runs.entries[0], "sha256": "0" * 64}], profiles=
                                 {"induction": runs.profiles["induction"]})
    assert model_sets.load_models(runs, tmp_path / "models", have=(other, models))[
        ("induction", 4, 16, 42)] is not models[("induction", 4, 16, 42)]
    with pytest.raises(ValueError, match="have"):
        model_sets.load_models(runs, tmp_path / "models", have=models)
    measured = fc.measure_heads(models, num_sequences=4, reference_sequences=2,
                                cache_dir=None)
    m = measured[("induction", 4, 16, 42)]
    assert m.impact.shape == (4, 4, 4) and m.head_fidelity["paper"].shape == (4, 4)
    assert m.reliability.shape == (4,)
    rows = fc.layer_knockouts(runs, measured)
    # 4 x 16 is both arms' model: one row per arm, the same numbers
    assert [r["arm"] for r in rows] == ["fixed width", "fixed head size"]
    assert rows[0] | {"arm": ""} == rows[1] | {"arm": ""}
    assert {"intact (%)", "no attention (%)", "layer 1 removed (%)",
            "layer 4 removed (%)"} <= set(rows[0])
    entry = runs.entries[0]
    (tmp_path / "models" / "induction-fresh" / entry["file"]).write_bytes(b"not weights")
    with pytest.raises(ValueError, match="SHA-256"):
        model_sets.load_models(runs, tmp_path / "models")


def test_fresh_head_tests_key_by_head_size_and_arm_and_never_pool_tasks():
    """Per-head verdicts of the fresh-data models: models keyed (task, heads, head size,
    seed), so 8 heads of 8 and of 16 dimensions are two models, in two arms; one test per
    task, arm and mode (a model two arms share counts in both), Holm over them all; one
    verdict row per arm and one for the arms together, which fails when an arm fails."""
    import numpy as np

    from bparallel.transformer.measure import HeadStudy

    rng = np.random.default_rng(2)
    order = np.array([0.1, 0.9, 0.4, 0.6, 0.2, 0.8, 0.3, 0.7])

    def study(sign, heads=8):
        impact = order[None, :heads, None] + rng.normal(0, 0.02, (2, heads, 30))  # (L, H, N)
        fid = sign * impact.mean(-1)
        return HeadStudy(knockout={}, impact=impact, reliability=np.ones(2),
                         head_fidelity={"paper": fid, "definition": fid})

    measured = {("induction", 8, hs, s): study(+1) for hs in (8, 16) for s in (42, 43)}
    measured |= {("induction", 4, 16, s): study(+1, heads=4) for s in (42, 43)}  # two arms
    measured |= {("majority", 8, 8, s): study(-1) for s in (42, 43)}
    measured[("induction", 1, 64, 42)] = HeadStudy(knockout={})  # one head: no per-head study
    tests = fc.head_tests(measured)
    by = {(t["task"], t["arm"], t["ranking"]): t for t in tests}
    assert sorted({k[:2] for k in by}) == [("induction", "head16"), ("induction", "width"),
                                           ("majority", "width")]
    # 8 x 8 and 4 x 16 (2 seeds x 2 layers each) at fixed width; 8 x 16 and 4 x 16 with
    # the head size fixed: the shared model counts in both
    assert by[("induction", "width", "fidelity.definition")]["reliable_cells"] == 8
    assert by[("induction", "head16", "fidelity.definition")]["reliable_cells"] == 8
    assert by[("induction", "width", "fidelity.definition")]["median"] == 1.0
    assert by[("majority", "width", "fidelity.definition")]["median"] == -1.0
    assert all(t["p_holm"] >= t["p"] for t in tests)  # one family: every test corrected
    rows = fc.heads_rows(tests)
    assert [(r["arm"], r["verdict"]) for r in rows] == [
        ("fixed width", Verdict.FAILS), ("fixed head size", Verdict.HOLDS),
        ("all arms (fresh data)", Verdict.FAILS)]
    # majority's fidelity ranks the heads significantly backwards: a reversal fails, and
    # the arms together fail with it
    assert rows[0]["evidence"] == ("fresh-data models; induction: holds; majority: fails")
    assert rows[-1]["evidence"] == "fixed width: fails; fixed head size: holds"
    table = fc.head_table(tests)
    assert [(r["arm"], r["task"]) for r in table] == [
        ("fixed width", "induction"), ("fixed width", "majority"),
        ("fixed head size", "induction")]
    assert "Holm" in table[0]["as defined"] and "p < 0.001" in table[0]["as defined"]
    out = fc.head_results(tests)
    assert out["fresh.heads.width.induction.definition.median"] == 1.0
    assert out["fresh.heads.head16.induction.reliable_cells"] == 8
    assert out["verdict.heads.fresh.width.majority"] == list(Verdict).index(Verdict.FAILS)
    assert out["verdict.heads.fresh.head16"] == list(Verdict).index(Verdict.HOLDS)
    assert out["verdict.heads.fresh"] == list(Verdict).index(Verdict.FAILS)
    with pytest.raises(ValueError, match="must include 'task'"):
        from bparallel.book.section4.statistics import head_claims
        head_claims([], by=("arm",))
