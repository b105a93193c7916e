r"""A LaTeX document for papers: every derived formula (``sympy.latex``) as a numbered, labelled equation, the
prose with its mathematics in math mode, and (optionally) the audit: checks table, claims ledger and figures.

- UTF-8 input and T1 fonts (Latin Modern when installed); only amsmath, amssymb and graphicx are needed, all in
  Debian's ``texlive-latex-base``.
- Long expressions are broken over lines by terms inside ``split`` (a sum is cut between its terms; a product
  with a long sum factor opens ``\Bigl(`` on the first line and closes ``\Bigr)`` on the last), never shrunk.
- Each equation is ``\label{eq:<section>-...}``, the section key of its paper's adapter; the labels are listed in
  the document. ``fragment=True`` leaves out the preamble so the
  body can be ``\input`` into a paper.
"""
from __future__ import annotations

import re

from attnverify.derive import derivation

GREEK = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon", "η": r"\eta",
    "θ": r"\theta", "λ": r"\lambda", "μ": r"\mu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma",
    "τ": r"\tau", "φ": r"\varphi", "ψ": r"\psi", "ω": r"\omega", "Π": r"\Pi", "Σ": r"\Sigma", "Δ": r"\Delta",
    "∞": r"\infty", "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx", "→": r"\to", "∈": r"\in",
    "‖": r"\|", "⟨": r"\langle ", "⟩": r"\rangle ", "±": r"\pm", "√": r"\surd", "∇": r"\nabla", "∂": r"\partial",
    "·": r"\cdot", "×": r"\times", "⊥": r"\perp", "♯": r"\sharp", "∑": r"\sum", "∫": r"\int", "²": "^2",
    "³": "^3", "₀": "_0", "₁": "_1", "₂": "_2", "−": "-", "ᵀ": r"^{\top}", "ₖ": "_k", "ᵢ": "_i",
}
SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
GREEK_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "eps", "eta", "theta", "lambda", "mu", "xi", "pi", "rho",
               "sigma", "tau", "phi", "psi", "omega", "Pi", "Sigma", "Delta", "Gamma")
MATH_WORDS = {"oo", "exp", "log", "sqrt", "lim", "E", "d1G", "argmax"}
CONTEXT_WORDS = {"sum", "tr", "min", "max", "sup", "span", "A", "grad", "diag", "cos", "sin", "dim"}     # mathematics only next to mathematics
_MATH_CHARS = set("^_=<>|~+*/[]{}") | set(GREEK) - {"·"}


def tex_text(text: str) -> str:
    """Plain text as LaTeX text: special characters escaped, Unicode mathematics as inline math, Latin letters
    kept (UTF-8 input), any other character (which LaTeX could not typeset) as ``?``."""
    out = []
    for ch in text:
        if ch in SPECIAL:
            out.append(SPECIAL[ch])
        elif ch in GREEK:
            out.append(f"${GREEK[ch]}$" if ch != "−" else "-")
        elif ord(ch) < 0x180:        # ASCII and the Latin letters that UTF-8 input with T1 fonts typesets
            out.append(ch)
        else:
            out.append("?")
    return re.sub(r"\$\$", "", "".join(out))


# ----------------------------------------------------------------------------------------------
# prose: the mathematics of a step's statement in math mode
# ----------------------------------------------------------------------------------------------
def _is_math(word: str) -> bool:
    core = word.strip(",.;:()")
    if not core:
        return word.strip() in ("-", "+", "=", "+-", "->", "~", "<=", ">=", "*", "/", "|")
    if core in MATH_WORDS or re.fullmatch(r"[-+]?(" + "|".join(GREEK_WORDS) + r")\d*", core):
        return True
    if len(core) == 1 and core.isalpha():
        return core not in ("a", "A")
    if re.fullmatch(r"(" + "|".join(GREEK_WORDS) + r"|[A-Za-z])'+(\(.*)?", core):      # rho', J'(
        return True
    if re.search(r"(?<![A-Za-z])[A-Za-z0-9]-[A-Za-z0-9](?![A-Za-z])", core):          # L-R, d-1
        return True
    if any(ch in _MATH_CHARS for ch in core):
        return True
    if re.search(r"[A-Za-z]\(", core) and len(core.split("(")[0]) <= 4:      # f(x), N(0, J(rho)
        return True
    if re.fullmatch(r"\d+x\d+|-?\d+(\.\d+)?|[A-Za-z]\d+|[-+*/=<>]+|[A-Za-z]'+(\(.*)?", core):  # 3x3, -1, x0, J'
        return True
    return False


