"""Monte Carlo estimate of Paper A's objective J_d(rho) = E ||f_q(X)||^2 with full d-dimensional tokens.

For each sequence X (L tokens in R^d, see ``signal_model``) and each rho on the grid, q = rho e_1 + sqrt(1-rho^2) e_2
(J_d depends on q only through rho = <q, xi>). The same sequences serve every rho (common random numbers), so
differences across rho are much less noisy than each value. The estimate at each rho is the sample mean of
||f_q(X)||^2 over n i.i.d. sequences; its standard error is the sample standard deviation / sqrt(n) (CLT).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnverify.numerics.signal.model import (SignalModel, check_rhos, check_rng, query_at, readout_grid, sample_tokens,
                                              softmax_weights)

_BATCH_ELEMENTS = 4_000_000  # float64 entries per work array (~32 MB)



def _check_inputs(model, rhos, rng, n_sequences) -> tuple:
    """The shared input checks of the estimators: a SignalModel, a valid rho grid and generator, n >= 2."""
    if not isinstance(model, SignalModel):
        raise TypeError(f"model must be a SignalModel, got {type(model).__name__}")
    if isinstance(n_sequences, bool) or not isinstance(n_sequences, (int, np.integer)):
        raise TypeError("n_sequences must be an integer")
    if n_sequences < 2:
        raise ValueError(f"n_sequences must be >= 2 (a standard error needs two samples), got {n_sequences}")
    return check_rhos(rhos), check_rng(rng)

def objective_samples(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                      batch: int | None = None, *, softmax: Callable[..., np.ndarray] = softmax_weights) -> np.ndarray:
    """Samples ||f_q(X_j)||^2, shape (n_sequences, len(rhos)); row j uses the same sequence X_j for every rho.
    ``softmax``: the attention softmax (:func:`attnverify.numerics.signal.model.softmax_weights`)."""
    rhos, rng = _check_inputs(model, rhos, rng, n_sequences)
    if batch is None:
        batch = max(1, _BATCH_ELEMENTS // (model.L * max(model.d, rhos.size)))
    elif batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    Q = query_at(rhos, model.d)                                  # (r, d)
    out = np.empty((n_sequences, rhos.size))
    for start in range(0, n_sequences, batch):
        n = min(batch, n_sequences - start)
        X = sample_tokens(model, n, rng)                         # (n, L, d)
        _, f = readout_grid(X, Q, model.beta, softmax=softmax)   # (n, r, d)
        out[start:start + n] = np.einsum("nrd,nrd->nr", f, f)
    return out


def objective_mc(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                 batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error (sample sd / sqrt(n)) of ||f_q(X)||^2 at each rho, common random numbers across rho."""
    samples = objective_samples(model, rhos, n_sequences, rng, batch)
    return samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(n_sequences)


