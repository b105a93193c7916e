"""Fuzzed bad input: any ``--set`` value gives a clear error or a valid parameter, never a traceback."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attnverify.checks.runner as runner
from attnverify.cli import main
from attnverify.checks.params import InputError
from attnverify.checks.registry import all_checks

NASTY = st.sampled_from(["nan", "NaN", "inf", "-inf", "1e300", "-1e300", "0", "-0", "-1", "1e-320", "", " ",
                         "1,2", "1;2", "true", "x", "1e999", "0x10", "3.5", "2", "[1]", "None", "1,nan;0,1",
                         "0,0;0,0", "1,0;0,1", "1,2;2,1", "1,1;1,1.0000000001", "1e200,0;0,1e-200"])
VALUES = st.one_of(NASTY, st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.integers(-10**6, 10**6).map(str))

PARAMS = sorted({(c.id, p.name) for c in all_checks() for p in c.params})


def finite_everywhere(value) -> bool:
    if isinstance(value, (str, bool)):
        return True
    return bool(np.all(np.isfinite(np.asarray(value, dtype=float))))


@pytest.mark.skipif(not PARAMS, reason="no checks registered")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(PARAMS or [("", "")]), text=VALUES)
def test_plan_gives_valid_parameters_or_input_error(target, text):
    check_id, name = target
    try:
        [(check, params)] = runner.plan([check_id], overrides={name: text})
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert all(finite_everywhere(v) for v in params.values())
    prm = check.param(name)
    if prm.low is not None and prm.kind in (int, float):
        assert params[name] >= prm.low and not (prm.low_open and params[name] == prm.low)


@pytest.mark.skipif(not PARAMS, reason="no checks registered")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(PARAMS or [("", "")]), text=VALUES)
def test_cli_never_tracebacks(target, text, capsys, monkeypatch):
    """The CLI validates, then (here) a stub stands in for the expensive run itself."""
    ran = []
    monkeypatch.setattr(runner, "run_one", lambda c, p, **kw: ran.append(p) or runner.Result(
        c.id, c.compares, c.source, "pass", p, 0.0, runner.Evidence("m", 0.0, 1.0, "r", True)))
    code = main(["run", target[0], "--set", f"{target[1]}={text}", "--quiet", "--executor", "serial"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("attnverify: error: ")
        assert not ran  # nothing was computed from invalid parameters
    else:
        assert code == 0 and len(ran) == 1
        assert all(finite_everywhere(v) for v in ran[0].values())


def test_huge_and_tiny_numbers_are_handled():
    from attnverify.checks.params import Param

    beta = Param("beta", float, 1.0, "inverse temperature", low=0.0, low_open=True)
    assert beta.parse("1e300") == 1e300
    for bad in ("0", "-1", "nan", "inf", "1e999", "abc"):
        with pytest.raises(InputError, match="beta"):
            beta.parse(bad)
    assert math.isfinite(beta.parse("1e-300"))


# ------------------------------------------------------------------------------------------------------------------
# every parameter of every check at its boundary values: refused before any work, or accepted inside its bounds
# ------------------------------------------------------------------------------------------------------------------
def boundary_values(prm) -> list[str]:
    """0, negative, tiny, huge, nan and inf in the parameter's own command-line form."""
    reals = ["0", "-0", "-1", "1e-300", "1e300", "nan", "inf", "-inf"]
    if prm.kind is float:
        return reals
    if prm.kind is int:
        return ["0", "-1", "1", "1000000000", "10000000000000000000000", "nan"]
    if prm.kind in ("floats", "ints"):
        singles = reals if prm.kind == "floats" else ["0", "-1", "1", "1000000000"]
        return singles + [f"1,{v}" for v in singles]
    if prm.kind == "matrix":
        return ["0,0;0,0", "1e300,0;0,1", "1e-300,0;0,1", "-1,0;0,-3", "nan,0;0,1", "inf,0;0,1", "1,0;0,1/3",
                "1,0;0,1e4", "1,0,0;0,1,0;0,0,1"]
    if prm.kind is bool:
        return ["true", "false", "2"]
    return ["", "nonsense"]


BOUNDARY = [(c.id, p.name, v) for c in all_checks() for p in c.params for v in boundary_values(p)]


def test_the_sweep_covers_every_parameter():
    assert {(c, n) for c, n, _ in BOUNDARY} == set(PARAMS) and len(BOUNDARY) > 800


def within_bounds(prm, value) -> bool:
    numbers = [value] if prm.kind in (int, float) else (list(value) if prm.kind in ("ints", "floats") else [])
    for x in numbers:
        if prm.low is not None and (x < prm.low or (prm.low_open and x == prm.low)):
            return False
        if prm.high is not None and (x > prm.high or (prm.high_open and x == prm.high)):
            return False
    return True


