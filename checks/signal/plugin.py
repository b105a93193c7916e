"""Paper A as an attnverify plugin: L. V. Truong, *Asymptotic Signal Subspace Recovery in Softmax Attention
Models* (arXiv:2606.22406). Model ``signal``, checks ``signal.*``, claims ``A.*``."""
from __future__ import annotations

from attnverify.checks.plugin import Paper, Section, lazy
from attnverify.checks.signal._model import MODEL_PARAMS, validate_model

_PKG = "attnverify.checks.signal"
TITLE = "Paper A: signal-subspace recovery by a learned softmax query"

def _steps(sign: str) -> list:
    from attnverify.theory.signal import derivation

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


def formula_options(params: dict) -> dict:
    """The derive options of a check's parameters: its sign model (the fixed-sign steps complete the symmetric
    derivation)."""
    return {"sign": params.get("sign", "fixed")}


PAPER = Paper(
    key="A", model="signal",
    title="Asymptotic Signal Subspace Recovery in Softmax Attention Models",
    citation="L. V. Truong, arXiv:2606.22406 (2026)",
    package=_PKG,
    modules=("objective", "reduced_field", "equilibria", "ode_tracking", "attention", "low_temperature", "alignment",
             "sign_ambiguity", "claims_objective", "claims_dynamics", "claims_equilibria"),
    params=MODEL_PARAMS, validate=validate_model, derive=derive, sections=sections, formula_options=formula_options,
    quantities=lazy(f"{_PKG}.quantities", "quantities"), namespace=f"{_PKG}.formulas", selftest="selftest",
    bench="bench",
)
