r"""A plot's title, axis labels and curve labels are typed (issue 29: mathematics in any text is an expression object
rendered per medium): every ``Plot(...)`` and ``Series(...)`` of the checks package builds them from parts -- words,
:class:`~attnverify.checks.reason.Math`, :class:`~attnverify.checks.reason.Number` -- never as ASCII mathematics in a
string (``"t = sum eta_j"``, ``"J'(rho)"``) nor as a number formatted into words (``f"theta={th:g}"``); and the
renderer draws them as matplotlib mathtext, which parses every one.

The source guard mirrors tests/render/test_verdict_text_typed.py (the same reader of the texts of an expression,
:func:`_text_nodes`, and of ASCII mathematics, :func:`attnverify.render.ascii_math.spans`), read at the ``title``,
``xlabel``, ``ylabel`` (the first three positional arguments) of every ``Plot(...)`` and the ``label`` (the first)
of every ``Series(...)``. A label is short, so it reads more than the reader of reasons: a lone symbol (``"t"``,
``"J"``, ``"W2"``), a symbol set equal to something (``"L = "``, ``"y = x"``), a prime (``"J'"``), a script (``_``,
``^``), an absolute value (``|...|``), ``+-``, an ``x`` used as times, and mathematics between dollars (a ``str``
of the convention: the checks type theirs), and a value printed after ``=`` or ``#`` (a Number part).
"""
from __future__ import annotations

import ast
import functools
import importlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from test_verdict_text_typed import _prints_a_number, _text_nodes, _words

from attnverify.checks.plots import Plot, Series
from attnverify.checks.reason import Math, Number, Reason, reason
from attnverify.render.ascii_math import spans
from attnverify.render.figures import _colour_key, _wrap_label, draw_plot, label_text, mathtext

CHECKS = Path(__file__).resolve().parents[2] / "checks"

#: what ASCII mathematics in a short label looks like, beyond the spans of the reader of reasons
LABEL_MATH = {
    "a lone symbol": re.compile(r"(?<![\w.'\-/])(?![aAI](?![\w']))[A-Za-z]\d*(?![\w'(])"),
    "a symbol set equal": re.compile(r"(?<![\w.])[A-Za-z]\d*(?:_\w+)?'?\s*=|=\s*[A-Za-z]\b"),
    "a prime": re.compile(r"[A-Za-z)]'(?!s\b)"),
    "a script": re.compile(r"[A-Za-z0-9)}]\s*[_^]\s*[-A-Za-z0-9({]"),
    "an absolute value or norm": re.compile(r"\|[^|]+\|"),
    "a plus-minus": re.compile(r"\+-|-\+"),
    "an x used as times": re.compile(r"(?<=[\w)]) x (?=[\w(])"),
    "mathematics between dollars": re.compile(r"(?<!\\)\$"),
}
#: words that read as mathematics to the patterns above
LABEL_TERMS = ("route (b)", "Owen's T")


def _label_math(text: str) -> list[str]:
    """The ASCII mathematics of a label's string: the spans of the reader of reasons and the label patterns."""
    for term in LABEL_TERMS:
        text = text.replace(term, "")
    text = re.sub(r"(^|\s)#\s*$", "", text)           # "trajectory #" before a Number: "number", not a push-forward
    text = _words(text)
    found = [f"ASCII mathematics {spans(text)}"] if spans(text) else []
    return found + [what for what, pattern in LABEL_MATH.items() if pattern.search(text)]


