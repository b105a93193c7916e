r"""Certified zeros of a map G: R^n -> R^n in a box, and certified eigenvalue signs of a small ball matrix.

Krawczyk's test.  For a box X, its midpoint m, an approximate inverse Y of G'(m) (a float matrix; any Y works) and
an enclosure G'(X) of the Jacobian on X, the Krawczyk operator

    K(X) = m - Y G(m) + (I - Y G'(X)) (X - m)

contains every zero of G in X.  If K(X) lies in the interior of X, G has exactly one zero in X (Krawczyk 1969,
Moore 1977); if K(X) and X are disjoint, none.  :func:`zero_boxes` covers the search box by bisection: a box is
discarded when a component of G(X) excludes 0, when ``keep`` rejects it, or when K(X) misses X; a box with K(X) in
its interior is certified and shrunk (X <- K(X) n X) to width ``tol``; a box narrower than ``tol`` otherwise is
returned unresolved.  No zero of G in the search box is missed.  Everything runs in Arb ball arithmetic
(python-flint), at the caller's precision.

Eigenvalue signs.  :func:`sign_counts` takes a ball matrix whose exact value is known to have real eigenvalues, its
characteristic polynomial by Faddeev-LeVerrier in balls, and counts positive and negative roots by Descartes'
rule of signs, which is exact for a polynomial with only real roots and no zero coefficient.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from flint import arb

from attnverify.theory.refusals import OutsideCertifiedRange

Box = tuple[tuple[arb, arb], ...]


@dataclass(frozen=True)
class ZeroBox:
    """A box holding zeros of G: ``unique`` when Krawczyk's test proved exactly one zero in ``unique_in``."""

    box: Box
    unique: bool
    unique_in: Box | None = None


def _ball(lo: arb, hi: arb) -> arb:
    return lo.union(hi)


def _krawczyk(G: Callable, JG: Callable, X: Box) -> tuple[list[arb], bool] | None:
    """K(X) and whether G'(m) could be inverted; None when K is not finite."""
    n = len(X)
    m = [((lo + hi) / 2).mid() for lo, hi in X]
    Xb = [_ball(lo, hi) for lo, hi in X]
    Gm = G(m)
    JX = JG(Xb)
    Jm = np.array([[float(v.mid()) for v in row] for row in JG(m)])
    try:
        Y = np.linalg.inv(Jm)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Y)):
        return None
    Yb = [[arb(float(Y[i, j])) for j in range(n)] for i in range(n)]
    K = []
    for i in range(n):
        v = m[i] - sum((Yb[i][j] * Gm[j] for j in range(n)), arb(0))
        for j in range(n):
            c = (arb(1) if i == j else arb(0)) - sum((Yb[i][l] * JX[l][j] for l in range(n)), arb(0))
            v += c * (Xb[j] - m[j])
        if not v.is_finite():
            return None
        K.append(v)
    return K, True


def zero_boxes(G: Callable, JG: Callable, box: Box, tol: float, max_boxes: int,
               keep: Callable[[Box], bool] = lambda X: True) -> list[ZeroBox]:
    """Every zero of G in ``box`` (n pairs of exact ball ends), enclosed (module docstring).  G maps a list of n
    balls to n balls, JG to an n x n list of lists.  More than ``max_boxes`` boxes: OutsideCertifiedRange (a
    ValueError: a degenerate G, refused as uncertifiable, never approximated)."""
    out: list[ZeroBox] = []
    stack = [tuple(box)]
    count = 0
    while stack:
        X = stack.pop()
        count += 1
        if count > max_boxes:
            raise OutsideCertifiedRange("zero search did not terminate within ", max_boxes, " boxes (a degenerate field)")
        if not keep(X):
            continue
        if any(not g.contains(0) for g in G([_ball(lo, hi) for lo, hi in X])):
            continue
        res = _krawczyk(G, JG, X)
        if res is not None:
            K = res[0]
            if any(k.upper() < lo or k.lower() > hi for k, (lo, hi) in zip(K, X)):
                continue                                       # no zero in X
            if all(lo < k.lower() and k.upper() < hi for k, (lo, hi) in zip(K, X)):
                out.append(ZeroBox(_refine(G, JG, X, K, tol), True, X))
                continue
        widths = [float((hi - lo).upper()) for lo, hi in X]
        if max(widths) <= tol:
            out.append(ZeroBox(X, False))
            continue
        j = int(np.argmax(widths))
        lo, hi = X[j]
        s = (lo + (hi - lo) * arb(4711) / 10000).mid()          # off-centre: symmetric zeros avoid box edges
        stack.append(X[:j] + ((s, hi),) + X[j + 1:])
        stack.append(X[:j] + ((lo, s),) + X[j + 1:])
    return out


def _refine(G, JG, X: Box, K: list[arb], tol: float) -> Box:
    """Shrink a box holding a unique zero: X <- K(X) n X while it narrows."""
    for _ in range(60):
        Y = tuple((max(lo, k.lower()), min(hi, k.upper())) for k, (lo, hi) in zip(K, X))
        Y = tuple((arb(a), arb(b)) for a, b in Y)
        done = max(float((hi - lo).upper()) for lo, hi in Y) <= tol or Y == X
        X = Y
        if done:
            break
        res = _krawczyk(G, JG, X)
        if res is None:
            break
        K = res[0]
    return X


def char_poly(M: list[list[arb]]) -> list[arb]:
    """Coefficients (1, c_1, .., c_n) of det(lambda I - M) = lambda^n + c_1 lambda^{n-1} + ... + c_n, in balls
    (Faddeev-LeVerrier: N_1 = I, c_j = -tr(M N_j)/j, N_{j+1} = M N_j + c_j I)."""
    n = len(M)
    N = [[arb(1) if i == j else arb(0) for j in range(n)] for i in range(n)]
    coeffs = [arb(1)]
    for k in range(1, n + 1):
        MN = [[sum((M[i][l] * N[l][j] for l in range(n)), arb(0)) for j in range(n)] for i in range(n)]
        c = -sum((MN[i][i] for i in range(n)), arb(0)) / k
        coeffs.append(c)
        N = [[MN[i][j] + (c if i == j else arb(0)) for j in range(n)] for i in range(n)]
    return coeffs


def sign_counts(M: list[list[arb]]) -> tuple[int, int] | None:
    """(number of positive, number of negative) eigenvalues of the exact matrix in the ball matrix M, valid when
    its eigenvalues are real (Descartes' rule is then exact); None when a coefficient's ball holds 0."""
    c = char_poly(M)
    if any(v.contains(0) for v in c):
        return None
    signs = [1 if v > 0 else -1 for v in c]
    changes = lambda s: sum(1 for a, b in zip(s, s[1:]) if a != b)      # noqa: E731
    neg = [s * (-1) ** (len(c) - 1 - i) for i, s in enumerate(signs)]   # p(-lambda)
    return changes(signs), changes(neg)
