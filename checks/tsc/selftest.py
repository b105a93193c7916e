"""Paper D's self-test material: wrong closed forms (and one wrong simulator), each given to the checks named beside
it as their argument (``ctx.theory``: the closed forms of ``_model``; ``ctx.numerics``: the simulator), each of which
must then fail.

* ``tsc_map_missing_sigma``: Gamma_mu(x) = V (m + A x / tau) (the tilting without Sigma);
* ``tsc_cov_missing_sigma``: the push-forward covariance B B^T instead of B Sigma B^T;
* ``tsc_sphere_bessel_order``: R I_{d/2+1}/I_{d/2} instead of R I_{d/2}/I_{d/2-1};
* ``tsc_sphere_cov_missing_factor``: the hardmax sphere covariance's integrand without the selected coordinate's
  factor (c_i = E[1/q] for all i); ``tsc_sphere_cov_missing_radius``: without R^2 (the hardmax form has no Bessel
  function: the wrong Bessel order is ``tsc_sphere_bessel_order``'s, on the sphere map);
* ``tsc_horizon_one_sided``: the two-sided horizon computed as the one-sided one (conventions confused);
* ``tsc_recycled_tokens`` (numerics): every other repetition reuses a sixteenth of its tokens sixteen times (an
  effective sample of n/16), which the curves' split-half consistency test must see; ``..._uniform`` the same in
  the sup-error curves, ``..._sphere`` in the sphere curves (moment constants, hardmax).

Power: each closed form scaled by (1 + delta) (``families``), each check with a smoke row at a target delta set
from its resolution (``power_rows``): Monte Carlo standard errors of ~0.2 % (maps, 200 000 tokens), ~2 % (the
push-forward covariance over 16 x 400 queries),
~0.13 % (the hardmax sphere covariance over 20 x 20 000 queries), float64 round-off (horizons).
"""
from __future__ import annotations

import numpy as np

from types import SimpleNamespace
from typing import Any, Callable

from attnverify.checks.perturb import scale_entry, scale_result
from attnverify.checks.plugin import Family, Mutant, PowerRow


def with_function(original: Any, name: str, wrong: Callable[[Callable], Callable]) -> SimpleNamespace:
    """A copy of the argument ``original`` (the closed forms or a simulator module a check receives) whose function
    ``name`` is ``wrong(original.name)``; every other public attribute is the original's."""
    public = {k: getattr(original, k) for k in dir(original) if not k.startswith("_")}
    return SimpleNamespace(**{**public, name: wrong(getattr(original, name))})


def _replace(name: str, wrong: Callable[[Callable], Callable]) -> Callable[[Any], SimpleNamespace]:
    return lambda original: with_function(original, name, wrong)


def _map_missing_sigma(original):
    def gaussian_moments(A, V, Sigma, m, tau=1.0, x=None):
        out = dict(original(A, V, np.eye(len(m)), m, tau, x))
        out["pushforward_cov"] = original(A, V, Sigma, m, tau)["pushforward_cov"]
        return out
    return gaussian_moments


def _cov_missing_sigma(original):
    def gaussian_moments(A, V, Sigma, m, tau=1.0, x=None):
        out = dict(original(A, V, Sigma, m, tau, x))
        B = np.asarray(V) @ np.asarray(Sigma) @ np.asarray(A) / tau
        out["pushforward_cov"] = B @ B.T
        return out
    return gaussian_moments


def _bessel_order(original):
    def sphere_gain(R, r, d, order_shift=0):
        return original(R, r, d, order_shift + 1)
    return sphere_gain


def _sphere_cov_missing_factor(original):
    def sphere_hardmax_covariance(A, V, R, exponents=None):
        return original(A, V, R, (-0.5, -0.5))
    return sphere_hardmax_covariance


def _sphere_cov_missing_radius(original):
    def sphere_hardmax_covariance(A, V, R, exponents=None):
        return original(A, V, 1.0, exponents)
    return sphere_hardmax_covariance


