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

import sympy as sp

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, claim_rng, words
from attnverify.checks.judges import relation
from attnverify.checks.judges.common import point_parts
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import CheckRef, Math, Number, item, reason
from attnverify.checks.reason_values import joined, number_or_na, pm_or_na
from attnverify.checks.signal._claims import options_of, quantity, with_confirmation

CONFIRMATION = 0.01          # the objective check must reject a 1 % scale error of J to confirm the derivation
Z_CLAIM = 4.0                # a Monte Carlo mass is "above 0" / "decreasing" beyond 4 standard errors

# the mathematics of the reasons (attnverify.checks.reason: symbols in SymPy's naming convention)
_R, _L = sp.Symbol("R"), sp.Symbol("L")
J_MATH = Math(sp.Symbol("J"))
FINITE_SIZE_TERMS = Math(sp.Function("O")(1 / _L))
MAX_ABS_Z = Math(r"\max |z|")               # the largest |z| over the test family: SymPy has no spelling of it
RHO_1 = Math(sp.Eq(sp.Symbol("rho"), 1))
DENSITY = Math(_R / (_L - _R))


def _size(R: int, L: int) -> tuple:
    """The parts naming a problem size: R = 400, L = 8400."""
    return item(Math(_R), " = ", Number(R), ", ", Math(_L), " = ", Number(L))


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
            why.append(item("it rejects only scale errors of ", J_MATH, " above ", number_or_na(f.detectable_scale_error, 2),
                            ", ", relation(f.detectable_scale_error, CONFIRMATION), " the ", Number(CONFIRMATION),
                            " it needs"))
        if not f.finite_size_resolved:
            why.append(item("it does not resolve the ", FINITE_SIZE_TERMS, " terms (the limit without them is not "
                            "rejected: ", MAX_ABS_Z, " = ", number_or_na(f.max_abs_z_without_finite_size, 3), ", threshold ",
                            number_or_na(f.z_threshold, 3), ")"))
        return ClaimVerdict("inconclusive", reason(CheckRef(res.id), " cannot confirm our derivation of ", J_MATH, ": ",
                                                   *joined(why, "; ")), evidence={res.id: figures})
    q = quantity(stated.quantity or "J_limit")
    verdict = judges.formula(stated, q, options_of(q, stated), claim_rng(results, stated))
    text = reason(CheckRef(res.id), " confirms the derived ", J_MATH, " with its ", FINITE_SIZE_TERMS, " terms against "
                  "Monte Carlo at ", *_size(f.R, f.L), " (", MAX_ABS_Z, " = ", number_or_na(f.max_abs_z, 3), ", ",
                  relation(f.max_abs_z, f.z_threshold), " the threshold ", number_or_na(f.z_threshold, 3),
                  f" over {f.family_size} tests; scale ratio ", *pm_or_na(f.ratio, f.ratio_se, 7), ")")
    low = results.get("signal.low_temperature")
    if low is not None:
        lf = low.findings
        whole = Number(round(lf.largest_score)) if math.isfinite(lf.largest_score) else Number(lf.largest_score)
        text = text.add(", and at low temperature (scores up to ", whole, ": ", MAX_ABS_Z,
                        " = ", number_or_na(lf.max_abs_z, 3), ", ", relation(lf.max_abs_z, lf.z_threshold), " ",
                        number_or_na(lf.z_threshold, 3), ")")
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
       perturbations=_other_scalings, reads=words(("nuisance_mass_vanishes",), SCALINGS))
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
    where = point_parts({"theta": f.model.theta, "beta": f.model.beta, "sigma": f.model.sigma}, digits=6)
    ev = {"signal.attention_on_noise": {
        "target": target, "limit_at_rho_1": lim, "limits": dict(f.limits),
        "points": [{"R": q.R, "L": q.L, "closed_form": q.closed_form, "mc": q.mc, "mc_se": q.mc_se} for q in pts]}}
    elsewhere = joined([item(f"{name}: limit ", number_or_na(v, 4)) for name, v in f.limits.items() if name != target],
                       "; ")
    if lim == 0.0:
        drop = (first.mc - last.mc) / math.hypot(first.mc_se, last.mc_se)
        path = item("Monte Carlo ", *pm_or_na(first.mc, first.mc_se, 4), " at ", DENSITY, " = ",
                    number_or_na(first.density, 3), " to ", *pm_or_na(last.mc, last.mc_se, 4), " at ",
                    number_or_na(last.density, 3), " (", *_size(last.R, last.L), ")")
        if drop > Z_CLAIM:
            return ClaimVerdict("holds", reason(f"along {target} the nuisance mass at ", RHO_1, " tends to 0 (SymPy "
                                                "limit 0; ", *path, ", a fall of ", number_or_na(drop, 3), " standard "
                                                "errors; ", *where, "); along the other scalings it does not vanish (",
                                                *elsewhere, ")"), evidence=ev)
        return ClaimVerdict("inconclusive", reason(f"along {target} the SymPy limit of the ", RHO_1, " mass is 0, but "
                                                   "the Monte Carlo does not show it falling (", *path, ": ",
                                                   number_or_na(drop, 3), " standard errors, needs ", Number(Z_CLAIM), ")"),
                            evidence=ev)
    above = last.mc / last.mc_se if last.mc_se > 0 else math.inf
    measured = pm_or_na(last.mc, last.mc_se, 4)
    if above > Z_CLAIM:
        return ClaimVerdict(
            "refuted", reason(f"along {target} the nuisance mass at ", RHO_1, " does not tend to 0: SymPy limit ",
                              number_or_na(lim, 4), "; at the largest size the closed form gives ",
                              number_or_na(last.closed_form, 4), " and the Monte Carlo ", *measured, ", ",
                              number_or_na(above, 3), " standard errors above 0 (", *where, ")"),
            condition=reason(f"{target}, ", *_size(last.R, last.L), ", ", RHO_1, ", ", *where, ": derived mass ",
                             number_or_na(last.closed_form, 4), " (limit ", number_or_na(lim, 4), "), measured ", *measured,
                             " (", number_or_na(above, 3), " standard errors above 0)"), evidence=ev)
    return ClaimVerdict("inconclusive", reason(f"along {target} the SymPy limit of the ", RHO_1, " mass is ",
                                               number_or_na(lim, 4), ", but the Monte Carlo at the largest size (",
                                               *measured, ") is only ", number_or_na(above, 3), " standard errors above 0 "
                                               "(needs ", Number(Z_CLAIM), ")"), evidence=ev)
