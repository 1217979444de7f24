"""Head ablation and pruning (bparallel.transformer.ablation), on tiny random-init models."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from bparallel.transformer import ablation as ab
from bparallel.transformer.data import make_dataset
from bparallel.transformer.evaluation import TokenScores, evaluate_accuracy
from bparallel.transformer.model import ModelConfig, Transformer
from tests.transformer.tiny import D, H, L, T

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _logits(model: Transformer, x: torch.Tensor, **kw) -> torch.Tensor:
    with torch.no_grad():
        return model(x, **kw)


def _full_forward_metrics(model, dataset, mask, batch_size):
    """The metrics of ``mask`` from the full forward pass under :func:`ab.ablated`."""
    scores = TokenScores(dataset.task, dataset.inputs.shape[1], loss_dtype=torch.float64)
    with ab.ablated(model, mask), torch.no_grad():
        for s in range(0, len(dataset), batch_size):
            scores.add(model(dataset.inputs[s : s + batch_size]),
                       dataset.targets[s : s + batch_size])
    return scores.result()


# --------------------------------------------------------------------------- the mechanism


def test_all_ones_mask_is_the_plain_model_bitwise(model, dataset):
    x = dataset.inputs[:5]
    plain = _logits(model, x)
    plain_explicit, pattern = _logits(model, x, return_attention=True)
    with ab.ablated(model, torch.ones(L, H)):
        assert torch.equal(_logits(model, x), plain)
        masked_explicit, masked_attn = _logits(model, x, return_attention=True)
    assert torch.equal(masked_explicit, plain_explicit)
    assert torch.equal(masked_attn, pattern)
    with ab.ablated(model, np.ones((L, H), dtype=bool)):  # numpy bool masks too
        assert torch.equal(_logits(model, x), plain)


def test_removing_a_head_equals_zeroing_its_out_proj_columns(model, dataset):
    x = dataset.inputs[:5]
    for layer, head in [(0, 0), (1, 3), (3, 2)]:
        mask = torch.ones(L, H)
        mask[layer, head] = 0
        zeroed = copy.deepcopy(model)
        with torch.no_grad():
            zeroed.blocks[layer].attn.out.weight[:, head * D : (head + 1) * D] = 0
        with ab.ablated(model, mask):
            masked = _logits(model, x)
        # bitwise: both sum the same products, the removed head's being exact zeros
        assert torch.equal(masked, _logits(zeroed, x))
        assert not torch.allclose(masked, _logits(model, x))  # the head did something
    # a fractional mask scales the head: its columns times 0.25
    mask = torch.ones(L, H)
    mask[2, 1] = 0.25
    scaled = copy.deepcopy(model)
    with torch.no_grad():
        scaled.blocks[2].attn.out.weight[:, D : 2 * D] *= 0.25
    with ab.ablated(model, mask):
        torch.testing.assert_close(_logits(model, x), _logits(scaled, x), rtol=1e-5, atol=1e-6)


def test_ablation_leaves_no_trace(model, dataset):
    x = dataset.inputs[:3]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    plain = _logits(model, x)
    with pytest.raises(RuntimeError, match="inside"), ab.ablated(model, torch.zeros(L, H)):
        raise RuntimeError("inside")
    assert torch.equal(_logits(model, x), plain)  # hooks removed, even after an error
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    ab.evaluate_ablation(model.train(), dataset, torch.zeros(L, H))
    assert model.training  # mode restored
    model.eval()


def test_nested_masks_multiply(model, dataset):
    x = dataset.inputs[:3]
    a, b = torch.ones(L, H), torch.ones(L, H)
    a[0, 1], b[2, 3] = 0, 0
    with ab.ablated(model, a), ab.ablated(model, b):
        nested = _logits(model, x)
    with ab.ablated(model, a * b):
        assert torch.equal(nested, _logits(model, x))


@pytest.mark.parametrize("bad, message", [
    (torch.ones(L, H + 1), r"mask has shape \(4, 5\): expected \(L, H\) with \(L, H\) = \(4, 4\)"),
    (torch.ones(L + 1, H), r"mask has shape \(5, 4\)"),
    (torch.ones(2, L, H), r"mask has shape \(2, 4, 4\): expected \(L, H\)"),
    (torch.ones(H), r"mask has shape \(4,\)"),
    (torch.full((L, H), 2.0), r"mask has values outside \[0, 1\]"),
    (-torch.ones(L, H), r"mask has values outside \[0, 1\]"),
    (torch.full((L, H), float("nan")), r"mask has values outside \[0, 1\]"),
])
def test_bad_masks_are_refused(model, bad, message):
    with pytest.raises(ValueError, match=message), ab.ablated(model, bad):
        pass


def test_bad_mask_batches_are_refused(model, dataset):
    with pytest.raises(ValueError, match=r"masks has shape \(3, 4, 5\)"):
        ab.evaluate_ablation(model, dataset, torch.ones(3, L, H + 1))
    with pytest.raises(ValueError, match=r"masks has values outside \[0, 1\]"):
        ab.evaluate_ablation(model, dataset, torch.full((2, L, H), 1.5))
    with pytest.raises(ValueError, match="batch_size=0"):
        ab.evaluate_ablation(model, dataset, torch.ones(L, H), batch_size=0)


def test_removing_every_head_of_a_layer_leaves_only_the_bias(model, dataset):
    """The output projection has a bias; removing all heads keeps it.

    With every head of layer ``l`` removed the attention sub-layer adds ``b_out`` at every
    position; with ``b_out`` zeroed as well it adds nothing, as if the sub-layer were skipped.
    """
    x, layer = dataset.inputs[:4], 1
    assert model.blocks[layer].attn.out.bias is not None
    mask = torch.ones(L, H)
    mask[layer] = 0
    with ab.ablated(model, mask):
        removed = _logits(model, x)

    def bias_only(m: Transformer) -> Transformer:
        pattern = m.blocks[layer].attn
        pattern.forward = lambda h, path="fused", ret=False: (pattern.out.bias.expand_as(h), None)
        return m

    zero_weight = copy.deepcopy(model)
    with torch.no_grad():
        zero_weight.blocks[layer].attn.out.weight.zero_()
    assert torch.equal(removed, _logits(zero_weight, x))
    assert torch.equal(removed, _logits(bias_only(copy.deepcopy(model)), x))

    no_bias = copy.deepcopy(model)
    with torch.no_grad():
        no_bias.blocks[layer].attn.out.bias.zero_()
    skipped = bias_only(copy.deepcopy(no_bias))  # the sub-layer adds exactly zero
    assert not torch.allclose(removed, _logits(skipped, x))  # the bias mattered
    with ab.ablated(no_bias, mask):
        assert torch.equal(_logits(no_bias, x), _logits(skipped, x))


# --------------------------------------------------------------------------- evaluation


def test_all_ones_evaluation_is_evaluate_accuracy(model, dataset):
    for batch_size, dtype in itertools.product((7, 250), (torch.float32, torch.float64)):
        ev = evaluate_accuracy(model, dataset, batch_size, loss_dtype=dtype)
        out = ab.evaluate_ablation(model, dataset, torch.ones(L, H), batch_size=batch_size,
                                   loss_dtype=dtype)
        assert {k: float(out[k]) for k in ev} == ev
        assert float(out["kl"]) == 0.0  # the intact model against itself, the same passes


def test_reused_prefix_equals_the_full_forward(model, dataset):
    """Masks starting at every layer, binary and fractional: bitwise the full forward."""
    gen = torch.Generator().manual_seed(3)
    masks = torch.ones(8, L, H)
    for i in range(8):
        layer = i % L
        masks[i, layer:] = (torch.rand(L - layer, H, generator=gen) > 0.4).float()
        masks[i, layer, i % H] = 0.5 if i >= 4 else 0.0  # layer is the first one touched
    out = ab.evaluate_ablation(model, dataset, masks, batch_size=7)
    for i in range(8):
        full = _full_forward_metrics(model, dataset, masks[i], batch_size=7)
        assert {k: float(out[k][i]) for k in full} == full


def test_results_follow_the_mask_batch_shape_and_do_not_interact(model, dataset):
    gen = torch.Generator().manual_seed(4)
    masks = (torch.rand(2, 3, L, H, generator=gen) > 0.3).float()
    masks[1, 2] = masks[0, 0]  # a duplicate
    out = ab.evaluate_ablation(model, dataset, masks, batch_size=10)
    assert out["loss"].shape == (2, 3)
    assert out["loss"][1, 2] == out["loss"][0, 0]
    alone = ab.evaluate_ablation(model, dataset, masks[0, 1], batch_size=10)
    assert all(alone[k] == out[k][0, 1] for k in ab.METRICS)


# --------------------------------------------------------------------------- pruning


def test_pruning_curve_endpoints_and_a_middle_point(model, dataset):
    order = ab.random_orders(L, H, 2, seed=0)  # (2, L, H)
    curve = ab.pruning_curve(model, dataset, order, batch_size=10)
    np.testing.assert_array_equal(curve["heads_kept"], np.arange(H + 1))
    assert curve["loss"].shape == (2, H + 1)
    base = evaluate_accuracy(model, dataset, 10, loss_dtype=torch.float64)
    none = ab.evaluate_ablation(model, dataset, torch.zeros(L, H), batch_size=10)
    for k in ab.METRICS:
        assert (curve[k][:, H] == base[k]).all()  # all kept
        assert (curve[k][:, 0] == none[k]).all()  # none kept
    mask = torch.ones(L, H)  # order 1 with 1 head kept: its first 3 removed in every layer
    for layer in range(L):
        mask[layer, order[1, layer, :3]] = 0
    one = ab.evaluate_ablation(model, dataset, mask, batch_size=10)
    assert all(curve[k][1, 1] == one[k] for k in ab.METRICS)


def test_per_layer_pruning_curve(model, dataset):
    order = np.tile(np.arange(H)[::-1], (L, 1))  # remove head 3 first, then 2, ...
    curve = ab.pruning_curve(model, dataset, order, per_layer=True, batch_size=10)
    assert curve["loss"].shape == (L, H + 1)
    base = evaluate_accuracy(model, dataset, 10, loss_dtype=torch.float64)
    for layer in range(L):
        mask = torch.ones(L, H)
        mask[layer] = 0
        none = ab.evaluate_ablation(model, dataset, mask, batch_size=10)
        mask = torch.ones(L, H)
        mask[layer, 2:] = 0  # two kept: heads 0 and 1
        two = ab.evaluate_ablation(model, dataset, mask, batch_size=10)
        for k in ab.METRICS:
            assert curve[k][layer, H] == base[k]
            assert curve[k][layer, 0] == none[k]
            assert curve[k][layer, 2] == two[k]


def test_random_orders_are_seeded_permutations():
    a = ab.random_orders(L, 16, 5, seed=7)
    assert a.shape == (5, L, 16)
    np.testing.assert_array_equal(np.sort(a, axis=-1), np.broadcast_to(np.arange(16), a.shape))
    np.testing.assert_array_equal(a, ab.random_orders(L, 16, 5, seed=7))
    assert not np.array_equal(a, ab.random_orders(L, 16, 5, seed=8))
    assert len({tuple(r) for r in a.reshape(-1, 16)}) == 20  # 16! orders: no repeats
    with pytest.raises(ValueError, match="num=0"):
        ab.random_orders(L, H, 0, seed=0)


def test_bad_orders_are_refused(model, dataset):
    with pytest.raises(ValueError, match="order: each row must be a permutation"):
        ab.pruning_curve(model, dataset, np.zeros((L, H), dtype=int))
    with pytest.raises(ValueError, match=r"order has shape \(4, 3\)"):
        ab.pruning_curve(model, dataset, np.zeros((L, H - 1), dtype=int))
    with pytest.raises(ValueError, match="order has shape .* dtype float64"):
        ab.pruning_curve(model, dataset, np.zeros((L, H)))


# --------------------------------------------------------------------------- rankings


def test_rank_correlation_hand_values():
    a = np.array([[1.0, 2, 3, 4], [1, 2, 3, 4], [1, 1, 2, 3], [5, 5, 5, 5]])
    b = np.array([[1.0, 3, 2, 4], [4, 3, 2, 1], [1, 2, 3, 4], [1, 2, 3, 4]])
    rho = ab.rank_correlation(a, b)
    # 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 12/60; reversed: -1; ties get average ranks
    # (1.5, 1.5, 3, 4) vs (1, 2, 3, 4): 4.5 / sqrt(4.5 * 5) = sqrt(0.9); constant: undefined
    np.testing.assert_allclose(rho[:3], [0.8, -1.0, math.sqrt(0.9)])
    assert np.isnan(rho[3])
    assert ab.rank_correlation(a.reshape(2, 2, 4), b.reshape(2, 2, 4)).shape == (2, 2)
    assert np.isnan(ab.rank_correlation([[3.0]], [[1.0]])).all()  # one head: undefined
    with pytest.raises(ValueError, match="a and b have shapes"):
        ab.rank_correlation(a, b[:, :3])


def test_rank_and_order_helpers():
    s = np.array([[0.1, 0.4, 0.2, 0.3], [2.0, 2.0, 1.0, 3.0]])
    np.testing.assert_array_equal(ab.rank_heads(s), [[3, 0, 2, 1], [1, 2, 3, 0]])
    np.testing.assert_array_equal(ab.removal_order(s), [[0, 2, 3, 1], [2, 0, 1, 3]])
    np.testing.assert_array_equal(ab.top_head(s), [1, 3])
    np.testing.assert_array_equal(ab.top_head([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), [-1, -1])


# --------------------------------------------------------------------------- margin, KL, fill


def test_logit_margin_hand_values():
    logits = torch.tensor([[[2.0, 5.0, 1.0], [0.0, -1.0, 3.0]]])  # (1, 2, 3)
    targets = torch.tensor([[1, 1]])
    m = ab.logit_margin(logits, targets)
    assert m.dtype == torch.float64 and m.tolist() == [[3.0, -4.0]]


def test_margin_and_kl_follow_their_definitions(model, dataset):
    """evaluate_ablation's margin and KL against a direct computation from full forwards."""
    mask = torch.ones(L, H)
    mask[1, 2] = mask[3, 0] = 0
    out = ab.evaluate_ablation(model, dataset, mask, batch_size=7, per_sequence=True)
    with torch.no_grad():
        base = torch.log_softmax(model(dataset.inputs).double(), -1)
        with ab.ablated(model, mask):
            z = model(dataset.inputs)
    logp = torch.log_softmax(z.double(), -1)
    kl = (base.exp() * (base - logp)).sum(-1)  # (N, T)
    target = z.double().gather(-1, dataset.targets[..., None])[..., 0]
    other = z.double().scatter(-1, dataset.targets[..., None], -math.inf).amax(-1)
    pred = dataset.mask
    np.testing.assert_allclose(out["kl"], kl[pred].mean().item(), rtol=1e-10)
    np.testing.assert_allclose(out["margin"], (target - other)[pred].mean().item(), rtol=1e-10)
    assert float(out["kl"]) > 0
    seq = out["per_sequence"]
    np.testing.assert_array_equal(seq["count"], pred.sum(-1).numpy())
    np.testing.assert_allclose(seq["margin"], ((target - other) * pred).sum(-1), rtol=1e-10)


