"""Paper B, claim 1: the zero-temperature dynamics has the closed-form solution
x(t) = e^{tau A} x0/|e^{tau A} x0|, A = V B^T, with the time change dt/dtau = |B^T x(tau)|.

Analytic side: ``closed_form_flow`` of the theory the check receives (attnverify.theory.meanfield: lambdified SymPy
closed form, inverted time change).
Numeric side: SciPy's DOP853 on dx/dt = X_inf(x) (attnverify.numerics.meanfield.zero_temperature.zero_temperature_path), the
field from attnverify.numerics.meanfield.particles.attention_field(beta=inf),
at a ladder of tolerances (the refinement study that justifies the threshold).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, reason
from attnverify.checks.registry import check
from attnverify.checks.meanfield._model import (D3_PARAM, MODEL_PARAMS, fixed, model_matrices, validate_model,
                                                with_d3_case)
from attnverify.numerics.meanfield.simulators import NUMERICS
from attnverify.numerics.meanfield.zero_temperature import zero_temperature_path
from attnverify.theory.meanfield import THEORY


TO = Math(r"\to")          # "from ... to ..." in the refinement study
#: the largest distance of the integrated flow from the closed form (LaTeX: SymPy has no norm of a difference)
FLOW_ERROR = Math(r"\max_{t, x_{0}} \|x_{\mathrm{ode}}(t) - x_{\mathrm{closed}}(t)\|")
# the plots' labels: the time t, a start x_0, the first coordinate x_1(t) of a trajectory
_T = sp.Symbol("t")
T_MATH, X_0, X_1_OF_T = Math(_T), Math(sp.Symbol("x_0")), Math(sp.Function("x_1")(_T))


def start_paths(x0: np.ndarray, B: np.ndarray, V: np.ndarray, times: np.ndarray, rtols: tuple,
                path=zero_temperature_path) -> np.ndarray:
    """x_ode(times) for each tolerance, shape (len(rtols), len(times), d) (task for ctx.map); ``path`` integrates
    the zero-temperature flow (the check's ``ctx.numerics.zero_temperature_path``). The task never sees the closed
    form it is compared with (:func:`start_errors`), so a run with another theory (a mutant, a power perturbation)
    reads the same paths from the memo."""
    return np.array([path(x0, B, V, times, r) for r in rtols])


def start_errors(paths: np.ndarray, closed: np.ndarray) -> list[float]:
    """max_t |x_ode(t) - x_closed(t)| for each tolerance's path (rows of ``paths``, :func:`start_paths`)."""
    return [float(np.max(np.linalg.norm(x - closed, axis=1))) for x in paths]


@check(
    id="meanfield.zero_temperature_flow",
    compares="The zero-temperature limit dx/dt = P_perp_x V B^T x/||B^T x|| is solved by the normalised matrix "
             "exponential e^{tau V B^T} x0/||.|| with the time change dt/dtau = ||B^T x||; compared with "
             "high-accuracy numerical integration of the ODE.",
    source="Paper B, claim 1",
    params=[*MODEL_PARAMS, D3_PARAM,
            Param("n_starts", int, 4, "random initial points x0 on the sphere", low=1),
            Param("t_max", float, 20.0, "final time", low=0.0, low_open=True),
            Param("n_times", int, 41, "comparison times in [0, t_max]", low=2),
            Param("rtols", "floats", (1e-7, 1e-9, 1e-11, 1e-13),
                  "integrator tolerances of the refinement study (decreasing; the last one is compared)",
                  low=2.3e-14, high=1e-3),
            Param("tol", float, 1e-10, "agreement required at the finest tolerance", low=0.0, low_open=True)],
    paper_profile={"also_d3": True, "n_starts": 32, "t_max": 40.0, "n_times": 161},
    validate=validate_model,
    formulas=(r'X_\infty(x)', 'r_{2}'),
    theory=THEORY, numerics=NUMERICS,
)
def zero_temperature_flow(p: dict, ctx: Context) -> Evidence:
    return with_d3_case(_zero_temperature_flow, p, ctx)


def _zero_temperature_flow(p: dict, ctx: Context) -> Evidence:
    B, V = model_matrices(p)
    rtols = tuple(p["rtols"])
    if len(rtols) < 2 or np.any(np.diff(rtols) >= 0):
        raise ValueError("rtols must be at least two strictly decreasing tolerances")
    times = np.linspace(0.0, p["t_max"], p["n_times"])
    X0 = ctx.rng("x0").standard_normal((p["n_starts"], p["d"]))
    X0 /= np.linalg.norm(X0, axis=1, keepdims=True)
    closed = [ctx.theory.closed_form_flow(x0, B, V, times) for x0 in X0]
    ctx.progress(0.3)
    paths = ctx.map(start_paths, [(x0, B, V, times, rtols, ctx.numerics.zero_temperature_path) for x0 in X0])
    errs = np.array([start_errors(x, cf) for x, cf in zip(paths, closed)])
    ctx.progress(1.0)
    worst = errs.max(axis=0)                        # max over starts, per tolerance
    observed, tol = float(worst[-1]), float(p["tol"])
    # the study must show the error shrinking with rtol until it reaches the round-off floor (1e-12, about
    # 5000 ulps: quadrature/Newton of the closed form plus the integrator's accumulated rounding). DOP853's error is
    # not monotone in rtol: a slow field can be integrated far below a coarse tolerance (a drawn model with
    # |V| ~ 0.005: 1.4e-12 at rtol 1e-9, then 1.6e-11 at rtol 1e-11, 2e-13 at 1e-13), so an error still below the
    # previous, coarser tolerance is integrator error too; a closed form that is wrong leaves a gap that does not
    # shrink, which the threshold at the finest rtol judges
    floor = 1e-12
    allowed = np.maximum.reduce([worst[:-1], np.full(len(worst) - 1, floor), np.asarray(rtols[:-1], dtype=float)])
    converging = bool(np.all(worst[1:] <= allowed))
    # empirical order: slope of log err vs log rtol (DOP853 with error-per-step control: about 1)
    order = float(np.polyfit(np.log(rtols), np.log(np.maximum(worst, 1e-300)), 1)[0])
    return Evidence(
        metric=reason(FLOW_ERROR, " at the finest integrator tolerance"),
        observed=observed, threshold=tol,
        reason=reason("refinement study: the error falls with the integrator tolerance (rtol ",
                      Number(rtols[0], digits=1), " ", TO, " ", Number(rtols[-1], digits=1), ": ",
                      Number(worst[0], digits=2), " ", TO, " ", Number(worst[-1], digits=2), ", empirical order ",
                      fixed(order, 2), "), so at the finest rtol it is integrator error; a wrong field or time change "
                      "gives an ", Math(sp.Function("O")(sp.Integer(1))), " gap that does not shrink. Threshold ",
                      Number(tol, digits=1), " = the claimed agreement; pass also requires the error to decrease "
                      "along the study down to the round-off floor ", Number(floor, digits=1), " (or stay below the previous rtol)"),
        passed=bool(observed <= tol and converging),
        analytic=[c[-1].tolist() for c in closed],
        numeric=None,
        uncertainty=float(worst[-1]),
        details={"rtols": list(rtols), "max_error_per_rtol": worst.tolist(), "error_per_start": errs.tolist(),
                 "x0": X0.tolist(), "times": times.tolist(), "empirical_order": order,
                 "decreasing": converging, "integrator": "scipy DOP853, atol 1e-16",
                 "field": "attnverify.numerics.meanfield.particles.attention_field(beta=inf)",
                 "closed_form": "attnverify.theory.meanfield.closed_form_flow (adaptive 20-pt Gauss-Legendre + Newton time change)",
                 "certificates": [dict(c) for c in ctx.theory.spectrum(B, V).certificates]},
        plots=[Plot(title="closed form vs DOP853: refinement study", xlabel="integrator rtol",
                    ylabel="max error", logx=True, logy=True,
                    series=[Series(reason(FLOW_ERROR), list(rtols), worst.tolist(), style="o-"),
                            Series("threshold", [rtols[0], rtols[-1]], [tol, tol], style="--")]),
               Plot(title="closed-form trajectories (first coordinate)", xlabel=reason(T_MATH), ylabel=reason(X_1_OF_T),
                    series=[Series(reason(X_0, " #", Number(i)), times.tolist(), c[:, 0].tolist())
                            for i, c in enumerate(closed)])],
    )
