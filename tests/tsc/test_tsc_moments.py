"""Moments of the transformed sample and the query-subsampling estimator.

References: numpy's mean and covariance; the textbook facts of simple random sampling without replacement from a
finite population of n rows (E[sample mean] = population mean; Var = (1 - q/n) S^2 / q with S^2 the population
variance of divisor n - 1; E[sample covariance of divisor q - 1] = S^2), checked exactly by enumerating every
subset of a small population, and by simulation at a larger one."""
from itertools import combinations

import numpy as np
import pytest

from attnverify.numerics.tsc.moments import (ControlValues, control_values, cov_errors, draw_rows, mean_error,
                                             subsample_moments, transformed_moments)


def population(n=7, d=3, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, d)) @ rng.standard_normal((d, d)) + 1.0
    g = z + 0.3 * rng.standard_normal((n, d))                     # a control close to z
    return z, g


def test_transformed_moments_match_numpy():
    z, _ = population(50, 4)
    m, C = transformed_moments(z)
    np.testing.assert_allclose(m, z.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(C, np.cov(z.T, bias=True), rtol=1e-12, atol=1e-14)
    mb, Cb = transformed_moments(np.stack([z, 2 * z]))
    np.testing.assert_allclose(Cb[1], 4 * C, rtol=1e-12)


@pytest.mark.parametrize("with_control", [False, True])
def test_all_rows_give_the_exact_moments(with_control):
    z, g = population(20, 3)
    est = subsample_moments(z, np.arange(20), 20, g if with_control else None)
    m, C = transformed_moments(z)
    np.testing.assert_allclose(est.mean, m, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.cov, C, rtol=1e-12, atol=1e-13)
    assert est.mean_var == 0 and est.cov_var == 0


@pytest.mark.parametrize("with_control", [False, True])
def test_enumerating_every_subset_gives_unbiasedness_and_the_stated_variance(with_control):
    """Over all C(7, 3) = 35 equally likely subsets: E m^ = m_n, Var m^ = (1 - q/n) S_D / q (S_D of D = z - g,
    divisor n - 1), E V^ = Var m^, E C^ = C_n, exactly (rounding only)."""
    n, q = 7, 3
    z, g = population(n)
    ests = [subsample_moments(z[list(c)], np.array(c), n, g if with_control else None)
            for c in combinations(range(n), q)]
    means = np.array([e.mean for e in ests])
    m_n, C_n = z.mean(axis=0), np.cov(z.T, bias=True)
    D = z - g if with_control else z
    var_exact = (1 - q / n) * np.cov(D.T, ddof=1) / q
    np.testing.assert_allclose(means.mean(axis=0), m_n, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.cov(means.T, bias=True), var_exact, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(np.mean([e.mean_var_matrix for e in ests], axis=0), var_exact, rtol=1e-11,
                               atol=1e-13)
    np.testing.assert_allclose(np.mean([e.cov for e in ests], axis=0), C_n, rtol=1e-11, atol=1e-12)


def test_subsampling_by_simulation_unbiased_with_the_stated_variance():
    """n = 300 rows, q = 12: 20 000 random subsets (draw_rows). Per coordinate, |mean of m^ - m_n| within 4.5
    standard errors (Var from the formula), the simulated variance of m^ within 4.5 standard errors of
    (1 - q/n) S^2 / q (standard error of a variance from the fourth moment), and likewise E V^ and E C^."""
    n, q, M = 300, 12, 20000
    z, g = population(n, 3, seed=4)
    rng = np.random.default_rng(5)
    ests = [subsample_moments(z[r], r, n, None) for r in (draw_rows(rng, n, q) for _ in range(M))]
    means = np.array([e.mean for e in ests])
    var_exact = (1 - q / n) * z.var(axis=0, ddof=1) / q
    assert np.all(np.abs(means.mean(axis=0) - z.mean(axis=0)) <= 4.5 * np.sqrt(var_exact / M))
    dev = means - means.mean(axis=0)
    var_sim = (dev ** 2).mean(axis=0)
    se_var = np.sqrt(((dev ** 4).mean(axis=0) - var_sim ** 2) / M)
    assert np.all(np.abs(var_sim - var_exact) <= 4.5 * se_var)
    v_hat = np.array([np.diag(e.mean_var_matrix) for e in ests])
    assert np.all(np.abs(v_hat.mean(axis=0) - var_exact) <= 4.5 * v_hat.std(axis=0) / np.sqrt(M))
    covs = np.array([e.cov for e in ests])
    C_n = np.cov(z.T, bias=True)
    assert np.all(np.abs(covs.mean(axis=0) - C_n) <= 4.5 * covs.std(axis=0) / np.sqrt(M))


def test_covariance_variance_first_order_by_simulation():
    """sum_kl Var(C^_kl) (first order in the subsampling fluctuation) and the bootstrap E ||C^ - C_n||_2^2, against
    their simulated values, n = 3000, q = 300 (the neglected order is O(1/q) = 0.3%): within 4.5 Monte Carlo
    standard errors plus 2/q."""
    n, q, M = 3000, 300, 1500
    z, g = population(n, 3, seed=6)
    rng = np.random.default_rng(7)
    C_n = np.cov(z.T, bias=True)
    ests = [subsample_moments(z[r], r, n, g, rng, 8) for r in (draw_rows(rng, n, q) for _ in range(M))]
    frob = np.array([np.sum((e.cov - C_n) ** 2) for e in ests])
    spec = np.array([np.abs(np.linalg.eigvalsh(e.cov - C_n)).max() ** 2 for e in ests])
    for sim, stated in ((frob, [e.cov_var for e in ests]), (spec, [e.cov_var_spectral for e in ests])):
        stated = np.mean(stated)
        assert abs(sim.mean() - stated) <= 4.5 * sim.std() / np.sqrt(M) + 2 / q * stated


def test_control_values_summarise_the_control():
    z, g = population(30, 3)
    rows = np.array([4, 2, 9])
    cv = control_values(g, rows)
    np.testing.assert_allclose(cv.mean, g.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(cv.cov, np.cov(g.T, bias=True), rtol=1e-12)
    a = subsample_moments(z[rows], rows, 30, g)
    b = subsample_moments(z[rows], rows, 30, ControlValues(cv.mean, cv.cov, cv.at_rows))
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-14)


def test_error_norms_by_hand():
    assert mean_error([3.0, 4.0], [0.0, 0.0]) == pytest.approx(5.0)
    fro, spec = cov_errors(np.diag([3.0, -4.0]), np.zeros((2, 2)))
    assert fro == pytest.approx(5.0) and spec == pytest.approx(4.0)


def test_draw_rows_is_a_sample_without_replacement():
    rng = np.random.default_rng(0)
    r = draw_rows(rng, 50, 10)
    assert r.size == 10 and np.unique(r).size == 10 and r.min() >= 0 and r.max() < 50
    np.testing.assert_array_equal(draw_rows(rng, 5, None), np.arange(5))
    np.testing.assert_array_equal(draw_rows(rng, 5, 9), np.arange(5))


@pytest.mark.parametrize("args, message", [
    ((np.zeros((2, 3)), np.array([0, 0]), 5), "distinct"),
    ((np.zeros((2, 3)), np.array([0, 7]), 5), "distinct indices"),
    ((np.zeros((1, 3)), np.array([0]), 5), "q >= 2"),
    ((np.full((2, 3), np.nan), np.array([0, 1]), 5), "non-finite"),
    ((np.zeros((2, 3)), np.array([0, 1]), 0), "n must be"),
])
def test_bad_input_is_one_clear_value_error(args, message):
    with pytest.raises(ValueError, match=message) as err:
        subsample_moments(*args)
    assert "\n" not in str(err.value)
