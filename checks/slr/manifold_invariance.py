"""Paper C, claim 4: the manifold M = {theta = eta = rho = 0} is invariant under projected gradient descent, for every
step size, and on M the full d-dimensional dynamics follow the derived reduced 2-D map of (kappa, nu).

Analytic side: the theory object's dynamics (attnverify.theory.slr.dynamics) -- the exact one-step map of the
overlaps (the map closes on the five overlaps: Gram matrix of (k, v, k*, v*)), its restriction to M (theta' = eta' =
rho' = 0 for every h, symbolically) and the reduced map (kappa', nu') = reduced_map_np(kappa, nu, h).

Numeric side: the simulators' ``pgd`` (attnverify.numerics.slr.pgd), projected gradient descent on the vectors k, v in
R^d in float64 (the step -- the simulators' ``pgd_step`` --, the renormalisation and the overlaps computed from the
vectors; no overlap formula), driven by the partials of the closed-form risk (validated on their own by
slr.gradient_vs_quadrature), from starts on M drawn as in the paper (attnverify.numerics.slr.model.start_manifold).

(a) one step from points of M at step sizes from 1e-4 to 100: the distance to M after the step is <= DIST_ULPS
sqrt(d) ulp x (h |grad| + max(1, gain)) (rounding of inner products of length d, of vectors of size up to
1 + h |grad| before the renormalisation; and the start itself lies on M only to ~1e-17, a distance that one step
multiplies by its gain off M, measured on the float64 step itself (:func:`off_manifold_gain`: starts displaced off M
by DISPLACEMENT along theta, eta and rho, never from a closed form's Hessian), so the bound is sqrt(d) ulp x
(h |grad| + max(1, gain))) and (kappa', nu') equals the reduced map to MAP_ULPS
sqrt(d) ulp x (1 + h |grad|); (b) ``n_steps`` steps of size ``step`` from ``n_runs`` starts: the (kappa, nu) path
equals the iterated reduced map to n_steps x 1e-14 + 1e-12 (a few ulp of rounding per step, accumulated linearly;
the difference between two float64 implementations of the d-dimensional step, numba and NumPy, is measured and
reported), at every recorded point while the run is within NEAR_M of M. The distance to M along (b) is a finding:
M is invariant, but where it repels nearby points rounding errors grow along the run (reported with the growth
factor), and once a run has left M the reduced map no longer describes it. Within NEAR_M the departure changes
(kappa, nu) only at second order (the risk is quadratic in theta, eta, rho, so their partials are linear in the
distance and move kappa', nu' by its square): 1e-20 per step, far below the path tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, listing, reason
from attnverify.checks.registry import check
from attnverify.checks.slr._model import descend, params_of, start_on_M, validate_model, with_defaults
from attnverify.checks.slr.claims import DIM, ETA, KAPPA, LAM, MANIFOLD, NU, RHO, STEP, THETA
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY

ULP = float(np.finfo(float).eps)
DIST_ULPS = 50.0
NEAR_M = 1e-10          # the long run is compared with the reduced map while its distance to M is at most this
MAP_ULPS = 200.0
STEP_SIZES = (1e-4, 1e-2, 1.0, 100.0)
KERNEL_RUNS = 4
DISPLACEMENT = 1e-9     # off-M displacement of the gain measurement: 1e7 ulp above rounding, its square 1e-18

#: the mathematics of the reason: the rounding bounds in ulp (the unit in the last place, ULP) of the one-step distance
#: to M and of the one-step map, |grad| the norm of the Riemannian gradient, gain the measured gain off M; the overlaps
#: after the step; the path difference of the long run (LaTeX: SymPy has no words inside a norm) and its bound
_ULP, _GRAD = sp.Symbol(r"\mathrm{ulp}"), sp.Abs(sp.Symbol(r"\nabla{R}"))
DIST_BOUND = Math(sp.sqrt(DIM) * _ULP * (STEP * _GRAD + sp.Max(1, sp.Symbol(r"\mathrm{gain}"))))
MAP_BOUND = Math(sp.sqrt(DIM) * _ULP * (1 + STEP * _GRAD))
NEXT_OVERLAPS = Math(sp.Tuple(sp.Symbol(r"\kappa^{\prime}"), sp.Symbol(r"\nu^{\prime}")))
PATH_DIFFERENCE = Math(r"|\mathrm{path} - \mathrm{reduced\ map}|")
N_STEPS = Math(sp.Symbol("n_steps"))
LEQ, SIM = Math(r"\leq"), Math(r"\sim")
# the plots' labels: the overlaps kappa and nu, the manifold M, the time t = step x h (LaTeX: a word in the maths), the
# distance to M, lambda, d and the step h
KAPPA_MATH, NU_MATH, M_MATH = Math(KAPPA), Math(NU), Math(MANIFOLD)
TIME_AS_STEPS = Math(r"t = \mathrm{step} \times h")
DISTANCE_TO_M = Math(sp.sqrt(THETA ** 2 + ETA ** 2 + RHO ** 2))
LAM_MATH, D_MATH, H_MATH = Math(LAM), Math(DIM), Math(STEP)


def off_manifold_gain(sim, ev, k0, v0, ks, vs, lam: float, h: float) -> float:
    """The factor by which one float64 step of size h multiplies a distance to M, measured: the start displaced by
    DISPLACEMENT along each of theta = <v, k*>, eta = <k, v*> and rho = <k, v> (then renormalised), stepped with the
    start, and the off-M overlaps' difference after the step divided by their difference before, the largest over
    the three directions and the starts. A constant push off M (a map that breaks invariance) moves both alike and
    cancels; the linear part is the step's Jacobian off M (about 1 + h |Hess| at the start)."""
    from attnverify.numerics.slr.model import overlaps

    def unit(x: np.ndarray) -> np.ndarray:
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    base = descend(sim, ev, k0, v0, ks, vs, lam, h, 1, 1)
    after0 = overlaps(base.k, base.v, ks, vs)[:, 2:]
    before0 = overlaps(k0, v0, ks, vs)[:, 2:]
    gain = 0.0
    for k1, v1 in ((k0, unit(v0 + DISPLACEMENT * ks)), (unit(k0 + DISPLACEMENT * vs), v0),
                   (unit(k0 + DISPLACEMENT * v0), v0)):
        path = descend(sim, ev, k1, v1, ks, vs, lam, h, 1, 1)
        moved = np.linalg.norm(overlaps(path.k, path.v, ks, vs)[:, 2:] - after0, axis=-1)
        gain = max(gain, float(np.max(moved / np.linalg.norm(overlaps(k1, v1, ks, vs)[:, 2:] - before0, axis=-1))))
    return gain


