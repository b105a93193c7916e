"""Displayed equations in the terminal: a broken display (:mod:`attnverify.render.breaking`) in Unicode pretty
print (:mod:`attnverify.render.exprs`), with the same breaks and the same named sub-expressions as the LaTeX.

A line of pieces is one row of 2-D pictures placed side by side on a common baseline (a fraction stays a
fraction); a sum continues on the next line with ``+`` or ``-``, a product with ``×``; a long sum factor opens
``(`` on one line and closes ``)`` on a later one. The definitions the display needs follow under "where".
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.pretty.stringpict import prettyForm, stringPict

from attnverify.render import breaking, exprs, notation

__all__ = ["UnicodeMetric", "display_lines"]

_SUPERSCRIPT = dict(zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _op(piece: breaking.Piece, first: bool) -> str:
    if piece.op == "*":
        return "× " if first else "⋅"
    return {"": "", "+": "+ " if first else " + ", "-": "- " if first else " - "}[piece.op]


def _form(piece: breaking.Piece, first: bool) -> prettyForm:
    """A piece as a 2-D picture, its joining operator in front."""
    op = _op(piece, first)
    if piece.bracket == "(":
        return prettyForm(op + "(")
    if piece.bracket == ")":
        power = str(piece.power) if piece.power is not None else ""
        return prettyForm(")" + ("".join(_SUPERSCRIPT.get(c, c) for c in power) if power.isdigit()
                                 else (f"^{power}" if power else "")))
    form = exprs.pretty_form(piece.expr)
    if piece.factor and isinstance(piece.expr, sp.Add):
        form = prettyForm(*form.parens())
    return prettyForm(*stringPict.next(prettyForm(op), form)) if op else form


def _width(form: prettyForm) -> int:
    return max((len(row) for row in form.render(wrap_line=False).splitlines()), default=0)


class UnicodeMetric:
    """Widths in columns of the pretty print."""

    @staticmethod
    def width(expr: sp.Basic) -> float:
        return exprs.pretty_width(expr)

    @staticmethod
    def piece(piece: breaking.Piece, first: bool) -> float:
        return _width(_form(piece, first))


def _line_rows(line: list[breaking.Piece]) -> list[str]:
    forms = [_form(p, i == 0) for i, p in enumerate(line)]
    joined = prettyForm(*stringPict.next(*forms)) if len(forms) > 1 else forms[0]
    return [row.rstrip() for row in joined.render(wrap_line=False).splitlines()]


def _equation_rows(eq: breaking.Equation, head: str) -> list[str]:
    """``head`` (the left side and ``=``) beside the first line, the further lines indented under it."""
    first = _line_rows(eq.lines[0])
    base = _baseline(eq.lines[0])
    rows = [(head if i == base else " " * len(head)) + r for i, r in enumerate(first)]
    for line in eq.lines[1:]:
        rows += [" " * (len(head) + 2) + r for r in _line_rows(line)]
    return rows


def _baseline(line: list[breaking.Piece]) -> int:
    forms = [_form(p, i == 0) for i, p in enumerate(line)]
    return (stringPict.next(*forms)[1] if len(forms) > 1 else forms[0].baseline)


def display_lines(lhs: str, expr: sp.Basic, width: int) -> list[str]:
    """``lhs = expr`` for the terminal, ``lhs`` the step's label (LaTeX): the label and ``=`` on a line of its own,
    the expression below it indented by 3, broken to ``width`` columns, then "where" and the definitions."""
    metric = UnicodeMetric()
    d = breaking.layout(lhs, expr, metric, width - 3, indent=2,
                        name_width=lambda n: len(notation.tex_to_unicode(exprs.latex(n))) + 3)
    def named(eq: breaking.Equation) -> list[str]:
        return _equation_rows(eq, f"{notation.tex_to_unicode(exprs.latex(eq.lhs))} = ")

    if d.inline:                                   # a tuple: each entry under its own name
        out = [row for eq in d.where[:d.inline] for row in named(eq)]
    else:
        out = [f"{notation.tex_to_unicode(lhs)} ="] if lhs else []
        out += ["   " + r for r in _equation_rows(d.main, "")]
    if d.where[d.inline:]:
        out.append("where")
        out += ["   " + row for eq in d.where[d.inline:] for row in named(eq)]
    return out
