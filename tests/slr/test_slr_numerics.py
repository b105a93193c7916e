"""Tests of Paper C's numerics (model ``slr``): sampling, Monte Carlo risk, quadrature risk, PGD, SGD, Bayes, linear.

References are independent of the code under test: Monte Carlo against quadrature (two different computations of the
same expectation), two quadrature rules against each other, naive per-run loops written here, central finite
differences, brute-force Gaussian log-densities (scipy.stats), and planted models.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from attnverify.numerics.slr import quadrature as Q
from attnverify.numerics.slr import (SLRModel, bayes_prediction, bayes_risk_mc, check_overlaps, convergence,
                                     distance_to_manifold, draw_targets, empirical_loss_grad, least_squares,
                                     linear_baseline, overlaps, pgd, posterior_weights, predictor, realise_overlaps,
                                     risk_gradient_fd,
                                     risk_mc, risk_quadrature, risk_terms, sample_tasks, sgd, sgd_reference,
                                     start_manifold, start_sphere)

Z_MAX = 4.0          # |z| bound of a correct Monte Carlo comparison (two-sided p = 6e-5 per comparison)


def pair_with_overlaps(ks, vs, rng, kv=(0.8, 0.3), vv=(0.2, 0.7), noise=0.5):
    """Unit k, v with large overlaps: k ~ kv[0] k* + kv[1] v* + noise g, v ~ vv[0] k* + vv[1] v* + noise g'."""
    d = ks.size
    k = kv[0] * ks + kv[1] * vs + noise * rng.standard_normal(d) / math.sqrt(d)
    v = vv[0] * ks + vv[1] * vs + noise * rng.standard_normal(d) / math.sqrt(d) + 0.3 * k
    return k / np.linalg.norm(k), v / np.linalg.norm(v)


# ---------------------------------------------------------------------------------------------------------------
# sampling, overlaps, starts
# ---------------------------------------------------------------------------------------------------------------
def test_targets_are_orthonormal_and_tasks_follow_the_model():
    rng = np.random.default_rng(0)
    ks, vs = draw_targets(7, rng, n=50)
    assert np.allclose(np.linalg.norm(ks, axis=1), 1, atol=1e-14) and np.allclose(np.linalg.norm(vs, axis=1), 1)
    assert np.max(np.abs(np.sum(ks * vs, axis=1))) < 1e-14
    m = SLRModel(d=7, L=4, gamma=0.6, eps=0.3)
    X, Y, J0 = sample_tasks(m, ks[0], vs[0], 40000, rng)
    sig = X[np.arange(40000), J0]
    # signal token: mean a k*, covariance gamma^2 I; nuisance tokens: N(0, I); Y - <X_J0, v*> has sd eps
    assert np.allclose(sig.mean(0), m.amplitude * ks[0], atol=5 * 0.6 / math.sqrt(40000))
    assert abs(sig.var(0).mean() / 0.36 - 1) < 0.02
    other = X[:, :, :][np.arange(4)[None, :] != J0[:, None]]
    assert abs(other.mean()) < 5 / math.sqrt(other.size) and abs(other.var() - 1) < 0.01
    assert abs(np.std(Y - sig @ vs[0]) / 0.3 - 1) < 0.02
    assert np.all(np.bincount(J0, minlength=4) > 9500)


def test_starts_on_the_sphere_and_on_M():
    rng = np.random.default_rng(1)
    ks, vs = draw_targets(12, rng, n=200)
    k, v = start_manifold(ks, vs, rng)
    ov = overlaps(k, v, ks, vs)
    assert np.max(distance_to_manifold(ov)) < 1e-15
    assert np.allclose(np.linalg.norm(k, axis=1), 1, atol=1e-15) and np.allclose(np.linalg.norm(v, axis=1), 1)
    assert np.std(ov[:, 0]) > 0.1 and np.std(ov[:, 1]) > 0.1          # kappa, nu free on M
    k, v = start_sphere(200, 12, rng)
    assert np.min(distance_to_manifold(overlaps(k, v, ks, vs))) > 0     # generic starts lie off M
    # uniform on the sphere: E <k, e>^2 = 1/d
    assert abs(np.mean(overlaps(k, v, ks, vs)[:, 0] ** 2) * 12 - 1) < 0.35


