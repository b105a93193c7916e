"""Mutation self-test machinery: run checks with a deliberately wrong closed form or implementation.

A mutant (:class:`attnverify.checks.plugin.Mutant`, listed by each paper's self-test module) is an argument: the
checks it names receive ``mutant.make(original)`` as their ``ctx.theory`` or ``ctx.numerics`` instead of their
decorator's object (:func:`receives`), so nothing global changes and a mutant's run cannot leak into another.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from attnverify.checks.plugin import Mutant

PACKAGES = ("attnverify.theory", "attnverify.numerics", "attnverify.checks")


def project_modules() -> list:
    return [m for name, m in list(sys.modules.items())
            if m is not None and name.startswith(tuple(p + "." for p in PACKAGES))]


def clear_caches() -> None:
    """Clear every ``functools`` cache of the project's modules."""
    for module in project_modules():
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and (getattr(value, "__module__", None) or "").startswith(tuple(p + "." for p in PACKAGES)):
                value.cache_clear()


def receives(mutants: Sequence[Mutant]) -> Callable[[Any], dict[str, Any]]:
    """``arguments(check)`` for the runner: what a check receives with ``mutants`` applied, in order, to its
    decorator's ``theory`` and ``numerics`` (each replacement built once per original object)."""
    built: dict[tuple[int, int], Any] = {}

    def arguments(check: Any) -> dict[str, Any]:
        out = {}
        for target in ("theory", "numerics"):
            obj = getattr(check, target)
            for m in mutants:
                if m.target == target:
                    key = (id(m), id(obj))
                    if key not in built:
                        built[key] = (obj, m.make(obj))       # keeps the original alive: its id stays unique
                    obj = built[key][1]
            out[target] = obj
        return out
    return arguments


@contextmanager
def applied(mutants: Sequence[Mutant]) -> Iterator[Callable[[Any], dict[str, Any]]]:
    """The runner's ``arguments`` with ``mutants`` applied (:func:`receives`); the project's caches are cleared
    before and after, so that no result computed with a mutant outlives its block."""
    clear_caches()
    try:
        yield receives(mutants)
    finally:
        clear_caches()


# ---------------------------------------------------------------------------------------------
# the self-test: run each mutant's checks with the mutant injected
# ---------------------------------------------------------------------------------------------
# An ``error`` verdict with one of these exception types is a crash of the mutant's plumbing (wrong signature,
# wrong return type), reported as such; no error counts as caught (``rejects``).
CRASH_TYPES = ("TypeError", "AttributeError", "NameError", "KeyError", "IndexError", "ImportError",
               "NotImplementedError", "RecursionError", "UnboundLocalError")


def result_row(result) -> dict:
    ev = result.evidence
    return {"check": result.id, "verdict": result.verdict, "error": result.error,
            "unresolved": bool(ev is not None and ev.unresolved),
            "observed": None if ev is None or ev.observed is None else float(ev.observed),
            "threshold": None if ev is None or ev.threshold is None else float(ev.threshold),
            "seconds": round(result.seconds, 2)}


def is_crash(row: dict) -> bool:
    """True for an ``error`` verdict caused by a plumbing exception (see CRASH_TYPES)."""
    return row["verdict"] == "error" and (row["error"] or "").split(":")[0].strip() in CRASH_TYPES


def rejects(row: dict) -> bool:
    """The result says the closed form is wrong: the verdict ``fail`` (the check compared our derivation with our
    numerics and found them in disagreement). An ``error`` never rejects: neither an exception (a crash of the
    plumbing, a ValueError of inadmissible parameters, an overflow: an exception is never a detection) nor numerics
    that could not decide (``unresolved``: no verdict on the closed form at all)."""
    return row["verdict"] == "fail"


def _judge(row: dict, baseline: dict | None) -> dict:
    """Fill in which results catch the mutant: ``rejects`` it, and ``pass`` on the baseline."""
    for r in row["results"]:
        r["baseline_verdict"] = (baseline or {}).get(r["check"], "pass")
        r["crash"] = is_crash(r)
        r["catches"] = rejects(r) and r["baseline_verdict"] == "pass"
    row["caught_by"] = [r["check"] for r in row["results"] if r["catches"]]
    row["caught"] = bool(row["caught_by"])
    return row


