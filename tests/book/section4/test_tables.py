"""Section 4 tables (bparallel.book.section4.tables, published, metrics_cache; Figure 4), small
models."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch

from bparallel import proxies as px
from bparallel._io import write_csv, write_json
from bparallel.book.render.plotting import plot_figure4
from bparallel.book.section4.published import (
    PUBLISHED_TABLES,
    amplification_agreement,
    largest_differences,
    published_agreement,
    published_rows,
    spearman,
)
from bparallel.book.section4.tables import evaluate_models, flat_results
from bparallel.transformer import metrics_cache
from bparallel.transformer.data import (
    ShuffledLoader,
    heldout_dataset,
    make_dataset,
    paper_protocol_sequences,
)
from bparallel.transformer.design import evaluation_inputs, model_config
from bparallel.transformer.measure import sequence_metrics
from bparallel.transformer.metrics_cache import (
    cached_metrics_many,
    cached_sequence_metrics,
    default_workers,
    metrics_key,
)
from bparallel.transformer.model import ModelConfig, Transformer
from bparallel.transformer.patterns import head_weights
from bparallel.transformer.shipped import load_run_models

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _tiny_models(heads=(1, 4)):
    models = {}
    for i, (task, h) in enumerate((t, h) for t in ("copy", "cycle") for h in heads):
        torch.manual_seed(i)
        models[(task, h)] = Transformer(model_config("tiny", h)).eval()
    return models


def test_published_tables_spot_values():
    t = PUBLISHED_TABLES
    assert t[1]["mean"][1] == (3.8344, 77.9281, 78.6635, 73.5020)
    assert t[2]["std"][16][3] == 1.9165
    assert t[3]["mean"][16] == (0.58, 0.49, 0.34, 0.25)
    assert t[4]["mean"][8][1] == 0.63
    assert t[5]["individual"][8] == (0.59, 0.29, 0.18, 0.18)
    assert t[6]["combined"][16] == (0.67, 0.55, 0.48, 0.00)
    rows = published_rows()
    assert len(rows) == 4 * 4 * 4 + 2 * 3 * 4
    assert {"table": 2, "quantity": "mixing_time", "task": "cycle", "heads": 4, "layer": 3,
            "mean": 45.7709, "std": 1.9865} in rows


def test_evaluation_inputs_protocols():
    x = evaluation_inputs("cycle", "paper", "tiny", seed=42)
    ds = make_dataset("cycle", 40, seed=42, seq_len=16)
    loader = ShuffledLoader(ds, 10, seed=42)
    assert torch.equal(x, paper_protocol_sequences(loader, epoch=2).inputs)  # tiny: 2 epochs
    assert x.shape == (4, 16)  # 40 sequences in batches of 10: only 4 batches
    y = evaluation_inputs("copy", "heldout", "tiny", seed=42, num_sequences=7)
    assert torch.equal(y, heldout_dataset("copy", 7, seed=42, seq_len=16).inputs)
    with pytest.raises(ValueError, match=r"protocol='train'.*'heldout'"):
        evaluation_inputs("copy", "train", "tiny")


def test_sequence_metrics_match_direct_proxies():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=4, seq_len=12)).eval()
    x = torch.randint(0, 256, (5, 12))
    m = sequence_metrics(model, x, max_steps=40, horizon=30, batch_size=2)
    with torch.no_grad():
        _, pattern = model(x, return_attention=True)  # (L, B, H, T, T)
    w = head_weights(torch.stack([b.attn.out.weight for b in model.blocks]), 4)[:, None]
    for mode in px.MODES:
        np.testing.assert_allclose(m[f"mixing_time.{mode}"],
                                   px.mixing_time_proxy(pattern, w, mode=mode, max_steps=40))
        np.testing.assert_allclose(m[f"fidelity.{mode}"],
                                   px.minimax_fidelity_proxy(pattern, w, mode=mode, horizon=30))
        best = px.best_head_vs_combined(pattern, w, mode=mode, horizon=30)
        np.testing.assert_allclose(m[f"best_head.individual.{mode}"], best["individual"])
        assert f"best_head.combined.{mode}" not in m  # merged: the combination is fidelity.<mode>
        # batches of 2 against one batch of 5: the argmax is compared where the best head
        # is clear (the first two far more than float32 rounding apart), not at near-ties
        ranked = np.sort(best["per_head"], -1)
        clear = ranked[..., -1] - ranked[..., -2] > 1e-2
        assert clear.any()
        np.testing.assert_array_equal(m[f"best_head.head.{mode}"][clear],
                                      best["best_head"][clear])
    assert m["mixing_time.paper"].shape == (4, 5)


def test_evaluate_models_tables():
    models = _tiny_models()
    out = evaluate_models(models, profile="tiny", protocols=("paper", "heldout"),
                             num_sequences=3, max_steps=20, horizon=20)
    t14 = out["tables_1_4"]
    # 2 protocols x 2 quantities x 2 modes x 4 models x 4 layers
    assert len(t14) == 2 * 2 * 2 * 4 * 4
    row = next(r for r in t14 if r["protocol"] == "heldout" and r["task"] == "cycle"
               and r["heads"] == 4 and r["quantity"] == "fidelity" and r["mode"] == "paper"
               and r["layer"] == 2)
    assert row["table"] == 4 and row["n"] == 3
    x = evaluation_inputs("cycle", "heldout", "tiny", num_sequences=3)
    direct = sequence_metrics(models[("cycle", 4)], x, max_steps=20, horizon=20)
    vals = direct["fidelity.paper"][1]
    assert row["mean"] == pytest.approx(vals.mean()) and row["std"] == pytest.approx(vals.std())
    t56 = out["tables_5_6"]
    assert {r["heads"] for r in t56} == {4}  # single-head models have no Tables 5-6 row
    fresh = [r for r in t56 if r["sample"] == "fresh"]
    assert len(fresh) == 2 * 2 * 4 and all(r["n"] == 1 and "best_head" in r for r in fresh)
    assert all(0 <= r["best_head"] < 4 for r in fresh)
    means = [r for r in t56 if r["sample"] == "mean"]
    assert all(0.0 <= r["combined_exceeds_fraction"] <= 1.0 for r in means)


def _counted_metrics(monkeypatch, delay=0.0):
    """A small model and inputs, with the cache's computation (``measure_model``) counting
    (and delaying) calls; ``real`` is ``sequence_metrics``, the direct route."""
    import time

    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=4, seq_len=12)).eval()
    x = torch.randint(0, 256, (3, 12))
    calls = []
    real = sequence_metrics
    measure = metrics_cache.measure_model

    def counting(*args, **kw):
        calls.append(1)
        time.sleep(delay)
        return measure(*args, **kw)

    monkeypatch.setattr(metrics_cache, "measure_model", counting)
    return model, x, calls, real, counting


def test_metrics_cache_hits_misses_and_recovers(tmp_path, monkeypatch):
    model, x, calls, real, counting = _counted_metrics(monkeypatch)
    direct = real(model, x, max_steps=20, horizon=20)
    first = cached_sequence_metrics(model, x, cache_dir=tmp_path, max_steps=20, horizon=20)
    again = cached_sequence_metrics(model, x, cache_dir=tmp_path, max_steps=20, horizon=20)
    assert len(calls) == 1 and len(list(tmp_path.glob("metrics-*.npz"))) == 1
    for m in (first, again):
        assert m.keys() == direct.keys()
        for k in direct:  # bitwise: the same call (same operations, same order), then a file
            np.testing.assert_array_equal(m[k], direct[k])
    # Anything that changes the result changes the key: options, inputs, weights.
    key = metrics_key(model, x, max_steps=20, horizon=20)
    assert metrics_key(model, x, max_steps=20, horizon=21) != key
    assert metrics_key(model, x[:2], max_steps=20, horizon=20) != key
    y = x.clone()
    y[0, 0] = (y[0, 0] + 1) % 256
    assert metrics_key(model, y, max_steps=20, horizon=20) != key
    with torch.no_grad():
        model.blocks[0].attn.out.weight[0, 0] += 1e-3
    assert metrics_key(model, x, max_steps=20, horizon=20) != key
    with torch.no_grad():
        model.blocks[0].attn.out.weight[0, 0] -= 1e-3
    assert metrics_key(model, x, max_steps=20, horizon=20) == key
    # So does the package's own source.
    monkeypatch.setattr(metrics_cache, "_package_fingerprint", lambda: "other code")
    assert metrics_key(model, x, max_steps=20, horizon=20) != key
    monkeypatch.undo()
    monkeypatch.setattr(metrics_cache, "measure_model", counting)
    # A corrupted file is computed again (with a warning) and replaced.
    (path,) = tmp_path.glob("metrics-*.npz")
    path.write_bytes(path.read_bytes()[:50])
    with pytest.warns(UserWarning, match="unreadable metrics cache"):
        healed = cached_sequence_metrics(model, x, cache_dir=tmp_path, max_steps=20,
                                            horizon=20)
    assert len(calls) == 2
    # bitwise: recomputed by the same call, same operations in the same order
    np.testing.assert_array_equal(healed["fidelity.paper"], direct["fidelity.paper"])
    cached_sequence_metrics(model, x, cache_dir=tmp_path, max_steps=20, horizon=20)
    assert len(calls) == 2
    # No cache directory: always computed, nothing written.
    cached_sequence_metrics(model, x, cache_dir=None, max_steps=20, horizon=20)
    assert len(calls) == 3 and len(list(tmp_path.glob("metrics-*.npz"))) == 1


def test_concurrent_callers_compute_a_key_once(tmp_path, monkeypatch):
    import threading

    # 0.3 s: long enough for the other thread to arrive while the first one computes
    model, x, calls, _, _ = _counted_metrics(monkeypatch, delay=0.3)
    got = []
    threads = [threading.Thread(target=lambda: got.append(cached_sequence_metrics(
        model, x, cache_dir=tmp_path, max_steps=10, horizon=10))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 2
    # bitwise: one computed, the other read back from its file
    np.testing.assert_array_equal(got[0]["fidelity.paper"], got[1]["fidelity.paper"])


def test_cached_metrics_many_in_worker_processes_equals_one_by_one(tmp_path, monkeypatch):
    models = _tiny_models()
    jobs = [(m, evaluation_inputs(task, "heldout", "tiny", num_sequences=3),
             {"max_steps": 15, "horizon": 15}) for (task, _), m in sorted(models.items())]
    serial = [sequence_metrics(m, x, **o) for m, x, o in jobs]
    # Two worker processes (spawned, one thread each) fill the cache, one file per job.
    parallel = cached_metrics_many("sequence", jobs, cache_dir=tmp_path, workers=2)
    assert len(list(tmp_path.glob("metrics-*.npz"))) == len(jobs)
    for got, want in zip(parallel, serial, strict=True):
        assert got.graphs.keys() == want.keys()
        for k in want:  # the order of the jobs is kept; only float32 rounding may differ
            np.testing.assert_allclose(got.graphs[k], want[k], rtol=1e-5, atol=1e-6)
    # Warm: every result is read here, no worker started and nothing computed.
    monkeypatch.setattr(metrics_cache, "_pool", lambda n: pytest.fail("pool started"))
    monkeypatch.setattr(metrics_cache, "measure_model", lambda *a, **k: pytest.fail("ran"))
    again = cached_metrics_many("sequence", jobs, cache_dir=tmp_path, workers=2)
    for got, want in zip(again, parallel, strict=True):
        for k in want.graphs:  # bitwise: read back from the files the workers wrote
            np.testing.assert_array_equal(got.graphs[k], want.graphs[k])
    monkeypatch.undo()
    # One worker: computed here, in order, as cached_metrics would.
    here = cached_metrics_many("sequence", jobs[:2], cache_dir=None, workers=1)
    for got, want in zip(here, serial[:2], strict=True):
        # bitwise: the same call in this process (same operations, same order)
        np.testing.assert_array_equal(got.graphs["fidelity.paper"], want["fidelity.paper"])


def test_recorded_results_are_read_never_written_and_tracked(tmp_path, monkeypatch):
    """A folder of recorded results (models/recorded/) is read after the cache and never
    written; tracked_files names every result looked up, and lookup_only refuses to compute."""
    models = _tiny_models(heads=(1,))
    jobs = [(m, evaluation_inputs(task, "heldout", "tiny", num_sequences=2),
             {"max_steps": 10, "horizon": 10}) for (task, _), m in sorted(models.items())]
    recorded, cache = tmp_path / "recorded", tmp_path / "cache"
    with metrics_cache.tracked_files() as names:
        first = cached_metrics_many("sequence", jobs, cache_dir=recorded, workers=1)
    assert names == {p.name for p in recorded.glob("metrics-*.npz")} and len(names) == 2
    # recorded only: read, nothing computed, nothing written to the recorded folder or cache
    monkeypatch.setattr(metrics_cache, "measure_model", lambda *a, **k: pytest.fail("ran"))
    before = sorted(p.name for p in recorded.iterdir())
    got = cached_metrics_many("sequence", jobs, cache_dir=cache, recorded=recorded, workers=1)
    for a, b in zip(got, first, strict=True):
        np.testing.assert_array_equal(a.graphs["fidelity.paper"], b.graphs["fidelity.paper"])
    assert sorted(p.name for p in recorded.iterdir()) == before
    assert not cache.exists() or not list(cache.glob("*.npz"))
    # one result missing: lookup_only names it instead of computing it
    missing = sorted(names)[0]
    (recorded / missing).unlink()
    with metrics_cache.tracked_files(lookup_only=True) as looked:
        with pytest.raises(metrics_cache.NotCached, match="1 result") as err:
            cached_metrics_many("sequence", jobs, cache_dir=None, recorded=recorded)
    assert err.value.names == [missing] and looked == names


def test_cached_metrics_many_refuses_bad_input(monkeypatch):
    with pytest.raises(ValueError, match="workers=0"):
        cached_metrics_many("sequence", [], cache_dir=None, workers=0)
    with pytest.raises(ValueError, match="parts='bogus'"):
        cached_metrics_many("bogus", [], cache_dir=None)
    with pytest.raises(ValueError, match="'heads' is the light version of 'ablation'"):
        cached_metrics_many(("heads", "ablation"), [], cache_dir=None)
    with pytest.raises(ValueError, match="parts is empty"):
        cached_metrics_many((), [], cache_dir=None)
    monkeypatch.setenv("BPARALLEL_WORKERS", "3")
    assert default_workers() == 3
    monkeypatch.setenv("BPARALLEL_WORKERS", "many")
    with pytest.raises(ValueError, match="BPARALLEL_WORKERS='many'"):
        default_workers()
    monkeypatch.delenv("BPARALLEL_WORKERS")
    assert default_workers() >= 1


def test_evaluate_models_with_a_cache_equals_without(tmp_path):
    models = _tiny_models(heads=(4,))
    kw = dict(profile="tiny", protocols=("paper", "heldout"), num_sequences=3, max_steps=20,
              horizon=20)
    plain = evaluate_models(models, workers=1, **kw)
    assert evaluate_models(models, cache_dir=tmp_path, workers=1, **kw) == plain
    assert len(list(tmp_path.glob("metrics-*.npz"))) == 2 * 2  # protocols x models
    assert evaluate_models(models, cache_dir=tmp_path, **kw) == plain


def test_writers_round_trip(tmp_path):
    rows = [{"table": 1, "mean": 0.5, "std": 0.25}, {"table": 2, "mean": 1.5, "extra": "x"}]
    write_csv(rows, tmp_path / "t.csv")
    with open(tmp_path / "t.csv") as fh:
        back = list(csv.DictReader(fh))
    assert back[0] == {"table": "1", "mean": "0.5", "std": "0.25", "extra": ""}
    assert back[1]["extra"] == "x"
    write_json({"a": np.float64(0.125), "b": np.arange(3)}, tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text()) == {"a": 0.125, "b": [0, 1, 2]}
    flat = flat_results({"tables_1_4": [{"table": 3, "protocol": "paper", "mode": "paper",
                                            "task": "copy", "heads": 4, "layer": 2,
                                            "mean": 0.3, "std": 0.1}]})
    assert flat == {"table3.paper.paper.copy.h4.L2.mean": 0.3,
                    "table3.paper.paper.copy.h4.L2.std": 0.1}
    assert list(tmp_path.iterdir()).__len__() == 2  # no temporary files left


def test_plot_figure4_smoke(tmp_path):
    fig = plot_figure4(published_rows(), tmp_path / "fig.png")
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes) == 4
    # the (a) panel carries one line per head count with the published means
    lines = fig.axes[0].get_lines()
    ys = sorted(tuple(np.round(line.get_ydata(), 4)) for line in lines if len(line.get_ydata()))
    assert (3.8344, 77.9281, 78.6635, 73.502) in ys
    with pytest.raises(ValueError, match="no Tables 1-4 rows"):
        plot_figure4([], tmp_path / "none.png")


def test_load_run_models_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="copy-h01"):
        load_run_models(tmp_path, tasks=["copy"], heads=[1])


def test_spearman_against_hand_values():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ranks (1, 2, 3) vs (1, 3, 2): 1 - 6 * 2 / (3 * 8) = 0.5
    assert spearman([0.1, 0.5, 0.9], [1, 9, 5]) == pytest.approx(0.5)
    # ties take their average rank: x ranks (1.5, 1.5, 3), y ranks (1, 2, 3)
    rx, ry = np.array([1.5, 1.5, 3]), np.array([1, 2, 3.0])
    assert spearman([2, 2, 7], [1, 2, 3]) == pytest.approx(np.corrcoef(rx, ry)[0, 1])
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="one length"):
        spearman([1, 2], [1, 2, 3])


def _published_as_ours(transform):
    rows = []
    for r in published_rows():
        if r["quantity"] in ("mixing_time", "fidelity"):
            rows.append({**r, "protocol": "paper", "mode": "paper",
                         "mean": transform(r["quantity"], r["heads"], r["mean"])})
    return rows


def test_published_agreement():
    same = published_agreement(_published_as_ours(lambda q, h, m: 2 * m))
    for quantity in ("mixing_time", "fidelity"):
        assert same[quantity]["cells"] == 32  # 2 tasks x 4 head counts x 4 layers
        assert same[quantity]["spearman"] == pytest.approx(1.0)
        means = [r["mean"] for r in published_rows() if r["quantity"] == quantity]
        assert same[quantity]["median_abs_difference"] == pytest.approx(np.median(np.abs(means)))
        assert same[quantity]["trend_agreement"] == 1.0
    # reverse the head order of every cell: the 1-vs-16-head trend flips everywhere
    pub = {(r["quantity"], r["task"], r["heads"], r["layer"]): r["mean"]
           for r in published_rows() if "mean" in r}
    flip = {1: 16, 4: 8, 8: 4, 16: 1}
    rows = [{**r, "mean": pub[(r["quantity"], r["task"], flip[r["heads"]], r["layer"])]}
            for r in _published_as_ours(lambda q, h, m: m)]
    rev = published_agreement(rows)
    assert rev["mixing_time"]["trend_agreement"] == 0.0
    with pytest.raises(ValueError, match="no Tables 1-4 rows"):
        published_agreement(rows, mode="definition")


def test_largest_differences_orders_cells_by_absolute_difference():
    bump = {("copy", 4, 2): 5.0, ("cycle", 16, 3): -7.5, ("copy", 1, 1): 0.25}
    rows = [{**r, "mean": r["mean"] + bump.get((r["task"], r["heads"], r["layer"]), 0.0)}
            for r in _published_as_ours(lambda q, h, m: m)]
    top = largest_differences(rows, quantity="mixing_time", n=3)
    assert [(d["task"], d["heads"], d["layer"]) for d in top] == [
        ("cycle", 16, 3), ("copy", 4, 2), ("copy", 1, 1)]
    assert top[0]["difference"] == pytest.approx(-7.5)
    assert top[0]["ours"] == pytest.approx(top[0]["published"] - 7.5)
    assert top[1]["published_std"] == pytest.approx(0.0365)  # Table 1, 4 heads, layer 2
    assert len(largest_differences(rows, quantity="fidelity", n=100)) == 32
    with pytest.raises(ValueError, match="valid quantities"):
        largest_differences(rows, quantity="speed")
    with pytest.raises(ValueError, match="no fidelity rows"):
        largest_differences(rows, quantity="fidelity", mode="definition")
    with pytest.raises(ValueError, match="at least 1"):
        largest_differences(rows, quantity="fidelity", n=0)


def _published_5_6_as_ours(transform=lambda ind, comb: (ind, comb)):
    rows = []
    for r in published_rows():
        if r["quantity"] == "best_head":
            ind, comb = transform(r["individual"], r["combined"])
            rows.append({"table": r["table"], "task": r["task"], "heads": r["heads"],
                         "layer": r["layer"], "sample": "fresh", "protocol": "fresh",
                         "mode": "paper", "individual": ind, "combined": comb})
    return rows


def test_amplification_agreement_against_the_published_tables():
    # Published Tables 5-6 by hand: the combination beats the best head in 11 of 24 cells
    # (4 in Table 5, 7 in Table 6), ties in 6 (0.00/0.00 five times, 0.59/0.59 once), loses
    # in 7.
    same = amplification_agreement(_published_5_6_as_ours())
    assert same["cells"] == 24
    assert same["published_wins"] == same["ours_wins"] == 11
    assert same["verdict_agreement"] == 1.0
    assert same["spearman_combined"] == pytest.approx(1.0)
    # swapping the columns turns every win into a loss and keeps the ties
    swapped = amplification_agreement(_published_5_6_as_ours(lambda i, c: (c, i)))
    assert swapped["ours_wins"] == 7
    assert swapped["verdict_agreement"] == pytest.approx(6 / 24)
    # differences below the published precision are ties
    tiny = amplification_agreement(_published_5_6_as_ours(lambda i, c: (i, i + 0.004)))
    assert tiny["ours_wins"] == 0
    with pytest.raises(ValueError, match="no Tables 5-6 rows"):
        amplification_agreement(_published_5_6_as_ours(), mode="definition")


def test_cached_metrics_of_another_measure_is_keyed_apart(tmp_path):
    from bparallel.transformer.measure import defined_metrics
    from bparallel.transformer.metrics_cache import cached_metrics

    torch.manual_seed(1)
    model = Transformer(ModelConfig(n_heads=2, seq_len=10)).eval()
    x = torch.randint(0, 256, (2, 10))
    first = cached_metrics("defined", model, x, cache_dir=tmp_path, max_steps=20)
    assert len(list(tmp_path.glob("metrics-*.npz"))) == 1
    again = cached_metrics("defined", model, x, cache_dir=tmp_path, max_steps=20)
    direct = defined_metrics(model, x, max_steps=20)
    for k in direct:  # bitwise: the same call (same operations, same order), then a file
        np.testing.assert_array_equal(first.graphs[k], direct[k])
        np.testing.assert_array_equal(again.graphs[k], direct[k])
    cached_metrics("sequence", model, x, cache_dir=tmp_path, max_steps=20, horizon=20)
    assert len(list(tmp_path.glob("metrics-*.npz"))) == 2  # another measure, another key
    with pytest.raises(ValueError, match="parts="):
        cached_metrics("rollout", model, x, cache_dir=tmp_path)


def test_ablation_measure_round_trips_through_the_cache(tmp_path):
    from bparallel.transformer.metrics_cache import cached_metrics

    torch.manual_seed(2)
    model = Transformer(ModelConfig(n_heads=2, seq_len=10)).eval()
    x = torch.randint(0, 256, (6, 10))  # 4 measured sequences, then 2 for the head means
    opts = dict(task="cycle", horizon=10, reference_sequences=2, num_random=2, seed=0)
    first = cached_metrics("ablation", model, x, cache_dir=tmp_path, **opts)
    assert len(list(tmp_path.glob("metrics-*.npz"))) == 1
    again = cached_metrics("ablation", model, x, cache_dir=tmp_path, **opts)
    assert first.flat().keys() == again.flat().keys()
    for k, v in first.flat().items():  # bitwise: a cache round trip
        np.testing.assert_array_equal(v, again.flat()[k])
    study = again.study
    L = model.config.n_layers
    assert study.scores["mean.margin"].shape == (L, 2)
    assert study.effect["mean.margin"].shape == (L, 2, 4)  # (L, H, measured sequences)
    assert study.pruning["random"]["accuracy_predictable"].shape == (2, 3)  # 0..2 kept
    assert {"weight~mean", "gradient~zero", "fidelity.definition~mean"} <= set(study.spearman)
    with pytest.raises(ValueError, match="reference_sequences=6"):
        cached_metrics("ablation", model, x, cache_dir=None, **{**opts, "reference_sequences": 6})


def test_layer_means_of_rows_and_of_a_dataframe():
    import pandas as pd

    from bparallel.book.section4.published import layer_means

    pub = published_rows()
    np.testing.assert_allclose(layer_means(pub, 1, 1), [3.8344, 77.9281, 78.6635, 73.5020])
    np.testing.assert_allclose(layer_means(pd.DataFrame(pub), 4, 16), [0.65, 0.60, 0.52, 0.0])
    with pytest.raises(ValueError, match="0 layers found"):
        layer_means(pub, 1, 2)


def test_the_cache_fingerprint_covers_the_code_the_measures_run():
    """Every bparallel module that the cached measures import (in a fresh interpreter) is
    one whose source the cache key hashes; the book layer's other modules are not, so
    editing a chapter table or the rendering keeps the cache."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, bparallel.transformer.metrics_cache as mc, "
            "bparallel.transformer.importance;"
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items() "
            "if n.startswith('bparallel') and getattr(m, '__file__', None)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    root = Path(metrics_cache.__file__).resolve().parents[1]
    hashed = set(metrics_cache._measured_sources(root))
    loaded = {Path(f).resolve() for f in out} - {root / "book" / "__init__.py"}
    assert loaded <= hashed, sorted(str(f) for f in loaded - hashed)
    assert not any(f.is_relative_to(root / "book") for f in hashed)  # no book tooling


