"""Wasserstein-2 distance between equal-size empirical measures with uniform weights 1/N.

W2(mu_X, mu_Y)^2 = min over permutations s of (1/N) sum_i ||X_i - Y_{s(i)}||^2 (Birkhoff-von Neumann:
an optimal coupling of two uniform N-point measures is a permutation), solved exactly as an
assignment problem on the squared Euclidean cost matrix.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from numerics.validation import float_array


def _pair(X, Y) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, Z in (("X", X), ("Y", Y)):
        A = float_array(Z, name)
        if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 1:
            raise ValueError(f"{name} must have shape (N, d) with N >= 1, got {A.shape}")
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name} has non-finite entries")
        out.append(A)
    if out[0].shape != out[1].shape:
        raise ValueError(f"X and Y must have the same shape (equal-size measures), got {out[0].shape} and {out[1].shape}")
    return out[0], out[1]


def w2(X: np.ndarray, Y: np.ndarray) -> float:
    """Exact W2 between (1/N) sum_i delta_{X_i} and (1/N) sum_i delta_{Y_i}, Euclidean ground cost.

    Cost C_ij = ||X_i - Y_j||^2 (computed by broadcasting, no cancellation), optimal permutation by
    scipy.optimize.linear_sum_assignment (Jonker-Volgenant, O(N^3)).
    """
    X, Y = _pair(X, Y)
    C = np.zeros((X.shape[0], Y.shape[0]))
    for k in range(X.shape[1]):
        C += np.subtract.outer(X[:, k], Y[:, k]) ** 2
    rows, cols = linear_sum_assignment(C)
    return float(np.sqrt(C[rows, cols].mean()))


def coupling_bound(X: np.ndarray, Y: np.ndarray) -> float:
    """sqrt((1/N) sum_i ||X_i - Y_i||^2): the cost of the pairing i <-> i, an upper bound on W2."""
    X, Y = _pair(X, Y)
    return float(np.sqrt(np.mean(np.sum((X - Y) ** 2, axis=1))))
