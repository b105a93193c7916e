"""A SymPy expression as JSON data and back, without ``eval``: the serialisation of a reason's mathematics
(:class:`attnverify.checks.reason.Math`).

A report's JSON is input that someone else may have written, so it is never evaluated: an expression is stored as
its tree, and reading it back builds only SymPy objects.

* a symbol: ``{"symbol": name, "assumptions": {...}}`` (the assumptions it was created with, so that
  ``Symbol("x", positive=True)`` comes back equal to itself);
* numbers exactly: ``{"integer": "12"}``, ``{"rational": ["1", "3"]}``, ``{"float": [sign, mantissa, exponent,
  bitcount], "precision": bits}`` (the binary mpf tuple: exact, no decimal rounding);
* a singleton (pi, E, I, oo, -oo, zoo, nan...): ``{"singleton": "Pi"}``;
* an undefined function applied to arguments (``W_2(x)``): ``{"function": name, "args": [...]}``;
* a string atom (a matrix symbol's name): ``{"str": text}``;
* any other node: ``{"node": class name, "args": [...]}``, rebuilt (without evaluation) by the SymPy class of that
  name. A name that is not a SymPy class is refused (ValueError), never looked up anywhere else.
"""
from __future__ import annotations

import functools
from typing import Any

__all__ = ["expr_to_data", "expr_from_data"]


def expr_to_data(expr: Any) -> dict:
    """``expr`` (a SymPy object) as JSON data (module docstring)."""
    import sympy as sp
    from sympy.core.function import AppliedUndef
    from sympy.core.symbol import Str

    if isinstance(expr, Str):
        return {"str": expr.name}
    if isinstance(expr, sp.Symbol):
        orig = getattr(expr, "_assumptions_orig", None)
        if orig is None:                                               # SymPy < 1.12
            orig = {k: v for k, v in expr.assumptions0.items() if k != "commutative" or v is False}
        return {"symbol": expr.name, "assumptions": {k: bool(v) for k, v in orig.items() if v is not None}}
    if isinstance(expr, sp.Integer):
        return {"integer": str(int(expr))}
    if isinstance(expr, sp.Rational):
        return {"rational": [str(expr.p), str(expr.q)]}
    if isinstance(expr, sp.Float):
        sign, man, exp, bc = expr._mpf_
        return {"float": [int(sign), hex(int(man)), int(exp), int(bc)], "precision": int(expr._prec)}
    if isinstance(expr, sp.Basic) and not expr.args and type(expr).__name__ in _singletons():
        return {"singleton": type(expr).__name__}
    if isinstance(expr, AppliedUndef):
        return {"function": expr.func.__name__, "args": [expr_to_data(a) for a in expr.args]}
    if isinstance(expr, sp.Basic):
        return {"node": type(expr).__name__, "args": [expr_to_data(a) for a in expr.args]}
    raise ValueError(f"not a SymPy object: {type(expr).__name__}")


def expr_from_data(data: dict) -> Any:
    """The SymPy object that :func:`expr_to_data` stored (ValueError for data it cannot have written)."""
    import sympy as sp
    from sympy.core.symbol import Str

    if not isinstance(data, dict):
        raise ValueError(f"an expression node must be a JSON object, got {type(data).__name__}")
    if "str" in data:
        return Str(str(data["str"]))
    if "symbol" in data:
        assumptions = {str(k): bool(v) for k, v in dict(data.get("assumptions") or {}).items()}
        return sp.Symbol(str(data["symbol"]), **assumptions)
    if "integer" in data:
        return sp.Integer(int(data["integer"]))
    if "rational" in data:
        p, q = data["rational"]
        return sp.Rational(int(p), int(q))
    if "float" in data:
        sign, man, exp, bc = data["float"]
        mpf = (int(sign), int(man, 16), int(exp), int(bc))
        return sp.Float._new(mpf, int(data.get("precision", 53)))
    if "singleton" in data:
        name = str(data["singleton"])
        if name not in _singletons():
            raise ValueError(f"unknown SymPy singleton {name!r}")
        return getattr(sp.S, name)
    args = [expr_from_data(a) for a in data.get("args", [])]
    if "function" in data:
        return sp.Function(str(data["function"]))(*args)
    name = str(data.get("node", ""))
    cls = _classes().get(name)
    if cls is None:
        raise ValueError(f"unknown SymPy class {name!r} in a stored expression")
    return _build(cls, tuple(args))


def _build(cls: type, args: tuple) -> Any:
    """The node ``cls(*args)`` exactly as stored: built evaluated, else unevaluated, else as a bare node (an
    evaluation that rewrites the arguments -- ``x + x`` into ``2 x`` -- is not the stored tree)."""
    from sympy import Basic
    from sympy.core.parameters import evaluate

    def unevaluated() -> Any:
        with evaluate(False):
            return cls(*args)

    for attempt in (lambda: cls(*args), unevaluated):
        try:
            out = attempt()
        except Exception:  # noqa: BLE001 -- a class that will not rebuild this way is built bare below
            continue
        if type(out) is cls and out.args == args:
            return out
    return Basic.__new__(cls, *args)


@functools.lru_cache(maxsize=1)
def _singletons() -> frozenset:
    import sympy as sp

    return frozenset(name for name in dir(sp.S) if not name.startswith("_")
                     and isinstance(getattr(sp.S, name, None), sp.Basic))


@functools.lru_cache(maxsize=1)
def _classes() -> dict:
    """Every SymPy class (a subclass of Basic defined in the sympy package) by name; the first one found wins."""
    import sympy as sp

    found: dict = {}
    seen: set = set()
    todo = [sp.Basic]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub in seen:
                continue
            seen.add(sub)
            if (sub.__module__ or "").startswith("sympy.") and sub.__name__ not in found:
                found[sub.__name__] = sub
            todo.append(sub)
    found.setdefault("Basic", sp.Basic)
    # the public names first: sympy.Add is sympy.core.add.Add, whatever else shares a name
    for name in dir(sp):
        obj = getattr(sp, name)
        if isinstance(obj, type) and issubclass(obj, sp.Basic):
            found[obj.__name__] = obj
    return found
