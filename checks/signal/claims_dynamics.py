"""Paper A claims about the learning dynamics (claims 2, 3 and 5), judged from the typed findings of
signal.ode_tracks_sga and signal.alignment_30_runs against the stated forms in stated.toml.

* ``A.ode_tracks_sga`` (formula on the quantity ``F_limit``): the field of the ODE that SGA follows, stated against
  the derived F by a SymPy proof or a certified counterexample confirmed by the Monte Carlo drift
  (attnverify.checks.judges.formula); the tracking check (the mean SGA path against the ODE's second-order mean
  path, scale of F fitted) confirms that SGA follows the derived field, and must resolve its scale to
  SCALE_RESOLUTION, else the claim is inconclusive.
* ``A.reported_alignment`` (value): a reported mean final |rho| with its protocol. The figure of a protocol of
  n_p runs carries its own sampling error sd / sqrt(n_p) (sd measured); a difference below the statement's
  ``resolution`` is not read as agreement unless the test could see it (attnverify.checks.judges.value). When the
  protocol leaves the step schedule open (``unknown``), every recorded step of the check's runs is a protocol that
  was run (the schedule stopped there): the claim holds_if the schedules whose measured mean agrees with the figure,
  quoted as the steps and final step sizes run; it is refuted only when no protocol can reach the figure (a mean of
  |<q, xi>| lies in [0, 1) at any positive step).
"""
from __future__ import annotations

import math

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, claim_rng
from attnverify.checks.judges import Z, fmt, relation
from attnverify.checks.plugin import Perturbation
from attnverify.checks.signal._claims import options_of, quantity, with_confirmation

SCALE_RESOLUTION = 0.05     # the mean path must resolve the scale of F to 5 % (1 se) to confirm the derived field
Z_SHIFTS = (12.0, 8.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0)


# ----------------------------------------------------------------------------------------------------------------
# A.ode_tracks_sga
# ----------------------------------------------------------------------------------------------------------------
def _field_variants(stated, results: dict) -> list[Perturbation]:
    """Wrong fields: the stated one without its sphere factor (1 - rho^2) (the Euclidean gradient), and with the
    factor twice."""
    s = stated.stated
    return [Perturbation("sphere factor dropped", None, stated.restated(f"({s})/(1 - rho**2)")),
            Perturbation("sphere factor twice", None, stated.restated(f"({s})*(1 - rho**2)"))]


@claim(id="A.ode_tracks_sga", paper="A", needs=("signal.ode_tracks_sga",), perturbations=_field_variants)
def ode_tracks_sga(results: dict, stated) -> ClaimVerdict:
    """The stated field of the ODE by attnverify.checks.judges.formula on F_limit, confirmed by the tracking check."""
    res = results["signal.ode_tracks_sga"]
    f = res.findings
    figures = {"n_runs": f.n_runs, "theta": f.model.theta,
               "scales": [{"eta0": s.eta0, "fitted_scale_of_F": s.fitted_scale, "se": s.fitted_scale_se,
                           "max_abs_z": s.max_abs_z, "order_eta_terms_max": s.order_eta_terms_max} for s in f.scales]}
    if f.scale_resolution > SCALE_RESOLUTION:
        return ClaimVerdict("inconclusive", f"the mean of {f.n_runs} SGA runs resolves the scale of F only to "
                            f"{fmt(f.scale_resolution, 2)} (1 se), {relation(f.scale_resolution, SCALE_RESOLUTION)} "
                            f"the {SCALE_RESOLUTION:g} needed: signal.ode_tracks_sga cannot confirm that SGA follows "
                            "the derived field", evidence={res.id: figures})
    q = quantity(stated.quantity or "F_limit")
    verdict = judges.formula(stated, q, options_of(q, stated), claim_rng(results, stated))
    last = f.scales[-1]
    text = (f"signal.ode_tracks_sga confirms that SGA follows the derived field: the mean of {f.n_runs} runs "
            f"(theta = {f.model.theta:g}, eta_0 = {', '.join(f'{s.eta0:g}' for s in f.scales)}) equals the ODE's "
            f"second-order mean path at every recorded time (fitted scale of F {fmt(last.fitted_scale, 4)} +- "
            f"{fmt(last.fitted_scale_se, 2)}); its deviation from the plain ODE is the O(eta) terms (at most "
            f"{fmt(max(s.order_eta_terms_max for s in f.scales), 2)}), which vanish with the step")
    return with_confirmation(verdict, text, figures, res.id)


