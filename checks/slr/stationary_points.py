"""Paper C, claim 7: the stationary points of the risk on S^{d-1} x S^{d-1}, on M and off M, and whether the oracle
is the lowest of them.

Analytic side: the theory object's ``stationary_points`` (attnverify.theory.slr.stationary): on M the reduced flow's
critical points (the origin, the corners); off M a documented search (every stationary point with kappa != 0 lies in
a 3-space up to a rotation fixing k*, v*: Riemannian Newton on S^2 x S^2 from many starts, refined in mpmath,
classified by the full Hessian in dimension d).

Numeric side (no closed form): at each point found, with k* = e1, v* = e2 and the point's representative (k, v)
embedded in R^6, the quadrature risk (the simulators' ``risk_quadrature``) along geodesics
x(t) = (x + t u) / |x + t u| for an orthonormal basis u of each tangent space (5 directions for k, 5 for v):
  * the directional derivatives by central differences at t and t/2, Richardson-extrapolated, give the Riemannian
    gradient; it must vanish: |grad| <= 10 x (|D(t/2) - D(t)| / 3 + 1e-13 R / (t/2)), the extrapolation's error
    estimate and the quadrature's rounding amplified by 1/t (t = 1e-3 / max(1, lam sqrt(d/2)));
  * the risk: |closed - quadrature| <= 1e-12 R (measured: at most 9.3e-15 R over the 86 points of the paper's lams,
    boundary points of the realisable set included, once the quadrature factors nearly singular covariances
    stably; it had lost up to 1.5e-8 R there);
  * at a point the search classifies as a minimum, the quadrature risk at (x(+-s) in N_DIR random tangent
    directions, s = 1e-2 / max(1, lam sqrt(d/2))) is not below the point's by more than 1e-12 R: no descent direction.
Findings per lam: the oracle's risk and kind, the off-M minima with their risk, and whether one lies below the oracle
(by more than the quadrature's precision).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, item, reason
from attnverify.checks.reason_values import number_or_na
from attnverify.checks.registry import check
from attnverify.checks.slr._model import MODEL_PARAMS, slr_model, validate_model
from attnverify.checks.slr.claims import LAM, MANIFOLD, RISK
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

DIM = 6
N_DIR = 24
REL = 1e-12           # risk: 100 x the quadrature's largest measured error (9.3e-15 R, boundary points included)

#: the mathematics of the reason: the step t of the differences, the vectors whose Gram matrix the quadrature needs
T_STEP, TIMES = Math(sp.Symbol("t")), Math(r"\times")
GRAM_VECTORS = Math(sp.Tuple(sp.Symbol("k"), sp.Symbol("v"), sp.Symbol("v^*")))
#: the metric's terms: the gradient's norm and the closed-form risk against the quadrature (LaTeX: SymPy would
#: order the difference by name)
GRAD_NORM = Math(sp.Abs(sp.Symbol(r"\nabla{R}")))
RISK_GAP = Math(r"|R_{\mathrm{closed}} - R_{\mathrm{quadrature}}|")
# the plot's labels: the ridge parameter lambda, the risk R, the manifold M, the sizes d and L
LAM_MATH, RISK_MATH, MANIFOLD_MATH = Math(LAM), Math(RISK), Math(MANIFOLD)
D_MATH, L_MATH = Math(sp.Symbol("d")), Math(sp.Symbol("L"))


def _embed(x) -> np.ndarray:
    out = np.zeros(DIM)
    out[:len(x)] = x
    return out / np.linalg.norm(out)


def _tangent_basis(x: np.ndarray) -> np.ndarray:
    q = np.linalg.qr(np.column_stack([x, np.eye(DIM)]))[0]
    return q[:, 1:].T                                          # (DIM - 1, DIM), orthonormal, orthogonal to x


def _geo(x: np.ndarray, u: np.ndarray, t: float) -> np.ndarray:
    y = x + t * u
    return y / np.linalg.norm(y)


def point_task(model_args: tuple, lam: float, k: tuple, v: tuple, minimum: bool, seed: np.random.SeedSequence,
               risk_quadrature) -> dict:
    """Numerics at one stationary point (``risk_quadrature``): quadrature risk, Riemannian gradient by extrapolated
    central differences (with its error estimate), and for a minimum the largest descent over random tangent
    directions; or {"untestable": reason} where the quadrature refuses the Gram matrix of (k, v, v*) as not PSD."""
    model = slr_model(*model_args)
    try:
        return _point_numerics(risk_quadrature, model, lam, k, v, minimum, seed)
    except ValueError as exc:       # the quadrature cannot resolve the Gram matrix at or next to this point
        return {"untestable": str(exc).splitlines()[0]}


def _point_numerics(risk_quadrature, model, lam: float, k: tuple, v: tuple, minimum: bool,
                    seed: np.random.SeedSequence) -> dict:
    from attnverify.numerics.slr.model import overlaps

    k0, v0 = _embed(k), _embed(v)
    e = np.eye(DIM)
    ks, vs = e[0], e[1]
    scale = max(1.0, lam * np.sqrt(model.d / 2))
    t = 1e-3 / scale

    def risk(pairs):
        ov = np.array([overlaps(a, b, ks, vs) for a, b in pairs])
        return risk_quadrature(model, ov, lam)

    r0 = float(risk([(k0, v0)])[0])
    dirs = [("k", u) for u in _tangent_basis(k0)] + [("v", u) for u in _tangent_basis(v0)]
    pairs = []
    for which, u in dirs:
        for s in (t, -t, t / 2, -t / 2):
            pairs.append((_geo(k0, u, s), v0) if which == "k" else (k0, _geo(v0, u, s)))
    R = risk(pairs).reshape(len(dirs), 4)
    d1 = (R[:, 0] - R[:, 1]) / (2 * t)
    d2 = (R[:, 2] - R[:, 3]) / t
    grad = (4 * d2 - d1) / 3
    err = np.abs(d2 - d1) / 3 + 1e-13 * abs(r0) / (t / 2)
    descent = 0.0
    if minimum:
        rng = np.random.default_rng(seed)
        s = 1e-2 / scale
        trial = []
        for _ in range(N_DIR):
            uk, uv = rng.standard_normal(DIM), rng.standard_normal(DIM)
            uk -= (uk @ k0) * k0
            uv -= (uv @ v0) * v0
            nrm = np.sqrt(uk @ uk + uv @ uv)
            trial += [(_geo(k0, sg * uk / nrm, s), _geo(v0, sg * uv / nrm, s)) for sg in (1.0, -1.0)]
        descent = float(max(0.0, r0 - float(np.min(risk(trial)))))
    return {"risk": r0, "grad_norm": float(np.linalg.norm(grad)), "grad_tol": float(10 * np.linalg.norm(err)),
            "descent": descent}


@dataclass(frozen=True)
class LamStationary:
    """The stationary points at one lam: the oracle's risk (quadrature) and kind (search), the off-M minima as
    (overlaps, risk by quadrature), the lowest of them, and whether it lies below the oracle."""

    lam: float
    oracle_risk: float
    oracle_kind: str
    off_M_minima: tuple[tuple[tuple[float, ...], float], ...]
    lowest_off_M_risk: float | None
    below_oracle: bool
    margin: float


@dataclass(frozen=True)
class StationaryFindings:
    per_lam: tuple[LamStationary, ...]
    max_over_tolerance: float
    params: tuple[float, int, int, float]


@check(
    id="slr.stationary_points",
    compares="The derived stationary points of R on the spheres (on M: the reduced flow's critical points; off M: the "
             "search in the 3-space they must lie in) are stationary points of the quadrature risk, with the derived "
             "risk, and the minima among them admit no descent direction",
    source="Paper C, claim 7 (is the oracle the minimiser?)",
    params=[*(q for q in MODEL_PARAMS if q.name != "lam"),
            Param("lams", "floats", (0.05, 0.9), "temperatures lam", low=1e-3, high=20.0),
            Param("n_starts", int, 48, "starts of the search per lam", low=4, high=100_000)],
    paper_profile={"lams": (0.05, 0.08, 0.09, 0.1, 0.3, 0.5, 0.85, 0.9, 1.0), "n_starts": 256},
    validate=validate_model,
    formulas=('R', r'\mathrm{crit}_M'),
    theory=THEORY, numerics=NUMERICS,
)
def stationary_points(p: dict, ctx: Context) -> Evidence:
    search = ctx.theory.stationary_points
    gamma, d, L, eps = float(p["gamma"]), int(p["d"]), int(p["L"]), float(p["eps"])
    lams = tuple(sorted(set(float(x) for x in p["lams"])))
    worst, per_lam, rows, untested = 0.0, [], [], []
    seeds = ctx.seeds(len(lams), "directions")
    for i, lam in enumerate(lams):
        found = search(lam, gamma, d, L, eps, n_starts=p["n_starts"], seed=int(ctx.rng(f"search{i}").integers(2**31)))
        pts = [pt for pt in found.points if pt.kind != "maximum"]
        tasks = [((gamma, d, L, eps), lam, pt.k, pt.v, pt.kind == "minimum", seeds[i], ctx.numerics.risk_quadrature)
                 for pt in pts]
        num = ctx.map(point_task, tasks)
        oracle_risk, oracle_kind, minima = None, "", []
        for pt, nm in zip(pts, num):
            if "untestable" in nm:
                untested.append({"lam": lam, "overlaps": pt.overlaps, "kind": pt.kind, "why": nm["untestable"]})
                continue
            r_tol = REL * abs(nm["risk"])
            ratio = max(nm["grad_norm"] / nm["grad_tol"], abs(pt.risk - nm["risk"]) / r_tol,
                        nm["descent"] / r_tol if pt.kind == "minimum" else 0.0)
            worst = max(worst, ratio)
            rows.append({"lam": lam, "overlaps": pt.overlaps, "kind": pt.kind, "index": pt.index, "on_M": pt.on_M,
                         "risk_closed": pt.risk, "risk_quadrature": nm["risk"], "grad_norm_fd": nm["grad_norm"],
                         "grad_tolerance": nm["grad_tol"], "descent": nm["descent"], "ratio": ratio})
            if pt.on_M and pt.overlaps[:2] == (1.0, 1.0):
                oracle_risk, oracle_kind = nm["risk"], pt.kind
            elif not pt.on_M and pt.kind == "minimum":
                minima.append((tuple(round(x, 6) for x in pt.overlaps), nm["risk"]))
        lowest = min((r for _, r in minima), default=None)
        oracle_risk = float("nan") if oracle_risk is None else oracle_risk
        margin = REL * abs(oracle_risk) * 10
        per_lam.append(LamStationary(lam, float(oracle_risk), oracle_kind, tuple(minima), lowest,
                                     bool(lowest is not None and lowest < oracle_risk - margin), margin))
        ctx.progress((i + 1) / len(lams))
    per_lam_items = [item(Math(LAM), " = ", Number(x.lam, digits=6), f": oracle {x.oracle_kind} (", Math(RISK),
                          " = ", number_or_na(x.oracle_risk, 6), ")",
                          (", lowest off-", Math(MANIFOLD), " minimum ", Math(RISK), " = ",
                           number_or_na(x.lowest_off_M_risk, 6)) if x.lowest_off_M_risk is not None
                          else (", no off-", Math(MANIFOLD), " minimum"))
                     for x in per_lam]                # one item per lam
    bad = [u for u in untested if u["kind"] == "minimum" or (u["overlaps"][:2] == (1.0, 1.0) and u["kind"] != "")]
    unresolved = reason(Number(len(bad)), " minima or the oracle cannot be evaluated by the quadrature (",
                        bad[0]["why"], ")") if bad else None
    not_testable = item("; ", Number(len(untested)), " saddle point(s) not testable by the quadrature (the Gram "
                        "matrix of ", GRAM_VECTORS, " is not PSD to ", Number(1e-10), " at the point or next to it), "
                        "listed in the details") if untested else ()
    return Evidence(
        metric=reason("max over points of (", GRAD_NORM, " / its tolerance, ", RISK_GAP, " / ", Number(REL, digits=6),
                      " ", Math(RISK), ", descent / ", Number(REL, digits=6), " ", Math(RISK), ")"),
        observed=float(worst), threshold=1.0,
        reason=reason("gradient tolerance ", Number(10), " ", TIMES, " (Richardson error estimate + quadrature "
                      "rounding / ", T_STEP, "); risk within ", Number(100), " ", TIMES, " the quadrature's measured "
                      "precision, ", Number(REL, digits=6), " ", Math(RISK), "; no descent beyond ",
                      Number(REL, digits=6), " ", Math(RISK), " in ", Number(N_DIR), " random tangent directions at a "
                      "minimum", *not_testable, ".", items=per_lam_items),
        passed=bool(worst <= 1.0),
        details={"points": rows, "untestable": untested}, unresolved=unresolved,
        plots=[Plot(title=reason("stationary points by ", LAM_MATH, " (", D_MATH, " = ", Number(d), ", ", L_MATH, " = ",
                                 Number(L), "): risk by quadrature"), xlabel=reason(LAM_MATH),
                    ylabel=reason(RISK_MATH),
                    series=[Series("oracle", [x.lam for x in per_lam], [x.oracle_risk for x in per_lam],
                                               style="o-"),
                                        Series(reason("off-", MANIFOLD_MATH, " minima"),
                                               [r["lam"] for r in rows if not r["on_M"]
                                                                and r["kind"] == "minimum"],
                                               [r["risk_quadrature"] for r in rows if not r["on_M"]
                                                and r["kind"] == "minimum"], style="s")], logx=True)],
        findings=StationaryFindings(tuple(per_lam), float(worst), (gamma, d, L, eps)),
    )



