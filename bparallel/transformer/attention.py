"""Causal attention with attention dropout as one autograd function (the CPU training kernel).

The Section 4.1 model applies dropout 0.1 to the attention pattern. PyTorch's
:func:`torch.nn.functional.scaled_dot_product_attention` has fused kernels for that on CUDA,
but on CPU any ``dropout_p > 0`` sends it to its unfused "math" fallback, which is the
explicit path written out: it materialises the scores, the masked scores, the softmax, a
float dropout mask and the dropped pattern, each ``(B, H, T, T)``, and backpropagates
through every one of them. At 16 heads (``D = 4``) a training step is dominated by these
memory-bound passes, and by the float Bernoulli mask.

:func:`causal_attention` computes the same function,

``y = dropout(softmax(q k^T / sqrt(D) + causal mask)) v``,

with a hand-written backward and four economies, none of which changes the result beyond
floating-point rounding:

1. **Block-causal skipping.** Queries go in blocks of ``block_size``; block ``i`` only
   meets keys ``0 .. end_i - 1``. With ``T = 100`` and blocks of 20, 60% of the ``T x T``
   entries are touched (all the masked ones are skipped, and only diagonal blocks are masked).
2. **Scales on the small side.** ``1/sqrt(D)`` multiplies ``q`` (``(B, H, T, D)``), not the
   scores; the dropout scale ``1/(1-p)`` multiplies ``v`` in the forward and ``dy`` in the
   backward, so the pattern is only ever zeroed, never rescaled.
3. **An integer dropout mask.** :func:`drop_mask` draws 31-bit integers
   (``Tensor.random_``) and compares them with ``p * 2^31``: ``P(drop) = p`` up to
   ``2^-31``, several times faster to draw on CPU than a float ``bernoulli_``. The kernel
   keeps the mask as 0/1 floats, since multiplying is far faster than ``masked_fill``.
4. **Wide products.** Products whose output has only ``D`` columns (``pattern @ v`` and
   the gradients of q, k, v) are computed transposed, ``(D, T)`` instead of ``(T, D)``,
   which CPU ``bmm`` runs several times faster for ``D = 4``.

The random stream differs from SDPA's, so a run trained with this kernel is not bitwise
the run trained with SDPA (both are deterministic given the seed); training checkpoints
record which attention path trained them, and a resumed run keeps it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .._checks import positive_int

__all__ = [
    "DEFAULT_BLOCK_SIZE", "drop_mask", "causal_attention", "drops_to_full",
]

DEFAULT_BLOCK_SIZE = 20
_DROP_SCALE = 2**31  # Tensor.random_() on int32 is uniform on {0, ..., 2^31 - 1}


def drop_mask(shape: tuple[int, ...], p: float, generator: torch.Generator | None = None,
              device: torch.device | str | None = None) -> Tensor:
    """Boolean dropout mask, ``True`` where an entry is dropped, ``P(True) = p``.

    Exact to ``2^-31``: ``r < round(p 2^31)`` for ``r`` uniform on 31-bit integers.
    :func:`causal_attention` draws its masks the same way, block by block.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p={p!r}: the dropout probability must lie in [0, 1)")
    r, threshold = _draw(shape, p, generator, device)
    return r < threshold


def _draw(shape, p, generator, device) -> tuple[Tensor, int]:
    """Uniform 31-bit integers of ``shape`` and the threshold below which an entry drops."""
    r = torch.empty(shape, dtype=torch.int32, device=device).random_(generator=generator)
    return r, round(p * _DROP_SCALE)


def _check(q: Tensor, k: Tensor, v: Tensor, dropout_p: float, block_size: int) -> None:
    if q.ndim != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(
            f"q, k, v must share one shape (B, H, T, D); got {tuple(q.shape)}, "
            f"{tuple(k.shape)}, {tuple(v.shape)}"
        )
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p={dropout_p!r}: must lie in [0, 1)")
    positive_int(block_size, "block_size")


def _blocks(T: int, block_size: int) -> list[tuple[int, int]]:
    return [(i0, min(i0 + block_size, T)) for i0 in range(0, T, block_size)]


