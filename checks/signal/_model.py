"""Paper A model options shared by its checks (THEORY.md, Paper A, "Model"), the model of a check's parameters, and
the numeric evaluation of its closed forms (J and F of a theory object, attnverify.theory.signal.SignalTheory: the
one a check receives as ``ctx.theory``)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mpmath as mp
import numpy as np
import sympy as sp

from attnverify.theory.signal import ARGS
from attnverify.checks.params import Param
from attnverify.checks.stats import expansion_ratio_of_logs
from attnverify.numerics.signal.model import SignalModel

MODEL_PARAMS = (
    Param("sign", str, "fixed", "model option: 'fixed' signal sign, or 'symmetric' (one Rademacher sign per sequence)",
          choices=("fixed", "symmetric")),
    Param("theta", float, 0.25, "signal strength theta", low=0.0, low_open=True),
    Param("beta", float, 1.0, "inverse temperature beta", low=0.0, low_open=True),
    Param("sigma", float, 1.0, "noise standard deviation sigma", low=0.0, low_open=True),
    Param("R", int, 50, "number of informative tokens R", low=1),
    Param("L", int, 1050, "sequence length L", low=2),
    Param("d", int, 20, "token dimension d", low=2),
)
_MODEL_KEYS = ("theta", "beta", "sigma", "R", "L", "d")


#: smallest score scale beta theta and beta sigma (score_scales)
MIN_SCORE_SCALE = 1e-6
#: eta^2 E|g|^2 below which the SGA checks use their second-order expansion in the step (remainder ~ its 3/2 power)
MAX_STEP_ENERGY = 0.05


def score_scales(p: dict) -> None:
    """The scores beta <q, x> must move the softmax: informative tokens are lifted by beta theta rho and every token
    varies by beta sigma |z|. Below MIN_SCORE_SCALE the attention weights are uniform up to that relative amount:
    their rho-dependence and their spread over sampled sequences fall towards rounding, and the Monte Carlo z-scores
    that compare them with the closed forms become 0/0 (at theta = 0 or sigma = 1e-300 a check divided zero by zero).
    ValueError naming the product that is too small; one rule for every Paper A check (``theta`` or ``thetas``)."""
    thetas = [p["theta"]] if "theta" in p else list(p.get("thetas", ()))
    for th in thetas:
        if p["beta"] * th < MIN_SCORE_SCALE:
            raise ValueError(f"beta theta = {p['beta'] * th:.3g} < {MIN_SCORE_SCALE:g}: the signal does not move the "
                             f"attention weights (theta = {th:g}, beta = {p['beta']:g}); raise theta or beta")
    if p["beta"] * p["sigma"] < MIN_SCORE_SCALE:
        raise ValueError(f"beta sigma = {p['beta'] * p['sigma']:.3g} < {MIN_SCORE_SCALE:g}: the noise does not move "
                         f"the attention weights, so the Monte Carlo has no spread to test; raise sigma or beta")


def model_sizes(p: dict) -> None:
    """The numerics' own limits on the model (attnverify.numerics.signal.model.SignalModel: token norms and scores
    within the double range), applied before any work, for every (theta, d) the check will sample."""
    from attnverify.numerics.signal.model import SignalModel

    thetas = [p["theta"]] if "theta" in p else list(p.get("thetas", ()))
    ds = [p["d"]] if "d" in p else list(p.get("ds", (2,)))
    for th in thetas:
        for d in ds:
            SignalModel(th, p["beta"], p["sigma"], p["R"], p["L"], d)
def model_text(m: SignalModel, theta: bool = True) -> str:
    """``sign=..., theta=..., beta=..., sigma=..., R=..., L=..., d=...`` of a model point (theta left out when
    False): how the claims name the model point a check ran at."""
    head = f"sign={m.sign}, " + (f"theta={m.theta:g}, " if theta else "")
    return head + f"beta={m.beta:g}, sigma={m.sigma:g}, R={m.R}, L={m.L}, d={m.d}"


def validate_model(p: dict) -> None:
    """Cross-parameter constraints between the options given (``p`` may hold a subset, as for ``derive``):
    1 <= R < L (at least one nuisance token), beta^2 sigma^2 <= log L, the range of the finite-size term (at
    least one effective token: L e^(-beta^2 sigma^2) >= 1) that every closed form compared with sampled sequences
    includes, scores that move the softmax (score_scales) and the numerics' size limits (model_sizes). A check
    whose precision can resolve the term's next order adds its own rule (expansion_ratio)."""
    if "R" in p and "L" in p:
        if p["R"] > p["L"]:
            raise ValueError(f"R = {p['R']} exceeds L = {p['L']}: R counts informative tokens among L")
        if p["R"] == p["L"]:
            raise ValueError(f"R = L = {p['L']}: the model needs at least one nuisance token (R < L)")
    if "beta" in p and "sigma" in p:
        score_scales(p)
    if all(k in p for k in ("beta", "sigma", "R", "L")) and ("theta" in p or "thetas" in p):
        model_sizes(p)
    if p.get("finite_size", True) and all(k in p for k in ("beta", "sigma", "L")) \
            and p["beta"] * p["sigma"] > np.sqrt(np.log(p["L"])):
        raise ValueError(f"the finite-size term needs beta^2 sigma^2 <= log L, got beta sigma = "
                         f"{p['beta'] * p['sigma']:.4g} > sqrt(log L) = {np.sqrt(np.log(p['L'])):.4g}")


