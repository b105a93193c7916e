"""Paper C's claims: each verdict computed from the typed findings of the checks of the same run, judged against the
stated form read from ``stated.toml`` (never a constant in code).

C.closed_form_risk     the risk in the overlaps (formula, on M)        slr.risk_vs_montecarlo (+ risk_vs_quadrature)
C.bayes_optimal        the oracle is asymptotically Bayes optimal      slr.oracle_vs_bayes (+ bayes_posterior)
C.linear_fails         the best linear excess (formula), d-free        slr.best_linear
C.manifold_invariant   M is invariant under PGD for every step         slr.manifold_invariance (+ reduced_flow)
C.manifold_convergence from M, PGD converges to +-oracle               slr.training_on_manifold
C.sphere_schedule      from the sphere, with the schedule, the oracle  slr.training_from_sphere
C.oracle_minimiser     the oracle minimises R on the spheres           slr.oracle_hessian (+ stationary_points)
"""
from __future__ import annotations

import math

import sympy as sp

from attnverify.checks.claims import ClaimVerdict, claim, claim_rng
from attnverify.checks.judges import fmt, relation
from attnverify.checks.judges.ranges import parse_range
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import Math, bracket, listing, reason

#: the ridge parameter, as mathematics
LAM = sp.Symbol("lambda")

PREDICATES = {"C.bayes_optimal": "asymptotically_bayes_optimal", "C.manifold_invariant": "manifold_invariant",
              "C.manifold_convergence": "converges_to_oracle_on_M", "C.sphere_schedule": "schedule_reaches_oracle",
              "C.oracle_minimiser": "oracle_minimiser"}


def _unknown(stated, cid: str) -> ClaimVerdict | None:
    """Inconclusive when a qualitative statement names a predicate this claim does not measure."""
    want = PREDICATES[cid]
    if stated.kind != "qualitative" or stated.stated != want:
        return ClaimVerdict("inconclusive", f"the stated form {stated.kind} {stated.stated!r} is not a predicate the "
                            f"evidence measures (this claim measures the qualitative {want!r})")
    return None


def _quantity(stated):
    from attnverify.checks.registry import paper

    return next(q for q in paper("slr").quantities() if q.name == stated.quantity)


# ------------------------------------------------------------------------------------------- formulas
@claim(id="C.closed_form_risk", paper="C", needs=("slr.risk_vs_montecarlo",), uses=("slr.risk_vs_quadrature",))
def _closed_form_risk(results, stated) -> ClaimVerdict:
    """The stated formula judged by proof or certified counterexample confirmed by Monte Carlo (judges.formula); the
    checks add the full closed form off M (Monte Carlo over the grid, quadrature)."""
    from attnverify.checks.judges import formula

    verdict = formula(stated, _quantity(stated), {}, claim_rng(results, stated))
    f = results["slr.risk_vs_montecarlo"].findings
    extra = (f"; off M, the derived closed form in all five overlaps agrees with Monte Carlo at {f.n_points} points "
             f"(max |z| {fmt(f.max_abs_z, 3)} {relation(f.max_abs_z, f.z_threshold)} {fmt(f.z_threshold, 3)}; pooled "
             f"ratio {fmt(f.pooled_ratio, 6)} +- {fmt(f.pooled_ratio_se, 2)})")
    verdict.evidence["slr.risk_vs_montecarlo"] = {"max_abs_z": f.max_abs_z, "z_threshold": f.z_threshold,
                                                  "pooled_ratio": f.pooled_ratio, "n_points": f.n_points}
    q = results.get("slr.risk_vs_quadrature")
    if q is not None:
        extra += f" and quadrature to {fmt(q.findings.max_relative_difference, 2)} (relative)"
    verdict.reason += extra
    return verdict


