"""The internal-consistency test of an error curve: its false-alarm rate and its power."""
import numpy as np
import pytest

from attnverify.numerics.tsc.consistency import curve_consistency

N = np.round(np.geomspace(100, 10000, 6)).astype(int)


def curve(rng, R=30, b=-0.4):
    """Norms of 3-dimensional Gaussian vectors of scale n^b: independent repetitions, a decreasing curve."""
    return N[:, None] ** b * np.linalg.norm(rng.standard_normal((N.size, R, 3)), axis=-1)


def test_false_alarm_rate_is_at_most_alpha():
    """200 well-behaved curves at alpha = 0.05 (Bonferroni bounds the family-wise rate by alpha): at most
    10 + 4 sqrt(200 * 0.05 * 0.95) = 22 alarms; a flat curve (b = 0) is also consistent."""
    rng = np.random.default_rng(0)
    alarms = sum(not curve_consistency(N, curve(rng), alpha=0.05).passed for _ in range(200))
    assert alarms <= 22
    flat = sum(not curve_consistency(N, curve(rng, b=0.0), alpha=0.05).passed for _ in range(200))
    assert flat <= 22


def test_a_rising_curve_fails():
    rng = np.random.default_rng(1)
    c = curve_consistency(N, curve(rng, b=0.3))
    assert not c.passed and c.statistic > c.threshold
    assert c.rise_z.max() == c.statistic


def test_repetitions_that_disagree_with_their_scatter_fail():
    """Every even repetition (one half) three times larger: the halves' means differ far beyond their standard
    errors."""
    rng = np.random.default_rng(2)
    e = curve(rng)
    e[:, 0::2] *= 3.0
    c = curve_consistency(N, e)
    assert not c.passed and c.scatter_z.max() == c.statistic


def test_threshold_is_the_bonferroni_normal_quantile():
    from scipy.stats import norm
    c = curve_consistency(N, curve(np.random.default_rng(3)), alpha=1e-3)
    assert c.tests == N.size + N.size * (N.size - 1) // 2
    assert c.threshold == pytest.approx(norm.isf(1e-3 / c.tests), rel=1e-12)


@pytest.mark.parametrize("errors, alpha, message", [
    (np.ones((6, 3)), 1e-3, "R >= 4"), (np.ones((6, 8)), 0.0, "alpha"), (-np.ones((6, 8)), 1e-3, "> 0"),
])
def test_bad_input_is_one_clear_value_error(errors, alpha, message):
    with pytest.raises(ValueError, match=message) as err:
        curve_consistency(N, errors, alpha)
    assert "\n" not in str(err.value)
