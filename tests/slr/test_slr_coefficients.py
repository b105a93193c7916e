"""The structure of Paper C's risk in the overlaps and its fast evaluator (attnverify.theory.slr.coefficients), and the
quadrature of zeta's definition (attnverify.numerics.slr.zeta).

The evaluator is compared with the per-partial lambdas of attnverify.theory.slr.eval (another code path from the
same SymPy expression: a regression test of the restructuring) and with finite differences of the quadrature risk
(independent numerics); the zeta quadrature with mpmath's quadrature of the same integral at 30 digits."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from attnverify.theory.slr import THEORY as T
from attnverify.theory.slr.coefficients import MONOMIALS

P = (0.9, float(np.sqrt(0.5)), 400, 10, 0.1)


def _points(n: int, seed: int = 0) -> np.ndarray:
    from attnverify.checks.slr._model import random_overlaps

    return random_overlaps(np.random.default_rng(seed), n)


def test_the_risk_is_affine_in_nu_and_quadratic_in_theta_eta_rho():
    assert set(T.risk_structure()) <= set(MONOMIALS)
    assert T.structure_residual() == 0


def test_evaluator_agrees_with_the_per_partial_lambdas():
    o = _points(20)
    ev = T.risk_evaluator(*P)
    np.testing.assert_allclose(ev.risk(o), T.risk_np(*o.T, *P), rtol=1e-13)
    np.testing.assert_allclose(ev.gradient(o), T.risk_gradient_np(*o.T, *P).T, rtol=1e-12, atol=1e-12)
    H = np.moveaxis(T.risk_hessian_np(*o.T, *P), -1, 0)
    np.testing.assert_allclose(ev.hessian(o), H, rtol=1e-11, atol=1e-10)


def test_evaluator_does_not_overflow_where_exponentials_are_huge():
    o = np.array([[1.0, 1.0, 0.0, 0.0, 0.0], [0.9, -0.2, 0.1, 0.2, 0.3]])
    with np.errstate(over="raise", invalid="raise"):
        for lam in (20.0, 100.0):
            ev = T.risk_evaluator(lam, 0.7, 100_000, 10, 0.1)
            assert np.all(np.isfinite(ev.gradient(o))) and np.all(np.isfinite(ev.risk(o)))


def test_gradient_matches_finite_differences_of_the_quadrature_risk():
    from attnverify.numerics.slr.model import SLRModel
    from attnverify.numerics.slr.quadrature import risk_gradient_fd

    o = _points(3, seed=4)
    model = SLRModel(d=50, L=5, gamma=1.1, eps=0.2)
    fd = risk_gradient_fd(model, o, 0.5, h=1e-4)
    closed = T.risk_evaluator(0.5, 1.1, 50, 5, 0.2).gradient(o)
    np.testing.assert_allclose(closed, fd, rtol=1e-6, atol=1e-6)
    wrong = closed.copy()
    wrong[:, 4] *= 1.001
    assert not np.allclose(wrong, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("t,s", [(0.0, 0.05), (0.3, 0.7), (2.5, 1.5), (-4.0, 6.0), (12.0, 0.3)])
def test_zeta_quadrature_of_the_definition(t, s):
    from attnverify.numerics.slr.zeta import erf_square_mean, quadrature_error

    cuts = sorted({-8.0, -4.0, 0.0, 4.0, 8.0} | ({-t / s} if abs(t / s) < 8 else set()))
    with mp.workdps(30):
        ref = mp.quad(lambda z: mp.erf(t + s * z) ** 2 * mp.npdf(z), [-mp.inf, *cuts, mp.inf])
    q = float(erf_square_mean(t, s))
    assert abs(q - float(ref)) <= 10 * float(quadrature_error(t, s)) + 20 * np.finfo(float).eps
    assert abs(q - float(ref)) < 1e-14


def test_zeta_quadrature_refuses_bad_input():
    from attnverify.numerics.slr.zeta import erf_square_mean

    for t, s in ((0.1, 0.0), (np.nan, 1.0), (0.1, -1.0)):
        with pytest.raises(ValueError):
            erf_square_mean(t, s)
