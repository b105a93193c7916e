r"""Safe parsing of the model file's expressions into SymPy, and the one-line errors the model file raises.

An expression is text such as ``"theta1*xi + 0.5*zeta"`` or ``"sigma^2"`` (``^`` is a power, as ``**``).  It is
read with Python's ``ast`` in ``eval`` mode and rebuilt node by node into SymPy: only numbers, the names the caller
allows, ``+ - * / ** ^``, unary signs and calls of the functions in :data:`FUNCTIONS` are accepted.  Nothing is
evaluated by Python (no ``eval``, no ``sympify`` of the text), so a file cannot run code.  A decimal literal enters
as the exact rational it denotes (``0.1`` is 1/10), so every identity SymPy proves about the model is exact.
"""
from __future__ import annotations

import ast
import difflib
import math
from collections.abc import Iterable, Mapping

import sympy as sp

#: functions a model expression may call (each has a certified ball evaluation)
FUNCTIONS = {"exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


class ModelError(ValueError):
    """A model file is not valid: one line ``"<file>: <field>: <what is wrong>"``."""

    def __init__(self, source: str, field: str, message: str) -> None:
        self.source, self.field, self.message = source, field, message
        super().__init__(f"{source}: {field}: {message}" if field else f"{source}: {message}")


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or an empty string."""
    close = difflib.get_close_matches(name, sorted(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def parse(text, names: Mapping[str, sp.Basic], where: tuple[str, str]) -> sp.Expr:
    """The SymPy expression of ``text`` (a string, an int or a float), with the names in ``names`` (name ->
    SymPy object).  ``where`` = (source, field) for the error.  An unknown name, an unsupported construct or a
    malformed text: :class:`ModelError`, one line."""
    source, field = where
    if isinstance(text, bool):
        raise ModelError(source, field, f"expected an expression, got the boolean {text}")
    if isinstance(text, int):
        return sp.Integer(text)
    if isinstance(text, float):
        return _decimal(repr(text), source, field)
    if not isinstance(text, str):
        raise ModelError(source, field, f"expected an expression (a string), got {type(text).__name__}")
    if not text.strip():
        raise ModelError(source, field, "empty expression")
    code = text.strip().replace("^", "**")                             # ^ is a power (Python's ^ binds looser)
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        raise ModelError(source, field, f"{text!r} is not a valid expression") from None
    return _build(tree.body, text, names, source, field, code)


def _decimal(lit: str, source: str, field: str) -> sp.Expr:
    try:
        value = sp.Rational(lit)
    except (TypeError, ValueError):
        raise ModelError(source, field, f"{lit!r} is not a finite number") from None
    return value


def _literal(n: ast.Constant, code: str, source: str, field: str) -> sp.Expr:
    """A decimal literal as the Rational its digits spell (``1e-400`` is not the double 0.0 Python reads); one
    beyond the double range, which the numerics could not use (0 or inf there), is refused."""
    lit = ast.get_source_segment(code, n) or repr(n.value)
    underflow = n.value == 0 and any(c in "123456789" for c in lit.lower().split("e")[0])
    if not math.isfinite(n.value) or underflow:         # before the exact value: 1e-3000000 would take seconds
        raise ModelError(source, field, f"{lit[:40]!r} is beyond double precision (the numerics would read it as "
                                        f"{n.value!r})")
    return _decimal(lit.replace("_", ""), source, field)


def _build(node: ast.AST, text: str, names: Mapping[str, sp.Basic], source: str, field: str,
           code: str = "") -> sp.Expr:
    def rec(n: ast.AST) -> sp.Expr:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            if isinstance(n.value, int):
                return sp.Integer(n.value)
            return _literal(n, code, source, field)
        if isinstance(n, ast.Name):
            if n.id in names:
                return names[n.id]
            raise ModelError(source, field, f"unknown symbol {n.id!r} in {text!r}{did_you_mean(n.id, names)}")
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](rec(n.left), rec(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = rec(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            if n.func.id not in FUNCTIONS:
                raise ModelError(source, field, f"unknown function {n.func.id!r} in {text!r} (allowed: "
                                 f"{', '.join(sorted(FUNCTIONS))}){did_you_mean(n.func.id, FUNCTIONS)}")
            if len(n.args) != 1:
                raise ModelError(source, field, f"{n.func.id} takes one argument in {text!r}")
            return FUNCTIONS[n.func.id](rec(n.args[0]))
        raise ModelError(source, field, f"{text!r}: unsupported construct {ast.unparse(n)!r} (numbers, names, "
                         "+ - * / ** ^ and exp, log, sqrt only)")
    out = rec(node)
    if out.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ModelError(source, field, f"{text!r} is not finite")
    return out


def check_keys(table: Mapping, allowed: Iterable[str], source: str, field: str, required: Iterable[str] = ()) -> None:
    """Unknown keys of a TOML table (with a did-you-mean) and missing required ones: :class:`ModelError`."""
    allowed = tuple(allowed)
    if not isinstance(table, Mapping):
        raise ModelError(source, field, f"expected a table, got {type(table).__name__}")
    for key in table:
        if key not in allowed:
            prefix = f"{field}.{key}" if field else str(key)
            raise ModelError(source, prefix, f"unknown key{did_you_mean(str(key), allowed)} (allowed: "
                             f"{', '.join(allowed)})")
    for key in required:
        if key not in table:
            raise ModelError(source, f"{field}.{key}" if field else key, "missing (required)")


def linear_coefficients(expr: sp.Expr, basis: list[sp.Symbol]) -> list[sp.Expr] | None:
    """The coefficients c_j of ``expr = sum_j c_j b_j`` when ``expr`` is a linear form in the symbols ``basis``
    (coefficients free of them, no constant term); None otherwise."""
    expr = sp.expand(expr)
    coeffs = []
    for b in basis:
        c = expr.coeff(b, 1)
        if c.has(*basis):
            return None
        coeffs.append(c)
    rest = sp.expand(expr - sum(c * b for c, b in zip(coeffs, basis)))
    return coeffs if rest == 0 else None
