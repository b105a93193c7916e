"""The shared softmax and log-sum-exp (attnverify.numerics.softmax) against mpmath at 50 digits, at scores whose naive
exponentials overflow float64, and on bad input (one-line ValueError)."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from attnverify.numerics.softmax import log_softmax, logsumexp, softmax


def _reference(row) -> tuple[list, object]:
    """(softmax, logsumexp) of one row of scores at 50 digits: exp and log of mpmath numbers, no shift needed."""
    with mpmath.workdps(50):
        e = [mpmath.exp(mpmath.mpf(float(x))) for x in row]
        total = mpmath.fsum(e)
        return [x / total for x in e], mpmath.log(total)


@pytest.mark.parametrize("scale", [1.0, 50.0, 800.0, 1e5])
def test_softmax_and_logsumexp_match_mpmath_without_overflow(scale):
    rng = np.random.default_rng(3)
    s = scale * rng.standard_normal((6, 7))                  # scale 800: exp(s) overflows float64 for most rows
    with np.errstate(over="raise", invalid="raise", divide="raise"):     # underflow to weight 0 is the design
        w, lse, lw = softmax(s), logsumexp(s), log_softmax(s)
    for i, row in enumerate(s):
        ref_w, ref_lse = _reference(row)
        np.testing.assert_allclose(w[i], [float(x) for x in ref_w], rtol=1e-13, atol=1e-300)
        assert lse[i] == pytest.approx(float(ref_lse), rel=1e-15, abs=1e-13)
        finite = [float(mpmath.log(x)) for x in ref_w]
        np.testing.assert_allclose(lw[i], finite, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-15)


def test_axis_and_shapes():
    s = np.arange(24.0).reshape(2, 3, 4) / 7.0
    for axis in (0, 1, -1):
        w = softmax(s, axis=axis)
        assert w.shape == s.shape
        np.testing.assert_allclose(w.sum(axis=axis), 1.0, rtol=1e-15)
        np.testing.assert_allclose(np.exp(log_softmax(s, axis=axis)), w, rtol=1e-14)
        expected = tuple(n for i, n in enumerate(s.shape) if i != axis % s.ndim)
        np.testing.assert_allclose(logsumexp(s, axis=axis), np.log(np.exp(s).sum(axis=axis)), rtol=1e-15)
        assert logsumexp(s, axis=axis).shape == expected and logsumexp(s, axis=axis, keepdims=True).shape[axis] == 1
    # a hand value: softmax(0, log 3) = (1/4, 3/4), logsumexp = log 4
    np.testing.assert_allclose(softmax([0.0, np.log(3.0)]), [0.25, 0.75], rtol=1e-15)
    assert logsumexp([0.0, np.log(3.0)]) == pytest.approx(np.log(4.0), rel=1e-15)


def test_masked_scores_get_weight_zero():
    s = np.array([[0.0, -np.inf, 1.0], [-np.inf, 2.0, -np.inf]])
    w = softmax(s)
    assert w[0, 1] == 0.0 and w[1, 0] == 0.0 and w[1, 1] == 1.0
    assert w[0, 2] == pytest.approx(np.e / (1 + np.e), rel=1e-15)
    assert log_softmax(s)[0, 1] == -np.inf and np.isfinite(logsumexp(s)).all()


def test_the_weights_are_the_papers_max_subtracted_softmax_bit_for_bit():
    """The simulators' numbers do not change: the shared softmax is exp(s - max s) / sum exp(s - max s), the form each
    paper had written (checked bit for bit against it, written out here)."""
    s = np.random.default_rng(0).standard_normal((50, 9)) * 30
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    assert np.array_equal(softmax(s), e / e.sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("bad,what", [
    (np.array([[1.0, np.nan]]), "NaN"), (np.array([1.0, np.inf]), "+inf"),
    (np.array([-np.inf, -np.inf]), "-inf"), (np.zeros((2, 0)), "no entries"), ("abc", "numeric"),
    (3.0, "scalar"),
])
def test_bad_scores_are_refused_in_one_line(bad, what):
    for fn in (softmax, logsumexp, log_softmax):
        with pytest.raises(ValueError) as exc:
            fn(bad)
        assert what in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="axis 2"):
        softmax(np.zeros((2, 3)), axis=2)
