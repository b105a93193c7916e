r"""Certified arithmetic shared by every paper: ball arithmetic, interval Newton root isolation (eigenvalue clusters:
:mod:`attnverify.theory.certified_spectra`).

Everything here is rigorous: a result is an enclosure that provably holds the exact value, computed in FLINT/Arb
ball arithmetic (python-flint: every operation returns a ball containing the exact result) or in exact rational
arithmetic (SymPy).  Nothing here knows a model; the papers' theory modules call it.

* Balls and floats: :func:`lower`, :func:`upper` (outward-rounded float ends of a ball), :func:`lower_q`,
  :func:`upper_q` (of an exact rational), :func:`outward`, :func:`interval_text` (printed outward).
* Certificates: :func:`certificate`, a plain dict of what a computation has proven (into the JSON report as is):

  - ``quantity``   -- the name of the certified quantity (e.g. ``"rho*"``, ``"theta*"``, ``"gap"``);
  - ``proven``     -- the statement that holds rigorously (e.g. "J' has exactly one zero in [lo, hi]");
  - ``enclosure``  -- [lo, hi], floats rounded outward (the true value lies in it);
  - ``width``      -- hi - lo; ``prec_bits`` -- the working precision of the ball arithmetic;
  - ``library``    -- the library and version that did the arithmetic; ``text`` -- one line for the report
    ("certified: rho* in [-0.54231, -0.54229], unique in [...]").

* SymPy expressions as ball functions: :func:`lambdify_arb`, every constant entering as its exact value
  (:func:`exact_ball`: an Integer, a Rational as an exact quotient, a binary Float from its own mantissa and
  exponent); the functions it knows are :data:`CERTIFIED_FUNCTIONS`, plus special functions that carry a ball
  version (:func:`special_ball_functions`); any other is refused (:class:`NotCertifiable`).
* Zeros of a real function of one variable: :func:`root_boxes`, :func:`isolate_roots` (bisection plus interval
  Newton), :func:`merge_intervals`.
* Spectra of symmetric matrices: :mod:`attnverify.theory.certified_spectra`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from fractions import Fraction
from typing import Callable

import flint
import numpy as np
import sympy as sp
from flint import acb, arb
from sympy.printing.pycode import MpmathPrinter

LIBRARY = f"python-flint {flint.__version__} (FLINT/Arb ball arithmetic)"
EXACT_LIBRARY = f"SymPy {sp.__version__} (exact rational real-root isolation)"


# -- balls, rationals and their float ends ----------------------------------------------------
def lower(x: "flint.arb") -> float:
    """A float <= every point of the ball x (outward rounding: one ulp below the converted lower end, unless the
    end is exactly a float)."""
    end = x.lower()
    v = float(end)
    return v if end == flint.arb(v) else math.nextafter(v, -math.inf)


def upper(x: "flint.arb") -> float:
    """A float >= every point of the ball x."""
    end = x.upper()
    v = float(end)
    return v if end == flint.arb(v) else math.nextafter(v, math.inf)


def lower_q(q) -> float:
    """A float <= the exact rational q (SymPy Rational or Fraction)."""
    v = float(q)
    return v if Fraction(v) <= Fraction(int(q.p), int(q.q)) else math.nextafter(v, -math.inf)


def upper_q(q) -> float:
    """A float >= the exact rational q."""
    v = float(q)
    return v if Fraction(v) >= Fraction(int(q.p), int(q.q)) else math.nextafter(v, math.inf)


def outward(lo: float, hi: float, digits: int = 6) -> tuple[str, str]:
    """lo and hi printed with ``digits`` significant digits, rounded outward: [lo, hi] lies in the printed pair."""
    def fmt(v: float, rounding: str) -> str:
        if v == 0 or not math.isfinite(v):
            return f"{v:g}"
        x = Decimal(v)                                   # exact binary value
        return f"{x.quantize(Decimal(1).scaleb(x.adjusted() - digits + 1), rounding=rounding).normalize():g}"
    return fmt(lo, ROUND_FLOOR), fmt(hi, ROUND_CEILING)


def interval_text(lo: float, hi: float, digits: int = 6) -> str:
    """[lo, hi] printed with ``digits`` significant digits, rounded outward (the printed interval contains it)."""
    return "[{}, {}]".format(*outward(lo, hi, digits))


def certificate(quantity: str, proven: str, lo: float, hi: float, prec_bits: int, extra: str = "") -> dict:
    """The certificate dict (module docstring) for a quantity enclosed in [lo, hi]."""
    mag = max(abs(lo), abs(hi))
    digits = 6 if mag == 0 or hi <= lo else min(10, max(6, 2 + math.ceil(math.log10(mag / (hi - lo)))))
    text = f"certified: {quantity} in {interval_text(lo, hi, digits)}" + (f", {extra}" if extra else "")
    return {"quantity": quantity, "proven": proven, "enclosure": [lo, hi], "width": hi - lo,
            "prec_bits": int(prec_bits), "library": LIBRARY, "text": text}


def hull(a: arb, b: arb) -> arb:
    """The ball enclosing [a, b] (a <= b exact)."""
    return a.union(b)


# -- SymPy expressions evaluated in ball arithmetic -------------------------------------------
def exact_ball(x) -> arb:
    """The exact value ``x`` as a ball that contains it: an int or SymPy Integer exactly; a Fraction or SymPy
    Rational as the ball quotient of its exact numerator and denominator; a Python float exactly (a binary float is
    an Arb midpoint with radius 0); a SymPy Float from its own binary mantissa and exponent (``Float._mpf_`` =
    (sign, man, exp, bc), value (-1)^sign man 2^exp), so no decimal round trip can move it. Anything else
    (a string, an mpmath number, a NumPy array): TypeError, since its exact value is not known here."""
    if isinstance(x, arb):
        return x
    if isinstance(x, bool):
        raise TypeError("a bool is not a number")
    if isinstance(x, (int, np.integer, sp.Integer)):
        return arb(int(x))
    if isinstance(x, (float, np.floating)):
        return arb(float(x))
    if isinstance(x, Fraction):
        return arb(x.numerator) / arb(x.denominator)
    if isinstance(x, sp.Rational):
        return arb(int(x.p)) / arb(int(x.q))
    if isinstance(x, sp.Float):
        sign, man, exp, _bc = x._mpf_
        if not man and exp:                          # the special values +-inf and nan of mpmath's format
            raise TypeError(f"{x} is not a finite number")
        return _binary(-int(man) if sign else int(man), int(exp))
    raise TypeError(f"no exact value for {type(x).__name__} {x!r}")


def _binary(man: int, exp: int) -> arb:
    """The exact binary number man 2^exp as a ball of radius 0 (an Arb float holds any mantissa exactly)."""
    return arb(flint.arf((man, exp)))


def _min(*xs: arb) -> arb:
    """The ball of min(x, y, ...) over every point of the argument balls."""
    return functools.reduce(lambda out, x: out.min(arb(x)), xs[1:], arb(xs[0]))


def _max(*xs: arb) -> arb:
    """The ball of max(x, y, ...) over every point of the argument balls."""
    return functools.reduce(lambda out, x: out.max(arb(x)), xs[1:], arb(xs[0]))


def _bessel_i(nu, x) -> arb:
    return arb(x).bessel_i(arb(nu))


def _bessel_j(nu, x) -> arb:
    return arb(x).bessel_j(arb(nu))


def _real_part(x) -> arb:
    """re z on a real ball: Arb's real functions give a non-finite ball where a value is not real, so re = identity."""
    return arb(x)


