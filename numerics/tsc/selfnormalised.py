"""Self-normalised Monte Carlo of a tilted average, with its delta-method standard error.

For tokens y_1..y_N i.i.d. from mu, values z_j = W_v y_j and a score vector b (one per query),

    Gamma_N(b) = sum_j w_j z_j / sum_j w_j,      w_j = exp(beta <b, y_j>),

estimates E_mu[e^{beta <b,y>} z] / E_mu[e^{beta <b,y>}] (the attention map of mu at a query with A x = b). It is a
ratio estimator: its bias is O(1/N) and, by the delta method, its variance is sum_j w_j^2 (z_j - Gamma_N)^2 /
(sum_j w_j)^2 per coordinate to first order (the standard error reported). The effective sample size
N_eff = (sum w)^2 / sum w^2 says how many tokens carry the weight; the delta method needs it large. Weights are
computed in log-space (shifted by their maximum), so large scores never overflow.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.tsc.laws import finite_matrix

__all__ = ["TiltedAverage", "tilted_average"]


@dataclass(frozen=True)
class TiltedAverage:
    """estimate, se: (P, d_v); n_eff: (P,)."""
    estimate: np.ndarray
    se: np.ndarray
    n_eff: np.ndarray


def tilted_average(Y, values, B, beta: float = 1.0, chunk: int = 16) -> TiltedAverage:
    """The self-normalised estimate at each score vector (rows of B, shape (P, d)) over tokens Y (N, d) with
    values (N, d_v); ``chunk`` query rows at a time (memory chunk * N)."""
    Y = finite_matrix(Y, "Y")
    Z = finite_matrix(values, "values")
    B = finite_matrix(B, "B")
    if Y.ndim != 2 or Y.shape[0] < 2:
        raise ValueError(f"Y must have shape (N, d) with N >= 2, got {Y.shape}")
    if Z.ndim != 2 or Z.shape[0] != Y.shape[0]:
        raise ValueError(f"values must have shape ({Y.shape[0]}, d_v), got {Z.shape}")
    if B.ndim != 2 or B.shape[1] != Y.shape[1]:
        raise ValueError(f"B must have shape (P, {Y.shape[1]}), got {B.shape}")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0, got {beta}")
    P = B.shape[0]
    est, se, neff = np.empty((P, Z.shape[1])), np.empty((P, Z.shape[1])), np.empty(P)
    for lo in range(0, P, chunk):
        s = beta * (B[lo:lo + chunk] @ Y.T)                         # (p, N) scores
        w = np.exp(s - s.max(axis=1, keepdims=True))                # log-space: the largest weight is 1
        total = w.sum(axis=1)
        e = (w @ Z) / total[:, None]
        w2 = w ** 2
        var = (w2 @ Z ** 2 - 2 * e * (w2 @ Z) + e ** 2 * w2.sum(axis=1)[:, None]) / total[:, None] ** 2
        est[lo:lo + chunk], se[lo:lo + chunk] = e, np.sqrt(np.clip(var, 0.0, None))
        neff[lo:lo + chunk] = total ** 2 / w2.sum(axis=1)
    return TiltedAverage(est, se, neff)
