"""bparallel.transformer.measure: Section 4's measures on a (small, random-init) model."""

import numpy as np
import pytest
import torch

from bparallel import proxies
from bparallel.transformer.measure import defined_metrics, measure_model
from bparallel.transformer.model import ModelConfig, Transformer
from bparallel.transformer.patterns import extract_patterns, head_weights, model_head_weights


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(3)
    model = Transformer(ModelConfig(n_heads=4, seq_len=12)).eval()
    x = torch.randint(0, 256, (5, 12))
    return model, x


def test_defined_metrics_equal_the_proxies_on_the_extracted_patterns(small):
    model, x = small
    m = defined_metrics(model, x, batch_size=2)  # batches of 2, 2, 1: concatenated in order
    pattern = extract_patterns(model, x)  # (L, N, H, T, T)
    w = model_head_weights(model)[:, None, :]  # (L, 1, H)
    L, N, T = 4, 5, 12
    assert m["worst_case.definition"].shape == (L, N) and m["hitting.exact"].shape == (L, N, T)
    for mode in ("paper", "definition"):
        np.testing.assert_allclose(m[f"worst_case.{mode}"],
                                   proxies.worst_case_mixing_time(pattern, w, mode=mode))
        np.testing.assert_allclose(m[f"mixing_time.{mode}"],
                                   proxies.mixing_time_proxy(pattern, w, mode=mode), rtol=1e-12)
    np.testing.assert_allclose(m["hitting.truncated"], proxies.mixing_time_proxy(
        pattern, w, mode="definition", reduce="none"), rtol=1e-12)
    np.testing.assert_allclose(m["fidelity.node"], proxies.node_fidelity_proxy(
        pattern, w, mode="definition").phi, rtol=1e-12)
    # Definition 2.7 is a worst case; the proxy a mean truncated at 100: never above it
    assert np.all(m["worst_case.definition"] >= np.floor(m["mixing_time.definition"]))


