"""Paper A's closed forms as SymPy objects, for notebooks and papers (every one derived by
``attnverify.theory.signal``, none typed in), reached as ``attnverify.formulas.<name>``.

Symbols: ``rho`` (real) and ``theta, beta, sigma, R, L, d`` (positive); ``sign`` is ``"fixed"`` or
``"symmetric"``; ``finite_size`` adds the O(1/L) terms::

    J(sign, finite_size, compact)   population objective J(rho) = E|f_q(X)|^2 (compact: in terms of w)
    w(sign)                   informative attention mass in the long-sequence limit
    nuisance_mass(sign, finite_size)   1 - w, plus the O(1/L) ratio bias
    F(sign, finite_size)      reduced field F(rho) = (1 - rho^2) J'(rho)
    finite_size_term(sign)    (d - 1) sigma^2 E sum a_i^2, the orthogonal-noise O(1/L) term
    in_plane_term(sign)       the (xi, q)-plane O(1/L) term
"""
from __future__ import annotations

import sympy as sp

from attnverify.checks.plugin import cached_formula
import attnverify.theory.signal as A

SYMBOLS = {"rho": A.rho, "theta": A.theta, "beta": A.beta, "sigma": A.sigma, "R": A.R, "L": A.L, "d": A.d}


@cached_formula
def J(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Population objective J(rho)."""
    return A.population_objective(sign, finite_size)


@cached_formula
def w(sign: str = "fixed") -> sp.Expr:
    """Informative attention mass w(rho) in the long-sequence limit."""
    return A.informative_mass(sign)


@cached_formula
def nuisance_mass(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Expected attention mass on the nuisance tokens."""
    return A.nuisance_mass(sign, finite_size)


@cached_formula
def F(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
    """Reduced field F(rho) = (1 - rho^2) dJ/drho."""
    return A.reduced_field(sign, finite_size)


@cached_formula
def finite_size_term(sign: str = "fixed") -> sp.Expr:
    """(d - 1) sigma^2 E sum a_i^2, the O(1/L) orthogonal-noise term of J."""
    return A.finite_size_term(sign)


@cached_formula
def in_plane_term(sign: str = "fixed") -> sp.Expr:
    """The O(1/L) in-plane term of J."""
    return A.in_plane_term(sign)
