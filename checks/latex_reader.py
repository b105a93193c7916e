r"""A stated form written in LaTeX (``stated_latex``), read into SymPy syntax for :func:`~attnverify.checks.stated.
parse_expression`, which then applies every guard a form in SymPy syntax gets.

Why not SymPy's own LaTeX parser: measured on SymPy 1.14, its Lark backend refuses what :func:`sympy.latex` prints
(``\sigma^{2}``, ``\beta \sigma``, ``x^{2} y^{2}``: an implicit product after a power or between commands), reads
``\tanh(x)`` as an ambiguous tree (``tan(h x)`` or ``tanh(x)``) and has no ``\operatorname{erf}`` or
``\Gamma``; its ANTLR backend garbles ``\operatorname{...}`` and refuses ``\left| x \right|``. So a derived
formula would not round-trip. This reader reads the notation :func:`sympy.latex` writes, and what a paper writes
for the same things:

* sums and differences; products written ``\cdot``, ``\times``, ``*`` or by juxtaposition (``2 \beta \sigma^{2}``);
  quotients ``/``, ``\frac{a}{b}`` (``\dfrac``, ``\tfrac``); powers ``x^{2}``, ``x^2``; ``\sqrt{x}``,
  ``\sqrt[n]{x}``; ``e^{x}`` (and ``\exp``) as the exponential, ``\pi``;
* brackets ``( )``, ``[ ]``, ``\{ \}`` and groups ``{ }``, with or without ``\left``/``\right`` (``\big`` ...);
  ``\left| x \right|``, ``\lvert x \rvert`` and ``|x|`` as the absolute value;
* Bessel functions as SymPy writes them: ``I_{\nu}(x)`` and ``J_{\nu}(x)`` (``besseli``, ``besselj``);
* functions ``\sin`` ... ``\tanh``, ``\arcsin`` ... ``\arctan`` (as ``asin`` ... ``atan``), ``\log`` and ``\ln``
  (natural), ``\max``, ``\min``, ``\Gamma``, and ``\operatorname{name}`` (or ``\mathrm{name}``) for any
  function with a certified evaluation (``erf``, ``asinh`` ...); ``\sin^{2}(x)`` is ``sin(x)**2``;
* symbols: a claim's symbols are read in their LaTeX spelling (SymPy's: ``\beta``, ``x_{\xi}``, ``lam``); a
  symbol whose name abbreviates a Greek letter is also read from the letter (``\lambda`` for ``lam``,
  ``\epsilon`` or ``\varepsilon`` for ``eps``). Letters are matched longest first, so ``lam`` is the symbol, not
  ``l a m``.

Anything else (a command it does not know, ``\sum``, ``=``) is refused with a :class:`LatexError` that says what to
write instead.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = ["LatexError", "LatexText", "to_sympy_text"]


class LatexError(ValueError):
    """A LaTeX form this reader cannot read; the message says what to write instead."""


class LatexText(str):
    """A stated form written in LaTeX (a claim's ``stated_latex``): :func:`~attnverify.checks.stated.
    parse_expression` reads it through :func:`to_sympy_text`."""


_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
          "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")
_VARIANTS = {"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho", "varsigma": "sigma",
             "varpi": "pi"}
#: LaTeX function command (or operator name) -> SymPy function
_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "cot": "cot", "sec": "sec", "csc": "csc", "sinh": "sinh",
              "cosh": "cosh", "tanh": "tanh", "coth": "coth", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
              "exp": "exp", "log": "log", "ln": "log", "max": "Max", "min": "Min", "Gamma": "gamma"}
_NAMED = ("operatorname", "mathrm", "text", "textrm", "mathit")        # \operatorname{erf}, \mathrm{e}
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
            "displaystyle", "textstyle", ",", ";", ":", "!", " ", "quad", "qquad"}
_PRODUCT = {r"\cdot", r"\times", "*"}
_OPEN = {"(": ")", "[": "]", r"\{": r"\}", r"\lbrace": r"\rbrace", r"\lbrack": r"\rbrack"}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+\.?\d*|\.\d+|[A-Za-z]|\S")
_INSTEAD = "or write the form in SymPy syntax as 'stated' (e.g. exp(-beta*x)/2)"


def _tokens(text: str) -> list[str]:
    """The tokens of ``text``, spacing and sizing commands dropped, ``\\left|`` as ``|``, and every sub- or
    superscript braced (``x_\\xi`` as ``x_{\\xi}``, ``x^2`` as ``x^{2}``: in LaTeX a bare script is one token,
    one digit of a number)."""
    raw: list[str] = []
    dropped = False
    for tok in _TOKEN.findall(text):
        if tok == "$" or tok == "." and dropped:            # \left. is an invisible bracket
            continue
        dropped = tok.startswith("\\") and tok[1:] in _DROPPED
        if dropped:
            continue
        raw.append({r"\lvert": "|", r"\rvert": "|", r"\vert": "|", r"\|": "|", r"\mid": "|"}.get(tok, tok))
    out: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        out.append(tok)
        if tok in ("_", "^") and i + 1 < len(raw) and raw[i + 1] != "{":
            nxt = raw[i + 1]
            if re.fullmatch(r"\d+\.?\d*", nxt) and len(nxt) > 1:      # x^23 is x^{2} 3
                out += ["{", nxt[0], "}"]
                raw[i + 1] = nxt[1:]
                i += 1
                continue
            out += ["{", nxt, "}"]
            i += 2
            continue
        i += 1
    return out


@functools.lru_cache(maxsize=256)
def _spellings(names: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    """(token sequence, name) for every spelling of every symbol name, longest first."""
    import sympy as sp

    out = []
    for name in names:
        latex = sp.latex(sp.Symbol(name))
        spelled = {latex}
        base, _, rest = latex.partition("_")
        if re.fullmatch(r"[A-Za-z]+", base) and base not in _GREEK and len(base) >= 2:
            letters = [g for g in _GREEK if g.startswith(base)]
            if len(letters) == 1:                       # lam -> \lambda, eps -> \epsilon
                spelled.add("\\" + letters[0] + ("_" + rest if rest else ""))
        for s in list(spelled):
            for variant, letter in _VARIANTS.items():
                if s.startswith("\\" + letter) and not s[len(letter) + 1:len(letter) + 2].isalpha():
                    spelled.add("\\" + variant + s[len(letter) + 1:])
        out += [(tuple(_tokens(s)), name) for s in spelled]
    return tuple(sorted(out, key=lambda pair: -len(pair[0])))


class _Reader:
    def __init__(self, text: str, names: Iterable[str]) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.names = tuple(names)
        self.spellings = _spellings(tuple(sorted(self.names)))
        self.abs_depth = 0

    # -- tokens --------------------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> str | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            found = "the end" if tok is None else repr(tok)
            raise LatexError(f"expected {expected!r} but found {found}" if expected else "the form ends too early")
        self.i += 1
        return tok

    # -- grammar -------------------------------------------------------------------------------------------
    def read(self) -> str:
        out = self.sum()
        if self.peek() is not None:
            raise LatexError(f"cannot read '{self.peek()}' here (token {self.i + 1})")
        return out

    def sum(self) -> str:
        parts = []
        if self.peek() in ("+", "-"):
            parts.append(self.take())
        parts.append(self.product())
        while self.peek() in ("+", "-"):
            parts += [self.take(), self.product()]
        return "".join(parts)

    def product(self) -> str:
        out = self.signed()
        while True:
            tok = self.peek()
            if tok in _PRODUCT:
                self.take()
                out = f"{out}*{self.signed()}"
            elif tok == "/":
                self.take()
                out = f"({out})/{self.signed()}"
            elif self.starts_factor(tok):
                out = f"{out}*{self.power()}"
            else:
                return out

    def signed(self) -> str:
        if self.peek() in ("+", "-"):
            sign = self.take()
            return f"({sign}{self.signed()})"
        return self.power()

    def starts_factor(self, tok: str | None) -> bool:
        if tok is None or tok in ("+", "-", "/", "^", "_", "}", ")", "]", ",", r"\}", r"\rbrace", r"\rbrack"):
            return False
        return tok != "|" or self.abs_depth == 0

    def power(self) -> str:
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exponent = self.group()
            base = f"exp({exponent})" if base == "E" else f"({base})**({exponent})"
            if self.peek() == "^":       # LaTeX itself refuses it ('Double superscript'): no reading is the author's
                raise LatexError("a double superscript (x^{a}^{b}), which LaTeX refuses: write {x^{a}}^{b} or "
                                 "x^{a b}")
        if self.peek() == "_":
            raise LatexError("a subscript on something that is not a symbol of this claim")
        return base

    def group(self) -> str:
        """A braced argument ``{...}`` (a script is braced by the tokenizer), or one token (``\\frac12``)."""
        tok = self.peek()
        if tok is not None and tok != "{":
            if re.fullmatch(r"\d+", tok):
                self.toks[self.i:self.i + 1] = [tok[0]] + ([tok[1:]] if len(tok) > 1 else [])
            return f"({self.atom()})"
        self.take("{")
        out = self.sum()
        self.take("}")
        return f"({out})"

    def argument(self) -> str:
        """A function's argument: a bracket or a group, else the next factor (``\\sin x``)."""
        tok = self.peek()
        if tok in _OPEN or tok == "{":
            return self.atom()
        return f"({self.power()})"

    def atom(self) -> str:
        tok = self.peek()
        if tok is None:
            raise LatexError("the form ends where a term was expected")
        symbol = self.symbol()
        if symbol is not None:
            return symbol
        if tok in ("I", "J") and self.peek(1) == "_":         # I_{nu}(x): SymPy's modified Bessel function
            self.i += 2
            order = self.group()
            return f"bessel{tok.lower()}({order}, {self.argument()})"
        if re.fullmatch(r"\d+\.?\d*|\.\d+", tok):
            self.take()
            return tok + "0" if tok.endswith(".") else tok
        if tok in _OPEN or tok == "{":
            close = _OPEN.get(tok, "}")
            self.take()
            args = [self.sum()]
            while self.peek() == ",":
                self.take()
                args.append(self.sum())
            self.take(close)
            return f"({', '.join(args)})"
        if tok == "|":
            self.take()
            self.abs_depth += 1
            inner = self.sum()
            self.take("|")
            self.abs_depth -= 1
            return f"Abs({inner})"
        if tok in (r"\frac", r"\dfrac", r"\tfrac"):
            self.take()
            return f"({self.group()}/{self.group()})"
        if tok == r"\sqrt":
            self.take()
            if self.peek() == "[":
                self.take()
                degree = self.sum()
                self.take("]")
                return f"({self.group()})**(1/({degree}))"
            return f"sqrt{self.group()}"
        if tok == r"\pi":
            self.take()
            return "pi"
        if tok in ("e", r"\mathrm") and self.constant_e():
            return "E"
        if tok.startswith("\\") and (tok[1:] in _FUNCTIONS or tok[1:] in _NAMED):
            return self.function()
        if re.fullmatch(r"[A-Za-z]", tok) or tok[1:] in _GREEK or tok[1:] in _VARIANTS:
            self.take()                                     # an unknown symbol: parse_expression names it
            return _VARIANTS.get(tok[1:], tok.lstrip("\\"))
        raise LatexError(f"cannot read '{tok}'" + (" (a command this reader does not know)" if tok[0] == "\\" else ""))

    def constant_e(self) -> bool:
        """``e`` or ``\\mathrm{e}`` as Euler's number (when e is not a symbol of the claim)."""
        if self.peek() == "e":
            self.take()
            return True
        if self.toks[self.i:self.i + 4] == [r"\mathrm", "{", "e", "}"]:
            self.i += 4
            return True
        return False

    def function(self) -> str:
        tok = self.take()
        if tok[1:] in _NAMED:
            self.take("{")
            word = ""
            while self.peek() not in ("}", None):
                word += self.take()
            self.take("}")
            name = _FUNCTIONS.get(word, word)
        else:
            name = _FUNCTIONS[tok[1:]]
        exponent = None
        if self.peek() == "^":                           # \sin^{2}(x) = sin(x)**2
            self.take()
            exponent = self.group()
        if name == "log" and self.peek() == "_":
            raise LatexError(r"a logarithm to a base: write \log(x)/\log(b)")
        out = f"{name}{self.argument()}"
        return f"({out})**{exponent}" if exponent else out

    def symbol(self) -> str | None:
        """The longest symbol spelling at the current token, as its name."""
        for spelled, name in self.spellings:
            if tuple(self.toks[self.i:self.i + len(spelled)]) == spelled:
                self.i += len(spelled)
                return name
        tok = self.peek()
        if tok not in ("I", "J") and self.peek(1) == "_" and re.fullmatch(r"\\?[A-Za-z]+", tok or "") \
                and tok[1:] not in _FUNCTIONS:
            raise LatexError(f"unknown symbol '{''.join(self.toks[self.i:self.i + 5])}' (the symbols: "
                             f"{', '.join(self.names)})")
        return None


def to_sympy_text(text: str, names: Iterable[str]) -> str:
    """``text`` (LaTeX) as an expression in SymPy syntax, its symbols named by ``names`` (the claim's symbol
    names). Raises :class:`LatexError` (one line, with what to write instead) on what it cannot read."""
    if re.search(r"(?<!\\)[=<>]|\\(le|ge|leq|geq|approx|sum|prod|int|lim)(?![A-Za-z])", text):
        raise LatexError("an equation, an inequality, a sum or a limit: give only the right-hand side, "
                         + _INSTEAD)
    if re.search(r"\d\.?\d*[eE][-+]?\d", text):
        raise LatexError("a number in E notation (1e-3) reads as 1 e - 3 in LaTeX: write 10^{-3}, "
                         + _INSTEAD)
    try:
        return _Reader(text, names).read()
    except LatexError as exc:
        raise LatexError(f"{exc}; {_INSTEAD}") from None
    except RecursionError:
        raise LatexError(f"the form nests deeper than this reader follows; {_INSTEAD}") from None