# ----------------------------------------------------------------------------------------------------------------
# A.reported_alignment
# ----------------------------------------------------------------------------------------------------------------
_PROTOCOL_KEYS = ("R", "L", "theta", "beta", "sigma", "d", "sign")
_SCHEDULE_KEYS = ("a", "b", "steps")


def _protocol_runs(stated) -> int | None:
    runs = stated.get("protocol", {}).get("runs")
    return int(runs) if runs else None


def _mismatch(stated, f) -> list[str]:
    proto = stated.get("protocol", {})
    m = f.model
    ran = {"R": m.R, "L": m.L, "theta": m.theta, "beta": m.beta, "sigma": m.sigma, "d": m.d, "sign": m.sign,
           "a": f.a, "b": f.b}
    off = []
    for key in (*_PROTOCOL_KEYS, "a", "b"):
        if key in proto and (proto[key] != ran[key] if isinstance(proto[key], str)
                             else not math.isclose(float(proto[key]), float(ran[key]), rel_tol=1e-9)):
            off.append(f"{key} = {ran[key]:g} (stated protocol: {proto[key]:g})" if key != "sign"
                       else f"sign = {ran[key]} (stated protocol: {proto[key]})")
    if "steps" in proto and int(proto["steps"]) not in {q.steps for q in f.points}:
        off.append(f"no record after {proto['steps']} steps (the runs recorded {f.points[0].steps}.."
                   f"{f.final.steps})")
    return off


def _with_protocol_error(stated, q, n_p: int | None):
    """The stated figure with its own sampling error: the larger of its stated uncertainty and sd / sqrt(n_p) of
    the protocol's n_p runs (sd measured at the protocol point q)."""
    u = float(stated.get("uncertainty", 0.0))
    if n_p:
        u = max(u, q.sd_abs / math.sqrt(n_p))
    return stated.restated(stated.stated, uncertainty=u), u


def _measured(f, q) -> judges.Measured:
    return judges.Measured(q.mean_abs, q.se_abs, f"mean final |rho| of {f.n_runs} runs, d = {f.model.d}, "
                          f"{f.schedule_text()} for {q.steps} steps (final step {fmt(q.eta_final, 3)})")


def _figure_at_protocol_as_run(stated, results: dict) -> list[Perturbation]:
    """A reported figure for the protocol the check ran (its model point, d, schedule and length, the stated number
    n_p of runs), shifted from the measured mean by k standard errors of that protocol (sd / sqrt(n_p), sd measured):
    wrong for every k > 0; and the figure 1.0, which no protocol reaches. The test compares the shift with
    Z sqrt(se^2 + sd^2 / n_p) (the check's own runs and the figure's sampling error), so it refutes k > Z (1 + n_p /
    n)^(1/2) protocol standard errors."""
    f = results["signal.alignment_30_runs"].findings
    q = f.final
    n_p = _protocol_runs(stated) or f.n_runs
    s = q.sd_abs / math.sqrt(n_p)              # the standard error of the protocol: its n_p runs' mean
    m = f.model
    proto = {"R": m.R, "L": m.L, "theta": m.theta, "beta": m.beta, "sigma": m.sigma, "d": m.d, "sign": m.sign,
             "a": f.a, "b": f.b, "steps": q.steps, "runs": n_p}
    out = [Perturbation("figure 1 (no protocol reaches it)", None, stated.restated(1.0))]
    for k in Z_SHIFTS:
        for sign in (1, -1):
            out.append(Perturbation(f"shift {'+' if sign > 0 else '-'} k se (protocol as run)", k,
                                    stated.restated(q.mean_abs + sign * k * s, protocol=proto, unknown=[])))
    return out


@claim(id="A.reported_alignment", paper="A", needs=("signal.alignment_30_runs",),
       perturbations=_figure_at_protocol_as_run)
