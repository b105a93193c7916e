"""Deciding whether two closed forms are the same function: a symbolic proof, or a certified counterexample.

``equivalent(a, b)`` asks SymPy to simplify a - b (after ``cancel``/``expand`` and, for expressions with
exponentials, a rewrite in exp): zero is a proof of equivalence. When SymPy cannot prove it, ``separate(a, b,
points)`` evaluates a - b at points of the domain in Arb ball arithmetic (python-flint): a ball that excludes 0
is a *certified* counterexample (the true difference lies in the ball, whatever the rounding). Points where the
ball contains 0 prove nothing either way.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

_PREC = 128        # bits of the ball arithmetic


#: a difference whose full expansion would have more terms than this is not handed to cancel, expand or simplify:
#: their time grows with it ((x + y + z + w)**200 expands to 1.37 million terms and ran for minutes)
MAX_EXPANDED_TERMS = 20000


def expanded_terms(expr: sp.Expr) -> float:
    """An upper estimate of the number of terms of ``expr`` expanded, inside functions too, as ``expand`` and
    ``cancel`` would: an atom 1, a sum the sum of its terms' counts, a product their product, an integer power n of
    a k-term sum at most C(n + k - 1, n) (the monomials of degree n in k terms; a negative power alike, as a
    denominator); a function counts as one term of the expression around it, and the largest count anywhere in the
    tree is returned (an expansion inside an argument costs as much). Computed in floats, so it never overflows."""
    largest = [1.0]

    def terms(e: sp.Expr) -> float:
        if e.is_Atom:
            return 1.0
        if isinstance(e, sp.Add):
            n = sum(terms(a) for a in e.args)
        elif isinstance(e, sp.Mul):
            n = math.prod(terms(a) for a in e.args)
        elif isinstance(e, sp.Pow):
            k, p = terms(e.base), e.exp
            terms(p)
            if p.is_Integer and k > 1:
                m = abs(int(p)) if abs(p) < 10**9 else 10**9
                n = math.exp(min(700.0, math.lgamma(m + k) - math.lgamma(m + 1) - math.lgamma(k)))
            else:
                n = k
        else:
            for a in e.args:
                terms(a)
            n = 1.0
        n = min(n, 1e300)
        largest[0] = max(largest[0], n)
        return n

    terms(sp.sympify(expr))
    return largest[0]


def equivalent(a: sp.Expr, b: sp.Expr, *, timeout_terms: int = 4000) -> bool:
    """True when SymPy proves a - b = 0 identically (False means "not proven", not "different"). A difference
    of more than ``timeout_terms`` operations, or whose expansion would exceed MAX_EXPANDED_TERMS terms, is not
    tried."""
    diff = sp.sympify(a) - sp.sympify(b)
    if diff == 0:
        return True
    if expanded_terms(diff) > MAX_EXPANDED_TERMS:
        return False
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
    """``expr`` as a function of Arb balls: an enclosure of its value for every point of the argument balls, every
    constant entering exactly (:func:`attnverify.theory.certified.lambdify_arb`)."""
    from attnverify.theory.certified import lambdify_arb

    return lambdify_arb(expr, list(symbols))


def difference_at(a: sp.Expr, b: sp.Expr, point: Mapping[sp.Symbol, Any]) -> Separation:
    """a - b at ``point`` (symbol -> an exact number: int, float, Fraction or SymPy number; the ball holds the
    difference at exactly that point), enclosed in an Arb ball at 128 bits. A ball that is not finite (a function
    evaluated outside its domain) certifies nothing: its ends are -inf and inf."""
    import flint

    from attnverify.theory.certified import exact_ball, lower, upper

    syms = list(point)
    with flint.ctx.workprec(_PREC):
        args = [exact_ball(point[s]) for s in syms]
        fa, fb = ball_function(a, syms), ball_function(b, syms)
        va, vb = flint.arb(fa(*args)), flint.arb(fb(*args))
        d = va - vb
        finite = d.is_finite()
        return Separation({s.name: float(point[s]) for s in syms}, lower(d) if finite else -math.inf,
                          upper(d) if finite else math.inf, float(va.mid()) if va.is_finite() else math.nan,
                          float(vb.mid()) if vb.is_finite() else math.nan)


def separate(a: sp.Expr, b: sp.Expr, points: Iterable[Mapping[sp.Symbol, float]]) -> list[Separation]:
    """a - b at every point, certified; the points whose ball excludes 0 first, largest |a - b| first."""
    out = [difference_at(a, b, p) for p in points]
    return sorted(out, key=lambda s: (not s.certified, -s.magnitude))
