"""attnverify.numerics.engine.mean_path: the second-order mean path of SGA against hand computations, and the step's
measured moments against the independent drift estimator."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnverify.numerics.engine.mean_path import second_order_mean, step_moments

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def test_linear_field_is_euler_with_the_variance_recursion_by_hand():
    """F(rho) = -c rho (k = 1): no curvature, so m_k = prod (1 - eta_i c) rho0 - the G term; V by its recursion."""
    c, eta = 0.7, 0.05 / (1 + np.arange(40) / 10)
    S, G = np.full((40, 1, 1), 0.3), np.full(40, 2.0)
    m, V = second_order_mean(lambda r: -c * r, [0.4], eta, S, G)
    mh, Vh = 0.4, 0.0
    for e in eta:
        mh, Vh = mh * (1 - e * c) - 0.5 * e * e * mh * 2.0, (1 - e * c) ** 2 * Vh + e * e * 0.3
    assert m[-1, 0] == pytest.approx(mh, rel=1e-9) and V[-1, 0, 0] == pytest.approx(Vh, rel=1e-9)
    plain = second_order_mean(lambda r: -c * r, [0.4], eta, S, G, second_order=False)[0]
    assert plain[-1, 0] == pytest.approx(0.4 * np.prod(1 - eta * c), rel=1e-12)


def test_curvature_couples_the_mean_to_the_covariance():
    """F(rho) = (rho_1^2, rho_1 rho_2) (k = 2): one step from m with covariance V moves the mean by
    eta (F(m) + (V_11, V_12)) (the second derivatives: d1d1 F_1 = 2, d1d2 F_2 = 1); checked on the second step."""
    F = lambda r: np.stack([r[..., 0] ** 2, r[..., 0] * r[..., 1]], axis=-1)           # noqa: E731 (vectorised)
    eta = np.array([0.1, 0.1])
    S = np.array([[[0.2, 0.05], [0.05, 0.1]]] * 2)
    m, V = second_order_mean(F, [0.3, -0.2], eta, S, np.zeros(2))
    m1 = np.array([0.3, -0.2]) + 0.1 * np.array([0.09, -0.06])
    assert m[1] == pytest.approx(m1, abs=1e-9)
    V1 = 0.01 * S[0]
    assert V[1] == pytest.approx(V1, abs=1e-12)
    m2 = m1 + 0.1 * (F(m1) + np.array([V1[0, 0], V1[0, 1]]))
    assert m[2] == pytest.approx(m2, abs=1e-8)


def test_step_moments_drift_agrees_with_the_reduced_drift_estimator():
    """E y of the full-coordinate step samples against drift_mc (Rao-Blackwellised, reduced coordinates): two
    estimators of the same drift, within 4.5 combined standard errors at every point and component."""
    from attnverify.checks.engine import add_model
    from attnverify.theory.engine.derive import model_values

    paper = add_model(MODELS / "two_signals.toml")
    N = paper.numerics_object
    spec = N.spec({k: float(v) for k, v in model_values(N.model, {"L": 300, "R1": 20, "R2": 10}).items()})
    pts = np.array([[0.1, 0.1], [0.5, -0.3]])
    n = 4000
    mean, cov, energy = step_moments(spec, pts, n, np.random.default_rng(1))
    ref = N.drift_mc(spec, pts, 4000, np.random.default_rng(2))
    se = np.sqrt(np.diagonal(cov, axis1=1, axis2=2) / n + np.reshape(ref.se, mean.shape) ** 2)
    assert np.all(np.abs(mean - np.reshape(ref.mean, mean.shape)) <= 4.5 * se), (mean, ref.mean, se)
    assert np.all(energy >= np.einsum("rkk->r", cov))                 # E|g|^2 >= the in-plane variance
