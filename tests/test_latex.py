"""The LaTeX document compiles with pdflatex (CI installs texlive-latex-base, so there it must run)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from attnverify.cli import main
from attnverify.latex import tex_text


def test_tex_text_escapes_and_maps_unicode():
    assert tex_text("a_b & 50% ρ→∞") == r"a\_b \& 50\% $\rho$$\to$$\infty$".replace("$$", "")
    assert all(ord(ch) < 128 for ch in tex_text("ξ ∈ S^{d−1}, ‖q‖ = 1, ☃"))


def test_document_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI: .ci/run must install texlive-latex-base")
        pytest.skip("pdflatex not installed")
    report = tmp_path / "r.json"
    report.write_text('{"version": "0", "profile": "quick", "seed": 0, "checks": ['
                      '{"id": "signal.x_y", "verdict": "pass", "observed": 1.5, "threshold": 2},'
                      '{"id": "meanfield.z", "verdict": "error", "observed": null, "threshold": null}]}')
    tex = tmp_path / "doc.tex"
    assert main(["latex", "-o", str(tex), "--from-json", str(report)]) == 0
    text = tex.read_text()
    assert r"\begin{document}" in text and "signal.x\\_y" in text
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 10_000
