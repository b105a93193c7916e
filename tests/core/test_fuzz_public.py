"""Fuzzed bad and extreme input for the public theory and numerics functions.

The contract: every call either raises ValueError/TypeError with a one-line message that names the offending
input (one of the fuzzed parameters, or for a fuzzed matrix the property it violates), or returns a finite,
correct result (checked by an invariant: unit norm, tangency to the sphere, a fixed point of Pi, a
probability vector, ...). Any other exception, a message naming none of the fuzzed inputs, or a NaN/inf in a
result, fails the test.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
import sympy as sp

import attnverify.theory.meanfield as MF
import attnverify.theory.signal as SR
from attnverify.numerics.meanfield.laplace import laplace_field
from attnverify.numerics.meanfield.particles import attention_field, simulate
from attnverify.numerics.signal.reduced_ode import solve_reduced_ode
from attnverify.numerics.signal.sga import projected_sga, sga_drift, step_sizes
from attnverify.numerics.signal.mc import objective_mc
from attnverify.numerics.signal.model import SignalModel, query_at, softmax_weights
from attnverify.numerics.meanfield.wasserstein import coupling_bound, w2

# no shrinking phase: a failing example is reported as found (shrinking slow examples can take minutes)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
FAST = settings(max_examples=20, deadline=None, phases=PHASES, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

NASTY_REALS = st.sampled_from([0.0, -0.0, -1.0, -1e-300, 1e-300, 1e300, -1e300, math.nan, math.inf, -math.inf, 0.5,
                               1.0, 2.0, 3.5])
NASTY = st.one_of(NASTY_REALS, st.sampled_from([True, None, "1", [1.0], 1, 2, 3, 50, 10**6, -3]))


def names_one_of(msg: str, names: tuple[str, ...]) -> bool:
    """True when one of ``names`` occurs in ``msg`` as a whole word or phrase (case-sensitive: 'B' is the matrix)."""
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", msg) for n in names)


def outcome(fn, *args, names: tuple[str, ...], **kwargs):
    """fn(*args, **kwargs), or None when it raised ValueError/TypeError with a one-line message naming one of
    ``names``: the parameters the caller fuzzed (as the message calls them), or for a fuzzed matrix a property it
    can violate ('singular', 'symmetric', 'gap', ...). Any other exception propagates and fails the test."""
    assert names, "state which inputs were fuzzed"
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        msg = str(exc).strip()
        assert msg, f"{type(exc).__name__} without a message"
        assert "\n" not in msg, f"multi-line message: {msg!r}"
        assert names_one_of(msg, names), f"{type(exc).__name__} names none of {names}: {msg!r}"
        return None


def test_outcome_rejects_a_message_that_names_no_fuzzed_input():
    def raiser(msg: str):
        def fn(*args):
            raise ValueError(msg)
        return fn

    assert outcome(raiser("beta must be > 0, got -1"), -1.0, names=("beta",)) is None
    assert outcome(raiser("B = Q^T K is singular"), names=("B", "V")) is None
    for msg in ("something went wrong", "betas must be sorted", "could not convert string to float: 'b'"):
        with pytest.raises(AssertionError, match="names none of"):
            outcome(raiser(msg), names=("beta",))


def finite(x) -> bool:
    return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


# ------------------------------------------------------------------------------------------------- Paper A
SIGNAL_VALID = {"theta": 0.5, "beta": 1.0, "sigma": 1.0, "R": 5, "L": 50, "d": 3}


@FAST
@given(name=st.sampled_from(sorted(SIGNAL_VALID)), value=NASTY, sign=st.sampled_from(["fixed", "symmetric"]))
def test_equilibria_bad_params(name, value, sign):
    params = dict(SIGNAL_VALID, **{name: value})
    eqs = outcome(SR.equilibria, params, sign, names=(name,))
    if eqs is None:
        return
    rhos = [e.rho for e in eqs]
    assert rhos == sorted(rhos) and rhos[0] == -1.0 and rhos[-1] == 1.0      # +-xi are always equilibria
    assert all(-1.0 <= r <= 1.0 and math.isfinite(e.eigenvalue) for r, e in zip(rhos, eqs))
    # F'(+-1) = -+2 J'(+-1): stability of +xi is the sign of J'(1) > 0, checked on the closed form by SymPy
    Jp1 = float(sp.diff(SR.population_objective(sign), SR.rho).subs(
        {SR.rho: 1, **{getattr(SR, k): v for k, v in params.items()}}))
    if abs(Jp1) > 1e-9:
        assert eqs[-1].stable == (Jp1 > 0)


def test_equilibria_huge_sigma():
    eqs = outcome(SR.equilibria, dict(SIGNAL_VALID, sigma=1e300), "fixed", names=("sigma",))
    assert eqs is None or all(math.isfinite(e.eigenvalue) for e in eqs)


NAMED_CASES = [("beta", 1e300), ("beta", 1e-300), ("d", 1), ("d", 0), ("R", 60), ("R", 50), ("L", 5),
               ("beta", math.nan), ("L", math.inf), ("theta", -1.0), ("sigma", 0.0), ("beta", -1.0), ("R", 2.5),
               ("d", True), ("theta", "1")]


@pytest.mark.parametrize("name, value", NAMED_CASES)
def test_signal_named_bad_cases(name, value):
    """The issue's list for Paper A (d < 2, R > L, NaN, inf, negative, zero, huge beta) on the model and the theory."""
    model = outcome(SignalModel, **{**SIGNAL_VALID, "sign": "fixed", name: value}, names=(name,))
    if model is not None:
        assert getattr(model, name) == value
        mean, _ = objective_mc(model, np.array([0.0, 1.0]), 3, np.random.default_rng(0))
        assert finite(mean)
    if name in ("beta", "theta") and value == 1e300:
        return                          # equilibria: a clear ValueError, but after ~40 s (test_equilibria_huge_beta)
    eqs = outcome(SR.equilibria, {**SIGNAL_VALID, name: value}, "fixed", names=(name,))
    if eqs is not None:
        assert all(math.isfinite(e.eigenvalue) for e in eqs) and eqs[-1].rho == 1.0


