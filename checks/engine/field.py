r"""Generated check ``<model>.reduced_field_vs_drift``: the reduced Riemannian gradient flow in the overlaps against
the pathwise Monte Carlo drift, at growing sequence length.

Compared: at each simulated length L in ``Ls`` (the model's mixture fractions kept) and each overlap point rho of
the grid, every component of the derived F_finite(rho) (the flow rho' = (I - rho rho^T) grad_rho J_finite, SymPy
from the model file) against the mean drift of the overlaps E[e_j^T (I - q q^T) grad_q |f_q(X)|^2] (the pathwise
derivative of the energy along the sphere, derived by hand in attnverify.numerics.engine.gradient and averaged by
attnverify.numerics.engine.drift_mc; its mean is the field of J_L).  One family of two-sided z-tests, Bonferroni-
corrected at the family-wise false-alarm rate ``z_level``.  Passes when every |z| is below the threshold.

The grid: for k = 1 seven points in [-0.8, 0.8] (at rho = +-1 the field vanishes identically); for k >= 2 the
standard grid with the axis points +-e_j, where the field is tangent to the sphere.

Why this threshold: as in the objective check, an entry is compared only where the delta method's predicted
O(1/L^2) remainder (attnverify.checks.engine._sizes) is below half its standard error, so under a correct closed
form the z-scores are standard normal and the Bonferroni rate holds.  An entry whose measured drift is exactly 0
with no spread (a component the sphere's projection removes, e.g. along rho at |rho| = 1) is compared exactly.

Power: the field must be resolved: the zero field F = 0 must be rejected by the same family (max |drift| / se
above the threshold at some compared entry), otherwise the check answers ``unresolved`` (an error verdict, never
a pass).  A field without its sphere factor (grad J in place of (I - rho rho^T) grad J) differs from the true one
by rho (rho . grad J), resolved wherever the field is.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.engine._common import (family_z, field_remainder, measured_correction, power_rule,
                                              register_grid_check, simulate_lengths, t_to_z, trained_query,
                                              within_se)
from attnverify.checks.stats import MAX_REMAINDER_OVER_SE
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.reason import Math, Number, reason

NAME = "reduced_field_vs_drift"
COMPARES = ("The reduced gradient flow in the overlaps with its O(1/L) terms (F_finite = (I - rho rho^T) grad "
            "J_finite) against the pathwise Monte Carlo drift of the overlaps, component by component on an overlap "
            "grid at growing L; the zero field must be rejected (the field resolved).")

applies = trained_query


#: the delta method's next order, O(1/L^2), and |z|, as they appear in the reason
REMAINDER = Math(sp.Function("O")(1 / sp.Symbol("L") ** 2))
ABS_Z = Math(sp.Abs(sp.Symbol("z")))
ORDER_1_OVER_L = Math(sp.Function("O")(1 / sp.Symbol("L")))
# the plot's labels: rho and the reduced field rho', the sequence length L, the closed form F_finite
RHO, RHO_PRIME = Math(sp.Symbol("rho")), Math(sp.Symbol(r"\rho^{\prime}"))
L_MATH, F_FINITE = Math(sp.Symbol("L")), Math(sp.Symbol("F_finite"))


def direction(name: str) -> Math:
    """A direction of the model file (``xi``, ``zeta``) as a symbol."""
    return Math(sp.Symbol(name))

#: the rounding allowance of an exactly known entry (se = 0), relative to 1 + |F|
EXACT_TOL = 1e-12


def _z(diff: np.ndarray, se: np.ndarray, n: int, scale: np.ndarray) -> np.ndarray:
    """z-scores of ``diff`` with standard errors ``se``; where se = 0 (an exactly known entry, e.g. the component
    along rho at |rho| = 1, which the sphere's projection removes) the difference in units of its rounding
    allowance EXACT_TOL (1 + |scale|), beyond it only: finite, and far above any threshold when the closed form
    is wrong there. NaN where the closed form or the difference is not a finite double (beyond double precision:
    never compared, :func:`attnverify.checks.engine._common.within_se`)."""
    finite = np.isfinite(diff) & np.isfinite(scale)
    diff, scale = np.where(finite, diff, 0.0), np.where(finite, scale, 0.0)
    exact = se <= 0
    z = t_to_z(np.where(exact, 0.0, diff), np.where(exact, 1.0, se), n)
    allowance = EXACT_TOL * (1.0 + np.abs(scale))
    return np.where(finite, np.where(exact, np.maximum(np.abs(diff) - allowance, 0.0) / allowance, z), np.nan)


def run(p: dict, ctx: Context) -> Evidence:
    T = ctx.theory
    model, rhos, Ls, vals, ests, pt = simulate_lengths(p, ctx, "drift_mc")
    n, k = p["n_sequences"], model.k
    z_all, z_zero, blocks, left_out = [], [], [], 0
    bound = measured_correction([np.reshape(e.mean, (len(rhos), k)) for e in ests],
                                [np.reshape(e.se, (len(rhos), k)) for e in ests], Ls)
    for L, v, est in zip(Ls, vals, ests):
        F_fin = np.reshape(T.evaluate("F_finite", v, **pt), (len(rhos), k))
        F_lim = np.reshape(T.evaluate("F_limit", v, **pt), (len(rhos), k))
        mc, se = np.reshape(est.mean, (len(rhos), k)), np.reshape(est.se, (len(rhos), k))
        remainder = field_remainder(T, model, v, rhos, L, F_fin - F_lim, bound and bound(L))
        keep = within_se(remainder, se, F_fin - F_lim)
        left_out += int((~keep).sum())
        rounding = np.reshape(T.rounding("F_finite", v, **pt), (len(rhos), k))     # the closed form's own, in float64
        rounding = np.where(np.isfinite(F_fin), rounding, 0.0)
        z = _z(mc - F_fin, np.hypot(se, rounding), n, F_fin)
        z_all.append(z[keep])
        z_zero.append(_z(mc, se, n, F_fin)[keep & (se > 0)])
        blocks.append({"L": L, "values": {key: float(x) for key, x in v.items()}, "F_finite": F_fin,
                       "F_limit": F_lim, "drift_mc": mc, "se": se, "compared": keep, "z": z})
    max_z, z_star, m = family_z(z_all, p["z_level"])
    passed = max_z <= z_star
    max_z0, unresolved = power_rule(passed, z_zero, z_star, "the field is not resolved: the zero field",
                                    "raise n_sequences")
    x = rhos[:, 0] if k == 1 else np.arange(len(rhos))
    series = []
    for b in blocks:
        for j, d in enumerate(model.directions):
            series += [Series(reason("drift along ", direction(d), ", ", L_MATH, " = ", Number(b["L"])), x,
                              b["drift_mc"][:, j], yerr=b["se"][:, j], style="o"),
                       Series(reason(F_FINITE, " along ", direction(d), ", ", L_MATH, " = ", Number(b["L"])), x,
                              b["F_finite"][:, j], style="-")]
    return Evidence(
        metric=reason("max ", ABS_Z, " over the family (every component of the field at every compared point and "
                      "length), against the closed form with its ", ORDER_1_OVER_L, " terms"),
        observed=max_z, threshold=z_star, passed=bool(passed), unresolved=unresolved,
        reason=reason("Bonferroni-corrected two-sided normal quantile for ", m, " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), " (", len(Ls), " lengths, ", len(rhos),
                      " points, ", k, " component(s); standard errors from ", n, " sequences per length); compared "
                      "only where the predicted ", REMAINDER, " remainder is below ",
                      Number(MAX_REMAINDER_OVER_SE, digits=6), " standard error (", left_out, " entries left out); "
                      "the zero field must be rejected (max ", ABS_Z, " ", Number(max_z0, digits=3), ")"),
        analytic=[b["F_finite"] for b in blocks], numeric=[b["drift_mc"] for b in blocks],
        uncertainty=[b["se"] for b in blocks],
        details={"rhos": rhos, "blocks": blocks, "family_size": m, "z_threshold": z_star,
                 "max_abs_z_zero_field": max_z0, "left_out": left_out, "n_sequences": n,
                 "estimator": "pathwise drift, Rao-Blackwellised Monte Carlo (attnverify.numerics.engine.drift_mc), "
                              "common random numbers across the grid"},
        plots=[Plot(f"the reduced field on the overlap grid ({model.id})", reason(RHO) if k == 1 else "grid point",
                    reason(RHO_PRIME), series)])


def register_for(paper) -> str:
    return register_grid_check(paper, name=NAME, compares=COMPARES, run=run,
                               formulas=(r"C(\rho)", r"F_\infty(\rho)", r"\Delta_L(\rho)"),
                               boundary=paper.model_object.k > 1)
