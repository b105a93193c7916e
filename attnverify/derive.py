"""The derivations the CLI prints and the LaTeX document typesets, by model name, with a persistent cache.

The SymPy derivations take 5-20 s. They depend only on the code of ``theory/`` and on the SymPy version, so
their results are kept in the derivation cache (:mod:`attnverify.cache`: where it is, and the ownership rule
under which its pickles are loaded), keyed by a SHA-256 of the theory sources, the SymPy and Python versions.
Set ``ATTNVERIFY_NO_CACHE=1`` to bypass it. A cache that cannot be read or written is ignored (it only costs
time); the derivation is then recomputed.
"""
from __future__ import annotations

import hashlib
import importlib
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path

from attnverify.checks.framework import InputError

MODELS = {
    "signal": ("attnverify.theory.signal_recovery", "Paper A: signal-subspace recovery by a learned softmax query"),
    "meanfield": ("attnverify.theory.mean_field", "Paper B: mean-field transformers at low temperature"),
}
SIGNS = ("fixed", "symmetric")


# ----------------------------------------------------------------------------------------------
# the persistent cache
# ----------------------------------------------------------------------------------------------
def cache_root() -> Path | None:
    """The cache directory when caching is on and the directory may be trusted (:mod:`attnverify.cache`), or None."""
    from attnverify import cache

    return cache.trusted_root()


def code_version() -> str:
    """SHA-256 (16 hex digits) of the theory package's sources and this module (which renders the text), the
    SymPy and the Python version."""
    from attnverify import theory

    h = hashlib.sha256(f"sympy {metadata.version('sympy')} python {sys.version_info[:2]}".encode())
    for path in [*sorted(Path(theory.__file__).parent.glob("*.py")), Path(__file__)]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _cache_name(model: str, sign: str) -> str:
    return f"{model}-{sign}-{code_version()}"


def _compute(model: str, sign: str) -> list:
    module = importlib.import_module(MODELS[model][0])
    return module.derivation(sign) if model == "signal" else module.derivation()


def derivation(model: str, sign: str = "fixed") -> list:
    """The list of :class:`attnverify.theory.derivation.Step` for ``model`` (``signal`` or ``meanfield``); ``sign`` is
    Paper A's sign model (``fixed`` or ``symmetric``). Served from the persistent cache when warm."""
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    if sign not in SIGNS:
        raise InputError(f"unknown sign model {sign!r} (choose from {', '.join(SIGNS)})")
    if model == "meanfield":
        sign = "fixed"   # Paper B has no sign option: one derivation
    from attnverify import cache

    name = _cache_name(model, sign) + ".pickle"
    hit, steps = cache.load(name)
    if hit:
        return list(steps)
    steps = _compute(model, sign)
    cache.save(name, tuple(steps))
    return steps


# ----------------------------------------------------------------------------------------------
# text rendering
# ----------------------------------------------------------------------------------------------
_TEX_WORDS = {
    r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ", r"\varepsilon": "ε", r"\epsilon": "ε",
    r"\eta": "η", r"\theta": "θ", r"\lambda": "λ", r"\mu": "μ", r"\xi": "ξ", r"\pi": "π", r"\rho": "ρ",
    r"\sigma": "σ", r"\tau": "τ", r"\phi": "φ", r"\varphi": "φ", r"\psi": "ψ", r"\omega": "ω", r"\Pi": "Π",
    r"\Sigma": "Σ", r"\Delta": "Δ", r"\Gamma": "Γ", r"\infty": "∞", r"\parallel": "∥", r"\perp": "⊥",
    r"\nabla": "∇", r"\partial": "∂", r"\langle": "⟨", r"\rangle": "⟩", r"\le": "≤", r"\ge": "≥",
    r"\cdot": "·", r"\log": "log", r"\lim": "lim", r"\min": "min", r"\max": "max", r"\dim": "dim",
    r"\exp": "exp", r"\to": "→", r"\mathbb{E}": "𝔼",
}
_SUB = str.maketrans("0123456789+-=()aeijkmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()*n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾*ⁿ")


def _script(text: str, table: dict, mark: str) -> str:
    plain = text.translate(table)
    return plain if all(ch in table.values() or ch == "*" for ch in plain if ch not in "⁾⁽") and \
        not any(ch.isascii() and ch.isalnum() for ch in plain) else (f"{mark}{text}" if text.isalnum() or len(text) == 1 else
                                                                    f"{mark}({text})")


