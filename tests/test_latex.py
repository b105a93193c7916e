"""The LaTeX document: real mathematics in the prose, numbered labelled equations broken over lines, both sign
models, the claims ledger and figures; it compiles with pdflatex (CI installs texlive-latex-base)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import sympy as sp

import attnverify.checks.runner as runner
from attnverify.cli import main
from attnverify.latex import GREEK_WORDS, expression_lines, prose, tex_text

GREEK_WORD_RE = re.compile(r"(?<![A-Za-z\\])(" + "|".join(w for w in GREEK_WORDS if w != "eta") + r")(?![A-Za-z])")


def test_tex_text_escapes_and_maps_unicode():
    assert tex_text("a_b & 50% ρ→∞") == r"a\_b \& 50\% $\rho$$\to$$\infty$".replace("$$", "")
    assert tex_text("café ☃") == "café ?"   # Latin letters stay (UTF-8, T1); what LaTeX cannot set becomes ?


def test_prose_puts_the_mathematics_in_math_mode():
    out = prose("Score noise: with g = <q, z> ~ N(0, sigma^2), the moment generating function")
    assert out == r"Score noise: with $g = \langle q, z\rangle  \sim  N(0, \sigma ^2)$, the moment generating function"
    out = prose("Closed-form flow x = e^(tau A) x0/|e^(tau A) x0| solves dx/dt = X_inf(x) for B = diag(b1, b2)")
    assert r"e^{(\tau  A)}" in out and "x_{0}" in out and r"X_{\infty}" in out and r"\operatorname{diag}(b_{1}" in out
    assert "the part of $z$ orthogonal" in prose("the part of z orthogonal")


def text_outside_math(tex: str) -> str:
    """The document with its mathematics, commands' arguments that hold code, and environments removed."""
    body = tex.split(r"\maketitle", 1)[1]
    body = re.sub(r"\\begin\{equation\}.*?\\end\{equation\}", " ", body, flags=re.S)
    body = re.sub(r"\$[^$]*\$", " ", body)
    body = re.sub(r"\\(texttt|label|ref|includegraphics)\{[^}]*\}", " ", body)
    return body


def test_long_expressions_are_broken_by_terms_not_shrunk():
    x, y = sp.symbols("x y")
    expr = sum(sp.exp(k * x) * (x + k * y) ** 2 / (1 + k) for k in range(1, 14))
    lines = expression_lines(expr, width=60)
    assert len(lines) >= 4
    assert sp.latex(expr).replace(" ", "") == "".join(lines).replace(" ", "")   # the same expression, cut
    prod = (1 + x) * sum(x ** k / (k + y) for k in range(1, 30))
    lines = expression_lines(prod, width=60)
    assert len(lines) >= 3 and r"\Bigl(" in lines[0] and lines[-1].endswith(r"\Bigr)")


def test_derivations_only_document(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "run_one", lambda *a, **k: pytest.fail("--derivations-only ran a check"))
    tex = tmp_path / "eq.tex"
    assert main(["latex", "--derivations-only", "-o", str(tex)]) == 0
    text = tex.read_text(encoding="utf-8")
    assert r"\usepackage[utf8]{inputenc}" in text and r"\usepackage[T1]{fontenc}" in text
    assert r"\resizebox" not in text and r"\begin{split}" in text
    n_eq = text.count(r"\begin{equation}")
    labels = re.findall(r"\\label\{(eq:[^}]*)\}", text)
    assert n_eq == len(labels) == len(set(labels)) > 40
    for name in ("eq:A-J", "eq:A-w", "eq:A-F", "eq:A-Delta-parallel", "eq:A-sym-J-sym", "eq:B-X-infty",
                 "eq:B-Pi-dimE1", "eq:B-b", "eq:B-t-star"):
        assert name in labels, name
    assert "symmetric-sign model" in text
    prose_only = text_outside_math(text)
    assert r"\textasciicircum" not in prose_only and r"\_" not in prose_only
    assert not GREEK_WORD_RE.search(prose_only), GREEK_WORD_RE.search(prose_only)


def compile_tex(path, cwd):
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", path.name],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return proc.stdout


def test_document_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI: .ci/run must install texlive-latex-base")
        pytest.skip("pdflatex not installed")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report = tmp_path / "report.json"
    report.write_text(json.dumps({
        "version": "0", "profile": "quick", "seed": 0,
        "checks": [{"id": "signal.x_y", "claim": "J(rho) matches Monte Carlo for sigma^2 = 1.", "verdict": "pass",
                    "observed": 1.5, "threshold": 2, "comparison": "<="},
                   {"id": "meanfield.z", "verdict": "error", "observed": None, "threshold": None}],
        "claims": [{"id": "A.up_to_sign", "paper": "A", "verdict": "holds_if", "statement": "s",
                    "condition": "theta > theta* = 1.0045 (fixed-sign model)", "reason": "r"}]}))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "signal_x_y_0.png")
    plt.close(fig)
    tex = tmp_path / "doc.tex"
    assert main(["latex", "-o", str(tex), "--from-json", str(report)]) == 0
    text = tex.read_text()
    assert "signal.x\\_y" in text and r"\includegraphics" in text and "Claims ledger" in text
    assert r"$\theta  > \theta^{*} = 1.0045$" in text
    compile_tex(tex, tmp_path)
    out = compile_tex(tex, tmp_path)          # second pass: the references resolve
    assert "undefined" not in out.lower()
    assert (tmp_path / "doc.pdf").stat().st_size > 10_000
    assert r"\newlabel{eq:A-J}" in (tmp_path / "doc.aux").read_text()
    # the fragment can be \input into a paper
    assert main(["latex", "--derivations-only", "--fragment", "-o", str(tmp_path / "frag.tex")]) == 0
    assert r"\documentclass" not in (tmp_path / "frag.tex").read_text()
    paper = tmp_path / "paper.tex"
    paper.write_text("\\documentclass{article}\\usepackage[utf8]{inputenc}\\usepackage{amsmath,amssymb,graphicx}\n"
                     "\\begin{document}\nAs in (\\ref{eq:A-J}):\n\\input{frag}\n\\end{document}\n")
    compile_tex(paper, tmp_path)
