"""signal.equilibria_stability and signal.sign_ambiguity judge the theory by the simulation alone: a theory evaluated
on the wrong side of theta* fails both, a theta mismatch of the claimed MDP fails the equilibria check, a run that
does not settle or a sign that cannot be resolved is an error with the reason, and the claims fed by these checks
reach verdicts other than their default ones."""
from __future__ import annotations

import numpy as np
import pytest

from attnverify.checks.claims import CLAIMS, evaluate_claim
from attnverify.checks.evidence import Evidence, Result
from attnverify.checks.plugin import Mutant
from attnverify.render.reasons import plain
from check_runs import run_check


def _theory_at(mapping=None, factor=None) -> Mutant:
    """The theory's equilibria evaluated at another theta: mapped (wrong side of theta*) or scaled (theta mismatch),
    handed to the check as its theory (as a mutant is)."""
    def wrong(self, params, sign="fixed", finite_size=False):
        th = params["theta"]
        if mapping is not None:
            th = next((dst for src, dst in mapping.items() if abs(th - src) < 1e-12), th)
        if factor is not None:
            th = th * factor
        return self.original("equilibria")(dict(params, theta=th), sign, finite_size)
    return Mutant("equilibria_at_another_theta", lambda theory: theory.replace(equilibria=wrong), (), "")


def _run(check_id, wrong: Mutant | None = None, **overrides):
    return run_check(check_id, overrides=overrides, mutants=[wrong] if wrong else [])


# --------------------------------------------------------------------------- wrong side of theta* (theta* ~ 1.34)
@pytest.mark.parametrize("sim, theory", [(0.25, 2.0), (2.0, 0.25)])
def test_equilibria_rejects_theory_on_the_wrong_side(sim, theory):
    res = _run("signal.equilibria_stability", _theory_at({sim: theory}), theta=sim, grid_points=5)
    assert res.verdict == "fail", res.error
    # the probe next to -xi measures the true sign: repelling at 0.25, attracting at 2
    m1 = res.details["equilibria"][0]
    assert m1["observed"] == ("repelling" if sim < 1 else "attracting") != m1["expected"]


def test_sign_ambiguity_rejects_theory_on_the_wrong_side():
    res = _run("signal.sign_ambiguity", _theory_at({0.25: 2.0, 2.0: 0.25}), runs_per_start=1, starts=(-0.95, 0.95))
    assert res.verdict == "fail", res.error
    whys = {(b["sign"], b["theta"]): b["why"] for b in res.details["runs_contradicting_theory"]}
    # SGA at theta = 2 rests at -xi, which the theta = 0.25 theory calls repelling
    assert "repelling" in whys[("fixed", 2.0)]
    # SGA at theta = 0.25 leaves rho0 = -0.95 for +xi; the theta = 2 theory predicts -xi from there
    assert "predicts -1" in whys[("fixed", 0.25)]


def test_equilibria_rejects_theta_mismatch_of_its_mdp():
    """theta (1 + 0.2), the claimed MDP: at the threshold test's 0.85 theta* the theory is evaluated at 1.02 theta* and
    calls -xi attracting, against its own theta*; the measured drift never agrees with that label (its probe, a quarter
    of the 0.015-wide basin the wrong theory claims, may be too close to -xi for the sign to be resolved)."""
    res = _run("signal.equilibria_stability", _theory_at(factor=1.2), grid_points=5)
    assert res.verdict == "fail", res.error
    low = [t for t in res.details["threshold_tests"] if t["expected"] == "repelling"][0]
    assert low["certified"] == "attracting" and low["observed"] in ("repelling", "inconclusive")


# --------------------------------------------------------------------------- unresolved numerics: error with reason
def test_sign_ambiguity_unsettled_runs_are_an_error():
    res = _run("signal.sign_ambiguity", thetas=(0.25,), runs_per_start=1, max_steps=300, min_steps=100, chunk=100)
    assert res.verdict == "error"
    assert "did not settle" in res.error and "min_window" in res.error


def test_equilibria_unresolved_sign_is_an_error():
    res = _run("signal.equilibria_stability", n_samples=10, max_samples=10, grid_points=1)
    assert res.verdict == "error"
    assert "not resolved with 10 sequences" in res.error


# --------------------------------------------------------------------------- claims
def test_up_to_sign_refuted_below_theta_star():
    res = _run("signal.sign_ambiguity", thetas=(0.25,), runs_per_start=1, starts=(-0.95, 0.95))
    assert res.verdict == "pass", res.error
    v = evaluate_claim(CLAIMS["A.up_to_sign"], {res.id: res})
    assert v.verdict == "refuted" and "θ = 0.25" in plain(v.condition)
    assert v.evidence["signal.sign_ambiguity"]["limits"]["theta=0.25"] == [1]


