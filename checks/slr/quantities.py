"""Paper C's quantities that a claim may state (``attnverify list --quantities``; ``attnverify audit``;
``attnverify.quantity("slr.risk", kappa=..., ...)``).

``risk``           the population risk R = E (Y - T_{k,v}(X))^2 of unit k, v, in kappa, nu, theta, eta, rho, lam,
                   gamma, d, L, eps; a stated formula may use ``zeta_I`` for E erf(lam <X_J0, k>)^2 =
                   zeta_{lam gamma}(lam sqrt(d/2) kappa). Measured: Monte Carlo of (Y - T)^2 at vectors k, v, k*, v*
                   realised in R^d with the overlaps (attnverify.numerics.slr.risk, projected sampler: equal in law).
``risk_on_M``      R on M = {theta = eta = rho = 0}: r(kappa, nu), same symbols but the three normal overlaps; measured
                   the same way at vectors on M.
``linear_excess``  R_lin - eps^2 of the best linear predictor, in gamma, L (and d, eps, which it does not depend on).
                   Measured: least squares on N_TRAIN tasks (pooled features), its risk on N_TEST fresh tasks minus
                   eps^2 -- which estimates the excess plus the estimation error, about (excess + eps^2) d / (N_TRAIN
                   - d - 1) (``measured_as``; the formula judge allows that gap).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.judges import Measured
from attnverify.checks.plugin import Quantity
from attnverify.checks.reason import Math, reason
from attnverify.checks.slr._model import random_overlaps, realise, slr_model
from attnverify.checks.slr.formulas import SYMBOLS

N_MC = 40000
N_TRAIN = N_TEST = 40000
REPEATS = 16          # independent Monte Carlo runs a judge may pool at one point to resolve a difference
_PARAMS = ("lam", "gamma", "d", "L", "eps")
_ON_M = ("kappa", "nu") + _PARAMS
# a stated formula names its symbols as a user types them (``lam``, ``eps``); the theory's symbols print as lambda
# and epsilon: the quantities use symbols named by their keys, with the theory's assumptions
REALS = sp.Symbol(r"\mathbb{R}")           # the space the vectors are realised in: R^d
QSYM = {k: (v if v.name == k else sp.Symbol(k, **v.assumptions0)) for k, v in SYMBOLS.items()}


def _named(expr: sp.Expr) -> sp.Expr:
    """A theory expression in the quantities' symbols (lambda -> lam, epsilon -> eps)."""
    return sp.sympify(expr).xreplace({SYMBOLS[k]: QSYM[k] for k in SYMBOLS if QSYM[k] is not SYMBOLS[k]})


def _zeta_I() -> sp.Expr:
    from attnverify.theory.slr.gauss import zeta_erf

    S = QSYM
    return zeta_erf(S["lam"] * sp.sqrt(S["d"] / 2) * S["kappa"], S["lam"] * S["gamma"])


def _params(rng: np.random.Generator, fixed: dict) -> dict:
    p = {"lam": rng.uniform(0.05, 2.0), "gamma": rng.uniform(0.3, 1.5), "d": int(rng.integers(4, 401)),
         "L": int(rng.integers(1, 21)), "eps": rng.uniform(0.0, 1.5)}
    return {**p, **{k: v for k, v in fixed.items() if k in _PARAMS}}