def _math(span: str) -> str:
    """ASCII / Unicode mathematics as LaTeX math-mode source."""
    s = span
    for ch, tex in GREEK.items():
        s = s.replace(ch, tex + (" " if tex[-1].isalpha() else ""))
    s = s.replace("->", r" \to ").replace("+-", r"\pm ").replace("-+", r"\mp ")
    s = s.replace("<=", r"\le ").replace(">=", r"\ge ").replace("~", r"\sim ")
    while True:
        t = re.sub(r"<([^<>]*)>", r"\\langle \1\\rangle ", s)
        if t == s:
            break
        s = t
    s = re.sub(r"(?<![A-Za-z\\])(\d+)x(\d+)(?![A-Za-z])", r"\1\\times \2", s)
    s = re.sub(r"P_perp_([A-Za-z])", r"P^{\\perp}_{\1}", s)
    s = re.sub(r"(?<![A-Za-z\\])perp(?![A-Za-z])", r"\\perp ", s)
    s = re.sub(r"(?<![A-Za-z\\])d1G", r"\\partial_1 G", s)
    s = re.sub(r"_(oo|inf)(?![A-Za-z])", r"_\\infty ", s)
    s = re.sub(r"(?<![A-Za-z\\])oo(?![A-Za-z])", r"\\infty ", s)
    s = re.sub(r"(?<![A-Za-z\\])sqrt\(([^()]*)\)", r"\\sqrt{\1}", s)
    s = re.sub(r"(?<![A-Za-z\\])(exp|log|min|max|sup|lim|tr)(?![A-Za-z])", r"\\operatorname{\1}", s)
    s = s.replace(r"\operatorname{exp}", r"\exp").replace(r"\operatorname{log}", r"\log").replace(
        r"\operatorname{min}", r"\min").replace(r"\operatorname{max}", r"\max").replace(
        r"\operatorname{sup}", r"\sup").replace(r"\operatorname{lim}", r"\lim")
    s = re.sub(r"(?<![A-Za-z\\])sum(?![A-Za-z])", r"\\sum ", s)
    s = re.sub(r"(?<![A-Za-z\\])grad(?![A-Za-z])", r"\\nabla ", s)
    s = re.sub(r"(?<![A-Za-z\\])(cos|sin)(?![A-Za-z])", r"\\\1 ", s)
    s = re.sub(r"(?<![A-Za-z\\])(diag|dim)(?![A-Za-z])", r"\\operatorname{\1}", s)
    s = re.sub(r"(?<![A-Za-z\\])d(" + "|".join(GREEK_WORDS) + r")(?![A-Za-z])", r"d\\\1", s)
    s = re.sub(r"(?<![A-Za-z\\_^])([A-Za-z])(\d+)(?![A-Za-z\d])", r"\1_{\2}", s)
    s = re.sub(r"(?<![A-Za-z\\])E(?=[\[_])", r"\\mathbb{E}", s)
    s = re.sub(r"(?<![A-Za-z\\])(" + "|".join(GREEK_WORDS) + r")(\d+)?(?![A-Za-z])",
               lambda m: ("\\varepsilon" if m.group(1) == "eps" else "\\" + m.group(1)) + " "
               + (f"_{m.group(2)}" if m.group(2) else ""), s)
    s = re.sub(r"\^\(([^()]*)\)", r"^{(\1)}", s)
    s = re.sub(r"\^-(\\?[A-Za-z]+)", r"^{-\1}", s)
    s = re.sub(r"\^T(?![A-Za-z])", r"^{\\top}", s)
    s = re.sub(r"(?<=[A-Za-z]) ?\*(?![A-Za-z0-9(])", r"^{*}", s)
    s = s.replace("#", r"\#").replace("%", r"\%").replace("&", r"\&")
    s = re.sub(r"_([A-Za-z]{2,})(?![A-Za-z(])", lambda m: "_{" + m.group(1) + "}", s)
    s = re.sub(r"([_^])(\\[A-Za-z]+)", r"\1{\2}", s)
    return "".join(ch if ord(ch) < 128 else "?" for ch in s).strip()


