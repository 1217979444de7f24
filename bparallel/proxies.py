"""Algorithms 1 and 2 of Section 4: mixing-time and minimax-fidelity proxies on attention.

Inputs are post-softmax attention patterns ``pattern`` shaped ``(..., H, T, T)``, i.e.
``[..., head, query_pos, key_pos]`` as in TransformerLens (``pattern[..., h, i, j]`` is head
``h``'s attention of query ``i`` on key ``j``; numpy or torch), and head weights shaped
``(..., H)`` or ``(H,)`` (broadcast against ``pattern.shape[:-3]``), or ``None`` for uniform
weights ``1/H``. Every leading dimension is a batch dimension: one call handles all
sequences and layers. Outputs are numpy float64.

The combined matrix is ``C = sum_h w_h A[h]`` (Definition 3.6 with ``beta = w``) and the
forward-transition matrix of both algorithms is ``P = C^T``: ``P[j, i] = C[i, j]`` moves
from position ``j`` to a position ``i >= j``. The last position ``T - 1`` is the sink.

Two modes:

- ``mode="paper"`` reproduces the published code. Algorithm 1 samples the next state by
  inverse-CDF on the *unnormalised* cumulative sums of row ``j`` of ``P``, clipping to the
  sink when the uniform draw exceeds the row total; Algorithm 2 takes the min over all
  start nodes, the sink included, with ``t = 1..horizon``.
- ``mode="definition"`` follows the definitions: the walk of Definition 2.3 (rows of ``P``
  normalised; a non-sink position without outgoing weight, where Definition 2.3 is
  undefined, waits there) and the min over non-sink nodes of Definition 3.5.

``method="exact"`` computes the expectation of Algorithm 1 in closed form (the walk is a
Markov chain: sum its survival probabilities); ``method="monte-carlo"`` samples it.

On the same walk, :func:`worst_case_mixing_time` is the exact mixing time of Definition
2.7 and :func:`hitting_time_profile` the expected hitting time of the sink per start,
untruncated and truncated; across layers, :func:`attention_rollout` is the attention
rollout of Abnar & Zuidema (2020).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import graphs
from ._checks import finite_array, one_of, positive_int, unit_interval
from .markov import reaches

MODES = ("paper", "definition")
METHODS = ("exact", "monte-carlo")
REDUCTIONS = ("mean", "max", "none")

_CHUNK = 8  # graphs per batched matrix-vector product (stays in cache at T = 100)
_FIDELITY_CHUNK = 32  # node fidelity: fewer calls per step (1.17x; the same values)
_MC_WALKS = 1 << 16  # walks simulated together in the Monte Carlo method
_TAIL_TOL = 1e-17  # early exit: bound on the survival mass still to add (sums are >= 1)
_DIRECT_STEPS = 128  # Definition 2.7, phase 1: at most this many steps v <- Q v (O(T^2) each)
_LOOKAHEAD = 16  # phase 1 checks every this many steps whether the waiting graphs are slow
_CAP_LOG2 = 62  # mixing times beyond 2^62 steps are reported as inf
_POWER_BYTES = 1 << 26  # phase 2: stored powers Q^(2^k) of one chunk, at most (64 MiB)
_SOLVE_CHUNK = 256  # graphs per batched back-substitution of the hitting times


# --------------------------------------------------------------------------- validation


def _check_pattern(
    pattern: Any, name: str = "pattern", layout: str = "(..., H, T, T)"
) -> np.ndarray:
    """Validated attention, float64 (float32 input stays float32 until combined)."""
    a = finite_array(pattern, name, keep_float32=True, nonnegative=True)
    dims = layout.count(",")  # the named dimensions after "..."
    if a.ndim < dims:
        raise ValueError(f"{name} has shape {a.shape}: expected {layout}, at least {dims} dims")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} has shape {a.shape}: the last two dimensions must be equal")
    if a.shape[-1] < 1 or a.shape[-3] < 1:
        raise ValueError(f"{name} has shape {a.shape}: needs at least one head and one position")
    return a


def _check_weights(head_weights: Any, pattern: np.ndarray) -> np.ndarray:
    """Weights broadcast to ``pattern.shape[:-2]`` = ``(..., H)``."""
    H = pattern.shape[-3]
    if head_weights is None:
        return np.full(pattern.shape[:-2], 1.0 / H)
    w = finite_array(head_weights, "head_weights", nonnegative=True)
    if w.ndim == 0 or w.shape[-1] != H:
        raise ValueError(
            f"head_weights has shape {w.shape}: its last dimension must equal the "
            f"number of heads H={H} of pattern (shape {pattern.shape})"
        )
    try:
        w = np.broadcast_to(w, pattern.shape[:-2])
    except ValueError:
        raise ValueError(
            f"head_weights has shape {w.shape}: does not broadcast against "
            f"pattern.shape[:-2]={pattern.shape[:-2]}"
        ) from None
    if w.size and np.any(w.sum(-1) == 0):
        raise ValueError("head_weights are all zero for at least one graph")
    return w


# --------------------------------------------------------------------------- head weights


def head_weights(out_proj_weight: Any, num_heads: int) -> np.ndarray:
    """Learned head importances of Section 4.2, ``(..., H)``, summing to 1.

    ``out_proj_weight`` is the output projection's weight ``(..., d_out, d_in)``; its
    columns are split into ``num_heads`` blocks of ``d_in / num_heads`` columns (one per
    head, in concatenation order); each head's raw score is the Frobenius norm of its block.
    """
    w = finite_array(out_proj_weight, "out_proj_weight")
    positive_int(num_heads, "num_heads")
    if w.ndim < 2:
        raise ValueError(f"out_proj_weight has shape {w.shape}: expected (..., d_out, d_in)")
    d_in = w.shape[-1]
    if d_in % num_heads:
        raise ValueError(f"num_heads={num_heads} does not divide d_in={d_in} of out_proj_weight")
    blocks = w.reshape(*w.shape[:-1], num_heads, d_in // num_heads)  # (..., d_out, H, D)
    norms = np.sqrt((blocks**2).sum(axis=(-3, -1)))  # (..., H)
    total = norms.sum(-1, keepdims=True)
    if np.any(total == 0):
        raise ValueError("out_proj_weight is all zero: head weights are undefined")
    return norms / total


def _sum_heads(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_h w_h A[h]`` of validated ``a`` ``(..., H, T, T)`` and ``w`` ``(..., H)``, a new
    float64 array (summed in float32 for float32 patterns)."""
    return graphs.head_sum(a, w.astype(a.dtype)).astype(np.float64, copy=False)