def _imaginary_part(x) -> arb:
    """im z on a real ball: 0 when the ball is finite (it holds only reals), else indeterminate, never a false 0."""
    return arb(0) if arb(x).is_finite() else arb("nan")


# The elementary and special functions with an Arb evaluation, by the name SymPy's MpmathPrinter gives them (and the
# SymPy class names they come from). Every function a stated formula may use must be here: the claim parser reads
# its namespace from CERTIFIED_FUNCTIONS, so what it accepts can always be certified. SymPy rewrites some functions
# into others on its own (atan(I x) = I atanh(x), besseli(0, I x) = besselj(0, x)); those are here too.
def _integer_power(x, n: int) -> arb:
    """x ** n for an integer n. python-flint's ``arb ** n`` is NaN for a ball whose midpoint is exactly 0 (arb(0,
    1e-6) ** 2 is nan: an enclosure lost, e.g. every equilibrium with a zero coordinate read 'undecided'); there
    the power is taken by repeated multiplication, a valid (if wider) ball. Elsewhere ``arb ** n`` as before."""
    x = arb(x)
    y = x ** n
    if y.is_finite() or not x.is_finite():
        return y
    out, base, m = arb(1), x, abs(int(n))
    while m:
        if m & 1:
            out = out * base
        base, m = base * base, m >> 1
    return out if n >= 0 else 1 / out


