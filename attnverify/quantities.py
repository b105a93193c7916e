"""The papers' quantities by qualified name (``model.name``, as ``attnverify list --quantities`` prints them), for
notebooks and other tools::

    attnverify.formula("<model>.<quantity>", **options)     # the derived SymPy expression (or number)
    attnverify.quantity("<model>.<quantity>", **values)     # its value: options and symbol values as keywords
    attnverify.formula("two_signals.J_limit", model="two_signals.toml")     # a model file's quantity

Every value is validated as ``attnverify audit`` validates a claim's ``at`` table
(:func:`attnverify.checks.domain.read_values`: its range and the constraints between the values given). Unknown
names, options and symbols, and values outside the domain, raise :class:`~attnverify.checks.params.InputError`
(with a did-you-mean for a name).
"""
from __future__ import annotations

import math
from typing import Any

from attnverify.checks.domain import read_values
from attnverify.checks.params import InputError, did_you_mean, shown


def lookup(name: str) -> tuple[Any, Any]:
    """(paper, quantity) of a qualified quantity name."""
    from attnverify.checks.registry import paper, papers

    _named(name)
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


def _named(name: Any) -> str:
    if not isinstance(name, str):
        raise InputError(f"quantity name: expected a string 'model.quantity' (attnverify list --quantities), got "
                         f"{shown(name)}")
    return name


def formula(name: str, *, model: Any = None, **options: Any) -> Any:
    """The derived side of the quantity ``name`` (``model.quantity``) at the model ``options``: a SymPy expression
    in the quantity's symbols for a formula quantity, else the derived number or enclosure. ``model``: a model
    file (path or parsed table) whose quantities ``name`` names (:mod:`attnverify.model_files`)."""
    from attnverify.model_files import qualified

    p, q = lookup(qualified(_named(name), model))
    opts, symbols = read_values(p, q, options)
    value = q.derive(**opts)
    return value.subs({q.symbols[k]: v for k, v in symbols.items()}) if symbols and hasattr(value, "subs") else value


def quantity(name: str, *, model: Any = None, **values: Any) -> float:
    """The derived value of the quantity ``name`` at ``values`` (its options and every free symbol); ``model`` as
    in :func:`formula`."""
    import sympy as sp

    from attnverify.model_files import qualified

    p, q = lookup(qualified(_named(name), model))
    opts, symbols = read_values(p, q, values)
    value = sp.sympify(q.derive(**opts)).subs({q.symbols[k]: v for k, v in symbols.items()})
    free = sorted(s.name for s in value.free_symbols)
    if free:
        raise InputError(f"{name}: give a value for {', '.join(free)}")
    out = float(value)
    if not math.isfinite(out):              # never a silent inf or NaN: the exact value, or that there is none
        from attnverify.theory.refusals import OutsideCertifiedRange

        exact = sp.N(value, 6)
        if exact.is_finite and exact.is_real:
            raise OutsideCertifiedRange(f"{name} = {exact} at these values: beyond double precision (attnverify."
                                        "formula gives it exactly)")
        raise OutsideCertifiedRange(f"{name} has no finite real value at these values ({exact})")
    return out