def combine_heads(pattern: Any, head_weights: Any = None) -> np.ndarray:
    """``C = sum_h w_h A[h]``, ``(..., T, T)`` (Definition 3.6; Algorithms 1-2, line 2)."""
    a = _check_pattern(pattern)
    return _sum_heads(a, _check_weights(head_weights, a))  # (..., T, T)


def _combined(pattern: Any, head_weights: Any) -> np.ndarray:
    """:func:`combine_heads`, except that one head of weight 1, its own combination
    (``1 * A`` is ``A`` exactly), comes back as the pattern itself (a view; float32 kept),
    for kernels that copy ``C`` chunk by chunk into float64 buffers: the same values."""
    a = _check_pattern(pattern)
    w = _check_weights(head_weights, a)
    if a.shape[-3] == 1 and np.all(w == 1.0):
        return a[..., 0, :, :]
    return _sum_heads(a, w)


def _forward(pattern: Any, head_weights: Any) -> np.ndarray:
    """``P = C^T``, ``(..., T, T)``: row ``j`` holds the moves out of position ``j``."""
    return np.swapaxes(combine_heads(pattern, head_weights), -1, -2)


def _forward_view(pattern: Any, head_weights: Any) -> tuple[np.ndarray, tuple[int, ...], int]:
    """``P = C^T`` of every graph as an ``(N, T, T)`` view of :func:`_combined` (no copy of
    its own; float32 when the pattern is one float32 head), with the batch shape and ``T``,
    for the kernels that copy ``P`` chunk by chunk into float64 buffers (:func:`_chunks`)."""
    C = _combined(pattern, head_weights)  # (..., T, T)
    batch, T = C.shape[:-2], C.shape[-1]
    return np.swapaxes(C.reshape(-1, T, T), -1, -2), batch, T


def _forward_flat(
    pattern: Any, head_weights: Any, mode: str
) -> tuple[np.ndarray, tuple[int, ...], int]:
    """``P = C^T`` of every graph, flattened to ``(N, T, T)``, with the batch shape and ``T``;
    in definition mode, positions without outgoing weight wait (:func:`_patch_empty_rows`)."""
    P, batch, T = _forward_view(pattern, head_weights)
    P = np.ascontiguousarray(P, dtype=np.float64)  # (N, T, T): one copy
    if mode == "definition":
        P = _patch_empty_rows(P)
    return P, batch, T


# --------------------------------------------------------------------------- Algorithm 1


def _paper_chain(
    P: np.ndarray, out: np.ndarray | None = None, work: np.ndarray | None = None
) -> np.ndarray:
    """The Markov chain implied by inverse-CDF sampling on unnormalised rows of ``P``.

    ``next = first k with cumsum(P[j])[k] >= r``, ``r ~ U(0, 1)``, clipped to ``T - 1``:
    ``Q[j, k] = min(cs[k], 1) - min(cs[k-1], 1)`` for ``k < T-1`` and
    ``Q[j, T-1] = 1 - min(cs[T-2], 1)``. ``out`` and ``work`` (shaped like ``P``) are
    optional buffers.
    """
    cc = np.cumsum(P, axis=-1, out=work)  # (..., T, T)
    np.minimum(cc, 1.0, out=cc)
    Q = np.empty_like(cc) if out is None else out  # (..., T, T)
    Q[..., 0] = cc[..., 0]
    np.subtract(cc[..., 1:], cc[..., :-1], out=Q[..., 1:])
    Q[..., -1] = 1.0 - cc[..., -2] if P.shape[-1] > 1 else 1.0
    return Q


