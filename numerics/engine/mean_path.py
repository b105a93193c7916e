r"""The mean path of projected SGA on the sphere to second order in the step, in k overlaps (moment closure), and the
moments of the stochastic step that it needs, measured by Monte Carlo.

One step of :func:`attnverify.numerics.engine.sga.projected_sga` moves the overlaps rho_j = <q, e_j> to

    rho' = (rho + eta y) / sqrt(1 + eta^2 |g|^2),     y_j = <e_j, g>,  g = (I - q q^T) grad_q ||f_q(X)||^2,

with E[y | q] = F(rho) (the drift: attnverify.numerics.engine.drift), so that
E[rho' | rho] = rho + eta F(rho) - (eta^2 / 2) rho G(rho) + O(eta^3), G = E|g|^2.  Over runs, with the mean m_k and
covariance V_k of rho_k and third moments dropped,

    m_{k+1} = m_k + eta_k (F(m_k) + (1/2) sum_{ij} d_i d_j F(m_k) V_k[i, j]) - (eta_k^2 / 2) m_k G_k,
    V_{k+1} = (I + eta_k DF(m_k)) V_k (I + eta_k DF(m_k))^T + eta_k^2 S_k,           m_0 = rho_0, V_0 = 0,

S_k = Cov y the step's covariance: the ODE rho' = F(rho) in the time t_k = sum_{i < k} eta_i (Euler) plus its
O(eta) corrections, with a remainder O(eta^2) per unit time.  DF and the second derivatives are central differences
of F (step H_DIFF), all from one call of F on the stencil; F is an argument (the caller's field, vectorised over
leading axes: this module never reads a closed form).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnverify.numerics.engine.attention import overlap_grid, query_from_overlaps
from attnverify.numerics.engine.gradient import energy_gradient, tangent
from attnverify.numerics.engine.montecarlo import batch_size
from attnverify.numerics.engine.sampling import check_count, check_rng, check_spec, sample_full
from attnverify.numerics.engine.spec import MixtureSpec

H_DIFF = 1e-3       # step of the central differences of F (first and second derivatives)


def step_moments(spec: MixtureSpec, rhos: object, n_sequences: int, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo moments of one SGA step at each overlap point (r, k) (the query's complement along e_{k+1}; the
    complement of the tokens is isotropic, so its direction does not matter): the mean drift E y (r, k), the
    covariance S = Cov y (r, k, k) and G = E|g|^2 (r,), from ``n_sequences`` full sequences per point."""
    spec = check_spec(spec, "trained")
    rng = check_rng(rng)
    n = check_count(n_sequences, "n_sequences", 2)
    rhos = overlap_grid(rhos, spec.k)
    Q = query_from_overlaps(rhos, spec.d)
    k = spec.k
    mean, cov, energy = np.empty((len(Q), k)), np.empty((len(Q), k, k)), np.empty(len(Q))
    chunk = batch_size(spec, spec.d)
    for i, q in enumerate(Q):
        ys, gs = [], []
        for start in range(0, n, chunk):
            X = sample_full(spec, min(chunk, n - start), rng)
            g = tangent(energy_gradient(X, q, spec)[1], q)
            ys.append(g[:, :k])
            gs.append(np.einsum("nd,nd->n", g, g))
        y = np.concatenate(ys)
        mean[i], cov[i], energy[i] = y.mean(axis=0), np.cov(y, rowvar=False).reshape(k, k), np.concatenate(gs).mean()
    return mean, cov, energy


