"""How a stated claim is judged against what we derived and what we measured: one rule per kind, for every paper.

The three sides are the *stated* form (from a stated-claims file), the *derived* one (SymPy from the model) and the
*measured* one (numerics, with its uncertainty). The verdicts:

* ``inconclusive`` when derived and measured disagree (our own error: the claim cannot be read), or when the
  measurement cannot resolve the difference between the stated and the derived form;
* ``refuted`` when the stated form disagrees with a derived and a measured side that agree with each other; the
  counterexample names the point, the values and the distance in the measurement's own units (standard errors,
  bracket widths);
* ``holds`` when all three agree and the test could have seen a difference as small as the statement's own
  resolution; for an upper bound (``direction = "upper"``) a valid looser bound holds and the text says how loose.

Every sentence that states a comparison is produced here from the numbers it describes (:func:`relation`,
:func:`ratio_text`): no word such as "below" or "loose" is typed beside a number. :func:`value` builds its text as a
structured :class:`~attnverify.checks.reason.Reason` (numbers as typed parts, printed with the digits that tell them
apart); the other rules still return plain text (docs/reasons.md: how to convert one).

Agreement and disagreement are decided at ``Z`` = 3 standard errors (a two-sided false-alarm rate of 0.27 % per
comparison under a normal error). A test's power is reported as the difference it detects with probability 0.8:
(Z + 0.84) standard errors.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.reason import Number, pm, reason
from attnverify.checks.stated import StatedClaim

Z = 3.0
Z_POWER = 0.8416          # the one-sided normal quantile of 0.8: a difference of (Z + Z_POWER) se is seen 80 % of the time


@dataclass(frozen=True)
class Measured:
    """A measured number with its standard error (``se`` = 0 for an exact or certified computation), or a measured
    bracket ``interval`` = (lo, hi) that contains the quantity, and how it was measured (``how``: one phrase)."""

    value: float
    se: float = 0.0
    how: str = ""
    interval: tuple[float, float] | None = None
    details: dict = field(default_factory=dict)


def fmt(x: float, digits: int = 4) -> str:
    """A number as text with ``digits`` significant digits (``n/a`` for None or a non-finite value)."""
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    return f"{float(x):.{digits}g}"


def relation(a: float, b: float, tol: float = 0.0) -> str:
    """The word that relates ``a`` to ``b``: "below", "above" or "equal to" (within ``tol``)."""
    if abs(a - b) <= tol:
        return "equal to" if tol == 0 else "within the uncertainty of"
    return "below" if a < b else "above"


def ratio_text(a: float, b: float) -> str:
    """``a`` relative to ``b`` as text: "1.31 times", computed."""
    return "n/a" if b == 0 else f"{a / b:.3g} times"


def _distance(a: float, b: float, se: float) -> float:
    return math.inf if se == 0 and a != b else (0.0 if a == b else abs(a - b) / se)


def sides_disagree(derived: float | None, measured: Measured, z: float = Z, rtol: float = 0.0) -> str | None:
    """When the derived value lies outside the measured value's z-band (or its bracket): the reason text, else None.
    ``rtol`` allows for the derived value's own relative precision."""
    if derived is None:
        return None
    if measured.interval is not None:
        lo, hi = measured.interval
        if lo - rtol * abs(derived) <= derived <= hi + rtol * abs(derived):
            return None
        return (f"the derived value {fmt(derived, 6)} lies outside the measured bracket [{fmt(lo, 6)}, {fmt(hi, 6)}]"
                f" ({measured.how})")
    if abs(derived - measured.value) <= z * measured.se + rtol * abs(derived):
        return None
    return (f"the derived value {fmt(derived, 6)} and the measured {fmt(measured.value, 6)} +- {fmt(measured.se, 2)} "
            f"({measured.how}) differ by {fmt(_distance(derived, measured.value, measured.se), 3)} standard errors")


def _ev(stated: StatedClaim, **figures: Any) -> dict:
    return {"stated": {"kind": stated.kind, "stated": stated.stated, "origin": stated.origin, **figures}}


