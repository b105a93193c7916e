"""What every judge shares: the decision level ``Z`` and the power convention, a measured number or bracket
(:class:`Measured`), and the sentences that state a comparison, each computed from the numbers it describes
(:func:`relation`, :func:`ratio_text`, :func:`sides_disagree`, :func:`disagreement`).

Agreement and disagreement are decided at ``Z`` = 3 standard errors (a two-sided false-alarm rate of 0.27 % per
comparison under a normal error). A test's power is reported as the difference it detects with probability 0.8:
(Z + 0.84) standard errors."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.reason import Number, Reason, as_reason, bracket, item, pm, reason
from attnverify.checks.stated import StatedClaim

Z = 3.0
Z_POWER = 0.8416          # the one-sided normal quantile of 0.8: a difference of (Z + Z_POWER) se is seen 80 % of the time


@dataclass(frozen=True)
class Measured:
    """A measured number with its standard error (``se`` = 0 for an exact or certified computation), or a measured
    bracket ``interval`` = (lo, hi) that contains the quantity, and how it was measured (``how``: one phrase, a
    :class:`~attnverify.checks.reason.Reason` with its mathematics and numbers typed, or a ``str`` of words; the
    judges put its parts into their reason: :func:`how_parts`)."""

    value: float
    se: float = 0.0
    how: str | Reason = ""
    interval: tuple[float, float] | None = None
    details: dict = field(default_factory=dict)


def fmt(x: float, digits: int = 4) -> str:
    """A number as text with ``digits`` significant digits (``n/a`` for None or a non-finite value)."""
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    return f"{float(x):.{digits}g}"


#: names a user types for a Greek letter that Python cannot take (``lambda`` is a keyword; ``eps`` is the habit):
#: a point's name is shown as the letter
TYPED_GREEK = {"lam": "lambda", "eps": "epsilon"}


def symbol_math(key: str, symbols: dict | None = None) -> Any:
    """The parameter ``key`` as mathematics: its SymPy symbol in ``symbols`` where given, a typed-out Greek name
    (``lam``, ``eps``) as the letter."""
    import sympy as sp

    from attnverify.checks.reason import Math

    name = (symbols or {}).get(key, sp.Symbol(key)).name
    return Math(sp.Symbol(TYPED_GREEK.get(name, name)))


def point_parts(point: dict, digits: int = 4, symbols: dict | None = None) -> tuple:
    """The parts naming a point: ``beta = 0.79, sigma = inf`` with each name as mathematics (:func:`symbol_math`)
    and each value a Number (a Reason's parts: :mod:`attnverify.checks.reason`)."""
    import sympy as sp

    from attnverify.checks.reason import Math, Number, item

    out: list = []
    for i, (k, v) in enumerate(point.items()):
        value = Math(sp.oo) if math.isinf(float(v)) else Number(float(v), digits=digits)
        out += [", "] * bool(i) + [symbol_math(k, symbols), " = ", value]
    return item(*out)


def fmt_apart(a: float, b: float, digits: int = 6) -> tuple[str, str]:
    """``a`` and ``b`` as text with at least ``digits`` significant digits and as many more (up to 17) as it takes
    to print different numbers differently: two numbers said to differ never read the same."""
    for n in range(digits, 18):
        ta, tb = fmt(a, n), fmt(b, n)
        if ta != tb or a == b:
            return ta, tb
    return fmt(a, 17), fmt(b, 17)


def values_text(values: Any, digits: int = 4) -> str:
    """A list of tested values as text, each value named once, in the order first seen."""
    seen: list[str] = []
    for v in values:
        t = fmt(v, digits) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
        if t not in seen:
            seen.append(t)
    return ", ".join(seen)


def relation(a: float, b: float, tol: float = 0.0) -> str:
    """The word that relates ``a`` to ``b``: "below", "above" or "equal to" (within ``tol``)."""
    if abs(a - b) <= tol:
        return "equal to" if tol == 0 else "within the uncertainty of"
    return "below" if a < b else "above"


def ratio_text(a: float, b: float) -> str:
    """``a`` relative to ``b`` as text: "1.31 times", computed."""
    return "n/a" if b == 0 else f"{a / b:.3g} times"


def distance(a: float, b: float, se: float) -> float:
    return math.inf if se == 0 and a != b else (0.0 if a == b else abs(a - b) / se)


def how_parts(measured: Measured, *, brackets: bool = True) -> tuple:
    """The parts of ``measured.how`` for a judge's reason, kept typed: `` (how)`` (``brackets``) or the phrase
    alone; none for an empty phrase. A phrase given with items has them after its lead, joined by "; "."""
    phrase = as_reason(measured.how)
    if not phrase:
        return ()
    parts = item(*phrase.lead, *(p for it in phrase.items for p in ("; ", *it)))
    return item(" (", *parts, ")") if brackets else parts


def sides_disagree(derived: float | None, measured: Measured, z: float = Z, rtol: float = 0.0, *,
                   what: str = "the derived value") -> Reason | None:
    """When the derived value lies outside the measured value's z-band (or its bracket): the reason text (a Reason,
    ``what`` naming the derived side), else None. ``rtol`` allows for the derived value's own relative precision."""
    if derived is None:
        return None
    if not math.isfinite(derived):      # never "agrees": inf - inf and rtol * inf would let it pass as agreement
        return reason(what, " is not a finite double here (", Number(derived), ": beyond double precision, or "
                      "undefined), so it cannot be compared with the measured ",
                      *((bracket(*measured.interval, digits=6),) if measured.interval is not None
                        else (pm(measured.value, measured.se, digits=6),)), *how_parts(measured))
    if measured.interval is not None:
        lo, hi = measured.interval
        if lo - rtol * abs(derived) <= derived <= hi + rtol * abs(derived):
            return None
        return reason(what, " ", Number(derived, digits=6), " lies outside the measured bracket ",
                      bracket(lo, hi, digits=6), *how_parts(measured))
    if abs(derived - measured.value) <= z * measured.se + rtol * abs(derived):
        return None
    return reason(what, " ", Number(derived, digits=6), " and the measured ", pm(measured.value, measured.se, digits=6),
                  *how_parts(measured), " differ by ", Number(distance(derived, measured.value, measured.se), digits=3),
                  " standard errors")


def disagreement(derived: float | None, where: str = "") -> str:
    """The words before :func:`sides_disagree`'s reason: a disagreement of our two sides, or, for a derived value
    that is not a finite double, that they cannot be compared (``where``: " at ..." or "")."""
    if derived is not None and not math.isfinite(derived):
        return f"our derivation cannot be compared with our measurement{where}: "
    return f"our derivation and our measurement disagree{where}: "


def evidence_of(stated: StatedClaim, **figures: Any) -> dict:
    """The judge's evidence record: the stated side (kind, form, origin) and the figures it was judged on."""
    return {"stated": {"kind": stated.kind, "stated": stated.stated, "origin": stated.origin, **figures}}


def direction_violation(direction: str, lo: float, hi: float, stated: float) -> str | None:
    """Where a measured slope interval [lo, hi] leaves a stated slope (a rate as a slope, negative for decay), read
    with the statement's ``direction``: ``"slower"`` when lo > stated (the quantity decays slower: refutes an
    ``"upper"`` (O(.)) bound and an ``"exact"`` rate), ``"faster"`` when hi < stated (refutes a ``"lower"`` bound and
    an ``"exact"`` rate), None when the direction allows what was measured."""
    if direction in ("upper", "exact") and lo > stated:
        return "slower"
    if direction in ("lower", "exact") and hi < stated:
        return "faster"
    return None
