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

    def __repr__(self) -> str:
        text = self.statement if len(self.statement) <= 70 else self.statement[:67] + "..."
        return f"Step({text!r})"

    def _repr_latex_(self) -> str:
        """Jupyter: the result as a display equation."""
        return f"$$\\displaystyle {self.latex()}$$"

    def _repr_markdown_(self) -> str:
        """Jupyter: the statement, the result as a display equation, and why it holds."""
        return f"{self.statement}\n\n$$\n{self.latex()}\n$$\n\n*Because:* {self.reason}"

    def latex(self) -> str:
        """The result as LaTeX, prefixed by its label when there is one."""
        body = sp.latex(self.result)
        return f"{self.label} = {body}" if self.label and not isinstance(self.result, sp.Eq) else body
