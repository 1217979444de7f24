"""Algorithms 1 and 2 of Section 4: mixing-time and minimax-fidelity proxies on attention.

Inputs are post-softmax attention patterns ``pattern`` shaped ``(..., H, T, T)``, i.e.
``[..., head, query_pos, key_pos]`` as in TransformerLens (``pattern[..., h, i, j]`` is head
``h``'s attention of query ``i`` on key ``j``; numpy or torch), and head weights shaped
``(..., H)`` or ``(H,)`` (broadcast against ``pattern.shape[:-3]``), or ``None`` for uniform
weights ``1/H``. Every leading dimension is a batch dimension: one call handles all
sequences and layers. Outputs are numpy float64.

Algorithms 1-2 (:func:`mixing_time_proxy`, :func:`node_fidelity_proxy`,
:func:`minimax_fidelity_proxy`) refuse, with a ``ValueError`` naming the argument, the
position and the value, what they cannot mean: a pattern that is not causal (a query
reading a later key: a backward edge) or whose rows do not sum to 1, and head weights that
are negative or do not sum to 1, all within :data:`bparallel._checks.SUM_ATOL`. Every
function of this module holds head weights to that one rule; the walk's own measures
(:func:`worst_case_mixing_time`, :func:`hitting_time_profile`) also take any non-negative
pattern, non-causal walks included.

The combined matrix is ``C = sum_h w_h A[h]`` (Definition 3.6 with ``beta = w``) and the
forward-transition matrix of both algorithms is ``P = C^T``: ``P[j, i] = C[i, j]`` moves
from position ``j`` to a position ``i >= j``. The last position ``T - 1`` is the sink.

Two combined walks, named by what is combined: this one, the **combined-Delta walk**, the
proxies' walk on ``Delta-bar`` (attention rows, one per
query, sum to 1 as the rows of ``Delta``, Eq. 21, do; the heads are combined first and each
row of ``P`` is normalised after, in definition mode), is not the **combined-W walk**,
the chain of ``W-bar = sum_h
alpha_h W^(h)`` of Section 2 (Theorem 2.8; :func:`bparallel.graphs.convex_combination` of
walk matrices, Eq. 1, each divided by the sender's out-degree before the heads are combined,
which :func:`bparallel.markov.mixing_time` takes). They differ even for one head, and so do
their mixing times; the book's "Using the package" page shows both on one graph.

Units, the package's one convention: probabilities, fidelities and accuracies are fractions
in ``[0, 1]`` (:mod:`bparallel.fidelity`, :mod:`bparallel.ensembles`, the transformer's
accuracies), except where a function says **percent**: Algorithm 2's fidelities of attention
(:func:`node_fidelity_proxy`, :func:`minimax_fidelity_proxy`, :func:`best_head_vs_combined`
and the fidelities :func:`bparallel.transformer.measure.measure_model` returns) are in
percent by default, as the paper's Tables 3-6 print them and as the book records them,
100 times the fractions that :mod:`bparallel.fidelity` returns for the same ``Delta-bar``;
``unit="fraction"`` returns the package's unit. Mixing and hitting times are in steps.

Two modes:

- ``mode="paper"`` reproduces the published code. Algorithm 1 samples the next state by
  inverse-CDF on the *unnormalised* cumulative sums of row ``j`` of ``P``, clipping to the
  sink when the uniform draw exceeds the row total; Algorithm 2 takes the min over all
  start nodes, the sink included, with ``t = 1..horizon``.
- ``mode="definition"`` follows the definitions: the walk of Definition 2.3 (rows of ``P``
  normalised; a non-sink position without outgoing weight, where Definition 2.3 is
  undefined, waits there) and the min over non-sink nodes of Definition 3.5.

Defaults: every function of this module defaults to ``mode="definition"``, the walk and the
minimum of the definitions, which is the answer for graphs and models that are not the
published checkpoints (on a clean feedforward DAG it is finite). The published code's mode
is one argument away, ``mode="paper"``: the book records its values of the published
checkpoints in that mode and names it in every call. In paper mode position 0 of a causal
pattern traps the walk (its first entry, ``P[0, 0] = C[0, 0] = 1``, already fills the
unnormalised cumulative sum the sampler draws from), so Algorithm 1's worst start is the
step cap and Definition 2.7 is never reached.

``method="exact"`` computes the expectation of Algorithm 1 in closed form (the walk is a
Markov chain: sum its survival probabilities); ``method="monte-carlo"`` samples it.

On the same walk, :func:`worst_case_mixing_time` is the exact mixing time of Definition
2.7 and :func:`hitting_time_profile` the expected hitting time of the sink per start,
untruncated and truncated; across layers, :func:`attention_rollout` is the attention
rollout of Abnar & Zuidema (2020).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from . import absorbing, fidelity, graphs
from ._checks import (
    attention_pattern,
    causal_attention,
    head_weight_vectors,
    one_of,
    positive_int,
    unit_interval,
)

__all__ = [
    "MODES", "UNITS", "METHODS", "REDUCTIONS", "combine_heads", "Walk", "transition_matrix",
    "mixing_time_proxy", "worst_case_mixing_time", "HittingTimes", "hitting_time_profile",
    "NodeFidelity", "node_fidelity_proxy", "minimax_fidelity_proxy", "best_head_vs_combined",
    "attention_rollout",
]

MODES = ("paper", "definition")
#: The units of Algorithm 2's fidelities (``unit=``): percent, as the paper's tables, or
#: the fraction in ``[0, 1]`` of the rest of the package.
UNITS = ("percent", "fraction")
_SCALE = {"percent": 100.0, "fraction": 1.0}
METHODS = ("exact", "monte-carlo")
REDUCTIONS = ("mean", "max", "none")


# --------------------------------------------------------------------------- combining heads


def _sum_heads(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_h w_h A[h]`` of validated ``a`` ``(..., H, T, T)`` and ``w`` ``(..., H)``, a new
    float64 array (summed in float32 for float32 patterns)."""
    return graphs.head_sum(a, w.astype(a.dtype)).astype(np.float64, copy=False)