# ---------------------------------------------------------------------------------------------------------------
# risk: Monte Carlo against quadrature
# ---------------------------------------------------------------------------------------------------------------
CASES = [  # (d, L, gamma, eps, lam, method, n)
    (6, 3, 0.7, 0.3, 0.8, "full", 60000),
    (20, 5, 1.3, 0.0, 0.4, "full", 40000),
    (400, 10, math.sqrt(0.5), 0.1, 0.9, "projected", 60000),
    (80, 10, math.sqrt(0.5), 0.1, 2.0, "projected", 60000),
]


@pytest.mark.parametrize("d, L, gamma, eps, lam, method, n", CASES)
def test_mc_risk_agrees_with_quadrature(d, L, gamma, eps, lam, method, n):
    rng = np.random.default_rng(d + L)
    m = SLRModel(d=d, L=L, gamma=gamma, eps=eps)
    ks, vs = draw_targets(d, rng)
    pairs = [pair_with_overlaps(ks, vs, rng), pair_with_overlaps(ks, vs, rng, (0.3, -0.6), (0.9, 0.1)),
             pair_with_overlaps(ks, vs, rng, (-0.95, 0.0), (0.0, 0.95), noise=0.2), (ks, vs)]
    K, V = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    mu, se = risk_mc(m, K, V, ks, vs, lam, n, np.random.default_rng(7), method=method)
    exact = risk_quadrature(m, overlaps(K, V, ks, vs), lam)
    assert np.all(np.abs(mu - exact) < Z_MAX * se), (mu - exact) / se


def test_realised_overlaps_round_trip_and_mc_at_prescribed_points():
    """realise_overlaps builds vectors with prescribed overlaps (oracle, on M, off M); the MC risk at those vectors
    matches the quadrature at the prescribed overlaps."""
    ov = np.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.7, -0.5, 0.0, 0.0, 0.0], [0.6, 0.7, 0.2, -0.3, 0.4]])
    m = SLRModel(d=400, L=10, gamma=math.sqrt(0.5), eps=0.1)
    for rng in (None, np.random.default_rng(23)):
        k, v, ks, vs = realise_overlaps(ov, 400, rng)
        assert np.max(np.abs(overlaps(k, v, ks, vs) - ov)) < 1e-14
        assert np.max(np.abs(np.linalg.norm(np.stack([k, v, ks, vs]), axis=-1) - 1)) < 1e-14
    exact = risk_quadrature(m, ov, 0.5)
    for i in range(3):
        mu, se = risk_mc(m, k[i], v[i], ks[i], vs[i], 0.5, 40000, np.random.default_rng(i), method="projected")
        assert abs(mu - exact[i]) < Z_MAX * se


def test_projected_sampler_agrees_with_full_sampler():
    rng = np.random.default_rng(3)
    m = SLRModel(d=9, L=4, gamma=0.9, eps=0.2)
    ks, vs = draw_targets(9, rng)
    k, v = pair_with_overlaps(ks, vs, rng)
    a, sa = risk_mc(m, k, v, ks, vs, 1.2, 60000, np.random.default_rng(1), method="full")
    b, sb = risk_mc(m, k, v, ks, vs, 1.2, 60000, np.random.default_rng(2), method="projected")
    assert abs(a - b) < Z_MAX * math.hypot(sa, sb)


def test_wrong_quadratures_are_rejected_by_the_same_comparison():
    """Mutants of the quadrature evaluator: the cross term 2 (L-1) m_S m_N dropped, and the signal mean sqrt(d)
    instead of sqrt(d/2). The Monte Carlo comparison that passes the right evaluator must reject both."""
    d, L, lam = 20, 6, 0.7
    rng = np.random.default_rng(11)
    m = SLRModel(d=d, L=L, gamma=0.8, eps=0.1)
    ks, vs = draw_targets(d, rng)
    k, v = pair_with_overlaps(ks, vs, rng, (0.6, 0.3), (0.5, 0.5))
    ov = overlaps(k, v, ks, vs)
    assert abs(ov[4]) > 0.3 and abs(ov[2]) > 0.3                    # rho, theta != 0: the cross term is present
    mu, se = risk_mc(m, k, v, ks, vs, lam, 40000, np.random.default_rng(5))
    t = risk_terms(m, ov, lam)
    right = t.risk()
    dropped = right - 2 * (L - 1) * t.m_S * t.m_N
    shifted_mean = risk_quadrature(SLRModel(d=2 * d, L=L, gamma=0.8, eps=0.1), ov, lam)
    assert abs(mu - right) < Z_MAX * se
    assert abs(mu - dropped) > Z_MAX * se
    assert abs(mu - shifted_mean) > Z_MAX * se


