r"""Paper A (signal-subspace recovery by a softmax query): closed forms derived with SymPy.

Model.  A sequence has L tokens in R^d; R informative tokens x_i = c xi + z_i, L - R nuisance tokens
x_i = z_i, with z_i ~ N(0, sigma^2 I_d), |xi| = |q| = 1, rho = <q, xi>.  Scores s_i = beta <q, x_i>,
attention a = softmax(s), output f_q(X) = sum_i a_i x_i, objective J = E |f_q(X)|^2.
``sign="fixed"``: c = theta.  ``sign="symmetric"``: c = eps theta with one Rademacher eps per sequence.

Long-sequence limit (R, L - R -> oo, R/L fixed): numerator and denominator of the softmax average
obey a law of large numbers, so f_q -> f_oo = (R E_I[e^s x] + (L-R) E_N[e^s x]) / (R E_I[e^s] + (L-R) E_N[e^s]).
With g = <q, z> ~ N(0, sigma^2) the Gaussian expectations E e^{beta g}, E g e^{beta g}, E e^{2 beta g}
are computed by SymPy (sympy.stats); P_perp_q z is independent of the scores and has mean zero.
Leading finite-L term: (d - 1) sigma^2 E sum_i a_i^2 (the orthogonal noise energy), with
sum_i a_i^2 replaced by its ratio-LLN limit.  It is the only O(1/L) term carrying a factor d; the other O(1/L)
terms (q-direction noise, ratio bias, informative-mass fluctuation) come from the second-order delta method
in the (xi, q) plane (:func:`in_plane_term`).

The expected nuisance attention mass is 1 - w(rho), with an optional O(1/L) ratio bias (delta method).
Equilibria of rho' = F(rho) = (1 - rho^2) J'(rho) and the threshold theta* are certified in ball arithmetic
(FLINT/Arb through python-flint: every enclosure is guaranteed), each with a certificate (attnverify.theory.certified).
Nothing is derived at import time; every derivation is cached (functools.lru_cache).
"""
from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from numbers import Integral, Real
from typing import Callable

import flint
import sympy as sp
from flint import arb

import attnverify.theory.certified as C
from attnverify.theory.derivation import Step, factored_terms, in_exponentials

rho = sp.Symbol("rho", real=True)
theta, beta, sigma, R, L, d = sp.symbols("theta beta sigma R L d", positive=True)

_SIGNS = ("fixed", "symmetric")
_ARGS = (rho, theta, beta, sigma, R, L, d)
_ARB_PREC = 128  # bits of the Arb ball arithmetic of the certified results


def _check_sign(sign: str) -> str:
    if not isinstance(sign, str):
        raise TypeError(f"sign must be a str, got {type(sign).__name__}")
    if sign not in _SIGNS:
        raise ValueError(f"sign must be 'fixed' or 'symmetric', got {sign!r}")
    return sign


# ---------------------------------------------------------------------------------------------
# Gaussian expectations and the long-sequence limit
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def gaussian_moments() -> dict[str, sp.Expr]:
    """E e^{beta g}, E g e^{beta g} (exponential tilting), E e^{2 beta g}, E g e^{2 beta g}, E g^2 e^{2 beta g} for
    g ~ N(0, sigma^2), by sympy.stats."""
    from sympy.stats import E, Normal

    g = Normal("g", 0, sigma)
    return {
        "mgf": sp.simplify(E(sp.exp(beta * g))),
        "tilt": sp.simplify(E(g * sp.exp(beta * g))),
        "mgf2": sp.simplify(E(sp.exp(2 * beta * g))),
        "tilt2": sp.simplify(E(g * sp.exp(2 * beta * g))),
        "sq2": sp.simplify(E(g**2 * sp.exp(2 * beta * g))),
    }


