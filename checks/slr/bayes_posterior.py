"""Paper C, claim 2 (the Bayes risk the oracle is compared with): the derived posterior of the latent location is the
posterior of the simulated model.

Analytic side: the theory object's ``bayes_log_weight`` (attnverify.theory.slr.baselines): the posterior of the
location is the softmax of the log-likelihood ratio s(a, n2) = log N(x; sqrt(d/2) k*, gamma^2 I) - log N(x; 0, I)
(sympy.stats densities, a = <x, k*>, n2 = |x|^2), evaluated by its ``bayes_log_weight_np``; the softmax is the shared
one (attnverify.numerics.softmax, in log-space).

Numeric side: tasks drawn from the model with their latent location J0 (the simulators' ``sample_tasks``). Two tests
that hold exactly when the derived weights w are the posterior P(J0 = l | X): calibration, in bins of w,
sum (1{J0 = l} - w) has mean 0 and variance at most sum w (1 - w) (z per bin); and the two estimators of R* - eps^2
agree: E (Y - sum_l w_l y_l)^2 - eps^2 (direct) and E sum_l w_l (y_l - yhat)^2 (posterior variance), a paired
z-test of the part of the difference beyond a bound on its float64 rounding (:func:`paired_rounding`). One Bonferroni family at ``z_level``. Small d keeps the posterior uncertain (at d = 400 it is one-hot to
1e-100).
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
from attnverify.checks.slr._model import model_options, slr_model, validate_model
from attnverify.checks.slr.claims import DIM
from attnverify.checks.stats import beyond, bonferroni_z, scores
from attnverify.numerics.slr import NUMERICS
from attnverify.numerics.softmax import softmax
from attnverify.theory.slr import THEORY

ABS_Z = Math(sp.Abs(sp.Symbol("z")))                 # the metric's z-scores, |z|

BINS = (0.0, 1e-3, 0.05, 0.3, 0.7, 0.95, 0.999, 1.0 + 1e-12)
MIN_BIN = 30
#: the calibration variance of a bin, the sum of w (1 - w) over its weights (LaTeX: a sum without its limits)
CALIBRATION_VARIANCE = Math(r"\sum w\,(1 - w)")
# the plot's labels: the latent location J_0 of a task, the event J_0 = l, the identity line y = x
J0, J0_IS_L = Math(sp.Symbol("J_0")), Math(sp.Eq(sp.Symbol("J_0"), sp.Symbol("l")))
IDENTITY = Math(sp.Eq(sp.Symbol("y"), sp.Symbol("x")))


def bayes_draw_task(model_args: tuple, n: int, seed: np.random.SeedSequence, sample_tasks) -> dict:
    """n tasks of the model drawn by ``sample_tasks``: per token a = <X_l, k*>, n2 = |X_l|^2, y = <X_l, v*> and
    y_abs = sum_i |X_li v*_i| (the scale of y's rounding); Y and J0 (numerics only)."""
    from attnverify.numerics.slr.model import draw_targets

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    out = {"a": [], "n2": [], "y": [], "y_abs": [], "Y": [], "J0": []}
    chunk = max(1, 4_000_000 // (model.L * model.d))
    for start in range(0, n, chunk):
        X, Y, J0 = sample_tasks(model, ks, vs, min(chunk, n - start), rng)
        out["a"].append(X @ ks)
        out["n2"].append(np.einsum("nld,nld->nl", X, X))
        out["y"].append(X @ vs)
        out["y_abs"].append(np.abs(X) @ np.abs(vs))
        out["Y"].append(Y)
        out["J0"].append(J0)
    return {k: np.concatenate(v) for k, v in out.items()}


def paired_rounding(dr: dict, w: np.ndarray, eps: float) -> float:
    """A bound on the float64 rounding of the mean of direct - post (per task (Y - yhat)^2 - eps^2 minus
    sum_l w_l (y_l - yhat)^2, yhat = sum_l w_l y_l) over the exact values of the same Y, y and weights w. A dot
    product of length d carries at most g_d sum_i |x_i v_i| (g_n = n u / (1 - n u), u the unit roundoff), so each
    y_l is off by at most delta_l = g_d y_abs_l and Y by delta_Y = delta_J0 + 2 u |Y| (its noise added), however
    small y is after the cancellation sqrt(d/2) <k*, v*> = 0 in the planted token; yhat by
    Dh = sum_l w_l delta_l + g_(L+1) sum_l w_l |y_l|; a square e^2 computed from e with error De by De (2|e| + De).
    At eps = 0 with a one-hot posterior both estimators are 0 up to this rounding (measured: 1.6e-33 against a
    standard error of 4e-35), which is no evidence either way."""
    u = float(np.finfo(float).eps) / 2
    d, L = dr["d"], w.shape[1]
    g = lambda n: n * u / (1 - n * u)
    delta = g(d) * dr["y_abs"]
    rows = np.arange(w.shape[0])
    dY = delta[rows, dr["J0"]] + 2 * u * np.abs(dr["Y"])
    yhat = np.sum(w * dr["y"], axis=1)
    dh = np.sum(w * delta, axis=1) + g(L + 1) * np.sum(w * np.abs(dr["y"]), axis=1)
    e = np.abs(dr["Y"] - yhat)
    de = dY + dh + u * e
    r = np.abs(dr["y"] - yhat[:, None])
    dr_ = delta + dh[:, None] + u * r
    direct = de * (2 * e + de) + 2 * u * (e ** 2 + eps ** 2)
    post = np.sum(w * dr_ * (2 * r + dr_), axis=1) + g(L + 2) * np.sum(w * r ** 2, axis=1)
    b = direct + post
    return float(np.mean(b) * (1 + g(np.log2(b.size) + 2)))


@dataclass(frozen=True)
class BayesFindings:
    ds: tuple[int, ...]
    bayes_excess: tuple[float, ...]
    bayes_excess_se: tuple[float, ...]
    max_abs_z: float
    z_threshold: float


@check(
    id="slr.bayes_posterior",
    compares="The derived posterior of the latent location (softmax of the log-likelihood ratio s(<x, k*>, |x|^2)) is "
             "the posterior of the simulated model: calibrated, and its two estimators of the Bayes risk agree",
    source="Paper C, claim 2 (the Bayes risk the oracle is compared with)",
    params=[*model_options(without=("d", "lam")),
            Param("ds", "ints", (4, 16), "token dimensions d (small: an uncertain posterior)", low=2, high=4096),
            Param("n_tasks", int, 20000, "tasks per d", low=1000, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper_profile={"ds": (2, 4, 8, 16, 32), "n_tasks": 200000},
    validate=validate_model,
    formulas=('s(x)',),
    theory=THEORY, numerics=NUMERICS,
)
def bayes_posterior(p: dict, ctx: Context) -> Evidence:
    ds = tuple(p["ds"])
    draws = ctx.map(bayes_draw_task, [((p["gamma"], d, p["L"], p["eps"]), p["n_tasks"], s, ctx.numerics.sample_tasks)
                                      for d, s in zip(ds, ctx.seeds(len(ds)))])
    zs, excess, excess_se, rows = [], [], [], []
    for d, dr in zip(ds, draws):
        w = softmax(ctx.theory.bayes_log_weight_np(dr["a"], dr["n2"], p["gamma"], d), axis=1)
        hit = np.zeros_like(w)
        hit[np.arange(w.shape[0]), dr["J0"]] = 1.0
        idx = np.digitize(w.ravel(), BINS) - 1
        for b in range(len(BINS) - 1):
            sel = idx == b
            if sel.sum() >= MIN_BIN:
                var = float(np.sum(w.ravel()[sel] * (1 - w.ravel()[sel])))
                if var > 0:
                    z = float(np.sum(hit.ravel()[sel] - w.ravel()[sel]) / np.sqrt(var))
                    zs.append(z)
                    rows.append({"d": d, "bin": (BINS[b], BINS[b + 1]), "n": int(sel.sum()), "z": z,
                                 "mean_w": float(w.ravel()[sel].mean()), "freq": float(hit.ravel()[sel].mean())})
        yhat = np.sum(w * dr["y"], axis=1)
        post = np.sum(w * (dr["y"] - yhat[:, None]) ** 2, axis=1)
        direct = (dr["Y"] - yhat) ** 2 - p["eps"] ** 2
        diff = direct - post
        floor = paired_rounding({**dr, "d": d}, w, p["eps"])
        zs.append(float(scores(beyond(diff.mean(), floor), diff.std(ddof=1) / np.sqrt(diff.size))))
        excess.append(float(post.mean()))
        excess_se.append(float(post.std(ddof=1) / np.sqrt(post.size)))
    z = np.array(zs)
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    cal = [r for r in rows]
    return Evidence(
        metric=reason("max ", ABS_Z, " over calibration bins and the paired test of the two Bayes-risk estimators"),
        observed=worst, threshold=z_star,
        reason=reason("Bonferroni two-sided normal quantile for ", Number(z.size), " z-scores at family-wise "
                      "false-alarm rate ", Number(p["z_level"], digits=6), "; the calibration variance ",
                      CALIBRATION_VARIANCE, " bounds the true one (the indicators of one task are negatively "
                      "correlated), so the test is conservative; ", Number(p["n_tasks"]), " tasks per ", Math(DIM)),
        passed=bool(worst <= z_star), analytic=excess, numeric=excess, uncertainty=excess_se,
        details={"calibration": cal, "ds": ds, "bayes_excess": excess, "bayes_excess_se": excess_se},
        plots=[Plot(title=reason("calibration of the derived posterior of ", J0),
                    xlabel="mean derived weight in the bin",
                    ylabel=reason("frequency of ", J0_IS_L),
                    series=[Series("bins", [r["mean_w"] for r in cal], [r["freq"] for r in cal], style="o"),
                            Series(reason(IDENTITY), [0, 1], [0, 1], style="-")])],
        findings=BayesFindings(ds, tuple(excess), tuple(excess_se), worst, z_star),
    )
