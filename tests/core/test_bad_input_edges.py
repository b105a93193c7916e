"""Issue 31, item 4 (a reviewer's new cases): the edges of bad input. Numbers beyond double precision, NaN and
inf; messages that misstate the problem; error lines of 100 000 characters; model files whose numbers or names are
out of bounds; the Python API accepting what the command line refuses; ``derive`` of a model file skipping the
range rule; a restated protocol outside the paper's model; betas too close for a check's fit. Each is refused
before any work: one line naming the field, exit 2 on the command line and :class:`InputError` (that line) from
the API; never an internal error or a raw exception.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import attnverify
from attnverify.checks.params import InputError, abbreviated
from attnverify.cli import main
from attnverify.user_claims import prepare

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
PAPER_A = MODELS / "paper_a.toml"
HUGE = 10 ** 400                         # an integer beyond double precision (TOML reads it exactly)
LONG = 100_000
#: what a refusal must never show
RAW = ("internal error", "Traceback", "OverflowError", "could not be read", "Error:")
A_POINT = dict(theta=0.25, beta=1.0, sigma=1.0, R=50, L=1050, d=20, rho_xi=0.5)


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if math.isinf(value) else repr(value))
    return f'"{value}"' if isinstance(value, str) else str(value)


def _claims(tmp_path: Path, **fields) -> Path:
    """A claims file with one claim (by default a formula on signal.w); a field given as None is left out."""
    claim = {"id": "mine.edge", "model": "signal", "kind": "formula", "quantity": "w", "stated": "R/L", **fields}
    lines = ["[[claim]]"] + [f"{k} = {_toml(v)}" for k, v in claim.items() if v is not None]
    path = tmp_path / "claims.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _one_line(argv: list[str], capsys, *named: str) -> str:
    """The command's refusal: exit 2 and one line, naming ``named``, no raw exception, at most a few hundred
    characters."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith("attnverify: error: "), line[:300]
    assert len(line) < 400, (len(line), line[:300])
    for part in named:
        assert part in line, line[:300]
    assert not any(raw in line for raw in RAW), line[:300]
    return line


def _api_refuses(call, *named: str) -> str:
    with pytest.raises(InputError) as exc:
        call()
    text = str(exc.value)
    assert "\n" not in text and len(text) < 400, (len(text), text[:300])
    for part in named:
        assert part in text, text[:300]
    return text


def _model_file(tmp_path: Path, old: str, new: str) -> Path:
    text = PAPER_A.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "m.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# -- 1: numbers beyond double precision, NaN, inf -------------------------------------------------------------------
@pytest.mark.parametrize("fields, named", [
    ({"at": {"theta": HUGE}}, ("'at.theta'", "beyond double precision")),
    ({"at": {"R": HUGE, "L": 10 * HUGE}}, ("'at.R'", "beyond double precision")),
    ({"at": {"R": math.nan}}, ("'at.R'", "finite")),
    ({"at": {"R": math.inf}}, ("'at.R'", "finite")),
    ({"kind": "value", "quantity": "J_limit", "stated": HUGE}, ("'stated'", "beyond double precision")),
    ({"kind": "value", "quantity": "J_limit", "stated": 0.3, "resolution": HUGE},
     ("'resolution'", "beyond double precision")),
])
def test_a_claims_number_beyond_double_precision_or_not_finite_is_refused(tmp_path, capsys, fields, named):
    path = _claims(tmp_path, **fields)
    line = _one_line(["audit", str(path)], capsys, "mine.edge", *named)
    assert _api_refuses(lambda: attnverify.audit(path)) in line


@pytest.mark.parametrize("call, named", [
    (lambda: attnverify.quantity("signal.J_limit", R=HUGE), "R:"),
    (lambda: attnverify.quantity("signal.J_limit", theta=HUGE), "theta:"),
    (lambda: attnverify.quantity("signal.J_limit", R=float("nan")), "R:"),
    (lambda: attnverify.quantity("signal.J_limit", R=float("inf")), "R:"),
    (lambda: attnverify.formula("signal.J_limit", theta=HUGE), "theta:"),
    (lambda: attnverify.quantity("paper_a.J_finite", model=PAPER_A, **{**A_POINT, "R": float("nan")}), "R:"),
    (lambda: attnverify.quantity("paper_a.J_finite", model=PAPER_A, **{**A_POINT, "R": float("inf")}), "R:"),
    (lambda: attnverify.quantity("paper_a.J_finite", model=PAPER_A, **{**A_POINT, "theta": HUGE}), "theta:"),
])
def test_the_api_refuses_values_beyond_double_precision_or_not_finite(call, named):
    text = _api_refuses(call, named)
    assert "beyond double precision" in text or "finite" in text


