"""A measurement whose sample size grows until it resolves a difference, within a budget counted in work (calls of
the quantity's ``measure``), never in seconds, so the same seed gives the same verdict on any machine.

A Monte Carlo measurement ``measure(values, rng)`` returns a mean M_i with standard error se_i; k independent calls
(the rng advances between them) are pooled as their mean, M = (1/k) sum M_i, with se = sqrt(sum se_i^2) / k: k
times the sample size, se shrinking like 1/sqrt(k). A quantity declares how many calls may be pooled
(``Quantity.repeats``; 1 for a deterministic measurement, whose repetition would only repeat its error).

How many calls a difference g needs: with se_1 the standard error of one call, k calls give se_1/sqrt(k), and a
difference g is seen at Z standard errors with high probability once g >= (Z + MARGIN) se, i.e.
k >= ((Z + MARGIN) se_1 / g)^2 (:func:`calls_needed`); MARGIN = 2 puts the expected z two standard errors past the
decision level (detection about 98 % of the time).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.judges.common import Z, Measured
from attnverify.checks.reason import as_reason

MARGIN = 2.0


@dataclass
class Pool:
    """The calls of one measurement at one point, pooled (module docstring)."""

    values: dict
    calls: list = field(default_factory=list)

    def add(self, m: Measured) -> None:
        self.calls.append(m)

    @property
    def k(self) -> int:
        return len(self.calls)

    def measured(self) -> Measured:
        """The pooled measurement: the mean of the calls, se = sqrt(sum se_i^2)/k, the phrase of the first call with
        the number of calls pooled."""
        first = self.calls[0]
        if self.k == 1:
            return first
        mean = math.fsum(m.value for m in self.calls) / self.k
        se = math.sqrt(math.fsum(m.se**2 for m in self.calls)) / self.k
        return Measured(mean, se, as_reason(first.how) + f", pooled over {self.k} independent runs", first.interval,
                        dict(first.details))


def calls_needed(se_one: float, gap: float, z: float = Z) -> float:
    """Calls of a measurement with standard error ``se_one`` per call that resolve a difference ``gap`` at z
    standard errors with margin MARGIN (module docstring); inf when the gap is 0, 1 when se_one is 0."""
    if se_one <= 0:
        return 1.0
    if gap <= 0:
        return math.inf
    return ((z + MARGIN) * se_one / gap) ** 2


def grow(pool: Pool, measure: Callable[[dict, Any], Measured], rng: Any, gap: float, limit: int,
         z: float = Z) -> Measured:
    """Add calls to ``pool`` until it holds as many as the gap needs (:func:`calls_needed`, from the pooled se so far)
    or ``limit`` calls; the pooled measurement. A pool whose first call has se 0 is never grown."""
    if pool.k == 0:
        pool.add(measure(pool.values, rng))
    while pool.k < limit:
        m = pool.measured()
        if m.se <= 0:
            break
        need = calls_needed(m.se * math.sqrt(pool.k), gap, z)
        if need <= pool.k:
            break
        target = min(limit, int(math.ceil(need)))
        while pool.k < target:
            pool.add(measure(pool.values, rng))
        if target == limit:
            break
    return pool.measured()
