"""The Laplace expansion of X_beta - X_inf (attnverify.theory.meanfield.asymptotics) against an independent
measurement: the certified quadrature of attnverify.numerics.meanfield.laplace. The expansion is derived by SymPy; the
quadrature integrates the field without it."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

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
