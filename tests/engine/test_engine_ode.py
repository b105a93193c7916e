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
    """anisotropic.toml at the default protocol a = 1, b = 50 (its file states a = 0.1, b = 300): eta_0^2 max
    E|g|^2 = 0.24 measured, above 0.05: the second-order mean path does not apply, and the check says so before
    comparing anything."""
    paper = add_model(MODELS / "anisotropic.toml")
    r = _run(f"{paper.model}.ode_tracks_sga", {"a": 1.0, "b": 50.0, "runs": 4, "steps": 20, "n_moments": 64})
    assert r.verdict == "error" and r.error.startswith("Unresolved:") and "the first step is too large" in r.error, r.error


def test_bad_start_is_one_line_exit_2(two_signals, capsys):
    from attnverify.cli import main

    path = str(MODELS / "two_signals.toml")
    for bad, word in (("rho0=0.1", "one per direction"), ("rho0=0.8,0.7", "sum of squares")):
        assert main(["run", "two_signals.ode_tracks_sga", "--model", path, "--set", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and word in err, err


def test_step_moments_are_interpolated_along_the_path_not_in_time():
    """S and G are functions of rho: between two steps where they were measured they are interpolated in the path's
    arc length. A path that arrives and rests has the arrival's moments from then on, whatever the time."""
    import numpy as np

    from attnverify.checks.engine.ode_tracking import along_path

    path = np.array([[0.0, 0.0], [0.3, 0.4], [0.3, 0.4], [0.3, 0.4], [0.6, 0.8]])
    arc = along_path(path)
    assert np.allclose(arc, [0.0, 0.5, 0.5, 0.5, 1.0])
    measured_at, G_measured = [0, 1, 4], np.array([10.0, 2.0, 4.0])
    G = np.interp(arc[:-1], arc[measured_at], G_measured)
    assert np.array_equal(G[1:], [2.0, 2.0, 2.0])          # at rest: the moments where the path rests


@pytest.mark.slow   # 30 SGA runs of 300 steps and the step's moments: ~20 s
def test_a_path_resting_at_a_pole_is_predicted_at_the_pole(two_signals):
    """The model-file sweep's two_signals point (seed 8, draw 1; theta1 = 0, theta2 = 166): the runs reach the pole
    xi_2 in about 45 of 300 steps and hold it to 2e-6. Interpolated in time, the pole's E|g|^2 was mixed with that
    of a point 0.15 away for most of the run and the predicted mean path rested 7e-4 off the pole; along the path
    it rests within 1e-6."""
    import json

    from attnverify.selftest.model_sweep import overrides_for
    from attnverify.checks.runner import run_one

    point = json.loads('{"theta1": 0.0, "theta2": 166.21998471167333, "beta": 0.001890142779000924, '
                       '"sigma": 0.02411548020918241, "R1": 617, "R2": 147, "L": 11382, "d": 3}')
    check = REGISTRY["two_signals.ode_tracks_sga"]
    result = run_one(check, check.resolve("quick", overrides_for(check, point)), seed=9, profile="quick")
    predicted = result.evidence.details["predicted_mean_path"]
    assert 1 - predicted[-1][1] < 1e-6 and 1 - result.evidence.details["mean_path"][-1][1] < 1e-6


@pytest.mark.slow   # ~10 s
def test_a_predicted_path_that_leaves_the_ball_is_unresolved_not_an_error(two_signals):
    """The model-file sweep's two_signals point (seed 8, draw 2: theta2 = 298, beta = 4.9, sigma = 0.0022): the
    second-order recursion overshoots at this field's stiffness and leaves the unit ball; that is the step outside
    the expansion (unresolved), not the check's error (it reported observed = inf)."""
    import json

    from attnverify.selftest.model_sweep import run_point

    point = json.loads('{"theta1": 0.0, "theta2": 298.4249063781228, "beta": 4.8559503184382296, '
                       '"sigma": 0.002217602864837108, "R1": 28, "R2": 15, "L": 2230, "d": 16}')
    row = run_point(REGISTRY["two_signals.ode_tracks_sga"], point, seed=10)
    assert row["verdict"] == "unresolved" and "left the unit ball" in row["error"], row


def test_stiffness_is_the_step_times_the_fields_spectral_norm():
    """For a linear field F(m) = A m, eta ||DF|| = eta ||A||_2 at every point (the largest singular value; the
    central differences of a linear field are exact up to rounding)."""
    import numpy as np

    from attnverify.numerics.engine.mean_path import step_norms

    A = np.array([[-3.0, 1.0], [0.5, -0.2]])
    eta = np.array([0.1, 0.05, 0.02])
    path = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.9], [0.5, 0.5]])
    got = step_norms(lambda m: m @ A.T, path, eta)[0]
    assert got == pytest.approx(eta * np.linalg.svd(A, compute_uv=False)[0], rel=1e-9)


