"""The Section 4.1 Transformer (bparallel.transformer.model)."""

from __future__ import annotations

import math

import pytest
import torch

from bparallel.transformer.model import ModelConfig, Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("heads", [1, 4, 8, 16])
def test_parameter_count_is_172800_for_every_head_count(heads):
    # embeddings 256*64 + 100*64; per block 2*64 (norms) + 4*(64*64+64) (q,k,v,out)
    # + (64*128+128) + (128*64+64) (MLP); head 64*256+256: 172,800 whatever H is.
    model = Transformer(ModelConfig(n_heads=heads))
    assert model.num_parameters() == 172_800
    per_block = 2 * 64 + 4 * (64 * 64 + 64) + (64 * 128 + 128) + (128 * 64 + 64)
    assert 256 * 64 + 100 * 64 + 4 * per_block + 64 * 256 + 256 == 172_800


def test_heads_must_divide_model_dimension():
    with pytest.raises(ValueError, match="n_heads=3 does not divide d_model=64"):
        ModelConfig(n_heads=3)
    with pytest.raises(ValueError, match="dropout"):
        ModelConfig(dropout=1.0)
    with pytest.raises(ValueError, match="attention_path='flash'"):
        Transformer(ModelConfig(), attention_path="flash")


@pytest.mark.parametrize("heads", [1, 4, 16])
def test_fused_and_explicit_paths_agree_in_eval(heads):
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=heads, seq_len=20)).eval()
    x = torch.randint(0, 256, (3, 20))
    with torch.no_grad():
        fused = model(x, attention_path="fused")
        explicit, pattern = model(x, return_attention=True)
        explicit2 = model(x, attention_path="explicit")
        sdpa = model(x, attention_path="sdpa")
    torch.testing.assert_close(fused, explicit, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sdpa, fused)
    torch.testing.assert_close(explicit, explicit2)
    assert fused.shape == (3, 20, 256)
    assert pattern.shape == (4, 3, heads, 20, 20)  # (L, B, H, T, T)


def test_fused_and_explicit_gradients_agree_without_dropout():
    torch.manual_seed(1)
    model = Transformer(ModelConfig(n_heads=8, seq_len=12, dropout=0.0)).train()
    x = torch.randint(0, 256, (2, 12))
    grads = []
    for path in ("fused", "explicit", "sdpa"):
        model.zero_grad()
        torch.nn.functional.cross_entropy(
            model(x, attention_path=path).flatten(0, 1), x.flatten()).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for other in grads[1:]:
        for g1, g2 in zip(grads[0], other, strict=True):
            torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-6)


def test_cpu_training_with_dropout_uses_the_block_causal_kernel(monkeypatch):
    """Only the fused path, in training, with dropout, on CPU, takes bparallel's kernel."""
    import bparallel.transformer.model as bm

    calls = []
    real = bm.causal_attention

    def spy(*args, **kwargs):
        calls.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(bm, "causal_attention", spy)
    model = Transformer(ModelConfig(n_heads=4, seq_len=12))
    x = torch.randint(0, 256, (2, 12))
    model.train()(x, attention_path="sdpa")
    model.eval()(x, attention_path="fused")
    assert calls == []
    model.train()(x, attention_path="fused")
    assert calls == [0.1] * 4  # one call per layer, with the model's dropout
    torch.manual_seed(3)
    a = model(x)
    torch.manual_seed(3)
    assert torch.equal(a, model(x))  # seeded dropout repeats


def test_attention_patterns_are_causal_rows_of_probabilities():
    torch.manual_seed(2)
    model = Transformer(ModelConfig(n_heads=4, seq_len=16)).eval()
    with torch.no_grad():
        _, pattern = model(torch.randint(0, 256, (2, 16)), return_attention=True)
    torch.testing.assert_close(pattern.sum(-1), torch.ones(4, 2, 4, 16))
    upper = torch.triu(torch.ones(16, 16, dtype=torch.bool), diagonal=1)
    assert torch.all(pattern[..., upper] == 0)
    assert torch.all(pattern[..., 0, 0] == 1)  # query 0 sees only key 0


