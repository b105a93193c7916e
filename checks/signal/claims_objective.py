"""Paper A claims about the objective and the attention it pays to noise (claims 1 and 4), judged from the typed
findings of signal.objective_vs_montecarlo, signal.low_temperature and signal.attention_on_noise against the stated
forms in stated.toml.

* ``A.closed_form_objective`` (formula on the quantity ``J_limit``): the stated closed form against the derived one,
  by a SymPy proof or a certified counterexample confirmed by the Monte Carlo (attnverify.checks.judges.formula); the
  objective check's pass (our closed form with its O(1/L) terms against Monte Carlo) is the confirmation that derived
  and measured agree, and it must resolve the scale of J to CONFIRMATION, else the claim is inconclusive.
* ``A.noise_attention_vanishes`` (qualitative: the nuisance mass at rho = 1 tends to 0 along the scaling named by
  ``target``): the SymPy limit along that scaling (derived) with the Monte Carlo at its four sizes (measured).
"""
from __future__ import annotations

import math

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, claim_rng
from attnverify.checks.judges import fmt, relation
from attnverify.checks.plugin import Perturbation
from attnverify.checks.signal._claims import options_of, quantity, with_confirmation

CONFIRMATION = 0.01          # the objective check must reject a 1 % scale error of J to confirm the derivation
Z_CLAIM = 4.0                # a Monte Carlo mass is "above 0" / "decreasing" beyond 4 standard errors


# ----------------------------------------------------------------------------------------------------------------
# A.closed_form_objective
# ----------------------------------------------------------------------------------------------------------------
@claim(id="A.closed_form_objective", paper="A", needs=("signal.objective_vs_montecarlo",),
       uses=("signal.low_temperature",))
def closed_form_objective(results: dict, stated) -> ClaimVerdict:
    """The stated formula of J_limit by attnverify.checks.judges.formula, confirmed by the objective check (and by
    the low-temperature check when it ran)."""
    res = results["signal.objective_vs_montecarlo"]
    f = res.findings
    figures = {"max_abs_z": f.max_abs_z, "z_threshold": f.z_threshold, "family_size": f.family_size,
               "ratio_mc_over_closed": f.ratio, "ratio_se": f.ratio_se,
               "detectable_scale_error": f.detectable_scale_error, "finite_size_resolved": f.finite_size_resolved,
               "R": f.R, "L": f.L}
    if not f.finite_size_resolved or f.detectable_scale_error > CONFIRMATION:
        why = []
        if f.detectable_scale_error > CONFIRMATION:
            why.append(f"it rejects only scale errors of J above {fmt(f.detectable_scale_error, 2)}, "
                       f"{relation(f.detectable_scale_error, CONFIRMATION)} the {CONFIRMATION:g} it needs")
        if not f.finite_size_resolved:
            why.append(f"it does not resolve the O(1/L) terms (the limit without them is not rejected: max |z| = "
                       f"{fmt(f.max_abs_z_without_finite_size, 3)}, threshold {fmt(f.z_threshold, 3)})")
        return ClaimVerdict("inconclusive", "signal.objective_vs_montecarlo cannot confirm our derivation of J: "
                            + "; ".join(why), evidence={res.id: figures})
    q = quantity(stated.quantity or "J_limit")
    verdict = judges.formula(stated, q, options_of(q, stated), claim_rng(results, stated))
    text = (f"signal.objective_vs_montecarlo confirms the derived J with its O(1/L) terms against Monte Carlo at "
            f"R = {f.R}, L = {f.L} (max |z| = {fmt(f.max_abs_z, 3)}, {relation(f.max_abs_z, f.z_threshold)} "
            f"the threshold {fmt(f.z_threshold, 3)} over {f.family_size} tests; scale ratio {fmt(f.ratio, 7)} +- "
            f"{fmt(f.ratio_se, 1)})")
    low = results.get("signal.low_temperature")
    if low is not None:
        lf = low.findings
        text += (f", and at low temperature (scores up to {lf.largest_score:.0f}: max |z| = {fmt(lf.max_abs_z, 3)}, "
                 f"{relation(lf.max_abs_z, lf.z_threshold)} {fmt(lf.z_threshold, 3)})")
        figures["low_temperature_max_abs_z"] = lf.max_abs_z
    return with_confirmation(verdict, text, figures, res.id)


# ----------------------------------------------------------------------------------------------------------------
# A.noise_attention_vanishes
# ----------------------------------------------------------------------------------------------------------------
SCALINGS = ("R/(L-R) growing", "R/L fixed", "R = sqrt(L)")


