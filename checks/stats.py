"""Statistics shared by the checks: Bonferroni thresholds, z-scores of Monte Carlo estimates against a closed form,
the range of the delta method's O(1/L) terms, and the fits of measured curves (exponential decay rates, minima,
straight lines).

Nothing here knows a model: the inputs are numbers, arrays and estimates with a mean, a covariance (``contrast``)
and degrees of freedom (attnverify.numerics.signal.mc.Estimate).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from attnverify.numerics.signal.mc import Estimate


# ------------------------------------------------------------------------------------------- z-tests
def bonferroni_z(level: float, m: int) -> float:
    """Two-sided normal quantile for m simultaneous z-tests at family-wise false-alarm rate ``level``."""
    from scipy.stats import norm           # scipy.stats takes 0.8 s to import: not at import time

    return float(norm.isf(level / (2 * m)))


def normal_equivalent(t: np.ndarray, dof: int) -> np.ndarray:
    """The normal score with the same two-sided tail probability as a Student-t score ``t`` with ``dof`` degrees of
    freedom (a z-score whose standard error was estimated from the same sample), so one normal Bonferroni threshold
    serves estimates of any sample size."""
    from scipy.stats import norm, t as student_t

    t = np.asarray(t, dtype=float)
    a = np.atleast_1d(np.abs(t))
    with np.errstate(divide="ignore"):
        z = np.asarray(norm.isf(student_t.sf(a, dof)), dtype=float)
    # where the tail underflows (|t| beyond ~35): Wallace's approximation z = sqrt(dof log(1 + t^2 / dof)), finite and
    # increasing in |t| (such a score is far beyond any threshold either way)
    # a NaN score (a point whose difference is not a number, e.g. one a check leaves out) stays NaN, silently
    far = ~np.isfinite(z) & ~np.isnan(a)
    z[far] = np.sqrt(dof * np.logaddexp(0.0, 2.0 * (np.log(a[far]) - 0.5 * np.log(dof))))
    return np.sign(t) * z.reshape(t.shape)


def beyond(diff: np.ndarray, bound: np.ndarray | float) -> np.ndarray:
    """The part of a difference beyond a bound on its rounding error: sign(diff) max(|diff| - bound, 0). A
    difference inside the bound is no evidence either way (the computation cannot resolve it)."""
    diff = np.asarray(diff, dtype=float)
    return np.sign(diff) * np.maximum(np.abs(diff) - bound, 0.0)


def scores(diff: np.ndarray | float, se: np.ndarray | float) -> np.ndarray:
    """diff / se, elementwise, where a standard error of 0 (every sample equal: a degenerate, e.g. underflowed,
    measurement) gives 0 for a difference of 0 (nothing to see) and +-inf for any other (certainly not rounding)."""
    diff, se = np.broadcast_arrays(np.asarray(diff, dtype=float), np.asarray(se, dtype=float))
    out = np.full(diff.shape, 0.0)
    pos = se > 0
    out[pos] = diff[pos] / se[pos]
    out[~pos & (diff != 0)] = np.sign(diff[~pos & (diff != 0)]) * np.inf
    return out


def contrast_errors(est: Estimate, ref: int = 0) -> np.ndarray:
    """The standard errors of the contrasts mean_j - mean_ref, j != ref in grid order (common random numbers make
    them smaller than the levels')."""
    k = est.mean.size
    return np.array([est.contrast(np.eye(k)[j] - np.eye(k)[ref])[1] for j in range(k) if j != ref])


def block_statistics(est: Estimate, closed: np.ndarray, ref: int = 0, rounding: np.ndarray | None = None,
                     contrast_compared: np.ndarray | None = None) -> dict:
    """z-scores of one block (a rho grid with common random numbers) against a closed form ``closed``:
    levels, contrasts against the grid point ``ref``, and the fitted scale ratio sum MC / sum closed. Each is a
    Student-t score with est.dof degrees of freedom, reported as its normal equivalent (normal_equivalent).
    ``rounding``: a bound on the floating-point error of MC - closed at each grid point; each difference is scored
    by its part beyond that bound (:func:`beyond`; a contrast by the sum of its two bounds, the ratio by the sum
    over the grid). Where it is far below the standard errors the scores are unchanged. ``contrast_compared``: which
    contrasts (grid order, ``ref`` left out) join the family (all by default); every one is scored and reported."""
    k = closed.size
    r = np.zeros(k) if rounding is None else np.broadcast_to(np.asarray(rounding, dtype=float), (k,))
    diff = est.mean - closed
    z_level = normal_equivalent(scores(beyond(diff, r), est.se), est.dof)
    others = [j for j in range(k) if j != ref]
    z_contrast = np.empty(len(others))
    for i, j in enumerate(others):
        c = np.zeros(k)
        c[j], c[ref] = 1.0, -1.0
        _, se = est.contrast(c)
        z_contrast[i] = scores(beyond(diff[j] - diff[ref], r[j] + r[ref]), se)
    z_contrast = normal_equivalent(z_contrast, est.dof)
    total, se_total = est.contrast(np.ones(k))
    ratio, ratio_se = total / closed.sum(), se_total / abs(closed.sum())
    ratio_bound = float(r.sum() / abs(closed.sum()))
    compared = np.ones(len(others), bool) if contrast_compared is None else np.asarray(contrast_compared, bool)
    return {"z": z_level, "z_contrast": z_contrast, "contrast_compared": compared, "ratio": ratio, "ratio_se": ratio_se,
            "z_ratio": float(normal_equivalent(scores(beyond(ratio - 1.0, ratio_bound), ratio_se), est.dof)),
            "dof": est.dof, "sum_mc": total, "sum_mc_var": se_total**2, "sum_closed": float(closed.sum()),
            "sum_rounding": float(r.sum())}


def family_statistics(ests: list[Estimate], closed: list[np.ndarray],
                      rounding: list[np.ndarray] | None = None,
                      contrast_compared: list[np.ndarray] | None = None) -> dict:
    """Every block's statistics plus the pooled scale ratio over all blocks (independent blocks); ``all_z``: every
    z-score of the family (levels, compared contrasts, block ratios, pooled ratio). ``rounding`` and
    ``contrast_compared``: per block, as in :func:`block_statistics`."""
    rounding = rounding if rounding is not None else [None] * len(ests)
    compared = contrast_compared if contrast_compared is not None else [None] * len(ests)
    blocks = [block_statistics(e, c, rounding=r, contrast_compared=m)
              for e, c, r, m in zip(ests, closed, rounding, compared)]
    tot = sum(b["sum_mc"] for b in blocks)
    den = sum(b["sum_closed"] for b in blocks)
    ratio, ratio_se = tot / den, float(np.sqrt(sum(b["sum_mc_var"] for b in blocks))) / abs(den)
    bound = sum(b["sum_rounding"] for b in blocks) / abs(den)
    z_pooled = float(normal_equivalent(scores(beyond(ratio - 1.0, bound), ratio_se), min(b["dof"] for b in blocks)))
    all_z = np.concatenate([np.concatenate([b["z"], b["z_contrast"][b["contrast_compared"]], [b["z_ratio"]]])
                            for b in blocks] + [[z_pooled]])
    return {"blocks": blocks, "ratio": ratio, "ratio_se": ratio_se, "z_ratio": z_pooled, "all_z": all_z}


# ------------------------------------------------------------------------------------------- delta-method range
#: the O(1/L) terms of a softmax average over L tokens are the second-order delta method for ratios of sums of the
#: weights e^{s_i} (s_i a token's score); its neglected next order, relative to those terms, is predicted as
#: C_R m_3 / (m_2 L) with m_j = E[e^{j s}] / E[e^{s}]^j the relative moments of the weights (one Gaussian score of
#: variance v: m_j = e^{j (j - 1) v / 2}). C_R bounds the ratio measured on the model files and the checks that
#: use it (docs/trust.md); a setting above MAX_EXPANSION_RATIO lies outside the expansion,
#: and a comparison whose predicted remainder exceeds MAX_REMAINDER_OVER_SE of its standard error is left out.
C_R = 2.0
MAX_EXPANSION_RATIO = 0.25
MAX_REMAINDER_OVER_SE = 0.5
#: standard errors added to a measured O(1/L) term (an upper bound of its size)
MEASURED_SE = 3.0
#: the largest log-ratio taken out of log-space (e^700 is finite in float64); beyond it the ratio is infinite
_LOG_MAX = 700.0


def expansion_ratio_of_logs(log_m2: np.ndarray, log_m3: np.ndarray, L: float) -> np.ndarray:
    """C_R m_3 / (m_2 L) from log m_2 and log m_3: +inf where it exceeds e^700, never an overflow or a NaN."""
    log_ratio = np.log(C_R) + np.asarray(log_m3, float) - np.asarray(log_m2, float) - np.log(L)
    return np.where(log_ratio > _LOG_MAX, np.inf, np.exp(np.minimum(log_ratio, _LOG_MAX)))


# ------------------------------------------------------------------------------------------- curve fits
def decay_rate(t: np.ndarray, e: np.ndarray, lo: float, hi: float) -> tuple[float, float, int]:
    """(rate, rate difference between the two halves of the window, samples): least-squares slope of -log e(t)
    over the last contiguous run of samples with lo <= e <= hi (an earlier transient visit of the window is not
    the asymptotic decay); nan with fewer than 6 samples."""
    m = (e >= lo) & (e <= hi) & (t > 0)
    idx = np.nonzero(m)[0]
    if idx.size:
        breaks = np.nonzero(np.diff(idx) > 1)[0]
        first = idx[breaks[-1] + 1] if breaks.size else idx[0]
        m = m & (np.arange(len(m)) >= first)
    if m.sum() < 6:
        return float("nan"), float("nan"), int(m.sum())
    tt, ll = t[m], np.log(e[m])
    rate = -float(np.polyfit(tt, ll, 1)[0])
    k = len(tt) // 2
    halves = [-float(np.polyfit(tt[a], ll[a], 1)[0]) for a in (slice(0, k + 1), slice(k, None))]
    return rate, abs(halves[0] - halves[1]), int(m.sum())


def minimum(t: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Time and value of min W2: the grid minimum refined by a parabola through log W2 at 3 points."""
    k = int(np.argmin(w))
    if 0 < k < len(t) - 1 and np.all(w[k - 1:k + 2] > 0):
        y = np.log(w[k - 1:k + 2])
        a, b, c0 = np.polyfit(t[k - 1:k + 2], y, 2)
        if a > 0:
            tm = float(np.clip(-b / (2 * a), t[k - 1], t[k + 1]))
            return tm, float(min(np.exp(np.polyval([a, b, c0], tm)), w[k]))
    return float(t[k]), float(w[k])


def linfit(x: np.ndarray, y: np.ndarray) -> dict:
    """Least squares y = slope x + intercept with the slope's standard error and a 95 % t-interval (n - 2 dof)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope, icpt = np.polyfit(x, y, 1)
    res = y - slope * x - icpt
    n = len(x)
    sxx = float(np.sum((x - x.mean()) ** 2))
    se = float(np.sqrt(np.sum(res ** 2) / (n - 2) / sxx)) if n > 2 and sxx > 0 else float("nan")
    ss = float(np.sum((y - y.mean()) ** 2))
    from scipy.stats import t as student_t

    q = float(student_t.ppf(0.975, n - 2)) if n > 2 else float("nan")
    return {"slope": float(slope), "intercept": float(icpt), "se": se, "ci95": [slope - q * se, slope + q * se],
            "r2": 1.0 - float(np.sum(res ** 2)) / ss if ss > 0 else 1.0}
