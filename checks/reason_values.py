"""Reason parts for measured values that may be missing (:mod:`attnverify.checks.reason`): a number or the words
"n/a", a value with its standard error, a bracket, a measured power, and parts joined by a separator; and the parts
of an SGA step schedule.

A measurement that did not produce a value (None, or a non-finite float) is named by the words "n/a", never by a
made-up number; a bracket whose ends are missing or out of order prints each end alone."""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import sympy as sp

from attnverify.checks.reason import Math, Number, Text, bracket, item, pm

__all__ = ["number_or_na", "pm_or_na", "bracket_or_na", "measured_power", "joined", "step_schedule"]


def _finite(x: Any) -> bool:
    return x is not None and not isinstance(x, bool) and math.isfinite(float(x))


def number_or_na(x: Any, digits: int = 4) -> Number | Text:
    """``x`` as a Number at ``digits`` significant digits, or the words "n/a" for None or a non-finite value."""
    return Number(x, digits=digits) if _finite(x) else Text("n/a")


def pm_or_na(value: Any, se: Any, digits: int = 4) -> tuple:
    """The parts of ``value`` ± ``se`` (one Number: :func:`~attnverify.checks.reason.pm`), or each side alone
    (:func:`number_or_na`, the standard error at 2 digits) when either is missing or not finite."""
    if _finite(value) and _finite(se) and float(se) >= 0:
        return item(pm(value, se, digits=digits))
    return item(number_or_na(value, digits), " ± ", number_or_na(se, 2))


def bracket_or_na(lo: Any, hi: Any, digits: int = 4) -> tuple:
    """The parts of the bracket [lo, hi]: one Number (:func:`~attnverify.checks.reason.bracket`) when both ends are
    finite and ordered, else each end by :func:`number_or_na` between brackets."""
    if _finite(lo) and _finite(hi) and float(lo) <= float(hi):
        return item(bracket(lo, hi, digits=digits))
    return item("[", number_or_na(lo, digits), ", ", number_or_na(hi, digits), "]")


def measured_power(base: Any, exponent: Any, digits: int = 3) -> tuple:
    """``base`` to a measured ``exponent`` rounded to ``digits`` significant digits, as mathematics
    (:math:`d^{-0.678}`); the words "to the power n/a" for a missing or non-finite exponent."""
    import sympy as sp

    if not _finite(exponent):
        return item(Math(base), " to the power n/a")
    return item(Math(base ** sp.Float(float(f"{float(exponent):.{digits}g}"), digits)))


def joined(pieces: Iterable[Any], sep: str = ", ") -> tuple:
    """The parts of ``pieces`` one after another, ``sep`` between them (a piece: a value as
    :func:`~attnverify.checks.reason.reason` takes it, or a sequence of them): the typed ``sep.join(texts)``. Unlike
    :func:`~attnverify.checks.reason.listing`, a value met twice is printed twice (a point's coordinates)."""
    out: list = []
    for i, piece in enumerate(pieces):
        out += [sep] * bool(i) + [piece]
    return item(*out)


def step_schedule(a: float, b: float) -> tuple:
    """The parts of the step schedule eta_k = a/(k + b): one equation when a and b are whole numbers (as a
    configuration writes them), else the equation in a and b with their values."""
    eta_k, k = sp.Symbol("eta_k"), sp.Symbol("k")
    if all(float(x).is_integer() for x in (a, b)):
        return item(Math(sp.Eq(eta_k, sp.Integer(int(a)) / (k + sp.Integer(int(b))))))
    sa, sb = sp.Symbol("a"), sp.Symbol("b")
    return item(Math(sp.Eq(eta_k, sa / (k + sb))), " with ", Math(sa), " = ", Number(a, digits=6), ", ", Math(sb),
                " = ", Number(b, digits=6))
