"""A certified computation's refusal (attnverify.theory.refusals.OutsideCertifiedRange) is raised in typed parts --
words, SymPy expressions, numbers -- which theory builds without importing the checks; where a check run meets it
the unresolved result is a Reason of Text, Math and Number parts (attnverify.checks.evidence.refusal_reason), so
that each output typesets the mathematics (F'(ρ), θ = 50 in Unicode, never "F'(rho)" or a dict's repr). ``str``
of the exception, and of the Reason, stays one readable line for tools and logs."""
from __future__ import annotations

import pickle
import xml.etree.ElementTree as ET

import pytest
import sympy as sp
from flint import arb

from attnverify.checks.evidence import Evidence, refusal_reason
from attnverify.checks.reason import Math, Number, Reason, Text
from attnverify.checks.registry import Check
from attnverify.checks.runner import run_one
from attnverify.render import reasons as R
from attnverify.theory.certified import root_boxes
from attnverify.theory.engine.krawczyk import zero_boxes
from attnverify.theory.refusals import OutsideCertifiedRange, named_values
from attnverify.theory.signal import THEORY
from attnverify.theory.signal.equilibria import Equilibrium

PARAMS = {"theta": 50.0, "beta": 1.0, "sigma": 1.0, "R": 5, "L": 50, "d": 8}


def _raised(fn, *args) -> OutsideCertifiedRange:
    with pytest.raises(OutsideCertifiedRange) as info:
        fn(*args)
    return info.value


def _overflow() -> OutsideCertifiedRange:
    """The linearisation leaves double precision (closed_forms.py): an equilibrium with an infinite eigenvalue."""
    theory = THEORY.replace(_equilibria_at=lambda self, vals, sign, fs: (Equilibrium(1.0, float("inf"), False),))
    return _raised(theory.equilibria, PARAMS)


def _gave_up() -> OutsideCertifiedRange:
    """The root isolation gives up inside the equilibria (closed_forms.py, wrapping certified.py's refusal)."""
    def refuse(self, vals, sign, fs):
        root_boxes(lambda x: arb(0) * x, lambda x: arb(0), -1, 1, 1e-12, 50)
    return _raised(THEORY.replace(_equilibria_at=refuse).equilibria, PARAMS)


def _root_boxes() -> OutsideCertifiedRange:
    return _raised(root_boxes, lambda x: arb(0) * x, lambda x: arb(0), -1, 1, 1e-12, 50)


def _zero_boxes() -> OutsideCertifiedRange:
    return _raised(zero_boxes, lambda X: [arb(0) * x for x in X], lambda X: [[arb(0), arb(0)], [arb(0), arb(0)]],
                   ((arb(-1), arb(1)), (arb(-1), arb(1))), 1e-12, 50)


REFUSALS = {"overflow": _overflow, "gave_up": _gave_up, "root_boxes": _root_boxes, "zero_boxes": _zero_boxes}


def _toy_check(exc: Exception) -> Check:
    def run(params, ctx) -> Evidence:
        raise exc
    return Check("toy.refusal", "a refusal", "nowhere", (), run, {}, None)


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_each_refusal_becomes_a_typed_unresolved_reason_through_the_runner(kind):
    exc = REFUSALS[kind]()
    assert "\n" not in str(exc) and str(exc).strip() == str(exc)
    res = run_one(_toy_check(exc), {}, seed=0, profile="quick")
    r = res.unresolved
    assert res.verdict == "error" and isinstance(r, Reason) and r == refusal_reason(exc)
    assert res.error == f"Unresolved: {r}" and "\n" not in str(r)
    assert any(isinstance(p, Number) for p in r.parts())                  # the box limit, the parameters: numbers
    text = R.plain(r)
    assert "rho" not in text and "theta" not in text and "{" not in text, text
    if kind in ("overflow", "gave_up"):                                     # the parameters, named as symbols
        assert "θ = 50, β = 1, σ = 1, R = 5, L = 50, d = 8" in text, text
        assert sum(isinstance(p, Math) and p.expr.is_Symbol for p in r.parts()) == 6
    if kind == "overflow":
        assert "the linearisation F′(ρ) overflows double precision" in text, text
        tree = ET.fromstring(f"<p>{R.html(r)}</p>")
        identifiers = [e.text for e in tree.iter() if e.tag.endswith("mi")]
        assert {"ρ", "θ", "β", "σ"} <= set(identifiers), identifiers
        primed = ["".join(c.itertext()) for e in tree.iter() if e.tag.endswith("msup") for c in e]
        assert primed[:2] == ["F", "′"], primed                             # F′: F with a prime superscript
        assert r"F^{\prime}{\left(\rho \right)}" in R.latex(r)


def test_the_refusal_keeps_its_parts_typed_and_its_text_on_one_line():
    rho = sp.Symbol("rho")
    exc = OutsideCertifiedRange("the linearisation ", sp.Function(r"F^{\prime}")(rho), " overflows at\n",
                                *named_values({"theta": 0.125, "R": 5, "sign": "fixed"}))
    assert exc.parts[1] == sp.Function(r"F^{\prime}")(rho) and exc.parts[-1] == "fixed"
    assert str(exc) == r"the linearisation F^{\prime}(rho) overflows at theta = 0.125, R = 5, sign = fixed"
    back = pickle.loads(pickle.dumps(exc))                   # raised in a worker process: the parts cross back
    assert isinstance(back, OutsideCertifiedRange) and back.parts == exc.parts and str(back) == str(exc)
    r = refusal_reason(exc)
    assert r.lead[0] == Text("the linearisation ") and isinstance(r.lead[1], Math)
    assert Number(0.125, digits=4) in r.lead and Text(" = fixed") in r.lead
    assert R.plain(r) == "the linearisation F′(ρ) overflows at θ = 0.125, R = 5, sign = fixed" and "\n" not in str(r)


def test_a_number_keeps_every_digit_it_was_given():
    exc = OutsideCertifiedRange(*named_values({"beta": 0.123456789, "sigma": 1e-7}))
    assert R.plain(refusal_reason(exc)) == "β = 0.123456789, σ = 1×10⁻⁷"
    assert str(exc) == "beta = 0.123456789, sigma = 1e-07"


def test_an_exception_without_parts_stays_its_text():
    assert refusal_reason(ValueError("plain words")) == Reason((Text("plain words"),))
