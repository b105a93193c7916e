"""A stated form's text as a SymPy expression, read exactly and refused in one line when it cannot be judged.

:func:`parse_expression` reads the ``stated`` (or ``stated_latex``) text of a claim in a closed namespace: the
claim's symbols, the functions with a certified (Arb) evaluation, pi and E. Every number is exact: an integer is an
Integer and a decimal literal the Rational it spells (``0.1`` is 1/10, ``1.1e16 + 1`` is 11000000000000001), so no
rounding of SymPy's 15-digit Floats can make a wrong form equal to the derived one, or a right one differ from it.
Before anything is evaluated the text and its unevaluated tree are checked (length, LaTeX, syntax, unknown names,
size, numbers and powers too large to compute, a logarithm's base); after evaluation a form that is undefined or not
real is refused.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from attnverify.checks.latex_reader import LatexError, LatexText, to_sympy_text
from attnverify.checks.params import InputError, did_you_mean

MAX_EXPRESSION_CHARS = 20000      # a stated form longer than this is refused before it is parsed
MAX_EXPRESSION_NODES = 3000       # nor may the parsed tree have more nodes than this (SymPy's algorithms recurse)
MAX_POWER_BITS = 4096             # an exact power of numbers may have at most this many bits (9**9**9 has ~10^9)
#: a decimal literal's exponent beyond this is refused: its exact Rational would have more than MAX_POWER_BITS bits
MAX_DECIMAL_EXPONENT = int(MAX_POWER_BITS * 0.30103)
_CONSTANTS = ("pi", "E", "Rational", "Integer")


class DecimalFloat(float):
    """A decimal as a claims file writes it: the float the numerics use, and ``text``, its digits as written, from
    which :func:`exact_number` takes the exact value (``0.10000000000000000001`` is not the double 0.1)."""

    def __new__(cls, text: str) -> "DecimalFloat":
        digits = str(text).replace("_", "")
        x = super().__new__(cls, digits)
        x.text = digits
        return x

    def __reduce__(self) -> tuple:
        return DecimalFloat, (self.text,)


def exact_number(v: Any) -> Any:
    """A claim's number (an ``at`` value) as the exact SymPy number it denotes, for symbolic work: an integer as an
    Integer, a :class:`DecimalFloat` as the Rational its digits spell, any other finite float as the Rational of
    its shortest decimal repr (0.1 is 1/10: what was typed). Anything else (a matrix, a word) is returned as it is."""
    import math

    import numpy as np
    import sympy as sp

    if isinstance(v, (bool, np.bool_)):
        return v
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    if isinstance(v, (float, np.floating)) and math.isfinite(v):
        return sp.Rational(getattr(v, "text", None) or repr(float(v)))
    return v


def _functions() -> dict[str, Any]:
    """The names a stated expression may call: exactly the functions with a certified (Arb) evaluation, so that a
    formula that parses can always be certified, and the constants pi and E."""
    import sympy as sp

    from attnverify.theory.certified import CERTIFIED_FUNCTIONS

    return {name: getattr(sp, name) for name in (*CERTIFIED_FUNCTIONS, *_CONSTANTS)}


def function_names() -> frozenset[str]:
    """The names :func:`parse_expression` reads as functions or constants, never as a claim's symbols."""
    return frozenset(_functions())


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _magnitude(node: Any) -> Any:
    """|value| of a tree of numbers joined by +, * and powers, in mpmath (whose exponent is unbounded, so
    9**9**9 costs nothing), or None when the tree holds anything else (a symbol, a function: SymPy does not
    evaluate those eagerly)."""
    import mpmath
    import sympy as sp

    if isinstance(node, sp.Number):
        return mpmath.mpf(abs(float(node))) if isinstance(node, sp.Float) else abs(mpmath.mpf(node.p) / node.q)
    parts = [_magnitude(a) for a in node.args] if isinstance(node, (sp.Add, sp.Mul, sp.Pow)) else [None]
    if any(x is None for x in parts):
        return None
    with mpmath.workprec(30):
        if isinstance(node, sp.Add):
            return sum(parts, mpmath.mpf(0))
        if isinstance(node, sp.Mul):
            return mpmath.fprod(parts)
        base, e = parts
        return mpmath.mpf(0) if base == 0 else mpmath.power(base, e)


