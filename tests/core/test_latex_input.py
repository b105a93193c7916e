r"""A stated form in LaTeX (``stated_latex``): read into exactly the expression it writes, every derived formula of
every paper read back from its own LaTeX, a misreading printed back by the audit, and input it cannot read refused
in one line that says what to write instead."""
from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from attnverify.checks.latex_reader import LatexText
from attnverify.checks.params import InputError
from attnverify.checks.registry import papers
from attnverify.checks.expression_reader import parse_expression
from attnverify.checks.stated import parse_claims
from attnverify.cli import main
from attnverify.render.exprs import latex as project_latex

beta, sigma, theta, rho, w, x, d = sp.symbols("beta sigma theta rho w x d")
lam, eps, x_xi = sp.symbols("lam eps x_xi")
NAMES = {s.name: s for s in (beta, sigma, theta, rho, w, x, d, lam, eps, x_xi)}


def read(text: str) -> sp.Expr:
    return parse_expression(LatexText(text), NAMES, "claim 'mine.x', field 'stated'")


# each expected expression is written out by hand in SymPy syntax
@pytest.mark.parametrize("text, expected", [
    (r"2 \beta \sigma^{2} \theta \rho w", 2 * beta * sigma**2 * theta * rho * w),          # implicit products
    (r"\theta^{2} w^{2} + \beta^2\sigma^4", theta**2 * w**2 + beta**2 * sigma**4),
    (r"x^23", 3 * x**2),                                                                  # a bare script: one digit
    (r"\frac{\beta}{2 \sigma}", beta / (2 * sigma)),
    (r"\dfrac12 \beta", beta / 2),
    (r"\beta / 2 \sigma", beta * sigma / 2),                                              # / binds one factor
    (r"\sqrt{x} + \sqrt[3]{d}", sp.sqrt(x) + d**sp.Rational(1, 3)),
    (r"e^{- \beta \theta}", sp.exp(-beta * theta)),
    (r"\exp\left(-\beta\right) \cdot \mathrm{e}", sp.exp(1 - beta)),
    (r"\tanh{\left(x \right)}", sp.tanh(x)),                                              # not tan(h x)
    (r"\sinh x^{2}", sp.sinh(x**2)),
    (r"\sin^{2}{\left(\theta \right)}", sp.sin(theta)**2),
    (r"\log{\left(x \right)} + \ln(d)", sp.log(x) + sp.log(d)),
    (r"\arctan(x) - \operatorname{atan}{\left(x \right)}", sp.Integer(0)),
    (r"\operatorname{erf}{\left(\frac{\theta}{\sqrt{2}} \right)}", sp.erf(theta / sp.sqrt(2))),
    (r"\Gamma\left(d\right)", sp.gamma(d)),
    (r"\max\left(\rho, \theta\right) - \min(\rho, \theta)", sp.Max(rho, theta) - sp.Min(rho, theta)),
    (r"\left|{\rho}\right| w + \lvert x \rvert", sp.Abs(rho) * w + sp.Abs(x)),
    (r"|\rho| \, w", sp.Abs(rho) * w),
    (r"\left[ \beta + 1 \right] \left\{ \theta \right\}", (beta + 1) * theta),
    (r"lam \epsilon^{2}", lam * eps**2),                                                  # lam is one symbol
    (r"\lambda \varepsilon", lam * eps),                                                  # a Greek abbreviation
    (r"x_{\xi} + x_\xi", 2 * x_xi),
    (r"1.5 \cdot 10^{-3} \beta", sp.Float("0.0015") * beta),
    (r"\pi \theta", sp.pi * theta),
    (r"I_{\frac{d}{2}}\left(x\right)", sp.besseli(d / 2, x)),
    (r"$\beta \times \left. \theta \right.$", beta * theta),
])
def test_each_construct_reads_as_written(text, expected):
    got = read(text)
    assert sp.simplify(got - expected) == 0, (text, got)