def _plot_labels(tree: ast.AST):
    """(line, argument) of every title, xlabel and ylabel of a ``Plot(...)`` and label of a ``Series(...)``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "Plot":
                for arg in node.args[0:3] + [k.value for k in node.keywords if k.arg in ("title", "xlabel", "ylabel")]:
                    yield node.lineno, arg
            elif name == "Series":
                for arg in node.args[0:1] + [k.value for k in node.keywords if k.arg == "label"]:
                    yield node.lineno, arg


def _fstring_fields_after(node: ast.JoinedStr):
    """(field, the text just before it) of each field of an f-string."""
    before = ""
    for v in node.values:
        if isinstance(v, ast.Constant):
            before = str(v.value)
        else:
            yield v, before
            before = ""


def _problems(arg: ast.AST) -> list[str]:
    bad = []
    for node in _text_nodes(arg):
        if isinstance(node, ast.JoinedStr):
            for field, before in _fstring_fields_after(node):
                if _prints_a_number(field):
                    bad.append(f"a number formatted into words ({ast.unparse(field.value)}): a Number part")
                elif re.search(r"[=#]\s*$", before):
                    bad.append(f"a value printed after {before.strip()!r} ({ast.unparse(field.value)}): a Number "
                               "part")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            bad += [f"{what} in {node.value!r}" for what in _label_math(node.value)]
    return bad


@functools.lru_cache(maxsize=None)
def _sources() -> list[Path]:
    """The checks' modules that build a Plot or a Series (a text search first: parsing every module is slow)."""
    texts = {p: p.read_text(encoding="utf-8") for p in CHECKS.rglob("*.py")}
    return sorted(p for p, src in texts.items() if ("Plot(" in src or "Series(" in src)
                  and any(True for _ in _plot_labels(ast.parse(src))))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(CHECKS)))