@pytest.mark.slow   # 30 SGA runs of 300 steps and the step's moments: ~25 s
def test_runs_more_precise_than_the_expansion_do_not_fail_a_correct_field(two_signals):
    """The model-file sweep's failure (seed 9; theta2 = 166, sigma = 0.024): the runs reach the pole in 45 steps of
    eta ||DF|| ~ 0.3 and hold it to standard errors of 1e-9, while the second-order path sits 1.4e-5 off (|z| 25:
    the correct field failed). With the O(eta^2) remainder estimated from the O(eta) terms and the stiffness and
    allowed for, the mean path agrees within it, and the remainder's bound on the fitted scale (above MAX_SCALE_SE)
    says that this model is outside what the expansion decides: unresolved, not a fail."""
    import json

    from attnverify.checks.engine.ode_tracking import MAX_SCALE_SE

    point = json.loads('{"theta1": 0.0, "theta2": 166.21998471167333, "beta": 0.001890142779000924, '
                       '"sigma": 0.02411548020918241, "R1": 617, "R2": 147, "L": 11382, "d": 3}')
    result = run_check("two_signals.ode_tracks_sga", seed=9, overrides=point)
    assert result.verdict == "error" and result.error.startswith("Unresolved:"), (result.verdict, result.error)
    assert "remainder" in result.error
    d = result.evidence.details
    assert d["fitted_scale_se"] < MAX_SCALE_SE < d["scale_remainder_bound"]
    assert result.evidence.observed <= 1.0


#: Paper A's model at short sequences (L = 20) and a sharp score: the reviewer's 'odefail.toml'
ODE_SHORT = {'id = "paper_a"': 'id = "short_sequences"', "theta = { default = 0.25": "theta = { default = 1",
             "beta = { default = 1,": "beta = { default = 4,", "sigma = { default = 1,": "sigma = { default = 0.2,",
             "R = { default = 50,": "R = { default = 4,", "L = { default = 1050,": "L = { default = 20,",
             "d = { default = 20,": "d = { default = 3,"}


def test_a_path_outside_the_finite_size_expansion_is_unresolved_not_a_fail(tmp_path):
    """A reviewer's admissible Paper-A-like model at L = 20 (beta = 4, sigma = 0.2, R = 4) failed the check at seeds
    0 and 1 (max |z| 5.3 against 4.2): F_finite's O(1/L^2) remainder, not a wrong field, moved the runs. The
    remainder carried along the path leaves every recorded point out of the comparison: unresolved, saying why."""
    text = (MODELS / "paper_a.toml").read_text().split("\n[checks]")[0]    # at the file's own values
    for old, new in ODE_SHORT.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "short.toml"
    path.write_text(text)
    paper = add_model(path)
    for seed in (0, 1):
        r = run_check(f"{paper.model}.ode_tracks_sga", seed=seed, overrides={})
        assert r.verdict == "error" and r.error.startswith("Unresolved:"), (seed, r.verdict, r.error)
        assert "finite-size expansion's range" in r.error, r.error


def test_step_gains_are_the_euler_steps_spectral_norm():
    """For a linear field F(m) = A m the gain of one Euler step is ||I + eta A||_2 (below 1 for a contracting A,
    where eta ||A|| is not)."""
    import numpy as np

    from attnverify.numerics.engine.mean_path import step_norms

    A = np.array([[-3.0, 1.0], [0.5, -2.0]])
    eta = np.array([0.1, 0.05])
    path = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.9]])
    got = step_norms(lambda m: m @ A.T, path, eta)[1]
    want = [np.linalg.svd(np.eye(2) + e * A, compute_uv=False)[0] for e in eta]
    assert got == pytest.approx(want, rel=1e-9) and np.all(got < 1)


def test_an_unresolved_scale_names_its_parts_without_near_equal_numbers():
    """paper_a.toml at theta = 0.25 (its field about 0.025): the fitted scale's uncertainty (0.12) is almost all the
    runs' standard error. The text printed both, and two numbers of one reason that differ are printed to the digits
    that tell them apart: 0.20161473298974 beside 0.20161473298968 in a sweep. The negligible part is named apart."""
    import re

    add_model(MODELS / "paper_a.toml")
    r = run_check("paper_a.ode_tracks_sga", overrides={"theta": 0.25})
    assert r.verdict == "error" and "almost all of it the runs' standard error" in r.error, r.error
    digits = [len(m.replace(".", "").lstrip("0")) for m in re.findall(r"\d+\.\d+", r.error)]
    assert max(digits) <= 4, r.error
