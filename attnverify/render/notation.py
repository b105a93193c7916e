r"""One notation for every text that mixes words and mathematics.

The convention (project plan, "Typesetting convention"): a text writes its mathematics inline between dollar signs,
in LaTeX -- ``"the sup error decays like $\beta^{-0.88}$"`` -- and outside the dollars it is plain words and
numbers. ``\$`` is a literal dollar sign. Nothing outside the dollars is ever read as mathematics: a text that
does not follow the convention yet (``"beta^-0.88"``) comes out as the plain text it is.

Three renderings, one table (:data:`SYMBOLS`, LaTeX command -> Unicode character):

- :func:`latex` -- for a LaTeX document: the mathematics passes through, the plain text is escaped (special
  characters, the Unicode symbols of the table as ``$\rho$``, numbers in exponent form as
  ``$6.33\times10^{-7}$``, :func:`num`).
- :func:`unicode` -- for the terminal and Markdown: the mathematics converted to Unicode by :func:`tex_to_unicode`
  (``$\mu^\infty_t$`` -> ``μ^∞ₜ``), the plain text unchanged.
- :func:`mathtext` -- for matplotlib: the mathematics stays between dollars (the few commands mathtext lacks are
  rewritten; what it still cannot parse is given as Unicode), the plain text unchanged.

:func:`split` gives the pieces; :func:`tex_to_unicode` converts a bare LaTeX formula (a derivation step's label).
"""
from __future__ import annotations

import functools
import math
import re

__all__ = ["SYMBOLS", "split", "latex", "unicode", "mathtext", "tex_to_unicode", "escape", "num", "math_span"]

# ------------------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------------------
#: LaTeX command -> the Unicode character that stands for it (the terminal, Markdown, and the way back: a Unicode
#: symbol in plain text is typeset in LaTeX as the first command listed for it).
SYMBOLS: dict[str, str] = {
    # Greek
    r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ", r"\varepsilon": "ε", r"\epsilon": "ε",
    r"\zeta": "ζ", r"\eta": "η", r"\theta": "θ", r"\vartheta": "ϑ", r"\iota": "ι", r"\kappa": "κ",
    r"\lambda": "λ", r"\mu": "μ", r"\nu": "ν", r"\xi": "ξ", r"\pi": "π", r"\rho": "ρ", r"\varrho": "ϱ",
    r"\sigma": "σ", r"\tau": "τ", r"\upsilon": "υ", r"\varphi": "φ", r"\phi": "φ", r"\chi": "χ", r"\psi": "ψ",
    r"\omega": "ω", r"\Gamma": "Γ", r"\Delta": "Δ", r"\Theta": "Θ", r"\Lambda": "Λ", r"\Xi": "Ξ", r"\Pi": "Π",
    r"\Sigma": "Σ", r"\Phi": "Φ", r"\Psi": "Ψ", r"\Omega": "Ω",
    # relations and arrows
    r"\le": "≤", r"\leq": "≤", r"\ge": "≥", r"\geq": "≥", r"\ne": "≠", r"\neq": "≠", r"\approx": "≈",
    r"\sim": "∼", r"\simeq": "≃", r"\equiv": "≡", r"\propto": "∝", r"\ll": "≪", r"\gg": "≫", r"\lesssim": "≲",
    r"\gtrsim": "≳", r"\to": "→", r"\rightarrow": "→", r"\leftarrow": "←", r"\mapsto": "↦", r"\Rightarrow": "⇒",
    r"\iff": "⇔", r"\in": "∈", r"\notin": "∉", r"\subset": "⊂", r"\subseteq": "⊆", r"\perp": "⊥",
    r"\parallel": "∥", r"\mid": "|",
    # operators and symbols
    r"\pm": "±", r"\mp": "∓", r"\times": "×", r"\cdot": "·", r"\circ": "∘", r"\otimes": "⊗", r"\nabla": "∇",
    r"\partial": "∂", r"\sum": "∑", r"\prod": "∏", r"\int": "∫", r"\infty": "∞", r"\emptyset": "∅",
    r"\cup": "∪", r"\cap": "∩", r"\forall": "∀", r"\exists": "∃", r"\langle": "⟨", r"\rangle": "⟩",
    r"\lfloor": "⌊", r"\rfloor": "⌋", r"\lceil": "⌈", r"\rceil": "⌉", r"\|": "‖", r"\Vert": "‖", r"\lVert": "‖",
    r"\rVert": "‖", r"\sharp": "♯", r"\top": "⊤", r"\dagger": "†", r"\ast": "∗", r"\star": "⋆", r"\ldots": "…",
    r"\dots": "…", r"\cdots": "⋯", r"\prime": "′", r"\ell": "ℓ", r"\surd": "√",
}
#: operator names printed as words (``\log x`` -> ``log x``)
_FUNCTIONS = ("log", "ln", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "min", "max", "sup",
              "inf", "lim", "liminf", "limsup", "dim", "det", "arg", "ker", "deg", "Pr", "erf")
