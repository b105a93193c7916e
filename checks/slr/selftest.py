"""Paper C's self-test material: mutants (deliberately wrong closed forms and implementations, ``attnverify selftest
--mutants``), perturbation families and power rows (``selftest --power``), and the claims' scenarios (``selftest
--claims``).

A mutant is an argument: ``make(original)`` builds a wrong version of the object a check receives, never touching the
original. A theory mutant is a copy of the theory object (attnverify.theory.slr.SLRTheory) made by
``ClosedForms.replace``, in which one closed form is wrong and every closed form that reads it derives from the wrong
one (a wrong derivation propagates: a wrong token moment reaches the risk, its gradient, the evaluators and the
Hessian). A numerics mutant is a copy of the simulators (attnverify.numerics.slr.Simulators) with one piece replaced
(the task sampler, SGD's gradient, the PGD step), which the checks pass down to the simulators.

A perturbation family changes the analytic side by a size delta while the numerics run at the true parameters: a
*scale* of a closed form (the risk, zeta, the oracle's Hessian, the reduced flow, the posterior's log-weights, the
linear risk), a *parameter mismatch* (the risk, and so every closed form derived from it, at lam or gamma times
(1 + delta)), or a step-size mismatch of the reduced map and of the stationary-point search. Each is a replacement of
one closed form, seen by every closed form derived from it (the family's description says "everything derived from
it"): the same perturbation the earlier self-tests applied by patching the module function.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from attnverify.checks.plugin import Family, Mutant, PowerRow


def _replacing(**wrongs: Callable[..., Any]) -> Callable[[Any], Any]:
    """make(theory): a copy of ``theory`` whose closed form ``name`` is ``wrongs[name](original, *args, **kwargs)``
    for each name, ``original`` the closed form it replaces (bound to the copy, so it sees the other replacements)."""
    def make(theory):
        def replacement(name: str, wrong: Callable[..., Any]) -> Callable[..., Any]:
            method = getattr(type(theory), name)

            @functools.wraps(method)            # the original's name and signature
            def closed_form(self, *args, **kwargs):
                return wrong(functools.partial(method, self), *args, **kwargs)
            return closed_form
        return theory.replace(**{name: replacement(name, wrong) for name, wrong in wrongs.items()})
    return make


def _replacing_piece(name: str, wrong: Callable[[Callable], Callable]) -> Callable[[Any], Any]:
    """make(numerics): a copy of the simulators whose piece ``name`` is ``wrong(original piece)``."""
    def make(numerics):
        return dataclasses.replace(numerics, **{name: wrong(getattr(numerics, name))})
    return make


# ------------------------------------------------------------------------------------------- mutants: closed forms
def _cross_term_sign(original, Lv):
    """E (xi + A - sum B_l)^2 assembled with +2 (L - 1) E A E B (the cross term's sign flipped)."""
    from attnverify.theory.slr.population import mA1, mB1

    return original(Lv) + 4 * (Lv - 1) * mA1 * mB1


def _noise_without_rho(original):
    """The noise token's E[erf(lam a)^2 b^2] with the correlation rho of (a, b) dropped (b independent of a)."""
    from attnverify.theory.slr.symbols import rho

    out = dict(original())
    out["EN_f2"] = out["EN_f2"].subs(rho, 0)
    return out


def _owen_wrong_a_mp(original, t, sigma, route: str = "owen"):
    """zeta through Owen's T with a = 1/sqrt(1 + 2 sigma^2) instead of 1/sqrt(1 + 4 sigma^2) (mpmath evaluator; the
    integral route unchanged)."""
    if route != "owen":
        return original(t, sigma, route)
    import mpmath

    from attnverify.theory.slr.gauss import owens_t_mp

    t, s = mpmath.mpf(t), mpmath.mpf(sigma)
    return 1 - 8 * owens_t_mp(mpmath.sqrt(2) * t / mpmath.sqrt(1 + 2 * s ** 2), 1 / mpmath.sqrt(1 + 2 * s ** 2))


def _owen_wrong_a_np(original, t, sigma):
    """zeta through Owen's T with a = 1/sqrt(1 + 2 sigma^2) instead of 1/sqrt(1 + 4 sigma^2) (float64 evaluator)."""
    from scipy.special import owens_t

    t, s = np.asarray(t, float), np.asarray(sigma, float)
    return 1.0 - 8.0 * owens_t(np.sqrt(2.0) * t / np.sqrt(1 + 2 * s ** 2), 1.0 / np.sqrt(1 + 2 * s ** 2))


def _gradient_rho_halved(original):
    """dR/drho halved (a factor 2 lost in the partial of the rho^2 terms)."""
    from attnverify.theory.slr.symbols import rho

    out = dict(original())
    out[rho] = out[rho] / 2
    return out


def _map_without_normalisation(original):
    """The overlap map of one projected step without the renormalisation of k and v (kappa' = <k - h g_k, k*>)."""
    from attnverify.theory.slr.symbols import eta, kappa, nu, rho, theta

    out = dict(original())
    nk, nv = sp.sqrt(out["norm_k2"]), sp.sqrt(out["norm_v2"])
    new = dict(out["new"])
    for o in (kappa, eta):
        new[o] = new[o] * nk
    for o in (nu, theta):
        new[o] = new[o] * nv
    new[rho] = new[rho] * nk * nv
    out["new"] = new
    return out


def _flow_without_sphere_factor(original):
    """The reduced flow without the factors (1 - kappa^2), (1 - nu^2) of the projection on the sphere."""
    from attnverify.theory.slr.symbols import kappa, nu

    kd, nd = original()
    return sp.cancel(kd / (1 - kappa ** 2)), sp.cancel(nd / (1 - nu ** 2))


def _hessian_without_acceleration(original):
    """The Hessian form along curves without the sum_i R_i o_i'' term (the curves' acceleration dropped: correct
    only at a critical point in the ambient space, wrong on the sphere)."""
    return original().subs({sp.Symbol(f"R_{i}", real=True): 0 for i in range(5)})


def _bayes_without_norm(original):
    """The log-likelihood ratio of the location without its |x|^2 term (as if both token laws had variance 1)."""
    from attnverify.theory.slr.baselines import n2_sym

    return original().subs(n2_sym, 0)


def _linear_L(original):
    """The best linear predictor's risk with L in place of L - 1 (one noise token too many)."""
    from attnverify.theory.slr.symbols import L

    out = dict(original())
    out["risk"] = out["risk"].subs(L, L + 1)
    out["excess"] = out["excess"].subs(L, L + 1)
    return out


def _kind_flipped(original, *args, **kwargs):
    """Stationary points reported with minimum and saddle swapped."""
    res = original(*args, **kwargs)
    swap = {"minimum": "saddle", "saddle": "minimum"}
    pts = tuple(dataclasses.replace(p, kind=swap.get(p.kind, p.kind)) for p in res.points)
    return dataclasses.replace(res, points=pts)


# ------------------------------------------------------------------------------------------- mutants: numerics
def _pgd_without_renormalisation(original):
    """The d-dimensional projected step without renormalising k and v."""
    def step(k, v, ks, vs, ov, G, h, gnorm):
        from attnverify.numerics.slr.model import overlaps

        c = G.T[:, :, None]
        ak = (G[:, 0] * ov[:, 0] + G[:, 3] * ov[:, 3] + G[:, 4] * ov[:, 4])[:, None]
        av = (G[:, 1] * ov[:, 1] + G[:, 2] * ov[:, 2] + G[:, 4] * ov[:, 4])[:, None]
        tk = c[0] * ks + c[3] * vs + c[4] * v - ak * k
        tv = c[1] * vs + c[2] * ks + c[4] * k - av * v
        gnorm[:] = np.sqrt(np.einsum("nd,nd->n", tk, tk) + np.einsum("nd,nd->n", tv, tv))
        k -= h * tk
        v -= h * tv
        ov[:] = overlaps(k, v, ks, vs)
    return step


def _sgd_value_gradient_sign(original):
    """The SGD gradient in v with the wrong sign."""
    @functools.wraps(original)
    def empirical_loss_grad(X, Y, k, v, lam):
        loss, gk, gv = original(X, Y, k, v, lam)
        return loss, gk, -gv
    return empirical_loss_grad


def _tasks_unit_signal_variance(original):
    """Tasks whose informative token has covariance I instead of gamma^2 I."""
    @functools.wraps(original)
    def sample_tasks(model, k_star, v_star, n, rng):
        return original(dataclasses.replace(model, gamma=1.0), k_star, v_star, n, rng)
    return sample_tasks


MUTANTS: tuple[Mutant, ...] = (
    Mutant("slr_assembly_cross_sign", _replacing(assembly_formula=_cross_term_sign),
           ("slr.risk_vs_montecarlo", "slr.risk_vs_quadrature"), "risk assembled with +2(L-1) E A E B"),
    Mutant("slr_noise_token_no_rho", _replacing(token_moments=_noise_without_rho),
           ("slr.risk_vs_quadrature", "slr.gradient_vs_quadrature"), "noise token's E erf^2 b^2 without rho"),
    Mutant("slr_zeta_owen_wrong_a", _replacing(zeta_mp=_owen_wrong_a_mp), ("slr.zeta_two_ways",),
           "zeta by Owen's T with a = 1/sqrt(1 + 2 sigma^2) (mpmath evaluator)"),
    Mutant("slr_zeta_np_wrong_a", _replacing(zeta_np=_owen_wrong_a_np), ("slr.risk_vs_quadrature",),
           "zeta by Owen's T with a = 1/sqrt(1 + 2 sigma^2) (float64 evaluator of the risk)"),
    Mutant("slr_gradient_rho_halved", _replacing(gradient=_gradient_rho_halved),
           ("slr.oracle_hessian", "slr.stationary_points"), "dR/drho halved"),
    Mutant("slr_map_no_normalisation", _replacing(overlap_map_abstract=_map_without_normalisation),
           ("slr.manifold_invariance",), "overlap map without renormalising k, v"),
    Mutant("slr_flow_no_sphere_factor", _replacing(reduced_flow=_flow_without_sphere_factor), ("slr.reduced_flow",),
           "reduced flow without (1 - kappa^2), (1 - nu^2)"),
    Mutant("slr_hessian_no_acceleration", _replacing(riemannian_hessian_form=_hessian_without_acceleration),
           ("slr.oracle_hessian",), "Riemannian Hessian without sum R_i o_i''"),
    Mutant("slr_bayes_no_norm_term", _replacing(bayes_log_weight=_bayes_without_norm), ("slr.bayes_posterior",),
           "posterior log-weight without the |x|^2 term"),
    Mutant("slr_linear_L_for_L_minus_1", _replacing(best_linear_predictor=_linear_L), ("slr.best_linear",),
           "best linear risk with L in place of L - 1"),
    Mutant("slr_stationary_kind_flipped", _replacing(stationary_points=_kind_flipped), ("slr.stationary_points",),
           "stationary points with minimum and saddle swapped"),
    Mutant("slr_pgd_no_renormalisation", _replacing_piece("pgd_step", _pgd_without_renormalisation),
           ("slr.manifold_invariance", "slr.reduced_flow"), "PGD step on the vectors without renormalising",
           target="numerics"),
    Mutant("slr_sgd_gradient_sign", _replacing_piece("empirical_loss_grad", _sgd_value_gradient_sign),
           ("slr.sgd_gradient",), "SGD gradient in v with the wrong sign", target="numerics"),
    Mutant("slr_tasks_unit_signal_variance", _replacing_piece("sample_tasks", _tasks_unit_signal_variance),
           ("slr.risk_vs_montecarlo", "slr.bayes_posterior"),
           "sampled tasks with informative-token covariance I instead of gamma^2 I", target="numerics"),
)


def mutants() -> tuple[Mutant, ...]:
    return MUTANTS


# ------------------------------------------------------------------------------------------- perturbation families
def _scaled(factor: float) -> Callable[..., Any]:
    """A closed form's result times ``factor`` (SymPy expressions, matrices, arrays, floats)."""
    return lambda original, *args, **kwargs: original(*args, **kwargs) * factor


def _scaled_tuple(factor: float) -> Callable[..., Any]:
    return lambda original, *args, **kwargs: tuple(x * factor for x in original(*args, **kwargs))


def _scaled_entry(key: str, factor: float) -> Callable[..., Any]:
    def wrong(original, *args, **kwargs):
        out = dict(original(*args, **kwargs))
        out[key] = out[key] * factor
        return out
    return wrong


def _scaled_argument(name: str, factor: float) -> Callable[..., Any]:
    """The closed form evaluated with its argument ``name`` times ``factor`` (arrays elementwise)."""
    def wrong(original, *args, **kwargs):
        bound = inspect.signature(original).bind(*args, **kwargs)
        bound.arguments[name] = np.asarray(bound.arguments[name], dtype=float) * factor
        return original(*bound.args, **bound.kwargs)
    return wrong


def _risk_at(name: str, factor: float) -> list[Mutant]:
    """The risk (and so every closed form derived from it) at parameter ``name`` times ``factor``."""
    from attnverify.theory.slr import symbols as slr_symbols

    sym = getattr(slr_symbols, name)
    wrong = _replacing(risk=lambda original: original().subs(sym, sym * factor))
    return [Mutant(f"slr_{name}_mismatch", wrong, (), "")]


def families() -> tuple[Family, ...]:
    return (
        Family("slr_risk_scale", "scale", "R x (1 + delta) (the theory's risk: everything derived from it)",
               lambda dl: [Mutant("slr_risk_scale", _replacing(risk=_scaled(1 + dl)), (), "")]),
        Family("slr_lam_mismatch", "mismatch", "every closed form of the risk at lam (1 + delta)",
               lambda dl: _risk_at("lam", 1 + dl)),
        Family("slr_gamma_mismatch", "mismatch", "every closed form of the risk at gamma (1 + delta)",
               lambda dl: _risk_at("gamma", 1 + dl)),
        Family("slr_zeta_scale", "scale", "zeta x (1 + delta) in both evaluators (the theory's zeta_mp, zeta_np)",
               lambda dl: [Mutant("slr_zeta_scale", _replacing(zeta_mp=_scaled(1 + dl), zeta_np=_scaled(1 + dl)),
                                  (), "")]),
        Family("slr_map_step", "scale", "the reduced map evaluated at step h (1 + delta) (the theory's reduced_map_np)",
               lambda dl: [Mutant("slr_map_step", _replacing(reduced_map_np=_scaled_argument("h", 1 + dl)), (),
                                  "")]),
        Family("slr_flow_scale", "scale", "the reduced flow x (1 + delta) (the theory's reduced_flow)",
               lambda dl: [Mutant("slr_flow_scale", _replacing(reduced_flow=_scaled_tuple(1 + dl)), (), "")]),
        Family("slr_hessian_scale", "scale", "the oracle's Riemannian Hessian x (1 + delta)",
               lambda dl: [Mutant("slr_hessian_scale", _replacing(oracle_hessian_matrix=_scaled(1 + dl)), (), "")]),
        Family("slr_bayes_temper", "scale", "the posterior's log-weight s x (1 + delta) (a tempered posterior)",
               lambda dl: [Mutant("slr_bayes_temper", _replacing(bayes_log_weight=_scaled(1 + dl)), (), "")]),
        Family("slr_linear_scale", "scale", "the best linear risk x (1 + delta)",
               lambda dl: [Mutant("slr_linear_scale", _replacing(best_linear_predictor=_scaled_entry("risk", 1 + dl)),
                                  (), "")]),
        Family("slr_search_lam", "mismatch", "the stationary-point search at lam (1 + delta)",
               lambda dl: [Mutant("slr_search_lam", _replacing(stationary_points=_scaled_argument("lam", 1 + dl)),
                                  (), "")]),
        Family("slr_map_without_normalisation", "fixed", "overlap map without renormalising k, v",
               lambda _dl: [m for m in MUTANTS if m.name == "slr_map_no_normalisation"]),
    )


_BOTH_SIDES = "the perturbation reaches both sides of this comparison by design (both read the same closed form)"


def power_rows() -> tuple[PowerRow, ...]:
    return (
        PowerRow("slr.risk_vs_montecarlo", "slr_risk_scale", 0.05, smoke=True),
        PowerRow("slr.risk_vs_montecarlo", "slr_lam_mismatch"),
        PowerRow("slr.risk_vs_quadrature", "slr_risk_scale", 1e-5, smoke=True),
        PowerRow("slr.risk_vs_quadrature", "slr_zeta_scale", 1e-5),
        PowerRow("slr.zeta_two_ways", "slr_zeta_scale", 1e-5, smoke=True),
        PowerRow("slr.gradient_vs_quadrature", "slr_risk_scale", 1e-5, smoke=True),
        PowerRow("slr.gradient_vs_quadrature", "slr_gamma_mismatch"),
        PowerRow("slr.sgd_gradient", "slr_risk_scale", 0.1, smoke=True),
        PowerRow("slr.manifold_invariance", "slr_map_step", 1e-3, smoke=True),
        PowerRow("slr.manifold_invariance", "slr_map_without_normalisation"),
        PowerRow("slr.manifold_invariance", "slr_risk_scale", not_applicable=_BOTH_SIDES),
        PowerRow("slr.reduced_flow", "slr_flow_scale", 0.05, smoke=True),
        PowerRow("slr.oracle_hessian", "slr_hessian_scale", 1e-4, smoke=True),
        PowerRow("slr.oracle_hessian", "slr_lam_mismatch"),
        PowerRow("slr.stationary_points", "slr_search_lam", 0.01, smoke=True),
        PowerRow("slr.bayes_posterior", "slr_bayes_temper", 0.1, smoke=True),
        PowerRow("slr.oracle_vs_bayes", "slr_risk_scale", 0.05, smoke=True),
        PowerRow("slr.best_linear", "slr_linear_scale", 0.05, smoke=True),
        PowerRow("slr.training_on_manifold", "slr_risk_scale", 0.1, smoke=True),
        PowerRow("slr.training_from_sphere", "slr_risk_scale", 0.1, smoke=True),
    )


# ------------------------------------------------------------------------------------------- claim scenarios
def claim_scenarios() -> dict:
    """Per claim: ``null`` (check overrides under which the evidence has nothing to decide: expect inconclusive) and
    ``counterexample`` (where the statement is false: expect refuted), where the mathematics allows one."""
    return {
        "C.bayes_optimal": {"null": {"ds": "400"}},
        "C.manifold_convergence": {"null": {"n_steps": "20"}},
        "C.sphere_schedule": {"null": {"steps_schedule": "20", "sgd_steps": "20", "steps_large": "20",
                                       "steps_small": "20"}},
        "C.oracle_minimiser": {"counterexample": {"lams": "0.9,1.5"}},
    }