def test_jobs_beyond_any_pool_is_refused(capsys):
    _one_line(["run", "signal.reduced_field_identity", "--jobs", str(10 ** 20)], capsys, "--jobs")


# -- 2: messages that say what is wrong ----------------------------------------------------------------------------
@pytest.mark.parametrize("name, value", [("d", 10 ** 30), ("L", np.uint64(2 ** 64 - 1))])
def test_an_integer_beyond_the_exact_range_is_called_so_not_a_non_integer(name, value):
    text = _api_refuses(lambda: attnverify.quantity("paper_a.J_finite", model=PAPER_A, **{**A_POINT, name: value}),
                        f"{name}:", "beyond the range")
    assert "expected an integer" not in text


def test_a_numpy_unsigned_integer_is_an_integer():
    value = attnverify.quantity("paper_a.J_finite", model=PAPER_A, **{**A_POINT, "d": np.uint64(20)})
    assert value == attnverify.quantity("paper_a.J_finite", model=PAPER_A, **A_POINT)


def test_a_claims_model_that_is_not_a_string_is_not_called_missing(tmp_path, capsys):
    line = _one_line(["audit", str(_claims(tmp_path, model=5))], capsys, "'model'")
    assert "missing" not in line and "string" in line


@pytest.mark.parametrize("protocol, named", [({"R": HUGE, "L": 10500}, "'protocol.R'"),
                                             ({"runs": HUGE}, "'protocol.runs'")])
def test_a_restated_protocol_beyond_double_precision_names_the_field(tmp_path, capsys, protocol, named):
    path = _claims(tmp_path, kind="value", quantity=None, like="A.reported_alignment", stated=0.9965,
                   protocol=protocol)
    _one_line(["audit", str(path)], capsys, named, "beyond double precision")


def test_the_claims_own_reading_names_a_protocol_value_beyond_double_precision():
    from attnverify.checks.claims import CLAIMS, statement_of, unreadable
    from attnverify.checks.registry import load

    load()
    c = CLAIMS["A.reported_alignment"]
    own = statement_of(c.id)
    assert unreadable(c, own) is None
    why = unreadable(c, own.restated(own.stated, protocol={"R": HUGE}))
    assert "'protocol.R'" in why and "beyond double precision" in why, why


# -- 3: an echoed value is abbreviated, the field still named --------------------------------------------------------
@pytest.mark.parametrize("fields, named", [
    ({"id": "mine." + "f" * LONG, "quantity": "nope"}, ("'quantity'",)),
    ({"quantity": "q" * LONG}, ("'quantity'",)),
    ({"model": "m" * LONG}, ("'model'",)),
    ({"at": {"a" * LONG: 1}}, ("'at'",)),
    ({"at": {"sign": "f" * LONG}}, ("'at'", "sign")),
    ({"kind": "k" * LONG}, ("'kind'",)),
])
def test_a_long_value_in_a_claims_file_is_abbreviated(tmp_path, capsys, fields, named):
    path = _claims(tmp_path, **fields)
    line = _one_line(["audit", str(path)], capsys, *named)
    assert "characters)" in line


@pytest.mark.parametrize("call, named", [
    (lambda: attnverify.quantity("signal.J_limit", **{"x" * LONG: 1}), "neither an option nor a symbol"),
    (lambda: attnverify.quantity("signal." + "J" * LONG), "no quantity"),
    (lambda: attnverify.formula("signal.J_limit", sign="x" * LONG), "sign:"),
])
def test_a_long_value_given_to_the_api_is_abbreviated(call, named):
    assert f"({LONG} characters)" in _api_refuses(call, named)


def test_a_long_word_on_the_command_line_is_abbreviated(capsys):
    _one_line(["derive", "x" * 5000], capsys, "unknown model", "(5000 characters)")


def test_a_long_objective_kind_in_a_model_file_is_abbreviated(tmp_path, capsys):
    path = _model_file(tmp_path, 'kind = "energy"', f'kind = "{"e" * LONG}"')
    _one_line(["list", str(path)], capsys, "m.toml", "objective.kind", "characters)")


def test_abbreviation_keeps_short_values_apostrophes_and_paths_whole():
    path = "/tmp/" + "d" * 90 + "/claims.toml"
    odd = "/tmp/some dir (copy), [2]/" + "d" * 90 + "/claims #1.toml"        # a reviewer's: cut before
    for text in (f"model: no model file {path!r}", f"{path}: claim 'a.b': field 'model' is missing (a paper's "
                 "model name, attnverify list --models, and more words than eighty characters), got 'x'",
                 f"model: no model file {odd!r}"):
        assert abbreviated(text) == text
    assert str(InputError("x: " + "9" * 500)) == "x: " + "9" * 40 + "... (500 characters)"


