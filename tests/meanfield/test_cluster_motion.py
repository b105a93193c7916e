"""attnverify.numerics.meanfield.clusters and attnverify.numerics.meanfield.cluster_motion on synthetic data with known answers."""
from __future__ import annotations

import numpy as np
import pytest

from attnverify.numerics.meanfield.cluster_motion import lagged_rate, phases
from attnverify.numerics.meanfield.clusters import (cluster_labels, cluster_tracks, dominant_mode_rates, lagged_log_slope,
                                          linear_step_rates, outside_influence,
                                          winding_periods)


def test_cluster_labels_and_tracks_on_two_caps():
    rng = np.random.default_rng(1)
    a, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.8])
    X = np.r_[a + 1e-3 * rng.standard_normal((30, 3)), b + 1e-3 * rng.standard_normal((10, 3))]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    labels = cluster_labels(X, 0.2)
    assert list(np.bincount(labels)) == [30, 10]                      # ordered by size
    C, W, m = cluster_tracks(X[None], labels)
    assert np.allclose(C[0, 0], a, atol=2e-3) and np.allclose(C[0, 1], b, atol=2e-3)
    # width = mean |x - c|^2 = 2 (1 - |mean|)
    direct = np.mean(np.sum((X[labels == 0] - C[0, 0]) ** 2, axis=1))
    assert W[0, 0] == pytest.approx(direct, rel=1e-6) and m.tolist() == [0.75, 0.25]


def test_outside_weights_in_log_space():
    X = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    labels = np.array([0, 1])
    L, _ = outside_influence(X, labels, X, np.eye(2), np.eye(2), 1e4)               # exp(-1e4): far below float range
    assert L[0, 0] == pytest.approx(-1e4) and L[0, 1] == pytest.approx(-1e4)


def test_outside_weights_count_every_token_of_a_wide_cluster():
    """A tight cluster at e1 and a wide one whose centre lies far (angle ~ 1.2) but with one token 0.3 from e1:
    that token's weight exp(beta (cos 0.3 - 1)) dominates; the wide cluster's centre would give
    exp(beta (cos 1.2 - 1)), 17 orders of magnitude less at beta = 60."""
    beta = 60.0
    angles = np.r_[np.zeros(4), 0.3, 1.2, 1.6, 2.0]
    X = np.c_[np.cos(angles), np.sin(angles)][None]
    labels = np.r_[np.zeros(4, int), np.ones(4, int)]
    C, _, _ = cluster_tracks(X, labels)
    L, _ = outside_influence(X, labels, C, np.eye(2), np.eye(2), beta)
    exact = np.log(np.sum(np.exp(beta * (np.cos(angles[4:]) - 1.0))) / 4)
    assert L[0, 0] == pytest.approx(exact, rel=1e-12)
    centre_only = np.log(1.0) + beta * (C[0, 0] @ C[0, 1] - 1.0)
    assert L[0, 0] - centre_only > 30


def test_winding_period_of_an_oblique_rotation():
    """The direction of X rot(t) X^-1 u turns non-uniformly but returns after exactly 2 pi (omega = 1)."""
    X = np.array([[1.0, 0.7], [0.0, 0.5]])
    t = np.linspace(0, 20, 321)
    Y = np.array([X @ np.array([[np.cos(s), -np.sin(s)], [np.sin(s), np.cos(s)]]) @ np.linalg.inv(X) @ [1.0, 0.3]
                  for s in t])
    angle = np.unwrap(np.arctan2(Y[:, 1], Y[:, 0]))
    start, T = winding_periods(t, angle)
    assert len(T) > 100 and np.max(np.abs(T - 2 * np.pi)) < 1e-4


def test_linear_step_rates_recovers_two_modes():
    t = np.linspace(0, 10, 201)
    Z = np.c_[np.exp(-1.0 * t) + 0.5 * np.exp(-1.5 * t), 0.3 * np.exp(-1.0 * t) - np.exp(-1.5 * t)]
    rates, _ = linear_step_rates(Z, np.ones_like(t, dtype=bool), t[1] - t[0])
    assert rates == pytest.approx([-1.0, -1.5], abs=1e-9)
    # a log-linear fit of |Z| over the same samples is biased by the faster mode
    slope = np.polyfit(t, np.log(np.linalg.norm(Z, axis=1)), 1)[0]
    assert abs(slope + 1.0) > 1e-3