def reported_alignment(results: dict, stated) -> ClaimVerdict:
    """The reported figure against the protocol points of the runs (module docstring)."""
    f = results["signal.alignment_30_runs"].findings
    S = float(stated.stated)
    best = max(f.points, key=lambda q: q.mean_abs)
    ev = {"signal.alignment_30_runs": {
        "d": f.model.d, "n_runs": f.n_runs, "schedule": f.schedule_text(), "n_steps": f.n_steps,
        "protocols": [{"steps": q.steps, "eta_final": q.eta_final, "mean_abs": q.mean_abs, "se": q.se_abs,
                       "predicted_abs": q.predicted_abs} for q in f.points]}}
    if S < 0.0:
        return ClaimVerdict("refuted", f"the stated mean |<q, xi>| {fmt(S, 5)} is reached by no protocol: a mean of "
                            "absolute values is at least 0", condition=f"any protocol: the stated {fmt(S, 5)} is "
                            f"{relation(S, 0.0)} 0, the smallest value a mean of |<q, xi>| can take", evidence=ev)
    if S >= 1.0:
        return ClaimVerdict(
            "refuted", f"the stated mean |<q, xi>| {fmt(S, 5)} is reached by no protocol: |<q, xi>| <= 1 for unit "
            "vectors, with equality only at +-xi, and SGA at a positive final step keeps every run a noise floor "
            f"u* = eta G(1) / (4 J'(1)) > 0 away (here {fmt(f.floor_per_unit_step, 3)} eta); the runs reach at most "
            f"{fmt(best.mean_abs, 5)} +- {fmt(best.se_abs, 2)} (after {best.steps} steps)",
            condition=f"any protocol: the stated {fmt(S, 5)} is {relation(S, 1.0)} 1, the supremum of a mean of "
                      f"|<q, xi>|, never reached at a positive step (measured at most {fmt(best.mean_abs, 5)} +- "
                      f"{fmt(best.se_abs, 2)})", evidence=ev)
    off = _mismatch(stated, f)
    if off:
        return ClaimVerdict("inconclusive", "the check did not run the stated protocol: " + "; ".join(off)
                            + " (run the paper profile)", evidence=ev)
    n_p = _protocol_runs(stated)
    unknown = list(stated.get("unknown", []))
    steps = stated.get("protocol", {}).get("steps")
    if steps is not None:                                   # the schedule is stated: judge at its end
        q = next(p for p in f.points if p.steps == int(steps))
        s, _ = _with_protocol_error(stated, q, n_p)
        return judges.value(s, _measured(f, q), protocol_complete=not unknown, where=f"{q.steps} steps")
    return _protocol_search(stated, f, S, n_p, ev)


