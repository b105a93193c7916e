"""The numerical zero-temperature field X_inf(x) = attention_field(x, B, V, beta = inf) of Paper B, analysed as a
vector field on the sphere: its trajectories, and its one-sided Lipschitz constant (tangent logarithmic norm).

X_inf(x) = P_perp_x V B^T x / |B^T x| comes from :func:`attnverify.numerics.meanfield.particles.attention_field`, so nothing
here reads a closed form of the theory (the model validated once per call here, :func:`field_function`: the integrator
and the Nelder-Mead search evaluate the field many thousand times, one point at a time).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from attnverify.numerics.meanfield.particles import field_function


def zero_temperature_path(x0: np.ndarray, B: np.ndarray, V: np.ndarray, times: np.ndarray, rtol: float) -> np.ndarray:
    """x(times) for dx/dt = X_inf(x) by DOP853 (atol 1e-16); the state is renormalised inside the field
    (the field is tangent, so |x| = 1 is preserved up to the integration error). ``B``, ``V`` are validated once
    (:func:`field_function`), not at each of the integrator's field evaluations."""
    field = field_function(B, V, np.inf)

    def rhs(_, x):
        return field((x / np.linalg.norm(x))[None, :])[0]

    sol = solve_ivp(rhs, (0.0, float(times[-1])), x0, method="DOP853", t_eval=times, rtol=rtol, atol=1e-16)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.y.T


def _tangent_bases(X: np.ndarray) -> np.ndarray:
    """Orthonormal bases of the tangent spaces x^perp, shape (n, d - 1, d)."""
    return np.array([np.linalg.svd(x[None, :])[2][1:] for x in X])


def _fd_log_norms(field: Callable[[np.ndarray], np.ndarray], X: np.ndarray, h: float) -> np.ndarray:
    """For each row x of X: lambda_max of the symmetric tangent matrix <t_i, d/ds X_inf(cos s x + sin s t_j)> at
    s = 0, by central differences with step h along great circles (one batched evaluation of ``field``, X_inf of
    one model: :func:`field_function`, which the Nelder-Mead refinement calls tens of thousands of times)."""
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    T = _tangent_bases(X)                                          # (n, m, d)
    n, m, d = T.shape
    P = np.concatenate([np.cos(h) * X[:, None] + np.sin(h) * T, np.cos(h) * X[:, None] - np.sin(h) * T], axis=1)
    P = P.reshape(-1, d)
    F = field(P / np.linalg.norm(P, axis=1, keepdims=True)).reshape(n, 2 * m, d)
    Dv = (F[:, :m] - F[:, m:]) / (2 * np.sin(h))                   # row j: derivative along t_j
    M = np.einsum("nid,njd->nij", T, Dv)
    return np.linalg.eigvalsh((M + np.swapaxes(M, 1, 2)) / 2)[:, -1]


def observed_log_norm(B, V, n_start: int = 361, h: float = 1e-5) -> dict:
    """sup over the sphere of the tangent log-norm of the numerical zero-temperature field: grid (d = 2) or fixed
    pseudo-random starts (d >= 3), the best 2 refined by Nelder-Mead; the same at steps 2h and 4h (the
    finite-difference refinement). Central differences err by O(h^2): the Richardson value R(h) = (4 C(h) - C(2h))/3
    is returned as ``C1``, and |R(h) - R(2h)| (R(2h) from steps 2h, 4h), at least the rounding of the differences
    (8 eps max(|C|, 1) / h), as ``C1_error``, the estimate of its error (|C(h) - C(2h)|, the error of the plain
    differences, overstates it by the factor of the O(h^2) term)."""
    from scipy.optimize import minimize

    field = field_function(B, V, np.inf)
    d = np.shape(B)[0]
    if d == 2:
        phi = np.linspace(0, 2 * np.pi, n_start)
        starts = np.c_[np.cos(phi), np.sin(phi)]
    else:
        starts = np.random.default_rng(0).standard_normal((n_start * (d - 1), d))
    out = {}
    for step in (h, 2 * h, 4 * h):
        vals = _fd_log_norms(field, starts, step)
        best, arg = float(vals.max()), starts[int(np.argmax(vals))]
        for k in np.argsort(vals)[::-1][:2]:      # a smooth maximum: x to 1e-7 gives the value to ~1e-14
            res = minimize(lambda z: -_fd_log_norms(field, z[None, :], step)[0], starts[k], method="Nelder-Mead",
                           options={"xatol": 1e-7, "fatol": 1e-15, "maxiter": 400 * d})
            if -res.fun > best:
                best, arg = -float(res.fun), res.x / np.linalg.norm(res.x)
        out[step] = (best, np.asarray(arg, float))
    (c_h, x_h), (c_2h, _), (c_4h, _) = out[h], out[2 * h], out[4 * h]
    r_h, r_2h = (4 * c_h - c_2h) / 3, (4 * c_2h - c_4h) / 3
    # a central difference carries the field's rounding divided by the step: eps |C| / h, times the Richardson
    # weights (4 + 1)/3 and a factor for the field's own evaluation; the error estimate is never below it
    rounding = 8 * np.finfo(float).eps * max(abs(c_h), 1.0) / h
    return {"C1": r_h, "C1_error": max(abs(r_h - r_2h), rounding), "C1_step_h": c_h, "C1_step_2h": c_2h,
            "C1_step_4h": c_4h,
            "x_star": x_h.tolist(), "h": h}
