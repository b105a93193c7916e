"""The naive baseline for the particle dynamics: what research code typically does.

Explicit Euler on dx_i/dt = P_perp_{x_i} sum_j softmax_j(beta <B^T x_i, x_j>) V x_j with the dense weights
np.exp(S - max S) normalised by their row sums, followed by renormalisation x_i <- x_i / |x_i| every step.
Global error O(h) (first order).
"""
from __future__ import annotations

import numpy as np


def euler_naive(X0: np.ndarray, B: np.ndarray, V: np.ndarray, beta: float, t_end: float, n_steps: int,
                n_out: int) -> np.ndarray:
    """Fixed-step explicit Euler, h = t_end / n_steps; X at t_end * k / n_out, k = 0..n_out (n_out divides n_steps)."""
    if n_steps % n_out:
        raise ValueError(f"n_steps ({n_steps}) must be a multiple of n_out ({n_out})")
    h, every = t_end / n_steps, n_steps // n_out
    X = np.array(X0, dtype=float)
    out = [X.copy()]
    for step in range(1, n_steps + 1):
        S = beta * ((X @ B) @ X.T)
        S -= S.max(axis=1, keepdims=True)
        W = np.exp(S)
        W /= W.sum(axis=1, keepdims=True)
        M = W @ (X @ V.T)
        X = X + h * (M - np.sum(M * X, axis=1)[:, None] * X)
        X /= np.linalg.norm(X, axis=1)[:, None]
        if step % every == 0:
            out.append(X.copy())
    return np.array(out)
