r"""Paper C (``slr``): fast evaluators of the derived closed forms (lambdified from SymPy, cached).

NumPy (float64, vectorised; every argument broadcasts, e.g. overlaps of shape (n_runs,) and scalar parameters):
:func:`risk_np`, :func:`risk_gradient_np` (the five partials dR/d(kappa, nu, theta, eta, rho)),
:func:`risk_hessian_np` (5 x 5 second partials), :func:`reduced_risk_np`, :func:`reduced_map_np`,
:func:`overlap_map_np`.  mpmath (working precision): :func:`risk_mp`, :func:`gradient_mp`, :func:`hessian_mp`.

zeta_sigma(t) is evaluated by Owen's T (scipy in float64, mpmath quadrature otherwise).  The closed forms hold
lam only inside exp(-x^2), erf, atan and square roots of polynomials in lam (no exp of a growing argument), so
large lam does not overflow: the tests check the float64 values against mpmath up to lam = 1e12; the first
overflow is lam^4 near lam = 1e77.  Near kappa = 1 the kappa-partial is a difference of terms of size
exp(-c^2 kappa^2): float64 gives it to an absolute (not relative) accuracy of about 1e-16 times that size.
Projected gradient descent in these coordinates is one step of the exact map of attnverify.theory.slr.dynamics
(k and v updated simultaneously from the same point).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.slr import gauss as G
from attnverify.theory.slr.population import gradient, risk, risk_on_M
from attnverify.theory.slr.symbols import OVERLAPS, PARAMS, kappa, nu

_NP_MODULES = [{"zeta_erf": G.zeta_np}, "scipy", "numpy"]
_MP_MODULES = [{"zeta_erf": lambda t, s: G.zeta_mp(t, s, "owen")}, "mpmath"]
_ARGS = OVERLAPS + PARAMS


def _lambdify(expr, modules, args=_ARGS) -> Callable:
    return sp.lambdify(args, expr, modules=modules, cse=True)


@lru_cache(maxsize=None)
def _np_functions() -> dict[str, Callable]:
    g = gradient()
    return {"risk": _lambdify(risk(), _NP_MODULES),
            "grad": [_lambdify(g[o], _NP_MODULES) for o in OVERLAPS]}


@lru_cache(maxsize=None)
def _np_hessian() -> list[list[Callable]]:
    g = gradient()
    return [[_lambdify(sp.diff(g[a], b), _NP_MODULES) for b in OVERLAPS] for a in OVERLAPS]


def _broadcast(args) -> list[np.ndarray]:
    arrs = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    return [np.array(a) for a in arrs]


def risk_np(kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
    """R at the given overlaps and parameters (float64, broadcast)."""
    a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
    return np.asarray(_np_functions()["risk"](*a), dtype=float) + 0.0 * a[0]


def risk_gradient_np(kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
    """The partials (dR/dkappa, dR/dnu, dR/dtheta, dR/deta, dR/drho), stacked: shape (5, *broadcast shape)."""
    a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
    return np.stack([np.asarray(f(*a), dtype=float) + 0.0 * a[0] for f in _np_functions()["grad"]])


def risk_hessian_np(kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
    """Second partials of R in the overlaps (kappa, nu, theta, eta, rho): shape (5, 5, *broadcast shape)."""
    a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
    return np.stack([np.stack([np.asarray(f(*a), dtype=float) + 0.0 * a[0] for f in row]) for row in _np_hessian()])


# ------------------------------------------------------------------------------------------ mpmath
@lru_cache(maxsize=None)
def _mp_functions() -> dict:
    g = gradient()
    return {"risk": _lambdify(risk(), _MP_MODULES),
            "grad": [_lambdify(g[o], _MP_MODULES) for o in OVERLAPS]}


@lru_cache(maxsize=None)
def _mp_hessian() -> list:
    g = gradient()
    return [[_lambdify(sp.diff(g[a], b), _MP_MODULES) for b in OVERLAPS] for a in OVERLAPS]


def risk_mp(*args):
    """R at the working mpmath precision; arguments (kappa, nu, theta, eta, rho, lam, gamma, d, L, eps)."""
    return _mp_functions()["risk"](*args)


def gradient_mp(*args) -> list:
    """The five partials of R at the working mpmath precision."""
    return [f(*args) for f in _mp_functions()["grad"]]


def hessian_mp(*args) -> list[list]:
    """The 5 x 5 second partials of R at the working mpmath precision."""
    return [[f(*args) for f in row] for row in _mp_hessian()]


# ------------------------------------------------------------------------------------------ maps
@lru_cache(maxsize=None)
def _reduced_np() -> dict[str, Callable]:
    from attnverify.theory.slr.dynamics import reduced_map
    args = (kappa, nu) + PARAMS
    rm = reduced_map()
    h = sp.Symbol("h", positive=True)
    return {"r": _lambdify(risk_on_M(), _NP_MODULES, args),
            "map": _lambdify(sp.Matrix([rm["kappa"], rm["nu"]]), _NP_MODULES, args + (h,))}


def reduced_risk_np(kappa, nu, lam, gamma, d, L, eps) -> np.ndarray:
    """r(kappa, nu) = R on M (float64, broadcast)."""
    a = _broadcast((kappa, nu, lam, gamma, d, L, eps))
    return np.asarray(_reduced_np()["r"](*a), dtype=float) + 0.0 * a[0]


def reduced_map_np(kappa, nu, h, lam, gamma, d, L, eps) -> tuple[np.ndarray, np.ndarray]:
    """One step of projected gradient descent with step h restricted to M: (kappa', nu')."""
    a = _broadcast((kappa, nu, lam, gamma, d, L, eps, h))
    out = _reduced_np()["map"](*a)
    return np.asarray(out[0, 0], dtype=float) + 0.0 * a[0], np.asarray(out[1, 0], dtype=float) + 0.0 * a[0]


@lru_cache(maxsize=None)
def _overlap_map_np() -> Callable:
    from attnverify.theory.slr.dynamics import PARTIALS, overlap_map_abstract, step
    om = overlap_map_abstract()
    return sp.lambdify(OVERLAPS + PARTIALS + (step,), sp.Matrix([om["new"][o] for o in OVERLAPS]),
                       modules="numpy", cse=True)


def overlap_map_np(kappa, nu, theta, eta, rho, h, lam, gamma, d, L, eps) -> np.ndarray:
    """One step of projected (Riemannian) gradient descent on S^{d-1} x S^{d-1} with step h, in the overlaps:
    the new (kappa, nu, theta, eta, rho), shape (5, *broadcast shape).  The partials of R are the closed forms."""
    o = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps, h))
    g = risk_gradient_np(*o[:10])
    out = _overlap_map_np()(*o[:5], *g, o[10])
    return np.stack([np.asarray(out[i, 0], dtype=float) + 0.0 * o[0] for i in range(5)])
