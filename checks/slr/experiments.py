"""Paper C, claims 5 and 6: the training experiments of the paper (the authors' settings, 30 repeats each, batched
over the repeats), in float64 -- what the checks slr.training_on_manifold and slr.training_from_sphere share: the
protocol, the runs, the end points and the findings the claims read.

| run              | start  | d   | lam_0 | schedule | step | steps   |
| on the manifold  | M      | 400 | 0.1   | no       | 4e-3 | 20 000  |   slr.training_on_manifold
| sphere, large lam| sphere | 400 | 0.9   | no       | 1e-3 | 120 000 |   slr.training_from_sphere
| sphere, small lam| sphere | 400 | 0.1   | no       | 4e-3 | 20 000  |
| sphere, schedule | sphere | 400 | 1.0   | yes      | 4e-3 | 120 000 |
| SGD, schedule    | sphere | 80  | 2.0   | yes      | 1e-3 | 200 000 | (batch 5, eps = 0.1, a fresh batch per step)
(gamma = sqrt(1/2), L = 10; lam_t = lam_0 / (1 + 1e-4 t) with the schedule.)

Numeric side: the simulators' ``pgd`` (exact-gradient projected gradient descent on the vectors in R^d, their
``pgd_step``, one array over the runs; the partials of the theory object's closed-form risk, validated by
slr.gradient_vs_quadrature) and ``sgd`` (projected SGD on sampled tasks: no closed form at all); starts as in the
paper (attnverify.numerics.slr.model.start_sphere / start_manifold).

The comparison of derived and measured (what the check decides): the excess risk R - eps^2 drawn along the runs is
the closed form at the recorded overlaps; at the end of every run it is measured by Monte Carlo at the final vectors
(attnverify.numerics.slr.risk, projected sampler, the oracle (k*, v*) in the same batch of tasks): every final closed
form within the Monte Carlo's z-band (Bonferroni at ``z_level`` over the runs and the oracle), so the curves and the
end-point risks the claims read are the population risk. A z-score is a normal approximation of the Monte Carlo
mean; where the per-task risks are so heavy-tailed that it fails (the skewness of the mean, g_1 / sqrt(n_mc) with g_1
the sample skewness, above MAX_MEAN_SKEW), that end point is left out of the comparison and counted (with none
left, the check is unresolved): there one task may carry most of the sample's variance and the rare large tasks
the sample missed make its standard error too small (measured: a valid model with L = 1 had an end point at
g_1 / sqrt(n) = 0.35 whose 4000-task mean lay 9 standard errors below the 200 000-task one).

Findings (what the claims read): per experiment, each run's end point classified -- ``oracle`` when |kappa|, |nu|
>= 1 - AT_ORACLE and the distance to M <= AT_ORACLE, ``off_M`` when the distance to M exceeds AT_ORACLE, ``M`` else --
with its overlaps, its excess risk and its Monte Carlo difference to the oracle's risk at the final lam (paired
tasks); whether the runs are still moving (1 - |kappa| over the last quarter) or have settled away from the oracle
(the population Riemannian gradient at the end below SETTLED_GRAD and the overlaps moving by less than SETTLED_DRIFT
over the last quarter: a stationary point of the risk, not a slow plateau); the oracle's excess at the final lam.
Figures: the excess risk (mean over runs and the 10 %-90 % band), |kappa| and |nu|, the distance to M (log scale).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, item, reason
from attnverify.checks.reason_values import number_or_na
from attnverify.checks.slr._model import closed_form_rounding, fmt, model_options, slr_model, vec
from attnverify.checks.slr.claims import DIM, ETA, KAPPA, LAM, MANIFOLD, NU, RHO, RISK, STEP, THETA
from attnverify.checks.stats import beyond, bonferroni_z

ABS_Z = Math(sp.Abs(sp.Symbol("z")))                 # the metric's z-scores, |z|

AT_ORACLE = 0.05
#: the largest skewness of a Monte Carlo mean whose z-score is judged: the one-term Edgeworth correction of a normal
#: tail at z, gamma (z^2 - 1) / 6, is 0.6 at gamma = 0.25 and z = 4 (the Bonferroni quantile of these checks), so
#: beyond it the tail probability a z-score stands for is off by a factor of order 2 and more
MAX_MEAN_SKEW = 0.25
SETTLED_GRAD = 1e-3       # a run has settled when the population Riemannian gradient at its end is below this ...
SETTLED_DRIFT = 1e-2      # ... and its overlaps moved by less than this over the last quarter of the run
FIXED_TOL = 1e-6          # an end point with |eta| >= 1 - FIXED_TOL and |kappa|, |nu|, |rho| <= FIXED_TOL lies on the
#                           fixed set {k = +-v*, v orthogonal to v*} of the isometry (k, v) -> (-H k, H v) (H the
#                           reflection along v*), which maps the overlaps to (-kappa, -nu, theta, eta, -rho) and so
#                           preserves R (slr_stationary.SIGN_SYMMETRIES): PGD started there stays there
#: the skewness of a Monte Carlo mean, g_1 / sqrt(n) (g_1 the sample skewness of the n task risks)
MEAN_SKEW = Math(sp.Symbol("g_1") / sp.sqrt(sp.Symbol("n")))
# the plots' labels: the excess risk R - eps^2, |kappa| and |nu|, the distance to M, the run's d, lambda_0 and step h
EXCESS_RISK = Math(RISK - sp.Symbol("epsilon") ** 2)
ABS_KAPPA, ABS_NU, M_MATH = Math(sp.Abs(KAPPA)), Math(sp.Abs(NU)), Math(MANIFOLD)
DISTANCE_TO_M = Math(sp.sqrt(THETA ** 2 + ETA ** 2 + RHO ** 2))
D_MATH, LAM_0, H_MATH = Math(DIM), Math(sp.Symbol("lambda_0")), Math(STEP)
#: the kinds of end point other than the oracle, as parts: on M elsewhere, off M
KIND_PARTS = {"M": ("on ", Math(MANIFOLD)), "off_M": ("off ", Math(MANIFOLD))}
MODEL = model_options(only=("gamma", "L", "eps"))
MC_TASKS = Param("n_mc", int, 4000, "Monte Carlo tasks for the end-point risks", low=500, high=10_000_000)
Z_LEVEL = Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)


@dataclass(frozen=True)
class Experiment:
    name: str
    start: str                # "M" or "sphere"
    d: int
    lam0: float
    schedule: bool
    step: float
    n_steps: int
    sgd: bool = False
    batch: int = 5
    eps: float | None = None  # None: the check's eps


@dataclass(frozen=True)
class EndPoint:
    run: int
    overlaps: tuple[float, ...]
    kind: str                  # "oracle", "M" or "off_M"
    excess: float              # closed form, at the final lam
    excess_mc: float
    excess_mc_se: float
    minus_oracle_mc: float     # MC risk minus the oracle's, paired tasks
    minus_oracle_se: float
    still_moving: bool         # 1 - |kappa| still decreasing over the last quarter of the run
    drift: float               # max |change of an overlap| over the last quarter of the run
    start: tuple[float, float]  # (kappa, nu) at the start
    grad_norm: float           # |Riemannian gradient| of the closed-form risk at the end point (final lam)
    settled: bool              # not at the oracle, grad_norm < SETTLED_GRAD and drift < SETTLED_DRIFT
    fixed_set: bool            # k = +-v*, v orthogonal to v* (to FIXED_TOL): see below


@dataclass(frozen=True)
class ExperimentFindings:
    name: str
    protocol: tuple[tuple[str, object], ...]
    paper_protocol: bool
    n_runs: int
    final_lam: float
    oracle_excess: float
    end_points: tuple[EndPoint, ...]
    fraction_at_oracle: float
    max_distance_to_M: float
    mean_final_excess: float

    def kinds(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.end_points:
            out[e.kind] = out.get(e.kind, 0) + 1
        return out


@dataclass(frozen=True)
class TrainingFindings:
    experiments: tuple[ExperimentFindings, ...]
    max_abs_z: float
    z_threshold: float

    def get(self, name: str) -> ExperimentFindings | None:
        return next((e for e in self.experiments if e.name == name), None)


# ------------------------------------------------------------------------------------------- running
def _run(theory, numerics, exp: Experiment, p: dict, n_runs: int, rng: np.random.Generator):
    """One experiment, all runs as one array: (path, k*, v*, eps) with path.risk the closed-form R of ``theory``
    along the run (the simulators ``numerics``)."""
    from attnverify.numerics.slr.model import draw_targets, start_manifold, start_sphere

    eps = p["eps"] if exp.eps is None else exp.eps
    ks, vs = draw_targets(exp.d, rng)
    k0, v0 = start_manifold(ks, vs, rng, n_runs) if exp.start == "M" else start_sphere(n_runs, exp.d, rng)
    ev = theory.risk_evaluator(exp.lam0, p["gamma"], exp.d, p["L"], eps)
    every = max(1, exp.n_steps // 200)
    if exp.sgd:
        path = numerics.sgd(slr_model(p["gamma"], exp.d, p["L"], eps), k0, v0, ks, vs, lam0=exp.lam0,
                            step=exp.step, n_steps=exp.n_steps, batch=exp.batch, rng=rng, schedule=exp.schedule,
                            record_every=every)
        risk = np.stack([ev.risk(path.overlaps[:, j], lam) for j, lam in enumerate(path.lam)], axis=1)
    else:
        path = numerics.pgd(k0, v0, ks, vs, lambda o, lam: ev.gradient(o, lam), lam0=exp.lam0, step=exp.step,
                            n_steps=exp.n_steps, schedule=exp.schedule, record_every=every,
                            risk=lambda o, lam: ev.risk(o, lam), kernel=numerics.pgd_step)
        risk = path.risk
    return path, risk, ks, vs, eps, ev


def end_mc_task(model_args: tuple, lam: float, K: np.ndarray, V: np.ndarray, ks, vs, n: int,
                seed: np.random.SeedSequence, risk_samples, sample_tasks) -> dict:
    """Monte Carlo risks of the final (k, v) of every run and of the oracle, on the same tasks (``risk_samples``,
    projected sampler; ``sample_tasks`` for a sampler that draws whole tasks; numerics only)."""
    rng = np.random.default_rng(seed)
    s = risk_samples(slr_model(*model_args), np.vstack([K, ks]), np.vstack([V, vs]), ks, vs, lam, n, rng,
                     method="projected", sample=sample_tasks)
    diff = s[:, :-1] - s[:, -1:]
    root = np.sqrt(n)
    dev = s - s.mean(0)
    m2 = np.mean(dev ** 2, axis=0)
    skew = np.divide(np.mean(dev ** 3, axis=0), m2 ** 1.5, out=np.zeros_like(m2), where=m2 > 0)
    return {"mean": s.mean(0), "se": s.std(0, ddof=1) / root, "diff": diff.mean(0),
            "diff_se": diff.std(0, ddof=1) / root, "mean_skew": np.abs(skew) / root}


def riemannian_norm(o: np.ndarray, g: np.ndarray) -> np.ndarray:
    """|(g_k, g_v)| on the spheres from overlaps o and partials g (..., 5): grad_k = R_kappa k* + R_eta v* + R_rho v
    and grad_v = R_nu v* + R_theta k* + R_rho k expanded through the Gram matrix of (k, v, k*, v*), minus their
    radial parts <grad_k, k>, <grad_v, v>."""
    k, n, t, e, r = (o[..., i] for i in range(5))
    Rk, Rn, Rt, Re, Rr = (g[..., i] for i in range(5))
    gk2 = Rk ** 2 + Re ** 2 + Rr ** 2 + 2 * Rk * Rr * t + 2 * Re * Rr * n - (Rk * k + Re * e + Rr * r) ** 2
    gv2 = Rn ** 2 + Rt ** 2 + Rr ** 2 + 2 * Rn * Rr * e + 2 * Rt * Rr * k - (Rn * n + Rt * t + Rr * r) ** 2
    return np.sqrt(np.maximum(gk2, 0.0) + np.maximum(gv2, 0.0))


def _classify(o: np.ndarray) -> str:
    dist = float(np.sqrt(o[2] ** 2 + o[3] ** 2 + o[4] ** 2))
    if dist > AT_ORACLE:
        return "off_M"
    return "oracle" if min(abs(o[0]), abs(o[1])) >= 1 - AT_ORACLE else "M"


def run_experiment(exp: Experiment, p: dict, ctx: Context, n_runs: int, paper: dict, tag: str):
    """One experiment with the check's closed forms and simulators (``ctx.theory``, ``ctx.numerics``): its
    findings, the z-scores of its end-point risks against Monte Carlo, and its plots."""
    sim = ctx.numerics
    path, risk, ks, vs, eps, ev = _run(ctx.theory, sim, exp, p, n_runs, ctx.rng(f"run:{tag}"))
    lam_end = float(path.lam[-1])
    (mc,) = ctx.map(end_mc_task, [((p["gamma"], exp.d, p["L"], eps), lam_end, path.k, path.v, ks, vs, p["n_mc"],
                                   ctx.seeds(1, f"mc:{tag}")[0], sim.risk_samples, sim.sample_tasks)])
    final_o = path.overlaps[:, -1]
    closed = np.append(ev.risk(final_o, lam_end), ev.risk(np.array([1.0, 1.0, 0, 0, 0]), lam_end))
    floor = closed_form_rounding(eps, exp.d, np.append(final_o[:, 2], 0.0))
    z = beyond(mc["mean"] - closed, floor) / np.maximum(mc["se"], floor)    # an exact simulation: floor units
    z = np.where(mc["mean_skew"] > MAX_MEAN_SKEW, np.nan, z)    # NaN: left out
    q = max(1, path.step.size // 4)
    gap_now = 1 - np.abs(path.overlaps[:, -1, 0])
    gap_before = 1 - np.abs(path.overlaps[:, -1 - q, 0])
    drift = np.max(np.abs(path.overlaps[:, -1] - path.overlaps[:, -1 - q]), axis=1)
    gnorm = riemannian_norm(final_o, ev.gradient(final_o, lam_end))
    kinds = [_classify(o) for o in final_o]
    ends = tuple(EndPoint(i, tuple(float(x) for x in final_o[i]), kinds[i], float(closed[i] - eps ** 2),
                          float(mc["mean"][i] - eps ** 2), float(mc["se"][i]), float(mc["diff"][i]),
                          float(mc["diff_se"][i]), bool(gap_before[i] - gap_now[i] > 1e-6), float(drift[i]),
                          (float(path.overlaps[i, 0, 0]), float(path.overlaps[i, 0, 1])), float(gnorm[i]),
                          bool(kinds[i] != "oracle" and gnorm[i] < SETTLED_GRAD and drift[i] < SETTLED_DRIFT),
                          bool(abs(final_o[i, 3]) >= 1 - FIXED_TOL and max(abs(final_o[i, j]) for j in (0, 1, 4))
                               <= FIXED_TOL))
                 for i in range(n_runs))
    proto = (("start", exp.start), ("d", exp.d), ("lam0", exp.lam0), ("schedule", exp.schedule), ("step", exp.step),
             ("n_steps", exp.n_steps), ("n_runs", n_runs)) + ((("batch", exp.batch),) if exp.sgd else ())
    is_paper = all(dict(proto).get(k) == v for k, v in paper.items())
    found = ExperimentFindings(exp.name, proto, bool(is_paper), n_runs, lam_end, float(closed[-1] - eps ** 2), ends,
                               float(np.mean([e.kind == "oracle" for e in ends])), float(path.distance.max()),
                               float(np.mean(closed[:-1]) - eps ** 2))
    return found, z, _plots(exp, path, risk - eps ** 2)


def _band(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return x.mean(axis=0), np.quantile(x, 0.1, axis=0), np.quantile(x, 0.9, axis=0)


def _name_parts(name: str) -> list:
    """An experiment's name (a key of its findings: ``sphere, large lam``) as parts, its ridge parameter as lambda."""
    return [Math(LAM) if word == "lam" else word for word in re.split(r"\b(lam)\b", name) if word]


