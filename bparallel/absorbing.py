"""Absorbing random walks, many at once: survival, mixing and hitting of the sink.

Every function here takes a batch of walks as their transition matrices ``Q``, shaped
``(N, T, T)``, row-stochastic (``Q[g, j, k]`` is the probability that walk ``g`` moves from
``j`` to ``k``), float64 and C-contiguous, with the last state ``T - 1`` the sink and
absorbing (``Q[g, -1] = e_{T-1}``). Its stationary distribution is the sink's point mass
(Lemmas 2.5-2.6), so the total variation distance after ``t`` steps from start ``i`` is the
survival ``P(tau_i > t)``, the sum of row ``i`` of ``Q^t`` off the sink: every quantity below
is read from the survival vectors ``v_t = Q v_{t-1}``, ``v_0 = 1`` off the sink.

- :func:`survival_sums`: ``E[min(tau, M)]`` per start (Algorithm 1's expectation, exactly);
- :func:`mixing_times`: Definition 2.7 (Eq. 2), exact, per walk;
- :func:`hitting_times`: ``E[tau]`` per start, ``inf`` where the sink is missed;
- :func:`sample_walks`: Algorithm 1's sampler, every walk of every graph stepped at once;
  :func:`reference_walks` the same walks one by one, as plain loops (tests, benchmarks).

These are the one implementation of each algorithm: :mod:`bparallel.proxies` builds ``Q``
from attention (Algorithm 1's two walks) and calls them; :mod:`bparallel.markov`'s
hitting-time functions move the sink last and call them. Nothing is validated here: the
callers check their inputs. Graphs go in chunks of :data:`CHUNK` that stay in cache.
"""

from __future__ import annotations

import numpy as np

from .graphs import reachability

__all__ = ["CHUNK", "MIX_ATOL", "MIX_CAP", "hitting_times", "lost_starts", "mixing_times",
           "reference_walks", "sample_walks", "survival_sums", "traps"]

CHUNK = 8  # graphs per batched matrix-vector product (stays in cache at T = 100)
_MC_WALKS = 1 << 16  # walks simulated together by sample_walks
_TAIL_TOL = 1e-17  # early exit: bound on the survival mass still to add (sums are >= 1)
_DIRECT_STEPS = 128  # Definition 2.7, phase 1: at most this many steps v <- Q v (O(T^2) each)
_LOOKAHEAD = 16  # phase 1 checks every this many steps whether the waiting graphs are slow
_CAP_LOG2 = 62
#: Definition 2.7's one cap: a walk that has not mixed after this many steps "never mixes"
#: (:func:`mixing_times` reports ``inf``; ``markov.mixing_time`` raises; the playground and
#: its JavaScript twin show "never").
MIX_CAP = 2**_CAP_LOG2
#: Distances within this of ``eps`` count as having reached it (floating-point slack), in
#: :func:`mixing_times` and everything that calls it.
MIX_ATOL = 1e-12
_POWER_BYTES = 1 << 26  # phase 2: stored powers Q^(2^k) of one chunk, at most (64 MiB)
_SOLVE_CHUNK = 256  # graphs per batched back-substitution of the hitting times


# ------------------------------------------------------------ survival (Algorithm 1, exact)


def survival_sums(Q: np.ndarray, max_steps: int) -> np.ndarray:
    """``E[min(tau, M)] = sum_{t<M} P(tau > t)`` for every start, ``(N, T)`` (sink 0).

    ``P(tau > t)`` from every start at once is ``Q^t u`` with ``u`` = 1 off the sink, 0 at
    it; graphs go in chunks of :data:`CHUNK` that stay in cache. The loop stops early only
    when the remaining terms are below float64 rounding.
    """
    N, T, _ = Q.shape
    out = np.zeros((N, T))
    if T == 1:
        return out
    vbuf = np.empty((2, min(CHUNK, N), T, 1))
    for s in range(0, N, CHUNK):
        Qc = Q[s : s + CHUNK]  # (n, T, T)
        n = Qc.shape[0]
        v, spare = vbuf[0, :n], vbuf[1, :n]
        v[...] = 1.0  # (n, T, 1): P(tau > 0) = 1 off the sink
        v[:, -1] = 0.0
        total = v.copy()
        # Traps (:func:`traps`, e.g. the paper sampler's position 0, whose column of C sums
        # to >= 1 from C[0, 0] = 1 alone): their survival stays 1 up to rounding.
        trap = traps(Qc)  # (n, T)
        moving = ~trap[..., None]  # (n, T, 1)
        for t in range(1, max_steps):
            np.matmul(Qc, v, out=spare)  # (n, T, 1): P(tau > t); the sink row keeps 0
            v, spare = spare, v
            total += v
            if t % 8 == 0 and (max_steps - 1 - t) * np.max(v, where=moving,
                                                            initial=0.0) < _TAIL_TOL:
                # The other rows' remaining terms cannot change the float64 sums (>= 1);
                # a trap's remaining terms are its survival now (exactly 1 for a row with
                # Q[j, j] = 1; otherwise within rounding of it).
                total[..., 0] += trap * v[..., 0] * float(max_steps - 1 - t)
                break
        out[s : s + CHUNK] = total[..., 0]
    return out


