"""The symbols of the closed forms, with their assumptions, and substitution by plain names.

Paper A's closed forms are SymPy expressions in ``rho`` (real) and ``theta, beta, sigma, R, L, d`` (positive).
SymPy matches symbols by name *and* assumptions, so ``J.subs(sympy.Symbol("theta"), 2)`` silently does
nothing: use these symbols, or :func:`subs`, which accepts plain names::

    from attnverify import symbols as S
    S.subs(J, theta=2, beta=1)            # or J.subs(S.theta, 2)

Paper B's bound uses ``beta, t, K, C1, c`` (positive; ``C1`` prints as ``C_1``), available as ``meanfield``.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import sympy as sp

from attnverify.theory import mean_field as _mf
from attnverify.theory.signal_recovery import L, R, beta, d, rho, sigma, theta

meanfield = SimpleNamespace(beta=_mf.beta, t=_mf.t, K=_mf.K, C1=_mf.C1, c=_mf.c)

ALL = {"rho": rho, "theta": theta, "beta": beta, "sigma": sigma, "R": R, "L": L, "d": d}

__all__ = ["L", "R", "beta", "d", "meanfield", "rho", "sigma", "subs", "symbol", "theta"]


def symbol(name: str) -> sp.Symbol:
    """The project's symbol called ``name`` (Paper A's first, then Paper B's ``t, K, C1, c``)."""
    if name in ALL:
        return ALL[name]
    if hasattr(meanfield, name):
        return getattr(meanfield, name)
    raise KeyError(f"no symbol {name!r} (known: {', '.join([*ALL, 't', 'K', 'C1', 'c'])})")


def subs(expr: Any, mapping: dict | None = None, **values: Any) -> Any:
    """``expr`` with values substituted for symbols given by *name* (or by any Symbol of that name, whatever
    its assumptions): ``subs(J, theta=2)``, ``subs(J, {"theta": 2})``, ``subs(J, {Symbol("theta"): 2})``.

    Every free symbol of ``expr`` whose name matches is replaced, so the result does not depend on how the
    symbol was created. A name that is neither a free symbol of ``expr`` nor one of the project's symbols (a
    typo such as ``thetta``) raises :class:`KeyError`: a silent no-op substitution is the mistake this helper
    exists to prevent. A project symbol the expression does not contain (``sigma`` in w) is allowed."""
    wanted: dict[str, Any] = {}
    for key, value in {**(mapping or {}), **values}.items():
        name = key.name if isinstance(key, sp.Symbol) else str(key)
        if name == "C_1":
            name = "C1"
        wanted[name] = value
    expr = sp.sympify(expr)
    free = {s.name: s for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    if "C_1" in free:
        free["C1"] = free.pop("C_1")
    known = {*ALL, "t", "K", "C1", "c"}
    missing = [n for n in wanted if n not in free and n not in known]
    if missing:
        raise KeyError(f"{', '.join(missing)}: not a free symbol of the expression "
                       f"(free: {', '.join(sorted(free)) or 'none'})")
    return expr.subs({free[n]: v for n, v in wanted.items() if n in free})
