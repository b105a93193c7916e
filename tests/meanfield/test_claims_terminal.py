"""Conjecture 1 (Paper B): the check meanfield.terminal_phase compares the derived terminal phase (cluster field,
V's real Schur form) with the particle simulation and fails only when they disagree; the claim B.conjecture1 reads
its typed findings and the stated form.  Each test names the defect it guards against; those marked "failed before"
were run against the previous code (main at 5b8442c) and failed there.

Small particle numbers keep it fast; the numeric side is memoised across runs that change only the analytic side
or the stated form (as the power and claim self-tests do)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import attnverify.theory.meanfield as mf
from attnverify.checks.claims import CLAIMS, evaluate_claim
from attnverify.checks.evidence import Result
from attnverify.checks.params import InputError
from attnverify.checks.meanfield.terminal import CASES
from attnverify.checks.runner import plan, run_one
from attnverify.checks.plugin import Mutant
from attnverify.checks.stated import StatedClaim
from attnverify.render.reasons import plain
from attnverify.selftest.mutation import receives

SMALL = dict(betas=(10.0, 31.6, 100.0), n_particles=120, min_per_window=1.0, n_refine=1, t_max=30.0, n_times=121,
             cases="")
ROTATING = dict(**CASES["rotating"], betas=(31.6, 100.0), n_particles=160, min_per_window=0.05, n_refine=1,
                t_max=30.0, n_times=121, cases="")
OBLIQUE = dict(**CASES["oblique"], betas=(31.6, 100.0), n_particles=160, min_per_window=0.05, n_refine=1,
               t_max=30.0, n_times=121, cases="")
_MEMO: dict = {}


def run(overrides: dict, seed: int = 0, arguments=None) -> Result:
    """The check at the overrides; ``arguments(check)``: what it receives instead of its own theory and numerics."""
    ((chk, params),) = plan(["meanfield.terminal_phase"], profile="quick", overrides=overrides)
    key = (seed, tuple(sorted((k, str(v)) for k, v in overrides.items() if k in ("Q", "K", "V"))))
    return run_one(chk, params, seed=seed, profile="quick", memo=_MEMO.setdefault(key, {}),
                   arguments=None if arguments is None else arguments(chk))


def claim(result: Result, **stated_changes):
    from attnverify.checks.claims import statement_of

    stated = statement_of("B.conjecture1")
    if stated_changes:
        stated = stated.restated(stated.stated, **stated_changes)
    return evaluate_claim(CLAIMS["B.conjecture1"], {result.id: result}, stated)


def zero_temperature(numerics):
    """The stuck mutant of repro c1.py: the finite-beta simulation replaced by the zero-temperature one."""
    original = numerics.simulate

    def simulate(X0, Q, K, V, beta, times, **kw):
        return original(X0, Q, K, V, np.inf, times, **kw)
    return dataclasses.replace(numerics, simulate=simulate)


STUCK = Mutant("stuck", zero_temperature, ("meanfield.terminal_phase",), "", target="numerics")


@pytest.fixture(scope="module")
def default_run() -> Result:
    return run(SMALL)


@pytest.fixture(scope="module")
def rotating_run() -> Result:
    return run(ROTATING)


# ------------------------------------------------------------------------------------------ the check
def test_default_model_passes_and_reads_the_switch_as_a_finding(default_run):
    r = default_run
    assert r.verdict == "pass", r.reason
    f = r.findings
    assert f.structure == "switch" and f.motion == "fixed" and f.approach_rate == pytest.approx(1.0)
    assert {c.what for c in f.comparisons} >= {"approach", "transport"}
    assert all(c.status == "agrees" for c in f.comparisons)
    assert all(ts is not None for ts in f.t_switch) and np.all(np.diff(f.t_switch) > 0)
    assert all(m < s for m, s in zip(f.t_meta, f.t_switch))


def test_no_switch_by_t_max_is_a_finding_not_a_failure():
    """Failed before: a beta whose tokens have not switched by t_max failed the check ("no switch by t_max")."""
    r = run({**SMALL, "t_max": 10.0, "n_times": 41})
    assert r.verdict != "fail", r.reason
    assert "switch" not in r.reason
    assert r.findings.t_switch[-1] is None                       # beta = 100 switches at t ~ 11


def test_stuck_simulation_fails_on_the_escape_rate_and_the_claim_names_it():
    """Repro c1.py stuck: the zero-temperature simulation in place of the finite-beta one is our own error.  Failed
    before in the wrong way: the check failed on "no switch" (a statement about the paper).  Now it fails because a
    tight cluster on E, which the derived cluster field lifts off E at the escape rate v1 - v_E = 1, is measured to
    approach E at the zero-temperature rate -1/3."""
    ((chk, params),) = plan(["meanfield.terminal_phase"], profile="quick", overrides={**SMALL, "t_max": 60.0,
                                                                                      "n_times": 241})
    r = run_one(chk, params, seed=0, profile="quick", arguments=receives([STUCK])(chk))
    assert r.verdict == "fail"
    assert "escape rate" in r.reason and "no switch" not in r.reason
    esc = [c for c in r.findings.comparisons if c.what == "escape"]
    assert esc and all(c.status == "disagrees" and c.measured == pytest.approx(-1 / 3, rel=1e-3) for c in esc)
    v = claim(r)
    assert v.verdict == "inconclusive" and "meanfield.terminal_phase failed" in v.reason


def test_stuck_simulation_fails_on_the_transport_where_E_is_not_invariant():
    """Where E is not V-invariant (the rotating model) a tight cluster on E moves at once under the cluster field;
    the stuck simulation keeps it there: the one-step transport disagrees."""
    ((chk, params),) = plan(["meanfield.terminal_phase"], profile="quick", overrides=ROTATING)
    r = run_one(chk, params, seed=0, profile="quick", arguments=receives([STUCK])(chk))
    assert r.verdict == "fail"
    assert any(c.what == "transport" and c.status == "disagrees" for c in r.findings.comparisons), r.reason


def test_non_symmetric_V_with_symmetric_VBt_is_checked_not_refused():
    """Failed before: "meanfield.terminal_phase needs a symmetric V (orthogonal dominant eigenspace)"."""
    r = run(OBLIQUE)
    assert r.verdict == "pass", r.reason
    f = r.findings
    assert f.dim_E == 2 and f.motion == "fixed" and f.structure == "switch"
    P = np.array([[1, 0.5, 0], [0, 1, 0.5], [0.5, 0, 1]])
    u = P[:, 0] / np.linalg.norm(P[:, 0])                        # V = P diag(2, 1, 1/2) P^-1: the oblique S = span(P e1)
    assert np.allclose(f.P_S, np.outer(u, u), atol=1e-12)


def test_rotating_case_measures_the_rotation_rate(rotating_run):
    """Failed before: refused ("needs a symmetric V").  V has the dominant pair 2 +- i: the tokens end in V's dominant
    invariant plane (|x_3| tiny in its frame) and turn at the rate Im lambda = 1."""
    r = rotating_run
    assert r.verdict == "pass", r.reason
    f = r.findings
    assert f.motion == "rotation" and f.dim_S == 2 and f.rotation_rate == pytest.approx(1.0)
    rot = [c for c in f.comparisons if c.what == "rotation"]
    assert rot and all(c.relative_error <= 1e-4 for c in rot)
    assert max(1 - q for q in f.q_S_late) <= 1e-12


def test_wrong_rotation_rate_fails(rotating_run):
    def terminal_rates(self, V):
        orig = self.original("terminal_rates")
        return {**orig(V), "rotation_rate": orig(V)["rotation_rate"] * 1.001}
    rot = Mutant("rot", lambda theory: theory.replace(terminal_rates=terminal_rates), (), "")
    r = run(ROTATING, arguments=receives([rot]))
    assert r.verdict == "fail" and "rotation rate" in r.reason


@pytest.mark.parametrize("family", ["S_next_invariant_subspace", "S_symmetric_part"])
def test_wrong_invariant_subspace_fails(rotating_run, family):
    from attnverify.selftest.power import families, perturbed

    with perturbed(families()[family], 0.0) as arguments:
        r = run(ROTATING, arguments=arguments)
    assert r.verdict == "fail", (r.verdict, r.reason)


def test_wrong_subspace_fails_in_the_default_model(default_run):
    from attnverify.selftest.power import families, perturbed

    with perturbed(families()["S_next_invariant_subspace"], 0.0) as arguments:
        r = run(SMALL, arguments=arguments)
    assert r.verdict == "fail" and "attracts" in r.reason, r.reason


def test_gapless_V_and_non_symmetric_VBt_are_refused_with_the_reason():
    with pytest.raises(InputError, match="no spectral gap"):
        plan(["meanfield.terminal_phase"], overrides={"V": np.eye(2), "K": np.eye(2)})
    with pytest.raises(InputError, match="not symmetric"):
        plan(["meanfield.terminal_phase"], overrides={"V": np.array([[2.0, 1.0], [0.0, 1.0]])})


# ------------------------------------------------------------------------------------------ the claim
def test_claim_on_the_default_model_is_not_refuted_with_its_phases(default_run):
    v = claim(default_run)
    assert v.verdict == "not_refuted", v.reason
    assert "is followed by a switch to S" in v.reason


def test_single_crossing_is_no_metastable_phase():
    """Repro c1b.py (betas 6, 8, 10): at beta = 6 q_E >= 0.8 holds for 0.75 time units only.  Failed before: the
    claim said "at every beta (6, 8, 10) a metastable phase on E(V B^T) is followed by a switch"."""
    r = run({**SMALL, "betas": (6.0, 8.0, 10.0), "n_particles": 400})
    v = claim(r)
    assert "at every beta" not in v.reason
    assert "no metastable phase at β = 6" in plain(v.reason), v.reason
    assert r.findings.metastable == (False, True, True)


def test_nested_d3_model_is_recognised():
    """A d = 3 model (non-diagonal, V = R diag(2, 1, 1/2) R^T, V B^T = R diag(3, 1, 3) R^T) whose V's dominant
    eigenvector R e1 lies in E = span(R e1, R e3): the tokens never leave E, they concentrate inside it.  Failed
    before: the check failed with "no switch by t_max ... a missing switch" (a statement about the paper) and the
    claim was inconclusive; the issue's variant of the same structure gave "a metastable phase on E(V B^T) is
    followed by a switch" while every beta stayed on E."""
    from attnverify.checks.meanfield.terminal import _case

    R = (np.array([[1, 2, 2], [2, 1, -2], [2, -2, 1]]) / 3).tolist()
    model = _case(R, [[2, 0, 0], [0, 1, 0], [0, 0, 0.5]], (np.array(R) @ np.diag([3, 1, 3]) @ np.array(R).T).tolist())
    r = run({**model, "betas": (20.0, 40.0, 80.0), "n_particles": 300, "min_per_window": 0.01, "n_refine": 1,
             "t_max": 30.0, "n_times": 121, "cases": ""})
    assert r.verdict == "pass", r.reason
    v = claim(r)
    assert "followed by a switch" not in v.reason
    assert "S lies inside E" in v.reason and v.verdict == "not_refuted", v.reason
    assert r.findings.structure == "nested" and all(s is None for s in r.findings.t_switch)


