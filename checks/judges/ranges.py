"""The range of one model parameter a qualitative claim is stated on, from its ``target`` clauses (``theta > 1.5``,
``lam < 0.9``): shared by the papers whose claims hold on a range of a parameter (Paper A's signal strength theta,
Paper C's temperature lam)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """``variable`` > ``low`` (0: every value > 0) and ``variable`` < ``high`` (inf: no upper end)."""

    low: float = 0.0
    high: float = math.inf
    variable: str = "theta"

    def __contains__(self, value: float) -> bool:
        return self.low < value < self.high

    def text(self) -> str:
        if self.unbounded:
            return f"every {self.variable} > 0"
        parts = ([f"{self.variable} > {self.low:g}"] if self.low > 0 else []) + (
            [f"{self.variable} < {self.high:g}"] if math.isfinite(self.high) else [])
        return " and ".join(parts)

    @property
    def unbounded(self) -> bool:
        return self.low == 0 and math.isinf(self.high)


def parse_range(parts: list[str], where: str, variable: str = "theta") -> Range:
    """A Range from clauses like ``theta > 1.5`` and ``theta < 3`` (empty: every value); ValueError naming the
    clause otherwise (the claim's row then says why it was not judged)."""
    bound = re.compile(rf"^{re.escape(variable)}\s*(<=|<|>=|>)\s*([0-9.eE+-]+)$")
    low, high = 0.0, math.inf
    for part in (p.strip() for p in parts if p.strip()):
        m = bound.match(part)
        if not m:
            raise ValueError(f"{where}: target clause {part!r} is not '{variable} > X' or '{variable} < X'")
        try:
            value = float(m.group(2))
        except ValueError:
            raise ValueError(f"{where}: target clause {part!r}: {m.group(2)!r} is not a number") from None
        if m.group(1) in (">", ">="):
            low = max(low, value)
        else:
            high = min(high, value)
    if low >= high:
        raise ValueError(f"{where}: no {variable} satisfies {' and '.join(p.strip() for p in parts if p.strip())} "
                         f"(the range is empty; {variable} > 0)")
    return Range(low, high, variable)
