"""Paper B, convergence rates of the zero-temperature flow to the projection map.

* Local: the Jacobian of X_inf at a fixed point x* in E, restricted to the tangent space, has the eigenvalues
  (mu_j - mu_1)/|B^T x*| (mu_j the eigenvalues of A = V B^T on E^perp): the rate is gamma/|B^T x*|.
* Global: the Lyapunov functional L = |P_{E^perp} x|^2 / |P_E x|^2 obeys dL/dtau <= -2 gamma L, and
  dtau/dt = 1/|B^T x| >= 1/sigma_max(B), so dL/dt <= -2 gamma L / sigma_max(B) (a bound).
"""
from __future__ import annotations

from typing import Callable

import mpmath as mp
import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import derived, recorded
from attnverify.theory.meanfield.model import _DPS, Spectrum, _key, _to_numpy


def _slowest_atom(s: Spectrum) -> np.ndarray:
    """The point x* of E on the sphere with the largest |B^T x*|: the atom of Pi#mu_0 with the smallest rate
    gamma/|B^T x*| (dim E = 1: +-u, the same rate). Q_E z with z the top right singular vector of B^T Q_E, Q_E an
    orthonormal basis of E."""
    w, U = np.linalg.eigh(s.P_E)
    Q = U[:, w > 0.5]
    _, _, Vt = np.linalg.svd(_to_numpy(s.B).T @ Q)
    x = Q @ Vt[0]
    return x / np.linalg.norm(x)


def _fixed_point(s: Spectrum, x_star) -> mp.matrix:
    P = s.projectors[0]
    if isinstance(P, np.ndarray):
        P = mp.matrix(P.tolist())
    if x_star is None:
        if s.dim_E != 1:                   # the atom with the smallest rate: the one the bound e^{-ct} must use
            x = _slowest_atom(s)
            v = P * mp.matrix([mp.mpf(float(e)) for e in x])
            return v / mp.norm(v)
        col = max(range(s.d), key=lambda j: mp.norm(P[:, j]))
        v = P[:, col]
        return v / mp.norm(v)
    xs = np.asarray(x_star, dtype=float)
    if xs.shape != (s.d,) or not np.all(np.isfinite(xs)):
        raise ValueError(f"x_star must be a finite vector of shape ({s.d},)")
    v = mp.matrix([mp.mpf(float(e)) for e in xs])
    if abs(mp.norm(v) - 1) > 1e-8:
        raise ValueError("x_star must lie on the unit sphere")
    if mp.norm(v - P * v) > 1e-8:
        raise ValueError("x_star is not in the dominant eigenspace E of V B^T (not an attracting fixed point)")
    return v


