"""Projected stochastic gradient ascent (SGA) on the sphere for Paper A's objective, batched over runs.

Gradient (exact, no autodiff): with s = beta X q, a = softmax(s), f = sum_i a_i x_i, da_i/dq = beta a_i (x_i - f), so
    grad_q ||f||^2 = 2 beta sum_i a_i (<x_i, f> - ||f||^2) x_i            (valid for any q in R^d).
Step (sga_step): g = (I - q q^T) grad (tangent part), q <- (q + eta_k g) / |q + eta_k g| = (q + eta_k g) / sqrt(1 +
eta_k^2 ||g||^2) (g is orthogonal to q),
with a fresh sequence X_k per step and eta_k = a / (k + b) (Robbins-Monro: sum eta = inf, sum eta^2 < inf).
The alignment then moves by rho_{k+1} = (rho_k + eta <xi, g>) / sqrt(1 + eta^2 ||g||^2).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnverify.numerics.signal.model import (SignalModel, check_rhos, check_rng, query_at, readout_grid, sample_tokens,
                                   softmax_weights)


MAX_STEP = 1e6   # largest step size accepted: beyond it the normalised step is pure rounding noise


def objective_gradient(X: np.ndarray, q: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For sequences X (n, L, d) and queries q (n, d): ||f_q(X)||^2 (n,), its Euclidean gradient in q (n, d), weights a (n, L)."""
    a = softmax_weights(beta * (X @ q[:, :, None])[:, :, 0])      # (n, L)
    f = (a[:, None, :] @ X)[:, 0, :]                               # (n, d)
    ff = np.einsum("nd,nd->n", f, f)
    c = (X @ f[:, :, None])[:, :, 0]                               # <x_i, f>, (n, L)
    c -= ff[:, None]
    c *= a
    grad = (2.0 * beta) * (c[:, None, :] @ X)[:, 0, :]
    return ff, grad, a


