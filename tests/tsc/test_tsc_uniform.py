"""The uniform-rate curve: sup over points of a ball of ||Gamma_{mu_n}(x) - Gamma_mu(x)||."""
import numpy as np
import pytest

from attnverify.numerics.tsc.curves import child_rng
from attnverify.numerics.tsc.fit import fit_slope
from attnverify.numerics.tsc.laws import GaussianLaw, ball_points
from attnverify.numerics.tsc.uniform import uniform_errors

LAW = GaussianLaw(np.array([0.2, 0.0, -0.4]), np.diag([0.2, 0.3, 0.1]))
W_V = np.array([[1.0, 0.2, 0.0], [0.0, 0.8, -0.5], [0.3, 0.0, 1.1]])
X = ball_points(np.random.default_rng(0), 3, 1.0, 40)


def gamma_mu(A, tau):
    """Hand-derived for a Gaussian mu (exponential tilting): Gamma_mu(x) = W_v (m + Sigma A x / tau)."""
    return lambda s, x: (LAW.mean + x @ (LAW.cov @ A[s]).T / tau) @ W_V.T


def test_zero_interaction_sup_error_is_the_sample_mean_error():
    """A = 0: Gamma_{mu_n}(x) = W_v ybar and Gamma_mu(x) = W_v m at every x."""
    A = np.zeros((1, 3, 3))
    seed = np.random.SeedSequence(2)
    n = np.array([30, 60])
    e = uniform_errors(LAW, A, W_V, 1.0, n, 3, X, seed, gamma_mu(A, 1.0))
    for k in range(2):
        for r in range(3):
            y = LAW.sample(child_rng(seed, 2, k, r), int(n[k]))
            assert e[0, k, r] == pytest.approx(np.linalg.norm(W_V @ (y.mean(axis=0) - LAW.mean)), rel=1e-12)


def test_small_interaction_sup_error_decays_like_one_over_root_n():
    """For small A, Gamma_{mu_n}(x) - Gamma_mu(x) = W_v [(ybar - m) + (Sigma_n - Sigma) A x / tau] + O(1/n): sums of
    n^{-1/2} fluctuations, so the slope is -1/2 within its 99% interval."""
    A = 0.3 * np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.2], [0.4, 0.0, 1.0]])[None]
    n = np.array([100, 200, 400, 800, 1600])
    e = uniform_errors(LAW, A, W_V, 1.0, n, 40, X, 3, gamma_mu(A, 1.0))
    f = fit_slope(n, e[0], level=0.99)
    assert f.interval[0] <= -0.5 <= f.interval[1]


def test_array_reference_and_bad_input():
    A = np.zeros((1, 3, 3))
    ref = np.broadcast_to(W_V @ LAW.mean, (1, X.shape[0], 3))
    a = uniform_errors(LAW, A, W_V, 1.0, [20], 2, X, 1, ref)
    b = uniform_errors(LAW, A, W_V, 1.0, [20], 2, X, 1, gamma_mu(A, 1.0))
    np.testing.assert_allclose(a, b, rtol=1e-13)
    with pytest.raises(ValueError, match="reference must have shape"):
        uniform_errors(LAW, A, W_V, 1.0, [20], 2, X, 1, ref[:, :5])
    with pytest.raises(ValueError, match="points must have shape"):
        uniform_errors(LAW, A, W_V, 1.0, [20], 2, X[:, :2], 1, ref)
