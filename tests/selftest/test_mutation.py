"""The mutation self-test: mutants as arguments, the catalogue, a few fast mutants caught; the seed-sweep helpers."""
from __future__ import annotations

import argparse
import inspect
import json
import math

import numpy as np
import pytest
import sympy as sp

import attnverify.theory.signal as S
from attnverify.checks.judges.proof import nonzero_somewhere
from attnverify.checks.plugin import Mutant
from attnverify.checks.registry import all_checks
from attnverify.selftest.mutants import all_mutants, by_name, known_gaps
from attnverify.selftest.mutation import is_crash, run_mutant, selftest

MUTANTS = all_mutants()


# ------------------------------------------------------------------------------------------------ machinery
def test_the_patcher_is_gone_and_an_old_plugin_is_told_what_replaced_it():
    """Mutants are arguments: nothing in the project patches a module attribute, and a plugin that imports the old
    string-path PatchMutant gets one line naming its replacement."""
    import attnverify.selftest.mutation as mutation

    assert not hasattr(mutation, "injected")
    with pytest.raises(ImportError, match=r"removed in 0\.2: a mutant is an argument, Mutant\(name, make"):
        from attnverify.checks.plugin import PatchMutant  # noqa: F401


def test_a_replaced_closed_form_reaches_what_is_derived_from_it():
    """reduced_field is memoised and built from population_objective: in the mutant's theory it is the mutant's
    F = (1 - rho^2) d/drho J(-rho); the original theory still gives the original (no stale memo either way)."""
    F0 = S.reduced_field("fixed")
    J0 = S.population_objective("fixed")
    wrong = by_name("J_sign_flip").make(S.THEORY)
    F1 = wrong.reduced_field("fixed")
    assert sp.expand(F1 - (1 - S.rho**2) * sp.diff(J0.subs(S.rho, -S.rho), S.rho)) == 0
    assert nonzero_somewhere(F1 - F0)                   # certified different at a point (Arb)
    assert sp.expand(S.reduced_field("fixed") - F0) == 0


def test_a_mutant_of_a_closed_form_reaches_the_closed_forms_that_call_it():
    """Paper B's theory is one object whose closed forms (defined in several submodules) call each other through it;
    the mutant of convergence_rate is seen by rate_comparison (in .rates), and X_inf's mutant by the closed forms of
    the other parts that use X_inf (the Jacobian rates of .rates, C1 of .theorem1, the flow residual of .flow); the
    theory the checks receive by default is untouched."""
    import attnverify.theory.meanfield as MF

    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    c = MF.convergence_rate(B, V)
    wrong = by_name("rate_c_x2").make(MF.THEORY)
    assert wrong.rate_comparison(B, V)["jacobian"] == pytest.approx(2 * c, rel=1e-12)
    assert MF.rate_comparison(B, V)["jacobian"] == pytest.approx(c, rel=1e-12)
    original = MF.zero_temperature_field
    unprojected = by_name("X_inf_without_tangent_projection").make(MF.THEORY)
    X = np.array([[0.6, 0.8]])
    assert not np.allclose(unprojected.zero_temperature_field(X, B, V), original(X, B, V))
    assert unprojected.convergence_rate(B, V) != pytest.approx(c, rel=1e-6)                        # .rates
    assert unprojected.growth_constant(B, V)["C1"] != pytest.approx(MF.growth_constant(B, V)["C1"], rel=1e-6)
    assert unprojected.flow_residual(B, V) != sp.zeros(4, 1) and MF.flow_residual(B, V) == sp.zeros(4, 1)  # .flow
    assert MF.zero_temperature_field is original and MF.THEORY.zero_temperature_field == original


# ------------------------------------------------------------------------------------------------ catalogue
def params(sig: inspect.Signature) -> list[tuple]:
    """Names, kinds and defaults of a signature (annotations aside)."""
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def test_catalogue_is_faithful():
    """>= 12 uniquely named mutants over every registered paper; every target exists, every listed check is registered,
    and each replacement keeps the original's call signature (so a catch is not a TypeError)."""
    ids = {c.id for c in all_checks()}
    assert len(MUTANTS) >= 12 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    from attnverify.checks.registry import papers

    assert {c.split(".")[0] for m in MUTANTS for c in m.checks} == {p.model for p in papers()}
    assert set(known_gaps()) <= {m.name for m in MUTANTS}
    checks = {c.id: c for c in all_checks()}
    for m in MUTANTS:
        assert set(m.checks) <= ids, m.name
        for original in {id(o): o for o in (getattr(checks[c], m.target) for c in m.checks)}.values():
            replacement = m.make(original)                  # an argument: built from what its checks receive
            assert replacement is not original and original is not None, m.name
            for name in (n for n in dir(original) if not n.startswith("_") and callable(getattr(original, n))):
                mine, theirs = getattr(replacement, name), getattr(original, name)
                if mine != theirs and not isinstance(theirs, type):
                    assert params(inspect.signature(mine)) == params(inspect.signature(theirs)), (m.name, name)


