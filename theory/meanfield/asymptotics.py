"""Paper B, the zero-temperature limit quantitatively: the Laplace expansion of X_beta[mu] - X_inf in powers of 1/beta.

Model: mu has the density f(y) = c0 + <a, y> + y^T C y on S^{d-1} (C symmetric, f > 0: smooth and positive, the
paper's assumption), b = B^T x, kappa = beta |b|, u = b/|b| (the Laplace maximiser). In polar coordinates about u,
y = cos(s) u + sin(s) w with w uniform on the unit sphere of u^perp and dsigma = sin^{d-2}(s) ds dw; averaging over
w (E w = 0, E w w^T = P/(d-1), P = I - u u^T, odd moments vanish):

    E_w f     = c0 + (a.u) cos s + (u^T C u) cos^2 s + t sin^2 s,                 t = tr(C P)/(d - 1),
    E_w [f y] = cos s E_w f u + sin^2 s P a/(d - 1) + 2 cos s sin^2 s P C u/(d - 1),

so m_beta(x) = int e^{beta <b, y>} y f dsigma / int e^{beta <b, y>} f dsigma is a ratio of one-dimensional integrals
I[g] = int_0^pi e^{-kappa (1 - cos s)} sin^{d-2}(s) g(cos s) ds.  With v = 1 - cos s (sin^2 s = v (2 - v),
sin^{d-2} s ds = (v (2 - v))^{(d-3)/2} dv) Watson's lemma gives, for g polynomial,

    I[g] ~ Gamma(alpha) kappa^{-alpha} sum_k h_k (alpha)_k kappa^{-k},   alpha = (d - 1)/2,

h_k the Taylor coefficients of (2 - v)^{(d-3)/2} g(1 - v) at v = 0 and (alpha)_k the rising factorial (the common
factor Gamma(alpha) kappa^{-alpha} 2^{(d-3)/2} cancels in the ratios).  SymPy expands the ratios in eps = 1/kappa:

    m_beta = u + sum_{k>=1} (r_k^u u + r_k^a P a + r_k^C P C u) kappa^{-k},

and since X_beta = P_perp_x V m_beta and X_inf = P_perp_x V y* (y* the Lagrange maximiser, = u):

    X_beta(x) - X_inf(x) ~ e_0(x) + sum_{k>=1} e_k(x) beta^{-k},   e_k = P_perp_x V (r_k^u u + r_k^a Pa + r_k^C PCu)/|b|^k,

with e_0 = P_perp_x V (u - y*) = 0 (the Laplace maximiser is the Lagrange one, a SymPy identity).  At first order SymPy finds
r_1^u = -(d - 1)/2, r_1^a = 1/f(u), r_1^C = 2/f(u), i.e. m_1 = grad_T log f(u) - (d - 1)/2 u: the error is O(1/beta)
with the coefficient e_1, for any smooth positive density (``first_order_identity`` states it as a residual).
The expansion is asymptotic, not convergent: the checks use it where its terms decrease, with the rigorous bound on
its remainder of :mod:`attnverify.theory.meanfield.laplace_remainder`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import derived, recorded
from attnverify.theory.meanfield.laplace_remainder import reduction_invariants, remainder_bound

d_sym = sp.Symbol("d", positive=True)
#: the density's invariants in the ratios of :meth:`AsymptoticForms.moment_ratios`: c0, a_u = <a, u>, uCu = u^T C u and
#: t = tr(C P)/(d - 1)
C0, AU, UCU, TT = sp.symbols("c0 a_u uCu t", real=True)
_EPS, _V = sp.symbols("epsilon v", real=True)


def _watson(g: sp.Expr, order: int) -> list:
    """[h_k (alpha)_k for k = 0..order]: the coefficients of kappa^{-k} of I[g] (module docstring, common factor
    dropped), g a polynomial in v."""
    alpha = (d_sym - 1) / 2
    weight = sum(sp.expand_func(sp.binomial((d_sym - 3) / 2, k)) * sp.Rational(-1, 2) ** k * _V**k
                 for k in range(order + 1))
    poly = sp.Poly(sp.expand(weight * g), _V)
    return [sp.expand(poly.coeff_monomial(_V**k) * sp.expand_func(sp.rf(alpha, k))) for k in range(order + 1)]


def _series_ratio(num: list, den: list) -> list:
    """The power-series coefficients of num/den (den[0] != 0), by the recursion r_k = (n_k - sum_j r_j d_{k-j})/d_0."""
    out: list = []
    for k in range(len(num)):
        out.append(sp.cancel((num[k] - sum(out[j] * den[k - j] for j in range(k))) / den[0]))
    return out


def _validated(X, B, V, c0, a, C) -> tuple[np.ndarray, ...]:
    X = np.atleast_2d(np.asarray(X, dtype=float))
    B, V = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
    a, C = np.asarray(a, dtype=float).ravel(), np.asarray(C, dtype=float)
    n = B.shape[0]
    if X.ndim != 2 or X.shape[1] != n or B.shape != (n, n) or V.shape != (n, n) or a.shape != (n,) or C.shape != (n, n):
        raise ValueError(f"shapes do not match: x {X.shape}, B {B.shape}, V {V.shape}, a {a.shape}, C {C.shape}")
    if not all(np.all(np.isfinite(M)) for M in (X, B, V, a, C)) or not np.isfinite(c0):
        raise ValueError("non-finite entries in x, B, V or the density")
    if np.max(np.abs(C - C.T)) > 1e-12 * max(1.0, np.max(np.abs(C))):
        raise ValueError("the density's quadratic form C must be symmetric")
    if not float(c0) - np.linalg.norm(a) - np.linalg.norm(C, 2) > 0:
        raise ValueError("the density c0 + <a, y> + y^T C y must be positive on the sphere (c0 > |a| + ||C||_2)")
    return X / np.linalg.norm(X, axis=1, keepdims=True), B, V, a, C


class AsymptoticForms:
    """The Laplace expansion of the field, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory` (its
    zeroth-order term compares the Laplace maximiser with ``self.maximiser_rule``)."""

    @derived
    def moment_ratios(self, order: int = 4) -> tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...], tuple[sp.Expr, ...]]:
        """(r^u, r^a, r^C): the coefficients of eps^k, k = 0..order, of the three ratios N_u/Z, T_02/((d-1) Z) and
        2 T_12/((d-1) Z) (module docstring), as SymPy expressions in c0, a_u, uCu, t and d.  r^u_0 = 1,
        r^a_0 = r^C_0 = 0."""
        if not (isinstance(order, int) and 1 <= order <= 6):
            raise ValueError(f"order must be an integer in 1..6, got {order!r}")
        c, s2 = 1 - _V, _V * (2 - _V)
        ewf = C0 + AU * c + UCU * c**2 + TT * s2
        Z = _watson(ewf, order)
        ratios = []
        for num, scale in ((_watson(c * ewf, order), 1), (_watson(s2, order), 1 / (d_sym - 1)),
                           (_watson(c * s2, order), 2 / (d_sym - 1))):
            ratios.append(tuple(sp.factor(scale * r) for r in _series_ratio(num, Z)))
        return tuple(ratios)  # type: ignore[return-value]

    def first_order_identity(self) -> sp.Matrix:
        """(r^u_1 + (d-1)/2, r^a_1 - 1/f(u), r^C_1 - 2/f(u)) with f(u) = c0 + a_u + uCu: zero iff the first-order term
        is m_1 = grad_T log f(u) - (d - 1)/2 u (grad_T f = P a + 2 P C u for the quadratic density)."""
        ru, ra, rc = self.moment_ratios(1)
        f_u = C0 + AU + UCU
        return sp.simplify(sp.Matrix([ru[1] + (d_sym - 1) / 2, ra[1] - 1 / f_u, rc[1] - 2 / f_u]))

    @derived
    def _ratio_lambdas(self, order: int) -> tuple[Callable, ...]:
        args = (C0, AU, UCU, TT, d_sym)
        return tuple(sp.lambdify(args, list(r), "numpy") for r in self.moment_ratios(order))

    @derived
    def laplace_is_lagrange(self) -> bool:
        """True when SymPy proves that the Laplace maximiser u = b/|b| (the centre of the polar coordinates) is the
        Lagrange maximiser y*(b) of ``zero_temperature_field`` (:meth:`maximiser_rule`): then
        e_0 = P_perp_x V (u - y*) vanishes identically."""
        b_i, S, y_star, _ = self.maximiser_rule()
        return sp.simplify(y_star - b_i / sp.sqrt(S)) == 0

    @recorded
    def field_error_expansion(self, X, B, V, c0: float, a, C, order: int = 4) -> np.ndarray:
        """The coefficients e_0, ..., e_order of X_beta[mu](x) - X_inf(x) ~ sum_k e_k(x) beta^{-k} (module docstring)
        at the rows of X (points of S^{d-1}), for the density c0 + <a, y> + y^T C y: an array of shape
        (order + 1, N, d).

        e_0 = P_perp_x V (u - y*) is the difference between the Laplace maximiser u = B^T x/|B^T x| and the Lagrange
        maximiser y*: zero by :meth:`laplace_is_lagrange` (a SymPy identity, so a wrong X_inf is not absorbed into
        e_0); e_k for k >= 1 from :meth:`moment_ratios`."""
        X, B, V, a, C = _validated(X, B, V, c0, a, C)
        d = B.shape[0]
        nb, u, au, _, uCu, tt, Pa, PCu = reduction_invariants(X, B, a, C)
        ru, ra, rc = (np.array([np.broadcast_to(np.asarray(v, dtype=float), nb.shape)
                                for v in lam(c0, au, uCu, tt, d)])
                      for lam in self._ratio_lambdas(order))

        def tangent(M: np.ndarray) -> np.ndarray:
            W = M @ V.T
            return W - X * np.sum(X * W, axis=1, keepdims=True)

        if not self.laplace_is_lagrange():
            raise ArithmeticError("SymPy does not identify the Laplace maximiser b/|b| with the Lagrange maximiser")
        out = np.zeros((order + 1, len(X), d))                   # e_0 = 0 (laplace_is_lagrange)
        for k in range(1, order + 1):
            m_k = ru[k][:, None] * u + ra[k][:, None] * Pa + rc[k][:, None] * PCu
            out[k] = tangent(m_k) / nb[:, None] ** k
        return out

    @recorded
    def field_error_remainder_bound(self, X, B, V, c0: float, a, C, betas, terms: int = 4) -> np.ndarray:
        """(n_beta, N): a rigorous upper bound on |X_beta(x) - X_inf(x) - sum_{k<terms} e_k(x) beta^{-k}| at the rows
        of X, for every beta (:mod:`attnverify.theory.meanfield.laplace_remainder`: Watson's lemma with Lagrange's
        remainder, in ball arithmetic, from the density alone: it does not read :meth:`field_error_expansion`)."""
        X, B, V, a, C = _validated(X, B, V, c0, a, C)
        return remainder_bound(X, B, V, c0, a, C, betas, terms)


def leading_order(coefficients: np.ndarray, floor: float) -> int:
    """The index k of the first coefficient e_k whose largest norm exceeds ``floor`` (the rounding level): the
    derived exponent of sup_x |X_beta - X_inf| is -k (len(coefficients) when every one is below the floor)."""
    norms = np.max(np.linalg.norm(np.asarray(coefficients), axis=-1), axis=-1)
    above = np.nonzero(norms > floor)[0]
    return int(above[0]) if above.size else len(norms)


def expansion_sum(coefficients: np.ndarray, beta: float, terms: int | None = None) -> np.ndarray:
    """sum_{k < terms} e_k beta^{-k} (all terms when None): the derived X_beta - X_inf at the points."""
    E = np.asarray(coefficients)
    n = len(E) if terms is None else terms
    return sum(E[k] * float(beta) ** (-k) for k in range(n))


def asymptotic_betas(coefficients: np.ndarray, betas, ratio: float = 0.25) -> np.ndarray:
    """True where the expansion is in its asymptotic regime at beta: every term from the first order on is at most
    ``ratio`` times the one before it, at every point (|e_{k+1}| beta^{-1} <= ratio |e_k| for k = 1..order-1)."""
    E = np.asarray(coefficients)
    norms = np.linalg.norm(E, axis=-1)                       # (order + 1, N)
    out = []
    for beta in np.asarray(betas, dtype=float):
        ok = all(np.all(norms[k + 1] / beta <= ratio * norms[k] + 1e-300) for k in range(1, len(E) - 1))
        out.append(ok)
    return np.array(out, dtype=bool)
