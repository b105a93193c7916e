"""Paper C as an attnverify plugin: P. Marion, R. Berthier, G. Biau, C. Boyer, *Attention layers provably solve
single-location regression* (ICLR 2025, arXiv:2410.01537). Model ``slr``, checks ``slr.*``, claims ``C.*``."""
from __future__ import annotations

from attnverify.checks.plugin import Paper, Section, lazy
from attnverify.checks.slr._model import MODEL_KEYS, MODEL_PARAMS, validate_model

_PKG = "attnverify.checks.slr"
TITLE = "Paper C: single-location regression with an attention-like predictor"

# the derivation steps (by label) whose closed forms each check compares
_COMPARED = {
    "slr.risk_vs_montecarlo": ("R", r"\Delta_L", r"E_I f", r"E_N"),
    "slr.risk_vs_quadrature": ("R", r"\zeta"),
    "slr.zeta_two_ways": (r"\zeta'", r"\zeta", r"\zeta(0)"),
    "slr.gradient_vs_quadrature": ("R", r"\nabla_{\perp} R|_M", r"R = \sum c_m(\kappa) m"),
    "slr.sgd_gradient": ("R", r"R = \sum c_m(\kappa) m"),
    "slr.manifold_invariance": (r"\kappa'", r"o'_\perp|_M", r"(\kappa', \nu')"),
    "slr.reduced_flow": (r"(\dot\kappa, \dot\nu)", r"\mathrm{crit}_M"),
    "slr.oracle_hessian": (r"\lambda_\perp", r"H_{ab}"),
    "slr.stationary_points": ("R", r"\mathrm{crit}_M"),
    "slr.bayes_posterior": ("s(x)",),
    "slr.oracle_vs_bayes": ("R", "r_M", "s(x)"),
    "slr.best_linear": ("b", r"R_{\mathrm{lin}} - \epsilon^2"),
    "slr.training_on_manifold": (r"(\kappa', \nu')", "r_M", r"\mathrm{crit}_M"),
    "slr.training_from_sphere": ("R", r"H_{ab}"),
}


def _steps() -> list:
    import sympy as sp

    from attnverify.theory.derivation import Step
    from attnverify.theory.slr import derivation
    from attnverify.theory.slr.coefficients import MONOMIALS, POLY_VARS, risk_structure, structure_residual

    names = [sp.Mul(*(v ** e for v, e in zip(POLY_VARS, m))) for m in MONOMIALS]
    structure = Step("R is affine in nu and quadratic in (theta, eta, rho) with no linear term, every coefficient a "
                     "function of kappa: the monomials of R in (nu, theta, eta, rho)", sp.Matrix(names),
                     "sympy.Poly of the expanded risk; every coefficient free of nu, theta, eta, rho; R minus its "
                     f"reassembly: {structure_residual()} (coefficients: {len(risk_structure())})",
                     r"R = \sum c_m(\kappa) m", name="risk-structure")
    return derivation() + [structure]


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


def formulas(check_id: str, params: dict) -> tuple[dict, tuple[str, ...]]:
    """The derive options and the labels of the steps whose closed forms ``check_id`` compares."""
    return {}, _COMPARED.get(check_id, ())


PAPER = Paper(
    key="C", model="slr",
    title="Attention layers provably solve single-location regression",
    citation="P. Marion, R. Berthier, G. Biau, C. Boyer, ICLR 2025 (arXiv:2410.01537)",
    modules=tuple(f"{_PKG}.{m}" for m in ("risk", "zeta", "gradient", "manifold", "oracle", "stationary",
                                          "baselines", "training", "claims")),
    order=tuple(_COMPARED),
    stated=(_PKG, "stated.toml"),
    params=MODEL_PARAMS, validate=validate_model, derive=derive, sections=sections, formulas=formulas,
    quantities=lazy(f"{_PKG}.quantities", "quantities"), namespace=f"{_PKG}.formulas",
    families=lazy(f"{_PKG}.selftest", "families"), power_rows=lazy(f"{_PKG}.selftest", "power_rows"),
    mutants=lazy(f"{_PKG}.selftest", "mutants"), claim_scenarios=lazy(f"{_PKG}.selftest", "claim_scenarios"),
    theory=("attnverify.theory.slr", "attnverify.theory.slr.population", "attnverify.theory.slr.gauss",
            "attnverify.theory.slr.dynamics", "attnverify.theory.slr.oracle", "attnverify.theory.slr.stationary",
            "attnverify.theory.slr.baselines", "attnverify.theory.slr.coefficients"),
)
