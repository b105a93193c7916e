r"""Paper C (``slr``): the structure of the population risk in the overlaps, and a fast evaluator built on it.

Structure (SymPy: ``sympy.Poly`` of the expanded risk of :mod:`attnverify.theory.slr.population`).  R is a polynomial in
(nu, theta, eta, rho) whose coefficients are functions of kappa (and of lam, gamma, d, L, eps) only:

    R = c_1(kappa) + c_nu(kappa) nu + c_tt theta^2 + c_te theta eta + c_tr theta rho + c_er eta rho + c_rr rho^2,

affine in nu, of total degree 2 in (theta, eta, rho) with no linear term in them (hence the partials in theta, eta,
rho vanish on M = {theta = eta = rho = 0}).  :func:`risk_structure` returns the monomials and coefficients and checks
that nothing else occurs.

Evaluator.  Every coefficient and its kappa-derivative is lambdified once (NumPy/SciPy, zeta_sigma(t) by Owen's T);
the risk, its five partials and its 5 x 5 overlap Hessian are then sums of a few products.  It is the same closed
form as :mod:`attnverify.theory.slr.eval` (the tests compare them), about ten times faster per call, which is what a
batched gradient descent of 1.2e5 steps needs.

The structure and the coefficient functions are methods of :class:`CoefficientForms`, a part of Paper C's theory
object (attnverify.theory.slr); :meth:`CoefficientForms.risk_evaluator` gives a :class:`RiskEvaluator` at fixed
parameters that evaluates that object's risk (a replaced risk or zeta reaches it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived
from attnverify.theory.slr import gauss as G
from attnverify.theory.slr.symbols import PARAMS, eta, kappa, nu, rho, theta

POLY_VARS = (nu, theta, eta, rho)
#: the monomials of R in (nu, theta, eta, rho), as exponent tuples
MONOMIALS = ((0, 0, 0, 0), (1, 0, 0, 0), (0, 2, 0, 0), (0, 1, 1, 0), (0, 1, 0, 1), (0, 0, 1, 1), (0, 0, 0, 2))


def decaying_form(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every exponential moved out of the denominators and merged (exp(a) exp(-b) -> exp(a - b)), term
    by term: 1/(A e^x + B e^x) -> e^(-x)/(A + B).  The coefficients then hold exp only of non-positive arguments, so
    a float64 evaluation never overflows at large d kappa^2 lam^2 (it underflows to 0 where the term vanishes)."""
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        num, den = sp.fraction(sp.together(term))
        den = sp.factor_terms(den)
        moved = [f for f in sp.Mul.make_args(den) if isinstance(f, sp.exp)]
        rest = sp.Mul(*[f for f in sp.Mul.make_args(den) if not isinstance(f, sp.exp)])
        out.append(G.combine_exp(num * sp.Mul(*[sp.exp(-f.args[0]) for f in moved]) / rest))
    return sp.Add(*out)


class CoefficientForms(ClosedForms):
    """The risk as a polynomial in (nu, theta, eta, rho) and its fast evaluator (module docstring)."""

    @derived
    def risk_structure(self) -> dict[tuple[int, int, int, int], sp.Expr]:
        """The coefficients of R as a polynomial in (nu, theta, eta, rho): exponent tuple -> coefficient (a function
        of kappa and the parameters).  Raises ArithmeticError if a monomial outside MONOMIALS occurs, or a
        coefficient depends on an overlap other than kappa."""
        P = sp.Poly(sp.expand(self.risk()), *POLY_VARS)
        out = {}
        for monom, coeff in P.terms():
            if monom not in MONOMIALS:
                raise ArithmeticError(f"R has a monomial {monom} in (nu, theta, eta, rho) outside the expected set")
            if coeff.free_symbols & set(POLY_VARS):
                raise ArithmeticError(f"the coefficient of {monom} depends on an overlap other than kappa")
            out[monom] = decaying_form(coeff)
        return out

    def structure_residual(self) -> sp.Expr:
        """R minus its reassembly from :meth:`risk_structure`: 0 (SymPy: expanded, exponentials merged,
        simplified)."""
        rebuilt = sum(c * sp.Mul(*(v ** e for v, e in zip(POLY_VARS, m))) for m, c in self.risk_structure().items())
        return sp.simplify(G.combine_exp(sp.expand(self.risk() - rebuilt)))

    @derived
    def coefficient_function(self, order: int) -> Callable:
        """One lambdified function of (kappa, lam, gamma, d, L, eps) returning, for each monomial of MONOMIALS, its
        coefficient and its kappa-derivatives up to ``order`` (common subexpressions shared across all of them;
        zeta_sigma(t) by this object's ``zeta_np``)."""
        args = (kappa,) + PARAMS
        exprs = []
        for m in MONOMIALS:
            c = self.risk_structure().get(m, sp.Integer(0))
            exprs.append(c)
            for _ in range(order):
                c = sp.diff(c, kappa)
                exprs.append(c)
        return sp.lambdify(args, exprs, modules=[{"zeta_erf": self.zeta_np}, "scipy", "numpy"], cse=True)

    def risk_evaluator(self, lam: float, gamma: float, d: int, L: int, eps: float) -> "RiskEvaluator":
        """The closed-form risk, gradient and overlap Hessian of this object at the parameters (lam, gamma, d, L,
        eps) (a :class:`RiskEvaluator`; the coefficient functions are lambdified once per object)."""
        return RiskEvaluator(float(lam), float(gamma), int(d), int(L), float(eps), self)


