r"""A derivation is a list of steps: a statement, the SymPy object it produces, and why it holds.

Statements and reasons follow the typesetting convention: words, with the mathematics inline between dollar
signs in LaTeX (``"the moment generating function of $g \sim N(0, \sigma^2)$"``); the app renders them for
LaTeX, the terminal and matplotlib (``attnverify.render.notation``). Each step has a short semantic ``name``
(``J-fixed``) from which the LaTeX document makes its equation label (``eq:A:J-fixed``).

Two display helpers print long results compactly without changing what they are: :func:`factored_terms` and
:func:`in_exponentials` (the latter names exponentials by symbols, which the step's statement defines).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import sympy as sp

_NAME = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")

#: What a step is, so that an approximation never reads like an identity:
#: ``identity``      an equality SymPy computed or proved (exact);
#: ``limit``         a limit (a law of large numbers, L -> oo, beta -> oo), exact only in that limit;
#: ``approximation`` a truncated expansion (the delta method, a Laplace expansion), with its ``order``;
#: ``assumption``    part of the model's statement (taken, not derived);
#: ``statement``     a paper's statement, reproduced for comparison (not derived).
STEP_KINDS = ("identity", "limit", "approximation", "assumption", "statement")


@dataclass(frozen=True)
class Step:
    r"""One step of a derivation.

    statement: what the step establishes: words, with the mathematics between dollars in LaTeX.
    result:    the SymPy object produced (an expression, an ``Eq`` or a matrix).
    reason:    why it holds (the identity used, or the SymPy computation that verified it), in the same convention.
    label:     the result's name as LaTeX (``r"J_{\mathrm{fixed}}(\rho)"``), the left side of its equation.
    name:      a short semantic slug for the equation label (``"J-fixed"`` gives ``eq:A:J-fixed``): letters, digits
               and single hyphens, unique within its derivation.
    kind:      what the step is (:data:`STEP_KINDS`): an identity, a limit, an approximation, a model assumption or
               a paper's statement.
    order:     for an approximation, the order of what it neglects, as LaTeX (``"O(1/L^2)"``); empty otherwise.
    """

    statement: str
    result: sp.Basic
    reason: str
    label: str = ""
    name: str = ""
    kind: str = "identity"
    order: str = ""

    def __post_init__(self) -> None:
        if self.name and not _NAME.fullmatch(self.name):
            raise ValueError(f"step name {self.name!r}: letters, digits and single hyphens only")
        if self.kind not in STEP_KINDS:
            raise ValueError(f"step kind {self.kind!r}: one of {', '.join(STEP_KINDS)}")
        if self.kind == "approximation" and not self.order:
            raise ValueError("an approximation step needs its order (what it neglects)")

    def __repr__(self) -> str:
        text = self.statement if len(self.statement) <= 70 else self.statement[:67] + "..."
        return f"Step({text!r})"

    def latex(self) -> str:
        """The result as LaTeX, prefixed by its label when there is one."""
        body = sp.latex(self.result)
        return f"{self.label} = {body}" if self.label and not isinstance(self.result, sp.Eq) else body


# ----------------------------------------------------------------------------------------------------------------
# display forms: the same expression, printed compactly
# ----------------------------------------------------------------------------------------------------------------
def factored_terms(expr: sp.Expr) -> sp.Expr:
    """``expr`` with each term of its sum factored on its own (``sp.factor`` per term): equal to ``expr``, printed
    as a short sum of factored fractions instead of one expanded fraction."""
    return sp.Add(*[sp.factor(t) for t in sp.Add.make_args(expr)])


def _exp_as_powers(e: sp.exp, names: dict[sp.Symbol, sp.Expr]) -> sp.Expr | None:
    """``exp(a)`` as a product of powers of the named exponentials, ``a = sum_k c_k b_k`` with rational ``c_k``
    (``names``: symbol -> its exponent ``b_k``, a monomial); None when ``a`` is not such a combination."""
    rest = sp.expand(e.args[0])
    out = sp.Integer(1)
    for sym, b in names.items():
        c = sp.expand(rest).coeff(b) if isinstance(rest, sp.Add) else (rest / b if (rest / b).is_Rational else 0)
        if c != 0 and not c.is_Rational:
            return None
        if c != 0:
            out *= sym ** c
            rest = sp.expand(rest - c * b)
    return out if rest == 0 else None


def in_exponentials(expr: sp.Expr, names: dict[sp.Symbol, sp.Expr], gather: Sequence[sp.Symbol]) -> sp.Expr:
    r"""``expr`` printed with its exponentials named: every ``exp(a)`` with ``a`` a rational combination of the
    exponents in ``names`` (symbol -> exponent, e.g. ``{u: beta*theta*rho}``) becomes the product of powers of the
    symbols (each exponential as it stands: a product of them needs no expanding first, and factoring the rational
    function that results gives the same canonical form); then each term of the sum is one fraction whose
    numerator is collected in the monomials of ``gather`` with factored coefficients. Substituting ``exp(b)`` back
    for each symbol gives ``expr`` (the tests check it); the step's statement says what the symbols stand for.
    Returns ``expr`` unchanged when an exponential is not such a combination."""
    terms = []
    for t in sp.Add.make_args(expr):
        rep = {}
        for e in t.atoms(sp.exp):
            powers = _exp_as_powers(e, names)
            if powers is None:
                return expr
            rep[e] = powers
        num, den = sp.fraction(sp.factor(t.xreplace(rep)))
        poly = sp.Poly(sp.expand(num), *gather)
        collected = sp.Add(*[sp.factor(c) * sp.Mul(*[g ** k for g, k in zip(gather, mon)]) for mon, c in poly.terms()])
        terms.append(collected / den)
    return sp.Add(*terms)
