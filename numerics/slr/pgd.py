"""Exact-gradient projected gradient descent on S^{d-1} x S^{d-1} for Paper C's risk, batched over runs, float64.

The risk R(k, v) depends on (k, v) only through the overlaps o = (kappa, nu, theta, eta, rho) = (<k,k*>, <v,v*>,
<v,k*>, <k,v*>, <k,v>); the caller supplies its partial derivatives R_o = dR/do (``grad_overlaps``). By the chain rule
the Euclidean gradients are
    grad_k R = R_kappa k* + R_eta v* + R_rho v,        grad_v R = R_nu v* + R_theta k* + R_rho k.
Riemannian step on each factor (simultaneously, from the same (k, v)): the tangent part
    g_k = grad_k R - <grad_k R, k> k,   <grad_k R, k> = R_kappa kappa + R_eta eta + R_rho rho   (|k| = 1),
    g_v = grad_v R - <grad_v R, v> v,   <grad_v R, v> = R_nu nu + R_theta theta + R_rho rho,
then k <- (k - h g_k) / |k - h g_k|, v <- (v - h g_v) / |v - h g_v|. The temperature is lam_t = lam0 or, with the
schedule, lam0 / (1 + 1e-4 t) at step t = 0, 1, .... The overlaps of the new (k, v) are computed from the vectors
(in the same pass as the step), never propagated by a formula, so the run is the full d-dimensional dynamics.

The step is a fused numba kernel (one pass over each run's k, v, k*, v*; ``kernel="numba"``, :func:`step_numba`), or
the same algebra in NumPy (``kernel="numpy"``, :func:`step_numpy`), or any function with their signature passed as
``kernel`` (a self-test hands the simulator a wrong step); ``grad_overlaps`` is called once per step with all runs
(n_runs, 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit

from attnverify.numerics.slr.model import distance_to_manifold, integer, lam_value, overlaps, positive, targets, vectors

SCHEDULE_RATE = 1e-4
GradOverlaps = Callable[[np.ndarray, float], np.ndarray]
RiskOverlaps = Callable[[np.ndarray, float], np.ndarray]
#: kernel(k, v, k*, v*, ov, G, h, gnorm): one projected step of every run, in place (:func:`step_numba`)
StepKernel = Callable[..., None]


def lam_schedule(lam0: float, n_steps: int, schedule: bool) -> np.ndarray:
    """lam_t for t = 0..n_steps: lam0 / (1 + 1e-4 t) with the schedule, lam0 without; shape (n_steps + 1,)."""
    lam0 = lam_value(lam0, "lam0")
    t = np.arange(integer(n_steps, "n_steps", 0) + 1, dtype=float)
    return lam0 / (1.0 + SCHEDULE_RATE * t) if schedule else np.full(t.shape, lam0)


# reductions may be reassociated (SIMD sums) and a*b+c contracted to FMA: changes results at rounding level only
_FLAGS = {"reassoc", "nsz", "contract"}


@njit(cache=True, fastmath=_FLAGS)
def step_numba(k, v, ks, vs, ov, G, h, gnorm):  # pragma: no cover - compiled
    """In place: one projected step of every run (module docstring); ov <- overlaps of the new (k, v);
    gnorm <- sqrt(|g_k|^2 + |g_v|^2) at the old (k, v)."""
    n, d = k.shape
    for r in range(n):
        kap, nu, th, et, rh = ov[r, 0], ov[r, 1], ov[r, 2], ov[r, 3], ov[r, 4]
        gk, gn, gt, ge, gr = G[r, 0], G[r, 1], G[r, 2], G[r, 3], G[r, 4]
        ak = gk * kap + ge * et + gr * rh
        av = gn * nu + gt * th + gr * rh
        nk = 0.0
        nv = 0.0
        tk2 = 0.0
        tv2 = 0.0
        o1 = 0.0
        o2 = 0.0
        o3 = 0.0
        o4 = 0.0
        o5 = 0.0
        for i in range(d):
            ki, vi, ksi, vsi = k[r, i], v[r, i], ks[r, i], vs[r, i]
            tk = gk * ksi + ge * vsi + gr * vi - ak * ki
            tv = gn * vsi + gt * ksi + gr * ki - av * vi
            kn = ki - h * tk
            vn = vi - h * tv
            k[r, i] = kn
            v[r, i] = vn
            nk += kn * kn
            nv += vn * vn
            tk2 += tk * tk
            tv2 += tv * tv
            o1 += kn * ksi
            o2 += vn * vsi
            o3 += vn * ksi
            o4 += kn * vsi
            o5 += kn * vn
        sk = 1.0 / math.sqrt(nk)
        sv = 1.0 / math.sqrt(nv)
        for i in range(d):
            k[r, i] *= sk
            v[r, i] *= sv
        ov[r, 0] = o1 * sk
        ov[r, 1] = o2 * sv
        ov[r, 2] = o3 * sv
        ov[r, 3] = o4 * sk
        ov[r, 4] = o5 * sk * sv
        gnorm[r] = math.sqrt(tk2 + tv2)


def step_numpy(k, v, ks, vs, ov, G, h, gnorm) -> None:
    """The same step as :func:`step_numba` with NumPy array operations (in place)."""
    c = G.T[:, :, None]                                   # R_kappa, R_nu, R_theta, R_eta, R_rho as (5, n, 1)
    ak = (G[:, 0] * ov[:, 0] + G[:, 3] * ov[:, 3] + G[:, 4] * ov[:, 4])[:, None]
    av = (G[:, 1] * ov[:, 1] + G[:, 2] * ov[:, 2] + G[:, 4] * ov[:, 4])[:, None]
    tk = c[0] * ks + c[3] * vs + c[4] * v - ak * k
    tv = c[1] * vs + c[2] * ks + c[4] * k - av * v
    gnorm[:] = np.sqrt(np.einsum("nd,nd->n", tk, tk) + np.einsum("nd,nd->n", tv, tv))
    k -= h * tk
    v -= h * tv
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ov[:] = overlaps(k, v, ks, vs)


#: the named kernels
KERNELS: dict[str, StepKernel] = {"numba": step_numba, "numpy": step_numpy}


@dataclass(frozen=True)
class PGDPath:
    """A batched PGD record at steps ``step`` (every record_every steps, plus 0 and n_steps), state before that step.

    step (n_rec,), lam (n_rec,) = lam_t; overlaps (n_runs, n_rec, 5) in (kappa, nu, theta, eta, rho) order; distance
    (n_runs, n_rec) to M; grad_norm (n_runs, n_rec) = sqrt(|g_k|^2 + |g_v|^2) (Riemannian gradient); risk
    (n_runs, n_rec) from the caller's ``risk`` (None without); k, v (n_runs, d) after the last step."""

    step: np.ndarray
    lam: np.ndarray
    overlaps: np.ndarray
    distance: np.ndarray
    grad_norm: np.ndarray
    risk: np.ndarray | None
    k: np.ndarray
    v: np.ndarray