def reduced_iterates(theory, kap: np.ndarray, nu: np.ndarray, h: float, params: tuple, n_steps: int, every: int):
    """The reduced map of ``theory`` (``reduced_map_np``: attnverify.theory.slr.dynamics, float64) iterated n_steps
    times, recorded as PGD records: shape (n_runs, n_records, 2)."""
    rec = np.unique(np.append(np.arange(0, n_steps + 1, every), n_steps))
    out = np.empty((kap.size, rec.size, 2))
    j = 0
    for t in range(n_steps + 1):
        if t == rec[j]:
            out[:, j, 0], out[:, j, 1] = kap, nu
            j += 1
        if t < n_steps:
            kap, nu = theory.reduced_map_np(kap, nu, h, *params)
    return out


@dataclass(frozen=True)
class InvarianceFindings:
    """(a) one step at every step size, (b) the long run; and the symbolic proof (theta', eta', rho' = 0 on M)."""

    symbolic_invariance: bool
    max_one_step_distance: float
    one_step_distance_tolerance: float
    max_one_step_map_excess: float
    step_sizes: tuple[float, ...]
    max_path_difference: float
    path_tolerance: float
    max_run_distance: float
    run_distance_growth: float
    kernel_difference: float
    n_steps: int
    compared_steps: int          # the long run is compared up to here: while every run is within near_m of M
    near_m: float


