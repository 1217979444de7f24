"""Per-head probes (issue 75): each score on hand-built attention patterns with a known
answer, the logit rank against a direct SVD, the probe of a model against its explicit
attention path, and the head-probe schedule."""

from __future__ import annotations

import math

import pytest
import torch

from bparallel.transformer import head_probes as hp
from bparallel.transformer.data import induction_sequences, make_dataset
from bparallel.transformer.model import ModelConfig, Transformer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _previous_token(N: int, H: int, T: int) -> torch.Tensor:
    """Every head looks one back (position 0 at itself)."""
    A = torch.zeros(N, H, T, T)
    A[..., 0, 0] = 1.0
    for i in range(1, T):
        A[..., i, i - 1] = 1.0
    return A


def _uniform(N: int, H: int, T: int) -> torch.Tensor:
    return torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None].expand(N, H, T, T)


def test_a_perfect_previous_token_head_scores_one_and_a_uniform_head_its_mean():
    assert torch.allclose(hp.previous_token_score(_previous_token(3, 2, 9)), torch.ones(2))
    T = 9
    want = sum(1 / (i + 1) for i in range(1, T)) / (T - 1)
    assert torch.allclose(hp.previous_token_score(_uniform(2, 3, T)),
                          torch.full((3,), want, dtype=torch.float32))
    with pytest.raises(ValueError, match="patterns"):
        hp.previous_token_score(torch.ones(2, 3, 4))


def test_a_perfect_induction_head_scores_one_and_a_previous_token_head_zero():
    x = induction_sequences(4, seed=1, seq_len=12, vocab_size=32)  # (N, T)
    N, T = x.shape
    first = {}
    A = torch.zeros(N, 1, T, T)
    for n in range(N):
        seen = {}
        for i in range(T):
            tok = int(x[n, i])
            if tok in seen:
                A[n, 0, i, seen[tok] + 1] = 1.0  # the token after its earlier occurrence
            else:
                seen[tok] = i
                A[n, 0, i, i] = 1.0
        first[n] = seen
    assert torch.allclose(hp.induction_score(A, x), torch.ones(1))
    # a previous-token head scores where the previous position is the one after the
    # earlier occurrence (a second half that starts by repeating the first half's last but one)
    hits = [i - 1 == first[n][int(x[n, i])] + 1 for n in range(N) for i in range(T)
            if first[n][int(x[n, i])] < i]
    assert torch.allclose(hp.induction_score(_previous_token(N, 1, T), x),
                          torch.full((1,), sum(hits) / len(hits)))
    # half the mass on the right key: one half
    half = 0.5 * A + 0.5 * torch.eye(T).expand(N, 1, T, T)
    assert torch.allclose(hp.induction_score(half, x), torch.full((1,), 0.5))
    # a hand-written sequence: "a b c a b" -> at i=3 (a) key 1 (b), at i=4 (b) key 2 (c)
    y = torch.tensor([[0, 1, 2, 0, 1]])
    m = hp.induction_targets(y)[0]
    assert [tuple(map(int, ij)) for ij in m.nonzero()] == [(3, 1), (4, 2)]
    with pytest.raises(ValueError, match="no query"):
        hp.induction_score(_uniform(1, 1, 3), torch.tensor([[0, 1, 2]]))


def test_a_copying_head_scores_its_raise_and_a_head_raising_another_token_below_zero():
    N, H, T, V, alpha = 2, 1, 6, 10, 3.0
    x = torch.randint(0, V, (N, T), generator=torch.Generator().manual_seed(0))
    A = _previous_token(N, H, T)
    # each value raises its own token by alpha: z_i = alpha onehot(x_{i-1})
    z = torch.zeros(N, H, T, V)
    for n in range(N):
        for i in range(T):
            z[n, 0, i, x[n, max(i - 1, 0)]] = alpha
    assert torch.allclose(hp.copying_score(A, z, x), torch.full((1,), alpha * (1 - 1 / V)))
    # raising the next token instead: the attended token gets nothing, the mean alpha/V
    other = torch.zeros(N, H, T, V)
    for n in range(N):
        for i in range(T):
            tok = int(x[n, max(i - 1, 0)])
            other[n, 0, i, (tok + 1) % V] = alpha
    assert torch.allclose(hp.copying_score(A, other, x), torch.full((1,), -alpha / V))
    assert torch.allclose(hp.copying_score(A, torch.zeros(N, H, T, V), x), torch.zeros(1))
    with pytest.raises(ValueError, match="head_logits"):
        hp.copying_score(A, z[..., :3, :], x)


