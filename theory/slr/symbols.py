r"""Paper C (single-location regression, model ``slr``): the symbols of the model, with their assumptions.

Overlaps of the unit vectors k, v (the predictor) with the orthonormal pair k*, v* (the truth):

    kappa = <k, k*>,  nu = <v, v*>,  theta = <v, k*>,  eta = <k, v*>,  rho = <k, v>      (real, in [-1, 1])

Parameters: lam > 0 the temperature of erf(lam <X, k>), gamma > 0 the noise sd of the informative token,
d >= 1 the dimension, L >= 1 the sequence length (integers), eps >= 0 the sd of the output noise xi.
The informative token has mean mu k* with mu = sqrt(d / 2).
"""
from __future__ import annotations

import sympy as sp

kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
lam = sp.Symbol("lambda", positive=True)
gamma = sp.Symbol("gamma", positive=True)
d, L = sp.symbols("d L", positive=True, integer=True)
eps = sp.Symbol("epsilon", real=True, nonnegative=True)

OVERLAPS: tuple[sp.Symbol, ...] = (kappa, nu, theta, eta, rho)
PARAMS: tuple[sp.Symbol, ...] = (lam, gamma, d, L, eps)
OVERLAP_NAMES: tuple[str, ...] = ("kappa", "nu", "theta", "eta", "rho")
PARAM_NAMES: tuple[str, ...] = ("lam", "gamma", "d", "L", "eps")
ON_M: dict = {theta: 0, eta: 0, rho: 0}          # the manifold M = {theta = eta = rho = 0}
ORACLE: dict = {kappa: 1, nu: 1, theta: 0, eta: 0, rho: 0}


def mu() -> sp.Expr:
    """The mean norm of the informative token, sqrt(d / 2)."""
    return sp.sqrt(d / 2)
