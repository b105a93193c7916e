"""The power self-test: the perturbation families change the analytic side as stated, the MDP search is right and
the CLI (the smoke itself: tests/test_power_smoke.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import attnverify.theory.meanfield as MF
import attnverify.theory.signal as S
from attnverify.checks.plugin import PowerRow as Row
from attnverify.selftest.power import families, measure_row, perturbed, plan

FAMILIES, PLAN = families(), plan()

PARAMS = {"theta": 0.7, "beta": 1.0, "sigma": 1.0, "R": 50, "L": 1050, "d": 20}


def _value(expr: sp.Expr, rho: float, **over) -> float:
    vals = {**PARAMS, **over}
    return float(expr.subs({S.rho: rho, **{getattr(S, k): v for k, v in vals.items()}}))


def _theory(arguments) -> object:
    """The theory a Paper A check receives inside a perturbation (``arguments`` from ``perturbed``)."""
    from attnverify.checks.runner import select       # imports the check's module (the registry fills lazily)

    [check] = select(["signal.objective_vs_montecarlo"])
    return arguments(check)["theory"]


# ------------------------------------------------------------------------------------------- families
def test_scale_family_multiplies_the_closed_form():
    J = _value(S.population_objective("fixed", True), 0.3)
    with perturbed(FAMILIES["J_scale"], -0.05) as arguments:
        T = _theory(arguments)
        Jm = _value(T.population_objective("fixed", True), 0.3)
        Fm = _value(T.reduced_field("fixed", True), 0.3)       # F is derived from the scaled J
    F = _value(S.reduced_field("fixed", True), 0.3)
    assert Jm == pytest.approx(0.95 * J, rel=1e-12) and Fm == pytest.approx(0.95 * F, rel=1e-12)
    assert _value(S.population_objective("fixed", True), 0.3) == J        # restored


def test_theta_mismatch_is_applied_once_even_through_nested_closed_forms():
    """reduced_field differentiates population_objective: theta must become theta(1 + delta), not
    theta(1 + delta)^2."""
    F_true_at_shifted = _value(S.reduced_field("fixed", True), 0.4, theta=0.7 * 1.2)
    with perturbed(FAMILIES["theta_mismatch"], 0.2) as arguments:
        T = _theory(arguments)
        F_mis = _value(T.reduced_field("fixed", True), 0.4)
        eqs = T.equilibria(dict(PARAMS, theta=2.0), "fixed", True)
    eqs_true = S.equilibria(dict(PARAMS, theta=2.4), "fixed", True)
    assert F_mis == pytest.approx(F_true_at_shifted, rel=1e-12)
    assert [e.rho for e in eqs] == pytest.approx([e.rho for e in eqs_true], abs=1e-12)
    assert [e.stable for e in eqs] == [e.stable for e in eqs_true]


def test_regime_family_crosses_theta_star():
    """At theta = 0.25 (below theta*) -xi repels; the regime family's theory says it attracts."""
    low = dict(PARAMS, theta=0.25, R=50, L=1050, d=20)
    assert not S.equilibria(low, "fixed", True)[0].stable
    with perturbed(FAMILIES["theta_other_side"], 0.0) as arguments:
        assert _theory(arguments).equilibria(low, "fixed", True)[0].stable


def _paper_b_theory(arguments) -> object:
    """The theory a Paper B check receives under the runner's ``arguments`` (attnverify.selftest.mutation.receives)."""
    from types import SimpleNamespace

    return arguments(SimpleNamespace(theory=MF.THEORY, numerics=None))["theory"]


def test_model_rotation_turns_the_dominant_eigenspace():
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])          # V B^T = diag(2, 3): E = span(e2)
    x = np.array([0.6, 0.8])
    y = MF.projection_map(B, V)(x)
    assert y == pytest.approx([0.0, 1.0])
    angle = 0.01
    with perturbed(FAMILIES["model_rotation"], angle) as arguments:
        y_rot = _paper_b_theory(arguments).projection_map(B, V)(x)
    # E rotated by the angle: the closest unit vector of the rotated line to x
    e = np.array([-np.sin(angle), np.cos(angle)])
    assert y_rot == pytest.approx(np.sign(e @ x) * e, abs=1e-12)