def _definition_chain(P: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Definition 2.3: each row of ``P`` divided by its sum (empty rows patched first)."""
    sums = P.sum(-1, keepdims=True)  # (..., T, 1)
    sums[sums == 0] = 1.0  # only the sink row can still be empty; the caller replaces it
    return np.divide(P, sums, out=out)


def _patch_empty_rows(P: np.ndarray) -> np.ndarray:
    """Definition mode: a non-sink position with no outgoing weight (a zero column of ``C``)
    gets a self-loop, so the walk waits there (Definition 2.3 is undefined for it)."""
    empty = P[..., :-1, :].sum(-1) == 0  # (..., T-1)
    if not np.any(empty):
        return P
    P = P.copy()
    idx = np.nonzero(empty)
    P[(*idx, idx[-1])] = 1.0  # P[..., j, j] = 1
    return P


def transition_matrix(pattern: Any, head_weights: Any = None, *, mode: str = "paper") -> np.ndarray:
    """Row-stochastic transition matrix ``(..., T, T)`` of Algorithm 1's walk, sink absorbing.

    ``mode="paper"``: the chain implied by the published sampler; ``"definition"``: the
    normalised walk of Definition 2.3 on ``P = C^T``.
    """
    one_of(mode, "mode", MODES)
    P = _forward(pattern, head_weights)
    if mode == "definition":
        P = _patch_empty_rows(P)
    return _chain(P, mode)


def _chain(
    P: np.ndarray, mode: str, out: np.ndarray | None = None, work: np.ndarray | None = None
) -> np.ndarray:
    """The walk's transition matrix for a forward matrix ``P``, the sink made absorbing."""
    Q = _paper_chain(P, out, work) if mode == "paper" else _definition_chain(P, out)
    Q[..., -1, :] = 0.0
    Q[..., -1, -1] = 1.0
    return Q


def _chunks(P: np.ndarray, size: int = _CHUNK):
    """``(start, chunk)`` over the graphs of ``P`` ``(N, T, T)``; ``chunk`` is a reused
    contiguous float64 buffer of at most ``size`` graphs (valid until the next iteration)."""
    N, T, _ = P.shape
    buf = np.empty((min(size, N), T, T))
    for s in range(0, N, size):
        n = min(size, N - s)
        np.copyto(buf[:n], P[s : s + n])
        yield s, buf[:n]


def _survival_sums(P: np.ndarray, mode: str, max_steps: int) -> np.ndarray:
    """``E[min(tau, M)] = sum_{t<M} P(tau > t)`` for every start, ``(N, T)`` (sink 0).

    ``P(tau > t)`` from every start at once is ``Q^t u`` with ``Q`` the walk's chain (sink
    absorbing) and ``u`` = 1 off the sink, 0 at it; graphs go in small chunks that stay in
    cache. The loop stops early only when the remaining terms are below float64 rounding.
    """
    N, T, _ = P.shape
    out = np.zeros((N, T))
    if T == 1:
        return out
    Qbuf, work = np.empty((2, min(_CHUNK, N), T, T))
    vbuf = np.empty((2, min(_CHUNK, N), T, 1))
    for s, Pc in _chunks(P):
        Q = _chain(Pc, mode, Qbuf[: len(Pc)], work[: len(Pc)])  # (n, T, T)
        n = Q.shape[0]
        v, spare = vbuf[0, :n], vbuf[1, :n]
        v[...] = 1.0  # (n, T, 1): P(tau > 0) = 1 off the sink
        v[:, -1] = 0.0
        total = v.copy()
        # Traps: rows with Q[j, j] = 1 exactly (the paper sampler's position 0, whose column
        # of C sums to >= 1 from C[0, 0] = 1 alone). Their survival stays exactly 1.
        diag = np.diagonal(Q, axis1=-2, axis2=-1)  # (n, T)
        trap = (diag == 1.0) & (Q.sum(-1) - diag == 0.0)
        trap[:, -1] = False
        moving = ~trap[..., None]  # (n, T, 1)
        for t in range(1, max_steps):
            np.matmul(Q, v, out=spare)  # (n, T, 1): P(tau > t); the sink row keeps 0
            v, spare = spare, v
            total += v
            if t % 8 == 0 and (max_steps - 1 - t) * np.max(v, where=moving,
                                                            initial=0.0) < _TAIL_TOL:
                # The other rows' remaining terms cannot change the float64 sums (>= 1);
                # the traps' remaining terms are exactly 1 each.
                total[..., 0] += trap * float(max_steps - 1 - t)
                break
        out[s : s + _CHUNK] = total[..., 0]
    return out


def _cumulative_rows(P: np.ndarray, mode: str) -> np.ndarray:
    """The cumulative sums that the sampler compares a uniform draw with, ``(N, T, T)``."""
    cs = np.cumsum(P, axis=-1)
    if mode == "definition":
        tot = cs[..., -1:].copy()
        tot[tot == 0] = 1.0
        cs = cs / tot
    return cs


def _first_at_least(cs_flat: np.ndarray, base: np.ndarray, r: np.ndarray, T: int) -> np.ndarray:
    """For each walk, the first ``k`` with ``cs_flat[base + k] >= r`` (``T`` if none).

    A vectorised binary search (each row is non-decreasing): ``ceil(log2(T + 1))`` gathers
    of one value per walk instead of comparing whole rows; comparisons are exact.
    """
    lo = np.zeros(r.shape, dtype=np.int64)
    hi = np.full(r.shape, T, dtype=np.int64)
    for _ in range(int(np.ceil(np.log2(T + 1)))):
        mid = (lo + hi) >> 1
        below = cs_flat[base + np.minimum(mid, T - 1)] < r  # (A,)
        open_ = lo < hi
        lo = np.where(open_ & below, mid + 1, lo)
        hi = np.where(open_ & ~below, mid, hi)
    return lo


def _simulate_walks(
    cs: np.ndarray, max_steps: int, num_simulations: int, rng: np.random.Generator
) -> np.ndarray:
    """Hitting times ``min(tau, M)`` of ``S`` walks from every start, ``(N, T, S)`` int.

    One step of every live walk at once: draw ``r ~ U(0, 1)``, move to the first ``k`` with
    ``cs[j, k] >= r``, clipped to the sink ``T - 1`` when there is none (the published
    sampler on unnormalised rows).
    """
    N, T, _ = cs.shape
    S = num_simulations
    times = np.zeros((N, T, S), dtype=np.int64)
    step = max(1, _MC_WALKS // (T * S))
    for g0 in range(0, N, step):
        n = min(step, N - g0)
        cs_flat = np.ascontiguousarray(cs[g0 : g0 + n]).reshape(-1)  # rows of (graph, state)
        graph = np.repeat(np.arange(n), T * S)  # (W,) graph of each walk
        pos = np.tile(np.repeat(np.arange(T), S), n)  # (W,) current state, starts first
        t_walk = np.zeros(n * T * S, dtype=np.int64)
        live = np.flatnonzero(pos != T - 1)  # walks not yet at the sink
        for _ in range(max_steps):
            if live.size == 0:
                break
            base = (graph[live] * T + pos[live]) * T  # (A,) start of each walk's row
            r = rng.random(live.size)  # (A,)
            nxt = np.minimum(_first_at_least(cs_flat, base, r, T), T - 1)  # inverse CDF
            pos[live] = nxt
            t_walk[live] += 1
            live = live[nxt != T - 1]
        times[g0 : g0 + n] = t_walk.reshape(n, T, S)
    return times


def _reduce_starts(values: np.ndarray, reduce: str) -> np.ndarray:
    if reduce == "mean":
        return values.mean(-1)
    if reduce == "max":
        return values.max(-1)
    return values


def mixing_time_proxy(
    pattern: Any,
    head_weights: Any = None,
    *,
    mode: str = "paper",
    method: str = "exact",
    reduce: str = "mean",
    max_steps: int = 100,
    num_simulations: int = 500,
    seed: int | np.random.Generator | None = None,
    return_stderr: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Algorithm 1: mean over start states of the truncated hitting time of the sink.

    Per graph, ``E[min(tau, max_steps)]`` from every start state (the sink contributes 0),
    reduced over the ``T`` start states by ``reduce``: ``"mean"`` (Algorithm 1), ``"max"``
    (the worst case that Definition 2.7 asks for) or ``"none"`` (all starts, ``(..., T)``).
    Returns an array of shape ``pattern.shape[:-3]`` (plus ``(T,)`` for ``"none"``), and the
    Monte Carlo standard errors too when ``return_stderr`` (zeros for ``"exact"``; for
    ``"max"``, the standard error of the maximising start's mean).
    """
    one_of(mode, "mode", MODES)
    one_of(method, "method", METHODS)
    one_of(reduce, "reduce", REDUCTIONS)
    positive_int(max_steps, "max_steps")
    positive_int(num_simulations, "num_simulations")
    P, batch, T = _forward_flat(pattern, head_weights, mode)  # (N, T, T)
    if method == "exact":
        per_start = _survival_sums(P, mode, max_steps)
        stderr_start = np.zeros_like(per_start)
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        times = _simulate_walks(_cumulative_rows(P, mode), max_steps, num_simulations, rng)
        per_start = times.mean(-1)  # (N, T)
        var = times.var(-1, ddof=1) if num_simulations > 1 else np.zeros_like(per_start)
        stderr_start = np.sqrt(var / num_simulations)  # (N, T)
    value = _reduce_starts(per_start, reduce)
    if reduce == "mean":
        stderr = np.sqrt((stderr_start**2).sum(-1)) / T
    elif reduce == "max":
        stderr = np.take_along_axis(stderr_start, per_start.argmax(-1)[:, None], -1)[:, 0]
    else:
        stderr = stderr_start
    shape = batch + ((T,) if reduce == "none" else ())
    value, stderr = value.reshape(shape), stderr.reshape(shape)
    return (value, stderr) if return_stderr else value


def reference_walk_times(
    pattern: Any,
    head_weights: Any = None,
    *,
    mode: str = "paper",
    max_steps: int = 100,
    num_simulations: int = 500,
    seed: int | None = None,
) -> np.ndarray:
    """Algorithm 1 walk by walk, as plain Python loops (slow; for tests and benchmarks).

    One graph only (``pattern`` shaped ``(H, T, T)``). Returns the hitting times
    ``min(tau, max_steps)``, ``(T, num_simulations)`` int. Paper mode draws ``r`` and takes
    the first index whose unnormalised cumulative sum is ``>= r``, clipped to the sink;
    definition mode draws from the normalised row.
    """
    one_of(mode, "mode", MODES)
    positive_int(max_steps, "max_steps")
    positive_int(num_simulations, "num_simulations")
    P = _forward(pattern, head_weights)
    if P.ndim != 2:
        raise ValueError(f"pattern has shape {np.shape(pattern)}: expected one graph (H, T, T)")
    if mode == "definition":
        P = _patch_empty_rows(P)
    T = P.shape[-1]
    rng = np.random.default_rng(seed)
    cs = np.cumsum(P, axis=-1)
    times = np.zeros((T, num_simulations), dtype=np.int64)
    for i in range(T):
        for s in range(num_simulations):
            j, t = i, 0
            while j != T - 1 and t < max_steps:
                if mode == "paper":
                    r = rng.random()
                    j = min(int(np.searchsorted(cs[j], r, side="left")), T - 1)
                else:
                    j = int(rng.choice(T, p=P[j] / P[j].sum()))
                t += 1
            times[i, s] = t
    return times


# --------------------------------------------------------------------------- Definition 2.7


def _leave_tol(T: int) -> float:
    """Probability of leaving a position below which the leaving is rounding: ``T u``."""
    return T * float(np.finfo(np.float64).eps)


def _traps(Q: np.ndarray) -> np.ndarray:
    """Non-sink positions the walk never leaves, ``(n, T)``: off-diagonal mass of the row at
    most ``_leave_tol`` (the paper sampler's position 0, whose ``Q[0, 0] = 1`` up to the
    rounding of the head weights' sum; definition mode's waiting positions)."""
    diag = np.diagonal(Q, axis1=-2, axis2=-1)  # (n, T)
    trap = Q.sum(-1) - diag <= _leave_tol(Q.shape[-1])
    trap[..., -1] = False
    return trap


def _is_triangular(Q: np.ndarray) -> np.ndarray:
    """Per graph, ``Q`` upper triangular (the walk only moves forward: causal attention)."""
    return ~np.any(np.tril(Q, -1) > 0, axis=(-2, -1))


def _lost_starts(Q: np.ndarray) -> np.ndarray:
    """Starts absorbed at the sink with probability < 1, ``(n, T)`` bool: those that can
    reach a trap or another position that cannot reach the sink (any chain)."""
    moves = Q > 0
    moves[_traps(Q)] = False  # (n, T, T): a trap's rounding-level moves are not moves
    R = reaches(moves)  # (n, T, T): R[g, a, b] iff b is reachable from a
    stuck = ~R[..., :, -1]  # (n, T): cannot reach the sink
    return np.any(R & stuck[..., None, :], axis=-1)


def _step_to_mixing(
    Q: np.ndarray, eps: float, skip: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Phase 1 on a chunk ``Q`` ``(n, T, T)``: ``v_t = Q v_{t-1}``, ``v_0 = u`` (1 off the
    sink), so ``v_t[i] = P(tau_i > t)``, the sum of row ``i`` of ``Q^t`` off the sink.

    Returns the first ``t`` with ``max_i v_t[i] <= eps`` per graph (-1 where not yet), the
    survival vectors ``(n, T, 1)`` at the last step taken, and that step. Stops when every
    graph but the ``skip`` ones has mixed, after ``_DIRECT_STEPS`` steps, or earlier when the
    decay of the last ``_LOOKAHEAD`` steps predicts that no waiting graph mixes by then
    (phase 2 is cheaper for those; the prediction only affects speed, never the result).
    """
    n, T, _ = Q.shape
    v = np.ones((n, T, 1))
    v[:, -1] = 0.0  # t = 0: every non-sink start survives
    spare = np.empty_like(v)
    t_mix = np.full(n, -1, dtype=np.int64)
    waiting = ~skip
    m_before = np.ones(n)  # worst survival _LOOKAHEAD steps ago
    t = 0
    while t < _DIRECT_STEPS and waiting.any():
        t += 1
        np.matmul(Q, v, out=spare)  # (n, T, 1): O(T^2) a graph; the sink row keeps 0
        v, spare = spare, v
        m = v.max(axis=(1, 2))  # (n,): the worst start's distance to stationarity
        mixed = waiting & (m <= eps)
        t_mix[mixed] = t
        waiting &= ~mixed
        if t % _LOOKAHEAD == 0 and waiting.any():
            rate = np.log(m[waiting] / m_before[waiting])  # <= 0 per _LOOKAHEAD steps
            to_go = np.log(eps / m[waiting])  # < 0
            # steps still needed ~ _LOOKAHEAD * to_go / rate <= _DIRECT_STEPS - t ?
            soon = (rate < 0) & (_LOOKAHEAD * to_go >= (_DIRECT_STEPS - t) * rate)
            if not soon.any():
                break
            m_before = m
    return t_mix, v, t


def _square(M: np.ndarray, upper: bool) -> np.ndarray:
    """``M @ M`` for ``(n, m, m)``; for upper-triangular ``M``, by ``2 x 2`` blocks
    ``[[A, B], [0, D]]^2 = [[A^2, AB + BD], [0, D^2]]`` (half the flops of a full product)."""
    m = M.shape[-1]
    if not upper or m < 16:
        return M @ M
    h = m // 2
    A, B, D = M[:, :h, :h], M[:, :h, h:], M[:, h:, h:]
    out = np.empty_like(M)  # (n, m, m)
    out[:, :h, :h] = A @ A
    out[:, h:, h:] = D @ D
    out[:, h:, :h] = 0.0
    AB = A @ B  # (n, h, m-h)
    AB += B @ D
    out[:, :h, h:] = AB
    return out


def _lift_to_mixing(
    R: np.ndarray, v: np.ndarray, start: np.ndarray, eps: float, upper: bool
) -> np.ndarray:
    """Phase 2: the least ``t`` with ``max_i P(tau_i > t) <= eps``, from ``start`` ``(n,)``
    where the survivals ``v`` ``(n, m, 1)`` still exceed ``eps``; ``inf`` past the cap.

    ``R`` ``(n, m, m)`` is the chain without the sink (``m = T - 1``; survival is ``R^t 1``),
    ``upper`` says it is upper triangular. Galloping on ``R^(2^k)`` (one squaring a level):
    ``v <- R^(2^k) v`` while the worst survival stays above ``eps``; then binary lifting back
    down the stored powers, by matrix-vector products. ``O(log t)`` squarings in all; the
    distance is non-increasing in ``t``, so the search is exact.
    """
    n = R.shape[0]
    s = start.astype(np.int64)  # (n,): the latest time known to be above eps
    top = np.full(n, -1)  # per graph, the k with f(s + 2^k) <= eps; -1: beyond the cap
    levels = []  # level k: (the graphs with top > k, their R^(2^k))
    idx, M = np.arange(n), R
    for k in range(_CAP_LOG2):
        w = M @ v[idx]  # (a, m, 1): survival at s + 2^k
        above = w.max(axis=(1, 2)) > eps
        if not above.all():
            top[idx[~above]] = k
            idx, M, w = idx[above], M[above], w[above]
            if not idx.size:
                break
        levels.append((idx, M))
        v[idx] = w
        s[idx] += 1 << k
        if k + 1 < _CAP_LOG2:
            M = _square(M, upper)  # (a, m, m): R^(2^(k+1))
    for j in range(top.max() - 1, -1, -1):  # f(s + 2^(j+1)) <= eps < f(s) here
        graphs, M = levels[j]
        w = M @ v[graphs]  # (a, m, 1): survival at s + 2^j
        above = w.max(axis=(1, 2)) > eps
        v[graphs[above]] = w[above]
        s[graphs[above]] += 1 << j
    return np.where(top >= 0, s + 1.0, np.inf)


def _mixing_times(P: np.ndarray, mode: str, eps: float) -> np.ndarray:
    """Definition 2.7 for every graph of ``P`` ``(N, T, T)``: ``(N,)`` float64."""
    N, T, _ = P.shape
    out = np.zeros(N)
    if T == 1 or N == 0:
        return out  # the sink alone is stationary at t = 0
    later = []  # phase 2's graphs: (indices, survival vectors, time reached)
    Qbuf, work = np.empty((2, min(_CHUNK, N), T, T))
    for s, Pc in _chunks(P):
        Q = _chain(Pc, mode, Qbuf[: len(Pc)], work[: len(Pc)])  # (n, T, T)
        res = out[s : s + len(Q)]
        trapped = _traps(Q).any(-1)  # a trap's survival stays 1 > eps: never mixes
        res[trapped] = np.inf
        if trapped.all():
            continue
        t_mix, v, t = _step_to_mixing(Q, eps, trapped)
        res[t_mix >= 0] = t_mix[t_mix >= 0]
        rest = np.flatnonzero((t_mix < 0) & ~trapped)
        if rest.size:
            later.append((s + rest, v[rest, :-1], np.full(rest.size, t)))
    if not later:
        return out
    idx, v, start = (np.concatenate(x) for x in zip(*later, strict=True))
    n2 = max(1, min(_CHUNK, _POWER_BYTES // (8 * T * T * _CAP_LOG2)))
    for a in range(0, idx.size, n2):
        g, vg, sg = idx[a : a + n2], v[a : a + n2], start[a : a + n2]
        Q = _chain(P[g], mode)  # (n, T, T)
        # the sink's column only ever multiplies survival 0: phase 2 leaves the sink out
        R = np.ascontiguousarray(Q[:, :-1, :-1])  # (n, T-1, T-1)
        upper = _is_triangular(Q)
        never = np.zeros(len(g), dtype=bool)  # a walk that moves back may have a closed
        never[~upper] = _lost_starts(Q[~upper]).any(-1)  # class without the sink: inf
        out[g[never]] = np.inf
        for tri in (True, False):
            sel = (upper == tri) & ~never
            if sel.any():
                out[g[sel]] = _lift_to_mixing(R[sel], vg[sel], sg[sel], eps, tri)
    return out


def worst_case_mixing_time(
    pattern: Any, head_weights: Any = None, *, mode: str = "definition", eps: float = 0.25
) -> np.ndarray:
    """Definition 2.7 (Eq. 2) on the walk of Algorithm 1: exact mixing time per graph.

    The walk is the chain :func:`transition_matrix` returns (same ``mode``), sink absorbing.
    Its stationary distribution is the sink's point mass (Lemmas 2.5-2.6), so the total
    variation distance after ``t`` steps from start ``i`` is ``P(tau_i > t)``, the sum of
    the non-sink entries of row ``i`` of ``Q^t``. Returns the least integer ``t >= 0`` with
    ``max_i P(tau_i > t) <= eps``, float64 of shape ``pattern.shape[:-3]``; ``np.inf`` where
    the walk never gets there, because some position cannot reach the sink (its survival
    stays 1): paper mode's position 0, whose row is ``Q[0, 0] = 1`` for causal attention;
    definition mode's waiting positions; in a non-causal walk, a closed class.

    The same numbers as ``markov.mixing_time(Q^T, eps)`` (its ``W`` is column-stochastic;
    it counts distances within ``1e-12`` of ``eps`` as reached and gives up after ``2^40``
    steps), in two phases: ``v_t = Q v_{t-1}`` step by step (``O(T^2)`` a step) for graphs
    that mix within ``_DIRECT_STEPS`` steps, then galloping on ``Q^(2^k)`` and binary
    lifting (``O(T^3 log t)``) for the slow ones. Memory stays bounded: ``_CHUNK`` graphs at
    a time, at most ``_POWER_BYTES`` of stored powers in phase 2.

    Precision: survivals are sums of non-negative terms (no ``1 - x`` cancellation) with
    relative rounding error up to about ``t T u`` (``u = 2^-53``), while near the crossing
    they fall by a relative ``ln(1/eps) / t`` a step; so ``t`` is exact to the step while
    ``t^2 T u << ln(1/eps)`` (up to ``t ~ 1e6`` at ``T = 100``), and beyond that carries a
    relative uncertainty of about ``t T u``: on the shipped single-head copy model
    (``t ~ 5e7 .. 1e12``) this function and ``markov.mixing_time`` differ by 1 step to a
    relative ``1e-5``. A position that leaves with probability at most ``T 2^-52`` a step
    counts as a trap (its leaving is rounding, e.g. of the head weights' sum): ``inf``.
    Mixing times beyond ``2^62`` steps are ``inf``; finite ones above ``2^53`` are rounded.
    """
    one_of(mode, "mode", MODES)
    eps = unit_interval(eps, "eps", closed=False)
    P, batch, T = _forward_flat(pattern, head_weights, mode)  # (N, T, T)
    return _mixing_times(P, mode, eps).reshape(batch)


# --------------------------------------------------------------------------- hitting times


class HittingTimes(NamedTuple):
    """Expected hitting times of the sink from every start position, ``(..., T)`` (sink 0).

    ``exact``: ``E[tau]`` (``inf`` where the sink is reached with probability ``< 1``);
    ``truncated``: Algorithm 1's ``E[min(tau, max_steps)]``.
    """

    exact: np.ndarray
    truncated: np.ndarray


def _hitting_triangular(Q: np.ndarray) -> np.ndarray:
    """``(I - Q_transient) h = 1`` by back-substitution for upper-triangular ``Q``, ``(n, T)``.

    Position ``j`` only moves to ``k >= j``: ``h_j = (1 + sum_{j<k<T-1} Q[j, k] h_k) /
    (1 - Q[j, j])``. ``h_j = inf`` at a trap (:func:`_traps`) and wherever a trap is
    reachable with positive probability (absorption probability ``< 1``).
    """
    n, T, _ = Q.shape
    h = np.zeros((n, T))
    tol = _leave_tol(T)
    for j in range(T - 2, -1, -1):
        row = Q[:, j, j + 1 : T - 1]  # (n, T-2-j): moves to later non-sink positions
        later = h[:, j + 1 : T - 1]
        lost = np.isinf(later)
        total = np.einsum("nk,nk->n", row, np.where(lost, 0.0, later))  # (n,)
        moves = Q[:, j, j + 1 :]  # (n, T-1-j): every move out of j, the sink included
        inf = (moves.sum(-1) <= tol) | np.any((row > 0) & lost, axis=-1)  # trap, reaches one
        stay = 1.0 - Q[:, j, j]  # exact for Q[j, j] >= 1/2
        stay = np.where(stay > 0, stay, moves.sum(-1))  # Q[j, j] rounded to 1: its moves
        h[:, j] = np.where(inf, np.inf, (1.0 + total) / np.where(inf, 1.0, stay))
    return h


def _hitting_general(Q: np.ndarray) -> np.ndarray:
    """``(I - Q_transient) h = 1`` by ``np.linalg.solve`` for any chain, ``(n, T)``: the rows
    of starts absorbed with probability ``< 1`` are replaced by ``h = inf``."""
    n, T, _ = Q.shape
    lost = _lost_starts(Q)[:, :-1]  # (n, T-1); the other starts never move to these
    A = np.eye(T - 1) - Q[:, :-1, :-1]  # (n, T-1, T-1)
    g, i = np.nonzero(lost)
    A[g, i, :] = 0.0
    A[g, i, i] = 1.0
    rhs = np.where(lost, 0.0, 1.0)[..., None]  # (n, T-1, 1)
    h = np.zeros((n, T))
    h[:, :-1] = np.where(lost, np.inf, np.linalg.solve(A, rhs)[..., 0])
    return h


def _expected_hitting_times(P: np.ndarray, mode: str) -> np.ndarray:
    """``E[tau]`` from every start of every graph of ``P`` ``(N, T, T)``, ``(N, T)``."""
    N, T, _ = P.shape
    h = np.zeros((N, T))
    if T == 1:
        return h
    for s in range(0, N, _SOLVE_CHUNK):
        Q = _chain(P[s : s + _SOLVE_CHUNK], mode)  # (n, T, T), a new array
        tri = _is_triangular(Q)
        hs = h[s : s + len(Q)]
        if tri.any():
            hs[tri] = _hitting_triangular(Q[tri])
        if not tri.all():
            hs[~tri] = _hitting_general(Q[~tri])
    return h


def hitting_time_profile(
    pattern: Any, head_weights: Any = None, *, mode: str = "definition", max_steps: int = 100
) -> HittingTimes:
    """Expected hitting times of the sink per start position, untruncated and truncated.

    On the walk of Algorithm 1 (:func:`transition_matrix`, same ``mode``): ``exact`` is
    ``E[tau]``, the solution of ``(I - Q_transient) h = 1`` of the absorbing chain (by
    back-substitution, the chain being upper triangular for causal attention; a general
    solve otherwise), 0 at the sink and ``inf`` where the sink is reached with probability
    ``< 1`` (a reachable trap, e.g. paper mode's position 0). ``truncated`` is Algorithm 1's
    ``E[min(tau, max_steps)]``, the per-start values of ``mixing_time_proxy(...,
    method="exact", reduce="none")`` (the same code). Both are ``pattern.shape[:-3] + (T,)``;
    ``truncated`` tends to ``exact`` as ``max_steps`` grows.
    """
    one_of(mode, "mode", MODES)
    positive_int(max_steps, "max_steps")
    P, batch, T = _forward_flat(pattern, head_weights, mode)  # (N, T, T)
    exact = _expected_hitting_times(P, mode)
    truncated = _survival_sums(P, mode, max_steps)
    return HittingTimes(exact.reshape(*batch, T), truncated.reshape(*batch, T))


# --------------------------------------------------------------------------- Algorithm 2


class NodeFidelity(NamedTuple):
    """Node fidelity in percent and the optimal fidelity time (Defs 3.3-3.4), ``(..., T)``."""

    phi: np.ndarray
    t_opt: np.ndarray | None


def _node_fidelity(
    P: np.ndarray, horizon: int, mode: str, with_times: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """``max_t (P^t)[j, T-1]`` and its first argmax for every node ``j``, ``(N, T)``.

    Only the sink column of ``P^t`` is needed: ``u_t = P u_{t-1}``, ``u_1 = P[:, T-1]``.
    Both modes use ``t = 1..horizon``, as Algorithm 2 and ``bparallel.fidelity`` do (at
    ``t = 0`` only the sink has signal); the modes differ in the walk and the minimum.
    """
    N, T, _ = P.shape
    phi = np.zeros((N, T))
    t_opt = np.zeros((N, T), dtype=np.int64) if with_times else None
    ubuf = np.empty((2, min(_FIDELITY_CHUNK, N), T, 1))
    for s, Pc in _chunks(P, _FIDELITY_CHUNK):  # Pc (n, T, T)
        n = Pc.shape[0]
        u, spare = ubuf[0, :n], ubuf[1, :n]
        u[...] = Pc[..., -1:]  # (n, T, 1): t = 1
        best = phi[s : s + n]  # (n, T), written in place
        if with_times:
            arg = t_opt[s : s + n]
            arg[:] = 1
        for t in range(1, horizon + 1):
            if t > 1:
                np.matmul(Pc, u, out=spare)  # (n, T, 1): sink column of P^t
                u, spare = spare, u
            if with_times:
                better = u[..., 0] > best
                best[better] = u[..., 0][better]
                arg[better] = t
            else:
                np.maximum(best, u[..., 0], out=best)
    return phi, t_opt


def node_fidelity_proxy(
    pattern: Any,
    head_weights: Any = None,
    *,
    mode: str = "paper",
    horizon: int = 100,
    times: bool = True,
) -> NodeFidelity:
    """Node fidelity ``phi_j`` in percent and optimal time ``t_j`` (Defs 3.3-3.4, 3.9).

    ``phi_j = 100 max_t (C^t)[T-1, j]`` with ``C`` the weighted combination playing the role
    of the diffusion matrix ``Delta``; ``t`` ranges over ``1..horizon`` in both modes (as in
    ``bparallel.fidelity``); ``t_j`` is the first time attaining the max (``None`` when
    ``times=False``, which is faster). Both arrays are ``pattern.shape[:-3] + (T,)``.
    """
    one_of(mode, "mode", MODES)
    positive_int(horizon, "horizon")
    P, batch, T = _forward_view(pattern, head_weights)
    phi, t_opt = _node_fidelity(P, horizon, mode, with_times=times)
    return NodeFidelity(100.0 * phi.reshape(*batch, T),
                        None if t_opt is None else t_opt.reshape(*batch, T))


def _minimax(phi: np.ndarray, mode: str) -> np.ndarray:
    if mode == "paper":
        return phi.min(-1)  # all start nodes, the sink included
    if phi.shape[-1] < 2:
        raise ValueError("definition mode needs T >= 2: the min runs over non-sink nodes")
    return phi[..., :-1].min(-1)  # Definition 3.5: non-sink nodes


def minimax_fidelity_proxy(
    pattern: Any, head_weights: Any = None, *, mode: str = "paper", horizon: int = 100
) -> np.ndarray:
    """Algorithm 2: minimax fidelity ``100 min_j max_t (P^t)[j, T-1]``, ``pattern.shape[:-3]``.

    ``mode="paper"``: min over all start nodes (the sink included), ``t = 1..horizon``, as
    the published code; ``mode="definition"``: min over non-sink nodes (Definition 3.5).
    """
    one_of(mode, "mode", MODES)
    positive_int(horizon, "horizon")
    P, batch, T = _forward_view(pattern, head_weights)
    phi, _ = _node_fidelity(P, horizon, mode, with_times=False)
    return _minimax(phi.reshape(*batch, T), mode) * 100.0


def best_head_vs_combined(
    pattern: Any, head_weights: Any = None, *, mode: str = "paper", horizon: int = 100
) -> dict[str, np.ndarray]:
    """Tables 5-6: best individual head vs the weighted combination (Defs 3.10-3.12).

    Each head alone (weight 1) gives ``phi_min^(h)``; returns per graph (shape
    ``pattern.shape[:-3]``) ``"individual"`` = ``max_h phi_min^(h)``, ``"combined"`` =
    ``phi_min^multi`` with ``head_weights``, ``"best_head"`` = ``h_*`` (Eq. 31), and
    ``"per_head"`` = all ``phi_min^(h)``, ``(..., H)``; all in percent.
    """
    a = _check_pattern(pattern)
    combined = minimax_fidelity_proxy(a, head_weights, mode=mode, horizon=horizon)
    single = a[..., :, None, :, :]  # (..., H, 1, T, T): each head as a 1-head graph
    per_head = minimax_fidelity_proxy(single, np.ones(1), mode=mode, horizon=horizon)
    return {
        "individual": per_head.max(-1),
        "combined": combined,
        "best_head": per_head.argmax(-1),
        "per_head": per_head,
    }


# --------------------------------------------------------------------------- attention rollout


def attention_rollout(
    patterns: Any, head_weights: Any = None, *, residual: float = 0.5
) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020, "Quantifying Attention Flow in
    Transformers", ACL; ``abnar2020quantifying`` in ``book/references.bib``), ``(..., L, T, T)``.

    ``patterns`` are the patterns of ``L`` layers, ``(..., L, H, T, T)`` (layers on axis
    -4); ``head_weights`` ``(..., L, H)`` or anything that broadcasts to it, ``None`` for the
    head average of the original. Per layer: ``A_l = sum_h w_h A_l[h]``
    (:func:`combine_heads`), ``A^_l = residual I + (1 - residual) A_l`` with its rows
    re-normalised (a row without weight keeps its own position), and the rollout after layer
    ``l`` is ``A^_l @ ... @ A^_1``. Entry ``[..., l, i, j]`` is the share of position ``i``'s
    representation after layer ``l + 1`` traceable to input token ``j``: rows sum to 1, and
    causal patterns give lower-triangular rollouts.
    """
    residual = unit_interval(residual, "residual", closed=True)
    a = _check_pattern(patterns, "patterns", "(..., L, H, T, T)")
    C = combine_heads(a, head_weights)  # (..., L, T, T)
    T = C.shape[-1]
    A = residual * np.eye(T) + (1.0 - residual) * C  # (..., L, T, T)
    sums = A.sum(-1, keepdims=True)  # (..., L, T, 1)
    empty = np.nonzero(sums[..., 0] == 0)
    A[(*empty, empty[-1])] = 1.0  # A^[..., i, i] = 1 for a row without weight
    sums[empty] = 1.0
    A /= sums
    out = np.empty_like(A)  # (..., L, T, T)
    out[..., 0, :, :] = A[..., 0, :, :]
    for layer in range(1, A.shape[-3]):
        np.matmul(A[..., layer, :, :], out[..., layer - 1, :, :], out=out[..., layer, :, :])
    return out
