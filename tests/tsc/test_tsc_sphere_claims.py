"""D.polynomial_constant and D.hardmax_log_rate judged on findings written here by hand (every expected verdict
follows from the numbers below), their perturbation families refuted, and their two checks at the quick defaults."""
from __future__ import annotations

import numpy as np
import pytest

from attnverify.checks.claims import CLAIMS, evaluate_claim, statement_of
from attnverify.checks.evidence import Evidence, Result
from attnverify.checks.registry import load
from attnverify.checks.runner import run
from attnverify.checks.tsc.sphere_curves import ConstantFindings, ConstantPoint, HardmaxFindings, growth_shape
from attnverify.checks.tsc.uniform import RadiusPoint, UniformFindings

load()
N = (250, 500, 1000, 2000, 4000)


def _result(cid, findings):
    ev = Evidence(metric="m", observed=0.0, threshold=1.0, reason="r", passed=True, findings=findings)
    return Result(cid, "", "", "pass", {}, 0.0, evidence=ev, seed=0)


def _constants(log_c) -> ConstantFindings:
    """Mean log errors chosen so that mean_k(y_k + beta(H) log n_k) = log_c(R), beta(H) = 1/(2(1 + H^2)), H = R^2/4."""
    pts = []
    for R in (0.5, 1.0, 2.0, 4.0):
        H = R**2 / 4
        y = log_c(R) - np.log(N) / (2 * (1 + H**2))
        pts.append(ConstantPoint(R, H, tuple(y), (0.05,) * len(N), -0.4, (-0.5, -0.3)))
    return ConstantFindings(N, 20, tuple(pts))


def _uniform(log_c) -> UniformFindings:
    return UniformFindings(N, 20, tuple(RadiusPoint(R, -0.5, (-0.6, -0.4), 0.99, log_c(R), 0.05)
                                        for R in (1.0, 2.0, 4.0, 8.0)))


def _results(moment=lambda R: 2 * np.log(R), uniform=lambda R: 0.5 * R):
    return {"tsc.moment_constants": _result("tsc.moment_constants", _constants(moment)),
            "tsc.uniform_curves": _result("tsc.uniform_curves", _uniform(uniform))}


def test_growth_shape_reads_a_power_as_straight_and_an_exponential_as_convex():
    R = np.array([1.0, 2.0, 4.0, 8.0])
    g = growth_shape(R, 3 * np.log(R), np.full(4, 0.05))
    assert abs(g["p"] - 3) < 1e-9 and abs(g["q"]) < 1e-9
    g = growth_shape(R, 0.5 * R, np.full(4, 0.05))
    assert g["q"] > 10 * g["q_se"]


def test_polynomial_constant_holds_and_its_perturbation_is_refuted():
    c = CLAIMS["D.polynomial_constant"]
    results = _results()
    assert evaluate_claim(c, results).verdict == "holds"
    for pert in c.perturbations(statement_of(c.id), results):
        assert evaluate_claim(c, results, pert.stated).verdict == "refuted", pert.label


def test_an_exponential_moment_constant_refutes_the_polynomial_statement():
    row = evaluate_claim(CLAIMS["D.polynomial_constant"], _results(moment=lambda R: 1.5 * R))
    assert row.verdict == "refuted" and "moment" in row.condition


def test_an_unresolved_uniform_growth_is_not_a_holds():
    row = evaluate_claim(CLAIMS["D.polynomial_constant"], _results(uniform=lambda R: np.log(R)))
    assert row.verdict == "not_refuted"


def _hardmax(lo, hi):
    return {"tsc.hardmax_curves": _result("tsc.hardmax_curves", HardmaxFindings(N, 8, 20, 1e5, (lo + hi) / 2,
                                                                                 (lo, hi), 0.95))}


def test_hardmax_log_rate_holds_when_slow_and_refutes_a_kept_square_root_rate():
    """-1/log n averaged over n = 250..4000 is about -0.146: [-0.14, -0.06] is no faster than that and far slower
    than n^-1/2; the O(n^-1/2) perturbation is refuted because lo = -0.14 > -0.5."""
    c = CLAIMS["D.hardmax_log_rate"]
    results = _hardmax(-0.14, -0.06)
    assert evaluate_claim(c, results).verdict == "holds"
    for pert in c.perturbations(statement_of(c.id), results):
        assert evaluate_claim(c, results, pert.stated).verdict == "refuted", pert.label


def test_a_resolved_power_law_refutes_only_logarithmic():
    assert evaluate_claim(CLAIMS["D.hardmax_log_rate"], _hardmax(-0.5, -0.3)).verdict == "refuted"
    assert evaluate_claim(CLAIMS["D.hardmax_log_rate"], _hardmax(-0.7, -0.1)).verdict == "not_refuted"


def test_the_two_checks_pass_at_their_quick_defaults():
    for r in run(["tsc.moment_constants", "tsc.hardmax_curves"], seed=0).results:
        assert r.verdict == "pass", (r.id, r.error, r.observed)
    assert len(r.findings.n_values) == 5


def test_recycled_tokens_are_caught_by_both_sphere_curves():
    from attnverify.checks.tsc.selftest import mutants
    from attnverify.selftest.mutation import run_mutant

    m = next(m for m in mutants() if m.name == "tsc_recycled_tokens_sphere")
    assert sorted(run_mutant(m)["caught_by"]) == ["tsc.hardmax_curves", "tsc.moment_constants"]


@pytest.mark.parametrize("interval, verdicts", [
    # p = the stated local exponent of 1/log n over n = 250..4000, about -0.15
    ((-0.30, -0.25), {"exact": "refuted", "lower": "refuted", "upper": "holds"}),         # resolved faster
    ((-0.10, -0.05), {"exact": "refuted", "lower": "holds", "upper": "refuted"}),         # resolved slower
    ((-0.20, -0.10), {"exact": "holds", "lower": "holds", "upper": "holds"}),             # the stated exponent inside
])
def test_hardmax_rate_reads_each_direction_as_written(interval, verdicts):
    """An exact restatement is refuted on either side of the interval; a lower one only when the decay is resolved
    faster, an upper one only when it is resolved slower (a direction not "upper" was once read as "lower")."""
    c = CLAIMS["D.hardmax_log_rate"]
    for direction, expected in verdicts.items():
        stated = statement_of(c.id).restated("log(n)**(-1)", direction=direction)
        row = evaluate_claim(c, _hardmax(*interval), stated)
        assert row.verdict == expected, (direction, row.reason)
