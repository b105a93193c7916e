"""Paper A, claim 5: independent SGA runs against the second-order mean path of the ODE, up to the final alignment;
and the final alignment of every schedule length the runs pass through (the paper's experiment, 30 runs, R = 500,
L - R = 10000, theta = 0.25, reports a mean final |rho|; d and the schedule are not given).

Numeric side (the simulators the check receives as ``ctx.numerics``): independent projected-SGA runs
(attnverify.numerics.signal.sga.projected_sga, full d-dim tokens, batched over runs), q_0 uniform on the sphere,
eta_k = a/(k + b); and the ingredients of the O(eta) terms, S(rho) = Var<xi, g> and G(rho) = E||g||^2 on a rho grid
(attnverify.numerics.signal.tangent_field.tangent_gradient_moments). d and the schedule are parameters here and are
reported.
Analytic side: each run's mean path from its own state by the second-order recursion of signal.ode_tracks_sga
(attnverify.numerics.signal.reduced_ode.second_order_mean: the ODE rho' = F(rho) in t_k = sum eta_j plus its O(eta) terms,
the normalisation drift -(eta^2/2) rho G and the noise term F'' V / 2, with V the variance recursion), F the closed form
with the finite-size term (the reduced_field of the theory the check receives as ``ctx.theory``). The expansion in eta needs eta_k^2 max G <= 0.05: each run is predicted from its own rho at
the first record past that step (rho_0 at the quick defaults; SGA is Markov in rho). Its end point is the SGA noise
floor: near rho = 1, u = 1 - rho has the quasi-stationary mean u* = eta G(1) / (4 J'(1)) (J'(1) = -F'(1)/2), set by
the final step size and the noise/drift ratio.
Decision (family-wise rate z_level, Bonferroni): (i) the fitted scale of F along the paths (each run's deviation from
its prediction projected on the prediction's sensitivity to F -> s F; Student t over runs) and (ii) the mean
deviation from the prediction at every recorded time, including the final floor (Student t, Bonferroni over times).
Both see a constant bias of F: a wrong scale moves the rise of every path and the floor (u* ~ 1/J'(1)).
The symmetric model's F is odd: each run is mirrored to rho_0 >= 0.

Findings (:class:`AlignmentFindings`, read by the claim A.reported_alignment): the state after K steps of the schedule
eta_k = a/(k + b) is the final state of the K-step protocol with that schedule, so every recorded step K is a protocol
that was run: its final step a/(K - 1 + b), the mean final |rho| over the runs with its standard error and spread,
and the derived (predicted) mean where the expansion applies. The check never reads the paper's figure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from scipy.stats import t as student_t

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series, Unresolved
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.reason_values import step_schedule
from attnverify.checks.registry import check
from attnverify.checks.signal._model import (MAX_STEP_ENERGY, MODEL_PARAMS, field_function, model_args, model_of,
                                             validate_model)
from attnverify.numerics.signal.reduced_ode import S_DIFF, second_order_mean
from attnverify.numerics.signal.model import SignalModel
from attnverify.numerics.signal.sga import step_sizes
from attnverify.numerics.signal.simulators import NUMERICS, SignalNumerics
from attnverify.theory.signal import THEORY

N_TASKS = 4
# the mathematics of the reason (attnverify.checks.reason: symbols in SymPy's naming convention)
F_MATH, T_STAR, RHO_0 = Math(sp.Symbol("F")), Math(sp.Symbol("t^*")), Math(sp.Symbol("rho_0"))
BETA_THETA, C_STEP = Math(sp.Symbol("beta") * sp.Symbol("theta")), sp.Symbol("c")
#: the largest step the second-order expansion takes: sqrt(c / max E|g|^2), c = MAX_STEP_ENERGY
STEP_LIMIT = Math(sp.sqrt(C_STEP / sp.Symbol(r"\max \mathbb{E}|g|^{2}")))
#: the statistic: max(|z_scale| / t*_scale, max_t |z_t| / t*_time), each z-score over its threshold
RATIO = Math(sp.Function("max")(sp.Abs(sp.Symbol("z_scale")) / sp.Symbol("t_scale^*"),
                                sp.Function(r"\max_{t}")(sp.Abs(sp.Symbol("z_t"))) / sp.Symbol("t_time^*")))
# the plots' labels: the overlap rho, |rho|, the ODE's time t = sum of the steps (no sum without bounds in SymPy), the
# model's sizes and theta
RHO, ABS_RHO, TIME_AS_STEPS = Math(sp.Symbol("rho")), Math(sp.Abs(sp.Symbol("rho"))), Math(r"t = \sum_{j} \eta_{j}")
R_MATH, L_MATH, D_MATH, THETA = (Math(sp.Symbol(x)) for x in ("R", "L", "d", "theta"))
GRID = np.concatenate([np.linspace(-1.0, 0.8, 10), [0.9, 0.95, 0.98, 0.99, 0.995, 1.0]])


def validate_schedule(p: dict) -> None:
    """The recorded path needs at least 3 records after the steps where the second-order expansion starts to hold,
    so a run needs at least 3 records and at least one step per record (n_steps = 1 ended in a check ERROR)."""
    if p["n_records"] < 3:
        raise ValueError(f"n_records = {p['n_records']}: the comparison needs at least 3 recorded points per run")
    if p["n_steps"] < p["n_records"]:
        raise ValueError(f"n_steps = {p['n_steps']} < n_records = {p['n_records']}: a run must take at least one step "
                         "per recorded point")


# ----------------------------------------------------------------------------------------------------------------
# findings
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProtocolPoint:
    """The schedule stopped after ``steps`` steps (final step ``eta_final``): the mean final |rho| over the runs
    (``mean_abs`` +- ``se_abs``, spread ``sd_abs``) and the derived mean |rho| of the second-order mean path
    (``predicted_abs``; None where the expansion in eta does not apply)."""

    steps: int
    eta_final: float
    mean_abs: float
    se_abs: float
    sd_abs: float
    predicted_abs: float | None


@dataclass(frozen=True)
class AlignmentFindings:
    """What ``signal.alignment_30_runs`` found, for the claims: the model point and the runs (their number, the
    schedule eta_k = a/(k + b) and its length), the protocol points (one per recorded step, in order of steps),
    the fitted scale of F along the paths, and the floor coefficient G(1) / (4 J'(1)) (u* = eta times it; J' derived,
    G measured) by which the claims extrapolate, never decide."""

    model: SignalModel
    n_runs: int
    a: float
    b: float
    n_steps: int
    points: tuple[ProtocolPoint, ...]
    fitted_scale: float
    fitted_scale_se: float
    floor_per_unit_step: float

    @property
    def final(self) -> ProtocolPoint:
        return self.points[-1]

    @property
    def tested(self) -> tuple[ProtocolPoint, ...]:
        """The protocol points where the derived mean is available (the check compared them)."""
        return tuple(q for q in self.points if q.predicted_abs is not None)

    def schedule_text(self) -> str:
        return f"eta_k = {self.a:g}/(k + {self.b:g})"


# ----------------------------------------------------------------------------------------------------------------
# numeric side
# ----------------------------------------------------------------------------------------------------------------
def run_batch(numerics: SignalNumerics, model_kw: dict, n_runs: int, n_steps: int, a: float, b: float,
              n_records: int, seed: np.random.SeedSequence) -> dict:
    """n_runs SGA runs from q_0 uniform on the sphere (batched; ``numerics.projected_sga`` with
    ``numerics.tangent``): initial rho, recorded steps, times, rho paths, final nuisance attention mass."""
    rng = np.random.default_rng(seed)
    model = SignalModel(**model_kw)
    v = rng.standard_normal((n_runs, model.d))
    rho0 = v[:, 0] / np.linalg.norm(v, axis=1)          # <q_0, xi> for q_0 uniform on the sphere
    path = numerics.projected_sga(model, rho0, n_steps, a, b, rng, record_every=max(1, n_steps // n_records),
                                  dtype=np.float32, tangent=numerics.tangent)
    return {"rho0": rho0, "step": path.step, "time": path.time, "rho": path.rho,
            "nuisance_mass_final": path.nuisance_mass[:, -1]}


def gradient_moments(numerics: SignalNumerics, model_kw: dict, grid: np.ndarray, n: int,
                     seed: np.random.SeedSequence) -> dict:
    """Var<xi, g> and E||g||^2 on a rho grid (numeric side, one task; ``numerics.tangent_gradient_moments``)."""
    return numerics.tangent_gradient_moments(SignalModel(**model_kw), grid, n, np.random.default_rng(seed),
                                             tangent=numerics.tangent)


def numeric_side(p: dict, mkw: dict, ctx: Context) -> tuple[dict, dict]:
    """The gradient moments on GRID (one task) and the SGA runs (N_TASKS batches): (moments, runs)."""
    moments = ctx.map(gradient_moments, [(ctx.numerics, mkw, GRID, p["n_energy"], ctx.seed_sequence("moments"))])[0]
    n_runs = p["n_runs"]
    sizes = [n_runs // N_TASKS + (i < n_runs % N_TASKS) for i in range(N_TASKS)]
    parts = ctx.map(run_batch, [(ctx.numerics, mkw, n, p["n_steps"], p["a"], p["b"], p["n_records"], s)
                                for n, s in zip(sizes, ctx.seeds(N_TASKS, "runs")) if n > 0])
    runs = {"rho0": np.concatenate([q["rho0"] for q in parts]), "step": parts[0]["step"],
            "time": parts[0]["time"], "rho": np.vstack([q["rho"] for q in parts]),
            "nuisance_mass_final": np.concatenate([q["nuisance_mass_final"] for q in parts])}
    return moments, runs


# ----------------------------------------------------------------------------------------------------------------
# analytic side
# ----------------------------------------------------------------------------------------------------------------
def analytic_side(p: dict, theory: Any, model: SignalModel, moments: dict, runs: dict) -> dict:
    """Each run's predicted mean path (second-order recursion from its own state at the first record where the
    expansion applies, with F from ``theory``), its sensitivity to a scale of F, the plain-ODE path, the floor
    coefficient G(1)/(4 J'(1))."""
    S_grid, G_grid = moments["var_y"], moments["energy"]
    Fs = field_function(theory, p["sign"], True)
    args = model_args(model)

    def F(r):
        return np.broadcast_to(Fs(r, *args), np.shape(r)).astype(float)

    sgn = np.ones_like(runs["rho0"]) if p["sign"] == "fixed" else np.where(runs["rho0"] < 0, -1.0, 1.0)
    rho_all = sgn[:, None] * runs["rho"]             # symmetric model: F odd, each run mirrored to rho_0 >= 0
    eta = step_sizes(p["n_steps"], p["a"], p["b"])
    limit = np.sqrt(MAX_STEP_ENERGY / float(np.max(G_grid)))
    k_valid = int(np.searchsorted(-eta, -limit))
    j0 = int(np.searchsorted(runs["step"], k_valid))
    if runs["step"].size - j0 < 3:
        raise Unresolved(reason("the step ", *step_schedule(p["a"], p["b"]), " stays above ", STEP_LIMIT, " = ",
                                Number(limit, digits=3), " (", Math(C_STEP), " = ", Number(MAX_STEP_ENERGY, digits=6),
                                ") for almost all of the ", Number(p["n_steps"]), " steps: the second-order expansion "
                                "does not apply; lower ", Math(sp.Symbol("a") / sp.Symbol("b")), " or run more steps"))
    step = runs["step"][j0:] - runs["step"][j0]
    eta_v = eta[runs["step"][j0]:]
    start = rho_all[:, j0]

    def mean_path(scale: float = 1.0, S=S_grid, G=G_grid) -> np.ndarray:
        return second_order_mean(F, start, eta_v, GRID, S, G, scale)[0][step].T       # (n_runs, n_records - j0)

    pred = mean_path()
    w = (mean_path(1 + S_DIFF) - mean_path(1 - S_DIFF)) / (2 * S_DIFF)
    h = 1e-4
    dJ1 = float(-(F(np.array(1.0)) - F(np.array(1.0 - h))) / h / 2)    # J'(1) = -F'(1)/2 (F = (1 - rho^2) J')
    G1 = float(G_grid[-1])
    return {"pred": pred, "w": w, "plain": mean_path(S=0 * S_grid, G=0 * G_grid), "j0": j0, "rho": rho_all[:, j0:],
            "eta": eta, "dJ1": dJ1, "G1": G1, "floor_per_unit_step": G1 / (4 * dJ1) if dJ1 > 0 else float("inf")}


# ----------------------------------------------------------------------------------------------------------------
# decision
# ----------------------------------------------------------------------------------------------------------------
def decide(p: dict, an: dict) -> dict:
    """(i) the fitted scale of F (each run's deviation projected on w, Student t over runs) and (ii) the mean deviation
    at every recorded time (Student t, Bonferroni); the ratio of the worst to its threshold."""
    rho, pred, w = an["rho"], an["pred"], an["w"]
    dev = rho - pred
    n = rho.shape[0]
    ww = float(np.sum(w * w, axis=1).mean())
    if ww > 0:
        proj = np.sum(dev * w, axis=1) / ww                         # per run: scale error of F along its path
        s_err, s_se = float(proj.mean()), float(proj.std(ddof=1) / np.sqrt(n))
    else:           # the predicted paths do not move with the scale of F (beta theta ~ 0): no test of the scale
        s_err, s_se = 0.0, float("inf")
    live = slice(1, None)                                            # the first record is the start itself
    mean_dev, se_dev = dev[:, live].mean(axis=0), dev[:, live].std(axis=0, ddof=1) / np.sqrt(n)
    se_dev = np.where(se_dev > 0, se_dev, np.inf)
    z = mean_dev / se_dev
    q_time = float(student_t.isf(p["z_level"] / 2 / (2 * z.size), n - 1))
    q_scale = float(student_t.isf(p["z_level"] / 4, n - 1))
    z_scale = s_err / s_se if ww > 0 else 0.0
    z_plain = (rho - an["plain"])[:, -1].mean() / se_dev[-1]
    return {"n": n, "s_err": s_err, "s_se": s_se, "z_scale": z_scale, "q_scale": q_scale, "z": z, "q_time": q_time,
            "mean_dev": mean_dev, "se_dev": se_dev, "z_plain": float(z_plain),
            "ratio": max(abs(z_scale) / q_scale, float(np.max(np.abs(z))) / q_time), "scale_testable": ww > 0}


def protocol_points(runs: dict, an: dict, eta: np.ndarray) -> list[ProtocolPoint]:
    """One point per recorded step K >= 1: the final step a/(K - 1 + b), the mean final |rho| (+- se, sd) and the
    predicted mean |rho| where the expansion applies (records from j0 on)."""
    out = []
    for j, k in enumerate(runs["step"]):
        if k < 1:
            continue
        x = np.abs(runs["rho"][:, j])
        pred = float(np.abs(an["pred"][:, j - an["j0"]]).mean()) if j >= an["j0"] else None
        out.append(ProtocolPoint(int(k), float(eta[k - 1]), float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)),
                                 float(x.std(ddof=1)), pred))
    return out


