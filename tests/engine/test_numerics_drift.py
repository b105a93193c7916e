"""The hand-derived gradient and the overlaps' drift (attnverify.numerics.engine.gradient, .drift) and projected SGA
(.sga), against finite differences and against each other.

- The gradient of ||f_q(X)||^2 on fixed sequences against central finite differences of an output computed here
  (plain NumPy softmax), for general (non-block) A and V and a q off the sphere.
- The Monte Carlo drift against finite differences of the Monte Carlo objective on the same sequences (common random
  numbers): with d_j = dJ/drho_j in the chart q(rho) = sum rho_j e_j + sqrt(1 - |rho|^2) e_{k+1}, the tangent
  gradient's e_j-component is d_j - rho_j (rho . d) sequence by sequence, so the two agree to the finite-difference
  error O(h^2), far below the Monte Carlo error. Checked for both methods: for "reduced" this tests the
  Rao-Blackwellised gradient, since the derivative of the conditional energy is the conditional gradient.
- One SGA step of size eta moves the overlaps by eta times the drift plus O(eta^2), so the mean increment / eta of
  many runs (each from a random orthogonal direction) matches the drift estimated independently.
"""
import numpy as np
import pytest

from attnverify.numerics.engine import (Attention, MixtureSpec, drift_mc, energy_gradient, gaussian, grid_samples,
                                        projected_sga, sample_full, sphere, steps_at_times, step_sizes)

Z = 4.0


def spec_k2(d=5, full=False):
    A = np.array([[1.0, 0.4], [-0.3, 0.9]])
    V = np.array([[0.7, 0.0], [0.5, 1.1]])
    att = Attention(beta=1.3, tau=0.9, A=A, a_perp=0.8, V=V, v_perp=1.5)
    if full:
        rng = np.random.default_rng(3)
        att = Attention(beta=1.3, tau=0.9, A=np.eye(d) + 0.3 * rng.standard_normal((d, d)), a_perp=None,
                        V=np.eye(d) + 0.3 * rng.standard_normal((d, d)), v_perp=None)
    return MixtureSpec(d=d, directions=("xi", "zeta"),
                       components=(gaussian("sig", 3, [1.0, 0.0], [0.5, 1.5], 0.8, rademacher=True),
                                   sphere("ring", 2, 1.7, [0.0, -0.6]),
                                   gaussian("noise", 5, 0, [1.0, 1.0], 1.3)),
                       attention=att)


def energy_here(X, q, spec):
    s = (spec.attention.beta / spec.attention.tau) * np.einsum("nld,d->nl", X, spec.matrix("A").T @ q)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    f = np.einsum("nl,nld->nd", a, X @ spec.matrix("V").T)
    return np.einsum("nd,nd->n", f, f)


@pytest.mark.parametrize("full", [False, True])
def test_gradient_matches_finite_differences_on_fixed_sequences(full):
    spec = spec_k2(full=full)
    X = sample_full(spec, 20, np.random.default_rng(0))
    q = np.array([0.3, -0.5, 0.4, 0.2, -0.9])                    # not a unit vector: the formula holds on R^d
    e, g = energy_gradient(X, q, spec)
    np.testing.assert_allclose(e, energy_here(X, q, spec), rtol=1e-13)
    h = 1e-6
    fd = np.stack([(energy_here(X, q + h * ej, spec) - energy_here(X, q - h * ej, spec)) / (2 * h)
                   for ej in np.eye(spec.d)], axis=1)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())


@pytest.mark.parametrize("method", ["reduced", "full"])
def test_drift_matches_finite_differences_of_the_objective(method):
    spec = spec_k2()
    rho, h, n = np.array([0.35, -0.45]), 1e-5, 400
    grid = np.array([rho + h * e for e in np.eye(2)] + [rho - h * e for e in np.eye(2)])
    J = grid_samples(spec, grid, n, np.random.default_rng(21), method=method).energy          # (n, 4)
    drift = grid_samples(spec, rho, n, np.random.default_rng(21), method=method, drift=True).drift[:, 0]
    D = (J[:, :2] - J[:, 2:]) / (2 * h)                                                       # chart derivatives
    expected = D - np.outer(D @ rho, rho)
    assert np.max(np.abs(drift - expected)) < 1e-6 * max(1.0, np.abs(drift).max())
    est = drift_mc(spec, rho, n, np.random.default_rng(21), method=method)
    np.testing.assert_allclose(est.mean, expected.mean(axis=0)[None, :], rtol=1e-6, atol=1e-8)


