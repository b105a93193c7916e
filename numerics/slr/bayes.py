r"""The Bayes predictor of Paper C and a Monte Carlo estimate of the Bayes risk R* = E (Y - E[Y | X])^2.

Posterior of the location. Given X, the tokens are independent with density N(x; a k*, gamma^2 I) at J0 and
N(x; 0, I) elsewhere, and J0 is uniform, so (Bayes' rule; the common factor prod_l N(X_l; 0, I) cancels)
    pi_l(X) = P(J0 = l | X) = softmax_l(s_l),   s_l = log N(X_l; a k*, gamma^2 I) - log N(X_l; 0, I)
            = |X_l|^2 / 2 - |X_l - a k*|^2 / (2 gamma^2) - d log gamma,
computed in log-space (the softmax subtracts max_l s_l; the constant -d log gamma cancels and is dropped).
Bayes predictor: E[Y | X] = sum_l pi_l(X) <X_l, v*> (xi has mean 0 and is independent of (X, J0)).

Bayes risk. R* = eps^2 + E Var(<X_J0, v*> | X) and, with w_l = <X_l, v*>,
    Var(<X_J0, v*> | X) = sum_l pi_l (w_l - E[Y | X])^2    (>= 0 term by term),
so R* - eps^2 is the mean of this posterior variance (the Rao-Blackwellised estimator: J0 and xi integrated out); the
direct estimator of R* is the mean of (Y - E[Y | X])^2. Both are reported with standard errors sd / sqrt(n).

Samplers (equal in law): ``method="full"`` draws the tokens in R^d (k*, v* drawn as in the model); ``method=
"reduced"`` uses that s_l and w_l depend on X_l only through u_l = <X_l, k*>, w_l and |P X_l|^2 (P the projection off
span(k*, v*)), where for a token of covariance sigma^2 I, |P X_l|^2 ~ sigma^2 chi^2_{d-2} independently of (u_l, w_l):
    s_l = (u_l^2 + w_l^2 + |P X_l|^2) / 2 - ((u_l - a)^2 + w_l^2 + |P X_l|^2) / (2 gamma^2).
Use it for large d (3 draws per token instead of d).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.numerics.slr.model import (SLRModel, TaskSampler, draw_targets, generator, integer, sample_tasks,
                                           sampler, targets, vectors)
from attnverify.numerics.softmax import softmax

_BATCH_ELEMENTS = 4_000_000
METHODS = ("full", "reduced")


def _model(model) -> SLRModel:
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    return model


def _tokens(X, d: int) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 3 or X.shape[2] != d:
        raise ValueError(f"X must have shape (n, L, {d}), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X has non-finite entries")
    return X


def posterior_weights(X: np.ndarray, model: SLRModel, k_star: np.ndarray) -> np.ndarray:
    """pi_l(X) = P(J0 = l | X), shape (n, L), for tokens X (n, L, d) (module docstring; log-space softmax)."""
    model = _model(model)
    X = _tokens(X, model.d)
    ks = vectors(k_star, "k_star", model.d)
    if ks.ndim != 1:
        raise ValueError(f"k_star must have shape (d,), got {ks.shape}")
    diff = X - model.amplitude * ks
    s = 0.5 * np.einsum("nld,nld->nl", X, X) - np.einsum("nld,nld->nl", diff, diff) / (2.0 * model.gamma ** 2)
    return softmax(s)


def bayes_prediction(X: np.ndarray, model: SLRModel, k_star: np.ndarray, v_star: np.ndarray) -> np.ndarray:
    """E[Y | X] = sum_l pi_l(X) <X_l, v*>, shape (n,)."""
    model = _model(model)
    ks, vs = targets(k_star, v_star, model.d)
    if ks.ndim != 1:
        raise ValueError(f"k_star must have shape (d,), got {ks.shape}")
    X = _tokens(X, model.d)
    return np.sum(posterior_weights(X, model, ks) * (X @ vs), axis=1)


@dataclass(frozen=True)
class BayesRisk:
    """Monte Carlo Bayes risk over n tasks: ``risk`` = mean (Y - E[Y|X])^2 and its ``risk_se``; ``excess`` = mean
    posterior variance of <X_J0, v*> (= R* - eps^2) and its ``excess_se``."""

    risk: float
    risk_se: float
    excess: float
    excess_se: float
    n: int


def _reduced_draw(model: SLRModel, m: int, rng: np.random.Generator):
    """(s, w, Y) for m tasks: log-likelihood ratios s (m, L), v*-coordinates w (m, L), targets Y (m,)."""
    L, a, g = model.L, model.amplitude, model.gamma
    J0 = rng.integers(0, L, size=m)
    rows = np.arange(m)
    sig = np.ones((m, L))
    sig[rows, J0] = g
    u = sig * rng.standard_normal((m, L))
    u[rows, J0] += a
    w = sig * rng.standard_normal((m, L))
    rest = sig ** 2 * rng.chisquare(model.d - 2, size=(m, L)) if model.d > 2 else np.zeros((m, L))
    sq = w * w + rest
    s = 0.5 * (u * u + sq) - ((u - a) ** 2 + sq) / (2.0 * g * g)
    Y = w[rows, J0] + model.eps * rng.standard_normal(m)
    return s, w, Y


def bayes_risk_mc(model: SLRModel, n_samples: int, rng: np.random.Generator, method: str = "reduced", *,
                  sample: TaskSampler = sample_tasks) -> BayesRisk:
    """Monte Carlo Bayes risk R* and R* - eps^2 with standard errors (module docstring). The Bayes risk does not
    depend on (k*, v*) (rotation invariance); ``method="full"`` draws them (tasks from ``sample``, the model's
    sampler by default), ``"reduced"`` does not need them."""
    model = _model(model)
    n = integer(n_samples, "n_samples", 2)
    rng = generator(rng)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    sample = sampler(sample)
    sq_err = np.empty(n)
    post_var = np.empty(n)
    if method == "full":
        ks, vs = draw_targets(model.d, rng)
    batch = max(1, _BATCH_ELEMENTS // (model.L * (model.d if method == "full" else 3)))
    for start in range(0, n, batch):
        m = min(batch, n - start)
        if method == "full":
            X, Y, _ = sample(model, ks, vs, m, rng)
            w = X @ vs
            pi = posterior_weights(X, model, ks)
        else:
            s, w, Y = _reduced_draw(model, m, rng)
            pi = softmax(s)
        pred = np.sum(pi * w, axis=1)
        sq_err[start:start + m] = (Y - pred) ** 2
        post_var[start:start + m] = np.sum(pi * (w - pred[:, None]) ** 2, axis=1)
    root = np.sqrt(n)
    return BayesRisk(risk=float(sq_err.mean()), risk_se=float(sq_err.std(ddof=1) / root),
                     excess=float(post_var.mean()), excess_se=float(post_var.std(ddof=1) / root), n=n)