@check(
    id="slr.manifold_invariance",
    compares="M = {theta = eta = rho = 0} is invariant under projected gradient descent for every step size, and on M "
             "the full d-dimensional float64 dynamics follow the derived reduced 2-D map of (kappa, nu)",
    source="Paper C, claim 4",
    params=[*with_defaults(lam=0.1),
            Param("step", float, 4e-3, "step size of the long run", low=0.0, low_open=True, high=10.0),
            Param("n_steps", int, 3000, "steps of the long run", low=1, high=10_000_000),
            Param("n_runs", int, 4, "starts on M", low=1, high=1000)],
    paper_profile={"n_steps": 20000, "n_runs": 30},
    validate=validate_model,
    formulas=(r"\kappa'", r"o'_\perp|_M", r"(\kappa', \nu')"),
    theory=THEORY, numerics=NUMERICS,
)
def manifold_invariance(p: dict, ctx: Context) -> Evidence:
    from attnverify.numerics.slr.model import distance_to_manifold, overlaps

    lam, gamma, d, L, eps = params_of(p)
    theory, sim = ctx.theory, ctx.numerics
    ev = theory.risk_evaluator(lam, gamma, d, L, eps)
    rng = ctx.rng("starts")
    k0, v0, ks, vs = start_on_M(p, p["n_runs"], rng)
    o0 = overlaps(k0, v0, ks, vs)
    # (a) one step at every step size
    dist1, dist_tols, excess1, gains = [], [], [], []
    for h in STEP_SIZES:
        path = descend(sim, ev, k0, v0, ks, vs, lam, h, 1, 1)
        o1 = overlaps(path.k, path.v, ks, vs)
        dist1.append(float(np.max(distance_to_manifold(o1))))
        kr, nr = theory.reduced_map_np(o0[:, 0], o0[:, 1], h, lam, gamma, d, L, eps)
        gnorm = float(np.max(path.grad_norm[:, 0]))
        gains.append(off_manifold_gain(sim, ev, k0, v0, ks, vs, lam, h))
        dist_tols.append(DIST_ULPS * np.sqrt(d) * ULP * (h * gnorm + max(1.0, gains[-1])))
        excess1.append(float(np.max(np.abs(np.column_stack([kr, nr]) - o1[:, :2])))
                       / (MAP_ULPS * np.sqrt(d) * ULP * (1.0 + h * gnorm)))
    dist_ratio = max(x / tol for x, tol in zip(dist1, dist_tols))
    i_far = int(np.argmax(dist1))                       # the largest distance, with the bound at its step size
    dist_far, dist_tol = dist1[i_far], dist_tols[i_far]
    ctx.progress(0.2)
    # (b) the long run, two kernels
    every = max(1, p["n_steps"] // 50)
    run = descend(sim, ev, k0, v0, ks, vs, lam, p["step"], p["n_steps"], every)
    ctx.progress(0.6)
    m = min(KERNEL_RUNS, p["n_runs"])                    # the NumPy kernel is slower: a few runs suffice
    other = descend(sim, ev, k0[:m], v0[:m], ks, vs, lam, p["step"], p["n_steps"], every, kernel="numpy")
    red = reduced_iterates(theory, o0[:, 0].copy(), o0[:, 1].copy(), p["step"], (lam, gamma, d, L, eps),
                           p["n_steps"], every)
    near = np.cumprod(run.distance <= NEAR_M, axis=1).astype(bool)       # (n_runs, n_rec): not yet left M
    diff = float(np.max(np.where(near[:, :, None], np.abs(run.overlaps[:, :, :2] - red), 0.0)))
    compared = int(run.step[int(np.min(np.sum(near, axis=1))) - 1]) if near[:, 0].all() else 0
    kern = float(np.max(np.abs(run.overlaps[:m, :, :2] - other.overlaps[:, :, :2])))
    path_tol = p["n_steps"] * 1e-14 + 1e-12
    dist_run = run.distance.max(axis=0)
    growth = float(dist_run[-1] / max(dist_run[1], 1e-300)) if dist_run.size > 1 else 1.0
    sym = all(v == 0 for v in theory.invariance_of_M().values())
    worst = max(dist_ratio, max(excess1), diff / path_tol)
    t = run.step * p["step"]
    plots = [Plot(title=reason("PGD on ", M_MATH, " (", D_MATH, " = ", Number(d), ", ", LAM_MATH, " = ",
                               Number(lam, digits=6), ", ", H_MATH, " = ", Number(p["step"], digits=6), "): ",
                               KAPPA_MATH, " and ", NU_MATH, ", full dynamics and reduced map"),
                  xlabel=reason(TIME_AS_STEPS), ylabel="overlap",
                  series=[Series(reason(KAPPA_MATH, ", run ", Number(i)), t, run.overlaps[i, :, 0])
                          for i in range(min(4, p["n_runs"]))]
                  + [Series(reason(NU_MATH, ", run ", Number(i)), t, run.overlaps[i, :, 1], style="--")
                     for i in range(min(4, p["n_runs"]))]
                  + [Series("reduced map", t, red[i, :, 0], style=":") for i in range(min(4, p["n_runs"]))]),
             Plot(title=reason("distance to ", M_MATH, " along the runs (float64)"), xlabel=reason(TIME_AS_STEPS),
                  ylabel=reason(DISTANCE_TO_M),
                  series=[Series("max over runs", t[1:], np.maximum(dist_run[1:], 1e-20), style="-")], logy=True)]
    return Evidence(
        metric=reason("max of (one-step distance to ", Math(MANIFOLD), " / its tolerance, one-step map excess, path "
                      "difference / its tolerance)"),
        observed=float(worst), threshold=1.0,
        reason=reason(
            "one step at ", Math(STEP), " = ", listing(STEP_SIZES, digits=6, last=" and "), ": distance to ",
            Math(MANIFOLD), " ", LEQ, " ", Number(DIST_ULPS, digits=6), " ", DIST_BOUND, " (rounding of inner "
            "products of length ", Math(DIM), ", the start's own distance ", SIM, " ", Number(1e-17), " carried by the "
            "step, its gain off ", Math(MANIFOLD), " measured on the float64 step: up to ",
            Number(max(gains), digits=3), "), ", NEXT_OVERLAPS, " within ", Number(MAP_ULPS, digits=6), " ",
            MAP_BOUND, " of the reduced map; ",
            Number(p["n_steps"]), " steps: ", PATH_DIFFERENCE, " ", LEQ, " ", N_STEPS, " ", Number(1e-14), " + ",
            Number(1e-12), " = ", Number(path_tol, digits=2), " (a few ulp per step accumulated; numba and NumPy "
            "kernels differ by ", Number(kern, digits=2), ") ",
            "at every recorded step" if compared == p["n_steps"] else
            ("up to step ", Number(compared), ", where a run first left ", Math(MANIFOLD), " by more than ",
             Number(NEAR_M, digits=6), " (", Math(MANIFOLD), " repels: rounding off ", Math(MANIFOLD), " grew by a "
             "factor ", Number(growth, digits=3), ")"),
            "; symbolic invariance of ", Math(MANIFOLD), " for every ", Math(STEP), f": {sym}"),
        passed=bool(worst <= 1.0 and sym),
        details={"one_step_distance": dist1, "one_step_distance_tolerance": dist_tols,
                 "one_step_map_excess": excess1, "path_difference": diff, "kernel_difference": kern,
                 "one_step_gain_off_M": gains, "distance_along_run": dist_run, "compared_steps": compared, "step_sizes": STEP_SIZES},
        plots=plots,
        findings=InvarianceFindings(sym, dist_far, dist_tol, max(excess1), STEP_SIZES, diff, path_tol,
                                    float(dist_run.max()), growth, kern, int(p["n_steps"]), compared, NEAR_M),
    )
