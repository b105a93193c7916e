"""Horizons: transpose invariance of the two-sided one only, values against an independent computation."""
import numpy as np
import pytest
from scipy.linalg import sqrtm

from attnverify.numerics.tsc.horizon import horizons


@pytest.fixture
def case():
    rng = np.random.default_rng(0)
    d = 5
    B = rng.standard_normal((d, d))
    Sigma = B @ B.T + 0.1 * np.eye(d)                              # not isotropic
    A = rng.standard_normal((d, d))
    return A, Sigma


def test_two_sided_is_transpose_invariant_one_sided_is_not(case):
    A, Sigma = case
    h, ht = horizons(A, Sigma), horizons(A.T, Sigma)
    assert h.two_sided[0] == pytest.approx(ht.two_sided[0], rel=1e-12)
    assert abs(h.one_sided[0] - ht.one_sided[0]) > 1e-2 * h.one_sided[0]


def test_values_against_scipy_sqrtm_and_the_cholesky_factor(case):
    """||Sigma^{1/2} A Sigma^{1/2}||_2 with scipy's sqrtm, and ||L^T A L||_2 with the Cholesky factor L (the
    authors' formula): the same singular values since L = Sigma^{1/2} Q, Q orthogonal."""
    A, Sigma = case
    h = horizons(A, Sigma, tau=2.0)
    root = np.real(sqrtm(Sigma))
    L = np.linalg.cholesky(Sigma)
    assert h.two_sided[0] == pytest.approx(np.linalg.svd(root @ A @ root, compute_uv=False)[0], rel=1e-10)
    assert h.two_sided[0] == pytest.approx(np.linalg.norm(L.T @ A @ L, 2), rel=1e-10)
    assert h.one_sided[0] == pytest.approx(np.linalg.norm(L.T @ A, 2), rel=1e-10)
    assert h.two_sided_tau[0] == pytest.approx(h.two_sided[0] / 2.0, rel=1e-14)
    assert h.one_sided_tau[0] == pytest.approx(h.one_sided[0] / 2.0, rel=1e-14)


def test_isotropic_covariance_by_hand(case):
    """Sigma = rho I: two-sided rho ||A||_2, one-sided sqrt(rho) ||A||_2, for A and A^T alike."""
    A, _ = case
    rho = 0.1
    h = horizons(np.stack([A, A.T]), rho * np.eye(5))
    norm = np.linalg.norm(A, 2)
    np.testing.assert_allclose(h.two_sided, rho * norm, rtol=1e-12)
    np.testing.assert_allclose(h.one_sided, np.sqrt(rho) * norm, rtol=1e-12)


@pytest.mark.parametrize("Sigma, tau, message", [
    (-np.eye(3), 1.0, "positive semi-definite"), (np.triu(np.ones((3, 3))), 1.0, "symmetric"),
    (np.eye(3), 0.0, "tau"), (np.eye(2), 1.0, "A must have shape"),
])
def test_bad_input_is_one_clear_value_error(Sigma, tau, message):
    with pytest.raises(ValueError, match=message) as err:
        horizons(np.eye(3), Sigma, tau)
    assert "\n" not in str(err.value)
