"""One check run in a test, its numeric side shared between runs that differ only in the closed forms.

A check's numeric side is its ``Context.map`` tasks, deterministic functions of their arguments that never read the
theory (the framework's rule), so a run with a wrong closed form (a theory mutant) at the same check, seed and
parameters would recompute exactly the simulations of the unperturbed run. :func:`run_check` keeps them in a memo
per (check, seed, parameters), as the power self-test does. A numerics mutant is refused: its tasks may carry the
qualified name of the function they replace, so a memo could hand it the real simulator's results. An unperturbed
run may also read and write a task store (the session's ``task_store``, tests/conftest.py), as the power self-test's
unperturbed runs do: a run at the quick defaults then reads the simulations the quick audit stored.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnverify.checks.evidence import Result
from attnverify.checks.plugin import Mutant
from attnverify.checks.runner import plan, run_one
from attnverify.selftest.mutation import receives

_MEMOS: dict[tuple, dict] = {}


def run_check(check_id: str, *, seed: int = 0, overrides: dict | None = None, mutants: Sequence[Mutant] = (),
              theory: Any = None, store: Any = None) -> Result:
    """Run ``check_id`` at the quick profile with ``overrides``; with ``mutants`` (theory mutants) or ``theory`` (a
    replacement theory object), the check receives that theory instead of its own. ``store``: a task store
    (attnverify.checks.store.TaskStore) for an unperturbed run only (nothing replaced while it runs)."""
    if any(m.target != "theory" for m in mutants):
        raise ValueError("run_check shares the numeric side between runs: theory mutants only")
    if store is not None and (mutants or theory is not None):
        raise ValueError("run_check: a task store is for unperturbed runs only")
    [(check, params)] = plan([check_id], profile="quick", overrides=overrides or None)
    memo = _MEMOS.setdefault((check_id, seed, repr(sorted(params.items()))), {})
    arguments = receives(list(mutants))(check) if mutants else None
    if theory is not None:
        arguments = {"theory": theory}
    return run_one(check, params, seed=seed, profile="quick", memo=memo, arguments=arguments, store=store)
