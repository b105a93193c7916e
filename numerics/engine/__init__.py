"""The numeric half of the attention-model engine: a model given as numbers (MixtureSpec), simulated.

Tokens are a mixture of Gaussian or sphere components with an optional random sign per sequence, the score is
bilinear (a trained query q or a token query), the value linear. The modules, one concept each:

- ``spec``: the numeric model (MixtureSpec, Component, Attention), validated on construction;
- ``sampling``: sequences drawn from the mixture (full or reduced coordinates) and i.i.d. token sets;
- ``attention``: the finite-L softmax attention in log-space, and the query of given overlaps;
- ``gradient``: the hand-derived gradient of ||f_q(X)||^2 in q and its tangent part;
- ``estimates``: the Monte Carlo result type (mean, covariance, n);
- ``montecarlo``: J(q) = E||f_q(X)||^2 and the attention masses on an overlap grid (common random numbers);
- ``drift``: the pathwise drift of the overlaps under the gradient flow;
- ``sga``: projected stochastic gradient ascent on the sphere, many runs batched;
- ``mean_path``: SGA's mean path to second order in the step (moment closure) and the step's measured moments;
- ``token``: self-attention outputs Gamma_{mu_n} through the fused kernel.

Nothing here reads a closed form: no SymPy, no import of the theory or checks layers.
"""
from attnverify.numerics.engine.attention import (attention_output, attention_weights, overlap_grid,
                                                  query_from_overlaps, softmax_weights)
from attnverify.numerics.engine.drift import drift_mc, drift_samples
from attnverify.numerics.engine.estimates import GridEstimate, estimate
from attnverify.numerics.engine.gradient import energy_gradient, tangent
from attnverify.numerics.engine.mean_path import second_order_mean, step_moments
from attnverify.numerics.engine.montecarlo import GridMC, GridSamples, grid_mc, grid_samples, mass_mc, objective_mc
from attnverify.numerics.engine.sampling import sample_full, sample_iid, sample_reduced
from attnverify.numerics.engine.sga import SGAPaths, projected_sga, step_sizes, steps_at_times
from attnverify.numerics.engine.spec import Attention, Component, MixtureSpec, gaussian, sphere
from attnverify.numerics.engine.token import (PooledMap, PushforwardBatches, PushforwardMoments, TokenSample,
                                              attention_map, attention_map_mc, attention_map_pooled,
                                              attention_map_sign_averaged, pushforward_batches, pushforward_moments_mc,
                                              sign_conditioned, token_outputs)

__all__ = ["Attention", "Component", "GridEstimate", "GridMC", "GridSamples", "MixtureSpec", "PooledMap",
           "PushforwardBatches", "PushforwardMoments", "attention_map_pooled", "pushforward_batches", "attention_map_sign_averaged", "sign_conditioned",
           "SGAPaths", "TokenSample", "attention_map", "attention_map_mc", "attention_output", "attention_weights",
           "drift_mc", "drift_samples", "energy_gradient", "estimate", "gaussian", "grid_mc", "grid_samples",
           "mass_mc", "objective_mc", "overlap_grid", "projected_sga", "pushforward_moments_mc",
           "query_from_overlaps", "sample_full", "sample_iid", "sample_reduced", "second_order_mean",
           "softmax_weights", "sphere", "step_moments", "step_sizes", "steps_at_times", "tangent", "token_outputs"]
