"""Paper B, claim 1: the zero-temperature limit X_beta[mu] -> X_inf at the rate sqrt(log(beta+1)/beta).

Numeric side: X_beta[mu](x) on S^{d-1}, any d >= 2, for a positive Lipschitz (quadratic) density, by certified
quadrature (attnverify.numerics.laplace.laplace_field_certified: FLINT/Arb acb.integral, a rigorous error bound);
analytic side: attnverify.theory.mean_field.zero_temperature_field (Lagrange-multiplier maximiser).
"""
from __future__ import annotations

import mpmath as mp
import numpy as np

import attnverify.theory.mean_field as mf
from attnverify.checks.framework import Context, Evidence, Param, Plot, Series, check
from attnverify.checks.meanfield._model import (D3_PARAM, MODEL_PARAMS, model_matrices,
                                      validate_betas, validate_model, with_d3_case)
from attnverify.numerics.laplace import laplace_certificate, laplace_field_certified, standard_density


def density(phi):
    """mu_0 on S^1 (w.r.t. arc length, unnormalised): 1 + 0.5 cos(phi - 0.3) + 0.2 sin(2 phi) >= 0.3 > 0,
    smooth and hence Lipschitz; mpmath- and NumPy-compatible."""
    cos, sin = (np.cos, np.sin) if isinstance(phi, (float, np.ndarray)) else (mp.cos, mp.sin)
    return 1 + 0.5 * cos(phi - 0.3) + 0.2 * sin(2 * phi)


def rate(beta):
    """The paper's rate sqrt(log(beta + 1)/beta)."""
    beta = np.asarray(beta, dtype=float)
    return np.sqrt(np.log1p(beta) / beta)


def field_on_grid(X: np.ndarray, B: np.ndarray, V: np.ndarray, beta: float, dps: int) -> tuple[np.ndarray, float, dict]:
    """X_beta[mu](x) at the rows of X, its rigorous error bound and certificate (task for ctx.map); mu has the
    density :func:`attnverify.numerics.laplace.standard_density` on S^{d-1}."""
    info = laplace_field_certified(X, B, V, beta, standard_density(B.shape[0]), dps=dps)
    return info.value, info.error, laplace_certificate(info, f"X_beta (beta = {beta:g}, {len(X)} points)")


def grid(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points on S^{d-1}: a randomly shifted equispaced grid on the circle (d = 2), otherwise independent
    uniform points (normalised Gaussians)."""
    if d == 2:
        angles = 2 * np.pi * (np.arange(n) + rng.uniform()) / n
        return np.c_[np.cos(angles), np.sin(angles)]
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _validate(p: dict) -> None:
    validate_model(p)
    validate_betas(p["betas"], 3)


@check(
    id="meanfield.zero_temperature_limit",
    claim="As beta -> inf the mean-field field X_beta[mu] converges to the explicit zero-temperature field "
          "P_perp_x V B^T x/||B^T x||, with sup_x error O(sqrt(log(beta+1)/beta)).",
    source="Paper B, claim 1",
    params=[*MODEL_PARAMS, D3_PARAM,
            Param("betas", "floats", (1e1, 1e2, 1e3, 1e4, 1e5, 1e6), "inverse temperatures (increasing)",
                  low=0.0, low_open=True),
            Param("n_grid", int, 12, "points x on S^{d-1} for the sup (circle: randomly shifted equispaced grid; "
                  "d >= 3: uniform random points)", low=4),
            Param("dps", int, 20, "working digits of the certified quadrature (ball arithmetic)", low=15, high=60)],
    paper={"also_d3": True, "n_grid": 64, "dps": 30, "betas": (1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)},
    validate=_validate,
)
def zero_temperature_limit(p: dict, ctx: Context) -> Evidence:
    return with_d3_case(_zero_temperature_limit, p, ctx)


def _zero_temperature_limit(p: dict, ctx: Context) -> Evidence:
    betas = validate_betas(p["betas"], 3)
    B, V = model_matrices(p)
    n = p["n_grid"]
    X = grid(p["d"], n, ctx.rng("grid"))
    X_inf = np.asarray(mf.zero_temperature_field(X, B, V), dtype=float)      # analytic side (SymPy-derived)
    out = ctx.map(field_on_grid, [(X, B, V, float(b), p["dps"]) for b in betas])
    fields = np.array([o[0] for o in out])
    qerr = np.array([o[1] for o in out])
    certs = [o[2] for o in out]
    err = np.max(np.linalg.norm(fields - X_inf[None], axis=2), axis=1)     # sup over the grid, per beta
    ratio = err / rate(betas)
    steps = ratio[1:] / ratio[:-1]
    # uncertainty of each error: the certified bound on X_beta + float rounding of X_inf (4 ulp of ||V||_2)
    slack = 2 * (qerr + 4 * np.finfo(float).eps * np.linalg.norm(V, 2)) / err
    threshold = 1.0 + float(np.max(slack[1:] + slack[:-1]))
    observed = float(np.max(steps))
    upper = betas >= np.sqrt(betas[0] * betas[-1])                          # asymptotic (upper) half of the decades
    expo = float(np.polyfit(np.log(betas[upper]), np.log(err[upper]), 1)[0]) if upper.sum() >= 2 else float("nan")
    expo_all = float(np.polyfit(np.log(betas), np.log(err), 1)[0])
    return Evidence(
        metric="max over consecutive betas of r(beta_{k+1})/r(beta_k), r = sup_x |X_beta - X_inf| / sqrt(log(beta+1)/beta)",
        observed=observed,
        threshold=threshold,
        reason="the rate must hold as a bound: r(beta) must not grow with beta; threshold 1 plus the relative "
               "certified quadrature error bound (Arb acb.integral, {} digits) and float rounding of the two errors "
               "compared".format(p["dps"]),
        passed=bool(observed <= threshold),
        analytic=rate(betas).tolist(),
        numeric=err.tolist(),
        uncertainty=qerr.tolist(),
        details={"beta": betas.tolist(), "sup_error": err.tolist(), "ratio_to_rate": ratio.tolist(),
                 "exponent": expo, "exponent_all_betas": expo_all,
                 "exponent_note": "least-squares slope of log sup_error vs log beta over the upper half of the "
                                  "beta decades; Laplace's method predicts -1 for a smooth density, within the bound",
                 "n_grid": n, "dps": p["dps"], "quadrature_error_bound": qerr.tolist(),
                 "density": ("1 + 0.5 cos(phi - 0.3) + 0.2 sin(2 phi) on S^1 (arc length)" if p["d"] == 2 else
                             f"1 + 0.5 <(cos 0.3, sin 0.3, 0, ...), y> + 0.2 y^T S y on S^{p['d'] - 1}, S the path "
                             "adjacency / its norm (>= 0.3)"),
                 "method": "polar angle about the maximiser, sphere moments in closed form, 1-D integrals by "
                           "FLINT/Arb acb.integral (attnverify.numerics.laplace.laplace_field_certified): a rigorous bound",
                 "certificates": certs},
        plots=[Plot(title="zero-temperature limit: sup_x |X_beta - X_inf|", xlabel="beta", ylabel="error",
                    series=[Series("sup error (certified quadrature)", betas, err, style="o-"),
                            Series("sqrt(log(beta+1)/beta) x r(beta_1)", betas, ratio[0] * rate(betas), style="--")],
                    logx=True, logy=True)],
    )