_BLACKBOARD = {"E": "𝔼", "R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "P": "ℙ"}
_CALLIGRAPHIC = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "𝒜ℬ𝒞𝒟ℰℱ𝒢ℋℐ𝒥𝒦ℒℳ𝒩𝒪𝒫𝒬ℛ𝒮𝒯𝒰𝒱𝒲𝒳𝒴𝒵"))
_ACCENTS = {"dot": "\u0307", "ddot": "\u0308", "bar": "\u0304", "overline": "\u0305", "hat": "\u0302",
            "widehat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "vec": "\u20d7", "check": "\u030c"}
_STYLE = ("mathrm", "text", "textrm", "textnormal", "mathit", "mathbf", "mathsf", "mathtt", "operatorname",
          "textit", "textbf", "emph", "boldsymbol", "mathnormal", "mathcal", "mathscr", "mathfrak")
_DROP = ("left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
         "Biggl", "Biggr", "displaystyle", "textstyle", "scriptstyle", "limits", "nolimits", "rm", "it", "bf")
_SPACES = {",": " ", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": " ", "!": "", "enspace": " "}
_ESCAPED = {"{": "{", "}": "}", "$": "$", "%": "%", "&": "&", "_": "_", "#": "#"}

_OPENING = (r"\lVert", r"\langle", r"\lfloor", r"\lceil")      # delimiters: no space inside them
_CLOSING = (r"\rVert", r"\rangle", r"\rfloor", r"\rceil")
_SUP = dict(zip("0123456789+-−=()niT⊤*′", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀᵀ*′"))
_SUB = dict(zip("0123456789+-−=()aeijkmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑᵢⱼₖₘₙₒₚᵣₛₜᵤᵥₓ"))
_RAISED = set("*′ᵀ")        # raised without a caret: t*, J′, Aᵀ


# ------------------------------------------------------------------------------------------------------------
# splitting a text into its words and its mathematics
# ------------------------------------------------------------------------------------------------------------
def split(text: str) -> list[tuple[bool, str]]:
    r"""``text`` as ``(is_math, piece)`` pairs, in order: the pieces between unescaped dollar signs are mathematics
    (their LaTeX source, without the dollars); ``\$`` in the words is a literal dollar sign. A text whose dollars
    do not pair up is all words (it does not follow the convention, and nothing in it is guessed)."""
    text = str(text)
    marks = [m.start() for m in re.finditer(r"(?<!\\)\$", text)]
    if len(marks) % 2:
        return [(False, text.replace(r"\$", "$"))] if text else []
    out: list[tuple[bool, str]] = []
    pos = 0
    for a, b in zip(marks[::2], marks[1::2]):
        if a > pos:
            out.append((False, text[pos:a].replace(r"\$", "$")))
        out.append((True, text[a + 1:b]))
        pos = b + 1
    if pos < len(text):
        out.append((False, text[pos:].replace(r"\$", "$")))
    return out


def math_span(tex: str) -> str:
    """A LaTeX formula as a convention span: ``$tex$`` (for building texts from SymPy output: ``sp.latex(x)``)."""
    return f"${tex}$"


# ------------------------------------------------------------------------------------------------------------
# LaTeX -> Unicode
# ------------------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)


def _tokens(tex: str) -> list[str]:
    return _TOKEN.findall(tex)


def _atomic(s: str) -> bool:
    """Whether ``s`` reads as one unit next to ``/`` or a script (no parentheses needed)."""
    if len(s) <= 1 or re.fullmatch(r"[\w.′*√⁰-⁹₀-₉ᵀ\u0300-\u036f]+", s):
        return True
    head = re.match(r"[^\s()\[\]⟨⟩{}+\-−/=]*", s).group(0)        # a name before a bracketed group: f(x), max(a, b)
    rest = s[len(head):]
    if rest and rest[0] in "([⟨{" and rest[-1] in ")]⟩}":
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch in "([⟨{"
            depth -= ch in ")]⟩}"
            if depth == 0 and i < len(rest) - 1:
                return False
        return True
    return False


def _script(body: str, sup: bool) -> str:
    table = _SUP if sup else _SUB
    body = body.strip()
    if not body:
        return ""
    if all(ch in table for ch in body):
        return "".join(table[ch] for ch in body)
    if sup and body in _RAISED:
        return body
    mark = "^" if sup else "_"
    if len(body) == 1 or (not sup and body.isalnum()):
        return mark + body
    return f"{mark}({body})"


class _Reader:
    """A recursive reader of LaTeX math tokens producing Unicode text."""

    def __init__(self, tex: str):
        self.toks = _tokens(tex)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str | None:
        tok = self.peek()
        self.i += tok is not None
        return tok

    def skip_space(self) -> None:
        while (tok := self.peek()) is not None and tok.isspace():
            self.i += 1

    def group(self) -> str:
        """The next argument: a braced group or one token (spaces before it skipped)."""
        self.skip_space()
        tok = self.peek()
        if tok is None:
            return ""
        if tok == "{":
            self.i += 1
            return self.sequence(stop="}")
        if tok.startswith("\\"):
            return self.command(self.take())
        self.i += 1
        return tok

    def sequence(self, stop: str | None = None) -> str:
        out: list[str] = []
        while (tok := self.peek()) is not None:
            if tok == stop:
                self.i += 1
                break
            self.i += 1
            if tok == "{":
                out.append(self.sequence(stop="}"))
            elif tok in "^_" and len(tok) == 1:
                out.append(_script(self.group(), tok == "^"))
            elif tok.startswith("\\"):
                word = self.command(tok)
                if tok in _OPENING:                # the space that ends the command is not text: ‖A‖, ⟨q, x⟩
                    self.skip_space()
                elif tok in _CLOSING:              # nor a space before a closing delimiter: ⌊n⌋, not ⌊n ⌋
                    while out and (not out[-1] or out[-1].isspace()):
                        out.pop()
                if self.operator_word(tok) and out and out[-1] and (out[-1][-1].isalnum() or out[-1][-1] in ")]}⟩′*"):
                    word = " " + word          # an operator name is set apart from what precedes it: 𝔼 erf(x)
                out.append(word)
            elif tok.isspace():
                out.append(" ")
            elif tok == "~":
                out.append(" ")
            elif tok == "'":
                out.append("′")
            else:
                out.append(tok)
        return "".join(out)

    @staticmethod
    def operator_word(tok: str) -> bool:
        return tok[1:] in _FUNCTIONS or tok[1:] == "operatorname"

    def command(self, tok: str) -> str:
        name = tok[1:]
        if name in ("frac", "dfrac", "tfrac", "cfrac"):
            a, b = self.group(), self.group()
            return f"{a if _atomic(a) else f'({a})'}/{b if _atomic(b) else f'({b})'}"
        if name == "sqrt":
            self.skip_space()
            index = ""
            if self.peek() == "[":
                self.i += 1
                parts = []
                while (t := self.take()) not in (None, "]"):
                    parts.append(t)
                index = "".join(parts)
            a = self.group()
            root = {"3": "∛", "4": "∜"}.get(index, "√")
            return root + (a if _atomic(a) else f"({a})")
        if name == "mathbb":
            a = self.group()
            return "".join(_BLACKBOARD.get(ch, ch) for ch in a)
        if name == "mathcal":
            a = self.group()
            return "".join(_CALLIGRAPHIC.get(ch, ch) for ch in a)
        if name == "operatorname":
            word = self.group()
            nxt = self.peek()
            return word + ("" if nxt is None or nxt in ("(", "[", "^", "_", "{", "\\left") or nxt.isspace() else " ")
        if name in _STYLE:
            return self.group()
        if name in _ACCENTS:
            a = self.group()
            return a + _ACCENTS[name] if a else ""
        if name in _DROP:
            if name in ("left", "right", "middle") and self.peek() == ".":
                self.i += 1
            return ""
        if name in _SPACES:
            return _SPACES[name]
        if name in _ESCAPED:
            return _ESCAPED[name]
        if "\\" + name in SYMBOLS:
            return SYMBOLS["\\" + name]
        if name in _FUNCTIONS:          # an operator name: a space before its argument unless it is bracketed
            nxt = self.peek()
            return name + ("" if nxt is None or nxt in ("(", "[", "^", "_", "{", "\\{", "\\left") else " ")
        return name


@functools.lru_cache(maxsize=4096)
def tex_to_unicode(tex: str) -> str:
    r"""A LaTeX formula as Unicode text through :data:`SYMBOLS`: ``J_{\mathrm{fixed}}(\rho)`` -> ``J_fixed(ρ)``,
    ``\mu^\infty_t`` -> ``μ^∞ₜ``, ``\frac{dL}{d\tau}`` -> ``dL/dτ``, ``\mathbb{E}\,e^{\beta g}`` -> ``𝔼 e^(βg)``.
    Sub- and superscripts become Unicode scripts where every character has one, else ``_x`` / ``^(...)``."""
    text = re.sub(r" {2,}", " ", _Reader(tex).sequence())
    return re.sub(r" +([)\]⟩}])", r"\1", re.sub(r"([(\[⟨{]) +", r"\1", text)).strip()


def unicode(text: str) -> str:
    """A convention text for the terminal or Markdown: its mathematics as Unicode (:func:`tex_to_unicode`), its
    words unchanged."""
    return "".join(tex_to_unicode(piece) if is_math else piece for is_math, piece in split(text))


# ------------------------------------------------------------------------------------------------------------
# text -> LaTeX
# ------------------------------------------------------------------------------------------------------------
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}"}
_UNICODE_TEX: dict[str, str] = {}
for _cmd, _ch in SYMBOLS.items():
    _UNICODE_TEX.setdefault(_ch, _cmd)
_UNICODE_TEX.update({"−": "-", "ε": r"\varepsilon", "φ": r"\varphi", "⊤": r"^{\top}", "ᵀ": r"^{\top}",
                     "𝔼": r"\mathbb{E}", "ℝ": r"\mathbb{R}", "∥": r"\parallel", "′": "'",
                     **{v: "^{%s}" % k for k, v in _SUP.items() if k.isdigit() or k in "+-n"},
                     **{v: "_{%s}" % k for k, v in _SUB.items() if k.isalnum() or k in "+-"}})
del _cmd, _ch
# a number in exponent form, standing alone (not part of a word or an identifier)
_EXP_NUMBER = re.compile(r"(?<![\w.])([-+]?)(\d+(?:\.\d*)?|\.\d+)[eE]([-+]?\d+)(?![\w.])")


def num(x: float | int | str, digits: int = 4) -> str:
    r"""A number as LaTeX, ``\num``-style (``siunitx`` is not in texlive-latex-base): ``6.33e-07`` ->
    ``$6.33\times10^{-7}$``, ``-0.5`` -> ``$-0.5$``, ``1e-05`` -> ``$10^{-5}$``, ``inf`` -> ``$\infty$``. A float
    keeps ``digits`` significant digits; a string is taken as written."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, str):
        text = x.strip()
    elif isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("$\\infty$" if x > 0 else "$-\\infty$")
    else:
        text = f"{x:.{digits}g}" if isinstance(x, float) else str(x)
    m = re.fullmatch(r"([-+]?)(\d+(?:\.\d*)?|\.\d+)(?:[eE]([-+]?\d+))?", text)
    if m is None:
        return escape(text)
    sign, mant, exp = m.groups()
    sign = "-" if sign == "-" else ""
    if exp is None:
        return f"${sign}{mant}$" if sign else mant
    e = int(exp)
    body = f"10^{{{e}}}" if mant in ("1", "1.", "1.0") else f"{mant}\\times10^{{{e}}}"
    return f"${sign}{body}$"


def _escape_pieces(text: str) -> list[tuple[bool, str]]:
    """Plain text as LaTeX pieces ``(is_math, source)``: special characters escaped, the Unicode symbols of the
    table in math, numbers in exponent form by :func:`num`, Latin letters kept (UTF-8 input with T1 fonts), any
    other character (which LaTeX could not typeset) as ``?``."""
    out: list[tuple[bool, str]] = []

    def add_text(s: str) -> None:
        for ch in s:
            if ch in _SPECIAL:
                out.append((False, _SPECIAL[ch]))
            elif ch in _UNICODE_TEX:
                tex = _UNICODE_TEX[ch]
                out.append((False, "-") if tex == "-" else (True, tex))
            elif ord(ch) < 0x180:
                out.append((False, ch))
            else:
                out.append((False, "?"))

    pos = 0
    for m in _EXP_NUMBER.finditer(text):
        add_text(text[pos:m.start()])
        out.append((True, num(m.group(0))[1:-1]))
        pos = m.end()
    add_text(text[pos:])
    return out


def _join(pieces: list[tuple[bool, str]]) -> str:
    """Pieces as LaTeX, adjacent mathematics in one ``$...$``."""
    out: list[str] = []
    math_buf: list[str] = []

    def flush() -> None:
        if math_buf:
            out.append("$" + " ".join(math_buf) + "$")
            math_buf.clear()

    for is_math, s in pieces:
        if is_math:
            if s.strip():
                math_buf.append(s)
        else:
            flush()
            out.append(s)
    flush()
    return "".join(out)


def escape(text: str) -> str:
    """Plain text (no mathematics in it) as LaTeX text: special characters escaped (``_`` -> ``\\_``), Unicode
    symbols of the table as inline math (``ρ`` -> ``$\\rho$``), numbers in exponent form by :func:`num`."""
    return _join(_escape_pieces(str(text)))


def latex(text: str) -> str:
    r"""A convention text as LaTeX: the mathematics between dollars passes through unchanged, the words are
    escaped (:func:`escape`). ``"decays like $\beta^{-0.88}$ at 6.33e-07"`` ->
    ``decays like $\beta^{-0.88}$ at $6.33\times10^{-7}$``; ``"beta^-0.88"`` -> ``beta\textasciicircum{}-0.88``."""
    pieces: list[tuple[bool, str]] = []
    for is_math, piece in split(text):
        if is_math:
            pieces.append((True, piece))
        else:
            pieces += _escape_pieces(piece)
    return _join(pieces)


# ------------------------------------------------------------------------------------------------------------
# matplotlib mathtext
# ------------------------------------------------------------------------------------------------------------
_MATHTEXT_REWRITES = ((re.compile(r"\\[dtc]frac(?![A-Za-z])"), r"\\frac"),
                      (re.compile(r"\\le(?![A-Za-z])"), r"\\leq"), (re.compile(r"\\ge(?![A-Za-z])"), r"\\geq"),
                      (re.compile(r"\\[lr]Vert(?![A-Za-z])"), r"\\Vert"),
                      (re.compile(r"\\(?:big|Big|bigg|Bigg)[lr]?(?![A-Za-z])\s*"), ""))


@functools.lru_cache(maxsize=1)
def _mathtext_parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


@functools.lru_cache(maxsize=1024)
def _mathtext_math(tex: str) -> tuple[bool, str]:
    """``tex`` as mathtext (True, source) when matplotlib parses it (after the rewrites), else (False, Unicode)."""
    for pattern, repl in _MATHTEXT_REWRITES:
        tex = pattern.sub(repl, tex)
    try:
        _mathtext_parser().parse(f"${tex}$")
    except Exception:  # noqa: BLE001 -- matplotlib raises ValueError for what its mathtext cannot parse
        return False, tex_to_unicode(tex)
    return True, tex


def mathtext(text: str) -> str:
    """A convention text for matplotlib: the mathematics as mathtext between dollars (what mathtext cannot parse
    as Unicode text), the words unchanged (a literal dollar as ``\\$``)."""
    out = []
    for is_math, piece in split(text):
        if is_math:
            ok, body = _mathtext_math(piece)
            out.append(f"${body}$" if ok else body.replace("$", r"\$"))
        else:
            out.append(piece.replace("$", r"\$"))
    return "".join(out)
