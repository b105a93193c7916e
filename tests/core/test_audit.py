"""A user's stated claims (``attnverify audit FILE.toml``, ``attnverify.audit``): formula claims decided by a SymPy
proof or a certified counterexample confirmed by the measurement; a bad file refused before any work, in one line
that names the claim and the field."""
from __future__ import annotations

import json
import textwrap

import pytest

import attnverify
from attnverify.checks import judges
from attnverify.checks.params import InputError
from attnverify.checks.stated import parse_claims, read_toml
from attnverify.cli import main
from attnverify.render.reasons import plain

RIGHT = "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + beta**2*sigma**4"


def claim(**fields) -> dict:
    base = {"id": "mine.objective", "model": "signal", "kind": "formula", "quantity": "J_limit", "stated": RIGHT,
            "at": {"R": 500, "L": 10500}}
    return {"claim": [{**base, **fields}]}


def verdict_of(doc: dict) -> tuple[str, str]:
    rep = attnverify.audit(doc, seed=0)
    (row,) = rep.claims
    return row.verdict, row.condition or row.reason


def test_the_derived_objective_in_terms_of_w_holds():
    verdict, text = verdict_of(claim())
    assert verdict == "holds", text
    assert "SymPy proves" in text and "measurement agrees" in text


@pytest.mark.parametrize("wrong", [
    "theta**2*w**2 + beta*sigma**2*theta*rho*w + beta**2*sigma**4",          # cross term halved
    "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w",                             # a term dropped
    "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + 2*beta**2*sigma**4",        # a term doubled
    "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + beta**2*sigma**2",          # a wrong exponent
])
def test_a_wrong_term_is_refuted_with_a_certified_and_measured_counterexample(wrong):
    verdict, text = verdict_of(claim(stated=wrong))
    assert verdict == "refuted", text
    assert "stated" in text and "derived" in text and "measured" in text and "standard errors" in text


def test_the_counterexample_is_certified_in_ball_arithmetic():
    rep = attnverify.audit(claim(stated="theta**2*w**2 + 2*beta*sigma**2*theta*rho*w"), seed=0)
    (row,) = rep.claims
    assert row.stated["kind"] == "formula" and "Arb, certified" in row.reason
    assert row.evidence["stated"]["certified_points"] > 0


def test_a_difference_below_the_measurement_resolution_is_inconclusive():
    # a relative change of 1e-12: certified different, but no Monte Carlo can resolve it: never "refuted" by the
    # derivation alone, never "holds"
    verdict, text = verdict_of(claim(stated=f"({RIGHT})*(1 + 1/10**12)"))
    assert verdict == "inconclusive", text
    assert "does not resolve" in text