def _oversized_power(tree: Any) -> bool:
    """A power of numbers whose exact value would have more than MAX_POWER_BITS bits, or its reciprocal (SymPy
    would compute it exactly and not end); the tree was parsed with evaluate=False, so nothing has been computed."""
    import mpmath
    import sympy as sp

    for node in sp.preorder_traversal(tree):
        if isinstance(node, sp.Pow) and node.args[0].is_number and node.args[1].is_number:
            m = _magnitude(node)
            if m is not None and m != 0 and abs(mpmath.log(m, 2)) > MAX_POWER_BITS:
                return True
    return False


class _TooLarge(Exception):
    """A number too large to compute exactly, met while the text is parsed (gamma of a large number)."""


def _gamma(x: Any) -> Any:
    """sympy.gamma, refusing a number argument whose exact gamma would have more than MAX_POWER_BITS bits: SymPy
    computes gamma of an integer or half-integer at once, while parsing (gamma(3000000), 10^7 digits, took 30 s)."""
    import mpmath
    import sympy as sp

    arg = x.doit() if isinstance(x, sp.Basic) else sp.sympify(x)     # x - x + 5000 is a number too
    m = _magnitude(arg) if arg.is_number else None
    if m is None and arg.is_number:                  # E**0*5000: a number _magnitude does not read
        try:
            m = abs(mpmath.mpmathify(complex(sp.N(arg, 20))))
        except (TypeError, ValueError, OverflowError):
            m = None
    if m is not None and m > 2 and mpmath.loggamma(m) / mpmath.log(2) > MAX_POWER_BITS:
        raise _TooLarge(f"gamma({_short(str(x), 20)[1:-1]})")
    return sp.gamma(x)


def _refuse_literals(text: str, where: str) -> None:
    """InputError for a number the exact reading cannot hold: a decimal exponent beyond MAX_DECIMAL_EXPONENT
    (1e5000 would be an exact integer of 5000 digits), a run of more digits than that, or a quoted number
    (``Rational('...')``) that is not a finite decimal or fraction (``'inf'``, ``'nan'``)."""
    import re

    if re.search(r"\bFloat\s*\(", text):
        raise InputError(f"{where}: Float(...) is not read here: a decimal is exact as written (write 2.5, or "
                         "Rational(5, 2))")
    for m in re.finditer(r"(?<![A-Za-z_0-9])(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)[eE]([+-]?[\d_]+)", text):
        digits = m.group(1).lstrip("+-").replace("_", "")
        if len(digits) > 6 or int(digits) > MAX_DECIMAL_EXPONENT:
            raise InputError(f"{where}: the number {_short(m.group(0), 20)} is too large or too small to read exactly "
                             f"(a decimal exponent beyond {MAX_DECIMAL_EXPONENT})")
    run = max((len(r) for r in re.findall(r"\d+", text)), default=0)
    if run > MAX_DECIMAL_EXPONENT:
        raise InputError(f"{where}: a number of {run} digits, more than the {MAX_DECIMAL_EXPONENT} this tool reads")
    for lit in re.findall(r"'([^']*)'|\"([^\"]*)\"", text):
        body = (lit[0] or lit[1]).strip()
        if not re.fullmatch(r"[+-]?(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][+-]?\d+)?(/\d+)?", body):
            raise InputError(f"{where}: {_short(body, 20)} is not a finite number (a quoted number is a decimal or a "
                             "fraction p/q)")


def _refuse_bad_log_base(tree: Any, text: str, where: str) -> None:
    """InputError for log(x, b) whose base evaluates to a number that is not a valid base (b <= 0 or b = 1, also
    written x - x): SymPy reads log(x, 0) as log(x)/log(0) = 0, which would make any form 'equal' to the derived
    one plus it."""
    import sympy as sp

    for node in sp.preorder_traversal(tree):
        if isinstance(node, sp.log) and len(node.args) == 2:
            base = node.args[1].doit()                   # gamma - gamma is the number 0 too
            if base.is_number and not (base.is_positive and base != 1):
                raise InputError(f"{where}: {_short(text)} takes a logarithm to the base {base}; log(x, b) needs a "
                                 "base b > 0 other than 1")


