"""Paper D's checks (model ``tsc``): each passes at its quick defaults and rejects its wrong closed form (the
self-test's mutants, given to it as its argument); the closed forms it receives agree with independent references
(mpmath, forms derived by hand below); bad input is refused in one line. The error-curve check runs the protocol's
quick Gaussian experiment (about 20 s): marked slow."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from attnverify.checks.params import InputError
from attnverify.checks.runner import run
from attnverify.checks.tsc._model import gaussian_moments, horizon_forms, sphere_gain, sphere_limits
from attnverify.checks.tsc.selftest import mutants
from attnverify.numerics.tsc.selfnormalised import tilted_average
from attnverify.render.reasons import plain
from attnverify.selftest.mutation import run_mutant

FAST = ["tsc.gaussian_map", "tsc.sphere_map", "tsc.pushforward_moments", "tsc.horizons", "tsc.uniform_curves"]
MUTANTS = {m.name: m for m in mutants()}


def test_the_fast_checks_pass_at_their_quick_defaults():
    for r in run(FAST, seed=0).results:
        assert r.verdict == "pass", (r.id, r.error, r.observed, r.threshold)
        assert r.findings is not None and r.observed <= r.threshold


@pytest.mark.parametrize("name", ["tsc_map_missing_sigma", "tsc_cov_missing_sigma", "tsc_sphere_bessel_order",
                                  "tsc_horizon_one_sided", "tsc_recycled_tokens_uniform"])
def test_each_wrong_closed_form_is_rejected_by_every_check_it_names(name):
    row = run_mutant(MUTANTS[name])
    assert sorted(row["caught_by"]) == sorted(MUTANTS[name].checks), row["results"]


@pytest.mark.slow
def test_the_error_curves_pass_and_reject_recycled_tokens():
    r = run(["tsc.error_curves"], seed=0).results[0]
    assert r.verdict == "pass", (r.error, r.observed)
    assert len(r.findings.mean) >= 4 and len(r.findings.cov) >= 4
    row = run_mutant(MUTANTS["tsc_recycled_tokens"])
    assert row["caught_by"] == ["tsc.error_curves"], row["results"]


# ------------------------------------------------------------------------ the closed forms the checks receive
def test_gaussian_map_is_the_tilted_mean_derived_by_hand():
    """Tilting N(m, S) by e^{<b, y>} gives N(m + S b, S) (complete the square), so Gamma(x) = V (m + S A x / tau);
    the push-forward of X ~ N(m, S) by x -> V m + B x, B = V S A / tau, has mean V (m + S A m / tau) and
    covariance B S B^T."""
    rng = np.random.default_rng(1)
    d, tau = 5, 1.7
    A, V, G = rng.normal(size=(3, d, d))
    S = G @ G.T / d + np.eye(d)
    m, x = rng.normal(size=(2, d))
    out = gaussian_moments(A, V, S, m, tau, x)
    B = V @ S @ A / tau
    assert np.allclose(out["attention_map"], V @ (m + S @ A @ x / tau), rtol=1e-12)
    assert np.allclose(out["pushforward_mean"], V @ m + B @ m, rtol=1e-12)
    assert np.allclose(out["pushforward_cov"], B @ S @ B.T, rtol=1e-12)


@pytest.mark.parametrize("d,r", [(2, 0.3), (3, 2.0), (8, 40.0), (50, 3.0), (50, 1e6)])
def test_sphere_gain_is_the_bessel_ratio_at_high_precision(d, r):
    mp.mp.dps = 40
    ref = float(1.5 * mp.besseli(mp.mpf(d) / 2, 1.5 * r) / mp.besseli(mp.mpf(d) / 2 - 1, 1.5 * r))
    assert sphere_gain(1.5, r, d) == pytest.approx(ref, rel=1e-12)


def test_sphere_limits_are_the_linearisation_and_the_hardmax():
    import sympy as sp

    from attnverify.theory.engine.laws import d_sym

    lim = sphere_limits()
    R = next(iter(lim["large"].free_symbols))
    assert sp.simplify(lim["small"] - R ** 2 / d_sym) == 0 and lim["large"] == R
    assert sphere_gain(2.0, 1e-4, 6) / 1e-4 == pytest.approx(4.0 / 6, rel=1e-6)
    assert sphere_gain(2.0, 1e9, 6) == pytest.approx(2.0, rel=1e-8)


def test_horizon_forms_for_an_isotropic_covariance():
    """Sigma = rho I: two-sided rho ||A||_2, one-sided sqrt(rho) ||A||_2 (and sqrt(rho) ||A^T||_2 = the same)."""
    A = np.array([[3.0, 0.0], [4.0, 0.0]])          # ||A||_2 = 5
    h = horizon_forms(A, 0.1 * np.eye(2), tau=2.0)
    assert h["two_sided"] == pytest.approx(0.5, rel=1e-12)
    assert h["one_sided"] == pytest.approx(5 * np.sqrt(0.1), rel=1e-12)
    assert h["two_sided_tau"] == pytest.approx(0.25, rel=1e-12)


# ------------------------------------------------------------------------ the self-normalised estimator
def test_tilted_average_of_a_standard_normal_is_its_tilted_mean():
    """For y ~ N(0, 1), tilting by e^{b y} gives N(b, 1): the estimate is within 4 standard errors of b. The
    delta-method variance is E[w^2 (y - b)^2] / (E w)^2 / N with w = e^{b y}: E w = e^{b^2/2} and
    E[e^{2by} (y - b)^2] = e^{2b^2} E_{N(2b,1)}(y - b)^2 = e^{2b^2} (1 + b^2), so se = sqrt(e^{b^2} (1 + b^2) / N)."""
    rng = np.random.default_rng(2)
    Y = rng.standard_normal((200_000, 1))
    b = np.array([[0.0], [0.5], [1.0]])
    mc = tilted_average(Y, Y, b)
    assert np.all(np.abs(mc.estimate[:, 0] - b[:, 0]) <= 4 * mc.se[:, 0])
    assert mc.se[:, 0] == pytest.approx(np.sqrt(np.exp(b[:, 0] ** 2) * (1 + b[:, 0] ** 2) / 200_000), rel=0.1)


def test_tilted_average_is_finite_at_huge_scores_and_refuses_bad_shapes():
    Y = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    mc = tilted_average(Y, Y, np.array([[1e8, 0.0]]))
    assert np.allclose(mc.estimate, [[1.0, 0.0]]) and mc.n_eff[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="values must have shape"):
        tilted_average(Y, Y[:2], np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="B must have shape"):
        tilted_average(Y, Y, np.array([[1.0, 0.0, 0.0]]))


def test_bad_check_parameters_are_refused_in_one_line():
    with pytest.raises(InputError, match="scales"):
        run(["tsc.sphere_map"], seed=0, overrides={"scales": "1,x"})
    with pytest.raises(InputError):
        run(["tsc.error_curves"], seed=0, overrides={"profile": "huge"})


def test_pushforward_moments_where_one_token_takes_the_weight_is_unresolved_not_a_failure():
    """Found by the seed-6 model sweep (9 of 50 models failed, observed up to 1.3e4): at tau = 0.0125 the attention
    weights have an effective sample size of about 2 (harmonic mean over the queries), so the self-normalised
    averages are far from their infinite-token limit and the difference is the estimator's bias, not the closed
    form's error. The check now measures n_eff from its own tokens and reads unresolved below 100 (a fail before);
    at the defaults n_eff is in the thousands and the check is judged."""
    bad = {"d": 4, "tau": 0.01252593902391499, "scale": 0.15061156032155676}
    r = run(["tsc.pushforward_moments"], seed=0, overrides=bad).results[0]
    assert r.verdict == "error" and r.error.startswith("Unresolved: the attention weights' effective sample size"), \
        r.error
    ok = run(["tsc.pushforward_moments"], seed=0).results[0]
    assert ok.verdict == "pass" and "n_eff = " in plain(ok.reason)
    rng = np.random.default_rng(0)
    Y, X = rng.standard_normal((500, 3)), rng.standard_normal((4, 3))
    assert np.allclose(tilted_average(Y, Y, 0.0 * X, 1.0).n_eff, 500.0)             # equal weights: n
    assert np.all(tilted_average(Y, Y, 1e6 * X, 1.0).n_eff < 1.01)                  # one token takes all: 1
