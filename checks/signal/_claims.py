"""Pieces shared by Paper A's claims: the quantity a formula claim states, its model options from the claim's ``at``
table, and the ranges of signal strength a qualitative claim's ``target`` may name."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from attnverify.checks.claims import ClaimVerdict


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


@dataclass(frozen=True)
class Range:
    """A range of signal strength theta a claim is stated on: theta > low (``low`` = 0: every theta > 0) and
    theta < high (``high`` = inf: no upper end)."""

    low: float = 0.0
    high: float = math.inf

    def __contains__(self, theta: float) -> bool:
        return self.low < theta < self.high

    def text(self) -> str:
        if self.low == 0 and math.isinf(self.high):
            return "every theta > 0"
        parts = ([f"theta > {self.low:g}"] if self.low > 0 else []) + (
            [f"theta < {self.high:g}"] if math.isfinite(self.high) else [])
        return " and ".join(parts)

    @property
    def unbounded(self) -> bool:
        return self.low == 0 and math.isinf(self.high)


_BOUND = re.compile(r"^theta\s*(<=|<|>=|>)\s*([0-9.eE+-]+)$")


def parse_range(parts: list[str], where: str) -> Range:
    """A Range from clauses like ``theta > 1.5`` and ``theta < 3`` (empty: every theta); ValueError naming the
    clause otherwise (the claim's row then says why it was not judged)."""
    low, high = 0.0, math.inf
    for part in (p.strip() for p in parts if p.strip()):
        m = _BOUND.match(part)
        if not m:
            raise ValueError(f"{where}: target clause {part!r} is not 'theta > X' or 'theta < X'")
        value = float(m.group(2))
        if m.group(1) in (">", ">="):
            low = max(low, value)
        else:
            high = min(high, value)
    return Range(low, high)
