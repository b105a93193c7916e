"""Paper B, the zero-temperature field: the Laplace principle with a Lagrange multiplier.

As beta -> oo the softmax average over the sphere concentrates at y*(x) = argmax_{|y|=1} <B^T x, y>; the Lagrange
condition b - lambda y = 0, |y| = 1 (b = B^T x) gives y* = B^T x / |B^T x|, so the limit field is
X_inf(x) = P_perp_x V B^T x / |B^T x| (B invertible, so that B^T x != 0 on the sphere).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import derived, recorded


class FieldForms:
    """The zero-temperature field, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory`."""

    @derived
    def maximiser_rule(self) -> tuple[sp.Symbol, sp.Symbol, sp.Expr, sp.Expr]:
        """Lagrange: maximise <b, y> s.t. |y|^2 = 1 for a generic vector b in any dimension.

        Stationarity of <b,y> - lam(|y|^2 - 1)/2 in the component y_i gives y_i = b_i/lam (SymPy solve);
        the constraint then reads S/lam^2 = 1 with S = |b|^2, so lam = +-sqrt(S); the objective
        <b, y> = S/lam selects the maximiser.  Returns (b_i, S, y_i*, lam*)."""
        b_i, y_i, lam = sp.symbols("b_i y_i lambda", real=True)
        S = sp.Symbol("S", positive=True)
        (y_sol,) = sp.solve(sp.Eq(b_i - lam * y_i, 0), y_i)
        lams = sp.solve(sp.Eq(S / lam**2, 1), lam)
        best = [l for l in lams if all(sp.simplify(S / l - S / o).is_nonnegative for o in lams)]
        if len(best) != 1:
            raise RuntimeError("Lagrange step did not single out a maximiser")
        return b_i, S, y_sol.subs(lam, best[0]), best[0]

    @derived
    def lagrange_maximiser(self, d: int) -> tuple[sp.Matrix, sp.Matrix, list[dict]]:
        """Full Lagrange system in dimension d: solve b - lam y = 0, |y|^2 = 1 for (y, lam) with SymPy and
        keep the solution with the largest objective <b, y>.  Returns (b symbols, y*(b), all solutions)."""
        if d < 2:
            raise ValueError(f"dimension d must be >= 2, got {d}")
        bs = sp.Matrix(sp.symbols(f"b1:{d + 1}", real=True))
        ys = sp.Matrix(sp.symbols(f"y1:{d + 1}", real=True))
        lam = sp.Symbol("lambda", real=True)
        eqs = [bs[i] - lam * ys[i] for i in range(d)] + [(ys.T * ys)[0] - 1]
        sols = sp.solve(eqs, list(ys) + [lam], dict=True)
        objs = [sp.simplify((bs.T * ys.subs(s))[0]) for s in sols]
        best = [s for s, o in zip(sols, objs) if all(sp.simplify(o - p).is_nonnegative for p in objs)]
        if len(best) != 1:
            raise RuntimeError("Lagrange step did not single out a maximiser")
        return bs, ys.subs(best[0]), sols

    @derived
    def maximiser_numpy(self) -> Callable:
        """The maximiser y_i*(b_i, S) of :meth:`maximiser_rule`, lambdified to NumPy."""
        b_i, S, y_star, _ = self.maximiser_rule()
        return sp.lambdify((b_i, S), y_star, "numpy")

    @recorded
    def zero_temperature_field(self, x, B, V):
        """X_inf(x) = P_perp_x V y*(x) with y*(x) = B^T x/|B^T x| (Lagrange maximiser), P_perp_x = I - x x^T/|x|^2.

        numpy x of shape (d,) or (N, d) with numpy B, V -> numpy array of the same shape; SymPy in -> SymPy
        Matrix (column).  B invertible is required (|B^T x| > 0)."""
        if any(isinstance(m, sp.MatrixBase) for m in (x, B, V)):
            xs, Bs, Vs = (sp.Matrix(m) for m in (x, B, V))
            if xs.cols != 1:
                xs = xs.T
            b_i, S, y_star, _ = self.maximiser_rule()
            bvec = Bs.T * xs
            Sval = (bvec.T * bvec)[0]
            y = bvec.applyfunc(lambda e: y_star.subs({b_i: e, S: Sval}))
            P = sp.eye(xs.rows) - xs * xs.T / (xs.T * xs)[0]
            return P * Vs * y
        try:
            X = np.asarray(x, dtype=float)
            Bn, Vn = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("x, B and V must be real numeric arrays") from None
        if X.ndim not in (1, 2) or X.shape[-1] != Bn.shape[0] or Bn.shape != Vn.shape:
            raise ValueError(f"x must have shape (d,) or (N, d) matching B {Bn.shape}, got {X.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Bn)) and np.all(np.isfinite(Vn))):
            raise ValueError("non-finite entries (NaN or inf) in x, B or V")
        bvec = X @ Bn                                   # rows: B^T x
        S = np.sum(bvec * bvec, axis=-1, keepdims=True)
        if np.any(S == 0):
            raise ValueError("B^T x = 0: B singular or x = 0 (assumption: B invertible, x on the sphere)")
        y = self.maximiser_numpy()(bvec, S)
        w = y @ Vn.T                                    # rows: V y*
        xx = np.sum(X * X, axis=-1, keepdims=True)
        return w - X * (np.sum(X * w, axis=-1, keepdims=True) / xx)
