r"""Paper D's closed forms, all from the model engine (attnverify.theory.engine), as the functions a check receives:
this module is the checks' ``ctx.theory`` (a mutant replaces one of its functions).

* The Gaussian token law N(m, Sigma): the engine's matrix derivation (exponential tilting; ``gaussian_token_map``)
  gives Gamma_mu(x) = V (m + Sigma A x / tau), affine in x, and the push-forward (Gamma_mu)#mu = N(c + B m,
  B Sigma B^T) with B = V Sigma A / tau; :func:`gaussian_moments` evaluates them on arrays of any d.
* The uniform law on the sphere of radius R in R^d: the engine's tilted mean of the sphere law (``sphere_radial``,
  from its moment-generating function) is g(|b|) b/|b| with g(r) = R I_{d/2}(R r) / I_{d/2-1}(R r), b = A x / tau;
  :func:`sphere_gain` evaluates g (both Bessel functions exponentially scaled, so the ratio is finite for any
  r: the scaling e^{-R r} cancels), :func:`sphere_map` the map with values W_v y.
* The paper's own model files (``gaussian.toml``, ``sphere.toml`` in this package, one direction xi) derived by
  the engine: :func:`derivation` (the formula claims' derived side and the derivation document).
"""
from __future__ import annotations

from functools import lru_cache
import numpy as np

PACKAGE = "attnverify.checks.tsc"
MODELS = ("gaussian", "sphere")


@lru_cache(maxsize=None)
def derivation(name: str):
    """The engine's Derivation of the paper's model file ``name`` (``gaussian`` or ``sphere``)."""
    from importlib import resources

    from attnverify.theory.engine import derive

    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {name!r}")
    with resources.as_file(resources.files(PACKAGE).joinpath(f"{name}.toml")) as path:
        return derive(str(path))


def gaussian_moments(A, V, Sigma, m, tau: float = 1.0, x=None) -> dict[str, np.ndarray]:
    """``pushforward_mean`` (d,), ``pushforward_cov`` (d, d) and, with query points x, ``attention_map`` of
    N(m, Sigma) (the engine's matrix closed forms on arrays)."""
    from attnverify.theory.engine import gaussian_token_map_numeric

    return gaussian_token_map_numeric(A, V, Sigma, m, tau, x)


@lru_cache(maxsize=None)
def _gain_function(order_shift: int = 0):
    import scipy.special
    import sympy as sp

    from attnverify.theory.engine.laws import d_sym, sphere_radial

    g = sphere_radial()["dpsi"]
    if order_shift:
        g = g.replace(lambda e: isinstance(e, sp.besseli), lambda e: sp.besseli(e.args[0] + order_shift, e.args[1]))
    R, r = sorted(g.free_symbols - {d_sym}, key=lambda s: s.name)          # R_sphere, r_b
    return (sp.lambdify((R, r, d_sym), g, [{"besseli": scipy.special.ive}, "numpy"]),
            sp.lambdify((R, r, d_sym), g, "mpmath"))


def sphere_gain(R: float, r, d: int, order_shift: int = 0) -> np.ndarray:
    """g(r) = |tilted mean| of the uniform law on the sphere of radius R in R^d at |b| = r (r > 0). The engine's
    expression is homogeneous of degree 0 in Bessel functions of one argument R r, so evaluating it with the
    scaled I_nu(z) e^{-z} (scipy.special.ive) gives the same ratio without overflow (where scipy's scaled functions give up, at arguments near 1e9, the same expression in mpmath).
    ``order_shift`` = 1 is the wrong order R I_{d/2+1} / I_{d/2} (a mutant)."""
    scalar = np.ndim(r) == 0
    r = np.atleast_1d(np.asarray(r, dtype=float))
    if np.any(r <= 0) or not np.all(np.isfinite(r)):
        raise ValueError("r must be finite and > 0")
    fast, exact = _gain_function(int(order_shift))
    with np.errstate(all="ignore"):
        out = np.array(fast(float(R), r, int(d)), dtype=float) * np.ones_like(r)
    bad = ~np.isfinite(out)
    if np.any(bad):                 # scipy's scaled Bessel functions give up at huge arguments: mpmath there
        import mpmath

        with mpmath.workdps(30):
            out[bad] = [float(exact(mpmath.mpf(float(R)), mpmath.mpf(float(x)), int(d))) for x in r[bad]]
    return out[0] if scalar else out


def sphere_map(A, X, R: float, tau: float = 1.0, W_v=None, gain=sphere_gain) -> np.ndarray:
    """Gamma_mu(x) = W_v g(|b|) b/|b|, b = A x / tau, for the uniform law on the sphere of radius R (X: (P, d));
    ``gain`` is g (:func:`sphere_gain`; a check passes its own ``ctx.theory.sphere_gain``)."""
    A, X = np.asarray(A, dtype=float), np.atleast_2d(np.asarray(X, dtype=float))
    d = X.shape[1]
    b = X @ A.T / tau
    r = np.linalg.norm(b, axis=1)
    out = (gain(R, r, d) / r)[:, None] * b
    return out if W_v is None else out @ np.asarray(W_v, dtype=float).T


