"""An independent, exact (rational) reference implementation of the toy-DAG quantities.

Plain Python lists of ``fractions.Fraction``: no numpy and no code shared with the rest of
``bparallel``, so tests and the book can cross-check the fast numpy routines against it.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["adjacency", "diffusion", "walk", "matmul", "identity", "combine", "node_fidelity",
           "mixing_time"]


def adjacency(edges, n):
    A = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for j, i in edges:
        A[i][j] = Fraction(1)
    return A


def diffusion(edges, n):
    A = adjacency(edges, n)
    return [[a / sum(row) for a in row] for row in A]


def walk(edges, n):
    A = adjacency(edges, n)
    col = [sum(A[i][j] for i in range(n)) for j in range(n)]
    return [[A[i][j] / col[j] for j in range(n)] for i in range(n)]


def matmul(X, Y):
    n, m, p = len(X), len(Y), len(Y[0])
    return [[sum(X[i][k] * Y[k][j] for k in range(m)) for j in range(p)] for i in range(n)]


def identity(n):
    return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]


def combine(mats, weights):
    n = len(mats[0])
    pairs = list(zip(weights, mats, strict=True))
    return [[sum(w * M[i][j] for w, M in pairs) for j in range(n)] for i in range(n)]


def node_fidelity(D, horizon):
    """(phi, t) per node by explicit matrix powers, t = 1..horizon, earliest peak."""
    n = len(D)
    P = identity(n)
    best = [Fraction(-1)] * n
    when = [0] * n
    for t in range(1, horizon + 1):
        P = matmul(P, D)
        for j in range(n):
            if P[n - 1][j] > best[j]:
                best[j], when[j] = P[n - 1][j], t
    return best, when


def mixing_time(W, eps):
    """Least t with max_j TV(W^t e_j, 1_tau) <= eps, by stepping one power at a time."""
    n = len(W)
    P = identity(n)
    t = 0
    while True:
        d = max(1 - P[n - 1][j] for j in range(n))  # TV to the point mass at the sink
        if d <= eps:
            return t
        P = matmul(W, P)
        t += 1
