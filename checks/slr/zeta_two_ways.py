"""Paper C: zeta_sigma(t) = E erf(t + sigma Z)^2, derived two ways, against the quadrature of its definition.

Analytic side: the theory object's ``zeta_mp`` (attnverify.theory.slr.gauss): route (a), 1 - int_|t|^oo zeta'(u) du
with the elementary zeta' derived by completing the square, and route (b), 1 - 8 T(sqrt2 t / sqrt(1 + 2 sigma^2),
1 / sqrt(1 + 4 sigma^2)) through Owen's T; both evaluated by mpmath at ``dps`` digits (quadratures of different
integrands).

Numeric side: the simulators' ``erf_square_mean`` (attnverify.numerics.slr.zeta): the definition
int erf(t + sigma z)^2 phi(z) dz by a composite Gauss-Legendre rule in float64 (no Gaussian-erf identity), with its
error estimated by halving the panel width (``quadrature_error``).

Decision, at every (t, sigma) of the grid:
  * the two routes agree to 10^-(dps - 5): each is an mpmath quadrature at dps digits whose error is far below
    10^-(dps - 5) for these smooth integrands (the margin of 5 digits covers the condition of 1 - int near zeta = 1);
  * the float64 quadrature agrees with route (b) to 10 x its refinement error + 20 ulp: the refinement error
    bounds the rule's truncation, 20 ulp the rounding of a weighted sum of a few thousand terms of size <= 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.registry import check
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

ULPS = 20 * np.finfo(float).eps
# the plot's labels: zeta_sigma(t), zeta, sigma and the time t
_T, _SIGMA = sp.Symbol("t"), sp.Symbol("sigma")
ZETA_OF_T, ZETA, SIGMA, T_MATH = Math(sp.Function("zeta_sigma")(_T)), Math(sp.Symbol("zeta")), Math(_SIGMA), Math(_T)


@dataclass(frozen=True)
class ZetaFindings:
    """Agreement of the two derived routes and of the quadrature of the definition."""

    max_route_difference: float
    route_threshold: float
    max_quadrature_excess: float      # max |route (b) - quadrature| / its per-point threshold
    symbolic_routes_residual_zero: bool
    n_points: int


@check(
    id="slr.zeta_two_ways",
    compares="zeta_sigma(t) = E erf(t + sigma Z)^2 derived two ways (integral of the elementary zeta', Owen's T) agrees "
             "at high precision, and with the float64 quadrature of its definition",
    source="Paper C, derivation of the risk (the square of erf)",
    params=[Param("ts", "floats", (0.0, 0.3, 1.0, 2.5, -4.0, 12.0), "points t (zeta is even in t)"),
            Param("sigmas", "floats", (0.05, 0.7071067811865476, 1.5, 6.0), "points sigma", low=1e-3, high=1e3),
            Param("dps", int, 40, "mpmath digits of the two routes", low=20, high=200)],
    paper_profile={"ts": (0.0, 0.1, 0.3, 0.7, 1.0, 1.7, 2.5, 4.0, -4.0, 8.0, 12.0, 30.0),
           "sigmas": (0.01, 0.05, 0.2, 0.7071067811865476, 1.5, 6.0, 40.0)},
    formulas=(r"\zeta'", r'\zeta', r'\zeta(0)'),
    theory=THEORY, numerics=NUMERICS,
)
def zeta_two_ways(p: dict, ctx: Context) -> Evidence:
    zeta_mp = ctx.theory.zeta_mp
    T, S = np.meshgrid(np.asarray(p["ts"], float), np.asarray(p["sigmas"], float), indexing="ij")
    t, s = T.ravel(), S.ravel()
    with mpmath.workdps(p["dps"]):
        a = [zeta_mp(ti, si, "integral") for ti, si in zip(t, s)]
        b = [zeta_mp(ti, si, "owen") for ti, si in zip(t, s)]
        route_diff = np.array([float(abs(x - y)) for x, y in zip(a, b)])
        derived = np.array([float(y) for y in b])
    ctx.progress(0.5)
    quad = ctx.numerics.erf_square_mean(t, s)
    qerr = ctx.numerics.quadrature_error(t, s)
    q_threshold = 10.0 * qerr + ULPS * np.maximum(1.0, np.abs(quad))
    excess = np.abs(derived - quad) / q_threshold
    route_threshold = 10.0 ** (-(p["dps"] - 5))
    sym = ctx.theory.owen_route()["routes_residual"] == 0
    passed = bool(np.max(route_diff) <= route_threshold and np.max(excess) <= 1.0)
    plots = [Plot(title=reason(ZETA_OF_T, ": route (b) and the quadrature of the definition"), xlabel=reason(T_MATH),
                  ylabel=reason(ZETA),
                  series=[Series(reason(SIGMA, " = ", Number(float(sg), digits=6), ", Owen's T"), T[:, j],
                                 derived.reshape(T.shape)[:, j], style="-") for j, sg in enumerate(S[0])]
                  + [Series(reason(SIGMA, " = ", Number(float(sg), digits=6), ", quadrature"), T[:, j],
                            quad.reshape(T.shape)[:, j], style="o") for j, sg in enumerate(S[0])])]
    order = np.argsort(T[:, 0])
    plots[0].series = [Series(x.label, np.asarray(x.x)[order], np.asarray(x.y)[order], style=x.style)
                       for x in plots[0].series]
    return Evidence(
        metric=reason("max over the grid of ", Math(r"|\text{route (b)} - \mathrm{quadrature}|"), " / (", Number(10),
                      " ", Math(r"\times"), " refinement error + ", Number(20), " ulp)"),
        observed=float(np.max(excess)), threshold=1.0,
        reason=reason("the float64 quadrature of the definition is accurate to its refinement error (halved "
                      "panels) plus the rounding of its weighted sum (", Number(20), " ulp); also required: the two "
                      "derived routes agree to ", Number(route_threshold, digits=6), " at ", Number(p["dps"]),
                      " digits (observed ", Number(float(np.max(route_diff)), digits=3), ")"),
        passed=passed, analytic=derived, numeric=quad, uncertainty=q_threshold / 10.0,
        details={"t": t, "sigma": s, "route_difference": route_diff, "route_threshold": route_threshold,
                 "quadrature_error_estimate": qerr, "symbolic_routes_residual_zero": sym},
        plots=plots,
        findings=ZetaFindings(float(np.max(route_diff)), route_threshold, float(np.max(excess)), sym, int(t.size)),
    )
