"""The judge of a stated threshold (``kind = "threshold"``): where a property switches, against the measured
bracket that contains the switch and the derived (certified) enclosure."""
from __future__ import annotations

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Measured, evidence_of, how_parts, relation
from attnverify.checks.reason import Number, bracket, reason
from attnverify.checks.stated import StatedClaim


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
    ev = evidence_of(stated, stated_value=T, measured_bracket=[lo, hi], derived_enclosure=list(derived) if derived else None,
             resolution=resolution)
    at = f" ({where})" if where else ""
    measured_bracket = ("the measured bracket ", bracket(lo, hi, digits=5), *how_parts(measured))
    if derived is not None and (derived[1] < lo or derived[0] > hi):
        return ClaimVerdict("inconclusive", reason(
            f"our derivation and our measurement disagree{at}: the derived enclosure ",
            bracket(*derived, digits=6), " lies outside ", *measured_bracket), evidence=ev)
    stated_number = Number(T, digits=5)
    if T < lo or T > hi:
        edge = lo if T < lo else hi
        widths = abs(T - edge) / (hi - lo) if hi > lo else float("inf")
        return ClaimVerdict("refuted", reason("the stated ", stated_number, f" lies {relation(T, edge)} ",
                                              *measured_bracket, at),
                            condition=reason("the switch lies in ", bracket(lo, hi, digits=5), f"{at}, not at the "
                                             "stated ", stated_number, " (distance ", Number(abs(T - edge), digits=3),
                                             ", ", Number(widths, digits=3), " bracket widths)"),
                            evidence=ev)
    if hi - lo > resolution:
        return ClaimVerdict("inconclusive", reason("the stated ", stated_number, " lies in ", *measured_bracket, at,
                                                   ", but the bracket is ", Number(hi - lo, digits=3), " wide, wider "
                                                   "than the resolution ", Number(resolution, digits=3)), evidence=ev)
    return ClaimVerdict("holds", reason("the stated ", stated_number, " lies in ", *measured_bracket, at, ", ",
                                        Number(hi - lo, digits=3), " wide"), evidence=ev)
