r"""The softmax and the log-sum-exp, in log-space, vectorised along one axis (shared by every paper's numerics).

For scores s_1..s_n along ``axis`` and m = max_i s_i,

    logsumexp(s) = m + log sum_i exp(s_i - m),
    log_softmax(s)_i = s_i - logsumexp(s),
    softmax(s)_i = exp(s_i - m) / sum_j exp(s_j - m)   (= exp(log_softmax(s)_i)).

Shifting by the maximum makes the largest exponent exp(0) = 1: nothing overflows however large the scores (an
attention temperature beta, a log-likelihood ratio of order d), the sum is at least 1 so its logarithm is finite,
and a score far below the maximum underflows to a weight 0, which is its value to float64 precision.
``softmax`` divides the shifted exponentials by their sum (one exp per entry, no log: the cheapest form, and the one
the papers' simulators have always used, so their numbers are unchanged). A score of -inf is a masked entry (weight
0); a NaN, a +inf, or a slice whose scores are all -inf has no softmax: ValueError naming it, before any work.
"""
from __future__ import annotations

import numpy as np

__all__ = ["log_softmax", "logsumexp", "softmax"]


def _scores(scores: object, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores as a float array, their maximum along ``axis`` kept as a length-1 axis), or ValueError in one line."""
    if isinstance(scores, (str, bytes)) or scores is None:
        raise ValueError(f"scores must be a numeric array, got {type(scores).__name__}")
    try:
        s = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("scores must be a numeric array") from None
    if s.ndim == 0:
        raise ValueError("scores must have at least one axis, got a scalar")
    if not -s.ndim <= axis < s.ndim:
        raise ValueError(f"axis {axis} is out of range for scores of shape {s.shape}")
    if s.shape[axis] == 0:
        raise ValueError(f"scores have no entries along axis {axis} (shape {s.shape})")
    m = s.max(axis=axis, keepdims=True)           # NaN if any score is NaN, +inf if any is +inf
    if not np.all(np.isfinite(m)):
        bad = m[~np.isfinite(m)].flat[0]
        what = "a NaN score" if np.isnan(bad) else "a +inf score" if bad > 0 else "every score -inf"
        raise ValueError(f"scores have no softmax: a slice along axis {axis} has {what}")
    return s, m


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax(s)_i = exp(s_i - max s) / sum_j exp(s_j - max s) along ``axis`` (a new array of the scores' shape;
    every slice sums to 1 up to rounding). Never overflows (module docstring)."""
    s, m = _scores(scores, axis)
    with np.errstate(over="ignore"):              # a difference beyond -1.8e308 is -inf: weight 0, its value
        e = s - m
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def logsumexp(scores: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """log sum_i exp(s_i) along ``axis``, as max s + log sum_i exp(s_i - max s) (never overflows)."""
    s, m = _scores(scores, axis)
    with np.errstate(over="ignore"):
        total = np.exp(s - m).sum(axis=axis, keepdims=True)
    out = m + np.log(total)
    return out if keepdims else np.squeeze(out, axis=axis)


def log_softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(s)_i = s_i - logsumexp(s) along ``axis``, as (s_i - max s) - log sum_j exp(s_j - max s) (finite
    wherever s_i is; -inf for a masked score)."""
    s, m = _scores(scores, axis)
    with np.errstate(over="ignore"):
        shifted = s - m
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