def prose(text: str) -> str:
    """A statement or reason in LaTeX: words in text mode, their mathematics (``g = <q, z> ~ N(0, sigma^2)``)
    in math mode (``$g = \\langle q, z\\rangle \\sim N(0, \\sigma^2)$``)."""
    words = text.split(" ")
    out: list[str] = []
    span: list[str] = []
    depth = 0

    def flush() -> None:
        nonlocal span
        if span:
            body = " ".join(span)
            lead = re.match(r"^[(]*", body).group(0) if body.count("(") > body.count(")") else ""
            trail = re.search(r"[,.;:]*$", body).group(0)
            core = body[len(lead):len(body) - len(trail)] if trail else body[len(lead):]
            if core.count(")") > core.count("(") and core.endswith(")"):
                core, trail = core[:-1], ")" + trail
            out.append(tex_text(lead) + f"${_math(core)}$" + tex_text(trail))
            span = []

    flags = [_is_math(w) for w in words]
    for i, w in enumerate(words):
        if w.strip(",.;:()") in CONTEXT_WORDS:
            flags[i] = (i + 1 < len(words) and flags[i + 1]) and (i > 0 and flags[i - 1] or True)
    for w, is_math in zip(words, flags):
        if depth > 0 or is_math:
            span.append(w)
            depth += w.count("{") - w.count("}")
            depth = max(depth, 0)
        else:
            flush()
            out.append(tex_text(w))
    flush()
    return " ".join(out).replace("$ $", " ")


# ----------------------------------------------------------------------------------------------
# equations: numbered, labelled, broken over lines
# ----------------------------------------------------------------------------------------------
_MAX = 95   # characters of LaTeX source per line (a rendered line holds about this much of typical source)


def _visible(tex: str) -> int:
    """A rough width of rendered LaTeX: commands count as one character, braces as none."""
    return len(re.sub(r"\\[A-Za-z]+", "x", tex).replace("{", "").replace("}", "").replace(" ", ""))


def _pieces(expr: "sp.Basic", width: int) -> list[str]:
    """``expr`` as LaTeX pieces whose concatenation (with spaces) is the expression and between which a line may
    break: the terms of a sum, the factors of a product, a long sum factor opened with ``\\Bigl(`` and closed
    with ``\\Bigr)`` (which, unlike ``\\left``/``\\right``, may stand on different lines)."""
    import sympy as sp

    tex = sp.latex(expr)
    if _visible(tex) <= width or not isinstance(expr, sp.Expr):
        return [tex]
    if isinstance(expr, sp.Add):
        out: list[str] = []
        for i, t in enumerate(expr.as_ordered_terms()):
            sign = "- " if t.could_extract_minus_sign() else ("+ " if i else "")
            sub = _pieces(-t if sign == "- " else t, width)
            out += [sign + sub[0], *sub[1:]]
        return out
    if isinstance(expr, sp.Pow) and isinstance(expr.base, sp.Add) and expr.exp.is_Integer and expr.exp > 0:
        inner = _pieces(expr.base, width)
        return [r"\Bigl(" + inner[0], *inner[1:-1], inner[-1] + rf"\Bigr)^{{{expr.exp}}}"] if len(inner) > 1 \
            else [r"\Bigl(" + inner[0] + rf"\Bigr)^{{{expr.exp}}}"]
    if isinstance(expr, sp.Mul):
        num, den = sp.fraction(expr)
        out = []
        if den != 1:
            dtex = sp.latex(den)
            if _visible(dtex) <= width // 2:
                out.append(rf"\frac{{1}}{{{dtex}}}")
            else:
                out = []
        coeff, factors = num.as_coeff_mul()
        if coeff != 1:
            out.append(sp.latex(coeff))
        for f in factors:
            if isinstance(f, (sp.Add, sp.Pow)) and _visible(sp.latex(f)) > width // 2:
                sub = _pieces(f, width)
                if isinstance(f, sp.Add):
                    sub = [r"\Bigl(" + sub[0], *sub[1:]]
                    sub[-1] += r"\Bigr)"
                out += sub
            else:
                out.append(sp.latex(f) if not isinstance(f, sp.Add) else r"\left(" + sp.latex(f) + r"\right)")
        if den != 1 and _visible(sp.latex(den)) > width // 2:
            sub = _pieces(den, width)
            out += [r"\Bigl/ \Bigl(" + sub[0], *sub[1:]]
            out[-1] += r"\Bigr)"
        return out
    return [tex]