def test_lagged_log_slope_cancels_a_periodic_factor():
    t = np.linspace(0, 30, 481)
    y = np.exp(-0.7 * t) * (1.5 + np.sin(2 * t))                   # period pi
    _, s = lagged_log_slope(t, y, np.pi)
    assert np.max(np.abs(s + 0.7)) < 1e-4


def test_phases_needs_a_dwell_and_precedes_the_terminal_phase():
    t = np.linspace(0, 10, 41)
    qE = np.where((t >= 2) & (t < 5), 0.9, 0.1)                      # 3 time units on E
    qS = np.clip((t - 5) / 2, 0, 1)                                   # crosses 1/2 at t = 6
    dwell, t_meta, t_sw = phases(t, qE, qS, 0.8, 1.0, 0.99)
    assert dwell == pytest.approx(3.0) and t_meta == pytest.approx(2.0) and t_sw == pytest.approx(6.0)
    assert np.isnan(phases(t, qE, qS, 0.8, 4.0, 0.99)[2])           # too short a stay: a transit, no switch
    late = np.where(t >= 8, 0.9, 0.1)                                 # a visit after q_S reached the level
    assert phases(t, late, qS, 0.8, 1.0, 0.99)[0] == 0.0


def test_dominant_mode_rate_ignores_a_mode_the_data_no_longer_resolve():
    """Two modes, the fast one decayed into the rounding noise after t ~ 12: the dominant mode's per-pair rates stay
    at -1 in both halves (a refit of the full map on the late half alone would read the noise as a mode)."""
    rng = np.random.default_rng(0)
    t = np.linspace(0, 24, 97)
    Z = np.c_[np.exp(-t) + np.exp(-4 * t), 0.5 * np.exp(-t) - np.exp(-4 * t)]
    Z = Z + 1e-17 * rng.standard_normal(Z.shape)
    rate, per_pair, _ = dominant_mode_rates(Z, np.ones_like(t, dtype=bool), t[1] - t[0])
    assert rate == pytest.approx(-1.0, abs=1e-8)
    k = len(per_pair) // 2
    assert abs(per_pair[:k].mean() - per_pair[k:].mean()) < 1e-4


def test_step_map_ignores_a_constant_offset_at_the_rounding_level():
    """A distance falling from 1e-5 to 1e-9 along v, plus a constant offset 1e-15 along w (the rounding of a
    centre): the offset is 1e-6 of the data at the bottom, and a map fitted in both directions takes it for a mode
    with eigenvalue 1 (rate 0), larger than the true one.  Only the resolved direction is fitted."""
    t = np.linspace(0.0, 100.0, 201)
    r = np.log(1e4) / 100.0
    Z = 1e-5 * np.exp(-r * t)[:, None] * np.array([0.6, 0.8]) + 1e-15 * np.array([0.8, -0.6])
    ok = np.ones(len(t), dtype=bool)
    rate, per_pair, _ = dominant_mode_rates(Z, ok, t[1] - t[0])
    assert rate == pytest.approx(-r, rel=1e-9) and np.max(np.abs(per_pair / -r - 1)) < 1e-6
    rates, _ = linear_step_rates(Z, ok, t[1] - t[0])
    assert len(rates) == 1


def test_step_map_keeps_a_resolved_faster_mode():
    """A faster mode holding 1e-4 of the data at the window's top is above the noise: both rates come back."""
    t = np.linspace(0.0, 20.0, 81)
    Z = (np.exp(-0.3 * t)[:, None] * np.array([1.0, 0.0]) + 1e-4 * np.exp(-0.7 * t)[:, None] * np.array([0.6, 0.8]))
    rates, _ = linear_step_rates(Z, np.ones(len(t), dtype=bool), t[1] - t[0])
    assert rates == pytest.approx([-0.3, -0.7], rel=1e-6)


