"""Paper B, the zero-temperature flow in closed form and its limit, the projection map.

* Closed-form flow: x(tau) = e^{tau A} x0 / |e^{tau A} x0| (A = V B^T) solves dx/dtau = P_perp_x A x (Oja), and
  the time change dt/dtau = |B^T x(tau)| turns it into a solution of dx/dt = X_inf(x).
* Projection map Pi(x) = P_E x / |P_E x| onto the dominant eigenspace E of A (the tau -> oo limit of the closed
  form; P_E the orthogonal spectral projector), whose image consists of fixed points: X_inf(Pi x) = 0.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import derived, recorded
from attnverify.theory.meanfield.model import _exact, _key, _real_roots_desc, _to_numpy

tau = sp.Symbol("tau", real=True)
_ZERO_RTOL = 1e-12    # |P_E x| <= 1e-12 |x|: x lies (numerically) in E^perp, outside the domain of Pi
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
_QUAD_RTOL = 1e-13      # a panel's 20-point value and its halves' sum agree to this: the time change to ~1e-15
_QUAD_MAX_PANELS = 1_000_000


def _gauss_legendre(g: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The 20-point Gauss-Legendre rule on each panel [lo_i, hi_i] (``g`` vectorised)."""
    mid, half = (hi + lo) / 2, (hi - lo) / 2
    return half * np.sum(_GL_WEIGHTS * g(mid[:, None] + half[:, None] * _GL_NODES), axis=1)


def adaptive_gauss_legendre(g: Callable[[np.ndarray], np.ndarray], edges: np.ndarray, rtol: float = _QUAD_RTOL,
                            max_panels: int = _QUAD_MAX_PANELS) -> float:
    """int g over [edges[0], edges[-1]] for a positive analytic g: each panel's 20-point Gauss-Legendre value I_1 is
    compared with the sum I_2 over its two halves; a panel is accepted (with I_2) where |I_1 - I_2| <= rtol I_2, else
    split; a panel is also accepted where the difference is within its length's share of rtol times the first
    estimate of the whole integral (where g itself is computed with cancellation, its rounding would otherwise split
    the panel forever; the whole integral then carries an error of at most about rtol). The rule's error on a panel
    shrinks like rho^-40 with the panel's Bernstein ellipse rho, so I_2 is far more accurate than the difference; fixed panels are not enough where g has a complex singularity near the real axis:
    |B^T x(tau)| with B nearly singular dips to 8e-4 of its maximum, and panels of 1/(4 max|mu|) missed its
    integral by 3e-5 of the flow's position.  More than ``max_panels`` panels raises ValueError."""
    lo, hi, total = np.asarray(edges[:-1], float), np.asarray(edges[1:], float), 0.0
    span, budget = float(hi[-1] - lo[0]), None
    while lo.size:
        if lo.size > max_panels:
            raise ValueError(f"the time change needs over {max_panels} adaptive quadrature panels: |B^T x| is too "
                             "close to 0 along this path (B nearly singular)")
        mid = (lo + hi) / 2
        whole = _gauss_legendre(g, lo, hi)
        halves = _gauss_legendre(g, lo, mid) + _gauss_legendre(g, mid, hi)
        if budget is None:          # the integral's own share per unit length: a floor where g's rounding dominates
            budget = rtol * abs(float(np.sum(halves))) / span if span > 0 else 0.0
        done = np.abs(whole - halves) <= np.maximum(rtol * np.abs(halves), budget * (hi - lo))
        total += float(np.sum(halves[done]))
        lo, hi, mid = lo[~done], hi[~done], mid[~done]
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
    return total