def test_mutants_change_the_mathematics():
    """Hand values at theta = beta = sigma = 1, R = 1, L = 3, rho = 1 (long-sequence limit): the informative mass is
    w = R e^{beta theta rho} / (R e^{beta theta rho} + L - R) = e/(e + 2), f_oo = w theta xi + beta sigma^2 q, so
    J = w^2 theta^2 + 2 rho w theta beta sigma^2 + beta^2 sigma^4 = (w + 1)^2; the cross-term mutant counts
    2 rho w theta beta sigma^2 twice: w^2 + 4 w + 1."""
    subs = {S.theta: 1, S.beta: 1, S.sigma: 1, S.R: 1, S.L: 3, S.d: 2, S.rho: 1}
    w = sp.E / (sp.E + 2)
    assert sp.simplify(S.informative_mass("fixed").subs(subs) - w) == 0
    assert sp.simplify(S.population_objective("fixed").subs(subs) - (w + 1) ** 2) == 0
    Jm = by_name("J_cross_term_x2").make(S.THEORY).population_objective("fixed").subs(subs)
    assert sp.simplify(Jm - (w**2 + 4 * w + 1)) == 0


# ------------------------------------------------------------------------------------------------ caught
def test_fast_mutants_are_caught_and_baseline_passes(tmp_path):
    """Fast mutants of every paper (a stability label, a rate, a field, a Pi that leaves the sphere, a Bayes weight),
    run through the real checks by the command line (``selftest --mutants --only ... --json``): the smoke of the full
    mutant self-test (test_full_selftest, marked slow). The unnormalised Pi once made both of its checks raise
    (points off the sphere) instead of failing."""
    from attnverify.cli.selftest import add_parser, cmd_selftest

    names = ["stability_flipped", "rate_c_x2", "X_inf_without_tangent_projection", "Pi_unnormalised",
             "slr_bayes_no_norm_term"]
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    out = tmp_path / "selftest.json"
    code = cmd_selftest(parser.parse_args(["selftest", "--mutants", "--only", *names, "--json", str(out), "--quiet"]))
    result = json.loads(out.read_text())
    assert code == 0 and result["baseline_all_pass"], result["baseline"]
    assert result["mutants"] == 5 and result["caught"] == 5
    for row in result["rows"]:
        assert row["caught_by"] and all(not r["crash"] for r in row["results"])
        catching = [r for r in row["results"] if r["catches"]]
        assert all(r["verdict"] == "fail" and r["observed"] > r["threshold"] for r in catching)
    [row] = [r for r in result["rows"] if r["mutant"] == "rate_c_x2"]
    # w2_bound compares every atom's derived rate with the particles' decay too (issue 23)
    assert row["caught_by"] == ["meanfield.projection_stationary", "meanfield.w2_bound"]
    # the fitted rate is the true gamma/|B^T x*|, the mutant claims twice that: relative error 1/2
    assert math.isclose(row["results"][0]["observed"], 0.5, rel_tol=1e-3)


def test_crash_is_not_a_catch():
    """A mutant with the wrong signature errors with TypeError: recorded as a crash, not as caught."""
    broken = Mutant("broken", lambda theory: theory.replace(convergence_rate=lambda self: 1.0),
                    ("meanfield.projection_stationary",), "wrong signature")
    row = run_mutant(broken)
    [r] = row["results"]
    assert r["verdict"] == "error" and r["error"].startswith("TypeError") and r["crash"]
    assert not row["caught"] and row["caught_by"] == []
    assert not is_crash({"verdict": "error", "error": "FloatingPointError: overflow encountered in exp"})


def test_an_exception_is_never_a_rejection():
    from attnverify.selftest.mutation import rejects

    # before, an error that was not a plumbing crash (a ValueError of inadmissible parameters, an overflow) counted
    # as a rejection: sign_ambiguity's theta_mismatch row "1: 0.50" was all ValueErrors at theta = 0
    for error in ("ValueError: theta = 0: F vanishes identically", "FloatingPointError: overflow", "TypeError: x"):
        assert not rejects({"verdict": "error", "error": error, "unresolved": False})
    assert not rejects({"verdict": "error", "error": "Unresolved: x", "unresolved": True})
    assert rejects({"verdict": "fail", "error": None, "unresolved": False})