def test_every_boundary_value_is_refused_up_front_or_accepted_in_bounds(monkeypatch, capsys):
    """Through the command line with the checks stubbed out (validation only): exit 2 with one line and nothing
    computed, or a run whose parameters are finite and inside their declared bounds."""
    ran = []
    monkeypatch.setattr(runner, "run_one", lambda c, p, **kw: ran.append(p) or runner.Result(
        c.id, c.compares, c.source, "pass", p, 0.0, runner.Evidence("m", 0.0, 1.0, "r", True)))
    # the 2300 command lines below differ in one --set value only: the parser (built the same way every time, 9 ms:
    # argparse reads its translations and the terminal size per argument) and the defaults most checks share (a
    # function of the registered checks, which nothing here changes, 2 ms) are made once, not per command line
    # (8 s and 4 s of the test); parse_args leaves the parser as it was, so each command line is read as by a fresh one
    import functools

    import attnverify.cli.command_line as command_line
    import attnverify.cli.run as cli_run

    monkeypatch.setattr(command_line, "build_parser", functools.lru_cache(maxsize=None)(command_line.build_parser))
    model_defaults = cli_run._model_defaults
    shared_defaults = functools.lru_cache(maxsize=None)(lambda ids: model_defaults(
        [c for c in all_checks() if c.id in ids]))
    monkeypatch.setattr(cli_run, "_model_defaults", lambda checks: shared_defaults(tuple(c.id for c in checks)))
    accepted = []
    for check_id, name, text in BOUNDARY:
        ran.clear()
        code = main(["run", check_id, "--set", f"{name}={text}", "--quiet", "--executor", "serial", "--no-cache"])
        err = capsys.readouterr().err
        assert "Traceback" not in err, (check_id, name, text)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("attnverify: error: ") and not ran, (check_id, name, text)
            continue
        assert code == 0 and len(ran) == 1, (check_id, name, text, err)
        prm = runner.select([check_id])[0].param(name)
        assert all(finite_everywhere(v) for v in ran[0].values()), (check_id, name, text)
        assert within_bounds(prm, ran[0][name]), (check_id, name, text)
        accepted.append((check_id, name, text))
    # the degenerate and absurd values of the issue are among the refused ones
    for case in [("signal.attention_on_noise", "theta", "0"), ("signal.attention_on_noise", "theta", "1e-300"),
                 ("signal.attention_on_noise", "sigma", "1e-300"), ("signal.low_temperature", "beta", "1e-300"),
                 ("signal.objective_vs_montecarlo", "thetas", "0"), ("signal.attention_on_noise", "theta", "1e300"),
                 ("signal.attention_on_noise", "n_sequences", "1000000000"),
                 ("meanfield.zero_temperature_limit", "V", "1e300,0;0,1"),
                 ("meanfield.zero_temperature_limit", "betas", "1e300"),
                 ("meanfield.zero_temperature_flow", "t_max", "1e300"),
                 ("meanfield.zero_temperature_flow", "tol", "1e-300")]:
        assert case not in accepted, case


@pytest.mark.parametrize("argv, words", [
    (["run", "signal.attention_on_noise", "--set", "theta=0"], "theta: must be > 0"),
    (["run", "signal.attention_on_noise", "--set", "sigma=1e-300"], "sigma: 1e-300 is below"),
    (["run", "signal.attention_on_noise", "--set", "beta=0.001", "--set", "sigma=0.0001"], "beta sigma = 1e-07 < 1e-06"),
    (["run", "signal.ode_tracks_sga", "--set", "beta=0.001", "--set", "theta=0.0005"], "beta theta = 5e-07 < 1e-06"),
    (["run", "signal.attention_on_noise", "--set", "theta=1e300"], "theta: 1e+300 is more than 1e+06 x"),
    (["run", "meanfield.zero_temperature_limit", "--set", "V=1e300,0;0,1"], "V has an entry of size 1e+300"),
    (["run", "meanfield.zero_temperature_limit", "--set", "betas=10,100"], "at least three increasing"),
    (["run", "meanfield.zero_temperature_flow", "--set", "t_max=1e300"], "too large to run"),
    (["run", "meanfield.zero_temperature_flow", "--set", "tol=1e-300"], "at the level of rounding"),
    (["derive", "signal", "--set", "R=2000", "--set", "L=100"], "R = 2000 exceeds L = 100"),
    (["derive", "signal", "--set", "theta=0"], "theta: must be > 0"),
])
def test_degenerate_inputs_are_refused_before_any_work(monkeypatch, capsys, argv, words):
    monkeypatch.setattr(runner, "run_one", lambda *a, **k: pytest.fail("a check ran"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


# a handful of accepted boundary values, run in full: a normal verdict, never an ERROR
SAMPLED = [("signal.attention_on_noise", "theta", "1e-6"), ("meanfield.zero_temperature_flow", "n_starts", "1"),
           ("meanfield.projection_stationary", "V", "1e-300,0;0,1"), ("meanfield.zero_temperature_flow", "Q", "-1,0;0,-3")]


@pytest.mark.parametrize("check_id, name, text", SAMPLED)
def test_sampled_accepted_boundary_values_run_without_error(tmp_path, check_id, name, text):
    out = tmp_path / "r.json"
    assert main(["run", check_id, "--set", f"{name}={text}", "--quiet", "--executor", "serial", "--no-cache",
                 "--json", str(out)]) in (0, 1)
    import json

    [result] = json.loads(out.read_text())["checks"]
    assert result["verdict"] != "error", result["error"]


def test_alignment_schedule_is_validated_up_front(monkeypatch, capsys):
    monkeypatch.setattr(runner, "run_one", lambda *a, **k: pytest.fail("a check ran"))
    assert main(["run", "signal.alignment_30_runs", "--set", "n_steps=1"]) == 2
    assert "n_steps = 1 < n_records = 30" in capsys.readouterr().err
