"""Input checks shared by the particle, truncated-kernel, Laplace and Wasserstein modules.

Each function returns the validated value as floats, or raises TypeError/ValueError with one line naming the
argument and the problem (never a silent NaN later). The particle model needs square d x d matrices with d >= 2,
finite entries, B invertible, beta > 0 (or inf) and points on the unit sphere (|(||x|| - 1)| <= 1e-8).
"""
from __future__ import annotations

import numbers

import numpy as np

SPHERE_TOL = 1e-8      # |(||x|| - 1)| allowed for input points


def float_array(value, name: str) -> np.ndarray:
    """``value`` as a float array, or TypeError naming ``name`` when it is not numeric."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array ({exc})") from None


def matrix(M, name: str, d: int | None = None) -> np.ndarray:
    """A finite square d x d float matrix with d >= 2 (and d equal to ``d`` when given)."""
    A = float_array(M, name)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}")
    if A.shape[0] < 2:
        raise ValueError(f"{name} must be d x d with d >= 2, got d = {A.shape[0]}")
    if d is not None and A.shape[0] != d:
        raise ValueError(f"{name} must be {d} x {d}, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} has non-finite entries")
    return A


def check_invertible(B: np.ndarray) -> None:
    """ValueError when sigma_min(B) <= 1e-12 sigma_max(B)."""
    s = np.linalg.svd(B, compute_uv=False)
    if s[-1] <= 1e-12 * max(s[0], 1e-300):
        raise ValueError(f"B = Q^T K is singular (smallest singular value {s[-1]:.3g})")


def model(B, V) -> tuple[np.ndarray, np.ndarray]:
    """(B, V) validated: square, same d, finite, B invertible, ||B|| ||V|| <= 1e100 (no float64 overflow)."""
    B = matrix(B, "B")
    V = matrix(V, "V", B.shape[0])
    check_invertible(B)
    scale = np.linalg.norm(B, 2) * np.linalg.norm(V, 2)
    if not scale <= 1e100:
        raise ValueError(f"B and V are too large: |B| |V| = {scale:.3g} > 1e100, the field would overflow float64")
    return B, V


def beta(value) -> float:
    """A real beta > 0 (np.inf allowed) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"beta must be a real number, got {type(value).__name__}")
    b = float(value)
    if np.isnan(b) or b <= 0:
        raise ValueError(f"beta must be > 0 (or np.inf), got {value}")
    return b


def finite_beta(value) -> float:
    """A finite real beta > 0."""
    b = beta(value)
    if np.isinf(b):
        raise ValueError("beta must be finite for the truncated kernel (use attention_field for beta = inf)")
    return b


def tol(value) -> float:
    """A truncation tolerance in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"tol must be a real number, got {type(value).__name__}")
    t = float(value)
    if not (0.0 < t < 1.0):
        raise ValueError(f"tol must lie in (0, 1), got {value}")
    return t


def points(X, d: int, name: str = "X") -> np.ndarray:
    """An (N, d) finite float array, N >= 1, whose rows are unit vectors to SPHERE_TOL."""
    P = float_array(X, name)
    if P.ndim != 2 or P.shape[1] != d or P.shape[0] < 1:
        raise ValueError(f"{name} must have shape (N, {d}) with N >= 1, got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"{name} has non-finite entries")
    if np.max(np.abs(np.linalg.norm(P, axis=1) - 1.0)) > SPHERE_TOL:
        raise ValueError(f"{name}: every point must lie on the unit sphere (||x_i|| = 1)")
    return P


def cloud(X, name: str) -> np.ndarray:
    """An (N, d) finite float array with N, d >= 1 (a point cloud for optimal transport)."""
    A = float_array(X, name)
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"{name} must have shape (N, d) with N >= 1, got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} has non-finite entries")
    return A