def test_quadrature_rules_agree_and_converge():
    """Refinement study: Gauss-Hermite at the default node count against composite Gauss-Legendre panels (a different
    rule) to 1e-12 relative, and Hermite with n and 2n nodes agree once n is past the default."""
    rng = np.random.default_rng(4)
    for d, L, gamma, lam in [(400, 10, math.sqrt(0.5), 0.9), (80, 10, math.sqrt(0.5), 2.0), (20, 5, 1.5, 1.0),
                             (20, 4, 1.0, 8.0)]:
        m = SLRModel(d=d, L=L, gamma=gamma, eps=0.1)
        ks, vs = draw_targets(d, rng)
        K, V = start_sphere(3, d, rng)
        K[0], V[0] = pair_with_overlaps(ks, vs, rng)
        ov = overlaps(K, V, ks, vs)
        n0 = Q.default_nodes(m, lam)
        c = convergence(m, ov, lam, nodes=(n0, 2 * n0))
        assert np.max(c["rel_to_panels"]) < 1e-12
        assert np.max(c["rel_change"]) < 1e-12
        coarse = convergence(m, ov, lam, nodes=(8,))                # far too few nodes: visibly wrong at lam >= 0.9
        assert np.max(coarse["rel_to_panels"]) > 1e-8


def test_quadrature_handles_semidefinite_points_and_rejects_unrealisable_ones():
    m = SLRModel(d=10, L=3, gamma=0.7, eps=0.0)
    oracle = np.array([1.0, 1.0, 0.0, 0.0, 0.0])                     # v = v*: Gram of (k, v, v*) singular
    near = np.array([1.0, 1.0 - 1e-9, 0.0, 0.0, 0.0])
    r0, r1 = risk_quadrature(m, oracle, 1.0), risk_quadrature(m, near, 1.0)
    assert np.isfinite(r0) and abs(r0 - r1) < 1e-6
    with pytest.raises(ValueError, match="not realisable"):
        check_overlaps([0.9, 0.9, 0.9, 0.9, 0.0])                    # kappa^2 + theta^2 ... impossible with k* _|_ v*


@pytest.mark.parametrize("model, lam, ov", [
    # found by the model sweep: rho = 1 - 1e-11, a genuine variance 1 - rho^2 = 2e-11 that a Cholesky factor
    # zeroing pivots <= 1e-10 dropped (an error of 1.5e-8 R)
    (SLRModel(d=10, L=17, gamma=0.926, eps=0.0), 1.3e-3,
     (0.6927921831284126, 0.7211404933188456, 0.6927888487092241, 0.7211372899775521, 0.9999999999893101)),
    # a saddle of Paper C at lam = 0.08 with v ~ -k ~ v*: the Cholesky pivot after 1 - rho^2 = 3e-9 lost 4e-8 to
    # rounding and the point was refused as not realisable
    (SLRModel(d=200, L=10, gamma=math.sqrt(0.5), eps=0.1), 0.08,
     (0.03650978043991593, 0.9993352322286251, -0.03645673636737097, -0.9993332957188152, -0.9999999985912882)),
])
def test_quadrature_is_accurate_where_the_covariance_is_nearly_singular(model, lam, ov):
    """Against the closed form (a different computation: erf identities, no covariance factor), at realisable points
    whose Gram matrix of (k, v, v*) is nearly singular."""
    from attnverify.theory.slr import THEORY

    closed = float(THEORY.risk_evaluator(lam, model.gamma, model.d, model.L, model.eps).risk(np.array(ov)))
    assert abs(float(risk_quadrature(model, ov, lam)) - closed) <= 1e-12 * abs(closed)