@lru_cache(maxsize=None)
def _limit_for_shift(c: sp.Expr) -> dict[str, sp.Expr]:
    """Long-sequence limit when informative tokens are x = c xi + z (c a SymPy expression).

    A token with mean shift m has score s = beta m rho + beta g and
    e^s x = e^{beta m rho} e^{beta g} (m xi + g q + P_perp z);
    taking expectations gives E e^s = e^{beta m rho} mgf and E e^s x = e^{beta m rho} (m mgf xi + tilt q).
    Returns the informative mass w, the (xi, q)-coordinates of f_oo, J_oo = |f_oo|^2 and the limit of
    L-scaled sum_i a_i^2 times (d-1) sigma^2 (the finite-size term).
    """
    m = gaussian_moments()
    e_inf, e_nui = sp.exp(beta * c * rho) * m["mgf"], m["mgf"]           # E e^s, informative / nuisance
    denom = R * e_inf + (L - R) * e_nui
    num_xi = R * sp.exp(beta * c * rho) * c * m["mgf"]                    # xi-coordinate of the numerator
    num_q = R * sp.exp(beta * c * rho) * m["tilt"] + (L - R) * m["tilt"]  # q-coordinate of the numerator
    a_xi, a_q = sp.simplify(num_xi / denom), sp.simplify(num_q / denom)
    gram = sp.Matrix([[1, rho], [rho, 1]])                                # <xi,xi>, <xi,q>, <q,q>
    coef = sp.Matrix([a_xi, a_q])
    J = sp.expand((coef.T * gram * coef)[0, 0])
    w = sp.simplify(R * e_inf / denom)
    e2_inf, e2_nui = sp.exp(2 * beta * c * rho) * m["mgf2"], m["mgf2"]    # E e^{2s}
    sum_a2 = sp.factor(sp.powsimp(sp.expand((R * e2_inf + (L - R) * e2_nui) / denom**2)))
    # second-order delta method for the nuisance mass M = A/(A+B): A, B = sums of e^s over nuisance / informative
    # tokens (independent), E M ~ f(mu) + (1/2) tr(Hess f(mu) diag(Var A, Var B))
    A, B = sp.symbols("A B", positive=True)
    f = A / (A + B)
    hess = sp.hessian(f, (A, B))
    mu = {A: (L - R) * e_nui, B: R * e_inf}
    var_a = (L - R) * (m["mgf2"] - m["mgf"] ** 2)
    var_b = R * sp.exp(2 * beta * c * rho) * (m["mgf2"] - m["mgf"] ** 2)
    mass_bias = sp.factor(sp.powsimp(sp.expand(((hess[0, 0] * var_a + hess[1, 1] * var_b) / 2).subs(mu))))
    return {"w": w, "a_xi": a_xi, "a_q": a_q, "J": J, "sum_a2": sum_a2,
            "finite": (d - 1) * sigma**2 * sum_a2, "mass_bias": mass_bias, "in_plane": _in_plane_bias(c)}


def _in_plane_bias(c: sp.Expr) -> sp.Expr:
    """O(1/L) bias of the in-plane part of E|f|^2 (second-order delta method).

    In the plane of (xi, q) the numerator is A_xi xi + A_q q with A_xi = sum_i m_i e^{s_i}, A_q = sum_i g_i e^{s_i}
    (m_i = c on informative tokens, 0 on nuisance ones), the denominator D = sum_i e^{s_i}, and the in-plane
    |f|^2 = h(A_xi, A_q, D) = (A_xi^2 + 2 rho A_xi A_q + A_q^2) / D^2. Its bias is (1/2) tr(Hess h(mu) Sigma) with
    mu, Sigma the mean and covariance of (A_xi, A_q, D): sums over the tokens of E[v] and Cov[v], v = e^s (m, g, 1),
    E[v v^T] = e^{2 beta m rho} [[m^2 M2, m T2, m M2], [m T2, S2, T2], [m M2, T2, M2]] from the Gaussian moments.
    (The orthogonal noise sum_i e^{s_i} P_perp_q z_i is independent of (A_xi, A_q, D), centred: it only gives the
    (d - 1) term.)
    """
    mo = gaussian_moments()
    M1, T1, M2, T2, S2 = mo["mgf"], mo["tilt"], mo["mgf2"], mo["tilt2"], mo["sq2"]

    def mean_cov(m: sp.Expr):
        e = sp.exp(beta * m * rho)
        mean = e * sp.Matrix([m * M1, T1, M1])
        second = e**2 * sp.Matrix([[m**2 * M2, m * T2, m * M2], [m * T2, S2, T2], [m * M2, T2, M2]])
        return mean, second - mean * mean.T

    (mean_i, cov_i), (mean_n, cov_n) = mean_cov(c), mean_cov(sp.Integer(0))
    mu, Sigma = R * mean_i + (L - R) * mean_n, R * cov_i + (L - R) * cov_n
    Ax, Aq, D = sp.symbols("A_xi A_q D", real=True)
    h = (Ax**2 + 2 * rho * Ax * Aq + Aq**2) / D**2
    H = sp.hessian(h, (Ax, Aq, D)).subs(dict(zip((Ax, Aq, D), mu)))
    return sp.simplify(sum(H[j, k] * Sigma[j, k] for j in range(3) for k in range(3)) / 2)


def _average(sign: str, key: str) -> sp.Expr:
    if _check_sign(sign) == "fixed":
        return _limit_for_shift(theta)[key]
    return (_limit_for_shift(theta)[key] + _limit_for_shift(-theta)[key]) / 2


@lru_cache(maxsize=None)
def informative_mass(sign: str = "fixed") -> sp.Expr:
    """Limit attention mass w(rho) on the R informative tokens; symmetric: (w(rho) + w(-rho)) / 2."""
    return _average(sign, "w")


