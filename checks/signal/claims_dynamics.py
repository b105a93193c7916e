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

import sympy as sp

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, claim_rng, one_of
from attnverify.checks.judges import Z, relation
from attnverify.checks.judges.common import symbol_math
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import CheckRef, Math, Number, as_reason, bracket, item, listing, reason
from attnverify.checks.reason_values import number_or_na, pm_or_na
from attnverify.checks.params import InputError, number_problem, shown
from attnverify.checks.signal._claims import options_of, quantity, then, with_confirmation
from attnverify.checks.signal._model import MODEL_PARAMS, validate_model

SCALE_RESOLUTION = 0.05     # the mean path must resolve the scale of F to 5 % (1 se) to confirm the derived field
Z_SHIFTS = (12.0, 8.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0)

# the mathematics of the reasons (attnverify.checks.reason: symbols in SymPy's naming convention)
_ETA = sp.Symbol("eta")
_Q_XI = sp.Symbol(r"\langle q, \xi \rangle")                       # <q, xi>, q and xi unit vectors
F_MATH = Math(sp.Symbol("F"))
ORDER_ETA = Math(sp.Function("O")(_ETA))
ABS_RHO = Math(sp.Abs(sp.Symbol("rho")))
ABS_Q_XI = Math(sp.Abs(_Q_XI))
AT_MOST_ONE = Math(sp.Le(sp.Abs(_Q_XI), 1))
PLUS_MINUS_XI = Math(sp.Symbol(r"\pm\xi"))
ETA = Math(_ETA)
_FLOOR = sp.Eq(sp.Symbol("u^*"), _ETA * sp.Function("G")(1) / (4 * sp.Function(r"J^{\prime}")(1)))
FLOOR = Math(_FLOOR)                                               # the SGA noise floor of 1 - rho
FLOOR_POSITIVE = Math(sp.latex(_FLOOR) + " > 0")                  # a chain of relations: SymPy spells one at a time


def _schedule(f) -> tuple:
    """The parts of the step schedule eta_k = a/(k + b) the runs used: one equation when a and b are whole numbers
    (as a configuration writes them), else the equation in a and b with their values."""
    eta_k, k = sp.Symbol("eta_k"), sp.Symbol("k")
    if all(float(x).is_integer() for x in (f.a, f.b)):
        return item(Math(sp.Eq(eta_k, sp.Integer(int(f.a)) / (k + sp.Integer(int(f.b))))))
    a, b = sp.Symbol("a"), sp.Symbol("b")
    return item(Math(sp.Eq(eta_k, a / (k + b))), " with ", Math(a), " = ",
                Number(f.a, digits=6), ", ", Math(b), " = ", Number(f.b, digits=6))


def _d(f) -> tuple:
    """The parts of the dimension the runs used: d = 20."""
    return item(Math(sp.Symbol("d")), " = ", Number(f.model.d))


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
        return ClaimVerdict("inconclusive", reason(f"the mean of {f.n_runs} SGA runs resolves the scale of ", F_MATH,
                                                   " only to ", number_or_na(f.scale_resolution, 2), " (1 se), ",
                                                   relation(f.scale_resolution, SCALE_RESOLUTION), " the ",
                                                   Number(SCALE_RESOLUTION, digits=6), " needed: ", CheckRef(res.id),
                                                   " cannot confirm that SGA follows the derived field"),
                            evidence={res.id: figures})
    q = quantity(stated.quantity or "F_limit")
    verdict = judges.formula(stated, q, options_of(q, stated), claim_rng(results, stated))
    last = f.scales[-1]
    text = reason(CheckRef(res.id), f" confirms that SGA follows the derived field: the mean of {f.n_runs} runs (",
                  Math(sp.Symbol("theta")), " = ", Number(f.model.theta, digits=6), ", ", Math(sp.Symbol("eta_0")),
                  " = ", *listing((s.eta0 for s in f.scales), digits=6), ") equals the ODE's second-order mean path at "
                  "every recorded time (fitted scale of ", F_MATH, " ",
                  *pm_or_na(last.fitted_scale, last.fitted_scale_se, 4), "); its deviation from the plain ODE is "
                  "the ", ORDER_ETA, " terms (at most ", number_or_na(max(s.order_eta_terms_max for s in f.scales), 2),
                  "), which vanish with the step")
    return with_confirmation(verdict, text, figures, res.id)


# ----------------------------------------------------------------------------------------------------------------
# A.reported_alignment
# ----------------------------------------------------------------------------------------------------------------
_PROTOCOL_KEYS = ("R", "L", "theta", "beta", "sigma", "d", "sign")
_SCHEDULE_KEYS = ("a", "b", "steps")


