"""Each derivation step says what it is (identity, limit, approximation with its order, the model's assumption,
the paper's statement), and the terminal and the LaTeX mark it: a law-of-large-numbers limit, a delta-method term
and a Laplace expansion no longer look like identities SymPy proved."""
from __future__ import annotations

import pytest

from attnverify.derive import derivation
from attnverify.render import kinds
from attnverify.theory.derivation import STEP_KINDS, Step

# steps whose kind the derivation's reasons state in words (read from the theory, decided by hand)
EXPECTED = {
    ("signal", "w"): "limit",                    # law of large numbers for numerator and denominator
    ("signal", "Delta-d"): "approximation",      # ratio law of large numbers: the leading 1/L term
    ("signal", "Delta-parallel"): "approximation",   # second-order delta method
    ("signal", "J-fixed"): "identity",
    ("meanfield", "X-inf"): "limit",             # beta -> oo
    ("meanfield", "Pi-E1"): "limit",             # sympy.limit, tau -> oo
    ("meanfield", "laplace-m1"): "approximation",    # Watson's lemma, O(kappa^-2)
    ("meanfield", "b"): "statement",             # the paper's Theorem 1 bound, not derived
    ("meanfield", "oja"): "identity",
    ("slr", "Sigma-I"): "assumption",            # the model's Gaussian structure, written down
    ("slr", "R"): "identity",
}


@pytest.mark.parametrize("model", ["signal", "meanfield", "slr"])
def test_every_step_has_a_kind(model):
    steps = derivation(model)
    assert all(s.kind in STEP_KINDS for s in steps)
    assert all(s.order for s in steps if s.kind == "approximation")
    found = {s.name: s.kind for s in steps}
    for (m, name), kind in EXPECTED.items():
        if m == model:
            assert found[name] == kind, name


def test_the_marks_differ_by_kind():
    import sympy as sp

    marks = {k: kinds.text(Step("s", sp.Integer(0), "r", kind=k, order="O(1/L^2)" if k == "approximation" else ""))
             for k in STEP_KINDS}
    assert len(set(marks.values())) == len(STEP_KINDS)
    assert marks["approximation"] == "[≈ approximation, neglects O(1/L²)]"
    assert marks["limit"].startswith("[→") and marks["identity"].startswith("[=")


def test_terminal_and_latex_mark_the_delta_method(capsys):
    from attnverify.cli import main
    from attnverify.render.latex import derivation_section

    assert main(["derive", "signal", "--width", "110"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "In-plane" in ln)
    assert "[≈ approximation, neglects O(1/L²)]" in line
    assert "[→ limit] Informative attention mass" in out
    parts, _ = derivation_section("A", derivation("signal"), "A")
    tex = "\n".join(parts)
    assert r"[$\approx$ approximation, neglects $O(1/L^2)$]" in tex and r"[$\to$ limit]" in tex