def _sign(x) -> arb:
    """sign(x) over a ball: -1, 0 or 1 where the ball decides it, else the hull [-1, 1] of the values it may take
    (SymPy writes d|x|/dx as sign(x))."""
    x = arb(x)
    if x > 0:
        return arb(1)
    if x < 0:
        return arb(-1)
    if x.is_exact() and x.is_zero():
        return arb(0)
    return arb(0, 1) if x.is_finite() else arb("nan")


_BALL_FUNCTIONS: dict[str, Callable] = {
    "exp": lambda x: arb(x).exp(), "log": lambda x: arb(x).log(), "sqrt": lambda x: arb(x).sqrt(),
    "erf": lambda x: arb(x).erf(), "erfc": lambda x: arb(x).erfc(), "gamma": lambda x: arb(x).gamma(),
    "sin": lambda x: arb(x).sin(), "cos": lambda x: arb(x).cos(), "tan": lambda x: arb(x).tan(),
    "asin": lambda x: arb(x).asin(), "acos": lambda x: arb(x).acos(), "atan": lambda x: arb(x).atan(),
    "sinh": lambda x: arb(x).sinh(), "cosh": lambda x: arb(x).cosh(), "tanh": lambda x: arb(x).tanh(),
    "asinh": lambda x: arb(x).asinh(), "acosh": lambda x: arb(x).acosh(), "atanh": lambda x: arb(x).atanh(),
    "cot": lambda x: arb(x).cot(), "sec": lambda x: arb(x).sec(), "csc": lambda x: arb(x).csc(),
    "coth": lambda x: arb(x).coth(),
    "fabs": lambda x: abs(arb(x)), "Min": _min, "Max": _max, "besseli": _bessel_i, "besselj": _bessel_j, "exact": exact_ball,
    "binary": _binary, "re": _real_part, "im": _imaginary_part, "ipow": _integer_power, "sign": _sign,
}
#: SymPy's own rewrites and derivatives (|exp z| = exp(re z), d|x|/dx = sign x); not offered to the claim parser
_REWRITE_TARGETS = ("re", "im", "sign")
CERTIFIED_FUNCTIONS = ("exp", "log", "sqrt", "erf", "erfc", "gamma", "sin", "cos", "tan", "cot", "sec", "csc", "asin",
                       "acos", "atan", "sinh", "cosh", "tanh", "coth", "asinh", "acosh", "atanh", "Abs", "Min", "Max",
                       "besseli", "besselj")
_CLASS_NAMES = {"Abs": "fabs"}


class _ArbNames:
    """The namespace the generated code calls (``mpmath.exp`` ... as printed by :class:`_ArbPrinter`), mapped to
    Arb ball functions with guaranteed error bounds."""

    def __getattr__(self, name: str):
        try:
            return _BALL_FUNCTIONS[name]
        except KeyError:
            raise NotCertifiable(name) from None

    @property
    def pi(self) -> arb:
        return arb.pi()

    @property
    def e(self) -> arb:
        return arb.const_e()

    @property
    def inf(self) -> arb:
        return arb.pos_inf()