def test_the_cli_writes_the_claims_rows(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(textwrap.dedent(f"""
        [[claim]]
        id = "mine.objective"
        model = "signal"
        kind = "formula"
        quantity = "J_limit"
        stated = "{RIGHT}"
        at = {{ R = 500, L = 10500 }}
        """))
    out = tmp_path / "out.json"
    assert main(["audit", str(path), "--json", str(out), "--quiet"]) == 0
    rows = json.loads(out.read_text())["claims"]
    assert [(r["id"], r["verdict"]) for r in rows] == [("mine.objective", "holds")]
    assert "mine.objective" in capsys.readouterr().out


@pytest.mark.parametrize("change, field", [
    ({"quantity": "J_limt"}, "quantity"),
    ({"stated": "theta**2*w**2 + thetta"}, "stated"),
    ({"stated": "theta**2 +* w"}, "stated"),
    ({"stated": "theta.__class__"}, "stated"),
    ({"at": {"R": 500, "LL": 10}}, "at"),
    ({"at": {"sign": "odd"}}, "at"),
    ({"at": {"R": 600, "L": 500}}, "at"),
    ({"kind": "formulas"}, "kind"),
    ({"model": "nosuch"}, "model"),
    ({"kind": "threshold", "stated": 1.0}, "kind"),
    ({"quantity": None}, "quantity"),
])
def test_a_bad_file_is_one_line_naming_the_claim_and_the_field(tmp_path, capsys, change, field):
    doc = claim(**{k: v for k, v in change.items() if v is not None})
    if change.get("quantity", "") is None:
        del doc["claim"][0]["quantity"]
    lines = []
    for key, value in doc["claim"][0].items():
        lines.append(f"{key} = {json.dumps(value) if not isinstance(value, dict) else '{ ' + ', '.join(f'{k} = {json.dumps(v)}' for k, v in value.items()) + ' }'}")
    path = tmp_path / "bad.toml"
    path.write_text("[[claim]]\n" + "\n".join(lines) + "\n")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mine.objective" in err[0] and f"'{field}'" in err[0], err


def test_unreadable_and_invalid_files(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "missing.toml")]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[[claim]\nid = ")
    assert main(["audit", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("attnverify: error:") for line in err)


def test_stated_fields_are_checked_by_kind():
    with pytest.raises(InputError, match="'uncertainty'"):
        parse_claims({"claim": [{"id": "a.b", "model": "signal", "kind": "value", "stated": 0.9,
                                 "uncertainty": -1}]}, "f")
    with pytest.raises(InputError, match="unknown field 'variable'"):
        parse_claims({"claim": [{"id": "a.b", "model": "signal", "kind": "value", "stated": 0.9,
                                 "variable": "beta"}]}, "f")
    with pytest.raises(InputError, match="repeats"):
        parse_claims({"claim": [{"id": "a.b", "model": "m", "kind": "value", "stated": 1},
                                {"id": "a.b", "model": "m", "kind": "value", "stated": 1}]}, "f")


def test_every_builtin_claim_has_its_stated_form_and_vice_versa():
    from attnverify.checks.claims import all_claims
    from attnverify.checks.stated import builtin_statements

    registered = {c.id for c in all_claims()}
    stated = builtin_statements()
    assert registered == set(stated)
    assert all(s.reconstructed and s.statement and s.source for s in stated.values())


# ----------------------------------------------------------------------------------------------
# the judges' computed reason text
# ----------------------------------------------------------------------------------------------
def _value_claim(stated, **extra):
    (s,) = parse_claims({"claim": [{"id": "x.v", "model": "signal", "kind": "value", "stated": stated, **extra}]}, "t")
    return s


def test_a_value_the_test_cannot_resolve_is_inconclusive_never_agrees():
    v = judges.value(_value_claim(0.95), judges.Measured(0.95, 0.03, "synthetic"))
    assert v.verdict == "inconclusive" and "cannot tell" in v.reason
    v = judges.value(_value_claim(0.95, resolution=0.2), judges.Measured(0.95, 0.03, "synthetic"))
    assert v.verdict == "holds"


def test_value_refuted_and_its_words_follow_the_numbers():
    v = judges.value(_value_claim(0.9965), judges.Measured(0.9873, 0.0006, "30 runs"))
    assert v.verdict == "refuted" and "below the stated" in v.reason
    v = judges.value(_value_claim(0.9965), judges.Measured(1.0065, 0.0006, "30 runs"))
    assert v.verdict == "refuted" and "above the stated" in v.reason


def test_rate_upper_bound_words_are_computed():
    (s,) = parse_claims({"claim": [{"id": "x.r", "model": "meanfield", "kind": "rate", "stated": "beta**(-1/2)",
                                    "variable": "beta", "direction": "upper"}]}, "t")
    fast = judges.rate(s, judges.Measured(-1.0, 0.01, "fit"), [10, 100, 1000])
    assert fast.verdict == "holds" and "loose" in fast.reason and "below" in fast.reason
    slow = judges.rate(s, judges.Measured(-0.47, 0.005, "fit"), [10, 100, 1000])
    assert slow.verdict == "refuted" and "above" in slow.reason
    near = judges.rate(s, judges.Measured(-0.47, 0.02, "fit"), [10, 100, 1000])
    assert near.verdict == "holds" and "sharp" in near.reason and "loose" not in near.reason


def test_threshold_outside_the_bracket_is_refuted():
    (s,) = parse_claims({"claim": [{"id": "x.t", "model": "signal", "kind": "threshold", "stated": 1.0}]}, "t")
    out = judges.threshold(s, judges.Measured(1.34, interval=(1.33, 1.35), how="drift sign"))
    assert out.verdict == "refuted" and "below" in out.reason
    (s,) = parse_claims({"claim": [{"id": "x.t", "model": "signal", "kind": "threshold", "stated": 1.34}]}, "t")
    assert judges.threshold(s, judges.Measured(1.34, interval=(1.33, 1.35), how="drift sign")).verdict == "holds"
    wide = judges.threshold(s, judges.Measured(1.34, interval=(1.0, 2.0), how="drift sign"))
    assert wide.verdict == "inconclusive"


def test_read_toml_accepts_a_parsed_dict():
    assert read_toml(claim())[0].id == "mine.objective"


def test_formula_and_quantity_api():
    J = attnverify.formula("signal.J_limit")
    assert {s.name for s in J.free_symbols} <= {"rho", "theta", "beta", "sigma", "R", "L"}
    value = attnverify.quantity("signal.w", rho=0.5, theta=1.0, beta=1.0, sigma=1.0, R=500, L=10500)
    assert 0 < value < 1
    with pytest.raises(InputError, match="give a value"):
        attnverify.quantity("signal.w", rho=0.5)
    with pytest.raises(InputError, match="did you mean"):
        attnverify.formula("signal.J_limt")


def test_no_submodule_shadows_a_public_function():
    """attnverify's lazily loaded functions (audit, formula, quantity, run, ...) keep their names whatever was
    imported before: a submodule of the same name replaces the attribute when it is imported. attnverify.audit once
    shared its name with the module behind `attnverify audit`, so after the CLI ran it was a module, and the suite
    failed depending on test order."""
    import importlib
    import importlib.util

    import attnverify

    for name, (module, attr) in attnverify._LAZY.items():
        if attr is not None:
            assert importlib.util.find_spec(f"attnverify.{name}") is None, name
    importlib.import_module("attnverify.user_claims")
    assert callable(attnverify.audit) and attnverify.audit.__module__ == "attnverify.user_claims"


# --------------------------------------------------------------------------------------------- decimals are exact
def test_a_decimal_coefficient_is_refuted_with_an_interval_of_the_right_sign():
    """2.02 in place of 2: the Arb step used to read the decimal as 0 and quote an enclosure of the wrong sign."""
    rep = attnverify.audit(claim(stated=RIGHT.replace("2*beta", "2.02*beta")), seed=0)
    (row,) = rep.claims
    assert row.verdict == "refuted", row.reason
    ev = row.evidence["stated"]
    top = ev["tried"][-1]
    assert top["stated"] > top["derived"]                  # 2.02 > 2 and every factor positive at the point
    lo, hi = (float(x) for x in plain(row.reason).split("lies in [")[1].split("]")[0].split(", "))
    assert 0 < lo <= top["stated"] - top["derived"] <= hi


def test_a_decimal_in_at_is_the_same_point_as_its_integer():
    """at = { sigma = 1.0 } and at = { sigma = 1 } fix the same point: the same wrong formula is refuted in both."""
    wrong = "theta**2*w**2 + beta*sigma**2*theta*rho*w + beta**2*sigma**4"
    verdicts = [verdict_of(claim(stated=wrong, at={"R": 500, "L": 10500, "sigma": s}))[0] for s in (1, 1.0)]
    assert verdicts == ["refuted", "refuted"]
