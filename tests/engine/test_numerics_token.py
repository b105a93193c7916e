"""Self-attention with token queries (attnverify.numerics.engine.token) against references written here: a plain
NumPy log-space softmax at small n (the kernel sums in another order and uses its own exp: agreement to rounding),
the hardmax at a tiny temperature, and, for a Gaussian mu, the attention map in closed form derived by hand:
Gamma_mu(x) = E[e^{<a, y>} V y] / E[e^{<a, y>}] with a = kappa A x is V times the mean of the tilted law
N(m + Sigma a, Sigma), i.e. Gamma_mu(x) = V (m + kappa Sigma A x). Gamma_{mu_n} is a ratio of empirical means, biased
by O(1/n) (its push-forward mean by about 1.5 / n here, measured at n = 500 and 1000): at n = 2000 that is a fifth
of the Monte Carlo error of 40 token sets."""
import numpy as np
import pytest
from scipy.special import logsumexp

from attnverify.numerics.engine import (Attention, MixtureSpec, attention_map, attention_map_mc, gaussian,
                                        pushforward_moments_mc, sphere, token_outputs)

Z = 4.0


def token_spec(tau=0.7, d=4, comps=None):
    rng = np.random.default_rng(0)
    A = np.eye(d) + 0.4 * rng.standard_normal((d, d))
    V = np.eye(d) + 0.4 * rng.standard_normal((d, d))
    comps = comps or (gaussian("c1", 2, [1.0, -0.5], [0.8, 1.2], 0.9, rademacher=True),
                      sphere("ring", 1, 1.5), gaussian("c2", 3, 0, [1.0, 1.0], 1.0))
    return MixtureSpec(d=d, directions=("xi", "zeta"), components=comps,
                       attention=Attention(beta=1.1, tau=tau, A=A, a_perp=None, V=V, v_perp=None, query="token"))


def reference(spec, Y, P):
    S = (spec.attention.beta / spec.attention.tau) * (P @ spec.matrix("A").T) @ Y.T      # <A x_i, y_j> kappa
    W = np.exp(S - logsumexp(S, axis=1, keepdims=True))
    return W @ (Y @ spec.matrix("V").T)


def test_kernel_path_matches_numpy_at_small_n():
    spec = token_spec()
    sample = token_outputs(spec, 60, 3, np.random.default_rng(1))
    assert sample.tokens.shape == (3, 60, 4) and sample.labels.shape == (3, 60)
    for r in range(3):
        Y = sample.tokens[r]
        np.testing.assert_allclose(sample.outputs[r], reference(spec, Y, Y), rtol=1e-11, atol=1e-12)
    P = np.random.default_rng(2).standard_normal((7, 4))
    np.testing.assert_allclose(attention_map(spec, sample.tokens[0], P)[0], reference(spec, sample.tokens[0], P),
                               rtol=1e-11, atol=1e-12)


def test_tiny_temperature_reads_the_argmax_token_without_overflow():
    spec = token_spec(tau=1e-7)
    sample = token_outputs(spec, 50, 1, np.random.default_rng(3))
    Y = sample.tokens[0]
    top = np.argmax((Y @ spec.matrix("A").T) @ Y.T, axis=1)
    np.testing.assert_allclose(sample.outputs[0], Y[top] @ spec.matrix("V").T, rtol=1e-10, atol=1e-12)


def test_labels_follow_the_mixture_weights():
    spec = token_spec()
    labels = token_outputs(spec, 3000, 2, np.random.default_rng(4)).labels.ravel()
    share = np.bincount(labels, minlength=3) / labels.size
    se = np.sqrt(spec.weights * (1 - spec.weights) / labels.size)
    assert np.max(np.abs(share - spec.weights) / se) < Z


def gaussian_mu_spec(tau=2.0):
    comps = (gaussian("mu", 1, [0.6, -0.3], [1.0, 0.7], 0.8),)
    return token_spec(tau=tau, d=3, comps=comps)


