"""Monte Carlo of the objective J(q) = E ||f_q(X)||^2, of the attention masses and of the overlaps' drift, on a grid of
query overlaps with common random numbers.

Queries. Each grid point rho (k overlaps) gives q = sum_j rho_j e_j + sqrt(1 - |rho|^2) e_{k+1}. Every point is
evaluated on the same n sequences, so the samples of different points are correlated and contrasts across the grid
(differences, finite differences, slopes) carry their own, smaller, standard errors: the estimates return the full
covariance across the grid. The sequences depend only on (spec, n, method, rng state), never on the grid, so two
calls with equal generators see the same sequences whatever their grids (common random numbers across calls).

Per sequence X and grid point the samples are
- energy: ||f_q(X)||^2, f_q(X) = sum_i a_i V x_i, a = softmax((beta / tau) <q, A x_i>) (log-space);
- mass: sum_{i in c} a_i for each component c (its mean is the attention mass E[sum_{i in c} a_i]);
- drift (optional): the components along e_1..e_k of the tangent gradient (I - q q^T) grad_q ||f_q(X)||^2
  (attnverify.numerics.engine.gradient), whose mean is the drift of the overlaps under the gradient flow.

Two methods.
- "full": tokens in all d coordinates, the plain estimator.
- "reduced" (block-form A and V, d > k): a Rao-Blackwellisation of the simulation, not the theory under test. The
  scores depend on the tokens only through their first k + 1 coordinates x^S (q lies in their span and A maps it to
  itself); the other d - k - 1 coordinates z^R have mean zero, are independent across tokens and enter the output
  only through v_perp F^R, F^R = sum_i a_i z_i^R. The samples are replaced by their conditional expectations given
  x^S, in closed form: E[||f||^2 | x^S] = |V_S F^S|^2 + v_perp^2 sum_i a_i^2 W_i with W_i = E[|z_i^R|^2 | x^S]
  ((d - k - 1) sd_perp^2 for a Gaussian component; attnverify.numerics.engine.sampling for a sphere), and the
  gradient's conditional expectation (attnverify.numerics.engine.gradient). Same means, smaller variances, and the
  cost no longer grows with d. The masses need no conditioning (they are functions of x^S).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.engine.attention import (grid_scores, overlap_grid, query_from_overlaps, require_finite,
                                                  score_vectors, softmax_weights)
from attnverify.numerics.engine.estimates import GridEstimate, estimate
from attnverify.numerics.engine.gradient import gradient_from_weights, tangent
from attnverify.numerics.engine.sampling import check_count, check_rng, check_spec, sample_full, sample_reduced
from attnverify.numerics.engine.spec import MixtureSpec

METHODS = ("reduced", "full")
_BATCH = 2_000_000          # float64 entries per work array (16 MB): sequences per batch = _BATCH // (L * width)


@dataclass(frozen=True, eq=False)
class GridSamples:
    """Per-sequence samples on the overlap grid ``rhos`` (r, k): ``energy`` (n, r), ``mass`` (n, r, C) and
    ``drift`` (n, r, k) or None; ``method`` "reduced" or "full" (module docstring)."""

    rhos: np.ndarray
    energy: np.ndarray
    mass: np.ndarray
    drift: np.ndarray | None
    method: str


@dataclass(frozen=True, eq=False)
class GridMC:
    """Estimates on the overlap grid ``rhos`` (r, k), each with its covariance across the grid: ``objective`` J
    (shape (r,)), ``mass`` per component (r, C) and ``drift`` of the overlaps (r, k) or None; ``method`` used."""

    rhos: np.ndarray
    objective: GridEstimate
    mass: GridEstimate
    drift: GridEstimate | None
    method: str


def _work_coordinates(spec: MixtureSpec, method: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(width, A, V) of the working coordinates: the first k + 1 axes with the block restrictions, or all d."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "reduced":
        return spec.k + 1, spec.span_matrix("A"), spec.span_matrix("V")
    return spec.d, spec.matrix("A"), spec.matrix("V")


def batch_size(spec: MixtureSpec, width: int) -> int:
    """Sequences drawn per batch (depends on the spec and the width only, never on the grid)."""
    return max(1, _BATCH // (spec.L * width))


def draw(spec: MixtureSpec, n: int, rng: np.random.Generator, method: str) -> tuple[np.ndarray, np.ndarray | None]:
    """n sequences in the method's coordinates: (X, W) reduced, (X, None) full."""
    if method == "reduced":
        return sample_reduced(spec, n, rng)
    return sample_full(spec, n, rng), None