@claim(id="C.linear_fails", paper="C", needs=("slr.best_linear",))
def _linear_fails(results, stated) -> ClaimVerdict:
    """The stated excess of the best linear predictor (judges.formula), with the measured excess over the d grid."""
    from attnverify.checks.judges import formula

    verdict = formula(stated, _quantity(stated), {}, claim_rng(results, stated))
    f = results["slr.best_linear"].findings
    by_L: dict[int, list] = {}
    for (d, L), m, se in zip(f.cells, f.excess_measured, f.excess_se):
        by_L.setdefault(L, []).append((d, m, se))
    parts = []
    for L, rows in sorted(by_L.items()):
        lo, hi = min(r[1] for r in rows), max(r[1] for r in rows)
        parts.append(f"L = {L}: {fmt(lo, 4)}..{fmt(hi, 4)} over d = {', '.join(str(r[0]) for r in rows)}")
    verdict.reason += "; least squares measures the excess " + "; ".join(parts) + \
        " (no decrease with d: linear predictors stay away from the Bayes risk)"
    verdict.evidence["slr.best_linear"] = {"cells": f.cells, "excess_measured": f.excess_measured,
                                           "excess_se": f.excess_se, "excess_closed": f.excess_closed}
    return verdict


# ------------------------------------------------------------------------------------------- Bayes optimality
@claim(id="C.bayes_optimal", paper="C", needs=("slr.oracle_vs_bayes",), uses=("slr.bayes_posterior",))
def _bayes_optimal(results, stated) -> ClaimVerdict:
    """not_refuted (an asymptotic statement) when the measured gap between the oracle at lam_best(d) and the Bayes
    risk decays in d (95 % interval of its log-log slope below 0); refuted when it grows; inconclusive otherwise."""
    bad = _unknown(stated, "C.bayes_optimal")
    if bad:
        return bad
    f = results["slr.oracle_vs_bayes"].findings
    ev = {"slr.oracle_vs_bayes": {"ds": f.ds, "lam_best": f.lam_best, "excess_mc": f.excess_mc,
                                  "bayes_excess": f.bayes_excess, "gap_slope": f.gap_slope,
                                  "gap_slope_ci": f.gap_slope_ci, "lam_slope": f.lam_slope}}
    lo, hi = f.gap_slope_ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ClaimVerdict("inconclusive", f"the gap to the Bayes risk cannot be fitted against d (d = "
                            f"{', '.join(map(str, f.ds))}: need three d with a positive gap)", evidence=ev)
    here = (f"at L = {f.L}, the oracle's excess risk at its best temperature falls from {fmt(f.excess_mc[0], 4)} "
            f"(d = {f.ds[0]}) to {fmt(f.excess_mc[-1], 4)} (d = {f.ds[-1]}), Monte Carlo confirming the closed form; "
            f"the Bayes excess is {fmt(f.bayes_excess[0], 3)}..{fmt(f.bayes_excess[-1], 3)}; the gap scales as "
            f"d^{fmt(f.gap_slope, 3)} (95 % interval [{fmt(lo, 3)}, {fmt(hi, 3)}]) with lam_best ~ "
            f"d^{fmt(f.lam_slope, 3)}")
    if hi < 0:
        return ClaimVerdict("not_refuted", here + ": consistent with asymptotic Bayes optimality for L fixed "
                            "(an asymptotic statement: no finite d proves it)", evidence=ev)
    if lo > 0:
        return ClaimVerdict("refuted", here + ": the gap grows with d",
                            condition=f"d = {f.ds[0]}..{f.ds[-1]}, L = {f.L}: gap slope in [{fmt(lo, 3)}, "
                                      f"{fmt(hi, 3)}] > 0", evidence=ev)
    return ClaimVerdict("inconclusive", here + ": the slope is not resolved from 0", evidence=ev)