def test_fd_gradient_of_quadrature_matches_mc_risk_differences():
    """The overlap gradient of the quadrature risk, turned into a directional derivative along a path (k(t), v(t)),
    matches a common-random-numbers Monte Carlo difference quotient of the risk along that path."""
    rng = np.random.default_rng(8)
    m = SLRModel(d=8, L=3, gamma=0.7, eps=0.0)
    ks, vs = draw_targets(8, rng)
    k, v = pair_with_overlaps(ks, vs, rng)
    dk, dv = rng.standard_normal(8), rng.standard_normal(8)
    dk -= (dk @ k) * k
    dv -= (dv @ v) * v
    t = 1e-3
    K = np.array([k - t * dk, k + t * dk])
    V = np.array([v - t * dv, v + t * dv])
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    ov = overlaps(K, V, ks, vs)
    exact_diff = np.diff(risk_quadrature(m, ov, 1.0))[0]
    g = risk_gradient_fd(m, overlaps(k, v, ks, vs), 1.0)
    assert abs(g @ (ov[1] - ov[0]) - exact_diff) < 1e-3 * abs(exact_diff)   # chain rule, O(t^2) relative
    s = risk_mc(m, K, V, ks, vs, 1.0, 40000, np.random.default_rng(9))
    from attnverify.numerics.slr.risk import risk_samples
    samp = risk_samples(m, K, V, ks, vs, 1.0, 40000, np.random.default_rng(9))
    diff = samp[:, 1] - samp[:, 0]
    assert abs(diff.mean() - exact_diff) < Z_MAX * diff.std(ddof=1) / math.sqrt(diff.size)
    assert np.allclose(s[0], samp.mean(0))


# ---------------------------------------------------------------------------------------------------------------
# PGD
# ---------------------------------------------------------------------------------------------------------------
def synthetic_grad(o, lam):
    """Partial derivatives of F(o) = lam (1 - kappa nu)^2 + sum_j c_j o_j^2 + theta eta rho (couples all overlaps)."""
    kap, nu, th, et, rh = o.T
    c = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    g = 2 * c * o
    g[:, 0] += -2 * lam * (1 - kap * nu) * nu
    g[:, 1] += -2 * lam * (1 - kap * nu) * kap
    g[:, 2] += et * rh
    g[:, 3] += th * rh
    g[:, 4] += th * et
    return g


def synthetic_F(o, lam):
    c = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    return lam * (1 - o[..., 0] * o[..., 1]) ** 2 + (c * o ** 2).sum(-1) + o[..., 2] * o[..., 3] * o[..., 4]


def naive_pgd(k, v, ks, vs, grad, lams, h, n_steps):
    """Per-run loop: Euclidean gradients by the chain rule, tangent parts, step, renormalise."""
    k, v = k.copy(), v.copy()
    for r in range(k.shape[0]):
        for t in range(n_steps):
            o = np.array([[k[r] @ ks[r], v[r] @ vs[r], v[r] @ ks[r], k[r] @ vs[r], k[r] @ v[r]]])
            G = grad(o, lams[t])[0]
            gk = G[0] * ks[r] + G[3] * vs[r] + G[4] * v[r]
            gv = G[1] * vs[r] + G[2] * ks[r] + G[4] * k[r]
            gk = gk - (gk @ k[r]) * k[r]
            gv = gv - (gv @ v[r]) * v[r]
            kn, vn = k[r] - h * gk, v[r] - h * gv
            k[r], v[r] = kn / np.linalg.norm(kn), vn / np.linalg.norm(vn)
    return k, v


@pytest.mark.parametrize("kernel", ["numba", "numpy"])
def test_batched_pgd_equals_a_naive_per_run_loop(kernel):
    rng = np.random.default_rng(12)
    ks, vs = draw_targets(30, rng, n=4)
    k0, v0 = start_sphere(4, 30, rng)
    path = pgd(k0, v0, ks, vs, synthetic_grad, lam0=1.5, step=0.05, n_steps=300, schedule=True, record_every=50,
               kernel=kernel)
    lams = 1.5 / (1 + 1e-4 * np.arange(300))
    k, v = naive_pgd(k0, v0, ks, vs, synthetic_grad, lams, 0.05, 300)
    assert np.max(np.abs(path.k - k)) < 1e-12 and np.max(np.abs(path.v - v)) < 1e-12
    assert np.max(np.abs(path.overlaps[:, -1] - overlaps(k, v, ks, vs))) < 1e-12
    assert np.allclose(path.lam, 1.5 / (1 + 1e-4 * path.step), rtol=1e-15)
    assert np.max(np.abs(np.linalg.norm(path.k, axis=1) - 1)) < 1e-14       # a step keeps unit norm
    assert np.max(np.abs(np.linalg.norm(path.v, axis=1) - 1)) < 1e-14
    assert not np.allclose(k, k0)


