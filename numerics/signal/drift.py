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
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.signal.model import SignalModel, check_rng, readout_grid, sample_tokens

_BATCH_ELEMENTS = 4_000_000  # float64 entries of the (n, L, 2r) weight array per batch


def _open_rhos(rho: object) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(rho, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"rho must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) >= 1):
        raise ValueError("rho must be finite and inside the open interval (-1, 1) (d/drho is singular at +-1)")
    return arr


def alignment_derivative_samples(model: SignalModel, rho: np.ndarray, n_samples: int,
                                 rng: np.random.Generator) -> np.ndarray:
    """Samples (n_samples, len(rho)) of (D(rho; X_j, e_2) + D(rho; X_j, -e_2)) / 2, one sequence X_j per row.

    Each column has mean J_d'(rho) (module docstring); rows are i.i.d., so mean and sd / sqrt(n) give a CLT interval.
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
    batch = max(1, _BATCH_ELEMENTS // (model.L * 2 * r))
    out = np.empty((n_samples, r))
    for start in range(0, n_samples, batch):
        n = min(batch, n_samples - start)
        X = sample_tokens(model, n, rng)                              # (n, L, d)
        att, f = readout_grid(X, Q, model.beta)                       # (n, L, 2r), (n, 2r, d)
        ff = np.einsum("nrd,nrd->nr", f, f)
        c = X @ np.swapaxes(f, 1, 2)                                  # <x_i, f_k>, (n, L, 2r)
        c -= ff[:, None, :]
        c *= att
        grad = (2.0 * model.beta) * (np.swapaxes(c, 1, 2) @ X)       # (n, 2r, d)
        D = np.einsum("nkd,kd->nk", grad, T)
        out[start:start + n] = 0.5 * (D[:, :r] + D[:, r:])
    return out


# ---------------------------------------------------------------------------------------------------------------
# the sign of the drift next to -xi, and where it switches in theta
# ---------------------------------------------------------------------------------------------------------------
def drift_sign(model: SignalModel, rho: float, z: float, n0: int, n_max: int, rng: np.random.Generator) -> dict:
    """The sign of J_d'(rho) from alignment_derivative_samples: +1 / -1 once |mean| > z se, the sample size doubled
    from n0 up to n_max; 0 when it stays inside the z-interval at n_max. Returns sign, mean, se, n."""
    samples = alignment_derivative_samples(model, np.array([float(rho)]), n0, rng)[:, 0]
    while True:
        n = samples.size
        mean, se = float(samples.mean()), float(samples.std(ddof=1) / np.sqrt(n))
        if abs(mean) > z * se or n >= n_max:
            return {"sign": int(np.sign(mean)) if abs(mean) > z * se else 0, "mean": mean, "se": se, "n": int(n)}
        more = alignment_derivative_samples(model, np.array([float(rho)]), min(n, n_max - n), rng)[:, 0]
        samples = np.concatenate([samples, more])


MIN_GAP = 2e-3                 # minus_xi_switch: a side of the bracket stops within this relative gap


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
