r"""Generated check ``<model>.objective_vs_montecarlo``: the long-sequence objective with its O(1/L) terms, and the
attention masses, against Monte Carlo at growing sequence length.

Compared: at each simulated length L in ``Ls`` (the model's mixture fractions kept, attnverify.checks.engine._bridge)
and each overlap point rho of the grid, the derived J_finite = J_limit + J_correction and mass_finite.<c> against
the Monte Carlo J_L = E|f_q(X)|^2 and E[mass of c] (attnverify.numerics.engine.grid_mc: the Rao-Blackwellised
estimator, common random numbers across the grid).  One family of two-sided z-tests, Bonferroni-corrected at the
family-wise false-alarm rate ``z_level``: the levels of J, the contrasts of J across the grid (each point against
the first: they cancel most of the noise the grid shares and carry J's shape), the levels of every mass.  Passes
when every |z| is below the threshold.

Why this threshold: the only other source of disagreement is the delta method's O(1/L^2) remainder.  A (point, L)
is compared only where the remainder, predicted from the score spread (attnverify.checks.engine._sizes: C_R m_3 /
(m_2 L) times the O(1/L) terms), is below half its standard error, and a contrast only where the remainders at its
two points together are below half the contrast's own standard error (common random numbers make that smaller than
a level's); settings where it exceeds a quarter of the O(1/L) terms at every point are refused before any work.
The false-alarm rate is then the Bonferroni rate.

Power (the limit and the O(1/L) terms resolved): the same z-test of J_limit alone must reject at some compared
point, otherwise the simulation could not tell a missing O(1/L) term and the check answers ``unresolved`` (an error
verdict, never a pass).  A wrong J_limit moves J_finite by the same amount and is rejected with it.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.engine._common import (comparable, family_z, measured_correction, power_rule,
                                              predicted_remainder, register_grid_check, simulate_lengths, t_to_z,
                                              trained_query, with_rounding, within_se)
from attnverify.checks.stats import MAX_REMAINDER_OVER_SE
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.reason import Math, Number, reason

NAME = "objective_vs_montecarlo"
COMPARES = ("The objective J = E|f_q(X)|^2 and the attention masses at finite L: the derived limit plus its O(1/L) "
            "terms (J_finite, mass_finite) against Monte Carlo at growing L on an overlap grid (levels, contrasts "
            "across the grid, masses); the limit alone must be rejected (the O(1/L) terms resolved).")

#: the delta method's next order, O(1/L^2), and |z|, as they appear in the reason
REMAINDER = Math(sp.Function("O")(1 / sp.Symbol("L") ** 2))
ABS_Z = Math(sp.Abs(sp.Symbol("z")))
J_MATH, ORDER_1_OVER_L = Math(sp.Symbol("J")), Math(sp.Function("O")(1 / sp.Symbol("L")))
# the plot's labels: rho, the sequence length L, the closed forms J_finite (with the O(1/L) terms) and J_limit
RHO, L_MATH = Math(sp.Symbol("rho")), Math(sp.Symbol("L"))
J_FINITE, J_LIMIT = Math(sp.Symbol("J_finite")), Math(sp.Symbol("J_limit"))

applies = trained_query


def run(p: dict, ctx: Context) -> Evidence:
    T = ctx.theory
    model, rhos, Ls, vals, ests, pt = simulate_lengths(p, ctx)
    n = p["n_sequences"]
    z_all, z_limit, blocks, left_out, contrasts_left_out = [], [], [], [], 0
    bound_J = measured_correction([e.objective.mean for e in ests], [e.objective.se for e in ests], Ls)
    bound_m = measured_correction([e.mass.mean for e in ests], [e.mass.se for e in ests], Ls)
    for L, v, est in zip(Ls, vals, ests):
        J_fin, J_lim = T.evaluate("J_finite", v, **pt), T.evaluate("J_limit", v, **pt)
        mc, se = est.objective.mean, with_rounding(est.objective.se, J_fin)
        rem = predicted_remainder(model, v, rhos, L, J_fin - J_lim, bound_J and bound_J(L))
        keep = within_se(rem, se, J_fin, J_lim)
        left_out += [(L, tuple(np.round(r, 4))) for r in rhos[~keep]]
        z = t_to_z(mc - J_fin, se, n)[keep]
        z_lim = t_to_z(mc - J_lim, se, n)[keep]
        idx = np.nonzero(keep)[0]
        zc = []
        for j in idx[1:]:                        # contrasts against the first compared point
            c = np.zeros(len(rhos))
            c[j], c[idx[0]] = 1.0, -1.0
            diff, s = est.objective.contrast(c)
            if rem[j] + rem[idx[0]] > MAX_REMAINDER_OVER_SE * s:     # the remainders' change could be resolved
                contrasts_left_out += 1
                continue
            zc.append(float(t_to_z(np.array([diff - (J_fin[j] - J_fin[idx[0]])]), np.array([s]), n)[0]))
        zm = []
        for c, comp in enumerate(model.components):
            m_fin = T.evaluate(f"mass_finite.{comp.name}", v, **pt)
            m_lim = T.evaluate(f"mass.{comp.name}", v, **pt)
            m_se = with_rounding(est.mass.se[:, c], m_fin)
            ok = comparable(model, v, rhos, L, m_fin - m_lim, m_se, bound_m and bound_m(L)[:, c])
            zm.append(t_to_z(est.mass.mean[:, c] - m_fin, m_se, n)[ok])
        z_all += [z, np.array(zc), *zm]
        z_limit.append(z_lim)
        blocks.append({"L": L, "values": {k: float(x) for k, x in v.items()}, "J_finite": J_fin, "J_limit": J_lim,
                       "J_mc": mc, "se": se, "compared": keep, "z": t_to_z(mc - J_fin, se, n),
                       "z_limit": t_to_z(mc - J_lim, se, n), "mass_mc": est.mass.mean, "mass_se": est.mass.se})
    max_z, z_star, m = family_z(z_all, p["z_level"])
    passed = max_z <= z_star
    max_zl, unresolved = power_rule(passed, z_limit, z_star,
                                    reason("the ", Math(sp.Function("O")(1 / sp.Symbol("L"))), " terms are not "
                                           "resolved: ", Math(sp.Symbol("J_limit")), " alone"),
                                    "raise n_sequences or lower Ls")
    x = rhos[:, 0] if model.k == 1 else np.arange(len(rhos))
    series = []
    for b in blocks:
        series += [Series(reason("Monte Carlo, ", L_MATH, " = ", Number(b["L"])), x, b["J_mc"], yerr=b["se"],
                          style="o"),
                   Series(reason(J_FINITE, ", ", L_MATH, " = ", Number(b["L"])), x, b["J_finite"], style="-")]
    series.append(Series(reason(J_LIMIT), x, blocks[-1]["J_limit"], style="--"))
    return Evidence(
        metric=reason("max ", ABS_Z, " over the family (", J_MATH, " levels, ", J_MATH, " contrasts across the grid, "
                      "masses), against the closed forms with their ", ORDER_1_OVER_L, " terms"),
        observed=max_z, threshold=z_star, passed=bool(passed), unresolved=unresolved,
        reason=reason("Bonferroni-corrected two-sided normal quantile for ", m, " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), " (", len(Ls), " lengths, ", len(rhos),
                      " points, ", len(model.components), " masses; standard errors from ", n, " sequences per "
                      "length); compared only where the predicted ", REMAINDER, " remainder is below ",
                      Number(MAX_REMAINDER_OVER_SE, digits=6), " standard error (a contrast: its two points' "
                      "together, below its own)", *((f"; {contrasts_left_out} contrast(s) left out",)
                                                     if contrasts_left_out else ()),
                      "; the limit alone must be rejected (max ", ABS_Z, " ", Number(max_zl, digits=3), ")"),
        analytic=[b["J_finite"] for b in blocks], numeric=[b["J_mc"] for b in blocks],
        uncertainty=[b["se"] for b in blocks],
        details={"rhos": rhos, "blocks": blocks, "family_size": m, "z_threshold": z_star,
                 "max_abs_z_limit_alone": max_zl, "left_out": left_out, "contrasts_left_out": contrasts_left_out,
                 "n_sequences": n,
                 "estimator": "Rao-Blackwellised Monte Carlo (attnverify.numerics.engine.grid_mc), common random "
                              "numbers across the grid", "neglected": "O(1/L^2) (the delta method's next order)"},
        plots=[Plot(reason(J_MATH, " on the overlap grid (", model.id, ")"),
                    reason(RHO) if model.k == 1 else "grid point", reason(J_MATH), series)])


def register_for(paper) -> str:
    return register_grid_check(paper, name=NAME, compares=COMPARES, run=run,
                               formulas=(r"J_\infty(\rho)", r"\Delta_L(\rho)"))
