"""Paper A's simulators as one object: what a check of Paper A receives as ``ctx.numerics``, so that a self-test can
hand it a wrong one (a mutant is an argument, not a patched module attribute).

:class:`SignalNumerics` holds the entry points the checks call (Monte Carlo estimators, projected SGA, the drift
estimator) and the inner pieces a self-test may replace: the attention softmax (``softmax_weights``) and the
projection of a gradient onto the sphere's tangent space (``tangent``). The entry points take those pieces as
keyword arguments (``softmax=``, ``tangent=``) with the correct default; a check passes its object's pieces down,
so a replaced piece reaches exactly the simulations of the checks that receive it. :data:`NUMERICS` is the default.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnverify.numerics.signal.drift import alignment_derivative_samples
from attnverify.numerics.signal.mc import (nuisance_mass_expansion, nuisance_mass_mc, nuisance_mass_rounding,
                                        objective_rb_cv, objective_samples)
from attnverify.numerics.signal.model import softmax_weights
from attnverify.numerics.signal.sga import projected_sga, tangent
from attnverify.numerics.signal.tangent_field import plane_moments, tangent_gradient_moments


@dataclass(frozen=True)
class SignalNumerics:
    """Paper A's simulators (module docstring); ``dataclasses.replace(NUMERICS, tangent=...)`` gives a variant.

    * ``objective_rb_cv(model, rhos, n, rng)``: E||f_q(X)||^2 on a rho grid (conditional MC, control variates);
    * ``objective_samples(model, rhos, n, rng, softmax=)``: full-dimensional samples of ||f_q(X)||^2;
    * ``nuisance_mass_mc(theta, beta, sigma, pairs, rhos, n, rng, sign)``: the attention mass on nuisance tokens;
    * ``nuisance_mass_expansion(theta, beta, sigma, pairs, rhos, sign)``: its O(1/L) term and the next two orders,
      from the model's moments;
    * ``nuisance_mass_rounding(pairs, mass, n)``: a bound on that computation's floating-point error;
    * ``plane_moments(model, rhos, n, rng, tangent=)``: E<xi, g> by in-plane conditional MC (its statistics);
    * ``tangent_gradient_moments(model, rhos, n, rng, tangent=)``: Var<xi, g> and E||g||^2;
    * ``projected_sga(model, rho0, n_steps, a, b, rng, ..., tangent=)``: batched SGA runs on the sphere;
    * ``alignment_derivative_samples(model, rho, n, rng)``: samples of J_d'(rho) (the sign of the SGA drift);
    * ``softmax_weights(scores, axis)`` and ``tangent(grad, q)``: the pieces passed down to the ones above.
    """

    objective_rb_cv: Callable = objective_rb_cv
    objective_samples: Callable = objective_samples
    nuisance_mass_mc: Callable = nuisance_mass_mc
    nuisance_mass_expansion: Callable = nuisance_mass_expansion
    nuisance_mass_rounding: Callable = nuisance_mass_rounding
    plane_moments: Callable = plane_moments
    tangent_gradient_moments: Callable = tangent_gradient_moments
    projected_sga: Callable = projected_sga
    alignment_derivative_samples: Callable = alignment_derivative_samples
    softmax_weights: Callable = softmax_weights
    tangent: Callable = tangent


#: the default instance: what every check of Paper A receives as its numerics unless a self-test hands it another
NUMERICS = SignalNumerics()