# ------------------------------------------------------------------------------------------- the manifold M
@claim(id="C.manifold_invariant", paper="C", needs=("slr.manifold_invariance",), uses=("slr.reduced_flow",))
def _manifold_invariant(results, stated) -> ClaimVerdict:
    bad = _unknown(stated, "C.manifold_invariant")
    if bad:
        return bad
    f = results["slr.manifold_invariance"].findings
    ev = {"slr.manifold_invariance": {"symbolic": f.symbolic_invariance, "one_step_distance": f.max_one_step_distance,
                                      "tolerance": f.one_step_distance_tolerance, "path_difference":
                                      f.max_path_difference, "run_distance": f.max_run_distance,
                                      "growth": f.run_distance_growth}}
    if f.n_steps < 1:
        return ClaimVerdict("inconclusive", "no step was run", evidence=ev)
    if not f.symbolic_invariance:
        if f.max_one_step_distance > 1e3 * f.one_step_distance_tolerance:
            return ClaimVerdict("refuted", f"one projected step from M leaves it by {fmt(f.max_one_step_distance, 3)}",
                                condition=f"one step at h in {f.step_sizes}: distance to M "
                                          f"{fmt(f.max_one_step_distance, 3)}", evidence=ev)
        return ClaimVerdict("inconclusive", "the derived map does not keep M invariant symbolically, but the steps "
                            "run stay on M to rounding", evidence=ev)
    rounding = (f"; along {f.n_steps} steps rounding errors off M grew by a factor {fmt(f.run_distance_growth, 3)} "
                f"to {fmt(f.max_run_distance, 3)} (M is invariant but "
                + ("repels" if f.run_distance_growth > 100 else "does not repel")
                + " nearby points at this lam)")
    flow = ""
    if "slr.reduced_flow" in results:
        fl = results["slr.reduced_flow"].findings
        flow = f"; as h -> 0 the map follows the derived reduced flow (observed order {fmt(fl.observed_order, 3)})"
    return ClaimVerdict("holds", f"symbolically theta' = eta' = rho' = 0 on M for every step h; one d-dimensional "
                        f"float64 step at h in {f.step_sizes} leaves M by at most {fmt(f.max_one_step_distance, 2)} "
                        f"({relation(f.max_one_step_distance, f.one_step_distance_tolerance)} the rounding bound "
                        f"{fmt(f.one_step_distance_tolerance, 2)}); the (kappa, nu) path equals the reduced 2-D map to "
                        f"{fmt(f.max_path_difference, 2)}"
                        + (f" up to step {f.compared_steps}, while the runs stayed within {f.near_m:g} of M"
                           if f.compared_steps < f.n_steps else "") + rounding + flow, evidence=ev)


def _end_text(e) -> str:
    text = (f"run {e.run}: (kappa, nu, theta, eta, rho) = ({', '.join(fmt(x, 3) for x in e.overlaps)}), excess "
            f"{fmt(e.excess_mc, 4)} +- {fmt(e.excess_mc_se, 2)} (Monte Carlo)")
    if e.fixed_set:
        text += (" -- on {k = +-v*, v orthogonal to v*}, the fixed set of a symmetry of R, which PGD never leaves: "
                 "the oracle is out of its reach")
    return text


def _blocking(ends, paper_protocol: bool) -> list:
    """The end points that refute "every run reaches the oracle": any run away from the oracle at the end of the
    paper's protocol; under other settings only runs that cannot get there (settled at a stationary point, or on the
    invariant fixed set of a symmetry)."""
    if paper_protocol:
        return [e for e in ends if e.kind != "oracle"]
    return [e for e in ends if e.settled or e.fixed_set]