def test_attention_pattern_is_batch_head_query_key():
    # recompute layer 1's pattern by hand: softmax_j(q_i . k_j / sqrt(D)) on rmsnorm(x)
    torch.manual_seed(3)
    cfg = ModelConfig(n_heads=4, seq_len=10)
    model = Transformer(cfg).eval()
    x = torch.randint(0, 256, (2, 10))
    with torch.no_grad():
        _, pattern = model(x, return_attention=True)
        h = model.tok_emb(x) + model.pos_emb(torch.arange(10))
        blk = model.blocks[0]
        z = blk.norm1(h)
        q = blk.attn.q(z).view(2, 10, 4, 16)
        k = blk.attn.k(z).view(2, 10, 4, 16)
        s = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(16)
        s = s.masked_fill(torch.triu(torch.ones(10, 10, dtype=torch.bool), 1), -math.inf)
        expected = torch.softmax(s, -1)
    torch.testing.assert_close(pattern[0], expected)


def test_dropout_active_only_in_training():
    torch.manual_seed(4)
    model = Transformer(ModelConfig(n_heads=4, seq_len=8))
    x = torch.randint(0, 256, (2, 8))
    model.train()
    assert not torch.equal(model(x), model(x))  # dropout draws differ
    model.eval()
    assert torch.equal(model(x), model(x))


def test_out_proj_weights_and_input_checks():
    model = Transformer(ModelConfig(n_heads=8))
    w = model.out_proj_weights()
    assert w.shape == (4, 64, 64)
    assert torch.equal(w[2], model.blocks[2].attn.out.weight)
    with pytest.raises(ValueError, match="exceeds seq_len=100"):
        model(torch.zeros(1, 101, dtype=torch.long))
    with pytest.raises(ValueError, match=r"expected \(batch, seq_len\)"):
        model(torch.zeros(5, dtype=torch.long))


# --------------------------------------------------------------------------- head size


@pytest.mark.parametrize(("heads", "count"), [(1, 123_072), (4, 172_800), (8, 239_104),
                                              (16, 371_712)])
def test_sixteen_dimensions_per_head_parameter_counts(heads, count):
    # per block, q k v out with inner width A = 16 H: 3 (64 A + A) + (A 64 + 64); the rest
    # of the model (embeddings, norms, MLP, head) is the same 172,800 - 4 * 16,640 = 106,240
    A = 16 * heads
    assert 106_240 + 4 * (3 * (64 * A + A) + (A * 64 + 64)) == count
    cfg = ModelConfig(n_heads=heads, head_size=16)
    assert cfg.num_parameters() == Transformer(cfg).num_parameters() == count
    assert cfg.attention_width == A and cfg.head_dim == 16


@pytest.mark.parametrize("cfg", [
    ModelConfig(n_heads=3, head_size=5),
    ModelConfig(n_heads=2, d_model=32, head_size=24, d_mlp=40, n_layers=2, vocab_size=50,
                seq_len=9)])
def test_parameter_count_from_shapes_matches_the_tensors(cfg):
    assert cfg.num_parameters() == Transformer(cfg).num_parameters()


def test_default_head_size_is_the_paper_model_unchanged():
    """head_size=None is d_model // n_heads: the same state dict and initial weights as a
    model that names 16 dimensions for its 4 heads, and a config recorded without the field
    (so files written before it existed load, and their keys do not change)."""
    for heads in (1, 4, 8, 16):
        cfg = ModelConfig(n_heads=heads)
        assert cfg.head_dim == 64 // heads and cfg.attention_width == 64
        assert "head_size" not in cfg.to_dict()
        assert ModelConfig(**cfg.to_dict()) == cfg
    named = ModelConfig(n_heads=4, head_size=16)
    assert named.to_dict()["head_size"] == 16 and ModelConfig(**named.to_dict()) == named
    torch.manual_seed(5)
    a = Transformer(ModelConfig(n_heads=4)).state_dict()
    torch.manual_seed(5)
    b = Transformer(named).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"head_size": 0}, "head_size=0: must be a positive integer"),
    ({"head_size": -4}, "head_size=-4: must be a positive integer"),
    ({"head_size": 2.5}, "head_size=2.5: must be a positive integer"),
    ({"head_size": True}, "head_size=True: must be a positive integer"),
    ({"n_heads": 3}, r"n_heads=3 does not divide d_model=64.*or give head_size"),
    ({"n_heads": 0, "head_size": 16}, "n_heads=0: must be a positive integer"),
])
def test_head_size_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**kwargs)
    assert ModelConfig(n_heads=3, head_size=16).attention_width == 48  # any count, given a size


