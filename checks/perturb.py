"""The self-test material of a paper, as data, and its building blocks.

* :class:`Mutant`: a deliberately wrong closed form or simulator, given to the checks that should catch it as the
  argument they receive (``Context.theory`` / ``Context.numerics``): no module is patched.
* :class:`Family`: a way to perturb the analytic side by a size delta (the power self-test); :class:`PowerRow`:
  one (check, family) row of the power table; :class:`Perturbation`: a changed stated form (the claim self-test).
* Wrappers that build a wrong function from a right one (its result scaled, one entry of its dict scaled): the
  ``make`` of a mutant that replaces one function of what a check receives.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ----------------------------------------------------------------------------------------------
# the material
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """A named wrong version of what some checks receive, and the checks that should catch it.

    ``target`` is the argument it replaces: ``"theory"`` (the closed forms a check receives as ``ctx.theory``) or
    ``"numerics"`` (its simulators, ``ctx.numerics``); ``make(original)`` returns the replacement, built from the
    original object (e.g. ``original.replace(reduced_field=wrong)``). ``equivalent`` is empty, or the proof that the
    mutated statement is still true for every admissible input (an equivalent mutant: no correct check can reject
    it, so it is run and reported but not counted against the checks). ``known_gap`` is empty, or the measured reason
    why no check catches this non-equivalent mutant in the quick profile (reported, and the self-test's all-caught
    figure says so)."""

    name: str
    make: Callable[[Any], Any]
    checks: tuple[str, ...]
    description: str
    target: str = "theory"
    equivalent: str = ""
    known_gap: str = ""

    def __post_init__(self) -> None:
        if self.target not in ("theory", "numerics"):
            raise TypeError(f"mutant {self.name}: target must be 'theory' or 'numerics', got {self.target!r}")


@dataclass(frozen=True)
class Family:
    """A way to perturb the analytic side by a size delta: ``build(delta)`` (or ``build(delta, params)`` for the
    ``regime`` kind, which needs the check's parameters) gives the :class:`Mutant` replacements for a signed delta.

    ``kind``: ``"scale"`` / ``"mismatch"`` walk the ladder of deltas with both signs; ``"fixed"`` (one wrong closed
    form) and ``"regime"`` (the theory on the other side of a threshold) ignore delta."""

    name: str
    kind: str
    description: str
    build: Callable[..., list[Mutant]]

    def mutants(self, delta: float, params: dict | None = None) -> list[Mutant]:
        if self.kind == "regime":
            return self.build(delta, params)
        return self.build(delta)

    @property
    def laddered(self) -> bool:
        return self.kind in ("scale", "mismatch")


@dataclass(frozen=True)
class Perturbation:
    """A changed stated form for the claim self-test: ``stated`` (a StatedClaim), its ``name`` and size ``delta``
    (None for a one-off change), and ``wrong``: whether the changed statement is false (a tighter bound, another
    figure) and so should be refuted, or still true (a looser bound: it must not be refuted)."""

    name: str
    delta: float | None
    stated: Any
    wrong: bool = True


@dataclass(frozen=True)
class PowerRow:
    """A (check, family) row of the power table: ``target`` the required MDP (None: measured only), or
    ``not_applicable`` with the reason the family cannot move this check's verdict by design. With ``claim``, a
    run rejects when that claim's verdict (from this check's evidence) is ``refuted``, not when the check fails."""

    check: str
    family: str
    target: float | None = None
    not_applicable: str = ""
    smoke: bool = False
    claim: str = ""


# ----------------------------------------------------------------------------------------------
# wrappers
# ----------------------------------------------------------------------------------------------
def scale_result(factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's result times ``factor`` (SymPy expressions, matrices, arrays, floats)."""
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def scaled(*args, **kwargs):
            return original(*args, **kwargs) * factor
        return scaled
    return make


def scale_entry(key: str, factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's dict result with entry ``key`` times ``factor``."""
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def scaled(*args, **kwargs):
            out = dict(original(*args, **kwargs))
            out[key] = out[key] * factor
            return out
        return scaled
    return make
