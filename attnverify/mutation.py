"""Mutation self-test machinery: inject a deliberately wrong closed form or implementation.

A mutant replaces one public function of ``theory`` or ``numerics`` by a wrong version. The
replacement goes everywhere the original is referenced (the defining module and every module that
imported it by name), so the checks see the mutant through their ordinary code path. Cached
derivations are cleared before and after, so no correct result leaks into the mutant run or back.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

PACKAGES = ("theory", "numerics", "checks")


@dataclass(frozen=True)
class Mutant:
    """A named wrong version of ``module.attribute``, and the checks that should catch it.

    ``make(original)`` returns the replacement, built from the original object. ``equivalent`` is empty, or the
    proof that the mutated statement is still true for every admissible input (an equivalent mutant: no correct
    check can reject it, so it is run and reported but not counted against the checks).
    """

    name: str
    module: str
    attribute: str
    make: Callable[[Any], Any]
    checks: tuple[str, ...]
    description: str
    equivalent: str = ""


def project_modules() -> list:
    return [m for name, m in list(sys.modules.items())
            if m is not None and name.split(".")[0] in PACKAGES]


def clear_caches() -> None:
    """Clear every ``functools`` cache of the project's modules."""
    for module in project_modules():
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", "").split(".")[0] in PACKAGES:
                value.cache_clear()


@contextmanager
def injected(mutant: Mutant) -> Iterator[None]:
    """Within the block, every reference to ``mutant.module.attribute`` is the mutant."""
    from checks.registry import load

    load()
    original = getattr(importlib.import_module(mutant.module), mutant.attribute)
    replacement = mutant.make(original)
    patched = [m for m in project_modules() if vars(m).get(mutant.attribute) is original]
    clear_caches()
    try:
        for module in patched:
            setattr(module, mutant.attribute, replacement)
        yield
    finally:
        for module in patched:
            setattr(module, mutant.attribute, original)
        clear_caches()


# ---------------------------------------------------------------------------------------------
# the self-test: run each mutant's checks with the mutant injected
# ---------------------------------------------------------------------------------------------
# An ``error`` verdict with one of these exception types is a crash of the mutant's plumbing (wrong signature,
# wrong return type), not a detection: it does not count as caught.
CRASH_TYPES = ("TypeError", "AttributeError", "NameError", "KeyError", "IndexError", "ImportError",
               "NotImplementedError", "RecursionError", "UnboundLocalError")


def _row(result) -> dict:
    ev = result.evidence
    return {"check": result.id, "verdict": result.verdict, "error": result.error,
            "observed": None if ev is None or ev.observed is None else float(ev.observed),
            "threshold": None if ev is None or ev.threshold is None else float(ev.threshold),
            "seconds": round(result.seconds, 2)}


def is_crash(row: dict) -> bool:
    """True for an ``error`` verdict caused by a plumbing exception (see CRASH_TYPES)."""
    return row["verdict"] == "error" and (row["error"] or "").split(":")[0].strip() in CRASH_TYPES


def run_mutant(mutant: Mutant, *, seed: int = 0, profile: str = "quick", baseline: dict | None = None) -> dict:
    """Run ``mutant.checks`` serially with the mutant injected; the row of the selftest JSON.

    A check catches the mutant when its verdict is not ``pass`` (fail, or an error that is not a crash), and
    it passed on the unmutated code (``baseline``: check id -> verdict; absent ids are not required to pass)."""
    from checks.runner import run

    with injected(mutant):
        report = run(list(mutant.checks), profile=profile, seed=seed)
    results = [_row(r) for r in report.results]
    for r in results:
        r["baseline_verdict"] = (baseline or {}).get(r["check"], "pass")
        r["crash"] = is_crash(r)
        r["catches"] = r["verdict"] != "pass" and not r["crash"] and r["baseline_verdict"] == "pass"
    return {"mutant": mutant.name, "module": mutant.module, "attribute": mutant.attribute,
            "description": mutant.description, "equivalent": mutant.equivalent or None, "checks": list(mutant.checks),
            "caught_by": [r["check"] for r in results if r["catches"]],
            "caught": any(r["catches"] for r in results), "results": results}


def selftest(mutants, *, seed: int = 0, profile: str = "quick", progress=None) -> dict:
    """Baseline run of every check the mutants name, then each mutant in turn (serially, so the injection
    reaches the checks). Returns ``{"mutants": n, "caught": k, "equivalent": e, "all_caught": bool, "rows": [...],
    "baseline": [...]}``; ``all_caught``: every mutant that is not equivalent is caught."""
    import time

    from checks.runner import run

    mutants = list(mutants)
    ids = list(dict.fromkeys(c for m in mutants for c in m.checks))
    start = time.perf_counter()
    clear_caches()
    base = [_row(r) for r in run(ids, profile=profile, seed=seed).results] if ids else []
    verdicts = {b["check"]: b["verdict"] for b in base}
    rows = []
    for i, m in enumerate(mutants):
        if progress is not None:
            progress(i, len(mutants), m.name)
        rows.append(run_mutant(m, seed=seed, profile=profile, baseline=verdicts))
    return {"mutants": len(rows), "caught": sum(r["caught"] for r in rows),
            "equivalent": sum(bool(r["equivalent"]) for r in rows),
            "all_caught": all(r["caught"] or r["equivalent"] for r in rows), "seed": seed, "profile": profile,
            "baseline": base, "baseline_all_pass": all(b["verdict"] == "pass" for b in base),
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}
