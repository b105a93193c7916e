"""The uniform-rate experiment: sup over a ball of radius R of ||Gamma_{mu_n}(x) - Gamma_mu(x)||_2 against n.

The sup is taken over a fixed set of query points of the ball (e.g. :func:`attnverify.numerics.tsc.laws.
ball_points`: boundary points and uniform interior points), shared by every size and repetition, so the curve
measures max_p ||Gamma_{mu_n}(x_p) - Gamma_mu(x_p)|| (a lower bound of the sup over the ball, exact as the point set
fills it). Gamma_mu is the caller's: a callable (scale index, X) -> (P, d) or an array (S, P, d). Repetition r at
size index k draws its tokens from SeedSequence(entropy, spawn_key = seed's key + (2, k, r)).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from attnverify.numerics.tsc.attention import attention_at, interactions
from attnverify.numerics.tsc.curves import child_rng
from attnverify.numerics.tsc.laws import TokenLaw, finite_matrix, positive_int

__all__ = ["uniform_errors"]


def uniform_errors(law: TokenLaw, A, W_v, tau: float, n_values, reps: int, points, seed,
                   reference: Callable[[int, np.ndarray], np.ndarray] | np.ndarray) -> np.ndarray:
    """max_p ||Gamma_{mu_n}(x_p) - Gamma_mu(x_p)||_2 for each scale, size and repetition: shape (S, K, R)."""
    A = interactions(A, law.d)
    S = A.shape[0]
    X = finite_matrix(points, "points")
    if X.ndim != 2 or X.shape[1] != law.d or X.shape[0] < 1:
        raise ValueError(f"points must have shape (P, d) with d = {law.d}, got {X.shape}")
    if callable(reference):
        ref = np.stack([np.asarray(reference(s, X), dtype=float) for s in range(S)])
    else:
        ref = reference
    ref = finite_matrix(ref, "reference", (S, *X.shape))
    reps = positive_int(reps, "reps")
    n_values = [positive_int(n, "n") for n in np.asarray(n_values).ravel()]
    out = np.empty((S, len(n_values), reps))
    for k, n in enumerate(n_values):
        for r in range(reps):
            Y = law.sample(child_rng(seed, 2, k, r), n)
            vals = attention_at(Y, A, W_v, tau, X)                  # (S, P, d)
            out[:, k, r] = np.linalg.norm(vals - ref, axis=-1).max(axis=-1)
    return out
