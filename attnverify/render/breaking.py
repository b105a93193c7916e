r"""Long expressions broken for display, one way for every renderer (the LaTeX document and the terminal).

The breaking is done on the SymPy expression, never by cutting printed text, so a break never falls inside a
fraction, a root or a pair of brackets. A renderer supplies a :class:`Metric` (how wide an expression and a piece
come out in its units) and the width it has; :func:`layout` returns a :class:`Display`:

- a sum is cut between its terms, a product between its factors; a factor that is a long sum opens a bracket on
  one line and closes it on a later one (a bracket that needs no partner, ``\Bigl(`` ... ``\Bigr)``);
- a fraction with a short denominator is written ``c/den`` times its numerator's factors; a long denominator,
  and then a long numerator, become named sub-expressions (``𝒩/𝒟``);
- a piece that still does not fit (a root, an exponential, a function of a long argument) has its widest
  argument named (``√𝒜₁``);
- a very long expression first has its repeated sub-expressions named (``sympy.cse``, keeping only the wide
  ones): the expression and the names then read like a paper's "where ...";
- a matrix wider than the width is shown entry by entry: its equation shows the matrix of entry names
  (``H_{11}``, ..., or the parts of a tuple label such as ``(\kappa', \nu')``), each entry follows.

Every name is defined, broken the same way, in :attr:`Display.where`. Substituting the definitions back (in
reverse order) gives the original expression: the display changes how it is printed, never what it is.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Protocol

import sympy as sp

from attnverify.render.exprs import Name

__all__ = ["Piece", "Equation", "Display", "Metric", "layout", "entry_names", "substitute_back"]

#: an expression longer than this many lines first has its repeated wide sub-expressions named
LONG_LINES = 3
#: a repeated sub-expression is named when it is at least this share of the width
CSE_SHARE = 0.12


@dataclass(frozen=True)
class Piece:
    """One unit of a broken display, joined to what precedes it by ``op``: ``""`` (the first), ``"+"``,
    ``"-"`` or ``"*"`` (a factor: juxtaposed within a line, ``×`` at the start of one). A piece is an
    expression, or a bracket (``"("`` opens a long sum factor, ``")"`` closes it, with ``power`` when the sum is
    raised to it). ``factor``: the expression is a factor of a product (a sum is then bracketed)."""

    op: str
    expr: sp.Basic | None = None
    bracket: str = ""
    power: sp.Basic | None = None
    factor: bool = False


@dataclass
class Equation:
    """``lhs = `` the pieces, line by line. ``lhs`` is the step's label (LaTeX text) or a :class:`Name`."""

    lhs: object
    lines: list[list[Piece]]


@dataclass
class Display:
    """The labelled equation and what it needs defined below it (matrix entries, named sub-expressions)."""

    main: Equation
    where: list[Equation] = field(default_factory=list)
    #: the first ``inline`` equations of ``where`` are the labelled display itself (the entries of a tuple
    #: ``(a, b) = ...``, each under its own name; ``main`` then has no lines)
    inline: int = 0


class Metric(Protocol):
    def width(self, expr: sp.Basic) -> float:
        """The rendered width of ``expr`` on one line."""

    def piece(self, piece: Piece, first: bool) -> float:
        """The rendered width of ``piece`` (``first``: at the start of a line)."""


# ------------------------------------------------------------------------------------------------------------
# entry names of a matrix
# ------------------------------------------------------------------------------------------------------------
def _top_level_parts(tex: str) -> list[str] | None:
    """The comma-separated parts of a tuple label ``(a, b, c)`` (commas inside braces or brackets not counted);
    None when ``tex`` is not one bracketed tuple."""
    tex = tex.strip()
    if not (tex.startswith("(") and tex.endswith(")")):
        return None
    body, depth, parts, cur = tex[1:-1], 0, [], ""
    for ch in body:
        depth += ch in "({["
        depth -= ch in ")}]"
        if depth < 0:
            return None
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    parts = [re.sub(r"^(\\ |\\,|\\;|\s)+|(\\ |\\,|\\;|\s)+$", "", p) for p in parts]
    return parts if len(parts) > 1 and all(parts) else None


def _tuple_parts(lhs: str, shape: tuple[int, int]) -> list[str] | None:
    """The parts of a tuple label with one part per entry of a vector of ``shape``, else None."""
    parts = _top_level_parts(lhs or "")
    return parts if parts is not None and 1 in shape and len(parts) == shape[0] * shape[1] else None


