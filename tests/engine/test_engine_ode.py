"""The generated check <model>.ode_tracks_sga: projected SGA against the second-order mean path of the reduced ODE
from the model file's derived field. A valid model passes; a field off by a constant factor is rejected; a step too
large for the expansion in eta, or a start that is not a unit query, is refused."""
from __future__ import annotations

from pathlib import Path

import pytest

from attnverify.checks.engine import add_model
from attnverify.checks.registry import REGISTRY
from check_runs import run_check

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
SMALL = {"n_moments": 128}        # the quick profile: 300 of the protocol's steps, its 30 runs


@pytest.fixture(scope="module")
def two_signals():
    return add_model(MODELS / "two_signals.toml")


def _run(cid: str, overrides: dict, theory=None):
    return run_check(cid, overrides=overrides, theory=theory)


def test_sga_follows_the_derived_field_and_a_scaled_field_is_rejected(two_signals):
    """two_signals ([protocol] a = 2, b = 50; 300 steps, 30 runs): the fitted scale of F is 1 within its threshold;
    with F_finite x 1.3 (a constant factor, the shape unchanged) the fitted scale moves to about 1/1.3 and fails."""
    cid = "two_signals.ode_tracks_sga"
    assert cid in two_signals.check_ids()
    ok = _run(cid, SMALL)
    assert ok.verdict == "pass", (ok.verdict, ok.error, ok.evidence and ok.evidence.reason)
    d = ok.evidence.details
    assert abs(d["fitted_scale"] - 1) <= 3.5 * d["fitted_scale_se"] and d["fitted_scale_se"] < 0.03
    theory = REGISTRY[cid].theory
    wrong = theory.replace("F x 1.3", F_finite=1.3 * theory.quantities["F_finite"])
    bad = _run(cid, SMALL, wrong)
    assert bad.verdict == "fail", (bad.verdict, bad.error)
    assert bad.evidence.details["fitted_scale"] == pytest.approx(1 / 1.3, abs=0.08)


def test_a_step_too_large_for_the_expansion_is_unresolved():
    """anisotropic.toml (no [protocol]: a = 1, b = 50): eta_0^2 max E|g|^2 = 0.24 measured, above 0.05: the
    second-order mean path does not apply, and the check says so before comparing anything."""
    paper = add_model(MODELS / "anisotropic.toml")
    r = _run(f"{paper.model}.ode_tracks_sga", {"runs": 4, "steps": 20, "n_moments": 64})
    assert r.verdict == "error" and r.error.startswith("Unresolved:") and "eta_0^2 max E|g|^2" in r.error, r.error


def test_bad_start_is_one_line_exit_2(two_signals, capsys):
    from attnverify.cli import main

    path = str(MODELS / "two_signals.toml")
    for bad, word in (("rho0=0.1", "one per direction"), ("rho0=0.8,0.7", "sum of squares")):
        assert main(["run", "two_signals.ode_tracks_sga", "--model", path, "--set", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and word in err, err