def expansion_ratio(p: dict, theta: float, rhos: np.ndarray | None = None) -> np.ndarray:
    """The delta method's predicted next order relative to the O(1/L) terms, C_R m_3 / (m_2 L)
    (attnverify.checks.stats), at each rho (by default the worst over rho in [-1, 1]) for Paper A's tokens: a
    fraction pi = R / L has score mean eps beta theta rho, the rest mean 0, all score variance v = beta^2 sigma^2, so

        log m_j = j (j - 1) v / 2 + log(1 - pi + pi e^{j x}) - j log(1 - pi + pi e^{x}),   x = eps beta theta rho,

    with eps = 1 (fixed sign) or the larger over eps = +-1 (symmetric); the model's statement, not a derived quantity,
    in log-space."""
    v, pi = (p["beta"] * p["sigma"]) ** 2, p["R"] / p["L"]
    rho = np.linspace(-1.0, 1.0, 201) if rhos is None else np.asarray(rhos, float)
    signs = np.array([1.0, -1.0]) if p.get("sign", "fixed") == "symmetric" else np.array([1.0])
    x = (p["beta"] * theta * rho)[None, :] * signs[:, None]

    def log_m(j: int) -> np.ndarray:
        mix = np.logaddexp(np.log1p(-pi), np.log(pi) + j * x) - j * np.logaddexp(np.log1p(-pi), np.log(pi) + x)
        return j * (j - 1) * v / 2 + mix
    ratio = np.max(expansion_ratio_of_logs(log_m(2), log_m(3), p["L"]), axis=0)
    return ratio if rhos is not None else np.max(ratio, keepdims=True)


def numeric_function(expr: sp.Expr, args: Sequence[sp.Symbol], dps: int = 30) -> Callable[..., np.ndarray]:
    """``expr`` as a vectorised float function of ``args``: NumPy in double precision, and ``dps``-digit mpmath at
    the points where double overflows (e^{beta theta rho} beyond e^709 gives inf/inf = NaN in NumPy), so a closed
    form with large scores is never inf or NaN. A value outside the double range itself is a ValueError."""
    fast = sp.lambdify(args, expr, "numpy", cse=True)
    exact = sp.lambdify(args, expr, "mpmath")

    def f(*values):
        if all(isinstance(v, (float, int)) for v in values):          # scalar fast path (ODE right-hand sides)
            with np.errstate(all="ignore"):
                y = float(fast(*values))
            if np.isfinite(y):
                return y
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))
        with np.errstate(all="ignore"):
            out = np.array(np.broadcast_to(fast(*arrays), arrays[0].shape), dtype=float)
        bad = ~np.isfinite(out)
        if np.any(bad):
            with mp.workdps(dps):
                out[bad] = [float(exact(*map(mp.mpf, point))) for point in zip(*(a[bad] for a in arrays))]
            if not np.all(np.isfinite(out)):
                raise ValueError("a closed form exceeds the double range (|value| > 1.8e308) at these parameters")
        return out
    return f


def model_values(p: dict, **override) -> dict:
    """The model parameters (theta, beta, sigma, R, L, d) of a check's parameter dict, with overrides."""
    return {k: override[k] if k in override else p[k] for k in _MODEL_KEYS}


def model_of(p: dict, **override) -> SignalModel:
    """The SignalModel of a check's parameters (sign, theta, beta, sigma, R, L, d), with overrides."""
    kw = {k: p[k] for k in ("theta", "beta", "sigma", "R", "L", "d", "sign") if k in p}
    kw.update(override)
    return SignalModel(**kw)


def model_args(model: SignalModel) -> tuple:
    """The numeric values of the closed forms' arguments after rho: (theta, beta, sigma, R, L, d) of ``model``."""
    return (model.theta, model.beta, model.sigma, model.R, model.L, model.d)


def closed_form(theory: Any, sign: str, finite_size: bool) -> Callable[..., np.ndarray]:
    """J(rho, theta, beta, sigma, R, L, d) of ``theory`` (its population_objective) as a NumPy function
    (numeric_function)."""
    return numeric_function(theory.population_objective(sign, finite_size), ARGS)


def field_function(theory: Any, sign: str, finite_size: bool = True) -> Callable[..., np.ndarray]:
    """F(rho, theta, beta, sigma, R, L, d) of ``theory`` (its reduced_field) as a NumPy function (numeric_function)."""
    return numeric_function(theory.reduced_field(sign, finite_size), ARGS)
