r"""The reduced Riemannian gradient flow of J on the unit sphere, in the overlaps rho_j = <q, e_j>.

Derivation (SymPy, with an arbitrary smooth G).  On the sphere J(q) = G(rho(q)) where G(rho) = J as a function of
the overlaps (t^2 = 1 - sum rho^2 substituted).  E(q) = G(<q, e_1>, ..., <q, e_k>) is a smooth extension of J to
R^{k+1} (coordinates on e_1..e_k and u), and the Riemannian gradient is the tangent projection of any extension's
gradient: q' = (I - q q^T) grad E(q).  SymPy differentiates E (G left abstract), projects, and reads the e_j
component rho_j' = <e_j, q'>; the result is linear in the partial derivatives d_l G:

    rho_j' = sum_l C_jl(rho) d_l G(rho),      C = I - rho rho^T       (k = 1: F = (1 - rho^2) J'(rho)).

The coefficients C_jl are what SymPy found (not typed); F is then C grad J for the model's J.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp


@lru_cache(maxsize=None)
def reduction(k: int) -> tuple[tuple[sp.Expr, ...], ...]:
    """C_jl(rho) of rho_j' = sum_l C_jl d_l G, in the symbols rho_1..rho_k (``r1``..``rk``), derived above."""
    rho = sp.symbols(f"r1:{k + 1}", real=True)
    q = sp.Matrix(sp.symbols(f"q1:{k + 2}", real=True))            # coordinates on e_1..e_k, u
    G = sp.Function("G")
    E = G(*q[:k])
    grad = sp.Matrix([sp.diff(E, qi) for qi in q])
    riem = (sp.eye(k + 1) - q * q.T) * grad
    dG = sp.symbols(f"g1:{k + 1}")
    partial = {sp.Derivative(E, q[l]): dG[l] for l in range(k)}
    on = dict(zip(q[:k], rho))
    rows = []
    for j in range(k):
        comp = sp.expand(riem[j].subs(partial).subs(on))
        coeffs = [comp.coeff(g) for g in dG]
        if sp.expand(comp - sum(c * g for c, g in zip(coeffs, dG))) != 0:
            raise ArithmeticError("the reduced field is not linear in the partial derivatives")
        rows.append(tuple(coeffs))
    return tuple(rows)


def reduced_field(J: sp.Expr, rho: tuple[sp.Symbol, ...]) -> sp.ImmutableMatrix:
    """F(rho) = C(rho) grad J(rho): the overlaps' velocity under the Riemannian gradient ascent of J."""
    k = len(rho)
    C = reduction(k)
    sub = dict(zip(sp.symbols(f"r1:{k + 1}", real=True), rho))
    grad = [sp.diff(J, r) for r in rho]
    return sp.ImmutableMatrix([sp.Add(*[C[j][l].subs(sub) * grad[l] for l in range(k)]) for j in range(k)])
