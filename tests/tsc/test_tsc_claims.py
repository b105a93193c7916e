"""Paper D's claims (``D.*``): the judges read typed findings and answer from them. The rate and horizon judges are
tested on findings written here by hand (so every expected verdict follows from the numbers below, not from a run);
the formula claims run their checks and the formula judge (SymPy proof, certified counterexample, Monte Carlo);
the full quick ledger is marked slow."""
from __future__ import annotations

import dataclasses

import pytest

from attnverify.checks.claims import CLAIMS, evaluate_claim, statement_of
from attnverify.checks.evidence import Evidence, Result
from attnverify.checks.registry import load
from attnverify.checks.runner import run
from attnverify.checks.tsc.findings import CurveFindings, HorizonFindings, SlopePoint
from attnverify.checks.tsc.uniform import RadiusPoint, UniformFindings
from attnverify.render.reasons import plain

load()


def _point(H: float, lo: float, hi: float) -> SlopePoint:
    return SlopePoint(H, H / 2, 3 * H, 1.5 * H, (lo + hi) / 2, (lo, hi), 0.995, (lo + hi) / 2 + 0.05, 0.05)


#: four horizons; beta(H) = 1/(2(1 + H^2)) is 0.49995, 0.4, 0.1, 0.0135 there
POINTS = (_point(0.01, -0.6, -0.4), _point(0.5, -0.6, -0.38), _point(2.0, -0.6, -0.4), _point(6.0, -0.3, -0.1))


def _results(points=POINTS, gaps=(1e-16, 0.2)) -> dict:
    def result(cid, findings):
        ev = Evidence(metric="m", observed=0.0, threshold=1.0, reason="r", passed=True, findings=findings)
        return Result(cid, "", "", "pass", {}, 0.0, evidence=ev, seed=0)
    curves = CurveFindings("gaussian", (200, 400, 800), 20, points, points)
    return {"tsc.error_curves": result("tsc.error_curves", curves),
            "tsc.horizons": result("tsc.horizons", HorizonFindings(1e-15, gaps[1], gaps[0]))}


def _judge(cid: str, stated=None, results=None):
    return evaluate_claim(CLAIMS[cid], results or _results(), stated)


def test_the_stated_rate_holds_and_the_ledger_says_where_it_is_sharp():
    row = _judge("D.moment_rate")
    assert row.verdict == "holds"
    ev = row.evidence["stated"]
    assert ev["holds"] and not ev["sharp"]
    mean = ev["mean"]
    assert [r["H"] for r in mean] == [0.01, 0.5, 2.0, 6.0]
    assert all(set(r) >= {"H", "exponent", "interval"} and len(r["interval"]) == 2 for r in mean)
    assert [r["sharp"] for r in mean] == [True, True, False, False]
    assert mean[2]["stated"] == pytest.approx(-0.1, rel=1e-9)            # 1/(2 (1 + 4))
    assert mean[2]["loose_by"] == pytest.approx(0.3, rel=1e-9)           # -0.1 - (-0.4)


def test_a_rate_faster_than_the_evidence_allows_is_refuted():
    s = statement_of("D.moment_rate")
    row = _judge("D.moment_rate", s.restated("n**(-1/(1 + H**2))"))        # 1 at H -> 0: faster than -0.6
    assert row.verdict == "refuted" and "0.01" in row.condition


def test_a_slower_measured_decay_refutes_the_stated_bound():
    slow = (_point(0.01, -0.6, -0.4), _point(0.5, -0.3, -0.2))           # stated -0.4 at H = 0.5, lo = -0.3
    row = _judge("D.moment_rate", results=_results(slow))
    assert row.verdict == "refuted" and "0.5" in row.condition


def test_a_looser_bound_is_not_refuted_but_the_same_form_as_an_exact_rate_is():
    s = statement_of("D.moment_rate")
    loose = s.restated("n**(-1/(2*(1 + H)))")                               # 1/3 at H = 0.5, 1/6 at H = 2
    assert _judge("D.moment_rate", loose).verdict == "holds"
    exact = s.restated("n**(-1/(2*(1 + H)))", direction="exact")
    assert _judge("D.moment_rate", exact).verdict == "refuted"


def test_the_horizon_convention_changes_the_stated_exponents():
    """In the one-sided convention the points' H is three times larger (see _point), so beta is smaller: at
    H = 0.5 (one-sided 1.5) beta = 1/(2 (1 + 2.25)) = 0.154, outside [-0.6, -0.38] as an exact rate."""
    s = statement_of("D.moment_rate")
    two = _judge("D.moment_rate", dataclasses.replace(s, at={"horizon": "two_sided"})).evidence["stated"]
    one = _judge("D.moment_rate", dataclasses.replace(s, at={"horizon": "one_sided"})).evidence["stated"]
    assert two["mean"][1]["stated"] == pytest.approx(-0.4, rel=1e-6)
    assert one["mean"][1]["stated"] == pytest.approx(-1 / (2 * (1 + 2.25)), rel=1e-6)


