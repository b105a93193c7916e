"""Moments of the transformed sample, their errors, and the query-subsampling estimator with its variance.

Transformed sample: the n outputs z_i = Gamma_{mu_n}(y_i). Its moments (those of the empirical push-forward
(1/n) sum_i delta_{z_i}) are

    m_n = (1/n) sum_i z_i,        C_n = (1/n) sum_i z_i z_i^T - m_n m_n^T      (divisor n).

Query subsampling. Computing z_i costs O(n d) per row, so all n rows cost O(n^2 d). With only a simple random
sample Q of q rows (without replacement, all n keys) and an optional control g_i = g(y_i), a function of the
sample evaluated cheaply at every row (any g: the estimators below are unbiased for every choice; a g close to z
only lowers their variance; g = 0 is the plain subsample), write D_i = z_i - g_i, f = 1 - q/n, and S_xy for the
population covariance of rows x_i, y_i (divisor n - 1), estimated without bias by the sample covariance over Q
(divisor q - 1; standard for sampling without replacement). Then

    m^ = (1/n) sum_{all i} g_i + (1/q) sum_{i in Q} D_i,          E[m^ | sample] = m_n,
    Var(m^ | sample) = f S_DD / q                                  (finite-population correction),
    C^ = cov_n(g) + ((n - 1)/n) (S^_zz - S^_gg),                   E[C^ | sample] = C_n,

since C_n = cov_n(z) = ((n - 1)/n) S_zz and S_zz = S_gg + (S_zz - S_gg). The stated extra variances: tr V^ with
V^ = f S^_DD / q (unbiased for Var(m^); E ||m^ - m||^2 = ||m_n - m||^2 + tr Var(m^) given the sample, any m); for
C^, to first order, Var(C^_kl) = ((n - 1)/n)^2 f S_w,kl / q with w_i = (z_i - zbar)(z_i - zbar)^T - (g_i - gbar)
(g_i - gbar)^T (the influence of row i), stated as the Frobenius sum sum_kl Var(C^_kl) (so E ||C^ - C||_F^2 =
||C_n - C||_F^2 + that sum). For the spectral norm there is no such identity; E ||eps||_2^2 of the subsampling
noise eps = C^ - C_n is estimated by a multiplier bootstrap: eps* = ((n - 1)/n) sqrt(f / (q (q - 1))) sum_{i in Q}
xi_i (w_i - wbar) with Rademacher xi (same covariance as eps to first order), averaged over ``spectral_draws``
draws. With q = n, f = 0: m^ = m_n and C^ = C_n exactly, and every variance is 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.tsc.laws import finite_matrix, positive_int

__all__ = ["transformed_moments", "SubsampleMoments", "subsample_moments", "mean_error", "cov_errors",
           "draw_rows", "ControlValues", "control_values"]


def transformed_moments(outputs) -> tuple[np.ndarray, np.ndarray]:
    """(m_n, C_n) of the outputs along the last-but-one axis (shape (..., n, d) -> (..., d), (..., d, d)),
    covariance with divisor n."""
    z = finite_matrix(outputs, "outputs")
    if z.ndim < 2 or z.shape[-2] < 1:
        raise ValueError(f"outputs must have shape (..., n, d) with n >= 1, got {z.shape}")
    m = z.mean(axis=-2)
    c = z - m[..., None, :]
    return m, np.einsum("...ik,...il->...kl", c, c) / z.shape[-2]


@dataclass(frozen=True, eq=False)
class SubsampleMoments:
    """The estimates m^ and C^ of (m_n, C_n) from q of n query rows and their subsampling variances:
    ``mean_var`` = tr Var(m^) (the extra expected squared error of ||m^ - m||_2), ``mean_var_matrix`` = Var(m^),
    ``cov_var`` = sum_kl Var(C^_kl) (first order; the extra expected squared error of ||C^ - C||_F),
    ``cov_var_spectral`` = E ||C^ - C_n||_2^2 (bootstrap estimate; 0 when not requested); all 0 when q = n."""
    mean: np.ndarray
    cov: np.ndarray
    mean_var: float
    mean_var_matrix: np.ndarray
    cov_var: float
    cov_var_spectral: float
    q: int
    n: int


@dataclass(frozen=True, eq=False)
class ControlValues:
    """What the estimators need of a control g over the n rows: its mean (d,), its covariance with divisor n
    (d, d), and its values at the sampled rows (q, d)."""
    mean: np.ndarray
    cov: np.ndarray
    at_rows: np.ndarray


def control_values(g, rows) -> ControlValues:
    """The ControlValues of a control given at all n rows (shape (n, d))."""
    g = finite_matrix(g, "control")
    if g.ndim != 2:
        raise ValueError(f"control must have shape (n, d), got {g.shape}")
    mean = g.mean(axis=0)
    gc = g - mean
    return ControlValues(mean, gc.T @ gc / g.shape[0], g[np.asarray(rows)])


def draw_rows(rng: np.random.Generator, n: int, q: int | None) -> np.ndarray:
    """A simple random sample of q of the n row indices (without replacement, in random order: its first k
    entries are a simple random sample of size k too); all rows 0..n-1 when q is None or q >= n."""
    n = positive_int(n, "n")
    if q is None or q >= n:
        return np.arange(n)
    q = positive_int(q, "query rows", 2)
    return rng.choice(n, size=q, replace=False)


def _validated(outputs, rows, n: int, control):
    n = positive_int(n, "n")
    z = finite_matrix(outputs, "outputs")
    if z.ndim != 2 or z.shape[0] < 1:
        raise ValueError(f"outputs must have shape (q, d), got {z.shape}")
    q, d = z.shape
    rows = np.asarray(rows)
    if rows.shape != (q,) or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"rows must be {q} integer indices, one per output row, got shape {rows.shape}")
    if rows.min() < 0 or rows.max() >= n or np.unique(rows).size != q:
        raise ValueError(f"rows must be distinct indices in [0, {n - 1}]")
    if q < n and q < 2:
        raise ValueError("subsampling needs q >= 2 rows to estimate its variance")
    if control is None or isinstance(control, ControlValues):
        g = control
    else:
        g = control_values(finite_matrix(control, "control", (n, d)), rows)
    if g is not None and (g.mean.shape != (d,) or g.cov.shape != (d, d) or g.at_rows.shape != (q, d)):
        raise ValueError(f"control values must have shapes ({d},), ({d}, {d}), ({q}, {d})")
    return z, rows, n, g


def subsample_moments(outputs, rows, n: int, control=None, rng: np.random.Generator | None = None,
                      spectral_draws: int = 0) -> SubsampleMoments:
    """m^, C^ and their variances (module docstring) from the outputs z_i at the sampled rows (shape (q, d),
    rows: their distinct indices in [0, n)) and the control g: its values at all n rows (shape (n, d)), their
    :class:`ControlValues`, or None (g = 0).
    spectral_draws > 0 (with an rng) adds the bootstrap estimate of E ||C^ - C_n||_2^2."""
    z, rows, n, g = _validated(outputs, rows, n, control)
    q, d = z.shape
    if g is None:
        g_mean, g_cov, gq = np.zeros(d), np.zeros((d, d)), np.zeros((q, d))
    else:
        g_mean, g_cov, gq = g.mean, g.cov, g.at_rows
    D = z - gq
    f = 1.0 - q / n
    mean = g_mean + D.mean(axis=0)
    if q == 1:                                                 # n = q = 1: one output, no spread
        return SubsampleMoments(mean, np.zeros((d, d)), 0.0, np.zeros((d, d)), 0.0, 0.0, q, n)
    c, a = z - z.mean(axis=0), gq - gq.mean(axis=0)
    factor = (n - 1) / n
    cov = g_cov + factor * (c.T @ c - a.T @ a) / (q - 1)
    cov = (cov + cov.T) / 2
    if f == 0:
        return SubsampleMoments(mean, cov, 0.0, np.zeros((d, d)), 0.0, 0.0, q, n)
    Dc = D - D.mean(axis=0)
    var_m = f * (Dc.T @ Dc) / (q - 1) / q
    cc, aa, ca = (np.einsum("ik,ik->i", x, y) for x, y in ((c, c), (a, a), (c, a)))
    w_bar = (c.T @ c - a.T @ a) / q
    s_w = (np.sum(cc ** 2 + aa ** 2 - 2 * ca ** 2) - q * np.sum(w_bar ** 2)) / (q - 1)
    cov_var = factor ** 2 * f * max(s_w, 0.0) / q
    spectral = 0.0
    if spectral_draws and rng is not None:
        w = np.einsum("ik,il->ikl", c, c) - np.einsum("ik,il->ikl", a, a) - w_bar
        xi = rng.choice(np.array([-1.0, 1.0]), size=(positive_int(spectral_draws, "spectral_draws"), q))
        eps = factor * np.sqrt(f / (q * (q - 1))) * np.einsum("bi,ikl->bkl", xi, w)
        spectral = float(np.mean(np.abs(np.linalg.eigvalsh(eps)).max(axis=-1) ** 2))
    return SubsampleMoments(mean, cov, float(np.trace(var_m)), var_m, float(cov_var), spectral, q, n)


def mean_error(mean, reference) -> np.ndarray:
    """||m - m_ref||_2 over the last axis."""
    return np.linalg.norm(np.asarray(mean, float) - np.asarray(reference, float), axis=-1)


def cov_errors(cov, reference) -> tuple[np.ndarray, np.ndarray]:
    """(||C - C_ref||_F, ||C - C_ref||_2) over the last two axes (the difference is symmetrised; its spectral norm
    is its largest absolute eigenvalue)."""
    diff = np.asarray(cov, float) - np.asarray(reference, float)
    diff = (diff + np.swapaxes(diff, -1, -2)) / 2
    return np.linalg.norm(diff, axis=(-2, -1)), np.abs(np.linalg.eigvalsh(diff)).max(axis=-1)
