"""A small synthetic audit for the report tests: two checks with plots, three claims whose reasons carry
mathematics, numbers and items, evidence of the shared judges (so that each claim has its figure), and a derivation
with one step of every kind. Built in milliseconds: no check runs."""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.claims import ClaimResult
from attnverify.checks.evidence import Evidence, Result
from attnverify.checks.plots import Plot, Series
from attnverify.checks.reason import CheckRef, Math, Number, bracket, pm, reason
from attnverify.checks.runner import Report
from attnverify.theory.derivation import Step

BETA, T = sp.Symbol("beta", positive=True), sp.Symbol("t", nonnegative=True)


def _result(cid: str, plots: list[Plot]) -> Result:
    ev = Evidence(metric="max |z|", observed=1.2, threshold=3.5, reason="Bonferroni, family-wise rate $10^{-3}$",
                  passed=True, plots=plots)
    return Result(cid, f"the closed form of ${cid.split('.')[1]}$ agrees with Monte Carlo", "Paper X, claim 1",
                  "pass", {"n": 10}, 0.5, ev, seed=0)


def synthetic_report() -> Report:
    t = np.linspace(0, 16, 30)
    decay = Plot("W2 against its bound", "t", "W2", logy=True, series=[
        Series("beta=10", t, np.where(t < 12, np.exp(-t), 1e-18), style="o"),
        Series("bound beta=10", t, 2 * np.exp(-0.9 * t), role="bound"),
        Series("beta = inf", np.linspace(0, 120, 200), np.exp(-np.linspace(0, 120, 200) / 3), role="reference")])
    lam = np.linspace(0.5, 1.5, 201)
    hessian = Plot("smallest eigenvalue", "lam", "smallest eigenvalue", series=[
        Series("closed form", lam, 1 - lam ** 2, role="closed_form"),
        Series("second differences", lam[::50], 1 - lam[::50] ** 2, yerr=0.01 * np.ones(5), style="o")])
    results = [_result("x.decay", [decay]), _result("x.hessian", [hessian])]
    W2 = sp.Function("W_2")(sp.Symbol("mu_t^beta"), sp.Symbol(r"\Pi_{\#}\mu_{0}"))
    bound_reason = reason("an upper bound consistent with the evidence, with ", Math(sp.Symbol("K")), " = ",
                          Number(2.35), " (", CheckRef("x.decay"), "):",
                          items=[("along ", Math(T), " at ", Math(BETA), " = ", Number(b), ": ", Math(W2),
                                  " reaches at most ", pm(r, 0.002), " times the bound")
                                 for b, r in ((10, 0.002196), (31.6, 0.2723), (100, 0.2986))])
    bound_ev = {"stated": {"kind": "bound", "K_fitted": 2.35, "series": [
        {"series": f"t at beta={b}", "max_excess": r, "excess_uncertainty": 0.002} for b, r in
        ((10, 0.002196), (31.6, 0.2723), (100, 0.2986))]}}
    threshold_ev = {"stated": {"kind": "threshold", "stated_value": 1.0, "measured_bracket": [1.136, 1.538],
                               "derived_enclosure": [1.30, 1.31], "resolution": 0.05}}
    value_ev = {"stated": {"kind": "value", "stated_value": 0.9965, "measured": 0.9873, "measured_se": 0.0006,
                           "stated_uncertainty": 0.0, "derived": 0.9874, "resolution": 5e-5, "z": 3.0}}
    claims = [
        ClaimResult("X.bound", "X", "W2 decays", "Theorem 1", "not_refuted", bound_reason, None, ["x.decay"],
                    bound_ev, command="attnverify run x.decay"),
        ClaimResult("X.switch", "X", "the switch is at 1", "Claim 2", "refuted",
                    reason("the stated ", Number(1.0), " lies below the measured bracket ", bracket(1.136, 1.538)),
                    reason("the switch lies in ", bracket(1.136, 1.538), ", not at the stated ", Number(1.0)),
                    ["x.hessian"], threshold_ev),
        ClaimResult("Y.figure", "Y", "the runs reach 0.9965", "Figure 3", "holds",
                    "plain words, as an evaluator not yet converted writes them: beta^-0.5", None, ["x.hessian"],
                    value_ev),
    ]
    return Report(profile="quick", seed=0, options={}, results=results, claims=claims, ledger=False)


def synthetic_derivations() -> list[tuple[str, list]]:
    L = sp.Symbol("L", positive=True)
    rho = sp.Symbol("rho")
    steps = [
        Step("The model: $\\rho$ is the overlap", sp.Eq(rho, sp.Symbol("q") * sp.Symbol("xi")), "model statement",
             kind="assumption"),
        Step("The objective, exactly", sp.exp(-BETA) * (1 + rho ** 2), "SymPy simplifies the difference to $0$",
             label=r"J(\rho)", kind="identity"),
        Step("Its long-sequence limit", sp.Limit(1 / L, L, sp.oo).doit() + rho, "law of large numbers",
             label=r"J_{\infty}", kind="limit"),
        Step("The delta method", rho + 1 / L, "first order of the expansion", label=r"\tilde J", kind="approximation",
             order="O(1/L^2)"),
        Step("The paper's Theorem 1", sp.Matrix([[1, rho], [rho, 1]]), "as stated", label=r"\Sigma_{I}",
             kind="statement"),
    ]
    return [("Paper X: a synthetic derivation", steps)]
