"""attnverify checks: each compares a SymPy closed form with numerics and gives a verdict; claims judge the papers'
stated forms against both.

Python API (names load on first use)::

    from attnverify import checks
    report = checks.run(["<model>.<check>"], profile="quick", seed=0)
    report.results[0].verdict   # "pass", "fail" or "error"
    checks.catalogue()          # id, claim and source of every check
"""
from __future__ import annotations

import importlib

_LAZY = {"Evidence": "evidence", "InputError": "params", "Param": "params", "Plot": "evidence",
         "Series": "evidence", "check": "registry", "Report": "runner", "catalogue": "runner", "run": "runner"}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'attnverify.checks' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"attnverify.checks.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
