"""Self-attention with token queries: the empirical attention map Gamma_{mu_n} on n i.i.d. tokens.

For tokens y_1..y_n (mu_n their empirical measure) and a query point x,

    Gamma_{mu_n}(x) = sum_j softmax_j(kappa <A x, y_j>) V y_j,     kappa = beta / tau,

and the outputs of the tokens themselves are Gamma_{mu_n}(y_i) (the sum over j includes j = i). Computed by the
project's fused log-space kernel (attnverify.numerics.kernel.dense_moments: m_i = sum_j w_ij v_j with
w_ij = softmax_j(beta s_ij), s_ij = <b_i, x_j>), with b_i = A x_i, x_j = y_j, v_j = V y_j and beta = kappa: every
exponent is shifted by its row maximum, so nothing overflows at any finite kappa. One kernel call per repetition.

Estimators over independent repetitions (each a fresh set of n tokens, attnverify.numerics.engine.sampling):
the attention map at fixed points, E[Gamma_{mu_n}(x)], and the first two moments of the push-forward of mu_n by
Gamma_{mu_n}, E[(1/n) sum_i Gamma(y_i)] and E[(1/n) sum_i Gamma(y_i) Gamma(y_i)^T]; each repetition gives one
i.i.d. sample, so standard errors come from the spread across repetitions.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnverify.numerics.engine.attention import require_finite
from attnverify.numerics.engine.estimates import GridEstimate, estimate
from attnverify.numerics.engine.sampling import check_count, check_rng, check_spec, sample_iid
from attnverify.numerics.engine.spec import MixtureSpec
from attnverify.numerics.kernel import dense_moments


@dataclass(frozen=True, eq=False)
class TokenSample:
    """``reps`` independent sets of n tokens ``tokens`` (reps, n, d) with their component ``labels`` (reps, n), and
    their outputs ``outputs`` (reps, n, d), outputs[r, i] = Gamma_{mu_n}(y_i) for the tokens of set r."""

    tokens: np.ndarray
    labels: np.ndarray
    outputs: np.ndarray


@dataclass(frozen=True, eq=False)
class PushforwardMoments:
    """Moments of Gamma_{mu_n}(y) for y drawn from mu_n: ``mean`` (d,) and ``second`` (d, d) = E[Gamma Gamma^T],
    estimated over ``reps`` repetitions of n tokens (each GridEstimate carries its covariance)."""

    mean: GridEstimate
    second: GridEstimate


def _points(value: object, d: int, name: str) -> np.ndarray:
    try:
        P = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (m, {d}), got {value!r}") from None
    if P.ndim == 1 and P.size == d:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != d or P.shape[0] < 1 or not np.all(np.isfinite(P)):
        raise ValueError(f"{name} must be finite of shape (m, {d}) with m >= 1, got shape {np.shape(value)}")
    return P


def attention_map(spec: MixtureSpec, tokens: object, points: object = None) -> np.ndarray:
    """Gamma_{mu_n}(x) for the token sets ``tokens`` ((n, d) or (reps, n, d)) at the query points ``points``
    ((m, d), the same for every set) or, when None, at each set's own tokens; shape (reps, m, d) (reps = 1 for a
    2-D ``tokens``)."""
    spec = check_spec(spec, "token")
    Y = np.array(tokens, dtype=float)
    if Y.ndim == 2:
        Y = Y[None]
    if Y.ndim != 3 or Y.shape[2] != spec.d or Y.shape[1] < 1 or not np.all(np.isfinite(Y)):
        raise ValueError(f"tokens must be finite of shape (n, {spec.d}) or (reps, n, {spec.d}), got {Y.shape}")
    P = None if points is None else _points(points, spec.d, "points")
    A, V, kappa = spec.matrix("A"), spec.matrix("V"), spec.attention.scale
    out = np.empty((Y.shape[0], Y.shape[1] if P is None else P.shape[0], spec.d))
    for r, y in enumerate(Y):
        x = y if P is None else P
        out[r] = dense_moments(x @ A.T, y, y @ V.T, kappa)
    return require_finite(out, "the self-attention outputs Gamma_{mu_n}")


def token_outputs(spec: MixtureSpec, n: int, reps: int, rng: np.random.Generator) -> TokenSample:
    """``reps`` sets of n i.i.d. tokens from the mixture and their outputs Gamma_{mu_n}(y_i)."""
    spec = check_spec(spec, "token")
    n, reps, rng = check_count(n, "n"), check_count(reps, "reps"), check_rng(rng)
    Y, labels = sample_iid(spec, n, reps, rng)
    return TokenSample(tokens=Y, labels=labels, outputs=attention_map(spec, Y))


def attention_map_mc(spec: MixtureSpec, points: object, n: int, reps: int,
                     rng: np.random.Generator) -> GridEstimate:
    """E[Gamma_{mu_n}(x)] at the points x ((m, d)) over reps >= 2 independent sets of n tokens, shape (m, d), with
    its covariance (the same token sets at every point: common random numbers)."""
    spec = check_spec(spec, "token")
    P = _points(points, spec.d, "points")
    n, reps, rng = check_count(n, "n"), check_count(reps, "reps", 2), check_rng(rng)
    samples = np.empty((reps, P.shape[0], spec.d))
    for r in range(reps):
        Y, _ = sample_iid(spec, n, 1, rng)
        samples[r] = attention_map(spec, Y, P)[0]
    return estimate(samples)


def pushforward_moments_mc(spec: MixtureSpec, n: int, reps: int, rng: np.random.Generator) -> PushforwardMoments:
    """The mean and second moment of Gamma_{mu_n}(y), y uniform over the n tokens, averaged over reps >= 2 sets."""
    spec = check_spec(spec, "token")
    n, reps, rng = check_count(n, "n"), check_count(reps, "reps", 2), check_rng(rng)
    first = np.empty((reps, spec.d))
    second = np.empty((reps, spec.d, spec.d))
    for r in range(reps):
        Y, _ = sample_iid(spec, n, 1, rng)
        G = attention_map(spec, Y)[0]
        first[r] = G.mean(axis=0)
        second[r] = G.T @ G / n
    return PushforwardMoments(mean=estimate(first), second=estimate(second))


@dataclass(frozen=True, eq=False)
class PooledMap:
    """The infinite-token map estimated from N pooled tokens: ``mean`` (m, d) = sum_j w_j V y_j / sum_j w_j with
    w_j = e^{kappa <A x, y_j>}, its delta-method standard error ``se`` (m, d) over the ``batches`` batches, and the
    effective number of tokens ``ess`` (m,) = (sum w)^2 / sum w^2 at each point."""

    mean: np.ndarray
    se: np.ndarray
    ess: np.ndarray
    n_tokens: int


def attention_map_pooled(spec: MixtureSpec, points: object, n: int, batches: int,
                         rng: np.random.Generator) -> PooledMap:
    """Gamma_mu(x) = E[e^{kappa <A x, y>} V y] / E[e^{kappa <A x, y>}] (y ~ mu) at the points x ((m, d)), as the ratio
    of the sums over N = n x batches i.i.d. tokens (one random sign per batch), in log-space: each batch keeps its
    largest exponent M_b and its sums D_b = sum e^{s - M_b}, N_b = sum e^{s - M_b} V y, rescaled to the overall
    maximum before they are added. The ratio's bias is O(1/N); its standard error is the delta method's over the
    batches, sqrt(B / (B - 1) sum_b (N_b - R D_b)^2) / sum_b D_b."""
    spec = check_spec(spec, "token")
    P = _points(points, spec.d, "points")
    n, batches, rng = check_count(n, "n"), check_count(batches, "batches", 2), check_rng(rng)
    A, V, kappa = spec.matrix("A"), spec.matrix("V"), spec.attention.scale
    B = P @ A.T                                                     # (m, d): scores s_j = kappa <B_x, y_j>
    tops = np.empty((batches, len(P)))
    Ds = np.empty((batches, len(P)))
    Ns = np.empty((batches, len(P), spec.d))
    W2 = np.empty((batches, len(P)))
    for b in range(batches):
        Y = sample_iid(spec, n, 1, rng)[0][0]
        s = kappa * (B @ Y.T)                                       # (m, n)
        tops[b] = s.max(axis=1)
        w = np.exp(s - tops[b][:, None])
        Ds[b], Ns[b], W2[b] = w.sum(axis=1), w @ (Y @ V.T), (w * w).sum(axis=1)
    scale = np.exp(tops - tops.max(axis=0))                         # (B, m), <= 1
    D, N = scale * Ds, scale[:, :, None] * Ns
    total = D.sum(axis=0)
    R = N.sum(axis=0) / total[:, None]
    resid = N - R[None] * D[:, :, None]
    se = np.sqrt(batches / (batches - 1) * (resid ** 2).sum(axis=0)) / total[:, None]
    ess = total ** 2 / (scale ** 2 * W2).sum(axis=0)
    return PooledMap(require_finite(R, "the pooled attention map"), se, ess, n * batches)


@dataclass(frozen=True, eq=False)
class PushforwardBatches:
    """Per batch b, the push-forward's moments measured at its own queries: ``mean`` (B, d), the average of the two
    token sets' maps over the queries, and ``cov`` (B, d, d), their symmetrised cross-covariance; ``ess``, the
    effective number of tokens of the first batch's first set, harmonic mean over its queries."""

    mean: np.ndarray
    cov: np.ndarray
    ess: float
    n_tokens: int


