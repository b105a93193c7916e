"""Paper A as an attnverify plugin: L. V. Truong, *Asymptotic Signal Subspace Recovery in Softmax Attention
Models* (arXiv:2606.22406). Model ``signal``, checks ``signal.*``, claims ``A.*``."""
from __future__ import annotations

from attnverify.checks.plugin import Paper, Section, lazy
from attnverify.checks.signal._model import MODEL_PARAMS, validate_model

_PKG = "attnverify.checks.signal"
TITLE = "Paper A: signal-subspace recovery by a learned softmax query"

# the derivation steps (by label) whose closed forms each check compares
_COMPARED = {
    "signal.objective_vs_montecarlo": (r"w(\rho)", r"J_{\mathrm{fixed}}(\rho)", r"\Delta_d(\rho)"),
    "signal.reduced_field_identity": (r"F(\rho)", r"F_{\mathrm{fixed}}(\rho)"),
    "signal.equilibria_stability": (r"F_{\mathrm{fixed}}(\rho)", r"F'(1) + 2 J'(1)"),
    "signal.ode_tracks_sga": (r"F(\rho)",),
    "signal.attention_on_noise": (r"w(\rho)",),
    "signal.low_temperature": (r"w(\rho)", r"w'(\rho)", r"J_{\mathrm{fixed}}(\rho)"),
    "signal.alignment_30_runs": (r"F(\rho)",),
    "signal.sign_ambiguity": (r"F_{\mathrm{fixed}}(\rho)", r"J_{\mathrm{sym}}(\rho)"),
}


def _steps(sign: str) -> list:
    from attnverify.theory.signal.recovery import derivation

    return derivation(sign)


def derive(values: dict) -> tuple[str, list]:
    """The derivation in the ``sign`` model, with the numeric ``values`` given for theta, beta, sigma, R, L, d
    substituted into every result."""
    from dataclasses import replace

    from attnverify.checks.signal.formulas import SYMBOLS

    sign = values.get("sign", "fixed")
    title = f"{TITLE} ({sign}-sign model)"
    steps = _steps(sign)
    subs = {SYMBOLS[k]: v for k, v in values.items() if k in SYMBOLS}
    if subs:
        steps = [replace(s, result=s.result.subs(subs)) for s in steps]
        title += "; at " + ", ".join(f"{k} = {v}" for k, v in values.items() if k in SYMBOLS)
    return title, steps


def sections() -> list[Section]:
    return [Section("A", f"{TITLE}, fixed-sign model", {"sign": "fixed"}),
            Section("A-sym", f"{TITLE}, symmetric-sign model", {"sign": "symmetric"})]


def formulas(check_id: str, params: dict) -> tuple[dict, tuple[str, ...]]:
    """The derive options and the labels of the steps whose closed forms ``check_id`` compares (its sign model;
    the fixed-sign steps complete the symmetric derivation)."""
    return {"sign": params.get("sign", "fixed")}, _COMPARED.get(check_id, ())


PAPER = Paper(
    key="A", model="signal",
    title="Asymptotic Signal Subspace Recovery in Softmax Attention Models",
    citation="L. V. Truong, arXiv:2606.22406 (2026)",
    modules=tuple(f"{_PKG}.{m}" for m in ("objective", "reduced_field", "equilibria", "ode_tracking", "attention",
                                          "low_temperature", "alignment", "sign_ambiguity", "claims_objective",
                                          "claims_dynamics", "claims_equilibria")),
    order=("signal.objective_vs_montecarlo", "signal.reduced_field_identity", "signal.equilibria_stability",
           "signal.ode_tracks_sga", "signal.attention_on_noise", "signal.low_temperature", "signal.alignment_30_runs",
           "signal.sign_ambiguity"),
    stated=(_PKG, "stated.toml"),
    params=MODEL_PARAMS, validate=validate_model, derive=derive, sections=sections, formulas=formulas,
    quantities=lazy(f"{_PKG}.quantities", "quantities"), namespace=f"{_PKG}.formulas",
    families=lazy(f"{_PKG}.selftest", "families"), power_rows=lazy(f"{_PKG}.selftest", "power_rows"),
    mutants=lazy(f"{_PKG}.selftest", "mutants"), claim_scenarios=lazy(f"{_PKG}.selftest", "claim_scenarios"),
    benchmarks=lazy(f"{_PKG}.bench", "run"),
    theory=("attnverify.theory.signal.recovery",),
)
