"""Paper A, claims 1 and 4 at low temperature: J(rho) against Monte Carlo where the scores leave exp's double range.

At beta = 1000, theta = 1 the informative scores reach beta theta rho = 900 (exp overflows beyond 709), and the
informative mass w(rho) = R e^{beta theta rho} / (R e^{beta theta rho} + (L - R)) is a logistic step of width
1/(beta theta) centred at rho_0 = log((L - R)/R) / (beta theta): attention filtering at its sharpest. The rho grid
resolves that step (rho_0 + k/(beta theta), k = -4..4) and the plateaus on both sides.

Analytic side: population_objective(sign, finite_size=True) of the theory the check receives as ``ctx.theory``,
evaluated by attnverify.checks.signal._model.numeric_function (mpmath where double overflows). Numeric side:
objective_samples of ``ctx.numerics`` (attnverify.numerics.signal.mc) with its softmax in log-space, full d-dim
tokens, common random numbers (the covariance across the grid is estimated). Decision: one
family of two-sided z-tests, Bonferroni-corrected: the level at every rho, the contrasts against the first grid point
(common random numbers cancel most of the shared noise) and the fitted scale ratio sum MC / sum closed with its
standard error (attnverify.checks.stats.family_statistics).

Scope of the tolerance: the closed form includes the O(1/L) terms (orthogonal noise and the in-plane delta-method
term); the remainder is O(1/R^2). On the informative plateau the largest in-plane piece, the ratio bias of the
self-normalised tilted mean 2 theta rho beta sigma^2 e^{beta^2 sigma^2} / R, is, against the Monte Carlo standard
error 2 theta sigma sqrt(e^{beta^2 sigma^2} / (R n)),
    b = |rho| beta sigma e^{beta^2 sigma^2 / 2} sqrt(n / R)    standard errors,
0.057 at the defaults (beta sigma = 0.01). Inputs with b > 0.25 are refused: then even that whole O(1/R) piece is
below a quarter of a standard error, and its unknown O(1/R^2) remainder cannot move the false-alarm rate. On the
nuisance plateau the in-plane q-direction noise sigma^2 e^{beta^2 sigma^2} / (L - R) is 1/d of J and resolved.
Power: the same test must reject the closed form at 1.1 beta (the Monte Carlo resolves the temperature).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, listing, reason
from attnverify.checks.registry import check
from attnverify.checks.signal._model import MODEL_PARAMS, closed_form, validate_model
from attnverify.checks.stats import bonferroni_z, family_statistics
from attnverify.numerics.signal.mc import Estimate, estimate
from attnverify.numerics.signal.model import SignalModel
from attnverify.numerics.signal.simulators import NUMERICS, SignalNumerics
from attnverify.theory.signal import THEORY

# the mathematics of the reasons (attnverify.checks.reason: symbols in SymPy's naming convention)
RHO, BETA = Math(sp.Symbol("rho")), Math(sp.Symbol("beta"))
ABS_Z, LE, BETA_SIGMA = Math(sp.Abs(sp.Symbol("z"))), Math(r"\leq"), Math(sp.Symbol("beta") * sp.Symbol("sigma"))
_R, _N = sp.Symbol("R"), sp.Symbol("n")
SE_OF_SD = Math(sp.Eq(sp.Symbol(r"\mathrm{se}"), sp.Symbol(r"\mathrm{sd}") / sp.sqrt(_N)))   # se = sd/sqrt(n)
ORDER_1_OVER_R, ORDER_1_OVER_R2 = Math(sp.Function("O")(1 / _R)), Math(sp.Function("O")(1 / _R ** 2))
# the plots' labels: the objective J, J(rho), theta, the centre rho_0 of the step and the scaled distance from it
_RHO, _RHO_0 = sp.Symbol("rho"), sp.Symbol("rho_0")
J_MATH, J_OF_RHO = Math(sp.Symbol("J")), Math(sp.Function("J")(_RHO))
THETA, RHO_0 = Math(sp.Symbol("theta")), Math(_RHO_0)
SCALED_RHO = Math((_RHO - _RHO_0) * sp.Symbol("beta") * sp.Symbol("theta"))      # (rho - rho_0) beta theta
#: a z-score of the family: z = (MC - closed form) / se
Z_SCORE = Math(sp.Eq(sp.Symbol("z"), (sp.Symbol(r"\mathrm{MC}") - sp.Symbol(r"\text{closed form}"))
                     / sp.Symbol(r"\mathrm{se}")))

MAX_BIAS_OVER_SE = 0.25


@dataclass(frozen=True)
class LowTemperatureFindings:
    """What ``signal.low_temperature`` found, for the claims: the family test of the closed form against the Monte
    Carlo (max |z| against the Bonferroni threshold), the fitted scale ratio MC / closed +- se, and the largest score
    beta (theta |rho| + 8 sigma) reached."""

    beta: float
    max_abs_z: float
    z_threshold: float
    ratio: float
    ratio_se: float
    largest_score: float
_DEFAULTS = {"theta": 1.0, "beta": 1000.0, "sigma": 1e-5, "d": 5}


def mc_task(numerics: SignalNumerics, model_kw: dict, rhos: np.ndarray, n: int, seed: np.random.SeedSequence
            ) -> Estimate:
    """Full-dimensional Monte Carlo of ||f_q(X)||^2 on the rho grid (``numerics.objective_samples`` with
    ``numerics.softmax_weights``): mean and covariance across the grid. Floating point exceptions are not raised
    here: an overflowing implementation gives non-finite values, which the check judges (the same in this process
    and in a worker process, whose floating-point state the runner does not set)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return estimate(numerics.objective_samples(SignalModel(**model_kw), rhos, n, np.random.default_rng(seed),
                                                   softmax=numerics.softmax_weights))