@pytest.mark.slow
def test_equilibria_huge_beta():
    assert outcome(SR.equilibria, {**SIGNAL_VALID, "beta": 1e300}, "fixed", names=("beta",)) is None


@pytest.mark.parametrize("sign", [None, 3, "both", ""])
def test_bad_sign_option(sign):
    for fn in (SR.population_objective, SR.informative_mass, SR.finite_size_term):
        assert outcome(fn, sign, names=("sign",)) is None


@FAST
@given(theta_max=NASTY_REALS, R=st.sampled_from([1, 5, 49, 50, 60]))
def test_minus_xi_threshold_bad_theta_max(theta_max, R):
    out = outcome(SR.minus_xi_threshold, dict(SIGNAL_VALID, R=R), "fixed", False, theta_max, names=("theta_max", "R"))
    if out is not None:
        assert math.isfinite(out) and 0 <= out <= theta_max


@FAST
@given(name=st.sampled_from(["theta", "beta", "sigma", "R", "L", "d", "sign"]), value=NASTY)
def test_signal_model_and_monte_carlo(name, value):
    kw = {**SIGNAL_VALID, "sign": "fixed", name: value}
    model = outcome(SignalModel, **kw, names=(name,))
    if model is None:
        return
    rhos = np.array([-1.0, 0.0, 1.0])
    mean, se = objective_mc(model, rhos, 4, np.random.default_rng(0))
    assert finite(mean) and finite(se) and np.all(mean >= 0)     # |f|^2 >= 0


@pytest.mark.parametrize("name", ["theta", "sigma"])
def test_monte_carlo_huge_theta(name):
    model = outcome(SignalModel, **{**SIGNAL_VALID, name: 1e300}, names=(name,))
    assert model is None or finite(objective_mc(model, np.array([1.0]), 4, np.random.default_rng(0))[0])


@FAST
@given(rho=st.one_of(NASTY_REALS, st.floats(-1, 1)), eta=NASTY_REALS, n=st.sampled_from([0, 1, 2, 3, -1, 2.5]))
def test_sga_drift_and_step_sizes(rho, eta, n):
    model = SignalModel(0.5, 1.0, 1.0, 2, 10, 3)
    out = outcome(sga_drift, model, np.array([rho]), eta, n, np.random.default_rng(1), names=("rho", "eta", "n_samples"))
    if out is not None:
        mean, se, energy = out
        assert finite(mean) and finite(se) and finite(energy) and np.all(energy >= 0)
        assert np.all(np.abs(rho + mean) <= 1 + 1e-12)           # rho' stays an alignment
    steps = outcome(step_sizes, 5, eta, 2.0, names=("scale a", "a/b"))
    if steps is not None:
        assert finite(steps) and np.all(steps > 0) and np.all(np.diff(steps) < 0)


@FAST
@given(rho0=st.one_of(NASTY_REALS, st.floats(-1, 1)), n_steps=st.sampled_from([0, 1, 3, -2, 2.0, True]),
       a=NASTY_REALS)
def test_projected_sga_stays_on_sphere(rho0, n_steps, a):
    model = SignalModel(0.5, 1.0, 1.0, 2, 10, 3)
    path = outcome(projected_sga, model, np.array([rho0]), n_steps, a, 10.0, np.random.default_rng(2),
                   names=("rho", "n_steps", "scale a", "a/b"))
    if path is None:
        return
    assert finite(path.rho) and finite(path.q_final) and finite(path.nuisance_mass)
    assert np.allclose(np.linalg.norm(path.q_final, axis=1), 1.0, atol=1e-12)
    assert np.all((path.nuisance_mass >= 0) & (path.nuisance_mass <= 1))


