"""Certificates: what a computation in ball arithmetic (FLINT/Arb via python-flint) has proven.

A certificate is a plain dict (it goes into the JSON report as is):

* ``quantity``   -- the name of the certified quantity (e.g. ``"rho*"``, ``"theta*"``, ``"gap"``);
* ``proven``     -- the statement that holds rigorously (e.g. "J' has exactly one zero in [lo, hi]");
* ``enclosure``  -- [lo, hi], floats rounded outward (the true value lies in it);
* ``width``      -- hi - lo;
* ``prec_bits``  -- the working precision of the ball arithmetic;
* ``library``    -- the library and version that did the arithmetic;
* ``text``       -- one line for the report ("certified: rho* in [-0.54231, -0.54229], unique in [...]").
"""
from __future__ import annotations

import math
from fractions import Fraction
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import flint

LIBRARY = f"python-flint {flint.__version__} (FLINT/Arb ball arithmetic)"


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


def interval_text(lo: float, hi: float, digits: int = 6) -> str:
    """[lo, hi] printed with ``digits`` significant digits, rounded outward (the printed interval contains it)."""
    def fmt(v: float, rounding: str) -> str:
        if v == 0 or not math.isfinite(v):
            return f"{v:g}"
        x = Decimal(v)                                   # exact binary value
        q = Decimal(1).scaleb(x.adjusted() - digits + 1)
        return f"{x.quantize(q, rounding=rounding).normalize():g}"
    return f"[{fmt(lo, ROUND_FLOOR)}, {fmt(hi, ROUND_CEILING)}]"


def certificate(quantity: str, proven: str, lo: float, hi: float, prec_bits: int, extra: str = "") -> dict:
    """The certificate dict (module docstring) for a quantity enclosed in [lo, hi]."""
    mag = max(abs(lo), abs(hi))
    digits = 6 if mag == 0 or hi <= lo else min(10, max(6, 2 + math.ceil(math.log10(mag / (hi - lo)))))
    text = f"certified: {quantity} in {interval_text(lo, hi, digits)}" + (f", {extra}" if extra else "")
    return {"quantity": quantity, "proven": proven, "enclosure": [lo, hi], "width": hi - lo,
            "prec_bits": int(prec_bits), "library": LIBRARY, "text": text}
