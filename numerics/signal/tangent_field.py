"""The mean xi-component of the tangent gradient, E<xi, g>(rho), by conditional Monte Carlo with control variates.

By rotational invariance take xi = e_1 and q = rho e_1 + s e_2 (s = sqrt(1 - rho^2)). Write a token as its in-plane
coordinates (u_i, v_i) = (<x_i, e_1>, <x_i, e_2>) plus the out-of-plane part w_i ~ N(0, sigma^2 I_{d-2}), independent
of the in-plane coordinates and of the scores s_i = beta (rho u_i + s v_i). With a = softmax(s) and f = sum_i a_i x_i,
    grad_q ||f||^2 = 2 beta sum_i a_i (<x_i, f> - ||f||^2) x_i,   g = (I - q q^T) grad,   <xi, g> its e_1-component.

Conditional expectation over the out-of-plane parts (exact Gaussian moments, m = (d - 2) sigma^2):
    E[<w_i, sum_j a_j w_j> | plane] = a_i m,     E[||sum_j a_j w_j||^2 | plane] = m sum_j a_j^2,
and the in-plane components of grad are linear in these, so
    Y := E[<xi, g> | plane] = e_1-component of (I - q q^T) 2 beta sum_i a_i c_i (u_i, v_i),
    c_i = u_i f_u + v_i f_v + m a_i - (f_u^2 + f_v^2) - m sum_j a_j^2,
has E Y = E <xi, g> exactly (Rao-Blackwellisation: only 2 of the d coordinates are sampled).

Control variates (known means, exact Gaussian tilting, per group: the R informative tokens, shift c = eps theta,
and the L - R nuisance tokens, c = 0): with M(c) = exp(beta c rho + beta^2 sigma^2 / 2) = E e^{s_i},
    C = mean_i e^{s_i} / M(c) * {1, u_i, v_i, u_i^2, u_i v_i, v_i^2}
has mean {1, mu_u, mu_v, sigma^2 + mu_u^2, mu_u mu_v, sigma^2 + mu_v^2} with (mu_u, mu_v) = (c, 0) + beta sigma^2 (rho, s)
(under the tilt e^{s}/M the in-plane noise is N(beta sigma^2 q, sigma^2 I)). Y is a smooth function of these tilted
sums up to O(1/L) (f and the weighted second moments are their ratios), so regressing Y on the 12 centred C
removes its first-order fluctuation; the regression estimator's intercept is unbiased up to O(1/n) (estimated
coefficients). The sequences are shared across the rho grid (common random numbers); the covariance of the
estimates across rho comes from the residuals.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnverify.numerics.signal.sga import tangent
from attnverify.numerics.signal.model import SignalModel, check_rhos, check_rng

N_CV = 12                   # control variates per rho: 6 tilted moments x 2 token groups
_BATCH_ELEMENTS = 2_000_000  # float64 entries of the (n, L, r) work arrays


def plane_samples(model: SignalModel, rhos: np.ndarray, n: int, rng: np.random.Generator, *,
                  tangent: Callable[[np.ndarray, np.ndarray], np.ndarray] = tangent) -> tuple[np.ndarray, np.ndarray]:
    """For n fresh sequences (in-plane coordinates only): Y (n, r) = E[<xi, g> | plane] at each rho, and the centred
    control variates C (n, r, 12) (exact mean zero). Same sequences for every rho. ``tangent``: the tangent
    projection (:func:`attnverify.numerics.signal.sga.tangent`)."""
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rhos = check_rhos(rhos)
    rng = check_rng(rng)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    R, L, beta, sig = model.R, model.L, model.beta, model.sigma
    s = np.sqrt(1.0 - rhos**2)
    Q = np.stack([rhos, s], axis=1)                                   # (r, 2)
    m = (model.d - 2) * sig**2
    batch = max(1, _BATCH_ELEMENTS // (L * rhos.size))
    Y = np.empty((n, rhos.size))
    C = np.empty((n, rhos.size, N_CV))
    for start in range(0, n, batch):
        nb = min(batch, n - start)
        U = sig * rng.standard_normal((nb, L))
        V = sig * rng.standard_normal((nb, L))
        if model.sign == "fixed":
            eps = np.ones(nb)
        else:
            eps = rng.choice(np.array([-1.0, 1.0]), size=nb)
        U[:, :R] += (model.theta * eps)[:, None]
        S = beta * (U[:, :, None] * rhos + V[:, :, None] * s)          # scores (nb, L, r)
        A = S - S.max(axis=1, keepdims=True)
        np.exp(A, out=A)
        A /= A.sum(axis=1, keepdims=True)
        fu = np.einsum("nlr,nl->nr", A, U)
        fv = np.einsum("nlr,nl->nr", A, V)
        c = U[:, :, None] * fu[:, None, :] + V[:, :, None] * fv[:, None, :] + m * A
        c -= (fu * fu + fv * fv + m * np.einsum("nlr,nlr->nr", A, A))[:, None, :]
        c *= A
        grad = (2.0 * beta) * np.stack([np.einsum("nlr,nl->nr", c, U), np.einsum("nlr,nl->nr", c, V)], axis=-1)
        Y[start:start + nb] = tangent(grad, Q[None])[..., 0]
        for g, (lo, hi) in enumerate(((0, R), (R, L))):
            shift = model.theta * eps if g == 0 else np.zeros(nb)
            mu_u = shift[:, None] + beta * sig**2 * rhos                 # (nb, r)
            mu_v = np.broadcast_to(beta * sig**2 * s, mu_u.shape)
            W = np.exp(S[:, lo:hi, :] - (beta * shift[:, None, None] * rhos + beta**2 * sig**2 / 2))
            u, v = U[:, lo:hi, None], V[:, lo:hi, None]
            for j, (w, mean) in enumerate(((1.0, 1.0), (u, mu_u), (v, mu_v), (u * u, sig**2 + mu_u**2),
                                           (u * v, mu_u * mu_v), (v * v, sig**2 + mu_v**2))):
                C[start:start + nb, :, 6 * g + j] = (W * w).mean(axis=1) - mean
    return Y, C


def plane_moments(model: SignalModel, rhos: np.ndarray, n: int, rng: np.random.Generator, *,
                  tangent: Callable[[np.ndarray, np.ndarray], np.ndarray] = tangent) -> dict:
    """Sufficient statistics of :func:`plane_samples` for pooling across tasks: n, the mean of Z and the centred sum
    of squares sum (Z - mean)(Z - mean)^T, Z = (Y_1..Y_r, C_1..C_r) flattened (length r (1 + 12)). Centred per task
    (not raw sums of Z Z^T), so that a variance far below the squared mean survives the pooling: at theta = 250,
    beta = 0.001 the drift's variance is 1e-8 of its squared mean."""
    Y, C = plane_samples(model, rhos, n, rng, tangent=tangent)
    Z = np.concatenate([Y, C.reshape(n, -1)], axis=1)
    mean = Z.mean(axis=0)
    D = Z - mean
    return {"n": n, "mean": mean, "centred": D.T @ D}