def test_pgd_step_follows_the_riemannian_gradient():
    """For F(overlaps(k, v)), one small step moves F by -h |grad|^2 (first order), with |grad| the recorded
    Riemannian gradient norm computed independently here by finite differences of F on R^d (then projected)."""
    rng = np.random.default_rng(13)
    ks, vs = draw_targets(6, rng)
    k0, v0 = start_sphere(1, 6, rng)
    f = lambda k, v: synthetic_F(overlaps(k, v, ks, vs), 1.0)
    e = 1e-6
    gk = np.array([(f(k0[0] + e * u, v0[0]) - f(k0[0] - e * u, v0[0])) / (2 * e) for u in np.eye(6)])
    gv = np.array([(f(k0[0], v0[0] + e * u) - f(k0[0], v0[0] - e * u)) / (2 * e) for u in np.eye(6)])
    gk -= (gk @ k0[0]) * k0[0]
    gv -= (gv @ v0[0]) * v0[0]
    h = 1e-6
    path = pgd(k0, v0, ks, vs, synthetic_grad, lam0=1.0, step=h, n_steps=1, record_every=1)
    assert abs(path.grad_norm[0, 0] - math.sqrt(gk @ gk + gv @ gv)) < 1e-7
    assert np.allclose((path.k[0] - k0[0]) / h, -gk, atol=1e-5)
    assert np.allclose((path.v[0] - v0[0]) / h, -gv, atol=1e-5)


def test_pgd_on_M_with_an_M_preserving_gradient_stays_at_rounding_distance():
    """synthetic_grad has zero theta, eta, rho partials on M: the float64 run stays on M to ~1e-16 (float32: 1e-7)."""
    rng = np.random.default_rng(14)
    ks, vs = draw_targets(400, rng, n=5)
    k0, v0 = start_manifold(ks, vs, rng)
    path = pgd(k0, v0, ks, vs, synthetic_grad, lam0=1.0, step=4e-3, n_steps=2000, record_every=500)
    assert np.max(path.distance) < 1e-14
    assert np.all(np.abs(path.overlaps[:, -1, :2]) > np.abs(path.overlaps[:, 0, :2]))   # it did move along M


def test_pgd_risk_record_and_quadrature_gradient():
    """With the quadrature's own finite-difference gradient the risk decreases step by step (a descent method)."""
    m = SLRModel(d=10, L=3, gamma=0.7, eps=0.1)
    rng = np.random.default_rng(15)
    ks, vs = draw_targets(10, rng, n=2)
    k0, v0 = start_sphere(2, 10, rng)
    grad = lambda o, lam: risk_gradient_fd(m, o, lam, n_nodes=60)
    risk = lambda o, lam: risk_quadrature(m, o, lam, n_nodes=60)
    path = pgd(k0, v0, ks, vs, grad, lam0=0.5, step=0.02, n_steps=20, record_every=1, risk=risk)
    assert np.all(np.diff(path.risk, axis=1) < 0)


# ---------------------------------------------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------------------------------------------
def test_empirical_gradient_matches_finite_differences():
    rng = np.random.default_rng(16)
    m = SLRModel(d=7, L=4, gamma=0.8, eps=0.2)
    ks, vs = draw_targets(7, rng)
    X, Y, _ = sample_tasks(m, ks, vs, 5, rng)
    k, v = pair_with_overlaps(ks, vs, rng)
    lam = 1.3
    loss, gk, gv = empirical_loss_grad(X, Y, k, v, lam)
    assert np.isclose(loss, np.mean((Y - predictor(X, k, v, lam)) ** 2), rtol=1e-14)
    e = 1e-6
    f = lambda kk, vv: np.mean((Y - predictor(X, kk, vv, lam)) ** 2)      # the loss, from the predictor alone
    fd_k = [(f(k + e * u, v) - f(k - e * u, v)) / (2 * e) for u in np.eye(7)]
    fd_v = [(f(k, v + e * u) - f(k, v - e * u)) / (2 * e) for u in np.eye(7)]
    assert np.allclose(gk, fd_k, rtol=1e-6, atol=1e-7) and np.allclose(gv, fd_v, rtol=1e-6, atol=1e-7)


def sgd_increment_stats(path, K0, V0):
    dk, dv = path.k - K0, path.v - V0
    return np.c_[path.overlaps[:, -1] - path.overlaps[:, 0], (dk * dk).sum(1), (dv * dv).sum(1), (dk * dv).sum(1)]