# ----------------------------------------------------------------------------------------------
# value: a reported figure
# ----------------------------------------------------------------------------------------------
def value(stated: StatedClaim, measured: Measured, *, derived: float | None = None, z: float = Z,
          protocol_complete: bool = True, where: str = "") -> ClaimVerdict:
    """A reported figure S (with its own uncertainty u, ``uncertainty``) against the measured M +- se.

    The test: |S - M| > z sqrt(se^2 + u^2) disagrees. It detects a difference of (z + 0.84) sqrt(se^2 + u^2) with
    probability 0.8; when that is larger than the statement's ``resolution`` (default: half a unit of the figure's
    last reported digit) the test could not have told the figure from a wrong one, so agreement is inconclusive,
    never "agrees". ``protocol_complete`` False: the figure depends on what the paper does not give
    (``unknown``): a disagreement is then not a refutation (the claim's own code decides the protocol question)."""
    S = float(stated.stated)
    u = float(stated.get("uncertainty", 0.0))
    s = math.hypot(measured.se, u)
    detect = (z + Z_POWER) * s
    resolution = float(stated.get("resolution", half_unit(stated.stated)))
    figures = {"stated_value": S, "stated_uncertainty": u, "measured": measured.value, "measured_se": measured.se,
               "derived": derived, "detectable_difference": detect, "resolution": resolution, "z": z}
    ev = _ev(stated, **figures)
    at = f" at {where}" if where else ""
    gap = sides_disagree(derived, measured, z)
    if gap:
        return ClaimVerdict("inconclusive", reason(f"our derivation and our measurement disagree{at}: {gap}"),
                            evidence=ev)
    dist = _distance(S, measured.value, s)
    how = f" ({measured.how})" if measured.how else ""
    stated_number = Number(S, se=u, digits=5) if u else Number(S, digits=5)
    here = reason("the measured ", pm(measured.value, measured.se, digits=5), how, " is ",
                  relation(measured.value, S), " the stated ", stated_number, " by ", Number(dist, digits=3),
                  f" standard errors{at}")
    if dist > z:
        if not protocol_complete:
            return ClaimVerdict("inconclusive", here.add("; the paper does not give the whole protocol (",
                                                         ", ".join(stated.get("unknown", [])),
                                                         "), so the difference is not a refutation"), evidence=ev)
        return ClaimVerdict("refuted", here, condition=reason(
            f"{where or 'the stated protocol'}: measured ", pm(measured.value, measured.se, digits=5),
            " against the stated ", Number(S, digits=5), " (", Number(dist, digits=3), " standard errors, threshold ",
            Number(z), ")"), evidence=ev)
    if detect > resolution:
        return ClaimVerdict("inconclusive", here.add(
            "; the test detects only differences of ", Number(detect, digits=2), " (power 0.8), coarser than the "
            "statement's resolution ", Number(resolution, digits=2), ": it cannot tell the figure from a wrong one"),
            evidence=ev)
    return ClaimVerdict("holds", here.add("; the test would detect a difference of ", Number(detect, digits=2),
                                          " (power 0.8)"), evidence=ev)


def half_unit(x: Any) -> float:
    """Half a unit in the last digit of a reported figure as written (0.9965 -> 5e-5; 12 -> 0.5)."""
    text = repr(float(x)) if not isinstance(x, str) else x
    if "e" in text.lower():
        mant, exp = text.lower().split("e")
        return half_unit(mant) * 10 ** int(exp)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** (-decimals)


