"""The paper profile, timed: every registered check run with ``profile="paper"``, one after the other (a
self-test of scale: ``attnverify bench --paper-profile``). Long: tens of minutes on 2 cores."""
from __future__ import annotations

from collections.abc import Callable

from attnverify.checks.timing import timed


def run_paper_profile(executor_kind: str = "local", seed: int = 0,
                      progress: Callable[[str], None] | None = None) -> dict:
    """Seconds and verdict of each check of the ``paper`` profile, run one after the other on ``executor_kind``
    (default: a process pool on all cores) without a task store, and the total."""
    from attnverify.checks.registry import all_checks
    from attnverify.checks.runner import run
    from attnverify.executors import make_executor

    out: dict = {"executor": executor_kind, "seconds": {}, "verdicts": {}}
    with make_executor(executor_kind) as ex:
        for c in all_checks():
            if progress:
                progress(f"paper profile: {c.id}")
            t, rep = timed(lambda: run([c.id], profile="paper", seed=seed, executor=ex))
            out["seconds"][c.id], out["verdicts"][c.id] = t, rep.results[0].verdict
    out["total_s"] = float(sum(out["seconds"].values()))
    return out
