"""The authors' synthetic protocol as data: shapes, ranges, scalings, reproducibility; the timing extrapolation."""
import numpy as np
import pytest

from attnverify.numerics.tsc.protocol import (PAPER_GAUSSIAN_ROWS, PAPER_SPHERE_ROWS, gaussian_experiment,
                                              geometric_sizes, sphere_experiment)
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw
from attnverify.numerics.tsc.timing import extrapolate_seconds


def constant_over_scales(x):
    """Every scale's matrix equals the first one (to rounding of the entries' magnitude)."""
    np.testing.assert_allclose(x, np.broadcast_to(x[:1], x.shape), rtol=0, atol=1e-13 * np.abs(x).max())


def geometric(x, lo, hi, count):
    return x.size == count and x[0] == pytest.approx(lo) and x[-1] == pytest.approx(hi) and \
        np.allclose(np.diff(np.log(x)), np.log(hi / lo) / (count - 1))


def test_gaussian_paper_protocol():
    e = gaussian_experiment("paper")
    assert e.d == 50 and e.reps == 200 and e.n_reference == 100_000 and e.cov_norm == "fro"
    assert isinstance(e.law, GaussianLaw)
    np.testing.assert_allclose(e.law.cov, 0.1 * np.eye(50))
    assert geometric(e.scales, 0.05, 50, 12)
    np.testing.assert_array_equal(e.n_values, np.round(np.geomspace(1000, 30000, 12)))
    assert e.n_values[0] == 1000 and e.n_values[-1] == 30000 and e.n_values.size == 12
    constant_over_scales(e.W_q / np.sqrt(e.scales)[:, None, None])
    constant_over_scales(e.W_k / np.sqrt(e.scales)[:, None, None])
    constant_over_scales(e.A / e.scales[:, None, None])
    np.testing.assert_allclose(e.A, np.swapaxes(e.W_k, 1, 2) @ e.W_q, rtol=1e-13)
    np.testing.assert_array_equal(e.query_rows, PAPER_GAUSSIAN_ROWS)
    # N(0, 1/d) entries: the sample variance of 2500 normal entries has standard error sqrt(2/2499)/d
    for W in (e.W_q[0] / np.sqrt(e.scales[0]), e.W_k[0] / np.sqrt(e.scales[0]), e.W_v):
        assert abs(W.var() - 1 / 50) <= 4 * np.sqrt(2 / 2499) / 50
    assert e.tau == pytest.approx(np.sqrt(50))


def test_sphere_paper_protocol():
    e = sphere_experiment("paper")
    assert e.d == 50 and e.reps == 200 and e.n_reference is None and e.cov_norm == "spectral"
    assert isinstance(e.law, SphereLaw) and e.law.radius == 1.0
    assert geometric(e.scales, 10, 1e5, 12)
    np.testing.assert_array_equal(e.n_values, np.round(np.geomspace(1e4, 1e5, 12)))
    constant_over_scales(e.A / e.scales[:, None, None] ** 2)
    constant_over_scales(e.W_q / e.scales[:, None, None])
    assert abs(e.W_v.var() - 1.0) <= 4 * np.sqrt(2 / 2499)
    assert e.query_rows == PAPER_SPHERE_ROWS


@pytest.mark.parametrize("make", [gaussian_experiment, sphere_experiment])
def test_quick_profile_keeps_the_shape(make):
    quick, paper = make("quick"), make("paper")
    assert quick.scales.size >= 4 and quick.d < paper.d and quick.reps < paper.reps
    assert quick.n_values[-1] < paper.n_values[-1] and quick.query_rows is None
    assert quick.scales[0] == paper.scales[0] and quick.scales[-1] == paper.scales[-1]
    assert type(quick.law) is type(paper.law) and quick.cov_norm == paper.cov_norm
    assert np.all(np.diff(quick.horizons().two_sided) > 0)


def test_weights_reproducible_and_seed_dependent_and_tau_option():
    a, b, c = gaussian_experiment(weight_seed=1), gaussian_experiment(weight_seed=1), gaussian_experiment(weight_seed=2)
    np.testing.assert_array_equal(a.W_v, b.W_v)
    assert not np.array_equal(a.W_v, c.W_v)
    assert sphere_experiment(tau=3.0).tau == 3.0


def test_pairs_by_hand():
    e = gaussian_experiment("quick").with_(n_values=np.array([10, 20]), reps=3, n_reference=50, reference_rows=None,
                                           query_rows=15)
    S = e.scales.size
    assert e.pairs() == 3 * S * (10 * 10 + 20 * 15) + S * 50 * 50


def test_bad_input_is_one_clear_value_error():
    with pytest.raises(ValueError, match="profile"):
        gaussian_experiment("full")
    with pytest.raises(ValueError, match="repeated"):
        geometric_sizes(10, 12, 8)


def test_timing_extrapolation_runs_on_a_reduced_experiment():
    """Structure only (no wall-clock assertion): three measured sizes, one prediction per size."""
    e = sphere_experiment("quick").with_(n_values=np.array([20, 30, 45, 70]), reps=3)
    t = extrapolate_seconds(e, 0, reps=2)
    assert t.per_repetition.shape == (4,) and t.measured_sizes.tolist() == [20, 45, 70]
    assert t.seconds >= 0 and t.cpu_seconds >= 0 and t.reference_seconds == 0
