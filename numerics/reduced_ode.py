"""The reduced alignment ODE rho'(t) = F(rho), rho(0) = rho0, solved at tight tolerances.

Default: scipy ``solve_ivp`` with DOP853 (8th-order Runge-Kutta) at rtol=1e-12, atol=1e-14.
precision=k: mpmath ``odefun`` (Taylor series, error controlled to k significant digits); F must then accept and
return mpmath numbers (e.g. a SymPy expression lambdified with modules="mpmath").
"""
from __future__ import annotations

import math
from typing import Callable

import mpmath
import numpy as np
from scipy.integrate import solve_ivp


def solve_reduced_ode(F: Callable[[float], float], rho0: float, t_eval: np.ndarray, *, rtol: float = 1e-12,
                      atol: float = 1e-14, precision: int | None = None) -> np.ndarray:
    """rho(t) at the times t_eval (non-decreasing, >= 0) for rho' = F(rho), rho(0) = rho0 in [-1, 1]."""
    if not callable(F):
        raise TypeError(f"F must be callable, got {type(F).__name__}")
    try:
        rho0 = float(rho0)
    except (TypeError, ValueError):
        raise TypeError(f"rho0 must be a real number, got {type(rho0).__name__}") from None
    if not math.isfinite(rho0) or abs(rho0) > 1:
        raise ValueError(f"rho0 must be finite and in [-1, 1], got {rho0}")
    t = np.atleast_1d(np.asarray(t_eval, dtype=float))
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError("t_eval must be a non-empty finite 1-D array")
    if t[0] < 0 or np.any(np.diff(t) < 0):
        raise ValueError("t_eval must be non-decreasing and start at t >= 0")
    if not (rtol > 0 and atol > 0):
        raise ValueError(f"rtol and atol must be > 0, got {rtol}, {atol}")
    if precision is not None:
        if isinstance(precision, bool) or not isinstance(precision, int) or precision < 15:
            raise ValueError(f"precision must be an integer number of digits >= 15, got {precision!r}")
        with mpmath.workdps(precision):
            def rhs_mp(_t, y):
                v = F(y)
                if not mpmath.isfinite(v):
                    raise ValueError(f"F returned a non-finite value {v} at rho = {y}")
                return v

            sol = mpmath.odefun(rhs_mp, 0, mpmath.mpf(rho0))
            out = np.array([float(sol(mpmath.mpf(float(ti)))) for ti in t])
    else:
        if t[-1] == 0:
            return np.full(t.shape, rho0)
        def rhs(_t: float, y: np.ndarray) -> list[float]:
            v = float(F(y[0]))
            if not math.isfinite(v):
                raise ValueError(f"F returned a non-finite value {v} at rho = {y[0]}")
            return [v]

        res = solve_ivp(rhs, (0.0, t[-1]), [rho0], method="DOP853", t_eval=t,
                        rtol=rtol, atol=atol)
        if not res.success:
            raise ValueError(f"reduced ODE integration failed: {res.message}")
        out = res.y[0]
    if not np.all(np.isfinite(out)):
        raise ValueError("reduced ODE solution is not finite (F returned NaN/inf?)")
    return out