def run_mutant(mutant: Mutant, *, seed: int = 0, profile: str = "quick", baseline: dict | None = None,
               memos: dict[str, dict] | None = None) -> dict:
    """Run ``mutant.checks`` serially with the mutant injected; the row of the selftest JSON.

    A check catches the mutant when its verdict is ``fail`` (``rejects``: an error, whatever its cause, is never a
    detection), and it passed on the unmutated code (``baseline``: check id -> verdict; absent ids are not required to pass).
    ``memos`` (check id -> task memo of the unmutated run): a theory mutant reads the unmutated simulations, which never
    read the theory (the framework's rule); a numerics mutant computes its own."""
    from attnverify.checks.runner import run

    shared = memos if mutant.target == "theory" else None
    with applied([mutant]) as arguments:
        report = run(list(mutant.checks), profile=profile, seed=seed, arguments=arguments, memos=shared,
                     claims=False)
    return _judge({"mutant": mutant.name, "target": mutant.target,
                   "description": mutant.description, "equivalent": mutant.equivalent or None,
                   "checks": list(mutant.checks), "results": [result_row(r) for r in report.results]}, baseline)


# mutants for the worker processes of ``selftest(..., jobs > 1)``: set before the fork, read by index in the child
# (a Mutant holds functions such as lambdas that need not pickle; a forked child inherits them)
_FORKED: list = []


def _forked_task(task: tuple[str, object, int, str, object]) -> list[dict] | dict:
    """Worker of ``selftest(..., jobs > 1)``: ("baseline", check id) runs one unmutated check (with the task store,
    if any); ("mutant", i) runs mutant i (the injection is per process; the caller judges the row against the
    baseline)."""
    kind, what, seed, profile, store = task
    if kind == "baseline":
        from attnverify.checks.runner import run

        return [result_row(r) for r in run([what], profile=profile, seed=seed, claims=False, store=store).results]
    return run_mutant(_FORKED[what], seed=seed, profile=profile)


def selftest(mutants, *, seed: int = 0, profile: str = "quick", progress=None, jobs: int = 1,
             store: Any = None) -> dict:
    """Baseline run of every check the mutants name, then each mutant in turn. Returns ``{"mutants": n, "caught": k,
    "equivalent": e, "all_caught": bool, "rows": [...], "baseline": [...]}``; ``all_caught``: every mutant that is
    not equivalent is caught. ``store``: a task store (attnverify.checks.store.TaskStore) for the baseline runs
    only, as ``attnverify run`` uses one (nothing is injected while they run, so the store sees the code it keys):
    a baseline at the quick audit's seed reads the simulations that audit stored, bit for bit.

    ``jobs = 1`` runs everything one after another in this process. ``jobs > 1`` runs the baseline checks and the
    mutants as separate tasks in that many worker processes (fork start method, a fresh child per task): each child
    injects its own mutant, which reaches only the checks of that process. The rows are the same either way (each
    check's random streams derive from (seed, check id)), apart from the measured seconds; ``progress`` is then
    called as the mutants' rows come back, in order.
    """
    import multiprocessing
    import time

    from attnverify.checks.runner import run
    from attnverify.executors import ignore_interrupts

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    mutants = list(mutants)
    ids = list(dict.fromkeys(c for m in mutants for c in m.checks))
    start = time.perf_counter()
    clear_caches()
    if jobs > 1 and len(ids) + len(mutants) > 1:
        _FORKED[:] = mutants
        tasks = [("baseline", c, seed, profile, store) for c in ids] + [("mutant", i, seed, profile, None)
                                                                         for i in range(len(mutants))]
        try:
            # the children ignore Ctrl-C (the terminal sends it to every process): leaving the block terminates them
            with multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)), initializer=ignore_interrupts,
                                                          maxtasksperchild=1) as pool:
                results = pool.imap(_forked_task, tasks, chunksize=1)
                base = [row for _ in ids for row in next(results)]
                verdicts = {b["check"]: b["verdict"] for b in base}
                rows = []
                for i, row in enumerate(results):
                    if progress is not None:
                        progress(i, len(mutants), mutants[i].name)
                    rows.append(_judge(row, verdicts))
        finally:
            _FORKED.clear()
    else:
        memos: dict[str, dict] = {}
        base = [result_row(r) for r in run(ids, profile=profile, seed=seed, memos=memos, claims=False,
                                           store=store).results] if ids else []
        verdicts = {b["check"]: b["verdict"] for b in base}
        rows = []
        for i, m in enumerate(mutants):
            if progress is not None:
                progress(i, len(mutants), m.name)
            rows.append(run_mutant(m, seed=seed, profile=profile, baseline=verdicts, memos=memos))
    return {"mutants": len(rows), "caught": sum(r["caught"] for r in rows),
            "equivalent": sum(bool(r["equivalent"]) for r in rows),
            "all_caught": all(r["caught"] or r["equivalent"] for r in rows), "seed": seed, "profile": profile,
            "baseline": base, "baseline_all_pass": all(b["verdict"] == "pass" for b in base),
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}
