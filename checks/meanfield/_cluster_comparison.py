"""Paper B's terminal phase (Conjecture 1) for one model: the derived cluster field against the measured clusters,
for the check meanfield.terminal_phase (terminal.py, which says what is compared and why).

* the derived side (:func:`derive`): E (of V B^T), S (of V), the rates and how E and S sit, from the closed forms
  the check receives;
* the comparisons at one beta (:func:`compare_beta`: the rates, a tight cluster's transport by the cluster field,
  where the clusters end) and the decided disagreements that are not rates;
* one model's assessment (:func:`assess`: every run measured, compared, its findings collected) and the decision
  over every model (:func:`decide`).  No check is defined here."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.meanfield._model import model_matrices
from attnverify.checks.meanfield.terminal_findings import RateComparison, SwitchTimeFit, TerminalFindings
from attnverify.checks.reason import Math, Number, Reason, item, reason
from attnverify.checks.reason_values import joined
from attnverify.checks.stats import linfit
from attnverify.numerics.meanfield.cluster_motion import LATE, departure_factor, measure_run
from attnverify.numerics.meanfield.sphere import particles_per_window
from attnverify.theory.meanfield import subspace_excess

__all__ = ["Derived", "derive", "compare_beta", "assess", "decide", "ROUND_OFF", "STEP_FLOOR"]

ROUND_OFF = 1e-16     # smallest offset from an unstable cluster position that float64 round-off can leave
RATES = ("approach", "rotation", "escape")
# the mathematics of the verdict's text
BETA, S_MATH, T_MAX = Math(sp.Symbol("beta")), Math(sp.Symbol("S")), Math(sp.Symbol("t_max"))
STEP_FLOOR = 1e-4     # transport: predicted steps shorter than this are not compared (integration error ~ rtol)


# ----------------------------------------------------------------------------------------------
# the analytic side
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Derived:
    """The derived terminal phase of one model (attnverify.theory.meanfield)."""

    P_E: np.ndarray
    P_S: np.ndarray
    basis_S: np.ndarray
    rates: dict
    escape_rate: float | None
    structure: str
    dim_E: int
    V: np.ndarray
    B: np.ndarray


def derive(theory, B: np.ndarray, V: np.ndarray) -> Derived:
    """From the closed forms ``theory``: E (V B^T), S (V), the rates, and how E and S sit: ``shared`` when E lies in
    S and S is at rest, ``nested`` when S lies in E, else ``switch`` (subspace inclusions to 1e-9, far above the
    certified projector errors)."""
    spec = theory.spectrum(B, V)
    P_E = spec.P_E
    P_S = theory.value_eigenspace(V)
    rates = theory.terminal_rates(V)
    w, U = np.linalg.eigh(P_S)
    basis = U[:, w > 0.5]
    E_in_S = subspace_excess(P_S, P_E) <= 1e-9
    S_in_E = subspace_excess(P_E, P_S) <= 1e-9
    structure = ("shared" if E_in_S and rates["motion"] == "fixed" else "nested" if S_in_E else "switch")
    esc = theory.escape_rate_from(V, P_E)
    return Derived(P_E, P_S, basis, rates, esc if esc is not None and esc > 0 and not S_in_E else None,
                   structure, spec.dim_E, np.asarray(V, dtype=float), np.asarray(B, dtype=float))


# ----------------------------------------------------------------------------------------------
# comparisons and the decision
# ----------------------------------------------------------------------------------------------
def _status(rel: float, u: float, tol: float) -> str:
    if rel - u > tol:
        return "disagrees"
    if rel > tol:
        return "undecided"
    return "imprecise" if 10 * u > tol else "agrees"


def _compare(what: str, derived: float, beta: float, main: list[tuple], refine: list[list[tuple]],
             tol: float) -> RateComparison | None:
    """The worst cluster's fitted (rate, halves difference, samples) of the main run against ``derived``; the
    uncertainty is the largest halves difference and the largest shift of the refinement samples' worst rate."""
    fits = [f for f in main if np.isfinite(f[0])]
    if not fits or derived == 0:
        return None
    worst = max(fits, key=lambda f: abs(f[0] - derived))
    shifts = [abs(max((f for f in r if np.isfinite(f[0])), key=lambda f: abs(f[0] - derived))[0] - worst[0])
              for r in refine if any(np.isfinite(f[0]) for f in r)]
    u = max([f[1] for f in fits if np.isfinite(f[1])] + shifts + [0.0]) / abs(derived)
    rel = abs(worst[0] - derived) / abs(derived)
    return RateComparison(what, float(beta), float(derived), float(worst[0]), float(rel), float(u), float(tol),
                          int(sum(f[2] for f in fits)), _status(rel, u, tol))