def _horizon_one_sided(original):
    def horizon_forms(A, Sigma, tau=1.0):
        h = dict(original(A, Sigma, tau))
        h["two_sided"], h["two_sided_tau"] = h["one_sided"], h["one_sided_tau"]
        return h
    return horizon_forms


def _recycled(law):
    """A copy of ``law`` (same class, so the numerics accept it) whose every other sample repeats its first
    sixteenth sixteen times."""
    from dataclasses import fields

    calls = [0]
    base = type(law)

    def sample(self, rng, n, reps=None):
        calls[0] += 1
        Y = base.sample(self, rng, n, reps)
        if calls[0] % 2 == 0:
            q = max(1, n // 16)
            Y = np.concatenate([Y[..., :q, :]] * 16 + [Y[..., :n - 16 * q, :]], axis=-2)[..., :n, :]
        return Y
    cls = type(f"Recycled{base.__name__}", (base,), {"sample": sample})
    return cls(**{f.name: getattr(law, f.name) for f in fields(law) if f.init})


def _recycled_tokens(original):
    def run_experiment(exp, seed, exact_mean=None, exact_cov=None, control=None, empirical=True):
        return original(exp.with_(law=_recycled(exp.law)), seed, exact_mean, exact_cov, control, empirical)
    return run_experiment


def _recycled_curves(original):
    def run_error_curves(law, A, W_v, tau, n_values, reps, seed, exact_mean=None, exact_cov=None, n_reference=None,
                         query_rows=None, reference_rows=None, control=None, scales=None):
        return original(_recycled(law), A, W_v, tau, n_values, reps, seed, exact_mean, exact_cov, n_reference,
                        query_rows, reference_rows, control, scales)
    return run_error_curves


def _recycled_uniform(original):
    def uniform_errors(law, A, W_v, tau, n_values, reps, points, seed, reference):
        return original(_recycled(law), A, W_v, tau, n_values, reps, points, seed, reference)
    return uniform_errors


MUTANTS = [
    Mutant("tsc_map_missing_sigma", _replace("gaussian_moments", _map_missing_sigma),
           ("tsc.gaussian_map", "tsc.pushforward_moments"),
           "Gamma_mu(x) = V (m + A x / tau): Sigma left out of the tilted mean"),
    Mutant("tsc_cov_missing_sigma", _replace("gaussian_moments", _cov_missing_sigma),
           ("tsc.pushforward_moments",), "push-forward covariance B B^T instead of B Sigma B^T"),
    Mutant("tsc_sphere_bessel_order", _replace("sphere_gain", _bessel_order), ("tsc.sphere_map",),
           "sphere gain R I_{d/2+1} / I_{d/2}: the Bessel orders one too high"),
    Mutant("tsc_sphere_cov_missing_factor", _replace("sphere_hardmax_covariance", _sphere_cov_missing_factor),
           ("tsc.sphere_covariance",), "the sphere covariance's integrand without the selected coordinate's "
           "factor (1 + 2 t lambda_i)^{-1}: c_i = E[1/q] instead of E[z_i^2/q]"),
    Mutant("tsc_sphere_cov_missing_radius", _replace("sphere_hardmax_covariance", _sphere_cov_missing_radius),
           ("tsc.sphere_covariance",), "the sphere covariance without its factor R^2"),
    Mutant("tsc_horizon_one_sided", _replace("horizon_forms", _horizon_one_sided), ("tsc.horizons",),
           "the two-sided horizon computed as ||Sigma^{1/2} A||_2"),
    Mutant("tsc_recycled_tokens", _replace("run_experiment", _recycled_tokens), ("tsc.error_curves",),
           "every other repetition draws n/16 tokens and repeats them sixteen times", target="numerics"),
    Mutant("tsc_recycled_tokens_sphere", _replace("run_error_curves", _recycled_curves),
           ("tsc.moment_constants", "tsc.hardmax_curves"),
           "the sphere curves: every other repetition draws n/16 tokens and repeats them sixteen times",
           target="numerics"),
    Mutant("tsc_recycled_tokens_uniform", _replace("uniform_errors", _recycled_uniform), ("tsc.uniform_curves",),
           "the sup-error curves: every other repetition draws n/16 tokens and repeats them sixteen times",
           target="numerics"),
]


def mutants() -> list[Mutant]:
    return list(MUTANTS)


def families() -> tuple[Family, ...]:
    def scaled(name, attribute, make):
        return lambda dl: [Mutant(name, _replace(attribute, make(1 + dl)), (), "")]
    return (
        Family("tsc_gaussian_map_scale", "scale", "Gamma_mu(x) of the Gaussian x (1 + delta)",
               scaled("tsc_gaussian_map_scale", "gaussian_moments", lambda f: scale_entry("attention_map", f))),
        Family("tsc_pushforward_cov_scale", "scale", "the push-forward covariance x (1 + delta)",
               scaled("tsc_pushforward_cov_scale", "gaussian_moments", lambda f: scale_entry("pushforward_cov", f))),
        Family("tsc_sphere_gain_scale", "scale", "the sphere gain R I_{d/2}/I_{d/2-1} x (1 + delta)",
               scaled("tsc_sphere_gain_scale", "sphere_gain", scale_result)),
        Family("tsc_sphere_cov_scale", "scale", "the hardmax sphere covariance x (1 + delta)",
               scaled("tsc_sphere_cov_scale", "sphere_hardmax_covariance", scale_result)),
        Family("tsc_horizon_scale", "scale", "the two-sided horizon's definition x (1 + delta)",
               scaled("tsc_horizon_scale", "horizon_forms", lambda f: scale_entry("two_sided", f))),
        Family("tsc_recycled_tokens", "fixed", "every other repetition reuses n/16 tokens sixteen times",
               lambda _dl: [m for m in MUTANTS if m.name == "tsc_recycled_tokens"]),
        Family("tsc_recycled_tokens_sphere", "fixed", "the sphere curves with recycled tokens",
               lambda _dl: [m for m in MUTANTS if m.name == "tsc_recycled_tokens_sphere"]),
        Family("tsc_recycled_tokens_uniform", "fixed", "the sup-error curves with recycled tokens",
               lambda _dl: [m for m in MUTANTS if m.name == "tsc_recycled_tokens_uniform"]),
    )


_CONSISTENCY_ONLY = ("the check tests the measured curves' internal consistency only: a wrong exact reference "
                     "shifts the errors of every repetition alike and is tsc.pushforward_moments' to catch")


def power_rows() -> tuple[PowerRow, ...]:
    return (
        PowerRow("tsc.gaussian_map", "tsc_gaussian_map_scale", 0.02, smoke=True),
        PowerRow("tsc.sphere_map", "tsc_sphere_gain_scale", 0.02, smoke=True),
        PowerRow("tsc.pushforward_moments", "tsc_pushforward_cov_scale", 0.2, smoke=True),
        PowerRow("tsc.sphere_covariance", "tsc_sphere_cov_scale", 0.02, smoke=True),
        PowerRow("tsc.horizons", "tsc_horizon_scale", 1e-6, smoke=True),
        PowerRow("tsc.error_curves", "tsc_recycled_tokens", smoke=True),
        PowerRow("tsc.error_curves", "tsc_pushforward_cov_scale", not_applicable=_CONSISTENCY_ONLY),
        PowerRow("tsc.uniform_curves", "tsc_recycled_tokens_uniform", smoke=True),
        PowerRow("tsc.moment_constants", "tsc_recycled_tokens_sphere", smoke=True),
        PowerRow("tsc.hardmax_curves", "tsc_recycled_tokens_sphere", smoke=True),
        PowerRow("tsc.hardmax_curves", "tsc_sphere_cov_scale", not_applicable=_CONSISTENCY_ONLY.replace(
            "tsc.pushforward_moments", "tsc.sphere_covariance")),
        PowerRow("tsc.uniform_curves", "tsc_gaussian_map_scale", not_applicable=_CONSISTENCY_ONLY.replace(
            "tsc.pushforward_moments", "tsc.gaussian_map")),
    )
