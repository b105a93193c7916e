"""The finite-L attention of the engine (attnverify.numerics.engine.attention) against references written here:
the textbook softmax where it does not overflow, scipy's softmax and the hardmax at beta = 1e6, an overflow that
must raise, and the same seed giving the same numbers."""
import numpy as np
import pytest
from scipy.special import softmax as scipy_softmax

from attnverify.numerics.engine import (Attention, MixtureSpec, attention_output, attention_weights, gaussian,
                                        grid_samples, overlap_grid, query_from_overlaps, sample_full, sample_reduced,
                                        sphere)


def model(beta, A=None, d=6, L=(4, 20)):
    A = np.array([[1.2, 0.3], [-0.4, 0.8]]) if A is None else A
    return MixtureSpec(d=d, directions=("xi", "zeta"),
                       components=(gaussian("sig", L[0], [1.0, -0.5], [0.6, 1.3], 0.9, rademacher=True),
                                   sphere("ring", 3, 2.0, [0.0, 0.4]),
                                   gaussian("noise", L[1], 0, [1.0, 1.0], 1.1)),
                       attention=Attention(beta=beta, A=A, V=[[0.5, 1.0], [0.0, 2.0]], a_perp=0.7, v_perp=1.3,
                                           tau=0.8))


def test_weights_match_the_naive_softmax_where_it_does_not_overflow():
    spec = model(beta=1.0)
    X = sample_full(spec, 50, np.random.default_rng(1))
    q = query_from_overlaps(np.array([[0.3, -0.6]]), spec.d)[0]
    s = (spec.attention.beta / spec.attention.tau) * np.einsum("nld,d->nl", X, spec.matrix("A").T @ q)
    naive = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)          # no max shift: fine at these scores
    a, f = attention_output(X, q, spec)
    np.testing.assert_allclose(a, naive, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(f, np.einsum("nl,nld->nd", naive, X @ spec.matrix("V").T), rtol=1e-12, atol=1e-14)


def test_no_overflow_at_beta_1e6_and_the_weights_are_the_hardmax():
    spec = model(beta=1e6)
    X = sample_full(spec, 40, np.random.default_rng(2))
    q = query_from_overlaps(np.array([[0.5, 0.5]]), spec.d)[0]
    a = attention_weights(X, q, spec)
    s = (1e6 / 0.8) * np.einsum("nld,d->nl", X, spec.matrix("A").T @ q)
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(np.exp(s)))                      # the naive softmax would overflow here
    np.testing.assert_allclose(a, scipy_softmax(s, axis=1), rtol=1e-12, atol=1e-300)
    top = np.argmax(s, axis=1)
    np.testing.assert_allclose(a[np.arange(40), top], 1.0, rtol=0, atol=1e-12)


def test_the_grid_estimator_at_beta_1e6_is_finite_and_reads_the_argmax_token():
    spec = model(beta=1e6)
    rhos = np.array([[0.9, 0.1], [-0.2, 0.7]])
    s = grid_samples(spec, rhos, 30, np.random.default_rng(3), method="full")
    X = sample_full(spec, 30, np.random.default_rng(3))                 # the same sequences (one batch)
    Q = query_from_overlaps(rhos, spec.d)
    VX = X @ spec.matrix("V").T
    for r in range(2):
        top = np.argmax(X @ (spec.matrix("A").T @ Q[r]), axis=1)
        hard = VX[np.arange(30), top]
        np.testing.assert_allclose(s.energy[:, r], np.einsum("nd,nd->n", hard, hard), rtol=1e-9)
    # reduced: the conditional energy of the argmax token, |V_S x_top^S|^2 + v_perp^2 W_top (its weight is 1)
    s = grid_samples(spec, rhos, 30, np.random.default_rng(3), method="reduced")
    XS, W = sample_reduced(spec, 30, np.random.default_rng(3))
    for r in range(2):
        top = np.argmax(XS @ (spec.span_matrix("A").T @ Q[r, :3]), axis=1)
        hard = XS[np.arange(30), top] @ spec.span_matrix("V").T
        expected = np.einsum("nd,nd->n", hard, hard) + 1.3 ** 2 * W[np.arange(30), top]
        np.testing.assert_allclose(s.energy[:, r], expected, rtol=1e-9)


def test_an_overflowing_score_raises_naming_the_scores():
    spec = model(beta=1e306, A=1e3 * np.eye(2))
    with pytest.raises(FloatingPointError, match="scores"):
        grid_samples(spec, [[0.6, 0.0]], 5, np.random.default_rng(0))
    X = sample_full(spec, 3, np.random.default_rng(0))
    with pytest.raises(FloatingPointError, match="scores"):
        attention_weights(X, query_from_overlaps(np.array([[1.0, 0.0]]), spec.d)[0], spec)


def test_overlap_grid_shapes_and_refusals():
    assert overlap_grid([0.1, 0.2, 0.3], 1).shape == (3, 1)
    assert overlap_grid([0.1, 0.2], 2).shape == (1, 2)
    for bad in ([0.8, 0.8], [[np.nan, 0.0]], [[0.1, 0.2, 0.3]], "x"):
        with pytest.raises(ValueError, match="rhos"):
            overlap_grid(bad, 2)
    q = query_from_overlaps(overlap_grid([[0.6, 0.0], [0.0, -1.0]], 2), 4)
    np.testing.assert_allclose(q, [[0.6, 0.0, 0.8, 0.0], [0.0, -1.0, 0.0, 0.0]])


@pytest.mark.parametrize("method", ["reduced", "full"])
def test_same_seed_same_numbers(method):
    spec = model(beta=2.0)
    a = grid_samples(spec, [[0.1, 0.2], [0.5, -0.5]], 20, np.random.default_rng(7), method=method, drift=True)
    b = grid_samples(spec, [[0.1, 0.2], [0.5, -0.5]], 20, np.random.default_rng(7), method=method, drift=True)
    c = grid_samples(spec, [[0.1, 0.2], [0.5, -0.5]], 20, np.random.default_rng(8), method=method, drift=True)
    for name in ("energy", "mass", "drift"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert not np.array_equal(getattr(a, name), getattr(c, name))