class NotCertifiable(ValueError):
    """An expression uses a function with no ball (Arb) evaluation: it cannot be certified."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} has no certified (Arb ball) evaluation")
        self.name = name


class _ArbPrinter(MpmathPrinter):
    """SymPy's mpmath printer, with every constant printed as its exact value: a Float from its binary mantissa and
    exponent (the stock printer's ``mpf((sign, man, exp, bc))`` tuple is read by ``flint.arb`` as a midpoint and a
    radius, which turned 2.02 into 0); a Rational as the
    quotient of two exact integers; Min and Max as ball functions (Python's min on overlapping balls would pick one
    ball, not their hull)."""

    def _print_Float(self, e: sp.Float) -> str:
        sign, man, exp, _bc = e._mpf_
        if not man and exp:
            raise NotCertifiable(f"the non-finite constant {e}")
        return f"mpmath.binary({-int(man) if sign else int(man)}, {int(exp)})"

    def _print_Rational(self, e: sp.Rational) -> str:
        return f"(mpmath.exact({int(e.p)})/mpmath.exact({int(e.q)}))"

    def _print_Pow(self, e: sp.Pow, rational: bool = False) -> str:
        """An integer power other than +-1 through :func:`_integer_power` (a ball centred at 0 keeps its enclosure)."""
        if e.exp.is_Integer and abs(int(e.exp)) > 1:
            return f"mpmath.ipow({self._print(e.base)}, {int(e.exp)})"
        return super()._print_Pow(e, rational=rational)

    def _print_Min(self, e: sp.Expr) -> str:
        return f"mpmath.Min({', '.join(self._print(a) for a in e.args)})"

    def _print_Max(self, e: sp.Expr) -> str:
        return f"mpmath.Max({', '.join(self._print(a) for a in e.args)})"

    def _print_Abs(self, e: sp.Expr) -> str:
        return f"mpmath.fabs({self._print(e.args[0])})"

    def _print_reciprocal_trig(self, e: sp.Expr) -> str:
        """cot, sec, csc, coth as themselves: the stock rewrite into tan etc. turns a tanh inside into -i tan(i x)."""
        return f"mpmath.{type(e).__name__}({self._print(e.args[0])})"

    _print_cot = _print_sec = _print_csc = _print_coth = _print_reciprocal_trig

    def _print_re(self, e: sp.Expr) -> str:
        return f"mpmath.re({self._print(e.args[0])})"

    def _print_im(self, e: sp.Expr) -> str:
        return f"mpmath.im({self._print(e.args[0])})"


def special_ball_functions(expr: sp.Expr) -> dict[str, Callable]:
    """The ball versions of the special functions in ``expr`` that carry their own: a SymPy function class with a
    ``_arb_`` attribute (a callable taking and returning python-flint balls, whose result contains the exact value
    at every point of the argument balls), by its name. A theory module defines such a function (e.g. a Gaussian
    expectation with no elementary form); every ball evaluator then knows it without naming it."""
    found = {}
    for f in _subexpressions(sp.sympify(expr)):
        fn = getattr(type(f), "_arb_", None) if isinstance(f, sp.Function) else None
        if fn is not None:
            found[type(f).__name__] = fn
    return found


def _subexpressions(expr: sp.Basic) -> set:
    """Every distinct subexpression of ``expr`` (itself included), each visited once. A derived field and its
    derivatives share most of their subtrees: SymPy's atoms() and has() walk every path into a shared subtree again
    (25 million visits for one model file's Jacobian, 2 s), this walk visits each distinct node once; what it finds
    is the same (atoms(T) = the nodes that are instances of T; has(c) for an atom c: a node equal to c)."""
    seen: set = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if e not in seen:
            seen.add(e)
            stack.extend(e.args)
    return seen


def uncertifiable(expr: sp.Expr, extra: dict | None = None) -> list[str]:
    """The names of the functions in ``expr`` that have no ball evaluation, its non-finite constants (zoo, nan, oo;
    -oo is named oo) and the imaginary unit (balls are real); empty: every part can be certified."""
    expr = sp.sympify(expr)
    nodes = _subexpressions(expr)
    known = {*CERTIFIED_FUNCTIONS, *_REWRITE_TARGETS, *special_ball_functions(expr), *(extra or {})}
    names = {type(f).__name__ for f in nodes if isinstance(f, sp.Function)} - known
    # has(c): c among the nodes, or equal to one (oo == Float('inf'))
    names |= {str(c) for c in (sp.zoo, sp.nan, sp.oo, sp.I) if c in nodes or any(c == n for n in nodes)}
    names |= {"oo"} if -sp.oo in nodes or any(n == -sp.oo for n in nodes) else set()
    names |= {"AccumBounds"} if any(isinstance(n, sp.AccumBounds) for n in nodes) else set()
    return sorted(names)


def lambdify_arb(expr: sp.Expr, args, extra: dict | None = None) -> Callable:
    """Rigorous ball version of ``expr``, a function of the symbols ``args``: it takes python-flint ``arb`` balls
    (or exact numbers: :func:`exact_ball`) and returns a ball that contains the value of expr at every point of the
    argument balls (FLINT/Arb error propagation). Every constant of ``expr`` enters as its exact value (Integers,
    Rationals and binary Floats: :func:`exact_ball`). It may use +, *, powers, pi, E, the functions
    :data:`CERTIFIED_FUNCTIONS`, special functions with a ball version (:func:`special_ball_functions`) and
    ``extra`` (name -> ball function); any other function: :class:`NotCertifiable`, when the function is built."""
    if extra is None:      # kept per (expression, arguments): compiling costs far more than one evaluation
        return _compiled(sp.sympify(expr), tuple(args) if isinstance(args, (list, tuple)) else (args,))
    missing = uncertifiable(expr, extra)
    if missing:
        raise NotCertifiable(missing[0])
    printer = _ArbPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True})
    names = {"mpmath": _ArbNames(), **special_ball_functions(expr), **(extra or {})}
    # use_imps=False: SymPy's search for implemented_function float implementations walks every path of the tree
    # (a second for a model file's Jacobian); none is used here, and a float implementation would not be a ball one
    fn = sp.lambdify(args, expr, modules=[names], printer=printer, cse=True, use_imps=False)
    if not any(sp.sympify(e).is_number for e in _entries(expr)):
        return fn

    def balls(*a):              # a constant entry comes back as a Python number (0 for a field that vanishes)
        return _as_balls(fn(*a))
    return balls


def _entries(expr) -> list:
    """The scalar entries of an expression, a Matrix or a (nested) tuple or list of them."""
    if isinstance(expr, (sp.MatrixBase, sp.Tuple, list, tuple)):
        return [e for x in expr for e in _entries(x)]
    return [expr]


def _as_balls(value):
    """``value`` with every Python number replaced by its exact ball (lists and tuples kept)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_as_balls(v) for v in value)
    return value if isinstance(value, (arb, acb)) else arb(value)


