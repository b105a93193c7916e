r"""Token queries: the infinite-token attention map Gamma_mu(x) and the moments of its push-forward (Gamma_mu)#mu.

With the query a token x and the score <A x, y>/tau, the score vector is a = A x / tau and (:mod:`.limit`)

    Gamma_mu(x) = E_mu[e^{<a,y>} V y] / E_mu[e^{<a,y>}] = V m_mu(a)      (the tilted mean).

For a Gaussian mu = N(m, Sigma) the tilted mean is grad log M(a) = m + Sigma a, so Gamma_mu(x) = V (m + Sigma A x /
tau) is affine in x; the push-forward of X ~ mu by an affine map x -> c + B x is Gaussian with mean c + B m and
covariance B Sigma B^T.  Two forms are derived:

* :func:`gaussian_token_map`: with d x d matrix symbols (``MatrixSymbol`` A, V, Sigma, m, x) by SymPy's matrix
  calculus: log M(a) from sympy.stats (<a, X> ~ N(a^T m, a^T Sigma a)), its gradient, B = dGamma/dx, the check that
  Gamma is affine (B free of x); :func:`gaussian_token_map_numeric` evaluates them on NumPy arrays (any d, e.g. the
  d = 50 random A of Paper D's protocol).
* :func:`pushforward_quantities`: for a model file with one Gaussian component, in the directions' coordinates
  (the matrices block-diagonal: a k x k block and a scalar on the complement).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from attnverify.theory.engine.laws import gaussian_log_mgf_1d
from attnverify.theory.engine.limit import Geometry
from attnverify.theory.engine.model_file import Model

_n = sp.Symbol("n", integer=True, positive=True)


@lru_cache(maxsize=None)
def gaussian_token_map() -> dict[str, sp.Basic]:
    """Matrix closed forms for mu = N(m, Sigma) in R^n (n a symbol): ``log_mgf`` (1 x 1), ``tilted_mean``,
    ``attention_map`` Gamma_mu(x), ``jacobian`` B (Gamma(x) = Gamma(0) + B x), ``pushforward_mean``,
    ``pushforward_cov``; ``symbols``: the MatrixSymbols and tau.  Raises ArithmeticError if Gamma is not affine."""
    A, V, S = (sp.MatrixSymbol(s, _n, _n) for s in ("A", "V", "Sigma"))
    m, x, a = (sp.MatrixSymbol(s, _n, 1) for s in ("m", "x", "a"))
    tau = sp.Symbol("tau", positive=True)
    f1, (b, mu, var) = gaussian_log_mgf_1d()          # log E e^{b Y}, Y ~ N(mu, var); here Y = <a, X>, b = 1
    log_mgf = sp.expand(f1.subs(b, 1))
    coeffs = (log_mgf.coeff(mu), log_mgf.coeff(var))
    if sp.expand(log_mgf - coeffs[0] * mu - coeffs[1] * var) != 0:
        raise ArithmeticError(f"unexpected Gaussian log-MGF {log_mgf}")
    log_m = coeffs[0] * a.T * m + coeffs[1] * a.T * S * a
    tilted = sp.simplify(sp.diff(log_m, a).xreplace({S.T: S}))           # Sigma is symmetric
    gamma = (V * tilted.subs(a, A * x / tau)).doit()
    B = sp.diff(gamma, x).T                                              # SymPy's layout: d Gamma / d x = B^T
    if B.has(x):                                                         # a constant Jacobian: affine
        raise ArithmeticError("Gamma_mu is not affine in x")
    B = B.xreplace({S.T: S})
    return {"log_mgf": log_m, "tilted_mean": tilted, "attention_map": gamma, "jacobian": B,
            "pushforward_mean": gamma.subs(x, m).doit(), "pushforward_cov": (B * S * B.T).doit().xreplace({S.T: S}),
            "symbols": {"A": A, "V": V, "Sigma": S, "m": m, "x": x, "tau": tau, "n": _n}}


@lru_cache(maxsize=None)
def _numeric_functions():
    f = gaussian_token_map()
    s = f["symbols"]
    args = [s["A"], s["V"], s["Sigma"], s["m"], s["tau"]]
    return (sp.lambdify(args, f["pushforward_mean"], "numpy"), sp.lambdify(args, f["pushforward_cov"], "numpy"),
            sp.lambdify([*args, s["x"]], f["attention_map"], "numpy"))


def gaussian_token_map_numeric(A, V, Sigma, m, tau: float = 1.0, x=None) -> dict[str, np.ndarray]:
    """The closed forms of :func:`gaussian_token_map` on NumPy arrays (A, V, Sigma: (n, n); m: (n,); x: (n,) or
    (N, n), optional): ``pushforward_mean`` (n,), ``pushforward_cov`` (n, n) and, with x, ``attention_map``."""
    A, V, S = (np.asarray(M, dtype=float) for M in (A, V, Sigma))
    m = np.asarray(m, dtype=float).reshape(-1, 1)
    n = m.shape[0]
    if any(M.shape != (n, n) for M in (A, V, S)):
        raise ValueError(f"A, V, Sigma must be ({n}, {n}) to match m, got {A.shape}, {V.shape}, {S.shape}")
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be finite and > 0, got {tau}")
    if not np.allclose(S, S.T):
        raise ValueError("Sigma must be symmetric")
    mean_f, cov_f, map_f = _numeric_functions()
    out = {"pushforward_mean": np.asarray(mean_f(A, V, S, m, tau), dtype=float).ravel(),
           "pushforward_cov": np.asarray(cov_f(A, V, S, m, tau), dtype=float)}
    if x is not None:
        X = np.atleast_2d(np.asarray(x, dtype=float))
        out["attention_map"] = np.asarray(map_f(A, V, S, m, tau, X.T), dtype=float).T.reshape(np.shape(x))
    return out


def has_pushforward(model: Model) -> bool:
    """Whether the model's push-forward (Gamma_mu)#mu has derived moments: a token query and one Gaussian component
    of fixed sign (its map is affine)."""
    return model.attention.query == "token" and len(model.components) == 1 \
        and model.components[0].law == "gaussian" and model.components[0].sign == "fixed"


def pushforward_quantities(model: Model, geo: Geometry, attention_map: sp.Matrix) -> dict[str, sp.Basic]:
    """For a token-query model with one Gaussian component N(m, Sigma): ``pushforward_mean`` (Matrix, k + 1: the
    directions' coordinates, then the complement's, 0) and ``pushforward_cov`` ((k + 1) x (k + 1): the directions'
    block, then the variance along each of the d - k complement directions).  Empty for other models (their map is
    not affine: no closed form is claimed; with a random sign the token law itself is random, and the push-forward of
    N(m, Sigma) would not be the model's).  ``attention_map``: (Gamma_e, Gamma_perp) in x_<dir>, x_perp, where
    Gamma_perp = g x_perp is the coordinate along x's own complement direction."""
    if not has_pushforward(model):
        return {}
    c, k = model.components[0], model.k
    xs, xp = geo.query, geo.t
    gam_e = [sp.simplify(attention_map[i]) for i in range(k)]
    gain = sp.simplify(attention_map[k] / xp)
    variables = [*xs, xp]
    if gain.has(*variables) or any(sp.diff(g, u, w) != 0 for g in gam_e for u in variables for w in variables):
        raise ArithmeticError("the Gaussian attention map is not affine")
    Jac = sp.Matrix([[sp.diff(g, u) for u in xs] for g in gam_e])
    if any(sp.diff(g, xp) != 0 for g in gam_e):
        raise ArithmeticError("the directions' block depends on the complement")
    mean_e = [g.subs({**dict(zip(xs, c.mean)), xp: 0}) for g in gam_e]       # E Gamma(X) = Gamma(E X): affine
    S = sp.diag(*c.cov)
    block = Jac * S * Jac.T
    cov = sp.zeros(k + 1, k + 1)
    cov[:k, :k] = block
    cov[k, k] = gain**2 * c.cov_rest
    return {"pushforward_mean": sp.ImmutableMatrix([*mean_e, 0]),
            "pushforward_cov": sp.ImmutableMatrix(cov.applyfunc(sp.simplify))}
