"""Power of the three Paper A checks whose analytic side is the reduced field F = (1 - rho^2) J'(rho), and the claims
they feed. A realistic wrong closed form (F x 1.2, F without its (1 - rho^2) factor, theta 20 % off) is handed to the
checks as their theory through the mutants' code path (attnverify.selftest.mutation.receives) and must give `fail`; the claims must reach the
verdicts other than their default."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import attnverify.theory.signal as S
from attnverify.checks.plugin import Mutant
from attnverify.selftest.mutants import all_mutants
from attnverify.checks.claims import CLAIMS, evaluate_claim
from attnverify.checks.registry import load
from attnverify.render.reasons import plain
from check_runs import run_check

load()

FAST = {
    "signal.reduced_field_identity": {"n_samples": 2000, "n_rho": 5},
    "signal.ode_tracks_sga": {"n_runs": 40, "n_grid_samples": 150},
    "signal.alignment_30_runs": {"n_energy": 150},
}


def _scaled(factor: float) -> Mutant:
    def reduced_field(self, *a, **k):
        return self.original("reduced_field")(*a, **k) * factor
    return Mutant(f"F_x{factor:g}", lambda theory: theory.replace(reduced_field=reduced_field), (), f"F x {factor:g}")


def _theta_off(factor: float) -> Mutant:
    def reduced_field(self, *a, **k):
        return self.original("reduced_field")(*a, **k).subs(S.theta, S.theta * factor)
    return Mutant(f"F_theta_x{factor:g}", lambda theory: theory.replace(reduced_field=reduced_field), (),
                  f"F at theta x {factor:g}")


def _run(check_id: str, seed: int = 0, mutant: Mutant | None = None, **extra):
    return run_check(check_id, seed=seed, overrides={**FAST[check_id], **extra}, mutants=[mutant] if mutant else [])


MISSING_SPHERE = next(m for m in all_mutants() if m.name == "F_missing_sphere_factor")


@pytest.mark.parametrize("check_id", ["signal.reduced_field_identity", "signal.ode_tracks_sga"])
def test_fast_settings_pass_with_the_right_field(check_id):
    res = _run(check_id)
    assert res.verdict == "pass", (res.error, res.observed)


@pytest.mark.parametrize("check_id", ["signal.reduced_field_identity", "signal.ode_tracks_sga"])
@pytest.mark.parametrize("mutant", [_scaled(1.2), _scaled(0.8), _theta_off(1.2), MISSING_SPHERE],
                         ids=["F_x1.2", "F_x0.8", "theta_x1.2", "no_sphere_factor"])
def test_wrong_field_fails(check_id, mutant):
    res = _run(check_id, mutant=mutant)
    assert res.verdict == "fail", (mutant.name, res.error, res.observed, res.threshold)


def test_reduced_field_resolves_the_scale_of_F():
    det = _run("signal.reduced_field_identity").details
    assert det["fitted_scale_se"] < 0.02                   # 2000 sequences resolve F to better than 2 %
    assert abs(det["fitted_scale_of_F"] - 1) < 4 * det["fitted_scale_se"]
    assert np.all(det["control_variate_variance_ratio"] < 0.05)


# F x 3: a field three times too strong predicts a noise floor ~3 times too low (before in
# tests/signal/test_signal_checks_numerics.py, at the quick profile's 300 energy sequences, through the check's
# field_function; here the closed form itself is wrong, and the run shares the other two's SGA runs)
@pytest.mark.parametrize("mutant", [_scaled(1.2), _scaled(3.0), MISSING_SPHERE],
                         ids=["F_x1.2", "F_x3", "no_sphere_factor"])
def test_alignment_rejects_a_wrong_field(mutant):
    res = _run("signal.alignment_30_runs", mutant=mutant)
    assert res.verdict == "fail", (mutant.name, res.error, res.observed, res.threshold)


def test_tangent_field_estimator_agrees_with_full_dimensional_sampling():
    """The conditional (in-plane) estimator and the full d-dimensional tangent gradient estimate the same mean."""
    from attnverify.numerics.signal.model import SignalModel
    from attnverify.numerics.signal.tangent_field import cv_estimate, plane_moments, tangent_gradient_moments

    model = SignalModel(1.0, 1.0, 1.0, 20, 220, 6)
    rhos = np.array([-0.5, 0.2, 0.7])
    cv = cv_estimate([plane_moments(model, rhos, 3000, np.random.default_rng(1))], 3)
    full = tangent_gradient_moments(model, rhos, 6000, np.random.default_rng(2))
    z = (cv["mean"] - full["mean_y"]) / np.hypot(cv["se"], full["se_y"])
    assert np.all(np.abs(z) < 4.5), z
    assert np.all(cv["se"] < full["se_y"] / 3)              # the control variates do reduce the variance
    # pooling: two parts give the estimate of one part holding their samples together (centred moments, pooled
    # exactly), and no rho falls back to the plain mean here
    from attnverify.numerics.signal.tangent_field import plane_samples

    Z = []
    for s in (3, 4):
        Y, C = plane_samples(model, rhos, 1500, np.random.default_rng(s))
        Z.append(np.concatenate([Y, C.reshape(1500, -1)], axis=1))
    both = np.concatenate(Z)
    joint = cv_estimate([{"n": 3000, "mean": both.mean(0), "centred": (both - both.mean(0)).T @ (both - both.mean(0))}],
                        3)
    two = cv_estimate([plane_moments(model, rhos, 1500, np.random.default_rng(s)) for s in (3, 4)], 3)
    assert np.allclose(two["mean"], joint["mean"], rtol=1e-10) and np.allclose(two["se"], joint["se"], rtol=1e-8)
    assert two["plain_at"] == []


# ------------------------------------------------------------------------------------------------- claims
def test_ode_claim_holds_from_a_run_and_is_inconclusive_when_unresolved():
    res = _run("signal.ode_tracks_sga")
    row = evaluate_claim(CLAIMS["A.ode_tracks_sga"], {res.id: res})
    assert row.verdict == "holds", row.reason
    coarse = tuple(dataclasses.replace(s, fitted_scale_se=0.2) for s in res.findings.scales)
    ev = dataclasses.replace(res.evidence, findings=dataclasses.replace(res.findings, scales=coarse))
    row = evaluate_claim(CLAIMS["A.ode_tracks_sga"], {res.id: dataclasses.replace(res, evidence=ev)})
    assert row.verdict == "inconclusive" and "resolves the scale of F only to 0.2" in plain(row.reason)


def test_alignment_claim_is_inconclusive_off_the_stated_protocol():
    res = _run("signal.alignment_30_runs", n_runs=8, n_steps=60, n_energy=40)
    row = evaluate_claim(CLAIMS["A.reported_alignment"], {res.id: res})
    assert row.verdict == "inconclusive" and "did not run the stated protocol" in row.reason
    assert "R = 50 (stated protocol: 500)" in plain(row.reason)
