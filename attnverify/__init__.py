"""attnverify: the application layer of the verifier (CLI, reports, LaTeX, self-tests, benchmarks).

It sits on top of ``checks`` (framework, checks, claims), ``theory`` (SymPy) and ``numerics``; nothing below
imports it.
"""
from checks.framework import InputError
from checks.runner import Report, catalogue, run

__version__ = "0.1.0"

__all__ = ["InputError", "Report", "__version__", "catalogue", "run"]
