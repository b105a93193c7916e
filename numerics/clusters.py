"""Clusters of tokens on the sphere and the motion of their centres (Paper B's terminal phase), from a particle
trajectory alone: no closed form enters.

* :func:`cluster_labels` -- single-linkage clusters of N unit vectors (connected components of the graph whose
  edges join tokens less than ``angle`` apart).
* :func:`cluster_tracks` -- for fixed labels, each cluster's centre c_k(t) = m_k/|m_k| (m_k the mean of its tokens),
  its width w_k(t) = mean_i |x_i - c_k|^2 = 2 (1 - |m_k|) and its mass (fraction of tokens).
* :func:`log_cross_weights` -- how much of a cluster's softmax average comes from the other clusters:
  log max_j (n_j/n_k) exp(beta <B^T c_k, c_j - c_k>) (log-space, any beta).
* :func:`winding_periods` -- the time a monotone angle takes to turn by 2 pi, at every sample time where it does.
* :func:`lagged_log_slope` -- the slope of log y over a fixed lag: (log y(t + T) - log y(t)) / T, averaged; a
  T-periodic modulation of log y cancels exactly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cluster_labels", "cluster_tracks", "log_cross_weights", "winding_periods", "lagged_log_slope",
           "linear_step_rates", "dominant_mode_rates"]


def cluster_labels(X: np.ndarray, angle: float = 0.2) -> np.ndarray:
    """Labels 0..k-1 of the rows of X (N, d), unit vectors: tokens joined by a chain of steps shorter than
    ``angle`` (radians) share a label; labels ordered by decreasing cluster size (ties by first token)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (N, d) array, got shape {X.shape}")
    if not 0 < angle < np.pi:
        raise ValueError(f"angle must lie in (0, pi), got {angle}")
    close = (X @ X.T) >= np.cos(angle)
    _, raw = connected_components(csr_matrix(close), directed=False)
    sizes = np.bincount(raw)
    first = np.array([np.argmax(raw == k) for k in range(len(sizes))])
    order = sorted(range(len(sizes)), key=lambda k: (-sizes[k], first[k]))
    relabel = np.empty(len(sizes), dtype=int)
    relabel[order] = np.arange(len(sizes))
    return relabel[raw]


def cluster_tracks(X: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres (T, k, d), widths (T, k), masses (k,)) of the clusters given by ``labels`` over a trajectory X
    (T, N, d).  A cluster whose mean vanishes has no centre (nan)."""
    X = np.asarray(X, dtype=float)
    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    onehot = (labels[:, None] == np.arange(k)[None, :]).astype(float)
    counts = onehot.sum(axis=0)
    means = np.einsum("tnd,nk->tkd", X, onehot) / counts[None, :, None]
    norm = np.linalg.norm(means, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        centres = means / norm[:, :, None]
    return centres, 2.0 * np.maximum(1.0 - norm, 0.0), counts / len(labels)


def log_cross_weights(centres: np.ndarray, masses: np.ndarray, B: np.ndarray, beta: float) -> np.ndarray:
    """(T, k): the log of the largest relative softmax weight that a token at cluster k's centre gives another
    cluster j, log (n_j/n_k) + beta <B^T c_k, c_j - c_k> (-inf with one cluster).  Below log(eps) the centre moves
    by its own cluster's average to a relative error eps."""
    C = np.asarray(centres, dtype=float)
    T, k, _ = C.shape
    out = np.full((T, k), -np.inf)
    if k < 2:
        return out
    BC = C @ np.asarray(B, dtype=float)                    # row (t, k) = (B^T c_k)^T
    S = np.einsum("tkd,tjd->tkj", BC, C)                   # <B^T c_k, c_j>
    own = np.einsum("tkk->tk", S)
    logm = np.log(np.asarray(masses, dtype=float))
    L = logm[None, None, :] - logm[None, :, None] + float(beta) * (S - own[:, :, None])
    idx = np.arange(k)
    L[:, idx, idx] = -np.inf
    return L.max(axis=2)


