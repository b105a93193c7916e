"""Error curves end to end: hand-derived special cases (A = 0), the empirical-reference bias, subsampling against
the full computation on the same tokens, reproducibility."""
import numpy as np
import pytest

from attnverify.numerics.tsc.curves import LinearControl, child_rng, run_error_curves, run_experiment
from attnverify.numerics.tsc.laws import GaussianLaw
from attnverify.numerics.tsc.protocol import gaussian_experiment

D = 3
LAW = GaussianLaw(np.array([0.5, -1.0, 0.2]), np.array([[0.3, 0.1, 0.0], [0.1, 0.2, 0.05], [0.0, 0.05, 0.1]]))
W_V = np.array([[1.0, 0.5, 0.0], [-0.3, 1.2, 0.4], [0.2, 0.0, 0.9]])
N = np.array([50, 100, 200, 400, 800])


def gaussian_reference(A, tau):
    """Closed forms derived by hand for mu = N(m, Sigma): exponential tilting gives Gamma_mu(x) = W_v (m + Sigma A x
    / tau) (the law tilted by exp(<b, y>) is N(m + Sigma b, Sigma)), affine in x; for x ~ mu its mean is W_v (m +
    Sigma A m / tau) and its covariance W_v Sigma A Sigma A^T Sigma W_v^T / tau^2."""
    m, S = LAW.mean, LAW.cov
    mean = np.array([W_V @ (m + S @ a @ m / tau) for a in A])
    cov = np.array([W_V @ S @ a @ S @ a.T @ S @ W_V.T / tau ** 2 for a in A])
    return mean, cov


def test_zero_interaction_errors_are_those_of_the_sample_mean():
    """A = 0: every output is W_v ybar, so ||m_n - m|| = ||W_v (ybar - m)|| and C_n = 0 = C. The tokens are
    regenerated from the documented seeds (spawn key (0, k, r))."""
    A = np.zeros((1, D, D))
    seed = np.random.SeedSequence(3)
    c = run_error_curves(LAW, A, W_V, 1.0, N[:3], 4, seed, *gaussian_reference(A, 1.0))
    for k, n in enumerate(N[:3]):
        for r in range(4):
            y = LAW.sample(child_rng(seed, 0, k, r), int(n))
            expected = np.linalg.norm(W_V @ (y.mean(axis=0) - LAW.mean))
            assert c.errors["mean/exact"][0, k, r] == pytest.approx(expected, rel=1e-12)
    assert np.all(c.errors["cov_fro/exact"] <= 1e-14) and np.all(c.errors["cov_spectral/exact"] <= 1e-14)


def test_zero_interaction_slope_is_minus_one_half():
    """ybar - m ~ N(0, Sigma/n): E log ||W_v (ybar - m)|| = const - (1/2) log n exactly; the 99% interval holds it."""
    A = np.zeros((1, D, D))
    c = run_error_curves(LAW, A, W_V, 1.0, N, 60, 0, *gaussian_reference(A, 1.0))
    f = c.fit("mean", "exact", 0, level=0.99)
    assert f.interval[0] <= -0.5 <= f.interval[1]
    assert c.consistency("mean", "exact", 0).passed


def test_empirical_reference_error_matches_the_hand_computation():
    """A = 0 and a reference of N = 1600 tokens: the error against it is ||W_v (ybar - ybar_ref)||, whose mean
    square given the reference is tr(W_v Sigma W_v^T)/n + ||W_v (ybar_ref - m)||^2. Each n's measured root mean
    square lies within 4 standard errors of it, and the reference flattens the slope (bias interval above 0)."""
    A = np.zeros((1, D, D))
    c = run_error_curves(LAW, A, W_V, 1.0, N, 200, 1, *gaussian_reference(A, 1.0), n_reference=1600)
    offset = c.empirical["mean"][0] - W_V @ LAW.mean
    expected = 0.5 * np.log(np.trace(W_V @ LAW.cov @ W_V.T) / N + offset @ offset)
    f = c.fit("mean", "empirical", 0, estimand="rms")
    assert np.all(np.abs(f.mean_log_error - expected) <= 4 * f.se_log_error)
    bias = c.reference_bias("mean", 0)
    assert bias.slope - bias.quantile * bias.se_statistical > 0


