"""Test-suite settings: CLI runs store their task results and derivations in a temporary directory, not in the
user's cache. Under pytest-xdist the workers share one such directory (its writes are atomic renames), so a
derivation computed by one worker is read by the other. The ``task_store`` fixture opens the same directory as a
task store for API runs at the quick profile that repeat one another's simulations (the README's quick audit, the
power smoke's unperturbed runs, a paper's quick run): a task stored by one is read back by the next, bit for bit
(tests/core/test_reproducible.py). The papers' closed forms are kept in that directory too, as a CLI run keeps
them in the derivation cache (:mod:`attnverify.theory_memo`): a closed form derived by one worker is read back by
the other, with the closed forms it called, so a mutant's copy keeps what it would keep had it been derived there."""
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _task_cache_in_tmp(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "task-cache"
    shared.mkdir(exist_ok=True)
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTNVERIFY_CACHE_DIR", str(shared))
    from attnverify import theory_memo
    from attnverify.theory import closed_forms

    theory_memo.install()
    yield
    closed_forms.persist(None)
    mp.undo()


@pytest.fixture(scope="session")
def task_store(_task_cache_in_tmp):
    from attnverify.checks.store import TaskStore

    return TaskStore(os.environ["ATTNVERIFY_CACHE_DIR"])
