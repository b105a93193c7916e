"""The judge of a reported figure (``kind = "value"``): the stated number with its own uncertainty against the
measured one, refuted only when the protocol is complete and the difference is resolved."""
from __future__ import annotations

import math
from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Z, Z_POWER, Measured, distance, evidence_of, fmt, relation, sides_disagree
from attnverify.checks.stated import StatedClaim


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
    ev = evidence_of(stated, **figures)
    at = f" at {where}" if where else ""
    gap = sides_disagree(derived, measured, z)
    if gap:
        return ClaimVerdict("inconclusive", f"our derivation and our measurement disagree{at}: {gap}", evidence=ev)
    dist = distance(S, measured.value, s)
    here = (f"the measured {fmt(measured.value, 5)} +- {fmt(measured.se, 2)} ({measured.how}) is "
            f"{relation(measured.value, S)} the stated {fmt(S, 5)}" + (f" +- {fmt(u, 2)}" if u else "")
            + f" by {fmt(dist, 3)} standard errors{at}")
    if dist > z:
        if not protocol_complete:
            return ClaimVerdict("inconclusive", here + "; the paper does not give the whole protocol ("
                                + ", ".join(stated.get("unknown", [])) + "), so the difference is not a refutation",
                                evidence=ev)
        return ClaimVerdict("refuted", here, condition=f"{where or 'the stated protocol'}: measured "
                            f"{fmt(measured.value, 5)} +- {fmt(measured.se, 2)} against the stated {fmt(S, 5)} "
                            f"({fmt(dist, 3)} standard errors, threshold {z:g})", evidence=ev)
    if detect > resolution:
        return ClaimVerdict("inconclusive", here + f"; the test detects only differences of {fmt(detect, 2)} "
                            f"(power 0.8), coarser than the statement's resolution {fmt(resolution, 2)}: it cannot "
                            f"tell the figure from a wrong one", evidence=ev)
    return ClaimVerdict("holds", here + f"; the test would detect a difference of {fmt(detect, 2)} (power 0.8)",
                        evidence=ev)


def half_unit(x: Any) -> float:
    """Half a unit in the last digit of a reported figure as written (0.9965 -> 5e-5; 12 -> 0.5)."""
    text = repr(float(x)) if not isinstance(x, str) else x
    if "e" in text.lower():
        mant, exp = text.lower().split("e")
        return half_unit(mant) * 10 ** int(exp)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** (-decimals)
