"""``import attnverify``: symbols with assumptions and substitution by plain names, the closed forms, run/Report/
Result with their reprs, and the persistent derivation cache."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp

import attnverify
from attnverify import derive
from attnverify.checks import claims as claims_mod
from attnverify.checks.claims import ClaimResult, ClaimVerdict, claim
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.registry import REGISTRY, check


def test_symbols_carry_assumptions_and_subs_takes_plain_names():
    S = attnverify.symbols
    assert S.theta.is_positive and S.rho.is_real and S.rho.is_positive is None
    expr = S.theta ** 2 + S.rho * S.beta
    assert expr.subs(sp.Symbol("theta"), 2) == expr                  # the pitfall the helper exists for
    assert S.subs(expr, theta=2) == 4 + S.rho * S.beta
    assert S.subs(expr, {sp.Symbol("theta"): 2, "beta": 3}) == 4 + 3 * S.rho
    assert S.subs(expr, sigma=1) == expr                               # a project symbol absent from expr: fine
    with pytest.raises(KeyError, match="thetta"):
        S.subs(expr, thetta=2)                                         # a typo is not silently ignored


def test_closed_forms_are_sympy_objects():
    f = attnverify.formulas
    S = attnverify.symbols
    J = f.J("fixed")
    assert isinstance(J, sp.Expr) and S.rho in J.free_symbols
    # the fixed-model objective at beta = 0 is theta^2 w^2 with w = R/L (uniform attention)
    args = (S.rho, S.theta, S.beta, S.sigma, S.R, S.L)
    Jf = sp.lambdify(args, J, "numpy")
    rho = np.linspace(-1, 1, 5)
    # at beta = 0 attention is uniform: J = (theta R / L)^2, whatever rho
    assert np.allclose(Jf(rho, 0.25, 0.0, 1.0, 50, 1050), (0.25 * 50 / 1050) ** 2, rtol=1e-12)
    assert np.isfinite(Jf(rho, 0.25, 1.0, 1.0, 50, 1050)).all()
    Ff = sp.lambdify(args, f.F("fixed"), "numpy")
    dJ = sp.lambdify(args, sp.diff(J, S.rho), "numpy")
    assert np.allclose(Ff(rho, 2.0, 1.0, 0.5, 50, 1050), (1 - rho ** 2) * dJ(rho, 2.0, 1.0, 0.5, 50, 1050))
    B, V = [[1, 0], [0, 3]], [[2, 0], [0, 1]]
    assert f.rate(B, V) == pytest.approx(1 / 3)
    Pi = f.Pi(B, V)
    x1, x2 = sp.symbols("x1 x2", real=True)
    assert Pi.subs({x1: sp.Rational(3, 10), x2: sp.Rational(-2, 5)}) == sp.Matrix([0, -1])   # E = span(e2): V B^T = diag(2, 3)
    assert f.bound(c=sp.Rational(1, 3)).has(sp.exp(-attnverify.symbols.t / 3))


@pytest.fixture
def toy(monkeypatch):
    from attnverify.checks.stated import StatedClaim

    real = claims_mod.statement_of
    toy_stated = StatedClaim("B.toyapi", "meanfield", "qualitative", "toy", statement="A toy claim.", source="toy")
    monkeypatch.setattr(claims_mod, "statement_of", lambda cid: toy_stated if cid == "B.toyapi" else real(cid))

    def run(p, ctx):
        x = ctx.rng().normal(0.0, 1.0, 100)
        return Evidence(metric="|z|", observed=float(abs(x.mean()) * 10), threshold=4.0, reason="normal quantile",
                        passed=bool(abs(x.mean()) * 10 <= 4.0), details={"m": float(x.mean())},
                        plots=[Plot("toy plot beta", r"$\rho$", "J", [Series("beta=1", [0, 1], [0, 1]),
                                                                    Series("bound beta=1", [0, 1], [1, 2], style=":")])])

    check(id="toyapi.a", claim="A toy.", source="toy")(run)

    @claim(id="B.toyapi", paper="B", needs=("toyapi.a",))
    def _c(results, stated):
        return ClaimVerdict("not_refuted", reason="consistent")

    yield
    REGISTRY.pop("toyapi.a", None)
    claims_mod.CLAIMS.pop("B.toyapi", None)


def test_run_report_result_and_reprs(toy, tmp_path):
    rep = attnverify.run("toyapi.a", seed=1)
    assert isinstance(rep, attnverify.Report) and isinstance(rep.results[0], attnverify.Result)
    assert repr(rep).startswith("<Report profile=quick seed=1: 1 checks") and len(repr(rep)) < 200
    r = rep.result("toyapi.a")
    assert repr(r).startswith("<Result toyapi.a: pass, |z|: ") and len(repr(r)) < 200
    assert "toyapi.a" in r._repr_markdown_() and "<table>" in r._repr_html_()
    c = rep.claims[0]
    assert isinstance(c, ClaimResult) and repr(c) == "<ClaimResult B.toyapi: not_refuted>"
    assert "A toy claim." in c._repr_markdown_() and "not_refuted" in c._repr_html_()
    md = rep._repr_markdown_()
    assert "## Checks" in md and "## Claims" in md and "## toyapi.a" not in md
    assert "B.toyapi" in rep._repr_html_()
    full = rep.to_markdown()
    assert "## toyapi.a" in full
    fig = r.plot()
    import matplotlib.figure

    assert isinstance(fig, matplotlib.figure.Figure)
    lines = fig.axes[0].get_lines()
    assert lines[0].get_color() == lines[1].get_color()        # the same beta, one colour (solid and dotted)
    assert fig.axes[0].get_xlabel() == r"$\rho$"                # the convention's mathematics is mathtext
    assert fig.axes[0].get_ylabel() == "J"                      # words stay words
    out = rep.save(tmp_path / "rep")
    assert (out / "report.md").is_file() and (out / "toyapi_a_0.png").is_file()
    with pytest.raises(attnverify.InputError, match="force=True"):
        rep.save(tmp_path / "rep")
    rep.save(tmp_path / "rep", force=True)


def test_derivation_steps_have_short_and_rich_reprs():
    step = attnverify.derivation("meanfield")[0]
    assert repr(step).startswith("Step(") and len(repr(step)) < 100
    assert step._repr_latex_().startswith("$$") and step.label in step._repr_latex_()
    assert "*Because:*" in step._repr_markdown_()


def test_derivation_cache_is_keyed_by_code_and_survives_a_broken_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVERIFY_CACHE_DIR", str(tmp_path))
    from attnverify.theory.derivation import Step

    calls = []

    def compute(model, values):        # a cheap stand-in derivation: this test is about the cache
        calls.append((model, dict(values)))
        return "title", [Step("a step", attnverify.symbols.rho ** 2 + attnverify.symbols.theta, "because", r"x")]

    monkeypatch.setattr(derive, "_compute", compute)
    a = derive.derivation("meanfield")
    b = derive.derivation("meanfield")
    assert calls == [("meanfield", {})]                               # the second call read the cache
    assert [s.result for s in a] == [s.result for s in b]
    files = list((tmp_path / "derivations").glob("meanfield-*.pickle"))
    assert len(files) == 1 and derive.code_version() in files[0].name
    files[0].write_bytes(b"not a pickle")                             # a broken entry is recomputed
    c = derive.derivation("meanfield")
    assert calls == [("meanfield", {})] * 2 and [s.result for s in c] == [s.result for s in a]
    assert pickle.loads(files[0].read_bytes())                        # and rewritten
    monkeypatch.setattr(derive, "code_version", lambda: "another-version")
    derive.derivation("meanfield")
    assert len(calls) == 3                                            # new code, new entry
    monkeypatch.setenv("ATTNVERIFY_NO_CACHE", "1")
    derive.derivation("meanfield")
    assert len(calls) == 4


def test_render_labels_as_text():
    text = derive.render("meanfield", width=100)
    assert "X_∞(x) =" in text and "dL/dτ =" in text and "$" not in text and "\\" not in text


def test_plot_index_out_of_range_names_the_plots():
    from attnverify.api import Result
    from attnverify.checks.evidence import Evidence, Plot, Series

    plots = [Plot(f"plot {i}", "x", "y", [Series("s", [0, 1], [0, 1])]) for i in range(2)]
    r = Result("toy.x", "claim", "src", "pass", {}, 0.0, Evidence("m", 0.0, 1.0, "r", True, plots=plots))
    with pytest.raises(IndexError, match=r"toy.x has 2 plots \(plot\(0\) .. plot\(1\)\), not plot\(5\): 0: plot 0; 1: plot 1"):
        r.plot(5)
    with pytest.raises(TypeError, match="integer"):
        r.plot("0")
    import matplotlib.pyplot as plt
    plt.close(r.plot(-1))


def test_subs_by_plain_name_reaches_symbols_whose_sympy_name_differs():
    """Paper C's lam and eps are Symbol('lambda') and Symbol('epsilon') in its namespace and Symbol('lam'),
    Symbol('eps') in its quantities: S.subs(expr, lam=..., eps=...) once left both in place without an error."""
    import attnverify
    import attnverify.checks.slr.formulas as C
    from attnverify import symbols as S

    for expr in (C.risk_on_M(), attnverify.formula("slr.risk_on_M")):
        names = {s.name for s in S.subs(expr, lam=0.5, eps=0.1).free_symbols}
        assert names and not names & {"lam", "lambda", "eps", "epsilon"}, names