class FlowForms:
    """The closed-form flow and the projection map, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory`
    (they read the spectrum and the zero-temperature field through ``self``)."""

    # ------------------------------------------------------------------------------------------
    # the closed-form flow
    # ------------------------------------------------------------------------------------------
    def oja_residual(self, A: sp.Matrix) -> sp.Matrix:
        """dx/dtau - P_perp_x A x for x = y/|y| with y' = A y (the defining ODE of y = e^{tau A} x0)."""
        d = A.rows
        Y = sp.Matrix([sp.Function(f"y{i + 1}", real=True)(tau) for i in range(d)])
        x = Y / sp.sqrt((Y.T * Y)[0])
        dx_dtau = x.diff(tau).subs({Y[i].diff(tau): (A * Y)[i] for i in range(d)})
        return sp.simplify(dx_dtau - (sp.eye(d) - x * x.T) * A * x)

    def _time_change_residual(self, Bm: sp.Matrix, V: sp.Matrix) -> sp.Matrix:
        """(P_perp_x A x)/(dt/dtau) - X_inf(x) with dt/dtau = |B^T x|, for a generic point x of the sphere."""
        d = Bm.rows
        xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
        bx = Bm.T * xs
        lhs = (sp.eye(d) - xs * xs.T / (xs.T * xs)[0]) * V * Bm.T * xs / sp.sqrt((bx.T * bx)[0])
        return sp.simplify(lhs - self.zero_temperature_field(xs, Bm, V))

    @derived
    def diagonal_flow_residual(self, d: int) -> sp.Matrix:
        """Residual dx/dt - X_inf(x) of the explicit closed form x = e^{tau A} x0/|e^{tau A} x0| with
        dt/dtau = |B^T x| for symbolic diagonal B = diag(b_i) > 0, V = diag(v_i), generic x0 (zero iff it solves)."""
        bs = sp.symbols(f"b1:{d + 1}", positive=True)
        vs = sp.symbols(f"v1:{d + 1}", real=True)
        cs = sp.symbols(f"c1:{d + 1}", real=True)
        Bm, V = sp.diag(*bs), sp.diag(*vs)
        y = (tau * V * Bm.T).exp() * sp.Matrix(cs)
        x = y / sp.sqrt((y.T * y)[0])
        speed = sp.sqrt(((Bm.T * x).T * (Bm.T * x))[0])
        return sp.simplify(x.diff(tau) / speed - self.zero_temperature_field(x, Bm, V))

    @derived
    def _flow_residual_of(self, kB: tuple, kV: tuple) -> sp.Matrix:
        d = kB[0]
        Bm, V = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kV[1]))
        return sp.Matrix.vstack(self.oja_residual(V * Bm.T), self._time_change_residual(Bm, V))

    def flow_residual(self, B, V) -> sp.Matrix:
        """Exact residual of the closed-form flow for the given matrices and a generic initial point.

        Stacks (i) dx/dtau - P_perp_x A x for x = e^{tau A} x0/|e^{tau A} x0|, A = V B^T (e^{tau A} x0 entering
        through its defining ODE y' = A y; an explicit 3x3 exponential with cubic eigenvalues is too costly) and
        (ii) the time change: (dx/dtau)/(dt/dtau) - X_inf(x) with dt/dtau = |B^T x|.  Zero vector: it solves."""
        self.spectrum(B, V)
        return self._flow_residual_of(_key(_exact(B, "B")), _key(_exact(V, "V")))

    @derived
    def _closed_form_lambdas(self, d: int, m: int) -> tuple[Callable, Callable]:
        """x(tau) = sum_k e^{tau(mu_k - mu_1)} w_k / |.| (w_k = P_k x0, so e^{tau A} x0 = e^{tau mu_1} sum_k ...)
        and dt/dtau = |B^T x(tau)|, lambdified to NumPy in (tau, mu_1..mu_m, w (m*d), B (d*d)); tau may be an
        array."""
        mus = sp.symbols(f"mu1:{m + 1}", real=True)
        W = sp.Matrix(m, d, sp.symbols(f"w1:{m * d + 1}", real=True))
        Bm = sp.Matrix(d, d, sp.symbols(f"B1:{d * d + 1}", real=True))
        y = sum((sp.exp(tau * (mus[k] - mus[0])) * W[k, :].T for k in range(m)), sp.zeros(d, 1))
        x = y / sp.sqrt((y.T * y)[0])
        speed = sp.sqrt(((Bm.T * x).T * (Bm.T * x))[0])
        args = (tau, *mus, *W, *Bm)
        return sp.lambdify(args, list(x), "numpy"), sp.lambdify(args, speed, "numpy")

    @recorded
    def closed_form_flow(self, x0, B, V, times) -> np.ndarray:
        """The zero-temperature flow from x0 at times t >= 0: x(tau(t)) with the lambdified closed form and
        tau(t) the inverse of t(tau) = int_0^tau |B^T x(s)| ds (strictly increasing: B invertible), by Newton's
        method with adaptive 20-point Gauss-Legendre quadrature (:func:`adaptive_gauss_legendre`) from panels of
        length <= 1/(4 max|mu|).  Returns shape (len(times), d)."""
        s = self.spectrum(B, V)
        x0 = np.asarray(x0, dtype=float)
        ts = np.asarray(times, dtype=float)
        if x0.shape != (s.d,) or not np.all(np.isfinite(x0)) or not np.linalg.norm(x0) > 0:
            raise ValueError(f"x0 must be a finite non-zero vector of shape ({s.d},)")
        if ts.ndim != 1 or not np.all(np.isfinite(ts)) or np.any(ts < 0) or np.any(np.diff(ts) < 0):
            raise ValueError("times must be a finite non-decreasing 1-D array of t >= 0")
        xf, speed = self._closed_form_lambdas(s.d, len(s.mu))
        mus = [float(m) for m in s.mu]
        blocks = [_to_numpy(P) @ x0 / np.linalg.norm(x0) for P in s.projectors]
        # reference exponent: the largest mu_k with P_k x0 != 0 (all used exponents <= 0: no overflow, and no
        # 0/0 when P_E x0 = 0); components with P_k x0 = 0 get exponent 0 and contribute exactly nothing
        live = [k for k, w in enumerate(blocks) if np.any(w != 0)]
        order = [live[0]] + [k for k in range(len(mus)) if k != live[0]]
        mus_eff = [mus[k] if k in live else mus[live[0]] for k in order]
        consts = (*mus_eff, *np.concatenate([blocks[k] for k in order]), *_to_numpy(s.B).ravel())
        h = 0.25 / max(abs(m) for m in mus)

        def g(u):
            return speed(u, *consts)

        def integral(a: float, b: float) -> float:
            n = max(1, int(np.ceil(min(abs(b - a) / h, 1e7))))
            if n >= 1e7:
                raise ValueError(f"the time change needs over 1e7 quadrature panels: max|mu| = {1 / (4 * h):.3g} "
                                 "is too large for these times (rescale V B^T)")
            return adaptive_gauss_legendre(g, np.linspace(a, b, n + 1))

        out = np.empty((len(ts), s.d))
        tau_k, t_k = 0.0, 0.0                                  # last converged (tau, t) pair
        for i, target in enumerate(ts):
            u = tau_k + (target - t_k) / g(tau_k)
            for _ in range(100):                              # Newton on t(u) - target; t'(u) = g(u) > 0
                step = (t_k + integral(tau_k, u) - target) / g(u)
                u -= step
                if abs(step) <= 1e-14 * (1 + abs(u)):
                    break
            else:
                raise RuntimeError("time change inversion did not converge")
            tau_k, t_k = u, target
            out[i] = np.array(xf(u, *consts), dtype=float)
        return out

    # ------------------------------------------------------------------------------------------
    # the projection map (the tau -> oo limit) and its stationarity
    # ------------------------------------------------------------------------------------------
    @recorded
    def projection_map(self, B, V) -> Callable[[np.ndarray], np.ndarray]:
        """Pi(x) = P_E x / |P_E x|, E the dominant eigenspace of V B^T (P_E its orthogonal spectral projector).

        The returned map takes x of shape (d,) or (N, d); a point with P_E x = 0 (|P_E x| <= 1e-12 |x|) is
        outside the domain of Pi and raises ValueError."""
        P = self.spectrum(B, V).P_E

        def Pi(x: np.ndarray) -> np.ndarray:
            try:
                X = np.asarray(x, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"x must be a real numeric array, got {type(x).__name__}") from None
            if X.ndim not in (1, 2) or X.shape[-1] != P.shape[0]:
                raise ValueError(f"x must have shape (d,) or (N, d) with d = {P.shape[0]}, got {X.shape}")
            if not np.all(np.isfinite(X)):
                raise ValueError("x has non-finite entries (NaN or inf)")
            Y = X @ P.T
            ny = np.linalg.norm(Y, axis=-1, keepdims=True)
            if np.any(ny <= _ZERO_RTOL * np.linalg.norm(X, axis=-1, keepdims=True)):
                raise ValueError("P_E x = 0: the point lies in the orthogonal complement of the dominant "
                                 "eigenspace, outside the domain of Pi (moment assumption)")
            return Y / ny

        return Pi

    @derived
    def diagonal_limit(self, d: int, dim_E: int) -> tuple[sp.Matrix, sp.Matrix]:
        """tau -> oo limit of the closed form for A = diag(mu_1 (dim_E times), mu_1 - g_k ...), g_k > 0.

        x is invariant under y -> e^{-tau mu_1} y, so x = e^{tau(A - mu_1)} x0/|.|; with u = e^{-tau} -> 0+
        each entry is a power u^{g_k} and SymPy takes the limit.  Returns (generic x0, Pi(x0))."""
        cs = sp.symbols(f"c1:{d + 1}", real=True)
        mu1 = sp.Symbol("mu_1", real=True)
        u = sp.Symbol("u", positive=True)
        gs = sp.symbols(f"g1:{d - dim_E + 1}", positive=True)
        A = sp.diag(*([mu1] * dim_E + [mu1 - g for g in gs]))
        y = (tau * (A - mu1 * sp.eye(d))).exp() * sp.Matrix(cs)
        x = (y / sp.sqrt((y.T * y)[0])).subs(tau, -sp.log(u))
        return sp.Matrix(cs), x.applyfunc(lambda e: sp.limit(sp.powsimp(e), u, 0, "+"))

    @derived
    def diagonal_stationarity(self, d: int, dim_E: int) -> sp.Matrix:
        """X_inf(Pi x) for diagonal symbolic A (top eigenvalue of multiplicity dim_E) and symbolic diagonal B."""
        cs, Pi = self.diagonal_limit(d, dim_E)
        bs = sp.symbols(f"b1:{d + 1}", positive=True)
        mu1 = sp.Symbol("mu_1", real=True)
        gs = sp.symbols(f"g1:{d - dim_E + 1}", positive=True)
        mus = [mu1] * dim_E + [mu1 - g for g in gs]
        V = sp.diag(*[mus[i] / bs[i] for i in range(d)])
        return sp.simplify(self.zero_temperature_field(Pi, sp.diag(*bs), V))

    def stationarity_residual(self, B, V) -> sp.Matrix:
        """Exact X_inf(Pi x) for a generic symbolic x and the given matrices (zero vector: Pi x is a fixed point).

        Rational mu_1: Pi x = p/|p| with p the orthogonal projection of x on ker(A - mu_1) (SymPy nullspace).
        Irrational mu_1 (simple): p = v (v^T x) with v a column of adj(A - r I), r a root of the minimal
        polynomial m(r) of mu_1; the numerator |p|^2 |B^T p| X_inf(p) is reduced modulo m(r)."""
        s = self.spectrum(B, V)
        d, A = s.d, s.A
        Vx = A * s.B.T.inv()
        xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
        mu1 = _real_roots_desc(A)[0][0]
        if mu1.is_Rational:
            Pe = sp.Matrix.hstack(*(A - mu1 * sp.eye(d)).nullspace())
            p = Pe * (Pe.T * Pe).inv() * Pe.T * xs
            return sp.simplify(self.zero_temperature_field(p / sp.sqrt((p.T * p)[0]), s.B, Vx))
        if s.dim_E != 1:
            raise ValueError("exact stationarity for an irrational multiple top eigenvalue is not supported")
        r = sp.Symbol("r", real=True)
        m = sp.minimal_polynomial(mu1, r)
        adj = (A - r * sp.eye(d)).adjugate()
        col = next(j for j in range(d) if any(sp.rem(sp.expand(e), m, r) != 0 for e in adj[:, j]))
        v = adj[:, col]
        p = v * (v.T * xs)[0]
        bp = s.B.T * p
        scale = (p.T * p)[0] * sp.sqrt((bp.T * bp)[0])
        num = (self.zero_temperature_field(p, s.B, Vx) * scale).applyfunc(
            lambda e: sp.numer(sp.together(sp.expand(e))))
        return num.applyfunc(lambda e: sp.rem(sp.expand(e), m, r))