def test_defined_metrics_rollout_is_the_sinks_row(small):
    model, x = small
    m = defined_metrics(model, x)
    pattern = extract_patterns(model, x)  # (L, N, H, T, T)
    full = proxies.attention_rollout(pattern, model_head_weights(model))  # (L, N, T, T)
    np.testing.assert_allclose(m["rollout.weighted"], full[..., -1, :])
    np.testing.assert_allclose(m["rollout.weighted"].sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(m["rollout.uniform"].sum(-1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="inputs has shape"):
        defined_metrics(model, x[0])


# ---------------------------------------------------------------- head weights (Section 4.2)


def test_head_weights_split_columns_closed_form():
    # d_out = 2, d_in = 4, two heads of 2 columns: blocks [[3,0],[4,0]] (norm 5), [[1,0],[0,0]]
    # (norm 1) -> (5/6, 1/6). Splitting rows instead would give sqrt(10) and 4.
    W = np.array([[3.0, 0, 1, 0], [4.0, 0, 0, 0]])
    np.testing.assert_allclose(head_weights(W, 2), [5 / 6, 1 / 6])
    np.testing.assert_allclose(head_weights(W, 1), [1.0])
    # four heads of one column: norms 5, 0, 1, 0
    np.testing.assert_allclose(head_weights(W, 4), [5 / 6, 0, 1 / 6, 0])


def test_head_weights_batched_and_torch():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(4, 64, 64))
    w = head_weights(torch.tensor(W, dtype=torch.float32), 8)
    assert w.shape == (4, 8)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    blocks = W[1][:, 24:32]  # layer 1, head 3
    expected = np.linalg.norm(blocks) / sum(np.linalg.norm(W[1][:, 8 * h : 8 * h + 8])
                                            for h in range(8))
    np.testing.assert_allclose(w[1, 3], expected, rtol=1e-6)


def test_head_weights_validation():
    with pytest.raises(ValueError, match="num_heads=3 does not divide d_in=4"):
        head_weights(np.ones((2, 4)), 3)
    with pytest.raises(ValueError, match="all zero"):
        head_weights(np.zeros((2, 4)), 2)
    with pytest.raises(ValueError, match="num_heads=0"):
        head_weights(np.ones((2, 4)), 0)


def test_workers_return_freed_memory_to_the_system():
    """metrics_cache's workers (and an in-process computation) set glibc's mmap threshold so
    that an ablation study's freed tensors do not pile up (12 GB per worker otherwise)."""
    from bparallel.transformer import metrics_cache as mc

    mc.return_freed_memory()  # idempotent; a no-op where the C library is not glibc
    import inspect

    assert "return_freed_memory()" in inspect.getsource(mc._one_thread)


# ------------------------------------------------------------- one measuring pass
def small_copy_model():
    """A random-init 4-head copy model on 16 positions and 9 held-out sequences of copy (7
    measured, 2 reference; also tests/book/section4/test_measures.py's)."""
    from bparallel.transformer.data import heldout_dataset

    torch.manual_seed(1)
    model = Transformer(ModelConfig(n_heads=4, seq_len=16, vocab_size=32, n_layers=2)).eval()
    x = heldout_dataset("copy", 9, seed=3, seq_len=16, vocab_size=32).inputs  # 7 + 2 reference
    return model, x


def test_measure_model_validates_and_runs_each_batch_once(monkeypatch):
    """Every part at once: the model runs once per batch and each batch's pattern is
    validated once (the issue's count: 11 validations per batch before)."""
    from bparallel import _checks
    from bparallel.transformer import measure as measure_module

    model, x = small_copy_model()
    validations, runs = [], []
    real_check, real_extract = proxies.attention_pattern, measure_module.extract_patterns

    def check(*a, **k):
        validations.append(1)
        return real_check(*a, **k)

    def extract(*a, **k):
        runs.append(1)
        return real_extract(*a, **k)

    monkeypatch.setattr(proxies, "attention_pattern", check)
    monkeypatch.setattr(_checks, "attention_pattern", check)
    monkeypatch.setattr(measure_module, "extract_patterns", extract)
    out = measure_model(model, x, parts=("sequence", "defined", "heads"), task="copy",
                        reference_sequences=2, batch_size=3, max_steps=20, horizon=20)
    batches = 3  # 7 measured sequences in batches of 3
    assert len(runs) == batches and len(validations) == batches
    assert out.graphs["fidelity.node"].shape == (2, 7, 16)
    assert out.heads.impact.shape == (2, 4, 7)
    assert out.heads.head_fidelity["paper"].shape == (2, 4)


def test_measure_model_parts_together_equal_parts_apart():
    """One pass over every part gives each part's numbers (bitwise: per part, the same
    operations in the same order), and the head study's per-head fidelity is Algorithm 2 of
    each head alone, as ``importance.head_fidelity`` computes it (another route: ulps)."""
    from bparallel.transformer.importance import head_fidelity

    model, x = small_copy_model()
    opts = {"max_steps": 20, "horizon": 20, "batch_size": 4}
    both = measure_model(model, x, parts=("sequence", "defined", "heads"), task="copy",
                         reference_sequences=2, **opts)
    apart = {**measure_model(model, x[:-2], parts="sequence", **opts).flat(),
             **measure_model(model, x[:-2], parts="defined", **opts).flat(),
             **measure_model(model, x, parts="heads", task="copy", reference_sequences=2,
                             **opts).flat()}
    flat = both.flat()
    assert flat.keys() == apart.keys()
    for k in flat:
        np.testing.assert_array_equal(flat[k], apart[k], err_msg=k)
    fid = head_fidelity(model, x[:-2], horizon=20, batch_size=4)
    for mode in ("paper", "definition"):
        np.testing.assert_allclose(both.heads.head_fidelity[mode], fid[mode], rtol=1e-12)
        np.testing.assert_allclose(both.graphs[f"best_head.individual.{mode}"],
                                   fid[f"{mode}.per_sequence"].max(-1), rtol=1e-12)


def test_the_as_trained_part_is_evaluate_as_trained():
    """``"as_trained"``: evaluate_as_trained on the measured sequences, bitwise (the same
    call), alone or beside another part (whose numbers it leaves as they were); it needs the
    task and the draws, and draws= belongs to it alone."""
    from bparallel.transformer.as_trained import evaluate_as_trained
    from bparallel.transformer.data import SequenceDataset

    model, x = small_copy_model()
    want = evaluate_as_trained(model, SequenceDataset.of("copy", x), draws=2)
    got = measure_model(model, x, parts="as_trained", task="copy", draws=2).as_trained
    assert {k: float(v) for k, v in got.items()} == {
        "accuracy": want["accuracy_predictable"], "spread": want["spread"],
        "loss": want["loss_predictable"], "evaluated": want["evaluated"]}
    assert model.config.dropout > 0 and not model.training  # masks drawn, mode restored
    opts = {"max_steps": 20, "horizon": 20, "batch_size": 4}
    both = measure_model(model, x, parts=("sequence", "as_trained"), task="copy", draws=2,
                         **opts)
    alone = measure_model(model, x, parts="sequence", **opts)
    for k in alone.graphs:
        np.testing.assert_array_equal(both.graphs[k], alone.graphs[k], err_msg=k)
    assert {k: float(v) for k, v in both.as_trained.items()} == {
        k: float(v) for k, v in got.items()}
    with pytest.raises(ValueError, match="as-trained score needs task= and draws="):
        measure_model(model, x, parts="as_trained", draws=2)
    with pytest.raises(ValueError, match="as-trained score needs task= and draws="):
        measure_model(model, x, parts="as_trained", task="copy")
    with pytest.raises(ValueError, match="draws"):
        measure_model(model, x, parts="as_trained", task="copy", draws=0)
    with pytest.raises(ValueError, match="draws= belongs to the 'as_trained' part"):
        measure_model(model, x, parts="sequence", draws=2)


def test_measure_model_refuses_bad_requests():
    model, x = small_copy_model()
    with pytest.raises(ValueError, match="head studies need task= and reference_sequences="):
        measure_model(model, x, parts="heads")
    with pytest.raises(ValueError, match="belong to the 'heads' and 'ablation' parts"):
        measure_model(model, x, parts="sequence", reference_sequences=2)
    with pytest.raises(ValueError, match=r"\['seed'\] are options of the 'ablation' part"):
        measure_model(model, x, parts="heads", task="copy", reference_sequences=2, seed=0)
    with pytest.raises(ValueError, match="reference_sequences=9: inputs hold only 9"):
        measure_model(model, x, parts="heads", task="copy", reference_sequences=9)
    with pytest.raises(ValueError, match=r"inputs has shape \(9,\)"):
        measure_model(model, x[:, 0], parts="sequence")


def test_model_measures_flat_names_do_not_collide_and_round_trip(tmp_path):
    """The typed result's one flat layout (what the metrics cache stores): a prefix per
    part, so the combination's ``"fidelity.paper"`` and each head's
    ``"heads/head_fidelity/paper"`` are two names; :meth:`from_flat` gives back every array
    bitwise, and a cached result equals the computed one."""
    from bparallel.transformer.measure import HeadStudy, ModelMeasures
    from bparallel.transformer.metrics_cache import cached_metrics

    model, x = small_copy_model()
    opts = {"max_steps": 20, "horizon": 20, "batch_size": 4}
    m = measure_model(model, x, parts=("sequence", "heads"), task="copy",
                      reference_sequences=2, **opts)
    assert isinstance(m, ModelMeasures) and isinstance(m.heads, HeadStudy)
    assert m.study is None and m.as_trained is None
    flat = m.flat()
    assert "fidelity.paper" in flat and "heads/head_fidelity/paper" in flat
    assert not any(k.startswith("fidelity/") for k in flat)
    back = ModelMeasures.from_flat(flat)
    assert back.flat().keys() == flat.keys()
    for k, v in back.flat().items():
        np.testing.assert_array_equal(v, flat[k], err_msg=k)
    for cache in (None, tmp_path, tmp_path):  # computed, written, then read back
        got = cached_metrics(("sequence", "heads"), model, x, cache_dir=cache, task="copy",
                             reference_sequences=2, **opts)
        assert got.flat().keys() == flat.keys()
        for k, v in got.flat().items():
            np.testing.assert_array_equal(v, flat[k], err_msg=k)
    with pytest.raises(ValueError, match=r"unknown parts \['other'\]"):
        ModelMeasures.from_flat({**flat, "other/x": np.zeros(1)})
