"""The quick profiles run end to end (marked slow: about 20 s). Exact references for the Gaussian come from the
closed forms derived by hand in test_curves.py (exponential tilting); the sphere's mean is 0 by symmetry."""
import numpy as np
import pytest

from attnverify.numerics.tsc.curves import run_experiment
from attnverify.numerics.tsc.protocol import gaussian_experiment, sphere_experiment

pytestmark = pytest.mark.slow


def test_gaussian_quick_profile():
    """Every curve internally consistent; at the two smallest horizons (H < 0.05, where m_n - m = W_v (ybar - m)
    (1 + O(H))) the mean's 99% interval holds -1/2; the empirical reference flattens the small-H slopes."""
    e = gaussian_experiment("quick")
    S = e.law.cov
    cov = np.array([e.W_v @ S @ a @ S @ a.T @ S @ e.W_v.T / e.tau ** 2 for a in e.A])
    c = run_experiment(e, 0, np.zeros((e.scales.size, e.d)), cov)
    H = e.horizons().two_sided
    for s in range(e.scales.size):
        for q in ("mean", "cov_fro"):
            assert c.consistency(q, "exact", s).passed
    for s in np.flatnonzero(H < 0.05):
        f = c.fit("mean", "exact", int(s), level=0.99)
        assert f.interval[0] <= -0.5 <= f.interval[1]
        bias = c.reference_bias("mean", int(s))
        assert bias.slope - bias.quantile * bias.se_statistical > 0


def test_sphere_quick_profile_mean_curves_are_consistent():
    e = sphere_experiment("quick")
    c = run_experiment(e, 0, np.zeros((e.scales.size, e.d)), np.zeros((e.scales.size, e.d, e.d)))
    for s in range(e.scales.size):
        assert c.consistency("mean", "exact", s).passed
        assert np.all(np.isfinite(c.errors["mean/exact"][s]))
