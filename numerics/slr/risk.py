"""Paper C's predictor T_{k,v}(X) = sum_l erf(lam <X_l, k>) <X_l, v> and a Monte Carlo estimate of its risk.

Risk R(k, v) = E (Y - T_{k,v}(X))^2 over the model's tasks (``slr_model``). The estimate is the sample mean of
(Y_i - T(X_i))^2 over n i.i.d. tasks and its standard error the sample standard deviation / sqrt(n) (CLT); the
same tasks serve every (k, v) pair passed at once (common random numbers: differences across pairs are far less
noisy than each value). It uses no closed form and no quadrature.

Two samplers, equal in law:
  * ``method="full"`` (the definition): every task's L d Gaussians are drawn.
  * ``method="projected"``: T and Y depend on the tokens only through their coordinates in E = span(k*, v*, k, v),
    and the coordinates of a N(m, s^2 I_d) vector in an orthonormal basis B of E (m in E) are N(B^T m, s^2 I) by
    rotation invariance. B is computed by a QR factorisation of the explicit vectors (no overlap formula), and
    only L dim(E) <= 4 L Gaussians per task are drawn: use it when d is large.
"""
from __future__ import annotations

import numpy as np
from scipy.special import erf

from attnverify.numerics.slr.model import (SLRModel, TaskSampler, generator, integer, lam_value, sample_tasks, sampler,
                                           targets, vectors)

_BATCH_ELEMENTS = 4_000_000      # float64 entries per work array (~32 MB)
METHODS = ("full", "projected")


def predictor(X: np.ndarray, k: np.ndarray, v: np.ndarray, lam: float) -> np.ndarray:
    """T_{k,v}(X) = sum_l erf(lam <X_l, k>) <X_l, v> for X (n, L, d) and k, v (d,) or (P, d): shape (n,) or (n, P)."""
    lam = lam_value(lam)
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, L, d), got {X.shape}")
    k = vectors(k, "k", X.shape[2], unit=False)
    v = vectors(v, "v", X.shape[2], unit=False)
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got {k.shape} and {v.shape}")
    K = np.atleast_2d(k)
    V = np.atleast_2d(v)
    T = np.einsum("nlp,nlp->np", erf(lam * (X @ K.T)), X @ V.T)
    return T[:, 0] if k.ndim == 1 else T


def _check(model, k, v, k_star, v_star, lam, n_samples, rng, method):
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    ks, vs = targets(k_star, v_star, model.d)
    if ks.ndim != 1:
        raise ValueError(f"k_star must have shape (d,), got {ks.shape}")
    K = np.atleast_2d(vectors(k, "k", model.d))
    V = np.atleast_2d(vectors(v, "v", model.d))
    if K.shape != V.shape:
        raise ValueError(f"k and v must have the same shape, got {np.shape(k)} and {np.shape(v)}")
    n = integer(n_samples, "n_samples", 2)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return ks, vs, K, V, lam_value(lam), n, generator(rng)


def _loss_full(model, ks, vs, K, V, lam, n, rng, sample: TaskSampler) -> np.ndarray:
    """(Y - T)^2 for n tasks drawn in full dimension by ``sample``, shape (n, P)."""
    out = np.empty((n, K.shape[0]))
    batch = max(1, _BATCH_ELEMENTS // (model.L * max(model.d, K.shape[0])))
    L, d = model.L, model.d
    for start in range(0, n, batch):
        m = min(batch, n - start)
        X, Y, _ = sample(model, ks, vs, m, rng)
        flat = X.reshape(m * L, d)
        T = np.einsum("nlp,nlp->np", erf(lam * (flat @ K.T)).reshape(m, L, -1), (flat @ V.T).reshape(m, L, -1))
        out[start:start + m] = (Y[:, None] - T) ** 2
    return out


def _loss_projected(model, ks, vs, K, V, lam, n, rng) -> np.ndarray:
    """(Y - T)^2 for n tasks drawn through their coordinates in span(k*, v*, k, v) per pair, shape (n, P)."""
    P, L = K.shape[0], model.L
    out = np.empty((n, P))
    batch = max(1, _BATCH_ELEMENTS // (4 * L))
    bases = []
    for p in range(P):
        Q = np.linalg.qr(np.stack([ks, vs, K[p], V[p]], axis=1))[0]         # (d, min(d, 4)), spans all four
        bases.append((Q, Q.T @ ks, Q.T @ vs, Q.T @ K[p], Q.T @ V[p]))
    r_max = max(b[0].shape[1] for b in bases)
    for start in range(0, n, batch):
        m = min(batch, n - start)
        Z = rng.standard_normal((m, L, r_max))                                 # shared by all pairs (CRN)
        J0 = rng.integers(0, L, size=m)
        xi = model.eps * rng.standard_normal(m)
        rows = np.arange(m)
        for p, (Q, cks, cvs, ck, cv) in enumerate(bases):
            C = Z[:, :, :Q.shape[1]].copy()                                    # coordinates of the tokens
            C[rows, J0] *= model.gamma
            C[rows, J0] += model.amplitude * cks
            Y = C[rows, J0] @ cvs + xi
            T = np.sum(erf(lam * (C @ ck)) * (C @ cv), axis=1)
            out[start:start + m, p] = (Y - T) ** 2
    return out


def risk_samples(model: SLRModel, k: np.ndarray, v: np.ndarray, k_star: np.ndarray, v_star: np.ndarray, lam: float,
                 n_samples: int, rng: np.random.Generator, method: str = "full", *,
                 sample: TaskSampler = sample_tasks) -> np.ndarray:
    """Per-task squared errors (Y_i - T_{k,v}(X_i))^2, shape (n_samples,) for k, v (d,), or (n_samples, P) for (P, d);
    row i uses the same task for every pair. ``method="full"`` draws the tasks with ``sample`` (the model's sampler
    by default); ``"projected"`` draws their coordinates itself (module docstring)."""
    ks, vs, K, V, lam, n, rng = _check(model, k, v, k_star, v_star, lam, n_samples, rng, method)
    if method == "full":
        out = _loss_full(model, ks, vs, K, V, lam, n, rng, sampler(sample))
    else:
        out = _loss_projected(model, ks, vs, K, V, lam, n, rng)
    return out[:, 0] if np.ndim(k) == 1 else out


def risk_mc(model: SLRModel, k: np.ndarray, v: np.ndarray, k_star: np.ndarray, v_star: np.ndarray, lam: float,
            n_samples: int, rng: np.random.Generator, method: str = "full", *,
            sample: TaskSampler = sample_tasks) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo risk R(k, v) = E (Y - T_{k,v}(X))^2: mean and standard error (sd / sqrt(n)), shape () or (P,)
    (``method`` and ``sample`` as in :func:`risk_samples`)."""
    s = risk_samples(model, k, v, k_star, v_star, lam, n_samples, rng, method, sample=sample)
    return s.mean(axis=0), s.std(axis=0, ddof=1) / np.sqrt(s.shape[0])
