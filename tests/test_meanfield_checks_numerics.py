"""Tests of the Paper B checks meanfield.zero_temperature_limit, meanfield.w2_bound, meanfield.terminal_phase:
each passes at seed 0 and fails when the theory it checks is replaced by a wrong one; helpers are tested
against independent computations."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.integrate import quad

from attnverify import checks
import attnverify.theory.mean_field as mf
from attnverify.checks.meanfield.limit import density
from attnverify.checks.meanfield.w2 import beta_curves, held_out
from attnverify.numerics.sphere import sample_circle


def run(check_id: str, **overrides):
    rep = checks.run([check_id], profile="quick", seed=0, overrides=overrides or None)
    return rep.results[0]


# ------------------------------------------------------------------------------ zero-temperature limit
def test_limit_passes_with_exponent_minus_one():
    r = run("meanfield.zero_temperature_limit")
    assert r.verdict == "pass", r.reason
    # Laplace's method for a smooth positive density: error ~ C/beta (the exponent is measured, not assumed;
    # over beta in 1e3..1e6 the O(1/beta^2) correction changes the slope by < 1e-2)
    assert r.details["exponent"] == pytest.approx(-1.0, abs=0.02)


def test_limit_fails_with_a_wrong_zero_temperature_field(monkeypatch):
    def wrong(x, B, V):          # P_perp_x V x: forgets B (the maximiser is taken to be x itself)
        v = np.asarray(x) @ np.asarray(V).T
        return v - np.sum(v * x, axis=-1, keepdims=True) * x
    monkeypatch.setattr(mf, "zero_temperature_field", wrong)
    r = run("meanfield.zero_temperature_limit", betas=(10.0, 100.0, 1000.0), n_grid=6)
    assert r.verdict == "fail"


def test_limit_runs_in_d3_and_rejects_mismatched_shapes():
    r = checks.run(["meanfield.zero_temperature_limit"], overrides={"d": 3, "Q": np.eye(3), "K": np.diag([1, 2, 3.0]),
                                                                     "V": np.diag([3, 2, 1.0])}).results[0]
    assert r.verdict == "pass", (r.error, r.observed, r.threshold)
    with pytest.raises(checks.InputError, match="V has shape"):
        checks.run(["meanfield.zero_temperature_limit"], overrides={"d": 3, "Q": np.eye(3), "K": np.eye(3),
                                                                     "V": np.eye(2)})


# ------------------------------------------------------------------------------ W2 bound
def test_w2_passes_and_reports_the_triangle_split():
    r = run("meanfield.w2_bound")
    assert r.verdict == "pass", r.reason
    d = r.details
    for key in ("beta", "t", "D", "E", "W", "K", "C1_derived", "C1_observed", "c_fit", "c_derived", "held_out",
                "beta_exponent_D", "t_min", "t_min_vs_log_beta", "refinement", "particles_per_softmax_window"):
        assert key in d
    W, D, E = np.array(d["W"]), np.array(d["D"]), np.array(d["E"])
    t, tD, ti = np.array(d["t"]), np.array(d["t_D"]), np.array(d["t_inf"])
    # triangle inequality W2(mu^beta, Pi#mu0) <= D + E at the common times (exact W2 is a metric)
    Ei = np.interp(tD, ti, E)
    common = np.isin(tD, ti)
    assert np.all(W[:, ::2][:, common] <= D[:, common] + Ei[common] + 1e-9)
    assert np.all(np.diff(d["t_min"]) > 0)                 # metastability: the minimum comes later at larger beta
    assert min(d["particles_per_softmax_window"]) >= d["min_per_window"]
    json.dumps(d)                                          # JSON-able


def test_held_out_recovers_K_of_exact_bound_data():
    betas, t = np.array([10.0, 100.0, 1e3]), np.linspace(0, 5, 11)
    s = np.sqrt(np.log1p(betas) / betas)
    D = 0.7 * s[:, None] * np.exp(0.5 * t)[None, :]
    D[:, 0] = 0.0
    ho = held_out(betas, t, D, s, 0.5)
    assert ho["K"] == pytest.approx(0.7, rel=1e-12)
    assert ho["max_ratio"] == pytest.approx(1.0, rel=1e-12)
    D[2] *= 1.5                                            # the largest beta violates the bound by 50 %
    assert held_out(betas, t, D, s, 0.5)["max_ratio"] == pytest.approx(1.5, rel=1e-12)


def test_beta_curves_refinement_in_rtol():
    """The integration error at rtol = 1e-6 is far below the figures compared (D ~ 1e-2, W2 gaps ~ 0.05)."""
    rng = np.random.default_rng(0)
    X0 = sample_circle(150, rng)
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    target = np.asarray(mf.projection_map(B, V)(X0), dtype=float)
    t = np.linspace(0, 8, 9)
    a = beta_curves(X0, np.eye(2), B, V, 100.0, t, target, 1e-6)
    b = beta_curves(X0, np.eye(2), B, V, 100.0, t, target, 1e-9)
    assert np.nanmax(np.abs(a[0] - b[0])) < 1e-4 and np.max(np.abs(a[1] - b[1])) < 1e-4


def test_beta_curves_couplings_and_exact_target_distance():
    """Synchronous D bounds the exact W2 from above at every time; W2 to Pi#mu_0 by the two-atom threshold equals
    the assignment W2 (both exact)."""
    from attnverify.numerics.particles import simulate
    from attnverify.numerics.wasserstein import w2_assignment

    rng = np.random.default_rng(2)
    X0 = sample_circle(120, rng)
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    target = np.asarray(mf.projection_map(B, V)(X0), dtype=float)
    t = np.linspace(0, 12, 7)
    D_exact, W, r = beta_curves(X0, np.eye(2), B, V, 100.0, t, target, 1e-6)
    D_sync, _, _ = beta_curves(X0, np.eye(2), B, V, 100.0, t, target, 1e-6, coupling="synchronous")
    assert np.all(np.isnan(D_exact[1::2])) and np.all(np.isfinite(D_sync))
    assert np.all(D_sync[::2] >= D_exact[::2] - 1e-12)
    traj = simulate(X0, np.eye(2), B, V, 100.0, t, rtol=1e-6, atol=1e-8)
    assert W == pytest.approx([w2_assignment(a, target) for a in traj], rel=1e-10, abs=1e-14)
    assert r <= 1e-15


def test_exact_D_refuses_large_n():
    with pytest.raises(checks.InputError, match="D_coupling = synchronous"):
        checks.run(["meanfield.w2_bound"], overrides={"n_particles": 5000})


def test_sample_circle_matches_density_cdf():
    rng = np.random.default_rng(1)
    n = 500
    X = sample_circle(n, rng)
    assert np.allclose(np.linalg.norm(X, axis=1), 1)
    phi = np.sort(np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi))
    mass = quad(density, 0, 2 * np.pi)[0]
    F = np.array([quad(density, 0, p)[0] / mass for p in phi])
    # stratified sampling: one point per stratum of mass 1/n, so the empirical CDF is within 1/n of F
    emp_hi, emp_lo = np.arange(1, n + 1) / n, np.arange(n) / n
    assert max(np.max(emp_hi - F), np.max(F - emp_lo)) <= 1.0 / n + 1e-6


# ------------------------------------------------------------------------------ terminal phase
# (the check and claim B.conjecture1: tests/test_claims_terminal.py)
def test_terminal_details_are_reproducible():
    small = dict(betas=(10.0, 31.6), n_particles=60, min_per_window=1.0, n_refine=1, t_max=15.0, n_times=31, cases="")
    a, b = run("meanfield.terminal_phase", **small), run("meanfield.terminal_phase", **small)
    assert json.dumps(a.details, sort_keys=True) == json.dumps(b.details, sort_keys=True)


def test_terminal_fails_when_the_target_is_the_zero_temperature_eigenspace(monkeypatch):
    monkeypatch.setattr(mf, "value_eigenspace", lambda V: np.diag([0.0, 1.0]))   # span(e2) = E(V B^T)
    r = run("meanfield.terminal_phase", betas=(10.0, 31.6), n_particles=100, min_per_window=1.0, n_refine=1, cases="")
    assert r.verdict == "fail"


# ------------------------------------------------------------------------------ paper profile (slow)
@pytest.mark.slow
@pytest.mark.parametrize("check_id", ["meanfield.zero_temperature_limit", "meanfield.w2_bound",
                                      "meanfield.terminal_phase"])
def test_paper_profile_passes(check_id):
    rep = checks.run([check_id], profile="paper", seed=0)
    assert rep.results[0].verdict == "pass", rep.results[0].reason