def combine_heads(pattern: Any, head_weights: Any = None) -> np.ndarray:
    """``C = sum_h w_h A[h]``, ``(..., T, T)`` (Definition 3.6; Algorithms 1-2, line 2)."""
    a = attention_pattern(pattern)
    return _sum_heads(a, head_weight_vectors(head_weights, a))  # (..., T, T)


# --------------------------------------------------------------------------- the walk


def _paper_chain(P: np.ndarray) -> np.ndarray:
    """The Markov chain implied by inverse-CDF sampling on unnormalised rows of ``P``.

    ``next = first k with cumsum(P[j])[k] >= r``, ``r ~ U(0, 1)``, clipped to ``T - 1``:
    ``Q[j, k] = min(cs[k], 1) - min(cs[k-1], 1)`` for ``k < T-1`` and
    ``Q[j, T-1] = 1 - min(cs[T-2], 1)``.
    """
    cc = np.cumsum(P, axis=-1)  # (..., T, T)
    np.minimum(cc, 1.0, out=cc)
    Q = np.empty_like(cc)  # (..., T, T)
    Q[..., 0] = cc[..., 0]
    np.subtract(cc[..., 1:], cc[..., :-1], out=Q[..., 1:])
    Q[..., -1] = 1.0 - cc[..., -2] if P.shape[-1] > 1 else 1.0
    return Q


def _definition_chain(P: np.ndarray) -> np.ndarray:
    """Definition 2.3: each row of ``P`` divided by its sum (empty rows patched first)."""
    sums = P.sum(-1, keepdims=True)  # (..., T, 1)
    sums[sums == 0] = 1.0  # only the sink row can still be empty; the caller replaces it
    return P / sums


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


