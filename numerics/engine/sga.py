"""Projected stochastic gradient ascent (SGA) on the sphere for the engine's trained query, many runs batched.

Each run starts at q_0 = sum_j rho0_j e_j + sqrt(1 - |rho0|^2) u, u a unit vector orthogonal to e_1..e_k (uniform on
that sphere, or e_{k+1}), and at every step k draws a fresh sequence X_k (full d coordinates) and moves

    g_k = (I - q_k q_k^T) grad_q ||f_{q_k}(X_k)||^2,   q_{k+1} = (q_k + eta_k g_k) / |q_k + eta_k g_k|,

with eta_k = a / (k + b) (Robbins-Monro: sum eta = inf, sum eta^2 < inf) and the hand-derived gradient of
attnverify.numerics.engine.gradient. Since g_k is orthogonal to q_k, |q_k + eta_k g_k| = sqrt(1 + eta_k^2 |g_k|^2),
so to first order in eta the overlaps move by eta_k times the drift of attnverify.numerics.engine.drift: the mean
path follows the reduced ODE in the time t_k = sum_{i < k} eta_i. The overlaps <q_k, e_j> are recorded at the
requested steps (q_k before step k's move; step n_steps is the final query).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.engine.attention import overlap_grid, require_finite
from attnverify.numerics.engine.gradient import energy_gradient, tangent
from attnverify.numerics.engine.montecarlo import batch_size
from attnverify.numerics.engine.sampling import check_count, check_rng, check_spec, sample_full
from attnverify.numerics.engine.spec import MixtureSpec

MAX_STEP = 1e6      # largest first step a / b accepted: beyond it q + eta g is rounding noise


@dataclass(frozen=True, eq=False)
class SGAPaths:
    """SGA runs recorded at steps ``step`` (n_rec,), ODE times ``time`` = sum_{i < step} eta_i (n_rec,), the overlaps
    ``overlaps`` (runs, n_rec, k) of q at those steps, and the final queries ``q_final`` (runs, d)."""

    step: np.ndarray
    time: np.ndarray
    overlaps: np.ndarray
    q_final: np.ndarray


def step_sizes(n_steps: int, a: float, b: float) -> np.ndarray:
    """eta_k = a / (k + b), k = 0..n_steps - 1 (a, b finite > 0, a / b <= MAX_STEP)."""
    n_steps = check_count(n_steps, "n_steps", 1)
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v) \
                or v <= 0:
            raise ValueError(f"step-size {name} must be finite and > 0, got {v!r}")
    if a / b > MAX_STEP:
        raise ValueError(f"step-size: the first step a / b = {a / b:.3g} exceeds {MAX_STEP:g}")
    return a / (np.arange(n_steps) + b)


def steps_at_times(times: object, n_steps: int, a: float, b: float) -> np.ndarray:
    """For ODE times t, the first step index k <= n_steps with sum_{i < k} eta_i >= t (n_steps when none)."""
    cum = np.concatenate(([0.0], np.cumsum(step_sizes(n_steps, a, b))))
    t = np.atleast_1d(np.asarray(times, dtype=float))
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError(f"times must be finite and >= 0, got {t.tolist()}")
    return np.minimum(np.searchsorted(cum, t, side="left"), n_steps)


def initial_queries(spec: MixtureSpec, rho0: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """Unit queries (runs, d) with overlaps rho0 (runs, k); the orthogonal part along a uniform random unit vector of
    span(e_1..e_k)^perp (``rng`` given) or along e_{k+1} (``rng`` None)."""
    runs, k = rho0.shape
    u = np.zeros((runs, spec.d))
    if rng is None:
        u[:, k] = 1.0
    else:
        u[:, k:] = rng.standard_normal((runs, spec.d - k))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
    s = np.sqrt(np.clip(1.0 - np.einsum("rk,rk->r", rho0, rho0), 0.0, None))
    q = s[:, None] * u
    q[:, :k] = rho0
    return q


def _record_steps(record_steps: object, n_steps: int) -> np.ndarray:
    if record_steps is None:
        return np.arange(n_steps + 1)
    rec = np.unique(np.asarray(record_steps))
    if rec.ndim != 1 or rec.size == 0 or not np.issubdtype(rec.dtype, np.integer) or rec[0] < 0 \
            or rec[-1] > n_steps:
        raise ValueError(f"record_steps must be integers in [0, n_steps = {n_steps}], got {record_steps!r}")
    return rec


def projected_sga(spec: MixtureSpec, rho0: object, n_steps: int, a: float, b: float, rng: np.random.Generator, *,
                  record_steps: object = None, random_complement: bool = True) -> SGAPaths:
    """Run one projected-SGA chain per row of rho0 ((runs, k) initial overlaps; 1-D for k = 1) for n_steps steps with
    eta_k = a / (k + b), all runs batched; record the overlaps at ``record_steps`` (default every step, 0..n_steps).
    Module docstring for the update."""
    spec = check_spec(spec, "trained")
    rng = check_rng(rng)
    rho0 = overlap_grid(rho0, spec.k)
    eta = step_sizes(n_steps, a, b)
    rec = _record_steps(record_steps, n_steps)
    time = np.concatenate(([0.0], np.cumsum(eta)))[rec]
    q = initial_queries(spec, rho0, rng if random_complement else None)
    runs, k = rho0.shape
    chunk = batch_size(spec, spec.d)
    out = np.empty((runs, rec.size, k))
    j = 0
    for step in range(n_steps + 1):
        if j < rec.size and rec[j] == step:
            out[:, j] = q[:, :k]
            j += 1
        if step == n_steps:
            break
        g = np.empty_like(q)
        for r0 in range(0, runs, chunk):
            rows = slice(r0, min(runs, r0 + chunk))
            X = sample_full(spec, rows.stop - rows.start, rng)
            g[rows] = tangent(energy_gradient(X, q[rows], spec)[1], q[rows])
        q = q + eta[step] * g
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        require_finite(q, f"the SGA query at step {step + 1}")
    return SGAPaths(step=rec, time=time, overlaps=out, q_final=q)
