r"""Generated check ``<model>.equilibria_stability`` (one direction, k = 1): the certified equilibria of the reduced
flow rho' = F_finite(rho) and their stability against the sign of the measured drift next to each.

Compared: at the sequence length ``L_sim`` (the model's mixture fractions kept), the engine's certified equilibria
of F_finite on [-1, 1] (attnverify.theory.engine.equilibria: interval Newton, stability by the sign of F' in Arb
balls) give, for every equilibrium rho* classified attracting or repelling, the sign the flow must have on each
side: an attracting rho* has rho' > 0 just below it and rho' < 0 just above it, a repelling one the opposite.  The
drift is measured at the probes rho* -+ delta' inside [-1, 1] (delta' = ``delta``, at most half the gap to the next
equilibrium) by the pathwise Monte Carlo drift (attnverify.numerics.engine.drift_mc, common random numbers across
the probes), which never reads the closed form.  The z-score of each probe is (expected sign) x drift / se; one
family, Bonferroni-corrected at ``z_level``.  Fails when a probe's drift has the wrong sign beyond the threshold
(a misplaced equilibrium or a wrong stability); passes when every probe has the expected sign beyond it.

Power: a probe whose drift is inside the threshold decides nothing; then the check answers ``unresolved`` (an
error verdict, never a pass), naming the probe.  Equilibria whose stability the certified arithmetic leaves
undecided are reported and not probed; when none is probed the check is ``unresolved``.
"""
from __future__ import annotations

import numpy as np

from attnverify.checks.context import Context
from attnverify.checks.engine._common import Z_LEVEL, model_params, model_point, register, validate_lengths
from attnverify.checks.engine._numerics import run_grid
from attnverify.checks.evidence import Evidence
from attnverify.checks.params import Param
from attnverify.checks.stats import bonferroni_z

NAME = "equilibria_stability"
COMPARES = ("The certified equilibria of the reduced flow rho' = F_finite(rho) (k = 1) and their stability against "
            "the sign of the pathwise Monte Carlo drift on each side of every attracting or repelling equilibrium.")
L_SIM = Param("L_sim", int, 1000, "the sequence length simulated (the model's mixture fractions kept)", low=2)
N_SEQ = Param("n_sequences", int, 4000, "Monte Carlo sequences (the same for every probe)", low=50)
DELTA = Param("delta", float, 0.3, "the probes' distance from an equilibrium (at most half the gap to the next)",
              low=0.0, high=1.0, low_open=True)


def applies(model) -> bool:
    return model.attention.query == "q" and model.k == 1


def probes(points, delta: float) -> list[tuple[int, float, float]]:
    """(equilibrium index, probe rho, expected sign of rho') for every attracting or repelling equilibrium of
    ``points`` (sorted Equilibrium objects), on each side inside [-1, 1]."""
    rhos = [p.overlaps[0] for p in points]
    out = []
    for i, p in enumerate(points):
        if p.stability not in ("attracting", "repelling"):
            continue
        gaps = [abs(r - rhos[i]) for j, r in enumerate(rhos) if j != i]
        step = min([delta] + [g / 2 for g in gaps])
        for side in (-1.0, 1.0):
            probe = rhos[i] + side * step
            if -1.0 <= probe <= 1.0:
                # attracting: rho' > 0 below (side -1), < 0 above; repelling: the opposite
                out.append((i, probe, -side if p.stability == "attracting" else side))
    return out


def run(p: dict, ctx: Context) -> Evidence:
    T, N = ctx.theory, ctx.numerics
    v = N.at_length(model_point(N.model, p), p["L_sim"])
    eq = T.equilibria(v, finite_size=True)
    found = [{"rho": pt.overlaps[0], "stability": pt.stability, "certified": pt.certified} for pt in eq.points]
    todo = probes(eq.points, p["delta"])
    if not todo:
        return Evidence(metric="min z of the probes' drift in the expected direction", observed=0.0, threshold=0.0,
                        passed=True, unresolved="no equilibrium with a decided stability to probe",
                        details={"equilibria": found})
    grid = np.array([[r] for _, r, _ in todo])
    [est] = ctx.map(run_grid, [(N.drift_mc, N.spec(v), grid, p["n_sequences"], ctx.seeds(1)[0])])
    mean, se = np.ravel(est.mean), np.ravel(est.se)
    signs = np.array([s for _, _, s in todo])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, signs * mean / np.where(se > 0, se, 1.0), np.sign(signs * mean) * np.inf)
    z_star = bonferroni_z(p["z_level"], len(todo))
    worst = float(np.max(-z))
    passed = worst <= z_star
    weak = [f"rho = {r:.4g}" for (_, r, _), zi in zip(todo, z) if zi <= z_star]
    unresolved = (f"the drift at {', '.join(weak)} is within the threshold {z_star:.3g} (the sign is not decided): "
                  "raise n_sequences or delta") if passed and weak else None
    rows = [{"equilibrium": found[i]["rho"], "stability": found[i]["stability"], "probe": r, "expected_sign": s,
             "drift": float(m), "se": float(e), "z": float(zi)} for (i, r, s), m, e, zi in zip(todo, mean, se, z)]
    return Evidence(
        metric="max over the probes of -(expected sign) x drift / se (a drift of the wrong sign beyond the threshold "
               "fails)",
        observed=worst, threshold=z_star, passed=bool(passed), unresolved=unresolved,
        reason=f"Bonferroni-corrected two-sided normal quantile (conservative for these one-sided tests) for "
               f"{len(todo)} probes at family-wise false-alarm rate {p['z_level']:g}; {len(found)} certified "
               f"equilibria at L = {p['L_sim']} ({'complete' if eq.complete else 'incomplete'} search), every probe "
               "must show the expected sign",
        analytic=signs, numeric=mean, uncertainty=se,
        details={"equilibria": found, "probes": rows, "complete": eq.complete, "n_sequences": p["n_sequences"]})


def register_for(paper) -> str:
    model = paper.model_object
    def validate(p: dict) -> None:
        validate_lengths(model, p, [p["L_sim"]])
    return register(paper, name=NAME, compares=COMPARES, run=run, validate=validate,
                    params=[*model_params(model), L_SIM, N_SEQ, DELTA, Z_LEVEL],
                    paper_profile={"n_sequences": 16000}, formulas=(r"F_\infty(\rho)",))
