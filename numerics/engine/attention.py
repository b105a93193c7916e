"""Finite-L softmax attention of a trained query, in log-space, and the query of given overlaps.

For a sequence X = (x_1..x_L) and a query q the scores are s_i = (beta / tau) <q, A x_i> = <u, x_i> with
u = (beta / tau) A^T q, the weights a_i = exp(s_i - max_j s_j) / sum_l exp(s_l - max_j s_j) (log-space: every
exponent is <= 0 and the largest is 0, so the denominator is >= 1 and nothing overflows at any finite scale, 1e6
and beyond), and the output is f_q(X) = sum_i a_i V x_i. A score that is not finite (beta / tau |A| |x| beyond
float64) raises FloatingPointError naming where; nothing returns NaN silently.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.engine.spec import MixtureSpec


def require_finite(arr: np.ndarray, where: str) -> np.ndarray:
    """``arr`` when every entry is finite, else FloatingPointError naming ``where``."""
    if not np.all(np.isfinite(arr)):
        raise FloatingPointError(f"engine: non-finite values in {where} (float64 overflow: reduce beta / tau or the "
                                 f"token scale)")
    return arr


def softmax_weights(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax of ``scores`` along ``axis`` in log-space: exp(s - max s) / sum exp(s - max s). Non-finite scores
    raise FloatingPointError."""
    require_finite(scores, "attention scores")
    with np.errstate(over="ignore"):                  # a difference beyond -1e308 is -inf, whose exp is 0
        s = scores - scores.max(axis=axis, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=axis, keepdims=True)
    return s


def score_vectors(Q: np.ndarray, A: np.ndarray, kappa: float) -> np.ndarray:
    """The score vectors u = kappa A^T q as rows kappa q^T A, for queries Q (..., w); FloatingPointError when they
    overflow float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        U = kappa * (Q @ A)
    return require_finite(U, "attention scores: the score vector (beta / tau) A^T q")


def grid_scores(X: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Scores <U_r, x_i> of sequences X (n, L, w) against score vectors U, shape (n, r, L) (the softmax axis last and
    contiguous): U (r, w) shared by every sequence, or U (n, r, w) one set per sequence. Written as einsum / batched
    products, not one tall (nL x w) GEMM, which a multithreaded BLAS runs slowly on a busy machine."""
    with np.errstate(over="ignore", invalid="ignore"):
        if U.ndim == 2:
            S = np.einsum("nlw,rw->nrl", X, U)
        else:
            S = np.einsum("nlw,nrw->nrl", X, U)
    return require_finite(S, "attention scores (beta / tau) <q, A x>")


def overlap_grid(rhos: object, k: int) -> np.ndarray:
    """Query overlaps as an (r, k) array with |rho| <= 1 per row. For k = 1 a 1-D array is a grid of r points; for
    k > 1 a 1-D array of length k is one point. ValueError otherwise."""
    try:
        arr = np.array(rhos, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"rhos must be a numeric array of overlaps, got {rhos!r}") from None
    if arr.ndim == 1:
        arr = arr[:, None] if k == 1 else arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != k or arr.shape[0] < 1:
        raise ValueError(f"rhos must have shape (r, k) = (r, {k}) with r >= 1, got {np.shape(rhos)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("rhos must be finite")
    norm2 = np.einsum("rk,rk->r", arr, arr)
    if np.any(norm2 > 1 + 1e-12):
        raise ValueError(f"rhos: every point needs |rho| <= 1 (q is a unit vector), got |rho|^2 = {norm2.max():.6g}")
    return arr


def query_from_overlaps(rhos: np.ndarray, d: int) -> np.ndarray:
    """Unit queries q = sum_j rho_j e_j + sqrt(1 - |rho|^2) e_{k+1}, shape (r, d), from overlaps (r, k), k < d."""
    r, k = rhos.shape
    if d < k + 1:
        raise ValueError(f"a trained query needs d > k = {k}, got d = {d}")
    Q = np.zeros((r, d))
    Q[:, :k] = rhos
    Q[:, k] = np.sqrt(np.clip(1.0 - np.einsum("rk,rk->r", rhos, rhos), 0.0, None))
    return Q


def _per_sequence(X: np.ndarray, q: np.ndarray, spec: MixtureSpec) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    if X.ndim != 3 or X.shape[1:] != (spec.L, spec.d):
        raise ValueError(f"X must have shape (n, L, d) = (n, {spec.L}, {spec.d}), got {X.shape}")
    q = np.asarray(q, dtype=float)
    if q.shape == (spec.d,):
        q = np.broadcast_to(q, (X.shape[0], spec.d))
    if q.shape != (X.shape[0], spec.d) or not np.all(np.isfinite(q)):
        raise ValueError(f"q must be finite of shape (d,) or (n, d) = ({X.shape[0]}, {spec.d}), got {q.shape}")
    return X, q


def attention_weights(X: np.ndarray, q: np.ndarray, spec: MixtureSpec) -> np.ndarray:
    """Weights a (n, L) of sequences X (n, L, d) for queries q (d,) or (n, d): softmax((beta / tau) <q, A x_i>)."""
    X, q = _per_sequence(X, q, spec)
    U = score_vectors(q, spec.matrix("A"), spec.attention.scale)
    return softmax_weights(grid_scores(X, U[:, None, :])[:, 0, :], axis=1)


def attention_output(X: np.ndarray, q: np.ndarray, spec: MixtureSpec) -> tuple[np.ndarray, np.ndarray]:
    """Weights a (n, L) and outputs f_q(X) = sum_i a_i V x_i (n, d) for sequences X (n, L, d), queries (d,)/(n, d)."""
    a = attention_weights(X, q, spec)
    F = np.einsum("nl,nld->nd", a, np.asarray(X, dtype=float))
    return a, require_finite(F @ spec.matrix("V").T, "attention outputs f_q(X)")
