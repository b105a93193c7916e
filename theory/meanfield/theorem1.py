"""Paper B, Theorem 1: the bound b(beta, t) = K (s(beta) e^{C1 t} + e^{-c t}), s(beta) = sqrt(log(beta + 1)/beta).

* The bound's optimal time t*(beta) (db/dt = 0, a minimum) and minimal value, derived by SymPy.
* Its constants as the proof needs them: the rate s(beta) read off the bound, and the growth constant C1, the
  one-sided Lipschitz constant (logarithmic norm) of X_inf on the sphere (Groenwall).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import derived, recorded
from attnverify.theory.meanfield.model import _exact, _key, _to_numpy

beta, t, K, C1, c = sp.symbols("beta t K C_1 c", positive=True)


@dataclass(frozen=True)
class ConcentrationBound:
    """b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t}); t_star solves db/dt = 0 (a minimum,
    positive iff c > C1 sqrt(log(beta+1)/beta); otherwise the minimum over t >= 0 is at t = 0); b_min = b(t_star)."""

    b: sp.Expr
    t_star: sp.Expr
    b_min: sp.Expr


def _tangent_log_norm(Jf: Callable, x: np.ndarray) -> float:
    """lambda_max of the symmetric part of J(x) restricted to the tangent space x^perp."""
    x = np.asarray(x, dtype=float)
    x = x / np.linalg.norm(x)
    J = np.array(Jf(*x), dtype=float)
    _, _, Vt = np.linalg.svd(x[None, :])
    T = Vt[1:].T                                   # orthonormal basis of x^perp
    M = T.T @ (J + J.T) @ T / 2
    return float(np.linalg.eigvalsh(M)[-1])


class Theorem1Forms:
    """Theorem 1's bound and its constants, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory` (C1 is
    the log-norm of ``self.zero_temperature_field``)."""

    @derived
    def concentration_bound(self) -> ConcentrationBound:
        """Derive t*(beta) = argmin_t b(beta, t) (SymPy solve of db/dt = 0) and the minimal value."""
        b = K * (sp.sqrt(sp.log(beta + 1) / beta) * sp.exp(C1 * t) + sp.exp(-c * t))
        sols = sp.solve(sp.diff(b, t), t)
        real = [s for s in sols if s.is_real is not False]
        if len(real) != 1:
            raise RuntimeError(f"expected one real critical point, got {sols}")
        if not sp.simplify(sp.diff(b, t, 2).subs(t, real[0])).is_positive:
            raise RuntimeError("critical point is not a minimum")
        t_star = sp.expand_log(real[0], force=True)
        return ConcentrationBound(b=b, t_star=t_star, b_min=sp.simplify(b.subs(t, real[0])))

    @derived
    def _rate_lambda(self) -> Callable:
        """s(beta) = b(beta, 0)/K - 1, read off the Theorem-1 bound of ``concentration_bound`` (the coefficient of
        K e^{C1 t}), lambdified to NumPy."""
        s = sp.simplify(self.concentration_bound().b.subs(t, 0) / K - 1)
        return sp.lambdify(beta, s, "numpy")

    @recorded
    def theorem1_rate(self, beta) -> np.ndarray:
        """The Theorem-1 rate s(beta) = sqrt(log(beta + 1)/beta) at beta > 0 (float or array; float array out)."""
        b = np.asarray(beta, dtype=float)
        if not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise ValueError("beta must be finite and > 0")
        return np.asarray(self._rate_lambda()(b), dtype=float)

    @derived
    def _log_norm_jacobian(self, kB: tuple, kV: tuple) -> Callable:
        """SymPy Jacobian J(x) of X_inf (its 0-homogeneous extension to R^d), lambdified to NumPy."""
        d = kB[0]
        Bm, Vm = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kV[1]))
        xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
        return sp.lambdify(list(xs), self.zero_temperature_field(xs, Bm, Vm).jacobian(xs), "numpy")

    @recorded
    def growth_constant(self, B, V) -> dict:
        """C1 of Theorem 1 as the Groenwall argument needs it: the one-sided Lipschitz constant (logarithmic norm)
        of the zero-temperature field on the sphere,

            C1 = sup_{x in S^{d-1}} max_{v perp x, |v| = 1} <v, DX_inf(x) v>,

        (the covariant derivative of a tangent field on the embedded sphere is P_perp DX_inf, and <v, P_perp w> =
        <v, w> for tangent v), so that two zero-temperature trajectories separate at most like e^{C1 t} in geodesic
        distance and d/dt W2(mu^beta_t, mu^inf_t) <= eps(beta, t) + C1 W2(...).  DX_inf is the SymPy Jacobian of
        ``zero_temperature_field`` (lambdified).  d = 2: lambda(phi) = v^T J v on x = (cos phi, sin phi),
        v = (-sin phi, cos phi), on a 721-point grid, refined by bounded Brent around the best grid points
        (agreement to ~1e-12).  d >= 3: Nelder-Mead from the best of 400 fixed pseudo-random points and the
        eigenvectors of V B^T: a lower estimate of the sup, not certified.  Returns {"C1", "x_star", "method"}."""
        from scipy.optimize import minimize, minimize_scalar

        s = self.spectrum(B, V)
        Jf = self._log_norm_jacobian(_key(s.B), _key(_exact(V, "V")))
        if s.d == 2:
            grid = np.linspace(0.0, 2 * np.pi, 721)
            h = grid[1] - grid[0]
            vals = np.array([_tangent_log_norm(Jf, np.array([np.cos(p), np.sin(p)])) for p in grid])
            best, arg = float(vals.max()), float(grid[int(np.argmax(vals))])
            for k in np.argsort(vals)[::-1][:6]:
                res = minimize_scalar(lambda p: -_tangent_log_norm(Jf, np.array([np.cos(p), np.sin(p)])),
                                      bounds=(grid[k] - h, grid[k] + h), method="bounded", options={"xatol": 1e-12})
                if -res.fun > best:
                    best, arg = -float(res.fun), float(res.x)
            return {"C1": best, "x_star": [float(np.cos(arg)), float(np.sin(arg))],
                    "method": "v^T DX_inf v on S^1 (SymPy Jacobian), grid of 721 angles refined by bounded Brent"}
        rng = np.random.default_rng(0)
        starts = list(rng.standard_normal((400, s.d))) + list(np.linalg.eigh(_to_numpy(s.A))[1].T)
        scored = sorted(((_tangent_log_norm(Jf, x), x) for x in starts), key=lambda z: -z[0])[:3]
        best, arg = scored[0]
        for _, x0 in scored:                     # a smooth maximum: x to 1e-8 gives the value to ~1e-15
            res = minimize(lambda z: -_tangent_log_norm(Jf, z), x0, method="Nelder-Mead",
                           options={"xatol": 1e-8, "fatol": 1e-15, "maxiter": 400 * s.d})
            if -res.fun > best:
                best, arg = -float(res.fun), res.x
        arg = np.asarray(arg, dtype=float) / np.linalg.norm(arg)
        return {"C1": float(best), "x_star": arg.tolist(),
                "method": "lambda_max of the tangent symmetric part of the SymPy Jacobian, Nelder-Mead multistart "
                          "(estimate of the sup, not certified for d >= 3)"}
