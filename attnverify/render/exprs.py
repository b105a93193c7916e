r"""SymPy expressions in the notation of :mod:`attnverify.render.notation`: a LaTeX printer and a Unicode printer
that agree symbol by symbol, so the terminal shows what the LaTeX document shows.

SymPy's own printers disagree on names: ``Symbol("R_eta")`` is ``R_{\eta}`` in LaTeX but ``Rₑₜₐ`` in its Unicode
pretty print (the letters of ``eta`` set as subscripts), ``Max(b1, b2)`` is ``\max(b_1, b_2)`` in LaTeX but
``Max(b1, b2)`` in Unicode. Here

- a symbol's LaTeX is SymPy's, except for the names of :data:`NAMES` (a name no rule can read, ``uCu`` for
  :math:`u^\top C u`); its Unicode is that LaTeX through the notation table
  (:func:`~attnverify.render.notation.tex_to_unicode`): ``R_η``, ``b₁``, ``μ₁``, ``uᵀCu``;
- a function's name likewise: ``max``, ``min``, ``arctan`` (LaTeX ``\max``, ``\min``, ``\arctan``); a function
  class with its own LaTeX (``_latex``: ``\zeta_{s}(t)``) is that LaTeX in Unicode (``ζₛ(t)``), an undefined
  function is its name read as a symbol's;
- :class:`Name` is a symbol that stands for a sub-expression or a matrix entry of a display, printed as the
  LaTeX it was given (``\mathcal{N}_{1}``, ``H_{11}``) and its Unicode (``𝒩₁``).
"""
from __future__ import annotations

import functools

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.stringpict import prettyForm

from attnverify.render import notation

__all__ = ["NAMES", "Name", "latex", "pretty", "pretty_form", "pretty_width", "symbol_latex", "symbol_unicode"]

#: symbol name -> its LaTeX, for names SymPy's rule (letters, then ``_`` subscripts) cannot read
NAMES: dict[str, str] = {
    "uCu": r"u^{\top}Cu",
}
#: SymPy function class name -> the operator name it is written with
_FUNCTION_NAMES = {"Max": "max", "Min": "min", "atan": "arctan", "asin": "arcsin", "acos": "arccos"}


class Name(sp.Symbol):
    """A symbol standing for a sub-expression or an entry of a display; its name is its LaTeX."""

    def _latex(self, printer) -> str:
        return self.name

    def _pretty(self, printer) -> prettyForm:
        return prettyForm(notation.tex_to_unicode(self.name))

    def _sympystr(self, printer) -> str:
        return notation.tex_to_unicode(self.name)


class _Latex(LatexPrinter):
    def _print_Symbol(self, expr, style="plain"):
        if expr.name in NAMES:
            return NAMES[expr.name]
        return super()._print_Symbol(expr, style)


class _Pretty(PrettyPrinter):
    def _print_Symbol(self, e, bold_name=False):
        return prettyForm(symbol_unicode(e))

    def _print_Function(self, e, sort=False, func_name=None, left="(", right=")"):
        name = type(e).__name__
        if func_name is None and name in _FUNCTION_NAMES:
            func_name, sort = _FUNCTION_NAMES[name], name in ("Max", "Min")
        elif func_name is None and "_latex" in vars(type(e)):      # a function with its own LaTeX notation
            return prettyForm(notation.tex_to_unicode(latex(e)))
        elif func_name is None and isinstance(e, sp.core.function.AppliedUndef):
            func_name = symbol_unicode(sp.Symbol(name))
        return super()._print_Function(e, sort=sort, func_name=func_name, left=left, right=right)

    _print_Max = _print_Min = _print_Function


@functools.lru_cache(maxsize=1)
def _latex_printer() -> _Latex:
    return _Latex({"inv_trig_style": "full"})


@functools.lru_cache(maxsize=1)
def _pretty_printer() -> _Pretty:
    return _Pretty({"use_unicode": True, "wrap_line": False})


def _frozen(expr):
    """``expr`` hashable (a mutable matrix as an immutable one), for the caches."""
    return sp.ImmutableMatrix(expr) if isinstance(expr, sp.MatrixBase) else expr


def latex(expr: sp.Basic) -> str:
    """``expr`` as LaTeX (SymPy's printer with :data:`NAMES` and the inverse trigonometric functions in full)."""
    return _latex(_frozen(expr))


@functools.lru_cache(maxsize=4096)
def _latex(expr: sp.Basic) -> str:
    return _latex_printer().doprint(expr)


def symbol_latex(sym: sp.Symbol) -> str:
    """A symbol's LaTeX: :data:`NAMES`, else SymPy's rule (``R_eta`` -> ``R_{\\eta}``, ``b1`` -> ``b_{1}``)."""
    return latex(sym)


@functools.lru_cache(maxsize=4096)
def symbol_unicode(sym: sp.Symbol) -> str:
    """A symbol's Unicode: its LaTeX through the notation table (``R_eta`` -> ``R_η``, ``uCu`` -> ``uᵀCu``)."""
    return notation.tex_to_unicode(symbol_latex(sym))


def pretty_form(expr: sp.Basic) -> prettyForm:
    """``expr`` as a SymPy 2-D picture (to be placed beside others), symbols and functions in the notation."""
    return _pretty_printer()._print(expr)


def pretty(expr: sp.Basic) -> str:
    """``expr`` in Unicode pretty print, unwrapped, symbols and functions in the notation."""
    return _pretty(_frozen(expr))


@functools.lru_cache(maxsize=4096)
def _pretty(expr: sp.Basic) -> str:
    return pretty_form(expr).render(wrap_line=False)


def pretty_width(expr: sp.Basic) -> int:
    """Columns of the widest line of :func:`pretty`."""
    return max((len(row) for row in pretty(expr).splitlines()), default=0)
