"""Paper A token model and the softmax-attention read-out, vectorised over sequences.

Model: a sequence has L tokens in R^d; the first R are informative, x_i = eps*theta*xi + z_i, the other
L - R are nuisance tokens x_i = z_i, with z_i ~ N(0, sigma^2 I_d) i.i.d. and xi = e_1 (rotational
invariance). eps = 1 (sign="fixed") or a Rademacher sign per sequence (sign="symmetric").
Scores s_i = beta <q, x_i>, weights a = softmax(s) (computed in log-space), read-out f_q(X) = sum_i a_i x_i.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SIGNS = ("fixed", "symmetric")


def _finite_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _integer(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    return int(value)


def check_rng(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator``; otherwise raise TypeError."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


@dataclass(frozen=True)
class SignalModel:
    """Paper A model parameters (theta >= 0, beta > 0, sigma > 0, 1 <= R < L, d >= 2, sign in SIGNS)."""

    theta: float
    beta: float
    sigma: float
    R: int
    L: int
    d: int
    sign: str = "fixed"

    def __post_init__(self) -> None:
        for name in ("theta", "beta", "sigma"):
            object.__setattr__(self, name, _finite_number(name, getattr(self, name)))
        for name in ("R", "L", "d"):
            object.__setattr__(self, name, _integer(name, getattr(self, name)))
        if self.theta < 0:
            raise ValueError(f"theta must be >= 0, got {self.theta}")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        if self.sigma <= 0:
            raise ValueError(f"sigma must be > 0, got {self.sigma}")
        if self.R < 1:
            raise ValueError(f"R must be >= 1, got {self.R}")
        if self.R >= self.L:
            raise ValueError(f"need R < L (at least one nuisance token), got R={self.R}, L={self.L}")
        if self.d < 2:
            raise ValueError(f"d must be >= 2, got {self.d}")
        scale = self.theta + self.sigma * (math.sqrt(self.d) + 8.0)   # bound on token norms (8 sigma tail)
        if math.log10(self.beta) + 3 * math.log10(scale) > 100:
            raise ValueError("parameters too large: beta (theta + sigma (sqrt(d) + 8))^3 exceeds 1e100, so |f|^2 "
                             "and its gradient would overflow float64")
        if not isinstance(self.sign, str):
            raise TypeError(f"sign must be a str, got {type(self.sign).__name__}")
        if self.sign not in SIGNS:
            raise ValueError(f"sign must be one of {SIGNS}, got {self.sign!r}")


def check_rhos(rho: object) -> np.ndarray:
    """Alignments as a 1-D float array with every entry finite and in [-1, 1]."""
    arr = np.atleast_1d(np.asarray(rho, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"rho must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("rho must be finite")
    if np.any(np.abs(arr) > 1):
        raise ValueError("rho must lie in [-1, 1]")
    return arr


def query_at(rho: np.ndarray, d: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Unit queries q = rho e_1 + sqrt(1 - rho^2) v with v a unit vector orthogonal to e_1, shape (n, d).

    v is uniform on the sphere of e_1's complement when ``rng`` is given, and e_2 when ``rng`` is None
    (deterministic, used for common random numbers across rho).
    """
    rho = check_rhos(rho)
    d = _integer("d", d)
    if d < 2:
        raise ValueError(f"d must be >= 2, got {d}")
    v = np.zeros((rho.size, d))
    if rng is None:
        v[:, 1] = 1.0
    else:
        v[:, 1:] = check_rng(rng).standard_normal((rho.size, d - 1))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = np.sqrt(1.0 - rho**2)[:, None] * v
    q[:, 0] = rho
    return q


def sample_tokens(model: SignalModel, n: int, rng: np.random.Generator, dtype=np.float64, *,
                  with_signs: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """n independent sequences X of shape (n, L, d): sigma * N(0, I) noise plus eps*theta*e_1 on the first R tokens
    (eps = 1 for sign 'fixed', a Rademacher sign per sequence for 'symmetric'). ``with_signs``: also return eps (n,),
    so that a caller can recover the noise X - eps theta e_1."""
    rng = check_rng(rng)
    X = rng.standard_normal((n, model.L, model.d), dtype=dtype)
    if model.sigma != 1.0:
        X *= model.sigma
    eps = np.ones(n)
    if model.theta != 0.0:
        if model.sign == "fixed":
            X[:, : model.R, 0] += model.theta
        else:
            eps = rng.choice(np.array([-1.0, 1.0]), size=n)
            X[:, : model.R, 0] += (model.theta * eps).astype(X.dtype)[:, None]
    return (X, eps) if with_signs else X


def softmax_weights(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax along ``axis`` in log-space: exp(s - max s) / sum exp(s - max s); never overflows."""
    s = scores - scores.max(axis=axis, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=axis, keepdims=True)
    return s


def readout(X: np.ndarray, q: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Attention weights a (n, L) and read-out f = sum_i a_i x_i (n, d) for sequences X (n, L, d), queries q (n, d)."""
    a = softmax_weights(beta * np.einsum("nld,nd->nl", X, q))
    return a, np.einsum("nl,nld->nd", a, X)


def readout_grid(X: np.ndarray, Q: np.ndarray, beta: float, *, softmax: Callable[..., np.ndarray] = softmax_weights
                 ) -> tuple[np.ndarray, np.ndarray]:
    """For sequences X (n, L, d) and a grid of queries Q (r, d): weights a (n, L, r), a[:, :, k] = softmax(beta X Q_k),
    and read-outs f (n, r, d), f[:, k] = sum_i a_ik x_i (one GEMM for the scores: a broadcast matmul is slow).
    ``softmax(scores, axis)``: the softmax used (:func:`softmax_weights`)."""
    n, L, d = X.shape
    a = softmax(beta * (X.reshape(-1, d) @ Q.T).reshape(n, L, -1), axis=1)
    return a, np.swapaxes(a, 1, 2) @ X
