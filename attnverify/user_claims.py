"""``attnverify audit FILE.toml`` and ``attnverify.audit(path_or_dict)``: a user's stated claims, judged as the
papers' own are (see :mod:`attnverify.checks.audit`). The file has the format of the papers' stated-claims files."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from attnverify.checks.audit import evaluate, resolve
from attnverify.checks.params import InputError, number_problem, shown
from attnverify.checks.runner import settings
from attnverify.checks.stated import read_toml


def prepare(source: str | Path | Mapping[str, Any]) -> list:
    """The claims of ``source`` (a path to a TOML file, or its parsed dict), each matched to what judges it:
    every problem of the file is an InputError before any work. A top-level ``model = "FILE.toml"`` (relative to
    the claims file) registers that model file's paper (attnverify.checks.engine) and is every claim's default
    model."""
    from attnverify.checks.engine.claims_file import with_model_file

    if not isinstance(source, (str, Path, Mapping)):
        raise InputError(f"claims: expected the path of a claims file (.toml) or its parsed table, got "
                         f"{shown(source)}")
    doc, model = with_model_file(source)
    _refuse_non_doubles(doc, str(source) if not isinstance(source, Mapping) else "claims")
    return resolve(read_toml(doc, model=model, origin=str(source) if not isinstance(source, Mapping) else "claims"))


def _refuse_non_doubles(doc: Any, origin: str) -> None:
    """Every number of every claim a finite double (a 400-digit integer, nan or inf anywhere in a claim, in
    ``stated``, ``at``, ``resolution`` or a ``protocol``, is refused naming the claim and the field), before the
    claims are read."""
    entries = doc.get("claim") if isinstance(doc, Mapping) else None
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        found = number_problem(entry) if isinstance(entry, Mapping) else None
        if found is not None:
            cid = entry.get("id")
            where = f"{origin}: claim {cid!r}" if isinstance(cid, str) else f"{origin}: claim #{i + 1}"
            raise InputError(f"{where}: field {found[0]!r}: {found[1]}")


def checks_of(resolved: list) -> list[str]:
    """The checks whose evidence the restated built-in claims read, each once."""
    return list(dict.fromkeys(c for r in resolved for c in r.checks))


def audit(source: str | Path | Mapping[str, Any], *, profile: str = "quick", seed: int = 0,
          executor: Executor | None = None, progress: Callable[[str, float], None] | None = None,
          store: Any = None) -> Any:
    """Judge the stated claims of ``source``: returns an :class:`attnverify.api.Report` whose ``claims`` are the
    file's rows (id, verdict, condition, reason, stated form, command) and whose ``results`` are the checks that
    its restatements of built-in claims read (none when every claim is on a quantity)."""
    from attnverify.api import Claim, Report, run

    settings(profile, seed)                     # the run's profile and seed, as run() checks them: before any work
    resolved = prepare(source)
    ids = checks_of(resolved)
    report = run(ids, profile=profile, seed=seed, executor=executor, progress=progress, store=store) if ids else \
        Report(profile=profile, seed=int(seed), options={})
    report.claims = [Claim.of(c) for c in evaluate(resolved, {r.id: r for r in report.results}, int(seed))]
    report.ledger = False                       # a user's claims, not the papers' ledger
    return report