@claim(id="C.manifold_convergence", paper="C", needs=("slr.training_on_manifold",), uses=("slr.reduced_flow",))
def _manifold_convergence(results, stated) -> ClaimVerdict:
    """holds when every run ends within AT_ORACLE of +-oracle; refuted by a run away from it at the end of the paper's
    protocol, or (other settings) settled elsewhere (_blocking); inconclusive when runs are still on their way."""
    bad = _unknown(stated, "C.manifold_convergence")
    if bad:
        return bad
    (f,) = results["slr.training_on_manifold"].findings.experiments
    ends = f.end_points
    ev = {"slr.training_on_manifold": {"protocol": dict(f.protocol), "kinds": f.kinds(),
                                       "min_abs_kappa": min(abs(e.overlaps[0]) for e in ends)}}
    plus = sum(e.overlaps[0] * e.overlaps[1] > 0 and e.overlaps[0] > 0 for e in ends)
    minus = sum(e.overlaps[0] * e.overlaps[1] > 0 and e.overlaps[0] < 0 for e in ends)
    same_kappa = sum((e.overlaps[0] > 0) == (e.start[0] > 0) for e in ends)
    basins = (f"{plus} runs to +(k*, v*), {minus} to -(k*, v*); the limit has the sign of kappa_0 in {same_kappa} of "
              f"{len(ends)} runs")
    settled = _blocking(ends, f.paper_protocol)
    if settled:
        e = settled[0]
        return ClaimVerdict("refuted", f"{len(settled)} of {len(ends)} runs started on M end away from +-(k*, v*): "
                            f"{_end_text(e)}; {basins}",
                            condition=_end_text(e) + f" after {dict(f.protocol)['n_steps']} steps", evidence=ev)
    away = [e for e in ends if e.kind != "oracle"]
    if away:
        return ClaimVerdict("inconclusive", f"{len(away)} of {len(ends)} runs are still on their way (e.g. "
                            f"{_end_text(away[0])}; drift {fmt(away[0].drift, 2)} over the last quarter): run longer",
                            evidence=ev)
    gap = max(1 - min(abs(e.overlaps[0]), abs(e.overlaps[1])) for e in ends)
    text = (f"all {len(ends)} runs end within {fmt(gap, 3)} of +-(k*, v*) (|kappa|, |nu| >= {fmt(1 - gap, 4)}, "
            f"distance to M <= {fmt(f.max_distance_to_M, 2)}); {basins}; excess risk {fmt(f.mean_final_excess, 4)} "
            f"against the oracle's {fmt(f.oracle_excess, 4)}")
    if f.paper_protocol:
        return ClaimVerdict("holds", text + " (the paper's protocol)", evidence=ev)
    return ClaimVerdict("holds_if", text, condition="at the settings run: " + ", ".join(f"{k} = {v}" for k, v in
                                                                                       f.protocol), evidence=ev)


@claim(id="C.sphere_schedule", paper="C", needs=("slr.training_from_sphere",))
def _sphere_schedule(results, stated) -> ClaimVerdict:
    """Over the schedule experiments (PGD and SGD): holds when every run ends at +-oracle (paper protocol); refuted
    by a run away from the oracle at the end of the paper's protocol, or settled elsewhere (_blocking; its Monte
    Carlo risk confirmed by the check); inconclusive when
    runs are still on their way. The fixed-lam experiments are reported."""
    bad = _unknown(stated, "C.sphere_schedule")
    if bad:
        return bad
    F = results["slr.training_from_sphere"].findings
    sched = [e for e in F.experiments if "schedule" in e.name]
    fixed = [e for e in F.experiments if "schedule" not in e.name]
    ev = {"slr.training_from_sphere": {e.name: {"kinds": e.kinds(), "protocol": dict(e.protocol),
                                                "final_excess": e.mean_final_excess, "oracle_excess": e.oracle_excess}
                                       for e in F.experiments}}
    report = "; ".join(_experiment_text(e) for e in sched + fixed)
    for e in sched:
        settled = _blocking(e.end_points, e.paper_protocol)
        if settled:
            x = settled[0]
            diff = (f"{fmt(x.minus_oracle_mc, 3)} +- {fmt(x.minus_oracle_se, 2)} "
                    f"({relation(x.minus_oracle_mc, 0.0, 3 * x.minus_oracle_se)} the oracle's risk at the final lam "
                    f"{fmt(e.final_lam, 3)}, paired Monte Carlo)")
            return ClaimVerdict("refuted", f"{e.name}: {len(settled)} of {e.n_runs} runs end away from the oracle"
                                f"{' at the end of the paper protocol' if e.paper_protocol else ''}; " + report, condition=f"{e.name}, " + ", ".join(f"{k} = {v}" for k, v in e.protocol)
                                + f": {_end_text(x)}, risk minus the oracle's {diff}", evidence=ev)
    if any(x.kind != "oracle" for e in sched for x in e.end_points):
        return ClaimVerdict("inconclusive", "runs are still on their way (not settled): " + report, evidence=ev)
    if all(e.paper_protocol for e in sched):
        return ClaimVerdict("holds", report, evidence=ev)
    return ClaimVerdict("holds_if", report, condition="at the settings run (not the paper's protocol): "
                        + "; ".join(f"{e.name}: " + ", ".join(f"{k} = {v}" for k, v in e.protocol) for e in sched),
                        evidence=ev)


