"""Paper C as an attnverify plugin: P. Marion, R. Berthier, G. Biau, C. Boyer, *Attention layers provably solve
single-location regression* (ICLR 2025, arXiv:2410.01537). Model ``slr``, checks ``slr.*``, claims ``C.*``."""
from __future__ import annotations

from attnverify.checks.plugin import Paper, Section, lazy
from attnverify.checks.slr._model import MODEL_KEYS, MODEL_PARAMS, validate_model

_PKG = "attnverify.checks.slr"
TITLE = "Paper C: single-location regression with an attention-like predictor"

def _steps() -> list:
    import sympy as sp

    from attnverify.theory.derivation import Step
    from attnverify.theory.slr import THEORY
    from attnverify.theory.slr.coefficients import MONOMIALS, POLY_VARS

    names = [sp.Mul(*(v ** e for v, e in zip(POLY_VARS, m))) for m in MONOMIALS]
    structure = Step("R is affine in nu and quadratic in (theta, eta, rho) with no linear term, every coefficient a "
                     "function of kappa: the monomials of R in (nu, theta, eta, rho)", sp.Matrix(names),
                     "sympy.Poly of the expanded risk; every coefficient free of nu, theta, eta, rho; R minus its "
                     f"reassembly: {THEORY.structure_residual()} (coefficients: {len(THEORY.risk_structure())})",
                     r"R = \sum c_m(\kappa) m", name="risk-structure")
    return THEORY.derivation() + [structure]


def derive(values: dict) -> tuple[str, list]:
    """The derivation, with the numeric ``values`` given for lam, gamma, d, L, eps substituted into every result."""
    from dataclasses import replace

    from attnverify.checks.slr.formulas import SYMBOLS

    steps = _steps()
    subs = {SYMBOLS[k]: v for k, v in values.items() if k in SYMBOLS}
    title = TITLE
    if subs:
        steps = [replace(s, result=s.result.subs(subs)) for s in steps]
        title += "; at " + ", ".join(f"{k} = {v}" for k, v in values.items() if k in MODEL_KEYS)
    return title, steps


def sections() -> list[Section]:
    return [Section("C", TITLE)]


PAPER = Paper(
    key="C", model="slr",
    title="Attention layers provably solve single-location regression",
    citation="P. Marion, R. Berthier, G. Biau, C. Boyer, ICLR 2025 (arXiv:2410.01537)",
    package=_PKG,
    modules=("risk_vs_montecarlo", "risk_vs_quadrature", "zeta_two_ways", "gradient_vs_quadrature", "sgd_gradient",
             "manifold_invariance", "reduced_flow", "oracle_hessian", "stationary_points", "bayes_posterior",
             "oracle_vs_bayes", "best_linear", "training_on_manifold", "training_from_sphere", "claims"),
    params=MODEL_PARAMS, validate=validate_model, derive=derive, sections=sections,
    quantities=lazy(f"{_PKG}.quantities", "quantities"), namespace=f"{_PKG}.formulas", selftest="selftest",
)
