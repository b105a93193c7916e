"""Paper C, claim 1: the population risk R(k, v) = E (Y - T_{k,v}(X))^2 in closed form, against Monte Carlo.

Analytic side: the theory object's ``risk`` (attnverify.theory.slr: SymPy from the model, Stein's lemma, the
Gaussian-erf identities, zeta two ways, the assembly over independent tokens), evaluated in float64 by its
``risk_evaluator``.

Numeric side: the simulators' ``risk_samples`` (attnverify.numerics.slr.risk), the squared error (Y - T)^2 of the
predictor as defined, over tasks drawn from the model at explicit vectors k, v, k*, v* in R^d realised with the
prescribed overlaps (Haar-random frame). ``method="full"`` draws all L d coordinates with the simulators'
``sample_tasks`` (d <= FULL_DIM_MAX); above it ``"projected"`` draws the coordinates in span(k*, v*, k, v) only (equal
in law by rotation invariance; no overlap formula). Points: a grid over (d, L, lam, gamma), at each ``n_points``
random (k, v) with overlaps of order one (k and v put most of their weight on span(k*, v*) and on each other), the
oracle and a point on M; every point of a grid cell uses the same tasks (common random numbers).

Decision: one family of two-sided z-tests at family-wise false-alarm rate ``z_level`` (Bonferroni): every level
(MC - closed) / se, the scale ratio sum MC / sum closed of every cell (its standard error from the per-task sums)
and the pooled ratio over the cells. Levels are tested one by one, so a constant offset of the closed form cannot
cancel; the ratios carry a relative error shared by all points.
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
from attnverify.checks.slr._model import (grid_cells, model_options, points_with_oracle, realise, slr_model,
                                          validate_model)
from attnverify.checks.stats import bonferroni_z
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

ABS_Z = Math(sp.Abs(sp.Symbol("z")))                 # the metric's z-scores, |z|
# the plot's labels: the risk R, the identity line y = x, plus-minus
RISK_MATH, IDENTITY, PM = Math(sp.Symbol("R")), Math(sp.Eq(sp.Symbol("y"), sp.Symbol("x"))), Math(r"\pm")

FULL_DIM_MAX = 64


@dataclass(frozen=True)
class RiskFindings:
    """What the closed-form risk check measured: the largest |z|, its threshold, the pooled ratio MC / closed and
    the smallest relative error of the closed form the test detects with probability 0.8."""

    max_abs_z: float
    z_threshold: float
    n_tests: int
    pooled_ratio: float
    pooled_ratio_se: float
    detectable_relative_error: float
    n_points: int
    n_samples: int


def mc_task(cell: tuple, eps: float, ov: np.ndarray, n: int, seed: np.random.SeedSequence, risk_samples,
            sample_tasks) -> dict:
    """Monte Carlo of (Y - T)^2 at the overlap points ``ov`` of one grid cell (``risk_samples``, tasks drawn by
    ``sample_tasks``): per-point mean and standard error, and the mean and standard error of the per-task sum over the
    points (numerics only)."""
    d, L, lam, g = cell
    rng = np.random.default_rng(seed)
    k, v, ks, vs = realise(ov, d, rng)
    method = "full" if d <= FULL_DIM_MAX else "projected"
    s = risk_samples(slr_model(g, d, L, eps), k, v, ks, vs, lam, n, rng, method=method, sample=sample_tasks)
    tot = s.sum(axis=1)
    root = np.sqrt(n)
    return {"mean": s.mean(axis=0), "se": s.std(axis=0, ddof=1) / root, "sum": float(tot.mean()),
            "sum_se": float(tot.std(ddof=1) / root), "method": method}


@check(
    id="slr.risk_vs_montecarlo",
    compares="The population risk R = E (Y - T_{k,v}(X))^2 has the derived closed form in the overlaps (kappa, nu, "
             "theta, eta, rho): compared with Monte Carlo at realised vectors over a grid of (d, L, lam, gamma) and "
             "random (k, v) with large overlaps",
    source="Paper C, claim 1",
    params=[*model_options(only=("eps",)),
            Param("ds", "ints", (6, 400), "token dimensions d", low=4, high=100_000),
            Param("Ls", "ints", (3, 10), "sequence lengths L", low=1, high=1000),
            Param("lams", "floats", (0.5, 2.0), "temperatures lam", low=1e-3, high=100.0),
            Param("gammas", "floats", (0.7071067811865476,), "informative-token noise gamma", low=1e-2, high=10.0),
            Param("n_points", int, 4, "random (k, v) per grid cell (plus the oracle and a point on M)", low=1,
                  high=200),
            Param("n_samples", int, 20000, "Monte Carlo tasks per grid cell", low=1000, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper_profile={"ds": (6, 50, 400), "Ls": (1, 3, 10), "lams": (0.1, 0.9, 2.0), "gammas": (0.5, 0.7071067811865476),
           "n_points": 6, "n_samples": 50000},
    validate=validate_model,
    formulas=('R', r'\Delta_L', 'E_I f', 'E_N'),
    theory=THEORY, numerics=NUMERICS,
)
def risk_vs_montecarlo(p: dict, ctx: Context) -> Evidence:
    cells = grid_cells(p)
    rng = ctx.rng("points")
    pts = [points_with_oracle(rng, p["n_points"]) for _ in cells]
    sim = ctx.numerics
    out = ctx.map(mc_task, [(c, p["eps"], ov, p["n_samples"], s, sim.risk_samples, sim.sample_tasks)
                            for c, ov, s in zip(cells, pts, ctx.seeds(len(cells)))])
    closed = [ctx.theory.risk_evaluator(lam, g, d, L, p["eps"]).risk(ov)
              for (d, L, lam, g), ov in zip(cells, pts)]
    z = np.concatenate([(o["mean"] - c) / o["se"] for o, c in zip(out, closed)])
    ratios = np.array([o["sum"] / c.sum() for o, c in zip(out, closed)])
    ratio_se = np.array([o["sum_se"] / c.sum() for o, c in zip(out, closed)])
    pooled = sum(o["sum"] for o in out) / sum(c.sum() for c in closed)
    pooled_se = float(np.sqrt(sum(o["sum_se"] ** 2 for o in out))) / sum(c.sum() for c in closed)
    all_z = np.concatenate([z, (ratios - 1.0) / ratio_se, [(pooled - 1.0) / pooled_se]])
    z_star = bonferroni_z(p["z_level"], all_z.size)
    max_z = float(np.max(np.abs(all_z)))
    detect = (z_star + 0.8416) * pooled_se
    plots = [Plot(title="closed-form risk against Monte Carlo (every point of every cell)",
                  xlabel=reason("closed-form ", RISK_MATH), ylabel=reason("Monte Carlo ", RISK_MATH),
                  series=[Series(reason("Monte Carlo ", PM, " ", Number(1), " se"), np.concatenate(closed),
                                 np.concatenate([o["mean"] for o in out]),
                                 yerr=np.concatenate([o["se"] for o in out]), style="o"),
                          Series(reason(IDENTITY), [min(map(np.min, closed)), max(map(np.max, closed))],
                                 [min(map(np.min, closed)), max(map(np.max, closed))], style="-")])]
    return Evidence(
        metric=reason("max ", ABS_Z, " over the family (levels, cell scale ratios, pooled ratio)"), observed=max_z,
        threshold=z_star,
        reason=reason("Bonferroni two-sided normal quantile for ", Number(all_z.size), " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; standard errors from ",
                      Number(p["n_samples"]), " tasks per cell (CLT); the pooled ratio resolves a relative error of ",
                      Number(detect, digits=2), " of the closed form (power ", Number(0.8), ")"),
        passed=bool(max_z <= z_star), analytic=closed, numeric=[o["mean"] for o in out],
        uncertainty=[o["se"] for o in out],
        details={"cells": [{"d": d, "L": L, "lam": lam, "gamma": g, "overlaps": ov, "closed": c, "mc": o["mean"],
                            "se": o["se"], "ratio": r, "ratio_se": rs, "method": o["method"]}
                           for (d, L, lam, g), ov, c, o, r, rs in zip(cells, pts, closed, out, ratios, ratio_se)],
                 "pooled_ratio": pooled, "pooled_ratio_se": pooled_se, "z_threshold": z_star},
        plots=plots,
        findings=RiskFindings(max_z, z_star, int(all_z.size), float(pooled), pooled_se, float(detect),
                              int(z.size), int(p["n_samples"])),
    )