def _stateable(expr: sp.Expr, q) -> sp.Expr:
    """``expr`` with each alias's expansion replaced by the alias (a stated form names such a sub-expression by
    its alias, in either syntax)."""
    for name, expansion in q.aliases.items():
        expr = expr.subs(sp.sympify(expansion()), sp.Symbol(name))
    return expr


def _read_both(text_sympy: str, text_latex: str, names: dict) -> tuple:
    out = []
    for text in (text_sympy, LatexText(text_latex)):
        try:
            out.append(parse_expression(text, names, "round trip"))
        except InputError as exc:
            out.append(exc)
    return tuple(out)


def _round_trip(paper_list) -> tuple[int, list]:
    """Every formula quantity's derived expression printed by SymPy's and by the project's LaTeX printer and read
    back. Whatever the SymPy syntax reads, the LaTeX must read to an equal expression; what the SymPy syntax
    refuses (a size guard, a paper's own function with no certified evaluation), the LaTeX refuses too."""
    read_back, failures = 0, []
    for p in paper_list:
        for q in p.quantities():
            if "formula" not in q.kinds:
                continue
            derived = sp.sympify(q.derive())
            stated = _stateable(derived, q)
            names = {**q.symbols, **{a: sp.Symbol(a) for a in q.aliases}}
            expansion = {sp.Symbol(a): sp.sympify(f()) for a, f in q.aliases.items()}
            for printer in (sp.latex, project_latex):
                from_sympy, from_latex = _read_both(sp.sstr(stated), printer(stated), names)
                if isinstance(from_sympy, InputError):
                    if not isinstance(from_latex, InputError):
                        failures.append((p.model, q.name, printer.__name__, "read LaTeX the SymPy syntax refuses"))
                    continue
                if isinstance(from_latex, InputError):
                    failures.append((p.model, q.name, printer.__name__, str(from_latex)[:200]))
                    continue
                back = from_latex.subs(expansion)
                if not (back == derived or sp.simplify(back - derived) == 0):
                    failures.append((p.model, q.name, printer.__name__, f"read as {back}"))
                    continue
                read_back += 1
    return read_back, failures


def test_every_derived_formula_of_every_paper_reads_back_from_its_latex():
    read_back, failures = _round_trip(papers())
    assert not failures, failures
    assert read_back >= 10           # J_limit, w, F_limit, X_inf, risk, risk_on_M, linear_excess, the maps, x2 printers


MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


@pytest.mark.parametrize("model", [
    "paper_a",
    *(pytest.param(m, marks=pytest.mark.slow) for m in ("anisotropic", "matrices", "paper_a_symmetric", "two_signals")),
])
def test_every_derived_formula_of_a_model_file_reads_back_from_its_latex(model):
    from attnverify.checks.engine import add_model
    from attnverify.checks.registry import remove_paper

    paper = add_model(MODELS / f"{model}.toml")
    try:
        read_back, failures = _round_trip([paper])
    finally:
        remove_paper(paper.model)
    assert not failures, failures
    assert read_back >= 6                                   # J_limit, J_finite, F_limit, ... x2 printers


def test_a_misreading_is_printed_back(tmp_path, capsys):
    from attnverify.cli.run import _print_readings
    from attnverify.user_claims import prepare

    f = tmp_path / "c.toml"
    f.write_text("[[claim]]\nid = 'mine.w'\nmodel = 'signal'\nkind = 'formula'\nquantity = 'w'\n"
                 "stated_latex = '\\frac{R e^{\\beta \\theta \\rho}}{R e^{\\beta \\theta \\rho} + L - R}'\n")
    (resolved,) = prepare(f)                    # read and validated, nothing judged
    R, L = sp.symbols("R L")
    assert sp.simplify(resolved.read_as - R * sp.exp(beta * theta * rho) / (R * sp.exp(beta * theta * rho) + L - R)) == 0
    _print_readings([resolved])
    out = capsys.readouterr().out
    sympy_text = out.split(" read as ")[1].split("   (in LaTeX: ")[0]
    assert out.startswith("mine.w: stated_latex read as ") and sp.parse_expr(sympy_text, {**NAMES, "R": R, "L": L}) == resolved.read_as
    assert r"(in LaTeX: \frac{R e^{\beta \rho \theta}}" in out