@pytest.mark.parametrize(("heads", "head_size"), [(1, 16), (8, 16), (16, 16), (3, 5)])
def test_every_attention_path_works_at_a_fixed_head_size(heads, head_size):
    torch.manual_seed(6)
    cfg = ModelConfig(n_heads=heads, head_size=head_size, seq_len=20)
    model = Transformer(cfg).eval()
    x = torch.randint(0, 256, (3, 20))
    with torch.no_grad():
        fused = model(x, attention_path="fused")
        sdpa = model(x, attention_path="sdpa")
        explicit, pattern = model(x, return_attention=True)
    torch.testing.assert_close(fused, explicit, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sdpa, fused)
    assert pattern.shape == (4, 3, heads, 20, 20)
    assert model.out_proj_weights().shape == (4, 64, heads * head_size)  # (L, C, A)
    # training: the CPU dropout kernel, SDPA and the explicit path agree without dropout
    model = Transformer(ModelConfig(n_heads=heads, head_size=head_size, seq_len=12,
                                    dropout=0.0)).train()
    grads = []
    for path in ("fused", "explicit", "sdpa"):
        model.zero_grad()
        torch.nn.functional.cross_entropy(
            model(x[:, :12], attention_path=path).flatten(0, 1), x[:, :12].flatten()).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for other in grads[1:]:
        for g1, g2 in zip(grads[0], other, strict=True):
            torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-6)
    model = Transformer(ModelConfig(n_heads=heads, head_size=head_size, seq_len=12)).train()
    assert model(x[:, :12]).shape == (3, 12, 256)  # with dropout: bparallel's CPU kernel


def test_pattern_at_a_fixed_head_size_by_hand():
    # 8 heads of 16 dimensions: softmax_j(q_i . k_j / sqrt(16)), q and k 128 wide
    torch.manual_seed(7)
    model = Transformer(ModelConfig(n_heads=8, head_size=16, seq_len=10)).eval()
    x = torch.randint(0, 256, (2, 10))
    with torch.no_grad():
        _, pattern = model(x, return_attention=True)
        z = model.blocks[0].norm1(model.tok_emb(x) + model.pos_emb(torch.arange(10)))
        q = model.blocks[0].attn.q(z).view(2, 10, 8, 16)
        k = model.blocks[0].attn.k(z).view(2, 10, 8, 16)
        s = torch.einsum("bihd,bjhd->bhij", q, k) / 4.0
        s = s.masked_fill(torch.triu(torch.ones(10, 10, dtype=torch.bool), 1), -math.inf)
    torch.testing.assert_close(pattern[0], torch.softmax(s, -1))


def test_head_weights_read_each_heads_columns_at_a_fixed_head_size():
    """Section 4.2's head weights split the output projection's columns into one block of
    head_size columns per head."""
    import numpy as np

    from bparallel.transformer.patterns import model_head_weights

    torch.manual_seed(8)
    model = Transformer(ModelConfig(n_heads=2, head_size=16))
    with torch.no_grad():
        for block in model.blocks:
            block.attn.out.weight.zero_()
            block.attn.out.weight[:, :16] = 1.0  # head 0: norm sqrt(64 * 16) = 32
            block.attn.out.weight[:, 16:] = 0.5  # head 1: 16
    np.testing.assert_allclose(model_head_weights(model), np.tile([2 / 3, 1 / 3], (4, 1)))