def test_fast_sgd_has_the_law_of_the_explicit_token_reference():
    """4000 replicate runs from one start, 2 steps: the means of the overlap increments, |dk|^2, |dv|^2 and <dk, dv>
    (which carry the orthogonal noise, d - 4 = 36 of the 40 dimensions, and its k-v correlation) agree between
    ``sgd`` and ``sgd_reference``."""
    m = SLRModel(d=40, L=3, gamma=0.8, eps=0.2)
    rng = np.random.default_rng(17)
    ks, vs = draw_targets(40, rng)
    k0, v0 = pair_with_overlaps(ks, vs, rng)
    n = 4000
    K0, V0 = np.repeat(k0[None], n, 0), np.repeat(v0[None], n, 0)
    kw = dict(lam0=1.5, step=0.1, n_steps=2, batch=2, schedule=True)
    a = sgd_increment_stats(sgd(m, K0, V0, ks, vs, rng=np.random.default_rng(1), **kw), K0, V0)
    b = sgd_increment_stats(sgd_reference(m, K0, V0, ks, vs, rng=np.random.default_rng(2), **kw), K0, V0)
    z = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0) / n + b.var(0) / n)
    assert np.all(np.abs(z) < Z_MAX), z


def test_sgd_is_reproducible_per_run_and_keeps_unit_norm():
    m = SLRModel(d=12, L=4, gamma=0.7, eps=0.1)
    rng = np.random.default_rng(18)
    ks, vs = draw_targets(12, rng, n=3)
    k0, v0 = start_sphere(3, 12, rng)
    kw = dict(lam0=2.0, step=1e-2, n_steps=700, batch=5, schedule=True, record_every=100)
    a = sgd(m, k0, v0, ks, vs, rng=np.random.default_rng(42), **kw)
    b = sgd(m, k0, v0, ks, vs, rng=np.random.default_rng(42), **kw)
    c = sgd(m, k0, v0, ks, vs, rng=np.random.default_rng(43), **kw)
    assert np.array_equal(a.overlaps, b.overlaps) and np.array_equal(a.k, b.k)
    assert not np.allclose(a.k, c.k)
    assert np.max(np.abs(np.linalg.norm(a.k, axis=1) - 1)) < 1e-14
    assert np.max(np.abs(np.linalg.norm(a.v, axis=1) - 1)) < 1e-14
    assert np.allclose(a.overlaps[:, -1], overlaps(a.k, a.v, ks, vs), atol=1e-15)
    assert np.all(np.isnan(a.batch_loss[:, -1])) and np.all(np.isfinite(a.batch_loss[:, :-1]))


# ---------------------------------------------------------------------------------------------------------------
# Bayes predictor
# ---------------------------------------------------------------------------------------------------------------
def test_posterior_weights_match_brute_force_densities():
    m = SLRModel(d=5, L=4, gamma=0.6, eps=0.1)
    rng = np.random.default_rng(19)
    ks, vs = draw_targets(5, rng)
    X, _, _ = sample_tasks(m, ks, vs, 50, rng)
    pi = posterior_weights(X, m, ks)
    sig = multivariate_normal(m.amplitude * ks, 0.36 * np.eye(5))
    nul = multivariate_normal(np.zeros(5), np.eye(5))
    like = np.array([[np.prod([(sig if l == j else nul).pdf(X[i, l]) for l in range(4)]) for j in range(4)]
                     for i in range(50)])                              # p(X | J0 = j), prior uniform
    assert np.allclose(pi, like / like.sum(1, keepdims=True), rtol=1e-9, atol=1e-14)
    assert np.allclose(pi.sum(1), 1, atol=1e-15) and np.all(pi >= 0)
    big = SLRModel(d=4000, L=3, gamma=0.5)                             # log-space: no overflow at large d
    k2, v2 = draw_targets(4000, rng)
    Xb, _, _ = sample_tasks(big, k2, v2, 3, rng)
    assert np.all(np.isfinite(posterior_weights(Xb, big, k2)))