def pushforward_batches(spec: MixtureSpec, queries: int, n: int, batches: int,
                        rng: np.random.Generator) -> PushforwardBatches:
    """The mean and covariance of the push-forward (Gamma_mu)#mu, over ``batches`` independent batches: each draws
    ``queries`` points x ~ mu and two independent sets of n tokens Y1, Y2 ~ mu, and estimates Gamma_mu(x) on each set
    by its empirical map G_s(x) = Gamma_{mu_n}(x) (:func:`attention_map`: a ratio, relative bias O(1/ESS)). The
    batch's mean is the average of (G_1 + G_2)/2 over its queries; its covariance is the symmetrised
    cross-covariance (C_1^T C_2 + C_2^T C_1) / (2 (Q - 1)) of the centred maps, whose expectation is Cov Gamma(X) up
    to the ratio's bias: the two sets' own noises are independent given x, so they do not inflate it. ESS =
    (sum_j w_j)^2 / sum_j w_j^2 with w_j = e^{kappa <A x, y_j>} (log-space)."""
    spec = check_spec(spec, "token")
    queries, n = check_count(queries, "queries", 2), check_count(n, "n")
    batches, rng = check_count(batches, "batches", 2), check_rng(rng)
    A, kappa = spec.matrix("A"), spec.attention.scale
    means, covs, ess = np.empty((batches, spec.d)), np.empty((batches, spec.d, spec.d)), float("nan")
    for b in range(batches):
        X = sample_iid(spec, queries, 1, rng)[0][0]
        Y = sample_iid(spec, n, 2, rng)[0]
        G1, G2 = attention_map(spec, Y, X)
        C1, C2 = G1 - G1.mean(axis=0), G2 - G2.mean(axis=0)
        means[b] = (G1 + G2).mean(axis=0) / 2
        covs[b] = (C1.T @ C2 + C2.T @ C1) / (2 * (queries - 1))
        if b == 0:
            s = kappa * ((X @ A.T) @ Y[0].T)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            ess = float(1.0 / np.mean((w * w).sum(axis=1) / w.sum(axis=1) ** 2))     # harmonic mean of ESS
    return PushforwardBatches(require_finite(means, "the push-forward's mean"),
                              require_finite(covs, "the push-forward's covariance"), ess, n)


