"""The papers' closed forms as SymPy objects, for notebooks and papers (every one derived by the theory package,
none typed in)::

    from attnverify import formulas as f
    f.names()                        # every accessor of the registered papers' namespaces, with its model
    f.<name>(...)                    # one of them (Paper.namespace), e.g. a SymPy expression of the model

Accessors that a paper marks with :func:`attnverify.checks.plugin.cached_formula` are kept in the persistent
derivation cache (:mod:`attnverify.derive`), keyed by the code version and the arguments: deriving them takes
seconds, reading them back milliseconds.
"""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any


def _namespaces() -> list[tuple[str, Any]]:
    from attnverify.checks.registry import papers

    return [(p.model, importlib.import_module(p.namespace)) for p in papers() if p.namespace]


def names() -> dict[str, str]:
    """Every public accessor of the papers' formula namespaces -> the model it belongs to."""
    out: dict[str, str] = {}
    for model, module in _namespaces():
        for name, value in vars(module).items():
            if callable(value) and not name.startswith("_") and getattr(value, "__module__", "") == module.__name__:
                out.setdefault(name, model)
    return out


def _persistent(fn):
    """``fn`` with its results kept in the persistent derivation cache (:mod:`attnverify.cache`: loaded only from a
    directory no other user can write), keyed by the code version, its qualified name and its arguments."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from attnverify import cache
        from attnverify.derive import code_version

        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        tag = "-".join(map(str, bound.args))
        name = f"{fn.__module__}.{fn.__name__}-{tag}-{code_version()}.pickle"
        hit, value = cache.load(name)
        if hit:
            return value
        value = fn(*bound.args)
        cache.save(name, value)
        return value

    return wrapper


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    found = [(model, getattr(module, name)) for model, module in _namespaces() if callable(getattr(module, name, None))
             and not name.startswith("_")]
    if not found:
        from attnverify.checks.params import did_you_mean

        raise AttributeError(f"no formula {name!r}{did_you_mean(name, list(names()))} (see attnverify.formulas.names())")
    if len(found) > 1:
        raise AttributeError(f"{name!r} is a formula of several papers ({', '.join(m for m, _ in found)}): use the "
                             "paper's namespace module")
    fn = found[0][1]
    value = _persistent(fn) if getattr(fn, "__attnverify_cached__", False) else fn
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(["names", *names()])
