"""What a certified computation raises when it cannot be carried out at the given parameters (no imports, so that
the runner can read it without loading SymPy or Arb)."""
from __future__ import annotations

__all__ = ["OutsideCertifiedRange"]


class OutsideCertifiedRange(ValueError):
    """A certified result cannot be computed at these parameters (e.g. a root isolation gives up, or a
    linearisation leaves double precision): refused, never approximated. A check run that meets it is unresolved
    at that model (attnverify.checks.runner)."""