def entry_names(lhs: str, shape: tuple[int, int]) -> list[list[Name]]:
    r"""Names for the entries of a matrix displayed as ``lhs``: the parts of a tuple label ``(a, b)`` (a column
    or row of as many entries), ``H_{11}`` for ``H_{ab}`` (a subscript of index letters, one per dimension), else
    ``[lhs]_{i}`` / ``[lhs]_{ij}``."""
    rows, cols = shape
    parts = _tuple_parts(lhs, shape)
    if parts is not None:
        flat = [Name(p) for p in parts]
        return [flat] if rows == 1 else [[x] for x in flat]
    vector = 1 in shape
    m = re.fullmatch(r"(.+?)_(?:\{([a-z]{1,2})\}|([a-z]))", lhs or "")
    letters = (m.group(2) or m.group(3)) if m else ""
    if m and len(letters) == (1 if vector else 2) and re.fullmatch(r"\\?[A-Za-z]+", m.group(1)):
        base = m.group(1)
    elif lhs and re.fullmatch(r"\\?[A-Za-z]+(\^\*|'|\^\{\*\})?", lhs):
        base = lhs
    else:
        base = rf"\bigl[{lhs or 'M'}\bigr]"
    if vector:
        return [[Name(f"{base}_{{{i * cols + j + 1}}}") for j in range(cols)] for i in range(rows)]
    return [[Name(f"{base}_{{{i + 1}{j + 1}}}") for j in range(cols)] for i in range(rows)]