def sphere_limits() -> dict:
    """The engine's SymPy limits of g: g(r)/r -> R^2/d as r -> 0 (the linearisation Sigma A x, Sigma = R^2/d I),
    g(r) -> R as r -> oo (the hardmax R b/|b|)."""
    from attnverify.theory.engine.laws import sphere_radial

    rad = sphere_radial()
    return {"small": rad["small"], "large": rad["large"]}



def horizon_forms(A, Sigma, tau: float = 1.0) -> dict[str, float]:
    """The horizons by their definitions, computed without a matrix square root: two-sided ||Sigma^{1/2} A
    Sigma^{1/2}||_2 = ||L^T A L||_2 for the Cholesky factor L (L = Sigma^{1/2} Q, Q orthogonal), its square the
    largest eigenvalue of M^T M; one-sided ||Sigma^{1/2} A||_2 = sqrt(lambda_max(A^T Sigma A)); ``*_tau``: of A/tau."""
    A, S = np.asarray(A, dtype=float), np.asarray(Sigma, dtype=float)
    L = np.linalg.cholesky(S)
    M = L.T @ A @ L
    two = float(np.sqrt(np.linalg.eigvalsh(M.T @ M)[-1]))
    one = float(np.sqrt(np.linalg.eigvalsh(A.T @ S @ A)[-1]))
    return {"two_sided": two, "one_sided": one, "two_sided_tau": two / tau, "one_sided_tau": one / tau}


def sphere_hardmax_coefficients(lambdas, exponents=None) -> np.ndarray:
    """c_i = int_0^oo (1 + 2 t lambda_i)^{p_sel - p_rest} prod_j (1 + 2 t lambda_j)^{p_rest} dt (the engine's
    one-dimensional form of E[z_i^2 / sum_j lambda_j z_j^2], :mod:`attnverify.theory.engine.sphere_covariance`; its
    powers p_sel = -3/2, p_rest = -1/2 derived there), by adaptive quadrature in log-space on [0, oo).
    ``exponents`` = (p_sel, p_rest) overrides the derived powers (a mutant)."""
    from scipy.integrate import quad

    from attnverify.theory.engine.sphere_covariance import factor_exponents

    lam = np.asarray(lambdas, dtype=float)
    if lam.ndim != 1 or lam.size < 2 or not np.all(np.isfinite(lam)) or np.any(lam < 0) or not np.any(lam > 0):
        raise ValueError("lambdas must be a vector of >= 2 finite numbers >= 0, not all 0")
    sel, rest = (float(p) for p in (exponents or factor_exponents()))
    out = np.zeros(lam.size)
    for i in np.flatnonzero(lam > 0):
        def f(t, i=i):
            logs = np.log1p(2.0 * t * lam)
            return np.exp((sel - rest) * logs[i] + rest * logs.sum())
        out[i] = sum(quad(f, a, b, epsabs=0.0, epsrel=1e-11, limit=200)[0]
                     for a, b in ((0.0, 1.0 / lam.max()), (1.0 / lam.max(), np.inf)))
    return out


def sphere_hardmax_covariance(A, V, R: float, exponents=None) -> np.ndarray:
    """The covariance R^2 V U diag(lambda_i c_i) U^T V^T of the hardmax push-forward x -> R V A x/|A x| of the
    uniform law on the sphere of radius R (A = U S W^T, lambda = S^2; c_i: :func:`sphere_hardmax_coefficients`).
    Its mean is 0 (the map is odd)."""
    A, V = np.asarray(A, dtype=float), np.asarray(V, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.all(np.isfinite(A)) or not np.any(A):
        raise ValueError("A must be a finite nonzero square matrix")
    U, s, _ = np.linalg.svd(A)
    lam = s**2 / (s**2).max()                       # the form is invariant under A -> c A
    c = sphere_hardmax_coefficients(lam, exponents)
    M = (U * (lam * c)) @ U.T
    return float(R) ** 2 * V @ M @ V.T


def sphere_hardmax_certificate(A) -> float:
    """The largest relative distance of the quadrature's c_i (:func:`sphere_hardmax_coefficients`) from their Arb
    enclosures (:func:`attnverify.theory.engine.sphere_covariance.certified_coefficients`, at the exact binary
    values of the float lambdas of A); 0 when every quadrature value lies in its ball. Small d only (the Arb
    integral's cost grows with d); d > 8 raises."""
    from attnverify.theory.engine.sphere_covariance import certified_coefficients

    s = np.linalg.svd(np.asarray(A, dtype=float), compute_uv=False)
    if s.size > 8:
        raise ValueError(f"the certificate is for d <= 8, got d = {s.size}")
    lam = s**2 / (s**2).max()
    quad = sphere_hardmax_coefficients(lam)
    gap = 0.0
    for q, ball in zip(quad, certified_coefficients([float(x) for x in lam])):
        lo, hi = float(ball.mid() - ball.rad()), float(ball.mid() + ball.rad())
        gap = max(gap, max(lo - q, q - hi, 0.0) / abs(q))
    return gap
