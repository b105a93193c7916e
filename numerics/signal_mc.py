"""Monte Carlo estimate of Paper A's objective J_d(rho) = E ||f_q(X)||^2 with full d-dimensional tokens.

For each sequence X (L tokens in R^d, see ``signal_model``) and each rho on the grid, q = rho e_1 + sqrt(1-rho^2) e_2
(J_d depends on q only through rho = <q, xi>). The same sequences serve every rho (common random numbers), so
differences across rho are much less noisy than each value. The estimate at each rho is the sample mean of
||f_q(X)||^2 over n i.i.d. sequences; its standard error is the sample standard deviation / sqrt(n) (CLT).
"""
from __future__ import annotations

import numpy as np

from numerics.signal_model import SignalModel, check_rhos, check_rng, query_at, readout_grid, sample_tokens

_BATCH_ELEMENTS = 4_000_000  # float64 entries per work array (~32 MB)


def objective_samples(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                      batch: int | None = None) -> np.ndarray:
    """Samples ||f_q(X_j)||^2, shape (n_sequences, len(rhos)); row j uses the same sequence X_j for every rho."""
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rhos = check_rhos(rhos)
    rng = check_rng(rng)
    if isinstance(n_sequences, bool) or not isinstance(n_sequences, (int, np.integer)):
        raise TypeError("n_sequences must be an integer")
    if n_sequences < 2:
        raise ValueError(f"n_sequences must be >= 2 (a standard error needs two samples), got {n_sequences}")
    if batch is None:
        batch = max(1, _BATCH_ELEMENTS // (model.L * max(model.d, rhos.size)))
    elif batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    Q = query_at(rhos, model.d)                                  # (r, d)
    out = np.empty((n_sequences, rhos.size))
    for start in range(0, n_sequences, batch):
        n = min(batch, n_sequences - start)
        X = sample_tokens(model, n, rng)                         # (n, L, d)
        _, f = readout_grid(X, Q, model.beta)                    # (n, r, d)
        out[start:start + n] = np.einsum("nrd,nrd->nr", f, f)
    return out


def objective_mc(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                 batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error (sample sd / sqrt(n)) of ||f_q(X)||^2 at each rho, common random numbers across rho."""
    samples = objective_samples(model, rhos, n_sequences, rng, batch)
    return samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(n_sequences)
