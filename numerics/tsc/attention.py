"""Attention maps of Paper D on n tokens, through the project's fused log-space kernel.

For tokens y_1..y_n (the empirical measure mu_n), interaction A = W_k^T W_q, values W_v and temperature tau,

    Gamma_{mu_n}(x) = sum_j softmax_j(<A x, y_j> / tau) W_v y_j,

computed by :func:`attnverify.numerics.kernel.dense_moments` with rows b = A x, points y_j, values W_v y_j and
beta = 1/tau: every exponent is shifted by its row maximum, so scores of any finite size (1e10 and more in the
sphere experiment, A proportional to s^2 with s up to 1e5) give finite outputs, the hardmax average in the limit.
The kernel works row by row (never an n x n array).

- :func:`self_attention_outputs`: the transformed sample Gamma_{mu_n}(y_i), x = y_i, for all i or for a subset of
  query rows i (query subsampling), batched over repetitions (tokens of shape (reps, n, d)) and scales (A of
  shape (S, d, d)): the keys and values of a repetition are shared by its scales, so each repetition is one kernel
  call with S * q rows.
- :func:`attention_at`: Gamma_{mu_n}(x) at arbitrary query points x (the uniform-rate experiment).
- :func:`sup_error`: max over query points of ||Gamma_{mu_n}(x) - Gamma_mu(x)||_2, the reference Gamma_mu given by
  the caller as a callable or an array.
"""
from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from attnverify.numerics.kernel import dense_moments
from attnverify.numerics.tsc.laws import finite_matrix

__all__ = ["self_attention_outputs", "self_attention_rows", "attention_at", "sup_error", "temperature",
           "interactions"]

_MAX_ENTRY = 1e150      # |A| |y|^2 / tau stays far below float64 overflow


def temperature(tau) -> float:
    """tau as a float, or ValueError: a finite real > 0."""
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real) or not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite real > 0, got {tau!r}")
    return float(tau)


def interactions(A, d: int) -> np.ndarray:
    """A as a finite float array of shape (S, d, d) (a single (d, d) matrix becomes S = 1)."""
    A = finite_matrix(A, "A")
    if A.ndim == 2:
        A = A[None]
    if A.ndim != 3 or A.shape[1:] != (d, d):
        raise ValueError(f"A must have shape (d, d) or (S, d, d) with d = {d}, got {A.shape}")
    if np.abs(A).max(initial=0.0) > _MAX_ENTRY:
        raise ValueError(f"A has entries above {_MAX_ENTRY:g}: the scores would overflow float64")
    return A


def _tokens(Y) -> tuple[np.ndarray, bool]:
    Y = finite_matrix(Y, "Y")
    if Y.ndim == 2:
        return Y[None], False
    if Y.ndim != 3 or Y.shape[1] < 1 or Y.shape[2] < 1:
        raise ValueError(f"Y must have shape (n, d) or (reps, n, d), got {Y.shape}")
    return Y, True


def _value_matrix(W_v, d: int) -> np.ndarray:
    return finite_matrix(W_v, "W_v", (d, d))


def _rows(rows, n: int) -> np.ndarray:
    if rows is None:
        return np.arange(n)
    r = np.asarray(rows)
    if r.ndim != 1 or r.size < 1 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError(f"rows must be a non-empty 1-D integer array, got dtype {r.dtype} shape {r.shape}")
    if r.min() < 0 or r.max() >= n:
        raise ValueError(f"rows must lie in [0, n - 1] = [0, {n - 1}]")
    return r


def self_attention_outputs(Y, A, W_v, tau: float, rows=None) -> np.ndarray:
    """Gamma_{mu_n}(y_i) for i in ``rows`` (all n when None) of each repetition and scale.

    Y: (n, d) or (reps, n, d); A: (d, d) or (S, d, d); W_v: (d, d). Returns (S, q, d) for 2-D Y, else
    (S, reps, q, d), with q = len(rows) (a 2-D A gives S = 1: the scale axis is kept so that shapes never depend
    on the input's)."""
    Y, batched = _tokens(Y)
    d = Y.shape[2]
    A = interactions(A, d)
    W_v = _value_matrix(W_v, d)
    beta = 1.0 / temperature(tau)
    rows = _rows(rows, Y.shape[1])
    S, q = A.shape[0], rows.size
    out = np.empty((S, Y.shape[0], q, d))
    for r, y in enumerate(Y):
        B = np.einsum("qe,sfe->sqf", y[rows], A).reshape(S * q, d)     # b_i = A_s y_i, scales stacked
        out[:, r] = dense_moments(B, y, y @ W_v.T, beta).reshape(S, q, d)
    return out if batched else out[:, 0]


def self_attention_rows(Y, A, W_v, tau: float, rows_per_scale) -> list[np.ndarray]:
    """Gamma_{mu_n}(y_i) for one sample Y (n, d) with its own query rows at each scale: rows_per_scale[s] (an
    integer array) for A[s]; one kernel call for all. Returns the S arrays of shape (len(rows_per_scale[s]), d)."""
    Y, batched = _tokens(Y)
    if batched:
        raise ValueError(f"Y must have shape (n, d) here, got {Y.shape}")
    y = Y[0]
    n, d = y.shape
    A = interactions(A, d)
    W_v = _value_matrix(W_v, d)
    beta = 1.0 / temperature(tau)
    if len(rows_per_scale) != A.shape[0]:
        raise ValueError(f"rows_per_scale must hold one index array per scale ({A.shape[0]}), got {len(rows_per_scale)}")
    rows = [_rows(r, n) for r in rows_per_scale]
    B = np.concatenate([y[r] @ a.T for r, a in zip(rows, A)])
    out = dense_moments(B, y, y @ W_v.T, beta)
    return np.split(out, np.cumsum([r.size for r in rows])[:-1])


def attention_at(Y, A, W_v, tau: float, X) -> np.ndarray:
    """Gamma_{mu_n}(x) at the query points X (shape (P, d)) for each scale and repetition: (S, P, d) for 2-D Y,
    else (S, reps, P, d)."""
    Y, batched = _tokens(Y)
    d = Y.shape[2]
    X = finite_matrix(X, "X")
    if X.ndim != 2 or X.shape[1] != d or X.shape[0] < 1:
        raise ValueError(f"X must have shape (P, d) with P >= 1 and d = {d}, got {X.shape}")
    A = interactions(A, d)
    W_v = _value_matrix(W_v, d)
    beta = 1.0 / temperature(tau)
    S, P = A.shape[0], X.shape[0]
    B = np.einsum("pe,sfe->spf", X, A).reshape(S * P, d)
    out = np.empty((S, Y.shape[0], P, d))
    for r, y in enumerate(Y):
        out[:, r] = dense_moments(B, y, y @ W_v.T, beta).reshape(S, P, d)
    return out if batched else out[:, 0]


def sup_error(values: np.ndarray, X: np.ndarray,
              reference: Callable[[np.ndarray], np.ndarray] | np.ndarray) -> np.ndarray:
    """max_p ||values[..., p, :] - Gamma_mu(X_p)||_2 over the query points (last-but-one axis of ``values``, as
    returned by :func:`attention_at` for one scale); ``reference`` is Gamma_mu as a callable of X (shape (P, d)
    -> (P, d)) or its values, shape (P, d)."""
    values = np.asarray(values, dtype=float)
    ref = reference(np.asarray(X, dtype=float)) if callable(reference) else reference
    ref = finite_matrix(ref, "reference", values.shape[-2:])
    return np.linalg.norm(values - ref, axis=-1).max(axis=-1)
