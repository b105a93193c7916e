r"""E erf(t + sigma Z)^2 (Z ~ N(0, 1)) by quadrature of its definition: the numeric side of Paper C's zeta.

zeta_sigma(t) = int erf(t + sigma z)^2 phi(z) dz, phi the standard normal density. No Gaussian-erf identity is used:
the integrand is evaluated as written (scipy's erf) and integrated by a composite Gauss-Legendre rule on
[-Z, Z], Z = 12 (the normal mass outside is 3.6e-33, far below float64 resolution; erf^2 <= 1), with panels of
width min(0.5, 0.5 / sigma) so that the erf transition of width ~1/sigma in z is resolved, 16 nodes per panel.
``quadrature_error`` repeats the integral with half the panel width: the difference estimates the error of the
coarser rule (the refinement study that fixes a check's threshold).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import erf, roots_legendre

HALF_WIDTH = 12.0
ORDER = 16
MAX_PANELS = 200_000


@lru_cache(maxsize=32)
def _rule(width: float) -> tuple[np.ndarray, np.ndarray]:
    n = int(np.ceil(2 * HALF_WIDTH / width))
    if n > MAX_PANELS:
        raise ValueError(f"sigma too large for the panel rule ({n} panels > {MAX_PANELS})")
    edges = np.linspace(-HALF_WIDTH, HALF_WIDTH, n + 1)
    x, w = roots_legendre(ORDER)
    half = 0.5 * np.diff(edges)[:, None]
    z = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half * x
    wz = half * w * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    return z.ravel(), wz.ravel()


def _check(t, sigma) -> tuple[np.ndarray, np.ndarray]:
    t, sigma = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(sigma, dtype=float))
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(sigma))):
        raise ValueError("t and sigma must be finite")
    if np.any(sigma <= 0):
        raise ValueError("sigma must be > 0")
    return t, sigma


def erf_square_mean(t, sigma, refine: int = 1) -> np.ndarray:
    """zeta_sigma(t) = E erf(t + sigma Z)^2 for arrays t, sigma (broadcast), by the panel rule (module docstring);
    ``refine`` divides the panel width (2: the refined rule of ``quadrature_error``)."""
    t, sigma = _check(t, sigma)
    out = np.empty(t.shape)
    for idx in np.ndindex(t.shape):
        width = min(0.5, 0.5 / float(sigma[idx])) / int(refine)
        z, w = _rule(width)
        out[idx] = float(np.sum(w * erf(t[idx] + sigma[idx] * z) ** 2))
    return out


def quadrature_error(t, sigma) -> np.ndarray:
    """|rule - refined rule|: an estimate of the quadrature error of ``erf_square_mean`` at each point."""
    return np.abs(erf_square_mean(t, sigma) - erf_square_mean(t, sigma, refine=2))
