r"""Paper A's model: its symbols, its sign options and the validation of numeric parameters.

A sequence has L tokens in R^d; R informative tokens x_i = c xi + z_i, L - R nuisance tokens x_i = z_i, with
z_i ~ N(0, sigma^2 I_d), |xi| = |q| = 1, rho = <q, xi>.  Scores s_i = beta <q, x_i>, attention a = softmax(s), output
f_q(X) = sum_i a_i x_i, objective J = E |f_q(X)|^2.  ``sign="fixed"``: c = theta.  ``sign="symmetric"``:
c = eps theta with one Rademacher eps per sequence.

The symbols: ``rho`` (real) and ``theta, beta, sigma, R, L, d`` (positive); every closed form of
:mod:`attnverify.theory.signal` is an expression in them.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import sympy as sp

rho = sp.Symbol("rho", real=True)
theta, beta, sigma, R, L, d = sp.symbols("theta beta sigma R L d", positive=True)

SIGNS = ("fixed", "symmetric")
#: the arguments of a closed form as a function: (rho, theta, beta, sigma, R, L, d)
ARGS = (rho, theta, beta, sigma, R, L, d)
#: the numeric parameters of the model, in the order :func:`validate_params` returns them
PARAM_NAMES = ("theta", "beta", "sigma", "R", "L", "d")
ARB_PREC = 128  # bits of the Arb ball arithmetic of the certified results


def check_sign(sign: str) -> str:
    """``sign`` itself when it is ``"fixed"`` or ``"symmetric"``; TypeError / ValueError otherwise."""
    if not isinstance(sign, str):
        raise TypeError(f"sign must be a str, got {type(sign).__name__}")
    if sign not in SIGNS:
        raise ValueError(f"sign must be 'fixed' or 'symmetric', got {sign!r}")
    return sign


def validate_params(params: dict) -> tuple:
    """(theta, beta, sigma, R, L, d) of a parameter dict (extra keys ignored), as floats and ints: theta >= 0,
    beta > 0, sigma > 0, 1 <= R < L, d >= 2, all finite; TypeError / ValueError naming the first bad one."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    vals = []
    for name in PARAM_NAMES:
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


def check_finite_size_validity(vals: tuple, finite_size: bool) -> None:
    """The d/L term is a 1/L expansion in the effective token count L e^{-beta^2 sigma^2} (= 1 / E sum a_i^2 at
    theta = 0); it is meaningless (and numerically a cancellation of e^{beta^2 sigma^2}-sized terms) below 1."""
    th, be, si, r, l, dd = vals
    if finite_size and (be * si) ** 2 > math.log(l):
        raise ValueError(f"finite_size=True needs beta^2 sigma^2 <= log L (effective token count L e^(-beta^2 sigma^2) "
                         f">= 1), got beta^2 sigma^2 = {(be * si) ** 2:.4g} > log L = {math.log(l):.4g}")
