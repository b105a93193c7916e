r"""Generated check ``<model>.finite_size_correction``: the derived O(1/L) terms of the objective against the
measured finite-size gap, L (J_L - J_limit) against L J_correction.

Compared: at each length L in ``Ls`` (the model's fractions kept) the Monte Carlo gap MC_L - J_limit on the overlap
grid (attnverify.numerics.engine.grid_mc) against the derived J_correction, as the scale c of the measured gap on
the derived one (weighted least squares, its standard error from the grid's full covariance: common random
numbers), per length and pooled over the lengths (independent simulations); with them, the gap at every point
(the same levels as the objective check, scaled by L).  One family of z-tests ((c - 1)/se for each length and the
pooled c, and the levels), Bonferroni-corrected at ``z_level``.  A correction scaled by 1 + delta moves c to
1 + delta; a missing correction (J_correction = 0) leaves the measured gap unexplained at every point.

Why this threshold: as in the objective check, a (point, L) is compared only where the predicted O(1/L^2)
remainder (attnverify.checks.engine._sizes) is below half its standard error, so the z-scores are standard normal
under a correct closed form and the Bonferroni rate holds.  Power: the pooled scale must be resolved to
MAX_SCALE_SE (a missing term is then a shift of 1 / MAX_SCALE_SE = 4 standard errors of c); otherwise the check
answers ``unresolved``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.engine._common import (NOTHING_IN_RANGE, comparable, family_z, measured_correction,
                                              register_grid_check, simulate_lengths, t_to_z, trained_query,
                                              weighted_ratio)
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.reason_values import number_or_na, pm_or_na

NAME = "finite_size_correction"
COMPARES = ("The derived O(1/L) terms of the objective (J_correction) against the measured finite-size gap: "
            "L (J_L - J_limit) by Monte Carlo against L J_correction on an overlap grid at growing L, as a fitted "
            "scale (per length and pooled) and point by point.")
MAX_SCALE_SE = 0.25

_L = sp.Symbol("L")
ABS_Z = Math(sp.Abs(sp.Symbol("z")))
# the plot's labels: L times the measured gap MC - J_limit and times the derived J_correction, L (J_L - J_limit)
_J_LIMIT, _RHO = sp.Symbol("J_limit"), sp.Symbol("rho")
L_MATH, RHO = Math(_L), Math(_RHO)
L_GAP_MC = Math(_L * (sp.Symbol(r"\mathrm{MC}") - _J_LIMIT))
L_CORRECTION = Math(_L * sp.Symbol("J_correction"))
L_GAP = Math(_L * (sp.Symbol("J_L") - _J_LIMIT))

applies = trained_query


def run(p: dict, ctx: Context) -> Evidence:
    T = ctx.theory
    model, rhos, Ls, vals, ests, pt = simulate_lengths(p, ctx)
    n = p["n_sequences"]
    z_levels, z_scales, rows, series = [], [], [], []
    x = rhos[:, 0] if model.k == 1 else np.arange(len(rhos))
    bound = measured_correction([e.objective.mean for e in ests], [e.objective.se for e in ests], Ls)
    for L, v, est in zip(Ls, vals, ests):
        J_lim = T.evaluate("J_limit", v, **pt)
        corr = T.evaluate("J_correction", v, **pt)
        gap, se = est.objective.mean - J_lim, est.objective.se
        keep = comparable(model, v, rhos, L, corr, se, bound and bound(L))
        z_levels.append(t_to_z(gap - corr, se, n)[keep])
        c, c_se = weighted_ratio(gap[keep], corr[keep], est.objective.cov[np.ix_(keep, keep)]) if keep.any() \
            else (float("nan"), float("nan"))
        rows.append({"L": L, "scale": c, "scale_se": c_se, "compared": keep, "gap_times_L": L * gap,
                     "correction_times_L": L * corr, "se_times_L": L * se})
        if np.isfinite(c) and c_se > 0:
            z_scales.append((c - 1.0) / c_se)
        series += [Series(reason(L_GAP_MC, ", ", L_MATH, " = ", Number(L)), x, L * gap, yerr=L * se, style="o"),
                   Series(reason(L_CORRECTION, ", ", L_MATH, " = ", Number(L)), x, L * corr, style="-")]
    fits = [(r["scale"], r["scale_se"]) for r in rows if np.isfinite(r["scale"]) and r["scale_se"] > 0]
    if fits:
        w = np.array([1 / s**2 for _, s in fits])
        pooled = float(np.sum(w * np.array([c for c, _ in fits])) / w.sum())
        pooled_se = float(1 / np.sqrt(w.sum()))
        z_scales.append((pooled - 1.0) / pooled_se)
    else:
        pooled, pooled_se = float("nan"), float("nan")
    max_z, z_star, m = family_z([*z_levels, np.array(z_scales)], p["z_level"])
    passed = max_z <= z_star
    unresolved = None
    if passed and not any(r["compared"].any() for r in rows):
        unresolved = NOTHING_IN_RANGE
    elif passed and not (np.isfinite(pooled_se) and pooled_se <= MAX_SCALE_SE):
        unresolved = reason("the ", Math(sp.Function("O")(1 / _L)), " terms are not resolved: their fitted scale has "
                            "standard error ", number_or_na(pooled_se, 3), " (", Math(">"), " ",
                            Number(MAX_SCALE_SE, digits=6), "): raise n_sequences or lower Ls")
    return Evidence(
        metric=reason("max ", ABS_Z, " over the family (the fitted scale of the ", Math(sp.Function("O")(1 / _L)),
                      " terms per length and pooled, and the gap point by point)"),
        observed=max_z, threshold=z_star, passed=bool(passed), unresolved=unresolved,
        reason=reason("Bonferroni-corrected two-sided normal quantile for ", m, " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; fitted scale of the measured gap on ",
                      Math(sp.Symbol("J_correction")), " ", pm_or_na(pooled, pooled_se), " (1 when the ",
                      Math(sp.Function("O")(1 / _L)), " terms are right; resolved to at most ",
                      Number(MAX_SCALE_SE, digits=6), "); compared only where the predicted ",
                      Math(sp.Function("O")(1 / _L ** 2)), " remainder is below half a standard error"),
        analytic=[r["correction_times_L"] for r in rows], numeric=[r["gap_times_L"] for r in rows],
        uncertainty=[r["se_times_L"] for r in rows],
        details={"rhos": rhos, "lengths": rows, "scale": pooled, "scale_se": pooled_se, "family_size": m,
                 "z_threshold": z_star, "n_sequences": n},
        plots=[Plot(reason(L_MATH, " times the finite-size gap (", model.id, ")"),
                    reason(RHO) if model.k == 1 else "grid point", reason(L_GAP), series)])


def register_for(paper) -> str:
    return register_grid_check(paper, name=NAME, compares=COMPARES, run=run, formulas=(r"\Delta_L(\rho)",))