def test_cli_bad_input():
    from attnverify.checks.params import InputError
    from attnverify.cli.selftest import add_parser, cmd_selftest

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    for argv in (["selftest"], ["selftest", "--mutants", "--seeds", "2"], ["selftest", "--seeds", "0"],
                 ["selftest", "--seeds", "x"], ["selftest", "--mutants", "--only", "nope"],
                 ["selftest", "--mutants", "--seed", "-1"], ["selftest", "--mutants", "--jobs", "0"], ["selftest", "--mutants", "--json", "/no/such/dir/x.json"]):
        with pytest.raises(InputError) as exc:
            cmd_selftest(parser.parse_args(argv))
        assert str(exc.value) and "\n" not in str(exc.value)


def test_parallel_selftest_has_the_serial_rows():
    """jobs = 2 (forked workers, each injecting its own mutant) gives the rows of the serial run, seconds aside;
    two cheap mutants (about 1 s of checks each) whose checks differ and overlap in tsc.pushforward_moments, so a
    mutant leaking into another task (a baseline check or the other mutant's) would change a verdict."""
    def strip(rows):
        return [{**r, "results": [{k: v for k, v in x.items() if k != "seconds"} for x in r["results"]]} for r in rows]

    chosen = [by_name("tsc_map_missing_sigma"), by_name("tsc_cov_missing_sigma")]
    serial, parallel = selftest(chosen), selftest(chosen, jobs=2)
    assert strip(parallel["rows"]) == strip(serial["rows"]) and parallel["caught"] == serial["caught"] == 2
    assert [{k: v for k, v in b.items() if k != "seconds"} for b in parallel["baseline"]] == \
        [{k: v for k, v in b.items() if k != "seconds"} for b in serial["baseline"]]
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="jobs"):
            selftest(chosen, jobs=bad)


@pytest.mark.slow
def test_full_selftest():
    """Every mutant that is neither equivalent nor in known_gaps() is caught, by a genuine verdict (no crash), on a
    passing baseline (the README's mutant figures; two worker processes, as CI has two cores)."""
    result = selftest(MUTANTS, jobs=2)
    assert result["baseline_all_pass"]
    caught = {r["mutant"] for r in result["rows"] if r["caught"]}
    assert caught == {m.name for m in MUTANTS if not m.equivalent} - set(known_gaps())
    assert result["all_caught"] == (not known_gaps())


# ------------------------------------------------------------------------------------------------ seed sweep
def test_clopper_pearson_upper_bound():
    from attnverify.selftest.seed_sweep import upper_bound

    # k = 0: P(0 failures | p) = (1 - p)^n = 0.05 solves to p = 1 - 0.05^(1/n)
    assert math.isclose(upper_bound(0, 20), 1 - 0.05 ** (1 / 20), rel_tol=1e-9)
    # k = n - 1: P(n failures | p) = p^n = 0.05 at the lower end; the upper bound solves 1 - p^n = 0.05
    assert math.isclose(upper_bound(19, 20), 0.95 ** (1 / 20), rel_tol=1e-9)
    assert upper_bound(20, 20) == 1.0
    with pytest.raises(ValueError):
        upper_bound(3, 2)


def test_sweep_on_a_cheap_check():
    from attnverify.selftest.seed_sweep import markdown, result_dict, sweep

    per_seed = sweep([0, 1], ["meanfield.zero_temperature_flow"])
    res = result_dict(per_seed, 0.0)
    entry = res["checks"]["meanfield.zero_temperature_flow"]
    assert res["n_seeds"] == 2 and entry["runs"] == 2 and entry["passes"] == 2 and res["all_pass"]
    assert "meanfield.zero_temperature_flow | 2/2" in markdown(res["checks"], 2)


def test_the_baseline_reads_and_writes_the_task_store_and_the_mutants_do_not(tmp_path):
    """selftest(..., store=...): the unmutated baseline reads and writes the store, as ``attnverify run`` does (a
    rerun reuses every baseline task and computes none), the mutant's own runs never touch it, and the rows are the
    same either way."""
    from attnverify.checks.store import TaskStore
    from attnverify.selftest.mutation import selftest

    mutant = by_name("slr_bayes_no_norm_term")
    first, again = TaskStore(tmp_path / "tasks"), TaskStore(tmp_path / "tasks")
    a = selftest([mutant], store=first)
    b = selftest([mutant], store=again)
    assert first.stats.computed == first.stats.stored > 0            # the baseline's tasks only
    assert again.stats.reused == first.stats.stored and again.stats.computed == again.stats.stored == 0
    without = selftest([mutant])
    assert a["rows"][0]["caught_by"] == b["rows"][0]["caught_by"] == without["rows"][0]["caught_by"] != []
    assert [r["observed"] for r in a["baseline"]] == [r["observed"] for r in b["baseline"]] \
        == [r["observed"] for r in without["baseline"]]
