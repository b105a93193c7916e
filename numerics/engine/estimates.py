"""Monte Carlo estimates with their covariance: the result type of every engine estimator.

From n i.i.d. samples Y_1..Y_n of a vector (any shape S, flattened to p entries), the estimate is the sample mean
Ybar; its covariance is the sample covariance over n (Sigma_hat / n, Sigma_hat with n - 1 degrees of freedom), so
by the CLT Ybar is approximately N(E Y, Sigma / n). Entries computed on the same samples (common random numbers
across a grid) are correlated, and a linear contrast sum c_j Ybar_j has standard error sqrt(c^T cov c), typically
far smaller than the entries' own errors.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class GridEstimate:
    """A Monte Carlo estimate: ``mean`` (shape S), ``cov`` (p x p with p = prod S: the covariance of the estimator,
    i.e. of the samples divided by n, over the flattened entries in C order) and ``n`` samples. ``se`` (shape S) is
    sqrt(diag cov); ``contrast(c)`` gives sum c * mean and its standard error sqrt(c^T cov c)."""

    mean: np.ndarray
    cov: np.ndarray
    n: int

    @property
    def se(self) -> np.ndarray:
        """Standard errors of the entries, shape of ``mean``."""
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None)).reshape(self.mean.shape)

    def contrast(self, c: object) -> tuple[float, float]:
        """Estimate and standard error of sum c * mean (c of the shape of ``mean``)."""
        c = np.asarray(c, dtype=float)
        if c.shape != self.mean.shape:
            raise ValueError(f"contrast: c must have shape {self.mean.shape}, got {c.shape}")
        v = c.ravel()
        return float(v @ self.mean.ravel()), float(np.sqrt(max(float(v @ self.cov @ v), 0.0)))


def estimate(samples: np.ndarray) -> GridEstimate:
    """Mean and covariance of the mean from i.i.d. samples of shape (n, *S), n >= 2 (module docstring)."""
    samples = np.asarray(samples, dtype=float)
    n = samples.shape[0]
    if n < 2:
        raise ValueError(f"an estimate needs at least 2 samples, got {n}")
    flat = samples.reshape(n, -1)
    mean = flat.mean(axis=0)
    dev = flat - mean
    cov = dev.T @ dev / ((n - 1) * n)
    for a in (mean, cov):
        a.setflags(write=False)
    return GridEstimate(mean=mean.reshape(samples.shape[1:]), cov=cov, n=n)
