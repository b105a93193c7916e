"""The LaTeX document: every symbol set by SymPy's printer or the notation table, numbered equations with short
semantic labels, tables that break across pages, distinct captions; it compiles with pdflatex, and the PDF,
rendered back to text (pdftotext, pdftohtml from poppler-utils), shows none of the known garbling patterns.
CI installs texlive-latex-base and poppler-utils; without them the PDF tests skip."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp

import attnverify.checks.runner as runner
from attnverify.cli import main


def test_tables_captions_and_labels_of_the_audit():
    from attnverify.render.latex import audit_table, claims_table, equation_label, figure_caption
    from attnverify.theory.derivation import Step

    table = audit_table([{"id": "a.b_c", "verdict": "pass", "observed": 6.33e-07, "threshold": 1e-05,
                          "comparison": "<="}])
    assert r"\begin{longtable}" in table and r"$6.33\times10^{-7}$ & $\le$ & $10^{-5}$" in table
    ledger = claims_table([{"id": "B.x", "verdict": "holds_if", "condition": "beta^-0.88 (sqrt)",
                            "reason": "r"}, {"id": "B.y", "verdict": "holds", "reason": r"like $\beta^{-0.88}$"}])
    assert r"$\beta^{-0.88}$ (sqrt)" in ledger and r"like $\beta^{-0.88}$" in ledger     # ASCII maths typeset
    assert r"\textasciicircum" not in ledger
    assert figure_caption("m.c", 1, 2, "t") != figure_caption("m.c", 2, 2, "t")
    assert equation_label("A-sym", Step("s", sp.Integer(0), "r", "J", "J-sym"), 9) == "eq:A-sym:J-sym"
    assert equation_label("B", Step("s", sp.Integer(0), "r"), 3) == "eq:B:3"
    with pytest.raises(ValueError, match="hyphens"):
        Step("s", sp.Integer(0), "r", "J", "J_sym")


def test_step_names_are_unique_short_and_complete():
    """Every step of every registered paper's sections has a name, unique in its section, and the labels stay
    short (eq:<key>:<name> within 24 characters)."""
    from attnverify.checks.registry import papers
    from attnverify.derive import derivation

    for paper in papers():
        for section in paper.sections():
            steps = derivation(paper.model, **section.options)
            names = [s.name for s in steps]
            assert all(names) and len(set(names)) == len(names), (section.key, names)
            assert all(len(f"eq:{section.key}:{n}") <= 24 for n in names), (section.key, names)


def test_derivations_only_document(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "run_one", lambda *a, **k: pytest.fail("--derivations-only ran a check"))
    tex = tmp_path / "eq.tex"
    assert main(["latex", "--derivations-only", "-o", str(tex)]) == 0
    text = tex.read_text(encoding="utf-8")
    assert r"\usepackage[utf8]{inputenc}" in text and r"\usepackage[T1]{fontenc}" in text
    assert r"\usepackage{longtable}" in text
    assert r"\resizebox" not in text and r"\begin{split}" in text
    n_eq = text.count(r"\begin{equation}")
    labels = re.findall(r"\\label\{(eq:[^}]*)\}", text)
    assert n_eq == len(labels) == len(set(labels)) > 40
    for name in ("eq:A:J-fixed", "eq:A:w", "eq:A:F", "eq:A:Delta-parallel", "eq:A-sym:J-sym", "eq:B:X-inf",
                 "eq:B:Pi-E1", "eq:B:b", "eq:B:t-star", "eq:B:dL-dtau"):
        assert name in labels, name
    # each label sits on its own step's equation (its left side)
    for name, lhs in (("eq:A:J-fixed", r"J_{\mathrm{fixed}}(\rho) ="), ("eq:A-sym:J-sym", r"J_{\mathrm{sym}}(\rho) ="),
                      ("eq:B:X-inf", r"X_\infty(x) ="), ("eq:B:dL-dtau", r"\frac{dL}{d\tau} =")):
        after = text.split(rf"\label{{{name}}}", 1)[1].lstrip("\n")
        assert after.replace(r"\begin{split}" + "\n", "").replace(" &=", " =").startswith(lhs), (name, after[:60])
    assert r"\section[Paper A: signal-subspace" in text and "symmetric-sign model" in text
    assert r"\section[Paper $" not in text and "Paper $" not in text
    # J_sym and Delta_parallel print compactly (a few terms, factored), not as one expanded fraction
    for name, most in (("eq:A-sym:J-sym", 700), ("eq:A:Delta-parallel", 700), ("eq:A-sym:Delta-parallel", 1400)):
        body = text.split(rf"\label{{{name}}}", 1)[1].split(r"\end{equation}", 1)[0]
        assert len(body) < most, (name, len(body))


def test_compact_display_forms_equal_the_derived_expressions():
    """The printed J_sym and Delta_parallel are display forms: the same expressions as the derivation's."""
    import random

    import attnverify.theory.signal as S

    steps = {s.name: s.result for s in S.derivation("symmetric")}
    fixed = {s.name: s.result for s in S.derivation("fixed")}
    assert sp.simplify(steps["J-sym"] - S.population_objective("symmetric")) == 0
    u, m = sp.symbols("u m", positive=True)
    back = {u: sp.exp(S.beta * S.theta * S.rho), m: sp.exp(S.beta**2 * S.sigma**2)}
    assert sp.simplify(fixed["Delta-parallel"].subs(back) - S.in_plane_term("fixed")) == 0
    rng = random.Random(3)
    for _ in range(5):      # the symmetric form at random points, 40 digits (an exact proof takes ~15 s)
        pt = {S.rho: sp.Rational(rng.randint(-999, 999), 1000), S.theta: sp.Rational(rng.randint(100, 2000), 1000),
              S.beta: sp.Rational(rng.randint(100, 2000), 1000), S.sigma: sp.Rational(rng.randint(300, 1500), 1000),
              S.R: rng.randint(1, 50), S.L: rng.randint(60, 500)}          # exact points: no rounding before evalf
        shown = steps["Delta-parallel"].subs(back).subs(pt).evalf(40)
        derived = S.in_plane_term("symmetric").subs(pt).evalf(40)
        assert abs(shown - derived) <= 1e-30 * max(1, abs(derived))


