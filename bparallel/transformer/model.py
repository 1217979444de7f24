"""The Transformer of Section 4.1, in one legible file (nanoGPT style).

Token embedding + learned positional embedding, ``n_layers`` pre-norm blocks
``x = x + attn(rmsnorm(x))``, ``x = x + mlp(rmsnorm(x))``, no final norm, a linear head.
At ``d_model = 64`` every head count in {1, 4, 8, 16} has exactly 172,800 parameters.

The head size is ``d_model / n_heads`` (the paper's: 16 heads of 4 dimensions), unless
``ModelConfig.head_size`` fixes it: then the attention's inner width is
``n_heads * head_size``, the q, k, v projections map ``d_model -> n_heads * head_size`` and
the output projection back. With head size ``d/H`` each head's query-key product has rank at
most ``d/H`` (the low-rank bottleneck of Bhojanapalli et al. 2020); a fixed head size
separates the number of heads from the size of each, at the price of more parameters
(:meth:`ModelConfig.num_parameters`).

Attention has three code paths that compute the same function:

- ``"fused"`` (training): :func:`torch.nn.functional.scaled_dot_product_attention` wherever
  it has a fused kernel (CUDA; no dropout, as in evaluation), and for CPU training with
  attention dropout, where SDPA would fall back to its unfused math kernel,
  :func:`bparallel.transformer.attention.causal_attention` (block-causal, hand-written backward);
- ``"sdpa"``: always :func:`~torch.nn.functional.scaled_dot_product_attention` (the path
  that trained the first shipped paper-profile models);
- ``"explicit"``: scores, causal mask, softmax, dropout written out, so that the attention
  patterns can be returned, shaped ``[batch, head, query_pos, key_pos]`` as in
  TransformerLens. ``A[b, h, i, j]`` is head ``h``'s attention of query ``i`` on key ``j``:
  rows sum to 1 and the matrix is lower triangular (causal).

The paths differ only in rounding and, in training, in how the dropout masks are drawn.

Shapes: B batch, T sequence length, C = d_model, H heads, D head size (``C // H`` unless
``head_size`` is given), A = H * D the attention's inner width (``C`` by default), V vocab.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._checks import one_of, positive_int
from .attention import causal_attention

__all__ = [
    "ATTENTION_PATHS", "ModelConfig", "CausalSelfAttention", "MLP", "Block", "Transformer",
]

ATTENTION_PATHS = ("fused", "sdpa", "explicit")


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of the Section 4.1 model (defaults: the paper's, one head).

    ``head_size``: the dimensions of each head's queries, keys and values; ``None`` (the
    default, every shipped model) is ``d_model // n_heads``, which then must divide evenly.
    A model with ``head_size=None`` and one with ``head_size = d_model // n_heads`` are the
    same model (same parameters, same state dict); only the first is recorded without the
    field (:meth:`to_dict`), so every file written before the field existed still loads.
    """

    n_heads: int = 1
    vocab_size: int = 256
    seq_len: int = 100
    d_model: int = 64
    n_layers: int = 4
    d_mlp: int = 128
    dropout: float = 0.1
    head_size: int | None = None

    def __post_init__(self) -> None:
        for name in ("n_heads", "vocab_size", "seq_len", "d_model", "n_layers", "d_mlp"):
            positive_int(getattr(self, name), name)
        if self.head_size is not None:
            positive_int(self.head_size, "head_size")
        elif self.d_model % self.n_heads:
            raise ValueError(
                f"n_heads={self.n_heads} does not divide d_model={self.d_model}: "
                "the heads split the model dimension into equal blocks (or give head_size)"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout!r}: must lie in [0, 1)")

    @property
    def head_dim(self) -> int:
        """Dimensions per head, ``D``: ``head_size``, else ``d_model // n_heads``."""
        return self.d_model // self.n_heads if self.head_size is None else self.head_size

    @property
    def attention_width(self) -> int:
        """The attention's inner width ``A = n_heads * head_dim`` (``d_model`` by default)."""
        return self.n_heads * self.head_dim

    def num_parameters(self) -> int:
        """Parameters of the model, counted from the shapes (:meth:`Transformer.num_parameters`
        counts the tensors): embeddings ``V C + T C``; per block two norms ``2 C``, q, k, v
        ``3 (C A + A)``, output ``A C + C``, MLP ``C M + M + M C + C``; head ``C V + V``."""
        C, A, M, V = self.d_model, self.attention_width, self.d_mlp, self.vocab_size
        block = 2 * C + 3 * (C * A + A) + (A * C + C) + (C * M + M) + (M * C + C)
        return V * C + self.seq_len * C + self.n_layers * block + C * V + V

    def to_dict(self) -> dict:
        """The fields as a dict, ``head_size`` left out when ``None`` (so that a model of the
        default head size is recorded as before the field existed)."""
        d = asdict(self)
        if d["head_size"] is None:
            del d["head_size"]
        return d


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with separate q, k, v and output projections."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.dropout = cfg.n_heads, cfg.head_dim, cfg.dropout
        A = cfg.attention_width
        self.q = nn.Linear(cfg.d_model, A)
        self.k = nn.Linear(cfg.d_model, A)
        self.v = nn.Linear(cfg.d_model, A)
        self.out = nn.Linear(A, cfg.d_model)  # weight (C, A): columns = heads, D each
        self.attn_dropout = nn.Dropout(cfg.dropout)
        mask = torch.tril(torch.ones(cfg.seq_len, cfg.seq_len, dtype=torch.bool))
        self.register_buffer("causal_mask", mask, persistent=False)  # (T_max, T_max)

    def forward(
        self, x: Tensor, path: str = "fused", return_attention: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        B, T, C = x.shape
        H, D = self.n_heads, self.head_dim
        q = self.q(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = self.k(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        v = self.v(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        pattern = None
        p = self.dropout if self.training else 0.0
        if path == "fused" and not return_attention and p > 0 and x.device.type == "cpu":
            y = causal_attention(q, k, v, p)  # (B, H, T, D): SDPA has no fused CPU kernel here
        elif path in ("fused", "sdpa") and not return_attention:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)  # (B,H,T,D)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(D)  # (B, H, T, T)
            scores = scores.masked_fill(~self.causal_mask[:T, :T], float("-inf"))  # (B, H, T, T)
            pattern = torch.softmax(scores, dim=-1)  # (B, H, T, T) [batch, head, query, key]
            y = self.attn_dropout(pattern) @ v  # (B, H, T, D)
        y = y.transpose(1, 2).reshape(B, T, H * D)  # (B, T, A): heads concatenated
        return self.out(y), pattern  # (B, T, C), (B, H, T, T) or None


class MLP(nn.Module):
    """Linear(C, d_mlp) -> ReLU -> Linear(d_mlp, C) -> Dropout."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_mlp)
        self.proj = nn.Linear(cfg.d_mlp, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.drop(self.proj(F.relu(self.fc(x))))  # (B, T, C)


class Block(nn.Module):
    """Pre-norm block: ``x + attn(rmsnorm(x))``, then ``x + mlp(rmsnorm(x))``."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm1 = nn.RMSNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.norm2 = nn.RMSNorm(cfg.d_model)
        self.mlp = MLP(cfg)

    def forward(
        self, x: Tensor, path: str = "fused", return_attention: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        a, pattern = self.attn(self.norm1(x), path, return_attention)  # (B, T, C)
        x = x + a  # (B, T, C)
        x = x + self.mlp(self.norm2(x))  # (B, T, C)
        return x, pattern


class Transformer(nn.Module):
    """Decoder-only Transformer of Section 4.1; logits at every position.

    ``model(idx)`` returns logits ``(B, T, V)``; ``model(idx, return_attention=True)``
    returns ``(logits, attn)`` with ``attn`` shaped ``(L, B, H, T, T)`` (explicit path).
    """

    def __init__(self, cfg: ModelConfig, attention_path: str = "fused") -> None:
        super().__init__()
        one_of(attention_path, "attention_path", ATTENTION_PATHS, "paths")
        self.config = cfg
        self.attention_path = attention_path
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)

    def forward(
        self, idx: Tensor, return_attention: bool = False, *, attention_path: str | None = None
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Logits of every position for the tokens ``idx`` ``(B, T)``, ``T <= seq_len``.

        Returns the logits ``(B, T, V)``; with ``return_attention=True``, ``(logits,
        pattern)`` where ``pattern`` is every layer's post-softmax attention ``(L, B, H, T,
        T)``, ``pattern[l, b, h, i, j]`` head ``h``'s attention of query ``i`` on key ``j``
        (causal, rows summing to 1: what :mod:`bparallel.proxies` takes). ``attention_path``
        overrides the model's own for this call (:data:`ATTENTION_PATHS`; the patterns are
        always computed by the explicit path). A bad path, an ``idx`` that is not 2-D or a
        sequence longer than ``seq_len`` is a ``ValueError``.
        """
        path = self.attention_path if attention_path is None else attention_path
        if path not in ATTENTION_PATHS:
            raise ValueError(f"attention_path={path!r}: valid paths are {list(ATTENTION_PATHS)}")
        if idx.ndim != 2:
            raise ValueError(f"idx has shape {tuple(idx.shape)}: expected (batch, seq_len)")
        B, T = idx.shape
        if T > self.config.seq_len:
            raise ValueError(f"sequence length {T} exceeds seq_len={self.config.seq_len}")
        pos = torch.arange(T, device=idx.device)  # (T,)
        x = self.tok_emb(idx) + self.pos_emb(pos)  # (B, T, C)
        patterns = []
        for block in self.blocks:
            x, pattern = block(x, path, return_attention)  # (B, T, C), (B, H, T, T)
            patterns.append(pattern)
        logits = self.head(x)  # (B, T, V): no final norm
        if return_attention:
            return logits, torch.stack(patterns)  # (B, T, V), (L, B, H, T, T)
        return logits

    def out_proj_weights(self) -> Tensor:
        """Output-projection weights of every layer, ``(L, C, A)`` (detached copy): column
        block ``h`` (``D`` columns) reads head ``h``."""
        return torch.stack([b.attn.out.weight.detach().clone() for b in self.blocks])

    def num_parameters(self) -> int:
        """Parameters of the model, counted tensor by tensor."""
        return sum(p.numel() for p in self.parameters())