#: the names the parser itself inserts (auto_number, auto_symbol): never a symbol of a stated form
_PARSER_NAMES = frozenset({"Add", "Mul", "Pow", "Symbol"})
#: what a stated form may not evaluate to (as :func:`attnverify.theory.certified.uncertifiable` names them): why
_NOT_A_REAL = {"zoo": "is undefined: it holds zoo (complex infinity: a division by zero, or log(0))",
               "nan": "is undefined: it holds nan (an indeterminate form such as 0/0)",
               "oo": "is undefined: it holds oo (an infinite value)",
               "AccumBounds": "is undefined: it holds a range of values (AccumBounds), not a number",
               "I": "is not real: it holds the imaginary unit I (e.g. sqrt(-1) = I); a stated form is a real "
                    "expression"}


def _unknown_symbol(name: str, symbols: Mapping[str, Any], where: str, *, function: bool = False) -> InputError:
    """The one line that refuses an unknown symbol ``name`` (with the symbols there are); ``function``: the name is
    a function's, used without its argument."""
    hint = f"; {name} is a function here, written {name}(x)" if function else ""
    return InputError(f"{where}: unknown symbol {name!r}{did_you_mean(name, list(symbols))} "
                      f"(allowed: {', '.join(symbols)}{hint})")


def _bare_names(text: str) -> list[str]:
    """The names in ``text`` that are not called (not followed by ``(``), in order, each once; none when Python's
    tokenizer cannot read the text (the parser then says why)."""
    import io
    import tokenize

    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    names = [t.string for i, t in enumerate(toks) if t.type == tokenize.NAME
             and not (i + 1 < len(toks) and toks[i + 1].string == "(")]
    return list(dict.fromkeys(names))


def _refuse_not_real(tree: Any, text: str, where: str) -> None:
    """InputError when the evaluated stated form holds zoo, nan, oo, AccumBounds or the imaginary unit (the
    non-real parts :func:`attnverify.theory.certified.uncertifiable` lists): it is undefined or not real
    everywhere, so no point can judge it."""
    from attnverify.theory.certified import uncertifiable

    bad = [name for name in uncertifiable(tree) if name in _NOT_A_REAL]
    if bad:
        first = min(bad, key=list(_NOT_A_REAL).index)
        raise InputError(f"{where}: {_short(text)} {_NOT_A_REAL[first]}")


def _parse_failure(text: str, exc: Exception) -> str:
    """Why a text did not parse, in words: unbalanced brackets (counted), a syntax error, or an operation the
    expression's parts do not support (``@``, ``[ ]``); never the parser's own exception text."""
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return "a ')' closes no bracket"
    if depth > 0:
        return f"{depth} bracket(s) left open"
    if isinstance(exc, SyntaxError) or type(exc).__name__ == "TokenError":
        return "invalid syntax: an expression of numbers, symbols, + - * / ** and functions"
    return "an operation its parts do not support: numbers, symbols, + - * / ** and functions only"