def _plots(exp: Experiment, path, excess: np.ndarray) -> list[Plot]:
    t = path.step.astype(float)
    m, lo, hi = _band(excess)
    ak, lk, hk = _band(np.abs(path.overlaps[:, :, 0]))
    an, ln, hn = _band(np.abs(path.overlaps[:, :, 1]))
    dm, dl, dh = _band(np.maximum(path.distance, 1e-18))
    head = reason(*_name_parts(exp.name), " (", D_MATH, " = ", Number(exp.d), ", ", LAM_0, " = ",
                  Number(exp.lam0, digits=6), ", schedule" if exp.schedule else "", ", ", "SGD" if exp.sgd else "PGD",
                  " ", H_MATH, " = ", Number(exp.step, digits=6), ")")
    return [Plot(title=reason(head, ": excess risk ", EXCESS_RISK), xlabel="step", ylabel=reason(EXCESS_RISK),
                 logy=True,
                 series=[Series("mean over runs", t, np.maximum(m, 1e-12)),
                         Series("10 % quantile", t, np.maximum(lo, 1e-12), style=":"),
                         Series("90 % quantile", t, np.maximum(hi, 1e-12), style=":")]),
            Plot(title=reason(head, ": ", ABS_KAPPA, " and ", ABS_NU), xlabel="step", ylabel="overlap",
                 series=[Series(reason(ABS_KAPPA, " mean"), t, ak),
                         Series(reason(ABS_KAPPA, " 10-90 %"), t, lk, style=":"),
                         Series(reason(ABS_KAPPA, " 10-90 %"), t, hk, style=":"),
                         Series(reason(ABS_NU, " mean"), t, an, style="--"),
                         Series(reason(ABS_NU, " 10-90 %"), t, ln, style="-."),
                         Series(reason(ABS_NU, " 10-90 %"), t, hn, style="-.")]),
            Plot(title=reason(head, ": distance to ", M_MATH), xlabel="step", ylabel=reason(DISTANCE_TO_M), logy=True,
                 series=[Series("mean", t, dm), Series("10 % quantile", t, dl, style=":"),
                         Series("90 % quantile", t, dh, style=":")])]


