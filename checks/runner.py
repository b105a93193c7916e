"""Run selected checks under a profile and seed, and collect their results in a :class:`Report`."""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Result, Unresolved, refusal_reason
from attnverify.checks.params import PROFILES, InputError, did_you_mean, shown
from attnverify.checks.reason import Reason, as_reason
from attnverify.checks.registry import Check
from attnverify.checks.claims import evaluate_claims
from attnverify.checks.registry import all_checks

from attnverify.checks.version import VERSION
from attnverify.theory.refusals import OutsideCertifiedRange


@dataclass
class Report:
    """The results of one audit, with what produced them (profile, seed, overrides)."""

    profile: str
    seed: int
    options: dict
    results: list[Result] = field(default_factory=list)
    claims: list = field(default_factory=list)          # list[attnverify.checks.claims.ClaimResult], from the results
    ledger: bool = True                                 # claims are the papers' ledger (False: a user's audit)
    version: str = VERSION

    @property
    def ok(self) -> bool:
        return all(r.verdict == "pass" for r in self.results)

    def wrap(self, result: Result) -> Result:
        """A result as this report keeps it (a subclass may add display methods)."""
        return result


def catalogue() -> list[dict]:
    """The id, claim and source of every check, in catalogue order."""
    return [{"id": c.id, "compares": c.compares, "source": c.source} for c in all_checks()]


def select(ids: list[str] | None) -> list[Check]:
    """The checks named by ``ids``: exact ids, or a family (``signal``, ``meanfield``)."""
    checks = all_checks()
    if not ids:
        return checks
    chosen: list[Check] = []
    for name in ids:
        if not isinstance(name, str):
            raise InputError(f"check id: expected a check id or a model name (a string), got {shown(name)}")
        match = [c for c in checks if c.id == name or c.id.startswith(name.rstrip(".") + ".")]
        if not match:
            names = {c.id for c in checks} | {c.id.split(".")[0] for c in checks}
            hint = did_you_mean(name, names) or " (see 'attnverify list')"
            raise InputError(f"unknown check id {name!r}{hint}")
        chosen += [c for c in match if c not in chosen]
    return chosen


def settings(profile: Any, seed: Any) -> int:
    """The seed of a run as an int, after the profile (one of PROFILES) and the seed (a non-negative integer) are
    checked: InputError otherwise. One rule for ``run``, ``audit`` and the command line."""
    if not isinstance(profile, str) or profile not in PROFILES:
        raise InputError(f"unknown profile {shown(profile)} (choose from {', '.join(PROFILES)})")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed: expected a non-negative integer, got {shown(seed)}")
    return int(seed)


def plan(ids: list[str] | None = None, *, profile: str = "quick",
         overrides: dict[str, Any] | None = None) -> list[tuple[Check, dict]]:
    """Validate everything a run needs before anything runs: ids, profile, overrides, parameters.

    All problems of the overrides (unknown keys, invalid values for any selected check) are collected and
    raised together as one :class:`InputError` (one line, joined by '; ')."""
    settings(profile, 0)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise InputError(f"overrides: expected a dict of parameter name -> value, got {shown(overrides)}")
    overrides = dict(overrides or {})
    if bad := [k for k in overrides if not isinstance(k, str)]:
        raise InputError(f"overrides: a parameter name must be a string, got {shown(bad[0])}")
    chosen = select(ids)
    known = {p.name for c in chosen for p in c.params}
    problems = [f"unknown parameter {key!r} for the selected checks{did_you_mean(key, known)}" for key in overrides
                if key not in known]
    plans = []
    for c in chosen:
        mine = {k: v for k, v in overrides.items() if c.param(k) is not None}
        try:
            plans.append((c, c.resolve(profile, mine)))
        except InputError as exc:
            problems.append(f"{c.id}: {exc}")
    if problems:   # every problem of the whole command line at once, on one line
        raise InputError("; ".join(problems))
    return plans


