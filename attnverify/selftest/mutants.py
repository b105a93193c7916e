"""The mutant catalogue of ``attnverify selftest --mutants``: every registered paper's mutants (``Paper.mutants``),
deliberately wrong closed forms and implementations, each naming the checks expected to catch it."""
from __future__ import annotations

from attnverify.checks.plugin import Mutant

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
    from attnverify.checks.params import did_you_mean

    mutants = all_mutants()
    for m in mutants:
        if m.name == name:
            return m
    names = [m.name for m in mutants]
    raise ValueError(f"unknown mutant {name!r}{did_you_mean(name, names)} (known: {', '.join(names)})")


def known_gaps() -> dict[str, str]:
    """Mutants that no check catches in the quick profile although they are not equivalent, and why (measured;
    each paper states them on its mutants)."""
    return {m.name: m.known_gap for m in all_mutants() if m.known_gap}
