r"""Paper C (single-location regression, model ``slr``): its closed forms as one object, and the public API.

Marion, Berthier, Biau, Boyer, "Attention layers provably solve single-location regression", ICLR 2025.
Model: X = (X_1..X_L) in R^d, J0 uniform; X_{J0} ~ N(sqrt(d/2) k*, gamma^2 I), other tokens N(0, I), independent;
Y = <X_{J0}, v*> + xi (Var xi = eps^2); predictor T(X) = sum_l erf(lam <X_l, k>) <X_l, v> with |k| = |v| = 1;
risk R = E (Y - T)^2; projected gradient descent on S^{d-1} x S^{d-1}; overlaps kappa, nu, theta, eta, rho.

The closed forms are the methods of one object, :class:`SLRTheory` (its default instance :data:`THEORY` is what the
checks receive), assembled from one part per job, each in its module:
  symbols       the symbols and their assumptions (no closed forms);
  gauss         Stein's lemma, E erf(m + sZ), zeta_sigma(t) = E erf(t + sigma Z)^2 two ways, its evaluators;
  population    the population risk R in the overlaps, its symmetry, M and the reduced risk r(kappa, nu);
  dynamics      the exact overlap map of projected gradient descent, the reduced map and flow on M;
  oracle        the oracle's Riemannian Hessian, its certified lam-range as a strict local minimum, r on M;
  stationary    the stationary points on and off M (documented search);
  baselines     the Bayes predictor and the best linear predictor;
  coefficients  R as a polynomial in (nu, theta, eta, rho) and its fast evaluator;
  eval          NumPy / mpmath evaluators of the closed forms;
  steps         the derivation, step by step.
The parts call each other through ``self`` and memoise per object (attnverify.theory.closed_forms), so
``THEORY.replace(risk=wrong)`` is a theory in which every closed form derived from the risk is derived from the
wrong one, and nothing global changes.  Ball arithmetic is the shared attnverify.theory.certified (zeta_erf carries
its own ball version).  The module-level names below are the default object's bound methods.
"""
from __future__ import annotations

from attnverify.theory.slr.baselines import BaselineForms
from attnverify.theory.slr.coefficients import CoefficientForms, RiskEvaluator
from attnverify.theory.slr.dynamics import DynamicsForms
from attnverify.theory.slr.eval import EvalForms
from attnverify.theory.slr.gauss import GaussForms, zeta_erf
from attnverify.theory.slr.oracle import LocalMinScan, OracleForms, OracleHessian
from attnverify.theory.slr.population import RiskForms
from attnverify.theory.slr.stationary import StationaryForms, StationaryPoint, StationarySearch
from attnverify.theory.slr.steps import DerivationForms
from attnverify.theory.slr.symbols import (L, OVERLAPS, PARAMS, d, eps, eta, gamma, kappa, lam, mu, nu, rho,
                                           theta)


class SLRTheory(DerivationForms, StationaryForms, OracleForms, CoefficientForms, EvalForms, BaselineForms,
                DynamicsForms, RiskForms, GaussForms):
    """Paper C's closed forms, derived with SymPy from the model (one part per module; see the package docstring).
    They depend on their arguments alone, so they may be kept across processes (``persist_key``)."""

    persist_key = "slr"


#: the closed forms every Paper C check receives by default
THEORY = SLRTheory()

# the default object's closed forms under their module-level names
erf_mean = THEORY.erf_mean
erf_moment = THEORY.erf_moment
zeta_mp = THEORY.zeta_mp
zeta_np = THEORY.zeta_np
zeta_arb = THEORY.zeta_arb
zeta_agreement = THEORY.zeta_agreement
risk = THEORY.risk
gradient = THEORY.gradient
risk_on_M = THEORY.risk_on_M
overlap_map_abstract = THEORY.overlap_map_abstract
overlap_flow_abstract = THEORY.overlap_flow_abstract
reduced_map = THEORY.reduced_map
reduced_flow = THEORY.reduced_flow
reduced_critical_points = THEORY.reduced_critical_points
oracle_hessian = THEORY.oracle_hessian
oracle_local_min_scan = THEORY.oracle_local_min_scan
oracle_on_M_proof = THEORY.oracle_on_M_proof
stationary_points = THEORY.stationary_points
bayes_log_weight = THEORY.bayes_log_weight
bayes_log_weight_np = THEORY.bayes_log_weight_np
bayes_predictor = THEORY.bayes_predictor
best_linear_predictor = THEORY.best_linear_predictor
risk_np = THEORY.risk_np
risk_gradient_np = THEORY.risk_gradient_np
risk_hessian_np = THEORY.risk_hessian_np
reduced_risk_np = THEORY.reduced_risk_np
reduced_map_np = THEORY.reduced_map_np
overlap_map_np = THEORY.overlap_map_np
risk_mp = THEORY.risk_mp
gradient_mp = THEORY.gradient_mp
hessian_mp = THEORY.hessian_mp
risk_evaluator = THEORY.risk_evaluator
derivation = THEORY.derivation

__all__ = [
    "SLRTheory", "THEORY", "BaselineForms", "CoefficientForms", "DerivationForms", "DynamicsForms", "EvalForms",
    "GaussForms", "OracleForms", "RiskForms", "StationaryForms", "LocalMinScan", "OracleHessian", "RiskEvaluator",
    "StationaryPoint", "StationarySearch",
    "kappa", "nu", "theta", "eta", "rho", "lam", "gamma", "d", "L", "eps", "mu", "OVERLAPS", "PARAMS",
    "erf_mean", "erf_moment", "zeta_erf", "zeta_mp", "zeta_np", "zeta_arb", "zeta_agreement",
    "risk", "gradient", "risk_on_M", "overlap_map_abstract", "overlap_flow_abstract", "reduced_map", "reduced_flow",
    "reduced_critical_points", "oracle_hessian", "oracle_local_min_scan", "oracle_on_M_proof", "stationary_points",
    "bayes_log_weight", "bayes_log_weight_np", "bayes_predictor", "best_linear_predictor",
    "risk_np", "risk_gradient_np", "risk_hessian_np", "reduced_risk_np", "reduced_map_np", "overlap_map_np",
    "risk_mp", "gradient_mp", "hessian_mp", "risk_evaluator", "derivation",
]
