"""Paper C, claim 4: the manifold M = {theta = eta = rho = 0} is invariant under projected gradient descent, for every
step size, and on M the dynamics reduce to a 2-D map of (kappa, nu) whose h -> 0 limit is the reduced flow.

Analytic side: attnverify.theory.slr.dynamics -- the exact one-step map of the overlaps (the map closes on the five
overlaps: Gram matrix of (k, v, k*, v*)), its restriction to M (theta' = eta' = rho' = 0 for every h, symbolically)
and the reduced map (kappa', nu') = reduced_map(kappa, nu, h), the reduced flow = d/dh of it at h = 0.

Numeric side: attnverify.numerics.slr.pgd, projected gradient descent on the vectors k, v in R^d in float64 (the
step, the renormalisation and the overlaps computed from the vectors; no overlap formula), driven by the partials
of the closed-form risk (validated on their own by slr.gradient_vs_quadrature), from starts on M drawn as in the
paper (attnverify.numerics.slr.model.start_manifold).

slr.manifold_invariance -- (a) one step from points of M at step sizes from 1e-4 to 100: the distance to M after the
step is <= DIST_ULPS sqrt(d) ulp (rounding of inner products of length d; the start itself lies on M to ~1e-17) and
(kappa', nu') equals the reduced map to MAP_ULPS sqrt(d) ulp x (1 + h |grad|); (b) ``n_steps`` steps of size
``step`` from ``n_runs`` starts: the (kappa, nu) path equals the iterated reduced map to n_steps x 1e-14 + 1e-12
(a few ulp of rounding per step, accumulated linearly; the difference between two float64 implementations of the
d-dimensional step, numba and NumPy, is measured and reported). The distance to M along (b) is a finding: M is
invariant, but where it repels nearby points rounding errors grow along the run (reported with the growth factor).

slr.reduced_flow -- PGD on M at steps h, h/2, h/4 against the reduced flow integrated by scipy (rtol 1e-11): the
Richardson combinations E1 = 2 P_{h/2} - P_h, E2 = 2 P_{h/4} - P_{h/2} remove the O(h) term of the Euler-like map,
and sup_t |E2 - flow| <= 10 sup_t |E2 - E1| / 3 + 1e-9 per run and overlap (|E2 - E1| / 3 estimates E2's O(h^2)
error; the sup over the path, since the pointwise estimate vanishes where its coefficient changes sign); reported: the
observed order log2(|P_h - flow| / |P_{h/2} - flow|), which is 1 for a first-order map.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.registry import check
from attnverify.checks.slr._model import MODEL_PARAMS, evaluator, params_of, validate_model

ULP = float(np.finfo(float).eps)
DIST_ULPS = 50.0
MAP_ULPS = 200.0
STEP_SIZES = (1e-4, 1e-2, 1.0, 100.0)
KERNEL_RUNS = 4


def _model_params(**defaults):
    return [q if q.name not in defaults else Param(q.name, q.kind, defaults[q.name], q.help, q.low, q.high,
                                                   q.low_open, q.high_open) for q in MODEL_PARAMS]


def _start(p: dict, n: int, rng: np.random.Generator):
    from attnverify.numerics.slr.model import draw_targets, start_manifold

    ks, vs = draw_targets(p["d"], rng)
    k0, v0 = start_manifold(ks, vs, rng, n)
    return k0, v0, ks, vs


def _pgd(ev, k0, v0, ks, vs, lam, h, n_steps, every, kernel="numba"):
    from attnverify.numerics.slr.pgd import pgd

    return pgd(k0, v0, ks, vs, lambda o, l: ev.gradient(o, l), lam0=lam, step=h, n_steps=n_steps,
               record_every=every, kernel=kernel)


def reduced_iterates(kap: np.ndarray, nu: np.ndarray, h: float, params: tuple, n_steps: int, every: int):
    """The reduced map (attnverify.theory.slr.dynamics.reduced_map, float64) iterated n_steps times, recorded as PGD
    records: shape (n_runs, n_records, 2)."""
    from attnverify.theory.slr import eval as slr_eval

    rec = np.unique(np.append(np.arange(0, n_steps + 1, every), n_steps))
    out = np.empty((kap.size, rec.size, 2))
    j = 0
    for t in range(n_steps + 1):
        if t == rec[j]:
            out[:, j, 0], out[:, j, 1] = kap, nu
            j += 1
        if t < n_steps:
            kap, nu = slr_eval.reduced_map_np(kap, nu, h, *params)
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


def _symbolic_invariance() -> bool:
    from attnverify.theory.slr.dynamics import invariance_of_M

    return all(v == 0 for v in invariance_of_M().values())


@check(
    id="slr.manifold_invariance",
    claim="M = {theta = eta = rho = 0} is invariant under projected gradient descent for every step size, and on M "
          "the full d-dimensional float64 dynamics follow the derived reduced 2-D map of (kappa, nu)",
    source="Paper C, claim 4",
    params=[*_model_params(lam=0.1),
            Param("step", float, 4e-3, "step size of the long run", low=0.0, low_open=True, high=10.0),
            Param("n_steps", int, 3000, "steps of the long run", low=1, high=10_000_000),
            Param("n_runs", int, 4, "starts on M", low=1, high=1000)],
    paper={"n_steps": 20000, "n_runs": 30},
    validate=validate_model,
)
def manifold_invariance(p: dict, ctx: Context) -> Evidence:
    from attnverify.numerics.slr.model import distance_to_manifold, overlaps

    lam, gamma, d, L, eps = params_of(p)
    ev = evaluator(lam, gamma, d, L, eps)
    rng = ctx.rng("starts")
    k0, v0, ks, vs = _start(p, p["n_runs"], rng)
    o0 = overlaps(k0, v0, ks, vs)
    # (a) one step at every step size
    dist1, excess1 = [], []
    from attnverify.theory.slr import eval as slr_eval
    for h in STEP_SIZES:
        path = _pgd(ev, k0, v0, ks, vs, lam, h, 1, 1)
        o1 = overlaps(path.k, path.v, ks, vs)
        dist1.append(float(np.max(distance_to_manifold(o1))))
        kr, nr = slr_eval.reduced_map_np(o0[:, 0], o0[:, 1], h, lam, gamma, d, L, eps)
        gnorm = float(np.max(path.grad_norm[:, 0]))
        excess1.append(float(np.max(np.abs(np.column_stack([kr, nr]) - o1[:, :2])))
                       / (MAP_ULPS * np.sqrt(d) * ULP * (1.0 + h * gnorm)))
    dist_tol = DIST_ULPS * np.sqrt(d) * ULP
    ctx.progress(0.2)
    # (b) the long run, two kernels
    every = max(1, p["n_steps"] // 50)
    run = _pgd(ev, k0, v0, ks, vs, lam, p["step"], p["n_steps"], every)
    ctx.progress(0.6)
    m = min(KERNEL_RUNS, p["n_runs"])                    # the NumPy kernel is slower: a few runs suffice
    other = _pgd(ev, k0[:m], v0[:m], ks, vs, lam, p["step"], p["n_steps"], every, kernel="numpy")
    red = reduced_iterates(o0[:, 0].copy(), o0[:, 1].copy(), p["step"], (lam, gamma, d, L, eps), p["n_steps"], every)
    diff = float(np.max(np.abs(run.overlaps[:, :, :2] - red)))
    kern = float(np.max(np.abs(run.overlaps[:m, :, :2] - other.overlaps[:, :, :2])))
    path_tol = p["n_steps"] * 1e-14 + 1e-12
    dist_run = run.distance.max(axis=0)
    growth = float(dist_run[-1] / max(dist_run[1], 1e-300)) if dist_run.size > 1 else 1.0
    sym = _symbolic_invariance()
    worst = max(max(dist1) / dist_tol, max(excess1), diff / path_tol)
    t = run.step * p["step"]
    plots = [Plot(title=f"PGD on M (d = {d}, lam = {lam:g}, h = {p['step']:g}): kappa and nu, full dynamics and "
                        "reduced map", xlabel="t = step x h", ylabel="overlap",
                  series=[Series(f"kappa, run {i}", t, run.overlaps[i, :, 0]) for i in range(min(4, p["n_runs"]))]
                  + [Series(f"nu, run {i}", t, run.overlaps[i, :, 1], style="--") for i in range(min(4, p["n_runs"]))]
                  + [Series("reduced map", t, red[i, :, 0], style=":") for i in range(min(4, p["n_runs"]))]),
             Plot(title="distance to M along the runs (float64)", xlabel="t = step x h",
                  ylabel="sqrt(theta^2 + eta^2 + rho^2)",
                  series=[Series("max over runs", t[1:], np.maximum(dist_run[1:], 1e-20), style="-")], logy=True)]
    return Evidence(
        metric="max of (one-step distance to M / its tolerance, one-step map excess, path difference / its tolerance)",
        observed=float(worst), threshold=1.0,
        reason=f"one step at h in {STEP_SIZES}: distance to M <= {DIST_ULPS:g} sqrt(d) ulp = {dist_tol:.2g} (rounding "
               f"of inner products of length d), (kappa', nu') within {MAP_ULPS:g} sqrt(d) ulp (1 + h |grad|) of the "
               f"reduced map; {p['n_steps']} steps: |path - reduced map| <= n_steps 1e-14 + 1e-12 = {path_tol:.2g} "
               f"(a few ulp per step accumulated; numba and NumPy kernels differ by {kern:.2g}); symbolic invariance "
               f"of M for every h: {sym}",
        passed=bool(worst <= 1.0 and sym),
        details={"one_step_distance": dist1, "one_step_map_excess": excess1, "path_difference": diff,
                 "kernel_difference": kern, "distance_along_run": dist_run, "step_sizes": STEP_SIZES},
        plots=plots,
        findings=InvarianceFindings(sym, max(dist1), dist_tol, max(excess1), STEP_SIZES, diff, path_tol,
                                    float(dist_run.max()), growth, kern, int(p["n_steps"])),
    )


# ------------------------------------------------------------------------------------------- the reduced flow
@lru_cache(maxsize=None)
def _flow_function():
    import sympy as sp

    from attnverify.theory.slr import gauss as G
    from attnverify.theory.slr.dynamics import reduced_flow
    from attnverify.theory.slr.symbols import PARAMS, kappa, nu

    return sp.lambdify((kappa, nu) + PARAMS, list(reduced_flow()),
                       modules=[{"zeta_erf": lambda t, s: G.zeta_np(t, s)}, "scipy", "numpy"])


def integrate_flow(kap0: np.ndarray, nu0: np.ndarray, params: tuple, times: np.ndarray) -> np.ndarray:
    """The derived reduced flow integrated by scipy (RK45, rtol 1e-11, atol 1e-13): shape (n_runs, n_times, 2)."""
    from scipy.integrate import solve_ivp

    f = _flow_function()
    out = np.empty((kap0.size, times.size, 2))
    for i, (a, b) in enumerate(zip(kap0, nu0)):
        sol = solve_ivp(lambda t, y: np.asarray(f(y[0], y[1], *params), dtype=float), (0.0, float(times[-1])),
                        [a, b], t_eval=times, rtol=1e-11, atol=1e-13, method="RK45")
        out[i] = sol.y.T
    return out


@dataclass(frozen=True)
class FlowFindings:
    max_over_tolerance: float
    observed_order: float
    gap_at_h: float


@check(
    id="slr.reduced_flow",
    claim="On M, projected gradient descent with step h follows the derived reduced flow (kappa_dot, nu_dot) up to "
          "O(h): the Richardson-extrapolated PGD paths converge to the flow",
    source="Paper C, claim 4 (reduced dynamics)",
    params=[*_model_params(lam=0.5, d=50),
            Param("step", float, 0.01, "largest step h (then h/2, h/4)", low=0.0, low_open=True, high=1.0),
            Param("horizon", float, 8.0, "time t = steps x h of the comparison", low=0.0, low_open=True, high=1e4),
            Param("n_runs", int, 3, "starts on M", low=1, high=1000)],
    paper={"n_runs": 10, "horizon": 20.0},
    validate=validate_model,
)
def reduced_flow(p: dict, ctx: Context) -> Evidence:
    from attnverify.numerics.slr.model import overlaps

    lam, gamma, d, L, eps = params_of(p)
    ev = evaluator(lam, gamma, d, L, eps)
    k0, v0, ks, vs = _start(p, p["n_runs"], ctx.rng("starts"))
    o0 = overlaps(k0, v0, ks, vs)
    h = p["step"]
    n = int(round(p["horizon"] / h))
    paths = []
    for j in range(3):
        hj = h / 2 ** j
        paths.append(_pgd(ev, k0, v0, ks, vs, lam, hj, n * 2 ** j, 2 ** j).overlaps[:, :, :2])
        ctx.progress((j + 1) / 4)
    times = np.arange(n + 1) * h
    flow = integrate_flow(o0[:, 0], o0[:, 1], (lam, gamma, d, L, eps), times)
    e1, e2 = 2 * paths[1] - paths[0], 2 * paths[2] - paths[1]
    # sup over time per run and overlap: a pointwise estimate vanishes where the O(h^2) coefficient changes sign
    tol = 10.0 * np.max(np.abs(e2 - e1), axis=1) / 3.0 + 1e-9
    ratio = float(np.max(np.max(np.abs(e2 - flow), axis=1) / tol))
    gap0, gap1 = float(np.max(np.abs(paths[0] - flow))), float(np.max(np.abs(paths[1] - flow)))
    order = float(np.log2(gap0 / gap1)) if gap1 > 0 else float("inf")
    return Evidence(
        metric="max over runs of sup_t |E2 - flow| / (10 sup_t |E2 - E1| / 3 + 1e-9), E Richardson combinations "
               "of PGD at h, h/2, h/4",
        observed=ratio, threshold=1.0,
        reason="E2 = 2 P_{h/4} - P_{h/2} has an O(h^2) error estimated by |E2 - E1| / 3; a factor 10 covers the "
               "next order; 1e-9 covers the integrator (rtol 1e-11) and the float64 steps; the observed order of "
               f"PGD against the flow is {order:.3g} (1 for a first-order map)",
        passed=bool(ratio <= 1.0), analytic=flow, numeric=e2,
        details={"times": times, "gap_h": gap0, "gap_h2": gap1, "observed_order": order},
        plots=[Plot(title=f"reduced flow against PGD on M (d = {d}, lam = {lam:g})", xlabel="t", ylabel="overlap",
                    series=[Series(f"flow kappa, run {i}", times, flow[i, :, 0]) for i in range(p["n_runs"])]
                    + [Series(f"PGD h = {h:g} kappa, run {i}", times, paths[0][i, :, 0], style="--")
                       for i in range(p["n_runs"])]
                    + [Series(f"flow nu, run {i}", times, flow[i, :, 1], style="-.") for i in range(p["n_runs"])])],
        findings=FlowFindings(ratio, order, gap0),
    )
