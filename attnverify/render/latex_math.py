r"""Displayed equations in LaTeX that fit the text width: a width estimate of LaTeX mathematics, and the LaTeX of
a broken display (:mod:`attnverify.render.breaking`).

- :func:`tex_width` estimates, in points at 10 pt, the width a formula takes in display style: glyph widths of
  Computer Modern by class (letters, digits, operators with their spacing), fractions as their wider part,
  scripts at 70 % (50 % in second-level scripts), roots with their sign, matrices column by column. It is an
  estimate, kept on the safe side; the compile test measures what pdflatex does.
- :func:`display` typesets a step: the labelled, numbered ``equation`` (``split`` when it needs several lines,
  continuation lines aligned after ``=``), then "where" and an ``align*`` of the matrix entries and named
  sub-expressions it refers to (``align*`` breaks across pages under ``\allowdisplaybreaks``).
"""
from __future__ import annotations

import functools
import re

import sympy as sp

from attnverify.render import breaking, exprs

__all__ = ["TEXT_WIDTH", "tex_width", "LatexMetric", "display", "piece_tex"]

#: the width displays are broken to, in points: the text width of the document (US letter, 2 cm margins: 500 pt)
#: less room for the equation number and a margin for the estimate
TEXT_WIDTH = 440.0
_INDENT = 10.0                         # \quad: continuation lines are indented by it

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
_SCALE = {"D": 1.0, "T": 1.0, "S": 0.7, "SS": 0.5}
_FRAC = {"D": "T", "T": "S", "S": "SS", "SS": "SS"}
_SCRIPT = {"D": "S", "T": "S", "S": "SS", "SS": "SS"}
_BIN = 7.8 + 2 * 2.2                   # + - with medium spaces
_REL = 7.8 + 2 * 2.8                   # = < > with thick spaces
_COMMANDS = {
    "cdot": 2.8 + 2 * 2.2, "times": _BIN, "pm": _BIN, "mp": _BIN, "circ": 5 + 4.4, "otimes": _BIN,
    "le": _REL, "leq": _REL, "ge": _REL, "geq": _REL, "ne": _REL, "neq": _REL, "approx": _REL, "sim": _REL,
    "simeq": _REL, "equiv": _REL, "to": 10 + 5.6, "mapsto": 10 + 5.6, "rightarrow": 10 + 5.6, "in": 6.7 + 5.6,
    "infty": 10.0, "partial": 5.7, "nabla": 8.3, "ldots": 13.4, "dots": 13.4, "cdots": 13.4, "prime": 2.8,
    "sum": 14.4, "prod": 12.8, "int": 8.0, "langle": 3.9, "rangle": 3.9, "|": 5.0, "{": 5.0, "}": 5.0,
    ",": 1.7, ":": 2.2, ";": 2.8, "!": -1.7, " ": 3.3, "quad": 10.0, "qquad": 20.0, "top": 7.8, "perp": 7.8,
    "parallel": 5.0, "sharp": 4.0, "star": 5.0, "ast": 5.0, "dagger": 4.4, "ell": 4.2, "mid": 5.6 + 2.8,
}
_DROP = {"displaystyle", "textstyle", "limits", "nolimits", "left", "right", "middle", "big", "Big", "bigg", "Bigg",
         "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr"}
_UPRIGHT = {"operatorname", "mathrm", "text", "textrm", "rm", "mathbf", "mathsf", "mathtt", "textnormal"}
_FUNCTIONS = {"log", "ln", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "arcsin", "arccos", "min",
              "max", "sup", "inf", "lim", "det", "dim", "arg", "ker", "deg", "Pr"}


