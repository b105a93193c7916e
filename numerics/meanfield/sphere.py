"""Initial laws mu_0 on the sphere S^{d-1} for the Paper B particle checks: a positive Lipschitz density,
samplers, and the particle resolution of the softmax window.

Density (w.r.t. the surface measure sigma of S^{d-1}, unnormalised):

    f(x) = 1 + 0.5 <a, x> + 0.4 x_1 x_2,   a = (cos 0.3, sin 0.3, 0, ..., 0),

so 0.3 <= f <= 1.7 (|<a,x>| <= 1, |2 x_1 x_2| <= x_1^2 + x_2^2 <= 1): positive, smooth, hence Lipschitz. On the circle
x = (cos phi, sin phi) it is 1 + 0.5 cos(phi - 0.3) + 0.2 sin(2 phi), the density of the Paper B checks. Both
the linear and the quadratic term integrate to zero over S^{d-1} (odd; tr of the traceless form), so the
mass is |S^{d-1}| = 2 pi^{d/2}/Gamma(d/2).

Samplers: on S^1 stratified inverse-CDF sampling (one uniform shift per sample, randomised quasi-Monte Carlo:
W2 to mu_0 is O(1/n)); on S^{d-1}, d >= 3, rejection from the uniform law (acceptance f/1.7 >= 0.18).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["density", "circle_density", "mass", "sample", "sample_circle", "particles_per_window"]

_F_MAX = 1.7
_GRID = np.linspace(0.0, 2 * np.pi, 20001)


def circle_density(phi):
    """f on S^1 in the angle phi (arc length): 1 + 0.5 cos(phi - 0.3) + 0.2 sin(2 phi)."""
    phi = np.asarray(phi, dtype=float)
    return 1 + 0.5 * np.cos(phi - 0.3) + 0.2 * np.sin(2 * phi)


def density(X: np.ndarray) -> np.ndarray:
    """f at the rows of X (points of S^{d-1}, shape (N, d), d >= 2)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    if X.ndim != 2 or X.shape[1] < 2:
        raise ValueError(f"points must have shape (N, d) with d >= 2, got {X.shape}")
    return 1 + 0.5 * (np.cos(0.3) * X[:, 0] + np.sin(0.3) * X[:, 1]) + 0.4 * X[:, 0] * X[:, 1]


def mass(d: int) -> float:
    """int_{S^{d-1}} f dsigma = |S^{d-1}| = 2 pi^{d/2} / Gamma(d/2)."""
    return 2 * math.pi ** (d / 2) / math.gamma(d / 2)


_PDF = circle_density(_GRID)
_CDF = np.concatenate([[0.0], np.cumsum((_PDF[1:] + _PDF[:-1]) / 2 * np.diff(_GRID))])


def sample_circle(n: int, rng: np.random.Generator) -> np.ndarray:
    """n points from mu_0 on S^1: phi_i = F^{-1}((i + u)/n), one shift u ~ U(0, 1) (stratified)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    phi = np.interp((np.arange(n) + rng.uniform()) / n, _CDF / _CDF[-1], _GRID)
    return np.c_[np.cos(phi), np.sin(phi)]


def sample(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n points from mu_0 on S^{d-1}: stratified on the circle (d = 2), rejection sampling for d >= 3."""
    if d < 2:
        raise ValueError(f"dimension d must be >= 2, got {d}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if d == 2:
        return sample_circle(n, rng)
    out = np.empty((0, d))
    while len(out) < n:
        m = 2 * (n - len(out)) + 16
        Z = rng.standard_normal((int(3 * m), d))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        keep = rng.uniform(size=len(Z)) * _F_MAX <= density(Z)
        out = np.vstack([out, Z[keep]])
    return out[:n]


def _cap_area(w: np.ndarray, d: int) -> np.ndarray:
    """Area of the geodesic cap of radius w on S^{d-1}: |S^{d-2}| int_0^w sin^{d-2} s ds (exact for d = 2, 3;
    for d > 3 the integral by a 64-point Gauss-Legendre rule, exact to round-off for w <= pi/2)."""
    if d == 2:
        return 2 * w
    if d == 3:
        return 2 * np.pi * (1 - np.cos(w))
    x, wt = np.polynomial.legendre.leggauss(64)
    s = (x[None, :] + 1) / 2 * w[:, None]
    return mass(d - 1) * np.sum(wt[None, :] * np.sin(s) ** (d - 2), axis=1) * w / 2


def particles_per_window(n: int, B: np.ndarray, beta: float, *, n_dirs: int = 4000, seed: int = 0) -> float:
    """min over x of the expected number of the n particles (law mu_0) inside the softmax window of x: the cap of
    geodesic radius w(x) = (beta |B^T x|)^{-1/2} around the maximiser y*(x) = B^T x/|B^T x|, i.e.
    n f(y*) area(cap)/mass. Parametrised by y* (x ∝ B^{-T} y*, |B^T x| = 1/|B^{-T} y*|): on S^1 a grid of 400
    angles, on S^{d-1}, d >= 3, ``n_dirs`` fixed pseudo-random directions (an estimate of the minimum)."""
    B = np.asarray(B, dtype=float)
    d = B.shape[0]
    if d == 2:
        phi = _GRID[::50]
        Y = np.c_[np.cos(phi), np.sin(phi)]
    else:
        Y = np.random.default_rng(seed).standard_normal((n_dirs, d))
        Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    norm_bx = 1.0 / np.linalg.norm(np.linalg.solve(B.T, Y.T).T, axis=1)   # |B^T x| = 1/|B^{-T} y|
    w = np.minimum(1.0 / np.sqrt(beta * norm_bx), np.pi)
    return float(np.min(n * density(Y) * _cap_area(w, d) / mass(d)))