# ----------------------------------------------------------------------------------------------
# threshold: where a property switches
# ----------------------------------------------------------------------------------------------
def threshold(stated: StatedClaim, measured: Measured, *, derived: tuple[float, float] | None = None,
              where: str = "") -> ClaimVerdict:
    """A stated threshold T against the measured bracket [lo, hi] that contains the switch (``measured.interval``)
    and, when given, the derived (certified) enclosure of it.

    Refuted when T lies outside [lo, hi]; holds when T lies inside and the bracket is narrower than the statement's
    ``resolution`` (default 5 % of T: a threshold known to less than that is not confirmed by a wide bracket);
    inconclusive otherwise, or when the derived enclosure and the measured bracket do not overlap."""
    if measured.interval is None:
        raise ValueError("a threshold needs a measured bracket (Measured.interval)")
    T = float(stated.stated)
    lo, hi = measured.interval
    resolution = float(stated.get("resolution", 0.05 * abs(T)))
    ev = _ev(stated, stated_value=T, measured_bracket=[lo, hi], derived_enclosure=list(derived) if derived else None,
             resolution=resolution)
    at = f" ({where})" if where else ""
    if derived is not None and (derived[1] < lo or derived[0] > hi):
        return ClaimVerdict("inconclusive", f"our derivation and our measurement disagree{at}: the derived "
                            f"enclosure [{fmt(derived[0], 6)}, {fmt(derived[1], 6)}] lies outside the measured bracket "
                            f"[{fmt(lo, 6)}, {fmt(hi, 6)}] ({measured.how})", evidence=ev)
    bracket = f"the measured bracket [{fmt(lo, 5)}, {fmt(hi, 5)}] ({measured.how})"
    if T < lo or T > hi:
        edge = lo if T < lo else hi
        return ClaimVerdict("refuted", f"the stated {fmt(T, 5)} lies {relation(T, edge)} {bracket}{at}",
                            condition=f"the switch lies in [{fmt(lo, 5)}, {fmt(hi, 5)}]{at}, not at the stated "
                                      f"{fmt(T, 5)} (distance {fmt(abs(T - edge), 3)}, "
                                      f"{fmt(abs(T - edge) / (hi - lo), 3) if hi > lo else 'inf'} bracket widths)",
                            evidence=ev)
    if hi - lo > resolution:
        return ClaimVerdict("inconclusive", f"the stated {fmt(T, 5)} lies in {bracket}{at}, but the bracket is "
                            f"{fmt(hi - lo, 3)} wide, wider than the resolution {fmt(resolution, 3)}", evidence=ev)
    return ClaimVerdict("holds", f"the stated {fmt(T, 5)} lies in {bracket}{at}, {fmt(hi - lo, 3)} wide", evidence=ev)


# ----------------------------------------------------------------------------------------------
# rate: an exponent of a power law, or an exponential rate
# ----------------------------------------------------------------------------------------------
def stated_exponent(stated: StatedClaim, points: Sequence[float]) -> float:
    """The effective exponent of the stated rate over the measured ``points`` of its variable: the least-squares
    slope of log s against log v (``scale = "power"``) or against v (``"exponential"``), so that a rate with a
    logarithmic factor (sqrt(log(beta + 1)/beta)) is compared over the range where it was measured."""
    import numpy as np
    import sympy as sp

    from attnverify.checks.stated import parse_expression

    var = stated.get("variable")
    sym = sp.Symbol(var, positive=True)
    expr = parse_expression(stated.stated, {var: sym}, f"claim {stated.id!r}, field 'stated'")
    f = sp.lambdify(sym, sp.log(expr), "numpy")
    v = np.asarray(points, dtype=float)
    y = np.asarray(f(v), dtype=float) * np.ones_like(v)
    x = np.log(v) if stated.get("scale", "power") == "power" else v
    return float(np.polyfit(x, y, 1)[0])


def rate(stated: StatedClaim, measured: Measured, points: Sequence[float], *, derived: float | None = None,
         z: float = Z, what: str = "the quantity") -> ClaimVerdict:
    """A stated rate against the measured exponent (or exponential rate, as a slope: negative for decay) +- se
    over the variable's ``points``, and the derived one when given.

    ``direction = "upper"`` (an O(.) bound): holds when the measured slope is at most the stated one plus z se
    (decays at least as fast); the text says how much faster (looseness) when that is more than z se; refuted
    when it decays slower by more than z se. ``"exact"``: refuted when the two differ by more than z se."""
    var = stated.get("variable")
    p = stated_exponent(stated, points)
    m, se = measured.value, measured.se
    lo_v, hi_v = min(points), max(points)
    ev = _ev(stated, stated_slope=p, measured_slope=m, measured_se=se, derived_slope=derived,
             variable=var, range=[lo_v, hi_v], direction=stated.get("direction", "exact"),
             scale=stated.get("scale", "power"))
    gap = sides_disagree(derived, measured, z)
    if gap:
        return ClaimVerdict("inconclusive", f"our derivation and our measurement disagree on the rate of {what}: "
                            + gap, evidence=ev)
    unit = f"log {var}" if stated.get("scale", "power") == "power" else var
    over = f"over {var} = {fmt(lo_v)}..{fmt(hi_v)}"
    text = (f"{what} has slope {fmt(m, 4)} +- {fmt(se, 2)} in {unit} {over} ({measured.how}), "
            f"{relation(m, p, z * se)} the stated rate's {fmt(p, 4)}")
    if stated.get("direction", "exact") == "upper":
        if m > p + z * se:
            return ClaimVerdict("refuted", text + ": it decays slower than the stated bound allows",
                                condition=f"{over}: measured slope {fmt(m, 4)} +- {fmt(se, 2)} > stated {fmt(p, 4)} "
                                          f"({fmt((m - p) / se if se else math.inf, 3)} standard errors)", evidence=ev)
        if m < p - z * se:
            return ClaimVerdict("holds", text + f": the bound holds and is loose by a factor {var}^"
                                f"{fmt(m - p, 3)} over this range", evidence=ev)
        return ClaimVerdict("holds", text + ": the bound holds and is sharp over this range", evidence=ev)
    if abs(m - p) > z * se:
        return ClaimVerdict("refuted", text, condition=f"{over}: measured slope {fmt(m, 4)} +- {fmt(se, 2)} against "
                            f"the stated {fmt(p, 4)} ({fmt(abs(m - p) / se if se else math.inf, 3)} standard errors)",
                            evidence=ev)
    return ClaimVerdict("holds", text, evidence=ev)


