"""Token laws: moments of the samplers against their definitions, points of the ball."""
import numpy as np
import pytest
from scipy import stats

from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw, ball_points


def test_gaussian_sample_has_the_law_moments():
    """Sample mean and covariance of 200 000 draws within 5 standard errors (Var of a sample covariance entry:
    (S_ii S_jj + S_ij^2) / n for a Gaussian)."""
    m = np.array([1.0, -2.0, 0.5])
    B = np.array([[1.0, 0.0, 0.0], [0.5, 0.3, 0.0], [-0.2, 0.4, 0.7]])
    S = B @ B.T
    n = 200_000
    y = GaussianLaw(m, S).sample(np.random.default_rng(0), n)
    assert np.all(np.abs(y.mean(axis=0) - m) <= 5 * np.sqrt(np.diag(S) / n))
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S ** 2) / n)
    assert np.all(np.abs(np.cov(y.T) - S) <= 5 * se)


def test_sphere_sample_lies_on_the_sphere_with_isotropic_covariance():
    d, R, n = 4, 2.0, 100_000
    y = SphereLaw(d, R).sample(np.random.default_rng(1), n, reps=2)
    assert y.shape == (2, n, d)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), R, rtol=1e-13)
    z = y[0]
    # E y y^T = (R^2/d) I; Var of an entry of y y^T is at most R^4, so 5 R^2 / sqrt(n) bounds 5 standard errors
    assert np.all(np.abs(z.T @ z / n - R ** 2 / d * np.eye(d)) <= 5 * R ** 2 / np.sqrt(n))
    np.testing.assert_allclose(SphereLaw(d, R).covariance, R ** 2 / d * np.eye(d))


def test_ball_points():
    """Boundary share on the sphere; the interior radii r have (r/R)^d uniform on [0, 1] (KS test)."""
    d, R = 3, 1.5
    X = ball_points(np.random.default_rng(2), d, R, 4000, surface=0.25)
    r = np.linalg.norm(X, axis=1)
    assert np.all(r <= R * (1 + 1e-13))
    np.testing.assert_allclose(r[:1000], R, rtol=1e-13)
    assert stats.kstest((r[1000:] / R) ** d, "uniform").pvalue > 1e-3


def test_same_generator_state_same_tokens():
    law = GaussianLaw(np.zeros(2), np.eye(2))
    a = law.sample(np.random.default_rng(np.random.SeedSequence(5)), 10)
    b = law.sample(np.random.default_rng(np.random.SeedSequence(5)), 10)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make, message", [
    (lambda: GaussianLaw(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]])), "positive definite"),
    (lambda: GaussianLaw(np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]])), "symmetric"),
    (lambda: GaussianLaw(np.zeros(2), np.eye(3)), "cov must have shape"),
    (lambda: SphereLaw(1), "d must be"), (lambda: SphereLaw(3, -1.0), "radius"),
    (lambda: ball_points(np.random.default_rng(0), 3, 1.0, 0), "count"),
    (lambda: GaussianLaw(np.zeros(2), np.eye(2)).sample(np.random.default_rng(0), 0), "n must be"),
])
def test_bad_input_is_one_clear_value_error(make, message):
    with pytest.raises(ValueError, match=message) as err:
        make()
    assert "\n" not in str(err.value)