# ------------------------------------------------------------------------------------------------------------
# the PDF, rendered back to text
# ------------------------------------------------------------------------------------------------------------
LEGACY = ["the sup error decays like beta^-0.88, slower than sqrt(log(beta)/beta)",
          "E(t) = W2(mu^inf_t, Pi#mu_0) decays at 0.8 +- 6.33e-07, the bound at 1.2",
          "slope of t_min in log beta in [0.1, 0.2] (r2 0.9998): MC/closed ratio 1.01",
          "theta below the switch of -xi's stability (sign=fixed, beta=1), 50% of runs & more"]
CONVENTION = [r"the sup error decays like $\beta^{-0.88}$, slower than $\sqrt{\log(\beta+1)/\beta}$",
              r"$W_2(\mu^\infty_t, \Pi_\sharp\mu_0)$ decays at 0.8 with standard error 6.33e-07"]
# pdftotext signatures of the garbling seen in the document (issue 22): a text word set in math italic
# ("J_f ixed", "sign = f ixed", "M C/closed"), a script that takes one letter ("µi nf"), a superscript that
# takes only the minus ("β − 0.88"), a number in exponent form as mathematics ("6.33e − 07"), the delta method
# as δ, "Hess h Σ", the left sides dL/dtau and r_{L/r J}
FORBIDDEN = {"math-italic word": r"f ixed|M C/closed", "one-letter script": r"i nf", "stray superscript": r"β − 0\.88",
             "number as mathematics": r"\de − \d", "greek word": r"δ method", "Hess": r"Hessh", "dtau": r"dL/dtau",
             "r_L/r_J": r"rL/rJ|L/r J"}
