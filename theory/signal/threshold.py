r"""The threshold theta* of Paper A: the signal strength above which rho = -1 (the query aligned with -xi) attracts.

F'(-1) = 2 J'(-1), and every term of J'(-1) carries a factor theta, so -xi is attracting iff
phi(theta) = J'(-1) / theta < 0.  All zeros of phi in [0, theta_max] are enclosed by interval Newton in Arb ball
arithmetic (:func:`attnverify.theory.certified.root_boxes`); theta* is the largest one, with a certificate.
:meth:`attnverify.theory.signal.SignalTheory.minus_xi_threshold` is the entry point.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import flint
import sympy as sp
from flint import arb

import attnverify.theory.certified as C
from attnverify.theory.signal.model import ARB_PREC, L, R, beta, d, sigma, theta, validate_params


def default_theta_max(params: dict) -> float:
    """Upper end of the theta search: 20 e-folds of the informative weight beyond the log-odds of R/(L - R),
    and 20 sigma; beyond it w(-1) < e^-20 R/(L-R) so the sign of J'(-1) is that of sigma^2 (1 - beta theta) < 0."""
    th, be, si, r, l, dd = validate_params(params)
    return max((20.0 + math.log1p(r / (l - r))) / be, 20.0 * si, 20.0 / be)


def phi_functions(Jp_m1: sp.Expr) -> tuple[sp.Expr, Callable, Callable]:
    """phi(theta) = J'(-1)/theta (every term of J' carries a factor theta; expand cancels it) from ``Jp_m1`` =
    J'(-1), as an expression and as ball functions phi(X, beta, sigma, R, L, d) and phi'(X, ...).

    The expanded form is only needed on boxes near theta = 0 (inf X < 0.05 or sup X >= 4 inf X); elsewhere
    phi(X) = J'(-1)(X) / X (the same function, with a much shorter expression), and
    phi'(X) = (d/dtheta J'(-1)(X) - phi(X)) / X."""
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


def certify_threshold(phi: Callable, dphi: Callable, vals: tuple, theta_max: float) -> tuple:
    """(theta*, all sign-change points, status, certificate) from the ball functions of :func:`phi_functions` at the
    validated parameters ``vals`` (their theta is ignored), searching (0, theta_max]."""
    with flint.ctx.workprec(ARB_PREC):
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
                                 "there, negative at theta_max)", 0.0, 0.0, ARB_PREC,
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
        cert = C.certificate("theta*", proven, lo, hi, ARB_PREC, extra + f", -xi attracting on (theta*, {theta_max:.6g}]")
        return roots[-1], tuple(roots), "attracting at theta_max", cert
    status = "repelling at theta_max" if end > 0 else "undecided at theta_max"
    return None, tuple(roots), status, None
