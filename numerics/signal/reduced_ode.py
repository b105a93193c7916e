"""The reduced alignment ODE rho'(t) = F(rho), rho(0) = rho0, solved at tight tolerances, and the mean path of a
stochastic step method that follows it to second order in the step (moment closure).

:func:`solve_reduced_ode` -- default: scipy ``solve_ivp`` with DOP853 (8th-order Runge-Kutta) at rtol=1e-12,
atol=1e-14.  precision=k: mpmath ``odefun`` (Taylor series, error controlled to k significant digits); F must then
accept and return mpmath numbers (e.g. a SymPy expression lambdified with modules="mpmath").

:func:`second_order_mean` -- the mean and variance of rho_k for steps rho' = (rho + eta y)/sqrt(1 + eta^2 |g|^2)
with E y = F(rho), Var y = S(rho), E |g|^2 = G(rho) (projected stochastic gradient ascent on the sphere).
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


H_DIFF = 1e-3               # step of the central differences for F' and F''
S_DIFF = 0.01               # relative scale step for a sensitivity d m / d s to a scale s of F (F -> s F)


def second_order_mean(F, rho0, eta: np.ndarray, grid: np.ndarray, S: np.ndarray, G: np.ndarray,
                      scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The mean m_k and variance V_k of rho_k over runs of the step rho' = (rho + eta_k y)/sqrt(1 + eta_k^2 |g|^2),
    E y = F(rho), to second order in the step: E[rho' | rho] = rho + eta F(rho) - (eta^2/2) rho G(rho) + O(eta^3),
    and with third moments dropped (moment closure)

        m_{k+1} = m_k + eta_k (F(m_k) + F''(m_k) V_k / 2) - (eta_k^2 / 2) m_k G(m_k),
        V_{k+1} = (1 + eta_k F'(m_k))^2 V_k + eta_k^2 S(m_k),     m_0 = rho0, V_0 = 0,

    for the field scale * F (F vectorised; F', F'' by central differences with step H_DIFF; S = Var y and
    G = E |g|^2 tabulated on ``grid``, interpolated linearly).  rho0: a number or an array of starting points, one
    recursion each.  Returns (m, V), each of shape (K + 1,) + shape(rho0), K = len(eta)."""
    m = np.array(rho0, dtype=float)
    V = np.zeros_like(m)
    ms, Vs = [m], [V]
    h = H_DIFF
    for e in eta:
        x = np.clip(m, -1.0 + h, 1.0 - h)
        f0, fp, fm, fm_ = scale * np.asarray(F(np.stack([x, x + h, x - h, m])), dtype=float)     # one call of F
        F1, F2 = (fp - fm) / (2 * h), (fp - 2 * f0 + fm) / h**2
        m_next = m + e * (fm_ + F2 * V / 2) - 0.5 * e * e * m * np.interp(m, grid, G)
        V = (1 + e * F1) ** 2 * V + e * e * np.interp(m, grid, S)
        m = np.clip(m_next, -1.0, 1.0)
        ms.append(m)
        Vs.append(V)
    return np.array(ms), np.array(Vs)