def _transport(theory, der: Derived, beta: float, runs: list[dict], dt: float, p: dict) -> RateComparison | None:
    """The cluster field's flow over one output step, e^{dt V} c / |e^{dt V} c|, against the measured next centre,
    at every pair of consecutive tight, isolated samples: the worst |c(t + dt) - predicted| / |predicted - c(t)|
    over the clusters of every run given (main and resolved refinement samples).

    The centre of a cluster with uniform weights moves exactly by (I - M_k) V m_k (m_k its mean, M_k its second
    moment), which differs from the cluster field by a term of order w |V|: over one step the centre departs from
    the flow by about F w |V|_2 dt, F = WIDTH_ERROR + beta ||B||_2 (numerics.meanfield.cluster_motion.
    departure_factor: the centre's second-order terms, measured up to 14, and the attention's non-uniformity inside
    the cluster, which grows with beta); the tokens outside the cluster pull it at the
    speed numerics.clusters.outside_influence gives, so by about that times dt over a step.  A pair
    is compared only where both terms are below a tenth of the tolerance times the step, and the step is at least
    ``STEP_FLOOR`` (integration error ~ rtol)."""
    worst, n = 0.0, 0
    norm_V = float(np.linalg.norm(der.V, 2))
    depart = departure_factor(beta, der.B)
    for run in runs:
        for c in run["clusters"]:
            i = np.nonzero(c["pairs"])[0]
            if not i.size:
                continue
            pred = theory.cluster_flow(der.V, c["centre"][i], dt)
            step = np.linalg.norm(pred - c["centre"][i], axis=1)
            width = np.maximum(c["width"][i], c["width"][i + 1])
            pull = np.maximum(c["pull"][i], c["pull"][i + 1])
            ok = ((step >= STEP_FLOOR) & (depart * width * norm_V * dt <= p["transport_tol"] / 10 * step)
                  & (pull * dt <= p["transport_tol"] / 10 * step))
            if ok.any():
                err = np.linalg.norm(c["centre"][i + 1][ok] - pred[ok], axis=1) / step[ok]
                worst, n = max(worst, float(err.max())), n + int(ok.sum())
    if n == 0:
        return None
    tol = p["transport_tol"]
    return RateComparison("transport", float(beta), 0.0, worst, worst, 0.0, float(tol), n,
                          "disagrees" if worst > tol else "agrees")


def compare_beta(theory, der: Derived, beta: float, main: dict, refine: list[dict], p: dict,
                 dt: float) -> tuple[list, list[str]]:
    """The comparisons at one beta and the decided disagreements that are not rates (a plateau near S, a cluster
    held on E beyond the derived escape from round-off); ``theory`` gives the cluster field's flow and escape rates at
    the measured centres."""
    rates, problems, out = der.rates, [], []
    pick = (lambda run, key: [c[key] for c in run["clusters"] if key in c])
    out.append(_compare("approach", rates["axis_rate"], beta, pick(main, "approach"),
                        [pick(r, "approach") for r in refine], p["rate_tol"]))
    if rates["motion"] == "rotation":
        out.append(_compare("rotation", rates["rotation_rate"], beta, pick(main, "rotation"),
                            [pick(r, "rotation") for r in refine], p["rotation_tol"]))
    out.append(_transport(theory, der, beta, [main] + refine, dt, p))
    if der.escape_rate is not None:
        out.append(_compare("escape", der.escape_rate, beta, pick(main, "escape"),
                            [pick(r, "escape") for r in refine], p["escape_tol"]))
        lo = min(p["axis_window"])
        span = np.log(lo / ROUND_OFF) / der.escape_rate
        held = [c["below_E"] for c in main["clusters"] if c["below_E"][0] > span]
        if held:
            longest = max(held)
            problems.append(f"at beta = {beta:g} a tight cluster stays within {lo:g} of E for {longest[0]:.3g} time "
                            f"units from t = {longest[1]:.3g}, where the derived escape rate {der.escape_rate:.4g} "
                            f"lifts a round-off offset {ROUND_OFF:g} to {lo:g} within {span:.3g}")
    flat = [c["plateau_at"] for c in main["clusters"] if c["plateau"]]
    if flat:
        problems.append(f"at beta = {beta:g} the distance of {len(flat)} tight cluster(s) to S levels off at "
                        + ", ".join(f"{x:.2g}" for x in flat) + " inside the fit window: they do not approach the "
                        "derived S")
    problems += _off_S(theory, der, beta, main, p)
    hi = max(p["axis_window"])
    ends = [c["dist_S"][-1] for c in main["clusters"] if c["tight"][-1] and c["dist_S"][-1] <= hi]
    if ends:         # where the derived flow ends: on S (within the window's top; farther, _off_S decides)
        out.append(RateComparison("position", float(beta), 0.0, float(max(ends)), float(max(ends)), 0.0, float(hi),
                                  len(ends), "agrees"))
    return [c for c in out if c is not None], problems