def label_text(label: str) -> str:
    """A step's LaTeX label as Unicode text: ``J_{\\mathrm{fixed}}(\\rho)`` -> ``J_fixed(ρ)``."""
    s = label
    s = re.sub(r"\\(?:mathrm|rm|text)\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\{\\rm\s+([^{}]*)\}", r"\1", s)
    s = re.sub(r"\\dot\s*([A-Za-z])", "\\1\u0307", s)
    s = s.replace(r"\,", " ").replace(r"\;", " ").replace(r"\!", "")
    for tex in sorted(_TEX_WORDS, key=len, reverse=True):
        s = re.sub(re.escape(tex) + r"(?![A-Za-z])", _TEX_WORDS[tex], s)
    s = re.sub(r"_\{([^{}]*)\}", lambda m: _script(m.group(1), _SUB, "_"), s)
    s = re.sub(r"_([^\s{}\\(])", lambda m: _script(m.group(1), _SUB, "_"), s)
    s = re.sub(r"\^\{([^{}]*)\}", lambda m: _script(m.group(1), _SUP, "^"), s)
    s = re.sub(r"\^([^\s{}\\(])", lambda m: _script(m.group(1), _SUP, "^"), s)
    return s.replace("{", "").replace("}", "").replace("\\", "").strip()


def terminal_width() -> int:
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def pretty_lines(expr, width: int) -> list[str]:
    """``expr`` in Unicode pretty print within ``width`` columns where SymPy's own line wrapping cannot: a sum
    is printed term by term, a product factor by factor (each block on its own lines, with its operator)."""
    import sympy as sp

    rows = sp.pretty(expr, use_unicode=True, wrap_line=False).splitlines()
    if max((len(r) for r in rows), default=0) <= width:
        return rows
    if not isinstance(expr, (sp.Add, sp.Mul)) or width < 30:
        return sp.pretty(expr, use_unicode=True, wrap_line=True, num_columns=width).splitlines()
    def fits(e) -> bool:
        return max((len(r) for r in sp.pretty(e, use_unicode=True, wrap_line=False).splitlines()), default=0) <= width

    def groups(items: list, join) -> list:
        """Consecutive items joined while the joined block fits the width."""
        out, cur = [], []
        for it in items:
            if cur and fits(join(*cur, it)):
                cur.append(it)
            else:
                if cur:
                    out.append(cur)
                cur = [it]
        return out + ([cur] if cur else [])

    out: list[str] = []
    if isinstance(expr, sp.Add):
        terms = [(t.could_extract_minus_sign(), t) for t in expr.as_ordered_terms()]
        first = True
        for neg, t in terms:
            body = -t if neg else t
            if not first or neg:
                out.append("−" if neg else "+")
            first = False
            out += ["  " + r for r in pretty_lines(body, width - 2)]
        # merge consecutive small terms back into one block
        return _merge_small(out, expr, width)
    num, den = sp.fraction(expr)
    for i, grp in enumerate(groups(list(sp.Mul.make_args(num)), lambda *a: sp.Mul(*a, evaluate=False))):
        if i:
            out.append("×")
        block = sp.Mul(*grp, evaluate=False) if len(grp) > 1 else grp[0]
        out += ["  " + r for r in pretty_lines(block, width - 2)]
    if den != 1:
        out.append("÷")
        out += ["  " + r for r in pretty_lines(den, width - 2)]
    return out


def _merge_small(lines: list[str], expr, width: int) -> list[str]:
    """Print a sum by blocks of consecutive terms that fit the width together (a term that does not fit alone is
    broken further by :func:`pretty_lines`)."""
    import sympy as sp

    terms = expr.as_ordered_terms()
    out: list[str] = []
    cur: list = []

    def width_of(e) -> int:
        return max((len(r) for r in sp.pretty(e, use_unicode=True, wrap_line=False).splitlines()), default=0)

    def flush() -> None:
        if cur:
            block = sp.Add(*cur, evaluate=False)
            neg = block.could_extract_minus_sign() and len(cur) == 1
            if out or neg:
                out.append("−" if neg else "+")
            shown = -block if neg else block
            out.extend("  " + r for r in (sp.pretty(shown, use_unicode=True, wrap_line=False).splitlines()
                                          if width_of(shown) <= width - 2 else pretty_lines(shown, width - 2)))
            cur.clear()

    for t in terms:
        if cur and width_of(sp.Add(*cur, t, evaluate=False)) > width - 2:
            flush()
        cur.append(t)
    flush()
    return out


def _render_steps(title: str, steps: list, *, latex: bool, width: int) -> str:
    lines = [title, ""]
    for i, step in enumerate(steps, 1):
        lines += _wrap(f"{i}. {step.statement}", width, "")
        if latex:
            lines.append("   " + step.latex())
        else:
            if step.label:
                lines.append(f"   {label_text(step.label)} =")
            lines += ["      " + row for row in pretty_lines(step.result, max(40, width - 6))]
        lines += _wrap(f"because: {step.reason}", width, "   ")
        lines.append("")
    return "\n".join(lines)