def non_finite_evidence(p: dict, rhos: np.ndarray, mu: np.ndarray, analytic: np.ndarray) -> Evidence:
    """The numeric side gave non-finite values (an overflow in the simulation) where the closed form is finite: the
    two sides disagree, a ``fail`` of this check (our numerics are wrong), with the points named."""
    bad = ~np.isfinite(mu)
    temperature = p["beta"]
    return Evidence(
        metric=reason("grid points where the Monte Carlo is not a finite number while the closed form is"),
        observed=float(np.sum(bad & np.isfinite(analytic))), threshold=0.0,
        reason=reason("a finite closed form cannot agree with a non-finite Monte Carlo value (at ", RHO, " = ",
                      *listing(rhos[bad], digits=4), ", ", BETA, " = ", Number(temperature, digits=6), ": the "
                      "simulation overflowed)"),
        passed=False, analytic=analytic, numeric=np.where(bad, np.nan, mu),
        details={"rho": rhos, "non_finite_rho": rhos[bad], "n_sequences": p["n_sequences"]})


def logistic_step(theta: float, beta: float, R: int, L: int) -> tuple[float, float]:
    """Centre rho_0 = log((L - R)/R) / (beta theta) and width 1/(beta theta) of the informative mass's step."""
    return float(np.log((L - R) / R) / (beta * theta)), 1.0 / (beta * theta)


def alignment_grid(theta: float, beta: float, R: int, L: int, sign: str) -> np.ndarray:
    """Plateau points +-0.5, +-0.9 and the step rho_0 + k/(beta theta), k = -4..4 (mirrored for sign='symmetric'),
    inside [-1, 1]."""
    rho0, width = logistic_step(theta, beta, R, L)
    step = rho0 + width * np.arange(-4, 5)
    pts = np.concatenate([[-0.9, -0.5, 0.5, 0.9], step, -step if sign == "symmetric" else []])
    return np.unique(np.round(pts[np.abs(pts) <= 1.0], 15))


