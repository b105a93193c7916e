"""Paper B (mean-field transformers at low temperature): zero-temperature limit, projection map, rates.

Model: tokens on S^{d-1}, B = Q^T K, value matrix V, A = V B^T (assumed symmetric, spectral gap
gamma = mu_1 - mu_2 > 0 between the largest eigenvalue mu_1 and the next distinct one).

The closed forms are the methods of one object, :class:`MeanFieldTheory` (default instance :data:`THEORY`), made of
one part per concept; they call each other through ``self``, so a copy with one closed form replaced
(``THEORY.replace(...)``, :mod:`attnverify.theory.closed_forms`) is seen by every closed form that uses it:

* :mod:`.model` -- the assumptions and the spectral data of A (exact, or certified in ball arithmetic).
* :mod:`.field` -- Laplace principle: the softmax average concentrates at y*(x) = argmax_{|y|=1} <B^T x, y>, found
  by a Lagrange multiplier: y* = B^T x / |B^T x|, so X_inf(x) = P_perp_x V B^T x / |B^T x|.
* :mod:`.flow` -- closed-form flow x(tau) = e^{tau A} x0 / |e^{tau A} x0| with dt/dtau = |B^T x(tau)|; projection
  map Pi(x) = P_E x / |P_E x| onto the dominant eigenspace E of A (the tau -> oo limit).
* :mod:`.rates` -- Jacobian eigenvalues (mu_j - mu_1)/|B^T x*| on the tangent space at x* in E, and the Lyapunov
  functional L = |P_{E^perp} x|^2 / |P_E x|^2 with dL/dt <= -2 gamma L / sigma_max(B) (a bound).
* :mod:`.asymptotics` -- the Laplace expansion X_beta - X_inf ~ sum_k e_k beta^-k (Watson's lemma, SymPy).
* :mod:`.theorem1` -- the bound b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t}), its optimal time and
  value, and its constants (the rate s(beta), the growth constant C1).
* :mod:`.terminal` -- Conjecture 1: the cluster field of V and the rates of the terminal phase.
* :mod:`.steps` -- the derivation step by step.

The module-level names (``spectrum``, ``zero_temperature_field``, ...) are the default instance's bound methods.
Everything symbolic is derived lazily and memoised per theory object (:func:`attnverify.theory.closed_forms.derived`);
importing the package does no SymPy work.
"""
from __future__ import annotations

from attnverify.theory.closed_forms import ClosedForms
from attnverify.theory.meanfield.asymptotics import (AU, C0, TT, UCU, AsymptoticForms, asymptotic_betas, d_sym,
                                                      expansion_sum, leading_order)
from attnverify.theory.meanfield.field import FieldForms
from attnverify.theory.meanfield.flow import FlowForms, tau
from attnverify.theory.meanfield.model import ModelForms, Spectrum
from attnverify.theory.meanfield.rates import RateForms
from attnverify.theory.meanfield.steps import DerivationSteps
from attnverify.theory.meanfield.terminal import DominantSubspace, TerminalForms, subspace_excess
from attnverify.theory.meanfield.theorem1 import C1, K, ConcentrationBound, Theorem1Forms, beta, c, t


class MeanFieldTheory(ModelForms, FieldForms, FlowForms, RateForms, AsymptoticForms, Theorem1Forms, TerminalForms,
                      DerivationSteps, ClosedForms):
    """Paper B's closed forms, one object: what the checks receive as ``ctx.theory`` (see the package docstring and
    each part's module for the mathematics). They depend on their arguments alone, so they may be kept across
    processes (``persist_key``)."""

    persist_key = "meanfield"


#: the closed forms as derived (what the checks receive unless a self-test hands them a wrong copy)
THEORY = MeanFieldTheory()

# the default instance's closed forms, by name
check_assumptions = THEORY.check_assumptions
spectrum = THEORY.spectrum
maximiser_rule = THEORY.maximiser_rule
maximiser_numpy = THEORY.maximiser_numpy
lagrange_maximiser = THEORY.lagrange_maximiser
zero_temperature_field = THEORY.zero_temperature_field
oja_residual = THEORY.oja_residual
flow_residual = THEORY.flow_residual
diagonal_flow_residual = THEORY.diagonal_flow_residual
closed_form_flow = THEORY.closed_form_flow
projection_map = THEORY.projection_map
diagonal_limit = THEORY.diagonal_limit
diagonal_stationarity = THEORY.diagonal_stationarity
stationarity_residual = THEORY.stationarity_residual
jacobian_eigenvalues = THEORY.jacobian_eigenvalues
convergence_rate = THEORY.convergence_rate
atom_rates = THEORY.atom_rates
slowest_atom = THEORY.slowest_atom
lyapunov_rate = THEORY.lyapunov_rate
rate_comparison = THEORY.rate_comparison
diagonal_jacobian = THEORY.diagonal_jacobian
diagonal_lyapunov = THEORY.diagonal_lyapunov
moment_ratios = THEORY.moment_ratios
first_order_identity = THEORY.first_order_identity
laplace_is_lagrange = THEORY.laplace_is_lagrange
field_error_expansion = THEORY.field_error_expansion
field_error_remainder_bound = THEORY.field_error_remainder_bound
concentration_bound = THEORY.concentration_bound
theorem1_rate = THEORY.theorem1_rate
growth_constant = THEORY.growth_constant
dominant_subspace = THEORY.dominant_subspace
value_eigenspace = THEORY.value_eigenspace
cluster_field_jacobian = THEORY.cluster_field_jacobian
cluster_flow = THEORY.cluster_flow
terminal_rates = THEORY.terminal_rates
escape_rate = THEORY.escape_rate
escape_rate_from = THEORY.escape_rate_from
derivation = THEORY.derivation

__all__ = [
    "MeanFieldTheory", "THEORY",
    "beta", "t", "K", "C1", "c", "tau", "d_sym", "C0", "AU", "UCU", "TT",
    "check_assumptions", "spectrum", "Spectrum",
    "maximiser_rule", "maximiser_numpy", "lagrange_maximiser", "zero_temperature_field",
    "oja_residual", "flow_residual", "diagonal_flow_residual", "closed_form_flow",
    "projection_map", "diagonal_limit", "diagonal_stationarity", "stationarity_residual",
    "jacobian_eigenvalues", "convergence_rate", "atom_rates", "slowest_atom", "lyapunov_rate", "rate_comparison",
    "diagonal_jacobian", "diagonal_lyapunov",
    "moment_ratios", "first_order_identity", "laplace_is_lagrange", "field_error_expansion",
    "field_error_remainder_bound",
    "asymptotic_betas", "expansion_sum", "leading_order",
    "ConcentrationBound", "concentration_bound", "theorem1_rate", "growth_constant",
    "DominantSubspace", "dominant_subspace", "value_eigenspace", "cluster_field_jacobian", "cluster_flow",
    "terminal_rates", "escape_rate", "escape_rate_from", "subspace_excess",
    "derivation",
]
