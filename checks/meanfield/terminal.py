"""Paper B, claim 4 / Conjecture 1: the terminal phase at finite beta, derived from the cluster field and compared
with the particle simulation.

Derived (attnverify.theory.meanfield.terminal, the theory the check receives): a tight cluster of tokens (width
<< beta^{-1/2}, the other clusters' softmax weights negligible) moves by the cluster field g(u) = P_perp_u V u, the
linear flow of V seen on the sphere.  From V's real Schur form: its attractor is V's dominant invariant subspace S,
approached at the rate r = Re lambda_1 - Re lambda_next; inside S a real dominant eigenvalue leaves the cluster at
rest, a complex pair turns it around the plane S at the rate omega = |Im lambda_1|; a cluster on a V-invariant E
leaves it at the escape rate Re lambda_1 - max Re spectrum(V|_E).

Measured (attnverify.numerics.meanfield.particles, .clusters, .cluster_motion): the tokens at t_max are grouped into
clusters; each cluster's centre c_k(t), width w_k(t) and the relative softmax weight eps_k(t) it gives every token
outside it are tracked back in time.  At the *tight, isolated* times (beta w_k <= tightness and eps_k <= tightness:
where the cluster field holds to that relative accuracy) the check compares, each comparison only where the outside
tokens cannot account for a tenth of its tolerance (a rate: 3 eps |V| (2 beta |B| + 1) against the rate, since the
weight's gradient carries beta |B|, numerics.cluster_motion.rate_coupling; a step: 2 eps |V| dt against the step)

1. approach: the decay rate of the centre's coordinates transverse to S inside the fit window (a fixed S: the
   slowest rate of the linear map fitted to them, which no faster mode biases; a rotation: the slope of the log
   distance over one measured turn, which cancels the periodic modulation of an oblique plane) against r;
2. rotation (complex pair): 2 pi over the measured time of one full turn of c_k inside S, against omega;
3. escape (E V-invariant, S not in E): the growth rate of the coordinates transverse to E while a tight cluster
   sits on E, against the derived escape rate;
4. transport: the measured step of the centre over one output time against the cluster field's flow
   e^{dt V} c / |e^{dt V} c| from the same centre (where the width cannot account for the tolerance);
5. position: the tight clusters end on S (within the window's top).

Decided disagreements besides those: a tight cluster's distance to S that levels off inside the window; a tight
cluster that ends the run off S without approaching it at the derived rate, or rests off S at a point the
derived field attracts, or at an unstable one (an eigenvector off S) beyond the time the derived escape rate needs
to lift a round-off offset 1e-16 to the window's bottom.  The check fails only on those: our derivation and our
simulation disagree.  What the paper states is not judged here: whether the tokens switch, when, and where they
end are *findings* (:class:`attnverify.checks.meanfield.terminal_findings.TerminalFindings`) for the claims
(B.conjecture1 in claims_terminal, B.log_beta_time_scale).  A model with nothing compared, or a comparison whose
uncertainty (window halves, refinement samples) exceeds a tenth of its tolerance, is unresolved.  The derived side
and the comparisons of one model are in :mod:`attnverify.checks.meanfield._cluster_comparison`.

Extra model cases (``cases``): ``rotating`` (d = 3, V with the complex dominant pair 2 +- i and 1, V non-normal,
V B^T symmetric with a gap, dim E = 1) and ``oblique`` (d = 3, V non-symmetric with real eigenvalues 2, 1, 1/2,
dim E = 2), each with fixed rational matrices, run beside the main model (betas 10, 31.6, 100, 400 particles,
t_max 30; their refinement samples follow the same resolution rule as the main run's).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, Reason
from attnverify.checks.registry import check
from attnverify.checks.meanfield._model import (AUTO, KERNEL_PARAM, MODEL_PARAMS, Resolution, budget_param,
                                                choose_resolution, fixed_resolution, floor_param, model_matrices,
                                                n_particles_param, validate_betas, validate_model)
from attnverify.checks.meanfield._cluster_comparison import Derived, assess, decide, derive
from attnverify.numerics.kernel import dense_moments
from attnverify.numerics.meanfield.cluster_motion import spectral_time_scales
from attnverify.numerics.meanfield.particles import resolving_step, simulate
from attnverify.numerics.meanfield.simulators import NUMERICS
from attnverify.numerics.meanfield.sphere import sample
from attnverify.theory.meanfield import THEORY, value_eigenspace

__all__ = ["trajectory", "CASES", "run_horizon", "settle", "terminal_phase"]


def _case(P: list, D: list, A: list) -> dict:
    """V = P D P^{-1}, B = A V^{-T} (so V B^T = A, symmetric), Q = I, K = B: exact rationals rounded once."""
    import sympy as sp

    Pm, Dm, Am = (sp.Matrix(m).applyfunc(sp.nsimplify) for m in (P, D, A))
    V = Pm * Dm * Pm.inv()
    B = Am * V.inv().T
    f = (lambda M: np.array(M.tolist(), dtype=float))
    return {"d": 3, "Q": np.eye(3), "K": f(B), "V": f(V)}


_P = [[1, 0.5, 0], [0, 1, 0.5], [0.5, 0, 1]]
CASES = {
    # V = P [[2, -1, 0], [1, 2, 0], [0, 0, 1]] P^{-1}: eigenvalues 2 +- i, 1 (non-normal); V B^T = A, eigenvalues
    # (5 +- sqrt 5)/2, 1: dim E = 1, E not V-invariant; B's symmetric part is positive definite
    "rotating": _case(_P, [[2, -1, 0], [1, 2, 0], [0, 0, 1]], [[3, 1, 0], [1, 2, 0], [0, 0, 1]]),
    # V = P diag(2, 1, 1/2) P^{-1} (an oblique dominant eigenvector P e1); V B^T = 3 I - 2 n n^T, n = (2, 1, 2)/3:
    # eigenvalues 3, 3, 1, dim E = 2, and S = span(P e1) does not lie in E
    "oblique": _case(_P, [[2, 0, 0], [0, 1, 0], [0, 0, 0.5]],
                     (3 * np.eye(3) - 2 * np.outer([2, 1, 2], [2, 1, 2]) / 9).tolist()),
}
# the extra cases' own settings, whatever the profile.  They are not held to the resolution rule: they are read for
# the motion of their clusters and for where the tokens end, which the cluster field describes for any N, not for
# the switch times that describe mu_t (main model only).  More particles do not add evidence there: at N = 3549
# (the rule at beta = 100) the rotating case ends in two clusters that meet every half turn (relative softmax weight
# up to e^-9), and no approach rate or transport step could be compared (measured); at N = 400 it ends in one.
CASE_SETTINGS = {"betas": (10.0, 31.6, 100.0), "n_particles": 400, "t_max": AUTO, "horizon": 30.0, "n_times": 121}


# ----------------------------------------------------------------------------------------------
# the numeric side (tasks and measurements; no closed form enters)
# ----------------------------------------------------------------------------------------------
def trajectory(X0: np.ndarray, Q, K, V, beta: float, times: np.ndarray, rtol: float,
               kernel: str = "dense", simulate=simulate, moments=dense_moments,
               max_step: float | None = None) -> np.ndarray:
    """Particle positions at the output times (task for ctx.map), by ``simulate`` with the softmax average
    ``moments`` (the check's ``ctx.numerics``), its steps at most ``max_step``."""
    return simulate(X0, Q, K, V, beta, times, rtol=rtol, atol=rtol * 1e-2, kernel=kernel, moments=moments,
                    max_step=max_step)


def _models(p: dict) -> list[tuple[str, dict]]:
    names = [c.strip() for c in p["cases"].split(",") if c.strip()]
    return [("main", p)] + [(n, {**p, **CASES[n], **CASE_SETTINGS}) for n in names]


MAX_STRETCH = 20.0    # a chosen t_max is at most 20 horizons (rates down to 1/20 of the default model's)
# output times per turn of a rotating S (at least): the period of a turn is read from a cubic spline of the time
# against the angle, whose error grows with how unevenly an oblique plane turns; at 25 per turn a random d = 3
# model's rotation rate came out 4.1e-5 high at every beta (uncertainty 1.7e-5), at 100 per turn within 1.6e-7
TURN_SAMPLES = 100
# output times across the fit window (at least): the distance to S crosses [lo, hi] in ln(hi / lo) / r time units;
# with the default 121 output times over 30 a model with r = 57.4 crossed it between two outputs and its approach
# rate was read from a later stretch of the record (measured -2.5 against 57.4); the rate fit needs >= 6 samples
WINDOW_SAMPLES = 12
#: the metric: each compared rate's relative error, in units of its tolerance (LaTeX: words in the maths)
METRIC = Reason(("max over models, betas and compared rates (approach, rotation, escape) of ",
                 Math(r"|\mathrm{measured} - \mathrm{derived}| / \mathrm{derived}"),
                 ", in units of the rate's tolerance"))
#: the plots' labels: the subspaces S and E, the masses q_S and q_E on them, the time t, beta, and the distance
#: ||(I - P_S) c_k|| of a cluster centre c_k to S (LaTeX: a matrix acting on a vector)
S_MATH, E_MATH, Q_MATH, T_MATH = (Math(sp.Symbol(x)) for x in ("S", "E", "q", "t"))
Q_S, Q_E, BETA = Math(sp.Symbol("q_S")), Math(sp.Symbol("q_E")), Math(sp.Symbol("beta"))
DISTANCE_TO_S = Math(r"\|(I - P_{S})\, c_{k}\|")


def run_horizon(q: dict, r: float, omega: float) -> tuple[float, str]:
    """(t_max, sentence): the given t_max, or horizon / min(1, r, omega) from the approach rate r (and the rotation
    rate omega of a complex pair) of V's spectrum in floating point (numerics.meanfield.cluster_motion.
    spectral_time_scales: the run is sized from the model, never from the closed form it tests), at most
    MAX_STRETCH horizons.  The default models have r = omega = 1:
    their t_max is the horizon (30), over which the distance to S falls from 1 through the fit window [1e-9, 1e-5]
    (ln(1e9) / r = 21 time units) after the clusters form; a model with r = 0.1 needs ten times as long.  A faster
    model keeps the horizon: its clusters form on the time scale of V B^T's spectrum, not of r (a model with r = 94
    and V B^T's eigenvalues 2, 2, 1 had formed none by t_max = 30 / 20).  A run too short for its clusters to reach
    the window leaves nothing compared: unresolved, naming t_max."""
    if q["t_max"] != AUTO:
        return float(q["t_max"]), f"t_max = {q['t_max']:g} as given"
    rates = {"r": r} | ({"omega": omega} if omega > 0 else {})
    stretch = min(1.0 / min(1.0, *rates.values()), MAX_STRETCH)
    t = float(f"{q['horizon'] * stretch:.4g}")
    return t, (f"t_max = {t:g} chosen (horizon {q['horizon']:g} / min(1, "
               + ", ".join(f"{k} = {v:.4g}" for k, v in rates.items()) + ")"
               + (f", capped at {MAX_STRETCH:g} horizons" if stretch == MAX_STRETCH else "") + ")")


def settle(name: str, q: dict, scales: tuple[float, float] | None = None) -> tuple[dict, Resolution, str]:
    """One model's run settings: N and the betas by the resolution rule (attnverify.checks.meanfield._model.
    choose_resolution; an extra case's fixed N, stated with its particles per window), t_max by
    :func:`run_horizon` and the output grid from the time scales (r, omega) of V's spectrum (``scales``; default:
    spectral_time_scales of the model's V); with the sentences that say so."""
    B, V = model_matrices(q)
    r, omega = spectral_time_scales(V) if scales is None else scales
    res = (choose_resolution(B, q["betas"], q["n_particles"], q["min_per_window"], q["particle_budget"],
                             q["min_particles"]) if name == "main" else
           fixed_resolution(B, q["betas"], q["n_particles"], q["min_per_window"],
                            "fixed for this case, not held to the rule: it is read for the clusters' motion and where "
                            "the tokens end, not for the switch times of mu_t"))
    t_max, t_text = run_horizon(q, r, omega)
    n_times = q["n_times"]
    lo, hi = sorted(q["axis_window"])
    if r > 0 and t_max * WINDOW_SAMPLES * r / np.log(hi / lo) + 1 > n_times:
        n_times = int(np.ceil(t_max * WINDOW_SAMPLES * r / np.log(hi / lo))) + 1
        t_text += f"; {n_times} output times ({WINDOW_SAMPLES} across the fit window at r = {r:.4g})"
    if omega > 0:
        turns = t_max * omega / (2 * np.pi)
        if turns * TURN_SAMPLES + 1 > n_times:
            n_times = int(np.ceil(turns * TURN_SAMPLES)) + 1
            t_text += f"; {n_times} output times ({TURN_SAMPLES} per turn)"
    return {**q, "n_particles": res.n_particles, "betas": res.betas, "t_max": t_max, "n_times": n_times}, res, t_text


def _validate(p: dict) -> None:
    validate_model(p)
    unknown = [c.strip() for c in p["cases"].split(",") if c.strip() and c.strip() not in CASES]
    if unknown:
        raise ValueError(f"cases: unknown case {unknown[0]!r} (known: {', '.join(CASES)})")
    value_eigenspace(np.asarray(p["V"], float))          # ValueError: no gap in real part, or not covered
    choose_resolution(model_matrices(p)[0], validate_betas(p["betas"], 2), p["n_particles"], p["min_per_window"],
                      p["particle_budget"], p["min_particles"])          # ValueError: a given N breaks the rule
    lo, hi = sorted(p["axis_window"])
    if not lo < hi:
        raise ValueError("axis_window must be two increasing values (lo, hi)")


@check(
    id="meanfield.terminal_phase",
    compares="Conjecture 1 (terminal phase at finite beta): tight clusters of tokens move by the cluster field "
             "P_perp_u V u; checked: they approach V's dominant invariant subspace at the derived rate (gap in real "
             "part), turn in it at the derived rate |Im lambda_1| for a complex pair, and leave a V-invariant E at the "
             "derived escape rate. Where the tokens end, and when they switch, are findings for the claims.",
    source="Paper B, claim 4 (Conjecture 1)",
    params=[*MODEL_PARAMS,
            Param("betas", "floats", (10.0, 31.6, 100.0), "inverse temperatures (increasing; at beta = 316 with "
                  "N = 400 and t_max = 30 the axis distance does not traverse the fit window after the late switch, "
                  "and its fit moves by up to 9e-4 between window halves: a 20-seed sweep failed 6 seeds there)",
                  low=0.0, low_open=True),
            n_particles_param(" (the same rule for the N/2 refinement samples decides the betas where they "
                              "enter the precision test)"),
            budget_param(2000),
            floor_param(400),
            Param("min_per_window", float, 3.0, "required particles per softmax window at the largest beta",
                  low=0.0, low_open=True),
            Param("n_refine", int, 2, "independent samples of N/2 particles (refinement in N, sample spread)", low=0),
            Param("t_max", float, AUTO, "final time; 0 = chosen: horizon / min(1, r, omega) with r the approach "
                  "rate and omega the rotation rate of V's spectrum (a complex pair), at most 20 horizons, so that a slow "
                  "model's clusters still cross the fit window (ln(hi/lo) / r) and turn as often as the default "
                  "model's", low=0.0),
            Param("horizon", float, 30.0, "final time for a model whose rates r (and omega) are at least 1; a slower "
                  "model's chosen t_max is longer in proportion (t_max = 0)", low=0.0, low_open=True),
            Param("n_times", int, 121, "output times in [0, t_max] (raised to 100 per turn of a rotating S and to 12 "
                  "across the fit window)", low=5),
            Param("level", float, 0.99, "concentration level: q >= level counts as concentrated (findings)",
                  low=0.5, high=1.0, low_open=True, high_open=True),
            Param("meta_level", float, 0.8, "metastable phase: q_E >= meta_level (findings)",
                  low=0.5, high=1.0, low_open=True, high_open=True),
            Param("meta_dwell", float, 1.0, "a metastable phase lasts at least this long with q_E >= meta_level "
                  "(one e-folding time of the default model's escape, 1/(v_1 - v_2) = 1): a shorter visit is a "
                  "transit (findings)", low=0.0),
            Param("axis_window", "floats", (1e-9, 1e-5), "fit window (lo, hi) for the distances to S and to E (above "
                  "1e-5 a faster transverse mode of a d = 3 model still moves the fitted rate by up to 3.5e-5 between "
                  "window halves; the centre's coordinates carry a rounding noise of about 3e-15, the same at rtol "
                  "1e-6 and 1e-10, which at a bottom of 1e-10 moved single-step rates by up to 5e-4 and the window "
                  "halves by 2.6e-5 of a rate 0.115 (d = 3); at 1e-9 by at most 1e-5)", low=1e-14, high=0.5),
            Param("tightness", float, 1e-6, "a cluster is compared only at times with beta w_k <= tightness (its "
                  "width in the softmax's scale) and the relative weight of all tokens outside it <= tightness: there "
                  "the cluster field holds to that relative accuracy (the local rate departs from v_1 - v_2 by "
                  "about 1.4-3 x beta w, so 1e-6 keeps that below rate_tol / 10)", low=0.0, low_open=True),
            Param("rate_tol", float, 1e-4, "relative tolerance of the approach rate", low=0.0, low_open=True),
            Param("rotation_tol", float, 1e-4, "relative tolerance of the rotation rate |Im lambda_1|",
                  low=0.0, low_open=True),
            Param("transport_tol", float, 1e-4, "relative tolerance of one output step of a tight cluster against "
                  "the cluster field's flow (measured worst 1.8e-6 at rtol 1e-6)", low=0.0, low_open=True),
            Param("escape_tol", float, 1e-2, "relative tolerance of the escape rate from a V-invariant E",
                  low=0.0, low_open=True),
            Param("cluster_angle", float, 0.2, "tokens closer than this angle at t_max (radians, chained) form one "
                  "cluster", low=0.0, high=3.0, low_open=True),
            Param("cases", str, "rotating", "extra model cases run beside the given model, comma-separated: "
                  + ", ".join(CASES) + " (empty: none)"),
            KERNEL_PARAM,
            Param("rtol", float, 1e-6, "integrator relative tolerance", low=1e-12, high=1e-2)],
    paper_profile={"kernel": "truncated", "cases": "rotating,oblique",
           "betas": (10.0, 100.0, 1000.0, 5000.0), "min_particles": 2000, "particle_budget": 2000, "horizon": 45.0,
           "n_times": 361},
    validate=_validate,
    formulas=(r'\lambda^{\rm cl}_j', r'r_{\rm axis}'),
    theory=THEORY, numerics=NUMERICS,
)
def terminal_phase(p: dict, ctx: Context) -> Evidence:
    models = _models(p)
    derived = [derive(ctx.theory, *model_matrices(q)) for _, q in models]
    settled = [settle(name, q) for name, q in models]
    models = [(name, q) for (name, _), (q, _, _) in zip(models, settled)]
    chosen = {name: f"{res.text}; {t_text}" for (name, _), (_, res, t_text) in zip(models, settled)}
    tasks, spans, grids = [], [], []
    for name, q in models:
        rng = ctx.rng("particles" if name == "main" else f"particles:{name}")
        N = q["n_particles"]
        samples = [sample(N, q["d"], rng)] + [sample(max(N // 2, 2), q["d"], rng) for _ in range(q["n_refine"])]
        t = np.linspace(0.0, q["t_max"], q["n_times"])
        Q, K, V = (np.asarray(q[m], float) for m in ("Q", "K", "V"))
        start = len(tasks)
        h = resolving_step(V, p["rate_tol"] / 10)
        cap = h if h < t[1] - t[0] else None           # below the output spacing, else the steps are unchanged
        if cap is not None:
            chosen[name] += (f"; steps <= {cap:.3g} (the integrator resolves the decay towards S to rate_tol / 10 "
                             "there: numerics.meanfield.particles.resolving_step)")
        tasks += [(X, Q, K, V, float(b), t, p["rtol"], p["kernel"], ctx.numerics.simulate, ctx.numerics.moments,
                   cap) for X in samples for b in q["betas"]]
        spans.append((start, len(samples), len(q["betas"])))
        grids.append(t)
    trajs = ctx.map(trajectory, tasks)
    outcomes = [assess(ctx.theory, name, q, der, [trajs[s + i * nb:s + (i + 1) * nb] for i in range(ns)], t)
                for (name, q), der, (s, ns, nb), t in zip(models, derived, spans, grids)]
    passed, observed, unresolved, reason = decide(outcomes)
    return _evidence(p, outcomes, derived, passed, observed, unresolved, reason, chosen)


def _evidence(p: dict, outcomes: list[dict], derived: list[Derived], passed: bool, observed: float | None,
              unresolved: Reason | None, reason: str | Reason, chosen: dict[str, str]) -> Evidence:
    from dataclasses import replace

    main = outcomes[0]
    runs = "; ".join(f"{name}: {text}" for name, text in chosen.items())
    findings = replace(main["findings"], extra_cases=tuple(o["findings"] for o in outcomes[1:]))
    t, f = main["t"], main["findings"]

    def summary(o: dict) -> dict:
        g = o["findings"]
        return {"model": g.model, "n_particles": o["n_particles"], "t_max": g.t_max, "structure": g.structure, "motion": g.motion, "dim_E": g.dim_E, "dim_S": g.dim_S,
                "dominant_eigenvalues": [[z.real, z.imag] for z in g.dominant_eigenvalues],
                "approach_rate_derived": g.approach_rate, "rotation_rate_derived": g.rotation_rate,
                "escape_rate_derived": g.escape_rate, "beta": list(g.betas),
                "comparisons": [vars(c) for c in g.comparisons], "dwell_E": list(g.dwell_E),
                "t_meta": list(g.t_meta), "t_switch": list(g.t_switch), "q_S_late_min": list(g.q_S_late),
                "on_E_at_t_max": list(g.on_E_at_t_max), "escape_horizon": list(g.escape_horizon),
                "n_clusters": list(g.n_clusters), "particles_per_softmax_window": list(g.particles_per_window),
                "refinement_resolved": o["resolved"], "nothing_compared_at_beta": o["silent"]}

    fit = f.t_switch_vs_log_beta
    # the reason's builder is not used here: ``reason`` is this function's text of the verdict
    plots = [Plot(title=Reason(("terminal phase (main model): mass on ", S_MATH, " (", Q_S, ", solid) and on ", E_MATH,
                                " (", Q_E, ", dotted)")), xlabel=Reason((T_MATH,)), ylabel=Reason((Q_MATH,)),
                  series=[Series(Reason((Q_S, ", ", BETA, " = ", Number(b, digits=6))), t, r["qS"], style="-")
                          for b, r in zip(f.betas, main["main"])]
                  + [Series(Reason((Q_E, ", ", BETA, " = ", Number(b, digits=6))), t, r["qE"], style=":")
                     for b, r in zip(f.betas, main["main"])])]
    for o in outcomes:
        plots.append(Plot(title=Reason((o["name"], ": distance of each cluster centre to ", S_MATH, " (derived rate ",
                                        Number(o["findings"].approach_rate, digits=4), ")")),
                          xlabel=Reason((T_MATH,)), ylabel=Reason((DISTANCE_TO_S,)), logy=True,
                          series=[Series(Reason((BETA, " = ", Number(b, digits=6), ", cluster ", Number(j))), o["t"],
                                         np.maximum(c["dist_S"], 1e-17), style="-")
                                  for b, r in zip(o["findings"].betas, o["main"]) for j, c in enumerate(r["clusters"])]))
    return Evidence(
        metric=METRIC,
        observed=observed, threshold=1.0, reason=f"{runs}. " + (reason or unresolved or ""), passed=passed,
        unresolved=unresolved,
        comparison="<=",
        analytic={o["name"]: {"approach_rate": d.rates["axis_rate"], "rotation_rate": d.rates["rotation_rate"],
                              "escape_rate": d.escape_rate, "motion": d.rates["motion"]}
                  for o, d in zip(outcomes, derived)},
        numeric={o["name"]: [[c.what, c.beta, c.measured] for c in o["comparisons"]] for o in outcomes},
        uncertainty={o["name"]: [[c.what, c.beta, c.uncertainty] for c in o["comparisons"]] for o in outcomes},
        details={"models": [summary(o) for o in outcomes], "beta": list(f.betas), "t_max": f.t_max,
                 "t_switch": list(f.t_switch),
                 "t_switch_vs_log_beta": ({"slope": fit.slope, "intercept": fit.intercept, "ci95": list(fit.ci95),
                                           "interval": list(fit.interval), "r2": fit.r2} if fit else {}),
                 "switch_definition": f"a metastable phase: q_E >= {p['meta_level']} for at least {p['meta_dwell']} "
                                      "time units (the longest such stretch); t_switch = the first later time q_S "
                                      "crosses 1/2 upwards (q_S < 1/2 at its start)",
                 "n_particles": main["n_particles"],
                 "resolution": chosen, "dimension": p["d"], "tightness": p["tightness"],
                 "integrator": f"DOPRI5(4) + projection, rtol {p['rtol']}, {p['kernel']} kernel"},
        plots=plots, findings=findings)
