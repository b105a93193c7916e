"""Paper D attention outputs through the fused kernel, against plain NumPy and hand-derived special cases."""
import numpy as np
import pytest
from scipy.special import softmax

from attnverify.numerics.tsc.attention import attention_at, self_attention_outputs, self_attention_rows, sup_error
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw


def plain_outputs(y, A, W_v, tau, X):
    """Gamma_{mu_n}(x) = softmax_j(<A x, y_j>/tau) W_v y_j by a plain (n x n) NumPy softmax (scipy, log-space)."""
    w = softmax((X @ A.T) @ y.T / tau, axis=1)
    return w @ (y @ W_v.T)


@pytest.fixture
def setting():
    rng = np.random.default_rng(1)
    d, n, reps = 4, 37, 3
    law = GaussianLaw(np.array([0.3, -0.2, 0.1, 0.0]), np.diag([0.5, 1.0, 0.2, 0.7]))
    Y = law.sample(rng, n, reps)
    A = rng.standard_normal((2, d, d)) * np.array([0.5, 2.0])[:, None, None]
    W_v = rng.standard_normal((d, d))
    return Y, A, W_v, 1.7


def test_self_attention_matches_plain_numpy(setting):
    Y, A, W_v, tau = setting
    rows = np.array([0, 5, 36, 12])
    out = self_attention_outputs(Y, A, W_v, tau, rows)
    assert out.shape == (2, 3, 4, 4)
    for s in range(2):
        for r in range(3):
            ref = plain_outputs(Y[r], A[s], W_v, tau, Y[r][rows])
            np.testing.assert_allclose(out[s, r], ref, rtol=1e-12, atol=1e-13)
    full = self_attention_outputs(Y[0], A[1], W_v, tau)          # 2-D inputs: all rows, scale axis kept
    np.testing.assert_allclose(full[0], plain_outputs(Y[0], A[1], W_v, tau, Y[0]), rtol=1e-12, atol=1e-13)


def test_rows_per_scale_match_plain_numpy(setting):
    Y, A, W_v, tau = setting
    rows = [np.array([3, 1]), np.array([0, 2, 30])]
    outs = self_attention_rows(Y[1], A, W_v, tau, rows)
    for s in range(2):
        np.testing.assert_allclose(outs[s], plain_outputs(Y[1], A[s], W_v, tau, Y[1][rows[s]]), rtol=1e-12,
                                   atol=1e-13)


def test_attention_at_query_points_matches_plain_numpy(setting):
    Y, A, W_v, tau = setting
    X = np.random.default_rng(2).standard_normal((5, 4)) * 3
    out = attention_at(Y, A, W_v, tau, X)
    assert out.shape == (2, 3, 5, 4)
    np.testing.assert_allclose(out[1, 2], plain_outputs(Y[2], A[1], W_v, tau, X), rtol=1e-12, atol=1e-13)


def test_zero_interaction_gives_the_sample_mean_of_the_values(setting):
    """A = 0: every score is 0, the softmax is uniform 1/n, so Gamma_{mu_n}(x) = W_v ybar for every x."""
    Y, _, W_v, tau = setting
    out = self_attention_outputs(Y, np.zeros((4, 4)), W_v, tau)
    expected = Y.mean(axis=1) @ W_v.T                              # (reps, d)
    np.testing.assert_allclose(out[0], np.broadcast_to(expected[:, None, :], out[0].shape), rtol=1e-13, atol=1e-14)


def test_sphere_scale_1e5_is_finite_and_hardmax():
    """W_q = s G_q, W_k = s G_k with s = 1e5 (A ~ 1e10 G_k^T G_q, scores ~ 1e10): no overflow, and the output is
    W_v y_{j*} with j* = argmax_j <A x, y_j> (the gap between the two best scores, times 1/tau, is far above the
    exponent's underflow at 708)."""
    rng = np.random.default_rng(3)
    d, n, s = 6, 200, 1e5
    G_q, G_k, G_v = rng.standard_normal((3, d, d))
    A = (s * G_k).T @ (s * G_q)
    Y = SphereLaw(d, 1.0).sample(rng, n)
    tau = np.sqrt(d)
    out = self_attention_outputs(Y, A, G_v, tau)[0]
    scores = (Y @ A.T) @ Y.T
    top2 = np.sort(scores, axis=1)[:, -2:]
    assert np.all((top2[:, 1] - top2[:, 0]) / tau > 1e3)            # the hardmax premise of this test
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, Y[scores.argmax(axis=1)] @ G_v.T, rtol=1e-12, atol=1e-12)


def test_sup_error_with_callable_and_array_reference(setting):
    Y, A, W_v, tau = setting
    X = np.eye(4)
    vals = attention_at(Y[0], A[0], W_v, tau, X)[0]
    ref = np.ones((4, 4))
    expected = np.linalg.norm(vals - ref, axis=1).max()
    assert sup_error(vals, X, ref) == pytest.approx(expected, rel=1e-14)
    assert sup_error(vals, X, lambda x: np.ones_like(x)) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("change, message", [
    (dict(tau=0.0), "tau must be"), (dict(tau=np.nan), "tau must be"),
    (dict(A=np.full((4, 4), np.nan)), "A has non-finite"), (dict(A=np.zeros((3, 3))), "A must have shape"),
    (dict(A=np.full((4, 4), 1e200)), "overflow"), (dict(rows=np.array([0, 37])), "rows must lie"),
    (dict(rows=np.array([0.5])), "rows must be"), (dict(W_v=np.zeros((3, 3))), "W_v must have shape"),
])
def test_bad_input_is_one_clear_value_error(setting, change, message):
    Y, A, W_v, tau = setting
    kwargs = dict(Y=Y, A=A, W_v=W_v, tau=tau, rows=None) | change
    with pytest.raises(ValueError, match=message) as err:
        self_attention_outputs(**kwargs)
    assert "\n" not in str(err.value)