def test_beta_below_half_holds_and_a_wrong_limit_is_refuted():
    s = statement_of("D.beta_below_half")
    row = _judge("D.beta_below_half")
    assert row.verdict == "holds"                   # H = 6: [-0.3, -0.1] lies above -1/2
    wrong = _judge("D.beta_below_half", s.restated(s.stated, target="1"))
    assert wrong.verdict == "refuted" and "0.01" in wrong.condition
    flat = (_point(0.01, -0.6, -0.4), _point(0.5, -0.6, -0.45))
    assert _judge("D.beta_below_half", results=_results(flat)).verdict == "not_refuted"


def test_only_the_two_sided_horizon_is_transpose_invariant():
    s = statement_of("D.horizon_convention")
    row = _judge("D.horizon_convention")
    assert row.verdict == "holds"
    per = row.evidence["stated"]["beta_by_convention"]
    assert set(per) == {"two_sided", "two_sided_tau", "one_sided", "one_sided_tau"}
    assert _judge("D.horizon_convention", s.restated("one_sided_invariant")).verdict == "refuted"


def test_formula_claims_hold_and_refute_a_missing_sigma_and_a_wrong_bessel_order():
    results = {r.id: r for r in run(["tsc.gaussian_map", "tsc.sphere_map"], seed=0).results}
    g, s = statement_of("D.gaussian_map"), statement_of("D.sphere_map")
    assert evaluate_claim(CLAIMS["D.gaussian_map"], results).verdict == "holds"
    assert evaluate_claim(CLAIMS["D.sphere_map"], results).verdict == "holds"
    no_sigma = evaluate_claim(CLAIMS["D.gaussian_map"], results, g.restated("v*(m + a*x_xi/tau)"))
    assert no_sigma.verdict == "refuted", no_sigma.reason
    order = s.stated.replace("besseli(d/2,", "besseli(d/2 + 1,").replace("besseli(d/2 - 1,", "besseli(d/2,")
    wrong = evaluate_claim(CLAIMS["D.sphere_map"], results, s.restated(order))
    assert wrong.verdict == "refuted", wrong.reason


def test_the_uniform_rate_holds_reports_the_constant_growth_and_refutes_1_over_n():
    """C(R) = e^{R/2} at R = 1, 2, 4: log C grows by exactly 1/2 per unit R."""
    radii = tuple(RadiusPoint(R, -0.5, (-0.7, -0.3), 0.98, R / 2, 0.01) for R in (1.0, 2.0, 4.0))
    ev = Evidence(metric="m", observed=0.0, threshold=1.0, reason="r", passed=True,
                  findings=UniformFindings((250, 1000, 4000), 12, radii))
    results = {"tsc.uniform_curves": Result("tsc.uniform_curves", "", "", "pass", {}, 0.0, evidence=ev, seed=0)}
    row = _judge("D.uniform_rate", results=results)
    assert row.verdict == "holds"
    assert row.evidence["stated"]["growth_per_unit_R"] == pytest.approx(0.5, rel=1e-9)
    wrong = _judge("D.uniform_rate", statement_of("D.uniform_rate").restated("n**(-1)"), results)
    assert wrong.verdict == "refuted" and "R = 1" in plain(wrong.condition)


@pytest.mark.slow
def test_the_quick_ledger_gives_every_claim_a_verdict_from_evidence():
    report = run(["tsc"], seed=0)
    assert all(r.verdict == "pass" for r in report.results), [(r.id, r.verdict, r.error) for r in report.results]
    claims = {c.id: c for c in report.claims}
    assert set(claims) == {"D.gaussian_map", "D.sphere_map", "D.moment_rate", "D.beta_below_half",
                           "D.horizon_convention", "D.uniform_rate", "D.polynomial_constant", "D.hardmax_log_rate"}
    assert all(c.verdict != "inconclusive" for c in claims.values()), {c.id: c.reason for c in claims.values()}
    rate = claims["D.moment_rate"].evidence["stated"]
    assert len(rate["mean"]) >= 4 and len(rate["covariance"]) >= 4
    wrong = evaluate_claim(CLAIMS["D.moment_rate"], {r.id: r for r in report.results},
                           statement_of("D.moment_rate").restated("n**(-1/(1 + H**2))"))
    assert wrong.verdict == "refuted"
