"""The mutant catalogue of ``attnverify selftest --mutants``: every registered paper's mutants (``Paper.mutants``),
deliberately wrong closed forms and implementations, each naming the checks expected to catch it."""
from __future__ import annotations

from attnverify.checks.plugin import Mutant

# Mutants that no check catches in the quick profile although they are not equivalent, and why (measured; see the
# selftest report).
KNOWN_GAPS: dict[str, str] = {
    "particle_softmax_no_max_subtraction": (
        "its overflow makes meanfield.w2_bound raise FloatingPointError, and an exception is never a detection "
        "(attnverify.mutation.rejects); meanfield.terminal_phase passes. It is caught again when w2_bound judges a "
        "non-finite particle simulation as a disagreement with its finite closed form (a fail), as "
        "signal.low_temperature does"),
}


def all_mutants() -> tuple[Mutant, ...]:
    """Every registered paper's mutants, papers in key order."""
    from attnverify.checks.registry import papers

    out = tuple(m for paper in papers() for m in paper.mutants())
    names = [m.name for m in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"two mutants share a name: {', '.join(dupes)}")
    return out


def by_name(name: str) -> Mutant:
    """The mutant called ``name`` (ValueError naming the known ones otherwise)."""
    from attnverify.checks.framework import did_you_mean

    mutants = all_mutants()
    for m in mutants:
        if m.name == name:
            return m
    names = [m.name for m in mutants]
    raise ValueError(f"unknown mutant {name!r}{did_you_mean(name, names)} (known: {', '.join(names)})")
