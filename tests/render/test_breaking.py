"""Displays broken in SymPy space (attnverify.render.breaking) for LaTeX and the terminal: what is shown, with its
named sub-expressions substituted back, is the expression laid out; every line fits; a wide matrix is shown entry
by entry; a very long expression gets named sub-expressions. The terminal renderer's widths are exact (columns),
so "fits" is checked on the printed text itself."""
from __future__ import annotations

import sympy as sp

from attnverify.render import breaking, exprs
from attnverify.render.latex_math import LatexMetric, display, piece_tex, tex_width
from attnverify.render.text_math import UnicodeMetric, display_lines

x, y, z, a, b = sp.symbols("x y z a b", positive=True)
R_eta, R_kappa, eta, h, kappa = sp.symbols("R_eta R_kappa eta h kappa", real=True)


def _long_sum(n: int = 14) -> sp.Expr:
    return sum(sp.exp(k * x) * (x + k * y) ** 2 / (1 + k * z) for k in range(1, n))


CASES = [
    _long_sum(),
    -_long_sum(9),                                                      # a negated sum: the signs of every term
    (1 + x) * sum(x ** k / (k + y) for k in range(1, 30)),             # a product with a long sum factor
    sp.sqrt(sum(k * x ** k * y ** (k % 3) for k in range(1, 25))) / (1 + x),          # a root of a long sum
    (x + y) / sp.sqrt(1 - sum((R_eta * eta * h) ** k * kappa ** (k % 4) for k in range(1, 16))),   # like kappa'
    sp.erf(sum(x ** k / (3 + k) for k in range(1, 25))) * sp.exp(-sum(y ** k for k in range(1, 12))),
    sum(sp.erf(x / sp.sqrt(1 + 2 * y ** 2 * z ** 2)) * k * x ** k + sp.exp(-x ** 2 / (2 * (1 + y ** 2 + z ** 2))) * y ** k
        for k in range(1, 30)),                                         # repeated wide sub-expressions
]


def test_what_is_shown_is_the_expression():
    """Substituting the names back gives the laid-out expression exactly (a sign lost in a broken sum, a factor
    dropped at a bracket, a name defined as the wrong sub-expression all fail this)."""
    for metric, width in ((LatexMetric(), 300.0), (UnicodeMetric(), 60)):
        for expr in CASES:
            d = breaking.layout("f", expr, metric, width)
            assert len(d.main.lines) > 1 or d.where, "the case is meant to need breaking"
            shown = breaking.substitute_back(d)
            assert sp.simplify(shown - expr) == 0, (type(metric).__name__, expr)


def test_every_terminal_line_fits():
    for expr in CASES:
        for width in (50, 80):
            lines = display_lines("f", expr, width)
            assert max(len(row) for row in lines) <= width, (width, max(lines, key=len))


def test_every_latex_line_is_within_the_estimated_width():
    for expr in CASES:
        d = breaking.layout("f", expr, LatexMetric(), 300.0, lhs_width=tex_width("f =") + 3, indent=10.0)
        for eq in [d.main, *d.where]:
            for line in eq.lines:
                width = sum(LatexMetric.piece(p, i == 0) for i, p in enumerate(line))
                too_wide_alone = len(line) == 1 and LatexMetric.width(line[0].expr) > 300
                assert width <= 300 or too_wide_alone, [piece_tex(p, i == 0) for i, p in enumerate(line)]


def test_brackets_never_break_a_fraction():
    r"""The old breaker cut a product at its denominator (``\Bigl/ \Bigl(``), leaving parentheses that look
    unbalanced: now a long denominator is named, and every \Bigl( has its \Bigr)."""
    for expr in CASES:
        tex = display("f", expr, "eq:t", width=300.0)
        assert r"\Bigl/" not in tex
        assert tex.count(r"\Bigl(") == tex.count(r"\Bigr)")


def test_a_wide_matrix_is_shown_entry_by_entry():
    M = sp.Matrix([[_long_sum(6), x], [y, _long_sum(7)]])
    d = breaking.layout("H_{ab}", M, LatexMetric(), 300.0)
    assert d.main.lines[0][0].expr == sp.ImmutableMatrix([[exprs.Name("H_{11}"), exprs.Name("H_{12}")],
                                                         [exprs.Name("H_{21}"), exprs.Name("H_{22}")]])
    assert [eq.lhs.name for eq in d.where[:4]] == ["H_{11}", "H_{12}", "H_{21}", "H_{22}"]
    assert sp.simplify(breaking.substitute_back(d) - M) == sp.zeros(2, 2)
    tex = display("H_{ab}", M, "eq:H", width=300.0)
    assert r"\begin{align*}" in tex and "H_{22} &=" in tex


def test_a_tuple_label_names_its_entries():
    """``(r_\\nu, \\nu^*, ...)`` is shown as one equation per part, each part its own left side: a label never
    names a whole vector it is only one entry of (``nu^* =`` followed by a 3-vector)."""
    v = sp.Matrix([x, y + z, 0])
    d = breaking.layout(r"(r_\nu,\ \nu^*,\ r)", v, LatexMetric(), 400.0)
    assert d.inline == 3 and [eq.lhs.name for eq in d.where] == [r"r_\nu", r"\nu^*", "r"]
    tex = display(r"(r_\nu,\ \nu^*,\ r)", v, "eq:n")
    assert r"r_\nu &= x" in tex and r"\nu^* &= y + z" in tex and r"\nu^* = \left[" not in tex
    assert breaking.entry_names("H_{ab}", (2, 2))[1][0].name == "H_{21}"
    assert breaking.entry_names(r"\lambda_j", (2, 1))[1][0].name == r"\lambda_{2}"
    assert breaking.entry_names(r"X_\infty(x)", (2, 1))[0][0].name == r"\bigl[X_\infty(x)\bigr]_{1}"


def test_repeated_wide_subexpressions_are_named_once():
    expr = CASES[-1]
    d = breaking.layout("f", expr, LatexMetric(), 300.0)
    names = [eq.lhs for eq in d.where]
    bodies = [breaking.substitute_back(breaking.Display(eq, d.where)) for eq in d.where]
    assert names and len(set(bodies)) == len(bodies)            # no sub-expression defined twice
    assert any(b.has(sp.erf) for b in bodies) and any(b.has(sp.exp) for b in bodies)
    assert [n.name for n in names] == [rf"\mathcal{{A}}_{{{k}}}" for k in range(1, len(names) + 1)] or \
        len(names) == 1                                            # numbered 1, 2, ... in order


def test_terminal_negative_fraction_reads_as_one():
    """Delta_parallel printed as a dangling minus sign, blocks and a division sign ('- ... ÷ ...'): now a fraction
    with a short denominator leads its bracketed numerator."""
    expr = -(_long_sum(5)) / (1 + x) ** 4
    lines = display_lines(r"\Delta_\parallel(\rho)", expr, 70)
    assert not any(row.strip() in ("-", "−", "÷") for row in lines)
    assert "÷" not in "\n".join(lines)
