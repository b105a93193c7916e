"""A reported figure read as what it is: a number printed to a resolution. A figure S that lies within its
resolution r (the statement's ``resolution``, default half a unit of its last printed digit, and no finer than a
few units in the last place of its double: :func:`~attnverify.checks.judges.value_judge.half_unit`) of the
derived value D agrees with D as far as the figure can say, |S - D| <= r; when the measurement agrees with D as well
(within z se), the figure holds, however small the measurement's standard error: a figure 0.3333 of 1/3 is not refuted at
thousands of standard errors of an exact computation. Otherwise the ordinary value rule decides
(:func:`attnverify.checks.judges.value`)."""
from __future__ import annotations

import math

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Z, Measured, distance, evidence_of, how_parts, sides_disagree
from attnverify.checks.reason import Math, Number, item, pm, reason
from attnverify.checks.reason_values import number_or_na
from attnverify.checks.judges.value_judge import half_unit
from attnverify.checks.stated import StatedClaim


#: the derived value's own relative precision (a float closed form): a measurement this close agrees with it
DERIVED_RTOL = 1e-12


def within_rounding(stated: StatedClaim, measured: Measured, derived: float, *, z: float = Z,
                    where: str = "") -> ClaimVerdict | None:
    """``holds`` when the figure is the derived value to within its resolution and the measurement agrees with the
    derived value; None when this rule does not decide (module docstring)."""
    S = float(stated.stated)
    resolution = float(stated.get("resolution", half_unit(stated.stated)))
    if abs(S - derived) > resolution or sides_disagree(derived, measured, z, rtol=DERIVED_RTOL):
        return None
    gap = abs(measured.value - derived)
    allowed = z * measured.se + DERIVED_RTOL * abs(derived)          # what sides_disagree allows
    how_close = ("",) if measured.interval is not None or gap <= z * measured.se else (
        " to within the derived value's own floating-point precision (", Number(gap, digits=2), " apart, at most ",
        Number(allowed, digits=2), " allowed: ", Number(z, digits=2), " standard errors and ",
        Number(DERIVED_RTOL, digits=2), " of the derived value; ",
        Number(distance(derived, measured.value, measured.se), digits=3), " standard errors apart)")
    at = f" at {where}" if where else ""
    ev = evidence_of(stated, stated_value=S, derived=derived, measured=measured.value, measured_se=measured.se,
                     resolution=resolution, z=z)
    return ClaimVerdict("holds", reason("the stated ", number_or_na(S, 8), " is the derived ", number_or_na(derived, 8),
                                        " to within its resolution ", number_or_na(resolution, 2), at, ", and the measured ",
                                        _measured(measured), *how_parts(measured), " agrees with the derived value",
                                        *how_close),
                        evidence=ev)


def _measured(measured: Measured) -> tuple:
    """The measured value with its standard error (value ± se), "n/a" where either is None or non-finite."""
    v, se = measured.value, measured.se
    if v is not None and se is not None and math.isfinite(float(v)) and math.isfinite(float(se)) and se >= 0:
        return item(pm(v, se, digits=8))
    return item(number_or_na(v, 8), " ", Math(r"\pm"), " ", number_or_na(se, 2))