# ------------------------------------------------------------------------------------------------------------
# the breaker
# ------------------------------------------------------------------------------------------------------------
class _Breaker:
    def __init__(self, metric: Metric, width: float):
        self.m, self.W = metric, width
        self.defs: list[tuple[Name, sp.Basic]] = []
        self.known: dict[sp.Basic, Name] = {}
        self.serial = itertools.count(1)

    # names ----------------------------------------------------------------------------------------------------
    def fresh(self, role: str = "A"):
        """New names of a role (numbered in the order of creation; :func:`_renumber` makes them consecutive)."""
        while True:
            yield Name(rf"\mathcal{{{role}}}_{{{next(self.serial)}}}")

    def name(self, expr: sp.Basic, role: str = "A") -> Name:
        """A name for ``expr``, defined below the equation (the same name for the same expression)."""
        if expr in self.known:
            return self.known[expr]
        sym = next(self.fresh(role))
        self.defs.append((sym, expr))
        self.known[expr] = sym
        return sym

    def fits(self, expr: sp.Basic, room: float | None = None) -> bool:
        return self.m.width(expr) <= (self.W if room is None else room)

    # very long expressions: repeated sub-expressions named -----------------------------------------------------
    def shorten(self, shown: list[sp.Basic], labels: list[Name] | None = None) -> list[sp.Basic]:
        """``shown`` (the expressions of one display; ``labels``: their entry names) with their repeated wide
        sub-expressions named, when together they would take more than :data:`LONG_LINES` lines. A name used
        once is put back; an entry equal to an earlier one is shown as that entry's name."""
        if sum(self.m.width(e) for e in shown) <= LONG_LINES * self.W:
            return shown
        reps, reduced = sp.cse(shown, symbols=self.fresh("A"), order="none")
        back: dict[sp.Symbol, sp.Basic] = {}
        kept: dict[sp.Symbol, sp.Basic] = {}
        for sym, sub in reps:
            sub = sub.xreplace(back)
            if self.m.width(sub) >= CSE_SHARE * self.W:
                kept[sym] = sub
            else:
                back[sym] = sub
        reduced = [e.xreplace(back) for e in reduced]
        first: dict[sp.Basic, int] = {}
        for i, e in enumerate(reduced):           # an entry that is a name: its definition, or an earlier entry
            if e in kept:
                if e in first and labels:
                    reduced[i] = labels[first[e]]
                else:
                    first.setdefault(e, i)
                    reduced[i] = kept[e]
        while True:                               # a name used once is put back where it is used
            everything = [*reduced, *kept.values()]
            once = next((s for s in kept if sum(e.count(s) for e in everything) <= 1), None)
            if once is None:
                break
            value = kept.pop(once)
            reduced = [e.xreplace({once: value}) for e in reduced]
            kept = {s: e.xreplace({once: value}) for s, e in kept.items()}
        for sym, sub in kept.items():
            self.defs.append((sym, sub))
            self.known[sub] = sym
        return reduced

    # pieces ---------------------------------------------------------------------------------------------------
    def pieces(self, expr: sp.Basic, op: str) -> list[Piece]:
        """``expr`` as pieces between which a line may break, the first joined by ``op``."""
        if op in ("", "+", "-") and isinstance(expr, sp.Expr) and not isinstance(expr, sp.Add) \
                and expr.could_extract_minus_sign() and not (op == "" and self.fits(expr)):
            op, expr = {"": "-", "+": "-", "-": "+"}[op], -expr
        if self.fits(expr):
            return [Piece(op, expr)]
        if isinstance(expr, sp.Add):
            out: list[Piece] = []
            for i, term in enumerate(expr.as_ordered_terms()):
                out += self.pieces(term, op if i == 0 else "+")
            return out
        if isinstance(expr, sp.Mul):
            return self.product(expr, op)
        if isinstance(expr, sp.Pow) and isinstance(expr.base, sp.Add) and expr.exp.is_Integer and expr.exp > 1:
            return self.bracketed(expr.base, op, expr.exp)
        return self.pieces_of_atom(expr, op)

    def bracketed(self, body: sp.Basic, op: str, power: sp.Basic | None = None) -> list[Piece]:
        return [Piece(op, bracket="("), *self.pieces(body, ""), Piece("", bracket=")", power=power)]

    def shrink(self, expr: sp.Basic, room: float) -> sp.Basic:
        """An expression that cannot be cut (a root, an exponential, a function) with its widest argument named
        until it fits ``room`` (the whole expression named when its arguments are all short)."""
        for _ in range(8):
            if self.fits(expr, room) or not expr.args:
                break
            arg = max(expr.args, key=self.m.width)
            if self.m.width(arg) < 0.2 * self.W or isinstance(arg, sp.Symbol):
                return self.name(expr)
            expr = expr.xreplace({arg: self.name(arg)})
        return expr

    def pieces_of_atom(self, expr: sp.Basic, op: str, factor: bool = False) -> list[Piece]:
        return [Piece(op, self.shrink(expr, self.W), factor=factor)]

    def product(self, expr: sp.Mul, op: str) -> list[Piece]:
        num, den = sp.fraction(expr, exact=True)
        if den != 1 and not self.fits(den, 0.45 * self.W) and not isinstance(den, (sp.Add, sp.Mul)):
            den = self.shrink(den, 0.45 * self.W)           # a root or a power: its inside named
        if den != 1 and not self.fits(den, 0.45 * self.W):
            D = self.name(den, "D")
            if not self.fits(num, 0.55 * self.W):
                return [Piece(op, self.name(num, "N") / D)]
            den = D
        coeff, factors = num.as_coeff_mul()
        short = [f for f in factors if self.fits(f, 0.5 * self.W)]
        lead = sp.Mul(coeff, *short) / den
        out: list[Piece] = []
        if short and self.fits(lead, 0.7 * self.W):         # the short factors over the denominator, as SymPy
            out.append(Piece(op, lead, factor=True))          # prints them, then the long factors
            factors = [f for f in factors if f not in short]
        elif den != 1 or coeff != 1:
            out.append(Piece(op, coeff / den if den != 1 else coeff, factor=True))
        for f in factors:
            fop = "*" if out else op
            if self.fits(f):
                out.append(Piece(fop, f, factor=True))
            elif isinstance(f, sp.Add):
                out += self.bracketed(f, fop)
            elif isinstance(f, sp.Pow) and isinstance(f.base, sp.Add) and f.exp.is_Integer and f.exp > 1:
                out += self.bracketed(f.base, fop, f.exp)
            else:
                out += self.pieces_of_atom(f, fop, factor=True)
        return out

    # lines ----------------------------------------------------------------------------------------------------
    def pack(self, pieces: list[Piece], first_room: float) -> list[list[Piece]]:
        """Pieces into lines, greedily: the first line has ``first_room``, the others the width (a closing
        bracket never starts a line)."""
        lines: list[list[Piece]] = []
        cur: list[Piece] = []
        used = 0.0
        for p in pieces:
            room = first_room if not lines else self.W
            if cur and used + self.m.piece(p, first=False) > room and p.bracket != ")":
                carry = self.carry(cur)
                if len(carry) < len(cur):
                    cur = cur[:len(cur) - len(carry)]
                else:
                    carry = []
                lines.append(cur)
                cur, used = carry, sum(self.m.piece(q, first=i == 0) for i, q in enumerate(carry))
            used += self.m.piece(p, first=not cur)
            cur.append(p)
        return lines + ([cur] if cur else [])

    def carry(self, line: list[Piece]) -> list[Piece]:
        """The tail of a full line that moves to the next one with what follows: an opening bracket never ends
        a line, and takes the factors of its term before it along (when they are short)."""
        if not line or line[-1].bracket != "(":
            return []
        start = len(line) - 1
        while start > 0 and line[start].op == "*" and line[start - 1].bracket == "":
            start -= 1
        tail = line[start:]
        if sum(self.m.piece(q, first=i == 0) for i, q in enumerate(tail)) > 0.4 * self.W:
            tail = line[-1:]
        return tail

    def equation(self, lhs: object, expr: sp.Basic, first_room: float, rest_room: float) -> Equation:
        """``lhs = expr``: the first line has ``first_room``, the others ``rest_room``."""
        self.W = rest_room
        if self.fits(expr, first_room):
            return Equation(lhs, [[Piece("", expr)]])
        return Equation(lhs, self.pack(self.pieces(expr, ""), first_room))


