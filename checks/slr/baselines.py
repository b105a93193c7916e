"""Paper C, claims 2 and 3: the baselines -- the Bayes predictor (the oracle's benchmark) and the best linear
predictor (which fails when the location is latent).

Analytic side (attnverify.theory.slr.baselines): the posterior of the location, softmax of the log-likelihood ratio
s(a, n2) = log N(x; sqrt(d/2) k*, gamma^2 I) - log N(x; 0, I) (sympy.stats densities, a = <x, k*>, n2 = |x|^2); the
best linear predictor beta_l = b v*, b = gamma^2 / (gamma^2 + L - 1), excess risk gamma^2 (L - 1)/(gamma^2 + L - 1);
and the oracle's risk R(k*, v*) (attnverify.theory.slr.population) minimised over lam.

slr.bayes_posterior -- numeric side: tasks drawn from the model with their latent location J0
(attnverify.numerics.slr.model.sample_tasks). Two tests that hold exactly when the derived weights w are the
posterior P(J0 = l | X): calibration, in bins of w, sum (1{J0 = l} - w) has mean 0 and variance at most sum w (1 - w)
(z per bin); and the two estimators of R* - eps^2 agree: E (Y - sum_l w_l y_l)^2 - eps^2 (direct) and
E sum_l w_l (y_l - yhat)^2 (posterior variance), a paired z-test. One Bonferroni family at ``z_level``. Small d keeps
the posterior uncertain (at d = 400 it is one-hot to 1e-100).

slr.oracle_vs_bayes -- for each d: lam_best(d) = argmin over lam of the closed-form oracle risk (derived); the
measured risk of the oracle predictor at lam_best by Monte Carlo (attnverify.numerics.slr.risk, projected sampler:
equal in law) against the closed form (z-tests, Bonferroni); the Bayes excess R* - eps^2 by Monte Carlo
(attnverify.numerics.slr.bayes, its own posterior). Findings: lam_best(d), the oracle's excess and the gap to Bayes,
and the slope of log(gap) against log d (least squares with its standard error) -- the asymptotic question of claim 2.

slr.best_linear -- numeric side: least squares on n_train tasks (attnverify.numerics.slr.linear, pooled features
sum_l X_l: the population optimum of all linear predictors is exchangeable, hence pooled) and its risk on n_test
fresh tasks. The fitted predictor's risk exceeds the population optimum by the estimation error, R p / (n - p - 1)
in expectation for a Gaussian design (p = d features); the test allows twice that above the closed form:
the measured risk must lie in [R - z se, R + 2 R p/(n - p - 1) + z se] (Bonferroni z over the grid).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import Param
from attnverify.checks.registry import check
from attnverify.checks.slr._model import MODEL_PARAMS, evaluator, fmt, oracle_overlaps, slr_model, validate_model
from attnverify.checks.stats import bonferroni_z, linfit

BINS = (0.0, 1e-3, 0.05, 0.3, 0.7, 0.95, 0.999, 1.0 + 1e-12)
MIN_BIN = 30
_NOT_D = [q for q in MODEL_PARAMS if q.name not in ("d", "lam")]


# ------------------------------------------------------------------------------------------- Bayes posterior
def bayes_draw_task(model_args: tuple, n: int, seed: np.random.SeedSequence) -> dict:
    """n tasks of the model: per token a = <X_l, k*>, n2 = |X_l|^2, y = <X_l, v*>; Y and J0 (numerics only)."""
    from attnverify.numerics.slr.model import draw_targets, sample_tasks

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    out = {"a": [], "n2": [], "y": [], "Y": [], "J0": []}
    chunk = max(1, 4_000_000 // (model.L * model.d))
    for start in range(0, n, chunk):
        X, Y, J0 = sample_tasks(model, ks, vs, min(chunk, n - start), rng)
        out["a"].append(X @ ks)
        out["n2"].append(np.einsum("nld,nld->nl", X, X))
        out["y"].append(X @ vs)
        out["Y"].append(Y)
        out["J0"].append(J0)
    return {k: np.concatenate(v) for k, v in out.items()}


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class BayesFindings:
    ds: tuple[int, ...]
    bayes_excess: tuple[float, ...]
    bayes_excess_se: tuple[float, ...]
    max_abs_z: float
    z_threshold: float


@check(
    id="slr.bayes_posterior",
    claim="The derived posterior of the latent location (softmax of the log-likelihood ratio s(<x, k*>, |x|^2)) is "
          "the posterior of the simulated model: calibrated, and its two estimators of the Bayes risk agree",
    source="Paper C, claim 2 (the Bayes risk the oracle is compared with)",
    params=[*_NOT_D,
            Param("ds", "ints", (4, 16), "token dimensions d (small: an uncertain posterior)", low=2, high=4096),
            Param("n_tasks", int, 20000, "tasks per d", low=1000, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper={"ds": (2, 4, 8, 16, 32), "n_tasks": 200000},
    validate=validate_model,
)
def bayes_posterior(p: dict, ctx: Context) -> Evidence:
    from attnverify.theory.slr.baselines import bayes_log_weight_np

    ds = tuple(p["ds"])
    draws = ctx.map(bayes_draw_task, [((p["gamma"], d, p["L"], p["eps"]), p["n_tasks"], s)
                                      for d, s in zip(ds, ctx.seeds(len(ds)))])
    zs, excess, excess_se, rows = [], [], [], []
    for d, dr in zip(ds, draws):
        w = _softmax(bayes_log_weight_np(dr["a"], dr["n2"], p["gamma"], d))
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
        zs.append(float(diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))))
        excess.append(float(post.mean()))
        excess_se.append(float(post.std(ddof=1) / np.sqrt(post.size)))
    z = np.array(zs)
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    cal = [r for r in rows]
    return Evidence(
        metric="max |z| over calibration bins and the paired test of the two Bayes-risk estimators",
        observed=worst, threshold=z_star,
        reason=f"Bonferroni two-sided normal quantile for {z.size} z-scores at family-wise false-alarm rate "
               f"{p['z_level']:g}; the calibration variance sum w(1 - w) bounds the true one (the indicators of one "
               f"task are negatively correlated), so the test is conservative; {p['n_tasks']} tasks per d",
        passed=bool(worst <= z_star), analytic=excess, numeric=excess, uncertainty=excess_se,
        details={"calibration": cal, "ds": ds, "bayes_excess": excess, "bayes_excess_se": excess_se},
        plots=[Plot(title="calibration of the derived posterior of J0", xlabel="mean derived weight in the bin",
                    ylabel="frequency of J0 = l", series=[Series("bins", [r["mean_w"] for r in cal],
                                                                 [r["freq"] for r in cal], style="o"),
                                                          Series("y = x", [0, 1], [0, 1], style="-")])],
        findings=BayesFindings(ds, tuple(excess), tuple(excess_se), worst, z_star),
    )


# ------------------------------------------------------------------------------------------- oracle vs Bayes
def best_lam(gamma: float, d: int, L: int, eps: float) -> tuple[float, float]:
    """(lam_best, R(oracle) at lam_best): the closed-form oracle risk minimised over log lam in [1e-3, 10]."""
    from scipy.optimize import minimize_scalar

    o = oracle_overlaps()
    r = minimize_scalar(lambda x: float(evaluator(np.exp(x), gamma, d, L, eps).risk(o)),
                        bounds=(np.log(1e-3), np.log(10.0)), method="bounded", options={"xatol": 1e-9})
    return float(np.exp(r.x)), float(r.fun)


def oracle_mc_task(model_args: tuple, lam: float, n: int, seed: np.random.SeedSequence) -> dict:
    """Monte Carlo risk of the oracle predictor at lam and the Monte Carlo Bayes excess (numerics only)."""
    from attnverify.numerics.slr.bayes import bayes_risk_mc
    from attnverify.numerics.slr.model import draw_targets
    from attnverify.numerics.slr.risk import risk_mc

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    m, se = risk_mc(model, ks, vs, ks, vs, lam, n, rng, method="projected")
    b = bayes_risk_mc(model, n, rng)
    return {"risk": float(m), "se": float(se), "bayes": b.excess, "bayes_se": b.excess_se}


@dataclass(frozen=True)
class OracleBayesFindings:
    ds: tuple[int, ...]
    lam_best: tuple[float, ...]
    excess_closed: tuple[float, ...]
    excess_mc: tuple[float, ...]
    excess_se: tuple[float, ...]
    bayes_excess: tuple[float, ...]
    gap_slope: float
    gap_slope_se: float
    gap_slope_ci: tuple[float, float]
    lam_slope: float
    L: int


@check(
    id="slr.oracle_vs_bayes",
    claim="The oracle's risk at its best temperature lam_best(d) has the derived closed form (Monte Carlo), and its "
          "excess over the Bayes risk is measured as d grows",
    source="Paper C, claim 2",
    params=[*_NOT_D,
            Param("ds", "ints", (100, 400, 1600), "token dimensions d", low=4, high=1_000_000),
            Param("n_tasks", int, 20000, "Monte Carlo tasks per d", low=1000, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper={"ds": (50, 100, 200, 400, 800, 1600, 3200, 6400), "n_tasks": 200000},
    validate=validate_model,
)
def oracle_vs_bayes(p: dict, ctx: Context) -> Evidence:
    ds = tuple(sorted(set(p["ds"])))
    best = [best_lam(p["gamma"], d, p["L"], p["eps"]) for d in ds]
    out = ctx.map(oracle_mc_task, [((p["gamma"], d, p["L"], p["eps"]), lam, p["n_tasks"], s)
                                   for d, (lam, _), s in zip(ds, best, ctx.seeds(len(ds)))])
    e2 = p["eps"] ** 2
    z = np.array([(o["risk"] - r) / o["se"] for (_, r), o in zip(best, out)])
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    exc_c = [r - e2 for _, r in best]
    exc_m = [o["risk"] - e2 for o in out]
    gap = np.array([m - o["bayes"] for m, o in zip(exc_m, out)])
    if len(ds) >= 3 and np.all(gap > 0):
        fit = linfit(np.log(ds), np.log(gap))
        slope, sse, ci = fit["slope"], fit["se"], tuple(fit["ci95"])
        lam_slope = linfit(np.log(ds), np.log([lam for lam, _ in best]))["slope"]
    else:
        slope, sse, ci, lam_slope = float("nan"), float("nan"), (float("nan"), float("nan")), float("nan")
    return Evidence(
        metric="max |z| of the Monte Carlo oracle risk at lam_best(d) against the closed form", observed=worst,
        threshold=z_star,
        reason=f"Bonferroni two-sided normal quantile for {z.size} z-scores at family-wise false-alarm rate "
               f"{p['z_level']:g}; {p['n_tasks']} tasks per d; gap to Bayes ~ d^{fmt(slope, 3)} "
               f"(95% interval [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]), lam_best ~ d^{fmt(lam_slope, 3)}",
        passed=bool(worst <= z_star), analytic=exc_c, numeric=exc_m, uncertainty=[o["se"] for o in out],
        details={"ds": ds, "lam_best": [lam for lam, _ in best], "bayes_excess": [o["bayes"] for o in out],
                 "bayes_excess_se": [o["bayes_se"] for o in out], "z": z},
        plots=[Plot(title=f"excess risk of the oracle at lam_best(d) and of the Bayes predictor (L = {p['L']})",
                    xlabel="d", ylabel="excess risk R - eps^2",
                    series=[Series("oracle, closed form", ds, exc_c, style="-"),
                            Series("oracle, Monte Carlo", ds, exc_m, yerr=[o["se"] for o in out], style="o"),
                            Series("Bayes, Monte Carlo", ds, np.maximum([o["bayes"] for o in out], 1e-30),
                                   style="s")], logx=True, logy=True)],
        findings=OracleBayesFindings(ds, tuple(lam for lam, _ in best), tuple(exc_c), tuple(exc_m),
                                     tuple(o["se"] for o in out), tuple(o["bayes"] for o in out), float(slope),
                                     float(sse), (float(ci[0]), float(ci[1])), float(lam_slope), int(p["L"])),
    )


# ------------------------------------------------------------------------------------------- best linear
def linear_task(model_args: tuple, n_train: int, n_test: int, seed: np.random.SeedSequence) -> dict:
    from attnverify.numerics.slr.linear import linear_baseline
    from attnverify.numerics.slr.model import draw_targets

    rng = np.random.default_rng(seed)
    model = slr_model(*model_args)
    ks, vs = draw_targets(model.d, rng)
    b = linear_baseline(model, ks, vs, n_train, n_test, rng, features="pooled")
    return {"risk": b.test_risk, "se": b.test_risk_se}


@dataclass(frozen=True)
class LinearFindings:
    cells: tuple[tuple[int, int], ...]
    excess_closed: tuple[float, ...]
    excess_measured: tuple[float, ...]
    excess_se: tuple[float, ...]
    allowance: tuple[float, ...]
    max_abs_z: float
    z_threshold: float


def _validate_linear(p: dict) -> None:
    validate_model(p)
    if max(p["ds"]) >= p["n_train"] - 1:
        raise ValueError(f"n_train = {p['n_train']} must exceed d + 1 = {max(p['ds']) + 1} (least squares on d features)")


@check(
    id="slr.best_linear",
    claim="The best linear predictor's risk has the derived closed form eps^2 + gamma^2 (L - 1)/(gamma^2 + L - 1) "
          "(least squares on samples, tested on fresh samples), whatever d",
    source="Paper C, claim 3",
    params=[*(q for q in _NOT_D if q.name != "L"),
            Param("ds", "ints", (8, 32), "token dimensions d", low=2, high=2048),
            Param("Ls", "ints", (2, 10), "sequence lengths L", low=1, high=1000),
            Param("n_train", int, 20000, "training tasks", low=100, high=10_000_000),
            Param("n_test", int, 20000, "test tasks", low=100, high=10_000_000),
            Param("z_level", float, 1e-3, "family-wise false-alarm rate", low=0.0, high=0.5, low_open=True)],
    paper={"ds": (8, 32, 128), "Ls": (2, 10), "n_train": 100000, "n_test": 100000},
    validate=_validate_linear,
)
def best_linear(p: dict, ctx: Context) -> Evidence:
    from attnverify.theory.slr.baselines import best_linear_predictor
    from attnverify.theory.slr.symbols import L as L_, eps as eps_, gamma as gamma_

    cells = [(d, L) for d in p["ds"] for L in p["Ls"]]
    out = ctx.map(linear_task, [((p["gamma"], d, L, p["eps"]), p["n_train"], p["n_test"], s)
                                for (d, L), s in zip(cells, ctx.seeds(len(cells)))])
    risk_expr = best_linear_predictor()["risk"]
    closed = [float(risk_expr.subs({gamma_: p["gamma"], L_: L, eps_: p["eps"]})) for _, L in cells]
    allow = [2 * r * d / (p["n_train"] - d - 1) for r, (d, _) in zip(closed, cells)]
    zs = []
    for o, r, a in zip(out, closed, allow):
        zs.append(min(0.0, o["risk"] - r) / o["se"] + max(0.0, o["risk"] - r - a) / o["se"])
    z = np.array(zs)
    z_star = bonferroni_z(p["z_level"], z.size)
    worst = float(np.max(np.abs(z)))
    e2 = p["eps"] ** 2
    return Evidence(
        metric="max |z| of the least-squares test risk outside [R, R + 2 R p/(n - p - 1)]", observed=worst,
        threshold=z_star,
        reason=f"Bonferroni two-sided normal quantile for {z.size} z-scores at family-wise false-alarm rate "
               f"{p['z_level']:g}; the band's upper end allows twice the Gaussian-design expectation of the "
               f"estimation error of {p['n_train']} training tasks; {p['n_test']} test tasks (CLT)",
        passed=bool(worst <= z_star), analytic=closed, numeric=[o["risk"] for o in out],
        uncertainty=[o["se"] for o in out],
        details={"cells": cells, "allowance": allow, "z": z},
        plots=[Plot(title="best linear predictor: excess risk against d", xlabel="d", ylabel="R_lin - eps^2",
                    series=[Series(f"L = {L}, closed form", [d for d, l2 in cells if l2 == L],
                                   [r - e2 for r, (_, l2) in zip(closed, cells) if l2 == L], style="-")
                            for L in p["Ls"]]
                    + [Series(f"L = {L}, least squares", [d for d, l2 in cells if l2 == L],
                              [o["risk"] - e2 for o, (_, l2) in zip(out, cells) if l2 == L],
                              yerr=[o["se"] for o, (_, l2) in zip(out, cells) if l2 == L], style="o")
                       for L in p["Ls"]], logx=True)],
        findings=LinearFindings(tuple(cells), tuple(r - e2 for r in closed), tuple(o["risk"] - e2 for o in out),
                                tuple(o["se"] for o in out), tuple(allow), worst, z_star),
    )