def run_one(check: Check, params: dict, *, seed: int, profile: str, executor: Executor | None = None,
            progress: Callable[[str, float], None] | None = None, memo: dict | None = None,
            store: Any = None, arguments: dict[str, Any] | None = None) -> Result:
    """Run one check; an exception inside it, or evidence the numerics could not resolve
    (``Evidence.unresolved``, or :class:`Unresolved` raised), gives the verdict ``error``, never a crash; the
    text of an unresolved verdict is kept typed (``Result.unresolved``) and as text in ``Result.error``
    ("Unresolved: ...", the typesetting convention; each output renders the typed text). ``memo`` and ``store``
    (a ``attnverify.checks.store.TaskStore``): see :meth:`attnverify.checks.context.Context.map`. ``arguments``
    replaces what the check receives (``{"theory": ...}`` or ``{"numerics": ...}``; a self-test's mutant); by
    default it receives its decorator's objects."""
    given = {"theory": check.theory, "numerics": check.numerics, **(arguments or {})}
    ctx = Context(check.id, seed, profile, executor=executor, progress=progress, memo=memo,
                  store=store.for_check(check.id, params, seed) if store is not None else None, **given)
    start = time.perf_counter()
    evidence: Evidence | None = None
    error: str | None = None
    unresolved: Reason | None = None
    try:
        with np.errstate(over="raise", invalid="raise"):
            evidence = check.run(dict(params), ctx)
        if not isinstance(evidence, Evidence):
            raise TypeError(f"the check returned {type(evidence).__name__}, not Evidence")
        for name in ("observed", "threshold"):
            value = getattr(evidence, name)
            if value is not None and not math.isfinite(float(value)):
                raise FloatingPointError(f"{name} is {value}: the check produced a non-finite number")
        if evidence.unresolved:
            unresolved = as_reason(evidence.unresolved)
            verdict, error = "error", f"Unresolved: {evidence.unresolved}"
        else:
            verdict = "pass" if evidence.passed else "fail"
    except (Unresolved, OutsideCertifiedRange) as exc:   # the numerics cannot decide, or nothing can be certified
        unresolved = exc.reason if isinstance(exc, Unresolved) else refusal_reason(exc)   # its parts typed
        evidence, verdict, error = None, "error", f"Unresolved: {unresolved}"
    except Exception as exc:  # noqa: BLE001 -- a broken check is a verdict, not a crash
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        error = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        evidence, verdict = None, "error"
    seconds = time.perf_counter() - start
    return Result(check.id, check.compares, check.source, verdict, params, seconds, evidence, error, seed,
                  check.formulas, unresolved)


def run(ids: list[str] | None = None, *, profile: str = "quick", seed: int = 0,
        overrides: dict[str, Any] | None = None, executor: Executor | None = None,
        progress: Callable[[str, float], None] | None = None, store: Any = None,
        plans: list[tuple[Check, dict]] | None = None, report: Report | None = None,
        on_result: Callable[[Report], None] | None = None,
        arguments: Callable[[Check], dict[str, Any]] | None = None, memos: dict[str, dict] | None = None,
        claims: bool = True) -> Report:
    """Run the checks ``ids`` (all when None) and return the :class:`Report` with its claims ledger.

    Raises :class:`InputError` for an unknown id, profile or parameter, or an invalid value, before
    any check runs. The same seed gives the same results: each check's random streams derive from
    ``(seed, check id)``. ``store``: a ``attnverify.checks.store.TaskStore``; finished sweep tasks are saved there
    and reused by a rerun (same report as an uninterrupted run). ``plans``: the plan already resolved by
    :func:`plan` (the parameters are resolved once per run); ``report``: the (empty) report to fill, e.g. of a
    subclass; ``on_result(report)`` is called after each check with the report so far (claims not yet evaluated).
    ``arguments(check)``: what each check receives instead of its decorator's objects (see :func:`run_one`).
    ``memos``: check id -> the memo of its tasks (:func:`run_one`), kept across runs that differ only in the theory
    a check receives (a self-test's theory mutant). ``claims``: evaluate the ledger (a self-test reads results only).
    """
    settings(profile, seed)
    plans = plan(ids, profile=profile, overrides=overrides) if plans is None else plans
    report = Report(profile=profile, seed=int(seed), options=dict(overrides or {})) if report is None else report
    for c, params in plans:
        report.results.append(report.wrap(run_one(c, params, seed=int(seed), profile=profile, executor=executor,
                                                  progress=progress, store=store,
                                                  memo=None if memos is None else memos.setdefault(c.id, {}),
                                                  arguments=arguments(c) if arguments is not None else None)))
        if on_result is not None:
            on_result(report)
    if claims:
        report.claims = evaluate_claims(report.results, profile=profile, seed=int(seed))
    return report
