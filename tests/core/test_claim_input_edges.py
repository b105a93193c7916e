"""Issue 48, D9-D12: the edges of a claim's input. A value in ``at`` outside the quantity's domain, a stated form that
is undefined or not real everywhere, a function's name used as a symbol: refused before any work with exit 2 and one
line naming the claim and the field. A stated form not real where the derived one is: a certified difference, said
so (never "differ by at most inf"). A figure typed at full double precision: judged to a few ulps, not below one."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import attnverify
from attnverify.checks.params import InputError
from attnverify.cli import main
from attnverify.render.reasons import plain
from attnverify.user_claims import prepare

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
W = "R*exp(beta*rho*theta)/(L + R*exp(beta*rho*theta) - R)"     # signal.w, the informative attention mass
#: the raw exception text a refusal must never carry
RAW = ("Error", "NotCertifiable", "Traceback", "has no certified", "FunctionClass", "zoo has", "I has")


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return repr(value) if isinstance(value, float) else (f'"{value}"' if isinstance(value, str) else str(value))


def _file(tmp_path: Path, model_file: Path | None = None, **fields) -> Path:
    """A claims file with one claim (id "mine.edge", by default a formula on signal.w)."""
    claim = {"id": "mine.edge", "model": "signal", "kind": "formula", "quantity": "w", "stated": W, **fields}
    if model_file is not None:
        claim.pop("model")
    lines = ([f'model = "{model_file}"', ""] if model_file is not None else []) + ["[[claim]]"]
    lines += [f"{k} = {_toml(v)}" for k, v in claim.items()]
    path = tmp_path / "claims.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _refused(path: Path, capsys, *named: str) -> str:
    """The one line the command line and the API refuse ``path`` with, checked: exit 2, the claim, ``named``."""
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    for part in ("mine.edge", *named):
        assert part in err[0], err[0]
    assert not any(raw in err[0] for raw in RAW), err[0]
    with pytest.raises(InputError) as api:
        attnverify.audit(path)
    assert str(api.value) in err[0]
    return err[0]


# -- D9: a value of ``at`` outside the domain, a stated form undefined or not real everywhere --------------------
@pytest.mark.parametrize("at, named", [
    ({"rho_xi": 2.0}, "rho_xi"),
    ({"rho_zeta": -1.5}, "rho_zeta"),
    ({"rho_xi": 0.8, "rho_zeta": 0.8}, "sum of squares"),        # each in [-1, 1], but no unit query has both
])
def test_an_overlap_outside_the_unit_ball_is_refused_before_any_work(tmp_path, capsys, at, named):
    path = _file(tmp_path, MODELS / "two_signals.toml", quantity="mass.signal1", stated="R1/L", at=at)
    _refused(path, capsys, "'at'", named)


def test_overlaps_inside_the_unit_ball_are_accepted(tmp_path):
    path = _file(tmp_path, MODELS / "two_signals.toml", quantity="mass.signal1", stated="R1/L",
                 at={"rho_xi": 0.6, "rho_zeta": -0.6})        # sum of squares 0.72
    (r,) = prepare(path)
    assert r.quantity.name == "mass.signal1"


@pytest.mark.parametrize("stated, named", [
    ("1/0", "undefined"), ("0/0", "undefined"), ("log(0)*R", "undefined"), (f"{W} + R/0", "undefined"),
    (f"{W} + 1e-3*sqrt(-1)", "not real"), ("log(-1)*rho", "not real"),
])
def test_a_stated_form_undefined_or_not_real_everywhere_is_refused(tmp_path, capsys, stated, named):
    _refused(_file(tmp_path, stated=stated), capsys, "'stated'", named)


# -- D10: a stated form not real where the derived one is real ---------------------------------------------------
def test_a_stated_form_imaginary_over_the_domain_is_a_certified_difference(tmp_path):
    # sqrt(rho - 2) is imaginary for every rho in [-1, 1]: at a point the stated value's imaginary part is
    # 0.01 sqrt(2 - rho), and no real measurement can agree with it
    (row,) = attnverify.audit(_file(tmp_path, stated=f"{W} + 0.01*sqrt(rho - 2)"), seed=0).claims
    text = plain(row.reason)
    assert row.verdict == "refuted", text
    assert "not real-valued" in text and "∞" not in text and "inf" not in text
    figures = row.evidence["stated"]
    rho = float(figures["not_real_at"]["rho"])
    lo, hi = figures["imaginary_part"]
    assert lo <= 0.01 * math.sqrt(2 - rho) <= hi and hi - lo < 1e-12


def test_a_real_odd_root_the_principal_branch_makes_complex_is_never_refuted(tmp_path):
    """A reviewer's true claim: signal.w with (rho**3)**(1/3) in place of rho, equal to w for every real rho under the
    real cube root, complex for rho < 0 on SymPy's principal branch; the non-real rule refuted it. An odd root is not
    a certified difference: the claim is not refuted (inconclusive: no proof, no point separates them)."""
    w3 = W.replace("rho", "(rho**3)**(1/3)")
    assert w3 != W
    (row,) = attnverify.audit(_file(tmp_path, stated=w3), seed=0).claims
    assert row.verdict != "refuted", plain(row.reason)


def test_points_that_cannot_be_compared_are_counted_never_an_infinite_bound():
    from attnverify.checks.judges.formula_judge import _unseparated
    from attnverify.checks.judges.proof import Ball
    from attnverify.checks.reason import reason

    found = [Ball({"rho": 0.5}, -1e-20, 1e-20, 0.3, 0.3, 128),
             Ball({"rho": 0.7}, -math.inf, math.inf, math.nan, 0.4, 128)]
    text = plain(reason(*_unseparated(found)))
    assert "∞" not in text and "inf" not in text
    assert "stated form is not a finite real number at 1 of the 2" in text and "at 1 points" in text


# -- D11: a function's name used as a symbol -----------------------------------------------------------------------
@pytest.mark.parametrize("stated, name", [
    ("gamma*R/L", "gamma"), ("R/(R + (L - R)*exp(-gamma*theta*rho))", "gamma"), ("exp*R", "exp"),
    ("Rational*R", "Rational"), ("erf", "erf"),
])
def test_a_function_name_used_as_a_symbol_is_an_unknown_symbol(tmp_path, capsys, stated, name):
    _refused(_file(tmp_path, stated=stated), capsys, "'stated'", f"unknown symbol '{name}'")


def test_a_symbol_named_like_a_function_still_reads_as_the_symbol():
    import sympy as sp

    from attnverify.checks.expression_reader import parse_expression

    gamma, zeta, R = sp.symbols("gamma zeta R", positive=True)
    names = {"gamma": gamma, "zeta": zeta, "R": R}
    assert parse_expression("R/(R + exp(-gamma*zeta))", names, "here") == R / (R + sp.exp(-gamma * zeta))
    with pytest.raises(InputError) as err:                  # a symbol called as a function: one line, no raw text
        parse_expression("gamma(R)", names, "here")
    assert "'gamma' is a symbol here" in str(err.value) and not any(raw in str(err.value) for raw in RAW)


# -- D12: a figure typed at full double precision ------------------------------------------------------------------
AT_ZERO = {"rho": 0.0, "theta": 1.0, "beta": 1.0, "sigma": 1.0, "R": 20, "L": 200}    # w = R/L = 1/10 exactly


@pytest.mark.parametrize("stated", [math.nextafter(0.1, 1.0), math.nextafter(0.1, 0.0)])
def test_a_figure_one_ulp_from_the_derived_value_holds(tmp_path, stated):
    (row,) = attnverify.audit(_file(tmp_path, kind="value", stated=stated, at=AT_ZERO), seed=0).claims
    assert row.verdict == "holds", plain(row.reason)


def test_a_figure_many_ulps_from_the_derived_value_is_not_within_rounding(tmp_path):
    stated = 0.1 + 1000 * math.ulp(0.1)
    (row,) = attnverify.audit(_file(tmp_path, kind="value", stated=stated, at=AT_ZERO), seed=0).claims
    assert "to within its resolution" not in plain(row.reason)


def test_the_default_resolution_is_the_printed_digit_but_never_below_the_double():
    from attnverify.checks.judges import half_unit

    assert half_unit(0.9965) == pytest.approx(5e-5, rel=1e-12) and half_unit(12.5) == pytest.approx(0.05, rel=1e-12)
    assert half_unit(0.5262541833393397) >= 2 * math.ulp(0.5262541833393397)


def test_agreement_within_the_derived_values_precision_says_so():
    """A figure at its derived value, measured 0.10000000000000561 +- 8.8e-17 against the derived 0.1 (64 standard
    errors apart, within the derived value's 1e-12 relative precision), read '... agrees with the derived value'
    with nothing more: the text now says how far apart they are and what is allowed."""
    from attnverify.checks.judges import Measured
    from attnverify.checks.judges.rounding import within_rounding
    from attnverify.checks.stated import StatedClaim

    claim = StatedClaim(id="c", model="test", kind="value", stated=0.1, quantity="q", at={})
    v = within_rounding(claim, Measured(0.10000000000000561, 8.8e-17, "exact"), 0.1)
    text = str(v.reason)
    assert v.verdict == "holds" and "floating-point precision" in text and "5.6" in text, text
    plain = within_rounding(claim, Measured(0.1, 1e-6, "exact"), 0.1)
    assert "floating-point precision" not in str(plain.reason)


# ----------------------------------------------------------------------------------------------
# a restatement of a built-in claim: its stated form read before its checks run
# ----------------------------------------------------------------------------------------------
def _builtin_expression_claims() -> list:
    from attnverify.checks.audit import EXPRESSION_KINDS
    from attnverify.checks.claims import all_claims, statement_of

    return [(c.id, statement_of(c.id)) for c in all_claims()
            if statement_of(c.id).kind in EXPRESSION_KINDS and isinstance(statement_of(c.id).stated, str)]


def _restatement(tmp_path: Path, cid: str, own, stated: str) -> Path:
    from attnverify.checks.registry import paper_of

    fields = {"id": "mine.restated", "model": paper_of(cid).model, "like": cid, "kind": own.kind, "stated": stated,
              **({"quantity": own.quantity} if own.quantity else {}),
              **{k: v for k, v in own.extra.items() if isinstance(v, (str, int, float))}}
    lines = ["[[claim]]"] + [f"{k} = {_toml(v)}" for k, v in fields.items()]
    for k, v in own.extra.items():
        if isinstance(v, (list, tuple)):
            lines.append(f"{k} = [{', '.join(_toml(x) for x in v)}]")
    path = tmp_path / "restated.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_built_in_expression_claim_restated_in_its_own_words_is_accepted(tmp_path):
    """No false refusal: each built-in formula, rate and bound claim, restated with its own stated form, resolves."""
    claims = _builtin_expression_claims()
    assert {own.kind for _, own in claims} >= {"formula", "rate"}
    for cid, own in claims:
        prepare(_restatement(tmp_path, cid, own, own.stated))


@pytest.mark.parametrize("bad, named", [("zzz", "unknown symbol 'zzz'"), ("+* 2", "cannot parse"),
                                         ("1/0", "undefined")])
def test_a_bad_restated_form_is_refused_before_its_checks_run(tmp_path, capsys, monkeypatch, bad, named):
    """A restatement's form used to be read only by the built-in claim's judge, after its checks ran: an unknown
    symbol, a syntax error or 1/0 became an inconclusive row with exit 0. Now it is exit 2 and one line, for every
    expression kind, and no check runs."""
    import attnverify.checks.runner as runner

    monkeypatch.setattr(runner, "run", lambda *args, **kwargs: pytest.fail("the checks ran"))
    kinds_seen = set()
    for cid, own in _builtin_expression_claims():
        if own.kind in kinds_seen:
            continue
        kinds_seen.add(own.kind)
        stated = bad if bad == "1/0" else f"({own.stated}) {bad}" if bad.startswith("+") else f"({own.stated})*{bad}"
        assert main(["audit", str(_restatement(tmp_path, cid, own, stated)), "--quiet"]) == 2, (cid, stated)
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "mine.restated" in err and "field 'stated'" in err and named in err, err
        assert named == "cannot parse" or not any(raw in err for raw in RAW), err      # (a syntax error is named)


def _claims_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "restated.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_restatement_inherits_the_built_in_statements_quantity_and_fields(tmp_path):
    """like = ...: a formula without its quantity, a rate without its variable reached their judges as None
    (StopIteration, TypeError: inconclusive rows); they inherit the built-in statement's now."""
    [r] = prepare(_claims_file(tmp_path, '[[claim]]\nid = "mine.x"\nmodel = "slr"\nlike = "C.linear_fails"\n'
                                         'kind = "formula"\nstated = "gamma**2*(L - 1)/(gamma**2 + L - 1)"\n'))
    assert r.stated.quantity == "linear_excess"
    [r] = prepare(_claims_file(tmp_path, '[[claim]]\nid = "mine.x"\nmodel = "meanfield"\n'
                                         'like = "B.zero_temperature_rate"\nkind = "rate"\nstated = "beta**(-1/2)"\n'))
    assert r.stated.get("variable") == "beta"


@pytest.mark.parametrize("text, named", [
    # phi is a symbol of Paper B's quantities, not of the rate's judge (it reads its variable only)
    ('like = "B.zero_temperature_rate"\nmodel = "meanfield"\nkind = "rate"\nstated = "beta**(-phi)"\n'
     'variable = "beta"', "unknown symbol 'phi'"),
    ('like = "D.moment_rate"\nmodel = "tsc"\nkind = "rate"\nstated = "n**(-1/(2*(1 + H**2)))"\n'
     'at = { horizn = "two_sided" }', "field 'at': D.moment_rate reads horizon"),
])
def test_a_restatement_is_held_to_the_names_its_judge_reads(tmp_path, text, named):
    with pytest.raises(InputError) as info:
        prepare(_claims_file(tmp_path, '[[claim]]\nid = "mine.x"\n' + text + "\n"))
    assert named in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_a_latex_restatement_reads_the_names_of_the_built_in_form(tmp_path):
    """D.moment_rate's judge reads H besides its variable n: its LaTeX restatement was refused ('unknown symbol H')."""
    [r] = prepare(_claims_file(tmp_path, "[[claim]]\nid = \"mine.x\"\nmodel = \"tsc\"\nlike = \"D.moment_rate\"\n"
                                         "kind = \"rate\"\nstated_latex = 'n^{- \\frac{1}{2 H^{2} + 2}}'\n"))
    assert str(r.read_as) == "n**(-1/(2*H**2 + 2))"
