"""The derivations the CLI prints and the LaTeX document typesets, by model name."""
from __future__ import annotations

import importlib

import sympy as sp

from checks.framework import InputError

MODELS = {
    "signal": ("theory.signal_recovery", "Paper A: signal-subspace recovery by a learned softmax query"),
    "meanfield": ("theory.mean_field", "Paper B: mean-field transformers at low temperature"),
}


def derivation(model: str) -> list:
    """The list of :class:`theory.derivation.Step` for ``model`` (``signal`` or ``meanfield``)."""
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    return importlib.import_module(MODELS[model][0]).derivation()


def render(model: str, latex: bool = False) -> str:
    """The derivation as text: each step's statement, its SymPy result, and why it holds."""
    lines = [MODELS[model][1] if model in MODELS else model, ""]
    for i, step in enumerate(derivation(model), 1):
        lines.append(f"{i}. {step.statement}")
        body = step.latex() if latex else sp.pretty(step.result, use_unicode=True, wrap_line=False)
        if step.label and not latex:
            lines.append(f"   {step.label} =")
        lines += ["      " + row for row in body.splitlines()]
        lines += [f"   because: {step.reason}", ""]
    return "\n".join(lines)