def grid_samples(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
                 method: str = "reduced", drift: bool = False) -> GridSamples:
    """Per-sequence samples of the energy, the masses and (``drift``) the overlaps' drift at every grid point, the
    same n_sequences sequences for every point (module docstring). rhos: (r, k) overlaps (1-D for k = 1)."""
    spec = check_spec(spec, "trained")
    rhos = overlap_grid(rhos, spec.k)
    n = check_count(n_sequences, "n_sequences", 2)
    rng = check_rng(rng)
    width, A, V = _work_coordinates(spec, method)
    kappa, k, r = spec.attention.scale, spec.k, rhos.shape[0]
    v_perp = spec.attention.v_perp if method == "reduced" else 0.0
    Q = query_from_overlaps(rhos, spec.d)[:, :width]
    U = score_vectors(Q, A, kappa)                                # rows kappa A^T q
    nb = batch_size(spec, width)
    rc = max(1, _BATCH // (nb * spec.L))                          # grid points per pass
    energy = np.empty((n, r))
    mass = np.empty((n, r, len(spec.components)))
    dr = np.empty((n, r, k)) if drift else None
    for start in range(0, n, nb):
        m = min(nb, n - start)
        X, W = draw(spec, m, rng, method)
        rows = slice(start, start + m)
        for r0 in range(0, r, rc):
            cols = slice(r0, min(r, r0 + rc))
            a = softmax_weights(grid_scores(X, U[cols]), axis=-1)    # (m, rr, L)
            f = (a @ X) @ V.T                                         # (m, rr, w)
            e = np.einsum("nrw,nrw->nr", f, f)
            if W is not None:
                e += (v_perp * v_perp) * np.einsum("nrl,nl->nr", a * a, W)
            energy[rows, cols] = e
            for c, sl in enumerate(spec.slices):
                mass[rows, cols, c] = a[:, :, sl].sum(axis=-1)
            if drift:
                grad = gradient_from_weights(X, a, f, A, V, kappa, W, v_perp)
                dr[rows, cols] = tangent(grad, Q[None, cols])[..., :k]
    require_finite(energy, "the sampled energies ||f_q(X)||^2")
    return GridSamples(rhos=rhos, energy=energy, mass=mass, drift=dr, method=method)


def grid_mc(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
            method: str = "reduced", drift: bool = False) -> GridMC:
    """J, the masses and (``drift``) the overlaps' drift on the overlap grid, with covariances across the grid
    (grid_samples, then attnverify.numerics.engine.estimates.estimate)."""
    s = grid_samples(spec, rhos, n_sequences, rng, method=method, drift=drift)
    return GridMC(rhos=s.rhos, objective=estimate(s.energy), mass=estimate(s.mass),
                  drift=estimate(s.drift) if drift else None, method=method)


def objective_mc(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
                 method: str = "reduced") -> GridEstimate:
    """J(q) = E ||f_q(X)||^2 at every grid point, shape (r,), with its covariance across the grid."""
    return grid_mc(spec, rhos, n_sequences, rng, method=method).objective


def mass_mc(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator, *,
            method: str = "reduced") -> GridEstimate:
    """The attention masses E[sum_{i in c} a_i] per component, shape (r, C), with their covariance."""
    return grid_mc(spec, rhos, n_sequences, rng, method=method).mass