def _protocol_search(stated, f, S: float, n_p: int | None, ev: dict) -> ClaimVerdict:
    """The schedule is not stated: every tested protocol point (the schedule stopped at a recorded step, where the
    check compared the runs with the derived mean path) is a protocol that was run and tested."""
    pts = f.tested
    if not pts:
        return ClaimVerdict("inconclusive", "no recorded step lies where the check compared the runs with the derived "
                            "mean path", evidence=ev)
    rows = []
    for q in pts:
        s, u = _with_protocol_error(stated, q, n_p)
        rows.append((q, s, u, abs(S - q.mean_abs) / math.hypot(q.se_abs, u)))
    ev["signal.alignment_30_runs"]["distance_in_se"] = {q.steps: d for q, _, _, d in rows}
    agree = [r for r in rows if r[3] <= Z]
    first, end = rows[0], rows[-1]
    end_text = (f"over the schedule lengths run the mean final |rho| goes from {fmt(first[0].mean_abs, 5)} +- "
                f"{fmt(first[0].se_abs, 2)} ({first[0].steps} steps, final step {fmt(first[0].eta_final, 3)}; "
                f"{relation(first[0].mean_abs, S)} the stated {fmt(S, 5)} by {fmt(first[3], 3)} standard errors) to "
                f"{fmt(end[0].mean_abs, 5)} +- {fmt(end[0].se_abs, 2)} ({end[0].steps} steps, final step "
                f"{fmt(end[0].eta_final, 3)}; {relation(end[0].mean_abs, S)} it by {fmt(end[3], 3)})")
    if agree:
        tests = [(r, judges.value(r[1], _measured(f, r[0]), protocol_complete=True, where=f"{r[0].steps} steps"))
                 for r in agree]
        resolved = [(r, v) for r, v in tests if v.verdict == "holds"]
        if not resolved:                                   # agreement only where the test cannot see 'resolution'
            r, v = min(tests, key=lambda t: math.hypot(t[0][0].se_abs, t[0][2]))
            return ClaimVerdict("inconclusive", f"{v.reason}; {end_text}", evidence={**ev, **v.evidence})
        (q, s, u, d), v = min(resolved, key=lambda t: t[0][3])
        k_lo, k_hi = min(r[0].steps for r, _ in resolved), max(r[0].steps for r, _ in resolved)
        e_hi, e_lo = max(r[0].eta_final for r, _ in resolved), min(r[0].eta_final for r, _ in resolved)
        return ClaimVerdict(
            "holds_if", f"{v.reason} (the figure's own sampling error over {n_p} runs is {fmt(u, 2)}); {end_text}",
            condition=(f"the schedule {f.schedule_text()} stopped after {k_lo}..{k_hi} steps (final step "
                       f"{fmt(e_lo, 3)}..{fmt(e_hi, 3)}) at d = {f.model.d}: run and tested, the measured mean agrees with "
                       f"the stated {fmt(S, 5)} within {Z:g} standard errors by a test that resolves "
                       f"{fmt(float(stated.get('resolution', judges.half_unit(S))), 2)} (the paper gives "
                       f"{', '.join(stated.get('unknown', [])) or 'no schedule'} only as this condition)"),
            evidence={**ev, **v.evidence})
    for (a, _, _, _), (b, _, _, _) in zip(rows, rows[1:]):
        if (a.mean_abs - S) * (b.mean_abs - S) < 0:
            return ClaimVerdict(
                "holds_if", f"no recorded schedule length gives the stated {fmt(S, 5)} within {Z:g} standard errors, "
                f"but it lies between two that were run: {fmt(a.mean_abs, 5)} +- {fmt(a.se_abs, 2)} after {a.steps} "
                f"steps and {fmt(b.mean_abs, 5)} +- {fmt(b.se_abs, 2)} after {b.steps}; {end_text}",
                condition=(f"the schedule {f.schedule_text()} stopped between {a.steps} and {b.steps} steps (final "
                           f"step between {fmt(b.eta_final, 3)} and {fmt(a.eta_final, 3)}) at d = {f.model.d}: bracketed "
                           "by runs on both sides"), evidence=ev)
    top = max(rows, key=lambda r: r[0].mean_abs)[0]
    if S > top.mean_abs:
        eta_star = (1.0 - S) / f.floor_per_unit_step if math.isfinite(f.floor_per_unit_step) else float("nan")
        k_star = math.ceil(f.a / eta_star - f.b + 1) if eta_star > 0 else None
        eta_first = f.a / f.b
        if k_star is not None and k_star >= 1:
            where = (f"puts it at a final step near {fmt(eta_star, 3)} ({k_star} steps of {f.schedule_text()}), "
                     "which was not run: rerun with more steps")
        elif k_star is not None:      # a final step larger than the schedule's first: the floor does not explain it
            where = (f"would put it at a final step near {fmt(eta_star, 3)}, {relation(eta_star, eta_first)} the "
                     f"schedule's first step {fmt(eta_first, 3)}: the runs have not reached their floor, so the "
                     "floor does not say how many steps are needed; rerun with more steps")
        else:
            where = "does not reach it at any step size: rerun with more steps"
        return ClaimVerdict("inconclusive", f"the stated {fmt(S, 5)} lies above every schedule length run (at most "
                            f"{fmt(top.mean_abs, 5)} +- {fmt(top.se_abs, 2)} after {top.steps} steps); the floor "
                            f"u* = eta G(1) / (4 J'(1)) {where}", evidence=ev)
    low = min(rows, key=lambda r: r[0].mean_abs)[0]
    return ClaimVerdict("inconclusive", f"the stated {fmt(S, 5)} lies below every schedule length tested (at least "
                        f"{fmt(low.mean_abs, 5)} +- {fmt(low.se_abs, 2)} after {low.steps} steps): a shorter schedule "
                        "or larger steps, not tested here, would be needed", evidence=ev)
