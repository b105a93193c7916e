"""Parameter values: exact matrix entries and the scale rule (used by :mod:`attnverify.checks.params`).

Matrix entries (``--set K=1,0;0,1/3``) are parsed as exact fractions -- integers, decimals, rationals p/q, exponents
-- and rounded once for the float array the numerics use (:meth:`Param.exact` keeps them exact for symbolic work).

The scale rule, one for every check: a number is refused (InputError, before any work) when it is far outside the
sizes the check was written for, its profile values (default, paper) -- for a count (int) beyond COUNT_FACTOR x the
largest (time and memory grow with it: 1e9 sequences or particles end in hours or a MemoryError), for a positive
real beyond REAL_FACTOR x the largest (a horizon of 1e300 never ends) or below REAL_FLOOR x the smallest (a
tolerance or horizon of 1e-300 is below rounding: the comparison is decided by it). Parameters with an explicit
``high`` keep it instead of the upper rule; signed reals and zero are left to the parameter's own bounds.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

#: how far a parameter without an explicit upper bound may go beyond its largest profile value (scale_problem)
COUNT_FACTOR, REAL_FACTOR, REAL_FLOOR = 100.0, 1e6, 1e-6


def matrix_entries(text: str) -> list[list]:
    """The rows of entries of ``1,0;0,1/3`` as exact Fractions, or as floats for what no Fraction spells (nan, inf:
    refused later by Param.validate, by name); ValueError for anything else. Rows may differ in length (the caller
    says so)."""
    def entry(s: str):
        try:
            return Fraction(s.strip())
        except (ValueError, ZeroDivisionError):
            return float(s)

    return [[entry(s) for s in row.split(",")] for row in text.split(";")]


def rounded(x) -> float:
    """A parsed matrix entry (Fraction or float) as the nearest float; beyond the double range, +-inf (refused by
    Param.validate as not finite, by name), as float('1e999') gives."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def scale_problem(prm: Any, value: Any, settings: list, *, whose: str = "this check's",
                  why: str = "too large to run") -> str | None:
    """Why ``value`` of the parameter ``prm`` breaks the scale rule (module docstring) given its profile values
    ``settings``, as the one-line message, or None. ``whose`` settings they are, and ``why`` a value beyond them is
    refused, as the message says it (a model file's derivation is held to the settings of the file)."""
    if prm.kind not in (int, float, "ints", "floats"):
        return None
    refs = [abs(float(x)) for v in settings if v is not None for x in (v if isinstance(v, (tuple, list)) else (v,))]
    refs = [r for r in refs if r > 0 and math.isfinite(r)]
    if not refs:
        return None
    count = prm.kind in (int, "ints")
    for x in (value if isinstance(value, tuple) else (value,)):
        x = float(x)
        top = max(refs) * (COUNT_FACTOR if count else REAL_FACTOR)
        if prm.high is None and abs(x) > top:
            return (f"{prm.name}: {x:g} is more than {COUNT_FACTOR if count else REAL_FACTOR:g} x {whose} "
                    f"largest setting ({max(refs):g}): {why}; the limit is {top:g}")
        if not count and prm.low is not None and prm.low >= 0 and 0 < x < min(refs) * REAL_FLOOR:
            return (f"{prm.name}: {x:g} is below {REAL_FLOOR:g} x {whose} smallest setting ({min(refs):g}), at "
                    f"the level of rounding; the limit is {min(refs) * REAL_FLOOR:g}")
    return None
