"""Paper C, claim 2: the oracle's risk at its best temperature lam_best(d), against Monte Carlo, and its excess over
the Bayes risk as d grows.

Analytic side: the oracle's risk R(k*, v*) (the theory object's ``risk``, by its ``risk_evaluator``) minimised over
lam: lam_best(d) = argmin over lam of the closed-form oracle risk.

Numeric side: the measured risk of the oracle predictor at lam_best by Monte Carlo (the simulators' ``risk_mc``,
projected sampler: equal in law) against the closed form (z-tests, Bonferroni); the Bayes excess R* - eps^2 by
Monte Carlo (the simulators' ``bayes_risk_mc``, its own posterior). Each difference is scored by its part beyond
a bound on the closed form's float64 rounding (:func:`closed_form_rounding`): where the oracle's risk is exactly
eps^2 (one token, L = 1) the Monte Carlo is exact to ~1e-40 and a rounding of 1e-17 would read as 1e24 se.
Findings: lam_best(d), the oracle's excess and the gap to Bayes, and the slope of log(gap) against log d (least
squares with its standard error) -- the asymptotic question of claim 2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, bracket, reason
from attnverify.checks.reason_values import measured_power, number_or_na
from attnverify.checks.registry import check
from attnverify.checks.slr._model import closed_form_rounding, model_options, oracle_overlaps, slr_model, validate_model
from attnverify.checks.slr.claims import DIM
from attnverify.checks.stats import beyond, bonferroni_z, linfit
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY


#: the oracle's best temperature, and "scales as" (LaTeX: SymPy has no bare relation sign)
LAM_BEST, SIM = Math(sp.Symbol("lambda_best")), Math(r"\sim")
# the plot's labels: lambda_best(d), the excess risk R - eps^2, d and L
LAM_BEST_OF_D = Math(sp.Function("lambda_best")(DIM))
EXCESS_RISK = Math(sp.Symbol("R") - sp.Symbol("epsilon") ** 2)
D_MATH, L_MATH = Math(DIM), Math(sp.Symbol("L"))


def _interval(lo: float, hi: float) -> tuple:
    """The 95 % interval of a slope as parts: a bracket, or its ends as "n/a" where the fit has none."""
    if math.isfinite(lo) and math.isfinite(hi):
        return (bracket(lo, hi, digits=3),)
    return ("[", number_or_na(lo, 3), ", ", number_or_na(hi, 3), "]")


def best_lam(theory, gamma: float, d: int, L: int, eps: float) -> tuple[float, float]:
    """(lam_best, R(oracle) at lam_best): the closed-form oracle risk of ``theory`` minimised over log lam in
    [1e-3, 10]."""
    from scipy.optimize import minimize_scalar

    o = oracle_overlaps()
    r = minimize_scalar(lambda x: float(theory.risk_evaluator(np.exp(x), gamma, d, L, eps).risk(o)),
                        bounds=(np.log(1e-3), np.log(10.0)), method="bounded", options={"xatol": 1e-9})
    return float(np.exp(r.x)), float(r.fun)


def oracle_mc_task(model_args: tuple, lam: float, n: int, seed: np.random.SeedSequence, risk_mc, bayes_risk_mc,
                   sample_tasks) -> dict:
    """Monte Carlo risk of the oracle predictor at lam (``risk_mc``) and the Monte Carlo Bayes excess
    (``bayes_risk_mc``) (numerics only; ``sample_tasks`` for the samplers that draw whole tasks)."""
    from attnverify.numerics.slr.model import draw_targets

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    m, se = risk_mc(model, ks, vs, ks, vs, lam, n, rng, method="projected", sample=sample_tasks)
    b = bayes_risk_mc(model, n, rng, sample=sample_tasks)
    return {"risk": float(m), "se": float(se), "bayes": b.excess, "bayes_se": b.excess_se}


@dataclass(frozen=True)
class OracleBayesFindings:
    ds: tuple[int, ...]
    lam_best: tuple[float, ...]
    excess_closed: tuple[float, ...]
    excess_mc: tuple[float, ...]
    excess_se: tuple[float, ...]
    bayes_excess: tuple[float, ...]
    gap_slope: float
    gap_slope_se: float
    gap_slope_ci: tuple[float, float]
    lam_slope: float
    L: int


@check(
    id="slr.oracle_vs_bayes",
    compares="The oracle's risk at its best temperature lam_best(d) has the derived closed form (Monte Carlo), and its "
             "excess over the Bayes risk is measured as d grows",
    source="Paper C, claim 2",
    params=[*model_options(without=("d", "lam")),
            Param("ds", "ints", (100, 400, 1600), "token dimensions d", low=4, high=1_000_000),
            Param("n_tasks", int, 20000, "Monte Carlo tasks per d", low=1000, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper_profile={"ds": (50, 100, 200, 400, 800, 1600, 3200, 6400), "n_tasks": 200000},
    validate=validate_model,
    formulas=('R', 'r_M', 's(x)'),
    theory=THEORY, numerics=NUMERICS,
)
def oracle_vs_bayes(p: dict, ctx: Context) -> Evidence:
    ds = tuple(sorted(set(p["ds"])))
    best = [best_lam(ctx.theory, p["gamma"], d, p["L"], p["eps"]) for d in ds]
    sim = ctx.numerics
    out = ctx.map(oracle_mc_task, [((p["gamma"], d, p["L"], p["eps"]), lam, p["n_tasks"], s, sim.risk_mc,
                                    sim.bayes_risk_mc, sim.sample_tasks)
                                   for d, (lam, _), s in zip(ds, best, ctx.seeds(len(ds)))])
    e2 = p["eps"] ** 2
    floor = closed_form_rounding(p["eps"])
    part = [float(beyond(o["risk"] - r, floor)) for (_, r), o in zip(best, out)]
    z = np.array([b / max(o["se"], floor) for b, o in zip(part, out)])    # an exact simulation: floor units
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    exc_c = [r - e2 for _, r in best]
    exc_m = [o["risk"] - e2 for o in out]
    gap = np.array([m - o["bayes"] for m, o in zip(exc_m, out)])
    if len(ds) >= 3 and np.all(gap > 0):
        fit = linfit(np.log(ds), np.log(gap))
        slope, sse, ci = fit["slope"], fit["se"], tuple(fit["ci95"])
        lam_slope = linfit(np.log(ds), np.log([lam for lam, _ in best]))["slope"]
    else:
        slope, sse, ci, lam_slope = float("nan"), float("nan"), (float("nan"), float("nan")), float("nan")
    return Evidence(
        metric=reason("max ", Math(sp.Abs(sp.Symbol("z"))), " of the Monte Carlo oracle risk at ",
                      Math(sp.Function("lambda_best")(DIM)), " against the closed form"), observed=worst,
        threshold=z_star,
        reason=reason("Bonferroni two-sided normal quantile for ", Number(z.size), " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; ", Number(p["n_tasks"]), " tasks per ",
                      Math(DIM), "; each difference scored beyond the closed form's rounding ", Number(floor, digits=2),
                      "; gap to Bayes ", SIM, " ", *measured_power(DIM, slope, 3), " (95% interval ", *_interval(*ci), "), ",
                      LAM_BEST, " ", SIM, " ", *measured_power(DIM, lam_slope, 3)),
        passed=bool(worst <= z_star), analytic=exc_c, numeric=exc_m, uncertainty=[o["se"] for o in out],
        details={"ds": ds, "lam_best": [lam for lam, _ in best], "bayes_excess": [o["bayes"] for o in out],
                 "bayes_excess_se": [o["bayes_se"] for o in out], "z": z},
        plots=[Plot(title=reason("excess risk of the oracle at ", LAM_BEST_OF_D, " and of the Bayes predictor (",
                                 L_MATH, " = ", Number(p["L"]), ")"),
                    xlabel=reason(D_MATH), ylabel=reason("excess risk ", EXCESS_RISK),
                    series=[Series("oracle, closed form", ds, exc_c, style="-"),
                            Series("oracle, Monte Carlo", ds, exc_m, yerr=[o["se"] for o in out], style="o"),
                            Series("Bayes, Monte Carlo", ds, np.maximum([o["bayes"] for o in out], 1e-30),
                                   style="s")], logx=True, logy=True)],
        findings=OracleBayesFindings(ds, tuple(lam for lam, _ in best), tuple(exc_c), tuple(exc_m),
                                     tuple(o["se"] for o in out), tuple(o["bayes"] for o in out), float(slope),
                                     float(sse), (float(ci[0]), float(ci[1])), float(lam_slope), int(p["L"])),
    )