@dataclass(frozen=True)
class RiskEvaluator:
    """The closed-form risk at fixed parameters (lam, gamma, d, L, eps), fast and vectorised over points, of the
    theory object ``forms`` (:meth:`CoefficientForms.risk_evaluator`).

    ``risk(o)``, ``gradient(o)`` (the partials dR/d(kappa, nu, theta, eta, rho)) and ``hessian(o)`` take overlaps
    ``o`` of shape (..., 5) in the order (kappa, nu, theta, eta, rho); ``lam`` may be overridden per call (a
    temperature schedule)."""

    lam: float
    gamma: float
    d: int
    L: int
    eps: float
    forms: Any = field(repr=False, compare=False)

    def _coeffs(self, k: np.ndarray, lam: float | None, order: int) -> list[tuple[tuple[int, ...], list]]:
        p = (self.lam if lam is None else lam, self.gamma, self.d, self.L, self.eps)
        flat = [np.asarray(x, dtype=float) + 0.0 * k for x in self.forms.coefficient_function(order)(k, *p)]
        n = order + 1
        return [(m, flat[i * n:(i + 1) * n]) for i, m in enumerate(MONOMIALS)]

    def risk(self, o, lam: float | None = None) -> np.ndarray:
        o = np.asarray(o, dtype=float)
        k, n, t, e, r = (o[..., i] for i in range(5))
        c = [x[0] for _, x in self._coeffs(k, lam, 0)]
        return c[0] + c[1] * n + c[2] * t * t + c[3] * t * e + c[4] * t * r + c[5] * e * r + c[6] * r * r

    def gradient(self, o, lam: float | None = None) -> np.ndarray:
        """dR/d(kappa, nu, theta, eta, rho), shape (..., 5)."""
        o = np.asarray(o, dtype=float)
        k, n, t, e, r = (o[..., i] for i in range(5))
        (c1, d1), (cn, dn), (ctt, dtt), (cte, dte), (ctr, dtr), (cer, der), (crr, drr) = \
            (x for _, x in self._coeffs(k, lam, 1))
        return np.stack([d1 + dn * n + dtt * t * t + dte * t * e + dtr * t * r + der * e * r + drr * r * r,
                         cn + 0.0 * n,
                         2 * ctt * t + cte * e + ctr * r,
                         cte * t + cer * r,
                         ctr * t + cer * e + 2 * crr * r], axis=-1)

    def hessian(self, o, lam: float | None = None) -> np.ndarray:
        """The 5 x 5 second partials, shape (..., 5, 5)."""
        o = np.asarray(o, dtype=float)
        k, n, t, e, r = (o[..., i] for i in range(5))
        (c1, d1, e1), (cn, dn, en), (ctt, dtt, ett), (cte, dte, ete), (ctr, dtr, etr), (cer, der, eer), \
            (crr, drr, err) = (x for _, x in self._coeffs(k, lam, 2))
        z = 0.0 * k
        rows = [[e1 + en * n + ett * t * t + ete * t * e + etr * t * r + eer * e * r + err * r * r, dn + z,
                 2 * dtt * t + dte * e + dtr * r, dte * t + der * r, dtr * t + der * e + 2 * drr * r],
                [dn + z, z, z, z, z],
                [None, z, 2 * ctt + z, cte + z, ctr + z],
                [None, z, None, z, cer + z],
                [None, z, None, None, 2 * crr + z]]
        for i in range(5):
            for j in range(i):
                rows[i][j] = rows[j][i]
        return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)
