"""The authors' synthetic experiments of Paper D as data (from their released code), at two profiles.

Attention: scores <W_q x, W_k y> / tau = <A x, y> / tau with A = W_k^T W_q, values W_v y, tau = sqrt(head
dimension) (= sqrt(d): one head of dimension d, as in the code; a model option, ``tau=``).

Gaussian (``gaussian_experiment``): mu = N(0, rho I_d), rho = 0.1; W_q, W_k, W_v with N(0, 1/d) entries drawn
once, W_q and W_k each multiplied by sqrt(s), so A = s W_k0^T W_q0; covariance error in the Frobenius norm; the
authors' reference is the empirical moments of one fresh sample of ``n_reference`` tokens.
    paper: d = 50, 12 scales s geometric in [0.05, 50], 12 sizes n geometric in [1000, 30000], 200 repetitions,
           n_reference = 100 000.
    quick: d = 8, 5 scales in [0.05, 50], 6 sizes in [200, 2400], 30 repetitions, n_reference = 8000.

Sphere (``sphere_experiment``): mu uniform on the sphere of radius R = 1; W_q = s G_q, W_k = s G_k (A = s^2
G_k^T G_q), W_v = G_v, G standard normal; exact reference (mean 0, closed-form covariance); covariance error in
the spectral norm.
    paper: d = 50, 12 scales s geometric in [10, 1e5], 12 sizes n geometric in [1e4, 1e5], 200 repetitions.
    quick: d = 8, 5 scales in [10, 1e5], 6 sizes in [200, 2400], 30 repetitions.

Sizes are rounded to the nearest integer. The weights are drawn by NumPy from SeedSequence(weight_seed) (default
42). The authors drew them with torch.manual_seed(42); torch's generator cannot be reproduced with NumPy, so the
matrices (hence the horizons at each scale) differ from theirs, with the same law.

Query subsampling: at the paper profile all n rows of every self-attention cost sum_k n_k^2 d per repetition
and scale (5e12 row-key pairs for the Gaussian, 7e13 for the sphere), far beyond 2 cores, so only
``query_rows`` rows per repetition and scale are computed (:mod:`attnverify.numerics.tsc.moments` for the
estimators and their stated variances); the quick profile computes every row (query_rows None). Paper defaults,
chosen from measurements on 10- and 20-repetition subsets of the full grid with exact references (the share is
mean_r V / mean_r e^2, the part of the measured mean square error due to subsampling):
- Gaussian: 8 rows at the 8 smallest scales (H <= 0.93) and 64 at the 4 largest (H = 1.7 to 11.5), with the
  affine control Gamma_mu supplied by the caller (:class:`attnverify.numerics.tsc.curves.LinearControl`). Share:
  mean <= 0.03 up to H = 0.93, 0.01 and 0.1 at H = 1.7 and 3.3, 0.4-0.8 at H = 6.1 and 0.7-1.0 at H = 11.5;
  covariance (Frobenius) about 0.4, constant in n, up to H = 0.93, 0.2 and 0.45 at H = 1.7 and 3.3, 0.5-0.8
  at H = 6.1 and 11.5. Where the share is large the "log" slope is flattened (its subsampling term says by how
  much) and the debiased "rms" estimand of :func:`attnverify.numerics.tsc.fit.fit_slope` is the one to use.
- Sphere: 6 rows, no control. Deep in the hardmax regime Gamma_{mu_n}(y) - Gamma_mu(y) is O(1) for every query, so
  no control helps (the Bessel-ratio Gamma_mu was tried: no gain, twice the cost). The covariance errors are
  resolved (share about 0.5 Frobenius, 0.7-0.8 spectral); the mean's are not: its error is O(n^{-1/2}) while the
  subsampling noise is O(1/q), share about 1, the debiased mean square error is not positive. Resolving it needs
  about n rows per repetition, sum_k n_k^2 d per repetition and scale: out of reach on 2 cores.
Run time (the paper profile, extrapolated by :func:`attnverify.numerics.tsc.timing.extrapolate_seconds` from 2
repetitions at 3 sizes, on a 2-core machine shared with other work, load average 3.4-3.9): CPU time 425 s
(Gaussian, with the empirical reference) + 747 s (sphere) = 1172 s; the wall time of an idle 2-core machine
lies between half of that (the kernel runs on both cores) and all of it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnverify.numerics.tsc.horizon import Horizons, horizons
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw, TokenLaw

__all__ = ["Experiment", "gaussian_experiment", "sphere_experiment", "geometric_sizes", "PROFILES",
           "PAPER_GAUSSIAN_ROWS", "PAPER_SPHERE_ROWS", "PAPER_REFERENCE_ROWS"]

PROFILES = ("quick", "paper")


@dataclass(frozen=True, eq=False)
class Experiment:
    """One synthetic experiment: the token law, the weights at each scale, the n grid and the repetitions."""
    name: str
    profile: str
    law: TokenLaw
    scales: np.ndarray               # (S,)
    W_q: np.ndarray                  # (S, d, d)
    W_k: np.ndarray                  # (S, d, d)
    W_v: np.ndarray                  # (d, d)
    tau: float
    n_values: np.ndarray             # (K,) increasing integers
    reps: int
    query_rows: object               # rows per repetition: None (all n), an int, or one int per scale
    n_reference: int | None          # tokens of the empirical reference (None: exact reference only)
    reference_rows: int | None       # rows computed for the empirical reference (None: all)
    cov_norm: str                    # "fro" or "spectral": the norm the paper uses for the covariance error
    weight_seed: int

    @property
    def d(self) -> int:
        return self.W_v.shape[0]

    @property
    def A(self) -> np.ndarray:
        """A_s = W_k^T W_q at each scale, shape (S, d, d)."""
        return np.swapaxes(self.W_k, -1, -2) @ self.W_q

    def horizons(self) -> Horizons:
        """Two- and one-sided horizons of each A_s for the token covariance, with and without 1/tau."""
        return horizons(self.A, self.law.covariance, self.tau)

    def pairs(self) -> float:
        """Row-key pairs the kernel evaluates (the cost unit): reps * S * sum_k q_k n_k, plus the reference."""
        q = np.broadcast_to(np.asarray(np.inf if self.query_rows is None else self.query_rows, float),
                            self.scales.shape)
        total = self.reps * float(np.sum(self.n_values[:, None] * np.minimum(q[None, :], self.n_values[:, None])))
        if self.n_reference:
            total += self.scales.size * self.n_reference * min(self.reference_rows or np.inf, self.n_reference)
        return total

    def with_(self, **changes) -> "Experiment":
        """A copy with some fields changed (dataclasses.replace)."""
        return replace(self, **changes)


def geometric_sizes(lo: float, hi: float, count: int) -> np.ndarray:
    """``count`` integers geometric in [lo, hi] (rounded), strictly increasing."""
    n = np.round(np.geomspace(lo, hi, count)).astype(np.int64)
    if np.any(np.diff(n) <= 0):
        raise ValueError(f"the size grid [{lo}, {hi}] with {count} points has repeated integers")
    return n


def _profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    return profile


def _tau(tau, d: int) -> float:
    return float(np.sqrt(d)) if tau is None else float(tau)


PAPER_GAUSSIAN_ROWS = (8,) * 8 + (64,) * 4
PAPER_SPHERE_ROWS = 6
PAPER_REFERENCE_ROWS = 256


def gaussian_experiment(profile: str = "quick", weight_seed: int = 42, tau: float | None = None,
                        query_rows=None, reference_rows: int | None = None) -> Experiment:
    """The Gaussian experiment (module docstring); query_rows / reference_rows default to None (all rows) at the
    quick profile and to PAPER_GAUSSIAN_ROWS (per scale) / PAPER_REFERENCE_ROWS at the paper profile."""
    paper = _profile(profile) == "paper"
    d, rho = (50, 0.1) if paper else (8, 0.1)
    scales = np.geomspace(0.05, 50, 12 if paper else 5)
    n_values = geometric_sizes(1000, 30000, 12) if paper else geometric_sizes(200, 2400, 6)
    rng = np.random.default_rng(np.random.SeedSequence(weight_seed))
    W_q0, W_k0, W_v = rng.normal(0.0, 1.0 / np.sqrt(d), size=(3, d, d))
    root = np.sqrt(scales)[:, None, None]
    return Experiment(
        name="gaussian", profile=profile, law=GaussianLaw(np.zeros(d), rho * np.eye(d)), scales=scales,
        W_q=root * W_q0, W_k=root * W_k0, W_v=W_v, tau=_tau(tau, d), n_values=n_values,
        reps=200 if paper else 30,
        query_rows=query_rows if query_rows is not None or not paper else PAPER_GAUSSIAN_ROWS,
        n_reference=100_000 if paper else 8000,
        reference_rows=reference_rows if reference_rows is not None or not paper else PAPER_REFERENCE_ROWS,
        cov_norm="fro", weight_seed=weight_seed)


def sphere_experiment(profile: str = "quick", weight_seed: int = 42, tau: float | None = None,
                      query_rows=None) -> Experiment:
    """The sphere experiment (module docstring); query_rows defaults to None (all rows) at the quick profile and
    to PAPER_SPHERE_ROWS at the paper profile."""
    paper = _profile(profile) == "paper"
    d = 50 if paper else 8
    scales = np.geomspace(10, 1e5, 12 if paper else 5)
    n_values = geometric_sizes(1e4, 1e5, 12) if paper else geometric_sizes(200, 2400, 6)
    rng = np.random.default_rng(np.random.SeedSequence(weight_seed))
    G_q, G_k, G_v = rng.standard_normal(size=(3, d, d))
    s = scales[:, None, None]
    return Experiment(
        name="sphere", profile=profile, law=SphereLaw(d, 1.0), scales=scales, W_q=s * G_q, W_k=s * G_k, W_v=G_v,
        tau=_tau(tau, d), n_values=n_values, reps=200 if paper else 30,
        query_rows=query_rows if query_rows is not None or not paper else PAPER_SPHERE_ROWS, n_reference=None,
        reference_rows=None,
        cov_norm="spectral", weight_seed=weight_seed)
