"""SymPy expressions in the notation (attnverify.render.exprs): the terminal shows the symbols the LaTeX shows.

The defects: ``attnverify derive slr`` printed R_eta as ``Rₑₜₐ`` (SymPy sets the letters of ``eta`` as
subscripts), Paper B's steps showed ``Max(b1, b2)`` and ``uCu``."""
from __future__ import annotations

import sympy as sp

from attnverify.render import exprs, notation

R_eta, R_kappa, R_rho = sp.symbols("R_eta R_kappa R_rho", real=True)
b1, b2 = sp.symbols("b1 b2", positive=True)


def test_subscripted_names_read_as_in_the_latex():
    e = R_eta * sp.Symbol("eta") * sp.Symbol("h") + R_kappa * sp.Symbol("kappa") ** 2
    text = exprs.pretty(e)
    assert "R_η" in text and "R_κ" in text and "ₑₜₐ" not in text and "ₖₐₚₚₐ" not in text
    for sym in (R_eta, R_rho, b1, sp.Symbol("mu1"), sp.Symbol("a_u"), sp.Symbol("lambda")):
        assert exprs.symbol_unicode(sym) == notation.tex_to_unicode(exprs.latex(sym))
    assert exprs.symbol_unicode(b1) == "b₁" and exprs.symbol_unicode(sp.Symbol("mu1")) == "μ₁"


def test_function_names_have_a_notation():
    text = exprs.pretty(b1 / sp.Max(b1, b2))
    assert "max(b₁, b₂)" in text and "Max" not in text and "b1" not in text
    assert exprs.latex(sp.Max(b1, b2)) == r"\max\left(b_{1}, b_{2}\right)"
    x = sp.Symbol("x")
    assert "arctan(x)" in exprs.pretty(sp.atan(x)) and exprs.latex(sp.atan(x)).startswith(r"\arctan")


def test_names_no_rule_can_read_come_from_the_table():
    uCu = sp.Symbol("uCu")
    assert exprs.latex(uCu) == r"u^{\top}Cu" and exprs.pretty(uCu + sp.Symbol("c0")) == "c₀ + uᵀCu"


def test_a_function_with_its_own_latex_shows_it_in_unicode():
    from attnverify.theory.slr.gauss import zeta_erf

    t, s = sp.symbols("t s")
    assert exprs.pretty(zeta_erf(t, s)) == notation.tex_to_unicode(exprs.latex(zeta_erf(t, s))) == "ζₛ(t)"


def test_derive_prints_the_notation(capsys):
    """The Paper B derivation in the terminal: max(b₁, b₂) and uᵀCu, as in the LaTeX."""
    from attnverify.cli import main

    assert main(["derive", "meanfield", "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "max(b₁, b₂)" in out and "uᵀCu" in out and "Max(" not in out and "uCu" not in out
    assert max(len(row) for row in out.splitlines()) <= 100


def test_delta_parallel_reads_as_a_fraction(capsys):
    """Delta_parallel printed as a lone minus sign, blocks, and a division sign ("- ... ÷ ..."); now its short
    denominator leads the bracketed numerator."""
    from attnverify.cli import main

    assert main(["derive", "signal", "--width", "100"]) == 0
    out = capsys.readouterr().out
    block = out.split("Δ_∥(ρ) =", 1)[1].split("because:", 1)[0].splitlines()
    assert "÷" not in "\n".join(block) and not any(row.strip() in ("-", "−", "×") for row in block)