#: below this fraction of the plain variance the regression's residual variance (the difference of nearly equal
#: pooled moments) is not resolved in float64: the controls explain the sample to within rounding, and the plain
#: mean is used at that rho instead (measured: 1e-8 at theta = 250, beta = 0.001, where the difference came out
#: negative; at the defaults the ratio is 0.003-0.005)
MIN_RESIDUAL_RATIO = 1e-6


def cv_estimate(parts: list[dict], r: int) -> dict:
    """Pool :func:`plane_moments` parts and return the control-variate estimate of E<xi, g> at each of the r rho:
    ``mean`` (r,), ``cov`` (r, r) (covariance of the estimates, from the regression residuals), the plain sample
    mean ``plain_mean`` and its standard error ``plain_se``, and ``variance_ratio`` (residual / plain variance).
    The parts' centred moments are pooled exactly (Chan et al.'s parallel update). Where the residual variance is
    below MIN_RESIDUAL_RATIO of the plain one (not resolved in float64) that rho takes the plain mean, with its
    covariances against the other estimates, and ``plain_at`` lists it."""
    n = sum(p["n"] for p in parts)
    if n < 2 * (N_CV + 1):
        raise ValueError(f"the control-variate regression needs at least {2 * (N_CV + 1)} samples, got {n}")
    mu = sum(p["n"] * p["mean"] for p in parts) / n
    cov = sum(p["centred"] + p["n"] * np.outer(p["mean"] - mu, p["mean"] - mu) for p in parts) / (n - 1)
    idx_c = [r + j * N_CV + np.arange(N_CV) for j in range(r)]
    coef = [np.linalg.solve(cov[np.ix_(ic, ic)], cov[ic, j]) for j, ic in enumerate(idx_c)]
    plain_var = np.diag(cov)[:r]
    res_var = np.array([cov[j, j] - coef[j] @ cov[idx_c[j], j] for j in range(r)])
    plain = ~(res_var >= MIN_RESIDUAL_RATIO * plain_var) | (plain_var <= 0)   # no variance: nothing to reduce
    for j in np.nonzero(plain)[0]:
        coef[j] = np.zeros(N_CV)                 # the plain mean: no control at this rho
    # estimate_j = mean(Y_j) - b_j . mean(C_j) (C has known mean zero); residual e_j = Y_j - b_j . C_j
    mean = np.array([mu[j] - coef[j] @ mu[ic] for j, ic in enumerate(idx_c)])
    res_cov = np.empty((r, r))
    for j in range(r):
        for k in range(r):
            res_cov[j, k] = (cov[j, k] - coef[j] @ cov[idx_c[j], k] - coef[k] @ cov[idx_c[k], j]
                             + coef[j] @ cov[np.ix_(idx_c[j], idx_c[k])] @ coef[k])
    res_cov *= (n - 1) / (n - N_CV - 1)          # degrees of freedom of the regression
    return {"n": n, "mean": mean, "cov": res_cov / n, "se": np.sqrt(np.diag(res_cov) / n),
            "plain_mean": mu[:r], "plain_se": np.sqrt(plain_var / n),
            "variance_ratio": np.divide(np.diag(res_cov), plain_var, out=np.ones(r), where=plain_var > 0),
            "plain_at": np.nonzero(plain)[0].tolist()}


