"""Paper A (signal-subspace recovery by a softmax query): the SymPy derivations and certified results.

:class:`SignalTheory` holds the closed forms (:mod:`.closed_forms`); :data:`THEORY` is its default instance, and the
module-level names below are its bound methods (``population_objective(sign, finite_size)`` is
``THEORY.population_objective``). The symbols ``rho, theta, beta, sigma, R, L, d`` are those of every closed form.
"""
from attnverify.theory.signal.closed_forms import THEORY, SignalTheory
from attnverify.theory.signal.equilibria import Equilibrium
from attnverify.theory.signal.model import ARGS, SIGNS, L, R, beta, d, rho, sigma, theta
from attnverify.theory.signal.threshold import default_theta_max

gaussian_moments = THEORY.gaussian_moments
limit_for_shift = THEORY.limit_for_shift
informative_mass = THEORY.informative_mass
nuisance_mass = THEORY.nuisance_mass
population_objective = THEORY.population_objective
finite_size_term = THEORY.finite_size_term
in_plane_term = THEORY.in_plane_term
reduced_field = THEORY.reduced_field
reduction_identity = THEORY.reduction_identity
equilibria = THEORY.equilibria
minus_xi_threshold = THEORY.minus_xi_threshold
minus_xi_certificate = THEORY.minus_xi_certificate
minus_xi_sign_changes = THEORY.minus_xi_sign_changes
derivation = THEORY.derivation

__all__ = ["ARGS", "Equilibrium", "L", "R", "SIGNS", "SignalTheory", "THEORY", "beta", "d", "default_theta_max",
           "derivation", "equilibria", "finite_size_term", "gaussian_moments", "in_plane_term", "informative_mass",
           "limit_for_shift", "minus_xi_certificate", "minus_xi_sign_changes", "minus_xi_threshold", "nuisance_mass",
           "population_objective", "reduced_field", "reduction_identity", "rho", "sigma", "theta"]
