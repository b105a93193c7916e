"""Paper A's quantities that a claim may state (``attnverify list --quantities``; ``attnverify audit``).

``J_limit``  the long-sequence objective J(rho) = |f_oo|^2 (R, L - R -> oo), in rho, theta, beta, sigma, R, L;
             a stated formula may use ``w`` for the informative attention mass.
             Measured: J_d(rho) = E|f_q(X)|^2 by conditional Monte Carlo with control variates
             (``numerics.signal_mc.objective_rb_cv``) at d = 2, which estimates the limit plus its O(1/L) terms:
             the judge allows the derived gap between the two.
``w``        the informative attention mass in the long-sequence limit, in rho, theta, beta, sigma, R, L.
             Measured: one minus the nuisance mass, scores-only Monte Carlo (``numerics.signal_mc.nuisance_mass_mc``),
             which estimates w plus its O(1/L) ratio bias.
"""
from __future__ import annotations

import numpy as np

from attnverify.checks.judge import Measured
from attnverify.checks.plugin import Quantity
from attnverify.checks.signal._model import MODEL_PARAMS
from attnverify.checks.signal.formulas import SYMBOLS

SIGN = next(p for p in MODEL_PARAMS if p.name == "sign")
D_MEASURE = 2                 # the token dimension of the measurement: the (d - 1) finite-size term is smallest
N_SEQUENCES = 4000            # Monte Carlo sequences per point (standard error ~1e-3 relative at L = 10500)
_J_SYMBOLS = {k: SYMBOLS[k] for k in ("rho", "theta", "beta", "sigma", "R", "L")}


def sample(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """``n`` admissible points: rho in [-0.95, 0.95], theta in [0.25, 2], beta and sigma in [0.5, 1.5] with
    beta sigma <= 1 (inside the finite-size expansion's range for every L >= 3), R and L from ``fixed`` or
    R in [20, 400], L in [2R + 20, 20 R]."""
    out = []
    while len(out) < n:
        p = {"rho": rng.uniform(-0.95, 0.95), "theta": rng.uniform(0.25, 2.0), "beta": rng.uniform(0.5, 1.5),
             "sigma": rng.uniform(0.5, 1.5)}
        if p["beta"] * p["sigma"] > 1.0:
            continue
        R = int(fixed.get("R", rng.integers(20, 401)))
        L = int(fixed.get("L", rng.integers(2 * R + 20, 20 * R + 1)))
        out.append({**p, "R": R, "L": L, **{k: v for k, v in fixed.items() if k not in ("R", "L")}})
    return out


def _model(values: dict):
    from attnverify.numerics.signal_model import SignalModel

    return SignalModel(theta=float(values["theta"]), beta=float(values["beta"]), sigma=float(values["sigma"]),
                       R=int(values["R"]), L=int(values["L"]), d=D_MEASURE, sign=values.get("sign", "fixed"))


def _measure_J(values: dict, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.signal_mc import objective_rb_cv

    est = objective_rb_cv(_model(values), np.array([float(values["rho"])]), N_SEQUENCES, rng)
    return Measured(float(est.mean[0]), float(est.se[0]),
                    f"conditional Monte Carlo, {N_SEQUENCES} sequences, d = {D_MEASURE}")


def _measure_w(values: dict, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.signal_mc import nuisance_mass_mc

    est = nuisance_mass_mc(float(values["theta"]), float(values["beta"]), float(values["sigma"]),
                           [(int(values["R"]), int(values["L"]))], np.array([float(values["rho"])]), N_SEQUENCES, rng,
                           values.get("sign", "fixed"))
    return Measured(1.0 - float(est.mean[0]), float(est.se[0]), f"scores-only Monte Carlo, {N_SEQUENCES} sequences")


def _J(sign: str = "fixed"):
    from attnverify.theory.signal_recovery import population_objective

    return population_objective(sign, False)


def _J_measured(sign: str = "fixed"):
    from attnverify.theory.signal_recovery import d, population_objective

    return population_objective(sign, True).subs(d, D_MEASURE)


def _w(sign: str = "fixed"):
    from attnverify.theory.signal_recovery import informative_mass

    return informative_mass(sign)


def _w_measured(sign: str = "fixed"):
    from attnverify.theory.signal_recovery import nuisance_mass

    return 1 - nuisance_mass(sign, True)


def quantities() -> list[Quantity]:
    return [
        Quantity("J_limit", "the long-sequence objective J(rho) = |f_oo|^2 (R, L - R -> oo); a stated formula may "
                 "use w for the informative attention mass", _J_SYMBOLS, _J, kinds=("formula", "value"),
                 options=(SIGN,), aliases={"w": _w}, sample=sample, measure=_measure_J, measured_as=_J_measured),
        Quantity("w", "the informative attention mass in the long-sequence limit", _J_SYMBOLS, _w,
                 kinds=("formula", "value"), options=(SIGN,), sample=sample, measure=_measure_w,
                 measured_as=_w_measured),
    ]