@pytest.mark.parametrize("text, says", [
    (r"\foo{\theta}", r"cannot read '\foo' (a command this reader does not know)"),
    (r"J = \theta", "give only the right-hand side"),
    (r"\sum_{i} \theta", "a sum or a limit"),
    (r"\frac{\theta}{", "ends where a term was expected"),
    (r"(\theta", "expected ')' but found the end"),
    (r"\log_{2} \theta", r"write \log(x)/\log(b)"),
    (r"q_{1} \theta", "unknown symbol 'q_{1}'"),
    (r"1e-3 \theta", "write 10^{-3}, or write the form"),          # it said 'or or write'
    (r"\theta^{2}^{3}", "a double superscript"),                    # LaTeX refuses it; this reader made theta^6
])
def test_what_cannot_be_read_is_refused_with_what_to_write_instead(tmp_path, capsys, text, says):
    f = tmp_path / "c.toml"
    f.write_text("[[claim]]\nid = 'mine.J'\nmodel = 'signal'\nkind = 'formula'\nquantity = 'J_limit'\n"
                 f"stated_latex = '{text}'\n")
    assert main(["audit", str(f), "--no-cache"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "claim 'mine.J', field 'stated_latex'" in err, err
    assert says in err, err
    if "unknown symbol" not in says:
        assert "or write the form in SymPy syntax as 'stated'" in err


def test_an_unknown_greek_letter_is_named_as_an_unknown_symbol():
    with pytest.raises(InputError, match=r"field 'stated_latex': unknown symbol 'alpha'"):
        read(r"\alpha \beta")


@pytest.mark.parametrize("fields, says", [
    ({"stated": "theta", "stated_latex": r"\theta"}, "give 'stated' or 'stated_latex', not both"),
    ({"kind": "value", "stated_latex": "1"}, "field 'stated_latex' is for an expression"),
    ({"stated_latex": 3}, "field 'stated_latex' must be a LaTeX expression in a string"),
])
def test_the_stated_latex_field_is_checked_when_the_file_is_read(fields, says):
    entry = {"id": "mine.J", "model": "signal", "kind": "formula", "quantity": "J_limit", **fields}
    with pytest.raises(InputError, match=says):
        parse_claims({"claim": [entry]}, "c.toml")


def test_a_latex_claim_is_listed_with_its_notation():
    (c,) = parse_claims({"claim": [{"id": "mine.J", "model": "signal", "kind": "formula", "quantity": "J_limit",
                                    "stated_latex": r"\theta w"}]}, "c.toml")
    assert c.as_dict()["stated_latex"] == r"\theta w" and "stated" not in c.as_dict()


def test_a_rate_in_latex_is_the_rate_in_sympy_syntax():
    from attnverify.checks.judges import stated_exponent

    entry = {"id": "mine.rate", "model": "meanfield", "kind": "rate", "quantity": "field_error_exponent",
             "variable": "beta", "direction": "upper", "scale": "power"}
    (tex,) = parse_claims({"claim": [{**entry, "stated_latex": r"\sqrt{\frac{\log{\left(\beta + 1 \right)}}{\beta}}"}]},
                          "c.toml")
    (plain,) = parse_claims({"claim": [{**entry, "stated": "sqrt(log(beta + 1)/beta)"}]}, "c.toml")
    points = [1.0, 10.0, 100.0]
    assert stated_exponent(tex, points) == pytest.approx(stated_exponent(plain, points), rel=1e-15)
    assert stated_exponent(tex, points) != pytest.approx(stated_exponent(plain.restated("1/beta"), points))