def _pack(pieces: list[str], width: int) -> list[str]:
    lines, cur = [], ""
    for p in pieces:
        if cur and _visible(cur + " " + p) > width:
            lines.append(cur)
            cur = p
        else:
            cur = f"{cur} {p}".strip()
    return lines + ([cur] if cur else [])


def expression_lines(expr: "sp.Basic", width: int = _MAX) -> list[str]:
    """``expr`` as LaTeX lines of at most about ``width`` visible characters, cut between terms and factors."""
    import sympy as sp

    return _pack(_pieces(expr, width), width)


def _slug(label: str) -> str:
    special = {r"F_{\mathrm{fixed}}(\rho)": "F-in-w", r"J_{\mathrm{fixed}}(\rho)": "J",
               r"\Pi_{\dim E=1}(x_0)": "Pi-dimE1", r"\Pi_{\dim E=2}(x_0)": "Pi-dimE2"}
    if label in special:
        return special[label]
    s = re.sub(r"\((\\rho|x|x_0|\\beta|\\beta,t|b)\)", "", label)
    s = s.replace("'", "-prime").replace("^*", "-star").replace(r"\mathrm", "").replace(r"\rm", "")
    s = re.sub(r"\\([A-Za-z]+)", r"\1", s)
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-")
    return s or "step"


def equation(step, label: str | None) -> str:
    """One step's result as a numbered equation (``split`` when it needs several lines)."""
    import sympy as sp

    lhs = step.label if step.label and not isinstance(step.result, sp.Eq) else ""
    if isinstance(step.result, sp.Eq):
        lhs, rhs = sp.latex(step.result.lhs), step.result.rhs
    else:
        rhs = step.result
    lines = expression_lines(rhs)
    tag = rf"\label{{{label}}}" if label else ""
    if len(lines) == 1:
        body = f"{lhs} = {lines[0]}" if lhs else lines[0]
        return "\n".join([r"\begin{equation}" + tag, body, r"\end{equation}"])
    first = (f"{lhs} ={{}}& " if lhs else "& ") + lines[0]
    rest = [r"&\quad " + ln for ln in lines[1:]]
    return "\n".join([r"\begin{equation}" + tag, r"\begin{split}", (r" \\" + "\n").join([first, *rest]),
                      r"\end{split}", r"\end{equation}"])


def derivation_section(title: str, steps: list, prefix: str) -> tuple[list[str], list[tuple[str, str]]]:
    """A section: per step its statement (prose), the labelled equation and why it holds."""
    parts = [rf"\section{{{prose(title)}}}"]
    labels: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for step in steps:
        slug = _slug(step.label) if step.label else "step"
        seen[slug] = seen.get(slug, 0) + 1
        name = f"eq:{prefix}-{slug}" + (f"-{seen[slug]}" if seen[slug] > 1 else "")
        labels.append((name, step.label))
        parts += [prose(step.statement), equation(step, name), r"\emph{Why:} " + prose(step.reason), ""]
    return parts, labels


# ----------------------------------------------------------------------------------------------
# the audit: tables and figures
# ----------------------------------------------------------------------------------------------
def audit_table(checks: list[dict]) -> str:
    """The audit table of a report's ``checks`` list (as in the JSON report)."""
    def num(x) -> str:
        return tex_text(f"{x:.4g}") if isinstance(x, (int, float)) else "--"

    rules = {"<=": r"$\le$", "<": "$<$", ">=": r"$\ge$", ">": "$>$"}
    rows = [rf"\texttt{{{tex_text(c['id'])}}} & {tex_text(c['verdict'])} & {num(c.get('observed'))} & "
            rf"{rules.get(c.get('comparison'), '')} & {num(c.get('threshold'))} \\" for c in checks]
    return "\n".join([r"\begin{tabular}{llrcr}", r"\hline", r"check & verdict & observed & pass if & threshold \\",
                      r"\hline", *rows, r"\hline", r"\end{tabular}"])


