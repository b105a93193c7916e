"""A derivation is a list of steps: a statement, the SymPy object it produces, and why it holds."""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Step:
    """One step of a derivation.

    statement: what the step establishes, in words.
    result:    the SymPy object produced (an expression, an ``Eq`` or a matrix).
    reason:    why it holds (the identity used, or the SymPy computation that verified it).
    label:     the result's name as LaTeX (``r"J(\\rho)"``), used in LaTeX and printouts.
    """

    statement: str
    result: sp.Basic
    reason: str
    label: str = ""

    def latex(self) -> str:
        """The result as LaTeX, prefixed by its label when there is one."""
        body = sp.latex(self.result)
        return f"{self.label} = {body}" if self.label and not isinstance(self.result, sp.Eq) else body