def test_rotating_case_gives_holds_if_with_the_measured_rotation(rotating_run):
    v = claim(rotating_run)
    assert v.verdict == "holds_if", v.reason
    assert plain(v.condition).startswith("the dominant eigenvalue of V is real")
    assert "complex pair 2 ± 1i" in plain(v.condition) and "measured rate" in plain(v.condition)


def test_target_of_V_Bt_is_refuted_with_the_point_the_values_and_the_distance(default_run):
    v = claim(default_run, target="dominant eigenspace of V B^T")
    assert v.verdict == "refuted", v.reason
    condition = plain(v.condition)
    assert "β = " in condition and "distance" in condition and "derived 0" in condition


def test_target_as_invariant_subspace_is_still_true(default_run, rotating_run):
    for r in (default_run, rotating_run):
        assert claim(r, target="dominant invariant subspace of V").verdict != "refuted"


@pytest.mark.parametrize("target", ["dominant eigenspace of V^T", "dominant eigenspace of (V + V^T)/2"])
def test_orthogonal_readings_are_refuted_only_for_a_non_normal_V(default_run, rotating_run, target):
    """Left eigenvectors, or the symmetric part's eigenspace: right for a symmetric V, wrong for the rotating one
    (the claim self-test found the second unread: a number in the expression was not in the parser's namespace)."""
    assert claim(default_run, target=target).verdict == "not_refuted"                         # V symmetric
    assert claim(rotating_run, target=target).verdict == "refuted"


