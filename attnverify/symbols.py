"""The symbols of the papers' closed forms, with their assumptions, and substitution by plain names.

SymPy matches symbols by name *and* assumptions, so ``J.subs(sympy.Symbol("theta"), 2)`` silently does nothing
when ``theta`` was created positive: use these symbols, or :func:`subs`, which accepts plain names::

    from attnverify import symbols as S
    S.symbol("theta")                      # the project's symbol called theta
    S.subs(J, theta=2, beta=1)

Each registered paper names its symbols in its formula namespace (a ``SYMBOLS`` mapping of name -> Symbol);
they are reached here as attributes (``S.theta``).
"""
from __future__ import annotations

import importlib
from typing import Any

import sympy as sp

__all__ = ["all_symbols", "subs", "symbol"]

_ALIASES = {"C_1": "C1"}


def all_symbols() -> dict[str, sp.Symbol]:
    """Every registered paper's symbols by name (the first paper, by key, wins a shared name)."""
    from attnverify.checks.registry import papers

    out: dict[str, sp.Symbol] = {}
    for p in papers():
        if p.namespace:
            for name, sym in getattr(importlib.import_module(p.namespace), "SYMBOLS", {}).items():
                out.setdefault(name, sym)
    return out


def symbol(name: str) -> sp.Symbol:
    """The project's symbol called ``name``."""
    known = all_symbols()
    name = _ALIASES.get(name, name)
    if name in known:
        return known[name]
    raise KeyError(f"no symbol {name!r} (known: {', '.join(known)})")


def subs(expr: Any, mapping: dict | None = None, **values: Any) -> Any:
    """``expr`` with values substituted for symbols given by *name* (or by any Symbol of that name, whatever
    its assumptions): ``subs(J, theta=2)``, ``subs(J, {"theta": 2})``, ``subs(J, {Symbol("theta"): 2})``.

    Every free symbol of ``expr`` whose name matches is replaced, so the result does not depend on how the
    symbol was created. A name that is neither a free symbol of ``expr`` nor one of the project's symbols (a
    typo such as ``thetta``) raises :class:`KeyError`: a silent no-op substitution is the mistake this helper
    exists to prevent. A project symbol the expression does not contain is allowed."""
    project = all_symbols()
    wanted: dict[str, Any] = {}
    for key, value in {**(mapping or {}), **values}.items():
        name = key.name if isinstance(key, sp.Symbol) else str(key)
        wanted[_ALIASES.get(name, name)] = value
    expr = sp.sympify(expr)
    by_name: dict[str, list] = {}
    for s in expr.free_symbols:
        if isinstance(s, sp.Symbol):
            by_name.setdefault(_ALIASES.get(s.name, s.name), []).append(s)
    # a project name may differ from its SymPy name (lam is Symbol('lambda') in a paper's namespace): both match
    names = {n: {n} | ({project[n].name} if n in project else set()) for n in wanted}
    known = set(project) | {s.name for s in project.values()}
    missing = [n for n in wanted if not any(m in by_name for m in names[n]) and n not in known]
    if missing:
        raise KeyError(f"{', '.join(missing)}: not a free symbol of the expression "
                       f"(free: {', '.join(sorted(by_name)) or 'none'})")
    return expr.subs({s: v for n, v in wanted.items() for m in names[n] for s in by_name.get(m, ())})


def __getattr__(name: str) -> sp.Symbol:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return symbol(name)
    except KeyError as exc:
        raise AttributeError(str(exc)) from None
