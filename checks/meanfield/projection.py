"""Paper B, claim 2: zero-temperature trajectories converge exponentially to Pi(x0), Pi(x) = P_E x/|P_E x|
with E the dominant eigenspace of V B^T; Pi(x) is a fixed point of the zero-temperature field.

Analytic side: ``projection_map`` and ``convergence_rate`` (Jacobian rate gamma/|B^T x*|) of the theory the check
receives (attnverify.theory.meanfield).
Numeric side: the field attnverify.numerics.meanfield.particles.attention_field(beta=inf) at Pi(x), and DOP853
trajectories whose tangent displacement x(t) - Pi(x0) is fitted, on a window of small distances, by a linear map
between successive samples (:mod:`attnverify.numerics.meanfield.mode_rates`): the slowest rate among the modes it
carries is the trajectory's asymptotic rate, also where a faster mode dominates the distance over the whole window.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, bracket, reason
from attnverify.checks.reason_values import number_or_na
from attnverify.checks.registry import check
from attnverify.checks.judges import relation
from attnverify.checks.meanfield._model import (D3_PARAM, MODEL_PARAMS, model_matrices, validate_model,
                                                with_d3_case)
from attnverify.numerics.meanfield.mode_rates import slowest_rate, tangent_displacement
from attnverify.numerics.meanfield.simulators import NUMERICS
from attnverify.numerics.meanfield.zero_temperature import zero_temperature_path
from attnverify.theory.meanfield import THEORY

_EPS = float(np.finfo(float).eps)

#: the mathematics of the reasons: the derived limit Pi(x0), the distance fitted, the stationarity test and its
#: round-off bound 64 d eps ||V||_2 (1 + 2 kappa(B))
PI = sp.Function("Pi")
PI_X0 = PI(sp.Symbol("x_0"))
T = sp.Symbol("t")
DISPLACEMENT = sp.Function("x")(T) - PI_X0
STATIONARITY = sp.Abs(sp.Function(r"X_{\infty}")(PI(sp.Symbol("x"))))
ROUNDOFF = sp.Mul(64, sp.Symbol("d"), sp.Symbol("epsilon"), sp.Symbol(r"\|V\|_{2}"),
                  1 + 2 * sp.Function("kappa")(sp.Symbol("B")), evaluate=False)
#: the metrics: how close a trajectory comes to the derived limit, and a fitted rate's relative error (LaTeX: words)
CLOSEST = sp.Function(r"\min_{t}")(sp.Abs(sp.Function("x")(T) - PI_X0))
RATE_ERROR = Math(r"|\text{fitted rate} - \text{derived rate}| / \text{derived rate}")
#: the plot's labels: the distance |x(t) - Pi(x0)| to the derived limit, the time t
DISTANCE, T_MATH = Math(sp.Abs(sp.Function("x")(T) - PI_X0)), Math(T)


def trajectory_displacement(x0: np.ndarray, target: np.ndarray, B: np.ndarray, V: np.ndarray, times: np.ndarray,
                            rtols: tuple, path=zero_temperature_path) -> list[np.ndarray]:
    """The tangent displacement P_T (x(t) - target) along the numerical zero-temperature trajectory (n_times, d),
    for each tolerance (ctx.map task); ``path`` integrates it (the check's ``ctx.numerics.zero_temperature_path``)."""
    return [tangent_displacement(path(x0, B, V, times, r), target) for r in rtols]


def _reference(ts: np.ndarray, dist: np.ndarray, rate: float, anchor: float) -> np.ndarray:
    """dist(t_k) exp(-rate (t - t_k)), anchored at the sample closest (in log) to ``anchor``; formed in log-space
    and kept within [1e-17, e^700] (a rate far off the flow's, e.g. 100 times it, overflowed exp: an error, not the
    fail it is)."""
    k = int(np.argmin(np.abs(np.log(np.maximum(dist, 1e-300)) - np.log(anchor))))
    log_ref = np.log(max(float(dist[k]), 1e-300)) - rate * (ts - ts[k])
    return np.exp(np.clip(log_ref, np.log(1e-17), 700.0))


@check(
    id="meanfield.projection_stationary",
    compares="Pi(x) = P_E x/||P_E x|| onto the dominant eigenspace E of V B^T is a fixed point of the zero-temperature "
             "field, and zero-temperature trajectories converge to Pi(x0) exponentially at the derived rate "
             "gamma/||B^T Pi(x0)|| (Jacobian at the fixed point).",
    source="Paper B, claim 2",
    params=[*MODEL_PARAMS, D3_PARAM,
            Param("n_points", int, 200, "random points x for the stationarity test", low=1),
            Param("n_traj", int, 4, "random trajectories for the rate fit", low=1),
            Param("window", "floats", (1e-9, 1e-5), "fit window (lo, hi) for the distance |x(t) - Pi(x0)|",
                  low=1e-11, high=1e-1),
            Param("rtols", "floats", (1e-11, 1e-13), "integrator tolerances (refinement pair; last is used)",
                  low=2.3e-14, high=1e-6),
            Param("rate_tol", float, 1e-6, "relative tolerance on the fitted rate: its floor, raised to 10x the "
                  "window/rtol refinement spread where that is larger (which must stay <= 1e-3)",
                  low=0.0, low_open=True)],
    paper_profile={"also_d3": True, "n_points": 5000, "n_traj": 32},
    validate=validate_model,
    formulas=(r'\Pi_{\dim E=1}(x_0)', r'\lambda_j'),
    theory=THEORY, numerics=NUMERICS,
)
def projection_stationary(p: dict, ctx: Context) -> Evidence:
    return with_d3_case(_projection_stationary, p, ctx)


def _projection_stationary(p: dict, ctx: Context) -> Evidence:
    B, V = model_matrices(p)
    d = p["d"]
    lo, hi = sorted(p["window"])
    if not hi > 100 * lo:
        raise ValueError("window must span at least two decades (hi > 100 lo)")
    rtols = tuple(p["rtols"])
    theory = ctx.theory
    spec = theory.spectrum(B, V)
    Pi = theory.projection_map(B, V)
    P_E = spec.P_E

    # 2. convergence rate: trajectories from x0 with |P_E x0| >= 0.2, horizon from the Lyapunov bound
    #    |x(t) - Pi x0| <= sqrt(L(t)) <= sqrt(L0) exp(-r_L t), so t_max = log(sqrt(L0)/lo)/r_L reaches lo
    Y = ctx.rng("x0").standard_normal((50 * p["n_traj"], d))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    X0 = Y[np.linalg.norm(Y @ P_E.T, axis=1) >= 0.2][: p["n_traj"]]
    targets = Pi(X0)
    # derived rate at the attracting fixed point: unique up to sign when dim E = 1; otherwise the point of
    # E in the direction of the target (= the target itself when Pi is right)
    if spec.dim_E == 1:
        rates = np.full(len(targets), theory.convergence_rate(B, V))
    else:
        stars = targets @ P_E.T
        rates = np.array([theory.convergence_rate(B, V, x_star=s / np.linalg.norm(s)) for s in stars])
    r_lyap = theory.lyapunov_rate(B, V)
    pe = np.linalg.norm(X0 @ P_E.T, axis=1)
    L0 = (1 - pe**2) / pe**2
    t_max = float(np.max(np.log(np.sqrt(L0) / lo) / r_lyap)) * 1.1 + 1.0
    times = np.linspace(0.0, t_max, 1500)
    disp = np.array(ctx.map(trajectory_displacement, [(x0, tg, B, V, times, rtols, ctx.numerics.zero_temperature_path)
                                                       for x0, tg in zip(X0, targets)]))     # (traj, rtol, t, d)
    dists = np.linalg.norm(disp, axis=-1)
    # each trajectory's error per sample, for the mode fit's floor (numerics.meanfield.mode_rates): the coarse
    # integration's is its distance from the fine one, the fine one's that times the ratio of the tolerances (the
    # global error of DOP853 scales with rtol); both plus the fine trajectory's final distance from the target, an
    # offset that neither integration sees and a linear fit would read as a mode of rate 0
    offset = dists[:, -1, -1:]
    coarse_noise = np.linalg.norm(disp[:, 0] - disp[:, -1], axis=-1) + offset
    fine_noise = (coarse_noise - offset) * (rtols[-1] / rtols[0]) + offset
    ctx.progress(0.9)
    fine = dists[:, -1, :]
    # stationarity: |X_inf(Pi x)| at random points (kept away from E^perp: |P_E x| >= 0.05)
    X = ctx.rng("points").standard_normal((4 * p["n_points"], d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.linalg.norm(X @ P_E.T, axis=1) >= 0.05][: p["n_points"]]
    PX = np.asarray(Pi(X), dtype=float)
    off_sphere = float(np.max(np.abs(np.linalg.norm(PX, axis=1) - 1.0)))
    # the field lives on the sphere: a Pi that leaves it has no stationarity to test (the flow comparison fails)
    stat = (float(np.max(np.linalg.norm(ctx.numerics.attention_field(PX, B, V, np.inf), axis=1)))
            if off_sphere <= 1e-8 else np.inf)
    # round-off bound: Pi(x) carries a few ulps; the field's Lipschitz constant on the sphere is at most
    # |V|(2 + kappa(B)) <= |V|(1 + 2 kappa(B)) (kappa = sigma_max/sigma_min, |D y*| <= kappa, |D P_perp| <= 2);
    # 64 d eps times that covers Pi's rounding and the field's own evaluation
    normV = float(np.linalg.norm(V, 2))
    kappa = spec.sigma_max / spec.sigma_min
    stat_thr = 64 * d * _EPS * normV * (1 + 2 * kappa)
    ctx.progress(0.2)

    # the measured flow must reach the derived limit: min_t |x(t) - Pi(x0)| below the fit window's top
    closest = fine.min(axis=1)
    if np.any(closest > hi):
        i = int(np.argmax(closest))
        return Evidence(
            metric=reason("max over trajectories of ", Math(CLOSEST), ": how close the measured flow comes to the "
                          "derived limit"), observed=float(closest[i]), threshold=hi,
            reason=reason("trajectory ", Number(i), " of the measured zero-temperature flow comes no closer than ",
                          Number(closest[i], digits=3), " to the derived ", Math(PI_X0), " by ", Math(T), " = ",
                          Number(t_max, digits=3), " (the Lyapunov horizon to reach ", Number(lo, digits=1), "), ",
                          relation(float(closest[i]), hi), " the fit window's top ", Number(hi, digits=1),
                          ": the flow does not converge to the derived limit (stationarity: max ", Math(STATIONARITY),
                          " = ", number_or_na(stat, 2), ", ", relation(stat, stat_thr), " the round-off bound ",
                          Number(stat_thr, digits=2),
                          *(("; ", Math(sp.Symbol("Pi")), " leaves the sphere by ", Number(off_sphere, digits=2), ")")
                            if off_sphere > 1e-8 else (")",))),
            passed=False, analytic=targets.tolist(), numeric=closest.tolist(),
            details={"x0": X0.tolist(), "Pi_x0": targets.tolist(), "closest_distance": closest.tolist(),
                     "t_max": t_max, "dim_E": spec.dim_E, "stationarity_max": stat,
                     "stationarity_threshold": stat_thr, "Pi_off_sphere": off_sphere})


    fits = [slowest_rate(times, D, lo, hi, e) for D, e in zip(disp[:, -1], fine_noise)]
    fitted = np.array([f for f, _ in fits])
    rel = np.abs(fitted - rates) / np.abs(rates)   # a negative derived rate must not pass as a small error
    # window/refinement study: fit the two halves of the window (geometric split) and the coarser rtol
    mid = np.sqrt(lo * hi)
    lower = np.array([slowest_rate(times, D, lo, mid, e)[0] for D, e in zip(disp[:, -1], fine_noise)])
    upper = np.array([slowest_rate(times, D, mid, hi, e)[0] for D, e in zip(disp[:, -1], fine_noise)])
    coarse = np.array([slowest_rate(times, D, lo, hi, e)[0] for D, e in zip(disp[:, 0], coarse_noise)])
    spread = float(np.max(np.abs(np.stack([lower, upper, coarse]) - fitted) / np.abs(rates)))
    # threshold: the floor rate_tol, or 10x the refinement spread where the fit is less precise (e.g. a non-diagonal
    # 3-d model: 1.7e-5); a spread above 1e-4 (threshold 1e-3) means the window does not resolve the rate: unresolved
    # (the numerics cannot decide), unless the fitted rate is off by more than even that threshold (a disagreement)
    observed, thr = float(np.max(rel)), max(float(p["rate_tol"]), 10 * spread)
    decided = observed > thr or stat > stat_thr or not np.all(rates > 0)
    return Evidence(
        metric=reason("max over trajectories of ", RATE_ERROR),
        observed=observed, threshold=thr,
        reason=reason("slowest decay rate of the modes in ", Math(DISPLACEMENT), " (a linear map fitted to successive "
                      "displacements whose distance lies in the window ", bracket(lo, hi, digits=1), "); window/refinement study: fitting either half of the window or integrating at rtol ",
                      Number(rtols[0], digits=1), " instead of ", Number(rtols[-1], digits=1), " moves the fitted rate "
                      "by at most ", Number(spread, digits=2), " (relative); threshold = max(rate_tol ",
                      Number(p["rate_tol"], digits=1), ", 10x that) = ", Number(thr, digits=2), ", usable while ",
                      Math(r"\leq"), " ", Number(1e-3, digits=1), " (", str(bool(thr <= 1e-3)), "). Stationarity: max ",
                      Math(STATIONARITY), " = ", number_or_na(stat, 2), ", ", relation(stat, stat_thr), " ",
                      Number(stat_thr, digits=2), " (round-off bound ", Math(ROUNDOFF), ")"),
        passed=bool(observed <= thr and thr <= 1e-3 and stat <= stat_thr and np.all(rates > 0)),
        unresolved=None if decided or thr <= 1e-3 else
        reason("the window does not resolve the rate: fitting half the window or a coarser rtol moves it by ",
               Number(spread, digits=2), ", so no threshold below ", Number(1e-3, digits=1), " applies (the fitted "
               "rate is within ", Number(observed, digits=2), " of the derived one)"),
        analytic=rates.tolist(), numeric=fitted.tolist(), uncertainty=spread,
        details={"stationarity_max": stat, "stationarity_threshold": stat_thr, "n_points": int(len(X)),
                 "derived_rates": rates.tolist(), "fitted_rates": fitted.tolist(),
                 "fit_samples": [n for _, n in fits], "lyapunov_rate": r_lyap,
                 "rate_window_lower_half": lower.tolist(), "rate_window_upper_half": upper.tolist(),
                 "rate_coarse_rtol": coarse.tolist(), "window_spread": spread,
                 "x0": X0.tolist(), "Pi_x0": targets.tolist(), "t_max": t_max, "dim_E": spec.dim_E,
                 "final_distance": fine[:, -1].tolist(),
                 "P_E_error_bound": spec.P_E_error, "cluster_tolerance": spec.cluster_tol,
                 "certificates": [dict(c) for c in spec.certificates]},
        plots=[Plot(title=reason(DISTANCE, " and the derived exponential rate"), xlabel=reason(T_MATH),
                    ylabel="distance", logy=True,
                    series=[s for i, dd in enumerate(fine) for s in (
                        Series(reason("trajectory #", Number(i)), times.tolist(), np.maximum(dd, 1e-17).tolist()),
                        Series(reason("derived rate #", Number(i)), times.tolist(),
                               _reference(times, dd, rates[i], mid).tolist(), style="--"))])],
    )