class _Reader:
    def __init__(self, tex: str):
        self.toks = [t for t in _TOKEN.findall(tex) if not t.isspace()]
        self.i = 0

    def next(self) -> str | None:
        tok = self.toks[self.i] if self.i < len(self.toks) else None
        self.i += tok is not None
        return tok

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def group_tokens(self) -> list[str]:
        """The tokens of the next argument (a braced group or one token)."""
        tok = self.next()
        if tok != "{":
            return [] if tok is None else [tok]
        depth, out = 1, []
        while (t := self.next()) is not None:
            depth += t == "{"
            depth -= t == "}"
            if depth == 0:
                break
            out.append(t)
        return out

    def arg(self, style: str) -> float:
        return _width(self.group_tokens(), style)


def _width(toks: list[str], style: str) -> float:
    r = _Reader("")
    r.toks = toks
    s = _SCALE[style]
    total, last_script = 0.0, 0.0
    while (tok := r.next()) is not None:
        script = 0.0
        if tok in ("^", "_"):
            w = r.arg(_SCRIPT[style])
            script = w
            # a sub- and a superscript on one base stack: the wider one counts
            w = max(0.0, w - last_script) if last_script else w
            total += w + 0.5 * s
        elif tok == "{":
            r.i -= 1
            total += r.arg(style)
        elif tok in ("}", "&"):
            pass
        elif tok.startswith("\\") and len(tok) > 1:
            total += _command(tok[1:], r, style)
        elif tok.isalpha():
            total += 5.3 * s
        elif tok.isdigit():
            total += 5.0 * s
        elif tok in "+-":
            total += (_BIN if style in ("D", "T") else 7.8 * s) if total else 7.8 * s
        elif tok in "=<>":
            total += _REL if style in ("D", "T") else 7.8 * s
        elif tok in "()[]|":
            total += 3.9 * s
        elif tok == ",":
            total += 4.5 * s
        else:
            total += 5.0 * s
        last_script = script
    return total


def _command(name: str, r: _Reader, style: str) -> float:
    s = _SCALE[style]
    if name in ("frac", "dfrac", "tfrac", "binom"):
        inner = "T" if name == "dfrac" else ("S" if name == "tfrac" else _FRAC[style])
        return max(r.arg(inner), r.arg(inner)) + 2.4 * s
    if name == "sqrt":
        if r.peek() == "[":
            while r.next() not in (None, "]"):
                pass
        return r.arg(style) + 8.3 * s
    if name in _DROP:
        if name in ("left", "right", "middle", "bigl", "bigr", "Bigl", "Bigr", "big", "Big", "biggl", "biggr"):
            tok = r.next()
            return (1.2 if tok == "." else 4.6) * s
        return 0.0
    if name in _UPRIGHT:
        return len([t for t in r.group_tokens() if not t.startswith("\\")]) * 5.0 * s + 1.7 * s
    if name in ("mathcal", "mathscr", "mathbb", "mathfrak"):
        return len(r.group_tokens()) * 7.5 * s
    if name in ("hat", "bar", "tilde", "dot", "ddot", "vec", "check", "widehat", "widetilde", "overline", "mathit",
                "boldsymbol", "mathnormal"):
        return r.arg(style)
    if name == "begin":
        return _environment(r, style)
    if name in _FUNCTIONS:
        return len(name) * 5.0 * s + 1.7 * s
    if name in _COMMANDS:
        return _COMMANDS[name] * (s if name not in (",", ":", ";", "!", " ", "quad", "qquad") else 1.0)
    return 6.0 * s                      # Greek letters and anything else


def _environment(r: _Reader, style: str) -> float:
    """A matrix environment: the sum of its columns' widths and the column separation."""
    env = "".join(r.group_tokens())
    depth, body = 1, []
    while (t := r.next()) is not None:
        if t == "\\begin":
            depth += 1
        elif t == "\\end":
            depth -= 1
            if depth == 0:
                r.group_tokens()
                break
        body.append(t)
    rows, cur_row, cur = [], [], []
    for t in body:
        if t == "\\\\":
            cur_row.append(cur)
            rows.append(cur_row)
            cur_row, cur = [], []
        elif t == "&":
            cur_row.append(cur)
            cur = []
        else:
            cur.append(t)
    cur_row.append(cur)
    rows.append(cur_row)
    ncols = max(len(row) for row in rows)
    inner = "T" if env.endswith("matrix") and style == "D" else style
    cols = [max((_width(row[j], inner) for row in rows if j < len(row)), default=0.0) for j in range(ncols)]
    return sum(cols) + 10.0 * _SCALE[style] * ncols


