"""Paper C's self-test material: mutants (deliberately wrong closed forms and implementations, ``attnverify selftest
--mutants``), perturbation families and power rows (``selftest --power``), and the claims' scenarios (``selftest
--claims``).

A mutant wraps the original object (same signature, same return type) and changes one piece of mathematics, so a
check that runs with it injected sees a plausible but wrong result through its ordinary code path. A perturbation
family changes the analytic side by a size delta while the numerics run at the true parameters: a *scale* of a
closed form (the risk, zeta, the oracle's Hessian, the reduced flow, the posterior's log-weights, the linear risk),
a *parameter mismatch* (every closed form at lam or gamma times (1 + delta)), or a step-size mismatch of the
reduced map and of the stationary-point search.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np
import sympy as sp

from attnverify.checks.perturb import outermost, scale_argument, scale_entry, scale_result
from attnverify.checks.plugin import Family, PatchMutant, PowerRow

RISK = "attnverify.theory.slr.population"
GAUSS = "attnverify.theory.slr.gauss"


# ------------------------------------------------------------------------------------------- mutants: closed forms
def _cross_term_sign(original):
    """E (xi + A - sum B_l)^2 assembled with +2 (L - 1) E A E B (the cross term's sign flipped)."""
    from attnverify.theory.slr.population import _mA1, _mB1

    @functools.wraps(original)
    def _assembly_formula(Lv):
        return original(Lv) + 4 * (Lv - 1) * _mA1 * _mB1
    return _assembly_formula


def _noise_without_rho(original):
    """The noise token's E[erf(lam a)^2 b^2] with the correlation rho of (a, b) dropped (b independent of a)."""
    from attnverify.theory.slr.symbols import rho

    @functools.wraps(original)
    def token_moments():
        out = dict(original())
        out["EN_f2"] = out["EN_f2"].subs(rho, 0)
        return out
    return token_moments


def _owen_wrong_a(original):
    """zeta through Owen's T with a = 1/sqrt(1 + 2 sigma^2) instead of 1/sqrt(1 + 4 sigma^2) (the replacement keeps
    the original's signature: zeta_np(t, sigma), zeta_mp(t, sigma, route))."""
    if original.__name__ == "zeta_np":
        @functools.wraps(original)
        def zeta_np(t, sigma):
            from scipy.special import owens_t

            t, s = np.asarray(t, float), np.asarray(sigma, float)
            return 1.0 - 8.0 * owens_t(np.sqrt(2.0) * t / np.sqrt(1 + 2 * s ** 2), 1.0 / np.sqrt(1 + 2 * s ** 2))
        return zeta_np

    @functools.wraps(original)
    def zeta_mp(t, sigma, route: str = "owen"):
        if route != "owen":
            return original(t, sigma, route)
        import mpmath

        from attnverify.theory.slr.gauss import owens_t_mp

        t, s = mpmath.mpf(t), mpmath.mpf(sigma)
        return 1 - 8 * owens_t_mp(mpmath.sqrt(2) * t / mpmath.sqrt(1 + 2 * s ** 2), 1 / mpmath.sqrt(1 + 2 * s ** 2))
    return zeta_mp


def _gradient_rho_halved(original):
    """dR/drho halved (a factor 2 lost in the partial of the rho^2 terms)."""
    from attnverify.theory.slr.symbols import rho

    @functools.wraps(original)
    def gradient():
        out = dict(original())
        out[rho] = out[rho] / 2
        return out
    return gradient


def _map_without_normalisation(original):
    """The overlap map of one projected step without the renormalisation of k and v (kappa' = <k - h g_k, k*>)."""
    @functools.wraps(original)
    def overlap_map_abstract():
        out = dict(original())
        nk, nv = sp.sqrt(out["norm_k2"]), sp.sqrt(out["norm_v2"])
        from attnverify.theory.slr.symbols import eta, kappa, nu, rho, theta

        new = dict(out["new"])
        for o in (kappa, eta):
            new[o] = new[o] * nk
        for o in (nu, theta):
            new[o] = new[o] * nv
        new[rho] = new[rho] * nk * nv
        out["new"] = new
        return out
    return overlap_map_abstract


def _flow_without_sphere_factor(original):
    """The reduced flow without the factors (1 - kappa^2), (1 - nu^2) of the projection on the sphere."""
    from attnverify.theory.slr.symbols import kappa, nu

    @functools.wraps(original)
    def reduced_flow():
        kd, nd = original()
        return sp.cancel(kd / (1 - kappa ** 2)), sp.cancel(nd / (1 - nu ** 2))
    return reduced_flow


def _hessian_without_acceleration(original):
    """The Hessian form along curves without the sum_i R_i o_i'' term (the curves' acceleration dropped: correct
    only at a critical point in the ambient space, wrong on the sphere)."""
    @functools.wraps(original)
    def riemannian_hessian_form():
        Q = original()
        return Q.subs({sp.Symbol(f"R_{i}", real=True): 0 for i in range(5)})
    return riemannian_hessian_form


def _bayes_without_norm(original):
    """The log-likelihood ratio of the location without its |x|^2 term (as if both token laws had variance 1)."""
    from attnverify.theory.slr.baselines import n2_sym

    @functools.wraps(original)
    def bayes_log_weight():
        return original().subs(n2_sym, 0)
    return bayes_log_weight


def _linear_L(original):
    """The best linear predictor's risk with L in place of L - 1 (one noise token too many)."""
    from attnverify.theory.slr.symbols import L

    @functools.wraps(original)
    def best_linear_predictor():
        out = dict(original())
        out["risk"] = out["risk"].subs(L, L + 1)
        out["excess"] = out["excess"].subs(L, L + 1)
        return out
    return best_linear_predictor


def _kind_flipped(original):
    """Stationary points reported with minimum and saddle swapped."""
    import dataclasses

    @functools.wraps(original)
    def stationary_points(*args, **kwargs):
        res = original(*args, **kwargs)
        swap = {"minimum": "saddle", "saddle": "minimum"}
        pts = tuple(dataclasses.replace(p, kind=swap.get(p.kind, p.kind)) for p in res.points)
        return dataclasses.replace(res, points=pts)
    stationary_points.__signature__ = inspect.signature(original)   # a pass-through: the original's arguments
    return stationary_points


# ------------------------------------------------------------------------------------------- mutants: numerics
def _pgd_without_renormalisation(original):
    """The d-dimensional projected step without renormalising k and v."""
    @functools.wraps(original)
    def step_numba(k, v, ks, vs, ov, G, h, gnorm):
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
    return step_numba


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
        import dataclasses

        return original(dataclasses.replace(model, gamma=1.0), k_star, v_star, n, rng)
    return sample_tasks


MUTANTS: tuple[PatchMutant, ...] = (
    PatchMutant("slr_assembly_cross_sign", RISK, "_assembly_formula", _cross_term_sign,
           ("slr.risk_vs_montecarlo", "slr.risk_vs_quadrature"), "risk assembled with +2(L-1) E A E B"),
    PatchMutant("slr_noise_token_no_rho", RISK, "token_moments", _noise_without_rho,
           ("slr.risk_vs_quadrature", "slr.gradient_vs_quadrature"), "noise token's E erf^2 b^2 without rho"),
    PatchMutant("slr_zeta_owen_wrong_a", GAUSS, "zeta_mp", _owen_wrong_a, ("slr.zeta_two_ways",),
           "zeta by Owen's T with a = 1/sqrt(1 + 2 sigma^2) (mpmath evaluator)"),
    PatchMutant("slr_zeta_np_wrong_a", GAUSS, "zeta_np", _owen_wrong_a, ("slr.risk_vs_quadrature",),
           "zeta by Owen's T with a = 1/sqrt(1 + 2 sigma^2) (float64 evaluator of the risk)"),
    PatchMutant("slr_gradient_rho_halved", RISK, "gradient", _gradient_rho_halved,
           ("slr.oracle_hessian", "slr.stationary_points"), "dR/drho halved"),
    PatchMutant("slr_map_no_normalisation", "attnverify.theory.slr.dynamics", "overlap_map_abstract",
           _map_without_normalisation, ("slr.manifold_invariance",), "overlap map without renormalising k, v"),
    PatchMutant("slr_flow_no_sphere_factor", "attnverify.theory.slr.dynamics", "reduced_flow",
           _flow_without_sphere_factor, ("slr.reduced_flow",), "reduced flow without (1 - kappa^2), (1 - nu^2)"),
    PatchMutant("slr_hessian_no_acceleration", "attnverify.theory.slr.oracle", "riemannian_hessian_form",
           _hessian_without_acceleration, ("slr.oracle_hessian",), "Riemannian Hessian without sum R_i o_i''"),
    PatchMutant("slr_bayes_no_norm_term", "attnverify.theory.slr.baselines", "bayes_log_weight", _bayes_without_norm,
           ("slr.bayes_posterior",), "posterior log-weight without the |x|^2 term"),
    PatchMutant("slr_linear_L_for_L_minus_1", "attnverify.theory.slr.baselines", "best_linear_predictor", _linear_L,
           ("slr.best_linear",), "best linear risk with L in place of L - 1"),
    PatchMutant("slr_stationary_kind_flipped", "attnverify.theory.slr.stationary", "stationary_points", _kind_flipped,
           ("slr.stationary_points",), "stationary points with minimum and saddle swapped"),
    PatchMutant("slr_pgd_no_renormalisation", "attnverify.numerics.slr.pgd", "step_numba", _pgd_without_renormalisation,
           ("slr.manifold_invariance", "slr.reduced_flow"), "PGD step on the vectors without renormalising"),
    PatchMutant("slr_sgd_gradient_sign", "attnverify.numerics.slr.sgd", "empirical_loss_grad", _sgd_value_gradient_sign,
           ("slr.sgd_gradient",), "SGD gradient in v with the wrong sign"),
    PatchMutant("slr_tasks_unit_signal_variance", "attnverify.numerics.slr.model", "sample_tasks",
           _tasks_unit_signal_variance, ("slr.risk_vs_montecarlo", "slr.bayes_posterior"),
           "sampled tasks with informative-token covariance I instead of gamma^2 I"),
)


def mutants() -> tuple[PatchMutant, ...]:
    return MUTANTS


# ------------------------------------------------------------------------------------------- perturbation families
def _risk_at(name: str, factor: float) -> list[PatchMutant]:
    """Every closed form of the risk (and what is derived from it) at parameter ``name`` times ``factor``."""
    from attnverify.theory.slr import symbols as slr_symbols

    sym = getattr(slr_symbols, name)

    def make(original):
        return outermost(original, lambda fn, a, k: fn(*a, **k).subs(sym, sym * factor))
    return [PatchMutant(f"slr_{name}_mismatch", RISK, "risk", make, (), "")]


def _tuple_scale(factor: float):
    def make(original):
        return outermost(original, lambda fn, a, k: tuple(x * factor for x in fn(*a, **k)))
    return make


def families() -> tuple[Family, ...]:
    return (
        Family("slr_risk_scale", "scale", "R x (1 + delta) (attnverify.theory.slr.population.risk: everything derived from it)",
               lambda dl: [PatchMutant("slr_risk_scale", RISK, "risk", scale_result(1 + dl), (), "")]),
        Family("slr_lam_mismatch", "mismatch", "every closed form of the risk at lam (1 + delta)",
               lambda dl: _risk_at("lam", 1 + dl)),
        Family("slr_gamma_mismatch", "mismatch", "every closed form of the risk at gamma (1 + delta)",
               lambda dl: _risk_at("gamma", 1 + dl)),
        Family("slr_zeta_scale", "scale", "zeta x (1 + delta) in both evaluators (slr_gauss.zeta_mp, zeta_np)",
               lambda dl: [PatchMutant("slr_zeta_scale_mp", GAUSS, "zeta_mp", scale_result(1 + dl), (), ""),
                           PatchMutant("slr_zeta_scale_np", GAUSS, "zeta_np", scale_result(1 + dl), (), "")]),
        Family("slr_map_step", "scale", "the reduced map evaluated at step h (1 + delta) (slr_eval.reduced_map_np)",
               lambda dl: [PatchMutant("slr_map_step", "attnverify.theory.slr.eval", "reduced_map_np",
                                  scale_argument("h", 1 + dl), (), "")]),
        Family("slr_flow_scale", "scale", "the reduced flow x (1 + delta) (slr_dynamics.reduced_flow)",
               lambda dl: [PatchMutant("slr_flow_scale", "attnverify.theory.slr.dynamics", "reduced_flow",
                                  _tuple_scale(1 + dl), (), "")]),
        Family("slr_hessian_scale", "scale", "the oracle's Riemannian Hessian x (1 + delta)",
               lambda dl: [PatchMutant("slr_hessian_scale", "attnverify.theory.slr.oracle", "oracle_hessian_matrix",
                                  scale_result(1 + dl), (), "")]),
        Family("slr_bayes_temper", "scale", "the posterior's log-weight s x (1 + delta) (a tempered posterior)",
               lambda dl: [PatchMutant("slr_bayes_temper", "attnverify.theory.slr.baselines", "bayes_log_weight",
                                  scale_result(1 + dl), (), "")]),
        Family("slr_linear_scale", "scale", "the best linear risk x (1 + delta)",
               lambda dl: [PatchMutant("slr_linear_scale", "attnverify.theory.slr.baselines", "best_linear_predictor",
                                  scale_entry("risk", 1 + dl), (), "")]),
        Family("slr_search_lam", "mismatch", "the stationary-point search at lam (1 + delta)",
               lambda dl: [PatchMutant("slr_search_lam", "attnverify.theory.slr.stationary", "stationary_points",
                                  scale_argument("lam", 1 + dl), (), "")]),
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