def _derivatives(F: Callable[[np.ndarray], np.ndarray], m: np.ndarray, scale: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scale * (F(m), DF(m) (k, k) with DF[i, j] = d_j F_i, D2F(m) (k, k, k) with D2F[i, j, l] = d_j d_l F_i), from
    one call of F on the stencil: m, m +- h e_j, and m +- h e_j +- h e_l (j < l)."""
    k, h = m.size, H_DIFF
    e = np.eye(k) * h
    pairs = [(j, l) for j in range(k) for l in range(j + 1, k)]
    points = [m, *(m + e[j] for j in range(k)), *(m - e[j] for j in range(k)),
              *(m + s * e[j] + t * e[l] for j, l in pairs for s, t in ((1, 1), (1, -1), (-1, 1), (-1, -1)))]
    values = np.asarray(F(np.array(points)), dtype=float).reshape(len(points), k)
    f0, fp, fm = values[0], values[1:k + 1], values[k + 1:2 * k + 1]        # fp, fm: (k: shift j, k: component)
    D = ((fp - fm) / (2 * h)).T
    D2 = np.empty((k, k, k))
    for j in range(k):
        D2[:, j, j] = (fp[j] - 2 * f0 + fm[j]) / h ** 2
    for i, (j, l) in enumerate(pairs):
        pp, pm, mp, mm = values[2 * k + 1 + 4 * i: 2 * k + 5 + 4 * i]
        D2[:, j, l] = D2[:, l, j] = (pp - pm - mp + mm) / (4 * h * h)
    return scale * f0, scale * D, scale * D2


def jacobians(F: Callable[[np.ndarray], np.ndarray], points: object) -> np.ndarray:
    """DF at each of ``points`` (K, k): (K, k, k) with D[K, i, j] = d_j F_i, by central differences (step H_DIFF),
    one call of F on every point's stencil."""
    m = np.asarray(points, dtype=float)
    k = m.shape[-1]
    e = np.eye(k) * H_DIFF
    stencil = np.concatenate([m[:, None, :] + e[None], m[:, None, :] - e[None]], axis=1)      # (K, 2k, k)
    values = np.asarray(F(stencil), dtype=float).reshape(len(m), 2 * k, k)
    return np.swapaxes((values[:, :k] - values[:, k:]) / (2 * H_DIFF), 1, 2)


def step_norms(F: Callable[[np.ndarray], np.ndarray], path: object, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Along a path m (at least K points, (K', k)) with steps ``eta`` (K,), from one Jacobian DF(m_k) per step:

    * the stiffness eta_k ||DF(m_k)||_2 (K,), the expansion parameter of the mean path in the step: its O(eta) terms
      are the first of a series whose ratio is of this size (the Euler step's linear part is I + eta DF), so their
      next order, the O(eta^2) remainder, is estimated as the O(eta) terms times it;
    * the gains ||I + eta_k DF(m_k)||_2 (K,): how much one Euler step can enlarge an error of the path (at most
      1 + eta_k ||DF||, below 1 where the flow contracts)."""
    eta = np.asarray(eta, dtype=float)
    D = jacobians(F, np.asarray(path, dtype=float)[:len(eta)])
    stiff = eta * np.linalg.norm(D, ord=2, axis=(1, 2))
    gains = np.linalg.norm(np.eye(D.shape[-1])[None] + eta[:, None, None] * D, ord=2, axis=(1, 2))
    return stiff, gains


def second_order_mean(F: Callable[[np.ndarray], np.ndarray], rho0: object, eta: np.ndarray, S: np.ndarray,
                      G: np.ndarray, scale: float = 1.0, second_order: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The mean m_k (K + 1, k) and covariance V_k (K + 1, k, k) of the overlaps over SGA runs from rho0 (k,) with
    steps ``eta`` (K,), to second order in the step (module docstring), for the field scale * F (F: (k,) -> (k,)).
    S (K, k, k) and G (K,) are the step's covariance and energy at each step (measured: :func:`step_moments`).
    F is vectorised over leading axes: points (..., k) -> values (..., k).
    ``second_order`` False: the plain Euler path of the ODE (V = 0, no G term)."""
    m = np.array(rho0, dtype=float).reshape(-1)
    k = m.size
    V = np.zeros((k, k))
    ms, Vs = [m.copy()], [V.copy()]
    I = np.eye(k)
    for i, e in enumerate(eta):
        if second_order:
            f, D, D2 = _derivatives(F, m, scale)
            step = f + 0.5 * np.einsum("ijl,jl->i", D2, V)
            m_next = m + e * step - 0.5 * e * e * m * G[i]
            A = I + e * D
            V = A @ V @ A.T + e * e * S[i]
        else:
            m_next = m + e * scale * np.asarray(F(m), dtype=float)
        m = m_next
        ms.append(m.copy())
        Vs.append(V.copy())
    return np.array(ms), np.array(Vs)