def _off_S(theory, der: Derived, beta: float, run: dict, p: dict) -> list[str]:
    """Tight clusters that end the run off S without approaching it.  The derived cluster field brings every tight
    cluster to S at the rate r, except one resting at an unstable fixed point (an eigenvector u of V off S, escape
    rate > 0 from the SymPy Jacobian at u) for less time than that rate needs to lift a round-off offset to the
    window's bottom.  A cluster whose distance to S at t_max exceeds the window's top and has not fallen by
    e^{-r T / 2} over its tight time T in the late window disagrees with it, as does one that rests (steps below
    STEP_FLOOR) at an attracting point off S or at an unstable one beyond that horizon (one line per beta)."""
    lo, hi = sorted(p["axis_window"])
    r, t = der.rates["axis_rate"], run["t"]
    moving, resting = [], []
    for c in run["clusters"]:
        late = np.nonzero(c["tight"] & (t >= t[-1] * (1 - LATE)))[0]
        if late.size < 2 or not c["tight"][-1]:
            continue
        d0, d1, span = c["dist_S"][late[0]], c["dist_S"][-1], t[-1] - t[late[0]]
        if d1 <= hi or d1 < d0 * np.exp(-r * span / 2):
            continue
        steps = np.linalg.norm(np.diff(c["centre"], axis=0), axis=1)
        if steps[-1] >= STEP_FLOOR:
            moving.append((d1, d1 / d0, span))
            continue
        k = len(steps) - 1
        while k >= 0 and steps[k] < STEP_FLOOR and c["tight"][k]:
            k -= 1
        rest, esc = float(t[-1] - t[k + 1]), theory.escape_rate(der.V, c["centre"][-1])
        horizon = np.log(lo / ROUND_OFF) / esc if esc > 0 else 0.0
        if rest > horizon:
            resting.append((rest, d1, esc, horizon))
    out = []
    if moving:
        d1, ratio, span = max(moving)
        out.append(f"at beta = {beta:g} {len(moving)} tight cluster(s) keep moving off S without approaching it (at "
                   f"distance {d1:.3g}: x {ratio:.3g} over the last {span:.3g} time units, where the derived rate "
                   f"r = {r:.4g} gives x {np.exp(-r * span):.3g})")
    if resting:
        rest, d1, esc, horizon = max(resting)
        out.append(f"at beta = {beta:g} {len(resting)} tight cluster(s) rest off S (up to {rest:.3g} time units at "
                   f"distance {d1:.3g}), " + (f"at a point the derived cluster field attracts (escape rate {esc:.3g})"
                                              if esc <= 0 else f"longer than the derived escape rate {esc:.3g} needs "
                                              f"({horizon:.3g}) to lift a round-off offset {ROUND_OFF:g} to {lo:g}"))
    return out


# ----------------------------------------------------------------------------------------------
# one model: measurements, comparisons, findings
# ----------------------------------------------------------------------------------------------
def _switch_fit(betas: np.ndarray, main: list[dict], refine: list[list[dict]]) -> SwitchTimeFit | None:
    ts = np.array([r["t_switch"] for r in main])
    ok = np.isfinite(ts)
    if ok.sum() < 3:
        return None
    fit = linfit(np.log(betas[ok]), ts[ok])
    others = [linfit(np.log(betas[ok]), tsi[ok])["slope"] for tsi in
              (np.array([r["t_switch"] for r in rs]) for rs in refine) if np.all(np.isfinite(tsi[ok]))]
    u = float(max((abs(o - fit["slope"]) for o in others), default=0.0))
    lo, hi = fit["ci95"]
    return SwitchTimeFit(fit["slope"], fit["intercept"], (float(lo), float(hi)), (float(lo - u), float(hi + u)),
                         fit["r2"], u, int(ok.sum()))


