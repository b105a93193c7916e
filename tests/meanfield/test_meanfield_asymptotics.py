"""The Laplace expansion of X_beta - X_inf (attnverify.theory.meanfield.asymptotics) against an independent
measurement: the certified quadrature of attnverify.numerics.meanfield.laplace. The expansion is derived by SymPy; the
quadrature integrates the field without it."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attnverify.theory.meanfield as mf
from attnverify.numerics.meanfield.laplace import laplace_field_certified, standard_density
from attnverify.theory.meanfield import (asymptotic_betas, expansion_sum, field_error_expansion, first_order_identity,
                                         leading_order, moment_ratios)


def test_the_first_order_term_is_the_tangential_gradient_of_log_f():
    assert first_order_identity() == sp.zeros(3, 1)
    ru, ra, rc = moment_ratios(2)
    assert (ru[0], ra[0], rc[0]) == (1, 0, 0)


@pytest.mark.parametrize("d", [2, 3, 4])
def test_each_added_term_brings_the_expansion_closer_to_the_quadrature(d):
    rng = np.random.default_rng(d)
    B = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))                     # the expansion needs no assumption on V
    X = rng.standard_normal((4, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    dens = standard_density(d)
    E = field_error_expansion(X, B, V, dens.c0, dens.a, dens.C, 4)
    beta = 3e3
    assert asymptotic_betas(E, [beta])[0]
    q = laplace_field_certified(X, B, V, beta, dens, dps=30)
    measured = q.value - mf.zero_temperature_field(X, B, V)
    residuals = [np.max(np.abs(measured - expansion_sum(E, beta, n))) for n in (1, 2, 3, 4)]
    floor = 1e-14 * np.linalg.norm(V, 2)
    assert all(b < a / 100 for a, b in zip(residuals, residuals[1:]) if b > floor)
    assert residuals[-1] < max(4 * np.max(np.linalg.norm(E[4], axis=1)) * beta**-4, floor)


def test_the_leading_order_is_one_for_a_positive_density_and_the_expansion_is_not_asymptotic_at_small_beta():
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    phi = np.linspace(0, 2 * np.pi, 9)[:-1]
    dens = standard_density(2)
    E = field_error_expansion(np.c_[np.cos(phi), np.sin(phi)], B, V, dens.c0, dens.a, dens.C, 4)
    assert leading_order(E, 1e-13) == 1
    assert list(asymptotic_betas(E, [1.0, 1e4])) == [False, True]


def test_a_non_positive_density_is_refused():
    with pytest.raises(ValueError, match="must be positive"):
        field_error_expansion(np.array([[1.0, 0.0]]), np.eye(2), np.eye(2), 0.5, [0.6, 0.0], np.zeros((2, 2)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), log_beta=st.floats(0.3, 4.0))
def test_the_remainder_bound_holds_at_every_beta_asymptotic_or_not(d, seed, log_beta):
    """The rigorous bound on X_beta - X_inf - (e_0 + ... + e_3 beta^-3) (theory.meanfield.laplace_remainder) against
    the certified quadrature of the numerics (30 digits), at random models, points and beta from 2 to 1e4: it must
    contain the measured remainder everywhere, also where the expansion is not asymptotic (where 'twice the first
    omitted term' did not)."""
    rng = np.random.default_rng(seed)
    B = np.eye(d) + 0.4 * rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))
    X = rng.standard_normal((3, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    beta = 10.0 ** log_beta
    dens = standard_density(d)
    E = field_error_expansion(X, B, V, dens.c0, dens.a, dens.C, 4)
    bound = mf.THEORY.field_error_remainder_bound(X, B, V, dens.c0, dens.a, dens.C, [beta], 4)[0]
    q = laplace_field_certified(X, B, V, beta, dens, dps=30)
    residual = np.linalg.norm(q.value - mf.zero_temperature_field(X, B, V) - expansion_sum(E, beta, 4), axis=1)
    floor = q.error * np.sqrt(d) + 64 * np.finfo(float).eps * np.linalg.norm(V, 2)      # the check's own allowance
    assert np.all(residual <= bound + floor), (residual, bound, floor)


def test_the_remainder_bound_is_near_the_first_omitted_term_where_the_expansion_is_asymptotic():
    """Not vacuous: at the check's default model and beta = 100, 1000 (asymptotic), the bound lies between the
    measured remainder and 3x twice the first omitted term at the median point (2.1x measured), and a fifth of a per
    cent error in e_3 exceeds it."""
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    phi = np.linspace(0, 2 * np.pi, 13)[:-1]
    X = np.c_[np.cos(phi), np.sin(phi)]
    dens = standard_density(2)
    E = field_error_expansion(X, B, V, dens.c0, dens.a, dens.C, 4)
    betas = [100.0, 1000.0]
    bound = mf.THEORY.field_error_remainder_bound(X, B, V, dens.c0, dens.a, dens.C, betas, 4)
    for j, beta in enumerate(betas):
        q = laplace_field_certified(X, B, V, beta, dens, dps=30)
        remainder = q.value - mf.zero_temperature_field(X, B, V) - expansion_sum(E, beta, 4)
        first_omitted = np.linalg.norm(E[4], axis=1) * beta**-4
        assert np.all(np.linalg.norm(remainder, axis=1) <= bound[j])
        assert np.median(bound[j] / (2 * first_omitted)) < 3
        wrong = remainder - 0.002 * E[3] * beta**-3
        assert np.max(np.linalg.norm(wrong, axis=1) / bound[j]) > 1
