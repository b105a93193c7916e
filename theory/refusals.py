"""What a certified computation raises when it cannot be carried out at the given parameters (no imports at load
time, so that the runner can read it without loading SymPy or Arb)."""
from __future__ import annotations

__all__ = ["OutsideCertifiedRange", "named_values"]


class OutsideCertifiedRange(ValueError):
    """A certified result cannot be computed at these parameters (e.g. a root isolation gives up, or a
    linearisation leaves double precision): refused, never approximated. A check run that meets it is unresolved
    at that model (attnverify.checks.runner).

    The message is given in parts, kept typed as ``parts`` so that each output typesets it (the checks build the
    unresolved reason from them: attnverify.checks.evidence.refusal_reason): a ``str`` is words, an ``int`` or
    ``float`` a number, a SymPy expression mathematics (symbols in SymPy's naming convention)::

        OutsideCertifiedRange("the linearisation ", sp.Function(r"F^{\\prime}")(rho), " overflows double precision")

    ``str(exc)`` is the parts on one line (numbers by ``repr``, expressions by SymPy's ``str``), for tools and logs.
    Anything else given as a part is kept as its text."""

    def __init__(self, *parts: object) -> None:
        self.parts: tuple = tuple(_part(p) for p in parts)
        super().__init__(*self.parts)

    def __str__(self) -> str:
        return " ".join("".join(_text(p) for p in self.parts).split())


def named_values(values: dict) -> tuple:
    """The parts that name each entry of ``values``, ``name = value`` joined by ", ": the name a SymPy symbol (a
    Greek letter by its name, ``_`` before a subscript: SymPy's convention), the value a number (a value that is no
    number, as words)."""
    import sympy as sp

    out: list = []
    for i, (name, value) in enumerate(values.items()):
        out += [", "] * bool(i) + [sp.Symbol(str(name)), " = ", value if _is_number(value) else str(value)]
    return tuple(out)


def _is_number(x: object) -> bool:
    from numbers import Real

    return isinstance(x, Real) and not isinstance(x, bool)


def _part(p: object) -> object:
    """A part as kept: words, an int, a float, or a SymPy object (anything else as its text)."""
    if isinstance(p, str):
        return p
    if _is_number(p):
        from numbers import Integral

        return int(p) if isinstance(p, Integral) else float(p)
    if any((c.__module__ or "").startswith("sympy.") for c in type(p).__mro__):   # an applied Function's class
        return p                                                                     # has no module of its own
    return str(p)


def _text(p: object) -> str:
    return repr(p) if isinstance(p, float) else str(p)
