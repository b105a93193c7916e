r"""The token laws and their exponential tilting, everything from the law's moment-generating function M(b).

For a token x with law mu and a vector b, tilting by e^{<b, x>} gives the law e^{<b,x>} mu / M(b), M(b) = E e^{<b,x>}:

* its mean is grad log M(b) (the tilted mean), its second moment Hess log M(b) + mean mean^T, and
  E[e^{<b,x>} g(x)] = M(b) E_b[g(x)].

Coordinates: e_1..e_k (the directions), u (the unit vector of the query's part orthogonal to the directions) and w
(any further unit vector orthogonal to all of them; by the laws' symmetry every such w gives the same moments, and
the complement has d - k - 1 of them).  The score vector is b = (b_e, t gamma, 0) with t = |query's orthogonal part|.
u-coordinates of first moments are returned divided by t (they are odd in t), so that every product of two of them
carries an explicit t^2 and t enters the results only through t^2.

* Gaussian N(m, Sigma), Sigma = diag(s_1..s_k) + r P_rest, m in the span: the coordinates are independent normals,
  so log M is the sum of the one-dimensional log-MGFs, each computed by sympy.stats:
  log E e^{bX} = m b + s b^2/2 for X ~ N(m, s).  Tilted law: N(m + Sigma b, Sigma).
* Uniform on the sphere of radius R in R^d (centred at 0): M(b) = phi(|b|), phi(r) = Gamma(d/2) (2/(R r))^{d/2-1}
  I_{d/2-1}(R r) (the classical Bessel form of the spherical average of e^{<b,x>}; checked by quadrature in the
  tests).  psi = log phi is differentiated by SymPy and written with I_{d/2-1}, I_{d/2} only (recurrence
  I_{nu-1} - I_{nu+1} = (2 nu / z) I_nu): psi'(r) = R I_{d/2}(R r) / I_{d/2-1}(R r), so the tilted mean is
  R I_{d/2}(R|b|)/I_{d/2-1}(R|b|) b/|b|.  Chain rule for the radial function: grad = psi'(r) grad r,
  Hess = psi''(r) grad r grad r^T + psi'(r) Hess r, with r = |b| differentiated by SymPy.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

d_sym = sp.Symbol("d", integer=True, positive=True)
_R, _r, _z = sp.symbols("R_sphere r_b z_b", positive=True)


@dataclass(frozen=True)
class Tilted:
    """Tilting moments of one law at one score vector b (coordinates above; u-first-moments divided by t).

    log_mgf: log M(b); mean_e: E_b[x_e] (k); mean_u: E_b[x_u]/t; second_e: E_b[x_e x_e^T] (k x k);
    second_u: E_b[x_u^2]; second_w: E_b[x_w^2] (each further complement direction)."""

    log_mgf: sp.Expr
    mean_e: tuple[sp.Expr, ...]
    mean_u: sp.Expr
    second_e: tuple[tuple[sp.Expr, ...], ...]
    second_u: sp.Expr
    second_w: sp.Expr


@lru_cache(maxsize=None)
def gaussian_log_mgf_1d() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    """log E e^{b X} for X ~ N(m, s), by sympy.stats; returns (expression, (b, m, s))."""
    from sympy.stats import E, Normal

    b, m = sp.symbols("b m", real=True)
    s = sp.Symbol("s", positive=True)
    X = Normal("X", m, sp.sqrt(s))
    return sp.expand(sp.log(sp.simplify(E(sp.exp(b * X))))), (b, m, s)


@lru_cache(maxsize=None)
def sphere_radial() -> dict[str, sp.Expr]:
    """phi(r) (the MGF of the uniform law on the sphere of radius R in R^d at |b| = r), psi' = (log phi)' and
    psi'' in the normal form (I_{d/2-1}, I_{d/2}), and the two limits of psi'(r): r -> 0 (psi'/r -> R^2/d) and
    r -> oo (psi' -> R), as SymPy limits.  Symbols: R = ``R_sphere``, r = ``r_b``, d."""
    nu = d_sym / 2 - 1
    phi = sp.gamma(d_sym / 2) * (2 / (_R * _r)) ** nu * sp.besseli(nu, _R * _r)
    psi = sp.expand_log(sp.log(phi), force=True)
    d1 = sp.simplify(bessel_normal_form(sp.diff(psi, _r), nu))
    d2 = sp.simplify(bessel_normal_form(sp.diff(d1, _r), nu))
    small = sp.gammasimp(sp.limit(d1 / _r, _r, 0))
    large = sp.limit(d1, _r, sp.oo)
    return {"phi": phi, "psi": psi, "dpsi": d1, "d2psi": d2, "small": small, "large": large}


def bessel_normal_form(expr: sp.Expr, nu0: sp.Expr) -> sp.Expr:
    """``expr`` with every besseli(nu0 + j, z) (j an integer) written through I_{nu0}(z) and I_{nu0+1}(z), by the
    recurrence I_{nu-1}(z) = I_{nu+1}(z) + (2 nu / z) I_nu(z) used downwards and upwards."""
    def reduce(nu, z):
        j = sp.simplify(nu - nu0)
        if not j.is_Integer:
            return sp.besseli(nu, z)
        j = int(j)
        if j in (0, 1):
            return sp.besseli(nu, z)
        if j > 1:          # I_{n} = I_{n-2} - 2 (n - 1)/z I_{n-1}
            return reduce(nu - 2, z) - 2 * (nu - 1) / z * reduce(nu - 1, z)
        return reduce(nu + 2, z) + 2 * (nu + 1) / z * reduce(nu + 1, z)   # I_{n} = I_{n+2} + 2 (n+1)/z I_{n+1}
    return expr.replace(lambda e: isinstance(e, sp.besseli), lambda e: reduce(*e.args))


def tilt(law: str, mean_e, cov_e, cov_rest, radius, b_e, gamma, t) -> Tilted:
    """The tilting moments of a component's law at b = (b_e, t gamma, 0) (see the module docstring)."""
    if law == "gaussian":
        return _gaussian(tuple(mean_e), tuple(cov_e), cov_rest, tuple(b_e), gamma, t)
    if law == "sphere":
        return _sphere(radius, tuple(b_e), gamma, t)
    raise ValueError(f"law {law!r}: expected 'gaussian' or 'sphere'")


def untilted(law: str, T: Tilted, mean_e, cov_e, cov_rest, radius) -> Tilted:
    """``T`` (a law's tilting moments at some b) with its moments read as the law's own, the log-MGF kept: the tilted
    mean m + Sigma b read as m, the second moment Sigma + m m^T (Gaussian; on the sphere mean 0 and second moment
    R^2/d I).  A wrong derivation on purpose: the self-test's dropped-tilting-term mutant."""
    k = len(T.mean_e)
    if law == "gaussian":
        m, s = tuple(mean_e), tuple(cov_e)
        second_e = tuple(tuple((s[i] if i == j else 0) + m[i] * m[j] for j in range(k)) for i in range(k))
        return Tilted(T.log_mgf, m, sp.Integer(0), second_e, cov_rest, cov_rest)
    r2 = radius**2 / d_sym
    return Tilted(T.log_mgf, (sp.Integer(0),) * k, sp.Integer(0),
                  tuple(tuple(r2 if i == j else sp.Integer(0) for j in range(k)) for i in range(k)), r2, r2)


def _gaussian(mean_e, cov_e, r, b_e, gamma, t) -> Tilted:
    f, (b, m, s) = gaussian_log_mgf_1d()
    k = len(b_e)
    bs = sp.symbols(f"b1:{k + 3}", real=True)             # b_1..b_k, b_u, b_w
    ms = (*mean_e, 0, 0)
    ss = (*cov_e, r, r)
    log_m = sum(f.subs({b: bi, m: mi, s: si}) for bi, mi, si in zip(bs, ms, ss))   # independent coordinates
    grad = [sp.diff(log_m, bi) for bi in bs]
    at = dict(zip(bs, (*b_e, t * gamma, 0)))
    mean = [g.subs(at) for g in grad]
    hess = lambda i, j: sp.diff(grad[i], bs[j]).subs(at)   # noqa: E731
    second_e = tuple(tuple(hess(i, j) + mean[i] * mean[j] for j in range(k)) for i in range(k))
    return Tilted(log_m.subs(at), tuple(mean[:k]), mean[k] / t, second_e,
                  hess(k, k) + mean[k] ** 2, hess(k + 1, k + 1) + mean[k + 1] ** 2)


def _sphere(radius, b_e, gamma, t) -> Tilted:
    rad = sphere_radial()
    k = len(b_e)
    bs = sp.symbols(f"b1:{k + 3}", real=True)
    rb = sp.sqrt(sum(bi**2 for bi in bs))
    grad_r = [sp.diff(rb, bi) for bi in bs]
    at = dict(zip(bs, (*b_e, t * gamma, 0)))
    r_at = sp.sqrt(sum(bi**2 for bi in b_e) + t**2 * gamma**2)
    to = {_R: radius, _r: r_at}
    psi, d1, d2 = (rad[key].subs(to) for key in ("psi", "dpsi", "d2psi"))
    gr = [g.subs(at) for g in grad_r]
    mean = [d1 * g for g in gr]

    def hess(i, j):
        return d2 * gr[i] * gr[j] + d1 * sp.diff(grad_r[i], bs[j]).subs(at)
    second_e = tuple(tuple(hess(i, j) + mean[i] * mean[j] for j in range(k)) for i in range(k))
    return Tilted(psi, tuple(mean[:k]), mean[k] / t, second_e, hess(k, k) + mean[k] ** 2,
                  hess(k + 1, k + 1) + mean[k + 1] ** 2)
