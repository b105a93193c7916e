"""Paper C (single-location regression, model ``slr``): the public numeric API in one namespace.

One job per module: ``slr_model`` (parameters, targets, tasks, overlaps, starts), ``slr_risk`` (predictor, Monte
Carlo risk), ``slr_quadrature`` (deterministic risk by quadrature), ``slr_pgd`` (exact-gradient PGD), ``slr_sgd``
(SGD), ``slr_bayes`` (Bayes predictor and risk), ``slr_linear`` (least-squares baseline). Overlaps are always in
the order (kappa, nu, theta, eta, rho) = (<k,k*>, <v,v*>, <v,k*>, <k,v*>, <k,v>).
"""
from attnverify.numerics.slr.bayes import BayesRisk, bayes_prediction, bayes_risk_mc, posterior_weights
from attnverify.numerics.slr.linear import LinearBaseline, least_squares, linear_baseline, linear_features
from attnverify.numerics.slr.model import (OVERLAPS, SLRModel, check_overlaps, distance_to_manifold, draw_targets,
                                           gram, overlaps, realise_overlaps, sample_tasks, start_manifold,
                                           start_sphere)
from attnverify.numerics.slr.pgd import PGDPath, lam_schedule, pgd
from attnverify.numerics.slr.quadrature import (RiskTerms, convergence, default_nodes, risk_gradient_fd,
                                                risk_quadrature, risk_terms)
from attnverify.numerics.slr.risk import predictor, risk_mc, risk_samples
from attnverify.numerics.slr.sgd import SGDPath, empirical_loss_grad, sgd, sgd_reference

__all__ = ["OVERLAPS", "SLRModel", "BayesRisk", "LinearBaseline", "PGDPath", "RiskTerms", "SGDPath",
           "bayes_prediction", "bayes_risk_mc", "check_overlaps", "convergence", "default_nodes",
           "distance_to_manifold", "draw_targets", "empirical_loss_grad", "gram", "lam_schedule", "least_squares",
           "linear_baseline", "linear_features", "overlaps", "pgd", "posterior_weights", "predictor",
           "realise_overlaps", "risk_gradient_fd", "risk_mc", "risk_quadrature", "risk_samples", "risk_terms",
           "sample_tasks", "sgd", "sgd_reference", "start_manifold", "start_sphere"]
