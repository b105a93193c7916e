"""The README's generated blocks match a fresh run, and the claim self-test's smoke meets its targets.

Both read one quick audit of every registered check (seed 0), run once for this module: the README's audit table
and claims ledger are compared verdict by verdict with it (a change of code that moves a verdict must come with a
regenerated README: ``python -m attnverify.readme``), and the claim self-test re-judges every built-in claim's
perturbed statements on its evidence (``attnverify selftest --claims --smoke``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from attnverify.selftest.claim_power import claim_power
from attnverify.readme import blocks_of, fresh_report, read_blocks, verdicts

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def quick_audit(task_store):
    return fresh_report(seed=0, store=task_store)


def test_readme_blocks_match_a_fresh_run(quick_audit):
    shown = verdicts(read_blocks(README.read_text(encoding="utf-8")))
    fresh = verdicts(blocks_of(quick_audit))
    assert shown["audit"] and shown["ledger"], "README has no generated audit or ledger block"
    assert shown == fresh, "README drifted from a fresh run: regenerate it with `python -m attnverify.readme`"


def test_every_check_of_the_quick_audit_passes(quick_audit):
    bad = [(r.id, r.verdict) for r in quick_audit.results if r.verdict != "pass"]
    assert not bad


def test_claim_selftest_smoke_meets_its_targets(quick_audit):
    """Every built-in claim: its perturbed statements at the target size are refuted (wrong ones) or not refuted
    (still-true ones), on the evidence of the quick audit at seed 0, with every feeding check passing."""
    out = claim_power(smoke=True, scenarios=False, results={0: {r.id: r for r in quick_audit.results}})
    assert out["rows"], "the smoke judged no perturbation"
    missed = [(r["claim"], r["family"], r.get("rates")) for r in out["rows"] if r["meets_target"] is False]
    assert not missed
