"""Internal consistency of a measured error curve across n and repetitions (no reference to any stated rate).

Two families of tests on the log errors L_{k,r} = log e_{k,r} (K sample sizes, R >= 4 independent repetitions):

- scatter: the repetitions are split into two halves (r even, r odd); at each n the halves' mean log errors are
  compared with Welch's t, t_k = (mean_1 - mean_2) / sqrt(s_1^2/R_1 + s_2^2/R_2). If the repetitions' scatter is
  what the stated per-n standard errors say (independent, identically distributed repetitions), each t_k follows
  Student's t with the Welch-Satterthwaite degrees of freedom; two-sided p-value.
- monotonicity: for every pair of sizes n_k < n_l, t_kl = (y_l - y_k) / sqrt(se_k^2 + se_l^2) (y the mean log
  error, se its standard error; independent samples at different n), one-sided p-value for an increase: the
  error curve may flatten but no later size may have a larger error beyond noise (all pairs, not only
  neighbours, so that a slow steady rise is caught).

Each p-value becomes a normal score z = Phi^{-1}(1 - p), so that under the null P(z > c) = 1 - Phi(c) for every test.
The statistic is the largest z over the m = K + K(K - 1)/2 tests, the threshold Phi^{-1}(1 - alpha / m)
(Bonferroni: family-wise false-alarm rate <= alpha). passed = statistic <= threshold.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attnverify.numerics.tsc.fit import log_error_table

__all__ = ["Consistency", "curve_consistency"]


@dataclass(frozen=True, eq=False)
class Consistency:
    """statistic <= threshold when the curve is internally consistent (module docstring)."""
    statistic: float
    threshold: float
    passed: bool
    alpha: float
    scatter_z: np.ndarray            # (K,) normal scores of the split-half tests
    rise_z: np.ndarray               # (K, K): [k, l] the normal score of the rise from n_k to n_l (-inf for l <= k)
    tests: int
    how: str = ("max normal score of K split-half Welch tests (two-sided) and K(K-1)/2 increase tests over all "
                "pairs of sizes (one-sided) <= Phi^{-1}(1 - alpha/m), m the number of tests (Bonferroni)")


def _welch(diff, a, b, na, nb):
    """(t, dof) for a difference with variance parts a = s_a^2/n_a, b = s_b^2/n_b."""
    var = a + b
    t = diff / np.sqrt(np.maximum(var, 1e-300))
    dof = var ** 2 / np.maximum(a ** 2 / (na - 1) + b ** 2 / (nb - 1), 1e-300)
    return t, dof


def _score(p):
    return stats.norm.isf(np.clip(p, 1e-300, 1.0))


def curve_consistency(n_values, errors, alpha: float = 1e-3) -> Consistency:
    """The consistency test of the module docstring on errors of shape (K, R), R >= 4."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    _, y, v = log_error_table(n_values, errors)
    L = np.log(np.asarray(errors, float))
    K, R = L.shape
    if R < 4:
        raise ValueError(f"the consistency test needs R >= 4 repetitions (two halves of >= 2), got {R}")
    h1, h2 = L[:, 0::2], L[:, 1::2]
    n1, n2 = h1.shape[1], h2.shape[1]
    t, dof = _welch(h1.mean(1) - h2.mean(1), h1.var(1, ddof=1) / n1, h2.var(1, ddof=1) / n2, n1, n2)
    scatter = _score(2 * stats.t.sf(np.abs(t), dof))
    k, l = np.triu_indices(K, 1)
    t, dof = _welch(y[l] - y[k], v[k], v[l], R, R)
    rise = np.full((K, K), -np.inf)
    rise[k, l] = _score(stats.t.sf(t, dof))
    m = K + k.size
    threshold = float(stats.norm.isf(alpha / m))
    statistic = float(max(scatter.max(), rise.max()))
    return Consistency(statistic, threshold, statistic <= threshold, float(alpha), scatter, rise, m)