def test_subsampled_errors_debiased_agree_with_the_full_computation_on_the_same_tokens():
    """Tokens come before the row draw in each repetition's generator, so a subsampled run and a full run see the
    same samples. Given the sample, E[e_sub^2 - V] = e_full^2 (mean: exact; Frobenius: to first order), tested over
    all 4 x 40 repetitions within 4.5 standard errors. The control is the hand-derived affine Gamma_mu."""
    rng = np.random.default_rng(4)
    tau = 1.5
    A = 0.8 * rng.standard_normal((2, D, D))
    ref = gaussian_reference(A, tau)
    control = LinearControl(np.array([W_V @ LAW.mean] * 2), np.array([W_V @ LAW.cov @ a / tau for a in A]))
    n = np.array([200, 400, 800, 1600])
    full = run_error_curves(LAW, A, W_V, tau, n, 40, 5, *ref)
    for ctrl in (None, control):
        sub = run_error_curves(LAW, A, W_V, tau, n, 40, 5, *ref, query_rows=[16, 24], control=ctrl)
        for q in ("mean", "cov_fro"):
            diff = sub.errors[f"{q}/exact"] ** 2 - sub.sub_var[q] - full.errors[f"{q}/exact"] ** 2
            assert abs(diff.mean()) <= 4.5 * diff.std() / np.sqrt(diff.size)
            assert np.all(sub.sub_var[q] > 0)


def test_reproducible_and_seed_dependent():
    A = 0.5 * np.eye(D)[None]
    a = run_error_curves(LAW, A, W_V, 1.0, N[:4], 3, np.random.SeedSequence(9), *gaussian_reference(A, 1.0),
                         query_rows=10)
    b = run_error_curves(LAW, A, W_V, 1.0, N[:4], 3, np.random.SeedSequence(9), *gaussian_reference(A, 1.0),
                         query_rows=10)
    c = run_error_curves(LAW, A, W_V, 1.0, N[:4], 3, np.random.SeedSequence(10), *gaussian_reference(A, 1.0),
                         query_rows=10)
    for key in a.errors:
        np.testing.assert_array_equal(a.errors[key], b.errors[key])
        assert not np.array_equal(a.errors[key], c.errors[key])


def test_run_experiment_on_a_reduced_protocol():
    exp = gaussian_experiment("quick").with_(n_values=np.array([40, 60, 90, 140]), reps=4, n_reference=300)
    H = exp.horizons()
    S = exp.law.cov                                        # mu = N(0, rho I): the hand forms above with m = 0
    cov = np.array([exp.W_v @ S @ a @ S @ a.T @ S @ exp.W_v.T / exp.tau ** 2 for a in exp.A])
    mean = np.zeros((exp.scales.size, exp.d))
    c = run_experiment(exp, 0, mean, cov)
    assert set(c.errors) == {f"{q}/{r}" for q in ("mean", "cov_fro", "cov_spectral") for r in ("exact", "empirical")}
    assert c.errors["mean/exact"].shape == (exp.scales.size, 4, 4) and H.two_sided.shape == (exp.scales.size,)
    np.testing.assert_array_equal(c.scales, exp.scales)
    assert np.isfinite(c.fit("cov_fro", "empirical", 4).slope)
    assert c.consistency("mean", "exact", 0).tests == 4 + 6


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "no reference"), (dict(exact_mean=np.zeros((1, D))), "together"),
    (dict(n_reference=100, query_rows=1), "query_rows"), (dict(n_reference=100, query_rows=[5, 5]), "one integer"),
    (dict(n_reference=100, control="x"), "control"),
    (dict(n_reference=100, control=LinearControl(np.zeros((2, D)), np.zeros((1, D, D)))), "control offset"),
])
def test_bad_input_is_one_clear_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        run_error_curves(LAW, np.eye(D), W_V, 1.0, N[:4], 2, 0, **kwargs)
    assert "\n" not in str(err.value)


def test_bad_law_is_refused_before_work():
    with pytest.raises(ValueError, match="law must be"):
        run_error_curves("gaussian", np.eye(D), W_V, 1.0, N[:4], 2, 0, n_reference=100)
