"""Paper A's self-test material as arguments: the mismatch families cover every closed form of SignalTheory and are
seen by the caller only, a replaced closed form leaves the default theory untouched, and the numerics' replaceable
pieces reach the simulations that use them."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import attnverify.theory.signal as S
from attnverify.checks.signal.selftest import (closed_forms, naive_softmax, no_tangent_projection, param_mismatch,
                                               scaled)
from attnverify.numerics.signal.model import SignalModel
from attnverify.numerics.signal.simulators import NUMERICS

P = {"theta": 0.7, "beta": 1.0, "sigma": 1.0, "R": 50, "L": 1050, "d": 20}


def test_the_closed_forms_are_the_models_not_its_building_blocks():
    """Written out by hand: what a check can read of Paper A's model (the derivation record, the reduction identity
    for an arbitrary G, the Gaussian moments and the limit in a shift c are not closed forms of the model)."""
    assert closed_forms() == ["informative_mass", "nuisance_mass", "population_objective", "finite_size_term",
                              "in_plane_term", "reduced_field", "equilibria", "minus_xi_threshold",
                              "minus_xi_certificate", "minus_xi_sign_changes"]


def test_mismatch_is_seen_by_the_caller_only():
    """theta x 2 through the view: J at theta = 1.4 where the caller reads J; the theory itself (and F derived inside
    it) is unchanged, and the numeric parameters of equilibria are shifted too."""
    view = param_mismatch("theta", lambda v: 2 * v, lambda s: 2 * s)(S.THEORY)
    at = {S.rho: 0.3, S.beta: 1, S.sigma: 1, S.R: 50, S.L: 1050, S.d: 20}
    J_view = float(view.population_objective("fixed").subs({**at, S.theta: 0.7}))
    J_true = float(S.population_objective("fixed").subs({**at, S.theta: 1.4}))
    assert J_view == pytest.approx(J_true, rel=1e-12)
    assert float(S.population_objective("fixed").subs({**at, S.theta: 0.7})) != pytest.approx(J_true, rel=1e-3)
    eqs = view.equilibria(P, "fixed", True)
    assert [e.rho for e in eqs] == [e.rho for e in S.equilibria(dict(P, theta=1.4), "fixed", True)]
    # the threshold ignores params' theta: a theta mismatch leaves it alone
    assert view.minus_xi_threshold(P, "fixed", True) == S.minus_xi_threshold(P, "fixed", True)


def test_a_scaled_closed_form_is_a_copy():
    """J x 1.5 in a copy: its F is 1.5 F (derived from the scaled J); the default theory keeps J."""
    copy = scaled("population_objective", 1.5)(S.THEORY)
    at = {S.rho: 0.3, **{getattr(S, k): v for k, v in P.items()}}
    assert float(copy.reduced_field("fixed").subs(at)) == pytest.approx(1.5 * float(S.reduced_field("fixed").subs(at)),
                                                                        rel=1e-12)
    assert copy.population_objective("fixed") != S.population_objective("fixed")
    assert S.THEORY.population_objective("fixed") is S.population_objective("fixed")      # memoised, unchanged


def test_the_replaceable_numerics_reach_the_simulations():
    """The naive softmax overflows at beta theta = 1000 where the default one does not; the Euclidean gradient
    leaves SGA's step off the tangent space (the alignment moves differently)."""
    model = SignalModel(1.0, 1000.0, 1e-5, 50, 1050, 5)
    rhos = np.array([0.9])
    with np.errstate(all="ignore"):
        good = NUMERICS.objective_samples(model, rhos, 4, np.random.default_rng(0))
        bad = NUMERICS.objective_samples(model, rhos, 4, np.random.default_rng(0), softmax=naive_softmax)
    assert np.all(np.isfinite(good)) and not np.all(np.isfinite(bad))
    wrong = dataclasses.replace(NUMERICS, tangent=no_tangent_projection)
    small = SignalModel(2.0, 1.0, 1.0, 5, 20, 3)
    runs = [n.projected_sga(small, np.array([0.1]), 3, 1.0, 1.0, np.random.default_rng(1), tangent=n.tangent).rho
            for n in (NUMERICS, wrong)]
    assert not np.allclose(runs[0], runs[1])
    assert NUMERICS.tangent is not wrong.tangent and NUMERICS.projected_sga is wrong.projected_sga
