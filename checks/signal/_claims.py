"""Pieces shared by Paper A's claims: the quantity a formula claim states, its model options from the claim's ``at``
table, and the ranges of signal strength a qualitative claim's ``target`` may name (attnverify.checks.judges.ranges)."""
from __future__ import annotations

from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.ranges import Range, parse_range

__all__ = ["Range", "options_of", "parse_range", "quantity", "with_confirmation"]


def quantity(name: str) -> Any:
    """Paper A's quantity ``name`` (attnverify.checks.signal.quantities)."""
    from attnverify.checks.signal.quantities import quantities

    found = {q.name: q for q in quantities()}
    if name not in found:
        raise KeyError(f"Paper A has no quantity {name!r} (known: {', '.join(found)})")
    return found[name]


def options_of(q: Any, stated: Any) -> dict:
    """The quantity's model options: those the claim's ``at`` table gives, the defaults for the others."""
    return {p.name: p.read(stated.at[p.name]) if p.name in stated.at else p.validate(p.default) for p in q.options}


def with_confirmation(verdict: ClaimVerdict, text: str, figures: dict, source: str) -> ClaimVerdict:
    """``verdict`` with the check's confirmation (derived and measured agree) appended to its reason and its figures
    added to the evidence under ``source``."""
    return ClaimVerdict(verdict.verdict, f"{verdict.reason}; {text}", verdict.condition,
                        {**verdict.evidence, source: figures})