def tangent(grad: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(I - q q^T / |q|^2) grad along the last axis (q broadcasts against grad)."""
    return grad - (np.sum(grad * q, axis=-1, keepdims=True) / np.sum(q * q, axis=-1, keepdims=True)) * q


def sga_step(q: np.ndarray, grad: np.ndarray, eta: float, *,
             tangent: Callable[[np.ndarray, np.ndarray], np.ndarray] = tangent) -> tuple[np.ndarray, np.ndarray]:
    """One projected SGA step on the sphere: g = (I - q q^T) grad, q' = (q + eta g) / |q + eta g|.

    For a unit q, |q + eta g| = sqrt(1 + eta^2 |g|^2) since g is orthogonal to q. Returns (q', |g|^2); q broadcasts
    against grad along the leading axes. Both the SGA runs and the one-step drift estimator use this step.
    ``tangent(grad, q)``: the projection onto the tangent space (:func:`tangent`).
    """
    g = tangent(grad, q)
    step = q + eta * g
    return step / np.linalg.norm(step, axis=-1, keepdims=True), np.sum(g * g, axis=-1)


@dataclass(frozen=True)
class SGAPath:
    """SGA record at steps ``step`` (every ``record_every`` steps, plus step 0 and the last step).

    time[j] = sum_{i < step[j]} eta_i (ODE time); rho, nuisance_mass and grad_energy are (n_runs, n_rec):
    rho = <q_k, xi>; nuisance_mass = attention mass on the L - R nuisance tokens of step k's fresh sequence at q_k;
    grad_energy = ||g_k||^2 of that step's tangent gradient. q_final = q after the last step, (n_runs, d).
    """

    step: np.ndarray
    time: np.ndarray
    rho: np.ndarray
    nuisance_mass: np.ndarray
    grad_energy: np.ndarray
    q_final: np.ndarray


def step_sizes(n_steps: int, a: float, b: float) -> np.ndarray:
    """eta_k = a / (k + b) for k = 0..n_steps-1 (a > 0, b > 0)."""
    if not (np.isfinite(a) and a > 0):
        raise ValueError(f"step-size scale a must be finite and > 0, got {a}")
    if not (np.isfinite(b) and b > 0):
        raise ValueError(f"step-size offset b must be finite and > 0, got {b}")
    if a / b > MAX_STEP:
        raise ValueError(f"first step size a/b = {a / b:.3g} exceeds {MAX_STEP:g}: q + eta g would lose all precision")
    return a / (np.arange(n_steps) + b)


def projected_sga(model: SignalModel, rho0: np.ndarray, n_steps: int, a: float, b: float,
                  rng: np.random.Generator, *, record_every: int = 1, dtype=np.float64,
                  tangent: Callable[[np.ndarray, np.ndarray], np.ndarray] = tangent) -> SGAPath:
    """Run len(rho0) independent projected-SGA chains for n_steps steps; q_0 = query_at(rho0, d, rng).
    ``tangent``: the tangent projection of each step (:func:`sga_step`)."""
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rng = check_rng(rng)
    rho0 = check_rhos(rho0)
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps must be an integer >= 1, got {n_steps!r}")
    if isinstance(record_every, bool) or not isinstance(record_every, (int, np.integer)) or record_every < 1:
        raise ValueError(f"record_every must be an integer >= 1, got {record_every!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    eta = step_sizes(n_steps, a, b)
    times = np.concatenate(([0.0], np.cumsum(eta)))
    rec = np.unique(np.append(np.arange(0, n_steps + 1, record_every), n_steps))
    n_runs = rho0.size
    rho_rec = np.empty((n_runs, rec.size))
    mass_rec = np.empty_like(rho_rec)
    energy_rec = np.empty_like(rho_rec)
    q = query_at(rho0, model.d, rng)
    j = 0
    for k in range(n_steps + 1):
        recorded = k == rec[j]
        if k == n_steps and not recorded:
            break
        X = sample_tokens(model, n_runs, rng, dtype)
        _, grad, att = objective_gradient(X, q.astype(dtype, copy=False), model.beta)
        q_next, energy = sga_step(q, grad.astype(np.float64), eta[k] if k < n_steps else 0.0, tangent=tangent)
        if recorded:
            rho_rec[:, j] = q[:, 0]
            mass_rec[:, j] = att[:, model.R:].sum(axis=1)
            energy_rec[:, j] = energy
            j += 1
        q = q_next
    return SGAPath(step=rec, time=times[rec], rho=rho_rec, nuisance_mass=mass_rec, grad_energy=energy_rec,
                   q_final=q)


def sga_drift(model: SignalModel, rho: np.ndarray, eta: float, n_samples: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One SGA step from q = rho e_1 + sqrt(1-rho^2) e_2: mean increment E[rho' - rho], its standard error, E||g||^2.

    rho' = (rho + eta <xi, g>) / sqrt(1 + eta^2 ||g||^2) with g the tangent gradient on a fresh sequence (the same
    sga_step as projected_sga); the
    n_samples sequences are shared across the rho grid (common random numbers); errors are sd / sqrt(n).
    """
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rho = check_rhos(rho)
    rng = check_rng(rng)
    if not (np.isfinite(eta) and 0 < eta <= MAX_STEP):
        raise ValueError(f"eta must be finite, > 0 and <= {MAX_STEP:g}, got {eta}")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    Q = query_at(rho, model.d)                                        # (r, d)
    batch = max(1, 2_000_000 // (model.L * max(model.d, rho.size)))
    inc = np.empty((n_samples, rho.size))
    energy = np.empty_like(inc)
    for start in range(0, n_samples, batch):
        n = min(batch, n_samples - start)
        X = sample_tokens(model, n, rng)                              # (n, L, d)
        att, f = readout_grid(X, Q, model.beta)                       # (n, L, r), (n, r, d)
        ff = np.einsum("nrd,nrd->nr", f, f)
        c = X @ np.swapaxes(f, 1, 2)                                  # <x_i, f_r>, (n, L, r)
        c -= ff[:, None, :]
        c *= att
        grad = (2.0 * model.beta) * (np.swapaxes(c, 1, 2) @ X)       # (n, r, d)
        q_next, e = sga_step(Q[None], grad, eta)
        inc[start:start + n] = q_next[:, :, 0] - rho
        energy[start:start + n] = e
    return inc.mean(axis=0), inc.std(axis=0, ddof=1) / np.sqrt(n_samples), energy.mean(axis=0)
