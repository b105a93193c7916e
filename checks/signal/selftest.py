"""Paper A's self-test material: the mutants (deliberately wrong closed forms and implementations, for
``attnverify selftest --mutants``) and the perturbation families and rows of the power self-test
(``attnverify selftest --power``).

Each mutant wraps the original object (same signature, same return type) and changes one piece of mathematics,
so a check that runs with it injected sees a plausible but wrong result through its ordinary code path.
The claim scenarios (``attnverify selftest --claims``) give, per claim, the check overrides under which the evidence
has nothing to decide (``null``: expect inconclusive) and the model parameters at which the paper's statement is
false (``counterexample``: expect refuted), where the mathematics has one.
A perturbation family changes the analytic side by a size delta while the simulation runs at the true
parameters: a *scale* of a closed form (J, F, the nuisance mass), a *parameter mismatch* (every closed form of
``theory.signal_recovery`` at theta, beta or sigma times (1 + delta)), the *regime* family (the theory at a theta
on the other side of the threshold theta*: theta -> theta*^2/theta), or one *fixed* wrong closed form.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from attnverify.checks.perturb import module_functions, outermost, scale_result
from attnverify.checks.plugin import Family, PatchMutant, PowerRow

SR = "attnverify.theory.signal.recovery"


# ------------------------------------------------------------------------------- mutants: closed forms
def _sign_flip(original):
    """J(rho) -> J(-rho): the informative tokens pull towards -xi."""
    from attnverify.theory.signal.recovery import rho

    @functools.wraps(original)
    def population_objective(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        return original(sign, finite_size).subs(rho, -rho)
    return population_objective


def _cross_term_x2(original):
    """|a_xi xi + a_q q|^2 = a_xi^2 + 2 rho a_xi a_q + a_q^2 with the cross term counted twice (4 rho a_xi a_q)."""
    from attnverify.theory.signal.recovery import rho

    @functools.wraps(original)
    def _limit_for_shift(c: sp.Expr) -> dict:
        out = dict(original(c))
        out["J"] = sp.expand(out["J"] + 2 * rho * out["a_xi"] * out["a_q"])
        return out
    return _limit_for_shift


def _finite_size_dropped(original):
    """The (d - 1) sigma^2 E sum a_i^2 term replaced by 0."""
    @functools.wraps(original)
    def finite_size_term(sign: str = "fixed") -> sp.Expr:
        original(sign)                      # same validation of ``sign``
        return sp.Integer(0)
    return finite_size_term


def _finite_size_wrong_power(original):
    """The finite-size term with (d/L)^2 in place of d/L: multiplied by an extra factor d/L."""
    from attnverify.theory.signal.recovery import L, d

    @functools.wraps(original)
    def finite_size_term(sign: str = "fixed") -> sp.Expr:
        return original(sign) * d / L
    return finite_size_term


def _w_wrong_exponent(original):
    """w(rho) with the exponent 2 beta theta rho instead of beta theta rho."""
    from attnverify.theory.signal.recovery import rho

    @functools.wraps(original)
    def informative_mass(sign: str = "fixed") -> sp.Expr:
        return original(sign).subs(rho, 2 * rho)
    return informative_mass


def _field_without_sphere_factor(original):
    """F(rho) = J'(rho): the (1 - rho^2) factor of the Riemannian gradient on the sphere dropped."""
    import attnverify.theory.signal.recovery as S

    @functools.wraps(original)
    def reduced_field(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        return sp.diff(S.population_objective(sign, finite_size), S.rho)
    return reduced_field


def _stability_flipped(original):
    """Every equilibrium reported with the opposite stability (F'(rho) > 0 read as attracting)."""
    from attnverify.theory.signal.recovery import Equilibrium

    @functools.wraps(original)
    def equilibria(params: dict, sign: str = "fixed", finite_size: bool = False) -> list:
        eqs = original(params, sign, finite_size)
        return [Equilibrium(e.rho, e.eigenvalue, not e.stable, e.certified) for e in eqs]
    return equilibria


# ------------------------------------------------------------------------------- mutants: numerics
def _naive_softmax(original):
    """softmax as exp(s) / sum exp(s), without subtracting the maximum (overflows for scores > ~709)."""
    @functools.wraps(original)
    def softmax_weights(scores: np.ndarray, axis: int = -1) -> np.ndarray:
        e = np.exp(scores)
        return e / e.sum(axis=axis, keepdims=True)
    return softmax_weights


def _no_tangent_projection(original):
    """The SGA step uses the full Euclidean gradient instead of its tangent part (I - q q^T) grad."""
    @functools.wraps(original)
    def tangent(grad: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.array(grad, dtype=float, copy=True)
    return tangent


MUTANTS: tuple[PatchMutant, ...] = (
    PatchMutant("J_sign_flip", SR, "population_objective", _sign_flip, ("signal.objective_vs_montecarlo",),
           "J(rho) replaced by J(-rho) (sign flip of the alignment)"),
    PatchMutant("J_cross_term_x2", SR, "_limit_for_shift", _cross_term_x2, ("signal.objective_vs_montecarlo",),
           "J = a_xi^2 + 4 rho a_xi a_q + a_q^2: factor 2 in the cross term of |f_inf|^2"),
    PatchMutant("finite_size_dropped", SR, "finite_size_term", _finite_size_dropped, ("signal.objective_vs_montecarlo",),
           "the (d-1) sigma^2 E sum a_i^2 finite-size term dropped"),
    PatchMutant("finite_size_wrong_power", SR, "finite_size_term", _finite_size_wrong_power,
           ("signal.objective_vs_montecarlo",), "finite-size term with (d/L)^2 instead of d/L"),
    PatchMutant("w_wrong_exponent", SR, "informative_mass", _w_wrong_exponent, ("signal.attention_on_noise",),
           "informative mass w(rho) with exponent 2 beta theta rho"),
    PatchMutant("F_missing_sphere_factor", SR, "reduced_field", _field_without_sphere_factor,
           ("signal.reduced_field_identity", "signal.equilibria_stability"),
           "reduced field F = J' without the (1 - rho^2) factor"),
    PatchMutant("stability_flipped", SR, "equilibria", _stability_flipped, ("signal.equilibria_stability",),
           "wrong stability classification: every equilibrium's attracting/repelling label flipped"),
    PatchMutant("softmax_no_max_subtraction", "attnverify.numerics.signal.model", "softmax_weights", _naive_softmax,
           ("signal.low_temperature",),
           "Paper A softmax without max-subtraction (exp overflow at large beta)"),
    PatchMutant("sga_no_tangent_projection", "attnverify.numerics.signal.sga", "tangent", _no_tangent_projection,
           ("signal.reduced_field_identity", "signal.ode_tracks_sga", "signal.alignment_30_runs"),
           "SGA step with the Euclidean gradient, no tangent projection (I - q q^T)"),
)


def mutants() -> tuple[PatchMutant, ...]:
    return MUTANTS


# ------------------------------------------------------------------------------- power: perturbation families
# Functions of theory.signal_recovery that are not closed forms of the model (derivation records, the symbolic
# reduction identity for an arbitrary G, the Gaussian moments, the search range).
_NOT_CLOSED_FORMS = {"derivation", "reduction_identity", "gaussian_moments", "isolate_roots", "default_theta_max"}


def _param_mismatch(name: str, to_value: Callable[[float], float], to_expr: Callable[[Any], Any]) -> list[PatchMutant]:
    """Every closed form of Paper A evaluated with parameter ``name`` replaced: symbol -> to_expr(symbol) in the
    SymPy results, params[name] -> to_value(params[name]) for the functions of numeric parameters."""
    import attnverify.theory.signal.recovery as S

    sym = getattr(S, name)

    def make(original: Callable) -> Callable:
        sig = inspect.signature(original)

        def call(fn, args, kwargs):
            bound = sig.bind(*args, **kwargs)
            if "params" in bound.arguments:
                params = dict(bound.arguments["params"])
                params[name] = to_value(float(params[name]))
                bound.arguments["params"] = params
                return fn(*bound.args, **bound.kwargs)
            out = fn(*args, **kwargs)
            return out.subs(sym, to_expr(sym)) if isinstance(out, sp.Basic) else out
        return outermost(original, call)

    names = module_functions(SR, lambda n, s: n not in _NOT_CLOSED_FORMS)
    return [PatchMutant(f"{name}_mismatch:{fn}", SR, fn, make, (), "") for fn in names]


def mismatch_factor(delta: float) -> float:
    """The factor of a parameter-mismatch family at the signed ``delta``: 1 + delta, and 1 / (1 - delta) where
    1 + delta would not leave a positive parameter (delta <= -1: theta = 0 makes F vanish identically, beta or sigma
    = 0 is no model), so every perturbed closed form stays admissible and a run never errors on the perturbation."""
    return 1.0 + delta if delta > -1.0 else 1.0 / (1.0 - delta)


def theta_star(check_params: dict | None = None) -> float:
    """theta* (fixed sign, finite-size terms) at the check's model point (beta, sigma, R, L, d; the shared
    defaults for those it does not set): below it -xi repels, above it attracts."""
    import attnverify.theory.signal.recovery as S

    from attnverify.checks.signal._model import MODEL_PARAMS

    keys = ("theta", "beta", "sigma", "R", "L", "d")
    params = {p.name: p.default for p in MODEL_PARAMS if p.name in keys}
    params.update({k: v for k, v in (check_params or {}).items() if k in keys})
    value = S.minus_xi_threshold(params, "fixed", True)
    if value is None:
        raise ValueError("no theta* at the default parameters: the regime family has no other side")
    return float(value)


def _regime(_delta: float, params: dict | None = None) -> list[PatchMutant]:
    ts = theta_star(params)
    return _param_mismatch("theta", lambda th: ts * ts / th, lambda sym: ts * ts / sym)


def _fixed(mutant_name: str) -> Callable[[float], list[PatchMutant]]:
    return lambda _delta: [next(m for m in MUTANTS if m.name == mutant_name)]


def families() -> tuple[Family, ...]:
    return (
        Family("J_scale", "scale", "J(rho) x (1 + delta) (attnverify.theory.signal.recovery.population_objective)",
               lambda dl: [PatchMutant("J_scale", SR, "population_objective", scale_result(1 + dl), (), "")]),
        Family("F_scale", "scale", "F(rho) x (1 + delta) (attnverify.theory.signal.recovery.reduced_field)",
               lambda dl: [PatchMutant("F_scale", SR, "reduced_field", scale_result(1 + dl), (), "")]),
        Family("mass_scale", "scale", "nuisance mass 1 - w(rho) x (1 + delta) "
               "(attnverify.theory.signal.recovery.nuisance_mass)",
               lambda dl: [PatchMutant("mass_scale", SR, "nuisance_mass", scale_result(1 + dl), (), "")]),
        Family("theta_mismatch", "mismatch", "every Paper A closed form at theta (1 + delta) (1/(1 - delta) for delta <= -1)",
               lambda dl: _param_mismatch("theta", lambda v: v * mismatch_factor(dl),
                                          lambda s: s * mismatch_factor(dl))),
        Family("beta_mismatch", "mismatch", "every Paper A closed form at beta (1 + delta) (1/(1 - delta) for delta <= -1)",
               lambda dl: _param_mismatch("beta", lambda v: v * mismatch_factor(dl),
                                          lambda s: s * mismatch_factor(dl))),
        Family("sigma_mismatch", "mismatch", "every Paper A closed form at sigma (1 + delta) (1/(1 - delta) for delta <= -1)",
               lambda dl: _param_mismatch("sigma", lambda v: v * mismatch_factor(dl),
                                          lambda s: s * mismatch_factor(dl))),
        Family("theta_other_side", "regime", "Paper A theory at theta*^2/theta, the other side of theta* "
               "(-xi attracting <-> repelling)", _regime),
        Family("F_without_sphere_factor", "fixed", "F = J'(rho) without its (1 - rho^2) factor",
               _fixed("F_missing_sphere_factor")),
    )


_SCALE_ZEROS = "a scale of F cannot move its zeros or the sign of F' at them: the classification is unchanged"


def power_rows() -> tuple[PowerRow, ...]:
    return (
        PowerRow("signal.objective_vs_montecarlo", "J_scale", 0.01, smoke=True),
        PowerRow("signal.objective_vs_montecarlo", "theta_mismatch", 0.05),
        PowerRow("signal.objective_vs_montecarlo", "beta_mismatch"),
        PowerRow("signal.objective_vs_montecarlo", "sigma_mismatch"),
        PowerRow("signal.reduced_field_identity", "F_scale", 0.10, smoke=True),
        PowerRow("signal.reduced_field_identity", "F_without_sphere_factor"),
        PowerRow("signal.reduced_field_identity", "theta_mismatch"),
        PowerRow("signal.equilibria_stability", "theta_other_side", smoke=True),
        PowerRow("signal.equilibria_stability", "theta_mismatch"),
        PowerRow("signal.equilibria_stability", "F_scale", not_applicable=_SCALE_ZEROS),
        PowerRow("signal.ode_tracks_sga", "F_scale", 0.10, smoke=True),
        PowerRow("signal.ode_tracks_sga", "F_without_sphere_factor"),
        PowerRow("signal.ode_tracks_sga", "theta_mismatch"),
        PowerRow("signal.attention_on_noise", "theta_mismatch", 0.02, smoke=True),
        PowerRow("signal.attention_on_noise", "mass_scale"),
        PowerRow("signal.attention_on_noise", "beta_mismatch"),
        PowerRow("signal.low_temperature", "beta_mismatch", 0.01, smoke=True),
        PowerRow("signal.low_temperature", "J_scale"),
        PowerRow("signal.low_temperature", "theta_mismatch"),
        PowerRow("signal.alignment_30_runs", "F_scale", 0.10, smoke=True),
        PowerRow("signal.alignment_30_runs", "F_without_sphere_factor"),
        PowerRow("signal.alignment_30_runs", "theta_mismatch"),
        PowerRow("signal.sign_ambiguity", "theta_other_side", smoke=True),
        PowerRow("signal.sign_ambiguity", "theta_mismatch"),
        PowerRow("signal.sign_ambiguity", "F_scale", not_applicable=_SCALE_ZEROS),
    )


# ------------------------------------------------------------------------------- claim self-test: scenarios
def claim_scenarios() -> dict[str, dict[str, dict]]:
    """Per claim: ``null`` (check overrides under which the evidence cannot decide: expect inconclusive) and
    ``counterexample`` (model parameters where the statement is false: expect refuted), where one exists.

    * A.closed_form_objective: no null: a formula claim is decided by SymPy's proof that the stated and the derived
      closed forms agree, confirmed by the judge's own measurement at a random point (4000 sequences, whatever the
      check's settings), so no check setting leaves it without evidence (measured: 50 sequences at d = 2 still give
      holds); no counterexample: the stated closed form is the limit.
    * A.noise_attention_vanishes: no null (the mass of a sequence of thousands of tokens concentrates: every Monte
      Carlo point is resolved at the smallest sample size allowed) and no counterexample (at rho = 1 the mass is
      (L - R) / (R e^(beta theta) + L - R), which tends to 0 as R/(L - R) grows, for every theta, beta).
    * A.ode_tracks_sga: no null, as for A.closed_form_objective (its stated field is a formula; measured: 8 runs
      still give holds); no counterexample (SGA's mean increment is eta F + O(eta^2) for every model point).
    * A.reported_alignment: null = the stated protocol (R = 500, L = 10500, theta = 0.25) at d = 2 with 4 runs of
      400 steps, which do not come near the reported figure; no counterexample: every figure in [0, 1) is the mean
      final |rho| of some schedule (the noise floor u* = eta G(1) / (4 J'(1)) -> 0 as the final step -> 0).
    * A.no_spurious_traps: null = 10 sequences per drift estimate (no sign is resolved: unresolved); counterexample
      = theta 2, above theta* = 1.337 at the check's model point: -xi attracts behind an interior repeller, the drift
      next to -xi points away from +xi.
    * A.up_to_sign: null = every run started at rho0 > 0 (none could reach -xi); counterexample = theta 0.25 only,
      below theta*: -xi repels (certified) and every run from rho0 = -0.95 settles at +xi.
    * A.any_initialisation: null = runs too short to settle (unresolved); no counterexample: the long-sequence
      field has no interior attractor (in the finite-size expansion one appears only at beta = 2 with about 19
      effective tokens, L e^(-beta^2 sigma^2), where the expansion itself is not reliable).
    """
    short = {"max_steps": 300, "min_steps": 100, "chunk": 100}
    return {
        "A.reported_alignment": {"null": {"R": 500, "L": 10500, "theta": 0.25, "d": 2, "n_runs": 4, "n_steps": 400,
                                          "n_energy": 40}},
        "A.no_spurious_traps": {"null": {"n_samples": 10, "max_samples": 10},
                                "counterexample": {"theta": 2.0}},
        "A.up_to_sign": {"null": {"starts": (0.5, 0.95)}, "counterexample": {"thetas": (0.25,)}},
        "A.any_initialisation": {"null": short},
    }