def parse_expression(text: str, symbols: Mapping[str, Any], where: str) -> Any:
    """``text`` as a SymPy expression in exactly the given ``symbols`` (name -> Symbol), parsed without
    evaluating arbitrary code (``sympy.parsing.sympy_parser.parse_expr`` with a closed namespace of the
    symbols, the functions with a certified evaluation and pi, E). ``^`` is a power (SymPy's ``convert_xor``).
    Every decimal literal is the exact Rational it spells (SymPy's ``rationalize``); ``Float(...)`` is refused (the
    transformation would read Float('2.5', 30) as Rational('2.5', 30) = 1/12).

    Refused with one :class:`InputError` line naming the claim (``where``): an empty or over-long text, LaTeX
    (with a hint to write it in SymPy syntax), a syntax error, an unknown function (with the
    functions there are), an unknown symbol (a function's name used without an argument, ``gamma*R`` where gamma is
    no symbol, among them), a number too large to read exactly, a tree of more than MAX_EXPRESSION_NODES nodes, a
    power of numbers or a gamma of a number too large to evaluate, or a logarithm to a base b <= 0 or 1. Nothing is evaluated before these checks, so a bad expression is refused at once. After evaluation,
    a form that is undefined or not real (zoo as 1/0 gives, nan, oo, the imaginary unit as sqrt(-1) gives) is
    refused too."""
    import re

    import sympy as sp
    from sympy.parsing.sympy_parser import convert_xor, parse_expr, rationalize, standard_transformations

    functions = _functions()
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: an empty expression")
    if isinstance(text, LatexText):
        where = where.replace("field 'stated'", "field 'stated_latex'")
        if len(text) > 4 * MAX_EXPRESSION_CHARS:
            raise InputError(f"{where}: the LaTeX form has {len(text)} characters, more than the "
                             f"{4 * MAX_EXPRESSION_CHARS} this tool reads")
        try:
            text = to_sympy_text(text, symbols)
        except LatexError as exc:
            raise InputError(f"{where}: {exc}") from None
    if len(text) > MAX_EXPRESSION_CHARS:
        raise InputError(f"{where}: the expression has {len(text)} characters, more than the {MAX_EXPRESSION_CHARS} "
                         "this tool reads")
    if "\\" in text or re.search(r"[{}$]", text):
        raise InputError(f"{where}: {_short(text)} looks like LaTeX; give it as stated_latex, or write it in SymPy "
                         "syntax (e.g. \\frac{a}{b} as a/b, e^{x} as exp(x), \\sqrt{x} as sqrt(x), x^{2} as x**2)")
    if any(bad in text for bad in ("__", "lambda", "import", ";")) or re.search(r"\.[A-Za-z_]", text):
        raise InputError(f"{where}: {_short(text)} is not an expression")
    for name in re.findall(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(", text):
        if name in symbols:
            raise InputError(f"{where}: {name!r} is a symbol here, not a function: {name}(...) cannot be called "
                             f"(write {name}*(...) for a product)")
        if name not in functions:
            raise InputError(f"{where}: unknown function {name!r}{did_you_mean(name, list(functions))} (the "
                             f"functions with a certified evaluation: {', '.join(n for n in functions if n not in _CONSTANTS)})")
    bare = [n for n in _bare_names(text) if n not in symbols and n in _PARSER_NAMES | set(functions)
            and n not in ("pi", "E")]
    if bare:                    # a function's name used as a symbol: SymPy would read it as the function itself
        raise _unknown_symbol(bare[0], symbols, where, function=bare[0] in functions)
    _refuse_literals(text, where)
    namespace = {**functions, "gamma": _gamma, **symbols}
    try:
        tree = parse_expr(text, local_dict=namespace, global_dict={"__builtins__": {}, **functions, "Add": sp.Add,
                                                                   "Mul": sp.Mul, "Pow": sp.Pow, "Symbol": sp.Symbol},
                          transformations=(*standard_transformations, convert_xor, rationalize), evaluate=False)
    except _TooLarge as exc:
        raise InputError(f"{where}: {exc} is a number too large to evaluate (more than {MAX_POWER_BITS} bits)") from None
    except RecursionError:
        raise InputError(f"{where}: the expression is too large to read (its terms nest deeper than Python's parser "
                         f"allows, about {sys.getrecursionlimit()} levels)") from None
    except Exception as exc:  # noqa: BLE001 -- any parse failure is bad input, reported in one line
        raise InputError(f"{where}: cannot parse {_short(text)} ({_parse_failure(text, exc)})") from None
    if not isinstance(tree, sp.Expr):
        raise InputError(f"{where}: {_short(text)} is not an expression")
    size = sum(1 for _ in sp.preorder_traversal(tree))
    if size > MAX_EXPRESSION_NODES:
        raise InputError(f"{where}: the expression has {size} nodes, more than the {MAX_EXPRESSION_NODES} this tool "
                         "evaluates")
    if _oversized_power(tree):
        raise InputError(f"{where}: {_short(text)} holds a power of numbers too large to evaluate")
    _refuse_bad_log_base(tree, text, where)
    unknown = sorted(s.name for s in tree.free_symbols if s.name not in symbols)
    if unknown:
        raise _unknown_symbol(unknown[0], symbols, where)
    try:
        tree = tree.doit()                                # now evaluate: every part has been checked
    except RecursionError:
        raise InputError(f"{where}: the expression is nested too deeply to evaluate") from None
    _refuse_not_real(tree, text, where)
    if any(isinstance(a, sp.Rational) and max(a.p.bit_length(), a.q.bit_length()) > MAX_POWER_BITS
           for a in sp.preorder_traversal(tree)):   # a product of small numbers can be one too large to use
        raise InputError(f"{where}: {_short(text)} evaluates to a number of more than {MAX_POWER_BITS} bits, too "
                         "large to evaluate")
    # the parser creates plain symbols for names it has not seen: map every name to the project's own symbol
    return tree.subs({s: symbols[s.name] for s in tree.free_symbols if s is not symbols[s.name]})
