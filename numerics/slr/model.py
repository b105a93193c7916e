"""Paper C (single-location regression, model ``slr``): parameters, targets, tasks, overlaps and starts.

Model. A task is a sequence X = (X_1, ..., X_L) of tokens in R^d and a target Y. A latent location J0 is uniform on
{0, ..., L-1}; the token at J0 is N(a k*, gamma^2 I_d) with a = sqrt(d/2), every other token is N(0, I_d), all
independent; Y = <X_J0, v*> + xi with xi ~ N(0, eps^2) independent of (X, J0). k* and v* are orthonormal.

Overlaps. For unit k, v the natural coordinates are, in this order (the ``OVERLAPS`` order used everywhere),
    kappa = <k, k*>,  nu = <v, v*>,  theta = <v, k*>,  eta = <k, v*>,  rho = <k, v>,
and the manifold M = {theta = eta = rho = 0}; the distance to M is sqrt(theta^2 + eta^2 + rho^2).

Starts. On the sphere: k, v independent and uniform on S^{d-1}. On M: k uniform on the unit sphere of v*'s
orthogonal complement, v uniform on the unit sphere of span(k*, k)'s orthogonal complement (needs d >= 3).
A uniform point of the unit sphere of a subspace is a standard Gaussian projected on it and normalised.

Validation: every public function raises ValueError with a one-line message naming the bad input.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

OVERLAPS = ("kappa", "nu", "theta", "eta", "rho")
UNIT_TOL = 1e-10          # |(||x|| - 1)| and |<k*, v*>| allowed for input vectors
GRAM_TOL = 1e-10          # most negative eigenvalue allowed for the Gram matrix of (k, v, k*, v*)


# ---------------------------------------------------------------------------------------------------------------
# scalar validation
# ---------------------------------------------------------------------------------------------------------------
def real(value: object, name: str) -> float:
    """A finite real number as a float, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {type(value).__name__}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value}")
    return x


def positive(value: object, name: str) -> float:
    x = real(value, name)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return x


def integer(value: object, name: str, minimum: int) -> int:
    """An integer >= ``minimum``, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def generator(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


@dataclass(frozen=True)
class SLRModel:
    """Paper C model parameters: dimension d >= 2, length L >= 1, signal-token noise gamma > 0, label noise eps >= 0.

    The temperature lam of the predictor is not part of the model (it follows a schedule during training)."""

    d: int
    L: int
    gamma: float = math.sqrt(0.5)
    eps: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", integer(self.d, "d", 2))
        object.__setattr__(self, "L", integer(self.L, "L", 1))
        object.__setattr__(self, "gamma", positive(self.gamma, "gamma"))
        eps = real(self.eps, "eps")
        if eps < 0:
            raise ValueError(f"eps must be >= 0, got {self.eps}")
        object.__setattr__(self, "eps", eps)
        if self.gamma > 1e50 or eps > 1e50 or self.d > 10**9:
            raise ValueError("gamma, eps or d too large: squared targets would overflow float64")

    @property
    def amplitude(self) -> float:
        """a = sqrt(d/2), the mean of the signal token along k*."""
        return math.sqrt(self.d / 2.0)


def lam_value(value: object, name: str = "lam") -> float:
    """A temperature lam > 0 (finite, at most 1e6: beyond it erf(lam x) is a sign function to rounding)."""
    x = positive(value, name)
    if x > 1e6:
        raise ValueError(f"{name} must be <= 1e6, got {value}")
    return x


# ---------------------------------------------------------------------------------------------------------------
# vectors
# ---------------------------------------------------------------------------------------------------------------
def vectors(value: object, name: str, d: int | None = None, unit: bool = True) -> np.ndarray:
    """A finite float array of shape (d,) or (n, d) (rows of unit norm to UNIT_TOL when ``unit``)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}")
    try:
        A = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None
    if A.ndim not in (1, 2) or A.shape[-1] < 2 or A.size == 0:
        raise ValueError(f"{name} must have shape (d,) or (n, d) with d >= 2, got {A.shape}")
    if d is not None and A.shape[-1] != d:
        raise ValueError(f"{name} must have last dimension d = {d}, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} has non-finite entries")
    if unit and np.max(np.abs(np.linalg.norm(A, axis=-1) - 1.0)) > UNIT_TOL:
        raise ValueError(f"{name} must be unit vectors (||x|| = 1 to {UNIT_TOL:g})")
    return A