def test_sga_drift_huge_eta():
    model = SignalModel(0.5, 1.0, 1.0, 2, 10, 3)
    out = outcome(sga_drift, model, np.array([0.2]), 1e300, 3, np.random.default_rng(1), names=("eta",))
    assert out is None or finite(out[0])


def test_projected_sga_huge_step():
    model = SignalModel(0.5, 1.0, 1.0, 2, 10, 3)
    path = outcome(projected_sga, model, np.array([0.5]), 3, 1e300, 10.0, np.random.default_rng(2),
                   names=("scale a", "a/b"))
    assert path is None or finite(path.rho)


@FAST
@given(scale=st.sampled_from([1.0, 1e3, 1e10, 1e300]), shape=st.sampled_from([(1, 1), (3, 7), (2, 5)]),
       seed=st.integers(0, 2**16))
def test_softmax_huge_scores(scale, shape, seed):
    """Finite scores of any size (beta = 1e300 times O(1) scores): a probability vector, never NaN."""
    s = np.random.default_rng(seed).uniform(-1, 1, shape) * scale
    with np.errstate(over="ignore"):
        a = softmax_weights(s)
    assert finite(a) and np.all(a >= 0) and np.allclose(a.sum(axis=-1), 1.0)
    assert np.all(a[np.arange(shape[0]), np.argmax(s, axis=-1)] >= 1.0 / shape[1])   # the max gets the most


@FAST
@given(rho=NASTY, d=st.sampled_from([1, 2, 3, 0, -1, 2.0]))
def test_query_at(rho, d):
    q = outcome(query_at, rho, d, names=("rho", "d"))
    if q is not None:
        assert finite(q) and np.allclose(np.linalg.norm(q, axis=1), 1.0)
        assert np.allclose(q[:, 0], np.asarray(rho, dtype=float))


@FAST
@given(rho0=NASTY, value=st.sampled_from([math.nan, math.inf, 0.0, 1.0]))
@example(rho0=[1.0], value=1.0)
@example(rho0="rho", value=1.0)
def test_reduced_ode_bad_input_and_bad_field(rho0, value):
    t = np.linspace(0.0, 1.0, 5)
    r = outcome(solve_reduced_ode, lambda x: value * (1 - x * x), rho0, t, names=("rho0", "F"))
    if r is not None:
        assert finite(r) and np.all(np.abs(r) <= 1 + 1e-9)


# ------------------------------------------------------------------------------------------------- Paper B
GOOD_B, GOOD_V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])          # V B^T = diag(2, 3): E = span(e2)
SPECIAL = {
    "singular B": (np.array([[1.0, 2.0], [2.0, 4.0]]), np.eye(2)),
    "ill-conditioned B": (np.diag([1.0, 1e-14]), np.diag([1.0, 2e14])),
    "non-symmetric V B^T": (np.eye(2), np.array([[1.0, 2.0], [0.0, 3.0]])),
    "no gap": (np.eye(2), np.eye(2)),
    "no gap, d = 3": (np.eye(3), np.diag([2.0, 2.0, 1.0])),
    "d = 1": (np.eye(1), np.eye(1)),
    "nan": (np.array([[1.0, math.nan], [0.0, 1.0]]), np.eye(2)),
    "inf": (np.eye(2), np.array([[math.inf, 0.0], [0.0, 1.0]])),
    "huge": (np.diag([1e300, 1e-300]), np.diag([1e-300, 1e300])),
    "shape mismatch": (np.eye(2), np.eye(3)),
    "not square": (np.ones((2, 3)), np.ones((2, 3))),
    "wrong type": ("B", None),
    "valid": (GOOD_B, GOOD_V),
    "valid, d = 3": (np.eye(3), np.diag([3.0, 1.0, 2.0])),
}
MATRICES = st.one_of(st.sampled_from(sorted(SPECIAL)).map(SPECIAL.get),
                     st.tuples(st.lists(NASTY_REALS, min_size=4, max_size=4),
                               st.lists(NASTY_REALS, min_size=4, max_size=4)).map(
                         lambda bv: (np.reshape(bv[0], (2, 2)), np.reshape(bv[1], (2, 2)))))


# a fuzzed (B, V) pair: the message names the matrix (B, V, V B^T; B = Q^T K) or the dimension d it fixes
MATRIX_NAMES = ("B", "V", "dimension d")


