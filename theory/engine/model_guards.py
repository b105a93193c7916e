r"""Guards of the model file's expressions that go beyond their syntax (:mod:`.model_file` calls them):

* :func:`refuse_huge_powers`: before any expression is built, a power (or an ``exp``) whose value would be too large
  to compute exactly, such as ``10**10**10`` or ``theta**(10**10)``, is refused: SymPy would compute it exactly and
  not end.  Magnitudes are estimated in mpmath (whose exponent is unbounded) at the parameters' defaults, bottom up,
  and each power is refused *before* it is computed.  This is the theory's own equivalent of the claims parser's
  guard (``attnverify.checks.stated._oversized_power``; the theory does not import the checks), with the same
  bound :data:`MAX_POWER_BITS`;
* :func:`model_expressions` and :func:`value_problem`: every expression of a model must be a real, finite number at
  the defaults (checked at load) and at any parameter values given later (``--set``, the Python API).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import mpmath
import sympy as sp

from attnverify.theory.engine.expressions import ModelError

#: an exact power may have at most this many bits, and an exponent at most this magnitude (as the claims parser)
MAX_POWER_BITS = 4096
_LOG2_E = 1.4426950408889634
_BRACKET = re.compile(r"<[^<>]*>")


class _Huge(Exception):
    """A power too large to evaluate was met (raised before it is computed)."""


def refuse_huge_powers(data: Mapping, defaults: Mapping[str, sp.Rational], source: str) -> None:
    """Every string under the file's ``[[tokens]]`` and ``[attention]`` tables (the expressions) read as a formula
    and estimated at the ``defaults`` (name -> value; other names count as 1): a power or an ``exp`` too large to
    evaluate is a :class:`ModelError` naming the field.  Strings that are not formulas are left to the parser."""
    env = {k: mpmath.mpf(v.p) / v.q for k, v in defaults.items()}
    for fld, text in _strings(data.get("tokens"), "tokens") + _strings(data.get("attention"), "attention"):
        try:
            tree = ast.parse(_BRACKET.sub(" 1 ", text).strip().replace("^", "**"), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue                                    # not a formula: the parser says why
        try:
            with mpmath.workprec(30):
                _magnitude(tree.body, env)
        except _Huge:
            raise ModelError(source, fld, f"{_short(text)} holds a power too large to evaluate (more than "
                             f"{MAX_POWER_BITS} bits, or an exponent beyond {MAX_POWER_BITS})") from None
        except RecursionError:
            raise ModelError(source, fld, f"{_short(text)} is nested too deeply to evaluate") from None


def _short(text: str, limit: int = 60) -> str:
    """The text as the error quotes it (cut after ``limit`` characters)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _strings(node, path: str) -> list[tuple[str, str]]:
    """(field, text) of every string under ``node`` (tables, lists), the field written as the errors write it."""
    if isinstance(node, str):
        return [(path, node)]
    if isinstance(node, Mapping):
        return [s for k, v in node.items() for s in _strings(v, f"{path}.{k}")]
    if isinstance(node, list):
        return [s for i, v in enumerate(node) for s in _strings(v, f"{path}[{i}]")]
    return []


def _magnitude(node: ast.AST, env: Mapping[str, mpmath.mpf]):
    """The value (mpmath, possibly complex) of the formula ``node`` at ``env``, or None where it is not known (an
    unknown construct, a division by zero); raises :class:`_Huge` at a power or ``exp`` too large to evaluate."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return mpmath.mpf(node.value)
    if isinstance(node, ast.Name):
        return env.get(node.id, mpmath.mpf(1))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _magnitude(node.operand, env)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        return _binop(node, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        return _call(node.func.id, _magnitude(node.args[0], env))
    return None


def _binop(node: ast.BinOp, env):
    """The value of a binary operation (see :func:`_magnitude`); a power is checked before it is computed."""
    a, b = _magnitude(node.left, env), _magnitude(node.right, env)
    if isinstance(node.op, ast.Pow):
        if b is None:
            return None
        _check_power(a, b)
        if a is None:
            return None
        return mpmath.mpf(0) if a == 0 else mpmath.power(a, b)
    if a is None or b is None:
        return None
    try:
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b}
        return ops[type(node.op)]() if type(node.op) in ops else None
    except ZeroDivisionError:
        return None


def _check_power(base, exponent) -> None:
    """:class:`_Huge` when base**exponent would have more than MAX_POWER_BITS bits, or when the exponent itself is
    beyond MAX_POWER_BITS (the base is then too large to evaluate at some parameter values: its default may be 1)."""
    e = abs(exponent)
    if e > MAX_POWER_BITS:
        raise _Huge
    if base is not None and base != 0 and e * abs(mpmath.log(abs(base), 2)) > MAX_POWER_BITS:
        raise _Huge


def _call(name: str, a):
    """exp, log or sqrt of the value ``a`` (None when not known); an ``exp`` too large to evaluate: :class:`_Huge`."""
    if a is None:
        return None
    if name == "exp":
        if abs(mpmath.re(a)) * _LOG2_E > MAX_POWER_BITS:
            raise _Huge
        return mpmath.exp(a)
    if name == "log":
        return None if a == 0 else mpmath.log(a)
    return mpmath.sqrt(a) if name == "sqrt" else None


# ----------------------------------------------------------------------------------------------
# real and finite values
# ----------------------------------------------------------------------------------------------
def model_expressions(model) -> list[tuple[str, sp.Expr]]:
    """(field, expression) of every expression of the model ``model`` (counts, mean coefficients, variances,
    radii, the score's scale and the matrices' entries), the fields named as in the file."""
    out = []
    for i, c in enumerate(model.components):
        f = f"tokens[{i}]"
        out.append((f"{f}.count", c.count))
        out += [(f"{f}.mean", m) for m in c.mean]
        if c.law == "sphere":
            out.append((f"{f}.radius", c.radius))
        else:
            out += [(f"{f}.cov", v) for v in (*c.cov, c.cov_rest)]
    out.append(("attention.score", model.attention.scale))
    for name, block in model.attention.matrices:
        f = f"attention.matrices.{name}"
        out += [(f, v) for row in block.rows for v in row] + [(f, block.rest)]
    return out


def not_real(value: sp.Expr) -> str | None:
    """Why the constant ``value`` is not a real finite number ("not finite", "not real"), or None when it is."""
    if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or value.is_finite is False:
        return "not finite"
    if value.free_symbols:
        return None                                    # not a constant: nothing to decide here
    if value.is_real:
        return None
    if value.is_real is False:
        return "not real"
    re_, im_ = sp.N(value, 30).as_real_imag()          # undecided by SymPy's rules: 30 digits decide
    return None if im_ == 0 or abs(im_) <= sp.Float("1e-25", 30) * (1 + abs(re_)) else "not real"


def value_problem(model, values: Mapping[sp.Symbol, sp.Expr]) -> tuple[str, str] | None:
    """(field, what is wrong) for the first expression of ``model`` that is not a real finite number at the
    parameter ``values`` (symbol -> exact value), or None when every one is."""
    for fld, expr in model_expressions(model):
        v = expr.subs(values)
        why = not_real(v)
        if why:
            return fld, f"{expr} = {v} is {why}"
    return None