def _reads_protocol(stated) -> None:
    """A.reported_alignment reads its protocol's model point, schedule and number of runs (ValueError naming the
    key otherwise): a misspelt key would be dropped and the figure judged against the protocol as run. Each number
    is a finite double; the model point is one of Paper A's models, by the rules ``--set`` applies (each option's
    range, then the constraints between those given: R < L, ...: attnverify.checks.signal._model.validate_model)."""
    proto = stated.get("protocol", {})
    for key, value in proto.items():
        one_of("protocol", key, (*_PROTOCOL_KEYS, *_SCHEDULE_KEYS, "runs"))
        if key == "sign":
            one_of("protocol.sign", value, ("fixed", "symmetric"))
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"field 'protocol.{key}': {shown(value)} is not a finite number")
        elif (problem := number_problem(value)) is not None:
            raise ValueError(f"field 'protocol.{key}': {problem[1]}")
        elif key in ("R", "L", "d", "steps", "runs") and (value != int(value) or value < 1):
            raise ValueError(f"field 'protocol.{key}': {value!r} is not a positive integer")
    point = {k: int(v) if k in ("R", "L", "d") else v for k, v in proto.items() if k in _PROTOCOL_KEYS}
    ranges = {p.name: p for p in MODEL_PARAMS}
    for key, value in point.items():
        try:
            ranges[key].validate(value)
        except InputError as exc:
            raise ValueError(f"field 'protocol.{key}': {str(exc).removeprefix(f'{key}: ')}") from None
    try:
        validate_model(point)
    except (ValueError, ArithmeticError) as exc:
        raise ValueError(f"field 'protocol': {str(exc).splitlines()[0]}") from None


def _protocol_runs(stated) -> int | None:
    runs = stated.get("protocol", {}).get("runs")
    return int(runs) if runs else None


def _mismatch(stated, f) -> list[tuple]:
    """Where the runs differ from the stated protocol: one item (parts) per parameter."""
    proto = stated.get("protocol", {})
    m = f.model
    ran = {"R": m.R, "L": m.L, "theta": m.theta, "beta": m.beta, "sigma": m.sigma, "d": m.d, "sign": m.sign,
           "a": f.a, "b": f.b}
    off = []
    for key in (*_PROTOCOL_KEYS, "a", "b"):
        if key in proto and (proto[key] != ran[key] if isinstance(proto[key], str)
                             else not math.isclose(float(proto[key]), float(ran[key]), rel_tol=1e-9)):
            off.append(item(symbol_math(key), " = ", Number(ran[key], digits=6), " (stated protocol: ",
                            Number(proto[key], digits=6), ")") if key != "sign"
                       else item(f"sign = {ran[key]} (stated protocol: {proto[key]})"))
    if "steps" in proto and int(proto["steps"]) not in {q.steps for q in f.points}:
        off.append(item(f"no record after {proto['steps']} steps (the runs recorded {f.points[0].steps}.."
                        f"{f.final.steps})"))
    return off


def _with_protocol_error(stated, q, n_p: int | None):
    """The stated figure with its own sampling error: the larger of its stated uncertainty and sd / sqrt(n_p) of
    the protocol's n_p runs (sd measured at the protocol point q)."""
    u = float(stated.get("uncertainty", 0.0))
    if n_p:
        u = max(u, q.sd_abs / math.sqrt(n_p))
    return stated.restated(stated.stated, uncertainty=u), u


def _measured(f, q) -> judges.Measured:
    """The measured mean at the protocol point q. Its ``how`` is a typed phrase (a Reason): the judge puts its parts
    into its own reason."""
    how = reason("mean final ", ABS_RHO, f" of {f.n_runs} runs, ", *_d(f), ", ", *_schedule(f),
                 f" for {q.steps} steps (final step ", number_or_na(q.eta_final, 3), ")")
    return judges.Measured(q.mean_abs, q.se_abs, how)


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


