"""Paper A claims about the equilibria of the reduced field and the limits of SGA (claims 2 and 3), judged from the
typed findings of signal.equilibria_stability and signal.sign_ambiguity against the stated forms in stated.toml.

The three are qualitative: ``stated`` names the predicate, ``target`` its parameter.

* ``A.no_spurious_traps`` -- ``monotone``: F points towards +xi across (-1, 1) (towards the nearer pole in the
  symmetric model), so no interior point traps the dynamics; ``target`` an optional range of theta
  (``theta < X``), empty for every theta. Measured: the drift signs on the grid at the run's theta, and the
  stability of -xi at the other signal strengths tried (-xi attracting means F < 0 next to it).
* ``A.up_to_sign`` -- ``both_poles_limits``: +xi and -xi are both limits of SGA; ``target`` the model option
  (``fixed`` or ``symmetric``) and an optional range of theta (``fixed, theta > X``). Measured: where the SGA runs
  started on the side of -xi settled, per theta (signal.sign_ambiguity); the drift next to -xi
  (signal.equilibria_stability on the same model, when it ran) narrows the bracket of the switch the runs find, and
  where it is measured (and certified) repelling, -xi is no limit: a stated range containing that theta is refuted.
* ``A.any_initialisation`` -- ``limits_are_poles``: every run settles at one of the poles ``target`` allows
  (``+-xi``, or ``+xi`` / ``-xi``). Measured: the settled limits of every run; interior attractors of the drift.

With no range stated, a predicate that holds at some theta and fails at others holds_if the range the evidence
finds, quoted as a measured bracket (never the theory's theta*); with a stated range, a measured failure inside it
refutes the claim.
"""
from __future__ import annotations

import math

import sympy as sp

from attnverify.checks.claims import ClaimVerdict, claim, one_of, words
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import CheckRef, Math, Number, item, listing, reason
from attnverify.checks.reason_values import bracket_or_na, number_or_na, pm_or_na
from attnverify.checks.signal._claims import parse_range

LADDER = (0.5, 0.2, 0.1, 0.05, 0.02)

THETA, RHO, RHO0, XI, F = (sp.Symbol(n) for n in ("theta", "rho", "rho_0", "xi", "F"))
PLUS_XI, MINUS_XI, PM_XI = Math(r"+\xi"), Math(-XI), Math(r"\pm\xi")     # SymPy has no unary plus nor plus-minus


# ----------------------------------------------------------------------------------------------------------------
# the parts the reasons are built from
# ----------------------------------------------------------------------------------------------------------------


def _is(symbol: sp.Symbol, value: float, digits: int = 6) -> tuple:
    """``symbol = value`` (a measured or configured value: a Number at ``digits``; 6 is what ``:g`` printed)."""
    return item(Math(symbol), " = ", number_or_na(value, digits))


def _model(m, theta: bool = True, sign: bool = True) -> tuple:
    """The model point a check ran at, as parts (``sign = fixed, theta = 0.25, beta = 1, sigma = 1, R = 350,
    L = 1050, d = 2``; theta and the sign left out when False): the typed form of ``model_text``."""
    out: list = [f"sign = {m.sign}, "] if sign else []
    if theta:
        out += [*_is(THETA, m.theta), ", "]
    out += [*_is(sp.Symbol("beta"), m.beta), ", ", *_is(sp.Symbol("sigma"), m.sigma), ", ",
            *_is(sp.Symbol("R"), m.R), ", ", *_is(sp.Symbol("L"), m.L), ", ", *_is(sp.Symbol("d"), m.d)]
    return item(*out)


def _range(rng) -> tuple:
    """The stated range of theta as parts (the typed form of ``Range.text``: ``every theta > 0``,
    ``theta > 1.5 and theta < 3``)."""
    var = sp.Symbol(rng.variable)
    if rng.unbounded:
        return item("every ", Math(sp.StrictGreaterThan(var, 0)))
    ends = ([(" > ", rng.low)] if rng.low > 0 else []) + ([(" < ", rng.high)] if math.isfinite(rng.high) else [])
    out: list = []
    for i, (rel, x) in enumerate(ends):
        out += ([" and "] if i else []) + [Math(var), rel, number_or_na(x, 6)]
    return item(*out)