def claims_table(claims: list[dict]) -> str:
    """The claims ledger (a report's ``claims`` list): id, paper, verdict, condition or reason."""
    rows = [rf"\texttt{{{tex_text(c['id'])}}} & {tex_text(c.get('paper', ''))} & {tex_text(c['verdict'])} & "
            rf"{prose(c.get('condition') or c.get('reason') or '')} \\" for c in claims]
    return "\n".join([r"\begin{tabular}{lllp{0.52\linewidth}}", r"\hline",
                      r"claim & paper & verdict & condition / reason \\", r"\hline", *rows, r"\hline",
                      r"\end{tabular}"])


def figures_part(report: dict, figures: dict[str, list[str]]) -> list[str]:
    parts = []
    for c in report["checks"]:
        for path in figures.get(c["id"], []):
            parts += [r"\begin{figure}[htbp]", r"\centering", rf"\includegraphics[width=0.8\linewidth]{{{path}}}",
                      rf"\caption{{\texttt{{{tex_text(c['id'])}}}: {prose(c.get('claim') or '')}}}",
                      r"\end{figure}"]
    return parts


def _compute_sections() -> tuple[list[str], list[tuple[str, str]]]:
    from attnverify.checks.registry import papers

    parts, all_labels = [], []
    for paper in papers():
        for section in paper.sections():
            sec, labels = derivation_section(section.title, derivation(paper.model, **section.options), section.key)
            parts += sec
            all_labels += labels
    return parts, all_labels


def derivation_sections() -> tuple[list[str], list[tuple[str, str]]]:
    """The three derivation sections and their equation labels, cached beside the derivations (keyed by the code
    version and this module's source): typesetting the long expressions takes seconds, reading them back none."""
    import hashlib
    import json
    import os
    from pathlib import Path

    from attnverify.derive import cache_root, code_version

    root = cache_root()
    key = hashlib.sha256((code_version() + Path(__file__).read_text()).encode()).hexdigest()[:16]
    path = None if root is None else root / "derivations" / f"latex-{key}.json"
    if path is not None and path.is_file():
        try:
            parts, labels = json.loads(path.read_text(encoding="utf-8"))
            return parts, [tuple(x) for x in labels]
        except (OSError, ValueError):
            pass
    parts, labels = _compute_sections()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps([parts, labels]), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    return parts, labels


PREAMBLE = [
    r"\documentclass[10pt]{article}", r"\usepackage[utf8]{inputenc}",
    r"\IfFileExists{lmodern.sty}{\usepackage[T1]{fontenc}\usepackage{lmodern}}{}",
    r"\usepackage[margin=2cm]{geometry}", r"\usepackage{amsmath}", r"\usepackage{amssymb}",
    r"\usepackage{graphicx}", r"\allowdisplaybreaks", r"\title{attnverify: derivations and audit}", r"\date{}",
]


def document(report: dict | None, *, figures: dict[str, list[str]] | None = None, fragment: bool = False) -> str:
    """The document: the derivations of every registered paper (its sections), then, when ``report`` (a JSON
    report dict) is given, the audit table, the claims ledger and the figures (``figures``: check id -> paths
    relative to the document). ``fragment``: the body only, to ``\\input`` into a paper."""
    parts = [] if fragment else [*PREAMBLE, r"\begin{document}", r"\maketitle"]
    parts += ["Every formula below was produced by SymPy from the model; none is typed in. Each equation is labelled "
              r"\texttt{eq:}\emph{section}\texttt{-}\emph{name}; the labels are listed at the end.", ""]
    sections, all_labels = derivation_sections()
    parts += sections
    if report is not None:
        parts += [r"\section{Audit}",
                  tex_text(f"Profile {report['profile']}, seed {report['seed']}, version {report['version']}."),
                  "", r"\begin{center}", r"\small", audit_table(report["checks"]), r"\end{center}"]
        if report.get("claims"):
            parts += [r"\subsection{Claims ledger}",
                      "Each claim's verdict is computed from the evidence of the checks of this run.", "",
                      r"\begin{center}", r"\small", claims_table(report["claims"]), r"\end{center}"]
        if figures:
            parts += [r"\subsection{Figures}", *figures_part(report, figures)]
    parts += [r"\section*{Equation labels}", r"\begin{itemize}\small",
              *[rf"\item \texttt{{{tex_text(name)}}} (\ref{{{name}}}): ${lab}$" for name, lab in all_labels if lab],
              r"\end{itemize}"]
    if not fragment:
        parts.append(r"\end{document}")
    return "\n".join(p for p in parts if p is not None) + "\n"
