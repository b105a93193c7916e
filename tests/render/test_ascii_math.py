"""The ledger's plain-string reasons have their ASCII mathematics typeset for LaTeX (attnverify.render.ascii_math):
the issue's ``mu\\textasciicircum{}beta\\_t`` is gone, and words, identifiers and check ids stay text."""
from __future__ import annotations

import pytest

from attnverify.render.ascii_math import latex


@pytest.mark.parametrize("text, tex", [
    ("W2(mu^beta_t, Pi#mu_0)", r"$W_{2}(\mu^{\beta}_{t}, \Pi_{\#}\mu_{0})$"),
    ("loose by a factor beta^-0.54 here", r"loose by a factor $\beta^{-0.54}$ here"),
    ("K*exp(C1*t)*sqrt(log(beta+1))/sqrt(beta)", r"$K\,\exp(C_{1}\,t)\,\sqrt{\log(\beta+1)}/\sqrt{\beta}$"),
    ("sup_x |X_beta - X_inf| falls", r"$\sup_{x}$ $|X_{\beta} - X_{\infty}|$ falls"),
    ("0.746194 +- 3.9e-05", r"0.746194 $\pm$ $3.9\times10^{-5}$"),
    ("at t <= 5.33", r"at t $\le$ 5.33"),
    ("lam* in [0.5, 0.88]", r"$\lambda^{*}$ in [0.5, 0.88]"),
    ("theta below -xi's stability", r"$\theta$ below $-\xi$'s stability"),
])
def test_ascii_maths_is_typeset(text, tex):
    assert latex(text) == tex


@pytest.mark.parametrize("text", ["slr.oracle_vs_bayes and oracle_local_min_scan", "(r2 0.9998): MC/closed",
                                  "sign=fixed, (run the paper profile)", "50% & more", "E(t) at R = 500"])
def test_words_and_identifiers_stay_text(text):
    out = latex(text)
    assert "$" not in out.replace(r"\$", "") and r"\textasciicircum" not in out


def test_the_convention_passes_through():
    assert latex(r"decays like $\beta^{-0.88}$, 50% & more") == r"decays like $\beta^{-0.88}$, 50\% \& more"