def test_mean_ablation_of_a_head_equals_putting_its_mean_in_by_hand(model, dataset):
    ref = dataset.inputs[:10]
    fill = ab.head_means(model, ref)  # (L, T, C)
    assert fill.shape == (L, T, 64)
    # the mean over the reference sequences, computed here from captured head outputs
    ys = []
    hooks = [b.attn.out.register_forward_pre_hook(lambda mod, a: ys.append(a[0]))
             for b in model.blocks]
    with torch.no_grad():
        model(ref)
    for h in hooks:
        h.remove()
    np.testing.assert_allclose(fill[2], ys[2].double().mean(0).float(), rtol=1e-6, atol=1e-7)
    mask = torch.ones(L, H)
    mask[2, 1] = 0
    with torch.no_grad(), ab.ablated(model, mask, fill):
        got = model(dataset.inputs[:3])
    # by hand: a hook that writes the mean into head 1's columns of layer 2
    def hook(mod, args):
        y = args[0].clone()
        y[..., D : 2 * D] = fill[2, : y.shape[1], D : 2 * D]
        return (y,)
    handle = model.blocks[2].attn.out.register_forward_pre_hook(hook)
    with torch.no_grad():
        want = model(dataset.inputs[:3])
    handle.remove()
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="fill has shape"):
        ab.ablated(model, mask, fill[:2]).__enter__()


def test_mean_ablation_with_a_head_size_other_than_width_over_heads():
    """The fixed-head-size arm (issue #33): 8 heads of 16 dimensions, an attention inner width
    of 128 beside d_model = 64; mean ablation fills (L, T, 128)."""
    from bparallel.transformer.importance import head_effects

    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=8, head_size=16, seq_len=T, dropout=0.0)).eval()
    data = make_dataset("cycle", 6, seed=1, seq_len=T)
    fill = ab.head_means(model, make_dataset("cycle", 5, seed=2, seq_len=T).inputs)
    assert tuple(fill.shape) == (L, T, 128)
    eff = head_effects(model, data, removal="mean", fill=fill)["effect"]["margin"]
    assert eff.shape == (L, 8, 6) and np.isfinite(eff).all()
    with pytest.raises(ValueError, match="A = 128"):
        ab.evaluate_ablation(model, data, torch.ones(L, 8), fill=fill[..., :64])