def test_shared_dominant_eigenspace_has_nothing_to_decide():
    r = run({**SMALL, "V": np.diag([-2.0, 1.0])})
    assert r.verdict == "pass", r.reason
    assert r.findings.structure == "shared"
    assert claim(r).verdict == "inconclusive"


def test_the_claim_reads_the_stated_predicate(default_run):
    stated = StatedClaim("B.conjecture1", "meanfield", "qualitative", "something_else",
                         extra={"target": "dominant eigenspace of V"})
    v = evaluate_claim(CLAIMS["B.conjecture1"], {default_run.id: default_run}, stated)
    assert v.verdict == "inconclusive" and "field 'stated'" in v.reason and "terminal_concentration" in v.reason


# ------------------------------------------------------------------------------------------ the theory
def test_dominant_subspace_of_a_complex_pair():
    J = np.array([[2.0, -1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    s = mf.dominant_subspace(J)
    assert s.motion == "rotation" and s.dim == 2
    assert s.rotation_rate == pytest.approx(1.0, abs=1e-15) and s.approach_rate == pytest.approx(1.0, abs=1e-15)
    assert np.allclose(s.projector, np.diag([1.0, 1.0, 0.0]), atol=1e-15) and s.projector_error < 1e-15


def test_terminal_rates_by_jacobian_and_by_spectrum_agree_for_a_non_symmetric_V():
    """Two derivations of the approach rate: the SymPy Jacobian of the cluster field at the dominant eigenvector, and
    the certified gap in real part (here lambda = 3, 1.5, -1 of V = P diag P^-1, so r = 1.5)."""
    P = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 3.0]])
    V = P @ np.diag([3.0, 1.5, -1.0]) @ np.linalg.inv(P)
    r = mf.terminal_rates(V)
    lo, hi = r["axis_rate_enclosure"]
    assert lo - 1e-12 <= r["axis_rate"] <= hi + 1e-12 and r["axis_rate"] == pytest.approx(1.5, rel=1e-12)