def winding_periods(t: np.ndarray, phase: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start times, periods): for every sample t_i of a strictly monotone unwrapped angle phase(t) that still
    turns by a full 2 pi before the last sample, the time T_i with |phase(t_i + T_i) - phase(t_i)| = 2 pi, found on
    the cubic spline of t as a function of the angle (fourth order in the sample spacing).  Empty arrays when the
    angle is not strictly monotone or never completes a turn."""
    from scipy.interpolate import CubicSpline

    t, phase = np.asarray(t, dtype=float), np.asarray(phase, dtype=float)
    if len(t) < 4:
        return np.array([]), np.array([])
    step = np.diff(phase)
    sign = 1.0 if step.sum() > 0 else -1.0
    if not np.all(sign * step > 0):
        return np.array([]), np.array([])
    p = sign * phase
    inverse = CubicSpline(p, t)
    ok = p + 2 * np.pi <= p[-1]
    return t[ok], inverse(p[ok] + 2 * np.pi) - t[ok]


def lagged_log_slope(t: np.ndarray, y: np.ndarray, lag: float) -> tuple[np.ndarray, np.ndarray]:
    """(start times, slopes): (log y(t_i + lag) - log y(t_i)) / lag for every sample t_i with t_i + lag within the
    samples, log y(t_i + lag) from the cubic spline of log y (y > 0).  Any lag-periodic factor of y cancels."""
    from scipy.interpolate import CubicSpline

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    if len(t) < 4 or not lag > 0 or np.any(y <= 0):
        return np.array([]), np.array([])
    spline = CubicSpline(t, np.log(y))
    ok = t + lag <= t[-1]
    return t[ok], (spline(t[ok] + lag) - np.log(y[ok])) / lag


def linear_step_rates(Z: np.ndarray, ok: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(rates, start indices): the least-squares linear map A with Z[i + 1] ~ A Z[i] over the pairs of consecutive
    samples with ok[i] and ok[i + 1] (Z: (T, m), samples h apart), and the growth rates log|eig(A)| / h, sorted in
    decreasing order.  For coordinates that evolve linearly (the transverse coordinates of a point approaching an
    invariant subspace of a linear flow) every mode's rate is recovered, without the bias a log-linear fit of |Z|
    takes from the faster modes.  Empty when there are fewer pairs than 2 m + 2."""
    A, i = _step_map(Z, ok)
    if A is None:
        return np.array([]), i
    return np.sort(np.log(np.abs(np.linalg.eigvals(A))) / h)[::-1], i


def dominant_mode_rates(Z: np.ndarray, ok: np.ndarray, h: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(rate, per-pair rates, start indices) of the dominant mode (largest |eigenvalue|) of the step map fitted as in
    :func:`linear_step_rates`: its rate log|lambda| / h, and log|y[i + 1] / y[i]| / h for y = <l, Z> with l its left
    eigenvector (the coordinate that carries that mode alone: a faster mode, even one the data no longer resolve,
    does not enter).  nan and empty arrays with too few pairs."""
    A, i = _step_map(Z, ok)
    if A is None:
        return float("nan"), np.array([]), i
    lam, L = np.linalg.eig(A.T)
    k = int(np.argmax(np.abs(lam)))
    y = np.abs(np.asarray(Z, dtype=float).reshape(len(ok), -1) @ L[:, k])
    good = (y[i] > 0) & (y[i + 1] > 0)
    with np.errstate(divide="ignore"):
        per_pair = np.log(y[i + 1][good] / y[i][good]) / h
    return float(np.log(abs(lam[k])) / h), per_pair, i[good]


def _step_map(Z: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    Z, ok = np.asarray(Z, dtype=float), np.asarray(ok, dtype=bool)
    if Z.ndim == 1:
        Z = Z[:, None]
    i = np.nonzero(ok[:-1] & ok[1:])[0]
    m = Z.shape[1]
    if i.size < 2 * m + 2:
        return None, i
    X, Y = Z[i], Z[i + 1]
    scale = np.linalg.norm(X, axis=1, keepdims=True)              # each pair weighted alike (Z spans decades)
    return np.linalg.lstsq(X / scale, Y / scale, rcond=None)[0].T, i
