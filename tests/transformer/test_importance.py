"""Head importance, knockouts and the noise floor (bparallel.transformer.importance)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy import stats

from bparallel import proxies
from bparallel.transformer import ablation as ab
from bparallel.transformer import importance as im
from bparallel.transformer.patterns import extract_patterns, model_head_weights
from tests.transformer.tiny import D, H, L, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_head_effects_are_the_single_removals(model, dataset):
    eff = im.head_effects(model, dataset, removal="zero", batch_size=7)
    assert eff["effect"]["margin"].shape == (L, H, len(dataset))
    for layer, head in [(0, 2), (3, 1)]:
        mask = torch.ones(L, H)
        mask[layer, head] = 0
        one = ab.evaluate_ablation(model, dataset, mask, batch_size=7, per_sequence=True)
        base = ab.evaluate_ablation(model, dataset, torch.ones(L, H), batch_size=7,
                                    per_sequence=True)
        after, before = im.sequence_means(one["per_sequence"]), im.sequence_means(
            base["per_sequence"])
        # bitwise: evaluate_ablation runs each mask on its own over the same batches, so
        # head_effects does the same operations in the same order as these single calls
        np.testing.assert_array_equal(eff["effect"]["margin"][layer, head],
                                      before["margin"] - after["margin"])
        np.testing.assert_array_equal(eff["effect"]["kl"][layer, head], after["kl"])
    assert (eff["effect"]["kl"] >= 0).all()


def test_a_silent_head_has_no_effect_under_either_removal(dataset):
    """Head 2 of layer 1 writes nothing (zero out-proj columns): removing it changes no
    logit, by zero or by its mean (which is zero too), and its gradient importance is 0."""
    dead = tiny_model(seed=5)
    with torch.no_grad():
        dead.blocks[1].attn.out.weight[:, 2 * D : 3 * D] = 0
    for removal in im.REMOVALS:
        eff = im.head_effects(dead, dataset, removal=removal, reference=dataset.inputs[:8],
                              batch_size=10)["effect"]
        assert (eff["margin"][1, 2] == 0).all() and (eff["kl"][1, 2] == 0).all()
    assert (im.gradient_importance(dead, dataset)[1, 2] == 0).all()
    assert model_head_weights(dead)[1, 2] == 0


def test_mean_removal_of_a_constant_head_changes_nothing(dataset):
    """A head whose value projection is zero outputs its bias at every position, for every
    sequence: its mean output is that same value, so mean ablation leaves the logits alone
    (up to the float sum of the mean), while zero ablation does not."""
    m = tiny_model(seed=6)
    with torch.no_grad():
        m.blocks[2].attn.v.weight[D : 2 * D] = 0  # head 1 of layer 2: value = bias only
    eff = im.head_effects(m, dataset, removal="mean", reference=dataset.inputs[:6],
                          batch_size=10)["effect"]
    np.testing.assert_allclose(eff["margin"][2, 1], 0, atol=1e-5)
    zero = im.head_effects(m, dataset, removal="zero", batch_size=10)["effect"]
    assert np.abs(zero["margin"][2, 1]).max() > 1e-3


def test_gradient_importance_matches_finite_differences(model, dataset):
    """d loss_b / d xi_h against a central difference of the gate (independent method)."""
    small = dataset.subset(slice(0, 3))
    g = im.gradient_importance(model, small, batch_size=2)  # (L, H, 3)
    assert g.shape == (L, H, 3)
    eps = 1e-3
    for layer, head in [(0, 1), (2, 3)]:
        plus, minus = torch.ones(L, H), torch.ones(L, H)
        plus[layer, head], minus[layer, head] = 1 + eps, 1 - eps
        with torch.no_grad():
            with ab.ablated(model, minus):
                lo = im._loss_per_sequence(model(small.inputs), small.targets, small.mask)
            # ablated refuses scales above 1; scale the head up by a hook of our own
            scale = torch.ones(64)
            scale[head * D : (head + 1) * D] = 1 + eps
            handle = model.blocks[layer].attn.out.register_forward_pre_hook(
                lambda mod, a, scale=scale: (a[0] * scale,))
            hi = im._loss_per_sequence(model(small.inputs), small.targets, small.mask)
            handle.remove()
        fd = ((hi - lo) / (2 * eps)).abs().numpy()
        np.testing.assert_allclose(g[layer, head], fd, rtol=2e-2, atol=1e-6)
    assert all(p.requires_grad for p in model.parameters())  # left as found


def test_split_half_rho_and_interval():
    rng = np.random.default_rng(0)
    truth = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    clean = truth[:, None] + 0.01 * rng.standard_normal((5, 40))  # (H, N)
    assert im.split_half_rho(clean) == pytest.approx(1.0)
    noise = rng.standard_normal((200, 5, 40))  # many layers of pure noise
    rho = im.split_half_rho(noise)
    assert rho.shape == (200,) and abs(rho.mean()) < 0.1
    by_hand = stats.spearmanr(clean[:, 0::2].mean(1), clean[:, 1::2].mean(1)).statistic
    assert im.split_half_rho(clean) == pytest.approx(by_hand)
    mean, half = im.mean_interval(clean)
    ci = stats.t.interval(0.95, 39, loc=clean.mean(1), scale=stats.sem(clean, axis=1))
    np.testing.assert_allclose(mean - half, ci[0])
    np.testing.assert_allclose(mean + half, ci[1])
    with pytest.raises(ValueError, match="per_sequence has shape"):
        im.split_half_rho(np.ones((3, 1)))


def test_knockouts_are_the_named_layer_masks(model, dataset):
    masks = im.knockout_masks(L, H)
    assert list(masks) == ["all", "L1", "only_L1", "L2", "only_L2", "L3", "only_L3", "L4",
                           "only_L4"]
    assert masks["all"].sum() == 0 and masks["L2"][1].sum() == 0 and masks["L2"].sum() == 3 * H
    assert masks["only_L3"][2].sum() == H and masks["only_L3"].sum() == H
    ko = im.knockouts(model, dataset, batch_size=7)
    for name in ("all", "L3", "only_L1"):
        v = ab.evaluate_ablation(model, dataset, masks[name], batch_size=7)
        assert ko[name]["accuracy"] == float(v["accuracy_predictable"])
        assert ko[name]["margin"] == float(v["margin"])
    assert set(ko) == {"none", *masks}


def test_pair_interactions_by_direct_ablation(model, dataset):
    """Redundancy from the intact model's end, complementarity from the emptied layer's end,
    each recomputed from its own masks."""
    layer = 2
    pair = im.pair_synergy(model, dataset, layer, batch_size=10)
    assert pair["pairs"].tolist() == list(map(list, itertools.combinations(range(H), 2)))
    base = ab.evaluate_ablation(model, dataset, torch.ones(L, H), batch_size=10,
                                per_sequence=True)
    b0 = im.sequence_means(base["per_sequence"])["margin"]
    for i, (a, b) in enumerate(pair["pairs"]):
        masks = torch.ones(3, L, H)
        masks[0, layer, [a, b]] = 0
        masks[1, layer, a] = 0
        masks[2, layer, b] = 0
        v = ab.evaluate_ablation(model, dataset, masks, batch_size=10, per_sequence=True)
        drop = b0 - im.sequence_means(v["per_sequence"])["margin"]  # (3, N)
        np.testing.assert_allclose(pair["redundancy"][i], drop[0] - drop[1] - drop[2],
                                   rtol=1e-9, atol=1e-9)
        keep = torch.ones(4, L, H)
        keep[:, layer] = 0
        keep[0, layer, [a, b]] = 1
        keep[1, layer, a] = 1
        keep[2, layer, b] = 1
        v = ab.evaluate_ablation(model, dataset, keep, batch_size=10, per_sequence=True)
        m = im.sequence_means(v["per_sequence"])["margin"]  # (4, N)
        np.testing.assert_allclose(pair["complementarity"][i], m[0] - m[1] - m[2] + m[3],
                                   rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="layer=4: the model has layers 0..3"):
        im.pair_synergy(model, dataset, L)


def test_reliability_and_head_test_separate_signal_from_noise():
    rng = np.random.default_rng(3)
    signal = np.array([0.0, 1.0, 2.0, 3.0])[:, None] + 0.3 * rng.standard_normal((4, 60))
    noise = rng.standard_normal((30, 4, 60))  # 30 layers whose heads do not differ
    assert im.reliability(signal) == pytest.approx(1.0)
    p = im.head_test(signal, permutations=199)
    assert p == pytest.approx(1 / 200)  # no relabelling separates the heads as much
    null_p = im.head_test(noise, permutations=199)
    assert null_p.shape == (30,) and 0.3 < null_p.mean() < 0.7  # uniform under the null
    assert (null_p <= 0.05).mean() <= 0.2
    rel = im.reliability(noise)
    assert abs(np.median(rel)) < 0.3
    # the Spearman-Brown step: one split of rho 0.6 reads 0.75 over all sequences
    two = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    assert im.reliability(two, splits=5) == pytest.approx(1.0)
    assert im.reliability(np.zeros((2, 3, 6))).shape == (2,)  # equal heads: NaN rows
    assert np.isnan(im.reliability(np.zeros((2, 3, 6)))).all()
    with pytest.raises(ValueError, match="need at least 2"):
        im.reliability(np.ones((3, 1)))
    with pytest.raises(ValueError, match="splits"):
        im.reliability(signal, splits=0)
    # deterministic from the seed (bitwise: the same call twice)
    np.testing.assert_array_equal(im.head_test(noise[:3], permutations=99, seed=1),
                                  im.head_test(noise[:3], permutations=99, seed=1))


def test_head_fidelity_is_algorithm_2_per_head(model, dataset):
    x = dataset.inputs[:5]
    fid = im.head_fidelity(model, x, horizon=15, batch_size=2)
    pattern = extract_patterns(model, x)  # (L, N, H, T, T)
    for mode in proxies.MODES:
        direct = proxies.best_head_vs_combined(pattern, None, mode=mode, horizon=15)
        # batches of 2 against all 5 sequences at once: the float32 forward passes may round
        # differently, so not bitwise; float32 rounding of the attention, in percent
        np.testing.assert_allclose(fid[f"{mode}.per_sequence"], direct["per_head"],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fid[mode], direct["per_head"].mean(1), rtol=1e-5, atol=1e-6)
        assert fid[mode].shape == (L, H)
        # the best head where the direct route has a clear one (first and second apart by
        # far more than that rounding): a near-tie may go either way
        top = ab.top_head(fid[f"{mode}.per_sequence"])
        ranked = np.sort(direct["per_head"], -1)
        clear = ranked[..., -1] - ranked[..., -2] > 1e-2
        assert clear.any()
        np.testing.assert_array_equal(top[clear], direct["best_head"][clear])
    with pytest.raises(ValueError, match=r"inputs has shape \(12,\)"):
        im.head_fidelity(model, x[0])


def test_importance_study_parts(model, dataset):
    data, ref = dataset.subset(slice(0, 20)), dataset.inputs[20:]
    fid = im.head_fidelity(model, data.inputs[:4], horizon=10)
    study = im.importance_study(model, data, reference=ref, fidelity=fid, num_random=2,
                                batch_size=10)
    assert set(study.effect) == {f"{r}.{m}" for r in im.REMOVALS
                                    for m in ("margin", "kl", "loss", "accuracy")} | {"gradient"}
    # bitwise below: the study calls these same functions on the same arrays (same
    # operations, same order)
    for k, v in study.effect.items():
        np.testing.assert_array_equal(study.scores[k], np.nanmean(v, -1))
        assert study.reliability[k].shape == (L,)
    np.testing.assert_array_equal(study.reliability["zero.margin"],
                                  im.split_half_rho(study.effect["zero.margin"]))
    assert set(study.spearman) == {f"{r}~{rm}" for r in ("weight", "gradient",
                                      "fidelity.paper", "fidelity.definition")
                                      for rm in im.REMOVALS}
    np.testing.assert_array_equal(study.spearman["gradient~mean"], ab.rank_correlation(
        study.scores["gradient"], study.scores["mean.margin"]))
    intact = study.knockout["none"]["accuracy"]
    for order in ("weight", "zero.margin", "random"):
        curve = study.pruning[order]["accuracy_predictable"]
        assert (curve[..., H] == intact).all()  # every head kept: the intact model
    assert study.pruning["random"]["margin"].shape == (2, H + 1)
    assert study.pair["redundancy"].shape == (H * (H - 1) // 2, 20)
    assert study.pair["complementarity"].shape == (H * (H - 1) // 2, 20)
    one = im.importance_study(tiny_model(heads=1), data, reference=ref, num_random=1, batch_size=10)
    assert one.pair is None and np.isnan(one.reliability["zero.margin"]).all()
    assert isinstance(study, im.ImportanceStudy) and "pair" not in one.as_tree()
    back = im.ImportanceStudy.from_tree(study.as_tree())  # the cache's layout, read back
    assert back.as_tree().keys() == study.as_tree().keys()
    with pytest.raises(ValueError, match=r"not an importance study \(missing \['pruning'\]"):
        im.ImportanceStudy.from_tree({k: v for k, v in study.as_tree().items()
                                      if k != "pruning"})
    with pytest.raises(ValueError, match="removal='mean' needs reference"):
        im.head_effects(model, data, removal="mean")
    with pytest.raises(ValueError, match="removal='half'"):
        im.head_effects(model, data, removal="half")