def test_escape_rate_from_an_invariant_subspace():
    V = np.diag([3.0, 1.0, 0.5])
    assert mf.escape_rate_from(V, np.diag([0.0, 1.0, 0.0])) == pytest.approx(2.0)
    assert mf.escape_rate_from(V, np.diag([0.0, 1.0, 1.0])) == pytest.approx(2.0)
    assert mf.escape_rate_from(V, np.full((3, 3), 1 / 3)) is None          # span(1, 1, 1) is not V-invariant


def test_defective_dominant_eigenvalue_is_named():
    with pytest.raises(ValueError, match="defective"):
        mf.value_eigenspace(np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]))


def test_cluster_flow_solves_the_cluster_field():
    V = np.array([[2.0, -1.0], [1.0, 2.0]])
    u0 = np.array([1.0, 0.0])
    h = 1e-5
    du = (mf.cluster_flow(V, u0, 0.3 + h) - mf.cluster_flow(V, u0, 0.3 - h)) / (2 * h)
    u = mf.cluster_flow(V, u0, 0.3)
    assert np.allclose(du, V @ u - (u @ V @ u) * u, atol=1e-9)


def test_an_unreadable_target_is_named_not_judged(default_run):
    v = claim(default_run, target="dominant eigenspace of W")
    assert v.verdict == "inconclusive" and "unknown name 'W'" in v.reason, v.reason