class Walk:
    """Algorithm 1's walk on every graph of an attention ``pattern`` ``(..., H, T, T)``.

    The pattern is validated and its heads combined once, ``C = sum_h w_h A[h]``
    (:func:`combine_heads`; ``None`` weights are uniform); :attr:`forward` is ``P = C^T``
    of every graph, ``(N, T, T)`` float64, whose row ``j`` holds the moves out of position
    ``j``. The walk's transition matrix (:meth:`chain`) is built once per mode, and every
    measure of this module reads it: Algorithm 1 exactly (:meth:`truncated_hitting_times`)
    or by sampling (:meth:`sampled_hitting_times`), Definition 2.7 (:meth:`mixing_time`),
    the hitting times (:meth:`hitting_times`) and Algorithm 2's node fidelity
    (:meth:`node_fidelity`). Results are flat, ``(N, ...)``; :meth:`shaped` restores
    ``pattern.shape[:-3]``. The algorithms themselves are :mod:`bparallel.absorbing`'s and
    :mod:`bparallel.fidelity`'s.
    """

    def __init__(self, pattern: Any, head_weights: Any = None) -> None:
        a = attention_pattern(pattern)
        self._setup(a, head_weight_vectors(head_weights, a))

    @classmethod
    def _of_checked(cls, a: np.ndarray, w: np.ndarray) -> Walk:
        """The walk of an already validated pattern ``a`` and weights ``w`` ``a.shape[:-2]``
        (no second validation: :meth:`each_head`)."""
        walk = cls.__new__(cls)
        walk._setup(a, w)
        return walk

    def _setup(self, a: np.ndarray, w: np.ndarray) -> None:
        if a.shape[-3] == 1 and np.all(w == 1.0):
            C = a[..., 0, :, :]  # one head of weight 1 is its own combination (1 * A = A)
        else:
            C = _sum_heads(a, w)
        #: The validated pattern ``(..., H, T, T)`` and its head weights ``(..., H)``.
        self.pattern, self.weights = a, w
        self.batch: tuple[int, ...] = C.shape[:-2]
        self.T: int = C.shape[-1]
        T = self.T
        # C of every graph, (N, T, T), no copy (float32 kept for one float32 head): node
        # fidelity reads it chunk by chunk; the walk's chains read P = C^T, :attr:`forward`,
        # a float64 copy made when first needed
        self._combined = C.reshape(-1, T, T)
        self._moves: dict[str, np.ndarray] = {}
        self._chains: dict[str, np.ndarray] = {}
        self._survival: dict[tuple[str, int], np.ndarray] = {}

    def each_head(self) -> Walk:
        """Every head alone, with weight 1 (Definition 3.10's ``phi^(h)``): one walk whose
        graphs are ``batch + (H,)``, from the pattern validated once."""
        single = self.pattern[..., :, None, :, :]  # (..., H, 1, T, T)
        return Walk._of_checked(single, np.ones(single.shape[:-2]))

    def rollout(self, *, uniform: bool = False, residual: float = 0.5) -> np.ndarray:
        """:func:`attention_rollout` of the pattern, layers first (``batch[0]`` is the layer
        axis), the heads combined with this walk's weights or, with ``uniform``, averaged;
        ``batch + (T, T)``."""
        residual = unit_interval(residual, "residual", closed=True)
        if not uniform:
            C = self._combined.reshape(self.batch + (self.T, self.T)).astype(np.float64,
                                                                              copy=False)
        else:
            C = _sum_heads(self.pattern, head_weight_vectors(None, self.pattern))
        return _rollout(C, residual)

    @functools.cached_property
    def forward(self) -> np.ndarray:
        """``P = C^T`` of every graph, ``(N, T, T)`` float64, C-contiguous."""
        return np.ascontiguousarray(np.swapaxes(self._combined, -1, -2), dtype=np.float64)

    def shaped(self, values: np.ndarray) -> np.ndarray:
        """Flat per-graph ``values`` ``(N, ...)`` reshaped to ``pattern.shape[:-3] + (...)``."""
        return values.reshape(self.batch + values.shape[1:])

    def moves(self, mode: str) -> np.ndarray:
        """``P`` as the walk of ``mode`` reads it, ``(N, T, T)``: in definition mode a
        position without outgoing weight waits there (:func:`_patch_empty_rows`)."""
        one_of(mode, "mode", MODES)
        if mode not in self._moves:
            self._moves[mode] = (self.forward if mode == "paper"
                                 else _patch_empty_rows(self.forward))
        return self._moves[mode]

    def chain(self, mode: str) -> np.ndarray:
        """The walk's transition matrix ``Q`` ``(N, T, T)``, the sink absorbing: in paper mode
        the chain implied by the published sampler, in definition mode Definition 2.3's."""
        if mode not in self._chains:
            P = self.moves(mode)
            Q = _paper_chain(P) if mode == "paper" else _definition_chain(P)
            Q[..., -1, :] = 0.0
            Q[..., -1, -1] = 1.0
            self._chains[mode] = Q
        return self._chains[mode]

    def truncated_hitting_times(self, mode: str, max_steps: int) -> np.ndarray:
        """Algorithm 1's ``E[min(tau, max_steps)]`` per start, exactly, ``(N, T)``."""
        key = (mode, max_steps)
        if key not in self._survival:
            self._survival[key] = absorbing.survival_sums(self.chain(mode), max_steps)
        return self._survival[key]

    def sampled_hitting_times(self, mode: str, max_steps: int, num_simulations: int,
                              rng: np.random.Generator) -> np.ndarray:
        """``min(tau, max_steps)`` of ``num_simulations`` sampled walks per start, as the
        published sampler draws them, ``(N, T, S)`` int."""
        cs = np.cumsum(self.moves(mode), axis=-1)  # what the sampler compares a draw with
        if mode == "definition":
            tot = cs[..., -1:].copy()
            tot[tot == 0] = 1.0
            cs = cs / tot
        return absorbing.sample_walks(cs, max_steps, num_simulations, rng)

    def mixing_time(self, mode: str, eps: float) -> np.ndarray:
        """Definition 2.7's exact mixing time per graph, ``(N,)`` (``inf``: never)."""
        return absorbing.mixing_times(self.chain(mode), eps)

    def hitting_times(self, mode: str) -> np.ndarray:
        """``E[tau]`` per start, ``(N, T)`` (``inf`` where the sink may be missed)."""
        return absorbing.hitting_times(self.chain(mode))

    def node_fidelity(self, horizon: int, times: bool = True
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """``max_t (P^t)[j, T-1] = max_t (C^t)[T-1, j]`` per node and the earliest ``t``
        attaining it, ``(N, T)`` each, ``t = 1..horizon`` (Algorithm 2 by
        :func:`bparallel.fidelity.sink_peaks`, the recursion of the theory chapters, with
        BLAS products; the modes differ only in the minimum over nodes)."""
        return fidelity.sink_peaks(self._combined, horizon, times=times, product="matmul")


def _causal_walk(pattern: Any, head_weights: Any) -> Walk:
    """The :class:`Walk` of Algorithms 1-2, whose input is a post-softmax causal attention
    pattern: a pattern that is not causal, or whose rows do not sum to 1, is refused
    (:func:`bparallel._checks.causal_attention`, within
    :data:`bparallel._checks.SUM_ATOL`), as are head weights that are not a distribution
    (:func:`bparallel._checks.head_weight_vectors`, the same rule in every function)."""
    a = attention_pattern(pattern)
    causal_attention(a)
    return Walk._of_checked(a, head_weight_vectors(head_weights, a))


def transition_matrix(
    pattern: Any, head_weights: Any = None, *, mode: str = "definition"
) -> np.ndarray:
    """Row-stochastic transition matrix ``(..., T, T)`` of Algorithm 1's walk, sink absorbing.

    ``mode="paper"``: the chain implied by the published sampler; ``"definition"``: the
    normalised walk of Definition 2.3 on ``P = C^T``.
    """
    one_of(mode, "mode", MODES)
    walk = Walk(pattern, head_weights)
    return walk.shaped(walk.chain(mode))


# --------------------------------------------------------------------------- Algorithm 1


def mixing_time_proxy(
    pattern: Any,
    head_weights: Any = None,
    *,
    mode: str = "definition",
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
    walk = _causal_walk(pattern, head_weights)
    if method == "exact":
        per_start = walk.truncated_hitting_times(mode, max_steps)  # (N, T)
        stderr_start = np.zeros_like(per_start)
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        times = walk.sampled_hitting_times(mode, max_steps, num_simulations, rng)
        per_start = times.mean(-1)  # (N, T)
        var = times.var(-1, ddof=1) if num_simulations > 1 else np.zeros_like(per_start)
        stderr_start = np.sqrt(var / num_simulations)  # (N, T)
    if reduce == "mean":
        value, stderr = per_start.mean(-1), np.sqrt((stderr_start**2).sum(-1)) / walk.T
    elif reduce == "max":
        value = per_start.max(-1)
        stderr = np.take_along_axis(stderr_start, per_start.argmax(-1)[:, None], -1)[:, 0]
    else:
        value, stderr = per_start, stderr_start
    value, stderr = walk.shaped(value), walk.shaped(stderr)
    return (value, stderr) if return_stderr else value


# --------------------------------------------------------------------------- Definition 2.7


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
    steps), computed by :func:`bparallel.absorbing.mixing_times` in two phases: step by
    step for the walks that mix fast, then galloping on ``Q^(2^k)`` and binary lifting
    (its docstring states the precision: exact to the step up to ``t ~ 1e6`` at ``T = 100``).
    """
    one_of(mode, "mode", MODES)
    eps = unit_interval(eps, "eps", closed=False)
    walk = Walk(pattern, head_weights)
    return walk.shaped(walk.mixing_time(mode, eps))


# --------------------------------------------------------------------------- hitting times


class HittingTimes(NamedTuple):
    """Expected hitting times of the sink from every start position, ``(..., T)`` (sink 0).

    ``exact``: ``E[tau]`` (``inf`` where the sink is reached with probability ``< 1``);
    ``truncated``: Algorithm 1's ``E[min(tau, max_steps)]``.
    """

    exact: np.ndarray
    truncated: np.ndarray


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
    walk = Walk(pattern, head_weights)
    return HittingTimes(walk.shaped(walk.hitting_times(mode)),
                        walk.shaped(walk.truncated_hitting_times(mode, max_steps)))


# --------------------------------------------------------------------------- Algorithm 2


class NodeFidelity(NamedTuple):
    """Node fidelity (percent by default, else a fraction: ``unit``) and the optimal
    fidelity time (Defs 3.3-3.4), ``(..., T)``."""

    phi: np.ndarray
    t_opt: np.ndarray | None


def node_fidelity_proxy(
    pattern: Any,
    head_weights: Any = None,
    *,
    mode: str = "definition",
    horizon: int = 100,
    times: bool = True,
    unit: str = "percent",
) -> NodeFidelity:
    """Node fidelity ``phi_j`` in percent (``unit="fraction"``: in ``[0, 1]``) and optimal
    time ``t_j`` (Defs 3.3-3.4, 3.9).

    ``phi_j = 100 max_t (C^t)[T-1, j]`` with ``C`` the weighted combination playing the role
    of the diffusion matrix ``Delta``; ``t`` ranges over ``1..horizon`` in both modes (as in
    ``bparallel.fidelity``); ``t_j`` is the earliest time attaining the max, ties within
    :data:`bparallel.fidelity.PEAK_ATOL` (``None`` when ``times=False``, which is faster).
    Both arrays are ``pattern.shape[:-3] + (T,)``.
    """
    one_of(mode, "mode", MODES)
    one_of(unit, "unit", UNITS)
    positive_int(horizon, "horizon")
    walk = _causal_walk(pattern, head_weights)
    phi, t_opt = walk.node_fidelity(horizon, times)
    return NodeFidelity(_SCALE[unit] * walk.shaped(phi),
                        None if t_opt is None else walk.shaped(t_opt))


def minimax_fidelity_proxy(
    pattern: Any, head_weights: Any = None, *, mode: str = "definition", horizon: int = 100,
    unit: str = "percent",
) -> np.ndarray:
    """Algorithm 2: minimax fidelity ``100 min_j max_t (P^t)[j, T-1]``, ``pattern.shape[:-3]``
    (in percent; ``unit="fraction"``: without the factor 100, in ``[0, 1]``).

    ``mode="paper"``: min over all start nodes (the sink included), ``t = 1..horizon``, as
    the published code; ``mode="definition"``: min over non-sink nodes (Definition 3.5).
    """
    one_of(mode, "mode", MODES)
    one_of(unit, "unit", UNITS)
    positive_int(horizon, "horizon")
    walk = _causal_walk(pattern, head_weights)
    phi, _ = walk.node_fidelity(horizon, times=False)
    minimax = fidelity.min_over_nodes(walk.shaped(phi), exclude_sink=mode == "definition")
    return minimax * _SCALE[unit]


def best_head_vs_combined(
    pattern: Any, head_weights: Any = None, *, mode: str = "definition", horizon: int = 100,
    unit: str = "percent",
) -> dict[str, np.ndarray]:
    """Tables 5-6: best individual head vs the weighted combination (Defs 3.10-3.12).

    Each head alone (weight 1) gives ``phi_min^(h)``; returns per graph (shape
    ``pattern.shape[:-3]``) ``"individual"`` = ``max_h phi_min^(h)``, ``"combined"`` =
    ``phi_min^multi`` with ``head_weights``, ``"best_head"`` = ``h_*`` (Eq. 31), and
    ``"per_head"`` = all ``phi_min^(h)``, ``(..., H)``; all in percent (``unit="fraction"``:
    in ``[0, 1]``).
    """
    a = attention_pattern(pattern)
    combined = minimax_fidelity_proxy(a, head_weights, mode=mode, horizon=horizon, unit=unit)
    single = a[..., :, None, :, :]  # (..., H, 1, T, T): each head as a 1-head graph
    per_head = minimax_fidelity_proxy(single, np.ones(1), mode=mode, horizon=horizon,
                                      unit=unit)
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
    Transformers", ACL; ``abnar2020quantifying`` in ``book/references.bib``), ``(L, ..., T, T)``.

    ``patterns`` are the patterns of ``L`` layers, layers first as the model returns them,
    ``(L, ..., H, T, T)``; ``head_weights`` ``(L, H)`` (one vector per layer, as
    :func:`bparallel.transformer.patterns.model_head_weights` returns them), ``(L, ..., H)``,
    ``(H,)``, or ``None`` for the head average of the original. Per layer:
    ``A_l = sum_h w_h A_l[h]`` (:func:`combine_heads`), ``A^_l = residual I + (1 - residual)
    A_l`` with its rows re-normalised (a row without weight keeps its own position), and the
    rollout after layer ``l`` is ``A^_l @ ... @ A^_1``. Entry ``[l, ..., i, j]`` is the share
    of position ``i``'s representation after layer ``l + 1`` traceable to input token ``j``:
    rows sum to 1, and causal patterns give lower-triangular rollouts.
    """
    residual = unit_interval(residual, "residual", closed=True)
    a = attention_pattern(patterns, "patterns", "(L, ..., H, T, T)")
    if head_weights is not None:
        w = np.asarray(head_weights)
        if w.ndim == 2 and a.ndim > 4:  # (L, H): the same weights for every graph of a layer
            w = w.reshape(w.shape[:1] + (1,) * (a.ndim - 4) + w.shape[1:])
        head_weights = w
    C = _sum_heads(a, head_weight_vectors(head_weights, a))  # (L, ..., T, T)
    return _rollout(C, residual)


def _rollout(C: np.ndarray, residual: float) -> np.ndarray:
    """:func:`attention_rollout` from the combined heads ``C`` ``(L, ..., T, T)``."""
    T = C.shape[-1]
    A = residual * np.eye(T) + (1.0 - residual) * C  # (L, ..., T, T)
    sums = A.sum(-1, keepdims=True)  # (L, ..., T, 1)
    empty = np.nonzero(sums[..., 0] == 0)
    A[(*empty, empty[-1])] = 1.0  # A^[..., i, i] = 1 for a row without weight
    sums[empty] = 1.0
    A /= sums
    out = np.empty_like(A)  # (L, ..., T, T)
    out[0] = A[0]
    for layer in range(1, A.shape[0]):
        np.matmul(A[layer], out[layer - 1], out=out[layer])
    return out
