"""The pathwise Monte Carlo drift of the reduced gradient flow in the query's overlaps.

Gradient ascent on the sphere moves q along the tangent part (I - q q^T) grad_q J; the overlaps rho_j = <q, e_j>
then move with speed e_j^T (I - q q^T) grad_q J = d_j - rho_j (rho . d) when J depends on q only through rho
(d_j the partial derivatives of J(q(rho)) in the chart q(rho) = sum rho_j e_j + sqrt(1 - |rho|^2) e_{k+1}; the
same identity holds sample by sample). The estimator averages, over sequences X, the pathwise
e_j^T (I - q q^T) grad_q ||f_q(X)||^2 (exchanging expectation and derivative: the integrand is smooth in q with
Gaussian- or sphere-dominated derivatives); the gradient is derived by hand in attnverify.numerics.engine.gradient.
With method "reduced" the samples are their conditional expectations given the tokens' first k + 1 coordinates
(attnverify.numerics.engine.montecarlo): the same mean, a smaller variance.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.engine.estimates import GridEstimate
from attnverify.numerics.engine.montecarlo import grid_mc, grid_samples
from attnverify.numerics.engine.spec import MixtureSpec


def drift_samples(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
                  method: str = "reduced") -> np.ndarray:
    """Per-sequence drift samples, shape (n_sequences, r, k), the same sequences at every grid point."""
    return grid_samples(spec, rhos, n_sequences, rng, method=method, drift=True).drift


def drift_mc(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
             method: str = "reduced") -> GridEstimate:
    """The mean drift of the overlaps, E[e_j^T (I - q q^T) grad_q ||f_q(X)||^2], shape (r, k), with its covariance
    across the grid (common random numbers)."""
    return grid_mc(spec, rhos, n_sequences, rng, method=method, drift=True).drift
