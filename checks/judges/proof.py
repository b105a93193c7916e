"""Whether a stated closed form is the derived one: a SymPy proof, tried harder than one ``simplify``, and, where no
proof is found, the evidence of Arb balls at points of the whole domain.

:func:`prove_equal` returns the route of a proof that S - D = 0 identically, or None (not proven, which is not
"different"). The routes, cheapest first:

1. ``cancel``: S - D is a rational function (of the symbols and of the functions in it) that cancels to 0;
2. ``rewrite``: every hyperbolic and inverse hyperbolic function rewritten in exp and log (tanh x =
   (e^x - e^-x)/(e^x + e^-x), atanh x = log((1 + x)/(1 - x))/2, ...), every inverse trigonometric function in atan
   with one normal form for reciprocal arguments (atan(1/u) = pi/2 - atan(u) for u > 0, -pi/2 - atan(u) for
   u < 0, applied only where SymPy knows the sign of u from the symbols' assumptions; acot(u) = atan(1/u);
   asin and acos of a real argument in [-1, 1] through atan(x / sqrt(1 - x^2))), then ``together`` and ``cancel``
   (after which the exponentials of sums have been split, so a tanh of a logarithm collapses to a rational
   function);
3. ``simplify``: :func:`attnverify.theory.compare.equivalent` (cancel, expand, simplify), the slowest.

Each route is a chain of SymPy identities valid wherever both forms are defined, so a zero is a proof.
``sympy.Expr.equals`` is not used: on the objective of Paper A it ran for minutes (it proves a constant by random
numerical evaluation and minimal polynomials, with no bound on the time).

:func:`agreement` is the evidence where no proof is found: S - D in Arb balls at sampled points; a ball that
contains 0 and whose radius is tiny against |S| + |D| says the two agree at that point to the ball's precision,
which is no proof but is evidence a true formula leaves, and a wrong one (at a point where it is wrong) cannot.

:func:`not_real` lists the points where a stated form is certifiably not real (complex Acb balls: its imaginary part
excludes 0), where the real balls only say "not finite".
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_OPS = 4000                   # a difference with more operations than this is not simplified (time)
AGREE_RTOL = 1e-25               # a ball of radius below AGREE_RTOL (|S| + |D|) that contains 0: "agree here"
#: bits of the Arb evaluation: a wide ball is evaluated again at the next (2048: a true F of a model file at
#: beta = 661, where S and D are 1e-159 and the 512-bit ball's radius 1e-135, agrees there; a form 2 (1 - tanh x)
#: against 1 - tanh x at x = 661, 1e-574, is told apart there)
PRECISIONS = (128, 512, 2048)


def _atan_normal(expr: Any) -> Any:
    """Inverse trigonometric functions in atan, reciprocal arguments in one normal form (module docstring)."""
    import sympy as sp

    def atan_of(arg: Any) -> Any:
        num, den = sp.fraction(sp.together(arg))
        if num.is_number and not den.is_number:
            if den.is_positive and num.is_positive:
                return sp.pi / 2 - sp.atan(den / num)
            if den.is_negative and num.is_positive:
                return -sp.pi / 2 - sp.atan(den / num)
        return sp.atan(arg)

    def asin_of(x: Any) -> Any:
        inside = (1 - x**2)
        return sp.atan(x / sp.sqrt(inside)) if inside.is_positive else sp.asin(x)

    out = expr.replace(sp.acot, lambda u: sp.atan(1 / u))
    out = out.replace(sp.acos, lambda x: sp.pi / 2 - asin_of(x) if (1 - x**2).is_positive else sp.acos(x))
    out = out.replace(sp.asin, asin_of)
    return out.replace(sp.atan, atan_of)


def _rewritten(expr: Any) -> Any:
    """Hyperbolic functions in exp, inverse hyperbolic ones in log, inverse trigonometric ones in atan."""
    import sympy as sp

    hyper = (sp.sinh, sp.cosh, sp.tanh, sp.coth, sp.sech, sp.csch)
    inverse = (sp.asinh, sp.acosh, sp.atanh, sp.acoth)
    out = expr
    if out.has(*hyper):
        out = out.rewrite(sp.exp)
    if out.has(*inverse):
        out = out.rewrite(sp.log)
    if out.has(sp.atan, sp.acot, sp.asin, sp.acos):
        out = _atan_normal(out)
    return out


def _too_large(expr: Any) -> bool:
    """More than MAX_OPS operations, or an expansion of more than MAX_EXPANDED_TERMS terms: not simplified (time)."""
    import sympy as sp

    from attnverify.theory.compare import MAX_EXPANDED_TERMS, expanded_terms

    try:
        return sp.count_ops(expr) > MAX_OPS or expanded_terms(expr) > MAX_EXPANDED_TERMS
    except RecursionError:
        return True


def _zero(expr: Any) -> bool:
    import sympy as sp

    if expr == 0:
        return True
    try:
        if _too_large(expr):
            return False
        return sp.cancel(sp.together(sp.expand(sp.powsimp(expr, force=False)))) == 0
    except (TypeError, ValueError, NotImplementedError, RecursionError, AttributeError):
        return False


def nonzero_somewhere(diff: Any) -> bool:
    """True when ``diff`` is certainly not 0 at one point (the symbols 1/(n + 2), ..., n/(n + 2), negated for a
    negative symbol; Arb, every constant exact): then it is not identically 0, and no cancellation can make it so.
    False proves nothing (the ball holds 0, or the point is outside where ``diff`` is defined)."""
    import flint
    import sympy as sp

    from attnverify.theory.certified import exact_ball, lambdify_arb

    syms = sorted(diff.free_symbols, key=lambda s: s.name)
    point = [sp.Rational(-(i + 1) if s.is_negative else i + 1, len(syms) + 2) for i, s in enumerate(syms)]
    try:
        with flint.ctx.workprec(PRECISIONS[0]):
            value = flint.arb(lambdify_arb(diff, syms)(*[exact_ball(v) for v in point]))
    except Exception:  # noqa: BLE001 -- any failure (no ball version, a pole, a domain error) only means "unknown"
        return False
    return value.is_finite() and not value.contains(0)


def cancels(stated: Any, derived: Any) -> bool:
    """Route 1 alone: S - D is 0 or cancels to 0 (cheap; a False proves nothing). A difference that is certainly not
    0 at one point (:func:`nonzero_somewhere`) is not handed to ``cancel``, which would only confirm it slowly."""
    import sympy as sp

    diff = sp.sympify(stated) - sp.sympify(derived)
    try:
        if diff == 0:
            return True
        return not nonzero_somewhere(diff) and not _too_large(diff) and sp.cancel(diff) == 0
    except (TypeError, ValueError, NotImplementedError, RecursionError, AttributeError):
        return False


def prove_equal(stated: Any, derived: Any) -> str | None:
    """The route (``"cancel"``, ``"rewrite"``, ``"simplify"``) of a SymPy proof that ``stated`` - ``derived`` = 0
    identically, or None when no route proves it (module docstring)."""
    import sympy as sp

    from attnverify.theory.compare import equivalent

    diff = sp.sympify(stated) - sp.sympify(derived)
    if cancels(stated, derived):
        return "cancel"
    if _too_large(diff):                 # no route can be tried in bounded time (the rewrites expand too)
        return None
    try:
        rewritten = _rewritten(sp.sympify(stated)) - _rewritten(sp.sympify(derived))
    except (TypeError, ValueError, NotImplementedError, RecursionError, AttributeError):
        rewritten = None
    if rewritten is not None and rewritten != diff and _zero(rewritten):
        return "rewrite"
    if rewritten is not None and _zero(sp.expand(sp.expand_log(rewritten, force=False))):
        return "rewrite"
    if equivalent(stated, derived):
        return "simplify"
    if rewritten is not None and rewritten != diff and equivalent(rewritten, 0):
        return "rewrite"
    return None


# ---------------------------------------------------------------------------------------------------- Arb balls
@dataclass(frozen=True)
class Ball:
    """S - D at ``point`` (the sampled point: every value it gives) enclosed in [lo, hi] (Arb, certified), S and D
    there (floats, for the text), and the precision (bits) of the evaluation that gave the ball."""

    point: dict
    lo: float
    hi: float
    stated: float
    derived: float
    bits: int
    #: the radius of S - D relative to |S| + |D|, from Arb (:func:`relative_radius`); None: from the floats
    relative: float | None = None
    #: S and D both below 2^(-bits/2) (:func:`negligible`), at the highest precision tried: no evidence either way
    tiny: bool = False
    #: the Arb ball of S - D excludes 0; None: from the floats
    separated: bool | None = None

    @property
    def certified(self) -> bool:
        """The ball excludes 0: S and D certifiably differ at the point (decided in Arb where the ball was: a
        difference of 1e-603 has float ends that round outward to -5e-324 and 5e-324)."""
        if self.separated is not None:
            return self.separated
        return self.lo > 0 or self.hi < 0

    @property
    def gap(self) -> float:
        """The smallest |S - D| the ball allows (0 when it contains 0)."""
        return min(abs(self.lo), abs(self.hi)) if self.certified else 0.0

    @property
    def radius(self) -> float:
        return (self.hi - self.lo) / 2 if math.isfinite(self.hi - self.lo) else math.inf

    @property
    def agrees(self) -> bool:
        """The ball contains 0 and is tiny against |S| + |D|: the two forms agree here to the ball's precision
        (decided in Arb where the ball was computed: its floats can round a 2^-2048 radius up to 5e-324)."""
        if self.relative is not None:
            return not self.certified and self.relative <= AGREE_RTOL
        scale = abs(self.stated) + abs(self.derived)
        return (not self.certified and math.isfinite(scale)
                and self.radius <= AGREE_RTOL * max(scale, 1e-300))


def relative_radius(d: Any, vs: Any, vd: Any) -> float:
    """The radius of S - D = ``d`` relative to |S| + |D|, rounded up to a float; inf when the ball is not finite or
    S and D are both 0 (nothing to be relative to). Computed on the balls: their floats can round a radius of
    2^-2048 up to 5e-324, and values of 1e-400 down to 0."""
    from attnverify.theory.certified import upper

    scale = abs(vs).upper() + abs(vd).upper()
    if not d.is_finite() or not scale > 0:
        return math.inf
    return upper(d.rad() / scale)


def negligible(vs: Any, vd: Any, bits: int) -> bool:
    """S and D both certainly below 2^(-bits/2) in absolute value: at this precision the point cannot tell two
    forms apart (a form that vanishes there, as Paper C's linear excess at L = 1), so it neither agrees nor
    separates them."""
    import flint

    floor = flint.arb(2) ** (-(bits // 2))
    return bool(abs(vs).upper() < floor and abs(vd).upper() < floor)


def balls(stated: Any, derived: Any, symbols: Sequence[Any], points: Sequence[Mapping[str, Any]]) -> list[Ball]:
    """S - D at every point (name -> exact number: int, float, Fraction or SymPy number), every symbol of
    ``symbols`` bound (each point must give all of them), evaluated in Arb at PRECISIONS[0] bits and, where the
    ball neither excludes 0 nor is tight, again at the higher precisions."""
    import flint

    from attnverify.theory.certified import exact_ball, lambdify_arb, lower, upper

    syms = list(symbols)
    fs, fd = lambdify_arb(stated, syms), lambdify_arb(derived, syms)
    out = []
    for p in points:
        missing = [s.name for s in syms if s.name not in p]
        if missing:
            raise ValueError(f"the sampled point gives no value for {', '.join(missing)}")
        ball = None
        for bits in PRECISIONS:
            with flint.ctx.workprec(bits):
                args = [exact_ball(p[s.name]) for s in syms]
                try:
                    vs, vd = flint.arb(fs(*args)), flint.arb(fd(*args))
                except (ValueError, ZeroDivisionError, OverflowError):
                    break
                d = vs - vd
                finite = d.is_finite()
                ball = Ball(dict(p), lower(d) if finite else -math.inf,
                            upper(d) if finite else math.inf, float(vs.mid()) if vs.is_finite() else math.nan,
                            float(vd.mid()) if vd.is_finite() else math.nan, bits, relative_radius(d, vs, vd),
                            finite and vs.is_finite() and vd.is_finite() and negligible(vs, vd, bits),
                            finite and not d.contains(0))
            if ball.certified or ball.agrees or not finite:
                break
        if ball is not None:
            out.append(ball)
    return out


def arb_values(expr: Any, symbols: Sequence[Any], points: Sequence[Mapping[str, Any]]) -> list[float]:
    """``expr`` at each point as a float: the midpoint of its Arb ball at PRECISIONS[0] bits (every constant and
    value exact, so the float is correctly rounded up to the ball's radius; nan where the ball is not finite)."""
    import flint

    from attnverify.theory.certified import exact_ball, lambdify_arb

    syms = list(symbols)
    f = lambdify_arb(expr, syms)
    out = []
    with flint.ctx.workprec(PRECISIONS[0]):
        for p in points:
            v = flint.arb(f(*[exact_ball(p[s.name]) for s in syms]))
            out.append(float(v.mid()) if v.is_finite() else math.nan)
    return out


# ---------------------------------------------------------------------------------------------------- complex balls
def _acb_names() -> Any:
    """The namespace of :func:`attnverify.theory.certified.lambdify_arb`'s generated code with complex (Acb) balls:
    each function on the principal branch SymPy uses (sqrt(-x) = i sqrt(x), log(-x) = log x + i pi)."""
    from types import SimpleNamespace

    import flint

    from attnverify.theory.certified import exact_ball

    acb = flint.acb
    unary = ("exp", "log", "sqrt", "erf", "erfc", "gamma", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos",
             "atan", "sinh", "cosh", "tanh", "coth", "asinh", "acosh", "atanh")
    names = {n: (lambda name: lambda x: getattr(acb(x), name)())(n) for n in unary}
    return SimpleNamespace(
        **names, pi=acb.pi(), e=acb(flint.arb.const_e()), exact=lambda x: acb(exact_ball(x)),
        binary=lambda man, exp: acb(flint.arb(flint.arf((man, exp)))), ipow=lambda x, n: acb(x) ** n,
        fabs=lambda x: acb(abs(acb(x))), besseli=lambda nu, x: acb(x).bessel_i(acb(nu)),
        besselj=lambda nu, x: acb(x).bessel_j(acb(nu)))


@dataclass(frozen=True)
class NotReal:
    """An expression certifiably not real at ``point``: its imaginary part lies in [lo, hi] (Acb, certified), which
    excludes 0."""

    point: dict
    lo: float
    hi: float


def not_real(expr: Any, symbols: Sequence[Any], points: Sequence[Mapping[str, Any]]) -> list[NotReal]:
    """The points where ``expr`` is certifiably not real: evaluated in complex (Acb) balls at PRECISIONS[0] bits by
    :func:`attnverify.theory.certified.lambdify_arb`'s generated code (every value and constant exact) with its
    ``mpmath`` namespace given as Acb functions (``extra``), its imaginary part excludes 0. A point where the complex
    evaluation fails (a function with no complex ball here: Min, Max, a special function) is not listed: not
    certified is not real."""
    import flint

    from attnverify.theory.certified import lambdify_arb, lower, upper

    names = _acb_names()
    try:
        f = lambdify_arb(expr, list(symbols), {"mpmath": names})
    except Exception:  # noqa: BLE001 -- an expression this evaluator cannot compile is not certified non-real
        return []
    out = []
    with flint.ctx.workprec(PRECISIONS[0]):
        for p in points:
            try:
                imag = flint.acb(f(*[names.exact(p[s.name]) for s in symbols])).imag
            except Exception:  # noqa: BLE001 -- a point it cannot evaluate is not certified
                continue
            if imag.is_finite() and not imag.contains(0):
                out.append(NotReal(dict(p), lower(imag), upper(imag)))
    return out