@check(
    id="signal.alignment_30_runs",
    compares="Independent SGA runs from q_0 uniform on the sphere follow the second-order mean path of the ODE rho' = F "
             "from their own rho_0 up to the final alignment, the SGA noise floor u* = eta G(1) / (4 J'(1)) at the final "
             "step (the paper's experiment: 30 runs, R=500, L-R=10000, theta=0.25, reports a mean final |rho|).",
    source="Paper A, claim 5",
    params=[*MODEL_PARAMS,
            Param("R", int, 50, "number of informative tokens R (paper: 500; quick keeps R/(L-R) = 0.05)", low=1),
            Param("L", int, 1050, "sequence length L (paper: 500 + 10000)", low=2),
            Param("theta", float, 2.0, "signal strength (paper: 0.25; quick: strong, where F dominates the noise "
                                       "and a 10 % error of F is resolved)", low=0.0),
            Param("n_runs", int, 128, "independent SGA runs (paper: 30)", low=4),
            Param("n_steps", int, 300, "SGA steps per run (every recorded step is also the end of a shorter "
                  "protocol: the paper profile's 16000 steps span final steps from 0.013 to 0.0025)", low=1),
            Param("a", float, 2.0, "step-size scale a in eta_k = a/(k+b)", low=0.0, low_open=True),
            Param("b", float, 100.0, "step-size offset b in eta_k = a/(k+b)", low=0.0, low_open=True),
            Param("n_records", int, 30, "recorded points per run", low=2),
            Param("n_energy", int, 300, "sequences per rho for Var<xi,g> and E|g|^2", low=10),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=1.0,
                  low_open=True, high_open=True)],
    paper_profile={"R": 500, "L": 10500, "theta": 0.25, "n_runs": 30, "n_steps": 16000, "a": 40.0, "b": 40.0,
           "n_records": 60, "n_energy": 1000},
    validate=lambda p: (validate_model(p), validate_schedule(p)),
    formulas=(r'F(\rho)',),
    theory=THEORY, numerics=NUMERICS,
)
def alignment_30_runs(p: dict, ctx: Context) -> Evidence:
    model = model_of(p)
    mkw = {k: getattr(model, k) for k in ("theta", "beta", "sigma", "R", "L", "d", "sign")}
    moments, runs = numeric_side(p, mkw, ctx)
    an = analytic_side(p, ctx.theory, model, moments, runs)
    dec = decide(p, an)
    return _evidence(p, model, moments, runs, an, dec)