_compiled = functools.lru_cache(maxsize=512)(lambda expr, args: lambdify_arb(expr, list(args), {}))


# -- zeros of a real function: interval bisection + interval Newton ---------------------------
@dataclass(frozen=True)
class RootBox:
    """A box [lo, hi] (exact Arb endpoints) holding zeros of h. ``unique``: the interval Newton test proved that
    exactly one zero lies in ``unique_in`` (a box containing [lo, hi]); otherwise it is an unresolved box of
    width <= tol that may hold any number of zeros (none outside the returned boxes)."""

    lo: arb
    hi: arb
    unique: bool
    unique_in: tuple | None = None


def root_boxes(h: Callable, dh: Callable, lo, hi, tol: float, max_boxes: int) -> list[RootBox]:
    """Every zero of h in [lo, hi], enclosed in boxes sorted by their lower end (the method: :func:`isolate_roots`).
    More than ``max_boxes`` boxes examined: OutsideCertifiedRange (h is degenerate, e.g. vanishes on an interval)."""
    from attnverify.theory.refusals import OutsideCertifiedRange
    tol_a = arb(tol)
    certified, unresolved, stack, n_boxes = [], [], [(arb(lo), arb(hi))], 0
    split = arb(4711) / 10000
    while stack:
        a, b = stack.pop()
        n_boxes += 1
        if n_boxes > max_boxes:
            raise OutsideCertifiedRange("root isolation did not terminate within ", max_boxes,
                                        " boxes: the field is (nearly) degenerate here")
        X = hull(a, b)
        if not h(X).contains(0):
            continue
        dX = dh(X)
        m = ((a + b) / 2).mid()                           # an exact point of X
        hm = h(m)
        if not (hm + dX * (X - m)).contains(0):            # mean-value form h(m) + h'(X)(X - m)
            continue
        if not dX.contains(0):
            N = m - hm / dX
            if N.upper() < a or N.lower() > b:
                continue                                  # no zero in X
            if a < N.lower() and N.upper() < b:           # N(X) in the interior of X: exactly one zero in X
                unique_in = (a, b)
                while True:                               # refine: every N(X) still holds the zero
                    lo_, hi_ = max(a, N.lower()), min(b, N.upper())
                    if hi_ - lo_ <= tol_a * max(arb(1), abs(lo_)) or (lo_ == a and hi_ == b):
                        break
                    a, b = lo_, hi_
                    m = ((a + b) / 2).mid()
                    N = m - h(m) / dh(hull(a, b))
                certified.append(RootBox(lo_, hi_, True, unique_in))
                continue
        if b - a <= tol_a:
            unresolved.append(RootBox(a, b, False))
            continue
        s = (a + (b - a) * split).mid()
        stack.extend([(s, b), (a, s)])
    return sorted(certified + unresolved, key=lambda r: float(r.lo))