def _theta_star(results: dict) -> float | None:
    """The midpoint of the derived enclosure of theta* (for the self-test's perturbations only, never a verdict)."""
    for cid in ("signal.equilibria_stability",):
        if cid in results and results[cid].findings is not None and results[cid].findings.theta_star_enclosure:
            lo, hi = results[cid].findings.theta_star_enclosure
            return 0.5 * (lo + hi)
    return None


# ----------------------------------------------------------------------------------------------------------------
# A.no_spurious_traps
# ----------------------------------------------------------------------------------------------------------------
def _range_perturbations(stated, results: dict, wrong: str, right: str, target: str) -> list[Perturbation]:
    """The claim restated on a range of theta around the derived theta* (the self-test's knowledge of the truth,
    never a verdict): ``target.format(x)`` at x = theta* (1 -+ delta) for the named false (``wrong``) and true
    (``right``) sides."""
    ts = _theta_star(results)
    if ts is None:
        return []
    out = []
    for d in LADDER:
        for name, sign, is_wrong in ((wrong, wrong.endswith("+ delta)") * 2 - 1, True),
                                     (right, right.endswith("+ delta)") * 2 - 1, False)):
            out.append(Perturbation(name, d, stated.restated(stated.stated, target=target.format(ts * (1 + sign * d))),
                                    wrong=is_wrong))
    return out


def _monotone_ranges(stated, results: dict) -> list[Perturbation]:
    """'monotone for theta < theta* (1 + delta)' (false: -xi attracts just above theta*) and 'for theta < theta*
    (1 - delta)' (true: it must not be refuted)."""
    return _range_perturbations(stated, results, "range theta < theta* (1 + delta)",
                                "range theta < theta* (1 - delta)", "theta < {:.6g}")


def _direction(sign: str, rho: float) -> int:
    """The sign of F that 'monotone' asks for at rho: towards +xi (fixed), towards the nearer pole (symmetric)."""
    return 1 if sign == "fixed" else (1 if rho > 0 else -1)


@claim(id="A.no_spurious_traps", paper="A", needs=("signal.equilibria_stability",), perturbations=_monotone_ranges,
       reads=words(("monotone",), lambda target: parse_range(target.split(","), "field 'target'")))