def test_lagged_rate_reads_slopes_across_gaps_in_the_window():
    """Slopes over one period need the window's conditions only at their two ends: holes in between (a cluster
    briefly less isolated) leave the spline of the tight samples intact."""
    t = np.linspace(0.0, 30.0, 481)
    y = np.exp(-0.7 * t) * (1.5 + np.sin(2 * t))
    ok = np.ones(len(t), dtype=bool)
    ok[::20] = False                                    # a hole every 1.25 time units, shorter than the lag pi
    rate, _, n = lagged_rate(t, y, ok, np.pi, support=np.ones(len(t), dtype=bool))
    assert rate == pytest.approx(0.7, rel=1e-4) and n > 300
    assert np.isnan(lagged_rate(t, y, ok, np.pi)[0])   # without the support every run is shorter than the lag


def test_outside_pull_is_the_tangent_part_of_the_outside_average():
    """A cluster of 4 tokens at e1, one token at e2, V = diag(2, 1), B = I, beta = 3: the pull at e1 is
    e^{beta (<e1, e2> - 1)} |P_perp_e1 V (e2 - e1)| / 4 = e^-3 / 4.  A token at -e1 instead pulls along e1 only: 0."""
    V, B = np.diag([2.0, 1.0]), np.eye(2)
    labels = np.r_[np.zeros(4, int), 1]
    for other, expected in (([0.0, 1.0], np.exp(-3.0) / 4), ([-1.0, 0.0], 0.0)):
        X = np.array([[[1.0, 0.0]] * 4 + [other]])
        C, _, _ = cluster_tracks(X, labels)
        assert outside_influence(X, labels, C, B, V, 3.0)[1][0, 0] == pytest.approx(expected, abs=1e-15)


def test_spectral_time_scales_of_known_spectra_and_against_the_derived_rates():
    """The run of meanfield.terminal_phase is sized from V's floating-point spectrum, not from the closed form it
    tests: diag(3, 1, -2) has the gap 2 and no turn; a rotation block with eigenvalues 1 +- 2i beside -1 has the gap
    2 and omega 2; a repeated top eigenvalue is one real part. On random V the rates agree with the certified
    derived ones (theory.meanfield terminal_rates) wherever those are covered."""
    from attnverify.numerics.meanfield.cluster_motion import spectral_time_scales
    from attnverify.theory.meanfield import THEORY

    assert spectral_time_scales(np.diag([3.0, 1.0, -2.0])) == pytest.approx((2.0, 0.0), abs=1e-12)
    rot = np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, -1.0]])
    assert spectral_time_scales(rot) == pytest.approx((2.0, 2.0), abs=1e-12)
    assert spectral_time_scales(np.diag([2.0, 2.0, 0.5])) == pytest.approx((1.5, 0.0), abs=1e-12)
    rng = np.random.default_rng(3)
    compared = 0
    for i in range(60):
        d = int(rng.integers(2, 5))
        V = rng.normal(size=(d, d))
        V = V + V.T if i % 2 else V
        try:
            rates = THEORY.terminal_rates(V)
        except ValueError:
            continue
        r, omega = spectral_time_scales(V)
        assert r == pytest.approx(rates["axis_rate"], rel=1e-9)
        assert omega == pytest.approx(rates["rotation_rate"], abs=1e-9)
        compared += 1
    assert compared >= 40


# the two valid models on which meanfield.terminal_phase failed in the model sweep (seed 2, docs/trust.md)
V_D3 = np.array([[-0.81, 1.525, 1.025], [-3.217, 3.924, 3.498], [-2.551, 2.303, 2.912]])
V_D4 = np.array([[-21.56, 6.75, -32.65, 5.808], [4.115, 10.59, 4.788, -4.387], [-37.81, 10.17, -5.651, 16.38],
                 [16.07, -22.54, 13.1, -35.38]])