def tangent_gradient_moments(model: SignalModel, rhos: np.ndarray, n: int, rng: np.random.Generator, *,
                             tangent: Callable[[np.ndarray, np.ndarray], np.ndarray] = tangent
                             ) -> dict[str, np.ndarray]:
    """Full d-dimensional sampling at q = rho e_1 + sqrt(1 - rho^2) e_2 (same sequences for every rho): the mean
    and variance of y = <xi, g> and the mean of ||g||^2 (g the tangent gradient), with the standard errors of the
    mean of y and of ||g||^2 (sd / sqrt(n)). These are the ingredients of the O(eta) terms of SGA's mean path.
    ``tangent``: the tangent projection (:func:`attnverify.numerics.signal.sga.tangent`)."""
    from attnverify.numerics.signal.model import query_at, readout_grid, sample_tokens

    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rhos = check_rhos(rhos)
    rng = check_rng(rng)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    Q = query_at(rhos, model.d)
    batch = max(1, _BATCH_ELEMENTS // (model.L * max(model.d, rhos.size)))
    y = np.empty((n, rhos.size))
    e = np.empty_like(y)
    for start in range(0, n, batch):
        nb = min(batch, n - start)
        X = sample_tokens(model, nb, rng)
        att, f = readout_grid(X, Q, model.beta)
        ff = np.einsum("nrd,nrd->nr", f, f)
        c = X @ np.swapaxes(f, 1, 2)
        c -= ff[:, None, :]
        c *= att
        g = tangent((2.0 * model.beta) * (np.swapaxes(c, 1, 2) @ X), Q[None])
        y[start:start + nb] = g[..., 0]
        e[start:start + nb] = np.einsum("nrd,nrd->nr", g, g)
    return {"mean_y": y.mean(axis=0), "var_y": y.var(axis=0, ddof=1), "se_y": y.std(axis=0, ddof=1) / np.sqrt(n),
            "energy": e.mean(axis=0), "se_energy": e.std(axis=0, ddof=1) / np.sqrt(n)}