def _horizon(der: Derived, run: dict, hi: float) -> float | None:
    """When a tight cluster first on E (within ``hi``) must have left it: its first such time plus the derived
    escape from a round-off offset to ``hi``."""
    if der.escape_rate is None:
        return None
    first = [c["first_tight_on_E"] for c in run["clusters"] if c["first_tight_on_E"] is not None]
    return float(min(first) + np.log(hi / ROUND_OFF) / der.escape_rate) if first else None


def assess(theory, name: str, q: dict, der: Derived, runs: list[list[np.ndarray]], t: np.ndarray) -> dict:
    """Measure every run of one model (runs[sample][beta]), compare with ``der`` (and the closed forms ``theory``
    at the measured centres), and collect the findings."""
    B, V = model_matrices(q)
    betas = np.array(q["betas"], dtype=float)
    rot = der.rates["motion"] == "rotation" and der.basis_S.shape[1] == 2     # a turn needs a plane
    scales = {"approach": float(der.rates["axis_rate"]),
              "rotation": float(der.rates["rotation_rate"]) if rot else np.inf,
              "escape": der.escape_rate if der.escape_rate is not None else np.inf}
    meas = [[measure_run(X, t, float(b), B, V, der.P_E, der.P_S, der.basis_S, q, rot, scales)
             for X, b in zip(rs, betas)] for rs in runs]
    main, N = meas[0], q["n_particles"]
    # the refinement samples (N/2) enter the precision test only at the betas where they meet the same resolution
    # rule as the main run: an under-resolved sample measures its own discretisation, not the main run's
    resolved = [particles_per_window(max(N // 2, 2), B, float(b)) >= q["min_per_window"] for b in betas]
    comps, problems, silent = [], [], []
    for k, b in enumerate(betas):
        c, pr = compare_beta(theory, der, float(b), main[k], [m[k] for m in meas[1:] if resolved[k]], q,
                             float(t[1] - t[0]))
        comps += c
        problems += pr
        if not c and not pr:
            silent.append(float(b))
    hi = max(q["axis_window"])
    rotation_measured = []
    for k in range(len(betas)):
        rs = [c["rotation"][0] for c in main[k]["clusters"] if "rotation" in c and np.isfinite(c["rotation"][0])]
        rotation_measured.append(float(np.mean(rs)) if rs else None)
    late = t >= t[-1] * (1 - LATE)
    nan_none = (lambda x: None if not np.isfinite(x) else float(x))
    findings = TerminalFindings(
        model=name, betas=tuple(float(b) for b in betas), B=B, V=V, structure=der.structure,
        motion=der.rates["motion"], dominant_eigenvalues=tuple(complex(*z) for z in der.rates["dominant_eigenvalues"]),
        dim_E=der.dim_E, dim_S=int(der.rates["dim_S"]), P_E=der.P_E, P_S=der.P_S,
        approach_rate=float(der.rates["axis_rate"]), rotation_rate=float(der.rates["rotation_rate"]),
        escape_rate=der.escape_rate, comparisons=tuple(comps), rotation_rate_measured=tuple(rotation_measured),
        t_max=float(t[-1]), level=float(q["level"]), meta_level=float(q["meta_level"]),
        meta_dwell=float(q["meta_dwell"]), dwell_E=tuple(r["dwell"] for r in main),
        metastable=tuple(bool(r["dwell"] >= q["meta_dwell"]) for r in main),
        t_meta=tuple(nan_none(r["t_meta"]) for r in main),
        t_switch=tuple(nan_none(r["t_switch"]) if der.structure == "switch" else None for r in main),
        t_switch_vs_log_beta=_switch_fit(betas, main, meas[1:]) if der.structure == "switch" else None,
        on_E_at_t_max=tuple(bool(r["qE"][-1] >= q["level"]) for r in main),
        escape_horizon=tuple(_horizon(der, r, hi) for r in main), late_window=(float(t[late][0]), float(t[-1])),
        q_S_late=tuple(float(r["qS"][late].min()) for r in main),
        late_moments=tuple(np.stack([m[k]["M_late"] for m in meas]) for k in range(len(betas))),
        n_clusters=tuple(r["n_clusters"] for r in main),
        particles_per_window=tuple(particles_per_window(N, B, float(b)) for b in betas))
    return {"name": name, "findings": findings, "comparisons": comps, "problems": problems, "silent": silent,
            "main": main, "t": t, "resolved": resolved, "n_particles": N}


def _label(o: dict, c: RateComparison) -> tuple:
    """The parts naming a comparison: its model, what it compares and at which beta."""
    return item(o["name"], ": the ", c.what, " rate " if c.what in RATES else " ", "at ", BETA, " = ",
                Number(c.beta, digits=6))


def _text(c: RateComparison) -> tuple:
    """The parts of a comparison's figures: measured against derived, or the transport or position error."""
    if c.what not in ("transport", "position"):
        return item("measured ", Number(c.measured, digits=8), " against the derived ", Number(c.derived, digits=8),
                    " (relative error ", Number(c.relative_error, digits=3), ", uncertainty ",
                    Number(c.uncertainty, digits=2), ", tolerance ", Number(c.tolerance, digits=6), ")")
    if c.what == "transport":
        return item("a tight cluster's step misses the cluster field's flow by ", Number(c.relative_error, digits=3),
                    " of its length (tolerance ", Number(c.tolerance, digits=6), ")")
    return item("a tight cluster ends ", Number(c.measured, digits=3), " from ", S_MATH, " (window top ",
                Number(c.tolerance, digits=6), ")")


def decide(outcomes: list[dict]) -> tuple[bool, float | None, Reason | None, str | Reason]:
    """(passed, observed, unresolved, reason) over every model: a disagreement or a decided problem fails; a model
    with nothing compared, a comparison within its uncertainty of the tolerance, or one whose uncertainty exceeds
    a tenth of its tolerance is unresolved."""
    comps = [c for o in outcomes for c in o["comparisons"]]
    problems = [item(f"{o['name']}: {pr}") for o in outcomes for pr in o["problems"]]
    observed = max((c.relative_error / c.tolerance for c in comps), default=None)
    for o in outcomes:
        for c in o["comparisons"]:
            if c.status == "disagrees":
                problems.append(item(*_label(o, c), ": ", *_text(c)))
    if problems:
        return False, observed, None, reason(*joined(problems, "; "))
    empty = [o["name"] for o in outcomes if not o["comparisons"]]
    if empty:
        return False, observed, reason("no tight, isolated cluster reached the fit windows by ", T_MAX, " in the "
                                       "model(s) " + ", ".join(empty) + ": nothing to compare (raise ", T_MAX, ")"), ""
    near = [item(*_label(o, c), " (", *_text(c), ")") for o in outcomes for c in o["comparisons"]
            if c.status == "undecided"]
    if near:
        return False, observed, reason("a rate error exceeds its tolerance by less than its uncertainty:",
                                       items=[*near, item("raise n_particles or ", T_MAX)]), ""
    loose = [item(*_label(o, c), " (uncertainty ", Number(c.uncertainty, digits=2), ", tolerance ",
                  Number(c.tolerance, digits=6), ")") for o in outcomes for c in o["comparisons"]
             if c.status == "imprecise"]
    if loose:
        return False, observed, reason("a fitted rate is uncertain by more than a tenth of its tolerance:",
                                       items=[*loose, item("raise n_particles or ", T_MAX)]), ""
    parts = []
    for o in outcomes:
        kinds = sorted({c.what for c in o["comparisons"]})
        worst = {w: max(c.relative_error for c in o["comparisons"] if c.what == w) for w in kinds}
        note = (f"; nothing to compare at beta = {', '.join(f'{b:g}' for b in o['silent'])}" if o["silent"] else "")
        if kinds == ["position"]:
            note += ("; no rate or step compared: no cluster was tight and isolated enough inside the fit window "
                     "(positions only)")
        parts.append(f"{o['name']} ({o['findings'].motion}, S of dim {o['findings'].dim_S}): "
                     + ", ".join(f"{w} rate within {worst[w]:.1e}" if w in RATES else
                                 f"transport within {worst[w]:.1e}" if w == "transport" else
                                 f"clusters end within {worst[w]:.1e} of S" for w in kinds)
                     + note)
    return True, observed, None, ("the tight clusters move as the derived cluster field predicts: " + "; ".join(parts)
                                  + " (relative errors; window halves and resolved refinement samples move each by "
                                  "at most a tenth of its tolerance)")