def test_rate_and_field_scale():
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    c = MF.convergence_rate(B, V)
    assert c == pytest.approx(1 / 3, rel=1e-12)               # gamma/|B^T e2| = (3 - 2)/3, by hand
    X = np.array([[0.6, 0.8], [1.0, 0.0]])
    field = MF.zero_temperature_field(X, B, V)
    with perturbed(FAMILIES["rate_scale"], 0.003) as arguments:
        assert _paper_b_theory(arguments).convergence_rate(B, V) == pytest.approx(c * 1.003, rel=1e-12)
    with perturbed(FAMILIES["X_inf_scale"], -0.5) as arguments:
        np.testing.assert_allclose(_paper_b_theory(arguments).zero_temperature_field(X, B, V), 0.5 * field,
                                   rtol=1e-12)
    assert MF.convergence_rate(B, V) == c                     # the original is untouched


def test_matrix_families_reach_every_paper_b_function_of_the_matrices():
    """The Paper B theory is one object whose closed forms are defined, one part per concept, in the submodules of
    attnverify.theory.meanfield; the mismatch families must still evaluate every public closed form of (B, V) or of
    V defined in any of the submodules at the wrong model."""
    import importlib
    import inspect
    import pkgutil

    expected = set()
    for info in pkgutil.iter_modules(MF.__path__):
        module = importlib.import_module(f"{MF.__name__}.{info.name}")
        for part in vars(module).values():
            if not isinstance(part, type) or part.__module__ != module.__name__:
                continue
            for name, fn in vars(part).items():
                if name.startswith("_") or not callable(fn) or name == "check_assumptions":
                    continue
                if "V" in inspect.signature(fn).parameters:
                    expected.add(name)
    assert {"spectrum", "convergence_rate", "projection_map", "terminal_rates"} <= expected

    def changed(family: str) -> set[str]:
        with perturbed(FAMILIES[family], 0.01) as arguments:
            view = _paper_b_theory(arguments)
            return {n for n in dir(MF.THEORY) if not n.startswith("_") and callable(getattr(MF.THEORY, n))
                    and getattr(view, n) != getattr(MF.THEORY, n)}
    assert changed("model_rotation") == expected
    assert changed("top_eigenvalue") == {n for n in expected if "B" in inspect.signature(getattr(MF, n)).parameters}


def test_every_plan_row_names_a_family_and_a_registered_check():
    from attnverify.checks.registry import all_checks

    ids = {c.id for c in all_checks()}
    for row in PLAN:
        assert row.family in FAMILIES and row.check in ids, row
    assert {r.check for r in PLAN} == ids, "every check has power rows"
    assert all(any(r.smoke and r.check == cid for r in PLAN) for cid in ids), "every check has a smoke row"


# --------------------------------------------------------------------------------------------- the MDP search
class _FakeRunner:
    """Rejects every run with |delta| >= cut (a check of known power); counts the deltas tried."""

    def __init__(self, cut: float) -> None:
        self.cut, self.tried = cut, []

    def detection(self, family, delta, claim=""):
        self.tried.append(delta)
        return (1.0 if delta >= self.cut else 0.0), []


@pytest.mark.parametrize("cut, target, mdp, bound", [(0.05, 0.1, 0.05, False), (0.3, 0.1, 0.5, False),
                                                     (1e-9, 0.1, 0.01, True), (2.0, 0.1, None, False),
                                                     (0.004, None, 0.005, False)])
def test_mdp_search(cut, target, mdp, bound):
    runner = _FakeRunner(cut)
    row = measure_row(Row("x", "F_scale", target), runner)
    assert row["mdp"] == mdp and row["mdp_is_upper_bound"] == bound
    assert row["meets_target"] == (None if target is None else (mdp is not None and mdp <= target))
    assert all(row["rates"][f"{d:g}"] == (1.0 if d >= cut else 0.0) for d in runner.tried)


def test_not_applicable_rows_carry_their_reason():
    row = next(r for r in PLAN if r.not_applicable)
    out = measure_row(row, _FakeRunner(0.1))
    assert out["applicable"] is False and out["reason"] == row.not_applicable and out["mdp"] is None


# --------------------------------------------------------------------------------------------- CLI and smoke
def test_cli_power_json(tmp_path):
    path = tmp_path / "power.json"
    proc = subprocess.run([sys.executable, "-m", "attnverify", "selftest", "--power", "--only",
                           "meanfield.zero_temperature_flow", "--families", "X_inf_scale", "--seeds", "1",
                           "--json", str(path), "--quiet"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(path.read_text())
    (row,) = result["rows"]
    assert row["check"] == "meanfield.zero_temperature_flow" and row["family"] == "X_inf_scale"
    assert row["mdp"] is not None and row["mdp"] <= 1e-3 and row["rates"]


def test_cli_power_bad_input():
    for argv in (["--power", "--families", "nope"], ["--power", "--only", "no.such"], ["--smoke"],
                 ["--power", "--seeds", "0"]):
        proc = subprocess.run([sys.executable, "-m", "attnverify", "selftest", *argv], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, argv


