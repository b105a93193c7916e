"""Certified spectra of symmetric matrices, for every paper (the ball arithmetic of :mod:`attnverify.theory.certified`):

* :func:`eigenvalue_clusters` -- floating-point input: Gershgorin discs of an exactly orthonormal similarity
  transform, the clusters, and a Davis-Kahan bound on the top cluster's invariant subspace;
* :func:`exact_eigenvalue_enclosures` -- rational input: real-root isolation of the characteristic polynomial.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from flint import arb, arb_mat

from attnverify.theory.certified import lower, lower_q, upper, upper_q

__all__ = ["Clusters", "eigenvalue_clusters", "exact_eigenvalue_enclosures", "gram_schmidt_balls"]


def gram_schmidt_balls(vectors: list[list[arb]]) -> list[list[arb]]:
    """The Gram-Schmidt orthonormalisation of ball vectors, in ball arithmetic: each ball contains the entry of the
    exact orthonormalisation of any vectors inside the given balls."""
    out: list[list[arb]] = []
    for v in vectors:
        for q in out:
            c = sum((qi * vi for qi, vi in zip(q, v)), arb(0))
            v = [vi - c * qi for vi, qi in zip(v, q)]
        n = sum((vi * vi for vi in v), arb(0)).sqrt()
        out.append([vi / n for vi in v])
    return out


def _gram_schmidt(U: np.ndarray) -> list[list]:
    """Columns of the exact Gram-Schmidt orthonormalisation of the float matrix U, enclosed in Arb balls
    (the exact result is an orthonormal matrix; every ball contains its entry)."""
    d, k = U.shape
    return gram_schmidt_balls([[arb(float(U[i, j])) for i in range(d)] for j in range(k)])


def _gershgorin(M: "arb_mat", idx: list[int]) -> list[tuple[arb, arb]]:
    """Gershgorin intervals (as ball pairs lower, upper) of the symmetric ball matrix M restricted to
    rows/columns idx: every eigenvalue of the exact restricted matrix lies in their union."""
    ivs = []
    for i in idx:
        r = sum((abs(M[i, j]) for j in idx if j != i), arb(0))
        ivs.append((M[i, i] - r, M[i, i] + r))
    return ivs


@dataclass(frozen=True)
class Clusters:
    """Eigenvalue clusters of a symmetric matrix (:func:`eigenvalue_clusters`), in descending order.

    ``members``: the columns of U whose Rayleigh quotients form each cluster; ``enclosures``: [lo, hi] (floats,
    outward) holding exactly len(members[k]) eigenvalues; ``values``: the mean of the cluster's Rayleigh quotients
    (a representative value, not an enclosure); ``projectors``: the top cluster's Q_I Q_I^T rounded to floats, then
    U_I U_I^T for the others; ``gap``: [lo, hi] holding the distance between the top cluster and the next (None
    with one cluster); ``separation``: a lower bound on delta, the distance from the smallest eigenvalue of the
    top cluster to every other eigenvalue (None with one cluster); ``projector_error``: a rigorous bound on the
    2-norm distance of ``projectors[0]`` from the orthogonal projector onto the top cluster's invariant subspace
    (None when delta > 0 is not proven)."""

    members: tuple[tuple[int, ...], ...]
    enclosures: tuple[tuple[float, float], ...]
    values: tuple[float, ...]
    projectors: tuple[np.ndarray, ...]
    gap: tuple[float, float] | None
    separation: float | None
    projector_error: float | None


def eigenvalue_clusters(A: "arb_mat", U: np.ndarray, tol: float) -> Clusters:
    """Certified eigenvalue clusters of the symmetric ball matrix A, from approximate eigenvectors U (columns, e.g.
    numpy.linalg.eigh's sorted by decreasing eigenvalue; they fix the basis, not the result's validity).

    1. Q = exact Gram-Schmidt of U (enclosed in balls; the exact Q is orthonormal), M = Q^T A Q (balls): M has
       exactly the eigenvalues of A.  Gershgorin: every eigenvalue lies in the union of the intervals
       [M_ii - r_i, M_ii + r_i], r_i = sum_{j != i} |M_ij|, and a connected union of k intervals holds exactly k
       eigenvalues.  Intervals that overlap or lie within ``tol`` of each other form one cluster.
    2. Invariant subspace of the top cluster (indices I): P_E ~ Q_I Q_I^T.  Davis-Kahan sin-theta theorem: with
       R = A Q_I - Q_I M_II = Q_J M_JI, the eigenvalues of M_II in [a, b] (Gershgorin of M_II) and the rest of the
       spectrum below a - delta, ||P_E - Q_I Q_I^T||_2 <= ||M_JI||_F / delta; the rounding of Q_I Q_I^T to floats
       is added.
    Working precision: the caller's (``flint.ctx.prec``); classical Gram-Schmidt in balls loses about 1.3 bits per
    column, so give it 2 d guard bits."""
    d = U.shape[0]
    cols = _gram_schmidt(U)
    Q = arb_mat([[cols[j][i] for j in range(d)] for i in range(d)])
    M = Q.transpose() * A * Q
    ivs = _gershgorin(M, list(range(d)))
    # clusters: sweep the intervals by lower end, merging overlaps and gaps <= tol
    by_lo = sorted(range(d), key=lambda i: float(ivs[i][0].lower()))
    comps: list[list] = []
    for i in by_lo:
        lo, hi = ivs[i][0].lower(), ivs[i][1].upper()
        if comps and float(lo) <= float(comps[-1][2]) + tol:
            comps[-1][0].append(i)
            comps[-1][2] = max(comps[-1][2], hi)
        else:
            comps.append([[i], lo, hi])
    comps.sort(key=lambda c: -float(c[2]))
    members = tuple(tuple(sorted(c[0])) for c in comps)
    enclosures = tuple((lower(c[1]), upper(c[2])) for c in comps)
    values = tuple(float((sum((M[i, i] for i in idx), arb(0)) / len(idx)).mid()) for idx in members)
    I = list(members[0])
    P_top = [[sum((cols[k][r] * cols[k][c] for k in I), arb(0)) for c in range(d)] for r in range(d)]
    P_float = [[float(e.mid()) for e in row] for row in P_top]
    projectors = (np.array(P_float),) + tuple(U[:, list(idx)] @ U[:, list(idx)].T for idx in members[1:])
    if len(comps) < 2:
        return Clusters(members, enclosures, values, projectors, None, None, None)
    top, second = comps[0], comps[1]
    gap = (lower(top[1] - second[2]), upper(top[2] - second[1]))
    J = [j for j in range(d) if j not in I]
    # Davis-Kahan: spectrum of M_II vs the rest (all below second's upper end)
    a = min((iv[0] for iv in _gershgorin(M, I)), key=lambda x: float(x.lower()))
    delta = a - second[2]
    if not delta > 0:
        return Clusters(members, enclosures, values, projectors, gap, lower(delta), None)
    sin_theta = sum((M[j, i] * M[j, i] for j in J for i in I), arb(0)).sqrt() / delta
    round_err = sum((abs(P_top[r][c] - P_float[r][c]) ** 2 for r in range(d) for c in range(d)), arb(0)).sqrt()
    return Clusters(members, enclosures, values, projectors, gap, lower(delta), upper(sin_theta + round_err))


def exact_eigenvalue_enclosures(A: sp.Matrix) -> tuple[tuple[tuple[float, float], ...], tuple[float, float]]:
    """Enclosures (floats, outward) of the distinct real eigenvalues of the exact (rational) matrix A, descending,
    and of the gap between the two largest: rational isolating intervals of width <= 1e-20 from SymPy's real-root
    isolation of the characteristic polynomial; the gap from the exact interval ends.  A needs two distinct
    eigenvalues."""
    x = sp.Symbol("x")
    ivs = sorted(sp.Poly(A.charpoly(x).as_expr(), x).intervals(eps=sp.Rational(1, 10**20)),
                 key=lambda t: -t[0][1])
    encl = tuple((lower_q(a), upper_q(b)) for (a, b), _ in ivs)
    (a1, b1), (a2, b2) = ivs[0][0], ivs[1][0]
    return encl, (lower_q(a1 - b2), upper_q(b1 - a2))
