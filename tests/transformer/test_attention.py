"""Attention kernels (bparallel.transformer.attention): the fused and SDPA paths agree."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from bparallel.transformer.attention import _blocks, causal_attention, drop_mask, drops_to_full


def _qkv(B=3, H=4, T=23, D=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, T, D, dtype=torch.float64, generator=g, requires_grad=True)
            for _ in range(3)]


def _reference(q, k, v, p, full_drop):
    """The explicit formula, differentiated by autograd: softmax, drop, rescale, times v."""
    T, D = q.shape[-2:]
    s = (q @ k.transpose(-2, -1)) / math.sqrt(D)
    s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    a = torch.softmax(s, dim=-1)
    if full_drop is not None:
        a = a.masked_fill(full_drop, 0.0) / (1 - p)
    return a @ v


@pytest.mark.parametrize("T", [1, 7, 20, 23, 100])
@pytest.mark.parametrize("block_size", [1, 6, 20, 128])
def test_matches_sdpa_without_dropout(T, block_size):
    q, k, v = _qkv(T=T)
    y = causal_attention(q, k, v, 0.0, block_size=block_size)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(y, ref, rtol=0, atol=1e-12)
    g = torch.randn_like(y)
    for a, b in zip(torch.autograd.grad(y, (q, k, v), g),
                    torch.autograd.grad(ref, (q, k, v), g), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("block_size", [1, 5, 20, 23])
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_forward_and_gradients_match_autograd(block_size, p):
    q, k, v = _qkv(T=23)
    B, H, T, _ = q.shape
    g = torch.Generator().manual_seed(7)
    drops = [drop_mask((B, H, i1 - i0, i1), p, g) for i0, i1 in _blocks(T, block_size)]
    y = causal_attention(q, k, v, p, block_size=block_size, drops=drops)
    ref = _reference(q, k, v, p, drops_to_full(drops, T, block_size))
    torch.testing.assert_close(y, ref, rtol=0, atol=1e-12)
    dy = torch.randn_like(y)
    for a, b in zip(torch.autograd.grad(y, (q, k, v), dy),
                    torch.autograd.grad(ref, (q, k, v), dy), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_gradcheck_with_fixed_masks():
    q, k, v = _qkv(B=2, H=2, T=9, D=3)
    g = torch.Generator().manual_seed(3)
    drops = [drop_mask((2, 2, i1 - i0, i1), 0.3, g) for i0, i1 in _blocks(9, 4)]
    assert torch.autograd.gradcheck(
        lambda q, k, v: causal_attention(q, k, v, 0.3, block_size=4, drops=drops), (q, k, v))


def test_drop_mask_frequency_and_seeding():
    n = 2_000_000
    for p in (0.1, 0.5):
        rate = drop_mask((n,), p).double().mean().item()
        assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert not drop_mask((1000,), 0.0).any()
    a = drop_mask((50, 50), 0.1, torch.Generator().manual_seed(1))
    b = drop_mask((50, 50), 0.1, torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and a.dtype == torch.bool
    with pytest.raises(ValueError, match="p=1.0"):
        drop_mask((3,), 1.0)


def test_dropout_is_unbiased():
    """E[output] over dropout draws is the dropout-free output (the 1/(1-p) rescaling)."""
    q, k, v = (t.detach() for t in _qkv(B=1, H=2, T=12, D=3))
    g = torch.Generator().manual_seed(11)
    draws = torch.stack([causal_attention(q, k, v, 0.3, generator=g, block_size=5)
                         for _ in range(4000)])
    mean, se = draws.mean(0), draws.std(0) / math.sqrt(draws.shape[0])
    exact = causal_attention(q, k, v, 0.0)
    assert torch.all((mean - exact).abs() <= 4.5 * se + 1e-12)


def test_internal_draws_are_drop_mask_draws():
    """Without ``drops``, the kernel draws exactly drop_mask's masks, block by block."""
    q, k, v = _qkv(T=23)
    B, H, T, _ = q.shape
    y = causal_attention(q, k, v, 0.2, block_size=6, generator=torch.Generator().manual_seed(9))
    g = torch.Generator().manual_seed(9)
    drops = [drop_mask((B, H, i1 - i0, i1), 0.2, g) for i0, i1 in _blocks(T, 6)]
    assert torch.equal(y, causal_attention(q, k, v, 0.2, block_size=6, drops=drops))


def test_seeded_draws_repeat():
    q, k, v = _qkv()
    torch.manual_seed(5)
    y1 = causal_attention(q, k, v, 0.1)
    torch.manual_seed(5)
    y2 = causal_attention(q, k, v, 0.1)
    assert torch.equal(y1, y2)


def test_bad_input():
    q, k, v = _qkv(T=10)
    with pytest.raises(ValueError, match="share one shape"):
        causal_attention(q, k[:, :, :5], v)
    with pytest.raises(ValueError, match="dropout_p"):
        causal_attention(q, k, v, -0.1)
    with pytest.raises(ValueError, match="block_size"):
        causal_attention(q, k, v, block_size=0)
    with pytest.raises(ValueError, match="boolean masks shaped"):
        causal_attention(q, k, v, 0.1, block_size=5,
                         drops=[torch.zeros(3, 4, 5, 5, dtype=torch.bool)])