def test_the_drift_is_odd_in_rho_for_a_sign_symmetric_model():
    """Every mean of a rademacher component: the law of X is invariant under x -> -x restricted to the directions,
    so J(rho) = J(-rho) and the drift is odd; checked on one set of sequences for rho and -rho (two estimates with
    common random numbers, compared through their own covariance)."""
    spec = MixtureSpec(d=4, directions=("xi",),
                       components=(gaussian("sig", 4, [0.8], [1.0], 1.0, rademacher=True),
                                   gaussian("noise", 12, 0, [1.0], 1.0)),
                       attention=Attention(beta=1.5, A=[[1.0]], V=[[1.0]]))
    est = drift_mc(spec, [-0.4, 0.4], 20_000, np.random.default_rng(2))
    value, se = est.contrast(np.array([[1.0], [1.0]]))
    assert abs(value) < Z * se
    assert abs(est.mean[1, 0]) > Z * est.se[1, 0]                    # and not trivially zero


def test_one_small_sga_step_follows_the_drift_on_average():
    spec = spec_k2(d=6)
    rho0 = np.array([0.4, 0.3])
    runs, eta = 20_000, 1e-5
    paths = projected_sga(spec, np.tile(rho0, (runs, 1)), 1, eta, 1.0, np.random.default_rng(4))
    assert paths.step.tolist() == [0, 1] and paths.time.tolist() == [0.0, eta]
    np.testing.assert_allclose(paths.overlaps[:, 0], np.tile(rho0, (runs, 1)), rtol=0, atol=1e-15)
    inc = (paths.overlaps[:, 1] - paths.overlaps[:, 0]) / eta                              # (runs, 2)
    est = drift_mc(spec, rho0, 20_000, np.random.default_rng(5))
    z = np.abs(inc.mean(axis=0) - est.mean[0]) / np.sqrt(inc.var(axis=0, ddof=1) / runs + est.se[0] ** 2)
    assert z.max() < Z, z
    np.testing.assert_allclose(np.linalg.norm(paths.q_final, axis=1), 1.0, rtol=1e-14)


def test_one_sga_step_on_the_drift_estimators_sequences():
    """Started along e_{k+1} (no random direction drawn), one SGA step draws its runs' sequences exactly as the full
    drift estimator draws its sequences from the same seed, so run by run the increment / eta is that sequence's drift
    sample up to the normalisation: rho' = (rho + eta g) / sqrt(1 + eta^2 |g|^2) = rho + eta g + O(eta^2 |g|^2)."""
    spec = spec_k2(d=6)
    rho0, runs, eta = np.array([0.4, 0.3]), 200, 1e-6
    paths = projected_sga(spec, np.tile(rho0, (runs, 1)), 1, eta, 1.0, np.random.default_rng(8),
                          random_complement=False)
    drift = grid_samples(spec, rho0, runs, np.random.default_rng(8), method="full", drift=True).drift[:, 0]
    inc = (paths.overlaps[:, 1] - paths.overlaps[:, 0]) / eta
    assert np.max(np.abs(inc - drift)) < 1e-3 * max(1.0, np.abs(drift).max())


def test_sga_runs_are_reproducible_and_record_where_asked():
    spec = spec_k2(d=6)
    rho0 = np.array([[0.1, 0.2], [-0.5, 0.0], [0.0, 0.9]])
    a = projected_sga(spec, rho0, 30, 0.5, 5.0, np.random.default_rng(1), record_steps=[0, 10, 30])
    b = projected_sga(spec, rho0, 30, 0.5, 5.0, np.random.default_rng(1), record_steps=[0, 10, 30])
    np.testing.assert_array_equal(a.overlaps, b.overlaps)
    assert a.overlaps.shape == (3, 3, 2)
    np.testing.assert_allclose(a.overlaps[:, 0], rho0)
    np.testing.assert_allclose(a.overlaps[:, -1], a.q_final[:, :2])
    eta = step_sizes(30, 0.5, 5.0)
    np.testing.assert_allclose(a.time, [0.0, eta[:10].sum(), eta.sum()])
    assert steps_at_times([0.0, eta[:10].sum(), 1e9], 30, 0.5, 5.0).tolist() == [0, 10, 30]
    for bad in (dict(a=0.0), dict(b=-1.0), dict(record_steps=[31])):
        kw = dict(a=0.5, b=5.0, record_steps=None)
        kw.update(bad)
        with pytest.raises(ValueError):
            projected_sga(spec, rho0, 30, kw["a"], kw["b"], np.random.default_rng(1), record_steps=kw["record_steps"])
