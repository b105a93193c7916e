"""Horizons of an attention layer for a token law with covariance Sigma (numbers only; the stated beta(H) is
the claims' business).

- two-sided: H = ||Sigma^{1/2} A Sigma^{1/2}||_2 (largest singular value). Transpose invariant: the matrix for A^T
  is the transpose of the one for A (Sigma^{1/2} is symmetric), and a matrix and its transpose share their
  singular values.
- one-sided: ||Sigma^{1/2} A||_2, the older convention of the authors' code. For A^T it is ||Sigma^{1/2} A^T||_2 =
  ||A Sigma^{1/2}||_2, which differs in general; for an isotropic Sigma = rho I both equal sqrt(rho) ||A||_2 (and
  the two-sided one is rho ||A||_2), so the protocol's two experiments cannot tell transposes apart.
- each with and without the 1/tau of the scores <A x, y>/tau: the ``*_tau`` values are the horizons of A/tau.

Sigma^{1/2} is the symmetric square root U diag(sqrt(lambda)) U^T of the symmetric positive semi-definite Sigma
(any factor L with L L^T = Sigma, e.g. Cholesky, gives the same numbers: L = Sigma^{1/2} Q with Q orthogonal).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.tsc.attention import interactions, temperature
from attnverify.numerics.tsc.laws import finite_matrix

__all__ = ["Horizons", "horizons", "sqrt_psd"]


@dataclass(frozen=True, eq=False)
class Horizons:
    """Arrays of shape (S,), one entry per interaction matrix."""
    two_sided: np.ndarray
    one_sided: np.ndarray
    two_sided_tau: np.ndarray
    one_sided_tau: np.ndarray
    tau: float


def sqrt_psd(Sigma) -> np.ndarray:
    """The symmetric square root of a symmetric positive semi-definite matrix (ValueError otherwise)."""
    S = finite_matrix(Sigma, "Sigma")
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"Sigma must be a square matrix, got shape {S.shape}")
    scale = max(np.abs(S).max(), 1e-300)
    if not np.allclose(S, S.T, rtol=0, atol=1e-12 * scale):
        raise ValueError("Sigma must be symmetric")
    lam, U = np.linalg.eigh((S + S.T) / 2)
    if lam.min() < -1e-12 * scale:
        raise ValueError(f"Sigma must be positive semi-definite, smallest eigenvalue {lam.min():.3g}")
    return (U * np.sqrt(np.clip(lam, 0, None))) @ U.T


def horizons(A, Sigma, tau: float = 1.0) -> Horizons:
    """Two-sided and one-sided horizons of A (shape (d, d) or (S, d, d)) for the token covariance Sigma, with and
    without the factor 1/tau."""
    root = sqrt_psd(Sigma)
    A = interactions(A, root.shape[0])
    tau = temperature(tau)
    two = np.linalg.norm(root @ A @ root, ord=2, axis=(-2, -1))
    one = np.linalg.norm(root @ A, ord=2, axis=(-2, -1))
    return Horizons(two, one, two / tau, one / tau, tau)