@claim(id="A.reported_alignment", paper="A", needs=("signal.alignment_30_runs",), reads=_reads_protocol,
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
    stated_number = number_or_na(S, 5)
    if S < 0.0:
        return ClaimVerdict("refuted", reason("the stated mean ", ABS_Q_XI, " ", stated_number, " is reached by no "
                                              "protocol: a mean of absolute values is at least 0"),
                            condition=reason("any protocol: the stated ", stated_number, " is ", relation(S, 0.0),
                                             " 0, the smallest value a mean of ", ABS_Q_XI, " can take"), evidence=ev)
    if S >= 1.0:
        best_run = pm_or_na(best.mean_abs, best.se_abs, 5)
        return ClaimVerdict(
            "refuted", reason("the stated mean ", ABS_Q_XI, " ", stated_number, " is reached by no protocol: ",
                              AT_MOST_ONE, " for unit vectors, with equality only at ", PLUS_MINUS_XI, ", and SGA at "
                              "a positive final step keeps every run a noise floor ", FLOOR_POSITIVE, " away (here ",
                              number_or_na(f.floor_per_unit_step, 3), " ", ETA, "); the runs reach at most ", *best_run,
                              f" (after {best.steps} steps)"),
            condition=reason("any protocol: the stated ", stated_number, " is ", relation(S, 1.0), " 1, the supremum "
                             "of a mean of ", ABS_Q_XI, ", never reached at a positive step (measured at most ",
                             *best_run, ")"), evidence=ev)
    off = _mismatch(stated, f)
    if off:
        return ClaimVerdict("inconclusive", reason("the check did not run the stated protocol (run the paper profile):",
                                                   items=off), evidence=ev)
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
    stated_number = number_or_na(S, 5)
    end_text = reason("over the schedule lengths run the mean final ", ABS_RHO, " goes from ",
                      *pm_or_na(first[0].mean_abs, first[0].se_abs, 5), f" ({first[0].steps} steps, final step ",
                      number_or_na(first[0].eta_final, 3), "; ", relation(first[0].mean_abs, S), " the stated ",
                      stated_number, " by ", number_or_na(first[3], 3), " standard errors) to ",
                      *pm_or_na(end[0].mean_abs, end[0].se_abs, 5), f" ({end[0].steps} steps, final step ",
                      number_or_na(end[0].eta_final, 3), "; ", relation(end[0].mean_abs, S), " it by ", number_or_na(end[3], 3),
                      ")")
    if agree:
        tests = [(r, judges.value(r[1], _measured(f, r[0]), protocol_complete=True, where=f"{r[0].steps} steps"))
                 for r in agree]
        resolved = [(r, v) for r, v in tests if v.verdict == "holds"]
        if not resolved:                                   # agreement only where the test cannot see 'resolution'
            r, v = min(tests, key=lambda t: math.hypot(t[0][0].se_abs, t[0][2]))
            return ClaimVerdict("inconclusive", then(v.reason, end_text), evidence={**ev, **v.evidence})
        (q, s, u, d), v = min(resolved, key=lambda t: t[0][3])
        k_lo, k_hi = min(r[0].steps for r, _ in resolved), max(r[0].steps for r, _ in resolved)
        e_hi, e_lo = max(r[0].eta_final for r, _ in resolved), min(r[0].eta_final for r, _ in resolved)
        resolution = float(stated.get("resolution", judges.half_unit(S)))
        return ClaimVerdict(
            "holds_if", then(as_reason(v.reason) + reason(f" (the figure's own sampling error over {n_p} runs is ",
                                                          number_or_na(u, 2), ")"), end_text),
            condition=reason("the schedule ", *_schedule(f), f" stopped after {k_lo}..{k_hi} steps (final step ",
                             bracket(e_lo, e_hi, digits=3), ") at ", *_d(f), ": run and tested, the measured mean "
                             "agrees with the stated ", stated_number, " within ", Number(Z, digits=6), " standard "
                             "errors by a test that resolves ", number_or_na(resolution, 2),
                             f" (the paper gives {', '.join(stated.get('unknown', [])) or 'no schedule'} only as this "
                             "condition)"),
            evidence={**ev, **v.evidence})
    for (a, _, _, _), (b, _, _, _) in zip(rows, rows[1:]):
        if (a.mean_abs - S) * (b.mean_abs - S) < 0:
            return ClaimVerdict(
                "holds_if", then(reason("no recorded schedule length gives the stated ", stated_number, " within ",
                                        Number(Z, digits=6), " standard errors, but it lies between two that were "
                                        "run: ", *pm_or_na(a.mean_abs, a.se_abs, 5), f" after {a.steps} steps and ",
                                        *pm_or_na(b.mean_abs, b.se_abs, 5), f" after {b.steps}"), end_text),
                condition=reason("the schedule ", *_schedule(f), f" stopped between {a.steps} and {b.steps} steps "
                                 "(final step between ", number_or_na(b.eta_final, 3), " and ", number_or_na(a.eta_final, 3),
                                 ") at ", *_d(f), ": bracketed by runs on both sides"), evidence=ev)
    top = max(rows, key=lambda r: r[0].mean_abs)[0]
    if S > top.mean_abs:
        eta_star = (1.0 - S) / f.floor_per_unit_step if math.isfinite(f.floor_per_unit_step) else float("nan")
        k_star = math.ceil(f.a / eta_star - f.b + 1) if eta_star > 0 else None
        eta_first = f.a / f.b
        if k_star is not None and k_star >= 1:
            where = item("puts it at a final step near ", number_or_na(eta_star, 3), f" ({k_star} steps of ",
                         *_schedule(f), "), which was not run: rerun with more steps")
        elif k_star is not None:      # a final step larger than the schedule's first: the floor does not explain it
            where = item("would put it at a final step near ", number_or_na(eta_star, 3), ", ",
                         relation(eta_star, eta_first), " the schedule's first step ", number_or_na(eta_first, 3),
                         ": the runs have not reached their floor, so the floor does not say how many steps are "
                         "needed; rerun with more steps")
        else:
            where = item("does not reach it at any step size: rerun with more steps")
        return ClaimVerdict("inconclusive", reason("the stated ", stated_number, " lies above every schedule length "
                                                   "run (at most ", *pm_or_na(top.mean_abs, top.se_abs, 5),
                                                   f" after {top.steps} steps); the floor ", FLOOR, " ", *where),
                            evidence=ev)
    low = min(rows, key=lambda r: r[0].mean_abs)[0]
    return ClaimVerdict("inconclusive", reason("the stated ", stated_number, " lies below every schedule length tested "
                                               "(at least ", *pm_or_na(low.mean_abs, low.se_abs, 5),
                                               f" after {low.steps} steps): a shorter schedule or larger steps, not "
                                               "tested here, would be needed"), evidence=ev)