def no_spurious_traps(results: dict, stated) -> ClaimVerdict:
    """Measured interior attractors refute; otherwise the theta where F was measured against 'monotone' (the run's
    theta when a grid sign points the other way, or -xi measured attracting at a theta*-side test) are failures, the
    run's theta is a confirmation when every grid sign points the right way."""
    f = results["signal.equilibria_stability"].findings
    where = _model(f.model)
    rng = parse_range(str(stated.get("target", "")).split(","), f"claim {stated.id}")    # read (reads=) before
    ev = {"signal.equilibria_stability": {
        "theta": f.model.theta, "sign": f.model.sign, "measured_interior_attractors": list(f.interior_attractors),
        "grid": [{"rho": g.rho, "mean": g.mean, "se": g.se, "measured": g.measured} for g in f.grid],
        "minus_xi": [{"theta": m.theta, "observed": m.observed, "certified": m.certified, "mean": m.mean, "se": m.se}
                     for m in f.minus_xi],
        "range": rng.text()}}
    if f.interior_attractors:
        x = f.interior_attractors[0]
        return ClaimVerdict("refuted", reason("an interior point attracts the measured drift at ", where, ": a trap"),
                            condition=reason(where, ": ", *_is(RHO, x, 4), " is attracting in the measured drift (and "
                                             "in the certified classification: the check found them in agreement)"),
                            evidence=ev)
    model, theta = _model(f.model, theta=False), f.model.theta
    wrong_way = [g for g in f.grid if g.measured == -_direction(f.model.sign, g.rho)]
    at_rest = [e.rho for e in f.equilibria]
    open_points = [g for g in f.grid if g.measured == 0 and not any(abs(g.rho - r) < 1e-9 for r in at_rest)]
    failures = {}                                          # theta -> the measured reason (parts)
    if wrong_way:
        g = wrong_way[0]
        failures[theta] = item("at ", *_is(THETA, theta), " the drift at ", *_is(RHO, g.rho, 3), " is ",
                               *pm_or_na(g.mean, g.se, 3), ": ", Math(F), " points away from the pole")
    if f.model.sign == "fixed":
        for m in f.minus_xi:
            if m.observed == "attracting" and m.theta not in failures:
                failures[m.theta] = item("at ", *_is(THETA, m.theta, 4), " the drift next to ", MINUS_XI, " (",
                                         *_is(RHO, m.probe, 4), ") is ", *pm_or_na(m.mean, m.se, 3), ": ", MINUS_XI,
                                         " attracts, ", Math(sp.StrictLessThan(F, 0)), " beside it")
    confirmed = not wrong_way and not open_points and bool(f.grid) and theta not in failures
    consistent = ([theta] if confirmed else []) + [m.theta for m in f.minus_xi if m.observed == "repelling"
                                                   and f.model.sign == "fixed"]
    inside = sorted(t for t in failures if t in rng)
    if inside and not (rng.unbounded and confirmed):
        t = theta if theta in inside else inside[0]        # the run's own theta has the whole grid
        return ClaimVerdict("refuted", reason(Math(F), " is not monotone along the alignment in the stated range (",
                                              _range(rng), "): ", failures[t], " (", where, ")"),
                            condition=reason(failures[t], " (", model, ")"), evidence=ev)
    first_fail = min(failures) if failures else math.inf
    below = [t for t in consistent if t < first_fail]
    lo_ok = max(below) if below else None
    if failures and rng.unbounded:                          # confirmed at the run's theta, failing above
        if theta > first_fail:
            return ClaimVerdict("inconclusive", reason(Math(F), " is confirmed monotone at ", *_is(THETA, theta),
                                                       " but measured failing below it (", failures[first_fail],
                                                       "): the evidence is not ordered in ", Math(THETA)),
                                evidence=ev)
        return ClaimVerdict(
            "holds_if", reason("at ", *_is(THETA, theta), " every grid sign of the drift points towards ", PLUS_XI,
                               " and no interior point attracts; ", failures[first_fail], ", so 'monotone' holds only "
                               "below a switch the measurement brackets in ", bracket_or_na(lo_ok, first_fail), " (", where,
                               ")"),
            condition=reason(Math(THETA), " below the switch of ", MINUS_XI, "'s stability, measured in ",
                             bracket_or_na(lo_ok, first_fail), " (the drift next to ", MINUS_XI, " is positive at ",
                             number_or_na(lo_ok), ", negative at ", number_or_na(first_fail), "; ", model, ")"), evidence=ev)
    if not confirmed:
        why = (item(Number(len(open_points)), " grid sign(s) are not resolved at ", *_is(THETA, theta)) if open_points
               else item("no grid was measured"))
        return ClaimVerdict("inconclusive", reason("no interior point attracts, but ", why, ": 'monotone' is not "
                                                   "confirmed (", where, ")"), evidence=ev)
    top = lo_ok if lo_ok is not None else theta
    if rng.high <= top * (1 + 1e-12) or (not failures and rng.unbounded):
        tested = listing(sorted(consistent), digits=4)
        return ClaimVerdict("holds", reason("at ", *_is(THETA, theta), " every grid sign of the drift points towards "
                                            "the pole and no interior point attracts; ", MINUS_XI, " is measured "
                                            "repelling at every ", Math(THETA), " tested up to ", number_or_na(top), " (",
                                            Math(THETA), " = ", tested, ")",
                                            ("; the stated range ", _range(rng), " lies below it") if not rng.unbounded
                                            else (), " (", where, ")"),
                            evidence=ev)
    return ClaimVerdict("inconclusive", reason("the stated range ", _range(rng), " ends inside the measured bracket of "
                                               "the switch ", bracket_or_na(top, first_fail), ": the evidence cannot tell"),
                        evidence=ev)


