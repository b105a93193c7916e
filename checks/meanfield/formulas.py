"""Paper B's closed forms as SymPy objects, for notebooks and papers (every one derived by
``attnverify.theory.meanfield``, none typed in), reached as ``attnverify.formulas.<name>``.

Matrices are nested lists, NumPy arrays or SymPy matrices::

    X_inf(B, V, x=None)       zero-temperature field P_perp_x V B^T x / |B^T x| (x symbolic by default)
    Pi(B, V)                  projection map Pi(x) = P_E x / |P_E x|, E the dominant eigenspace of V B^T
    Pi_diagonal(dim_E)        Pi for diagonal A in d = 3 as the tau -> oo limit of the closed-form flow
    rate(B, V)                Jacobian convergence rate gamma / |B^T x*| (a float)
    lyapunov_rate(B, V)       global rate bound gamma / sigma_max(B)
    bound(c=None)             Theorem 1 bound b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t})
    bound_optimal_time(c=None)   t*(beta) minimising b

The bound's symbols ``beta, t, K, C1, c`` are positive (``C1`` prints as ``C_1``).
"""
from __future__ import annotations

from typing import Any

import sympy as sp

from attnverify.theory import meanfield as _B

SYMBOLS = {"beta": _B.beta, "t": _B.t, "K": _B.K, "C1": _B.C1, "c": _B.c}


def X_inf(B: Any, V: Any, x: Any = None) -> sp.Matrix:
    """Zero-temperature field X_inf(x) = P_perp_x V B^T x / |B^T x|; ``x`` defaults to the symbols x1..xd (a
    point on the sphere is assumed: |x| = 1)."""
    Bm, Vm = sp.Matrix(B), sp.Matrix(V)
    if x is None:
        x = sp.Matrix(sp.symbols(f"x1:{Bm.rows + 1}", real=True))
    return _B.zero_temperature_field(sp.Matrix(x), Bm, Vm)


def Pi(B: Any, V: Any) -> sp.Matrix:
    """Projection map Pi(x) = P_E x / |P_E x| in the symbols x1..xd, E the dominant eigenspace of V B^T."""
    from attnverify.checks.meanfield.derive import steps_for

    return next(s.result for s in steps_for(B, V) if s.label == r"\Pi(x)")


def Pi_diagonal(dim_E: int = 1) -> sp.Matrix:
    """Pi for A = diag(mu_1, ...) in d = 3 with a top eigenvalue of multiplicity ``dim_E`` (1 or 2), as SymPy's
    tau -> oo limit of the closed-form flow."""
    if dim_E not in (1, 2):
        raise ValueError("dim_E must be 1 or 2")
    return _B.diagonal_limit(3, dim_E)[1]


def rate(B: Any, V: Any) -> float:
    """Convergence rate c = gamma / |B^T x*| at the attracting fixed point (dim E = 1)."""
    return _B.convergence_rate(B, V)


def lyapunov_rate(B: Any, V: Any) -> float:
    """Global rate bound gamma / sigma_max(B)."""
    return _B.lyapunov_rate(B, V)


def bound(c: Any = None) -> sp.Expr:
    """Theorem 1 bound b(beta, t); ``c`` substitutes the rate."""
    b = _B.concentration_bound().b
    return b if c is None else b.subs(_B.c, c)


def bound_optimal_time(c: Any = None) -> sp.Expr:
    """t*(beta) = argmin_t b(beta, t) (SymPy solve of db/dt = 0); ``c`` substitutes the rate."""
    ts = _B.concentration_bound().t_star
    return ts if c is None else ts.subs(_B.c, c)
