"""Paper C, claim 7: the Riemannian Hessian of the risk at the oracle (k*, v*), and where the oracle stops being a
local minimum as lam grows.

Analytic side: the theory object's ``oracle_hessian`` and ``oracle_local_min_scan`` (attnverify.theory.slr.oracle): the
Hessian quadratic form along normalised curves through the oracle,
k(t) = (k* + t (a v* + p e3)) / |.|, v(t) = (v* + t (b k* + q e3 + r e4)) / |.|, in closed form: -R_kappa on the
d - 2 directions p, -R_nu on the d - 2 directions q, r, and a 2 x 2 block in (a, b). Its smallest eigenvalue changes
sign at lam*, enclosed in ball arithmetic (oracle_local_min_scan: interval Newton on det of the block, FLINT/Arb).

Numeric side: second differences of the quadrature risk (the simulators' ``risk_quadrature``, no closed form) along
the same curves, the overlaps computed from explicit vectors in R^5 (attnverify.numerics.slr.model.overlaps):
Q(u) = (R(t) - 2 R(0) + R(-t)) / t^2 -> u^T H u (the gradient vanishes at the oracle, so the curves' accelerations do
not enter). Entries: H_aa = Q(e_a), H_bb = Q(e_b), H_ab = (Q(e_a + e_b) - Q(e_a) - Q(e_b)) / 2, -R_kappa = Q(e_p),
-R_nu = Q(e_q). Steps t, t/2, t/4 with t = 0.02 / max(1, lam sqrt(d/2)) (the width of the erf transition at the
oracle), Richardson-extrapolated twice.

Decision: at every lam of the grid and every entry, |closed - FD| <= 10 (|R2 - R1| / 15 + 4e-14 R / (t/4)^2)
+ 1e-13 |H|: the first term is the O(t^4) error estimate of the extrapolation, the second the quadrature's
rounding (1e-14 R, measured; R the largest risk on the smallest step's stencil) amplified by the second difference,
the third the closed form's own rounding (|H| the largest entry: at eps = 0 the risk vanishes along a direction, the
second differences are exactly 0 with no error estimate, and the closed form's 1.9e-64 there was read as infinitely
many tolerances); measured errors over lam in {0.5, 0.88, 0.9, 1.5} are ~1e-8, the
tolerance ~1e-5, while the smallest block eigenvalue near lam* is ~2e-2 (so its sign is resolved). Also required:
where the FD smallest eigenvalue is resolved (|value| > tolerance), its sign agrees with the certified status.
Findings: the certified bracket of lam* and the measured one (the grid interval where the FD sign changes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, listing, reason
from attnverify.checks.registry import check
from attnverify.checks.slr._model import MODEL_PARAMS, slr_model, validate_model
from attnverify.checks.slr.claims import LAM
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

#: the closed form's rounding, relative to the Hessian's largest entry (its terms cancel to about 1e-16 of it)
CLOSED_ROUNDING = 1e-13
DIRECTIONS = {"a": (1, 0, 0, 0, 0), "b": (0, 0, 1, 0, 0), "ab": (1, 0, 1, 0, 0), "p": (0, 1, 0, 0, 0),
              "q": (0, 0, 0, 1, 0)}

#: the mathematics of the tolerance: the extrapolation's O(t^4) error estimate and the quadrature's rounding amplified
#: by the second difference at the smallest step (LaTeX: SymPy writes R / (t/4)^2 as 16 R / t^2)
T4_ERROR = Math(sp.Function("O")(sp.Symbol("t") ** 4))
ROUNDING_OVER_STEP = Math(r"R/(t/4)^{2}")
TIMES = Math(r"\times")
CLOSED_MINUS_FD = Math(r"|\mathrm{closed} - \mathrm{FD}|")      # LaTeX: words in an absolute value
# the plot's labels: the ridge parameter lambda, the sizes d and L
LAM_MATH, D_MATH, L_MATH = Math(LAM), Math(sp.Symbol("d")), Math(sp.Symbol("L"))


def curve_overlaps(u: tuple, t: float) -> np.ndarray:
    """Overlaps of (k(t), v(t)) on the curve with tangent coordinates u = (a, p, b, q, r), from vectors in R^5."""
    from attnverify.numerics.slr.model import overlaps

    a, p, b, q, r = u
    e = np.eye(5)
    k = e[0] + t * (a * e[1] + p * e[2])
    v = e[1] + t * (b * e[0] + q * e[2] + r * e[3])
    return overlaps(k / np.linalg.norm(k), v / np.linalg.norm(v), e[0], e[1])


def fd_hessian(model_args: tuple, lam: float, risk_quadrature) -> dict:
    """The Hessian entries at the oracle by twice-extrapolated second differences of the quadrature risk
    (``risk_quadrature``), with error estimates (numerics only): name -> (value, extrapolation error, rounding
    term)."""
    model = slr_model(*model_args)
    t0 = 0.02 / max(1.0, lam * np.sqrt(model.d / 2))
    out = {}
    for name, u in DIRECTIONS.items():
        qs, r0 = [], 0.0
        for j in range(3):
            t = t0 / 2 ** j
            R = risk_quadrature(model, np.array([curve_overlaps(u, s) for s in (t, 0.0, -t)]), lam)
            qs.append((R[0] - 2 * R[1] + R[2]) / t ** 2)
            r0 = float(np.max(np.abs(R)))
        r1, r2 = (4 * qs[1] - qs[0]) / 3, (4 * qs[2] - qs[1]) / 3
        out[name] = (float(r2), float(abs(r2 - r1) / 15), 4e-14 * abs(r0) / (t0 / 4) ** 2)
    a, b, ab = out["a"], out["b"], out["ab"]
    out["B"] = ((ab[0] - a[0] - b[0]) / 2, (ab[1] + a[1] + b[1]) / 2, (ab[2] + a[2] + b[2]) / 2)
    return out


@dataclass(frozen=True)
class OracleFindings:
    """lam* (where the oracle stops being a strict local minimum): the certified enclosure(s) of the zeros of the
    block's determinant in the lam range, and the measured bracket (grid interval where the FD smallest eigenvalue
    changes sign); per lam of the grid the smallest block eigenvalue, closed form and FD, and the certified status."""

    lams: tuple[float, ...]
    smallest_closed: tuple[float, ...]
    smallest_fd: tuple[float, ...]
    smallest_tolerance: tuple[float, ...]
    certified_status: tuple[str, ...]
    certified_brackets: tuple[tuple[float, float], ...]
    measured_bracket: tuple[float, float] | None
    max_over_tolerance: float
    params: tuple[float, float, int, int, float]


@check(
    id="slr.oracle_hessian",
    compares="The Riemannian Hessian of R at the oracle (k*, v*) has the derived closed form (second differences of the "
             "quadrature risk along curves), and its smallest eigenvalue changes sign at the certified lam*",
    source="Paper C, claim 7 (the oracle as a minimiser)",
    params=[*(q for q in MODEL_PARAMS if q.name != "lam"),
            Param("lams", "floats", (0.5, 0.88, 0.9, 1.5), "temperatures lam of the grid", low=1e-3, high=50.0),
            Param("scan_grid", int, 12, "geometric boxes of the certified lam-scan over the grid's range", low=2,
                  high=2000)],
    paper_profile={"lams": (0.05, 0.1, 0.3, 0.5, 0.8, 0.88, 0.89, 0.895, 0.9, 1.0, 1.5, 3.0), "scan_grid": 200},
    validate=validate_model,
    formulas=(r'\lambda_\perp', 'H_{ab}'),
    theory=THEORY, numerics=NUMERICS,
)
def oracle_hessian(p: dict, ctx: Context) -> Evidence:
    closed_hessian, oracle_local_min_scan = ctx.theory.oracle_hessian, ctx.theory.oracle_local_min_scan
    gamma, d, L, eps = float(p["gamma"]), int(p["d"]), int(p["L"]), float(p["eps"])
    lams = tuple(sorted(set(float(x) for x in p["lams"])))
    fds = ctx.map(fd_hessian, [((gamma, d, L, eps), lam, ctx.numerics.risk_quadrature) for lam in lams])
    worst, small_c, small_f, small_t, rows, broken = 0.0, [], [], [], [], []
    for lam, fd in zip(lams, fds):
        h = closed_hessian(lam, gamma, d, L, eps)
        closed = {"a": h.block[0][0], "b": h.block[1][1], "B": h.block[0][1], "p": h.eigenvalues[0],
                  "q": h.eigenvalues[1]}
        floor = CLOSED_ROUNDING * max(max(abs(v) for v in closed.values()), np.finfo(float).tiny)
        tol = {k: 10.0 * (fd[k][1] + fd[k][2]) + floor for k in closed}
        ratios = {k: abs(closed[k] - fd[k][0]) / tol[k] for k in closed}
        broken += [(lam, k) for k, r in ratios.items() if not math.isfinite(r)]   # max() would drop a NaN
        ratio = max((r for r in ratios.values() if math.isfinite(r)), default=0.0)
        worst = max(worst, ratio)
        blk = np.array([[fd["a"][0], fd["B"][0]], [fd["B"][0], fd["b"][0]]])
        small_c.append(float(h.eigenvalues[2]))
        small_f.append(float(np.linalg.eigvalsh(blk)[0]))
        small_t.append(float(tol["a"] + tol["b"] + 2 * tol["B"]))
        rows.append({"lam": lam, "closed": closed, "fd": {k: fd[k][0] for k in closed}, "tolerance": tol,
                     "ratio": ratio})
    ctx.progress(0.6)
    try:
        scan = oracle_local_min_scan(gamma, d, L, eps, lam_lo=lams[0] * (1 - 1e-9), lam_hi=lams[-1] * (1 + 1e-9),
                                     n_grid=p["scan_grid"])
        scan_error = ""
    except (ArithmeticError, ValueError) as exc:      # the certified status cannot be read from the closed form
        scan, scan_error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0]}"

    def status(lam: float) -> str:
        if scan is None:
            return "unknown"
        if any(a <= lam <= b for a, b in scan.minimum):
            return "minimum"
        if any(a <= lam <= b for a, b in scan.saddle):
            return "saddle"
        return "at lam*"
    cert = tuple(status(lam) for lam in lams)
    sign_clash = [lam for lam, st, f, t in zip(lams, cert, small_f, small_t)
                  if abs(f) > t and ((f > 0) != (st == "minimum")) and st in ("minimum", "saddle")]
    measured = None
    for i in range(len(lams) - 1):
        if small_f[i] > small_t[i] and small_f[i + 1] < -small_t[i + 1]:
            measured = (lams[i], lams[i + 1])
            break
    passed = worst <= 1.0 and not sign_clash and not broken
    unresolved = None
    if scan is None and passed:
        unresolved = reason("the certified ", Math(LAM), "-scan could not be read (", scan_error, ") although the "
                            "entries agree")
    return Evidence(
        metric=reason("max over ", Math(LAM), " and Hessian entries of ", CLOSED_MINUS_FD, " / tolerance"),
        observed=float(worst), threshold=1.0,
        reason=reason("tolerance ", Number(10), " ", TIMES, " (the ", T4_ERROR, " error estimate of the "
                      "twice-extrapolated second differences + the quadrature rounding ", Number(4e-14), " ",
                      ROUNDING_OVER_STEP, ") + the closed form's rounding ", Number(CLOSED_ROUNDING), " of its "
                      "largest entry; also required: the sign of every resolved FD smallest eigenvalue agrees "
                      "with the certified status",
                      (" (clash at ", Math(LAM), " = ", listing(sign_clash, digits=6), ")") if sign_clash else "",
                      ("; an entry is not a finite number (closed form or second differences) at ", Math(LAM), " = ",
                       listing(sorted({lam for lam, _ in broken}), digits=6), ": a failed comparison")
                      if broken else "",
                      f"; the certified scan failed: {scan_error}" if scan_error else ""),
        passed=bool(passed), analytic=small_c, numeric=small_f, uncertainty=small_t,
        details={"rows": rows, "certified": [c["text"] for c in scan.certificates] if scan else [],
                 "minimum": scan.minimum if scan else (), "saddle": scan.saddle if scan else ()},
        unresolved=unresolved,
        plots=[Plot(title=reason("smallest eigenvalue of the oracle's Hessian block (", D_MATH, " = ", Number(d), ", ",
                                 L_MATH, " = ", Number(L), ")"), xlabel=reason(LAM_MATH),
                    ylabel="smallest eigenvalue",
                    series=[Series("closed form", lams, small_c, style="-"),
                            Series("second differences of the quadrature risk", lams, small_f, yerr=small_t,
                                   style="o")])],
        findings=OracleFindings(lams, tuple(small_c), tuple(small_f), tuple(small_t), cert,
                                tuple(scan.brackets) if scan else (),
                                measured, float(worst), (0.0, gamma, d, L, eps)),
    )
