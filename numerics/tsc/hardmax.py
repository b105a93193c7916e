r"""The hardmax limit of attention over the uniform law on a sphere, simulated: its push-forward's covariance by
Monte Carlo over independent batches.

As the scale of A grows, the softmax weights e^{<A x, y>/tau} over the sphere {|y| = R} concentrate on the
maximiser of the linear form y -> <A x, y>, which by Cauchy-Schwarz is y* = R A x / |A x|; the hardmax output is
W_v y*. Queries x are drawn uniform on the sphere; each batch gives the unbiased sample covariance (ddof = 1) of its
outputs, and the batches are independent, so their spread is an honest standard error. No closed form of the
covariance is read here.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.tsc.laws import SphereLaw, finite_matrix, positive_int


def hardmax_outputs(X, A, W_v, radius: float) -> np.ndarray:
    """W_v y*(x) for each row x of X (P, d), y*(x) = R A x/|A x| the maximiser of <A x, y> over |y| = R."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    d = X.shape[1]
    A, W_v = finite_matrix(A, "A", (d, d)), finite_matrix(W_v, "W_v", (d, d))
    B = X @ A.T
    norm = np.linalg.norm(B, axis=1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("A x = 0 at a query: the hardmax maximiser is not unique there")
    return (radius * B / norm) @ W_v.T


def hardmax_covariance_batches(law: SphereLaw, A, W_v, queries: int, batches: int,
                               seed: np.random.SeedSequence) -> np.ndarray:
    """(batches, d, d): the sample covariance (ddof = 1) of the hardmax outputs at ``queries`` uniform queries per
    batch, each batch from its own child of ``seed``."""
    if not isinstance(law, SphereLaw):
        raise ValueError(f"law must be a SphereLaw, got {type(law).__name__}")
    queries, batches = positive_int(queries, "queries", 2), positive_int(batches, "batches", 2)
    out = np.empty((batches, law.d, law.d))
    for b, ss in enumerate(seed.spawn(batches)):
        O = hardmax_outputs(law.sample(np.random.default_rng(ss), queries), A, W_v, law.radius)
        out[b] = np.cov(O, rowvar=False, ddof=1)
    return out
