r"""Guards of the model file's expressions that go beyond their syntax (:mod:`.model_file` calls them):

* :func:`refuse_huge_powers`: before any expression is built, a power whose exact value would be too large to
  compute, such as ``10**10**10``, ``theta**(10**10)`` or ``((1234567/1234568)**4000)**4000``, is refused: SymPy
  would compute it exactly and not end.  The size in bits of each exact rational is estimated bottom up (a power of
  b bits to the n has about n b; a parameter counts as any rational of PARAMETER_BITS bits, since a value given
  later may be one), with the values in mpmath at the defaults alongside, and each power is refused *before* it is
  computed.  This is the theory's own guard (the claims parser has its own, ``attnverify.checks.stated``; the
  theory does not import the checks); a large but inexact value (a float, exp(-L)) is not refused here;
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

#: an exact rational SymPy would compute may have at most this many bits (a power of a rational of b bits to the n
#: has about n b: (1234567/1234568)^4000 to the 50th, 4M bits, took 0.5 s; 10**10**10 and theta**(10**10) exceed it
#: by far); a parameter counts as a rational of PARAMETER_BITS bits, whatever its default
MAX_EXACT_BITS = 2 ** 20
PARAMETER_BITS = 64
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
            raise ModelError(source, fld, f"{_short(text)} holds a power too large to evaluate exactly (more than "
                             f"{MAX_EXACT_BITS} bits at some parameter values)") from None
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


def _magnitude(node: ast.AST, env: Mapping[str, mpmath.mpf]) -> tuple:
    """(value, bits) of the formula ``node`` at ``env``: its value (mpmath, possibly complex; None where it is not
    known: an unknown construct, a division by zero) and the size in bits of the exact rational SymPy would compute
    for it (None where SymPy keeps it inexact or symbolic: a float, a fractional power, exp, log). A parameter counts
    PARAMETER_BITS (a value given later may be any rational of about a double's size), a direction 0. Raises
    :class:`_Huge` at a power whose exact value would exceed MAX_EXACT_BITS, before it is computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        exact = isinstance(node.value, int)
        return mpmath.mpf(node.value), (abs(node.value).bit_length() + 1 if exact else None)
    if isinstance(node, ast.Name):
        return (env[node.id], PARAMETER_BITS) if node.id in env else (mpmath.mpf(1), 0)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v, bits = _magnitude(node.operand, env)
        return (None if v is None else (-v if isinstance(node.op, ast.USub) else v)), bits
    if isinstance(node, ast.BinOp):
        return _binop(node, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        return _call(node.func.id, _magnitude(node.args[0], env)[0]), None
    return None, None


def _binop(node: ast.BinOp, env) -> tuple:
    """(value, bits) of a binary operation (see :func:`_magnitude`); a power is checked before it is computed."""
    (a, a_bits), (b, b_bits) = _magnitude(node.left, env), _magnitude(node.right, env)
    if isinstance(node.op, ast.Pow):
        if b is None:
            return None, None
        integral = mpmath.im(b) == 0 and mpmath.re(b) == int(mpmath.re(b))
        bits = a_bits * abs(int(mpmath.re(b))) if integral and a_bits is not None else None
        if bits is not None and bits > MAX_EXACT_BITS:
            raise _Huge
        try:
            value = None if a is None else (mpmath.mpf(0) if a == 0 else mpmath.power(a, b))
        except (ZeroDivisionError, ValueError, OverflowError):
            value = None
        return value, bits
    bits = None if a_bits is None or b_bits is None else a_bits + b_bits
    if a is None or b is None:
        return None, bits
    try:
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b}
        return (ops[type(node.op)]() if type(node.op) in ops else None), bits
    except ZeroDivisionError:
        return None, bits


def _call(name: str, a):
    """exp, log or sqrt of the value ``a`` (None when not known): SymPy keeps each of them symbolic, so none is
    refused here (a value beyond double precision is refused where it is evaluated: :func:`value_problem`)."""
    if a is None:
        return None
    if name == "exp":
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


#: parameters searched at every corner of their lowest and highest probes together (2^k points) up to this many
MAX_CORNER_PARAMS = 4
#: the working precision of the probes' ball evaluation (bits): a counterexample is a ball entirely <= 0
PROBE_PRECISION = 128
#: the highest precision :func:`certified_sign` tries (bits)
MAX_SIGN_PRECISION = 8192


def probe_values(p) -> list[sp.Rational]:
    """Exact admissible values of the parameter ``p`` where a sign is worth testing, from its lowest to its highest:
    a closed end, a point 1e-6 of the scale inside an open end (the next integer for an integer parameter), halfway
    between each end and the default, and 10, 10^3 and 10^6 times the scale beyond the default on an unbounded side
    (the scale: max(1, |default|))."""
    scale = max(sp.Integer(1), abs(p.default))
    tiny = scale / 10 ** 6
    step = 1 if p.integer else tiny
    if p.lo is None:
        lower = [p.default - scale * 10 ** k for k in (6, 3, 1)]
    else:
        lower = [p.lo + step if p.strict else p.lo, (p.lo + p.default) / 2]
    if p.hi is None:
        upper = [p.default + scale * 10 ** k for k in (1, 3, 6)]
    else:
        upper = [(p.hi + p.default) / 2, p.hi - step if p.strict_max else p.hi]
    out = lower + upper
    if p.integer:
        out = [sp.floor(v) if v > p.default else sp.ceiling(v) for v in out]
    return [v for v in dict.fromkeys(out) if p.problem(v) is None]


def _counts_valid(model, values: Mapping[str, sp.Rational]) -> bool:
    sub = {p.symbol: values[p.name] for p in model.parameters}
    for c in model.components:
        n = c.count.subs(sub)
        if not (n.is_Integer and n >= 1):
            return False
    return True


def sign_counterexample(model, expr: sp.Expr) -> tuple[dict, str] | None:
    """(point, value) where ``expr`` is certainly <= 0 at an admissible model (every count an integer >= 1), or None:
    each parameter of ``expr`` at its probe values with the others at their defaults, then every corner of the
    lowest and highest probes of up to MAX_CORNER_PARAMS parameters (beyond, all lowest and all highest). The value
    is a ball of the exact point's value (Arb at PROBE_PRECISION bits), so a counterexample is a true one and a
    huge probe costs no more than a small one; an expression without a ball version is not searched."""
    import itertools

    import flint

    from attnverify.theory.certified import NotCertifiable, exact_ball, lambdify_arb, upper

    used = [p for p in model.parameters if p.symbol in expr.free_symbols]
    if not used:
        return None
    try:
        ball = lambdify_arb(expr, [p.symbol for p in used])
    except NotCertifiable:
        return None
    probes = {p.name: probe_values(p) for p in used}
    points = [{p.name: v} for p in used for v in probes[p.name]]
    ends = [p for p in used if probes[p.name]]
    corners = itertools.product((0, -1), repeat=len(ends)) if len(ends) <= MAX_CORNER_PARAMS else \
        [(0,) * len(ends), (-1,) * len(ends)]
    points += [{p.name: probes[p.name][i] for p, i in zip(ends, corner)} for corner in corners]
    defaults = {p.name: p.default for p in model.parameters}
    for point in points:
        values = {**defaults, **point}
        if not _counts_valid(model, values):
            continue
        with flint.ctx.workprec(PROBE_PRECISION):
            v = ball(*[exact_ball(values[p.name]) for p in used])
        if upper(v) <= 0:
            return point, v.str(6, radius=False)
    return None


def certified_sign(value: sp.Expr) -> bool | None:
    """Whether the constant ``value`` is > 0 where SymPy's rules do not decide (sqrt(a^2 + 1) - a at a = 1e100,
    decided at 1024 bits): True or False once its Arb ball lies entirely above 0 or at or below it, the precision
    doubled from PROBE_PRECISION up to MAX_SIGN_PRECISION bits; None when it still straddles 0 (log(1 + e^a) - a
    at a = 1e20 needs 1e20 bits) or the value has no ball version."""
    import flint

    from attnverify.theory.certified import NotCertifiable, lambdify_arb, lower, upper

    try:
        ball = lambdify_arb(value, [])
    except NotCertifiable:
        return None
    bits = PROBE_PRECISION
    while bits <= MAX_SIGN_PRECISION:
        with flint.ctx.workprec(bits):
            v = ball()
        if lower(v) > 0 or upper(v) <= 0:
            return lower(v) > 0
        bits *= 2
    return None
