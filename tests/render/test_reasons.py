"""Structured verdict text (attnverify.checks.reason) and its four renderers (attnverify.render.reasons): parts kept
typed through JSON, nothing ever cut, numbers that never print alike when they differ, mathematics typeset by
SymPy's printers (no ASCII maths, no \\textasciicircum)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
import sympy as sp

from attnverify.checks.claims import ClaimResult, ClaimVerdict
from attnverify.checks.reason import (CheckRef, Math, Number, Reason, Text, as_reason, bracket, digits_for, listing,
                                      pm, reason)
from attnverify.checks.reason_expr import expr_from_data
from attnverify.render import reasons as R

MU = sp.Symbol("mu_t^beta")                       # SymPy's convention: mu, subscript t, superscript beta
PI_PUSH = sp.Symbol(r"\Pi_{\#}\mu_{0}")          # a name SymPy cannot spell: LaTeX with braces
BETA = sp.Symbol("beta", positive=True)


def _sample() -> Reason:
    W2 = sp.Function("W_2")(MU, PI_PUSH)
    return reason("the measured ", pm(0.746194, 3.9e-05), " is below the stated ", Number(0.746258), " for ",
                  Math(W2), " (", CheckRef("slr.zeta_two_ways"), ")",
                  items=[("along ", Math(BETA), ": decays like ", Math(BETA ** sp.Float(-0.54, 3))),
                         ("bracket ", bracket(0.88, 0.9), ", point ", bracket(0.5, 0.5), ", ",
                          Number(float("inf")), ", ", Number(6.33e-7, unit="s"))])


# ----------------------------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------------------------
def test_json_round_trip_keeps_every_part_typed_and_exact():
    x = sp.Symbol("x", positive=True)
    expr = sp.Float("0.1", 30) * x ** sp.Rational(1, 3) + sp.pi * sp.sqrt(sp.log(BETA + 1)) / BETA
    r = _sample().item("exact: ", Math(expr), " and ", Number(float("nan"), se=float("inf")), " ", Math(r"\Pi_\#"))
    back = Reason.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.to_dict() == r.to_dict() and [type(p) for p in back.parts()] == [type(p) for p in r.parts()]
    assert Reason(back.lead[:-4], back.items[:-1]) == Reason(r.lead[:-4], r.items[:-1])   # equal (no nan in it)
    restored = [p.expr for p in back.parts() if isinstance(p, Math) and not isinstance(p.expr, str)]
    assert sp.srepr(restored[-1]) == sp.srepr(expr)          # the Float keeps its 30 digits, x its assumption
    assert restored[-1].free_symbols == {x, BETA}


@pytest.mark.parametrize("bad", [{"node": "Popen", "args": []}, {"node": "__import__", "args": []},
                                 {"singleton": "os"}, "Symbol('x')"])
def test_a_stored_expression_is_never_evaluated(bad):
    with pytest.raises(ValueError):
        expr_from_data(bad)


def test_a_plain_string_is_a_reason_everywhere():
    assert as_reason("holds at $\\theta = 2$") == Reason((Text("holds at $\\theta = 2$"),))
    v = ClaimVerdict("holds", "plain words")
    row = ClaimResult("x.a", "x", "s", "src", v.verdict, v.reason, None, [], {})
    d = json.loads(json.dumps(row.as_dict()))
    assert d["reason"] == "plain words" and Reason.from_dict(d["reason_parts"]) == as_reason("plain words")
    for render in (R.plain, R.terminal, R.markdown, R.latex, R.html):
        assert "plain words" in render("plain words")


def test_bad_parts_are_refused_in_one_line():
    for make in (lambda: Number(1.0, digits=0), lambda: Number(1.0, se=-1.0), lambda: Number(None),
                 lambda: Number(None, interval=(2.0, 1.0)), lambda: Math(""), lambda: Math(1.5),
                 lambda: reason(object())):
        with pytest.raises(ValueError):
            make()


def test_adding_words_keeps_a_reason():
    r = reason("lead", items=[("a",), ("b",)]) + "; more"
    assert isinstance(r, Reason) and r.items[-1] == (Text("b; more"),)
    assert "b; more" in r and str("x: " + reason("y")) == "x: y"


# ----------------------------------------------------------------------------------------------------------------
# nothing is cut
# ----------------------------------------------------------------------------------------------------------------
def test_a_long_reason_is_never_cut_by_any_renderer_or_the_json():
    items = [(f"along beta at t = {k} (D): D reaches at most ", Number(0.3 + k / 1000), f" times the bound item{k}end")
             for k in range(300)]
    r = reason("an upper bound consistent with the evidence:", items=items)
    row = ClaimResult("B.x", "B", "s", "src", "not_refuted", r, None, [], {})
    stored = Reason.from_dict(json.loads(json.dumps(row.as_dict()))["reason_parts"])
    for text in (R.plain(stored), R.terminal(stored), R.markdown(stored), R.markdown(stored, inline=True),
                 R.latex(stored), R.html(stored), str(stored)):
        assert all(f"item{k}end" in text for k in range(300))
    assert len(R.terminal(stored).splitlines()) == 301          # the lead and one line per item


# ----------------------------------------------------------------------------------------------------------------
# numbers
# ----------------------------------------------------------------------------------------------------------------
def test_two_different_numbers_never_print_alike():
    # at 4 digits both read "1"; by hand, five digits tell them apart: 1.0001 and 1.0002
    r = reason("the measured ", Number(1.0001), " is below the stated ", Number(1.0002))
    assert R.plain(r) == "the measured 1.0001 is below the stated 1.0002"
    # lam* and a bracket's ends that agree to 7 digits: printed until they differ, each correctly rounded
    values = [0.89243795, 0.89243801]
    text = R.plain(reason(Number(values[0]), " vs ", Number(values[1])))
    printed = re.findall(r"[0-9.]+", text)
    assert printed[0] != printed[1]
    for p, v in zip(printed, values):
        assert abs(float(p) - v) <= 0.5 * 10 ** -(len(p.split(".")[1]))


def test_the_same_number_twice_prints_alike_at_its_own_digits():
    assert R.plain(reason(Number(0.123456), " and ", Number(0.123456))) == "0.1235 and 0.1235"


def test_a_degenerate_bracket_is_a_point_and_a_narrow_one_keeps_two_ends():
    assert R.plain(reason("lam* = ", bracket(0.89243795, 0.89243795))) == "lam* = 0.8924"
    assert R.plain(reason(bracket(0.892437, 0.892438))) == "[0.892437, 0.892438]"
    assert R.plain(reason(bracket(0.88, 0.9))) == "[0.88, 0.9]"


def test_a_list_of_tested_values_names_each_once():
    assert R.plain(reason("tested at ", listing([0.5, 0.88, 0.5, 0.88], last=" and "))) == "tested at 0.5 and 0.88"


def test_number_layouts_by_hand():
    assert R.latex(reason(Number(1.23e-4))) == r"$1.23\times10^{-4}$"
    assert R.latex(reason(pm(0.746, 0.004))) == r"$0.746 \pm 0.004$"
    assert R.plain(reason(pm(0.746, 0.004))) == "0.746 ± 0.004"
    assert R.plain(reason(Number(6.33e-7))) == "6.33×10⁻⁷"
    # the value is printed to the second significant digit of its standard error: 0.746194 +- 3.9e-05
    assert R.plain(reason(pm(0.7461942, 3.9e-05))) == "0.746194 ± 0.000039"
    assert R.plain(reason(pm(7.461942e-6, 3.9e-10))) == "7.46194×10⁻⁶ ± 3.9×10⁻¹⁰"   # to the 1e-11 place of the se
    assert R.plain(reason(Number(30), " runs, ", Number(40000.0), " tasks")) == "30 runs, 40000 tasks"
    assert R.plain(reason(Number(12.5, unit="s"))) == "12.5 s"
    assert str(reason(pm(0.746, 0.004), " ", Number(6.33e-7))) == "0.746 ± 0.004 6.33e-07"


def test_digits_are_raised_only_where_numbers_clash():
    # by hand: at 4 digits 1.0001, 1.0 and 1.00002 all read "1"; at 5, 1.0 and 1.00002 still do; at 6 none;
    # 2.0 never clashes and keeps its 4
    r = reason(Number(1.0001), " ", bracket(1.0, 1.00002), " ", Number(2.0))
    assert digits_for(r) == [5, 6, 6, 4]
    assert R.plain(r) == "1.0001 [1, 1.00002] 2"


# ----------------------------------------------------------------------------------------------------------------
# mathematics in each output
# ----------------------------------------------------------------------------------------------------------------
def test_terminal_shows_unicode_maths_and_items_as_lines():
    lines = R.terminal(_sample()).splitlines()
    assert "W₂(μ^βₜ,Π_#μ₀)" in lines[0] and "0.746194 ± 0.000039" in lines[0]
    assert lines[1].startswith("  - along β: decays like β^(-0.54)")
    assert lines[2] == "  - bracket [0.88, 0.9], point 0.5, ∞, 6.33×10⁻⁷ s"
    assert "mu" not in R.plain(_sample()) and "beta" not in R.plain(_sample())


def test_markdown_keeps_latex_between_dollars():
    md = R.markdown(_sample())
    assert r"$W_{2}{\left(\mu^{\beta}_{t},\Pi_{\#}\mu_{0} \right)}$" in md and "`slr.zeta_two_ways`" in md
    assert "\n- along $\\beta$" in md
    cell = R.markdown(_sample(), inline=True)
    assert "\n" not in cell and "<br>- along" in cell


def test_latex_is_typeset_never_escaped_ascii():
    tex = R.latex(_sample())
    assert r"\textasciicircum" not in tex and "mu^beta" not in tex
    assert r"\mu^{\beta}_{t}" in tex and r"$0.746194 \pm 0.000039$" in tex
    assert r"\begin{itemize}" in tex and tex.count(r"\item ") == 2 and r"\texttt{slr.zeta\_two\_ways}" in tex


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.text, self.ok = [], [], [], True

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        self.tags.append(tag)

    def handle_endtag(self, tag):
        self.ok &= bool(self.stack) and self.stack.pop() == tag

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_mathml_with_balanced_tags():
    page = R.html(_sample())
    p = _Tags()
    p.feed(page)
    assert p.ok and not p.stack
    assert "msubsup" in p.tags and p.tags.count("li") == 2 and "ul" in p.tags
    text = "".join(p.text)
    assert "\\" not in text and "{" not in text               # the brace-named symbol came through Unicode
    assert "W" in text and "w_2" not in text                  # the function keeps its name (SymPy lowercases it)
    assert 'href="#check-slr-zeta-two-ways"' in page


def test_relations_are_well_formed_mathml_and_a_unary_minus_sits_on_its_operand():
    """SymPy's MathML printer writes a relation's "<" and ">" unescaped; the page must stay well-formed XML. Its
    LaTeX spaces a unary minus as a binary one ("- \\xi"); the Unicode line writes "-ξ", a difference keeps spaces."""
    import xml.etree.ElementTree as ET

    import sympy as sp

    theta, xi = sp.symbols("theta xi")
    r = reason("where ", Math(theta < 0), " and ", Math(sp.Gt(theta, -xi)), ", next to ", Math(-xi))
    page = R.html(r)
    root = ET.fromstring(f"<p>{page}</p>")                    # raises on a raw "<" inside <mo>
    ops = [e.text for e in root.iter() if e.tag.endswith("mo")]
    assert "<" in ops and ">" in ops
    assert R.plain(r) == "where θ < 0 and θ > -ξ, next to -ξ"
    assert R.plain(reason(Math(theta - xi))) == "θ - ξ"


def test_a_sign_given_as_latex_is_a_mathml_operator_and_other_latex_is_mathml_not_text():
    """Signs SymPy cannot spell are LaTeX strings (\\leq, \\pm, \\sim, \\to, ">"): in MathML they are <mo>
    operators (spaced and stretched as relations), not <mtext>; other LaTeX strings are mathematics too
    (latex2mathml): identifiers, operators and scripts, never their Unicode as <mtext>."""
    import xml.etree.ElementTree as ET

    r = reason(Number(0.1), " ", Math(r"\leq"), " ", Number(0.2), " ", Math(">"), " ", Math(r"\pm"), " ",
               Math(r"\to"), " ", Math(r"\sim"), " ", Math(r"\eta_{0}^{2} \max \mathbb{E}|g|^{2}"))
    root = ET.fromstring(f"<p>{R.html(r)}</p>")
    ops = [e.text for e in root.iter() if e.tag.endswith("mo")]
    ids = [e.text for e in root.iter() if e.tag.endswith("mi")]
    texts = [e.text for e in root.iter() if e.tag.endswith("mtext")]
    assert {"≤", ">", "±", "→", "∼", "max", "|"} <= set(ops), ops
    assert {"η", "𝔼", "g"} <= set(ids) and any(e.tag.endswith("msubsup") for e in root.iter())
    assert texts == []


def test_latex_math_is_mathml_identifiers_and_operators_not_text():
    """``Math(r"\\max |z|")`` in MathML: max an operator, z an identifier between bars, no <mtext>, no backslash,
    well-formed inside the page (a "<" or "&" in a \\text{} is escaped)."""
    import xml.etree.ElementTree as ET

    inner = R.mathml_inner(r"\max |z|")
    assert inner == '<mrow><mo>max</mo><mo stretchy="false">|</mo><mi>z</mi><mo stretchy="false">|</mo></mrow>'
    page = R.html(reason("the largest ", Math(r"\max |z|"), " and ", Math(r"\text{a<b & c} + \mathrm{closed}")))
    root = ET.fromstring(f"<p>{page}</p>")
    assert "mtext" not in R.mathml_inner(r"|\mathrm{closed} - \mathrm{FD}|")
    assert "<mi mathvariant=\"normal\">closed</mi>" in R.mathml_inner(r"|\mathrm{closed} - \mathrm{FD}|")
    assert [e.text for e in root.iter() if e.tag.endswith("mtext")] == ["a<b\xa0&\xa0c"]   # \text{} spaces: no-break
    assert "\\" not in page and "&#x" not in page


def test_latex_that_latex2mathml_cannot_convert_keeps_the_text_fallback():
    """An unknown command (left raw by latex2mathml) or unbalanced braces (an error there): that part only falls
    back to its Unicode as <mtext>; a sign stays an <mo>."""
    assert R.latex_mathml(r"\notacommand x") is None and R.latex_mathml(r"\frac{1}{") is None
    assert R.mathml_inner(r"\notacommand x").startswith("<mtext>")
    assert R.mathml_inner(r"\leq") == "<mrow><mo>≤</mo></mrow>"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (texlive-latex-base)")
def test_latex_reason_compiles(tmp_path):
    body = R.latex(_sample())
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[utf8]{inputenc}", r"\usepackage[T1]{fontenc}",
                     r"\usepackage{amsmath,amssymb}", r"\begin{document}", body, r"\end{document}"])
    (tmp_path / "r.tex").write_text(doc, encoding="utf-8")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]


def test_convention_maths_in_words_is_mathml_in_html():
    """Words with mathematics between dollars (the convention text of a str part) were a <span> of Unicode in HTML;
    they are MathML like every Math part."""
    out = R.html("the value $\\beta_{1} \\leq 2$ here")
    assert "<math" in out and "<msub><mi>β</mi>" in out and "<mo>≤</mo>" in out and 'class="tex"' not in out


def test_a_symbol_named_in_latex_is_structured_mathml():
    """A SymPy symbol named in LaTeX (\\Pi_{\\#}\\mu_{0}, SymPy cannot spell it) was one <mi> of its Unicode; it is
    MathML with its subscripts."""
    out = R.mathml(sp.Function("W_2")(sp.Symbol(r"\mu^{\beta}_{t}"), sp.Symbol(r"\Pi_{\#}\mu_{0}")))
    assert "<msubsup><mi>&#956;</mi>" in out and "<msub><mi>&#928;</mi>" in out
    assert "Π#μ₀" not in out and "\\" not in out