class _CausalAttention(torch.autograd.Function):
    """Forward and backward of block-causal attention, given the per-block keep masks.

    Works on ``(B*H, T, D)`` and ``(B*H, D, T)`` contiguous copies of q, k, v (cheap: D is
    small) and computes every product whose output has only ``D`` columns in transposed
    form, so that each block product is a ``bmm`` with a wide output, several times faster
    on CPU for ``D = 4``. ``keeps[n]`` is block ``n``'s float keep mask (1 kept, 0 dropped),
    or ``None`` without dropout.
    """

    @staticmethod
    def forward(ctx, q: Tensor, k: Tensor, v: Tensor, dropout_p: float, block_size: int,
                keeps: list[Tensor] | None) -> Tensor:
        B, H, T, D = q.shape
        scale = 1.0 / math.sqrt(D)
        keep_scale = 1.0 / (1.0 - dropout_p) if keeps is not None else 1.0
        qs = q.reshape(B * H, T, D) * scale  # (BH, T, D), contiguous
        k3 = k.contiguous().view(B * H, T, D)  # (BH, T, D)
        vsT = (v.transpose(-2, -1) * keep_scale).reshape(B * H, D, T)  # (BH, D, T)
        yT = torch.empty(B * H, D, T, dtype=q.dtype, device=q.device)  # (BH, D, T)
        patterns, dropped = [], []
        for n, (i0, i1) in enumerate(_blocks(T, block_size)):
            s = torch.bmm(qs[:, i0:i1], k3[:, :i1].transpose(1, 2))  # (BH, b, i1) scores
            s[:, :, i0:i1] += _upper_bias(i1 - i0, q.dtype, q.device)  # causal: diagonal block
            p = torch.softmax(s, dim=-1)  # (BH, b, i1) [.., query, key]
            pk = p if keeps is None else p * keeps[n]  # dropped pattern (rescaled via v)
            yT[:, :, i0:i1] = torch.bmm(vsT[:, :, :i1], pk.transpose(1, 2))  # (BH, D, b)
            patterns.append(p)
            dropped.append(pk)
        ctx.save_for_backward(qs, k3, vsT)
        ctx.patterns, ctx.dropped, ctx.keeps = patterns, dropped, keeps
        ctx.scale, ctx.keep_scale, ctx.block_size = scale, keep_scale, block_size
        return yT.transpose(1, 2).reshape(B, H, T, D)

    @staticmethod
    def backward(ctx, dy: Tensor):
        qs, k3, vsT = ctx.saved_tensors
        B, H, T, D = dy.shape
        dy3 = dy.reshape(B * H, T, D)  # (BH, T, D)
        dysT = (dy3.transpose(1, 2) * ctx.keep_scale).contiguous()  # (BH, D, T)
        qsT = qs.transpose(1, 2).contiguous()  # (BH, D, T)
        kT = k3.transpose(1, 2).contiguous()  # (BH, D, T)
        dqT = torch.empty_like(qsT)  # (BH, D, T)
        dkT, dvT = torch.zeros_like(kT), torch.zeros_like(vsT)  # (BH, D, T)
        for n, (i0, i1) in enumerate(_blocks(T, ctx.block_size)):
            p, pk = ctx.patterns[n], ctx.dropped[n]  # (BH, b, i1)
            dvT[:, :, :i1] += torch.bmm(dysT[:, :, i0:i1], pk)  # (BH, D, i1)
            dpk = torch.bmm(dy3[:, i0:i1], vsT[:, :, :i1])  # (BH, b, i1) d dropped pattern
            if ctx.keeps is not None:
                dpk.mul_(ctx.keeps[n])  # d pattern (keep_scale is in vsT)
            ds = torch._softmax_backward_data(dpk, p, -1, p.dtype)  # (BH, b, i1) d scores
            dqT[:, :, i0:i1] = torch.bmm(kT[:, :, :i1], ds.transpose(1, 2))  # (BH, D, b)
            dkT[:, :, :i1] += torch.bmm(qsT[:, :, i0:i1], ds)  # (BH, D, i1)
        def back(t: Tensor, c: float = 1.0) -> Tensor:  # (BH, D, T) -> (B, H, T, D)
            return (t.transpose(1, 2) * c).reshape(B, H, T, D)

        return back(dqT, ctx.scale), back(dkT), back(dvT), None, None, None


_UPPER: dict[tuple[int, torch.dtype, str], Tensor] = {}


def _upper_bias(b: int, dtype: torch.dtype, device: torch.device) -> Tensor:
    """``-inf`` strictly above the diagonal of a ``b x b`` block, 0 elsewhere (cached)."""
    key = (b, dtype, str(device))
    if key not in _UPPER:
        upper = torch.ones(b, b, dtype=torch.bool, device=device).triu_(1)
        _UPPER[key] = torch.zeros(b, b, dtype=dtype, device=device).masked_fill_(
            upper, float("-inf"))
    return _UPPER[key]


def causal_attention(
    q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0, *,
    block_size: int = DEFAULT_BLOCK_SIZE, generator: torch.Generator | None = None,
    drops: list[Tensor] | None = None,
) -> Tensor:
    """Causal attention of ``q, k, v`` shaped ``(B, H, T, D)``, with attention dropout.

    Same function as ``scaled_dot_product_attention(q, k, v, dropout_p, is_causal=True)``
    (Section 4.1's attention); see the module docstring for how it is computed.
    ``drops`` (tests) gives the per-query-block drop masks, shaped ``(B, H, b, end)``;
    otherwise they are drawn with :func:`drop_mask` when ``dropout_p > 0``.
    """
    _check(q, k, v, dropout_p, block_size)
    B, H, T, _ = q.shape
    blocks = _blocks(T, block_size)
    keeps = None
    if drops is not None:
        want = [(B, H, i1 - i0, i1) for i0, i1 in blocks]
        if [tuple(d.shape) for d in drops] != want or any(d.dtype != torch.bool for d in drops):
            raise ValueError(f"drops must be boolean masks shaped {want}")
        keeps = [(~d).to(q.dtype).view(B * H, *d.shape[2:]) for d in drops]
    elif dropout_p > 0:
        # the same draws as drop_mask, kept as float weights: multiplying is much faster on
        # CPU than masked_fill with a boolean mask
        keeps = []
        for i0, i1 in blocks:
            r, threshold = _draw((B * H, i1 - i0, i1), dropout_p, generator, q.device)
            keeps.append(r.ge_(threshold).to(q.dtype))
    return _CausalAttention.apply(q, k, v, dropout_p, block_size, keeps)


def drops_to_full(drops: list[Tensor], T: int, block_size: int = DEFAULT_BLOCK_SIZE) -> Tensor:
    """The per-block drop masks as one ``(B, H, T, T)`` mask (False above the diagonal)."""
    B, H = drops[0].shape[:2]
    full = torch.zeros(B, H, T, T, dtype=torch.bool, device=drops[0].device)
    for d, (i0, i1) in zip(drops, _blocks(T, block_size), strict=True):
        full[:, :, i0:i1, :i1] = d
    return full & torch.ones(T, T, dtype=torch.bool, device=full.device).tril()
