"""Test-suite settings: CLI runs store their task results in a temporary directory, not in the user's cache."""
import pytest


@pytest.fixture(autouse=True, scope="session")
def _task_cache_in_tmp(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTNVERIFY_CACHE_DIR", str(tmp_path_factory.mktemp("task-cache")))
    yield
    mp.undo()