def sample_risk(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """n points: realisable overlaps of order one (k, v mostly in span(k*, v*)) and parameters lam in [0.05, 2],
    gamma in [0.3, 1.5], d in [4, 400], L in [1, 20], eps in [0, 1.5] (``fixed`` values kept)."""
    ov = random_overlaps(rng, n)
    out = []
    for o in ov:
        pt = dict(zip(("kappa", "nu", "theta", "eta", "rho"), map(float, o)))
        out.append({**pt, **_params(rng, fixed), **{k: v for k, v in fixed.items() if k not in _PARAMS}})
    return out


def sample_on_M(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """n points of M: kappa, nu uniform in [-1, 1], parameters as ``sample_risk``."""
    return [{"kappa": rng.uniform(-1, 1), "nu": rng.uniform(-1, 1), **_params(rng, fixed),
             **{k: v for k, v in fixed.items() if k not in _PARAMS}} for _ in range(n)]


def _mc(values: dict, ov: np.ndarray, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.slr.risk import risk_mc

    d = int(values["d"])
    k, v, ks, vs = realise(ov[None], d, rng)
    m, se = risk_mc(slr_model(float(values["gamma"]), d, int(values["L"]), float(values["eps"])), k[0], v[0], ks, vs,
                    float(values["lam"]), N_MC, rng, method="projected")
    return Measured(float(m), float(se),
                    reason(f"Monte Carlo, {N_MC} tasks at vectors realised in ", Math(REALS ** d)))


def measure_risk(values: dict, rng: np.random.Generator) -> Measured:
    return _mc(values, np.array([float(values[k]) for k in ("kappa", "nu", "theta", "eta", "rho")]), rng)


def measure_on_M(values: dict, rng: np.random.Generator) -> Measured:
    return _mc(values, np.array([float(values["kappa"]), float(values["nu"]), 0.0, 0.0, 0.0]), rng)


def sample_linear(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """n points: gamma in [0.3, 1.5], L in [1, 20], d in [2, 20], eps in [0, 1]."""
    return [{"gamma": rng.uniform(0.3, 1.5), "L": int(rng.integers(1, 21)), "d": int(rng.integers(2, 21)),
             "eps": rng.uniform(0.0, 1.0), **fixed} for _ in range(n)]


def measure_linear(values: dict, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.slr.linear import linear_baseline
    from attnverify.numerics.slr.model import draw_targets

    d = int(values["d"])
    model = slr_model(float(values["gamma"]), d, int(values["L"]), float(values["eps"]))
    ks, vs = draw_targets(d, rng)
    b = linear_baseline(model, ks, vs, N_TRAIN, N_TEST, rng, features="pooled")
    return Measured(b.test_risk - float(values["eps"]) ** 2, b.test_risk_se,
                    reason(f"least squares on {N_TRAIN} tasks, risk on {N_TEST} fresh tasks, minus ",
                           Math(SYMBOLS["eps"] ** 2)))


def _risk():
    from attnverify.theory.slr import THEORY

    return _named(THEORY.risk())


def _risk_on_M():
    from attnverify.theory.slr import THEORY

    return _named(THEORY.risk_on_M())


def _linear_excess():
    from attnverify.theory.slr import THEORY

    return _named(THEORY.best_linear_predictor()["excess"])


def _linear_measured_as():
    S = QSYM
    return _linear_excess() + (_linear_excess() + S["eps"] ** 2) * S["d"] / (N_TRAIN - S["d"] - 1)


def quantities() -> list[Quantity]:
    sym = dict(QSYM)
    return [
        Quantity("risk", "the population risk R = E (Y - T_{k,v}(X))^2 in the overlaps; a stated formula may use "
                 "zeta_I = E erf(lam <X_J0, k>)^2", sym, _risk, kinds=("formula", "value"),
                 aliases={"zeta_I": _zeta_I}, sample=sample_risk, measure=measure_risk, repeats=REPEATS),
        Quantity("risk_on_M", "the population risk on M = {theta = eta = rho = 0}, r(kappa, nu); a stated formula may "
                 "use zeta_I", {k: sym[k] for k in _ON_M}, _risk_on_M, kinds=("formula", "value"),
                 aliases={"zeta_I": _zeta_I}, sample=sample_on_M, measure=measure_on_M, repeats=REPEATS),
        Quantity("linear_excess", "R_lin - eps^2, the excess risk of the best linear predictor",
                 {k: sym[k] for k in ("gamma", "L", "d", "eps")}, _linear_excess, kinds=("formula", "value"),
                 sample=sample_linear, measure=measure_linear, measured_as=_linear_measured_as, repeats=REPEATS),
    ]
