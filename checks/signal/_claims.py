"""Pieces shared by Paper A's claims: the quantity a formula claim states, its model options from the claim's ``at``
table, the ranges of signal strength a qualitative claim's ``target`` may name (attnverify.checks.judges.ranges), and
the typed parts their reasons are built from (attnverify.checks.reason)."""
from __future__ import annotations

from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.ranges import Range, parse_range
from attnverify.checks.reason import Reason, as_reason, reason

__all__ = ["Range", "options_of", "parse_range", "quantity", "then", "with_confirmation"]


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


def then(first: Any, more: Any) -> Reason:
    """``first`` (a Reason or str) followed by ``more`` after "; ", as the text ``f"{first}; {more}"`` read: after
    the lead, or as one more item when ``first`` ends in items."""
    first, more = as_reason(first) or Reason(), as_reason(more) or Reason()
    if first.items:
        return Reason(first.lead, (*first.items, more.lead, *more.items))
    return reason(first, "; ", more, items=more.items)


def with_confirmation(verdict: ClaimVerdict, text: str | Reason, figures: dict, source: str) -> ClaimVerdict:
    """``verdict`` with the check's confirmation (derived and measured agree) appended to its reason and its figures
    added to the evidence under ``source``."""
    return ClaimVerdict(verdict.verdict, then(verdict.reason, text), verdict.condition,
                        {**verdict.evidence, source: figures})
