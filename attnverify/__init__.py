"""attnverify: the application layer of the verifier (CLI, reports, LaTeX, self-tests, benchmarks) and its
Python face for notebooks::

    import attnverify
    from attnverify import symbols as S, formulas as f
    f.names()                              # the papers' closed-form accessors (SymPy expressions)
    S.subs(expr, theta=2)                  # substitute by plain names
    report = attnverify.run(["<model>.<check>"], seed=0)   # a check id, a model name, or None for all
    report                                 # tables in Jupyter; report.save("out"), report.to_markdown()
    report.results[0].plot()               # a matplotlib Figure
    attnverify.derivation("<model>")       # the steps (statement, SymPy result, reason)
    attnverify.papers()                    # the registered papers (attnverify list --models)
    attnverify.formula("<model>.<quantity>", **options)   # a derived quantity (attnverify list --quantities)
    attnverify.quantity("<model>.<quantity>", **values)   # its value
    attnverify.audit("claims.toml")        # judge stated claims of your own (same format as the papers')

It sits on top of ``checks`` (framework, checks, claims), ``theory`` (SymPy) and ``numerics``; nothing below
imports it. The names are loaded on first use, so the command line starts without SymPy.
"""
from __future__ import annotations

import importlib

from attnverify.checks.version import VERSION as __version__  # one version: pyproject.toml's

_LAZY = {
    "formulas": ("attnverify.formulas", None), "symbols": ("attnverify.symbols", None),
    "Report": ("attnverify.api", "Report"), "Result": ("attnverify.api", "Result"), "run": ("attnverify.api", "run"),
    "derivation": ("attnverify.api", "derivation"), "ClaimResult": ("attnverify.checks.claims", "ClaimResult"),
    "ledger": ("attnverify.checks.claims", "ledger"), "InputError": ("attnverify.checks.params", "InputError"),
    "catalogue": ("attnverify.checks.runner", "catalogue"), "papers": ("attnverify.checks.registry", "papers"),
    "audit": ("attnverify.user_claims", "audit"), "formula": ("attnverify.quantities", "formula"),
    "quantity": ("attnverify.quantities", "quantity"),
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'attnverify' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    value = value if attr is None else getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
