"""Slope fits: against numpy.polyfit, coverage on synthetic power laws, the window spread, the subsampling terms."""
import numpy as np
import pytest

from attnverify.numerics.tsc.fit import fit_slope, log_error_table

N = np.round(np.geomspace(100, 10000, 8)).astype(int)


def power_law(rng, b=-0.35, R=30, sigma=None, n=N):
    """e_{k,r} = 2 n_k^b exp(sigma_k xi), xi standard normal; sigma_k differs across n (heteroscedastic)."""
    sigma = np.linspace(0.2, 0.6, n.size) if sigma is None else sigma
    return 2.0 * n[:, None] ** b * np.exp(sigma[:, None] * rng.standard_normal((n.size, R)))


def test_wls_slope_and_se_match_numpy_polyfit():
    """polyfit with w = 1/sd minimises sum (w (y - fit))^2, the same weighted problem; cov='unscaled' is
    (X^T W X)^{-1}, the covariance with known variances."""
    e = power_law(np.random.default_rng(0))
    f = fit_slope(N, e)
    x, y, v = np.log(N), np.log(e).mean(axis=1), np.log(e).var(axis=1, ddof=1) / e.shape[1]
    coef, cov = np.polyfit(x, y, 1, w=1 / np.sqrt(v), cov="unscaled")
    assert f.slope == pytest.approx(coef[0], rel=1e-10)
    assert f.intercept == pytest.approx(coef[1], rel=1e-10)
    assert f.se_statistical == pytest.approx(np.sqrt(cov[0, 0]), rel=1e-10)
    np.testing.assert_allclose(f.mean_log_error, y, rtol=1e-13)


def norm_errors(rng, b=-0.35, R=30, k=3, n=N):
    """e_{k,r} = n_k^b sqrt(chi2_k / k): the norm of a k-dimensional Gaussian error vector of scale n^b, the form
    of the mean and covariance errors."""
    return n[:, None] ** b * np.sqrt(rng.chisquare(k, (n.size, R)) / k)


@pytest.mark.parametrize("estimand, curves", [("log", power_law), ("rms", norm_errors)])
def test_coverage_of_the_statistical_interval_is_nominal(estimand, curves):
    """400 synthetic curves with known exponent -0.35, 30 repetitions: the statistical interval slope -/+ t se
    covers it at the nominal 95% (binomial: 380 expected, 4 standard deviations = 17); the full interval (with
    the window spread) covers at least as often and at least at the nominal rate. "log" on log-normal errors
    with a noise level varying in n (the mean log error is still a + b log n); "rms" on norms of Gaussian
    vectors (E e^2 is a power law when the law of e / n^b does not change with n). Measured, not asserted: on
    log-normal errors (sigma = 0.4) the "rms" delta-method interval under-covers, 89% at R = 30, 93% at R = 300."""
    rng = np.random.default_rng(11)
    stat = full = 0
    for _ in range(400):
        f = fit_slope(N, curves(rng), estimand=estimand)
        stat += abs(f.slope + 0.35) <= f.quantile * f.se_statistical
        full += f.interval[0] <= -0.35 <= f.interval[1]
    assert 380 - 17 <= stat <= 380 + 17
    assert full >= stat and full >= 380 - 17


def test_window_spread_is_zero_on_an_exact_power_law():
    e = np.tile((3.0 * N ** -0.4)[:, None], (1, 5))
    f = fit_slope(N, e)
    assert f.slope == pytest.approx(-0.4, abs=1e-12)
    assert f.spread_window <= 1e-12 and f.max_window_deviation <= 1e-12 and f.se_statistical <= 1e-12


def test_window_spread_with_curvature_equals_the_quadratic_by_hand():
    """log e = a + b x + c x^2 on equally spaced x (exactly geometric n): the least-squares slope over a window of
    equally weighted points symmetric about their mean is b + 2 c xbar_window, so spread = |c| |xbar_upper -
    xbar_lower|."""
    n = np.geomspace(100, 10000, 8)
    x = np.log(n)
    c = 0.05
    e = np.tile(np.exp(1.0 - 0.3 * x + c * x ** 2)[:, None], (1, 4))
    f = fit_slope(n, e)
    expected = c * (x[4:].mean() - x[:4].mean())
    assert f.spread_window == pytest.approx(expected, rel=1e-9)
    assert f.spread_window > 0.05
    assert f.half_width == pytest.approx(f.spread_window, rel=1e-9)          # no noise: the spread is all of it


def test_subsampling_terms():
    """Without sub_var no subsampling term. A share constant in n shifts every log error by the same amount: no
    slope shift. A share growing with n flattens the curve: a positive shift. The "rms" estimand removes the
    stated variance: on e^2 = n^-1 + V with V known, it recovers the exponent -1/2 exactly."""
    rng = np.random.default_rng(2)
    e = power_law(rng)
    assert fit_slope(N, e).subsample_shift == 0
    const = fit_slope(N, e, sub_var=0.3 * np.mean(e ** 2, axis=1, keepdims=True) * np.ones_like(e))
    assert const.subsample_shift == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(const.subsample_share, 0.3, rtol=1e-12)
    grow = fit_slope(N, e, sub_var=np.linspace(0.1, 0.6, N.size)[:, None] * np.mean(e ** 2, axis=1, keepdims=True)
                     * np.ones_like(e))
    assert grow.subsample_shift > 0.05
    V = np.full((N.size, 3), 0.02)
    exact = np.sqrt(1.0 / N[:, None] + V)
    f = fit_slope(N, exact, sub_var=V, estimand="rms")
    assert f.slope == pytest.approx(-0.5, abs=1e-10)
    with pytest.raises(ValueError, match="swamps"):
        fit_slope(N, exact, sub_var=V + 1.0, estimand="rms")


@pytest.mark.parametrize("args, kwargs, message", [
    ((N, np.zeros((8, 3))), {}, "errors must be > 0"),
    ((N[:3], np.ones((3, 3))), {}, "n_values must be >= 4"),
    ((N, np.ones((8, 1))), {}, "errors must have shape"),
    ((N[::-1], np.ones((8, 3))), {}, "increasing"),
    ((N, np.ones((8, 3))), {"level": 1.0}, "level"),
    ((N, np.ones((8, 3))), {"window": 1}, "window"),
    ((N, np.ones((8, 3))), {"estimand": "mean"}, "estimand"),
])
def test_bad_input_is_one_clear_value_error(args, kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        fit_slope(*args, **kwargs)
    assert "\n" not in str(err.value)


def test_log_error_table_rms_by_hand():
    e = np.array([[1.0, 3.0]] * 4)
    x, y, v = log_error_table(np.array([1, 2, 3, 4]), e, estimand="rms")
    np.testing.assert_allclose(y, 0.5 * np.log(5.0))                  # mean square (1 + 9)/2
    np.testing.assert_allclose(v, np.var([1.0, 9.0], ddof=1) / (4 * 2 * 25.0))
