"""Paper C's closed forms as SymPy objects, for notebooks and papers (every one derived by the theory object
``attnverify.theory.slr.THEORY``, none typed in), reached as ``attnverify.formulas.<name>``.

Symbols: the overlaps ``kappa, nu, theta, eta, rho`` (real), ``lam, gamma`` (positive), ``d, L`` (positive
integers), ``eps`` (non-negative)::

    risk()                 R(kappa, nu, theta, eta, rho) = E (Y - T_{k,v}(X))^2 for unit k, v
    risk_on_M()            r(kappa, nu) = R on M = {theta = eta = rho = 0}
    risk_gradient()        the five partials dR/d(overlap), as a dict
    zeta_identity()        zeta_sigma(t) = E erf(t + sigma Z)^2 through Owen's T, in the dummies (t, s)
    reduced_flow()         (kappa_dot, nu_dot) of the gradient flow on M
    oracle_hessian_block() the 2 x 2 block of the Riemannian Hessian at the oracle (k*, v*)
    bayes_log_weight()     log-likelihood ratio s(a, n2) of a token being the informative one
    linear_excess()        R_lin - eps^2 of the best linear predictor
"""
from __future__ import annotations

import sympy as sp

from attnverify.checks.plugin import cached_formula
from attnverify.theory.slr import THEORY
from attnverify.theory.slr import symbols as _S

SYMBOLS = {"kappa": _S.kappa, "nu": _S.nu, "theta": _S.theta, "eta": _S.eta, "rho": _S.rho, "lam": _S.lam,
           "gamma": _S.gamma, "d": _S.d, "L": _S.L, "eps": _S.eps}


@cached_formula
def risk() -> sp.Expr:
    """The population risk R in the overlaps."""
    return THEORY.risk()


@cached_formula
def risk_on_M() -> sp.Expr:
    """The reduced risk r(kappa, nu) on M."""
    return THEORY.risk_on_M()


def risk_gradient() -> dict:
    """dR/d(kappa, nu, theta, eta, rho)."""
    return THEORY.gradient()


def zeta_identity() -> sp.Expr:
    """zeta_s(t) = 1 - 8 T(sqrt2 t/sqrt(1+2 s^2), 1/sqrt(1+4 s^2)) (route (b); T Owen's function)."""
    return THEORY.owen_route()["zeta"]


@cached_formula
def reduced_flow() -> tuple:
    """(kappa_dot, nu_dot) of the gradient flow restricted to M."""
    return THEORY.reduced_flow()


@cached_formula
def oracle_hessian_block() -> sp.Matrix:
    """The 2 x 2 block (k tilted to v*, v tilted to k*) of the Riemannian Hessian at the oracle."""
    return THEORY.oracle_hessian_blocks()["block"]


def bayes_log_weight() -> sp.Expr:
    """s(a, n2) = log N(x; sqrt(d/2) k*, gamma^2 I) - log N(x; 0, I), a = <x, k*>, n2 = |x|^2."""
    return THEORY.bayes_log_weight()


def linear_excess() -> sp.Expr:
    """R_lin - eps^2 = gamma^2 (L - 1) / (gamma^2 + L - 1), the best linear predictor's excess risk."""
    return THEORY.best_linear_predictor()["excess"]