# what must come out in a text (not a math) font, in one piece: plain texts stay plain, "Paper B:" is not $B$
PLAIN = ["Paper B:", "(r2 0.9998): MC/closed", "sign=fixed", "second-order delta method"]
# the ledger's ASCII maths is typeset (issue 29): none of it is left in a text font
TYPESET = ["beta^-0.88", "mu^inf_t", "sqrt(log(beta)/beta)", "Pi#mu_0", "+-"]


def _report(directory: Path) -> Path:
    """A JSON report with the ledger texts of the issue (plain ASCII and the $...$ convention), a ledger longer
    than a page, and three figures (two of one check)."""
    claims = [{"id": f"B.claim_number_{i:02d}", "paper": "B", "verdict": ("holds", "holds_if", "refuted")[i % 3],
               "statement": "s", "condition": (LEGACY + CONVENTION)[i % 6] if i % 3 else None,
               "reason": (LEGACY + CONVENTION)[i % 6] + " (and a longer reason)" * 3} for i in range(36)]
    checks = [{"id": "meanfield.zero_temperature_limit", "claim": LEGACY[0], "verdict": "pass", "observed": 6.33e-07,
               "threshold": 1e-05, "comparison": "<=", "plot_titles": ["sup error", "rate fit, MC/closed"]},
              {"id": "meanfield.w2_bound", "claim": CONVENTION[1], "verdict": "pass", "observed": 0.5, "threshold": 1,
               "comparison": "<=", "plot_titles": [r"zero-temperature part: $W_2(\mu^\infty_t, \Pi_\sharp\mu_0)$"]},
              {"id": "signal.x_y", "claim": "J(rho) matches", "verdict": "fail", "observed": -1.5e4, "threshold": 2,
               "comparison": "<="},
              {"id": "meanfield.z", "verdict": "error", "observed": None, "threshold": None}]
    path = directory / "report.json"
    path.write_text(json.dumps({"version": "0", "profile": "quick", "seed": 0, "checks": checks, "claims": claims}))
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    for name in ("meanfield_zero_temperature_limit_0", "meanfield_zero_temperature_limit_1", "meanfield_w2_bound_0"):
        fig = Figure(figsize=(4, 3))
        fig.subplots().plot([0, 1], [0, 1])
        fig.savefig(directory / f"{name}.png")
    return path


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{', '.join(missing)} missing in CI: .ci/run must install texlive-latex-base, poppler-utils")
        pytest.skip(f"{', '.join(missing)} not installed")


def compile_tex(path: Path, cwd: Path) -> str:
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", path.name],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return proc.stdout


def _text_font_stream(pdf: Path) -> str:
    """The PDF's text in reading order with every glyph of a math font replaced by ``§`` (pdftohtml -xml gives each
    run of text with its font): a phrase found here was typeset in text fonts, in one piece."""
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    fonts = dict(re.findall(r'<fontspec id="(\d+)"[^>]*family="([^"]*)"', xml))
    out = []
    for font, body in re.findall(r'<text [^>]*font="(\d+)"[^>]*>(.*?)</text>', xml):
        text = html.unescape(re.sub(r"<[^>]+>", "", body))
        math = re.search(r"Math|CMMI|CMSY|CMEX|MSBM|MSAM", fonts.get(font, ""))
        out.append(" ".join("§" * len(w) for w in text.split()) if math else text)
    return re.sub(r"\s+", " ", " ".join(out))