# -- 4: a model file's numbers and names, refused when the file is read ---------------------------------------------
@pytest.mark.parametrize("old, new, named", [
    ("theta = { default = 0.25, min = 0,", f"theta = {{ default = {HUGE}, min = 0,", "parameters.theta.default"),
    ("theta = { default = 0.25, min = 0,", f"theta = {{ default = 0.25, min = 0, max = {HUGE},",
     "parameters.theta.max"),
    ("R = { default = 50,", f"R = {{ default = {10 ** 30},", "parameters.R.default"),
])
def test_a_model_files_number_beyond_double_precision_is_refused_when_read(tmp_path, capsys, old, new, named):
    path = _model_file(tmp_path, old, new)
    line = _one_line(["list", str(path)], capsys, "m.toml", named)
    assert "beyond" in line
    assert _api_refuses(lambda: attnverify.formula("paper_a.J_limit", model=path)) in line


@pytest.mark.parametrize("old, new, named", [
    ('directions = ["xi"]', f'directions = ["{"x" * LONG}"]', "model.directions[0]"),
    ('id = "paper_a"', f'id = "{"p" * 65}"', "model.id"),
    ("sigma = { default = 1,", f"{'s' * 65} = 1\nsigma = {{ default = 1,", "parameters."),
])
def test_a_model_files_overlong_name_is_refused_when_read(tmp_path, capsys, old, new, named):
    _one_line(["list", str(_model_file(tmp_path, old, new))], capsys, "m.toml", named, "at most 64")


# -- 5: the API refuses what the command line refuses ---------------------------------------------------------------
_FORMULA_CLAIM = {"claim": [{"id": "mine.w", "model": "signal", "kind": "formula", "quantity": "w", "stated": "R/L"}]}


@pytest.mark.parametrize("call, named", [
    (lambda: attnverify.audit(_FORMULA_CLAIM, profile="fast"), "profile"),
    (lambda: attnverify.audit(_FORMULA_CLAIM, seed=-1), "seed"),
    (lambda: attnverify.audit(_FORMULA_CLAIM, seed="a"), "seed"),
    (lambda: attnverify.audit(5), "claims"),
    (lambda: attnverify.audit(None), "claims"),
    (lambda: attnverify.run(5), "ids"),
    (lambda: attnverify.run([5]), "ids"),
    (lambda: attnverify.run("signal.reduced_field_identity", overrides={None: 1}), "overrides"),
    (lambda: attnverify.run("signal.reduced_field_identity", overrides=5), "overrides"),
    (lambda: attnverify.formula(None), "quantity name"),
    (lambda: attnverify.quantity(5), "quantity name"),
    (lambda: attnverify.derivation(5), "model"),
])
def test_the_api_refuses_bad_arguments_with_one_line(call, named):
    _api_refuses(call, named)


# -- 6: derive of a model file holds its options to the range rule of its checks ------------------------------------
@pytest.mark.parametrize("value", ["1e8", "1e300"])
def test_derive_of_a_model_file_applies_the_range_rule(capsys, value):
    _one_line(["derive", str(PAPER_A), "--set", f"beta={value}"], capsys, "beta:", "the limit is")
    _api_refuses(lambda: attnverify.derivation(PAPER_A, beta=float(value)), "beta:")


# -- 7: a restated protocol is one of the paper's models ------------------------------------------------------------
def test_a_restated_protocol_with_r_above_l_is_refused_before_any_work(tmp_path):
    path = _claims(tmp_path, kind="value", quantity=None, like="A.reported_alignment", stated=0.9965,
                   protocol={"R": 20000, "L": 10500, "theta": 0.25, "beta": 1.0, "sigma": 1.0, "sign": "fixed",
                             "runs": 30})
    _api_refuses(lambda: prepare(path), "'protocol'", "R = 20000 exceeds L = 10500")


def test_a_restated_protocol_outside_an_options_range_is_refused(tmp_path):
    path = _claims(tmp_path, kind="value", quantity=None, like="A.reported_alignment", stated=0.9965,
                   protocol={"R": 500, "L": 10500, "theta": -0.25})
    _api_refuses(lambda: prepare(path), "'protocol.theta'")


# -- 8: betas too close for the fit in log beta -----------------------------------------------------------------------
@pytest.mark.parametrize("betas", ["100000,100000.00000000001,1e6", "10,100,100.01"])
def test_betas_too_close_for_the_fit_are_refused_at_validation(betas):
    from attnverify.checks.runner import plan

    _api_refuses(lambda: plan(["meanfield.zero_temperature_limit"], overrides={"betas": betas}), "betas",
                 "too close")


def test_betas_a_little_apart_are_accepted():
    from attnverify.checks.runner import plan

    ((_, params),) = plan(["meanfield.zero_temperature_limit"], overrides={"betas": "100000,100100,1e6"})
    assert params["betas"] == (1e5, 1.001e5, 1e6)