def test_plot_titles_and_labels_are_built_from_parts(path):
    """Every title, axis label and curve label of the checks package is words, Math and Number parts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [f"line {line}: {what}" for line, arg in _plot_labels(tree) for what in _problems(arg)]
    assert not bad, "\n".join(bad)


def test_the_guard_reads_ascii_mathematics_in_labels_and_leaves_words():
    """The readers this guard relies on flag the labels of issue 29 and leave words (and typed parts) alone."""
    flagged = ["t = sum eta_j", "J'(rho)", "t at beta = inf (E(t))", "rho", "t", "W2", "y = x", "t = step x h",
               "|kappa| mean", "Monte Carlo +- 1 se", "R_lin - eps^2", "closed-form R", r"$W_2$ bound", "x_1(t)",
               "L J_correction", "E<xi, g>", "sqrt(theta^2 + eta^2 + rho^2)"]
    assert all(_label_math(s) for s in flagged), [s for s in flagged if not _label_math(s)]
    words = ["closed form", "Monte Carlo", "mean of runs", "second-order mean path", "attracting equilibria "
             "(certified)", "10 % quantile", "distance to ", " = ", ", run ", "Owen's T", "the oracle's Hessian",
             "mean over a run", "route (b)", "grid point", "overlap", "max over runs"]
    assert not [s for s in words if _label_math(s)], [(s, _label_math(s)) for s in words if _label_math(s)]

    def problems(src: str) -> list[str]:
        return _problems(ast.parse(src, mode="eval").body)

    assert problems('f"J(rho), theta={th:g}"') and problems('f"L = {L}"') and problems('f"x0 #{i}"')
    assert not problems('reason("closed form at ", THETA, " = ", Number(th))')
    assert not problems('f"{name} (Monte Carlo)"')
    assert not problems('reason(Math(sp.Symbol("rho")))')          # a Math part is no text


# ----------------------------------------------------------------------------------------------------------------
# the renderer
# ----------------------------------------------------------------------------------------------------------------
RHO, BETA, THETA = Math(sp.Symbol("rho")), Math(sp.Symbol("beta")), Math(sp.Symbol("theta"))


def _draw(fig) -> None:
    """Draw a figure with the Agg backend, a mathtext parse error (or a missing glyph's warning) failing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()


def test_a_typed_plot_is_drawn_as_mathtext():
    x = np.linspace(0.0, 1.0, 5)
    plot = Plot(reason(Math(sp.Function("J")(sp.Symbol("rho"))), ", ", THETA, " = ", Number(2.0), ", ",
                       Math(sp.Symbol("d")), " = ", Number(5)),
                reason(RHO), reason(Math(sp.Symbol(r"J^{\prime}")), "(", RHO, ")"),
                [Series(reason(BETA, " = ", Number(10)), x, x, style="o"),
                 Series(reason("bound ", BETA, " = ", Number(10)), x, 2 * x, role="bound"),
                 Series(reason(BETA, " = ", Number(3e6)), x, x ** 2, style="s"),
                 Series(reason(BETA, " = ", Math(sp.oo)), x, x ** 3, role="reference")])
    fig = draw_plot(plot)
    _draw(fig)
    ax = fig.axes[0]
    assert ax.get_xlabel() == r"$\rho$" and "rho" not in ax.get_xlabel().replace(r"\rho", "")
    assert ax.get_ylabel() == r"$J^{\prime}$($\rho$)"
    assert ax.get_title() == r"$J{\left(\rho \right)}$, $\theta$ = $2$, $d$ = $5$"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [r"$\beta$ = $10$", r"bound $\beta$ = $10$", r"$\beta$ = $3\times10^{6}$",
                      r"$\beta$ = $\infty$"]
    data, bound, other = ax.get_lines()[0], ax.get_lines()[1], ax.get_lines()[2]
    assert bound.get_color() == data.get_color() != other.get_color()    # a curve and its bound: one colour


def test_the_colour_key_and_the_legend_read_the_plain_text_of_a_label():
    assert label_text(reason("bound ", BETA, " = ", Number(10))) == "bound β = 10"
    assert _colour_key(reason("bound ", BETA, " = ", Number(10))) == _colour_key(reason(BETA, " = ", Number(10)))
    assert _colour_key(reason("q_S at ", BETA, " = ", Number(2e5))) == _colour_key(reason(BETA, " = ", Number(2e5)))
    assert _colour_key(reason(BETA, " = ", Number(10))) != _colour_key(reason(BETA, " = ", Number(20)))
    assert _colour_key("bound beta=10") == _colour_key("beta=10") == "beta=10"      # a plugin's str labels
    x = [0.0, 1.0]
    same = [Series(reason("mean ", Math(sp.Abs(sp.Symbol("kappa")))), x, x),
            Series(reason("mean ", Math(sp.Abs(sp.Symbol("kappa")))), x, x)]
    fig = draw_plot(Plot("t", "t", "q", series=same))
    assert len(fig.axes[0].get_legend().get_texts()) == 1                     # one legend entry per label


def test_a_long_typed_title_wraps_between_words_never_inside_a_part():
    title = reason("PGD on ", Math(sp.Symbol(r"\mathcal{M}")), " (", Math(sp.Symbol("d")), " = ", Number(20),
                   ", ", Math(sp.Symbol("lambda")), " = ", Number(0.5), "): ",
                   Math(sp.sqrt(sp.Symbol("theta") ** 2 + sp.Symbol("eta") ** 2 + sp.Symbol("rho") ** 2)),
                   " along the runs of the full dynamics and of the reduced map, side by side")
    lines = _wrap_label(title, 40).split("\n")
    assert len(lines) >= 3 and all(line.count("$") % 2 == 0 for line in lines)
    assert "".join(lines).replace(" ", "") == mathtext(title).replace(" ", "")
    fig = draw_plot(Plot(title, "t", "overlap", series=[Series("a", [0, 1], [0, 1])]))
    _draw(fig)


def test_a_plugins_str_labels_keep_working():
    fig = draw_plot(Plot(r"$W_2$ at $\beta = 10$", "rho", "J", series=[Series("beta=10", [0, 1], [0, 1])]))
    _draw(fig)
    assert fig.axes[0].get_xlabel() == "rho" and fig.axes[0].get_title() == r"$W_2$ at $\beta = 10$"


@pytest.mark.parametrize("tex", [r"\left\lvert x \right\rvert", r"\lVert x \rVert", r"a \le b", r"\tfrac{1}{N}",
                                 r"\mathbb{E}\langle \xi, g \rangle", r"\operatorname{J_{lim}}(\rho)",
                                 r"\Pi_{\#}\mu_{0}", r"\text{fitted scale}", r"\bigl(x\bigr)"])
def test_latex_mathtext_lacks_is_rewritten_to_what_it_parses(tex):
    out = mathtext(reason(Math(tex)))
    assert out.startswith("$") and out.endswith("$"), out                 # typeset, not given up as Unicode
    fig = draw_plot(Plot(reason(Math(tex)), reason(Math(tex)), "y", series=[Series(reason(Math(tex)), [0], [0])]))
    _draw(fig)


# ----------------------------------------------------------------------------------------------------------------
# every converted label renders
# ----------------------------------------------------------------------------------------------------------------
def _module(path: Path):
    rel = path.relative_to(CHECKS).with_suffix("")
    return importlib.import_module("attnverify.checks." + ".".join(rel.parts))


#: what a label's Math reads that is not a module constant: a direction of an engine model file (``xi``)
SAMPLE_LOCALS = {"d": "xi", "direction": "xi", "name": "xi"}


def _evaluate(node: ast.AST, module, path: Path):
    """A label's expression evaluated in its module's namespace, a local name read as :data:`SAMPLE_LOCALS`."""
    code = compile(ast.Expression(node), str(path), "eval")
    names = {**SAMPLE_LOCALS, **vars(module)}
    return eval(code, names)  # noqa: S307 -- the checks package's own source


def _label_maths(path: Path) -> list[tuple[int, Math]]:
    """Every Math part of the plot labels of a check module: each ``Math(...)`` written in a label, each call of a
    module function that gives one (``overlap(d)``), and each module-level Math or Reason a label names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module(path)
    out = []
    for line, arg in _plot_labels(tree):
        for node in ast.walk(arg):
            fn = getattr(node, "func", None) if isinstance(node, ast.Call) else None
            if isinstance(fn, ast.Name) and (fn.id == "Math" or callable(getattr(module, fn.id, None))
                                             and getattr(getattr(module, fn.id), "__module__", "") == module.__name__):
                value = _evaluate(node, module, path)
                out += [(line, p) for p in (value.parts() if isinstance(value, Reason) else [value])
                        if isinstance(p, Math)]
            elif isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), (Math, Reason, dict)):
                value = getattr(module, node.id)
                values = value.values() if isinstance(value, dict) else [value]
                out += [(line, p) for v in values if isinstance(v, (Math, Reason))
                        for p in (v.parts() if isinstance(v, Reason) else [v]) if isinstance(p, Math)]
    return out


def test_the_label_maths_are_found():
    """The collection below reads the Math of the labels, module constants and helpers alike."""
    maths = {str(m.expr) for _, m in _label_maths(CHECKS / "engine" / "ode_tracking.py")}
    assert "rho_xi" in maths and r"t = \sum_{j} \eta_{j}" in maths
    assert len(_label_maths(CHECKS / "signal" / "attention.py")) >= 4          # R/L, L, rho and the scalings


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(CHECKS)))
def test_every_mathematics_of_the_plot_labels_is_drawn_as_mathtext(path):
    """Each Math part of each check's plot labels is mathtext that matplotlib parses and draws (Agg), not given up
    as Unicode text."""
    from attnverify.render.figures import figure

    maths = _label_maths(path)
    assert maths, "no mathematics in the labels of a module whose labels the guard reads"
    for line, m in maths:
        out = mathtext(reason(m))
        assert out.startswith("$") and out.endswith("$") and out.count("$") == 2, (line, m, out)
        fig = figure()
        ax = fig.subplots()
        ax.set_xlabel(out)
        _draw(fig)


#: cheap checks (a few seconds at the quick profile) whose plots are drawn from a real run: one or more per paper
QUICK_CHECKS = ("signal.attention_on_noise", "signal.low_temperature", "meanfield.zero_temperature_flow",
                "meanfield.projection_stationary", "slr.bayes_posterior", "slr.oracle_vs_bayes",
                "slr.risk_vs_quadrature", "slr.gradient_vs_quadrature")


@pytest.mark.parametrize("check_id", QUICK_CHECKS)
def test_the_plots_of_a_quick_run_are_drawn_with_typed_labels(check_id, task_store):
    """The plots a check builds at the quick profile: every label with mathematics is typed, each of its Math
    parts is typeset as mathtext, and the figure draws (Agg) without a parse error or a missing glyph. The
    simulations are read from the session's task store when the quick audit stored them (tests/conftest.py)."""
    from attnverify.checks.runner import plan, run_one

    [(check, params)] = plan([check_id], profile="quick")
    result = run_one(check, params, seed=0, profile="quick", store=task_store)
    plots = result.evidence.plots
    assert plots, check_id
    for plot in plots:
        labels = [plot.title, plot.xlabel, plot.ylabel, *(s.label for s in plot.series)]
        assert any(isinstance(label, Reason) for label in labels), plot.title
        for label in labels:
            if isinstance(label, Reason):
                assert "$" not in "".join(p.text for p in label.parts() if hasattr(p, "text")), label
                for m in (p for p in label.parts() if isinstance(p, Math)):
                    assert mathtext(reason(m)).startswith("$"), (label, m)
        _draw(draw_plot(plot))
