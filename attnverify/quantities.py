"""The papers' quantities by qualified name (``model.name``, as ``attnverify list --quantities`` prints them), for
notebooks and other tools::

    attnverify.formula("<model>.<quantity>", **options)     # the derived SymPy expression (or number)
    attnverify.quantity("<model>.<quantity>", **values)     # its value: options and symbol values as keywords

Unknown names, options and symbols raise :class:`~attnverify.checks.params.InputError` with a did-you-mean.
"""
from __future__ import annotations

from typing import Any

from attnverify.checks.params import InputError, did_you_mean


def lookup(name: str) -> tuple[Any, Any]:
    """(paper, quantity) of a qualified quantity name."""
    from attnverify.checks.registry import paper, papers

    model, dot, qname = name.partition(".")
    if not dot:
        known = [f"{p.model}.{q.name}" for p in papers() for q in p.quantities()]
        raise InputError(f"quantity names are qualified by the model: {name!r}{did_you_mean(name, known)}")
    p = paper(model)
    found = {q.name: q for q in p.quantities()}
    if qname not in found:
        raise InputError(f"{model} has no quantity {qname!r}{did_you_mean(qname, list(found))} "
                         f"(known: {', '.join(found) or 'none'})")
    return p, found[qname]


def _split(q: Any, given: dict) -> tuple[dict, dict]:
    names = {o.name for o in q.options}
    unknown = [k for k in given if k not in names and k not in q.symbols]
    if unknown:
        raise InputError(f"{q.name}: {unknown[0]!r} is neither an option nor a symbol"
                         f"{did_you_mean(unknown[0], sorted(names | set(q.symbols)))}")
    options = {o.name: o.read(given[o.name]) if o.name in given else o.validate(o.default) for o in q.options}
    return options, {k: v for k, v in given.items() if k in q.symbols and k not in names}


def formula(name: str, **options: Any) -> Any:
    """The derived side of the quantity ``name`` (``model.quantity``) at the model ``options``: a SymPy expression
    in the quantity's symbols for a formula quantity, else the derived number or enclosure."""
    _, q = lookup(name)
    opts, symbols = _split(q, options)
    value = q.derive(**opts)
    return value.subs({q.symbols[k]: v for k, v in symbols.items()}) if symbols and hasattr(value, "subs") else value


def quantity(name: str, **values: Any) -> float:
    """The derived value of the quantity ``name`` at ``values`` (its options and every free symbol)."""
    import sympy as sp

    _, q = lookup(name)
    opts, symbols = _split(q, values)
    value = sp.sympify(q.derive(**opts)).subs({q.symbols[k]: v for k, v in symbols.items()})
    free = sorted(s.name for s in value.free_symbols)
    if free:
        raise InputError(f"{name}: give a value for {', '.join(free)}")
    return float(value)
