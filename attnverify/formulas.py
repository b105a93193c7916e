"""The closed forms as SymPy objects, for notebooks and papers (every one derived by ``theory``, none typed in).

Paper A (symbols in :mod:`attnverify.symbols`; ``sign`` is ``"fixed"`` or ``"symmetric"``, ``finite_size``
adds the O(1/L) terms)::

    J(sign, finite_size)      population objective J(rho) = E|f_q(X)|^2
    w(sign)                   informative attention mass in the long-sequence limit
    nuisance_mass(sign, finite_size)   1 - w, plus the O(1/L) ratio bias
    F(sign, finite_size)      reduced field F(rho) = (1 - rho^2) J'(rho)
    finite_size_term(sign)    (d - 1) sigma^2 E sum a_i^2, the orthogonal-noise O(1/L) term
    in_plane_term(sign)       the (xi, q)-plane O(1/L) term

Paper B (matrices as nested lists, NumPy arrays or SymPy matrices)::

    X_inf(B, V, x=None)       zero-temperature field P_perp_x V B^T x / |B^T x| (x symbolic by default)
    Pi(B, V)                  projection map Pi(x) = P_E x / |P_E x|, E the dominant eigenspace of V B^T
    Pi_diagonal(dim_E)        Pi for diagonal A in d = 3 as the tau -> oo limit of the closed-form flow
    rate(B, V)                Jacobian convergence rate gamma / |B^T x*| (a float)
    lyapunov_rate(B, V)       global rate bound gamma / sigma_max(B)
    bound(c=None)             Theorem 1 bound b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t})
    bound_optimal_time(c=None)   t*(beta) minimising b
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import sympy as sp


def _persistent(fn):
    """Keep a Paper A closed form in the derivation cache (:mod:`attnverify.cache`), keyed by the code version
    and the arguments: deriving J takes seconds, reading it back milliseconds."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from attnverify import cache
        from attnverify.derive import code_version

        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        args = bound.args
        name = f"{fn.__name__}-{'-'.join(map(str, args))}-{code_version()}.pickle"
        hit, value = cache.load(name)
        if hit:
            return value
        value = fn(*args)
        cache.save(name, value)
        return value

    return wrapper


def _A():
    from attnverify.theory import signal_recovery

    return signal_recovery


@_persistent
def J(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Population objective J(rho) (Paper A)."""
    return _A().population_objective(sign, finite_size)


@_persistent
def w(sign: str = "fixed") -> sp.Expr:
    """Informative attention mass w(rho) in the long-sequence limit (Paper A)."""
    return _A().informative_mass(sign)


@_persistent
def nuisance_mass(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Expected attention mass on the nuisance tokens (Paper A)."""
    return _A().nuisance_mass(sign, finite_size)


@_persistent
def F(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Reduced field F(rho) = (1 - rho^2) dJ/drho (Paper A)."""
    return _A().reduced_field(sign, finite_size)


@_persistent
def finite_size_term(sign: str = "fixed") -> sp.Expr:
    """(d - 1) sigma^2 E sum a_i^2, the O(1/L) orthogonal-noise term of J (Paper A)."""
    return _A().finite_size_term(sign)


@_persistent
def in_plane_term(sign: str = "fixed") -> sp.Expr:
    """The O(1/L) in-plane term of J (Paper A)."""
    return _A().in_plane_term(sign)


def X_inf(B: Any, V: Any, x: Any = None) -> sp.Matrix:
    """Zero-temperature field X_inf(x) = P_perp_x V B^T x / |B^T x| (Paper B); ``x`` defaults to the symbols
    x1..xd (a point on the sphere is assumed: |x| = 1)."""
    from attnverify.theory import mean_field

    Bm, Vm = sp.Matrix(B), sp.Matrix(V)
    if x is None:
        x = sp.Matrix(sp.symbols(f"x1:{Bm.rows + 1}", real=True))
    return mean_field.zero_temperature_field(sp.Matrix(x), Bm, Vm)


def Pi(B: Any, V: Any) -> sp.Matrix:
    """Projection map Pi(x) = P_E x / |P_E x| in the symbols x1..xd, E the dominant eigenspace of V B^T."""
    from attnverify.derive import meanfield_for

    return next(s.result for s in meanfield_for(B, V) if s.label == r"\Pi(x)")


def Pi_diagonal(dim_E: int = 1) -> sp.Matrix:
    """Pi for A = diag(mu_1, ...) in d = 3 with a top eigenvalue of multiplicity ``dim_E`` (1 or 2), as SymPy's
    tau -> oo limit of the closed-form flow."""
    from attnverify.theory import mean_field

    if dim_E not in (1, 2):
        raise ValueError("dim_E must be 1 or 2")
    return mean_field._diag_limit(3, dim_E)[1]


def rate(B: Any, V: Any) -> float:
    """Convergence rate c = gamma / |B^T x*| at the attracting fixed point (dim E = 1), Paper B."""
    from attnverify.theory import mean_field

    return mean_field.convergence_rate(B, V)


def lyapunov_rate(B: Any, V: Any) -> float:
    """Global rate bound gamma / sigma_max(B), Paper B."""
    from attnverify.theory import mean_field

    return mean_field.lyapunov_rate(B, V)


def bound(c: Any = None) -> sp.Expr:
    """Theorem 1 bound b(beta, t) (symbols in :data:`attnverify.symbols.meanfield`); ``c`` substitutes the rate."""
    from attnverify.theory import mean_field

    b = mean_field.concentration_bound().b
    return b if c is None else b.subs(mean_field.c, c)


def bound_optimal_time(c: Any = None) -> sp.Expr:
    """t*(beta) = argmin_t b(beta, t) (SymPy solve of db/dt = 0); ``c`` substitutes the rate."""
    from attnverify.theory import mean_field

    ts = mean_field.concentration_bound().t_star
    return ts if c is None else ts.subs(mean_field.c, c)
