"""Paper C, claim 3: the best linear predictor (which fails when the location is latent) has the derived risk,
whatever d.

Analytic side: the theory object's ``best_linear_predictor`` (attnverify.theory.slr.baselines): beta_l = b v*,
b = gamma^2 / (gamma^2 + L - 1), risk eps^2 + gamma^2 (L - 1)/(gamma^2 + L - 1).

Numeric side: least squares on n_train tasks (the simulators' ``linear_baseline``, pooled features sum_l X_l: the
population optimum of all linear predictors is exchangeable, hence pooled; tasks drawn by their ``sample_tasks``) and
its risk on n_test fresh tasks. The fitted predictor's risk exceeds the population optimum by the estimation error,
R p / (n - p - 1) in expectation for a Gaussian design (p = d features); the test allows twice that above the closed
form: the measured risk must lie in [R - z se, R + 2 R p/(n - p - 1) + z se] (Bonferroni z over the grid).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.registry import check
from attnverify.checks.slr._model import model_options, slr_model, validate_model
from attnverify.checks.stats import bonferroni_z
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY
from attnverify.theory.slr.symbols import L as L_, eps as eps_, gamma as gamma_

ABS_Z = Math(sp.Abs(sp.Symbol("z")))                 # the metric's z-scores, |z|
#: the band the least-squares risk is expected in (LaTeX: SymPy would reorder R + ...)
BAND = Math(r"[R, R + 2 R p / (n - p - 1)]")
# the plot's labels: the excess risk of the best linear predictor R_lin - eps^2 (as in the check's formula), d and L
LINEAR_EXCESS = Math(sp.Symbol(r"R_{\mathrm{lin}}") - sp.Symbol("epsilon") ** 2)
D_MATH, L_MATH = Math(sp.Symbol("d")), Math(sp.Symbol("L"))


def linear_task(model_args: tuple, n_train: int, n_test: int, seed: np.random.SeedSequence, linear_baseline,
                sample_tasks) -> dict:
    """The least-squares test risk and its standard error (``linear_baseline`` on tasks drawn by ``sample_tasks``;
    numerics only)."""
    from attnverify.numerics.slr.model import draw_targets

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    b = linear_baseline(model, ks, vs, n_train, n_test, rng, features="pooled", sample=sample_tasks)
    return {"risk": b.test_risk, "se": b.test_risk_se, "rounding": b.fit_rounding}


#: the allowance for the least-squares fit's own rounding: ROUNDING_SLACK times the numerics' estimate (one step of
#: iterative refinement: numerics.slr.linear.LinearBaseline.fit_rounding). It matters only where the closed form is
#: 0 (L = 1, eps = 0: a sweep's d = 1114 measured 5.7e-26 +- 5.7e-28 against 0, z = 100; the estimate there 9.7e-26);
#: elsewhere 2 R p / (n - p - 1) is some 10^20 times larger.
ROUNDING_SLACK = 10.0


@dataclass(frozen=True)
class LinearFindings:
    cells: tuple[tuple[int, int], ...]
    excess_closed: tuple[float, ...]
    excess_measured: tuple[float, ...]
    excess_se: tuple[float, ...]
    allowance: tuple[float, ...]
    max_abs_z: float
    z_threshold: float


def _validate_linear(p: dict) -> None:
    validate_model(p)
    if max(p["ds"]) >= p["n_train"] - 1:
        raise ValueError(f"n_train = {p['n_train']} must exceed d + 1 = {max(p['ds']) + 1} (least squares on d features)")


@check(
    id="slr.best_linear",
    compares="The best linear predictor's risk has the derived closed form eps^2 + gamma^2 (L - 1)/(gamma^2 + L - 1) "
             "(least squares on samples, tested on fresh samples), whatever d",
    source="Paper C, claim 3",
    params=[*model_options(without=("d", "lam", "L")),
            Param("ds", "ints", (8, 32), "token dimensions d", low=2, high=2048),
            Param("Ls", "ints", (2, 10), "sequence lengths L", low=1, high=1000),
            Param("n_train", int, 20000, "training tasks", low=100, high=10_000_000),
            Param("n_test", int, 20000, "test tasks", low=100, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper_profile={"ds": (8, 32, 128), "Ls": (2, 10), "n_train": 100000, "n_test": 100000},
    validate=_validate_linear,
    formulas=('b', r'R_{\mathrm{lin}} - \epsilon^2'),
    theory=THEORY, numerics=NUMERICS,
)
def best_linear(p: dict, ctx: Context) -> Evidence:
    cells = [(d, L) for d in p["ds"] for L in p["Ls"]]
    sim = ctx.numerics
    out = ctx.map(linear_task, [((p["gamma"], d, L, p["eps"]), p["n_train"], p["n_test"], s, sim.linear_baseline,
                                 sim.sample_tasks) for (d, L), s in zip(cells, ctx.seeds(len(cells)))])
    risk_expr = ctx.theory.best_linear_predictor()["risk"]
    closed = [float(risk_expr.subs({gamma_: p["gamma"], L_: L, eps_: p["eps"]})) for _, L in cells]
    allow = [2 * r * d / (p["n_train"] - d - 1) + ROUNDING_SLACK * o["rounding"] for r, o, (d, _) in
             zip(closed, out, cells)]
    zs = []
    for o, r, a in zip(out, closed, allow):
        zs.append(min(0.0, o["risk"] - r) / o["se"] + max(0.0, o["risk"] - r - a) / o["se"])
    z = np.array(zs)
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    e2 = p["eps"] ** 2
    return Evidence(
        metric=reason("max ", ABS_Z, " of the least-squares test risk outside ", BAND),
        observed=worst,
        threshold=z_star,
        reason=reason("Bonferroni two-sided normal quantile for ", Number(z.size), " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; the band's upper end allows twice the "
                      "Gaussian-design expectation of the estimation error of ", Number(p["n_train"]), " training "
                      "tasks; ", Number(p["n_test"]), " test tasks (CLT)"),
        passed=bool(worst <= z_star), analytic=closed, numeric=[o["risk"] for o in out],
        uncertainty=[o["se"] for o in out],
        details={"cells": cells, "allowance": allow, "z": z},
        plots=[Plot(title=reason("best linear predictor: excess risk against ", D_MATH), xlabel=reason(D_MATH),
                    ylabel=reason(LINEAR_EXCESS),
                    series=[Series(reason(L_MATH, " = ", Number(L), ", closed form"), [d for d, l2 in cells if l2 == L],
                                   [r - e2 for r, (_, l2) in zip(closed, cells) if l2 == L], style="-")
                            for L in p["Ls"]]
                    + [Series(reason(L_MATH, " = ", Number(L), ", least squares"), [d for d, l2 in cells if l2 == L],
                              [o["risk"] - e2 for o, (_, l2) in zip(out, cells) if l2 == L],
                              yerr=[o["se"] for o, (_, l2) in zip(out, cells) if l2 == L], style="o")
                       for L in p["Ls"]], logx=True)],
        findings=LinearFindings(tuple(cells), tuple(r - e2 for r in closed), tuple(o["risk"] - e2 for o in out),
                                tuple(o["se"] for o in out), tuple(allow), worst, z_star),
    )
