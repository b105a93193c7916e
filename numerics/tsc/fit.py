"""Power-law slopes of error curves with an honest uncertainty.

Data: errors e_{k,r} > 0 at sample sizes n_1 < ... < n_K (r = 1..R independent repetitions), x_k = log n_k. The
per-n value y_k and its variance v_k depend on the estimand:
- "log" (default): y_k = (1/R) sum_r log e_{k,r}, v_k = s_k^2 / R, s_k^2 the sample variance of log e_{k,r} over r;
- "rms": y_k = (1/2) log M_k, M_k = (1/R) sum_r (e_{k,r}^2 - V_{k,r}), the mean square error with each
  repetition's subsampling variance V removed (E[e^2 - V] is the subsampling-free squared error: exact for the
  Euclidean and Frobenius norms, approximate for the spectral norm; V = 0 without subsampling), and by the delta
  method v_k = Var_r(e^2 - V) / (4 R M_k^2). It stays unbiased where subsampling noise dominates the error (then
  with a larger v_k); a non-positive M_k (noise only) is refused. Measured coverage of the statistical interval
  (tests): nominal for norms of Gaussian error vectors; below nominal for heavy-tailed errors (log-normal with
  sigma = 0.4: 89% at R = 30, 93% at R = 300, for 95%), where "log" stays nominal.
Both have the slope b for errors e = n^b xi with a law of xi free of n; where that law still changes with n
(pre-asymptotic), they differ, and their difference measures the change. The slope is the weighted least-squares fit
of y_k = a + b x_k with weights 1/v_k:

    b = sum_k c_k y_k,   c = [(X^T W X)^{-1} X^T W]_{slope row},   se_stat^2 = sum_k c_k^2 v_k,

the variances taken as known (no rescaling by the residual chi^2: lack of fit is measured separately). Its
quantile is Student's t with the Welch-Satterthwaite degrees of freedom nu = (sum c_k^2 v_k)^2 / sum (c_k^2
v_k)^2 / (R - 1) (each v_k has R - 1 degrees of freedom).

Systematic terms, added to the half-width (so the interval is conservative, never narrower than the statistical
one):
- window spread: the fit restricted to the lower half and to the upper half of the n grid (disjoint for even K,
  sharing the middle point for odd K); spread_window = |b_upper - b_lower| / 2 (zero on an exact power law,
  positive with curvature: pre-asymptotic curvature is part of the error). Sliding windows of ``window``
  consecutive points are also fitted and their largest deviation from b is reported (not added).
- query subsampling ("log" only; "rms" removes it): given each repetition's subsampling variance V_{k,r} (the extra
  expected squared error, :mod:`attnverify.numerics.tsc.moments`), rho_k = mean_r V / mean_r e^2 is the share of the measured mean square
  error due to subsampling, so log of the mean square error overstates its subsampled-free value by
  delta_k = -1/2 log(1 - rho_k); subsample_shift = |sum_k c_k delta_k| is the slope shift these per-n shifts
  cause (infinite when some rho_k >= 1: the subsampling noise swamps the error there).

interval = [b - h, b + h],  h = t_{nu, (1 + level)/2} se_stat + spread_window + subsample_shift.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attnverify.numerics.tsc.laws import finite_matrix

__all__ = ["SlopeFit", "fit_slope", "wls_line", "log_error_table", "ESTIMANDS"]

ESTIMANDS = ("log", "rms")

_VAR_FLOOR = 1e-300      # a zero variance (identical repetitions) is floored here, not divided by


@dataclass(frozen=True, eq=False)
class SlopeFit:
    """The fitted slope b of log(error) on log n with its uncertainty (module docstring for the formulas)."""
    slope: float
    intercept: float
    se_statistical: float
    dof: float                       # Welch-Satterthwaite degrees of freedom of se_statistical
    quantile: float                  # t_{dof, (1 + level)/2}
    spread_window: float             # |b_upper - b_lower| / 2
    slope_lower: float
    slope_upper: float
    window_slopes: np.ndarray        # slopes on the sliding windows of ``window`` consecutive n
    max_window_deviation: float      # max |window slope - b|, reported, not added
    subsample_shift: float           # slope shift from the subsampling variance (0 without it, and for "rms")
    subsample_share: np.ndarray      # rho_k per n: share of the mean square error due to subsampling (0 without)
    half_width: float
    interval: tuple[float, float]
    level: float
    chi2_dof: float                  # weighted residual sum of squares / (K - 2): lack of fit of a straight line
    n_values: np.ndarray
    mean_log_error: np.ndarray       # y_k
    se_log_error: np.ndarray         # sqrt(v_k)
    reps: int
    estimand: str                    # "log" or "rms"
    how: str = ("interval = slope -/+ (t_{dof,(1+level)/2} se_statistical + spread_window + subsample_shift), "
                "spread_window = |slope(upper half of n) - slope(lower half)| / 2")


def wls_line(x: np.ndarray, y: np.ndarray, var: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(intercept, slope, c) of the weighted least-squares line y = a + b x, weights 1/var; c are the slope
    coefficients (b = c . y)."""
    w = 1.0 / np.maximum(var, _VAR_FLOOR)
    X = np.column_stack([np.ones_like(x), x])
    coef = np.linalg.solve((X.T * w) @ X, X.T * w)               # (2, K): [a; b] = coef @ y
    return float(coef[0] @ y), float(coef[1] @ y), coef[1]


