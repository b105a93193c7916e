"""A decimal means the number its digits spell, everywhere a claim or a model file gives one (issue 31.1, the
class a reviewer widened): SymPy's 15-digit Float arithmetic rounded a stated form's decimals while the form was
read, so a wrong form was 'proved identical' ((1.1e16 + 1) - 1.1e16 read as 0) and a right one refuted; a value
in ``at`` with more digits than a double holds was read as the double. Also: a logarithm to base 0 read as 0, an
empty Max() as -oo, a gamma of a large number computed while parsing, and a proof that expanded a 200th power
for minutes."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import sympy as sp

import attnverify
from attnverify.checks.expression_reader import DecimalFloat, exact_number, parse_expression
from attnverify.checks.params import InputError
from attnverify.render.reasons import plain
from attnverify.theory.certified import uncertifiable
from attnverify.theory.compare import MAX_EXPANDED_TERMS, expanded_terms

THETA = sp.Symbol("theta", positive=True)
#: slr.linear_excess, derived: gamma^2 (L - 1) / (gamma^2 + L - 1)
EXCESS = "gamma**2*(L - 1)/(gamma**2 + L - 1)"


def read(text: str):
    return parse_expression(text, {"theta": THETA}, "claim 'mine.x', field 'stated'")


@pytest.mark.parametrize("text, value", [
    ("(1.1e16 + 1) - 1.1e16", 1),                 # Floats: 1.1e16 + 1 rounds to 1.1e16, and the 1 was lost
    ("1.1*1e16 - 11000000000000000", 0),          # Floats: the binary 1.1 times 1e16 is 0.89 off
    ("0.1 + 0.2 - 0.3", 0),                       # Floats: 5.55e-17
    ("1e-400*10**400", 1),                        # Python's float: 0
    ("1_000.5*2", 2001),
])
def test_a_decimal_is_the_rational_its_digits_spell(text, value):
    assert read(text) == value


def test_a_stated_latex_decimal_is_exact_too():
    from attnverify.checks.latex_reader import LatexText

    assert parse_expression(LatexText("0.1 + 0.2 - 0.3 + \\theta"), {"theta": THETA}, "w") == THETA


@pytest.mark.parametrize("text, words", [
    ("log(theta, 0)", "base 0"),                  # SymPy: log(theta)/log(0) = 0, so any form 'equal' plus it
    ("log(theta, 1 - 1)", "base 0"),
    ("log(theta, -2)", "base -2"),
    ("theta + Max()", "oo"),                      # -oo, which the not-real check did not name
    ("theta - Float('inf')", "Float"),
    ("Float('2.5', 30)*theta", "Float"),                     # rationalize made it Rational('2.5', 30) = 1/12
    ("theta*Rational('nan')", "'nan' is not a finite number"),
    ("log(theta, theta - theta)", "base 0"),                  # a symbolic base that is the number 0
    ("gamma(theta - theta + 5000)", "too large"),
    ("gamma(E**0*5000)", "too large"),                         # a number the magnitude rule did not read
    ("theta*1e1_0000", "too large or too small"),              # an underscore ended the exponent's digits
    ("theta*1e-1233*1e-1233*1e-1233*1e-1233", "more than 4096 bits"),
    ("theta*1e5000", "too large or too small to read exactly"),
    ("theta*1e-5000", "too large or too small to read exactly"),
    ("gamma(3000000) + theta", "gamma(3000000) is a number too large"),   # computed while parsing: 30 s
    ("gamma(10**5)", "gamma(10**5) is a number too large"),
    ("gamma(Rational(40001, 2))", "too large"),
])
def test_forms_that_cannot_be_read_exactly_or_are_undefined_are_refused_at_once(text, words):
    with pytest.raises(InputError) as exc:
        read(text)
    assert words in str(exc.value) and "mine.x" in str(exc.value) and len(str(exc.value).splitlines()) == 1


def test_valid_neighbours_of_the_refused_forms_still_read():
    assert read("log(theta, 2)") == sp.log(THETA) / sp.log(2)
    assert read("Max(theta, 1)") == sp.Max(THETA, 1)
    assert read("gamma(100)") == sp.factorial(99)
    assert read("theta*1e-300") == THETA / 10**300


def test_negative_infinity_is_named_as_not_certifiable():
    assert "oo" in uncertifiable(THETA - sp.oo)


def test_a_claims_files_decimal_keeps_its_digits_and_pickles():
    x = DecimalFloat("0.10000000000000000001")
    assert float(x) == 0.1 and exact_number(x) == sp.Rational(10**19 + 1, 10**20)
    assert exact_number(0.1) == sp.Rational(1, 10) and exact_number(3) == 3
    y = pickle.loads(pickle.dumps(x))
    assert exact_number(y) == exact_number(x) and y == x


def _audit(tmp_path: Path, stated: str, at: str = "") -> dict:
    path = tmp_path / "c.toml"
    path.write_text('[[claim]]\nid = "mine.x"\nmodel = "slr"\nkind = "formula"\nquantity = "linear_excess"\n'
                    f'stated = "{stated}"\n' + (f"at = {{ {at} }}\n" if at else ""), encoding="utf-8")
    [row] = attnverify.audit(path, seed=0).claims
    return row


@pytest.mark.parametrize("extra, at, verdicts", [
    ("1.1*1e16 - 11000000000000000", "", {"holds"}),                   # exactly 0: was refuted at 325 se
    ("(1.1e16 + 1) - 1.1e16", "", {"refuted"}),                        # exactly 1: was 'proved identical'
    ("(10*gamma - 1)", "gamma = 0.10000000000000000001", {"inconclusive", "refuted"}),   # 1e-19: was 'holds'
])
def test_audit_verdicts_follow_the_exact_numbers(tmp_path, extra, at, verdicts):
    row = _audit(tmp_path, f"{EXCESS} + {extra}", at)
    assert row.verdict in verdicts, plain(row.reason)


def test_a_difference_below_a_doubles_resolution_is_quoted_as_its_certified_ball(tmp_path):
    """The floats of S and D were one double apart from equal: 'stated 1.92114, derived 1.92114' under 'differs',
    and 'about inf runs'. The text now quotes the certified ball of S - D and a finite run count."""
    row = _audit(tmp_path, f"{EXCESS}*(1 + 10**-17)")
    text = plain(row.reason)
    assert row.verdict == "inconclusive" and "stated minus derived lies in [" in text, text
    assert "∞" not in text and "inf " not in text, text


def test_a_proof_does_not_expand_a_form_too_large_to_expand():
    """(3 gamma - 2)(gamma + L + d + eps)^200 + the derived form is 0 at the one point the cheap test tried
    (gamma = 2/3), and cancel then expanded 1.37 million terms for minutes: the size is estimated first."""
    from attnverify.checks.judges.proof import cancels, prove_equal

    g, L, d, e = sp.symbols("gamma L d eps", positive=True)
    derived = g**2 * (L - 1) / (g**2 + L - 1)
    stated = derived + (3 * g - 2) * (g + L + d + e) ** 200
    assert expanded_terms((g + L + d + e) ** 200) == pytest.approx(1373701, rel=1e-6)       # C(203, 3)
    assert expanded_terms(derived) < 10 and expanded_terms((g + L) ** 30) == pytest.approx(31, rel=1e-9)
    assert expanded_terms(stated - derived) > MAX_EXPANDED_TERMS
    assert not cancels(stated, derived) and prove_equal(stated, derived) is None
    assert prove_equal(derived * (g + L) ** 3 / (g + L) ** 3, derived) == "cancel"     # small ones still proved


def test_a_model_files_decimal_is_exact_and_one_beyond_double_precision_is_refused():
    from attnverify.theory.engine.expressions import ModelError, parse

    x = sp.Symbol("x")
    assert parse("(1.1e16 + 1 - 1.1e16)*x", {"x": x}, ("m.toml", "mean")) == x
    assert parse("1e-300*x", {"x": x}, ("m.toml", "mean")) == x / 10**300
    for text, read_as in (("1e-400*x", "0.0"), ("1e400*x", "inf")):
        with pytest.raises(ModelError) as exc:
            parse(text, {"x": x}, ("m.toml", "mean"))
        assert "beyond double precision" in str(exc.value) and read_as in str(exc.value)


def test_a_claims_decimal_that_underflows_is_refused_before_its_exact_value_is_built(tmp_path):
    """at = { rho = 1e-999999999 }: the float is 0.0 (so 'finite'), and the exact value would take minutes."""
    from attnverify.checks.params import number_problem

    found = number_problem({"at": {"gamma": DecimalFloat("1e-999999999")}})
    assert found is not None and found[0] == "at.gamma" and "beyond double precision" in found[1]
    assert number_problem({"at": {"gamma": DecimalFloat("0.0e-999999999")}}) is None      # a true zero


def test_a_model_files_literal_that_underflows_is_refused_before_its_exact_value_is_built():
    from attnverify.theory.engine.expressions import ModelError, parse

    with pytest.raises(ModelError, match="beyond double precision"):
        parse("1e-3000000*x", {"x": sp.Symbol("x")}, ("m.toml", "mean"))