def unit_points(d: int, seed: int) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((4, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@FAST
@given(bv=MATRICES, seed=st.integers(0, 2**16))
def test_mean_field_theory_on_bad_matrices(bv, seed):
    B, V = bv
    spec = outcome(MF.spectrum, B, V, names=MATRIX_NAMES)
    if spec is None:
        return
    d = spec.d
    X = unit_points(d, seed)
    Pi = MF.projection_map(B, V)
    Y = Pi(X)
    assert finite(Y) and np.allclose(np.linalg.norm(Y, axis=1), 1.0)
    assert np.allclose(Y @ spec.P_E.T, Y, atol=1e-9)                       # Pi lands in E
    F = MF.zero_temperature_field(X, np.asarray(B, float), np.asarray(V, float))
    assert finite(F) and np.allclose(np.sum(F * X, axis=1), 0.0, atol=1e-9 * max(1.0, np.abs(F).max()))
    rate = MF.convergence_rate(B, V) if spec.dim_E == 1 else MF.convergence_rate(B, V, Y[0])
    assert math.isfinite(rate) and rate > 0
    flow = outcome(MF.closed_form_flow, X[0], B, V, np.array([0.0, 0.5, 2.0]),     # may reject |mu| ~ 1e300
                   names=MATRIX_NAMES)
    if flow is not None:
        assert finite(flow) and np.allclose(np.linalg.norm(flow, axis=1), 1.0)


@pytest.mark.parametrize("x", [np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.0, 0.0]),
                               np.array([math.nan, 1.0]), np.array([1.0, 2.0, 3.0]), "not a vector"])
def test_projection_outside_domain(x):
    """E = span(e2): e1 lies in E^perp, outside the domain of Pi; zero, NaN, bad shapes and types too."""
    Pi = MF.projection_map(GOOD_B, GOOD_V)
    y = outcome(Pi, x, names=("x", "P_E x"))
    if y is not None:
        assert finite(y) and np.allclose(np.abs(np.atleast_2d(y)[:, 1]), 1.0)
    assert outcome(Pi, np.array([1.0, 0.0]), names=("P_E x",)) is None


@FAST
@given(bv=MATRICES, beta=st.one_of(NASTY_REALS, st.just(np.inf)), seed=st.integers(0, 2**16),
       off_sphere=st.booleans())
def test_particle_field(bv, beta, seed, off_sphere):
    B, V = bv
    d = np.shape(B)[0] if np.ndim(B) == 2 else 2
    X = unit_points(max(d, 1), seed) * (1.5 if off_sphere else 1.0)
    F = outcome(attention_field, X, B, V, beta, names=MATRIX_NAMES + ("beta", "X"))
    if F is None:
        return
    assert finite(F) and np.allclose(np.sum(F * X, axis=1), 0.0, atol=1e-9 * max(1.0, np.abs(F).max()))


def test_particle_field_huge_entries():
    B = np.array([[1e-300, 1e300], [1e300, 0.5]])
    V = np.array([[1e-300, 1e300], [1e-300, 0.5]])
    for beta in (np.inf, 1.0):
        F = outcome(attention_field, unit_points(2, 95), B, V, beta, names=("B", "V"))
        assert F is None or finite(F)


@FAST
@given(beta=NASTY_REALS, rtol=st.sampled_from([1e-6, 0.0, -1.0, math.nan, 1e-20]),
       times=st.sampled_from([[0.0, 1.0], [1.0, 0.0], [-1.0], [], [0.0, math.inf]]))
def test_simulate_bad_input(beta, rtol, times):
    X0 = unit_points(2, 0)
    out = outcome(simulate, X0, np.eye(2), GOOD_B, GOOD_V, beta, times, rtol=rtol, names=("beta", "rtol", "times"))
    if out is not None:
        assert finite(out) and np.allclose(np.linalg.norm(out, axis=2), 1.0)


@settings(max_examples=12, deadline=None, phases=PHASES, derandomize=True)
@given(beta=st.sampled_from([-1.0, 0.0, math.nan, math.inf, 1e-300, 10.0, 1e300, True]),
       x=st.sampled_from([(1.0, 0.0), (0.6, 0.8), (2.0, 0.0), (math.nan, 1.0)]))
def test_laplace_field_bad_input(beta, x):
    F = outcome(laplace_field, np.array(x), GOOD_B, GOOD_V, beta, lambda phi: 1, dps=15, names=("beta", "x"))
    if F is not None:
        assert finite(F) and abs(float(np.dot(F, x))) <= 1e-9


@FAST
@given(X=st.lists(NASTY_REALS, min_size=4, max_size=4), shift=st.floats(-2, 2))
def test_w2(X, shift):
    A = np.reshape(X, (2, 2))
    out = outcome(w2, A, A + shift, names=("X", "Y"))
    if out is not None:
        assert math.isfinite(out) and 0 <= out <= coupling_bound(A, A + shift) * (1 + 1e-12)