# ------------------------------------------------------------ Algorithm 1, sampled


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


def sample_walks(
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


# ------------------------------------------------------------ Definition 2.7


def _leave_tol(T: int) -> float:
    """Probability of leaving a position below which the leaving is rounding: ``T u``."""
    return T * float(np.finfo(np.float64).eps)


def traps(Q: np.ndarray) -> np.ndarray:
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


def lost_starts(Q: np.ndarray) -> np.ndarray:
    """Starts absorbed at the sink with probability < 1, ``(n, T)`` bool: those that can
    reach a trap or another position that cannot reach the sink (any chain)."""
    moves = Q > 0
    moves[traps(Q)] = False  # (n, T, T): a trap's rounding-level moves are not moves
    R = reachability(moves)  # (n, T, T): R[g, a, b] iff b is reachable from a
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
        mixed = waiting & (m <= eps + MIX_ATOL)
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
    """Phase 2: the least ``t`` with ``max_i P(tau_i > t) <= eps`` (within
    :data:`MIX_ATOL`), from ``start`` ``(n,)`` where the survivals ``v`` ``(n, m, 1)`` still
    exceed it; ``inf`` past :data:`MIX_CAP`.

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
        above = w.max(axis=(1, 2)) > eps + MIX_ATOL
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
        above = w.max(axis=(1, 2)) > eps + MIX_ATOL
        v[graphs[above]] = w[above]
        s[graphs[above]] += 1 << j
    return np.where(top >= 0, s + 1.0, np.inf)


def reference_walks(P: np.ndarray, max_steps: int, num_simulations: int, *,
                    normalise: bool = False, seed: int | None = None) -> np.ndarray:
    """The walks of :func:`sample_walks` one by one, as plain Python loops (slow; an
    independent check for tests and benchmarks), on one graph's moves ``P`` ``(T, T)``:
    hitting times ``min(tau, max_steps)``, ``(T, num_simulations)`` int. Without
    ``normalise`` a step draws ``r ~ U(0, 1)`` and takes the first ``k`` whose unnormalised
    cumulative sum of row ``j`` is ``>= r``, clipped to the sink (the published sampler);
    with it, ``k`` is drawn from row ``j`` divided by its sum (Definition 2.3)."""
    T = P.shape[-1]
    rng = np.random.default_rng(seed)
    cs = np.cumsum(P, axis=-1)
    times = np.zeros((T, num_simulations), dtype=np.int64)
    for i in range(T):
        for s in range(num_simulations):
            j, t = i, 0
            while j != T - 1 and t < max_steps:
                if normalise:
                    j = int(rng.choice(T, p=P[j] / P[j].sum()))
                else:
                    j = min(int(np.searchsorted(cs[j], rng.random(), side="left")), T - 1)
                t += 1
            times[i, s] = t
    return times


def mixing_times(Q: np.ndarray, eps: float) -> np.ndarray:
    """Definition 2.7 for every walk of ``Q`` ``(N, T, T)``: the least integer ``t >= 0`` with
    ``max_i P(tau_i > t) <= eps`` (survivals within :data:`MIX_ATOL` of ``eps`` count as
    reached), ``(N,)`` float64; ``inf`` where some start never gets there (a trap,
    :func:`traps`, or a closed class without the sink) or not within :data:`MIX_CAP` steps.

    This is the package's one implementation of Definition 2.7: ``markov.mixing_time``
    (column-stochastic ``W``), Algorithm 1's walks (:mod:`bparallel.proxies`) and the
    playground call it; ``bparallel.exact.mixing_time`` is the independent check in exact
    rationals, and ``mixingTime`` of ``render/js/toydag.mjs`` its JavaScript twin.

    Two phases: ``v_t = Q v_{t-1}`` step by step (``O(T^2)`` a step) for walks that mix
    within ``_DIRECT_STEPS`` steps, then galloping on ``Q^(2^k)`` and binary lifting
    (``O(T^3 log t)``) for the slow ones; memory stays bounded (:data:`CHUNK` walks at a
    time, at most ``_POWER_BYTES`` of stored powers in phase 2).

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
    N, T, _ = Q.shape
    out = np.zeros(N)
    if T == 1 or N == 0:
        return out  # the sink alone is stationary at t = 0
    later = []  # phase 2's graphs: (indices, survival vectors, time reached)
    for s in range(0, N, CHUNK):
        Qc = Q[s : s + CHUNK]  # (n, T, T)
        res = out[s : s + len(Qc)]
        trapped = traps(Qc).any(-1)  # a trap's survival stays 1 > eps: never mixes
        res[trapped] = np.inf
        if trapped.all():
            continue
        t_mix, v, t = _step_to_mixing(Qc, eps, trapped)
        res[t_mix >= 0] = t_mix[t_mix >= 0]
        rest = np.flatnonzero((t_mix < 0) & ~trapped)
        if rest.size:
            later.append((s + rest, v[rest, :-1], np.full(rest.size, t)))
    if not later:
        return out
    idx, v, start = (np.concatenate(x) for x in zip(*later, strict=True))
    n2 = max(1, min(CHUNK, _POWER_BYTES // (8 * T * T * _CAP_LOG2)))
    for a in range(0, idx.size, n2):
        g, vg, sg = idx[a : a + n2], v[a : a + n2], start[a : a + n2]
        Qg = Q[g]  # (n, T, T)
        # the sink's column only ever multiplies survival 0: phase 2 leaves the sink out
        R = np.ascontiguousarray(Qg[:, :-1, :-1])  # (n, T-1, T-1)
        upper = _is_triangular(Qg)
        never = np.zeros(len(g), dtype=bool)  # a walk that moves back may have a closed
        never[~upper] = lost_starts(Qg[~upper]).any(-1)  # class without the sink: inf
        out[g[never]] = np.inf
        for tri in (True, False):
            sel = (upper == tri) & ~never
            if sel.any():
                out[g[sel]] = _lift_to_mixing(R[sel], vg[sel], sg[sel], eps, tri)
    return out


# ------------------------------------------------------------ hitting times


def _hitting_triangular(Q: np.ndarray) -> np.ndarray:
    """``(I - Q_transient) h = 1`` by back-substitution for upper-triangular ``Q``, ``(n, T)``.

    Position ``j`` only moves to ``k >= j``: ``h_j = (1 + sum_{j<k<T-1} Q[j, k] h_k) /
    (1 - Q[j, j])``. ``h_j = inf`` at a trap (:func:`traps`) and wherever a trap is
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
    lost = lost_starts(Q)[:, :-1]  # (n, T-1); the other starts never move to these
    A = np.eye(T - 1) - Q[:, :-1, :-1]  # (n, T-1, T-1)
    g, i = np.nonzero(lost)
    A[g, i, :] = 0.0
    A[g, i, i] = 1.0
    rhs = np.where(lost, 0.0, 1.0)[..., None]  # (n, T-1, 1)
    h = np.zeros((n, T))
    h[:, :-1] = np.where(lost, np.inf, np.linalg.solve(A, rhs)[..., 0])
    return h


def hitting_times(Q: np.ndarray) -> np.ndarray:
    """``E[tau]`` from every start of every walk of ``Q`` ``(N, T, T)``, ``(N, T)``: the
    solution of ``(I - Q_transient) h = 1``, by back-substitution where ``Q`` is upper
    triangular (causal attention), by a general solve otherwise; 0 at the sink, ``inf``
    where the sink is reached with probability ``< 1``."""
    N, T, _ = Q.shape
    h = np.zeros((N, T))
    if T == 1:
        return h
    for s in range(0, N, _SOLVE_CHUNK):
        Qc = Q[s : s + _SOLVE_CHUNK]  # (n, T, T)
        tri = _is_triangular(Qc)
        hs = h[s : s + len(Qc)]
        if tri.any():
            hs[tri] = _hitting_triangular(Qc[tri])
        if not tri.all():
            hs[~tri] = _hitting_general(Qc[~tri])
    return h
