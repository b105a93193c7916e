r"""Paper D's uniform rate on a ball: sup_{||x|| <= R} ||Gamma_{mu_n}(x) - Gamma_mu(x)|| against n, for a Gaussian
token law, the reference Gamma_mu from the engine's closed form.

* ``tsc.uniform_curves`` (check): the sup-error curves at each radius R (over a fixed set of query points of the
  ball, half on its boundary: :func:`attnverify.numerics.tsc.uniform.uniform_errors`) are internally consistent
  across n and repetitions (:func:`attnverify.numerics.tsc.consistency.curve_consistency`, Bonferroni over the
  radii). No slope is compared with a stated rate here. Findings: per R, the fitted exponent with its interval and
  the constant C(R) = geometric mean over n and repetitions of e sqrt(n), with its standard error in log.
* ``D.uniform_rate`` (claim): the stated rate n^{-1/2} as an upper bound at every R (refuted where the exponent's
  interval lies above the stated exponent), and how C(R) grows: the slope of log C(R) against R (exponential
  growth) and against log R (polynomial), both reported.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.plugin import (ClaimVerdict, Context, Evidence, Param, Perturbation, check, claim, judges,
                                      one_of)
from attnverify.checks.reason import Math, listing, reason
from attnverify.checks.reason_values import measured_power, number_or_na
from attnverify.checks.tsc import _model as THEORY
from attnverify.checks.tsc.findings import consistency_evidence
from attnverify.numerics.tsc import uniform as UNIFORM
from attnverify.numerics.tsc.consistency import curve_consistency
from attnverify.numerics.tsc.fit import fit_slope
from attnverify.numerics.tsc.laws import GaussianLaw, ball_points
from attnverify.numerics.tsc.protocol import geometric_sizes


@dataclass(frozen=True)
class RadiusPoint:
    R: float
    exponent: float
    interval: tuple[float, float]
    level: float
    log_constant: float
    log_constant_se: float


@dataclass(frozen=True)
class UniformFindings:
    n_values: tuple[int, ...]
    reps: int
    radii: tuple[RadiusPoint, ...]


def _radii(text: str) -> list[float]:
    try:
        radii = [float(s) for s in text.split(",")]
    except ValueError:
        raise ValueError(f"radii must be comma-separated numbers, got {text!r}") from None
    if len(radii) < 2 or any(not (np.isfinite(r) and r > 0) for r in radii):
        raise ValueError(f"radii must be at least two finite numbers > 0, got {text!r}")
    return sorted(radii)


@check(id="tsc.uniform_curves", compares="the measured sup over a ball of radius R of ||Gamma_{mu_n}(x) - "
       "Gamma_mu(x)|| (Gamma_mu: the engine's Gaussian closed form) is internally consistent across n and "
       "repetitions at every R", source="Paper D, the uniform rate on a ball (reconstructed)", theory=THEORY,
       numerics=UNIFORM, formulas=(r"\Gamma_\mu(x)",),
       params=[Param("d", int, 4, "dimension", low=2, high=64),
               Param("radii", str, "1,2,4,8", "ball radii (in units of the token standard deviation)"),
               Param("points", int, 48, "query points per ball (half on its boundary)", low=2, high=2000),
               Param("reps", int, 12, "repetitions per (R, n)", low=4, high=1000),
               Param("n_max", int, 4000, "largest n (five sizes geometric from n_max/16)", low=160)],
       paper_profile={"reps": 100, "n_max": 30000, "points": 200}, validate=lambda p: _radii(p["radii"]))
def uniform_curves(p: dict, ctx: Context) -> Evidence:
    d, rho = p["d"], 0.1
    rng = ctx.rng("problem")
    A = rng.normal(0.0, 1.0 / np.sqrt(d), (d, d))
    V = np.eye(d) + rng.normal(0.0, 0.5 / np.sqrt(d), (d, d))
    law = GaussianLaw(np.zeros(d), rho * np.eye(d))
    n_values = geometric_sizes(p["n_max"] / 16, p["n_max"], 5)
    radii = _radii(p["radii"])
    level = 1 - 0.05 / len(radii)
    out, tests = [], []
    for i, R in enumerate(radii):
        X = ball_points(ctx.rng(f"points{i}"), d, R * np.sqrt(rho), p["points"])
        ref = ctx.theory.gaussian_moments(A, V, law.covariance, law.mean, 1.0, X)["attention_map"]
        e = ctx.numerics.uniform_errors(law, A, V, 1.0, n_values, p["reps"], X, ctx.seed_sequence(f"R{i}"),
                                        ref[None])[0]
        tests.append(curve_consistency(n_values, e, alpha=1e-3 / len(radii)))
        f = fit_slope(n_values, e, level=level)
        logc = np.log(e * np.sqrt(n_values)[:, None]).ravel()
        out.append(RadiusPoint(float(R), float(f.slope), tuple(map(float, f.interval)), level, float(logc.mean()),
                               float(logc.std(ddof=1) / np.sqrt(logc.size))))
    return consistency_evidence(tests, [f"R = {r:g} token standard deviations" for r in radii], "sup-error",
                                UniformFindings(tuple(int(n) for n in n_values), p["reps"], tuple(out)))


@claim(id="D.uniform_rate", paper="D", needs=("tsc.uniform_curves",),
       reads=lambda stated: one_of("direction", stated.get("direction", "upper"), ("upper",)),
       perturbations=lambda stated, _r: [Perturbation("rate 1/n", None, stated.restated("n**(-1)"))])
def uniform_rate_claim(results: dict, stated) -> ClaimVerdict:
    """The stated rate as an upper bound at every radius, and C(R)'s growth (module docstring)."""
    from attnverify.checks.tsc.claims import _measured, _sizes, stated_exponents

    f = results["tsc.uniform_curves"].findings
    p = stated_exponents(stated, np.zeros(len(f.radii)), f.n_values)
    R = np.array([r.R for r in f.radii])
    logc = np.array([r.log_constant for r in f.radii])
    growth_exp = float(np.polyfit(R, logc, 1)[0])
    growth_pow = float(np.polyfit(np.log(R), logc, 1)[0])
    rows = [{"R": r.R, "exponent": r.exponent, "interval": list(r.interval), "stated": float(q),
             "log_constant": r.log_constant, "log_constant_se": r.log_constant_se} for r, q in zip(f.radii, p)]
    ev = judges.common.evidence_of(stated, radii=rows, growth_per_unit_R=growth_exp, growth_power_of_R=growth_pow)
    bad = [r for r in rows if r["interval"][0] > r["stated"]]
    radius, const = sp.Symbol("R"), sp.Symbol("C")
    head = reason("sup-error exponents at ", Math(radius), " = ", listing(R), " (", *_sizes(f.n_values),
                  f", {f.reps} repetitions, intervals at level ", number_or_na(f.radii[0].level, 4), ")")
    if bad:
        r = bad[0]
        return ClaimVerdict("refuted", head.add(f": at {len(bad)} radii the sup error decays slower than stated"),
                            condition=reason(*_measured(r, "R", "exponent")), evidence=ev)
    # C(R) at each radius, in the order of the radii above (each printed: two radii may share a value)
    c = [p for i, v in enumerate(logc) for p in ([", "] * bool(i) + [number_or_na(np.exp(v), 3)])]
    return ClaimVerdict("holds", head.add(": the stated rate holds at every radius; ",
                                          Math(sp.Function("C")(radius)), " = ", *c, ": ", Math(sp.log(const)),
                                          " grows by ", number_or_na(growth_exp, 3), " per unit ", Math(radius), ", or like ",
                                          *measured_power(radius, growth_pow, 3)), evidence=ev)