class RateForms:
    """The convergence rates of the zero-temperature flow, a part of
    :class:`attnverify.theory.meanfield.MeanFieldTheory` (the Jacobian is that of ``self.zero_temperature_field``)."""

    @derived
    def _jacobian_lambda(self, kB: tuple, kA: tuple) -> Callable:
        """SymPy Jacobian of X_inf(x) (as a field on R^d) for B and A = V B^T (V = A B^{-T}), lambdified to
        mpmath."""
        d = kB[0]
        B, A = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kA[1]))
        xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
        f = self.zero_temperature_field(xs, B, A * B.T.inv())
        return sp.lambdify(list(xs), f.jacobian(xs), "mpmath")

    def jacobian_eigenvalues(self, B, V, x_star=None) -> np.ndarray:
        """Eigenvalues of the SymPy Jacobian of X_inf at the fixed point x_star in E, restricted to the
        tangent space T = x_star^perp (sorted descending; dim E - 1 zeros along E, the rest negative).
        Derived form: (mu_j - mu_1)/|B^T x_star| for the eigenvalues mu_j of V B^T on E^perp."""
        s = self.spectrum(B, V)
        kB, kA = _key(s.B), _key(s.A)
        with mp.workdps(_DPS):
            x = _fixed_point(s, x_star)
            J = self._jacobian_lambda(kB, kA)(*x)
            # orthonormal basis of x^perp: eigenvectors of I - x x^T with eigenvalue 1
            w, U = mp.eigsy(mp.eye(s.d) - x * x.T)
            cols = [j for j in range(s.d) if w[j] > 0.5]
            Q = mp.matrix(s.d, len(cols))
            for a, j in enumerate(cols):
                Q[:, a] = U[:, j]
            M = Q.T * J * Q
            ev = [M[0, 0]] if M.rows == 1 else mp.eig(M, left=False, right=False)   # mp.eig mishandles 1x1
            vals = sorted((float(mp.re(e)) for e in ev), reverse=True)
        return np.array(vals)

    @recorded
    def convergence_rate(self, B, V, x_star=None) -> float:
        """Exponential rate of x(t) -> Pi(x0) near the fixed point x_star in E: minus the largest non-zero
        tangent Jacobian eigenvalue, = gamma/|B^T x_star|.  Without x_star: dim E = 1, the rate at +-u (the same
        at both atoms); dim E >= 2, the smallest rate over the atoms x* in E (at the x* with the largest
        |B^T x*|): the rate that e^{-ct} can use for every initial law (see :meth:`atom_rates`)."""
        s = self.spectrum(B, V)
        ev = self.jacobian_eigenvalues(B, V, x_star)
        transversal = ev[s.dim_E - 1:]          # drop the dim E - 1 neutral directions along E
        return float(-transversal[0])

    def atom_rates(self, B, V, atoms) -> np.ndarray:
        """The exponential rate gamma/|B^T x*| at each atom x* (rows of ``atoms``, points of E on the sphere, e.g.
        Pi(x_i(0))): the Jacobian rate derived by :meth:`jacobian_eigenvalues` ((mu_j - mu_1)/|B^T x*| on E^perp,
        proven for diagonal A by :meth:`diagonal_jacobian`), evaluated in closed form at many atoms; a row not in
        E raises ValueError."""
        s = self.spectrum(B, V)
        A = np.atleast_2d(np.asarray(atoms, dtype=float))
        if A.ndim != 2 or A.shape[1] != s.d or not np.all(np.isfinite(A)):
            raise ValueError(f"atoms must be finite rows of length {s.d}")
        A = A / np.linalg.norm(A, axis=1, keepdims=True)
        off = np.linalg.norm(A - A @ s.P_E.T, axis=1)
        if np.any(off > 1e-8):
            raise ValueError(f"atom {int(np.argmax(off))} is not in the dominant eigenspace E of V B^T "
                             f"(distance {float(off.max()):.1e})")
        return s.gap / np.linalg.norm(A @ _to_numpy(s.B), axis=1)

    def slowest_atom(self, B, V) -> np.ndarray:
        """The atom x* of E (on the sphere) with the smallest rate gamma/|B^T x*| (the largest |B^T x*|); the rate
        there is ``convergence_rate(B, V)``."""
        return _slowest_atom(self.spectrum(B, V))

    def lyapunov_rate(self, B, V) -> float:
        """Global rate from L(x) = |P_{E^perp} x|^2/|P_E x|^2: dL/dtau <= -2 gamma L and dtau/dt >= 1/sigma_max(B),
        so |x - Pi x| ~ sqrt(L) decays at least like e^{-gamma t/sigma_max(B)}.  Returns gamma/sigma_max(B)."""
        s = self.spectrum(B, V)
        return s.gap / s.sigma_max

    def rate_comparison(self, B, V, x_star=None) -> dict:
        """Jacobian (local, exact) rate vs Lyapunov (global) bound: jacobian = gamma/|B^T x*| >= lyapunov =
        gamma/sigma_max(B), with equality iff |B^T x*| = sigma_max(B) (x* a top left singular vector of B)."""
        s = self.spectrum(B, V)
        jac = self.convergence_rate(B, V, x_star)
        lyap = self.lyapunov_rate(B, V)
        return {"jacobian": jac, "lyapunov": lyap, "ratio": lyap / jac,
                "agree": bool(abs(jac - lyap) <= 1e-12 * jac), "gap": s.gap, "sigma_max_B": s.sigma_max}

    @derived
    def diagonal_jacobian(self, d: int) -> tuple[sp.Matrix, sp.Matrix]:
        """Tangent Jacobian at x* = e_1 for A = diag(mu_1, ..., mu_d) and a general symbolic B (any V = A B^{-T})."""
        mus = sp.symbols(f"mu1:{d + 1}", real=True)
        Bm = sp.Matrix(d, d, sp.symbols(f"B1:{d * d + 1}", real=True))
        xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
        A = sp.diag(*mus)
        # X_inf written with A = V B^T (V = A B^{-T}); avoids inverting the symbolic B
        bvec = Bm.T * xs
        f = (sp.eye(d) - xs * xs.T / (xs.T * xs)[0]) * A * xs / sp.sqrt((bvec.T * bvec)[0])
        J = f.jacobian(xs).subs({xs[0]: 1, **{xs[i]: 0 for i in range(1, d)}})
        Jt = sp.simplify(J[1:, 1:])                     # tangent space at e_1: span(e_2..e_d)
        return Jt, sp.Matrix(list(Jt.eigenvals(multiple=True)))

    @derived
    def diagonal_lyapunov(self) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        """d = 3, A = diag(mu_1, mu_1 - gamma, mu_1 - gamma - delta): L = (z2^2 + z3^2)/z1^2 along
        dz/dtau = P_perp A z.  Returns (L, dL/dtau, dL/dtau + 2 gamma L)."""
        z = sp.Matrix([sp.Symbol("z1", real=True, nonzero=True), *sp.symbols("z2:4", real=True)])
        mu1 = sp.Symbol("mu_1", real=True)
        gam, dlt = sp.symbols("gamma delta", positive=True)
        A = sp.diag(mu1, mu1 - gam, mu1 - gam - dlt)
        L = (z[1]**2 + z[2]**2) / z[0]**2
        field = (sp.eye(3) - z * z.T / (z.T * z)[0]) * A * z
        dL = sp.simplify((sp.Matrix([L]).jacobian(z) * field)[0])
        return L, dL, sp.factor(sp.simplify(dL + 2 * gam * L))