def test_the_effective_rank_of_known_matrices_and_of_a_head_via_its_factors():
    assert torch.allclose(hp.effective_rank(torch.eye(5)), torch.tensor(5.0))
    assert torch.allclose(hp.effective_rank(torch.ones(4, 4)), torch.tensor(1.0), atol=1e-5)
    assert torch.allclose(hp.effective_rank(torch.diag(torch.tensor([2.0, 2.0, 0.0]))),
                          torch.tensor(2.0))
    p = torch.tensor([3.0, 1.0]) / 4
    assert torch.allclose(hp.effective_rank(singular_values=torch.tensor([3.0, 1.0])),
                          torch.exp(-(p * p.log()).sum()))
    assert hp.effective_rank(torch.zeros(3, 3)) == 0
    with pytest.raises(ValueError, match="one of them"):
        hp.effective_rank()
    g = torch.Generator().manual_seed(3)
    for D in (4, 20):  # below and above T: the factors' route and the direct one
        q, k = torch.randn(2, 3, 12, D, generator=g), torch.randn(2, 3, 12, D, generator=g)
        direct = torch.linalg.svdvals(q @ k.transpose(-2, -1) / math.sqrt(D))
        sv = hp.logit_singular_values(q, k)
        assert torch.allclose(sv, direct[..., : sv.shape[-1]], atol=1e-4)
        assert torch.allclose(direct[..., sv.shape[-1]:], torch.zeros(()), atol=1e-4)


def test_the_probe_of_a_model_reads_its_explicit_attention():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(n_heads=4, head_size=8, seq_len=12, vocab_size=32))
    data = make_dataset("induction", 3, seed=2, seq_len=12, vocab_size=32)
    model.train()
    out = hp.head_probe(model, data)
    assert model.training  # restored
    model.eval()
    logits, A = model(data.inputs, return_attention=True, attention_path="explicit")
    for layer in range(4):
        assert out["previous_token"][layer] == pytest.approx(
            hp.previous_token_score(A[layer]).tolist(), abs=1e-6)
        assert out["induction"][layer] == pytest.approx(
            hp.induction_score(A[layer], data.inputs).tolist(), abs=1e-6)
        assert all(1 <= r <= 8 for r in out["logit_rank"][layer])
    assert set(out) == {*hp.HEAD_SCORE_KEYS, *hp.HEAD_SCALAR_KEYS}
    with torch.no_grad():
        loss = torch.nn.functional.cross_entropy(logits[data.mask], data.targets[data.mask])
    assert out["loss_predictable"] == pytest.approx(float(loss), rel=1e-5)
    # the copying score by the definition, layer 0, from the model's own weights
    blk = model.blocks[0].attn
    with torch.no_grad():
        x = model.blocks[0].norm1(model.tok_emb(data.inputs) + model.pos_emb(torch.arange(12)))
        v = blk.v(x).view(3, 12, 4, 8).transpose(1, 2)
        y = A[0] @ v
        z = torch.stack([y[:, h] @ blk.out.weight[:, h * 8:(h + 1) * 8].T @ model.head.weight.T
                         for h in range(4)], 1)
    assert out["copying"][0] == pytest.approx(
        hp.copying_score(A[0], z, data.inputs).tolist(), abs=1e-5)


def test_the_head_probe_schedule():
    assert hp.head_probe_steps(20, 100, 200, 1000) == [0, 20, 40, 60, 80, 100, 200, 400, 600,
                                                       800, 1000]
    assert hp.head_probe_steps(5, 100, 4, 12) == [0, 5, 10, 12]
    with pytest.raises(ValueError, match="every"):
        hp.head_probe_steps(0, 100, 200, 1000)
