r"""Projected SGD for Paper C: a fresh batch of b tasks per step, exact gradient of the empirical loss, batched runs.

Empirical loss of a batch (X^i, Y^i), i = 1..b: l(k, v) = (1/b) sum_i (Y^i - T_{k,v}(X^i))^2, T = sum_l erf(lam p_l) q_l
with p_l = <X_l, k>, q_l = <X_l, v>. Since d/dk erf(lam <x, k>) = (2 lam / sqrt(pi)) exp(-lam^2 <x, k>^2) x,
    grad_k l = sum_{i,l} alpha_il X^i_l,  alpha_il = -(2/b) r_i (2 lam / sqrt(pi)) exp(-lam^2 p_il^2) q_il,
    grad_v l = sum_{i,l} beta_il X^i_l,   beta_il  = -(2/b) r_i erf(lam p_il),                  r_i = Y^i - T(X^i),
and E grad l = grad R (the population gradient). The step is that of ``slr_pgd``: tangent parts, k <- (k - h g_k) /
|k - h g_k|, the same for v, with lam_t = lam0 (/ (1 + 1e-4 t) with the schedule).

Two implementations with the same law:
  * ``sgd_reference`` (NumPy): draws every token in R^d and applies the formulas above (``empirical_loss_grad``).
  * ``sgd`` (numba, the paper-profile path). The coefficients alpha, beta, r depend on the tokens only through their
    coordinates in E = span(k*, v*, k, v); write X_l = m_l + s_l (B z_l + w_l), with B (d x 4) an orthonormal basis of
    E built by Gram-Schmidt from (k*, v*, k, v), z_l ~ N(0, I_4), w_l ~ N(0, P) with P = I - B B^T independent of z_l,
    m_l in E (a k* at J0, else 0) and s_l = gamma at J0, else 1. Then
        grad_k l = B (sum alpha_l (B^T m_l + s_l z_l)) + sum alpha_l s_l w_l,  and likewise for v with beta,
    and, given the coefficients, (sum alpha s w, sum beta s w) is Gaussian with covariance [[A, C], [C, D]] (x) P,
    A = sum alpha^2 s^2, C = sum alpha beta s^2, D = sum beta^2 s^2. It is drawn exactly as
        (sqrt(A) P g_1,  (C / sqrt(A)) P g_1 + sqrt(D - C^2 / A) P g_2),   g_1, g_2 ~ N(0, I_d),
    so a step needs 4 b L + b + 2 d Gaussians instead of b L d + b: the chain has the same law as the reference.
    When k (or v) lies within 1e-8 of the span of the earlier basis vectors, the basis is completed by a coordinate
    vector instead (the dropped component is < 1e-8).
Randomness: each run has its own streams (``rng.spawn``): the same seed gives the same numbers, and a run's
trajectory does not depend on the other runs or on the chunking.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.special import erf

from attnverify.numerics.slr.model import (SLRModel, distance_to_manifold, generator, integer, overlaps, positive,
                                           targets, vectors)
from attnverify.numerics.slr.pgd import lam_schedule

_FLAGS = {"reassoc", "nsz", "contract"}
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
BASIS_TOL = 1e-8
CHUNK_ELEMENTS = 2_000_000          # pre-drawn Gaussians per chunk (all runs): ~16 MB


# ---------------------------------------------------------------------------------------------------------------
# the empirical loss and its gradient on explicit tokens (reference)
# ---------------------------------------------------------------------------------------------------------------
def empirical_loss_grad(X: np.ndarray, Y: np.ndarray, k: np.ndarray, v: np.ndarray, lam: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loss (1/b) sum_i (Y_i - T(X_i))^2 and its Euclidean gradients in k and v (module docstring).

    X (..., b, L, d), Y (..., b), k and v (..., d): returns loss (...), grad_k (..., d), grad_v (..., d)."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    k, v = np.asarray(k, dtype=float), np.asarray(v, dtype=float)
    if X.ndim < 3 or Y.shape != X.shape[:-2] or k.shape != X.shape[:-3] + X.shape[-1:] or v.shape != k.shape:
        raise ValueError(f"X (..., b, L, d), Y (..., b), k and v (..., d) do not match: X {X.shape}, Y {Y.shape}, "
                         f"k {k.shape}, v {v.shape}")
    b = X.shape[-3]
    p = np.einsum("...bld,...d->...bl", X, k)
    q = np.einsum("...bld,...d->...bl", X, v)
    e = erf(lam * p)
    r = Y - np.sum(e * q, axis=-1)
    alpha = (-2.0 / b) * r[..., None] * (lam * _TWO_OVER_SQRT_PI) * np.exp(-(lam * p) ** 2) * q
    beta = (-2.0 / b) * r[..., None] * e
    return (np.mean(r * r, axis=-1), np.einsum("...bl,...bld->...d", alpha, X),
            np.einsum("...bl,...bld->...d", beta, X))


#: loss_grad(X, Y, k, v, lam) -> (loss, grad_k, grad_v): the batch loss and its Euclidean gradients
LossGrad = Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class SGDPath:
    """SGD record at steps ``step`` (every record_every steps, plus 0 and n_steps), state before that step.

    step (n_rec,), lam (n_rec,); overlaps (n_runs, n_rec, 5) (kappa, nu, theta, eta, rho); distance (n_runs, n_rec)
    to M; batch_loss (n_runs, n_rec): the empirical loss of that step's batch (NaN at n_steps, no batch drawn);
    k, v (n_runs, d) after the last step."""

    step: np.ndarray
    lam: np.ndarray
    overlaps: np.ndarray
    distance: np.ndarray
    batch_loss: np.ndarray
    k: np.ndarray
    v: np.ndarray


def _check(model, k0, v0, k_star, v_star, lam0, step, n_steps, batch, rng, schedule, record_every):
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    k = np.array(vectors(k0, "k0", model.d), dtype=float, order="C", ndmin=2)
    v = np.array(vectors(v0, "v0", model.d), dtype=float, order="C", ndmin=2)
    if k.shape != v.shape:
        raise ValueError(f"k0 and v0 must have the same shape, got {k.shape} and {v.shape}")
    ks, vs = targets(k_star, v_star, model.d)
    if ks.ndim == 2 and ks.shape[0] != k.shape[0]:
        raise ValueError(f"k_star has {ks.shape[0]} rows but there are {k.shape[0]} runs")
    ks = np.array(np.broadcast_to(ks, k.shape), order="C")          # a writable copy: one compiled signature
    vs = np.array(np.broadcast_to(vs, k.shape), order="C")
    if not isinstance(schedule, (bool, np.bool_)):
        raise ValueError(f"schedule must be a bool, got {type(schedule).__name__}")
    lams = lam_schedule(lam0, integer(n_steps, "n_steps", 0), bool(schedule))
    return (k, v, ks, vs, lams, positive(step, "step"), integer(batch, "batch", 1), generator(rng),
            integer(record_every, "record_every", 1))


def _record_steps(n_steps: int, every: int) -> np.ndarray:
    return np.unique(np.append(np.arange(0, n_steps + 1, every), n_steps))


# ---------------------------------------------------------------------------------------------------------------
# reference: explicit tokens in R^d (NumPy)
# ---------------------------------------------------------------------------------------------------------------
def sgd_reference(model: SLRModel, k0: np.ndarray, v0: np.ndarray, k_star: np.ndarray, v_star: np.ndarray, *,
                  lam0: float, step: float, n_steps: int, batch: int, rng: np.random.Generator,
                  schedule: bool = False, record_every: int = 100,
                  loss_grad: LossGrad = empirical_loss_grad) -> SGDPath:
    """Projected SGD drawing every token of every batch in R^d (n_runs b L d Gaussians per step): the definition,
    for small d and cross-checks of ``sgd``. Same arguments and record as ``sgd``; ``loss_grad`` is the batch loss
    and its gradients (:func:`empirical_loss_grad` by default)."""
    k, v, ks, vs, lams, h, b, rng, every = _check(model, k0, v0, k_star, v_star, lam0, step, n_steps, batch, rng,
                                                  schedule, record_every)
    if not callable(loss_grad):
        raise ValueError(f"loss_grad must be callable, got {type(loss_grad).__name__}")
    n, d, L = k.shape[0], model.d, model.L
    rec = _record_steps(n_steps, every)
    ov_rec = np.empty((n, rec.size, 5))
    loss_rec = np.full((n, rec.size), np.nan)
    rows = np.arange(n)[:, None]
    cols = np.arange(b)[None, :]
    j = 0
    for t in range(n_steps + 1):
        if t == rec[j]:
            ov_rec[:, j] = overlaps(k, v, ks, vs)
        if t == n_steps:
            break
        X = rng.standard_normal((n, b, L, d))
        J0 = rng.integers(0, L, size=(n, b))
        X[rows, cols, J0] *= model.gamma
        X[rows, cols, J0] += model.amplitude * ks[:, None, :]
        Y = np.einsum("nbd,nd->nb", X[rows, cols, J0], vs) + model.eps * rng.standard_normal((n, b))
        loss, gk, gv = loss_grad(X, Y, k, v, lams[t])
        if t == rec[j]:
            loss_rec[:, j] = loss
            j += 1
        gk -= np.sum(gk * k, axis=1, keepdims=True) * k
        gv -= np.sum(gv * v, axis=1, keepdims=True) * v
        k = k - h * gk
        v = v - h * gv
        k /= np.linalg.norm(k, axis=1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    return SGDPath(step=rec, lam=lams[rec], overlaps=ov_rec, distance=distance_to_manifold(ov_rec),
                   batch_loss=loss_rec, k=k, v=v)


# ---------------------------------------------------------------------------------------------------------------
# fast path: tokens through their coordinates in span(k*, v*, k, v) (numba)
# ---------------------------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=_FLAGS)
def _orthonormalise(Q, m, x, d, res, coef):  # pragma: no cover - compiled
    """Q[m] <- x minus its projection on Q[0..m-1] (twice), normalised; coef <- coefficients of x on Q[0..m] (0 after).
    When the remainder is below BASIS_TOL, Q[m] is the first coordinate vector with a remainder > 1/2 instead
    (and x's remainder, < BASIS_TOL, is dropped). res is a work buffer of length d."""
    coef[:] = 0.0
    res[:] = x
    for _ in range(2):
        for i in range(m):
            c = 0.0
            for j in range(d):
                c += res[j] * Q[i, j]
            coef[i] += c
            for j in range(d):
                res[j] -= c * Q[i, j]
    nrm = 0.0
    for j in range(d):
        nrm += res[j] * res[j]
    nrm = math.sqrt(nrm)
    if nrm > BASIS_TOL:
        for j in range(d):
            Q[m, j] = res[j] / nrm
        coef[m] = nrm
        return
    for e in range(d):                      # completion by a coordinate vector (degenerate span)
        res[:] = 0.0
        res[e] = 1.0
        for _ in range(2):
            for i in range(m):
                c = 0.0
                for j in range(d):
                    c += res[j] * Q[i, j]
                for j in range(d):
                    res[j] -= c * Q[i, j]
        r2 = 0.0
        for j in range(d):
            r2 += res[j] * res[j]
        if r2 > 0.25:
            r = math.sqrt(r2)
            for j in range(d):
                Q[m, j] = res[j] / r
            return


@njit(cache=True, fastmath=_FLAGS)
def _sgd_chunk(k, v, ks, vs, noise, J, lams, h, b, L, gamma, a, eps, ov_out, loss_out):  # pragma: no cover
    """Runs every run through noise.shape[1] steps in place (module docstring). noise (R, S, 4bL + b + 2d),
    J (R, S, b), lams (S,); ov_out (R, S, 5) and loss_out (R, S) receive the overlaps and batch loss before each
    step."""
    R, d = k.shape
    S = noise.shape[1]
    Q = np.empty((4, d))
    C = np.empty((b, L, 4))
    pk = np.empty((b, L))
    pv = np.empty((b, L))
    ev = np.empty((b, L))
    res = np.empty(b)
    work = np.empty(d)
    kc = np.empty(4)
    vc = np.empty(4)
    gk4 = np.empty(4)
    gv4 = np.empty(4)
    p1 = np.empty(4)
    p2 = np.empty(4)
    for r in range(R):
        for s in range(S):
            lam = lams[s]
            # overlaps of the current state
            o1 = 0.0
            o2 = 0.0
            o3 = 0.0
            o4 = 0.0
            o5 = 0.0
            for j in range(d):
                o1 += k[r, j] * ks[r, j]
                o2 += v[r, j] * vs[r, j]
                o3 += v[r, j] * ks[r, j]
                o4 += k[r, j] * vs[r, j]
                o5 += k[r, j] * v[r, j]
            ov_out[r, s, 0] = o1
            ov_out[r, s, 1] = o2
            ov_out[r, s, 2] = o3
            ov_out[r, s, 3] = o4
            ov_out[r, s, 4] = o5
            # orthonormal basis of span(k*, v*, k, v) and the coordinates of k, v in it
            for j in range(d):
                Q[0, j] = ks[r, j]
                Q[1, j] = vs[r, j]
            _orthonormalise(Q, 2, k[r], d, work, kc)
            _orthonormalise(Q, 3, v[r], d, work, vc)
            # the batch, through token coordinates z (4 per token)
            base = 0
            for i in range(b):
                T = 0.0
                for l in range(L):
                    sig = gamma if l == J[r, s, i] else 1.0
                    for c in range(4):
                        C[i, l, c] = sig * noise[r, s, base + c]
                    if l == J[r, s, i]:
                        C[i, l, 0] += a
                    base += 4
                    p = kc[0] * C[i, l, 0] + kc[1] * C[i, l, 1] + kc[2] * C[i, l, 2] + kc[3] * C[i, l, 3]
                    q = vc[0] * C[i, l, 0] + vc[1] * C[i, l, 1] + vc[2] * C[i, l, 2] + vc[3] * C[i, l, 3]
                    e = math.erf(lam * p)
                    pk[i, l] = p
                    pv[i, l] = q
                    ev[i, l] = e
                    T += e * q
                res[i] = C[i, J[r, s, i], 1] + eps * noise[r, s, 4 * b * L + i] - T
            loss = 0.0
            gk4[:] = 0.0
            gv4[:] = 0.0
            A = 0.0
            Cab = 0.0
            D = 0.0
            for i in range(b):
                loss += res[i] * res[i]
                for l in range(L):
                    s2 = gamma * gamma if l == J[r, s, i] else 1.0
                    al = (-2.0 / b) * res[i] * lam * _TWO_OVER_SQRT_PI * math.exp(-(lam * pk[i, l]) ** 2) * pv[i, l]
                    be = (-2.0 / b) * res[i] * ev[i, l]
                    for c in range(4):
                        gk4[c] += al * C[i, l, c]
                        gv4[c] += be * C[i, l, c]
                    A += al * al * s2
                    Cab += al * be * s2
                    D += be * be * s2
            loss_out[r, s] = loss / b
            # orthogonal parts: (sqrt(A) P g1, C/sqrt(A) P g1 + sqrt(D - C^2/A) P g2)
            if A > 0.0:
                u1 = math.sqrt(A)
                w1 = Cab / u1
                w2 = math.sqrt(max(D - w1 * w1, 0.0))
            else:
                u1 = 0.0
                w1 = 0.0
                w2 = math.sqrt(D)
            g0 = 4 * b * L + b
            p1[:] = 0.0
            p2[:] = 0.0
            for c in range(4):
                for j in range(d):
                    p1[c] += noise[r, s, g0 + j] * Q[c, j]
                    p2[c] += noise[r, s, g0 + d + j] * Q[c, j]
            # <grad_k, k> = gk4 . kc and <grad_v, v> = gv4 . vc (the orthogonal parts are orthogonal to k and v)
            ak = gk4[0] * kc[0] + gk4[1] * kc[1] + gk4[2] * kc[2] + gk4[3] * kc[3]
            av = gv4[0] * vc[0] + gv4[1] * vc[1] + gv4[2] * vc[2] + gv4[3] * vc[3]
            nk = 0.0
            nv = 0.0
            for j in range(d):
                g1 = noise[r, s, g0 + j]
                g2 = noise[r, s, g0 + d + j]
                q1 = g1
                q2 = g2
                gkj = 0.0
                gvj = 0.0
                for c in range(4):
                    q1 -= p1[c] * Q[c, j]
                    q2 -= p2[c] * Q[c, j]
                    gkj += gk4[c] * Q[c, j]
                    gvj += gv4[c] * Q[c, j]
                gkj += u1 * q1
                gvj += w1 * q1 + w2 * q2
                kn = k[r, j] - h * (gkj - ak * k[r, j])
                vn = v[r, j] - h * (gvj - av * v[r, j])
                k[r, j] = kn
                v[r, j] = vn
                nk += kn * kn
                nv += vn * vn
            sk = 1.0 / math.sqrt(nk)
            sv = 1.0 / math.sqrt(nv)
            for j in range(d):
                k[r, j] *= sk
                v[r, j] *= sv


def sgd(model: SLRModel, k0: np.ndarray, v0: np.ndarray, k_star: np.ndarray, v_star: np.ndarray, *, lam0: float,
        step: float, n_steps: int, batch: int, rng: np.random.Generator, schedule: bool = False,
        record_every: int = 100) -> SGDPath:
    """Projected SGD of n_runs runs from (k0, v0) ((n_runs, d) unit rows), targets k_star, v_star ((d,) or (n_runs, d),
    orthonormal), batch b tasks per step, step h, n_steps steps, lam_t = lam0 (/(1 + 1e-4 t) with ``schedule``).
    Needs d >= 5 (an orthogonal complement of the 4-D span); the law is that of ``sgd_reference``."""
    k, v, ks, vs, lams, h, b, rng, every = _check(model, k0, v0, k_star, v_star, lam0, step, n_steps, batch, rng,
                                                  schedule, record_every)
    if model.d < 5:
        raise ValueError(f"d must be >= 5 for sgd (use sgd_reference), got {model.d}")
    n, d, L = k.shape[0], model.d, model.L
    width = 4 * b * L + b + 2 * d
    streams = [(g.spawn(1)[0], g) for g in rng.spawn(n)]           # per run: (Gaussians, locations)
    S = max(1, min(n_steps, CHUNK_ELEMENTS // (n * width)))
    rec = _record_steps(n_steps, every)
    ov_rec = np.empty((n, rec.size, 5))
    loss_rec = np.full((n, rec.size), np.nan)
    for start in range(0, n_steps, S):
        m = min(S, n_steps - start)
        noise = np.empty((n, m, width))
        J = np.empty((n, m, b), dtype=np.int64)
        for r, (gz, gj) in enumerate(streams):
            gz.standard_normal(out=noise[r])
            J[r] = gj.integers(0, L, size=(m, b))
        ov_all = np.empty((n, m, 5))
        loss_all = np.empty((n, m))
        _sgd_chunk(k, v, ks, vs, noise, J, lams[start:start + m], h, b, L, model.gamma, model.amplitude, model.eps,
                   ov_all, loss_all)
        sel = (rec >= start) & (rec < start + m)
        ov_rec[:, sel] = ov_all[:, rec[sel] - start]
        loss_rec[:, sel] = loss_all[:, rec[sel] - start]
    ov_rec[:, -1] = overlaps(k, v, ks, vs)                         # the state after the last step
    return SGDPath(step=rec, lam=lams[rec], overlaps=ov_rec, distance=distance_to_manifold(ov_rec),
                   batch_loss=loss_rec, k=k, v=v)
