"""Paper B as an attnverify plugin: A. Alcalde, L. Bungert, K. Riedl, T. Roith, *Quantifying Concentration
Phenomena of Mean-Field Transformers in the Low-Temperature Regime* (arXiv:2605.10931). Model ``meanfield``,
checks ``meanfield.*``, claims ``B.*``."""
from __future__ import annotations

from attnverify.checks.meanfield._model import MODEL_PARAMS, validate_model
from attnverify.checks.plugin import Paper, Section, lazy

_PKG = "attnverify.checks.meanfield"
TITLE = "Paper B: mean-field transformers at low temperature"

def _complete(values: dict) -> dict:
    """The model options with the defaults filled in; d follows the given matrices when it is not given."""
    full = {p.name: values.get(p.name, p.default) for p in MODEL_PARAMS}
    shape = {n: (full[n].shape[0] if hasattr(full[n], "shape") else len(full[n])) for n in ("Q", "K", "V")}
    if "d" not in values:
        shapes = {shape[n] for n in ("Q", "K", "V") if n in values}
        if len(shapes) > 1:
            raise ValueError("Q, K and V must have the same size")
        if shapes:
            full["d"] = shapes.pop()
    for n in ("Q", "K", "V"):
        if n not in values and shape[n] != full["d"]:
            raise ValueError(f"{n}: the default is {shape[n]}x{shape[n]}; give {n} for d = {full['d']}")
    return full


def validate_options(values: dict) -> None:
    """The given options completed by the defaults (d from the matrices) satisfy the paper's assumptions."""
    if values:
        validate_model(_complete(values))


def _theory_steps() -> list:
    from attnverify.theory.meanfield import derivation

    return derivation()


def derive(values: dict) -> tuple[str, list]:
    """The general derivation, or (with any of Q, K, V, d given) the derivation for those matrices."""
    if not values:
        return TITLE, _theory_steps()
    import sympy as sp

    from attnverify.checks.meanfield.derive import exact_matrix, steps_for

    full = _complete(values)
    Q, K, V = (exact_matrix(full[n]) for n in ("Q", "K", "V"))      # exact input stays exact (derive --set 1/3)
    B = Q.T * K
    return (f"Paper B for B = QᵀK = {sp.sstr(sp.Matrix(B).tolist())}, V = {sp.sstr(sp.Matrix(V).tolist())}",
            steps_for(B, V))


def sections() -> list[Section]:
    return [Section("B", TITLE)]


PAPER = Paper(
    key="B", model="meanfield",
    title="Quantifying Concentration Phenomena of Mean-Field Transformers in the Low-Temperature Regime",
    citation="A. Alcalde, L. Bungert, K. Riedl, T. Roith, arXiv:2605.10931 (2026)",
    package=_PKG,
    modules=("limit", "flow", "projection", "w2", "terminal", "claims", "claims_terminal"),
    params=MODEL_PARAMS, validate=validate_options, derive=derive, sections=sections,
    namespace=f"{_PKG}.formulas", quantities=lazy(f"{_PKG}.quantities", "quantities"), selftest="selftest",
    bench="bench",
)