def test_any_initialisation_refuted_by_a_run_resting_inside():
    from attnverify.checks.signal.sign_ambiguity import LimitRow, SignAmbiguityFindings

    row = LimitRow("fixed", 3.0, (-0.5, 0.5), (0.2, 0.99999), (True, True), ("ok", "ok"), True, (-1.0, 0.2, 1.0))
    from attnverify.numerics.signal.model import SignalModel

    findings = SignAmbiguityFindings(SignalModel(3.0, 1.0, 1.0, 350, 1050, 2), 0.1, (row,))
    ev = Evidence(metric="m", observed=0.0, threshold=0.0, reason="r", passed=True, findings=findings)
    v = evaluate_claim(CLAIMS["A.any_initialisation"], {"signal.sign_ambiguity": Result(
        "signal.sign_ambiguity", "claim", "source", "pass", {}, 0.0, ev)})
    assert v.verdict == "refuted" and "ρ₀ = -0.5" in plain(v.condition) and "ρ = 0.2" in plain(v.condition)


def test_drift_estimator_sign_matches_hand_limit():
    """Independent value: with theta = 0 the law of X is invariant under q -> any rotation, so J_d' = 0; with a strong
    signal the drift at rho = 0 must be positive (the informative tokens pull q towards xi)."""
    from attnverify.numerics.signal.drift import alignment_derivative_samples
    from attnverify.numerics.signal.model import SignalModel
    rng = np.random.default_rng(0)
    s0 = alignment_derivative_samples(SignalModel(0.0, 1.0, 1.0, 10, 100, 2), np.array([-0.5, 0.5]), 4000, rng)
    assert np.all(np.abs(s0.mean(0)) < 4.5 * s0.std(0, ddof=1) / np.sqrt(4000))
    s1 = alignment_derivative_samples(SignalModel(2.0, 1.0, 1.0, 30, 100, 2), np.array([0.0]), 500, rng)
    assert s1.mean() > 5 * s1.std(ddof=1) / np.sqrt(500)


def test_the_narrow_tests_are_not_judged():
    """A narrow test whose certified class contradicts both its expected and its measured class (a derived theta*
    off by more than the narrow margin) is neither a mismatch nor unresolved; the same row judged is a mismatch."""
    from attnverify.checks.signal.equilibria import decide

    row = {"theta": 1.35, "expected": "attracting", "certified": "repelling", "probe": -0.997}
    plan = {"eqs": [], "probes": [], "grid": np.array([]), "thresholds": [dict(row, judged=False)]}
    main = {"mean": np.array([]), "se": np.array([]), "sign": np.array([], int), "n": 1000, "z": 4.4}
    out = [{"mean": np.array([0.01]), "se": np.array([0.001]), "sign": np.array([1]), "n": 1000, "z": 4.4}]
    dec = decide(plan, main, out, 4.4)
    assert dec["mismatches"] == 0 and dec["unresolved"] is None and dec["thresholds"][0]["observed"] == "repelling"
    plan["thresholds"] = [dict(row, judged=True)]
    assert decide(plan, main, out, 4.4)["mismatches"] == 1


def test_a_theory_whose_switch_is_three_per_cent_high_refutes_no_true_range():
    """The narrow tests sit at the derived theta* (1 -+ 0.015) and take their probes from the derived equilibria. A
    theory whose switch is 3 % high (its equilibria evaluated at theta / 1.03, its theta* x 1.03) puts both above the
    true switch (1.0145 and 1.045 theta*) and, below its own theta*, sees no interior repeller; the probes sit next
    to -xi (-1 + 0.001) all the same and measure -xi attracting at both. So a false range ('monotone for
    theta < 1.02 theta*') is refuted, a true one (0.98 theta*) is not, no theta above the true switch counts as
    -xi repelling for A.up_to_sign, and the check (its judged tests at +-15 % stay on their sides) passes. Review of
    stop 46: with the probe at -1 + delta = -0.95 the lower test read 'repelling' (the drift there stays positive up
    to about 1.07 theta*), which A.up_to_sign took as -xi repelling."""
    from attnverify.checks.claims import statement_of
    from attnverify.checks.signal.claims_equilibria import _repelling_by_drift

    def high(self, *a, **k):
        star, *rest = self.original("_minus_xi_at")(*a, **k)
        return (None if star is None else 1.03 * star, *rest)

    def shifted(self, params, sign="fixed", finite_size=False):
        return self.original("equilibria")(dict(params, theta=params["theta"] / 1.03), sign, finite_size)

    wrong = Mutant("switch_high", lambda t: t.replace(_minus_xi_at=high, equilibria=shifted), (), "")
    res = _run("signal.equilibria_stability", wrong, grid_points=1)
    assert res.verdict == "pass", res.error
    true_star = res.details["theta_star_fixed"] / 1.03
    narrow = [t for t in res.details["threshold_tests"] if not t["judged"]]
    assert [(t["certified"], t["observed"]) for t in narrow] == [("repelling", "attracting"),
                                                                ("attracting", "attracting")], narrow
    assert all(t < true_star for t in _repelling_by_drift({res.id: res}, res.findings.model))
    paper = statement_of("A.no_spurious_traps")
    for factor, refuted in ((1.02, True), (0.98, False)):
        stated = paper.restated("monotone", target=f"theta < {true_star * factor:.6g}")
        v = evaluate_claim(CLAIMS["A.no_spurious_traps"], {res.id: res}, stated)
        assert (v.verdict == "refuted") == refuted, (factor, plain(v.reason))