def targets(k_star: object, v_star: object, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(k*, v*) validated: unit vectors of equal shape (d,) or (n, d), orthogonal to UNIT_TOL."""
    ks = vectors(k_star, "k_star", d)
    vs = vectors(v_star, "v_star", ks.shape[-1])
    if ks.shape != vs.shape:
        raise ValueError(f"k_star and v_star must have the same shape, got {ks.shape} and {vs.shape}")
    if np.max(np.abs(np.sum(ks * vs, axis=-1))) > UNIT_TOL:
        raise ValueError("k_star and v_star must be orthogonal (|<k*, v*>| <= 1e-10)")
    return ks, vs


def draw_targets(d: int, rng: np.random.Generator, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """k* uniform on S^{d-1}; v* a standard Gaussian projected off k* and normalised. Shapes (d,) or (n, d)."""
    d = integer(d, "d", 2)
    rng = generator(rng)
    shape = (d,) if n is None else (integer(n, "n", 1), d)
    ks = rng.standard_normal(shape)
    ks /= np.linalg.norm(ks, axis=-1, keepdims=True)
    vs = rng.standard_normal(shape)
    vs -= np.sum(vs * ks, axis=-1, keepdims=True) * ks
    vs /= np.linalg.norm(vs, axis=-1, keepdims=True)
    return ks, vs


#: sample(model, k_star, v_star, n, rng) -> (X, Y, J0): the law of the tasks (:func:`sample_tasks`); a simulator that
#: draws tasks takes it as its keyword ``sample`` (a self-test hands it a wrong one)
TaskSampler = Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]


def sampler(value: object, name: str = "sample") -> TaskSampler:
    """A task sampler (callable), or ValueError naming ``name``."""
    if not callable(value):
        raise ValueError(f"{name} must be a task sampler sample(model, k_star, v_star, n, rng), got "
                         f"{type(value).__name__}")
    return value


def sample_tasks(model: SLRModel, k_star: np.ndarray, v_star: np.ndarray, n: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n i.i.d. tasks of the model: tokens X (n, L, d), targets Y (n,), locations J0 (n,) in {0, ..., L-1}.

    All n L d Gaussians are drawn at once: callers chunk n (the Monte Carlo estimators do)."""
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    ks, vs = targets(k_star, v_star, model.d)
    if ks.ndim != 1:
        raise ValueError(f"k_star must have shape (d,) for sample_tasks, got {ks.shape}")
    n = integer(n, "n", 1)
    rng = generator(rng)
    X = rng.standard_normal((n, model.L, model.d))
    J0 = rng.integers(0, model.L, size=n)
    rows = np.arange(n)
    X[rows, J0] *= model.gamma
    X[rows, J0] += model.amplitude * ks
    Y = X[rows, J0] @ vs + model.eps * rng.standard_normal(n)
    return X, Y, J0


# ---------------------------------------------------------------------------------------------------------------
# overlaps, the manifold M, starts
# ---------------------------------------------------------------------------------------------------------------
def overlaps(k: np.ndarray, v: np.ndarray, k_star: np.ndarray, v_star: np.ndarray) -> np.ndarray:
    """(kappa, nu, theta, eta, rho) = (<k,k*>, <v,v*>, <v,k*>, <k,v*>, <k,v>) along the last axis: shape (..., 5).

    Inputs broadcast against each other along the leading axis ((d,) or (n, d) each); no unit-norm check."""
    k, v = np.asarray(k, dtype=float), np.asarray(v, dtype=float)
    ks, vs = np.asarray(k_star, dtype=float), np.asarray(v_star, dtype=float)
    return np.stack([np.sum(k * ks, axis=-1), np.sum(v * vs, axis=-1), np.sum(v * ks, axis=-1),
                     np.sum(k * vs, axis=-1), np.sum(k * v, axis=-1)], axis=-1)


def distance_to_manifold(ov: np.ndarray) -> np.ndarray:
    """sqrt(theta^2 + eta^2 + rho^2) for overlaps (..., 5) in the OVERLAPS order."""
    ov = np.asarray(ov, dtype=float)
    if ov.shape[-1:] != (5,):
        raise ValueError(f"overlaps must have last dimension 5 (kappa, nu, theta, eta, rho), got shape {ov.shape}")
    return np.sqrt(ov[..., 2] ** 2 + ov[..., 3] ** 2 + ov[..., 4] ** 2)


def gram(ov: np.ndarray) -> np.ndarray:
    """The Gram matrix (..., 4, 4) of (k, v, k*, v*) for unit k, v and orthonormal k*, v*, from the overlaps."""
    kap, nu, th, et, rh = np.moveaxis(np.asarray(ov, dtype=float), -1, 0)
    one, zero = np.ones_like(kap), np.zeros_like(kap)
    rows = [[one, rh, kap, et], [rh, one, th, nu], [kap, th, one, zero], [et, nu, zero, one]]
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def check_overlaps(value: object) -> np.ndarray:
    """Overlaps (..., 5), finite, realisable by unit k, v and orthonormal k*, v* (Gram matrix PSD to GRAM_TOL)."""
    ov = vectors(value, "overlaps", unit=False) if np.ndim(value) in (1, 2) else None
    if ov is None:
        raise ValueError(f"overlaps must have shape (5,) or (n, 5), got shape {np.shape(value)}")
    if ov.shape[-1] != 5:
        raise ValueError(f"overlaps must have last dimension 5 (kappa, nu, theta, eta, rho), got shape {ov.shape}")
    if np.max(np.abs(ov)) > 1 + UNIT_TOL:
        raise ValueError("overlaps must lie in [-1, 1]")
    if np.min(np.linalg.eigvalsh(gram(ov))) < -GRAM_TOL:
        raise ValueError("overlaps are not realisable: the Gram matrix of (k, v, k*, v*) is not positive semidefinite")
    return ov


def realise_overlaps(ov: object, d: int, rng: np.random.Generator | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unit k, v and orthonormal k*, v* in R^d with the given overlaps (5,) or (n, 5): (k, v, k*, v*), each (d,) or
    (n, d). The 4 x 4 Gram matrix of (k, v, k*, v*) is factored as G = A A^T (symmetric eigendecomposition, so PSD
    boundary points work); the rows of A are coordinates in a 4-frame of R^d: e_1..e_4 when ``rng`` is None, a
    Haar-random orthonormal frame otherwise (then k*, v* have the model's law). Needs d >= 4."""
    o = check_overlaps(ov)
    d = integer(d, "d", 4)
    flat = o.reshape(-1, 5)
    w, U = np.linalg.eigh(gram(flat))
    A = U * np.sqrt(np.clip(w, 0.0, None))[:, None, :]                 # (n, 4, 4), A A^T = G
    if rng is None:
        frames = np.broadcast_to(np.eye(d)[:4], (flat.shape[0], 4, d))
    else:
        g = generator(rng).standard_normal((flat.shape[0], d, 4))
        q, r = np.linalg.qr(g)
        frames = np.swapaxes(q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[:, None, :], 1, 2)   # Haar frames
    P = A @ frames                                                      # (n, 4, d): rows k, v, k*, v*
    P[:, 2] /= np.linalg.norm(P[:, 2], axis=-1, keepdims=True)          # remove the O(1e-16) norm error
    P[:, 3] -= np.sum(P[:, 3] * P[:, 2], axis=-1, keepdims=True) * P[:, 2]
    P[:, 3] /= np.linalg.norm(P[:, 3], axis=-1, keepdims=True)
    out = tuple(P[:, i] for i in range(4))
    return tuple(x[0] for x in out) if o.ndim == 1 else out


def _uniform_orthogonal(basis: list[np.ndarray], shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform unit vectors orthogonal to the (row-wise orthonormal) vectors in ``basis``: a Gaussian projected
    off each of them (Gram-Schmidt applied twice for rounding) and normalised."""
    g = rng.standard_normal(shape)
    for _ in range(2):
        for b in basis:
            g -= np.sum(g * b, axis=-1, keepdims=True) * b
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def start_sphere(n_runs: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """k, v independent and uniform on S^{d-1}, each of shape (n_runs, d)."""
    n_runs, d, rng = integer(n_runs, "n_runs", 1), integer(d, "d", 2), generator(rng)
    return _uniform_orthogonal([], (n_runs, d), rng), _uniform_orthogonal([], (n_runs, d), rng)


def start_manifold(k_star: np.ndarray, v_star: np.ndarray, rng: np.random.Generator,
                   n_runs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A start on M: k uniform on the unit sphere of (v*)^perp, v uniform on the unit sphere of span(k*, k)^perp.

    k_star, v_star: (d,) (then n_runs starts, default 1) or (n, d) (one start per row). Returns (k, v), (n, d) each,
    with eta = <k, v*>, theta = <v, k*> and rho = <k, v> zero to rounding. Needs d >= 3."""
    ks, vs = targets(k_star, v_star)
    rng = generator(rng)
    d = ks.shape[-1]
    if d < 3:
        raise ValueError(f"d must be >= 3 for a start on M, got {d}")
    if ks.ndim == 1:
        n = 1 if n_runs is None else integer(n_runs, "n_runs", 1)
        ks, vs = np.broadcast_to(ks, (n, d)), np.broadcast_to(vs, (n, d))
    elif n_runs is not None and n_runs != ks.shape[0]:
        raise ValueError(f"n_runs = {n_runs} differs from the {ks.shape[0]} rows of k_star")
    k = _uniform_orthogonal([vs], ks.shape, rng)
    k_perp = k - np.sum(k * ks, axis=-1, keepdims=True) * ks          # orthonormal basis (k*, e) of span(k*, k)
    norm = np.linalg.norm(k_perp, axis=-1, keepdims=True)
    e = np.divide(k_perp, norm, out=np.zeros_like(k_perp), where=norm > 1e-12)
    v = _uniform_orthogonal([ks, e], ks.shape, rng)
    return k, v