def _approach_rate(V: np.ndarray, dt: float, max_step: float | None) -> tuple[float, float]:
    """(measured, exact): one token (its own cluster, so the field is the cluster field P_perp_x V x exactly),
    started off V's dominant eigenvector u_1; the decay rate of its distance to span(u_1) while that distance is in
    [1e-9, 1e-5], from outputs every dt, against lambda_1 - Re lambda_2 from the eigenvalues."""
    from attnverify.numerics.meanfield.particles import simulate

    lam, U = np.linalg.eig(V)
    order = np.argsort(-lam.real)
    u1 = np.real(U[:, order[0]])
    u1 /= np.linalg.norm(u1)
    x0 = u1 + 0.3 * np.linalg.svd(u1[None])[2][1:].sum(axis=0)
    x0 /= np.linalg.norm(x0)
    times = np.arange(0.0, 40.0 / (lam.real[order[0]] - lam.real[order[1]]), dt)
    eye = np.eye(len(V))
    X = simulate(x0[None], eye, eye, V, 1.0, times, rtol=1e-6, atol=1e-8, max_step=max_step)[:, 0]
    dist = np.linalg.norm(X - np.outer(X @ u1, u1), axis=1)
    w = (dist >= 1e-9) & (dist <= 1e-5)
    slope = np.polyfit(times[w], np.log(dist[w]), 1)[0]
    return -slope, float(lam.real[order[0]] - lam.real[order[1]])


@pytest.mark.parametrize("V", [V_D3, V_D4], ids=["d3", "d4"])
def test_the_resolving_step_reads_the_approach_rate_the_output_spacing_misses(V):
    """At the check's output spacing (12 samples across the window [1e-9, 1e-5]: ln(1e4) / (12 r)) the step control
    (tolerance relative to |x| = 1) never limits a step on the tiny transverse offset: the d = 3 model's rate comes
    out 2.3e-4 low (DOPRI5's R(-r h) predicts it), the d = 4 model's faster modes are unstable. With steps of at most
    resolving_step(V, 1e-5) the rate is within 2e-5 at both."""
    from attnverify.numerics.meanfield.particles import dopri5_growth, resolving_step

    lam = np.sort(np.linalg.eigvals(V).real)[::-1]
    r = lam[0] - lam[1]
    dt = np.log(1e4) / (12 * r)
    plain, exact = _approach_rate(V, dt, None)
    assert exact == pytest.approx(r)
    assert abs(plain / exact - 1) > 1e-4, plain
    if V is V_D3:
        assert plain == pytest.approx(-np.log(abs(dopri5_growth(-r * dt))) / dt, rel=2e-5)
    capped, _ = _approach_rate(V, dt, resolving_step(V, 1e-5))
    assert abs(capped / exact - 1) <= 2e-5, (capped, exact)


def test_rate_coupling_of_a_cluster_that_is_not_isolated_does_not_overflow():
    """The model sweep (seed 4, d = 2) raised FloatingPointError in exp: an outside weight log eps = 800 (a cluster
    not isolated at all). The bound is now e^700-sized there, far above any tolerance, and finite."""
    from attnverify.numerics.meanfield.cluster_motion import rate_coupling

    B, V = np.eye(2), 2.0 * np.eye(2)
    with np.errstate(over="raise", invalid="raise"):
        c = rate_coupling(np.array([-30.0, 800.0]), B, V, 10.0)
    assert np.all(np.isfinite(c)) and c[1] > 1e300
    assert c[0] == pytest.approx(np.exp(-30.0) * 3 * 2 * (2 * 10 + 1))
    # Paper B's seed-0 sweep, draw 28 (|B| = 33.7, |V| = 1.06, the quick profile's beta = 316): a weight capped at
    # e^700 still overflowed once multiplied by 3 |V| (2 beta |B| + 1); the class: any weight, beta and norms
    for log_eps, beta, b, v in [(700.0, 316.0, 33.7, 1.06), (699.0, 5000.0, 1e3, 1e3), (1e300, 1e6, 1e3, 1e3),
                                (-np.inf, 316.0, 33.7, 1.06), (-700.0, 5000.0, 1e3, 1e3)]:
        with np.errstate(over="raise", invalid="raise", under="ignore"):
            got = float(rate_coupling(np.array([log_eps]), b * np.eye(2), v * np.eye(2), beta)[0])
        exact = log_eps + np.log(3 * v * (2 * beta * b + 1))           # the bound's log
        assert np.isfinite(got) and (got == pytest.approx(np.exp(exact), rel=1e-12) if exact < 700 else got > 1e300)
