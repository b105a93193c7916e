"""Token laws mu of Paper D and their samplers: Gaussian N(m, Sigma) and the uniform law on a sphere.

- Gaussian: y = m + L z with z ~ N(0, I_d) and L the lower Cholesky factor of Sigma (L L^T = Sigma, Sigma positive
  definite), so Cov y = Sigma.
- Sphere of radius R in R^d: y = R z / ||z|| with z ~ N(0, I_d) (the normalised Gaussian is rotation invariant, hence
  uniform on the sphere); its mean is 0 and its covariance (R^2 / d) I_d (E y y^T is a multiple of I by invariance
  and its trace is R^2).
- Points of the ball {||x|| <= R} for the uniform-rate experiment: a uniform direction times R U^{1/d} (uniform in
  the ball), or times R exactly (the boundary sphere, where sup ||Gamma_{mu_n} - Gamma_mu|| is typically reached).

Every sampler takes an np.random.Generator (built by the caller from a SeedSequence) and returns float64 arrays of
shape (..., n, d); a leading ``reps`` axis batches repetitions.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

__all__ = ["GaussianLaw", "SphereLaw", "TokenLaw", "ball_points", "positive_int", "finite_matrix"]


def positive_int(value, name: str, low: int = 1) -> int:
    """``value`` as an int >= low, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def finite_matrix(value, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a finite float array (of ``shape`` when given), or ValueError naming ``name``."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite entries")
    return a


@dataclass(frozen=True, eq=False)
class GaussianLaw:
    """N(mean, cov) on R^d; ``chol`` is the lower Cholesky factor of cov (computed, not passed)."""
    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mean = finite_matrix(self.mean, "mean")
        if mean.ndim != 1 or mean.size < 1:
            raise ValueError(f"mean must be a vector of length d >= 1, got shape {mean.shape}")
        d = mean.size
        cov = finite_matrix(self.cov, "cov", (d, d))
        if not np.allclose(cov, cov.T, rtol=1e-12, atol=1e-14 * max(np.abs(cov).max(), 1e-300)):
            raise ValueError("cov must be symmetric")
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise ValueError("cov must be positive definite (its Cholesky factorisation failed)") from None
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "chol", chol)

    @property
    def d(self) -> int:
        return self.mean.size

    @property
    def covariance(self) -> np.ndarray:
        """Sigma, the token covariance (the horizon's Sigma)."""
        return self.cov

    def sample(self, rng: np.random.Generator, n: int, reps: int | None = None) -> np.ndarray:
        """i.i.d. tokens m + L z, shape (n, d), or (reps, n, d) when ``reps`` is given."""
        shape = (positive_int(n, "n"),) if reps is None else (positive_int(reps, "reps"), positive_int(n, "n"))
        z = rng.standard_normal((*shape, self.d))
        return self.mean + z @ self.chol.T


@dataclass(frozen=True)
class SphereLaw:
    """The uniform law on the sphere {||y|| = radius} of R^d."""
    d: int
    radius: float = 1.0

    def __post_init__(self) -> None:
        positive_int(self.d, "d", 2)
        r = self.radius
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not (np.isfinite(r) and r > 0):
            raise ValueError(f"radius must be a finite real > 0, got {r!r}")

    @property
    def mean(self) -> np.ndarray:
        return np.zeros(self.d)

    @property
    def covariance(self) -> np.ndarray:
        """(R^2 / d) I_d."""
        return (self.radius ** 2 / self.d) * np.eye(self.d)

    def sample(self, rng: np.random.Generator, n: int, reps: int | None = None) -> np.ndarray:
        """i.i.d. uniform points R z / ||z||, shape (n, d), or (reps, n, d) when ``reps`` is given."""
        shape = (positive_int(n, "n"),) if reps is None else (positive_int(reps, "reps"), positive_int(n, "n"))
        z = rng.standard_normal((*shape, self.d))
        return self.radius * z / np.linalg.norm(z, axis=-1, keepdims=True)


TokenLaw = GaussianLaw | SphereLaw


def ball_points(rng: np.random.Generator, d: int, radius: float, count: int, surface: float = 0.5) -> np.ndarray:
    """``count`` query points of the closed ball {||x|| <= radius} of R^d, shape (count, d): the first
    round(surface * count) on the boundary sphere, the others uniform in the ball (direction z / ||z||, radius
    radius * U^{1/d})."""
    d = positive_int(d, "d")
    count = positive_int(count, "count")
    if isinstance(radius, bool) or not isinstance(radius, numbers.Real) or not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite real > 0, got {radius!r}")
    if not (isinstance(surface, numbers.Real) and 0 <= surface <= 1):
        raise ValueError(f"surface must be a fraction in [0, 1], got {surface!r}")
    z = rng.standard_normal((count, d))
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    r = radius * rng.uniform(size=count) ** (1.0 / d)
    r[:int(round(surface * count))] = radius
    return u * r[:, None]
