"""Paper C: the gradient of the risk in the overlaps (what projected gradient descent follows), against finite
differences of the quadrature risk.

Analytic side: the partials dR/d(kappa, nu, theta, eta, rho) of the theory object's closed-form risk
(attnverify.theory.slr.population ``gradient``), evaluated by its ``risk_evaluator``.

Numeric side: central differences of the quadrature risk (the simulators' ``risk_gradient_fd``,
attnverify.numerics.slr.quadrature, no closed form) at steps h, h/2, h/4 (h = 3e-3 / max(1, lam sqrt(d/2)), the width
of the erf transition in kappa), combined by Richardson extrapolation twice: R1 from (h, h/2), R2 from (h/2, h/4);
the error of R2 is estimated by |R2 - R1| / 15 (its O(h^4) term) plus the quadrature's rounding 1e-14 R amplified by
1/h. Decision: at every point and partial |closed - R2| <= 10 x (|R2 - R1| / 15 + 1e-13 R / (h/4)). Points: interior
random overlaps (Gram matrix of (k, v, k*, v*) with smallest eigenvalue >= 0.05, so every overlap can move by h) and
points of M, where the closed form's normal partials R_theta, R_eta, R_rho are 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.registry import check
from attnverify.checks.slr._model import GAMMA_PAPER, model_options, random_overlaps, slr_model, validate_model
from attnverify.checks.slr.claims import DIM, LAM, LENGTH, STEP
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY


#: the mathematics of the tolerance: the extrapolation's O(h^4) error estimate |R2 - R1|/15 (R1, R2 the Richardson
#: combinations), the quadrature's rounding amplified by the smallest step (LaTeX: SymPy writes R/(h/4) as 4R/h)
#: and the grid of the refinement study
H4_ERROR = Math(sp.Function("O")(STEP ** 4))
RICHARDSON_ESTIMATE = Math(sp.Abs(sp.Symbol("R_2") - sp.Symbol("R_1")) / 15)
ROUNDING_OVER_STEP = Math(r"\frac{R}{h/4}")
TIMES, GEQ = Math(r"\times"), Math(r"\geq")
IDENTITY = Math(sp.Eq(sp.Symbol("y"), sp.Symbol("x")))          # the plot's identity line y = x
STUDY_GRID = Math(sp.Contains(sp.Tuple(DIM, LENGTH, LAM),
                              sp.ProductSet(sp.FiniteSet(6, 50, 400), sp.FiniteSet(3, 5, 10),
                                            sp.FiniteSet(sp.Float(0.1), sp.Float(0.5), sp.Float(0.9), 2)),
                              evaluate=False))


@dataclass(frozen=True)
class GradientFindings:
    """The largest |closed - finite differences| / tolerance, and the largest normal partial measured on M."""

    max_over_tolerance: float
    max_normal_partial_on_M: float
    normal_partial_tolerance: float
    n_points: int


def _fd(risk_gradient_fd, model, ov: np.ndarray, lam: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(Richardson-extrapolated central differences, error estimate) of the quadrature risk's partials
    (``risk_gradient_fd``)."""
    g = [risk_gradient_fd(model, ov, lam, h=h / 2 ** j) for j in range(3)]
    r1, r2 = (4 * g[1] - g[0]) / 3, (4 * g[2] - g[1]) / 3
    return r2, np.abs(r2 - r1) / 15


@check(
    id="slr.gradient_vs_quadrature",
    compares="The partials of the closed-form risk in the five overlaps equal finite differences of the quadrature "
             "risk; on M the normal partials dR/dtheta, dR/deta, dR/drho vanish",
    source="Paper C, claims 1 and 4 (the gradient that drives the dynamics)",
    params=[*model_options(only=("eps",)),
            Param("ds", "ints", (6, 400), "token dimensions d", low=4, high=100_000),
            Param("Ls", "ints", (3, 10), "sequence lengths L", low=1, high=10_000),
            Param("lams", "floats", (0.1, 0.9, 2.0), "temperatures lam", low=1e-3, high=5.0),
            Param("gamma", float, GAMMA_PAPER, "informative-token noise gamma", low=1e-2, high=3.0),
            Param("n_points", int, 4, "interior random points per cell (plus two points of M)", low=1, high=200)],
    paper_profile={"n_points": 12, "Ls": (1, 3, 10)},
    validate=validate_model,
    formulas=('R', r'\nabla_{\perp} R|_M', r'R = \sum c_m(\kappa) m'),
    theory=THEORY, numerics=NUMERICS,
)
def gradient_vs_quadrature(p: dict, ctx: Context) -> Evidence:
    rng = ctx.rng("points")
    cells = [(d, L, lam) for d in p["ds"] for L in p["Ls"] for lam in p["lams"]]
    ratios, normal, normal_tol, rows = [], [], [], []
    for i, (d, L, lam) in enumerate(cells):
        on_m = np.column_stack([rng.uniform(-0.8, 0.8, 2), rng.uniform(-0.8, 0.8, 2), np.zeros((2, 3))])
        ov = np.vstack([random_overlaps(rng, p["n_points"], margin=0.05), on_m])
        model = slr_model(p["gamma"], d, L, p["eps"])
        ev = ctx.theory.risk_evaluator(lam, p["gamma"], d, L, p["eps"])
        h = 3e-3 / max(1.0, lam * np.sqrt(d / 2))
        fd, err = _fd(ctx.numerics.risk_gradient_fd, model, ov, lam, h)
        closed = ev.gradient(ov)
        tol = 10.0 * (err + 1e-13 * np.abs(ev.risk(ov))[:, None] / (h / 4))
        ratios.append(np.abs(closed - fd) / tol)
        normal.append(np.abs(fd[-2:, 2:]))
        normal_tol.append(tol[-2:, 2:])
        rows.append({"d": d, "L": L, "lam": lam, "overlaps": ov, "closed": closed, "fd": fd, "tolerance": tol})
        ctx.progress((i + 1) / len(cells))
    ratio = np.concatenate([r.ravel() for r in ratios])
    worst = float(np.max(ratio))
    nmax = float(max(np.max(x) for x in normal))
    ntol = float(max(np.max(x) for x in normal_tol))
    allc = np.concatenate([r["closed"].ravel() for r in rows])
    allf = np.concatenate([r["fd"].ravel() for r in rows])
    return Evidence(
        metric=reason("max over points and partials of ", Math(r"|\mathrm{closed} - \text{Richardson FD}|"),
                      " / tolerance"), observed=worst, threshold=1.0,
        reason=reason("tolerance ", Number(10), " ", TIMES, " (the ", H4_ERROR, " error estimate ",
                      RICHARDSON_ESTIMATE, " of the twice-extrapolated central differences + the quadrature rounding ",
                      Number(1e-13), " ", ROUNDING_OVER_STEP, "); the estimate exceeded the true error by a factor ",
                      GEQ, " ", Number(4), " in the refinement study over ", STUDY_GRID),
        passed=bool(worst <= 1.0), analytic=allc, numeric=allf,
        details={"cells": rows, "max_normal_partial_on_M_fd": nmax},
        plots=[Plot(title="closed-form partials against finite differences of the quadrature risk",
                    xlabel="closed-form partial", ylabel="finite differences",
                    series=[Series("partials", allc, allf, style="o"),
                            Series(reason(IDENTITY), [allc.min(), allc.max()], [allc.min(), allc.max()],
                                   style="-")])],
        findings=GradientFindings(worst, nmax, ntol, int(sum(len(r["overlaps"]) for r in rows))),
    )
