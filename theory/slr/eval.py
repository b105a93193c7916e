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

The evaluators are the methods of :class:`EvalForms`, a part of Paper C's theory object (attnverify.theory.slr):
each lambdifies the object's own closed forms (``self.risk()``, ``self.gradient()``, ``self.reduced_map()``, ...)
with its own zeta evaluators, once per object, so a replaced closed form is what they evaluate.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived, recorded
from attnverify.theory.slr.dynamics import PARTIALS, step
from attnverify.theory.slr.symbols import OVERLAPS, PARAMS, kappa, nu

_ARGS = OVERLAPS + PARAMS


def _lambdify(expr, modules, args=_ARGS) -> Callable:
    return sp.lambdify(args, expr, modules=modules, cse=True)


def _broadcast(args) -> list[np.ndarray]:
    arrs = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    return [np.array(a) for a in arrs]


class EvalForms(ClosedForms):
    """NumPy and mpmath evaluators of the closed forms (module docstring)."""

    def np_modules(self) -> list:
        """lambdify's modules for float64: zeta_erf by this object's :meth:`zeta_np`, then SciPy and NumPy."""
        return [{"zeta_erf": self.zeta_np}, "scipy", "numpy"]

    def mp_modules(self) -> list:
        """lambdify's modules for mpmath: zeta_erf by this object's :meth:`zeta_mp` (Owen's T), then mpmath."""
        return [{"zeta_erf": lambda t, s: self.zeta_mp(t, s, "owen")}, "mpmath"]

    @derived
    def np_functions(self) -> dict[str, Callable]:
        g = self.gradient()
        return {"risk": _lambdify(self.risk(), self.np_modules()),
                "grad": [_lambdify(g[o], self.np_modules()) for o in OVERLAPS]}

    @derived
    def np_hessian(self) -> list[list[Callable]]:
        g = self.gradient()
        return [[_lambdify(sp.diff(g[a], b), self.np_modules()) for b in OVERLAPS] for a in OVERLAPS]

    def risk_np(self, kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
        """R at the given overlaps and parameters (float64, broadcast)."""
        a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
        return np.asarray(self.np_functions()["risk"](*a), dtype=float) + 0.0 * a[0]

    def risk_gradient_np(self, kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
        """The partials (dR/dkappa, dR/dnu, dR/dtheta, dR/deta, dR/drho), stacked: shape (5, *broadcast shape)."""
        a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
        return np.stack([np.asarray(f(*a), dtype=float) + 0.0 * a[0] for f in self.np_functions()["grad"]])

    def risk_hessian_np(self, kappa, nu, theta, eta, rho, lam, gamma, d, L, eps) -> np.ndarray:
        """Second partials of R in the overlaps (kappa, nu, theta, eta, rho): shape (5, 5, *broadcast shape)."""
        a = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps))
        return np.stack([np.stack([np.asarray(f(*a), dtype=float) + 0.0 * a[0] for f in row])
                         for row in self.np_hessian()])

    # -------------------------------------------------------------------------------------- mpmath
    @derived
    def mp_functions(self) -> dict:
        g = self.gradient()
        return {"risk": _lambdify(self.risk(), self.mp_modules()),
                "grad": [_lambdify(g[o], self.mp_modules()) for o in OVERLAPS]}

    @derived
    def mp_hessian(self) -> list:
        g = self.gradient()
        return [[_lambdify(sp.diff(g[a], b), self.mp_modules()) for b in OVERLAPS] for a in OVERLAPS]

    def risk_mp(self, *args):
        """R at the working mpmath precision; arguments (kappa, nu, theta, eta, rho, lam, gamma, d, L, eps)."""
        return self.mp_functions()["risk"](*args)

    def gradient_mp(self, *args) -> list:
        """The five partials of R at the working mpmath precision."""
        return [f(*args) for f in self.mp_functions()["grad"]]

    def hessian_mp(self, *args) -> list[list]:
        """The 5 x 5 second partials of R at the working mpmath precision."""
        return [[f(*args) for f in row] for row in self.mp_hessian()]

    # -------------------------------------------------------------------------------------- maps
    @derived
    def reduced_functions_np(self) -> dict[str, Callable]:
        args = (kappa, nu) + PARAMS
        rm = self.reduced_map()
        h = sp.Symbol("h", positive=True)
        return {"r": _lambdify(self.risk_on_M(), self.np_modules(), args),
                "map": _lambdify(sp.Matrix([rm["kappa"], rm["nu"]]), self.np_modules(), args + (h,))}

    def reduced_risk_np(self, kappa, nu, lam, gamma, d, L, eps) -> np.ndarray:
        """r(kappa, nu) = R on M (float64, broadcast)."""
        a = _broadcast((kappa, nu, lam, gamma, d, L, eps))
        return np.asarray(self.reduced_functions_np()["r"](*a), dtype=float) + 0.0 * a[0]

    @recorded
    def reduced_map_np(self, kappa, nu, h, lam, gamma, d, L, eps) -> tuple[np.ndarray, np.ndarray]:
        """One step of projected gradient descent with step h restricted to M: (kappa', nu')."""
        a = _broadcast((kappa, nu, lam, gamma, d, L, eps, h))
        out = self.reduced_functions_np()["map"](*a)
        return np.asarray(out[0, 0], dtype=float) + 0.0 * a[0], np.asarray(out[1, 0], dtype=float) + 0.0 * a[0]

    @derived
    def reduced_flow_np(self) -> Callable:
        """(kappa_dot, nu_dot) of the reduced flow as a function of (kappa, nu, lam, gamma, d, L, eps) (float64)."""
        return sp.lambdify((kappa, nu) + PARAMS, list(self.reduced_flow()),
                           modules=[{"zeta_erf": lambda t, s: self.zeta_np(t, s)}, "scipy", "numpy"])

    @derived
    def overlap_map_function_np(self) -> Callable:
        om = self.overlap_map_abstract()
        return sp.lambdify(OVERLAPS + PARTIALS + (step,), sp.Matrix([om["new"][o] for o in OVERLAPS]),
                           modules="numpy", cse=True)

    def overlap_map_np(self, kappa, nu, theta, eta, rho, h, lam, gamma, d, L, eps) -> np.ndarray:
        """One step of projected (Riemannian) gradient descent on S^{d-1} x S^{d-1} with step h, in the overlaps:
        the new (kappa, nu, theta, eta, rho), shape (5, *broadcast shape).  The partials of R are the closed
        forms."""
        o = _broadcast((kappa, nu, theta, eta, rho, lam, gamma, d, L, eps, h))
        g = self.risk_gradient_np(*o[:10])
        out = self.overlap_map_function_np()(*o[:5], *g, o[10])
        return np.stack([np.asarray(out[i, 0], dtype=float) + 0.0 * o[0] for i in range(5)])
