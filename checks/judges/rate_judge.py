"""The judge of a stated rate (``kind = "rate"``): the exponent of a power law or an exponential rate, as a bound
(``direction = "upper"`` or ``"lower"``) or exactly, against the measured slope and the derived one."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sympy as sp

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import (Z, Measured, direction_violation, evidence_of, how_parts, relation,
                                             disagreement, sides_disagree)
from attnverify.checks.reason import Math, Number, listing, pm, reason
from attnverify.checks.stated import StatedClaim


def stated_exponent(stated: StatedClaim, points: Sequence[float]) -> float:
    """The effective exponent of the stated rate over the measured ``points`` of its variable: the least-squares
    slope of log s against log v (``scale = "power"``) or against v (``"exponential"``), so that a rate with a
    logarithmic factor (sqrt(log(beta + 1)/beta)) is compared over the range where it was measured."""
    import numpy as np

    from attnverify.checks.expression_reader import parse_expression

    var = stated.get("variable")
    sym = sp.Symbol(var, positive=True)
    expr = parse_expression(stated.stated, {var: sym}, f"claim {stated.id!r}, field 'stated'")
    f = sp.lambdify(sym, sp.log(expr), "numpy")
    v = np.asarray(points, dtype=float)
    y = np.asarray(f(v), dtype=float) * np.ones_like(v)
    x = np.log(v) if stated.get("scale", "power") == "power" else v
    return float(np.polyfit(x, y, 1)[0])


def rate(stated: StatedClaim, measured: Measured, points: Sequence[float], *, derived: float | None = None,
         z: float = Z, what: Any = "the quantity") -> ClaimVerdict:
    """A stated rate against the measured exponent (or exponential rate, as a slope: negative for decay) +- se
    over the variable's ``points``, and the derived one when given.

    ``direction = "upper"`` (an O(.) bound): holds when the measured slope is at most the stated one plus z se
    (decays at least as fast); the text says how much faster (looseness) when that is more than z se; refuted
    when it decays slower by more than z se. ``"lower"`` (the quantity decays no faster than the rate): the mirror
    image, refuted when it decays faster by more than z se. ``"exact"``: refuted when the two differ by more than
    z se."""
    var = stated.get("variable")
    p = stated_exponent(stated, points)
    m, se = measured.value, measured.se
    lo_v, hi_v = min(points), max(points)
    ev = evidence_of(stated, stated_slope=p, measured_slope=m, measured_se=se, derived_slope=derived,
             variable=var, range=[lo_v, hi_v], direction=stated.get("direction", "exact"),
             scale=stated.get("scale", "power"))
    gap = sides_disagree(derived, measured, z)
    what = what if isinstance(what, (str, Math)) else Math(what)
    if gap:
        return ClaimVerdict("inconclusive", reason(disagreement(derived).removesuffix(": "), " on the rate of ",
                                                   what, ": ", gap), evidence=ev)
    x = sp.Symbol(var)
    unit = Math(sp.log(x) if stated.get("scale", "power") == "power" else x)
    over = ("over ", Math(x), " = ", listing((lo_v, hi_v), last=" to ", sep=" to "))
    slope = pm(m, se, digits=4)
    text = reason(what, " has slope ", slope, " in ", unit, " ", *over, *how_parts(measured), ", ",
                  relation(m, p, z * se), " the stated rate's ", Number(p))
    distance = Number(abs(m - p) / se if se else math.inf, digits=3)
    direction = stated.get("direction", "exact")
    side = direction_violation(direction, m - z * se, m + z * se, p)
    if side and direction == "exact":
        return ClaimVerdict("refuted", text, condition=reason(*over, ": measured slope ", slope, " against the stated ",
                                                              Number(p), " (", distance, " standard errors)"),
                            evidence=ev)
    if side:
        return ClaimVerdict("refuted", text + (": it decays slower than the stated bound allows" if side == "slower"
                                               else ": it decays faster than the stated lower bound allows"),
                            condition=reason(*over, ": measured slope ", slope, " > " if side == "slower" else " < ",
                                             "stated ", Number(p), " (", distance, " standard errors)"), evidence=ev)
    if direction == "upper":
        if m < p - z * se:
            factor = sp.Float(float(f"{m - p:.3g}"), 3)
            loose = Math(x ** factor if stated.get("scale", "power") == "power" else sp.exp(factor * x, evaluate=False))
            return ClaimVerdict("holds", text + reason(": the bound holds and is loose by a factor ", loose,
                                                       " over this range"), evidence=ev)
        return ClaimVerdict("holds", text + ": the bound holds and is sharp over this range", evidence=ev)
    if direction == "lower":
        return ClaimVerdict("holds", text + ": it decays no faster than stated over this range", evidence=ev)
    return ClaimVerdict("holds", text, evidence=ev)