def test_fingerprint_follows_the_measures_imports(tmp_path):
    """The cache's fingerprint covers the measures, the cache and every module they import
    (top level, inside functions, ``from .. import``, ``import bparallel.x``, package
    ``__init__`` files), and nothing else."""
    from pathlib import Path

    from bparallel.transformer.metrics_cache import _measured_sources

    files = {
        "__init__.py": "",
        "proxies.py": "from . import absorbing\n",
        "absorbing.py": "from .graphs import reaches\n",
        "graphs.py": "import numpy as np\n",
        "markov.py": "from . import absorbing\n",  # imports a measured module: not measured
        "examples.py": "",
        "book/__init__.py": "",
        "book/chapter.py": "from ..transformer.measure import measure_model\n",
        "transformer/__init__.py": "",
        "transformer/measure.py": "from .. import proxies\n\ndef f():\n"
                                  "    from .importance import study\n",
        "transformer/importance.py": "import bparallel.examples\n",
        "transformer/metrics_cache.py": "from .measure import f\n",
        "transformer/train.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    got = {p.relative_to(tmp_path).as_posix() for p in _measured_sources(tmp_path)}
    assert got == {"__init__.py", "proxies.py", "absorbing.py", "graphs.py", "examples.py",
                   "transformer/__init__.py", "transformer/measure.py",
                   "transformer/importance.py", "transformer/metrics_cache.py"}
    real = Path(metrics_cache.__file__).resolve().parents[1]
    measured = {p.relative_to(real).as_posix() for p in _measured_sources(real)}
    assert {"proxies.py", "absorbing.py", "fidelity.py", "transformer/measure.py",
            "transformer/importance.py"} <= measured
    assert not {m for m in measured if m.startswith("book/")}


def test_editing_training_or_shipping_code_keeps_the_cache_and_editing_a_measure_drops_it(
        tmp_path, monkeypatch):
    """The fingerprint covers the measuring code only: a copy of the package whose training
    loop, fresh-data training, learning rule, checkpoints, shipping or sweep code is edited
    has the real fingerprint; one whose measure is edited has another."""
    import shutil
    from pathlib import Path

    real = Path(metrics_cache.__file__).resolve().parents[1]

    def fingerprint(edit: str | None) -> str:
        root = tmp_path / (edit or "none").replace("/", "_") / "bparallel"
        shutil.copytree(real, root, ignore=shutil.ignore_patterns("__pycache__"))
        if edit:
            with open(root / edit, "a", encoding="utf-8") as f:
                f.write("\nEDITED = 1\n")
        fake = root / "transformer" / "metrics_cache.py"
        monkeypatch.setattr(metrics_cache, "__file__", str(fake))
        metrics_cache._package_fingerprint.cache_clear()
        try:
            return metrics_cache._package_fingerprint()
        finally:
            metrics_cache._package_fingerprint.cache_clear()

    monkeypatch.undo()
    base = fingerprint(None)
    for kept in ("transformer/train.py", "transformer/design.py",
                 "transformer/learning.py", "transformer/checkpoints.py",
                 "transformer/shipped.py", "transformer/runtime.py", "transformer/sweep.py",
                 "transformer/sweep_status.py", "transformer/runs.py", "transformer/arms.py"):
        assert fingerprint(kept) == base, kept
    for dropped in ("transformer/measure.py", "transformer/importance.py", "proxies.py"):
        assert fingerprint(dropped) != base, dropped


def test_the_fingerprint_reads_code_not_docstrings_comments_or_layout():
    """A docstring, a comment or a reflowed line leaves the measuring code's fingerprint
    (so the cache and the recorded measures) as it was; a change to the code does not."""
    from bparallel.transformer.metrics_cache import code_of

    base = ('"""A module."""\nimport math\n\n\ndef f(x):\n    """Twice x."""\n'
            '    return 2 * x  # doubled\n\n\nclass C:\n    """Only a docstring."""\n')
    same = ('"""The module, reworded."""\nimport math\n\ndef f(x):\n    # a comment\n'
            '    return (2 *\n            x)\n\n\nclass C:\n    "Reworded."\n')
    other = base.replace("2 * x", "3 * x")
    assert code_of(base) == code_of(same)
    assert code_of(base) != code_of(other)
    assert code_of(base) != code_of(base.replace("import math", "import cmath"))
    with pytest.raises(SyntaxError):
        code_of("def f(:\n")


def test_the_cache_key_and_the_record_read_one_measured_code():
    """metrics_cache.measured_code is the one reading of the measuring code: its modules are
    the measured sources, the cache's fingerprint hashes exactly it, and the record's
    per-module hashes (models/recorded/code.json) are hashes of the same code."""
    import hashlib
    from pathlib import Path

    from bparallel.book.tools import record
    from bparallel.transformer import measure

    root = Path(metrics_cache.__file__).resolve().parents[1]
    code = metrics_cache.measured_code()
    assert list(code) == [p.relative_to(root).as_posix()
                          for p in metrics_cache._measured_sources(root)]
    h = hashlib.sha256()
    for name, text in code.items():
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    assert metrics_cache._package_fingerprint() == h.hexdigest()
    assert record.measured_code() == {n: hashlib.sha256(t.encode()).hexdigest()
                                      for n, t in code.items()}
    first_line = measure.measure_model.__doc__.strip().splitlines()[0][:30]
    assert first_line in Path(measure.__file__).read_text()
    assert first_line not in code["transformer/measure.py"]  # a docstring is not code
