r"""Proving that a closed form built from exponentials vanishes identically: the exp-polynomial test.

Every exponential exp(a) of ``expr`` is expanded into a product of exp(c m) with m a monomial in the symbols and c
rational.  For each monomial m, with N the least common denominator of its coefficients c, exp(c m) is replaced by
u_m^(c N) with u_m a new symbol standing for exp(m / N).  The result is a rational function of the symbols and the
u_m; when it cancels to 0 as a rational function (independent indeterminates), substituting u_m = exp(m / N) back
gives 0 as well, so ``expr`` = 0 identically: a proof.  The rational function is normalised in SymPy's sparse
field Q(symbols, u_m) (``sympy.polys.fields``).  (A nonzero rational function proves nothing: the u_m are not
algebraically independent in general.)  This is much faster than ``sympy.simplify`` on long sums of fractions of
exponentials, as the engine's closed forms and the plugins' are.
"""
from __future__ import annotations

import math

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.fields import field


def normalize_exponents(expr):
    """``expr`` with the argument of every exponential expanded (the same function, shorter)."""
    return expr.replace(lambda e: isinstance(e, sp.exp), lambda e: sp.exp(sp.expand(e.args[0])))


def _terms(arg: sp.Expr) -> list[tuple[sp.Rational, sp.Expr]]:
    out = []
    for t in sp.Add.make_args(sp.expand(arg)):
        c, m = t.as_coeff_Mul()
        if not c.is_Rational:
            raise ValueError(f"exponent term {t} has no rational coefficient")
        out.append((c, m))
    return out


def exp_polynomial(expr: sp.Expr) -> tuple[sp.Expr, dict[sp.Symbol, sp.Expr]]:
    """``expr`` with its exponentials replaced by powers of new symbols (module docstring): (result, symbol ->
    the exponential it stands for)."""
    exps = list(expr.atoms(sp.exp))
    denoms: dict[sp.Expr, int] = {}
    for e in exps:
        for c, m in _terms(e.args[0]):
            denoms[m] = math.lcm(denoms.get(m, 1), int(c.q))
    names = {m: sp.Dummy(f"u{i}", positive=True) for i, m in enumerate(sorted(denoms, key=sp.default_sort_key))}
    rep = {}
    for e in exps:
        val = sp.Integer(1)
        for c, m in _terms(e.args[0]):
            val *= names[m] ** int(c * denoms[m])
        rep[e] = val
    return expr.xreplace(rep), {u: sp.exp(m / denoms[m]) for m, u in names.items()}


def proves_zero(expr: sp.Expr) -> bool:
    """True when the exp-polynomial test proves ``expr`` = 0 identically (False: not proven)."""
    expr = sp.sympify(expr)
    if expr == 0:
        return True
    if expr.has(sp.Function) and any(not isinstance(f, sp.exp) for f in expr.atoms(sp.Function)):
        return False
    poly, _ = exp_polynomial(expr)
    gens = sorted(poly.free_symbols, key=sp.default_sort_key)
    try:
        K, *_ = field(gens, QQ)                       # sparse rational-function arithmetic over Q
        return K.from_expr(poly) == 0
    except (ValueError, TypeError, NotImplementedError, sp.PolynomialError, sp.CoercionFailed):
        return False