def _summary(f: ExperimentFindings) -> tuple:
    """One experiment's end points and final excess risk, as parts (an item of the reason)."""
    others: list = []
    for k, n in f.kinds().items():
        if k != "oracle":
            others += [", ", Number(n), " ", *KIND_PARTS.get(k, (k,))]
    return item(f"{f.name}: ", Number(sum(e.kind == "oracle" for e in f.end_points)), "/", Number(f.n_runs),
                " at the oracle", *others, " (final excess ", number_or_na(f.mean_final_excess, 4), ", oracle's ",
                number_or_na(f.oracle_excess, 4), ")")


def evidence(found: list[ExperimentFindings], zs: list[np.ndarray], plots: list[Plot], p: dict) -> Evidence:
    """The evidence of a training check from its experiments' findings, z-scores and plots."""
    z_all = np.concatenate(zs)
    z = z_all[np.isfinite(z_all)]
    left_out = int(z_all.size - z.size)
    z_star = bonferroni_z(p["z_level"], max(z.size, 1))
    worst = float(np.max(np.abs(z))) if z.size else 0.0
    summary = [_summary(f) for f in found]                   # one item per experiment
    return Evidence(
        metric=reason("max ", ABS_Z, " of the Monte Carlo end-point risks (every run and the oracle) against the "
                      "closed form"),
        observed=worst, threshold=z_star,
        reason=reason("Bonferroni two-sided normal quantile for ", Number(z.size), " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; ", Number(p["n_mc"]), " tasks shared by "
                      "the runs of an experiment",
                      ("; ", Number(left_out), " end point(s) left out, their Monte Carlo mean too skewed for a "
                       "z-score (", MEAN_SKEW, " > ", Number(MAX_MEAN_SKEW, digits=6), ": heavy-tailed task risks)")
                      if left_out else "", ".", items=summary),
        passed=bool(worst <= z_star),
        unresolved=None if z.size else reason("every end point's Monte Carlo mean is too skewed for a z-score (",
                                              MEAN_SKEW, " ", Math(">"), " ", Number(MAX_MEAN_SKEW, digits=6),
                                              "): raise n_mc"),
        details={"experiments": [{"name": f.name, "protocol": dict(f.protocol), "kinds": f.kinds(),
                                  "end_points": [vec(e.overlaps) + f" {e.kind} excess {fmt(e.excess, 5)}"
                                                 for e in f.end_points]} for f in found]},
        plots=plots, findings=TrainingFindings(tuple(found), worst, z_star),
    )