@lru_cache(maxsize=None)
def nuisance_mass(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Expected attention mass on the L - R nuisance tokens at alignment rho: 1 - w(rho) in the long-sequence
    limit; ``finite_size`` adds the O(1/L) ratio bias of E[A/(A+B)] (second-order delta method, A and B the
    nuisance and informative sums of e^s, with Var e^{beta g} = E e^{2 beta g} - (E e^{beta g})^2)."""
    M = 1 - informative_mass(sign)
    return M + _average(sign, "mass_bias") if finite_size else M


@lru_cache(maxsize=None)
def population_objective(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """J(rho) = |f_oo|^2 (fixed: theta^2 w^2 + 2 beta sigma^2 theta rho w + beta^2 sigma^4, derived);
    symmetric: the average over eps = +-1.  ``finite_size`` adds the O(1/L) terms: :func:`finite_size_term` (the
    orthogonal noise, factor d - 1) and :func:`in_plane_term`."""
    J = _average(sign, "J")
    return J + finite_size_term(sign) + in_plane_term(sign) if finite_size else J


@lru_cache(maxsize=None)
def finite_size_term(sign: str = "fixed") -> sp.Expr:
    """(d - 1) sigma^2 E sum a_i^2
    ~ (d - 1) sigma^2 e^{beta^2 sigma^2} (R e^{2 beta theta rho} + L - R) / (R e^{beta theta rho} + L - R)^2."""
    return _average(sign, "finite")


@lru_cache(maxsize=None)
def in_plane_term(sign: str = "fixed") -> sp.Expr:
    """The O(1/L) bias of the (xi, q)-plane part of E|f|^2 (no factor d): the q-direction noise sigma^2 E sum a_i^2,
    the ratio bias of the tilted mean and the fluctuation of the informative mass (second-order delta method)."""
    return _average(sign, "in_plane")


@lru_cache(maxsize=None)
def reduced_field(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """F(rho) = (1 - rho^2) dJ/drho: the xi-component of the Riemannian gradient flow of J on the sphere."""
    return (1 - rho**2) * sp.diff(population_objective(sign, finite_size), rho)


class _G1(sp.Function):
    """d G / d u of the arbitrary function G(u, v)."""


class _G2(sp.Function):
    """d G / d v of the arbitrary function G(u, v)."""


class _G(sp.Function):
    """An arbitrary smooth G(u, v); SymPy's chain rule uses its partial derivatives _G1, _G2."""

    def fdiff(self, argindex: int = 1):
        return (_G1, _G2)[argindex - 1](*self.args)


@lru_cache(maxsize=None)
def reduction_identity(n: int = 3) -> sp.Expr:
    """<xi, P_perp_q grad_q G(<q,xi>, |q|^2)> - (1 - <q,xi>^2) d1G(<q,xi>, 1) on S^{n-1} x S^{n-1}.

    G is an arbitrary smooth function (partial derivatives d1G, d2G left abstract), q and xi general vectors of
    R^n put on the unit sphere by eliminating their last coordinate; SymPy does the chain rule.  The
    expression simplifies to 0, so rho' = <xi, q'> = (1 - rho^2) J'(rho) for the Riemannian gradient flow of J.
    """
    qs = sp.symbols(f"q1:{n + 1}", real=True)
    xs = sp.symbols(f"x1:{n + 1}", real=True)
    q, xi = sp.Matrix(qs), sp.Matrix(xs)
    u, v = (q.T * xi)[0, 0], (q.T * q)[0, 0]
    grad = sp.Matrix([sp.diff(_G(u, v), qi) for qi in qs])
    riem = (sp.eye(n) - q * q.T) * grad
    expr = (xi.T * riem)[0, 0] - (1 - u**2) * _G1(u, 1)
    on_sphere = {qs[-1]: sp.sqrt(1 - sum(t**2 for t in qs[:-1])), xs[-1]: sp.sqrt(1 - sum(t**2 for t in xs[:-1]))}
    return expr.subs(on_sphere)


# ---------------------------------------------------------------------------------------------
# Numeric evaluation: certified equilibria
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Equilibrium:
    """An equilibrium rho of rho' = F(rho), its eigenvalue F'(rho) and stability (F'(rho) < 0).

    ``certified`` is False only when ball arithmetic could not prove the sign of F' or the uniqueness of the zero
    (a degenerate zero)."""

    rho: float
    eigenvalue: float
    stable: bool
    certified: bool = True
    enclosure: tuple | None = field(default=None, compare=False)             # [lo, hi] holding rho (outward)
    eigenvalue_enclosure: tuple | None = field(default=None, compare=False)  # [lo, hi] holding F'(rho)
    certificate: dict | None = field(default=None, compare=False, hash=False)  # attnverify.theory.certified dict


_PARAM_NAMES = ("theta", "beta", "sigma", "R", "L", "d")


def _validate(params: dict) -> tuple:
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    vals = []
    for name in _PARAM_NAMES:
        if name not in params:
            raise ValueError(f"params is missing {name!r}")
        x = params[name]
        if isinstance(x, bool) or not isinstance(x, Real):
            raise TypeError(f"{name} must be a number, got {type(x).__name__}")
        if not math.isfinite(float(x)):
            raise ValueError(f"{name} must be finite, got {x}")
        if name in ("R", "L", "d"):
            if not isinstance(x, Integral) and float(x) != int(x):
                raise ValueError(f"{name} must be an integer, got {x}")
            x = int(x)
        vals.append(x if name in ("R", "L", "d") else float(x))
    th, be, si, r, l, dd = vals
    if th < 0:
        raise ValueError(f"theta must be >= 0, got {th}")
    if be <= 0:
        raise ValueError(f"beta must be > 0, got {be}")
    if si <= 0:
        raise ValueError(f"sigma must be > 0, got {si}")
    if r < 1:
        raise ValueError(f"R must be >= 1, got {r}")
    if r >= l:
        raise ValueError(f"need R < L (at least one nuisance token), got R={r}, L={l}")
    if dd < 2:
        raise ValueError(f"d must be >= 2, got {dd}")
    return tuple(vals)


@lru_cache(maxsize=None)
def _field_functions(sign: str, finite_size: bool) -> dict[str, Callable]:
    J = population_objective(sign, finite_size)
    Jp = sp.diff(J, rho)
    Jpp = sp.diff(Jp, rho)
    Fp = sp.diff(reduced_field(sign, finite_size), rho)
    return {"Jp": C.lambdify_arb(Jp, _ARGS), "Jpp": C.lambdify_arb(Jpp, _ARGS), "Fp": C.lambdify_arb(Fp, _ARGS)}


def _stability_text(ev: arb) -> str:
    lo, hi = C.lower(ev), C.upper(ev)
    rel = "< 0 (attracting)" if ev < 0 else "> 0 (repelling)" if ev > 0 else "contains 0 (undecided)"
    return f"F' in {C.interval_text(lo, hi, 4)} {rel}"


def _equilibrium(rho_box: arb, lo: float, hi: float, ev: arb, unique_in: tuple | None, pole: bool) -> Equilibrium:
    """An Equilibrium with its certificate (enclosure of rho and of the eigenvalue F'(rho))."""
    r = 0.5 * (lo + hi) if not pole else lo
    certified = not ev.contains(0) and (pole or unique_in is not None)
    if pole:   # rho = +-1 is exact; what is certified is the sign of the eigenvalue
        proven = (f"rho = {r:g} is an equilibrium (F = (1 - rho^2) J'); its eigenvalue F'({r:g}) lies in the "
                  "enclosure (stable iff it is < 0)")
        cert = C.certificate(f"F'({r:g})", proven, C.lower(ev), C.upper(ev), _ARB_PREC,
                             "attracting" if ev < 0 else "repelling" if ev > 0 else "sign undecided")
        cert["rho_enclosure"] = [lo, hi]
        return Equilibrium(r, float(ev.mid()), bool(ev < 0), certified, enclosure=(lo, hi),
                           eigenvalue_enclosure=(C.lower(ev), C.upper(ev)), certificate=cert)
    if unique_in is not None:
        u = (C.lower(unique_in[0]), C.upper(unique_in[1]))
        proven = (f"J' has exactly one zero in [{u[0]!r}, {u[1]!r}] (interval Newton), it lies in the enclosure; "
                  "F' there has the stated sign")
        extra = f"unique in {C.interval_text(*u, 4)}, {_stability_text(ev)}"
    else:
        proven = "every zero of J' near here lies in the enclosure (uniqueness not proven: degenerate zero)"
        extra = f"not proven unique, {_stability_text(ev)}"
    cert = C.certificate("rho*", proven, lo, hi, _ARB_PREC, extra)
    cert["eigenvalue_enclosure"] = [C.lower(ev), C.upper(ev)]
    return Equilibrium(r, float(ev.mid()), bool(ev < 0), certified,
                       enclosure=(lo, hi), eigenvalue_enclosure=(C.lower(ev), C.upper(ev)), certificate=cert)


@lru_cache(maxsize=256)
def _equilibria_cached(vals: tuple, sign: str, finite_size: bool) -> tuple[Equilibrium, ...]:
    fn = _field_functions(sign, finite_size)
    with flint.ctx.workprec(_ARB_PREC):
        P = [arb(v) for v in vals]
        h = lambda X: fn["Jp"](X, *P)                   # noqa: E731  interior zeros of F = zeros of J'
        dh = lambda X: fn["Jpp"](X, *P)                  # noqa: E731
        poles = [fn["Fp"](arb(r0), *P) for r0 in (-1, 1)]
        if not all(ev.is_finite() and math.isfinite(C.lower(ev)) and math.isfinite(C.upper(ev)) for ev in poles):
            raise ValueError("parameters too extreme: F'(+-1) is not a finite double at theta, beta, sigma = "
                             f"{vals[0]:g}, {vals[1]:g}, {vals[2]:g} (the scores beta sigma, beta theta leave the range "
                             "of the closed form)")
        boxes = C.root_boxes(h, dh, -1, 1, 1e-13, 20000)
        out = [_equilibrium(arb(r0), float(r0), float(r0), ev, None, True) for r0, ev in zip((-1, 1), poles)]
        for r in boxes:
            lo, hi = C.lower(r.lo), C.upper(r.hi)
            if r.hi >= 1 or r.lo <= -1 or abs(abs(0.5 * (lo + hi)) - 1) < 1e-9:
                if not r.unique:   # a degenerate zero of J' at a pole: the pole's stability is not certified
                    out = [dataclasses.replace(e, certified=False) if e.rho == round(0.5 * (lo + hi)) else e
                           for e in out]
                continue           # a zero of J' at rho = +-1 coincides with the endpoint equilibrium
            ev = fn["Fp"](C.hull(r.lo, r.hi), *P)
            out.append(_equilibrium(C.hull(r.lo, r.hi), lo, hi, ev, r.unique_in, False))
    return tuple(_merge_equilibria(sorted(out, key=lambda e: e.rho)))


def _merge_equilibria(eqs: list[Equilibrium]) -> list[Equilibrium]:
    """Boxes that touch (a zero on a shared edge, found from both sides) are one equilibrium."""
    out: list[Equilibrium] = []
    for e in eqs:
        if out and e.enclosure[0] <= out[-1].enclosure[1] + 1e-12 and abs(e.rho) < 1 and abs(out[-1].rho) < 1:
            prev = out.pop()
            lo, hi = min(prev.enclosure[0], e.enclosure[0]), max(prev.enclosure[1], e.enclosure[1])
            keep = prev if prev.certified else e
            cert = dict(keep.certificate, enclosure=[lo, hi], width=hi - lo,
                        text=f"certified: rho* in {C.interval_text(lo, hi)}, "
                             + keep.certificate["text"].split(", ", 1)[1])
            out.append(dataclasses.replace(keep, rho=0.5 * (lo + hi), enclosure=(lo, hi), certificate=cert,
                                           certified=prev.certified and e.certified))
        else:
            out.append(e)
    return out


def _check_finite_size_validity(vals: tuple, finite_size: bool) -> None:
    """The d/L term is a 1/L expansion in the effective token count L e^{-beta^2 sigma^2} (= 1 / E sum a_i^2 at
    theta = 0); it is meaningless (and numerically a cancellation of e^{beta^2 sigma^2}-sized terms) below 1."""
    th, be, si, r, l, dd = vals
    if finite_size and (be * si) ** 2 > math.log(l):
        raise ValueError(f"finite_size=True needs beta^2 sigma^2 <= log L (effective token count L e^(-beta^2 sigma^2) "
                         f">= 1), got beta^2 sigma^2 = {(be * si) ** 2:.4g} > log L = {math.log(l):.4g}")


def equilibria(params: dict, sign: str = "fixed", finite_size: bool = False) -> list[Equilibrium]:
    """Every equilibrium of rho' = F(rho) on [-1, 1], sorted by rho, with eigenvalue F'(rho) and stability.

    rho = +-1 are always equilibria (F = (1 - rho^2) J'), with F'(+-1) = -+2 J'(+-1).  Interior equilibria are the
    zeros of J' in (-1, 1).  Guarantee: J' and J'' are evaluated in Arb ball arithmetic (python-flint, 128 bits;
    every operation returns a ball containing the exact result); [-1, 1] is covered by boxes that are either
    discarded because 0 is not in J'(box), or shown by the interval Newton test to contain exactly one zero
    (then refined to width ~1e-13), or left unresolved at width 1e-13 (a degenerate zero, returned with
    ``certified=False``).  Hence no interior equilibrium is missed.  Stability is F'(rho) < 0, with F' enclosed
    on the box (``certified`` False if the enclosure holds 0).  Each Equilibrium carries ``enclosure`` (of rho),
    ``eigenvalue_enclosure`` and a ``certificate`` dict (attnverify.theory.certified).
    params: theta, beta, sigma, R, L, d (extra keys ignored).  theta = 0 makes F identically 0: ValueError;
    finite_size=True with beta^2 sigma^2 > log L (fewer than one effective token): ValueError.
    """
    vals = _validate(params)
    _check_sign(sign)
    if vals[0] == 0:
        raise ValueError("theta = 0: F vanishes identically, every rho is an equilibrium")
    _check_finite_size_validity(vals, finite_size)
    eqs = list(_equilibria_cached(vals, sign, bool(finite_size)))
    if not all(math.isfinite(e.eigenvalue) for e in eqs):
        raise ValueError(f"parameters too extreme: the linearisation F'(rho) overflows double precision at {params}")
    return eqs


# ---------------------------------------------------------------------------------------------
# Threshold in theta for the stability of -xi
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _minus_xi_functions(sign: str, finite_size: bool) -> tuple[sp.Expr, Callable, Callable]:
    """phi(theta) = J'(-1)/theta (every term of J' carries a factor theta; expand cancels it), as ball functions.

    F'(-1) = 2 J'(-1) = 2 theta phi(theta): -xi is attracting iff phi < 0. The expanded form is only needed on boxes
    near theta = 0 (inf X < 0.05 or sup X >= 4 inf X); elsewhere phi(X) = J'(-1)(X) / X (the same function, with a much shorter
    expression), and phi'(X) = (d/dtheta J'(-1)(X) - phi(X)) / X."""
    Jp_m1 = sp.diff(population_objective(sign, finite_size), rho).subs(rho, -1)
    phi = sp.Add(*[t / theta for t in sp.Add.make_args(sp.expand(Jp_m1))])
    if not phi.subs(theta, 0).is_finite:
        raise ArithmeticError("J'(-1)/theta kept a pole at theta = 0")
    args = (theta, beta, sigma, R, L, d)
    near = C.lambdify_arb(phi, args), C.lambdify_arb(sp.diff(phi, theta), args)
    away = C.lambdify_arb(Jp_m1, args), C.lambdify_arb(sp.diff(Jp_m1, theta), args)

    def touches_zero(X) -> bool:                  # near 0, or 1/X overestimates by more than 4x: the expanded form
        return not (X.lower() >= 0.05 and X.upper() < 4 * X.lower())

    def phi_b(X, *P):
        return near[0](X, *P) if touches_zero(X) else away[0](X, *P) / X

    def dphi_b(X, *P):
        return near[1](X, *P) if touches_zero(X) else (away[1](X, *P) - away[0](X, *P) / X) / X
    return phi, phi_b, dphi_b


def default_theta_max(params: dict) -> float:
    """Upper end of the theta search: 20 e-folds of the informative weight beyond the log-odds of R/(L - R),
    and 20 sigma; beyond it w(-1) < e^-20 R/(L-R) so the sign of J'(-1) is that of sigma^2 (1 - beta theta) < 0."""
    th, be, si, r, l, dd = _validate(params)
    return max((20.0 + math.log1p(r / (l - r))) / be, 20.0 * si, 20.0 / be)


@lru_cache(maxsize=256)
def _minus_xi_cached(vals: tuple, sign: str, finite_size: bool, theta_max: float) -> tuple:
    """(theta*, all sign-change points, status, certificate)."""
    _, phi, dphi = _minus_xi_functions(sign, finite_size)
    with flint.ctx.workprec(_ARB_PREC):
        P = [arb(v) for v in vals[1:]]
        h = lambda X: phi(X, *P)                          # noqa: E731
        dh = lambda X: dphi(X, *P)                        # noqa: E731
        boxes = C.root_boxes(h, dh, 0, theta_max, 1e-13, 20000)
        # a zero at theta = 0 itself is trivial (no signal); keep the zeros in (0, theta_max]
        boxes = [b for b in boxes if b.lo > 0]
        spans = C.merge_intervals([(C.lower(b.lo), C.upper(b.hi)) for b in boxes])
        roots = [(a + b) / 2 for a, b in spans]
        end = phi(arb(theta_max), *P)
    where = f"[0, {theta_max:.6g}]"
    if end < 0:
        if not roots:
            cert = C.certificate("theta*", f"J'(-1) < 0 for every theta in (0, {theta_max!r}] (no zero of J'(-1)/theta "
                                 "there, negative at theta_max)", 0.0, 0.0, _ARB_PREC,
                                 f"-xi attracting for all theta in (0, {theta_max:.6g}]")
            return 0.0, (), "attracting at theta_max", cert
        lo, hi = spans[-1]
        last = [b for b in boxes if C.upper(b.hi) >= lo]
        unique = len(last) == 1 and last[0].unique
        proven = (f"every zero of J'(-1)/theta in {where} is enclosed ({len(spans)} box(es)); the largest lies in "
                  f"[{lo!r}, {hi!r}]" + (" and is unique there (interval Newton)" if unique else "")
                  + f"; J'(-1) < 0 on (hi, {theta_max!r}], so -xi attracts for every theta there")
        extra = (f"unique in {C.interval_text(C.lower(last[0].unique_in[0]), C.upper(last[0].unique_in[1]), 4)}"
                 if unique else "uniqueness not proven")
        cert = C.certificate("theta*", proven, lo, hi, _ARB_PREC, extra + f", -xi attracting on (theta*, {theta_max:.6g}]")
        return roots[-1], tuple(roots), "attracting at theta_max", cert
    status = "repelling at theta_max" if end > 0 else "undecided at theta_max"
    return None, tuple(roots), status, None


def minus_xi_threshold(params: dict, sign: str = "fixed", finite_size: bool = False,
                       theta_max: float | None = None) -> float | None:
    """theta* such that rho = -1 is attracting (F'(-1) = 2 J'(-1) < 0) for every theta in (theta*, theta_max].

    The other params (beta, sigma, R, L, d) are taken from ``params`` (its theta is ignored).  All zeros of
    phi(theta) = J'(-1)/theta in [0, theta_max] are enclosed by interval Newton in Arb ball arithmetic (see
    :func:`attnverify.theory.certified.isolate_roots`), theta* is the largest one (0.0 if phi < 0 on the whole
    range), None if -xi is not attracting at theta_max.  Fixed sign: theta* ~ 1/beta when R << L.  Symmetric sign: J is even, so
    F'(-1) = F'(+1) and the threshold is the one of +xi as well (both attract or neither does).  Default
    theta_max: :func:`default_theta_max`.  The certificate: :func:`minus_xi_certificate`.
    """
    return _minus_xi(params, sign, finite_size, theta_max)[0]


def _minus_xi(params: dict, sign: str, finite_size: bool, theta_max: float | None) -> tuple:
    vals = _validate(params)
    _check_sign(sign)
    _check_finite_size_validity(vals, finite_size)
    tm = default_theta_max(params) if theta_max is None else float(theta_max)
    if not (math.isfinite(tm) and tm > 0):
        raise ValueError(f"theta_max must be finite and > 0, got {theta_max}")
    return _minus_xi_cached(vals, sign, bool(finite_size), tm)


def minus_xi_certificate(params: dict, sign: str = "fixed", finite_size: bool = False,
                         theta_max: float | None = None) -> dict | None:
    """The certificate of :func:`minus_xi_threshold` (attnverify.theory.certified): the enclosure of theta*, whether it is
    a proven-unique zero, and the range on which -xi is proven attracting; None when -xi is not attracting at
    theta_max (nothing to certify)."""
    cert = _minus_xi(params, sign, finite_size, theta_max)[3]
    return None if cert is None else dict(cert)


def minus_xi_sign_changes(params: dict, sign: str = "fixed", finite_size: bool = False,
                          theta_max: float | None = None) -> list[float]:
    """All theta in [0, theta_max] where F'(-1) changes sign (enclosed zeros of J'(-1)/theta)."""
    vals = _validate(params)
    _check_sign(sign)
    tm = default_theta_max(params) if theta_max is None else float(theta_max)
    return list(_minus_xi_cached(vals, sign, bool(finite_size), tm)[1])


# ---------------------------------------------------------------------------------------------
# The derivation, step by step
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _derivation(sign: str) -> tuple[Step, ...]:
    m = gaussian_moments()
    w_sym = sp.Symbol("w", positive=True)
    lim = _limit_for_shift(theta)
    w = lim["w"]
    steps = [
        Step(r"Score noise: the moment generating function of $g = \langle q, z\rangle \sim N(0, \sigma^2)$",
             m["mgf"], r"sympy.stats: $\mathbb{E}[e^{\beta g}]$ for $g \sim N(0, \sigma^2)$",
             r"\mathbb{E}\,e^{\beta g}", "mgf"),
        Step(r"Exponential tilting: $\mathbb{E}[e^{\beta\langle q, z\rangle} z] = \mathbb{E}[g e^{\beta g}]\, q$ (the "
             r"part of $z$ orthogonal to $q$ is independent of $g$ and centred)", m["tilt"],
             r"sympy.stats: $\mathbb{E}[g e^{\beta g}]$", r"\mathbb{E}\,g e^{\beta g}", "tilt"),
        Step("Second moment of the weights", m["mgf2"],
             r"sympy.stats: $\mathbb{E}[e^{2\beta g}]$", r"\mathbb{E}\,e^{2\beta g}", "mgf2"),
        Step(r"Informative attention mass in the long-sequence limit: $R\,\mathbb{E}_I[e^s] / (R\,\mathbb{E}_I[e^s] + "
             r"(L-R)\,\mathbb{E}_N[e^s])$",
             w, r"law of large numbers for numerator and denominator; $\mathbb{E}_I[e^s] = e^{\beta\theta\rho}\,"
             r"\mathbb{E}\,e^{\beta g}$", r"w(\rho)", "w", kind="limit"),
        Step("Its derivative is logistic", beta * theta * w_sym * (1 - w_sym),
             r"$dw/d\rho - \beta\theta w (1 - w)$ simplifies to "
             f"${sp.latex(sp.simplify(sp.diff(w, rho) - beta * theta * w * (1 - w)))}$",
             r"w'(\rho)", "w-prime"),
        Step(r"Limit output $f_\infty = a_\xi\,\xi + a_q\,q$: its coordinate on $\xi$", theta * w_sym,
             rf"$a_\xi - \theta w$ simplifies to ${sp.latex(sp.simplify(lim['a_xi'] - theta * w))}$", r"a_\xi",
             "a-xi", kind="limit"),
        Step(r"Coordinate on $q$ (the tilted mean of $g$)", lim["a_q"],
             r"$\mathbb{E}[g e^{\beta g}] / \mathbb{E}[e^{\beta g}]$, simplified", r"a_q", "a-q", kind="limit"),
    ]
    J_w = sp.expand((theta * w_sym) ** 2 + 2 * rho * theta * w_sym * lim["a_q"] + lim["a_q"] ** 2)
    steps.append(Step(r"$J(\rho) = |f_\infty|^2$ with $\langle\xi, q\rangle = \rho$ (fixed sign), in terms of $w$",
                      J_w, r"$|a_\xi\,\xi + a_q\,q|^2$ from the Gram matrix; $J$ minus this with $w = w(\rho)$ "
                      f"simplifies to ${sp.latex(sp.simplify(lim['J'] - J_w.subs(w_sym, w)))}$",
                      r"J_{\mathrm{fixed}}(\rho)", "J-fixed"))
    if sign == "symmetric":
        Jm = _limit_for_shift(-theta)["J"]
        steps.append(Step(r"The sequence with $\varepsilon = -1$ is the fixed model with $\xi \to -\xi$: "
                          r"$J_-(\rho) = J_{\mathrm{fixed}}(-\rho)$",
                          sp.simplify(Jm - lim["J"].subs(rho, -rho)),
                          r"limit recomputed with mean shift $-\theta$; the difference simplifies to this",
                          r"J_{-}(\rho)-J_{\mathrm{fixed}}(-\rho)", "J-minus"))
        steps.append(Step(r"Symmetric objective: the average over $\varepsilon$",
                          factored_terms(population_objective("symmetric")),
                          r"the expectation over the Rademacher sign $\varepsilon$ (each term factored)",
                          r"J_{\mathrm{sym}}(\rho)", "J-sym"))
        steps.append(Step("Mean informative mass", informative_mass("symmetric"), r"the average over $\varepsilon$",
                          r"\bar w(\rho)", "w-bar"))
    steps.append(Step(r"Leading finite-$L$ term: $(d-1)\,\sigma^2\,\mathbb{E}\sum_i a_i^2$ ($P^\perp_q z_i$ is "
                      r"independent of the scores, $\operatorname{tr} P^\perp_q = d - 1$)", finite_size_term(sign),
                      r"ratio law of large numbers: $\mathbb{E}\sum_i a_i^2 \sim (R\,\mathbb{E}_I e^{2s} + (L-R)\,"
                      r"\mathbb{E}_N e^{2s}) / (R\,\mathbb{E}_I e^s + (L-R)\,\mathbb{E}_N e^s)^2$",
                      r"\Delta_d(\rho)", "Delta-d", kind="approximation", order="O(1/L^2)"))
    u, m_ = sp.symbols("u m", positive=True)
    steps.append(Step(r"In-plane $O(1/L)$ term: the bias of $(A_\xi^2 + 2\rho A_\xi A_q + A_q^2)/D^2$ (noise along "
                      r"$q$, ratio bias, fluctuation of the informative mass); no factor $d$. Written with "
                      r"$u = e^{\beta\theta\rho}$ and $m = e^{\beta^2\sigma^2}$",
                      in_exponentials(in_plane_term(sign), {u: beta * theta * rho, m_: beta**2 * sigma**2},
                                      (theta, rho)),
                      r"second-order delta method: $\frac{1}{2}\operatorname{tr}(H_h \Sigma)$ with $H_h$ the Hessian "
                      r"of $h$ and the token moments $\mathbb{E}\,e^{2\beta g}$, $\mathbb{E}\,g e^{2\beta g}$, "
                      r"$\mathbb{E}\,g^2 e^{2\beta g}$ (sympy.stats)", r"\Delta_\parallel(\rho)", "Delta-parallel",
                      kind="approximation", order="O(1/L^2)"))
    ident = reduction_identity()
    steps.append(Step(r"Riemannian reduction: $\langle\xi, P^\perp_q \nabla G(\langle q, \xi\rangle, |q|^2)\rangle = "
                      r"(1 - \rho^2)\,\partial_1 G$ on the sphere",
                      sp.simplify(ident),
                      r"chain rule by SymPy in $\mathbb{R}^3$ with $q$, $\xi$ on the unit sphere; the difference "
                      "simplifies to this",
                      r"\langle\xi, P^\perp_q \nabla G\rangle - (1-\rho^2)\,\partial_1 G", "reduction"))
    steps.append(Step(r"Reduced vector field $\rho' = F(\rho)$",
                      (1 - rho**2) * sp.Derivative(sp.Function("J")(rho), rho),
                      r"the reduction applied to $G(u, v) = J_{\mathrm{ext}}$: $J(\rho) = G(\rho, 1)$", r"F(\rho)",
                      "F"))
    if sign == "fixed":
        wf = sp.Function("w")(rho)
        Fw = ((1 - rho**2) * sp.diff(J_w.subs(w_sym, wf), rho)).subs(sp.Derivative(wf, rho),
                                                                      beta * theta * wf * (1 - wf))
        steps.append(Step(r"Reduced field in terms of $w$ (using $w' = \beta\theta w (1 - w)$)",
                          sp.factor(Fw.subs(wf, w_sym)),
                          r"$F$ minus this with $w = w(\rho)$ simplifies to "
                          f"${sp.latex(sp.simplify(reduced_field('fixed') - Fw.subs(wf, w)))}$",
                          r"F_{\mathrm{fixed}}(\rho)", "F-fixed"))
    Fs = reduced_field(sign)
    Jp = sp.diff(population_objective(sign), rho)
    steps.append(Step(r"Linearisation at the poles: $F'(\pm 1) = \mp 2 J'(\pm 1)$",
                      sp.simplify(sp.diff(Fs, rho).subs(rho, 1) + 2 * Jp.subs(rho, 1)),
                      r"differentiate $(1 - \rho^2) J'$ and evaluate at $\rho = 1$ ($\rho = -1$ likewise); the sum "
                      "simplifies to this", r"F'(1) + 2 J'(1)", "poles"))
    return tuple(steps)


def derivation(sign: str = "fixed") -> list[Step]:
    """The Paper A derivation as steps (statement, SymPy result, reason, LaTeX label); every result is computed."""
    return list(_derivation(_check_sign(sign)))
