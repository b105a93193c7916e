"""attnverify: the application layer of the verifier (CLI, reports, LaTeX, self-tests, benchmarks) and its
Python face for notebooks::

    import attnverify
    from attnverify import symbols as S, formulas as f
    J = f.J("fixed")                       # SymPy expression in S.rho, S.theta, ...
    S.subs(J, theta=2)                     # substitute by plain names
    report = attnverify.run(["signal.objective_vs_montecarlo"], seed=0)
    report                                 # tables in Jupyter; report.save("out"), report.to_markdown()
    report.results[0].plot()               # a matplotlib Figure
    attnverify.derivation("signal")        # the steps (statement, SymPy result, reason)

It sits on top of ``checks`` (framework, checks, claims), ``theory`` (SymPy) and ``numerics``; nothing below
imports it. The names are loaded on first use, so the command line starts without SymPy.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "formulas": ("attnverify.formulas", None), "symbols": ("attnverify.symbols", None),
    "Report": ("attnverify.api", "Report"), "Result": ("attnverify.api", "Result"), "run": ("attnverify.api", "run"),
    "derivation": ("attnverify.derive", "derivation"), "ClaimResult": ("attnverify.checks.claims", "ClaimResult"),
    "ledger": ("attnverify.checks.claims", "ledger"), "InputError": ("attnverify.checks.framework", "InputError"),
    "catalogue": ("attnverify.checks.runner", "catalogue"),
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
