"""attnverify checks: each compares a SymPy closed form with numerics and gives a verdict.

Python API::

    from attnverify import checks
    report = checks.run(["signal.objective_vs_montecarlo"], profile="quick", seed=0)
    report.results[0].verdict   # "pass", "fail" or "error"
    checks.catalogue()          # id, claim and source of every check
"""
from attnverify.checks.framework import Evidence, InputError, Param, Plot, Series, check
from attnverify.checks.runner import Report, catalogue, run

__all__ = ["Evidence", "InputError", "Param", "Plot", "Report", "Series", "catalogue", "check", "run"]