def test_bayes_risk_is_below_the_oracle_risk_and_samplers_agree():
    m = SLRModel(d=6, L=5, gamma=0.7, eps=0.2)
    rng = np.random.default_rng(20)
    ks, vs = draw_targets(6, rng)
    X, Y, _ = sample_tasks(m, ks, vs, 40000, rng)
    gap = (Y - bayes_prediction(X, m, ks, vs)) ** 2 - (Y - predictor(X, ks, vs, 1.0)) ** 2
    assert gap.mean() < -Z_MAX * gap.std(ddof=1) / math.sqrt(gap.size)
    a = bayes_risk_mc(m, 100000, np.random.default_rng(1), method="reduced")
    b = bayes_risk_mc(m, 100000, np.random.default_rng(2), method="full")
    assert abs(a.excess - b.excess) < Z_MAX * math.hypot(a.excess_se, b.excess_se)
    assert abs(a.risk - m.eps ** 2 - a.excess) < Z_MAX * a.risk_se            # two estimators of R* - eps^2


# ---------------------------------------------------------------------------------------------------------------
# linear baseline
# ---------------------------------------------------------------------------------------------------------------
def test_least_squares_recovers_a_planted_linear_model():
    rng = np.random.default_rng(21)
    F = rng.standard_normal((5000, 12))
    w = rng.standard_normal(12)
    y = F @ w + 0.01 * rng.standard_normal(5000)
    assert np.max(np.abs(least_squares(F, y) - w)) < 5 * 0.01 / math.sqrt(5000) * 3
    assert np.max(np.abs(least_squares(F, F @ w) - w)) < 1e-12


def test_linear_baseline_full_and_pooled_features_agree_and_beat_nothing():
    """Exchangeability: full (L d) and pooled (d) least squares reach the same risk up to the estimation error; both
    improve on the zero predictor (risk E Y^2 = gamma^2 + eps^2) and stay above the Bayes risk."""
    m = SLRModel(d=5, L=3, gamma=0.8, eps=0.1)
    rng = np.random.default_rng(22)
    ks, vs = draw_targets(5, rng)
    full = linear_baseline(m, ks, vs, 40000, 40000, np.random.default_rng(1), features="full")
    pooled = linear_baseline(m, ks, vs, 40000, 40000, np.random.default_rng(1), features="pooled")
    assert abs(full.test_risk - pooled.test_risk) < Z_MAX * math.hypot(full.test_risk_se, pooled.test_risk_se)
    assert full.test_risk < 0.64 + 0.01 - Z_MAX * full.test_risk_se
    assert full.coef.shape == (15,) and pooled.coef.shape == (5,)
    bayes = bayes_risk_mc(m, 40000, np.random.default_rng(3))
    assert full.test_risk - bayes.risk > Z_MAX * math.hypot(full.test_risk_se, bayes.risk_se)


# ---------------------------------------------------------------------------------------------------------------
# reproducibility and bad input
# ---------------------------------------------------------------------------------------------------------------
def test_same_seed_same_numbers():
    m = SLRModel(d=6, L=3)
    ks, vs = draw_targets(6, np.random.default_rng(0))
    r1 = risk_mc(m, ks, vs, ks, vs, 1.0, 500, np.random.default_rng(5))
    r2 = risk_mc(m, ks, vs, ks, vs, 1.0, 500, np.random.default_rng(5))
    assert r1 == r2
    assert bayes_risk_mc(m, 500, np.random.default_rng(5)) == bayes_risk_mc(m, 500, np.random.default_rng(5))
    assert np.array_equal(draw_targets(6, np.random.default_rng(3))[1], draw_targets(6, np.random.default_rng(3))[1])


