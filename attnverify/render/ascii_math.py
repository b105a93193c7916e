r"""ASCII mathematics in plain text, typeset for LaTeX: the claims ledger's reasons until they are structured.

A verdict's reason is still a string, and most of its mathematics is ASCII (``W2(mu^beta_t, Pi#mu_0)``,
``beta^-0.54``, ``K*exp(C1*t)*sqrt(log(beta + 1))/sqrt(beta)``). :func:`latex` typesets the spans that are
unmistakably mathematics and leaves every other word as text (escaped by :func:`attnverify.render.notation.escape`):

- a span is a word, or words joined while their brackets are open (``(1/N sum_i |x_i|^2)^(1/2)``);
- it is mathematics when every name in it is a Greek letter (``beta``, ``lam``, ``eps``), a known function or
  operator (``sqrt``, ``exp``, ``log``, ``sum``, ``argmin``, ``Im``), ``inf``, a single letter, a letter with
  digits (``W2``, ``C1``) or a subscript word (``min``, ``best``), and it carries a mark of mathematics: a
  script (``^``, ``_``), a product ``*``, a push-forward ``#``, a Greek letter, ``sqrt``, or ``+-``;
- a dotted or underscored identifier (``model.check_name``, ``local_min_scan``) is never mathematics.

Texts that follow the convention (mathematics between dollars) pass through :func:`notation.latex` unchanged.
"""
from __future__ import annotations

import re

from attnverify.render import notation

__all__ = ["latex", "span_latex", "spans"]

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
         "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
         "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega"}
_ALIASES = {"lam": r"\lambda", "eps": r"\varepsilon", "epsilon": r"\varepsilon", "inf": r"\infty",
            "infty": r"\infty", "phi": r"\varphi"}
_OPERATORS = {"sqrt", "exp", "log", "ln", "sin", "cos", "tan", "max", "min", "sup", "sum", "argmin", "argmax",
              "erf", "erfc", "Im", "Re", "dim", "tr", "det", "lim"}
_SUBSCRIPT_WORDS = {"min", "max", "best", "inf", "opt", "fit", "lin", "sym", "fixed", "cl", "axis"}
_RELATIONS = {"+-": r"\pm", "<=": r"\le", ">=": r"\ge", "->": r"\to", "~": r"\sim", "!=": r"\ne"}
_TOKEN = re.compile(r"(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)|([A-Za-z]+\d*)|(\+-|<=|>=|->|!=)|(\s+)|(.)")
_NAME = re.compile(r"[A-Za-z]+\d*")


def _name_ok(name: str) -> bool:
    base = re.match(r"[A-Za-z]+", name).group(0)
    return (base in GREEK or base in _ALIASES or base in _OPERATORS or base in _SUBSCRIPT_WORDS
            or len(base) == 1)


def _is_math(span: str) -> bool:
    if re.search(r"[A-Za-z]\.[A-Za-z]|[A-Za-z]{2,}_[A-Za-z]+_|\w_[a-z]{4,}", span):
        words = set(re.findall(r"_([a-z]+)", span))
        if not words <= _SUBSCRIPT_WORDS | GREEK | set(_ALIASES) or re.search(r"[A-Za-z]\.[A-Za-z]", span):
            return False
    names = _NAME.findall(span)
    if not all(_name_ok(n) for n in names):
        return False
    marked = re.search(r"[\^_#]|\+-|[\w)]\*|\*[\w(]|\*$|\|[^|]+\|", span) or any(
        re.match(r"[A-Za-z]+", n).group(0) in GREEK | set(_ALIASES) - {"inf"} for n in names)
    return bool(marked or "sqrt(" in span)


