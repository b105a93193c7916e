"""The hardmax sphere push-forward's covariance: the engine's one-dimensional form, its Arb enclosure, the
quadrature the check uses, the Monte Carlo simulator, and the check with its wrong forms.

Independent references: d = 2 by hand (z = (cos th, sin th): (1/2pi) int dth/(l1 cos^2 + l2 sin^2) = 1/sqrt(l1 l2)
and l1 c1 + l2 c2 = E[q/q] = 1 give c1 = 1/(sqrt(l1) (sqrt(l1) + sqrt(l2)))); the exact identity sum_i lambda_i c_i
= 1 at any d; d = 3 by a two-dimensional scipy quadrature over the sphere's angles."""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from attnverify.checks.runner import run
from attnverify.checks.tsc._model import (sphere_hardmax_certificate, sphere_hardmax_coefficients,
                                          sphere_hardmax_covariance)
from attnverify.checks.tsc.selftest import mutants
from attnverify.numerics.tsc.hardmax import hardmax_covariance_batches, hardmax_outputs
from attnverify.numerics.tsc.laws import SphereLaw
from attnverify.selftest.mutation import run_mutant
from attnverify.theory.engine.sphere_covariance import certified_coefficients, factor_exponents

MUTANTS = {m.name: m for m in mutants()}


def test_the_gaussian_factors_are_the_hand_derived_powers():
    """E[X^2 e^{-a X^2}] = (1 + 2a)^{-3/2}, E[e^{-a X^2}] = (1 + 2a)^{-1/2} (Gaussian integrals by hand)."""
    assert factor_exponents() == (Fraction(-3, 2), Fraction(-1, 2))


def test_certified_coefficients_contain_the_d2_closed_form():
    l1, l2 = Fraction(1, 3), Fraction(5, 2)
    c = certified_coefficients([l1, l2])
    with mp.workdps(40):
        for la, lb, ball in ((l1, l2, c[0]), (l2, l1, c[1])):
            a, b = mp.sqrt(mp.mpf(la.numerator) / la.denominator), mp.sqrt(mp.mpf(lb.numerator) / lb.denominator)
            ref = 1 / (a * (a + b))
            assert float(ball.rad()) < 1e-14
            assert abs(float(ball.mid()) - float(ref)) <= float(ball.rad()) + 1e-16 * float(ref)


def test_certified_coefficients_satisfy_the_exact_identity_and_match_the_quadrature():
    lam = [Fraction(1, 4), 1, 3, Fraction(7, 2)]
    balls = certified_coefficients(lam)
    total = sum((ball * float(x) for ball, x in zip(balls, lam)), 0 * balls[0])
    assert total.contains(1) and float(total.rad()) < 1e-13
    quad = sphere_hardmax_coefficients([float(x) for x in lam])
    for q, ball in zip(quad, balls):
        assert abs(q - float(ball.mid())) <= 1e-10 * q


def test_d3_coefficients_match_an_angular_quadrature():
    """z = (sin th cos ph, sin th sin ph, cos th), surface element sin th dth dph / (4 pi), by scipy's dblquad."""
    from scipy.integrate import dblquad

    lam = np.array([0.5, 2.0, 4.0])

    def moment(i):
        def f(ph, th):
            z = np.array([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)])
            return z[i] ** 2 / (lam @ z**2) * np.sin(th) / (4 * np.pi)
        return dblquad(f, 0, np.pi, 0, 2 * np.pi, epsabs=1e-13, epsrel=1e-11)[0]
    ref = [moment(i) for i in range(3)]
    assert np.allclose(sphere_hardmax_coefficients(lam), ref, rtol=1e-8)