def _experiment_text(e) -> str:
    k = e.kinds()
    return (f"{e.name}: {k.get('oracle', 0)}/{e.n_runs} at the oracle, {k.get('off_M', 0)} off M, {k.get('M', 0)} on M "
            f"elsewhere; mean final excess {fmt(e.mean_final_excess, 4)} ({relation(e.mean_final_excess, e.oracle_excess)}"
            f" the oracle's {fmt(e.oracle_excess, 4)} at lam = {fmt(e.final_lam, 3)})")


# ------------------------------------------------------------------------------------------- the oracle as minimiser
LADDER = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)


def _minimiser_ranges(stated, results: dict) -> list[Perturbation]:
    """The claim restated as strict local minimality on a range of lam around the certified lambda* (the self-test's
    knowledge of the truth, never a verdict): 'a strict local minimiser for lam < lambda* (1 + delta)' is false (a
    saddle above lambda*), 'for lam < lambda* (1 - delta)' true. (Global minimality has no derived range: the quick
    grid finds off-M minima below the oracle at both ends.) None when the check certified no single lambda*."""
    o = results["slr.oracle_hessian"].findings if "slr.oracle_hessian" in results else None
    if o is None or len(o.certified_brackets) != 1:
        return []
    lam_star = 0.5 * sum(o.certified_brackets[0])
    out = []
    for d in LADDER:
        for sign in (1, -1):
            name = f"local, range lam < lambda* (1 {'+' if sign > 0 else '-'} delta)"
            target = f"local, lam < {lam_star * (1 + sign * d):.6g}"
            out.append(Perturbation(name, d, stated.restated(stated.stated, target=target), wrong=sign > 0))
    return out


@claim(id="C.oracle_minimiser", paper="C", needs=("slr.oracle_hessian",), uses=("slr.stationary_points",),
       perturbations=_minimiser_ranges)
