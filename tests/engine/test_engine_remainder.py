"""The predicted O(1/L^2) remainder of F_finite (attnverify.checks.engine._common.field_remainder): F is the
sphere gradient of J, so its remainder is the gradient of J's predicted remainder, which the ratio's own growth
with rho makes several times (the ratio x F's O(1/L) terms).  Measured against the pathwise Monte Carlo drift,
which never reads the closed form."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnverify.checks.engine import add_model
from attnverify.checks.engine._common import field_function, field_remainder, predicted_remainder
from attnverify.checks.registry import REGISTRY
from check_runs import run_check

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
#: anisotropic.toml's defaults (noise variance 4 along xi, 1 elsewhere; beta = 1)
DEFAULTS = {"theta": 0.5, "beta": 1.0, "sigma": 1.0, "s_xi": 2.0, "R": 50, "L": 1050, "d": 20}


@pytest.fixture(scope="module")
def anisotropic():
    return add_model(MODELS / "anisotropic.toml")


def test_the_field_remainder_covers_the_measured_one_where_the_ratio_rule_does_not(anisotropic):
    """At rho = 0.65 the drift of 60000 sequences sits 0.125 +- 0.020 below F_finite (11.68; its O(1/L) terms
    0.22): the rule of the other quantities (ratio 0.18 x 0.22 = 0.040) is 4.3 standard errors short of it, the
    gradient of J's predicted remainder (0.157) covers it. (With 400000 sequences: 0.0154, 0.041, 0.138 at rho =
    0.4, 0.5, 0.65 against 0.0168, 0.039, 0.157 by the gradient and 0.0045, 0.010, 0.040 by the ratio rule.)"""
    _assert_resolved_beyond_the_ratio_rule_and_covered("anisotropic", DEFAULTS, [0.65], 60000, seed=7)


def _assert_resolved_beyond_the_ratio_rule_and_covered(name: str, values: dict, point: list, n: int, seed: int):
    """The first component of F_finite at ``point`` against the drift of ``n`` sequences (the model's ``values``, at
    their L): the gap exceeds the ratio rule's predicted remainder by 3 standard errors and lies within the field's
    rule plus 3 standard errors."""
    check = REGISTRY[f"{name}.reduced_field_vs_drift"]
    T, N, model = check.theory, check.numerics, check.theory.model
    pt, L = np.array([point]), int(values["L"])
    F_fin = field_function(T, values, model)(pt)
    F_lim = field_function(T, values, model, name="F_limit")(pt)
    est = N.drift_mc(N.spec(values), pt, n, np.random.default_rng(seed))
    gap, se = float(abs(np.ravel(est.mean)[0] - F_fin[0, 0])), float(np.ravel(est.se)[0])
    old = float(predicted_remainder(model, values, pt, L, (F_fin - F_lim)[:, 0])[0])
    new = float(field_remainder(T, model, values, pt, L, F_fin - F_lim)[0, 0])
    assert gap - 3 * se > old, (gap, se, old)
    assert gap <= new + 3 * se, (gap, se, new)


def test_points_on_the_sphere_get_a_finite_remainder():
    """On the unit sphere a neighbour rho + h leaves the ball: the remainder stays finite where the expansion holds,
    so boundary points stay compared (an infinite one would leave them out)."""
    paper = add_model(MODELS / "two_signals.toml")
    check = REGISTRY["two_signals.ode_tracks_sga"]
    model, T = paper.model_object, check.theory
    values = {p.name: float(p.default) for p in model.parameters}
    pts = np.array([[0.6, 0.8], [-1.0, 0.0], [0.0, 1.0], [0.3, 0.2]])
    F, F_lim = field_function(T, values, model), field_function(T, values, model, name="F_limit")
    r = field_remainder(T, model, values, pts, int(values["L"]), F(pts) - F_lim(pts))
    assert np.isfinite(r).all(), r


def test_a_neighbour_outside_the_closed_forms_domain_gives_a_one_sided_difference():
    """A closed form undefined outside the unit ball (NaN there; every example's happens to extend): on the sphere
    the gradient of J's predicted remainder is one-sided, and agrees with the central difference just inside."""
    paper = add_model(MODELS / "two_signals.toml")
    model = paper.model_object
    values = {p.name: float(p.default) for p in model.parameters}

    class Theory:          # J_finite - J_limit = rho_xi inside the closed ball, undefined outside it
        @staticmethod
        def numeric(name):
            def f(vals, rho_xi, rho_zeta):
                inside = rho_xi ** 2 + rho_zeta ** 2 <= 1.0
                return np.where(inside, rho_xi, np.nan) if name == "J_finite" else np.zeros_like(rho_xi)
            return f

    edge = np.array([[0.6, 0.8]])
    zero = np.zeros((1, 2))
    on_sphere = field_remainder(Theory, model, values, edge, int(values["L"]), zero)
    inside = field_remainder(Theory, model, values, edge * (1 - 1e-4), int(values["L"]), zero)
    assert np.isfinite(on_sphere).all() and np.all(on_sphere > 0)
    assert np.allclose(on_sphere, inside, rtol=1e-2), (on_sphere, inside)


@pytest.mark.slow   # 64000 sequences at three lengths, two seeds: ~80 s
def test_the_field_check_at_high_precision_passes_a_valid_model(anisotropic):
    """anisotropic.toml at its defaults with 64000 sequences per length: under the ratio rule the field check
    failed at seeds 0 and 1 (max |z| 4.35 and 5.01 against 3.80: F_finite's remainder at rho = 0.6, not a wrong
    field); with the field's own remainder those points are left out and it passes."""
    for seed in (0, 1):
        r = run_check("anisotropic.reduced_field_vs_drift", seed=seed, overrides={"n_sequences": 64000})
        assert r.verdict == "pass", (seed, r.verdict, r.error, r.evidence and r.evidence.observed)


@pytest.mark.slow   # 600000 sequences at L = 1200 (k = 2): about 100 s on a quiet machine
def test_the_field_remainder_covers_the_measured_one_on_a_second_model():
    """The rule calibrated on anisotropic.toml (k = 1), on two_signals.toml (k = 2) at beta = 1.5, theta = (1, 0.6),
    L = 1200 (expansion ratio 0.22 at rho = (0.7, 0.1)): with 600000 sequences F_finite's remainder along xi is
    0.0070, 0.0101, 0.0074, 0.0117 (+- 0.0013) at rho = (0.45, 0.25), (0.6, 0.3), (0.5, 0.5), (0.7, 0.1): 0.74 -
    0.84 of the rule's 0.0083, 0.0130, 0.0093, 0.0158, and 2.9 - 3.4 times the ratio rule's 0.0020 - 0.0041.  Here
    at (0.7, 0.1), with as many sequences (the expected gap 0.0117 is 5.8 standard errors beyond the ratio rule's
    0.0041, the test asks for 3): the gap is resolved beyond the ratio rule and within the field's rule."""
    paper = add_model(MODELS / "two_signals.toml")
    base = {p.name: float(p.default) for p in paper.model_object.parameters} | {"beta": 1.5, "theta1": 1.0,
                                                                                 "theta2": 0.6}
    values = REGISTRY["two_signals.reduced_field_vs_drift"].numerics.at_length(base, 1200)
    _assert_resolved_beyond_the_ratio_rule_and_covered("two_signals", values, [0.7, 0.1], 600000, seed=11)