# ----------------------------------------------------------------------------------------------------------------
# A.up_to_sign
# ----------------------------------------------------------------------------------------------------------------
def _sign_ranges(stated, results: dict) -> list[Perturbation]:
    """'both poles are limits for theta > theta* (1 - delta)' (false: -xi repels just below theta*) and 'for theta >
    theta* (1 + delta)' (true), in the fixed-sign model."""
    if not str(stated.get("target", "")).startswith("fixed"):
        return []
    return _range_perturbations(stated, results, "range theta > theta* (1 - delta)",
                                "range theta > theta* (1 + delta)", "fixed, theta > {:.6g}")


def _pole_evidence(rows: list, tol: float) -> tuple[dict, dict, list]:
    """Per theta of one model option: where -xi is a limit (both poles reached) and where it is not (every run
    started at rho0 < 0 settled at +xi, and -xi is certified repelling: derived and measured agree); the thetas
    the runs cannot decide. The first two map theta to why (reason parts)."""
    yes, no, open_ = {}, {}, []
    for r in rows:
        reached, below = r.poles(tol), r.from_below()
        if reached >= {-1, 1}:
            yes[r.theta] = item("runs settle at both poles at ", *_is(THETA, r.theta))
        elif below and all(abs(x - 1) <= tol for x in below) and not r.minus_xi_attracting:
            no[r.theta] = item("at ", *_is(THETA, r.theta), " all ", Number(len(below)), " runs started at ",
                               Math(sp.StrictLessThan(RHO0, 0)), " (down to ", number_or_na(min(r.starts), 6),
                               ") settled at ", PLUS_XI, ", and ", MINUS_XI, " is certified repelling")
        else:
            open_.append(r.theta)
    return yes, no, open_


def _model_and_range(target: str) -> None:
    """A.up_to_sign's target: the model option, then an optional range of theta ("fixed, theta > 1.2")."""
    model, *clauses = [p.strip() for p in target.split(",")]
    one_of("target", model, ("fixed", "symmetric"))
    parse_range(clauses, "field 'target'")


@claim(id="A.up_to_sign", paper="A", needs=("signal.sign_ambiguity",), uses=("signal.equilibria_stability",),
       reads=words(("both_poles_limits",), _model_and_range),
       perturbations=_sign_ranges)
