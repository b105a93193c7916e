"""CI's power smoke (``attnverify selftest --power --smoke``): every check with a smoke row, one test per check.
In a file of its own so that pytest-xdist (``--dist loadfile``) balances it against the rest of the suite."""
from __future__ import annotations

import pytest

from attnverify.selftest.power import plan, smoke


def _smoke_checks() -> list[str]:
    return list(dict.fromkeys(r.check for r in plan() if r.smoke))


@pytest.mark.parametrize("check_id", _smoke_checks())
def test_power_smoke(check_id, task_store):
    """CI's power smoke (``selftest --power --smoke``), one check per test so the workers share it: the check passes
    unperturbed and rejects its smoke family at the target delta (both signs) or its fixed wrong closed form, at
    seed 0. The unperturbed run reads the simulations the quick audit stored, if it ran first (conftest)."""
    rows = smoke([check_id], store=task_store)
    assert rows, f"{check_id} has no smoke row"
    bad = [(r["check"], r["family"], r["baseline"], r["detection_rate"]) for r in rows if not r["ok"]]
    assert not bad, bad
