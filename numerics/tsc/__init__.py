"""Numerics of Paper D, "Token Sample Complexity of Attention" (Bohbot, Letrouit, Peyre, Vialard, ICML 2026).

How fast attention on n i.i.d. tokens approaches its infinite-token limit, measured (never derived: no closed form
is computed here; the exact references are the caller's arrays):

- :mod:`.laws`: token laws (Gaussian through a Cholesky factor, uniform on a sphere) and points of a ball;
- :mod:`.attention`: Gamma_{mu_n} at the sample (self-attention) or at any query points, through the fused
  log-space kernel, batched over repetitions and scales;
- :mod:`.moments`: the transformed sample's mean and covariance, the query-subsampling estimator and its stated
  variance, the error norms;
- :mod:`.curves`: error curves over n and repetitions against the exact and the authors' empirical reference;
- :mod:`.uniform`: the uniform-rate curve (sup over a ball);
- :mod:`.fit`: slopes of log error on log n with their interval (statistical plus systematic terms);
- :mod:`.consistency`: internal consistency of a curve across n and repetitions;
- :mod:`.horizon`: two- and one-sided horizons, with and without 1/tau;
- :mod:`.protocol`: the authors' Gaussian and sphere experiments as data, quick and paper profiles;
- :mod:`.timing`: run time measured on a reduced subset and extrapolated.
"""
from attnverify.numerics.tsc.attention import attention_at, self_attention_outputs, sup_error
from attnverify.numerics.tsc.consistency import Consistency, curve_consistency
from attnverify.numerics.tsc.curves import (ErrorCurves, LinearControl, QUANTITIES, REFERENCES,
                                            empirical_reference, run_error_curves, run_experiment)
from attnverify.numerics.tsc.fit import SlopeFit, fit_slope
from attnverify.numerics.tsc.horizon import Horizons, horizons
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw, ball_points
from attnverify.numerics.tsc.moments import SubsampleMoments, cov_errors, mean_error, subsample_moments, \
    transformed_moments
from attnverify.numerics.tsc.protocol import Experiment, gaussian_experiment, sphere_experiment
from attnverify.numerics.tsc.timing import TimeEstimate, extrapolate_seconds
from attnverify.numerics.tsc.uniform import uniform_errors

__all__ = ["attention_at", "self_attention_outputs", "sup_error", "Consistency", "curve_consistency", "ErrorCurves",
           "QUANTITIES", "REFERENCES", "empirical_reference", "run_error_curves", "run_experiment", "SlopeFit",
           "fit_slope", "Horizons", "horizons", "GaussianLaw", "SphereLaw", "ball_points", "SubsampleMoments",
           "cov_errors", "mean_error", "subsample_moments", "transformed_moments", "Experiment",
           "gaussian_experiment", "sphere_experiment", "uniform_errors", "LinearControl", "TimeEstimate",
           "extrapolate_seconds"]
