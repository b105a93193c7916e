"""The judge of a reported figure (``kind = "value"``): the stated number with its own uncertainty against the
measured one, refuted only when the protocol is complete and the difference is resolved.

Its text is a structured :class:`~attnverify.checks.reason.Reason` (the worked example of docs/reasons.md): the
numbers are typed parts, printed with the digits that tell them apart."""
from __future__ import annotations

import math
from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import (Z, Z_POWER, Measured, disagreement, distance, evidence_of, how_parts,
                                             relation, sides_disagree)
from attnverify.checks.reason import Number, pm, reason
from attnverify.checks.stated import StatedClaim


def value(stated: StatedClaim, measured: Measured, *, derived: float | None = None, z: float = Z,
          protocol_complete: bool = True, where: str = "") -> ClaimVerdict:
    """A reported figure S (with its own uncertainty u, ``uncertainty``) against the measured M +- se.

    The test: |S - M| > z sqrt(se^2 + u^2) disagrees. It detects a difference of (z + 0.84) sqrt(se^2 + u^2) with
    probability 0.8; when that is larger than the statement's ``resolution`` (default: half a unit of the figure's
    last reported digit, no finer than a few units in the last place of its double: :func:`half_unit`) the test
    could not have told the figure from a wrong one, so agreement is inconclusive, never "agrees".
    ``protocol_complete`` False: the figure depends on what the paper does not give (``unknown``): a disagreement is then not a refutation (the claim's own code decides the protocol question)."""
    S = float(stated.stated)
    u = float(stated.get("uncertainty", 0.0))
    s = math.hypot(measured.se, u)
    detect = (z + Z_POWER) * s
    resolution = float(stated.get("resolution", half_unit(stated.stated)))
    figures = {"stated_value": S, "stated_uncertainty": u, "measured": measured.value, "measured_se": measured.se,
               "derived": derived, "detectable_difference": detect, "resolution": resolution, "z": z}
    ev = evidence_of(stated, **figures)
    at = f" at {where}" if where else ""
    gap = sides_disagree(derived, measured, z)
    if gap:
        return ClaimVerdict("inconclusive", reason(disagreement(derived, at), gap),
                            evidence=ev)
    dist = distance(S, measured.value, s)
    stated_number = Number(S, se=u, digits=5) if u else Number(S, digits=5)
    here = reason("the measured ", pm(measured.value, measured.se, digits=5), *how_parts(measured), " is ",
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


#: a figure's resolution is never finer than this many units in the last place of its double: a figure typed at
#: full double precision (17 significant digits) carries the rounding of the computation that printed it
FLOAT_ULPS = 4


def half_unit(x: Any) -> float:
    """Half a unit in the last digit of a reported figure as written (0.9965 -> 5e-5; 12.5 -> 0.05), and never less
    than FLOAT_ULPS units in the last place of the figure as a double (0.5262541833393397, written to 16 decimals,
    -> 4 ulp = 4.4e-16, not 5e-17): below that, digits are floating-point rounding, not a statement."""
    return max(_half_digit(x), FLOAT_ULPS * math.ulp(float(x)))


def _half_digit(x: Any) -> float:
    """Half a unit in the last digit of ``x`` as written (its repr for a number)."""
    text = repr(float(x)) if not isinstance(x, str) else x
    if "e" in text.lower():
        mant, exp = text.lower().split("e")
        return _half_digit(mant) * 10 ** int(exp)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** (-decimals)
