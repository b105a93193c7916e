"""Every example model's generated checks pass at the quick profile, at the values its file states (its defaults,
its [protocol] and its [checks] tables): the examples are what a new user runs first; and every generic mutant of
every example is rejected by the checks it names."""
from __future__ import annotations

from pathlib import Path

import pytest

from attnverify.checks.engine import add_model
from check_runs import run_check

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
EXAMPLES = sorted(p.stem for p in MODELS.glob("*.toml"))


@pytest.mark.slow   # every check of every example: about 4 minutes on 2 cores
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_check_of_every_example_passes_at_the_quick_profile(name):
    paper = add_model(MODELS / f"{name}.toml")
    verdicts = {cid: run_check(cid) for cid in paper.check_ids()}
    assert verdicts
    bad = {cid: (r.verdict, r.error) for cid, r in verdicts.items() if r.verdict != "pass"}
    assert not bad, bad


@pytest.mark.slow   # every generic mutant of every example: about 2 minutes on 2 cores
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_generic_mutant_of_every_example_is_rejected(name):
    """Each mutant (attnverify.checks.engine.selftest: a dropped tilting term, dropped O(1/L) terms, F without its
    sphere factor, J and F negated, a wrong mixture weight, the push-forward without the tokens' covariance) fails
    every check it names, at the file's own values."""
    from attnverify.checks.registry import REGISTRY

    paper = add_model(MODELS / f"{name}.toml")
    verdicts = {(m.name, cid): run_check(cid, theory=m.make(REGISTRY[cid].theory))
                for m in paper.mutants() for cid in m.checks}
    assert any(m.endswith(".dropped_tilting_term") for m, _ in verdicts)
    missed = {key: (r.verdict, r.error) for key, r in verdicts.items() if r.verdict != "fail"}
    assert not missed, missed