def up_to_sign(results: dict, stated) -> ClaimVerdict:
    """Whether both poles are limits of the SGA runs, per theta of the stated model option; a stated range refutes
    on a theta inside it where -xi is no limit (all runs from its side settled at +xi, or, fixed sign, the drift
    next to -xi measured and certified repelling by signal.equilibria_stability on the same model); with no range the
    verdict states the range found (a bracket measured by the runs, narrowed by that drift)."""
    f = results["signal.sign_ambiguity"].findings
    target = str(stated.get("target", "fixed"))
    parts = [p.strip() for p in target.split(",")]
    model = parts[0]
    rng = parse_range(parts[1:], f"claim {stated.id}")                  # its words read (reads=) before
    rows = [r for r in f.rows if r.sign == model]
    yes, no, open_ = _pole_evidence(rows, f.reach_tol)
    where = item(f"{model} sign, ", _model(f.model, theta=False, sign=False))
    ev = {"signal.sign_ambiguity": {"model": model, "range": rng.text(),
                                    "limits": {f"theta={r.theta:g}": sorted(r.poles(f.reach_tol)) for r in rows},
                                    "minus_xi_a_limit_at": sorted(yes), "minus_xi_no_limit_at": sorted(no)}}
    if not rows or not (yes or no):
        why = item("the check did not run this model option") if not rows else item(
            "no ", Math(THETA), " has runs started at ", Math(sp.StrictLessThan(RHO0, 0)), " that decide whether ",
            MINUS_XI, " is a limit")
        return ClaimVerdict("inconclusive", reason(why, " (", where, ")"), evidence=ev)
    repelling = _repelling_by_drift(results, f.model) if model == "fixed" else {}
    ev["signal.sign_ambiguity"]["minus_xi_repelling_by_drift_at"] = sorted(repelling)
    inside = sorted(t for t in {**repelling, **no} if t in rng)
    if inside and not (rng.unbounded and yes):
        t = inside[0]
        why = no.get(t) or repelling[t]
        return ClaimVerdict("refuted", reason(MINUS_XI, " is not a limit of SGA in the stated range (", _range(rng),
                                              "): ", why),
                            condition=reason(where, ": ", why), evidence=ev)
    if yes and no:
        lo, hi = max(no), min(yes)
        if lo > hi:
            return ClaimVerdict("inconclusive", reason("the runs do not split in ", Math(THETA), ": ", MINUS_XI,
                                                       " is a limit at ", *_is(THETA, hi, 4), " but not at ",
                                                       number_or_na(lo), " (", where, ")"), evidence=ev)
        lo, hi, narrowed = _narrowed(results, lo, hi)
        if rng.unbounded:
            return ClaimVerdict(
                "holds_if", reason(no[max(no)], "; ", yes[min(yes)], ("; ", narrowed) if narrowed else ()),
                condition=reason(Math(THETA), " above a switch measured in ", bracket_or_na(lo, hi), " (", where, ")"),
                evidence=ev)
        if rng.low >= hi:
            return ClaimVerdict("holds", reason("the stated range ", _range(rng), " lies above the switch measured in ",
                                                bracket_or_na(lo, hi), ": ", yes[min(yes)], " (", where, ")"), evidence=ev)
        return ClaimVerdict("inconclusive", reason("the stated range ", _range(rng), " begins inside the measured "
                                                   "bracket of the switch ", bracket_or_na(lo, hi), " (", where, ")"),
                            evidence=ev)
    if yes:
        inside_yes = sorted(t for t in yes if t in rng)
        if not inside_yes:
            return ClaimVerdict("inconclusive", reason("no ", Math(THETA), " in the stated range ", _range(rng),
                                                       " was run (", where, ")"), evidence=ev)
        return ClaimVerdict("holds", reason("both poles are limits at every ", Math(THETA), " run (",
                                            listing(sorted(yes), digits=6), ")",
                                            ("; undecided at ", listing(open_, digits=6)) if open_ else (),
                                            " (", where, ")"),
                            evidence=ev)
    return ClaimVerdict("inconclusive", reason(MINUS_XI, " is no limit at ", Math(THETA), " = ",
                                               listing(sorted(no), digits=6), ", outside the stated range ",
                                               _range(rng), " (", where, ")"), evidence=ev)


def _repelling_by_drift(results: dict, model) -> dict[float, tuple]:
    """theta -> why (reason parts), where the drift next to -xi (signal.equilibria_stability, fixed sign) is
    measured repelling and certified repelling: -xi is then no limit of SGA there (the runs' mean drift pushes them
    off it). Only when that check ran the same model (every option but theta and the sign)."""
    eq = results.get("signal.equilibria_stability")
    if eq is None or eq.findings is None:
        return {}
    same = all(getattr(eq.findings.model, k) == getattr(model, k) for k in ("beta", "sigma", "R", "L", "d"))
    return {m.theta: item("at ", *_is(THETA, m.theta, 4), " the drift next to ", MINUS_XI, " (",
                          *_is(RHO, m.probe, 4), ") is ", *pm_or_na(m.mean, m.se, 3), ": ", MINUS_XI,
                          " repels (measured, and certified)")
            for m in eq.findings.minus_xi if same and m.observed == m.certified == "repelling"}


def _narrowed(results: dict, lo: float, hi: float) -> tuple[float, float, tuple]:
    """The bracket [lo, hi] of the runs narrowed by the drift next to -xi (signal.equilibria_stability, fixed sign):
    a theta inside it where -xi is measured (and certified) repelling raises lo, attracting lowers hi. The text is
    reason parts (empty when nothing narrowed)."""
    eq = results.get("signal.equilibria_stability")
    if eq is None or eq.findings is None:
        return lo, hi, ()
    used: list = []
    for m in eq.findings.minus_xi:
        if lo < m.theta < hi and m.observed == m.certified:
            if m.observed == "repelling":
                lo = m.theta
            elif m.observed == "attracting":
                hi = m.theta
            used.append(item(f"{m.observed} at ", number_or_na(m.theta)))
    text = item("the drift next to ", MINUS_XI, " (", CheckRef("signal.equilibria_stability"), ") is measured ",
                *[p for i, u in enumerate(used) for p in ((", ",) if i else ()) + u]) if used else ()
    return lo, hi, text


