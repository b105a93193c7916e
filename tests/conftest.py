"""Test-suite settings: CLI runs store their task results and derivations in a temporary directory, not in the
user's cache. Under pytest-xdist the workers share one such directory (its writes are atomic renames), so a
derivation computed by one worker is read by the other. The ``task_store`` fixture opens the same directory as a
task store for API runs at the quick profile that repeat one another's simulations (the README's quick audit, the
power smoke's unperturbed runs, a paper's quick run): a task stored by one is read back by the next, bit for bit
(tests/core/test_reproducible.py). The papers' closed forms are kept in that directory too, as a CLI run keeps
them in the derivation cache (:mod:`attnverify.theory_memo`): a closed form derived by one worker is read back by
the other, with the closed forms it called, so a mutant's copy keeps what it would keep had it been derived there.

The order of the files (:func:`pytest_collection_modifyitems`) is what pytest-xdist hands out (``--dist loadfile
--no-loadscope-reorder``): the longest files first, so that the two workers finish together."""
import os
from collections import Counter
from pathlib import Path

import pytest

#: the suite's longest files, longest first (worker-seconds measured on a fresh-clone run of the default suite; a
#: stale order only costs balance). While the power smoke derives and runs Papers A, B, C and D in turn on one
#: worker, the other runs what shares nothing with it (the certified enclosures) and then the papers in the smoke's
#: order, after it: the README's quick audit and the LaTeX of every derivation (tests/cli/test_workbench_cli.py)
#: come last, so that two workers do not derive the same closed forms or compute the same unperturbed runs at once
#: (each reads what the other stored).
LONGEST_FIRST = [
    "selftest/test_power_smoke.py", "core/test_certified_enclosure.py",
    "signal/test_signal_checks_numerics.py", "meanfield/test_claims_meanfield.py", "slr/test_slr_checks.py",
    "cli/test_readme.py", "cli/test_workbench_cli.py", "signal/test_signal_theory.py", "cli/test_cache.py",
    "selftest/test_mutation.py",
    "engine/test_engine_checks.py", "signal/test_quantities_signal.py", "core/test_audit.py",
    "core/test_reproducible.py", "signal/test_power_dynamics.py", "cli/test_interrupt.py",
    "render/test_plot_labels_typed.py", "slr/test_slr_dynamics.py", "meanfield/test_meanfield_checks_numerics.py",
    "meanfield/test_power_meanfield.py",
]


def pytest_collection_modifyitems(config, items):
    """The files of :data:`LONGEST_FIRST` in its order, then the others by their number of tests (most first, as
    pytest-xdist orders files by default); within a file, the collection order."""
    here = Path(__file__).parent
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    files = [Path(str(i.path)).relative_to(here).as_posix() if Path(str(i.path)).is_relative_to(here) else ""
             for i in items]
    counts = Counter(files)
    order = sorted(range(len(items)), key=lambda k: (rank.get(files[k], len(rank)), -counts[files[k]], files[k], k))
    items[:] = [items[k] for k in order]


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


@pytest.fixture(autouse=True, scope="module")
def _model_papers_unregistered_after_the_module():
    """Every model file a test module registers as a paper is unregistered when the module ends: under
    ``--dist loadfile`` a worker runs other directories' modules afterwards, and those expect the installed papers
    only (a leaked two_signals put its sections in the LaTeX documents and its checks in the README's audit)."""
    from attnverify.checks.registry import papers, remove_paper

    before = {p.model for p in papers()}
    yield
    for model in {p.model for p in papers()} - before:
        remove_paper(model)