def _one_line_value_error(fn, *args, match: str, **kwargs):
    with pytest.raises(ValueError, match=match) as info:
        fn(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_bad_input_raises_one_line_value_errors():
    m = SLRModel(d=6, L=3)
    ks, vs = draw_targets(6, np.random.default_rng(0))
    good = np.array([0.5, 0.5, 0.1, 0.1, 0.1])
    _one_line_value_error(SLRModel, d=1, L=3, match="d must be >= 2")
    _one_line_value_error(SLRModel, d=6, L=3, gamma=-1.0, match="gamma must be > 0")
    _one_line_value_error(SLRModel, d=6, L=3, eps=math.nan, match="eps must be finite")
    _one_line_value_error(SLRModel, d=6.5, L=3, match="d must be an integer")
    _one_line_value_error(risk_quadrature, m, good, -1.0, match="lam must be > 0")
    _one_line_value_error(risk_quadrature, m, [0.5, 0.5, 0.1], 1.0, match="overlaps must have last dimension 5")
    _one_line_value_error(risk_quadrature, m, [2.0, 0.5, 0.1, 0.1, 0.1], 1.0, match=r"overlaps must lie in \[-1, 1\]")
    _one_line_value_error(risk_quadrature, m, good, 1.0, n_nodes=1, match="n_nodes")
    _one_line_value_error(risk_quadrature, m, good, 1.0, rule="simpson", match="rule must be")
    _one_line_value_error(risk_mc, m, 2 * ks, vs, ks, vs, 1.0, 100, np.random.default_rng(0), match="k must be unit")
    _one_line_value_error(risk_mc, m, ks, vs, ks, ks, 1.0, 100, np.random.default_rng(0), match="orthogonal")
    _one_line_value_error(risk_mc, m, ks, vs, ks, vs, 1.0, 1, np.random.default_rng(0), match="n_samples")
    _one_line_value_error(risk_mc, m, ks, vs, ks, vs, 1.0, 100, 0, match="rng must be")
    _one_line_value_error(risk_mc, m, ks, vs, ks, vs, 1.0, 100, np.random.default_rng(0), method="x", match="method")
    k0, v0 = start_sphere(2, 6, np.random.default_rng(0))
    _one_line_value_error(pgd, k0, v0, ks, vs, synthetic_grad, lam0=1.0, step=0.0, n_steps=5, match="step must be > 0")
    _one_line_value_error(pgd, k0, v0, ks, vs, lambda o, lam: o[:, :3], lam0=1.0, step=0.1, n_steps=5,
                          match="grad_overlaps must return shape")
    _one_line_value_error(pgd, k0, v0, ks, vs, lambda o, lam: o * np.nan, lam0=1.0, step=0.1, n_steps=5,
                          match="non-finite")
    _one_line_value_error(pgd, k0, v0[:, :5], ks, vs, synthetic_grad, lam0=1.0, step=0.1, n_steps=5, match="v0")
    _one_line_value_error(sgd, SLRModel(d=4, L=3), k0[:, :4] / np.linalg.norm(k0[:, :4], axis=1, keepdims=True),
                          v0[:, :4] / np.linalg.norm(v0[:, :4], axis=1, keepdims=True), np.eye(4)[0], np.eye(4)[1],
                          lam0=1.0, step=0.1, n_steps=5, batch=2, rng=np.random.default_rng(0), match="d must be >= 5")
    _one_line_value_error(sgd, m, k0, v0, ks, vs, lam0=1.0, step=0.1, n_steps=5, batch=0,
                          rng=np.random.default_rng(0), match="batch must be >= 1")
    _one_line_value_error(bayes_risk_mc, m, 100, np.random.default_rng(0), method="x", match="method")
    _one_line_value_error(least_squares, np.ones((3, 2)), np.ones(4), match="F must be")
    _one_line_value_error(linear_baseline, m, ks, vs, 10, 10, np.random.default_rng(0), features="x",
                          match="features")
    _one_line_value_error(start_manifold, ks[:2] / np.linalg.norm(ks[:2]), np.array([-ks[1], ks[0]]) /
                          np.linalg.norm(ks[:2]), np.random.default_rng(0), match="d must be >= 3")


def test_the_default_rule_covers_every_admitted_lam():
    """The checks admit lam up to 50; Gauss-Hermite stops near slope 18. The default rule switches to panels there
    (the model sweep's oracle_hessian error at lam = 31.3), agrees with the explicit panel rule to rounding, and
    below the switch is Gauss-Hermite bit for bit."""
    from attnverify.numerics.slr.quadrature import rule_nodes

    m = SLRModel(gamma=0.0176, d=15, L=1, eps=100.0)
    ov = np.array([0.3, 0.2, 0.1, 0.05, 0.4])
    with pytest.raises(ValueError, match="too large for rule='hermite'"):
        risk_quadrature(m, ov, 31.3, rule="hermite")
    assert risk_quadrature(m, ov, 31.3) == risk_quadrature(m, ov, 31.3, rule="panels")
    assert np.isfinite(risk_quadrature(m, ov, 50.0))
    for lam in (0.5, 5.0, 18.0):
        assert all(np.array_equal(a, b) for a, b in zip(rule_nodes(m, lam), rule_nodes(m, lam, rule="hermite")))
        assert risk_quadrature(m, ov, lam) == risk_quadrature(m, ov, lam, rule="hermite")
