"""What Paper D's checks hand to its claims (typed findings), and the random problems the checks draw.

Problems (drawn from the check's own stream): A with N(0, scale^2/d) entries; V = I + N(0, 1/(4d)); Sigma =
G G^T / d + I/2 scaled by 0.1 (the protocol's 0.1) (positive definite, anisotropic); m with N(0, 1/4) entries. For the sphere, A is a
random matrix rescaled to spectral norm ``scale``. For the hardmax sphere covariance and the sphere curves
(:func:`sphere_cov_problem`), the authors' sphere matrices A = G_k^T G_q / d, V = G_v / sqrt(d).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def gaussian_problem(rng: np.random.Generator, d: int, scale: float) -> tuple[np.ndarray, ...]:
    """(A, V, Sigma, m) of a random Gaussian problem in R^d."""
    A = rng.normal(0.0, scale / np.sqrt(d), (d, d))
    V = np.eye(d) + rng.normal(0.0, 0.5 / np.sqrt(d), (d, d))
    G = rng.normal(size=(d, d))
    Sigma = 0.1 * (G @ G.T / d + 0.5 * np.eye(d))
    return A, V, (Sigma + Sigma.T) / 2, rng.normal(0.0, 0.5, d)


def sphere_cov_problem(rng: np.random.Generator, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The authors' sphere experiment's matrices (scale dropped: the hardmax map is scale-free): A = G_k^T G_q / d,
    V = G_v / sqrt(d), G standard normal; A's singular values spread over about two decades."""
    Gq, Gk, Gv = rng.standard_normal((3, d, d))
    return Gk.T @ Gq / d, Gv / np.sqrt(d)


def consistency_evidence(tests, labels, what: str, findings):
    """The Evidence of curve-consistency checks: the worst excess of a statistic over its threshold (each test at
    family-wise false-alarm rate 1e-3 / len(tests)). ``labels`` name the curves, one each: a str, a Reason or a
    tuple of reason parts (``("R = ", Number(2.0))``)."""
    from attnverify.checks.plugin import Evidence
    from attnverify.checks.reason import Number, reason

    worst = int(np.argmax([t.statistic - t.threshold for t in tests]))
    return Evidence(
        metric=reason("largest excess of a consistency statistic over its threshold (scatter of halves, "
                      "monotonicity)"),
        observed=float(tests[worst].statistic - tests[worst].threshold), threshold=0.0,
        passed=all(t.passed for t in tests),
        reason=reason(len(tests), f" {what} curves, each tested at family-wise false-alarm rate ",
                      Number(1e-3, digits=1), "/", len(tests), " (Bonferroni); the worst at ", labels[worst]),
        findings=findings)


def sphere_problem(rng: np.random.Generator, d: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(A with spectral norm ``scale``, V = I + N(0, 1/(4d)))."""
    A = rng.normal(size=(d, d))
    A *= scale / np.linalg.norm(A, 2)
    return A, np.eye(d) + rng.normal(0.0, 0.5 / np.sqrt(d), (d, d))


@dataclass(frozen=True)
class MapFindings:
    """A closed form against Monte Carlo: the largest standardised difference, its threshold, the number of
    compared coordinates and the smallest effective sample size (tokens per batch for batched checks)."""
    statistic: float
    threshold: float
    compared: int
    n_eff: float


@dataclass(frozen=True)
class HorizonFindings:
    """The horizon identities: the largest relative deviation between the numerics' horizons and the
    independent forms; how far the one-sided horizon of A^T is from that of A (relative, anisotropic Sigma), and
    the same for the two-sided one."""
    deviation: float
    one_sided_transpose_gap: float
    two_sided_transpose_gap: float


@dataclass(frozen=True)
class SlopePoint:
    """One horizon of one error curve: H (the stated convention's value, two-sided without 1/tau) and its other
    conventions, the fitted exponent (slope of log error on log n) with its interval at ``level``."""
    H: float
    H_tau: float
    H_one_sided: float
    H_one_sided_tau: float
    exponent: float
    interval: tuple[float, float]
    level: float
    empirical_exponent: float        # the same repetitions against the authors' empirical reference
    empirical_bias: float            # slope of log(e_empirical / e_exact): what that reference adds


@dataclass(frozen=True)
class CurveFindings:
    """The finite-n error curves of one experiment: per horizon, the mean's and the covariance's slope points."""
    experiment: str
    n_values: tuple[int, ...]
    reps: int
    mean: tuple[SlopePoint, ...]
    cov: tuple[SlopePoint, ...]
