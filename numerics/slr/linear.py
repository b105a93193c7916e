r"""The linear baseline of Paper C: least squares on samples and its test risk on fresh samples.

A linear predictor is f(X) = <w, F(X)> (+ c with ``intercept``) with features
  * ``features="full"``: F(X) = vec(X_1, ..., X_L) in R^{L d} (every linear function of the sequence);
  * ``features="pooled"``: F(X) = sum_l X_l in R^d. Exchangeable reduction: the law of (X, Y) is invariant under
    permutations of the tokens, so the population least-squares solution in the full class can be taken symmetric,
    w_1 = ... = w_L (average any minimiser over permutations: the risk is convex), i.e. it lies in the pooled class.
    The two classes have the same population optimum; on n samples the pooled fit has L times fewer parameters.
Least squares: w_n = argmin_w sum_i (Y_i - <w, F(X_i)>)^2, from the normal equations G w = b with G = sum F F^T and
b = sum F Y accumulated in chunks (memory O(p^2), p = number of features), solved by a Cholesky factorisation (a
least-squares solve of the normal equations when G is singular). Test risk: the mean of (Y - f(X))^2 over n_test
fresh tasks, standard error sd / sqrt(n_test). Its excess over the population optimum is O(p / n) (estimation error).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from attnverify.numerics.slr.model import SLRModel, TaskSampler, generator, integer, real, sample_tasks, sampler, targets

_BATCH_ELEMENTS = 4_000_000
FEATURES = ("full", "pooled")


def least_squares(F: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """argmin_w |y - F w|^2 + ridge |w|^2 for F (n, p), y (n,): the coefficients w (p,)."""
    F, y = np.asarray(F, dtype=float), np.asarray(y, dtype=float)
    if F.ndim != 2 or y.shape != (F.shape[0],):
        raise ValueError(f"F must be (n, p) and y (n,), got {F.shape} and {y.shape}")
    if not (np.all(np.isfinite(F)) and np.all(np.isfinite(y))):
        raise ValueError("F and y must be finite")
    return _solve(F.T @ F, F.T @ y, _ridge(ridge))


def _ridge(ridge) -> float:
    r = real(ridge, "ridge")
    if r < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    return r


def _solver(G: np.ndarray, ridge: float):
    """b -> (G + ridge I)^{-1} b, the matrix factored once (Cholesky; least squares where it is not positive
    definite)."""
    A = G + ridge * np.eye(G.shape[0])
    try:
        factor = scipy.linalg.cho_factor(A)
    except np.linalg.LinAlgError:
        return lambda b: np.linalg.lstsq(A, b, rcond=None)[0]
    return lambda b: scipy.linalg.cho_solve(factor, b)


def _solve(G: np.ndarray, b: np.ndarray, ridge: float) -> np.ndarray:
    return _solver(G, ridge)(b)


def linear_features(X: np.ndarray, features: str = "full", intercept: bool = False) -> np.ndarray:
    """Feature matrix (n, p) of tokens X (n, L, d): vec X (p = L d) or sum_l X_l (p = d), and a column of ones last
    with ``intercept``."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, L, d), got {X.shape}")
    if features not in FEATURES:
        raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
    F = X.reshape(X.shape[0], -1) if features == "full" else X.sum(axis=1)
    return np.hstack([F, np.ones((F.shape[0], 1))]) if intercept else F


@dataclass(frozen=True)
class LinearBaseline:
    """Least-squares linear predictor and its test risk: coef (p,) (intercept last when fitted), the feature kind,
    n_train, test_risk +- test_risk_se over n_test fresh tasks, and ``fit_rounding``: the risk the solve's rounding
    adds, delta^T G delta / n_train with delta the correction of one step of iterative refinement (G delta = b - G
    coef, the residual in float64): the normal equations square the condition number, and where the exact risk is 0
    (a noise-free linear target) this is all the measured risk is."""

    coef: np.ndarray
    features: str
    intercept: bool
    n_train: int
    test_risk: float
    test_risk_se: float
    n_test: int
    fit_rounding: float = 0.0


def linear_baseline(model: SLRModel, k_star: np.ndarray, v_star: np.ndarray, n_train: int, n_test: int,
                    rng: np.random.Generator, features: str = "full", intercept: bool = False,
                    ridge: float = 0.0, *, sample: TaskSampler = sample_tasks) -> LinearBaseline:
    """Fit least squares on n_train model tasks (chunked normal equations) and estimate its risk on n_test fresh
    tasks (module docstring); the tasks are drawn by ``sample`` (the model's sampler by default)."""
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    ks, vs = targets(k_star, v_star, model.d)
    if ks.ndim != 1:
        raise ValueError(f"k_star must have shape (d,), got {ks.shape}")
    if features not in FEATURES:
        raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
    if not isinstance(intercept, (bool, np.bool_)):
        raise ValueError(f"intercept must be a bool, got {type(intercept).__name__}")
    n_train, n_test = integer(n_train, "n_train", 1), integer(n_test, "n_test", 2)
    rng, ridge, sample = generator(rng), _ridge(ridge), sampler(sample)
    p = (model.L * model.d if features == "full" else model.d) + bool(intercept)
    if p * p > 2e8:
        raise ValueError(f"too many features for the normal equations: p = {p} (p^2 > 2e8)")
    batch = max(1, _BATCH_ELEMENTS // max(model.L * model.d, p))
    G = np.zeros((p, p))
    b = np.zeros(p)
    for start in range(0, n_train, batch):
        X, Y, _ = sample(model, ks, vs, min(batch, n_train - start), rng)
        F = linear_features(X, features, intercept)
        G += F.T @ F
        b += F.T @ Y
    solve = _solver(G, ridge)
    coef = solve(b)
    delta = solve(b - G @ coef)                      # one step of iterative refinement, the factor reused
    rounding = max(0.0, float(delta @ G @ delta)) / n_train
    err = np.empty(n_test)
    for start in range(0, n_test, batch):
        m = min(batch, n_test - start)
        X, Y, _ = sample(model, ks, vs, m, rng)
        err[start:start + m] = (Y - linear_features(X, features, intercept) @ coef) ** 2
    return LinearBaseline(coef=coef, features=features, intercept=bool(intercept), n_train=n_train,
                          test_risk=float(err.mean()), test_risk_se=float(err.std(ddof=1) / np.sqrt(n_test)),
                          n_test=n_test, fit_rounding=rounding)