def test_pdf_shows_no_garbling(tmp_path):
    """Compile the document with the audit (a ledger with plain and convention texts, figures), render the PDF
    back to text, and look for every garbling pattern the issue lists. It fails on the regex-guessing typesetter
    (math italic words, stray scripts, \\section{Paper $B$...}, slug labels, duplicated captions, a ledger table
    that cannot break)."""
    _need("pdflatex", "pdftotext", "pdftohtml")
    report = _report(tmp_path)
    tex = tmp_path / "doc.tex"
    assert main(["latex", "-o", str(tex), "--from-json", str(report)]) == 0
    compile_tex(tex, tmp_path)
    log = compile_tex(tex, tmp_path)                        # second pass: the references resolve
    assert "undefined" not in log.lower() and "multiply defined" not in log.lower()
    assert "Overfull \\vbox" not in (tmp_path / "doc.log").read_text(errors="replace")   # tables break across pages
    pdf = tmp_path / "doc.pdf"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    found = {what: m.group(0) for what, pat in FORBIDDEN.items() if (m := re.search(pat, text))}
    assert not found, found
    assert "6.33 × 10" in text                               # numbers as 6.33 x 10^-7
    stream = _text_font_stream(pdf)
    missing = [p for p in PLAIN if p not in stream]
    assert not missing, missing
    left = [p for p in TYPESET if p in stream]
    assert not left, left
    # every claim of the ledger is there, and the ledger spans pages
    pages = text.split("\f")
    where = [next(i for i, p in enumerate(pages) if f"B.claim_number_{k:02d}" in p) for k in (0, 35)]
    assert where[1] > where[0]
    # labels: short, unique, on the right step (the labels table and the equation of that number agree)
    aux = (tmp_path / "doc.aux").read_text()
    numbers = dict(re.findall(r"\\newlabel\{(eq:[^}]*)\}\{\{(\d+)\}", aux))
    assert len(numbers) > 40 and all(len(name) <= 24 for name in numbers), [n for n in numbers if len(n) > 24]
    layout = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    for name, lhs in (("eq:A:J-fixed", "Jfixed"), ("eq:A-sym:J-sym", "Jsym"), ("eq:A:Delta-parallel", "∆∥"),
                      ("eq:B:X-inf", "X∞"), ("eq:B:t-star", "t∗")):
        assert name in numbers, name
        row = [ln for ln in layout if re.search(rf"{re.escape(name)}\s+\({numbers[name]}\)", ln)]
        assert row and lhs in row[0].replace(" ", ""), (name, row)
        # the equation numbered so: between the line of the previous number and its own, a line opens with lhs
        n = int(numbers[name])
        end = next(i for i, ln in enumerate(layout) if ln.rstrip().endswith(f"({n})"))
        start = max(i for i, ln in enumerate(layout[:end]) if ln.rstrip().endswith(f"({n - 1})"))
        body = [ln.replace(" ", "") for ln in layout[start + 1:end + 1]]
        assert any(ln.startswith(lhs) for ln in body), (name, body)
    # figure captions are distinct
    captions = re.findall(r"^\f?Figure \d+: (.*)$", text, flags=re.M)
    assert len(captions) == 3 and len(set(captions)) == 3, captions


def test_fragment_goes_into_a_paper(tmp_path):
    _need("pdflatex")
    assert main(["latex", "--derivations-only", "--fragment", "-o", str(tmp_path / "frag.tex")]) == 0
    assert r"\documentclass" not in (tmp_path / "frag.tex").read_text()
    paper = tmp_path / "paper.tex"
    paper.write_text("\\documentclass{article}\\usepackage[utf8]{inputenc}\n"
                     "\\usepackage{amsmath,amssymb,graphicx,longtable,array}\n"
                     "\\begin{document}\nAs in (\\ref{eq:A:J-fixed}):\n\\input{frag}\n\\end{document}\n")
    compile_tex(paper, tmp_path)
    out = compile_tex(paper, tmp_path)
    assert "undefined" not in out.lower()
    assert r"\newlabel{eq:A:J-fixed}" in (tmp_path / "paper.aux").read_text()


def test_latex_refuses_an_unknown_paper_before_any_work(tmp_path, capsys):
    """A paper selection is read before anything runs: an unknown name is one line naming it, exit 2, no file."""
    tex = tmp_path / "x.tex"
    assert main(["latex", "nosuchmodel", "--derivations-only", "-o", str(tex)]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'nosuchmodel'" in err and len(err.strip().splitlines()) == 1 and not tex.exists()
