"""The notation module: one convention ($...$ holds LaTeX), one table, three renderings (LaTeX, Unicode, mathtext);
nothing outside the dollars is ever read as mathematics."""
from __future__ import annotations

import pytest

from attnverify.render import notation as N


def test_split_pairs_dollars_and_keeps_escaped_ones():
    assert N.split(r"decays like $\beta^{-0.88}$ here") == [(False, "decays like "), (True, r"\beta^{-0.88}"),
                                                            (False, " here")]
    assert N.split(r"costs \$5, $x$") == [(False, "costs $5, "), (True, "x")]
    assert N.split("one $ only") == [(False, "one $ only")]        # unpaired: all words, nothing guessed
    assert N.split("") == []


@pytest.mark.parametrize("tex, text", [
    (r"J_{\mathrm{fixed}}(\rho)", "J_fixed(ρ)"),
    (r"\Delta_\parallel(\rho)", "Δ_∥(ρ)"),
    (r"\mathbb{E}\,e^{\beta g}", "𝔼 e^(β g)"),
    (r"\mu^\infty_t", "μ^∞ₜ"),
    (r"\frac{dL}{d\tau}", "dL/dτ"),
    (r"\frac{a+b}{2}", "(a+b)/2"),
    (r"\frac{\gamma}{\max\left(b_{1}, b_{2}\right)}", "γ/max(b₁, b₂)"),
    (r"\lim t^*/\log\beta", "lim t*/log β"),
    (r"\sqrt{\log(\beta+1)/\beta}", "√(log(β+1)/β)"),
    (r"\beta^{-0.88}", "β^(-0.88)"),
    (r"\sigma^2 x_0", "σ² x₀"),
    (r"B^\top x^*", "Bᵀ x*"),
    (r"\operatorname{tr}(H \Sigma)", "tr(H Σ)"),
    (r"\mathbb{E}\operatorname{erf}(m + sZ) = \frac{2}{\sqrt{\pi}}\operatorname{erf} W", "𝔼 erf(m + sZ) = 2/√π erf W"),
    (r"r_{\rm Lyap}/r_{\rm Jac}", "r_Lyap/r_Jac"),
    (r"\dot L + 2\gamma L", "L̇ + 2γ L"),
    (r"\left\{ \theta = 0 \right\}", "{θ = 0}"),
    (r"\langle B^\top x, y \rangle", "⟨Bᵀ x, y⟩"),
    (r"(\cos\phi, \sin\phi)", "(cos φ, sin φ)"),          # SymPy's pretty printer writes phi as φ
    (r"\lVert A\rVert", "‖A‖"),                         # the space that ends \lVert is no text (was "‖ A‖")
    (r"\left\lVert A \right\rVert_2", "‖A‖₂"),
    (r"\lfloor n \rfloor + x \in S", "⌊n⌋ + x ∈ S"),
])
def test_tex_to_unicode(tex, text):
    assert N.tex_to_unicode(tex) == text


def test_unicode_converts_only_the_mathematics():
    assert N.unicode(r"the sup error decays like $\beta^{-0.88}$ (beta^-0.88)") == \
        "the sup error decays like β^(-0.88) (beta^-0.88)"


def test_latex_passes_mathematics_and_escapes_words():
    assert N.latex(r"decays like $\beta^{-0.88}$, 50% & a_b") == r"decays like $\beta^{-0.88}$, 50\% \& a\_b"
    # a text that does not follow the convention is plain text: no math mode, no italic letters
    assert N.latex("beta^-0.88 mu^inf_t") == r"beta\textasciicircum{}-0.88 mu\textasciicircum{}inf\_t"
    assert N.latex("x < y | z") == r"x \textless{} y \textbar{} z"
    # Unicode symbols of the table in math; neighbouring math joined in one span
    assert N.latex("ρ→∞") == r"$\rho \to \infty$"
    assert N.latex("café ☃") == "café ?"
    # numbers in exponent form, \num-style (siunitx is not in texlive-latex-base)
    assert N.latex("at 6.33e-07 and 1e+04, not x1e3") == r"at $6.33\times10^{-7}$ and $10^{4}$, not x1e3"


@pytest.mark.parametrize("x, tex", [(6.33e-07, r"$6.33\times10^{-7}$"), (3.680957, "3.681"), (-0.5, "$-0.5$"),
                                    (1e-05, "$10^{-5}$"), (17200.0, r"$1.72\times10^{4}$"), (0, "0"),
                                    (float("inf"), r"$\infty$"), (float("nan"), "NaN"),
                                    ("2.5E+3", r"$2.5\times10^{3}$")])
def test_num(x, tex):
    assert N.num(x) == tex


def test_mathtext_keeps_what_matplotlib_parses_and_falls_back_to_unicode():
    pytest.importorskip("matplotlib")
    assert N.mathtext(r"$W_2(\mu^\infty_t, \Pi_\sharp\mu_0)$ vs t") == r"$W_2(\mu^\infty_t, \Pi_\sharp\mu_0)$ vs t"
    assert N.mathtext(r"$a \le b$") == r"$a \leq b$"                        # rewritten for mathtext
    assert N.mathtext(r"$\Bigl(x\Bigr)$") == r"$(x)$"
    assert N.mathtext(r"$\nosuchcommand{x}$") == "nosuchcommandx"           # unparsable: Unicode text, no error
    assert N.mathtext("rho0 costs $") == r"rho0 costs \$"                    # words stay words