def sign_conditioned(spec: MixtureSpec, eps: float) -> MixtureSpec:
    """The model given the sequence's random sign eps = +-1: every ``rademacher`` component's mean times eps, no
    random sign left."""
    parts = tuple(replace(c, mean=eps * np.asarray(c.mean, dtype=float), rademacher=False)
                  if c.rademacher else c for c in spec.components)
    return replace(spec, components=parts)


def attention_map_sign_averaged(spec: MixtureSpec, points: object, n: int, batches: int,
                                rng: np.random.Generator) -> PooledMap:
    """E_eps Gamma_{mu_eps}(x): with a random sign per sequence shared by its ``rademacher`` components, the token
    law mu_eps of a sequence depends on eps, and each sequence's infinite-token map is Gamma_{mu_eps}; averaged over
    eps = +-1 (each with probability 1/2), it is (Gamma_{mu_+} + Gamma_{mu_-}) / 2, each term the pooled map of
    :func:`attention_map_pooled` from ``batches`` batches of ``n`` tokens of its own sign (independent, so the
    standard error is sqrt(se_+^2 + se_-^2) / 2; the effective number of tokens is the smaller). This is not the
    pooled map of tokens of mixed signs, which is the map of the sign-mixture law. Without a random sign it is
    :func:`attention_map_pooled`."""
    spec = check_spec(spec, "token")
    if not any(c.rademacher for c in spec.components):
        return attention_map_pooled(spec, points, n, batches, rng)
    plus, minus = (attention_map_pooled(sign_conditioned(spec, eps), points, n, batches, rng) for eps in (1.0, -1.0))
    return PooledMap((plus.mean + minus.mean) / 2, np.sqrt(plus.se ** 2 + minus.se ** 2) / 2,
                     np.minimum(plus.ess, minus.ess), plus.n_tokens + minus.n_tokens)

