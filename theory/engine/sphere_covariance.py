r"""The covariance of the hardmax push-forward of the uniform law on a sphere, as one-dimensional integrals.

Tokens and queries uniform on the sphere of radius R in R^d; as the scale of A grows the engine's sphere map
R I_{d/2}(R|b|)/I_{d/2-1}(R|b|) b/|b| (b = A x / tau) tends to its hardmax limit R A x/|A x| (``sphere_radial``'s
large limit), whose push-forward has mean 0 (the map is odd) and covariance

    Cov = R^2 V E[A z z^T A^T / |A z|^2] V^T,   z uniform on the unit sphere.

With the SVD A = U S W^T (z' = W^T z is again uniform, lambda_j = s_j^2) this is R^2 V U diag(lambda_i c_i) U^T V^T,
c_i = E[z_i^2 / sum_j lambda_j z_j^2]: a Dirichlet(1/2, ..., 1/2) average, since (z_1^2, ..., z_d^2) is
Dirichlet(1/2, ..., 1/2). Derivation of its one-dimensional form (SymPy, :func:`coefficient_integrand`):

* the ratio is homogeneous of degree 0, so with G ~ N(0, I_d) = |G| z (|G| independent of z),
  c_i = E[G_i^2 / sum_j lambda_j G_j^2];
* 1/q = int_0^oo e^{-t q} dt and Tonelli (everything is positive) give
  c_i = int_0^oo E[G_i^2 e^{-t lambda_i G_i^2}] prod_{j != i} E[e^{-t lambda_j G_j^2}] dt;
* the one-dimensional expectations, by sympy.stats: E[X^2 e^{-t l X^2}] = (1 + 2 t l)^{-3/2},
  E[e^{-t l X^2}] = (1 + 2 t l)^{-1/2}; so c_i = int_0^oo (1 + 2 t lambda_i)^{-1} prod_j (1 + 2 t lambda_j)^{-1/2} dt.

Check by hand: all lambda_j = l gives c_i = int (1 + 2 t l)^{-1 - d/2} dt = 1/(l d), so Cov = (R^2/d) V V^T.
:func:`certified_coefficients` encloses the c_i in Arb balls (acb.integral on [0, T] after t = e^u - 1, plus a
rigorous bound of the tail beyond T).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

_t, _l = sp.symbols("t_int lambda_j", positive=True)


@lru_cache(maxsize=None)
def gaussian_factors() -> tuple[sp.Expr, sp.Expr]:
    """(E[X^2 e^{-t l X^2}], E[e^{-t l X^2}]) for X ~ N(0, 1), by sympy.stats; symbols ``t_int``, ``lambda_j``."""
    from sympy.stats import E, Normal

    X = Normal("X_std", 0, 1)
    return sp.simplify(E(X**2 * sp.exp(-_t * _l * X**2))), sp.simplify(E(sp.exp(-_t * _l * X**2)))


def factor_exponents() -> tuple[sp.Expr, sp.Expr]:
    """The powers p_sel, p_rest with E[X^2 e^{-t l X^2}] = (1 + 2 t l)^p_sel and E[e^{-t l X^2}] = (1 + 2 t l)^p_rest
    (read off the derived factors; a factor of another shape raises)."""
    base = 1 + 2 * _t * _l
    out = []
    for f in gaussian_factors():
        p = sp.simplify(sp.log(f) / sp.log(base))
        if not p.is_Rational or sp.simplify(base**p - f) != 0:
            raise ValueError(f"derived factor {f} is not a power of {base}")
        out.append(p)
    return out[0], out[1]


def coefficient_integrand(lambdas, i: int) -> tuple[sp.Expr, sp.Symbol]:
    """The integrand of c_i over t in [0, oo) for the given lambdas (SymPy numbers or symbols), and t."""
    sel, rest = gaussian_factors()
    expr = sel.subs(_l, lambdas[i])
    for j, lj in enumerate(lambdas):
        if j != i:
            expr *= rest.subs(_l, lj)
    return expr, _t


def symbolic_form() -> sp.Eq:
    """c_i = int_0^oo (1 + 2 t lambda_i)^{p_sel - p_rest} prod_{j=1}^d (1 + 2 t lambda_j)^{p_rest} dt, the powers
    from :func:`factor_exponents` (for the derivation document)."""
    sel, rest = factor_exponents()
    i, j, d = sp.symbols("i j d", integer=True, positive=True)
    lam = sp.IndexedBase("lambda")
    body = (1 + 2 * _t * lam[i]) ** (sel - rest) * sp.Product((1 + 2 * _t * lam[j]) ** rest, (j, 1, d))
    t = sp.Symbol("t", positive=True)
    return sp.Eq(sp.Indexed(sp.IndexedBase("c"), i), sp.Integral(body.subs(_t, t), (t, 0, sp.oo)))


def _check_lambdas(lambdas) -> list:
    """The lambdas as exact SymPy numbers: a float as the Rational of its own binary value (never a nearby "simple"
    number: sympy.nsimplify turned 0.0006624 into a product of prime powers, and 0.1 into 1/10, which is not the
    float given, so the certificate was of another lambda)."""
    lam = [sp.Rational(float(x)) if isinstance(x, (float, np.floating)) else sp.sympify(x) for x in lambdas]
    if len(lam) < 2 or any(not (x.is_number and x.is_real and x > 0) for x in lam):
        raise ValueError(f"lambdas must be at least two exact numbers > 0 (squared singular values), got {lambdas!r}")
    return lam


def certified_coefficients(lambdas, prec: int = 80) -> list:
    """Arb balls containing c_i = E[z_i^2 / sum_j lambda_j z_j^2] (z uniform on the unit sphere in R^d, d =
    len(lambdas)), each lambda an exact number > 0 (int, Rational, Fraction, binary float).

    c_i = int_0^T f_i + int_T^oo f_i. The first part: acb.integral over u in [0, log(1 + T)] of f_i(e^u - 1) e^u
    (every factor (1 + 2 lambda_j (e^u - 1))^p evaluated as exp(p log(.)) with the branch cut checked, so Arb's
    error bound holds). The tail: 0 <= f_i(t) <= (2 lambda_i t)^{-1} prod_j (2 lambda_j t)^{-1/2} = K t^{-1-d/2},
    so 0 <= int_T^oo f_i <= K T^{-d/2} (2/d); T is chosen so that this is below 2^-prec relative to K."""
    from flint import acb, arb, ctx

    from attnverify.theory.certified import exact_ball

    lam = _check_lambdas(lambdas)
    sel, rest = factor_exponents()
    balls = [exact_ball(x) for x in lam]
    d = len(balls)
    old = ctx.prec
    ctx.prec = prec + 20
    try:
        out = []
        for i in range(d):
            pows = [sel if j == i else rest for j in range(d)]
            pw = [arb(int(p.p)) / int(p.q) for p in pows]
            K = arb(1) / (2 * balls[i])
            for lj in balls:
                K = K / (2 * lj).sqrt()
            T = arb(2) ** (2 * (prec + 10) // d + 2)                    # K T^{-d/2} (2/d) < K 2^{-prec}
            upper_u = (T + 1).log()

            def f(u, analytic, pw=pw):
                t = u.exp() - 1
                s = acb(0)
                for p, lj in zip(pw, balls):
                    s += p * (1 + 2 * lj * t).log(analytic=analytic)
                return (s + u).exp()
            head = acb.integral(f, 0, upper_u, rel_tol=arb(2) ** (-prec)).real
            tail = K * T ** (arb(-d) / 2) * 2 / d
            out.append(head + arb(0).union(tail))
        return out
    finally:
        ctx.prec = old
