"""Paper C (single-location regression, model ``slr``): the public numeric API in one namespace.

One job per module: ``model`` (parameters, targets, tasks, overlaps, starts), ``risk`` (predictor, Monte Carlo
risk), ``quadrature`` (deterministic risk by quadrature), ``pgd`` (exact-gradient PGD), ``sgd`` (SGD), ``bayes``
(Bayes predictor and risk), ``linear`` (least-squares baseline), ``zeta`` (quadrature of zeta's definition), and
``simulators`` (the simulators as the one object the checks receive, :data:`NUMERICS`). Overlaps are always in the
order (kappa, nu, theta, eta, rho) = (<k,k*>, <v,v*>, <v,k*>, <k,v*>, <k,v>).
"""
from attnverify.numerics.slr.bayes import BayesRisk, bayes_prediction, bayes_risk_mc, posterior_weights
from attnverify.numerics.slr.linear import LinearBaseline, least_squares, linear_baseline, linear_features
from attnverify.numerics.slr.model import (OVERLAPS, SLRModel, TaskSampler, check_overlaps, distance_to_manifold,
                                           draw_targets, gram, overlaps, realise_overlaps, sample_tasks,
                                           start_manifold, start_sphere)
from attnverify.numerics.slr.pgd import KERNELS, PGDPath, StepKernel, lam_schedule, pgd, step_numba, step_numpy
from attnverify.numerics.slr.quadrature import (RiskTerms, convergence, default_nodes, risk_gradient_fd,
                                                risk_quadrature, risk_terms)
from attnverify.numerics.slr.risk import predictor, risk_mc, risk_samples
from attnverify.numerics.slr.sgd import LossGrad, SGDPath, empirical_loss_grad, sgd, sgd_reference
from attnverify.numerics.slr.simulators import NUMERICS, Simulators
from attnverify.numerics.slr.zeta import erf_square_mean, quadrature_error

__all__ = ["KERNELS", "NUMERICS", "OVERLAPS", "SLRModel", "BayesRisk", "LinearBaseline", "LossGrad", "PGDPath",
           "RiskTerms", "SGDPath", "Simulators", "StepKernel", "TaskSampler", "erf_square_mean", "quadrature_error",
           "step_numba", "step_numpy",
           "bayes_prediction", "bayes_risk_mc", "check_overlaps", "convergence", "default_nodes",
           "distance_to_manifold", "draw_targets", "empirical_loss_grad", "gram", "lam_schedule", "least_squares",
           "linear_baseline", "linear_features", "overlaps", "pgd", "posterior_weights", "predictor",
           "realise_overlaps", "risk_gradient_fd", "risk_mc", "risk_quadrature", "risk_samples", "risk_terms",
           "sample_tasks", "sgd", "sgd_reference", "start_manifold", "start_sphere"]
