"""The example's self-test material: one mutant, a closed form off by a factor 1.01, given to the check as its
theory argument (``attnverify selftest --mutants``: the check must fail with it)."""
from __future__ import annotations

from types import SimpleNamespace

from attnverify.checks.plugin import Mutant


def mutants() -> list[Mutant]:
    def one_percent_off(theory):
        return SimpleNamespace(mean_partition=lambda: 1.01 * theory.mean_partition())
    return [Mutant("partition_one_percent", one_percent_off, ("partition.mean",), "E Z times 1.01")]