def isolate_roots(h: Callable, dh: Callable, lo: float, hi: float, *, tol: float = 1e-13,
                  max_boxes: int = 20000) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Enclose every zero of h in [lo, hi] by interval bisection + interval Newton; h, dh act on python-flint
    ``arb`` balls and must return balls that contain the true range (e.g. :func:`lambdify_arb`).

    A box X is discarded when 0 is in neither h(X) nor the mean-value form h(m) + h'(X)(X - m) (no zero), or
    when the Newton image N(X) = m - h(m)/h'(X) misses X.  When 0 is not in h'(X) and N(X) lies in the interior
    of X, X holds exactly one zero (interval Newton theorem); it is then shrunk to width <= tol.  Returns
    (certified boxes, unresolved boxes of width <= tol), floats rounded outward, touching boxes merged (a zero on
    a shared edge is found from both sides).  Every zero of h in [lo, hi] lies in one of the returned boxes.
    Split ratio 0.4711 (off-centre, so that symmetric zeros such as x = 0 do not land on a box edge).
    Working precision: the caller's (``flint.ctx.prec``).
    """
    boxes = root_boxes(h, dh, lo, hi, tol, max_boxes)
    cert = [(lower(r.lo), upper(r.hi)) for r in boxes if r.unique]
    unres = [(lower(r.lo), upper(r.hi)) for r in boxes if not r.unique]
    return merge_intervals(cert), merge_intervals(unres)


def merge_intervals(boxes: list[tuple[float, float]], gap: float = 1e-12) -> list[tuple[float, float]]:
    """The union of the intervals [a, b], with intervals closer than ``gap`` joined, as sorted disjoint intervals."""
    out: list[list[float]] = []
    for a, b in sorted(boxes):
        if out and a <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [tuple(x) for x in out]
