"""Paper C, claim 1: the population risk R(k, v) = E (Y - T_{k,v}(X))^2 in closed form, against quadrature.

Analytic side: the theory object's ``risk`` (attnverify.theory.slr), evaluated in float64 by its ``risk_evaluator``.

Numeric side: the simulators' ``risk_quadrature`` (attnverify.numerics.slr.quadrature), the same expectation by
Gauss-Hermite (or panel) quadrature of the integrands as defined (a Cholesky factor and the model's Gaussians; no
Gaussian-erf identity). Decision: |closed - quadrature| / quadrature <= max(10 x refinement spread, REL_FLOOR) at
every point, the spread being the larger relative change of the quadrature under doubling the nodes and under the
panel rule. REL_FLOOR = 1e-12 is 80 x the largest relative difference measured over the default grid and up to
lam = 20 (1.2e-14, float64 rounding of both sides).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.reason_values import number_or_na
from attnverify.checks.registry import check
from attnverify.checks.slr._model import grid_cells, model_options, points_with_oracle, slr_model, validate_model
from attnverify.checks.slr.claims import LAM
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

REL_FLOOR = 1e-12
#: the signs of the threshold (LaTeX: SymPy has no bare max nor times sign)
MAX, TIMES = Math(r"\max"), Math(r"\times")
RELATIVE_GAP = Math(r"|\mathrm{closed} - \mathrm{quadrature}| / \mathrm{quadrature}")   # LaTeX: words in the maths
HERMITE_SLOPE_MAX = 5.0          # above lam max(1, gamma) = 5 the panel rule is used (the Hermite node count grows)


@dataclass(frozen=True)
class QuadratureFindings:
    max_relative_difference: float
    max_over_threshold: float
    n_points: int


def _quadrature(risk_quadrature, model, ov: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(risk, refinement spread) by ``risk_quadrature``: Gauss-Hermite at the default nodes against twice as many and
    the panel rule (slopes up to HERMITE_SLOPE_MAX), or the panel rule against Gauss-Hermite at its largest node
    count."""
    from attnverify.numerics.slr.quadrature import MAX_NODES, default_nodes

    slope = lam * max(1.0, model.gamma)
    panels = risk_quadrature(model, ov, lam, rule="panels")
    if slope <= HERMITE_SLOPE_MAX:
        n = default_nodes(model, lam)
        q = risk_quadrature(model, ov, lam, n_nodes=n)
        q2 = risk_quadrature(model, ov, lam, n_nodes=min(2 * n, MAX_NODES))
        return q, np.maximum(np.abs(q - q2), np.abs(q - panels)) / np.abs(q)
    other = risk_quadrature(model, ov, lam, n_nodes=MAX_NODES) if 60 + 60 * slope ** 2 <= 2 * MAX_NODES else panels
    return panels, np.abs(panels - other) / np.abs(panels)


@check(
    id="slr.risk_vs_quadrature",
    compares="The closed-form risk equals the population risk computed by quadrature of the Gaussian integrals as "
             "defined, to float64 precision, over (d, L, lam, gamma) and random overlaps",
    source="Paper C, claim 1",
    params=[*model_options(only=("eps",)),
            Param("ds", "ints", (4, 400), "token dimensions d", low=4, high=100_000),
            Param("Ls", "ints", (1, 10), "sequence lengths L", low=1, high=10_000),
            Param("lams", "floats", (0.05, 0.9, 2.0, 20.0), "temperatures lam", low=1e-3, high=100.0),
            Param("gammas", "floats", (0.3, 0.7071067811865476, 1.3), "informative-token noise gamma", low=1e-2,
                  high=10.0),
            Param("n_points", int, 6, "random (k, v) per grid cell (plus the oracle and a point on M)", low=1,
                  high=1000)],
    paper_profile={"n_points": 10, "ds": (4, 50, 400, 5000), "Ls": (1, 2, 10, 100)},
    validate=validate_model,
    formulas=('R', r'\zeta'),
    theory=THEORY, numerics=NUMERICS,
)
def risk_vs_quadrature(p: dict, ctx: Context) -> Evidence:
    cells = grid_cells(p)
    rng = ctx.rng("points")
    rel, thr, closed_all, quad_all = [], [], [], []
    for i, (d, L, lam, g) in enumerate(cells):
        ov = points_with_oracle(rng, p["n_points"])
        q, spread = _quadrature(ctx.numerics.risk_quadrature, slr_model(g, d, L, p["eps"]), ov, lam)
        c = ctx.theory.risk_evaluator(lam, g, d, L, p["eps"]).risk(ov)
        rel.append(np.abs(c - q) / np.abs(q))
        thr.append(np.maximum(10.0 * spread, REL_FLOOR))
        closed_all.append(c)
        quad_all.append(q)
        ctx.progress((i + 1) / len(cells))
    rel, thr = np.concatenate(rel), np.concatenate(thr)
    ratio = rel / thr
    worst = float(np.max(ratio))
    return Evidence(
        metric=reason("max over points of ", RELATIVE_GAP, ", relative to its threshold"),
        observed=worst, threshold=1.0,
        reason=reason("threshold per point ", MAX, "(", Number(10), " ", TIMES, " refinement spread, ",
                      Number(REL_FLOOR, digits=6), "); the floor is ", Number(80), " ", TIMES, " the largest "
                      "difference measured over the grid up to ", Math(LAM), " = ", Number(20), " (float64 rounding "
                      "of both sides); the largest relative difference here is ", number_or_na(float(np.max(rel)), 3)),
        passed=bool(worst <= 1.0), analytic=closed_all, numeric=quad_all,
        details={"relative_difference": rel, "threshold": thr, "cells": cells},
        plots=[Plot(title=reason(RELATIVE_GAP), xlabel="point", ylabel="relative difference",
                    series=[Series("relative difference", np.arange(rel.size), np.maximum(rel, 1e-18), style="o"),
                            Series("threshold", np.arange(rel.size), thr, style="-")], logy=True)],
        findings=QuadratureFindings(float(np.max(rel)), worst, int(rel.size)),
    )