# ----------------------------------------------------------------------------------------------
# formula: a stated closed form of a quantity
# ----------------------------------------------------------------------------------------------
def stated_expression(stated: StatedClaim, quantity: Any, options: dict) -> Any:
    """The stated formula as a SymPy expression in the quantity's symbols, its aliases (``w``) replaced by their
    derived expressions and the symbols fixed by ``at`` substituted (InputError naming the claim on a bad
    expression)."""
    import sympy as sp

    from attnverify.checks.stated import parse_expression

    alias_symbols = {name: sp.Symbol(name) for name in quantity.aliases}
    where = f"claim {stated.id!r}, field 'stated'"
    expr = parse_expression(stated.stated, {**quantity.symbols, **alias_symbols}, where)
    expr = expr.subs({alias_symbols[n]: f(**options) for n, f in quantity.aliases.items()})
    return expr.subs(fixed_symbols(quantity, stated))


def fixed_symbols(quantity: Any, stated: StatedClaim) -> dict:
    """The symbols a claim's ``at`` table fixes (symbol -> value)."""
    return {quantity.symbols[k]: v for k, v in stated.at.items() if k in quantity.symbols}


def formula(stated: StatedClaim, quantity: Any, options: dict, rng: Any, *, n_points: int = 48,
            n_confirm: int = 3, z: float = Z) -> ClaimVerdict:
    """A stated formula S against the derived D (``quantity.derive(**options)``) and the measurement.

    1. SymPy proves S = D identically: the formula holds if the measurement agrees with D at one sampled point
       (our derivation and our numerics agree); inconclusive if not.
    2. Otherwise S - D is evaluated in Arb ball arithmetic at ``n_points`` sampled points; a ball that excludes 0
       is a certified counterexample. At the (up to ``n_confirm``) points where S and D differ most, relative to
       D, the quantity is measured (M +- se): refuted at the first point where M agrees with what it estimates
       (D, or ``measured_as``) within z se and disagrees with S by more than z se plus the gap between D and
       ``measured_as``; inconclusive when no point resolves the difference, or when D and M disagree there.
    3. SymPy cannot decide and no point separates S from D: inconclusive, with the largest |S - D| bound found."""
    import numpy as np
    import sympy as sp

    from attnverify.theory.certified import interval_text
    from attnverify.theory.compare import equivalent, separate

    S = stated_expression(stated, quantity, options)
    fixed = fixed_symbols(quantity, stated)
    D = sp.sympify(quantity.derive(**options)).subs(fixed)
    ref = sp.sympify(quantity.measured_as(**options)).subs(fixed) if quantity.measured_as else D
    ev = _ev(stated, quantity=quantity.name, options={k: v for k, v in options.items()},
             stated_expression=sp.sstr(S), derived_expression=sp.sstr(D))
    fixed_values = {s.name: v for s, v in fixed.items()}
    points = quantity.sample(rng, n_points, fixed_values) if quantity.sample else []

    def measure_at(point: dict) -> tuple[Measured, float, float, float]:
        values = {**options, **point}
        subs = {quantity.symbols[k]: v for k, v in point.items() if k in quantity.symbols}
        m = quantity.measure(values, rng)
        return m, float(S.subs(subs)), float(D.subs(subs)), float(ref.subs(subs))

    def where(point: dict) -> str:
        return ", ".join(f"{k} = {fmt(v, 6)}" for k, v in point.items())

    if equivalent(S, D):
        if quantity.measure is None or not points:
            return ClaimVerdict("holds", "SymPy proves the stated formula identical to the derived one (no "
                                "measurement is available to confirm the derivation)", evidence=ev)
        m, _, d, r = measure_at(points[0])
        ev["stated"].update(point=points[0], measured=m.value, measured_se=m.se, derived=d)
        gap = sides_disagree(r, m, z, rtol=1e-12)
        if gap:
            return ClaimVerdict("inconclusive", f"SymPy proves the stated formula identical to the derived one, but "
                                f"at {where(points[0])} {gap}", evidence=ev)
        return ClaimVerdict("holds", f"SymPy proves the stated formula identical to the derived one; the measurement "
                            f"agrees at {where(points[0])} ({fmt(m.value, 6)} +- {fmt(m.se, 2)} against "
                            f"{fmt(r, 6)}, {m.how})", evidence=ev)
    syms = sorted((S - D).free_symbols | (ref - D).free_symbols, key=lambda s: s.name)
    seps = separate(S, D, [{s: p[s.name] for s in syms} for p in points])
    certified = [x for x in seps if x.certified]
    ev["stated"]["certified_points"] = len(certified)
    if not certified:
        worst = max((max(abs(x.lo), abs(x.hi)) for x in seps), default=0.0)
        return ClaimVerdict("inconclusive", f"SymPy could not prove the stated formula identical to the derived one, "
                            f"and no sampled point separates them (|stated - derived| <= {fmt(worst, 2)} at "
                            f"{len(seps)} points, Arb balls)", evidence=ev)
    if quantity.measure is None:
        top = certified[0]
        return ClaimVerdict("inconclusive", f"the stated formula differs from the derived one (certified: stated - "
                            f"derived in {interval_text(top.lo, top.hi)} at {where(top.point)}), but no "
                            f"measurement of {quantity.name} is available to confirm it", evidence=ev)
    scale = [abs(x.magnitude) / max(abs(x.b), 1e-300) for x in certified]
    order = list(np.argsort(scale)[::-1][:n_confirm])
    tried = []
    for i in order:
        point = {**certified[i].point, **{k: v for k, v in fixed_values.items() if k not in certified[i].point}}
        m, s_val, d_val, r_val = measure_at(point)
        tried.append({"point": point, "stated": s_val, "derived": d_val, "measured": m.value, "se": m.se})
        gap = sides_disagree(r_val, m, z, rtol=1e-12)
        if gap:
            ev["stated"]["tried"] = tried
            return ClaimVerdict("inconclusive", f"at {where(point)} {gap}: the stated formula cannot be judged",
                                evidence=ev)
        allowance = abs(r_val - d_val)
        dist = (abs(s_val - m.value) - allowance) / m.se if m.se > 0 else math.inf
        if dist > z:
            ev["stated"]["tried"] = tried
            c = certified[i]
            return ClaimVerdict(
                "refuted", f"the stated formula is not the derived one: at {where(point)} stated - derived lies in "
                f"{interval_text(c.lo, c.hi)} (Arb, certified, printed outward), and the measurement {fmt(m.value, 6)} +- "
                f"{fmt(m.se, 2)} ({m.how}) agrees with the derivation and is {fmt(dist, 3)} standard errors from "
                f"the stated value",
                condition=f"{where(point)}: stated {fmt(s_val, 6)}, derived {fmt(d_val, 6)}, measured "
                          f"{fmt(m.value, 6)} +- {fmt(m.se, 2)} ({fmt(dist, 3)} standard errors from the stated "
                          "value)", evidence=ev)
    ev["stated"]["tried"] = tried
    best = tried[0]
    return ClaimVerdict("inconclusive", f"the stated formula differs from the derived one (certified at "
                        f"{len(certified)} points; e.g. {where(best['point'])}: stated {fmt(best['stated'], 6)}, "
                        f"derived {fmt(best['derived'], 6)}), but the measurement (+- {fmt(best['se'], 2)}) does not "
                        f"resolve the difference at the {len(tried)} points tried", evidence=ev)
