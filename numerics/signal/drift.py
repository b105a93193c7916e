"""Monte Carlo estimate of J_d'(rho), the sign of the SGA drift, from sampled sequences alone (no closed form).

Along q(rho) = rho e_1 + s v (s = sqrt(1 - rho^2), v a unit vector orthogonal to xi = e_1) the pathwise derivative of
the sampled objective is

    D(rho; X, v) = d/drho ||f_{q(rho)}(X)||^2 = <grad_q ||f_q(X)||^2, e_1 - (rho / s) v>,

with grad_q ||f_q||^2 = 2 beta sum_i a_i (<x_i, f> - ||f||^2) x_i (attnverify.numerics.signal.sga.objective_gradient).  Since J_d(q)
depends on q only through rho, E D = J_d'(rho) (exchange of derivative and expectation: the integrand is smooth with
Gaussian-dominated derivatives), and the mean SGA drift is E[rho' - rho] = eta (1 - rho^2) J_d'(rho) + O(eta^2)
(the xi-component of the tangent gradient is (1 - rho^2) D).  So on (-1, 1) the sign of the reduced field F of
the simulated model is the sign of J_d'(rho).

Variance reduction: the law of X is invariant under the reflection v -> -v, so D(rho; X, v) and D(rho; X, -v) have the
same mean; their average (an antithetic pair on one sequence) cancels most of the (rho / s) <grad, v> noise near
rho = +-1.  The same sequences serve every rho of the grid (common random numbers).

Control variates (``controls=True``): for each query q of the pair, with t = dq/drho, the noise z_i = x_i - eps theta
e_1 of token i, g_i = <q, z_i> ~ N(0, sigma^2), h_i = <t, z_i> and E_i = exp(beta g_i - beta^2 sigma^2 / 2), the
token means (over the informative and over the nuisance tokens) of

    E_i - 1,   (g_i - beta sigma^2) E_i,   beta h_i E_i,   h_i (g_i - beta sigma^2) E_i

have mean exactly 0: under the tilt by E_i, (g_i, h_i) is Gaussian with mean (beta sigma^2, beta sigma^2 <t, q>) =
(beta sigma^2, 0) (|q| = 1, so <t, q> = 0) and independent coordinates. The last two are the rho-derivatives of the
first two, so they carry the first-order fluctuation of D as the first two carry that of ||f||^2 (the objective's
controls, ``numerics.signal.mc``). 16 controls per rho; regressing D on them (``mc.control_adjusted``) cut the
variance 147-fold next to -xi at the defaults near theta* (theta = 1.39, rho = -0.993, 20000 sequences; 106-fold
with the derivative controls alone). Used while beta sigma <= CV_MAX_BETA_SIGMA = 1: e^{beta g} grows heavy-tailed
with beta sigma, and the regression's standard error with it falls short. Measured where J_d'(0) = 0 exactly
(symmetric sign, theta = 0.5, R = 50, L = 150, rho = 0; 500 estimates of 1000 sequences each): the sd of the
control-adjusted t is 1.009 at beta sigma = 1, 1.058 at 1.5, 1.158 at 2 and 1.45 at 3 (P(|t| > 2.5) 0.014, 0.026,
0.046 against the normal 0.012), while the plain mean's stays 0.95-0.98 at each.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.signal.mc import Estimate, control_adjusted, estimate
from attnverify.numerics.signal.model import SignalModel, check_rng, readout_grid, sample_tokens

_BATCH_ELEMENTS = 4_000_000  # float64 entries of the (n, L, 2r) weight array per batch
MIN_SAMPLES_PER_CONTROL = 10  # alignment_derivative_estimate fits the control coefficients from at least 10 n per one
CV_MAX_BETA_SIGMA = 1.0       # the controls are used while beta sigma <= this (module docstring: their calibration)


def _open_rhos(rho: object) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(rho, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"rho must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) >= 1):
        raise ValueError("rho must be finite and inside the open interval (-1, 1) (d/drho is singular at +-1)")
    return arr


def alignment_derivative_samples(model: SignalModel, rho: np.ndarray, n_samples: int, rng: np.random.Generator, *,
                                 controls: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Samples (n_samples, len(rho)) of (D(rho; X_j, e_2) + D(rho; X_j, -e_2)) / 2, one sequence X_j per row.

    Each column has mean J_d'(rho) (module docstring); rows are i.i.d., so mean and sd / sqrt(n) give a CLT interval.
    ``controls``: also return the control variates (n_samples, len(rho), p) of mean 0 (module docstring; p = 16, or
    0 when beta sigma > CV_MAX_BETA_SIGMA), for :func:`alignment_derivative_estimate`.
    """
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    rho = _open_rhos(rho)
    rng = check_rng(rng)
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    r, d = rho.size, model.d
    s = np.sqrt(1.0 - rho**2)
    Q = np.zeros((2 * r, d))                      # queries q+ (rows 0..r-1) and q- (rows r..2r-1)
    Q[:, 0] = np.concatenate([rho, rho])
    Q[:, 1] = np.concatenate([s, -s])
    T = np.zeros((2 * r, d))                      # dq/drho along each path
    T[:, 0] = 1.0
    T[:, 1] = np.concatenate([-rho / s, rho / s])
    use_cv = controls and model.beta * model.sigma <= CV_MAX_BETA_SIGMA
    batch = max(1, _BATCH_ELEMENTS // (model.L * 2 * r))
    out = np.empty((n_samples, r))
    C = np.empty((n_samples, r, 16 if use_cv else 0))
    for start in range(0, n_samples, batch):
        n = min(batch, n_samples - start)
        X, eps = sample_tokens(model, n, rng, with_signs=True)        # (n, L, d), (n,)
        att, f = readout_grid(X, Q, model.beta)                       # (n, L, 2r), (n, 2r, d)
        ff = np.einsum("nrd,nrd->nr", f, f)
        c = X @ np.swapaxes(f, 1, 2)                                  # <x_i, f_k>, (n, L, 2r)
        c -= ff[:, None, :]
        c *= att
        grad = (2.0 * model.beta) * (np.swapaxes(c, 1, 2) @ X)       # (n, 2r, d)
        D = np.einsum("nkd,kd->nk", grad, T)
        out[start:start + n] = 0.5 * (D[:, :r] + D[:, r:])
        if use_cv:
            X[:, :model.R, 0] -= (model.theta * eps)[:, None]        # the noise z_i
            C[start:start + n] = _derivative_controls(X, Q, T, model.beta, model.sigma, model.R, r)
    return (out, C) if controls else out


def _derivative_controls(Z: np.ndarray, Q: np.ndarray, T: np.ndarray, beta: float, sigma: float, R: int,
                         r: int) -> np.ndarray:
    """The 16 controls of mean 0 per rho (module docstring) from the noise Z (n, L, d), the queries Q (2r, d) and
    their rho-derivatives T (2r, d): for q+ and q-, the informative and the nuisance token means of E - 1,
    (g - beta sigma^2) E, beta h E and h (g - beta sigma^2) E. Returns (n, r, 16)."""
    g, h = Z @ Q.T, Z @ T.T                                           # (n, L, 2r)
    E = np.exp(beta * g - 0.5 * (beta * sigma) ** 2)
    tilt = (g - beta * sigma * sigma) * E
    cols = []
    for x in (E - 1.0, tilt, beta * h * E, h * tilt):
        for part in (x[:, :R], x[:, R:]):
            m = part.mean(axis=1)                                     # (n, 2r)
            cols += [m[:, :r], m[:, r:]]
    return np.stack(cols, axis=-1)


def alignment_derivative_estimate(samples: np.ndarray, controls: np.ndarray) -> Estimate:
    """J_d'(rho) on the grid from :func:`alignment_derivative_samples` (``controls=True``): the control-adjusted mean
    (unbiased up to O(1/n): the regression coefficients are estimated) and its covariance with n - 1 - p degrees of
    freedom (``mc.estimate``)."""
    if samples.shape[0] < MIN_SAMPLES_PER_CONTROL * controls.shape[-1]:
        return estimate(samples)                  # too few sequences to fit the coefficients: the plain mean
    return estimate(control_adjusted(samples, controls), controls.shape[-1])


# ---------------------------------------------------------------------------------------------------------------
# the sign of the drift next to -xi, and where it switches in theta
# ---------------------------------------------------------------------------------------------------------------
def drift_sign(model: SignalModel, rho: float, z: float, n0: int, n_max: int, rng: np.random.Generator) -> dict:
    """The sign of J_d'(rho) from the control-adjusted estimate (:func:`alignment_derivative_estimate`): +1 / -1 once
    |mean| > z' se, the sample size doubled from n0 up to n_max; 0 when it stays inside the interval at n_max. z' is
    the Student-t quantile (the estimate's degrees of freedom) of the normal tail beyond z. Returns sign, mean, se,
    n."""
    out = drift_signs(model, np.array([float(rho)]), np.array([True]), z, n0, n_max, rng)
    return {"sign": int(out["sign"][0]), "mean": float(out["mean"][0]), "se": float(out["se"][0]), "n": out["n"]}


def drift_signs(model: SignalModel, rho: np.ndarray, required: np.ndarray, z: float, n0: int, n_max: int,
                rng: np.random.Generator, *, samples=None) -> dict:
    """J_d'(rho) on a grid (common random numbers), control-adjusted, with the sample size doubled from n0 (up to
    n_max) until every ``required`` rho has |mean| > z' se (z' as in :func:`drift_sign`). ``samples``: the sampler
    (default :func:`alignment_derivative_samples`; a check passes its numerics' own). Returns rho, mean, se, sign
    (+1 / -1 / 0 per rho), n and z'."""
    from scipy.stats import norm, t

    rho = _open_rhos(rho)
    req = np.asarray(required, dtype=bool)
    samples = alignment_derivative_samples if samples is None else samples
    D, C = samples(model, rho, n0, rng, controls=True)
    while True:
        est = alignment_derivative_estimate(D, C)
        zt = float(t.isf(norm.sf(z), est.dof))
        sign = np.where(np.abs(est.mean) > zt * est.se, np.sign(est.mean), 0.0).astype(int)
        n = D.shape[0]
        if n >= n_max or np.all(sign[req] != 0):
            return {"rho": rho, "mean": est.mean, "se": est.se, "sign": sign, "n": int(n), "z": zt}
        D2, C2 = samples(model, rho, min(n, n_max - n), rng, controls=True)
        D, C = np.concatenate([D, D2]), np.concatenate([C, C2])


MIN_GAP = 2e-3                 # minus_xi_switch: a side of the bracket stops within this relative gap
#: the drift next to -xi is read at rho = -1 + MINUS_XI_OFFSET (the theta_star bracket, the narrow tests of
#: signal.equilibria_stability): close enough that its sign is -xi's stability a per cent from theta*
MINUS_XI_OFFSET = 1e-3


def minus_xi_switch(model_at, theta_lo: float, theta_hi: float, *, delta: float, z: float, n0: int, n_max: int,
                    rng: np.random.Generator, max_tests: int = 16) -> dict:
    """A measured bracket [lo, hi] of the signal strength where -xi turns attracting: the sign of J_d'(-1 + delta)
    (the drift next to -xi) is + at lo (-xi repels) and - at hi (-xi attracts), for the models ``model_at(theta)``.

    A scan upwards from theta_lo in factors of 2 (up to theta_hi) stops at the first - sign; the last + sign before
    it is lo (a - at theta_lo itself gives the bracket [0, theta_lo]). The bracket is then bisected in log theta.
    A midpoint whose test stays inconclusive lies within the resolution of n_max samples of the switch; the
    bisection then goes on from both sides towards it, alternately: the log-midpoint of lo and the lowest
    inconclusive point, and of the highest one and hi. A conclusive test moves lo or hi inwards, an inconclusive
    one moves that side's inconclusive point outwards, so each side closes in on the edge of the sign test's
    resolution (a larger n_max gives a narrower bracket); a side stops when its gap is below MIN_GAP. A sign found
    beyond an inconclusive point moves the bracket past it and plain bisection resumes. At most ``max_tests`` sign
    tests in all. Far above the switch the drift next to -xi fades (the informative weight at -xi decays like
    e^(-beta theta)), so the scan starts low. It assumes one switch. Nothing here reads a closed form.
    Returns lo, hi (None: no - sign found up to theta_hi), the tests made (theta, sign, mean, se, n) and
    ``resolved`` (a test stayed inconclusive: the bracket reached the resolution of n_max samples)."""
    tests: list[dict] = []

    def sign_at(theta: float) -> int:
        out = drift_sign(model_at(theta), -1.0 + delta, z, n0, n_max, rng)
        tests.append({"theta": float(theta), **out})
        return out["sign"]

    lo, hi, theta = 0.0, None, float(theta_lo)
    while theta <= theta_hi * (1 + 1e-12):
        s = sign_at(theta)
        if s > 0:
            lo = theta
        elif s < 0:
            hi = theta
            break
        theta *= 2.0
    if hi is None:
        return {"lo": lo, "hi": None, "tests": tests, "resolved": False}
    if lo == 0.0:
        return {"lo": lo, "hi": hi, "tests": tests, "resolved": True}
    near = None                        # (lowest, highest) inconclusive point inside (lo, hi)
    open_sides = {"below", "above"}
    while open_sides and len(tests) < max_tests:
        if near is None:
            side, t = None, float(np.sqrt(lo * hi))
        else:
            side = "below" if "below" in open_sides and (len(tests) % 2 == 0 or "above" not in open_sides) else "above"
            t = float(np.sqrt(lo * near[0])) if side == "below" else float(np.sqrt(near[1] * hi))
        s = sign_at(t)
        if s == 0:
            near = (t, t) if side is None else (t, near[1]) if side == "below" else (near[0], t)
        else:
            lo, hi = (t, hi) if s > 0 else (lo, t)
            if near is not None and not lo < near[0] <= near[1] < hi:
                near = None                        # a sign beyond the inconclusive point: bisect again
                open_sides = {"below", "above"}
        if near is not None:                       # a side ends where its gap is below any useful resolution
            open_sides -= {side for side, gap in (("below", near[0] / lo), ("above", hi / near[1]))
                           if gap < 1 + MIN_GAP}
    resolved = near is not None
    return {"lo": lo, "hi": hi, "tests": tests, "resolved": resolved}