# ----------------------------------------------------------------------------------------------------------------
# A.any_initialisation
# ----------------------------------------------------------------------------------------------------------------
_POLES = {"+-xi": {-1, 1}, "+xi": {1}, "-xi": {-1}}
_POLE_MATH = {"+-xi": PM_XI, "+xi": PLUS_XI, "-xi": MINUS_XI}     # the targets typed (the keys are validated)


def _single_poles(stated, results: dict) -> list[Perturbation]:
    """'every run settles at +xi' and 'at -xi': false wherever runs reach the other pole."""
    return [Perturbation(f"target {t}", None, stated.restated(stated.stated, target=t))
            for t in ("+xi", "-xi") if t != stated.get("target")]


@claim(id="A.any_initialisation", paper="A", needs=("signal.sign_ambiguity",), uses=("signal.equilibria_stability",),
       reads=words(("limits_are_poles",), tuple(_POLES)),
       perturbations=_single_poles)
def any_initialisation(results: dict, stated) -> ClaimVerdict:
    """holds when every settled run rests at a pole the target allows (and, when signal.equilibria_stability ran,
    no interior point attracts the drift); refuted by a run resting elsewhere (the check passed: the theory lists an
    attractor there too) or by a measured interior attractor."""
    f = results["signal.sign_ambiguity"].findings
    target = stated.get("target", "+-xi")
    allowed, tol = _POLES[target], f.reach_tol
    runs = [(r, r0, x) for r in f.rows for r0, x, s in zip(r.starts, r.limits, r.settled) if s]
    ev = {"signal.sign_ambiguity": {"runs_settled": len(runs), "reach_tol": tol, "target": target}}
    for r, r0, x in runs:
        pole = int(math.copysign(1, x)) if abs(abs(x) - 1) <= tol else None
        if pole not in allowed:
            at = item(*_is(RHO, x, 4), *(() if pole is None else (" (the pole ", PLUS_XI if pole > 0 else MINUS_XI,
                                                                   ")")))
            return ClaimVerdict("refuted", reason("a run settled at ", at, ", not at ", _POLE_MATH[target]),
                                condition=reason(f"sign = {r.sign}, ", *_is(THETA, r.theta), ", ",
                                                 _model(f.model, theta=False, sign=False), ", ", *_is(RHO0, r0),
                                                 ": settled at ", at, " (the check found it where the theory lists an "
                                                 "attractor)"),
                                evidence=ev)
    note: tuple = ()
    eq = results.get("signal.equilibria_stability")
    if eq is not None:
        traps = list(eq.findings.interior_attractors)
        ev["signal.equilibria_stability"] = {"measured_interior_attractors": traps}
        if traps:
            return ClaimVerdict("refuted", reason("the measured drift has an interior attractor"),
                                condition=reason(_model(eq.findings.model), ": attracting interior point near ",
                                                 *_is(RHO, traps[0], 4)), evidence=ev)
        rep = [e.rho for e in eq.findings.equilibria if abs(e.rho) < 1]
        note = item("; the measured drift has no interior attractor",
                    item(" (only repellers, at ", Math(RHO), " = ", listing(rep, digits=3),
                         ": initialisations exactly there, a null set, do not move)") if rep else ())
    if not runs:
        return ClaimVerdict("inconclusive", reason("no run settled"), evidence=ev)
    thetas = sorted({r.theta for r, _, _ in runs})
    signs = sorted({r.sign for r, _, _ in runs})
    starts = sorted({r0 for _, r0, _ in runs})
    return ClaimVerdict("holds", reason("every one of ", Number(len(runs)), " settled SGA runs (starts ",
                                        listing(starts, digits=6), f"; {', '.join(signs)} sign; ", Math(THETA), " = ",
                                        listing(thetas, digits=6), ") rests within ", number_or_na(tol, 6), " of ",
                                        _POLE_MATH[target], note), evidence=ev)
