"""The judge of a stated threshold (``kind = "threshold"``): where a property switches, against the measured
bracket that contains the switch and the derived (certified) enclosure."""
from __future__ import annotations

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Measured, evidence_of, fmt, relation
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