def log_error_table(n_values, errors, sub_var=None, estimand: str = "log") -> tuple[np.ndarray, np.ndarray,
                                                                                    np.ndarray]:
    """(x_k = log n_k, y_k, v_k) of the module docstring from errors of shape (K, R) (and the subsampling variances
    V, shape (K, R), for "rms"), after validation: K >= 4 increasing n, R >= 2 repetitions, errors finite > 0."""
    n = finite_matrix(n_values, "n_values")
    e = finite_matrix(errors, "errors")
    if n.ndim != 1 or n.size < 4 or np.any(n <= 0) or np.any(np.diff(n) <= 0):
        raise ValueError(f"n_values must be >= 4 increasing positive sizes, got {np.asarray(n_values).tolist()}")
    if e.ndim != 2 or e.shape[0] != n.size or e.shape[1] < 2:
        raise ValueError(f"errors must have shape (K, R) = ({n.size}, >= 2), got {e.shape}")
    if np.any(e <= 0):
        raise ValueError("errors must be > 0 (a zero error has no logarithm)")
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    if estimand == "log":
        L = np.log(e)
        return np.log(n), L.mean(axis=1), L.var(axis=1, ddof=1) / e.shape[1]
    u = e ** 2 - (0.0 if sub_var is None else _sub_var(sub_var, e.shape))
    M = u.mean(axis=1)
    if np.any(M <= 0):
        bad = np.asarray(n_values)[M <= 0].tolist()
        raise ValueError(f"the debiased mean square error is <= 0 at n = {bad}: subsampling noise swamps the error")
    return np.log(n), 0.5 * np.log(M), u.var(axis=1, ddof=1) / (4 * e.shape[1] * M ** 2)


def _sub_var(sub_var, shape) -> np.ndarray:
    V = finite_matrix(sub_var, "sub_var", shape)
    if np.any(V < 0):
        raise ValueError("sub_var must be >= 0")
    return V


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(level)


def fit_slope(n_values, errors, sub_var=None, level: float = 0.95, window: int | None = None,
              estimand: str = "log") -> SlopeFit:
    """The slope of log(error) on log n with its interval (module docstring). errors: (K, R); sub_var: the
    subsampling variance of each error's estimator, (K, R), or None; window: width of the sliding windows
    (default ceil(K/2), at least 2); estimand: "log" or "rms"."""
    level = _level(level)
    x, y, v = log_error_table(n_values, errors, sub_var, estimand)
    K, R = np.shape(errors)
    if window is None:
        window = (K + 1) // 2
    if isinstance(window, bool) or not isinstance(window, numbers.Integral) or not 2 <= window <= K:
        raise ValueError(f"window must be an integer in [2, K] = [2, {K}], got {window!r}")
    a, b, c = wls_line(x, y, v)
    var_terms = c ** 2 * np.maximum(v, 0.0)
    se = float(np.sqrt(var_terms.sum()))
    dof = float(var_terms.sum() ** 2 / np.sum(var_terms ** 2) * (R - 1)) if se > 0 else np.inf
    t = float(stats.t.ppf((1 + level) / 2, dof)) if np.isfinite(dof) else float(stats.norm.ppf((1 + level) / 2))
    lower, upper = np.arange((K + 1) // 2), np.arange(K // 2, K)
    b_lo = wls_line(x[lower], y[lower], v[lower])[1]
    b_hi = wls_line(x[upper], y[upper], v[upper])[1]
    spread = abs(b_hi - b_lo) / 2
    slopes = np.array([wls_line(x[i:i + window], y[i:i + window], v[i:i + window])[1] for i in range(K - window + 1)])
    share = np.zeros(K)
    shift = 0.0
    if sub_var is not None:
        share = _sub_var(sub_var, (K, R)).mean(axis=1) / np.mean(np.asarray(errors, float) ** 2, axis=1)
    if estimand == "log" and np.any(share > 0):
        delta = np.where(share < 1, -0.5 * np.log1p(-np.minimum(share, 1 - 1e-16)), np.inf)
        shift = float(abs(np.sum(c * delta))) if np.all(np.isfinite(delta)) else np.inf
    resid = y - (a + b * x)
    chi2 = float(np.sum(resid ** 2 / np.maximum(v, _VAR_FLOOR)) / (K - 2))
    h = t * se + spread + shift
    return SlopeFit(b, a, se, dof, t, spread, b_lo, b_hi, slopes, float(np.abs(slopes - b).max()), shift, share,
                    h, (b - h, b + h), level, chi2, np.exp(x), y, np.sqrt(v), R, estimand)
