r"""Paper C (``slr``): ball arithmetic (FLINT/Arb through python-flint) for the certified results.

* :func:`lambdify_arb`: a SymPy expression as a function of python-flint ``arb`` balls whose result contains the
  exact value at every point of the argument balls (SymPy's MpmathPrinter, names mapped to Arb's functions).
* :func:`isolate_zeros`: every zero of a real function h on [lo, hi] enclosed, by bisection with the mean-value
  exclusion test (0 not in h(m) + h'(X)(X - m)) and the interval Newton test (N(X) = m - h(m)/h'(X) inside X proves
  exactly one zero in X).
* :func:`lower`, :func:`upper` (outward-rounded float ends of a ball) and :func:`certificate` (the project's
  certificate dict: quantity, proven, enclosure, width, prec_bits, library, text).

This is the model's own copy of the generic kit (the project's shared certified-arithmetic module is being
rebuilt at the same time); it imports no other theory module, so it can be pointed at the shared one later.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import flint
import sympy as sp
from flint import arb
from sympy.printing.pycode import MpmathPrinter


class _ArbNames:
    """The names SymPy's MpmathPrinter emits (``mpmath.exp``, ...), mapped to python-flint balls.  Rationals are
    printed as mpf(p)/mpf(q), exact integers divided in ball arithmetic."""

    mpf = staticmethod(arb)
    exp = staticmethod(lambda x: arb(x).exp())
    sqrt = staticmethod(lambda x: arb(x).sqrt())
    erf = staticmethod(lambda x: arb(x).erf())
    erfc = staticmethod(lambda x: arb(x).erfc())
    atan = staticmethod(lambda x: arb(x).atan())
    log = staticmethod(lambda x: arb(x).log())

    @property
    def pi(self):
        return arb.pi()


def lambdify_arb(expr: sp.Expr, args, extra: dict | None = None) -> Callable:
    """``expr`` as a function of arb balls (guaranteed enclosure); ``extra`` maps the names of user functions (e.g.
    ``zeta_erf``) to their ball versions."""
    printer = MpmathPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True})
    return sp.lambdify(args, expr, modules=[{"mpmath": _ArbNames(), **(extra or {})}], printer=printer, cse=True)


def ball(lo: float, hi: float) -> arb:
    """The ball enclosing [lo, hi]."""
    return arb(lo).union(arb(hi))


@dataclass(frozen=True)
class ZeroBox:
    """[lo, hi] (floats, rounded outward) holding zeros of h; ``unique``: exactly one zero (interval Newton)."""

    lo: float
    hi: float
    unique: bool


def lower(x: arb) -> float:
    """A float <= every point of the ball x (one ulp below the converted lower end unless it is exactly a float)."""
    v = float(x.lower())
    return v if x.lower() == arb(v) else math.nextafter(v, -math.inf)


def upper(x: arb) -> float:
    """A float >= every point of the ball x."""
    v = float(x.upper())
    return v if x.upper() == arb(v) else math.nextafter(v, math.inf)


LIBRARY = f"python-flint {flint.__version__} (FLINT/Arb ball arithmetic)"


def certificate(quantity: str, proven: str, lo: float, hi: float, prec_bits: int, extra: str = "") -> dict:
    """What a ball computation has proven, as a plain dict for the JSON report: 'quantity', 'proven', 'enclosure'
    [lo, hi] (outward), 'width', 'prec_bits', 'library', 'text' (one line)."""
    digits = 6 if hi <= lo or max(abs(lo), abs(hi)) == 0 else \
        min(12, max(6, 2 + math.ceil(math.log10(max(abs(lo), abs(hi)) / (hi - lo)))))
    text = f"certified: {quantity} in [{lo:.{digits}g}, {hi:.{digits}g}]" + (f", {extra}" if extra else "")
    return {"quantity": quantity, "proven": proven, "enclosure": [lo, hi], "width": hi - lo,
            "prec_bits": int(prec_bits), "library": LIBRARY, "text": text}


def isolate_zeros(h: Callable[[arb], arb], dh: Callable[[arb], arb], lo: float, hi: float, *, tol: float = 1e-12,
                  max_boxes: int = 20000) -> list[ZeroBox]:
    """Every zero of h in [lo, hi], enclosed.  h and dh take an arb ball and return a ball containing the range.

    A box X = [a, b] is discarded when 0 is in neither h(X) nor h(m) + h'(X)(X - m) (m the midpoint), or when the
    Newton image N(X) = m - h(m)/h'(X) misses X.  When 0 is not in h'(X) and N(X) lies inside X, X holds exactly one
    zero; it is shrunk by Newton to width <= tol |m| and kept as ``unique``.  Otherwise X is split at 0.4711 of its
    width (off-centre, so a zero at a simple number does not fall on an edge); boxes of width <= tol |m| are kept as
    not ``unique``.  Every zero of h in [lo, hi] lies in a returned box.  Raises ValueError after max_boxes."""
    out: list[ZeroBox] = []
    stack = [(arb(lo), arb(hi))]
    n = 0
    while stack:
        a, b = stack.pop()
        n += 1
        if n > max_boxes:
            raise ValueError("isolate_zeros did not terminate: the function is (nearly) degenerate on an interval")
        X = a.union(b)
        hX = h(X)
        if not hX.contains(0):
            continue
        m = ((a + b) / 2).mid()
        hm, dX = h(m), dh(X)
        if not (hm + dX * (X - m)).contains(0):
            continue
        width_ok = (b - a) <= arb(tol) * max(abs(m), arb(1e-300))
        if not dX.contains(0):
            N = m - hm / dX
            if N.upper() < a or N.lower() > b:
                continue
            if a < N.lower() and N.upper() < b:
                for _ in range(60):                 # every Newton image still holds the zero: intersect
                    lo_, hi_ = max(a, N.lower()), min(b, N.upper())
                    if hi_ - lo_ <= arb(tol) * max(abs(m), arb(1e-300)) or (lo_ == a and hi_ == b):
                        break
                    a, b = lo_, hi_
                    m = ((a + b) / 2).mid()
                    N = m - h(m) / dh(a.union(b))
                out.append(ZeroBox(lower(lo_), upper(hi_), True))
                continue
        if width_ok:
            out.append(ZeroBox(lower(a), upper(b), False))
            continue
        s = (a + (b - a) * arb(4711) / 10000).mid()
        stack.extend([(s, b), (a, s)])
    return sorted(out, key=lambda z: z.lo)
