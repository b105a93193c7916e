"""The one module a paper plugin imports: the plugin contract and everything a paper's checks and claims use.

A paper is a :class:`Paper` registered under the entry-point group ``attnverify.papers`` (see
:mod:`attnverify.checks.paper` for the contract and ``docs/adding-a-paper.md`` for a walk-through)::

    from attnverify.checks.plugin import Evidence, Param, Paper, check, claim, ClaimVerdict, judges

* checks: :func:`check` (registers ``run(p, ctx) -> Evidence``), :class:`Param`, :class:`Context`,
  :class:`Evidence`, :class:`Plot`, :class:`Series`, :class:`InputError`;
* claims: :func:`claim`, :class:`ClaimVerdict`, :func:`claim_rng` (a claim's own random stream), :class:`StatedClaim`, :mod:`judges` (one judge per claim kind) and
  :class:`Measured`;
* the contract: :class:`Paper`, :class:`Quantity`, :class:`Section`, :func:`lazy`, :func:`cached_formula`;
* reason text: :func:`reason`, :class:`Math`, :class:`Number`, :func:`bracket`, :func:`pm` (a verdict's sentence
  as typed parts, typeset by each output: :mod:`attnverify.checks.reason`);
* derivations: :class:`Step`;
* self-tests: :class:`Mutant`, :class:`Family`, :class:`PowerRow`, :class:`Perturbation`.
"""
from __future__ import annotations

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, claim_rng, one_of, words
from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series, Unresolved
from attnverify.checks.judges import Measured
from attnverify.checks.paper import Paper, Quantity, Section, cached_formula, lazy
from attnverify.checks.params import InputError, Param
from attnverify.checks.perturb import Family, Mutant, Perturbation, PowerRow
from attnverify.checks.reason import Math, Number, bracket, pm, reason
from attnverify.checks.registry import check
from attnverify.checks.stated import StatedClaim
from attnverify.theory.derivation import Step

__all__ = ["ClaimVerdict", "Context", "Evidence", "Family", "InputError", "Math", "Measured", "Mutant", "Number",
           "Paper", "Param", "Perturbation", "Plot", "PowerRow", "Quantity", "Section", "Series", "StatedClaim", "Step",
           "Unresolved", "bracket", "cached_formula", "check", "claim", "claim_rng", "judges", "lazy", "one_of", "pm",
           "reason", "words"]


def __getattr__(name: str):
    """A name of the contract before 0.2: one line saying what replaced it."""
    if name == "PatchMutant":
        raise ImportError("attnverify.checks.plugin.PatchMutant was removed in 0.2: a mutant is an argument, "
                          "Mutant(name, make, checks, description, target='theory' | 'numerics') with make(original) "
                          "returning the wrong object the checks receive (docs/adding-a-paper.md)")
    raise AttributeError(f"module 'attnverify.checks.plugin' has no attribute {name!r}")