def layout(lhs: str, expr: sp.Basic, metric: Metric, width: float, *, lhs_width: float = 0.0, indent: float = 0.0,
           name_width: Callable[[Name], float] | None = None) -> Display:
    """``lhs = expr`` broken to ``width`` (in the metric's units). The first line also holds ``lhs =``, which is
    ``lhs_width`` wide; the lines after it are aligned after ``=`` and indented by ``indent``; each definition
    below holds its name, measured by ``name_width`` (default: the metric's width of the name)."""
    name_width = name_width or metric.width
    b = _Breaker(metric, width - lhs_width - indent)
    names: list[list[Name]] = []
    if isinstance(expr, sp.MatrixBase) and (_tuple_parts(lhs, expr.shape) or not b.fits(expr, width - lhs_width)):
        names = entry_names(lhs, expr.shape)
        shown = b.shorten([expr[i, j] for i in range(expr.rows) for j in range(expr.cols)],
                          [n for row in names for n in row])
        main = Equation(lhs, [] if _tuple_parts(lhs, expr.shape) else [[Piece("", sp.ImmutableMatrix(names))]])
    else:
        shown = b.shorten([expr]) if not b.fits(expr, width - lhs_width) else [expr]
        main = b.equation(lhs, shown[0], width - lhs_width, width - lhs_width - indent)
    # the definitions below share one alignment column: the widest of their names
    column = max([name_width(Name(r"\mathcal{D}_{99}")), *(name_width(n) for row in names for n in row)])
    flat = [n for row in names for n in row]
    where = [b.equation(n, e, width - column, width - column - indent) for n, e in zip(flat, shown)]
    done = 0
    while done < len(b.defs):                     # definitions may name further sub-expressions
        sym, sub = b.defs[done]
        done += 1
        where.append(b.equation(sym, sub, width - column, width - column - indent))
    return _renumber(Display(main, where, inline=len(shown) if not main.lines else 0))


def _renumber(display: Display) -> Display:
    """Names numbered 1, 2, ... per letter in the order of their definitions (a single one unnumbered)."""
    pattern = re.compile(r"\\mathcal\{([A-Z])\}_\{(\d+)\}")
    order = [eq.lhs for eq in display.where if isinstance(eq.lhs, Name) and pattern.fullmatch(eq.lhs.name)]
    roles: dict[str, list[Name]] = {}
    for n in order:
        roles.setdefault(pattern.fullmatch(n.name).group(1), []).append(n)
    new: dict[sp.Basic, sp.Basic] = {}
    for role, ns in roles.items():
        for k, n in enumerate(ns, 1):
            new[n] = Name(rf"\mathcal{{{role}}}" + (f"_{{{k}}}" if len(ns) > 1 else ""))

    def eq(e: Equation) -> Equation:
        lines = [[Piece(p.op, p.expr.xreplace(new) if p.expr is not None else None, p.bracket,
                        p.power.xreplace(new) if p.power is not None else None, p.factor) for p in line]
                 for line in e.lines]
        return Equation(new.get(e.lhs, e.lhs) if isinstance(e.lhs, Name) else e.lhs, lines)

    return Display(eq(display.main), [eq(e) for e in display.where], display.inline)


def substitute_back(display: Display) -> sp.Basic:
    """The expression a display shows, its definitions substituted back (for tests: equal to what was laid
    out)."""
    def expr_of(eq: Equation) -> sp.Basic:
        text = []
        for line in eq.lines:
            text += line
        return _assemble(text)

    defs = {eq.lhs: expr_of(eq) for eq in display.where if isinstance(eq.lhs, Name)}
    if display.inline:
        out = sp.ImmutableMatrix([defs[eq.lhs] for eq in display.where[:display.inline]])
    else:
        out = expr_of(display.main)
    for _ in range(len(defs) + 1):
        out = out.xreplace(defs)
    return out


def _assemble(pieces: list[Piece]) -> sp.Basic:
    """The expression a flat list of pieces stands for: a sum of products, brackets nested."""
    def parse(i: int) -> tuple[sp.Basic, int]:
        total, term = None, None
        sign = 1

        def add(total, value):
            return value if total is None else total + value

        while i < len(pieces):
            p = pieces[i]
            if p.bracket == ")":
                break
            if p.bracket == "(":
                inner, i = parse(i + 1)
                close = pieces[i]
                value = inner ** close.power if close.power is not None else inner
            else:
                value = p.expr
            if p.op in ("", "+", "-"):
                if term is not None:
                    total = add(total, sign * term)
                sign, term = (-1 if p.op == "-" else 1), value
            else:
                term = value if term is None else term * value
            i += 1
        if term is not None:
            total = add(total, sign * term)
        return (sp.Integer(0) if total is None else total), i

    return parse(0)[0]
