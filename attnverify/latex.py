"""A standalone LaTeX document: every derived formula (``sympy.latex``) and the audit table."""
from __future__ import annotations

import re

from attnverify.derive import MODELS, derivation

GREEK = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon", "η": r"\eta",
    "θ": r"\theta", "λ": r"\lambda", "μ": r"\mu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma",
    "τ": r"\tau", "φ": r"\varphi", "ψ": r"\psi", "ω": r"\omega", "Π": r"\Pi", "Σ": r"\Sigma", "Δ": r"\Delta",
    "∞": r"\infty", "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx", "→": r"\to", "∈": r"\in",
    "‖": r"\|", "⟨": r"\langle", "⟩": r"\rangle", "±": r"\pm", "√": r"\surd", "∇": r"\nabla", "∂": r"\partial",
    "·": r"\cdot", "×": r"\times", "⊥": r"\perp", "♯": r"\sharp", "∑": r"\sum", "∫": r"\int", "²": "^2",
    "³": "^3", "₀": "_0", "₁": "_1", "₂": "_2", "−": "-",
}
SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_text(text: str) -> str:
    """Plain text as LaTeX: special characters escaped, Unicode mathematics as inline math."""
    out = []
    for ch in text:
        if ch in SPECIAL:
            out.append(SPECIAL[ch])
        elif ch in GREEK:
            out.append(f"${GREEK[ch]}$" if ch != "−" else "-")
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")
    return re.sub(r"\$\$", "", "".join(out))


def display(formula: str) -> str:
    """A display equation, shrunk to the line width when it is wider (graphicx)."""
    return (r"\[" "\n" r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{$\displaystyle "
            + formula + "$}\n" r"\]")


def audit_table(checks: list[dict]) -> str:
    """The audit table of a report's ``checks`` list (as in the JSON report)."""
    def num(x) -> str:
        return tex_text(f"{x:.4g}") if isinstance(x, (int, float)) else "--"

    rules = {"<=": r"$\le$", "<": "$<$", ">=": r"$\ge$", ">": "$>$"}
    rows = [rf"\texttt{{{tex_text(c['id'])}}} & {tex_text(c['verdict'])} & {num(c.get('observed'))} & "
            rf"{rules.get(c.get('comparison'), '')} & {num(c.get('threshold'))} \\" for c in checks]
    return "\n".join([r"\begin{tabular}{llrcr}", r"\hline", r"check & verdict & observed & pass if & threshold \\",
                      r"\hline", *rows, r"\hline", r"\end{tabular}"])


def document(report: dict | None) -> str:
    """The whole document; ``report`` is a JSON report dict, or None for no audit table."""
    parts = [r"\documentclass[10pt]{article}", r"\usepackage[margin=2cm]{geometry}", r"\usepackage{amsmath}", r"\usepackage{amssymb}", r"\usepackage{graphicx}",
             r"\allowdisplaybreaks", r"\title{attnverify: derivations and audit}", r"\date{}",
             r"\begin{document}", r"\maketitle",
             r"Every formula below was produced by SymPy from the model; none is typed in.", ""]
    for model, (_, title) in MODELS.items():
        parts += [rf"\section{{{tex_text(title)}}}", r"\begin{enumerate}"]
        for step in derivation(model):
            parts += [rf"\item {tex_text(step.statement)}", display(step.latex()),
                      rf"\emph{{Why:}} {tex_text(step.reason)}"]
        parts += [r"\end{enumerate}", ""]
    if report is not None:
        parts += [r"\section{Audit}",
                  tex_text(f"Profile {report['profile']}, seed {report['seed']}, version {report['version']}."),
                  "", r"\begin{center}", r"\small", audit_table(report["checks"]), r"\end{center}"]
    parts.append(r"\end{document}")
    return "\n".join(p for p in parts if p is not None) + "\n"
