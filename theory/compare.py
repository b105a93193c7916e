"""Deciding whether two closed forms are the same function: a symbolic proof, or a certified counterexample.

``equivalent(a, b)`` asks SymPy to simplify a - b (after ``cancel``/``expand`` and, for expressions with
exponentials, a rewrite in exp): zero is a proof of equivalence. When SymPy cannot prove it, ``separate(a, b,
points)`` evaluates a - b at points of the domain in Arb ball arithmetic (python-flint): a ball that excludes 0
is a *certified* counterexample (the true difference lies in the ball, whatever the rounding). Points where the
ball contains 0 prove nothing either way.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import sympy as sp
from sympy.printing.pycode import MpmathPrinter

_PREC = 128        # bits of the ball arithmetic


def equivalent(a: sp.Expr, b: sp.Expr, *, timeout_terms: int = 4000) -> bool:
    """True when SymPy proves a - b = 0 identically (False means "not proven", not "different")."""
    diff = sp.sympify(a) - sp.sympify(b)
    if diff == 0:
        return True
    for step in (sp.cancel, sp.expand, sp.simplify):
        try:
            if sp.count_ops(diff) > timeout_terms:
                return False
            diff = step(diff)
        except (TypeError, ValueError, NotImplementedError, RecursionError):
            return False
        if diff == 0:
            return True
    return False


class _Arb:
    """The names SymPy's MpmathPrinter emits, as Arb ball functions (rigorous error bounds)."""

    def __init__(self) -> None:
        import flint

        self.arb = flint.arb
        self.mpf = flint.arb
        self.exp = lambda x: flint.arb(x).exp()
        self.log = lambda x: flint.arb(x).log()
        self.sqrt = lambda x: flint.arb(x).sqrt()
        self.erf = lambda x: flint.arb(x).erf()
        self.erfc = lambda x: flint.arb(x).erfc()
        self.sin = lambda x: flint.arb(x).sin()
        self.cos = lambda x: flint.arb(x).cos()
        self.tanh = lambda x: flint.arb(x).tanh()
        self.atan = lambda x: flint.arb(x).atan()
        self.fabs = lambda x: abs(flint.arb(x))
        self.pi = flint.arb.pi()


@dataclass(frozen=True)
class Separation:
    """a - b at ``point``: the ball [lo, hi] that contains it (certified), and whether it excludes 0; the values of
    a and b there as floats."""

    point: dict
    lo: float
    hi: float
    a: float
    b: float

    @property
    def certified(self) -> bool:
        return self.lo > 0 or self.hi < 0

    @property
    def magnitude(self) -> float:
        return min(abs(self.lo), abs(self.hi)) if self.certified else 0.0


def ball_function(expr: sp.Expr, symbols: Sequence[sp.Symbol]):
    """``expr`` as a function of Arb balls (an enclosure of its value for every point of the argument balls); a
    special function with its own ball version (``attnverify.theory.certified.special_ball_functions``, e.g. a
    Gaussian expectation with no elementary form) is evaluated by it."""
    from attnverify.theory.certified import special_ball_functions

    printer = MpmathPrinter({"fully_qualified_modules": True, "allow_unknown_functions": True})
    return sp.lambdify(list(symbols), expr, modules=[{"mpmath": _Arb(), **special_ball_functions(expr)}],
                       printer=printer)


def difference_at(a: sp.Expr, b: sp.Expr, point: Mapping[sp.Symbol, float]) -> Separation:
    """a - b at ``point`` (symbol -> float), enclosed in an Arb ball at 128 bits."""
    import flint

    from attnverify.theory.certified import lower, upper

    syms = list(point)
    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        args = [flint.arb(repr(float(point[s]))) for s in syms]
        fa, fb = ball_function(a, syms), ball_function(b, syms)
        va, vb = flint.arb(fa(*args)), flint.arb(fb(*args))
        d = va - vb
        return Separation({s.name: float(point[s]) for s in syms}, lower(d), upper(d), float(va.mid()),
                          float(vb.mid()))
    finally:
        flint.ctx.prec = old


def separate(a: sp.Expr, b: sp.Expr, points: Iterable[Mapping[sp.Symbol, float]]) -> list[Separation]:
    """a - b at every point, certified; the points whose ball excludes 0 first, largest |a - b| first."""
    out = [difference_at(a, b, p) for p in points]
    return sorted(out, key=lambda s: (not s.certified, -s.magnitude))