def in_plane_ratio_bias_over_se(p: dict, rho_max: float = 0.9) -> float:
    """The in-plane O(1/R) ratio bias on the informative plateau in standard errors (module docstring)."""
    bs = p["beta"] * p["sigma"]
    return float(rho_max * bs * np.exp(bs**2 / 2) * np.sqrt(p["n_sequences"] / p["R"]))


def _validate(p: dict) -> None:
    validate_model(p)
    if p["theta"] <= 0:
        raise ValueError("signal.low_temperature needs theta > 0 (the informative mass has no step at theta = 0)")
    b = in_plane_ratio_bias_over_se(p)
    if b > MAX_BIAS_OVER_SE:
        raise ValueError(f"the O(1/R) in-plane ratio bias would be {b:.3g} standard errors (> {MAX_BIAS_OVER_SE:g}), "
                         f"so its O(1/R^2) remainder could be resolved: lower beta*sigma or n_sequences, or raise R")


@check(
    id="signal.low_temperature",
    compares="At low temperature (beta theta = 1000: scores beyond exp's double range) the closed form J(rho) still "
             "matches full-dimensional Monte Carlo, through the sharp logistic step of the informative attention mass "
             "at rho_0 = log((L - R)/R) / (beta theta).",
    source="Paper A, claims 1 and 4 (model option beta)",
    params=[*(dataclasses.replace(q, default=_DEFAULTS[q.name]) if q.name in _DEFAULTS else q
              for q in MODEL_PARAMS),
            Param("n_sequences", int, 2000, "Monte Carlo sequences", low=10),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=1.0, low_open=True,
                  high_open=True)],
    paper_profile={"n_sequences": 20000, "R": 100, "L": 2100},
    validate=_validate,
    formulas=(r'w(\rho)', r"w'(\rho)", r'J_{\mathrm{fixed}}(\rho)'),
    theory=THEORY, numerics=NUMERICS,
)
def low_temperature(p: dict, ctx: Context) -> Evidence:
    rhos = alignment_grid(p["theta"], p["beta"], p["R"], p["L"], p["sign"])
    model = {k: p[k] for k in ("theta", "beta", "sigma", "R", "L", "d", "sign")}
    est, = ctx.map(mc_task, [(ctx.numerics, model, rhos, p["n_sequences"], ctx.seeds(1)[0])])
    mu, se = est.mean, est.se
    J = closed_form(ctx.theory, p["sign"], True)
    args = (p["theta"], p["beta"], p["sigma"], p["R"], p["L"], p["d"])
    analytic = np.broadcast_to(J(rhos, *args), rhos.shape).astype(float)
    if not np.all(np.isfinite(mu)) or not np.all(np.isfinite(est.cov)):
        return non_finite_evidence(p, rhos, np.where(np.isfinite(se), mu, np.nan), analytic)
    hotter = np.broadcast_to(J(rhos, p["theta"], 1.1 * p["beta"], *args[2:]), rhos.shape).astype(float)
    fam, fam_hot = family_statistics([est], [analytic]), family_statistics([est], [hotter])
    z, z_hot = fam["blocks"][0]["z"], fam_hot["blocks"][0]["z"]
    m = fam["all_z"].size
    z_star = bonferroni_z(p["z_level"], m)
    max_z, max_z_hot = float(np.max(np.abs(fam["all_z"]))), float(np.max(np.abs(fam_hot["all_z"])))
    rho0, width = logistic_step(p["theta"], p["beta"], p["R"], p["L"])
    bias = in_plane_ratio_bias_over_se(p)
    # the closed form is cheap: drawn as a curve, dense across the step (width 1/(beta theta)) and over the range
    step = rho0 + width * np.linspace(-12.0, 12.0, 241)
    near = np.abs(rhos - rho0) <= 12.0 * width
    fine = np.unique(np.clip(np.concatenate([np.linspace(rhos.min(), rhos.max(), 201),
                                             rho0 + width * np.linspace(-12.0, 12.0, 241)]), rhos.min(), rhos.max()))
    max_score = float(p["beta"] * (p["theta"] * np.max(np.abs(rhos)) + 8 * p["sigma"]))
    return Evidence(
        metric=reason("max ", ABS_Z, " over the family (levels, contrasts across ", RHO, ", scale ratio), ", Z_SCORE),
        observed=max_z, threshold=z_star,
        reason=reason(f"Bonferroni-corrected two-sided normal quantile for {m} z-scores ({rhos.size} levels, "
                      f"{rhos.size - 1} contrasts, 1 scale ratio) at family-wise false-alarm rate ",
                      Number(p["z_level"], digits=6), " (", SE_OF_SD, ", ", Math(_N), " = ", Number(p["n_sequences"]),
                      "); the ", ORDER_1_OVER_R, " in-plane ratio bias is ", Number(bias, digits=2), " se (its ",
                      ORDER_1_OVER_R2, " remainder is negligible); the closed form at ", Number(1.1, digits=2),
                      " ", BETA, " must be rejected (power)"),
        passed=bool(max_z <= z_star and max_z_hot > z_star),
        # a model where the measurement cannot tell beta from 1.1 beta (tiny beta sigma: the scores hardly move the
        # softmax) is one where the comparison has no power: unresolved, never a failure of a valid model
        unresolved=None if max_z > z_star or max_z_hot > z_star else
        reason("no power at this model: the closed form at ", Number(1.1, digits=2), " ", BETA, " is not rejected "
               "either (max ", ABS_Z, " = ", Number(max_z_hot, digits=3), " ", LE, " ", Number(z_star, digits=3),
               "); raise ", BETA_SIGMA, " or n_sequences"),
        analytic=analytic, numeric=mu, uncertainty=se,
        details={"rho": rhos, "z": z, "z_contrast": fam["blocks"][0]["z_contrast"],
                 "ratio_mc_over_closed": fam["ratio"], "ratio_se": fam["ratio_se"], "z_ratio": fam["z_ratio"],
                 "max_abs_z": max_z, "n_sequences": p["n_sequences"], "step_centre_rho0": rho0, "step_width": width,
                 "largest_score": max_score, "scores_beyond_exp_range": bool(max_score > np.log(np.finfo(float).max)),
                 "in_plane_ratio_bias_over_se": bias, "J_at_1.1_beta": hotter, "z_at_1.1_beta": z_hot,
                 "max_abs_z_at_1.1_beta": max_z_hot, "power_1.1_beta_rejected": bool(max_z_hot > z_star),
                 "z_threshold": z_star,
                 "evaluation": "closed form in double precision, 30-digit mpmath where double overflows; Monte Carlo "
                               "softmax with max-subtraction (log-space)"},
        plots=[Plot(title=reason(J_OF_RHO, " at low temperature (", BETA, " = ", Number(p["beta"], digits=6), ", ",
                                 THETA, " = ", Number(p["theta"], digits=6), ")"),
                    xlabel=reason(SCALED_RHO), ylabel=reason(J_MATH),
                    series=[Series("closed form", (fine - rho0) / width,
                                   np.broadcast_to(J(fine, *args), fine.shape).astype(float)),
                            Series("Monte Carlo", (rhos - rho0) / width, mu, yerr=se, style="o")],
                    ),
               Plot(title=reason(J_OF_RHO, " across the step: centre ", RHO_0, " = ", Number(rho0, digits=4),
                                 ", width ", Number(width, digits=3)),
                    xlabel=reason(SCALED_RHO), ylabel=reason(J_MATH),
                    series=[Series("closed form", (step - rho0) / width,
                                   np.broadcast_to(J(step, *args), step.shape).astype(float)),
                            Series("Monte Carlo", (rhos[near] - rho0) / width, mu[near], yerr=se[near], style="o")],
                    )],
        findings=LowTemperatureFindings(p["beta"], max_z, z_star, float(fam["ratio"]), float(fam["ratio_se"]),
                                        max_score),
    )
