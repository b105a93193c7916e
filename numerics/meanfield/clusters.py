"""Clusters of tokens on the sphere and the motion of their centres (Paper B's terminal phase), from a particle
trajectory alone: no closed form enters.

* :func:`cluster_labels` -- single-linkage clusters of N unit vectors (connected components of the graph whose
  edges join tokens less than ``angle`` apart).
* :func:`cluster_tracks` -- for fixed labels, each cluster's centre c_k(t) = m_k/|m_k| (m_k the mean of its tokens),
  its width w_k(t) = mean_i |x_i - c_k|^2 = 2 (1 - |m_k|) and its mass (fraction of tokens).
* :func:`outside_influence` -- how much of a cluster's softmax average comes from tokens outside it,
  log sum_{m not in k} exp(beta <B^T c_k, x_m - c_k>) / n_k (log-space, any beta), and the speed at which they
  move the cluster's centre (tangent to the sphere).
* :func:`winding_periods` -- the time a monotone angle takes to turn by 2 pi, at every sample time where it does.
* :func:`lagged_log_slope` -- the slope of log y over a fixed lag: (log y(t + T) - log y(t)) / T, averaged; a
  T-periodic modulation of log y cancels exactly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cluster_labels", "cluster_tracks", "outside_influence", "winding_periods",
           "lagged_log_slope", "linear_step_rates", "dominant_mode_rates"]


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


def outside_influence(X: np.ndarray, labels: np.ndarray, centres: np.ndarray, B: np.ndarray, V: np.ndarray,
                      beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(log_weight, pull), each (T, k): how the tokens outside cluster k act on a token at its centre c_k, relative to
    its own cluster's weight (weights shifted by their largest exponent before exponentiating: any beta).

        log_weight = log sum_{m not in k} exp(beta <B^T c, x_m - c>) - log n_k
        pull       = | P_perp_c sum_{m not in k} exp(beta <B^T c, x_m - c>) V (x_m - c) | / n_k

    Every token enters, not the other clusters' centres: a wide cluster (width ~ 0.1, not yet collapsed) has tokens
    far closer to c_k than its centre, and its centre alone underestimated the weight by 17 orders of magnitude
    (measured at d = 3).  The pull is the actual tangent vector, not the bound 2 eps |V|: a cluster antipodal to c on
    S pulls along c, which P_perp_c removes.  -inf and 0 when no token lies outside."""
    X = np.asarray(X, dtype=float)
    labels = np.asarray(labels)
    C = np.asarray(centres, dtype=float)
    B, V = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
    T, k, _ = C.shape
    log_weight, pull = np.full((T, k), -np.inf), np.zeros((T, k))
    for j in range(k):
        inside = labels == j
        if inside.all():
            continue
        c, Y = C[:, j], X[:, ~inside]                                      # (T, d), (T, n_out, d)
        a = c @ B                                                          # rows (B^T c)^T
        L = float(beta) * (np.einsum("td,tnd->tn", a, Y) - np.sum(a * c, axis=1)[:, None])
        top = L.max(axis=1)
        w = np.exp(L - top[:, None])
        v = np.einsum("tn,tnd->td", w, Y @ V.T) - w.sum(axis=1)[:, None] * (c @ V.T)
        v -= np.sum(v * c, axis=1)[:, None] * c                           # P_perp_c
        n = inside.sum()
        with np.errstate(over="ignore", invalid="ignore"):
            log_weight[:, j] = top + np.log(w.sum(axis=1)) - np.log(n)
            pull[:, j] = np.linalg.norm(v, axis=1) * np.exp(top) / n
    return log_weight, pull


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
    samples with ok[i] and ok[i + 1] (Z: (T, m), samples h apart), restricted to the directions the data resolve
    (:func:`_step_map`), and the growth rates log|eig(A)| / h, sorted in decreasing order.  For coordinates that
    evolve linearly (the transverse coordinates of a point approaching an invariant subspace of a linear flow) every
    resolved mode's rate is recovered, without the bias a log-linear fit of |Z| takes from the faster modes.  Empty
    when there are fewer pairs than 2 m + 2."""
    A, i, _ = _step_map(Z, ok)
    if A is None:
        return np.array([]), i
    return np.sort(np.log(np.abs(np.linalg.eigvals(A))) / h)[::-1], i


def dominant_mode_rates(Z: np.ndarray, ok: np.ndarray, h: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(rate, per-pair rates, start indices) of the dominant mode (largest |eigenvalue|) of the step map fitted as in
    :func:`linear_step_rates`: its rate log|lambda| / h, and log|y[i + 1] / y[i]| / h for y = <l, Z> with l its left
    eigenvector (the coordinate that carries that mode alone: a faster mode, even one the data no longer resolve,
    does not enter).  nan and empty arrays with too few pairs."""
    A, i, P = _step_map(Z, ok)
    if A is None:
        return float("nan"), np.array([]), i
    lam, L = np.linalg.eig(A.T)
    k = int(np.argmax(np.abs(lam)))
    y = np.abs(np.asarray(Z, dtype=float).reshape(len(ok), -1) @ (P @ L[:, k]))
    good = (y[i] > 0) & (y[i + 1] > 0)
    with np.errstate(divide="ignore"):
        per_pair = np.log(y[i + 1][good] / y[i][good]) / h
    return float(np.log(abs(lam[k])) / h), per_pair, i[good]


RESOLVED = 1e-5     # a direction holding less of the (row-normalised) data than this, relative, is noise (below)


def _step_map(Z: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:
    """(A, start indices, P): the step map A fitted in the coordinates Z P, where P (m, r) spans the directions in
    which the row-normalised samples have singular values >= RESOLVED times the largest (truncated dynamic mode
    decomposition).  A direction below that carries only the noise of the centre coordinates, which is set by
    rounding (about 3e-15 absolute, the same at integrator tolerances 1e-6, 1e-8 and 1e-10): measured 1e-7 to 4e-6
    relative in the fit window [1e-9, 1e-5] at d = 3, and 1.2e-5 with the window's bottom at 1e-10.  Fitted, such a
    direction gave the map an eigenvalue set by noise, which could exceed the true slowest mode's and be taken for
    it (a 'rate' of -0.26 against 0.115).  A faster mode f kept below RESOLVED biases the slowest mode's per-pair
    rates by less than RESOLVED (1 - e^{-(f - r) h}) / (r h) relative, and that bias decays across the window, so
    its halves differ by about as much (the uncertainty the comparison reads); a real faster mode was measured at
    7e-5 and is kept."""
    Z, ok = np.asarray(Z, dtype=float), np.asarray(ok, dtype=bool)
    if Z.ndim == 1:
        Z = Z[:, None]
    i = np.nonzero(ok[:-1] & ok[1:])[0]
    m = Z.shape[1]
    if i.size < 2 * m + 2:
        return None, i, None
    X, Y = Z[i], Z[i + 1]
    scale = np.linalg.norm(X, axis=1, keepdims=True)              # each pair weighted alike (Z spans decades)
    _, s, Vt = np.linalg.svd(X / scale, full_matrices=False)
    P = Vt[s >= RESOLVED * s[0]].T
    return np.linalg.lstsq(X @ P / scale, Y @ P / scale, rcond=None)[0].T, i, P
