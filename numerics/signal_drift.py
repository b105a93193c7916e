"""Monte Carlo estimate of J_d'(rho), the sign of the SGA drift, from sampled sequences alone (no closed form).

Along q(rho) = rho e_1 + s v (s = sqrt(1 - rho^2), v a unit vector orthogonal to xi = e_1) the pathwise derivative of
the sampled objective is

    D(rho; X, v) = d/drho ||f_{q(rho)}(X)||^2 = <grad_q ||f_q(X)||^2, e_1 - (rho / s) v>,

with grad_q ||f_q||^2 = 2 beta sum_i a_i (<x_i, f> - ||f||^2) x_i (attnverify.numerics.sga.objective_gradient).  Since J_d(q)
depends on q only through rho, E D = J_d'(rho) (exchange of derivative and expectation: the integrand is smooth with
Gaussian-dominated derivatives), and the mean SGA drift is E[rho' - rho] = eta (1 - rho^2) J_d'(rho) + O(eta^2)
(the xi-component of the tangent gradient is (1 - rho^2) D).  So on (-1, 1) the sign of the reduced field F of
the simulated model is the sign of J_d'(rho).

Variance reduction: the law of X is invariant under the reflection v -> -v, so D(rho; X, v) and D(rho; X, -v) have the
same mean; their average (an antithetic pair on one sequence) cancels most of the (rho / s) <grad, v> noise near
rho = +-1.  The same sequences serve every rho of the grid (common random numbers).
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.signal_model import SignalModel, check_rng, readout_grid, sample_tokens

_BATCH_ELEMENTS = 4_000_000  # float64 entries of the (n, L, 2r) weight array per batch


def _open_rhos(rho: object) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(rho, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"rho must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) >= 1):
        raise ValueError("rho must be finite and inside the open interval (-1, 1) (d/drho is singular at +-1)")
    return arr


def alignment_derivative_samples(model: SignalModel, rho: np.ndarray, n_samples: int,
                                 rng: np.random.Generator) -> np.ndarray:
    """Samples (n_samples, len(rho)) of (D(rho; X_j, e_2) + D(rho; X_j, -e_2)) / 2, one sequence X_j per row.

    Each column has mean J_d'(rho) (module docstring); rows are i.i.d., so mean and sd / sqrt(n) give a CLT interval.
    """
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rho = _open_rhos(rho)
    rng = check_rng(rng)
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    r, d = rho.size, model.d
    s = np.sqrt(1.0 - rho**2)
    Q = np.zeros((2 * r, d))                      # queries q+ (rows 0..r-1) and q- (rows r..2r-1)
    Q[:, 0] = np.concatenate([rho, rho])
    Q[:, 1] = np.concatenate([s, -s])
    T = np.zeros((2 * r, d))                      # dq/drho along each path
    T[:, 0] = 1.0
    T[:, 1] = np.concatenate([-rho / s, rho / s])
    batch = max(1, _BATCH_ELEMENTS // (model.L * 2 * r))
    out = np.empty((n_samples, r))
    for start in range(0, n_samples, batch):
        n = min(batch, n_samples - start)
        X = sample_tokens(model, n, rng)                              # (n, L, d)
        att, f = readout_grid(X, Q, model.beta)                       # (n, L, 2r), (n, 2r, d)
        ff = np.einsum("nrd,nrd->nr", f, f)
        c = X @ np.swapaxes(f, 1, 2)                                  # <x_i, f_k>, (n, L, 2r)
        c -= ff[:, None, :]
        c *= att
        grad = (2.0 * model.beta) * (np.swapaxes(c, 1, 2) @ X)       # (n, 2r, d)
        D = np.einsum("nkd,kd->nk", grad, T)
        out[start:start + n] = 0.5 * (D[:, :r] + D[:, r:])
    return out