def test_attention_map_of_a_gaussian_is_the_tilted_mean():
    spec = gaussian_mu_spec()
    kappa = spec.attention.beta / spec.attention.tau
    m, Sigma = spec.components[0].mean, np.diag([1.0, 0.49, 0.64])
    P = np.array([[0.5, 0.0, 0.2], [-0.4, 0.6, 0.0], [0.0, 0.0, 0.0]])
    closed = (m + kappa * (P @ spec.matrix("A").T) @ Sigma) @ spec.matrix("V").T
    est = attention_map_mc(spec, P, 2000, 40, np.random.default_rng(6))
    z = np.abs(est.mean - closed) / est.se
    assert z.max() < Z, z


def test_pushforward_mean_of_a_gaussian():
    """Gamma_mu is affine, Gamma_mu(y) = c + G y with c = V m and G = kappa V Sigma A, so for y ~ mu the push-forward
    has mean c + G m and energy E|Gamma(y)|^2 = |c + G m|^2 + tr(G Sigma G^T) (the trace of the second moment)."""
    spec = gaussian_mu_spec()
    kappa = spec.attention.beta / spec.attention.tau
    m, Sigma = spec.components[0].mean, np.diag([1.0, 0.49, 0.64])
    V, A = spec.matrix("V"), spec.matrix("A")
    G, c = kappa * V @ Sigma @ A, V @ m
    mean = c + G @ m
    energy = mean @ mean + np.trace(G @ Sigma @ G.T)
    est = pushforward_moments_mc(spec, 2000, 40, np.random.default_rng(7))
    assert np.max(np.abs(est.mean.mean - mean) / est.mean.se) < Z
    value, se = est.second.contrast(np.eye(3))
    assert abs(value - energy) < Z * se


def test_pushforward_batches_measure_the_hand_derived_moments():
    """pushforward_batches over 40 batches of 400 queries: the batch means and the symmetrised cross-covariances
    estimate c + G m and G Sigma G^T (hand-derived above), every entry within Z standard errors of the batches; a
    covariance off by 10 % (G Sigma G^T x 1.1) is not."""
    from attnverify.numerics.engine import pushforward_batches

    spec = gaussian_mu_spec()
    kappa = spec.attention.beta / spec.attention.tau
    m, Sigma = spec.components[0].mean, np.diag([1.0, 0.49, 0.64])
    V, A = spec.matrix("V"), spec.matrix("A")
    G, c = kappa * V @ Sigma @ A, V @ m
    est = pushforward_batches(spec, 400, 2000, 40, np.random.default_rng(3))
    assert est.mean.shape == (40, 3) and est.cov.shape == (40, 3, 3) and 100 < est.ess < 2000
    iu = np.triu_indices(3)
    rows = np.concatenate([est.mean, est.cov[:, iu[0], iu[1]]], axis=1)
    se = rows.std(axis=0, ddof=1) / np.sqrt(40)
    target = np.concatenate([c + G @ m, (G @ Sigma @ G.T)[iu]])
    assert np.max(np.abs(rows.mean(axis=0) - target) / se) < Z
    wrong = np.concatenate([c + G @ m, 1.1 * (G @ Sigma @ G.T)[iu]])
    assert np.max(np.abs(rows.mean(axis=0) - wrong) / se) > Z


def test_same_seed_same_outputs_and_bad_input():
    spec = token_spec()
    a = token_outputs(spec, 40, 2, np.random.default_rng(9))
    b = token_outputs(spec, 40, 2, np.random.default_rng(9))
    np.testing.assert_array_equal(a.outputs, b.outputs)
    with pytest.raises(ValueError, match="tokens"):
        attention_map(spec, np.ones((5, 3)))
    with pytest.raises(ValueError, match="points"):
        attention_map(spec, np.ones((5, 4)), np.full((2, 4), np.nan))
    with pytest.raises(ValueError, match="reps"):
        pushforward_moments_mc(spec, 10, 1, np.random.default_rng(0))
    trained = MixtureSpec(d=3, directions=("xi",), components=(gaussian("a", 2, 0, [1.0], 1.0),),
                          attention=Attention(beta=1.0, A=[[1.0]], V=[[1.0]]))
    with pytest.raises(ValueError, match="query"):
        token_outputs(trained, 10, 1, np.random.default_rng(0))