def _other_scalings(stated, results: dict) -> list[Perturbation]:
    """The statement along each other scaling of (R, L): the mass does not vanish at fixed R/L (it tends to
    (1 - r)/(r e^(beta theta) + 1 - r) > 0) nor for R = sqrt(L) (R/L -> 0: it tends to 1), so each is wrong."""
    return [Perturbation(f"target {name}", None, stated.restated(stated.stated, target=name))
            for name in SCALINGS if name != stated.get("target")]


@claim(id="A.noise_attention_vanishes", paper="A", needs=("signal.attention_on_noise",),
       perturbations=_other_scalings)
def noise_attention_vanishes(results: dict, stated) -> ClaimVerdict:
    """Along the stated scaling (``target``): holds when the SymPy limit of the rho = 1 mass is 0 and the Monte
    Carlo decreases by more than Z_CLAIM standard errors from the first to the last size; refuted when the limit is
    positive and the Monte Carlo at the largest size is more than Z_CLAIM standard errors above 0 (the check passed:
    it agrees with the closed form there); otherwise inconclusive. rho = 1 is the most favourable alignment: the
    mass decreases in rho."""
    f = results["signal.attention_on_noise"].findings
    target = stated.get("target")
    if target not in f.scalings:
        return ClaimVerdict("inconclusive", f"the stated scaling {target!r} is not one the check measures "
                            f"({', '.join(f.scalings)})")
    lim, pts = f.limits[target], f.scalings[target]
    first, last = pts[0], pts[-1]
    where = f"theta = {f.model.theta:g}, beta = {f.model.beta:g}, sigma = {f.model.sigma:g}"
    ev = {"signal.attention_on_noise": {
        "target": target, "limit_at_rho_1": lim, "limits": dict(f.limits),
        "points": [{"R": q.R, "L": q.L, "closed_form": q.closed_form, "mc": q.mc, "mc_se": q.mc_se} for q in pts]}}
    elsewhere = [f"{name}: limit {fmt(v, 4)}" for name, v in f.limits.items() if name != target]
    if lim == 0.0:
        drop = (first.mc - last.mc) / math.hypot(first.mc_se, last.mc_se)
        path = (f"Monte Carlo {fmt(first.mc, 4)} +- {fmt(first.mc_se, 2)} at R/(L - R) = {fmt(first.density, 3)} "
                f"-> {fmt(last.mc, 4)} +- {fmt(last.mc_se, 2)} at {fmt(last.density, 3)} (R = {last.R}, L = {last.L})")
        if drop > Z_CLAIM:
            return ClaimVerdict("holds", f"along {target} the nuisance mass at rho = 1 tends to 0 (SymPy limit 0; "
                                f"{path}, a fall of {fmt(drop, 3)} standard errors; {where}); along the other "
                                f"scalings it does not vanish ({'; '.join(elsewhere)})", evidence=ev)
        return ClaimVerdict("inconclusive", f"along {target} the SymPy limit of the rho = 1 mass is 0, but the Monte "
                            f"Carlo does not show it falling ({path}: {fmt(drop, 3)} standard errors, needs "
                            f"{Z_CLAIM:g})", evidence=ev)
    above = last.mc / last.mc_se if last.mc_se > 0 else math.inf
    if above > Z_CLAIM:
        return ClaimVerdict(
            "refuted", f"along {target} the nuisance mass at rho = 1 does not tend to 0: SymPy limit {fmt(lim, 4)}; at "
                       f"the largest size the closed form gives {fmt(last.closed_form, 4)} and the Monte Carlo "
                       f"{fmt(last.mc, 4)} +- {fmt(last.mc_se, 2)}, {fmt(above, 3)} standard errors above 0 ({where})",
            condition=f"{target}, R = {last.R}, L = {last.L}, rho = 1, {where}: derived mass {fmt(last.closed_form, 4)} "
                      f"(limit {fmt(lim, 4)}), measured {fmt(last.mc, 4)} +- {fmt(last.mc_se, 2)} ({fmt(above, 3)} "
                      "standard errors above 0)", evidence=ev)
    return ClaimVerdict("inconclusive", f"along {target} the SymPy limit of the rho = 1 mass is {fmt(lim, 4)}, but the "
                        f"Monte Carlo at the largest size ({fmt(last.mc, 4)} +- {fmt(last.mc_se, 2)}) is only "
                        f"{fmt(above, 3)} standard errors above 0 (needs {Z_CLAIM:g})", evidence=ev)