def _oracle_minimiser(results, stated) -> ClaimVerdict:
    """target "local": a strict local minimum (certified Hessian status, FD-confirmed); "global" (default): also the
    lowest stationary point found (slr.stationary_points); either may add a range of lam (``global, lam < 0.9``).
    With no range: holds when true at every lam tested, refuted when true at none, holds_if with the lam found
    otherwise. With a range: refuted by a lam tested inside it where it is false, holds when true at every lam
    tested inside it, inconclusive when none was tested there."""
    bad = _unknown(stated, "C.oracle_minimiser")
    if bad:
        return bad
    target, *clauses = [part.strip() for part in str(stated.get("target", "global")).split(",")]
    try:
        rng = parse_range(clauses, f"claim {stated.id}", variable="lam")
    except ValueError as exc:
        return ClaimVerdict("inconclusive", str(exc))
    if target not in ("global", "local"):
        return ClaimVerdict("inconclusive", f"target {target!r} is not 'global' or 'local' (optionally with a range "
                            "of lam: 'global, lam < 0.9')")
    o = results["slr.oracle_hessian"].findings
    st = results.get("slr.stationary_points")
    brackets = (tuple(p for i, (a, b) in enumerate(o.certified_brackets) for p in ((", ",) if i else ())
                      + (bracket(a, b, digits=8),)) or ("none in the range",))
    measured = (bracket(*o.measured_bracket) if o.measured_bracket else "not bracketed by the grid")
    status = {lam: s for lam, s in zip(o.lams, o.certified_status)}
    lowest: dict[float, bool] = {}
    below: list = []
    if target == "global" and st is not None:
        for x in st.findings.per_lam:
            status.setdefault(x.lam, "minimum" if x.oracle_kind == "minimum" else "saddle")
            lowest[x.lam] = not x.below_oracle
            if x.below_oracle:
                below.append(x)
    good = sorted(lam for lam, s in status.items() if s == "minimum" and lowest.get(lam, True))
    bad_lams = sorted(lam for lam in status if lam not in good)
    ev = {"slr.oracle_hessian": {"certified_brackets": o.certified_brackets, "measured_bracket": o.measured_bracket,
                                 "lams": o.lams, "smallest_closed": o.smallest_closed, "smallest_fd": o.smallest_fd},
          "target": target}
    lam_star = sp.Symbol("lambda^*")
    local = reason("the oracle is a strict local minimum for ", Math(LAM), " below ", Math(lam_star), " in ",
                   *brackets, " (certified; second differences of the quadrature risk bracket the sign change in ",
                   measured, ") and a saddle above")
    lower = "; ".join(f"at lam = {fmt(x.lam, 3)} an off-M minimum {_pt(x)} has risk {fmt(x.lowest_off_M_risk, 6)}, "
                      f"{relation(x.lowest_off_M_risk, x.oracle_risk)} the oracle's {fmt(x.oracle_risk, 6)}"
                      for x in below)
    if target == "global" and st is None:
        return ClaimVerdict("inconclusive", local + "; the stationary points were not searched in this run "
                            "(slr.stationary_points), so global minimality is not decided", evidence=ev)
    text = local + (f"; {lower}" if lower else "")     # a Reason: words continue its lead
    if not rng.unbounded:
        return _on_range(text, rng, target, [x for x in good if x in rng], [x for x in bad_lams if x in rng],
                         status, below, ev)
    if not good:
        lam = bad_lams[0]
        return ClaimVerdict("refuted", text, condition=f"at every lam tested ({', '.join(fmt(x, 3) for x in bad_lams)})"
                            f" the oracle is not a {'strict local' if target == 'local' else 'global'} minimiser, "
                            f"e.g. lam = {fmt(lam, 3)}: {_why(lam, status, below)}", evidence=ev)
    if not bad_lams:
        return ClaimVerdict("holds", text + f" (every lam tested: {', '.join(fmt(x, 3) for x in good)})", evidence=ev)
    return ClaimVerdict("holds_if", text, condition=reason(
        f"{'strict local' if target == 'local' else 'global'} minimiser at ", Math(LAM), " = ",
        listing(good, digits=3, last=" and "), ", not at ", Math(LAM), " = ", listing(bad_lams, digits=3, last=" and ")), evidence=ev)


def _on_range(text, rng, target: str, good: list, bad: list, status: dict, below: list, ev: dict) -> ClaimVerdict:
    """The verdict on a stated range of lam: the lam tested inside it decide."""
    what = "strict local" if target == "local" else "global"
    if bad:
        return ClaimVerdict("refuted", text, condition=f"inside the stated range ({rng.text()}) the oracle is not a "
                            f"{what} minimiser at lam = {fmt(bad[0], 3)}: {_why(bad[0], status, below)}", evidence=ev)
    if good:
        return ClaimVerdict("holds", text + f" (every lam tested in the stated range {rng.text()}: "
                            f"{', '.join(fmt(x, 3) for x in good)})", evidence=ev)
    return ClaimVerdict("inconclusive", text + f"; no lam was tested in the stated range ({rng.text()})", evidence=ev)


def _pt(x) -> str:
    best = min(x.off_M_minima, key=lambda m: m[1])[0]
    return "(" + ", ".join(fmt(v, 3) for v in best) + ")"


def _why(lam: float, status: dict, below: list) -> str:
    if status.get(lam) != "minimum":
        return "a saddle (negative Hessian eigenvalue, certified)"
    x = next(b for b in below if b.lam == lam)
    return f"the off-M minimum {_pt(x)} has risk {fmt(x.lowest_off_M_risk, 6)} < {fmt(x.oracle_risk, 6)}"