def _call(fn, ov, lam, name, shape) -> np.ndarray:
    out = np.asarray(fn(ov.copy(), float(lam)), dtype=float)
    if out.shape != shape:
        raise ValueError(f"{name} must return shape {shape}, got {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} returned non-finite values at lam = {lam:g}")
    return out


def pgd(k0: np.ndarray, v0: np.ndarray, k_star: np.ndarray, v_star: np.ndarray, grad_overlaps: GradOverlaps, *,
        lam0: float, step: float, n_steps: int, schedule: bool = False, record_every: int = 100,
        risk: RiskOverlaps | None = None, kernel: str | StepKernel = "numba") -> PGDPath:
    """Projected gradient descent from (k0, v0), each (n_runs, d) unit rows, towards the targets k_star, v_star
    ((d,) shared or (n_runs, d) per run). grad_overlaps(o (n_runs, 5), lam) -> dR/do (n_runs, 5); risk(o, lam) ->
    (n_runs,) is optional and only recorded. step h > 0; n_steps >= 0 steps; lam_t as in ``lam_schedule``.
    ``kernel``: "numba", "numpy" (module docstring) or a step function of the same signature."""
    k = np.array(vectors(k0, "k0"), dtype=float, order="C", ndmin=2)
    v = np.array(vectors(v0, "v0", k.shape[1]), dtype=float, order="C", ndmin=2)
    if k.shape != v.shape:
        raise ValueError(f"k0 and v0 must have the same shape, got {k.shape} and {v.shape}")
    ks, vs = targets(k_star, v_star, k.shape[1])
    if ks.ndim == 2 and ks.shape[0] != k.shape[0]:
        raise ValueError(f"k_star has {ks.shape[0]} rows but there are {k.shape[0]} runs")
    ks = np.array(np.broadcast_to(ks, k.shape), order="C")          # a writable copy: one compiled signature
    vs = np.array(np.broadcast_to(vs, k.shape), order="C")
    if not callable(grad_overlaps):
        raise ValueError("grad_overlaps must be callable")
    if risk is not None and not callable(risk):
        raise ValueError("risk must be callable or None")
    h = positive(step, "step")
    n_steps = integer(n_steps, "n_steps", 0)
    every = integer(record_every, "record_every", 1)
    do_step = KERNELS.get(kernel) if isinstance(kernel, str) else kernel if callable(kernel) else None
    if do_step is None:
        raise ValueError(f"kernel must be one of {tuple(KERNELS)} or a step function, got {kernel!r}")
    if not isinstance(schedule, (bool, np.bool_)):
        raise ValueError(f"schedule must be a bool, got {type(schedule).__name__}")
    lams = lam_schedule(lam0, n_steps, bool(schedule))

    rec = np.unique(np.append(np.arange(0, n_steps + 1, every), n_steps))
    n = k.shape[0]
    ov_rec = np.empty((n, rec.size, 5))
    gn_rec = np.empty((n, rec.size))
    risk_rec = np.empty((n, rec.size)) if risk is not None else None
    ov = overlaps(k, v, ks, vs)
    gnorm = np.empty(n)
    j = 0
    for t in range(n_steps + 1):
        G = _call(grad_overlaps, ov, lams[t], "grad_overlaps", (n, 5))
        if t < n_steps and t != rec[j]:
            do_step(k, v, ks, vs, ov, G, h, gnorm)
            continue
        ov_rec[:, j] = ov
        if risk_rec is not None:
            risk_rec[:, j] = _call(risk, ov, lams[t], "risk", (n,))
        if t < n_steps:
            do_step(k, v, ks, vs, ov, G, h, gnorm)
        else:                                             # gradient norm at the final state, state untouched
            do_step(k.copy(), v.copy(), ks, vs, ov.copy(), G, 0.0, gnorm)
        gn_rec[:, j] = gnorm
        j += 1
    return PGDPath(step=rec, lam=lams[rec], overlaps=ov_rec, distance=distance_to_manifold(ov_rec), grad_norm=gn_rec,
                   risk=risk_rec, k=k, v=v)
