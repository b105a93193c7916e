"""Paper B (mean-field transformers at low temperature): zero-temperature limit, projection map, rates.

Model: tokens on S^{d-1}, B = Q^T K, value matrix V, A = V B^T (assumed symmetric, spectral gap
gamma = mu_1 - mu_2 > 0 between the largest eigenvalue mu_1 and the next distinct one).

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

This module is the public face: it re-exports the functions the checks, the app and the tests use.  Those
functions report this module as their ``__module__`` (as NumPy's public functions report ``numpy``), so that
code that asks where a function belongs (pickling by reference, the power self-test's list of a module's closed
forms) finds it here; the mutation self-test patches a function in every module that holds it, so patching it
here reaches the submodules that call it.

Everything symbolic is derived lazily (``functools.lru_cache``); importing the package does no SymPy work.
"""
from __future__ import annotations

from attnverify.theory.meanfield.asymptotics import field_error_expansion
from attnverify.theory.meanfield.field import lagrange_maximiser, zero_temperature_field
from attnverify.theory.meanfield.flow import (_diag_limit, closed_form_flow, diagonal_flow_residual, flow_residual,
                                               projection_map, stationarity_residual, tau)
from attnverify.theory.meanfield.model import Spectrum, check_assumptions, spectrum
from attnverify.theory.meanfield.rates import (atom_rates, convergence_rate, jacobian_eigenvalues, lyapunov_rate,
                                               rate_comparison, slowest_atom)
from attnverify.theory.meanfield.steps import derivation
from attnverify.theory.meanfield.terminal import (DominantSubspace, cluster_flow, dominant_subspace, escape_rate,
                                                   escape_rate_from, subspace_excess, terminal_rates,
                                                   value_eigenspace)
from attnverify.theory.meanfield.theorem1 import (C1, K, ConcentrationBound, beta, c, concentration_bound,
                                                   growth_constant, t, theorem1_rate)

__all__ = [
    "beta", "t", "K", "C1", "c", "tau",
    "check_assumptions", "spectrum", "Spectrum",
    "lagrange_maximiser", "zero_temperature_field", "field_error_expansion",
    "flow_residual", "diagonal_flow_residual", "closed_form_flow",
    "projection_map", "stationarity_residual",
    "jacobian_eigenvalues", "convergence_rate", "lyapunov_rate", "rate_comparison", "atom_rates", "slowest_atom",
    "ConcentrationBound", "concentration_bound", "theorem1_rate", "growth_constant",
    "value_eigenspace", "terminal_rates", "escape_rate", "derivation",
    "DominantSubspace", "dominant_subspace", "escape_rate_from", "subspace_excess", "cluster_flow",
]

for _name in __all__:
    _obj = globals()[_name]
    if callable(_obj) and not isinstance(_obj, type) and getattr(_obj, "__module__", "").startswith(__name__ + "."):
        _obj.__module__ = __name__
del _name, _obj

_diag_limit = _diag_limit   # the tau -> oo limit for diagonal A, used by attnverify.formulas