class _Span:
    """A recursive translator of one ASCII span to LaTeX."""

    def __init__(self, text: str):
        self.toks = [m for m in _TOKEN.finditer(text)]
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        tok = self.peek()
        self.i += tok is not None
        return tok

    def atom(self) -> str:
        """The argument of a script: a signed number, a name, ``*`` or a bracketed group (brackets dropped)."""
        tok = self.take()
        if tok is None:
            return ""
        text = tok.group(0)
        if text in ("-", "+") and self.peek() is not None and self.peek().group(1):
            return text + self.number(self.take().group(0))
        if text == "(":
            return self.sequence(")")
        if text == "*":
            return "*"
        if tok.group(1):
            return self.number(text)
        if tok.group(2):
            return self.name(text)
        return notation.escape(text) if text not in "{}" else ""

    @staticmethod
    def number(text: str) -> str:
        out = notation.num(text)
        return out[1:-1] if out.startswith("$") else out

    def name(self, text: str) -> str:
        base, digits = re.fullmatch(r"([A-Za-z]+)(\d*)", text).groups()
        if base in GREEK:
            tex = "\\" + base
        elif base in _ALIASES:
            tex = _ALIASES[base]
        elif base == "sqrt":
            nxt = self.peek()
            if nxt is not None and nxt.group(0) == "(":
                self.take()
                return rf"\sqrt{{{self.sequence(')')}}}"
            tex = r"\sqrt"
        elif base in ("exp", "log", "ln", "sin", "cos", "tan", "max", "min", "sup", "sum", "lim", "dim", "det"):
            tex = "\\" + base
        elif base in _OPERATORS:
            tex = rf"\operatorname{{{base}}}"
        elif len(base) == 1:
            tex = base
        else:
            tex = rf"\mathrm{{{base}}}"
        nxt = self.peek()
        if tex.startswith("\\") and tex[-1].isalpha() and not digits and nxt is not None \
                and (nxt.group(1) or nxt.group(2)):
            tex += " "                       # a command before a letter or a number: \\log x
        return tex + (f"_{{{digits}}}" if digits else "")

    def sequence(self, stop: str | None = None) -> str:
        out: list[str] = []
        while (tok := self.peek()) is not None:
            text = tok.group(0)
            if text == stop:
                self.take()
                break
            self.take()
            if tok.group(1):
                out.append(self.number(text))
            elif tok.group(2):
                out.append(self.name(text))
            elif tok.group(3):
                out.append(" " + _RELATIONS[text] + " ")
            elif tok.group(4):
                out.append(" ")
            elif text in ("^", "_"):
                out.append(f"{text}{{{self.atom()}}}")
            elif text == "*":
                nxt = self.peek()
                operand = nxt is not None and (nxt.group(1) or nxt.group(2) or nxt.group(0) == "(")
                out.append(r"\," if operand and out else "^{*}")
            elif text == "#":
                out.append(r"_{\#}")
            elif text == "~":
                out.append(r" \sim ")
            elif text == "(":
                out.append("(" + self.sequence(")") + ")")
            elif text in "{}$%&\\":
                out.append("\\" + text if text in "{}$%&" else r"\backslash ")
            else:
                out.append(text)
        return "".join(out)


def span_latex(span: str) -> str:
    """One ASCII span of mathematics as LaTeX (without dollars)."""
    return re.sub(r"\s+", " ", _Span(span).sequence()).strip()


def _balance(s: str) -> int:
    """Brackets left open in ``s`` (an odd number of ``|`` counts as one)."""
    return sum(s.count(c) for c in "([") - sum(s.count(c) for c in ")]") + s.count("|") % 2


def _word(word: str) -> str:
    """One word: its mathematics typeset (brackets and punctuation around it kept as text), else escaped."""
    if word in _RELATIONS:
        return f"${_RELATIONS[word]}$"
    if word.rstrip(",;:.)") == "inf":
        return r"$\infty$" + notation.escape(word[3:])
    lead, core, trail = "", word, ""
    m = re.match(r"^(.*?)((?:'s)?[,;:.!?]*)$", core)
    core, trail = m.group(1), m.group(2)
    while core and core[0] in "([" and _balance(core) > 0:
        lead, core = lead + core[0], core[1:]
    while core and core[-1] in ")]" and _balance(core) < 0:
        core, trail = core[:-1], core[-1] + trail
    if core and _is_math(core) and not re.fullmatch(r"[-+]?\d.*", core):
        return notation.escape(lead) + f"${span_latex(core)}$" + notation.escape(trail)
    return notation.escape(word)


def _plain(text: str) -> str:
    """Plain text (no dollars) with its ASCII mathematics typeset."""
    parts = re.split(r"(\s+)", text)
    out: list[str] = []
    i = 0
    while i < len(parts):
        word = parts[i]
        if word.isspace() or not word:
            out.append(word)
            i += 1
            continue
        j, span = i, word
        while _balance(span) > 0 and j + 2 < len(parts) and j - i < 24:
            j += 2
            span = "".join(parts[i:j + 1])
        m = re.match(r"^(.*?)([,;:.]*)$", span)
        if j > i and _balance(m.group(1)) == 0 and _is_math(m.group(1)):
            out.append(f"${span_latex(m.group(1))}$" + notation.escape(m.group(2)))
            i = j + 1
            continue
        out.append(_word(word))
        i += 1
    return "".join(out)


def latex(text: str) -> str:
    """A ledger text as LaTeX: mathematics between dollars passes through, ASCII mathematics in the words is
    typeset, the other words are escaped."""
    out = []
    for is_math, piece in notation.split(text):
        out.append(f"${piece}$" if is_math else _plain(piece))
    return "".join(out)


def spans(text: str) -> list[str]:
    """The ASCII mathematics in a text, span by span (what :func:`latex` would typeset): empty for words alone and
    for mathematics already between dollars. Used to find reasons still written as plain strings."""
    return re.findall(r"\$([^$]*)\$", "".join(_plain(p) for m, p in notation.split(text) if not m))