def _evidence(p: dict, model: SignalModel, moments: dict, runs: dict, an: dict, dec: dict) -> Evidence:
    eta, j0, n, pred = an["eta"], an["j0"], dec["n"], an["pred"]
    points = protocol_points(runs, an, eta)
    final = runs["rho"][:, -1]
    last = points[-1]
    findings = AlignmentFindings(model_of(p), n, p["a"], p["b"], p["n_steps"], tuple(points),
                                 1.0 + dec["s_err"], dec["s_se"], an["floor_per_unit_step"])
    return Evidence(
        metric=reason(RATIO, ": the fitted scale of ", F_MATH, " along the paths and the mean deviation of the runs "
                      "from their predicted mean paths, each over its Bonferroni threshold"),
        observed=dec["ratio"], threshold=1.0,
        unresolved=None if dec["scale_testable"] or dec["ratio"] > 1.0 else
        reason("no power at this model: the predicted mean paths do not move with the scale of ", F_MATH, " (",
               BETA_THETA, " too small), so the scale of ", F_MATH, " cannot be fitted"),
        reason=reason("family-wise false-alarm rate ", Number(p["z_level"], digits=6), " split in two: the fitted "
                      "scale of ", F_MATH, f" (Student t, {n - 1} dof, ", T_STAR, " = ",
                      Number(dec["q_scale"], digits=3), f") and the {dec['z'].size} recorded times (", T_STAR, " = ",
                      Number(dec["q_time"], digits=3), f"); se from the spread of {n} runs, each compared with the "
                      "prediction from its own ", RHO_0),
        passed=bool(dec["ratio"] <= 1.0),
        analytic=float(pred[:, -1].mean()), numeric=float(an["rho"][:, -1].mean()),
        uncertainty=float(dec["se_dev"][-1]),
        details={"d": model.d, "theta": model.theta, "R": model.R, "L": model.L, "n_runs": n,
                 "final_alignment": final, "initial_alignment": runs["rho0"],
                 "schedule": {"eta_k": "a/(k+b)", "a": p["a"], "b": p["b"], "n_steps": p["n_steps"],
                              "eta_final": float(eta[-1]), "ode_time": float(eta.sum())},
                 "runs_to_plus_xi": int(np.sum(final > 0)), "runs_to_minus_xi": int(np.sum(final < 0)),
                 "mean_abs_alignment": last.mean_abs, "se_abs_alignment": last.se_abs, "sd_abs_alignment": last.sd_abs,
                 "predicted_mean_abs_alignment": last.predicted_abs,
                 "fitted_scale_of_F": 1.0 + dec["s_err"], "fitted_scale_se": dec["s_se"], "z_scale": dec["z_scale"],
                 "t_threshold_scale": dec["q_scale"], "time": runs["time"][j0 + 1:], "z": dec["z"],
                 "t_threshold_time": dec["q_time"], "prediction_starts_at_step": int(runs["step"][j0]),
                 "mean_deviation": dec["mean_dev"], "z_final_without_order_eta_terms": dec["z_plain"],
                 "quasi_stationary_floor_eta_G_over_4J1": float(eta[-1] * an["floor_per_unit_step"]),
                 "J_prime_at_1": an["dJ1"], "G_at_1": an["G1"],
                 "protocols": [{"steps": q.steps, "eta_final": q.eta_final, "mean_abs": q.mean_abs, "se": q.se_abs,
                                "predicted_abs": q.predicted_abs} for q in points],
                 "grad_energy_grid_rho": GRID, "grad_energy_grid": moments["energy"],
                 "var_xi_gradient_grid": moments["var_y"], "nuisance_mass_final": runs["nuisance_mass_final"]},
        plots=[Plot(title=reason("SGA alignment, ", Number(n), " runs (", R_MATH, " = ", Number(model.R), ", ", L_MATH,
                                 " = ", Number(model.L), ", ", D_MATH, " = ", Number(model.d), ", ", THETA, " = ",
                                 Number(model.theta, digits=6), ")"),
                    xlabel=reason(TIME_AS_STEPS), ylabel=reason(RHO, " (mirrored for the symmetric model)"),
                    series=[Series("mean of runs", runs["time"][j0:], an["rho"].mean(axis=0),
                                   yerr=an["rho"].std(axis=0, ddof=1) / np.sqrt(n), style="o"),
                            Series("mean of predicted paths (ODE + second-order terms)", runs["time"][j0:],
                                   pred.mean(axis=0))]),
               Plot(title=reason("mean final ", ABS_RHO, " of the schedule stopped at each recorded step"),
                    xlabel="final step size", ylabel=reason("mean ", ABS_RHO), logx=True,
                    series=[Series("measured", [q.eta_final for q in points], [q.mean_abs for q in points],
                                   yerr=[q.se_abs for q in points], style="o"),
                            Series("derived (second-order mean path)", [q.eta_final for q in findings.tested],
                                   [q.predicted_abs for q in findings.tested])])],
        findings=findings,
    )