@functools.lru_cache(maxsize=16384)
def tex_width(tex: str) -> float:
    """Estimated width in points of ``tex`` typeset in display style at 10 pt."""
    return _width([t for t in _TOKEN.findall(tex) if not t.isspace()], "D")


# ------------------------------------------------------------------------------------------------------------
# the LaTeX of a display
# ------------------------------------------------------------------------------------------------------------
def piece_tex(p: breaking.Piece, first: bool) -> str:
    """A piece's LaTeX; ``first``: it starts a line (a factor then gets ``\\times``)."""
    op = {"": "", "+": "+ ", "-": "- ", "*": r"\times " if first else ""}[p.op]
    if p.bracket == "(":
        return op + r"\Bigl("
    if p.bracket == ")":
        return r"\Bigr)" + (f"^{{{exprs.latex(p.power)}}}" if p.power is not None else "")
    tex = exprs.latex(p.expr)
    if p.factor and isinstance(p.expr, sp.Add):
        tex = rf"\left({tex}\right)"
    return op + tex


class LatexMetric:
    """Widths of expressions and pieces as LaTeX (:func:`tex_width`)."""

    @staticmethod
    def width(expr: sp.Basic) -> float:
        return tex_width(exprs.latex(expr))

    @staticmethod
    def piece(piece: breaking.Piece, first: bool) -> float:
        return tex_width(piece_tex(piece, first)) + (0.0 if first else 3.0)


def _line_tex(line: list[breaking.Piece]) -> str:
    return " ".join(piece_tex(p, i == 0) for i, p in enumerate(line))


def _lhs_tex(lhs: object) -> str:
    return lhs if isinstance(lhs, str) else exprs.latex(lhs)


def _rows(eq: breaking.Equation) -> list[str]:
    """An equation as rows of an alignment: ``lhs &= first`` then ``&\\quad more``."""
    lhs = _lhs_tex(eq.lhs)
    lines = [_line_tex(line) for line in eq.lines]
    head = (f"{lhs} &= " if lhs else "& ") + lines[0]
    return [head, *(r"&\quad " + ln for ln in lines[1:])]


def display(lhs: str, expr: sp.Basic, label: str | None, *, width: float = TEXT_WIDTH) -> str:
    r"""``lhs = expr`` (no ``lhs``: ``expr`` alone) as a numbered equation with ``\label{label}``, broken to
    ``width`` points, followed by the definitions it needs."""
    lhs_w = tex_width(f"{lhs} =") + 3.0 if lhs else 0.0
    d = breaking.layout(lhs, expr, LatexMetric(), width, lhs_width=lhs_w, indent=_INDENT,
                        name_width=lambda n: tex_width(f"{exprs.latex(n)} =") + 3.0)
    tag = rf"\label{{{label}}}" if label else ""
    main, where = d.main, d.where[d.inline:]
    rows = [row for eq in d.where[:d.inline] for row in _rows(eq)] if d.inline else _rows(main)
    if len(rows) == 1 and not d.inline:
        body = _line_tex(main.lines[0])
        out = [r"\begin{equation}" + tag, f"{lhs} = {body}" if lhs else body, r"\end{equation}"]
    else:
        out = [r"\begin{equation}" + tag, r"\begin{split}", (" \\\\\n").join(rows), r"\end{split}",
               r"\end{equation}"]
    if where:
        rows = [row for eq in where for row in _rows(eq)]
        out += [r"\noindent where", r"\begin{align*}", (" \\\\\n").join(rows), r"\end{align*}"]
    return "\n".join(out)