def test_the_certificate_sees_a_quadrature_off_its_ball(monkeypatch):
    """The certificate is 0-ish for the real quadrature and about 1e-3 when the quadrature is moved by 0.1 %."""
    import attnverify.checks.tsc._model as M

    A = np.diag([1.0, 0.5, 0.25])
    assert sphere_hardmax_certificate(A) <= 1e-12
    original = M.sphere_hardmax_coefficients
    monkeypatch.setattr(M, "sphere_hardmax_coefficients", lambda lam, exponents=None: original(lam) * 1.001)
    assert 0.9e-3 < sphere_hardmax_certificate(A) < 1.1e-3
    with pytest.raises(ValueError, match="d <= 8"):
        sphere_hardmax_certificate(np.eye(9))


def test_isotropic_covariance_is_r2_over_d_v_vt():
    rng = np.random.default_rng(3)
    V = rng.normal(size=(6, 6))
    assert np.allclose(sphere_hardmax_covariance(2.5 * np.eye(6), V, 1.5), 1.5**2 / 6 * V @ V.T, rtol=1e-9)


def test_hardmax_outputs_are_the_maximisers_on_the_sphere():
    rng = np.random.default_rng(4)
    d, R = 4, 1.7
    A = rng.normal(size=(d, d))
    law = SphereLaw(d, R)
    x = law.sample(rng, 1)
    best = hardmax_outputs(x, A, np.eye(d), R)[0]
    Y = law.sample(rng, 100_000)
    assert np.isclose(np.linalg.norm(best), R) and (Y @ (A @ x[0])).max() <= best @ (A @ x[0]) + 1e-12
    c1 = hardmax_covariance_batches(law, A, np.eye(d), 50, 3, np.random.SeedSequence(9))
    assert np.array_equal(c1, hardmax_covariance_batches(law, A, np.eye(d), 50, 3, np.random.SeedSequence(9)))


def test_the_check_passes_and_rejects_the_wrong_forms():
    r = run(["tsc.sphere_covariance"], seed=0).results[0]
    assert r.verdict == "pass", (r.error, r.observed, r.threshold)
    for name in ("tsc_sphere_cov_missing_factor", "tsc_sphere_cov_missing_radius"):
        row = run_mutant(MUTANTS[name])
        assert row["caught_by"] == ["tsc.sphere_covariance"], row["results"]


@pytest.mark.parametrize("call, match", [
    (lambda: certified_coefficients([1, -2]), "lambdas"),
    (lambda: sphere_hardmax_coefficients([0.0, 0.0]), "lambdas"),
    (lambda: sphere_hardmax_covariance(np.zeros((3, 3)), np.eye(3), 1.0), "nonzero"),
    (lambda: hardmax_outputs(np.array([[1.0, 0.0]]), np.diag([0.0, 1.0]), np.eye(2), 1.0), "A x = 0"),
    (lambda: hardmax_covariance_batches(SphereLaw(3), np.eye(3), np.eye(3), 1, 3, np.random.SeedSequence(0)),
     "queries"),
])
def test_bad_input_is_refused_in_one_line(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_float_lambdas_are_certified_at_their_own_binary_value():
    """Found by the seed-7 model sweep (tsc.sphere_covariance at d = 6, R = 0.026 raised TypeError): a float lambda
    was turned into an exact number by sympy.nsimplify, which picks a nearby "simple" number (a product of prime
    powers there, 1/10 for 0.1), so the certificate was of another lambda, or none. A float is now the Rational of
    its binary value, and the balls are those of that Rational."""
    import sympy as sp

    from attnverify.theory.engine.sphere_covariance import _check_lambdas, certified_coefficients

    assert _check_lambdas([0.1, 0.3]) == [sp.Rational(0.1), sp.Rational(0.3)] != [sp.Rational(1, 10),
                                                                                   sp.Rational(3, 10)]
    lam = [0.000662424, 0.0213, 0.5]                      # squared singular values of a tiny A, as the sweep drew
    balls = certified_coefficients(lam)
    exact = certified_coefficients([sp.Rational(x) for x in lam])
    assert all(str(a) == str(b) for a, b in zip(balls, exact)) and all(b.rad() < 1e-10 for b in balls)