# ---------------------------------------------------------------------------------------------------------------
# Variance-reduced estimators: conditional Monte Carlo (Rao-Blackwellisation) and control variates
# ---------------------------------------------------------------------------------------------------------------
#: control variates are used only while beta sigma <= this: beyond it e^{beta g} is so heavy-tailed that the
#: regression on them no longer reduces the variance (and its sample covariance is unreliable)
CV_MAX_BETA_SIGMA = 3.0


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate on a grid: ``mean`` (k,), its covariance ``cov`` (k, k) (of the mean, i.e. the
    per-sequence covariance / n), ``se`` = sqrt(diag cov), ``n`` sequences and ``dof`` degrees of freedom of the
    covariance (n - 1 - fitted control coefficients; a z-score is Student-t with dof degrees of freedom). Linear
    contrasts c of the grid have standard error sqrt(c^T cov c)."""

    mean: np.ndarray
    cov: np.ndarray
    n: int
    dof: int

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.diag(self.cov))

    def contrast(self, c: np.ndarray) -> tuple[float, float]:
        """Estimate and standard error of sum_k c_k mean_k."""
        c = np.asarray(c, dtype=float)
        return float(c @ self.mean), float(np.sqrt(max(c @ self.cov @ c, 0.0)))


def control_adjusted(Y: np.ndarray, C: np.ndarray | None) -> np.ndarray:
    """Control-variate adjusted samples Y_j - (C_j - 0) b, with b the least-squares regression of Y on C (controls of
    known mean 0), fitted separately for each column of Y. Y: (n, k); C: (n, k, p) or None (no adjustment).
    The adjusted mean is unbiased up to O(1/n) (estimated b); its variance is that of the regression residual."""
    if C is None or C.shape[-1] == 0:
        return Y
    out = np.empty_like(Y)
    for k in range(Y.shape[1]):
        Ck = C[:, k, :]
        Cc = Ck - Ck.mean(axis=0)
        b, *_ = np.linalg.lstsq(Cc, Y[:, k] - Y[:, k].mean(), rcond=None)
        out[:, k] = Y[:, k] - Ck @ b
    return out


def estimate(samples: np.ndarray, n_controls: int = 0) -> Estimate:
    """Mean and covariance of the mean of per-sequence samples (n, k); ``n_controls`` regression coefficients were
    fitted per column, so the covariance uses n - 1 - n_controls degrees of freedom."""
    n = samples.shape[0]
    # the mean of each column by pairwise summation (error ~ log2(n) ulps: numpy sums a contiguous axis pairwise,
    # but adds the rows of a C-ordered array one by one along axis 0, an error up to n ulps of the mean: measured,
    # masses 1 - 1.1e-11 averaged over 20000 sequences lost 1.3 % of their complement that way)
    mean = np.ascontiguousarray(np.asarray(samples, dtype=float).reshape(n, -1).T).mean(axis=1)
    mean = mean.reshape(samples.shape[1:])
    dev = samples - mean
    dof = n - 1 - n_controls
    if dof < 1:
        raise ValueError(f"{n} samples leave no degree of freedom after {n_controls} control coefficients")
    cov = dev.T @ dev / dof / n
    return Estimate(mean, np.atleast_2d(cov), n, dof)


def _signs(model: SignalModel, n: int, rng: np.random.Generator) -> np.ndarray:
    if model.sign == "fixed":
        return np.ones(n)
    return rng.choice(np.array([-1.0, 1.0]), size=n)


def objective_rb_samples(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                         control: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-sequence samples of E[||f_q(X)||^2 | in-plane noise] on the rho grid, and control variates of mean 0.

    Conditional Monte Carlo: xi = e_1 and every query q(rho) = rho e_1 + sqrt(1 - rho^2) e_2 lie in the plane
    P = span(e_1, e_2), so the scores depend on the tokens only through their P-components (u_i, v_i) (2 normals per
    token). The read-out's component in the (d - 2)-dimensional complement, sum_i a_i z_i^C, is independent of the
    scores with E[|sum_i a_i z_i^C|^2 | scores] = (d - 2) sigma^2 sum_i a_i^2, so
        Y = (sum_i a_i x_i1)^2 + (sum_i a_i v_i)^2 + (d - 2) sigma^2 sum_i a_i^2
    has the same mean as ||f_q(X)||^2 and a smaller variance. The same (u, v, eps) serve every rho (common random
    numbers). Softmax in log-space.

    Controls (``control`` and beta sigma <= CV_MAX_BETA_SIGMA), per rho, with g_i = <q, z_i> ~ N(0, sigma^2) and
    E_i = e^{beta g_i - beta^2 sigma^2 / 2} (so E[E_i] = 1, E[(g_i - beta sigma^2) E_i] = 0 by Gaussian tilting):
    the means over informative and over nuisance tokens of E_i - 1 and of (g_i - beta sigma^2) E_i / sigma, and eps
    for sign='symmetric'. They carry the first-order (delta-method) fluctuation of the ratio sum a_i x_i.
    Returns Y (n, k) and C (n, k, p) or None.
    """
    rhos, rng = _check_inputs(model, rhos, rng, n_sequences)
    b, s, R, L = model.beta, model.sigma, model.R, model.L
    use_cv = control and b * s <= CV_MAX_BETA_SIGMA
    p = (4 + (model.sign == "symmetric")) if use_cv else 0
    Y = np.empty((n_sequences, rhos.size))
    C = np.empty((n_sequences, rhos.size, p)) if use_cv else None
    batch = max(1, _BATCH_ELEMENTS // (2 * L))
    for start in range(0, n_sequences, batch):
        n = min(batch, n_sequences - start)
        u = s * rng.standard_normal((n, L))
        v = s * rng.standard_normal((n, L))
        eps = _signs(model, n, rng)
        x1 = u.copy()
        x1[:, :R] += (model.theta * eps)[:, None]
        for k, r in enumerate(rhos):
            c = np.sqrt(1.0 - r * r)
            g = r * u + c * v                                   # <q, z_i>
            t = b * g
            t[:, :R] += b * r * model.theta * eps[:, None]      # scores s_i
            a = np.exp(t - t.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            f1 = np.einsum("nl,nl->n", a, x1)
            f2 = np.einsum("nl,nl->n", a, v)
            Y[start:start + n, k] = f1 * f1 + f2 * f2 + (model.d - 2) * s * s * np.einsum("nl,nl->n", a, a)
            if use_cv:
                E = np.exp(b * g - 0.5 * (b * s) ** 2)
                T = (g - b * s * s) * E / s
                cols = [E[:, :R].mean(axis=1) - 1.0, E[:, R:].mean(axis=1) - 1.0,
                        T[:, :R].mean(axis=1), T[:, R:].mean(axis=1)]
                if model.sign == "symmetric":
                    cols.append(eps)
                C[start:start + n, k] = np.stack(cols, axis=1)
    return Y, C


def objective_rb_cv(model: SignalModel, rhos: np.ndarray, n_sequences: int, rng: np.random.Generator,
                    control: bool = True) -> Estimate:
    """E||f_q(X)||^2 on the rho grid by conditional Monte Carlo with control variates (objective_rb_samples);
    mean, and covariance across the grid (common random numbers: contrasts across rho are far less noisy)."""
    Y, C = objective_rb_samples(model, rhos, n_sequences, rng, control)
    return estimate(control_adjusted(Y, C), 0 if C is None else C.shape[-1])


def nuisance_mass_samples(theta: float, beta: float, sigma: float, pairs: list[tuple[int, int]], rhos: np.ndarray,
                          n_sequences: int, rng: np.random.Generator, sign: str = "fixed",
                          control: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-sequence attention mass on the nuisance tokens on a grid of (R, L) pairs x rho, and controls of mean 0.

    Scores-only Monte Carlo: at alignment rho the scores are s_i = beta (eps theta rho 1_{i <= R} + g_i), with
    g_i = <q, z_i> ~ N(0, sigma^2) i.i.d. whatever rho, so one draw of g_1..g_Lmax (Lmax = max L) per sequence serves
    every rho and every pair (common random numbers; pair (R, L) uses tokens 1..L, the first R informative). With
    S_I = sum_{i <= R} e^{beta g_i}, S_N = sum_{R < i <= L} e^{beta g_i}, the mass is
        M = S_N / (S_N + e^{beta eps theta rho} S_I) = expit(log S_N - log S_I - beta eps theta rho),
    evaluated in log-space (any beta). Controls (``control`` and beta sigma <= CV_MAX_BETA_SIGMA): S_I / (R m) - 1 and
    S_N / ((L - R) m) - 1 with m = E e^{beta g} = e^{beta^2 sigma^2 / 2}, and eps for sign='symmetric'.
    Returns M (n, len(pairs) * len(rhos)), pair-major, and C (n, same, p) or None.
    """
    rhos = check_rhos(rhos)
    rng = check_rng(rng)
    if not pairs:
        raise ValueError("pairs needs at least one (R, L)")
    for R, L in pairs:
        if not (1 <= R < L):
            raise ValueError(f"each (R, L) pair needs 1 <= R < L, got ({R}, {L})")
    SignalModel(theta=theta, beta=beta, sigma=sigma, R=min(r for r, _ in pairs), L=max(l for _, l in pairs), d=2,
                sign=sign)                                                       # validates the numbers
    if isinstance(n_sequences, bool) or not isinstance(n_sequences, (int, np.integer)) or n_sequences < 2:
        raise ValueError(f"n_sequences must be an integer >= 2, got {n_sequences!r}")
    Lmax = max(L for _, L in pairs)
    use_cv = control and beta * sigma <= CV_MAX_BETA_SIGMA
    p = (2 + (sign == "symmetric")) if use_cv else 0
    k = len(pairs) * rhos.size
    M = np.empty((n_sequences, k))
    C = np.empty((n_sequences, k, p)) if use_cv else None
    batch = max(1, _BATCH_ELEMENTS // Lmax)
    log_m = 0.5 * (beta * sigma) ** 2
    for start in range(0, n_sequences, batch):
        n = min(batch, n_sequences - start)
        t = beta * sigma * rng.standard_normal((n, Lmax))
        eps = np.ones(n) if sign == "fixed" else rng.choice(np.array([-1.0, 1.0]), size=n)
        top = t.max(axis=1, keepdims=True)
        cum = np.cumsum(np.exp(t - top), axis=1)                                 # prefix sums of e^{beta g - top}
        cols = slice(start, start + n)
        for j, (R, L) in enumerate(pairs):
            log_si = np.log(cum[:, R - 1])
            log_sn = np.log(cum[:, L - 1] - cum[:, R - 1])
            x = log_sn - log_si
            sl = slice(j * rhos.size, (j + 1) * rhos.size)
            M[cols, sl] = 1.0 / (1.0 + np.exp(np.clip(beta * theta * eps[:, None] * rhos[None, :] - x[:, None],
                                                      -700, 700)))
            if use_cv:
                ci = np.exp(log_si + top[:, 0] - log_m - np.log(R)) - 1.0
                cn = np.exp(log_sn + top[:, 0] - log_m - np.log(L - R)) - 1.0
                cv = [ci, cn] + ([eps] if sign == "symmetric" else [])
                C[cols, sl] = np.stack(cv, axis=1)[:, None, :]
    return M, C


def nuisance_mass_rounding(pairs: list[tuple[int, int]], mass: np.ndarray, n_sequences: int) -> np.ndarray:
    """A bound on the floating-point error of :func:`nuisance_mass_mc`'s mean at each (pair, rho) column, given the
    mean masses ``mass`` (pair-major, as the estimate's mean) -- the size below which a difference from the exact
    expectation is rounding, not Monte Carlo error.

    Per sequence, the prefix sums (sequential: relative error <= k u after k terms, u = 2^-53) give S_I to R u and
    S_N = cum_L - cum_R to u (L cum_L + R cum_R) / S_N, about u (L^2 + R^2) / (L - R) at the typical sums; a logistic
    in x = log S_N - log S_I moves M by M (1 - M) dx. The control-variate adjustment carries the same error through
    its controls (counted once more), and the mean over n sequences adds (log2 n + 4) u M (pairwise summation, the
    final division). So |error| <= u [2 M (1 - M) ((L^2 + R^2) / (L - R) + R + 4) + (log2 n + 4) M]."""
    u = np.finfo(float).eps / 2
    mass = np.asarray(mass, dtype=float)
    k = mass.size // len(pairs)
    growth = np.repeat([(L * L + R * R) / (L - R) + R + 4.0 for R, L in pairs], k)
    return u * (2.0 * mass * (1.0 - mass) * growth + (np.log2(max(n_sequences, 2)) + 4.0) * np.abs(mass))


def nuisance_mass_expansion(theta: float, beta: float, sigma: float, pairs: list[tuple[int, int]],
                            rhos: np.ndarray, sign: str = "fixed") -> np.ndarray:
    """The second-, third- and fourth-order delta-method terms of the expected nuisance mass, from the model's
    moments alone (shape (3, len(pairs) * len(rhos)), pair-major as :func:`nuisance_mass_mc`'s mean): the size of the
    finite-L correction and of the orders after it, computed without any closed form.

    With S_N = (L - R) m (1 + d_N) and S_I = R m (1 + d_I) (m = E e^{beta g}), the mass is M = N / (N + r I),
    N = 1 + d_N, I = 1 + d_I, r = R e^{beta eps theta rho} / (L - R), whose long-sequence value is M0 = 1 / (1 + r).
    Its derivatives at N = I = 1 are d^k M / dI^k = (-1)^k k! M0 (1 - M0)^k, d^k M / dN^k = (-1)^(k+1) k! (1 - M0) M0^k
    and d^4 M / dN^2 dI^2 = 12 M0^2 (1 - M0)^2 (2 M0 - 1). d_N and d_I are independent means of n_N = L - R and
    n_I = R i.i.d. relative weights w / m - 1, whose central moments are c = e^v - 1, mu_3 = e^{3v} - 3 e^v + 2 and
    mu_4 = e^{6v} - 4 e^{3v} + 6 e^v - 3 (v = beta^2 sigma^2), so E d^2 = c / n, E d^3 = mu_3 / n^2 and
    E d^4 = (mu_4 + 3 (n - 1) c^2) / n^3. Hence

        T2 = M0 (1 - M0) ((1 - M0) E d_I^2 - M0 E d_N^2),
        T3 = M0 (1 - M0) (M0^2 E d_N^3 - (1 - M0)^2 E d_I^3),
        T4 = M0 (1 - M0) ((1 - M0)^3 E d_I^4 - M0^3 E d_N^4 + 3 M0 (1 - M0) (2 M0 - 1) E d_I^2 E d_N^2),

    each averaged over eps = +-1 for sign = 'symmetric'. With i.i.d. tokens (theta rho = 0) every term vanishes, as
    the exact mean (L - R) / L does."""
    rhos = check_rhos(rhos)
    v = (beta * sigma) ** 2
    with np.errstate(over="ignore", invalid="ignore"):
        c, mu3 = np.expm1(v), np.exp(3 * v) - 3 * np.exp(v) + 2
        mu4 = np.exp(6 * v) - 4 * np.exp(3 * v) + 6 * np.exp(v) - 3
    signs = (1.0,) if sign == "fixed" else (1.0, -1.0)
    out = []
    for R, L in pairs:
        d2 = {n: c / n for n in (R, L - R)}
        d3 = {n: mu3 / n ** 2 for n in (R, L - R)}
        d4 = {n: (mu4 + 3 * (n - 1) * c * c) / n ** 3 for n in (R, L - R)}
        terms = []
        for eps in signs:
            M0 = 1.0 / (1.0 + np.exp(np.clip(beta * theta * eps * rhos + np.log(R / (L - R)), -700, 700)))
            M1 = 1.0 - M0
            with np.errstate(over="ignore", invalid="ignore"):
                terms.append(M0 * M1 * np.array([
                    M1 * d2[R] - M0 * d2[L - R],
                    M0 ** 2 * d3[L - R] - M1 ** 2 * d3[R],
                    M1 ** 3 * d4[R] - M0 ** 3 * d4[L - R] + 3 * M0 * M1 * (2 * M0 - 1) * d2[R] * d2[L - R]]))
        out.append(np.mean(terms, axis=0))
    return np.concatenate(out, axis=1)


def nuisance_mass_mc(theta: float, beta: float, sigma: float, pairs: list[tuple[int, int]], rhos: np.ndarray,
                     n_sequences: int, rng: np.random.Generator, sign: str = "fixed",
                     control: bool = True) -> Estimate:
    """Expected nuisance attention mass on the (R, L) x rho grid (nuisance_mass_samples), with covariance."""
    M, C = nuisance_mass_samples(theta, beta, sigma, pairs, rhos, n_sequences, rng, sign, control)
    return estimate(control_adjusted(M, C), 0 if C is None else C.shape[-1])