def render(model: str, latex: bool = False, *, sign: str = "fixed", width: int | None = None,
           values: dict | None = None) -> str:
    """The derivation as text: each step's statement, its SymPy result (Unicode pretty print wrapped to
    ``width`` columns, or LaTeX), and why it holds. ``values`` (Paper A) substitutes model parameters.
    The text itself is cached too (keyed by the options), so a warm call imports no SymPy."""
    width = width or terminal_width()
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    from attnverify import cache

    opts = repr((model, sign, width, bool(latex), sorted((values or {}).items())))
    text_name = _cache_name(model, sign) + "-" + hashlib.sha256(opts.encode()).hexdigest()[:12] + ".txt"
    cached = cache.read_text(text_name)
    if cached is not None:
        return cached
    steps = derivation(model, sign)
    title = MODELS[model][1] + (f" ({sign}-sign model)" if model == "signal" else "")
    if values:
        from attnverify import symbols as S

        steps = [type(s)(s.statement, S.subs(s.result, **values), s.reason, s.label) for s in steps]
        title += "; at " + ", ".join(f"{k} = {v}" for k, v in values.items())
    text = _render_steps(title, steps, latex=latex, width=width)
    cache.write_text(text_name, text)
    return text


# ----------------------------------------------------------------------------------------------
# Paper B for the user's matrices
# ----------------------------------------------------------------------------------------------
def meanfield_for(B, V) -> list:
    """Steps for concrete matrices B = QᵀK and V: A = V Bᵀ, its spectrum, the projector P_E and Π(x), the
    Jacobian and Lyapunov rates, and the Theorem 1 bound with c set to the derived rate."""
    import sympy as sp

    from attnverify.theory import mean_field as M
    from attnverify.theory.derivation import Step

    s = M.spectrum(B, V)          # validates the assumptions (ValueError names the violated one)
    A = s.A
    top = max((ev for ev, _, _ in A.eigenvects()), key=lambda e: float(e))
    vecs = next(vs for ev, _, vs in A.eigenvects() if sp.simplify(ev - top) == 0)
    U = sp.Matrix.hstack(*sp.GramSchmidt(vecs, orthonormal=True))
    P = sp.simplify(U * U.T)
    x = sp.Matrix(sp.symbols(f"x1:{s.d + 1}", real=True))
    Pi = sp.simplify(P * x / sp.sqrt((x.T * P * x)[0]))
    steps = [
        Step("A = V Bᵀ for the given matrices (symmetric, as the model assumes)", A, "matrix product", "A"),
        Step("Distinct eigenvalues of A, descending (multiplicities " + ", ".join(map(str, s.multiplicity)) + ")",
             sp.Matrix([sp.Float(float(m), 12) for m in s.mu]), "exact characteristic polynomial, real roots",
             r"\mu"),
        Step(f"Orthogonal projector onto the dominant eigenspace E (dim E = {s.dim_E})", P,
             "orthonormal eigenvectors of the top eigenvalue (Gram-Schmidt)", r"P_E"),
        Step("Projection map Π(x) = P_E x/|P_E x| (the τ → ∞ limit of the closed-form flow)", Pi,
             "|P_E x|² = xᵀ P_E x for an orthogonal projector", r"\Pi(x)"),
    ]
    rate = None
    if s.dim_E == 1:
        rate = M.convergence_rate(B, V)
        steps.append(Step("Convergence rate at the attracting fixed point x* in E: c = γ/|Bᵀx*| (Jacobian)",
                          sp.Float(rate, 12), f"gap γ = {s.gap:.6g}; tangent Jacobian eigenvalues of X_∞ at x*",
                          "c"))
    lyap = M.lyapunov_rate(B, V)
    steps.append(Step("Global (Lyapunov) rate bound γ/σ_max(B)", sp.Float(lyap, 12),
                      f"σ_max(B) = {s.sigma_max:.6g}", r"c_{\rm Lyap}"))
    cb = M.concentration_bound()
    cval = sp.Float(rate if rate is not None else lyap, 12)
    steps += [
        Step("Theorem 1 bound with c set to this rate (K and C₁ stay symbols)", cb.b.subs(M.c, cval),
             "model statement", r"b(\beta,t)"),
        Step("Its optimal time", cb.t_star.subs(M.c, cval), "sympy.solve of db/dt = 0", r"t^*(\beta)"),
    ]
    return steps


def render_meanfield_for(B, V, *, latex: bool = False, width: int | None = None) -> str:
    import sympy as sp

    title = "Paper B for B = QᵀK = " + sp.sstr(sp.Matrix(B).tolist()) + ", V = " + sp.sstr(sp.Matrix(V).tolist())
    return _render_steps(title, meanfield_for(B, V), latex=latex, width=width or terminal_width())
